// Device helpers shared by the validation kernels: random fill, poison, FP64 mma, launch sizing.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "gpu/cuda_check.hpp"
#include "random.hpp"
#include "registry.hpp"

namespace ceiling::kernels {

template <class T>
__global__ void fill_random_kernel(T* __restrict__ p, long long n, std::uint64_t seed) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    p[i] = static_cast<T>(random_value(seed, static_cast<std::uint64_t>(i)));
}

// Multiprocessors of the current device (launch sizing for grid-stride kernels).
inline int current_sm_count() {
  int dev = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return sms;
}

// A persistent grid for `kernel`: as many blocks of `threads` as stay resident on the current device,
// no more than the `need` the work has, at least 1.
template <class Kernel>
int resident_grid(Kernel* kernel, int threads, long long need) {
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
  return static_cast<int>(std::max<long long>(1, std::min<long long>(need, std::max(1, per_sm) * 1LL * current_sm_count())));
}

template <class T>
void fill_random(T* p, long long n, std::uint64_t seed) {
  const int blocks = static_cast<int>(std::min<long long>(current_sm_count() * 8LL, (n + 255) / 256));
  fill_random_kernel<<<std::max(blocks, 1), 256>>>(p, n, seed);
  CUDA_CHECK_LAUNCH();
}

// One 16-byte (or any vector) load/store: streaming (ld/st.cs, evict-first) for working sets out of
// the L2, plain inside it (the sweep's RunContext::in_l2 decides).
template <bool Streaming, class V>
__device__ __forceinline__ V load_stream(const V* p) {
  if constexpr (Streaming) return __ldcs(p);
  else return *p;
}
template <bool Streaming, class V>
__device__ __forceinline__ void store_stream(V* p, const V& v) {
  if constexpr (Streaming) __stcs(p, v);
  else *p = v;
}

// 0xFF bytes are a NaN in both float and double.
inline void poison(void* p, size_t bytes) { CUDA_CHECK(cudaMemset(p, 0xFF, bytes)); }

// D(8x8) = A(8x4) * B(4x8) + C, FP64 tensor cores (DMMA.884 on sm_80+). Fragments per lane
// (g = lane/4, t = lane%4): a = A[g][t], b = B[t][g], {c0,c1} = C[g][2t], C[g][2t+1].
__device__ __forceinline__ void mma_m8n8k4_fp64(double& d0, double& d1, double a, double b, double c0,
                                                double c1) {
  asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%4, %5};\n"
      : "=d"(d0), "=d"(d1)
      : "d"(a), "d"(b), "d"(c0), "d"(c1));
}

}  // namespace ceiling::kernels
