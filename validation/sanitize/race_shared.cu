// Planted bug 2: shared-memory race. Every thread of the block writes its id into the same
// shared word, then thread 0 reads it back: write-after-write between warps, and a read
// that races with those writes. Expected: one racecheck finding on `slot`.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void last_writer(int* out) {
    __shared__ int slot;
    slot = threadIdx.x;          // bug: 256 threads write the same shared word
    if (threadIdx.x == 0) {
        out[blockIdx.x] = slot;  // and thread 0 reads it with no barrier
    }
}

int main() {
    int* out = nullptr;
    cudaMalloc(&out, 2 * sizeof(int));
    last_writer<<<2, 256>>>(out);
    cudaError_t err = cudaDeviceSynchronize();
    printf("race_shared: %s\n", cudaGetErrorString(err));
    cudaFree(out);
    return err == cudaSuccess ? 0 : 1;
}
