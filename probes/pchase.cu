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

// The TLB sweep (pages > 0) visits `pages` pages, one per `stride`, in one fixed random order per
// lap, and a different 128-byte line of each page on every lap: `lines` laps make one ring of
// pages x lines elements. The fixed page order keeps any LRU step at a TLB's reach sharp (a random
// page order would smear it); the many lines average the L2 hit latency over near and far L2
// slices (with one line per page, the few lines of an 8-32 MiB footprint land near or far by
// chance, up to 5% on an H100, which looked like a TLB step at 16-22 MiB in some runs). Element e
// is line e / pages of page e % pages; lines stay in a page's first 64 KiB.
constexpr std::uint32_t kTlbMaxLines = 512;  // 64 KiB / 128 B
constexpr std::uint32_t kTlbMinElements = 4096;

__host__ __device__ inline std::uint64_t element_offset(std::uint32_t i, std::uint64_t stride, std::uint32_t pages) {
  if (pages == 0) return static_cast<std::uint64_t>(i) * stride;
  const std::uint32_t page = i % pages, lap = i / pages;
  // 131 is odd, so laps 0..511 of one page take 512 distinct lines, from a per-page start.
  const std::uint32_t line = ((mix32(page) >> 8) + lap * 131U) % kTlbMaxLines;
  return static_cast<std::uint64_t>(page) * stride + static_cast<std::uint64_t>(line) * 128U;
}

// Position k of the chase -> element index: the ring order (dense), or lap k / pages of the fixed
// page order (TLB). h is half_bits_for(n), or half_bits_for(pages) for the TLB sweep.
__host__ __device__ inline std::uint32_t chase_at(std::uint32_t k, std::uint32_t n, std::uint32_t pages, std::uint32_t h,
                                                  std::uint32_t seed) {
  if (pages == 0) return ring_at(k, n, h, seed);
  return (k / pages) * pages + ring_at(k % pages, pages, h, seed);
}

__global__ void build_ring(unsigned char* base, std::uint32_t n, std::uint64_t stride, std::uint32_t pages, std::uint32_t seed) {
  const std::uint32_t h = half_bits_for(pages ? pages : n);
  for (std::uint64_t k = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; k < n;
       k += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const std::uint32_t a = chase_at(static_cast<std::uint32_t>(k), n, pages, h, seed);
    const std::uint32_t b = chase_at(static_cast<std::uint32_t>((k + 1) % n), n, pages, h, seed);
    auto* slot = reinterpret_cast<std::uint64_t*>(base + element_offset(a, stride, pages));
    *slot = reinterpret_cast<std::uint64_t>(base + element_offset(b, stride, pages));
  }
}

// Grid-wide read of every element's word through L2 (warms L2 for the cg sweep); the sum keeps
// the loads alive.
__global__ void warm_elements(const unsigned char* base, std::uint32_t n, std::uint64_t stride, std::uint32_t pages,
                              unsigned long long* sink) {
  unsigned long long acc = 0;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    acc += __ldcg(reinterpret_cast<const unsigned long long*>(base + element_offset(static_cast<std::uint32_t>(i), stride, pages)));
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
__global__ void chase_global(const unsigned char* base, std::uint32_t n, std::uint64_t stride, std::uint32_t pages,
                             int block_warm, std::uint32_t h, std::uint32_t seed, std::uint64_t start, long long warm,
                             long long steps, long long* out) {
  __shared__ std::uint64_t hold;
  if (block_warm) {  // 1: address order, 2: ring order
    unsigned long long acc = 0;
    for (std::uint32_t i = threadIdx.x; i < n; i += blockDim.x)
      acc += __ldcg(reinterpret_cast<const unsigned long long*>(
          base + element_offset(block_warm == 2 ? chase_at(i, n, pages, h, seed) : i, stride, pages)));
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
  const bool page_mode = spec.mode == ChaseMode::tlb;
  if (page_mode && spec.stride_bytes < kTlbMaxLines * 128)
    throw std::invalid_argument("pointer chase: the TLB sweep's page stride must be >= 64 KiB");
  // TLB sweep: enough lines per page for >= 4096 elements in all (at most 512 per page).
  const std::uint32_t pages = page_mode ? static_cast<std::uint32_t>(n64) : 0;
  if (spec.lines_per_page > kTlbMaxLines) throw std::invalid_argument("pointer chase: at most 512 lines per page");
  const std::uint64_t lines = !page_mode               ? 1
                              : spec.lines_per_page > 0 ? spec.lines_per_page
                                                        : std::clamp<std::uint64_t>((kTlbMinElements + n64 - 1) / n64, 1, kTlbMaxLines);
  if (n64 * lines > 0xffffffffULL) throw std::invalid_argument("pointer chase: too many elements");
  const auto n = static_cast<std::uint32_t>(n64 * lines);
  const long long steps = std::max<long long>(8, (spec.steps + 7) / 8 * 8);
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
    const std::uint64_t last =
        page_mode ? (n64 - 1) * spec.stride_bytes + kTlbMaxLines * 128 : element_offset(n - 1, spec.stride_bytes, 0) + 8;
    if (last > buffer_.bytes())
      throw std::invalid_argument("pointer chase: footprint exceeds the buffer (" + std::to_string(last) + " > " +
                                  std::to_string(buffer_.bytes()) + " B)");
    unsigned char* base = buffer_.data();
    const int sms = sm_count_of_current_device();
    build_ring<<<4 * sms, 256>>>(base, n, spec.stride_bytes, pages, spec.seed);
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
        warm_elements<<<4 * sms, 256>>>(base, n, spec.stride_bytes, pages, sink);
        CUDA_CHECK_LAUNCH();
      } else if (spec.mode == ChaseMode::cg) {
        warm = 0;
        block_warm = spec.warm == WarmScope::ring_order ? 2 : 1;
      } else {
        warm = n;  // ca: the chasing thread's own lap fills its SM's L1; tlb: fills the TLB and caches every line
      }
    }
    const std::uint32_t h = half_bits_for(page_mode ? pages : n);
    const std::uint64_t start =
        reinterpret_cast<std::uint64_t>(base + element_offset(chase_at(0, n, pages, h, spec.seed), spec.stride_bytes, pages));
    // Largest L1 carveout: the ca sweep measures the L1 a kernel without shared memory gets.
    CUDA_CHECK(cudaFuncSetAttribute(chase_global<0>, cudaFuncAttributePreferredSharedMemoryCarveout, 0));
    const int threads = block_warm ? 1024 : 1;
    if (spec.mode == ChaseMode::ca)
      chase_global<0><<<1, threads>>>(base, n, spec.stride_bytes, pages, block_warm, h, spec.seed, start, warm, steps,
                                      out_.data());
    else
      chase_global<1><<<1, threads>>>(base, n, spec.stride_bytes, pages, block_warm, h, spec.seed, start, warm, steps,
                                      out_.data());
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(host, out_.data(), sizeof host, cudaMemcpyDeviceToHost));
    const auto e = chase_at(static_cast<std::uint32_t>(static_cast<std::uint64_t>(warm + steps) % n), n, pages, h, spec.seed);
    expect = reinterpret_cast<std::uint64_t>(base + element_offset(e, spec.stride_bytes, pages));
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
