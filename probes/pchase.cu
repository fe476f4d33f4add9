// Pointer chase (Saavedra & Smith; Hopper paper §III-A): one thread follows a random
// single-cycle ring of pointers, one dependent load at a time, timed with clock64 in the kernel.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "memory_probes.hpp"

namespace ceiling::probes::mem {

std::string to_string(ChaseMode m) {
  switch (m) {
    case ChaseMode::ca: return "ca";
    case ChaseMode::cg: return "cg";
    case ChaseMode::shared: return "shared";
    case ChaseMode::tlb: return "tlb";
  }
  return "?";
}

namespace {

// ---- ring order: a Feistel bijection on [0, 2^(2h)) walked down to [0, n) ----
__host__ __device__ inline std::uint32_t mix32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

__host__ __device__ inline std::uint32_t half_bits_for(std::uint32_t n) {
  std::uint32_t bits = 2;
  while (bits < 32 && (1ULL << bits) < n) bits += 2;
  return bits / 2;
}

__host__ __device__ inline std::uint32_t feistel(std::uint32_t x, std::uint32_t h, std::uint32_t seed) {
  const std::uint32_t mask = (1U << h) - 1;
  std::uint32_t l = x >> h, r = x & mask;
  for (std::uint32_t round = 0; round < 4; ++round) {
    const std::uint32_t nl = r;
    r = l ^ (mix32(r ^ (seed * 0x9e3779b9U + round * 0x85ebca6bU)) & mask);
    l = nl;
  }
  return (l << h) | r;
}

// Position k of the ring -> element index; a bijection on [0, n) (cycle walking).
__host__ __device__ inline std::uint32_t ring_at(std::uint32_t k, std::uint32_t n, std::uint32_t h, std::uint32_t seed) {
  std::uint32_t x = feistel(k, h, seed);
  while (x >= n) x = feistel(x, h, seed);
  return x;
}

// Byte offset of element i: dense at `stride`, or for the TLB sweep one element per page at a
// pseudo-random 128-byte line in the page's first 128 KiB (spreads cache sets).
__host__ __device__ inline std::uint64_t element_offset(std::uint32_t i, std::uint64_t stride, bool page_mode) {
  std::uint64_t off = static_cast<std::uint64_t>(i) * stride;
  if (page_mode) off += static_cast<std::uint64_t>((mix32(i) >> 8) & 1023U) * 128U;
  return off;
}

__global__ void build_ring(unsigned char* base, std::uint32_t n, std::uint64_t stride, bool page_mode, std::uint32_t seed) {
  const std::uint32_t h = half_bits_for(n);
  for (std::uint64_t k = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; k < n;
       k += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const std::uint32_t a = ring_at(static_cast<std::uint32_t>(k), n, h, seed);
    const std::uint32_t b = ring_at(static_cast<std::uint32_t>((k + 1) % n), n, h, seed);
    auto* slot = reinterpret_cast<std::uint64_t*>(base + element_offset(a, stride, page_mode));
    *slot = reinterpret_cast<std::uint64_t>(base + element_offset(b, stride, page_mode));
  }
}

// Grid-wide read of every element's word through L2 (warms L2 for the cg sweep); the sum keeps
// the loads alive.
__global__ void warm_elements(const unsigned char* base, std::uint32_t n, std::uint64_t stride, bool page_mode,
                              unsigned long long* sink) {
  unsigned long long acc = 0;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    acc += __ldcg(reinterpret_cast<const unsigned long long*>(base + element_offset(static_cast<std::uint32_t>(i), stride, page_mode)));
  if (acc == 0x5eed5eed5eedULL) *sink = acc;
}

// One word per 64 KiB: fills the TLB for a cold (DRAM) chase without caching the ring.
__global__ void touch_pages(const unsigned char* base, std::uint64_t bytes, unsigned long long* sink) {
  unsigned long long acc = 0;
  for (std::uint64_t off = (blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x) * 65536; off < bytes;
       off += static_cast<std::uint64_t>(gridDim.x) * blockDim.x * 65536)
    acc += __ldcg(reinterpret_cast<const unsigned long long*>(base + off));
  if (acc == 0x5eed5eed5eedULL) *sink = acc;
}

__device__ __forceinline__ unsigned long long gtimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ long long clk() {
  long long c;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(c)::"memory");
  return c;
}

template <int Mode>  // 0: ld.ca, 1: ld.cg
__device__ __forceinline__ std::uint64_t chase_load(std::uint64_t p) {
  std::uint64_t q;
  if constexpr (Mode == 0)
    asm volatile("ld.global.ca.u64 %0, [%1];" : "=l"(q) : "l"(p) : "memory");
  else
    asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(q) : "l"(p) : "memory");
  return q;
}

// out: [0] cycles, [1] nanoseconds, [2] final pointer. With block_warm, every thread of the block
// first reads each element once (ld.cg), so the ring sits in the L2 as this SM sees it.
template <int Mode>
__global__ void chase_global(const unsigned char* base, std::uint32_t n, std::uint64_t stride, bool page_mode,
                             int block_warm, std::uint32_t h, std::uint32_t seed, std::uint64_t start, long long warm,
                             long long steps, long long* out) {
  __shared__ std::uint64_t hold;
  if (block_warm) {  // 1: address order, 2: ring order
    unsigned long long acc = 0;
    for (std::uint32_t i = threadIdx.x; i < n; i += blockDim.x)
      acc += __ldcg(reinterpret_cast<const unsigned long long*>(
          base + element_offset(block_warm == 2 ? ring_at(i, n, h, seed) : i, stride, page_mode)));
    if (acc == 0x5eed5eed5eedULL) out[3] = static_cast<long long>(acc);
    __syncthreads();
  }
  if (threadIdx.x != 0) return;
  std::uint64_t p = start;
  for (long long i = 0; i < warm; ++i) p = chase_load<Mode>(p);
  // A volatile shared store waits for the last load's value, so the clock starts after it.
  asm volatile("st.volatile.shared.u64 [%0], %1;" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(&hold))), "l"(p)
               : "memory");
  const unsigned long long t0 = gtimer();
  const long long c0 = clk();
  for (long long i = 0; i < steps; i += 8) {
#pragma unroll
    for (int u = 0; u < 8; ++u) p = chase_load<Mode>(p);
  }
  asm volatile("st.volatile.shared.u64 [%0], %1;" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(&hold))), "l"(p)
               : "memory");
  const long long c1 = clk();
  const unsigned long long t1 = gtimer();
  out[0] = c1 - c0;
  out[1] = static_cast<long long>(t1 - t0);
  out[2] = static_cast<long long>(p);
}

// Shared-memory ring of n 32-bit shared addresses, `stride` bytes apart; built by the block,
// chased by thread 0. out[2] is the final element index.
__global__ void chase_shared(std::uint32_t n, std::uint32_t stride, std::uint32_t seed, long long warm, long long steps,
                             long long* out) {
  extern __shared__ unsigned char smem[];
  const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  const std::uint32_t h = half_bits_for(n);
  for (std::uint32_t k = threadIdx.x; k < n; k += blockDim.x) {
    const std::uint32_t a = ring_at(k, n, h, seed), b = ring_at((k + 1) % n, n, h, seed);
    *reinterpret_cast<unsigned*>(smem + a * stride) = base + b * stride;
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  unsigned j = base + ring_at(0, n, h, seed) * stride;
  for (long long i = 0; i < warm; ++i) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(j)::"memory");
  __shared__ unsigned hold;
  asm volatile("st.volatile.shared.u32 [%0], %1;" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(&hold))), "r"(j)
               : "memory");
  const unsigned long long t0 = gtimer();
  const long long c0 = clk();
  for (long long i = 0; i < steps; i += 8) {
#pragma unroll
    for (int u = 0; u < 8; ++u) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(j)::"memory");
  }
  asm volatile("st.volatile.shared.u32 [%0], %1;" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(&hold))), "r"(j)
               : "memory");
  const long long c1 = clk();
  const unsigned long long t1 = gtimer();
  out[0] = c1 - c0;
  out[1] = static_cast<long long>(t1 - t0);
  out[2] = static_cast<long long>((j - base) / stride);
}

int sm_count_of_current_device() {
  int dev = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return sms;
}

}  // namespace

std::uint32_t ring_element(std::uint64_t k, std::uint32_t n, std::uint32_t seed) {
  return ring_at(static_cast<std::uint32_t>(k % n), n, half_bits_for(n), seed);
}

PointerChase::PointerChase(std::size_t capacity_bytes) : buffer_(capacity_bytes), out_(5) {}

ChaseSample PointerChase::run(const ChaseSpec& spec) {
  if (spec.stride_bytes < 32 && spec.mode != ChaseMode::shared)
    throw std::invalid_argument("pointer chase: stride must be >= 32 bytes (one sector)");
  if (spec.stride_bytes < 4 || spec.stride_bytes % 4)
    throw std::invalid_argument("pointer chase: stride must be a multiple of 4 bytes");
  const std::size_t n64 = spec.footprint_bytes / spec.stride_bytes;
  if (n64 < 2 || n64 > 0xffffffffULL) throw std::invalid_argument("pointer chase: footprint/stride must be in [2, 2^32)");
  const auto n = static_cast<std::uint32_t>(n64);
  const long long steps = std::max<long long>(8, (spec.steps + 7) / 8 * 8);
  const bool page_mode = spec.mode == ChaseMode::tlb;
  long long host[3] = {0, 0, 0};
  std::uint64_t expect = 0;

  if (spec.mode == ChaseMode::shared) {
    const std::size_t smem = static_cast<std::size_t>(n) * spec.stride_bytes;
    int dev = 0, optin = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    if (smem > static_cast<std::size_t>(optin))
      throw std::invalid_argument("pointer chase: shared footprint " + std::to_string(smem) + " B > " +
                                  std::to_string(optin) + " B per block");
    CUDA_CHECK(cudaFuncSetAttribute(chase_shared, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    const long long warm = spec.warm_steps < 0 ? n : spec.warm_steps;
    chase_shared<<<1, 256, smem>>>(n, static_cast<std::uint32_t>(spec.stride_bytes), spec.seed, warm, steps, out_.data());
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(host, out_.data(), sizeof host, cudaMemcpyDeviceToHost));
    expect = ring_element(static_cast<std::uint64_t>(warm + steps), n, spec.seed);
  } else {
    const std::uint64_t last = element_offset(n - 1, spec.stride_bytes, page_mode) + 8;
    if (last > buffer_.bytes())
      throw std::invalid_argument("pointer chase: footprint exceeds the buffer (" + std::to_string(last) + " > " +
                                  std::to_string(buffer_.bytes()) + " B)");
    unsigned char* base = buffer_.data();
    const int sms = sm_count_of_current_device();
    build_ring<<<4 * sms, 256>>>(base, n, spec.stride_bytes, page_mode, spec.seed);
    CUDA_CHECK_LAUNCH();
    auto* sink = reinterpret_cast<unsigned long long*>(out_.data() + 4);
    long long warm = spec.warm_steps;
    int block_warm = 0;
    if (spec.cold) {
      warm = 0;
      gpu::flush_l2();
      touch_pages<<<sms, 256>>>(base, last, sink);
      CUDA_CHECK_LAUNCH();
    } else if (warm < 0) {
      if (spec.mode == ChaseMode::cg && spec.warm == WarmScope::all_sms) {
        warm = 0;
        warm_elements<<<4 * sms, 256>>>(base, n, spec.stride_bytes, page_mode, sink);
        CUDA_CHECK_LAUNCH();
      } else if (spec.mode == ChaseMode::cg) {
        warm = 0;
        block_warm = spec.warm == WarmScope::ring_order ? 2 : 1;
      } else {
        warm = n;  // ca: the chasing thread's own lap fills its SM's L1; tlb: fills the TLB
      }
    }
    const std::uint32_t h = half_bits_for(n);
    const std::uint64_t start = reinterpret_cast<std::uint64_t>(base + element_offset(ring_at(0, n, h, spec.seed), spec.stride_bytes, page_mode));
    // Largest L1 carveout: the ca sweep measures the L1 a kernel without shared memory gets.
    CUDA_CHECK(cudaFuncSetAttribute(chase_global<0>, cudaFuncAttributePreferredSharedMemoryCarveout, 0));
    const int threads = block_warm ? 1024 : 1;
    if (spec.mode == ChaseMode::ca)
      chase_global<0><<<1, threads>>>(base, n, spec.stride_bytes, page_mode, block_warm, h, spec.seed, start, warm, steps,
                                      out_.data());
    else
      chase_global<1><<<1, threads>>>(base, n, spec.stride_bytes, page_mode, block_warm, h, spec.seed, start, warm, steps,
                                      out_.data());
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(host, out_.data(), sizeof host, cudaMemcpyDeviceToHost));
    const std::uint32_t e = ring_element(static_cast<std::uint64_t>(warm + steps), n, spec.seed);
    expect = reinterpret_cast<std::uint64_t>(base + element_offset(e, spec.stride_bytes, page_mode));
  }
  if (static_cast<std::uint64_t>(host[2]) != expect)
    throw std::runtime_error("pointer chase (" + to_string(spec.mode) + ", " + std::to_string(spec.footprint_bytes) +
                             " B): the chase ended at " + std::to_string(host[2]) + ", the ring says " +
                             std::to_string(expect));
  if (host[0] <= 0 || host[1] <= 0) throw std::runtime_error("pointer chase: clock did not advance");
  ChaseSample s;
  s.cycles_per_load = static_cast<double>(host[0]) / static_cast<double>(steps);
  s.sm_clock_hz = static_cast<double>(host[0]) / static_cast<double>(host[1]) * 1e9;
  s.elements = n;
  return s;
}

}  // namespace ceiling::probes::mem
