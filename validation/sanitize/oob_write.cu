// Planted bug 1: out-of-bounds global write. The grid covers 1024 threads but the buffer
// holds 1000 floats and the kernel forgets the `i < n` bound, so threads 1000..1023 write
// past the end. Expected: one memcheck finding (Invalid __global__ write of size 4) at the
// store below.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void scale(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = 2.0f * (i < n ? in[i] : 0.0f);  // bug: no `if (i < n)` around the store
}

int main() {
    const int n = 1000;
    float *in = nullptr, *out = nullptr;
    cudaMalloc(&in, n * sizeof(float));
    cudaMalloc(&out, n * sizeof(float));
    cudaMemset(in, 0, n * sizeof(float));
    scale<<<4, 256>>>(out, in, n);
    cudaError_t err = cudaDeviceSynchronize();
    printf("oob_write: %s\n", cudaGetErrorString(err));
    cudaFree(in);
    cudaFree(out);
    return err == cudaSuccess ? 0 : 1;
}
