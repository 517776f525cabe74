// Planted bug 6: one launch whose every thread writes out of bounds, so memcheck reports
// 16 384 invalid writes (64 blocks x 256 threads) of one defect. Expected: one finding with
// count 16384.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void fill(float* out, int offset) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[offset + i] = 1.0f;  // bug: offset puts every store past the end
}

int main() {
    const int n = 1024;
    float* out = nullptr;
    cudaMalloc(&out, n * sizeof(float));
    fill<<<64, 256>>>(out, n);
    cudaError_t err = cudaDeviceSynchronize();
    printf("many_reports: %s\n", cudaGetErrorString(err));
    cudaFree(out);
    return err == cudaSuccess ? 0 : 1;
}
