// Planted bug 8: a CUDA API call with a bad argument (copy into a null device pointer).
// Expected: one finding for the `cudaErrorInvalidValue` memcheck sees on cudaMemcpy.
#include <cstdio>
#include <cuda_runtime.h>

int main() {
    float host[16] = {0};
    float* dev = nullptr;  // bug: never allocated
    cudaError_t err = cudaMemcpy(dev, host, sizeof(host), cudaMemcpyHostToDevice);
    printf("api_error: %s\n", cudaGetErrorString(err));
    return err == cudaSuccess ? 0 : 3;
}
