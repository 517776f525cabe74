// Planted bug 3: uninitialised global read. `in` comes from cudaMalloc and is never written
// before the kernel reads it. Expected: one initcheck finding (Uninitialized __global__
// memory read of size 4) at the load below.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void copy(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i];  // bug: in[] was never initialised
    }
}

int main() {
    const int n = 256;
    float *in = nullptr, *out = nullptr;
    cudaMalloc(&in, n * sizeof(float));
    cudaMalloc(&out, n * sizeof(float));
    copy<<<1, 256>>>(out, in, n);
    cudaError_t err = cudaDeviceSynchronize();
    printf("uninit_read: %s\n", cudaGetErrorString(err));
    cudaFree(in);
    cudaFree(out);
    return err == cudaSuccess ? 0 : 1;
}
