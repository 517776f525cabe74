// Failures reported through the check macros of hand-written CUDA programs, for
// validation/explain-check-macros.sh: the classic HANDLE_ERROR (`<message> in <file> at line
// <n>`) and a multi-line report (`CUDA Error:`, `File:`, `Line:`, `Error code:`, `Error text:`).
//   check_macros trap   a kernel that traps: the launch fails
//   check_macros oom    an allocation larger than the GPU
#include <cstdio>
#include <cstdlib>
#include <cstring>

static void handle_error(cudaError_t err, const char* file, int line) {
  if (err != cudaSuccess) {
    printf("%s in %s at line %d\n", cudaGetErrorString(err), file, line);
    exit(EXIT_FAILURE);
  }
}
#define HANDLE_ERROR(err) (handle_error(err, __FILE__, __LINE__))

#define CHECK(call)                                                    \
  do {                                                                 \
    const cudaError_t error_code = call;                               \
    if (error_code != cudaSuccess) {                                   \
      printf("CUDA Error:\n");                                         \
      printf("    File:       %s\n", __FILE__);                        \
      printf("    Line:       %d\n", __LINE__);                        \
      printf("    Error code: %d\n", error_code);                      \
      printf("    Error text: %s\n", cudaGetErrorString(error_code));  \
      exit(1);                                                         \
    }                                                                  \
  } while (0)

__global__ void traps(int* out) {
  out[threadIdx.x] = threadIdx.x;
  __trap();
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "trap") == 0) {
    int* out = nullptr;
    HANDLE_ERROR(cudaMalloc(&out, 32 * sizeof(int)));
    traps<<<1, 32>>>(out);
    HANDLE_ERROR(cudaDeviceSynchronize());
    return 0;
  }
  if (strcmp(mode, "oom") == 0) {
    void* p = nullptr;
    CHECK(cudaMalloc(&p, (size_t)1 << 40));  // 1 TiB
    return 0;
  }
  fprintf(stderr, "usage: check_macros trap|oom\n");
  return 2;
}
