// Planted bug 4b: a barrier only some threads of a block reach. Expected: one synccheck
// finding (barrier error, divergent threads) at the __syncthreads below.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void half_barrier(int* out) {
    __shared__ int s[64];
    s[threadIdx.x] = threadIdx.x;
    if (threadIdx.x < 16) {
        __syncthreads();  // bug: threads 16..63 never arrive
    }
    out[threadIdx.x] = s[63 - threadIdx.x];
}

int main() {
    int* out = nullptr;
    cudaMalloc(&out, 64 * sizeof(int));
    half_barrier<<<1, 64>>>(out);
    cudaError_t err = cudaDeviceSynchronize();
    printf("divergent_barrier: %s\n", cudaGetErrorString(err));
    cudaFree(out);
    return err == cudaSuccess ? 0 : 1;
}
