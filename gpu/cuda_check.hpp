// CUDA error handling (after nvbench cuda_call.cuh): a bug throws with file:line, the call
// text and the error name; the no-throw twin is for destructors.
#pragma once
#include <cuda_runtime.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace ceiling::gpu {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const char* call, const char* file, int line)
      : std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + call +
                           " failed: " + cudaGetErrorName(code) + " (" +
                           cudaGetErrorString(code) + ")"),
        code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

}  // namespace ceiling::gpu

#define CUDA_CHECK(call)                                                              \
  do {                                                                                \
    const cudaError_t ceiling_err_ = (call);                                          \
    if (ceiling_err_ != cudaSuccess)                                                  \
      throw ::ceiling::gpu::CudaError(ceiling_err_, #call, __FILE__, __LINE__);       \
  } while (0)

#define CUDA_CHECK_NOTHROW(call)                                                      \
  do {                                                                                \
    const cudaError_t ceiling_err_ = (call);                                          \
    if (ceiling_err_ != cudaSuccess)                                                  \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,       \
                   cudaGetErrorName(ceiling_err_));                                   \
  } while (0)

// After a launch: catches both launch-configuration errors and (with sync) faults.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
