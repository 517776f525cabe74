// Planted bug 7: a device allocation never freed. Expected with `--leak-check full`: one
// memcheck leak finding (1 allocation, 4096 bytes).
#include <cstdio>
#include <cuda_runtime.h>

int main() {
    float* lost = nullptr;
    cudaMalloc(&lost, 4096);
    cudaMemset(lost, 0, 4096);
    cudaError_t err = cudaDeviceSynchronize();
    printf("leak: %s\n", cudaGetErrorString(err));
    return 0;  // bug: no cudaFree(lost)
}
