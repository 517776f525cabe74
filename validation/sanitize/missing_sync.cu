// Planted bug 4: missing __syncthreads. Each thread stores its value in shared memory and
// then reads its mirror's slot, written by a thread of another warp, with no barrier in
// between. Expected: one racecheck finding (read-after-write hazard) between the store and
// the load below.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void reverse(float* data) {
    __shared__ float tile[256];
    int t = threadIdx.x;
    tile[t] = data[blockIdx.x * 256 + t];
    // bug: __syncthreads() belongs here
    data[blockIdx.x * 256 + t] = tile[255 - t];
}

int main() {
    const int n = 1024;
    float* data = nullptr;
    cudaMalloc(&data, n * sizeof(float));
    cudaMemset(data, 0, n * sizeof(float));
    reverse<<<n / 256, 256>>>(data);
    cudaError_t err = cudaDeviceSynchronize();
    printf("missing_sync: %s\n", cudaGetErrorString(err));
    cudaFree(data);
    return err == cudaSuccess ? 0 : 1;
}
