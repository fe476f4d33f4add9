// Bandwidth kernels: DRAM stream patterns (BabelStream's read/write/copy/scale/triad with 16-byte
// accesses and a searched launch configuration), L2 re-reads, per-SM L1 and shared memory.
// Each checks its output: exact integer-valued checksums, or a device-wide comparison of the
// written array after it was poisoned.
#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/l2_checksum.hpp"
#include "memory_probes.hpp"
#include "../model/stats.hpp"

namespace ceiling::probes::mem {

std::string to_string(StreamPattern p) {
  switch (p) {
    case StreamPattern::read: return "read";
    case StreamPattern::write: return "write";
    case StreamPattern::copy: return "copy";
    case StreamPattern::scale: return "scale";
    case StreamPattern::triad: return "triad";
  }
  return "?";
}

int arrays_touched(StreamPattern p) {
  switch (p) {
    case StreamPattern::read: return 1;
    case StreamPattern::write: return 1;
    case StreamPattern::copy: return 2;
    case StreamPattern::scale: return 2;
    case StreamPattern::triad: return 3;
  }
  return 0;
}

// L2 layout 2: rounds of U x blockDim 16-byte loads per block, i.e. its chunk size.
constexpr int kL2ChunkRounds = 8;

std::string LaunchConfig::str() const {
  static const char* flavors[] = {"ld/st.cs", "ld.nc.L2::256B", "ld.nc", "ld/st"};
  return (blocks_per_sm > 0 ? std::to_string(blocks_per_sm) + " blocks/SM" : std::string("grid over the array")) +
         " x " + std::to_string(threads) + " threads x " +
         (unroll == 0 ? std::string("one access each, no loop") : "unroll " + std::to_string(unroll)) + ", " +
         (flavor >= 0 && flavor < 4 ? flavors[flavor] : "?") + (layout == 1 ? ", warp-contiguous" : "");
}

std::string LaunchConfig::l2_str() const {
  const char* loads[] = {"ld.cg", "ld.nc.L1::no_allocate", "8-byte ld.cg", "8-byte ld.global (L1-allocating)"};
  const std::string load = flavor >= 0 && flavor < 4 ? loads[flavor] : "?";
  const int bytes = flavor >= 2 ? 8 : 16;
  if (layout == 3)
    return "short blocks of " + std::to_string(threads) + " threads, each reading one column of " + std::to_string(unroll) +
           " rows x " + std::to_string(threads * bytes) + " B (the buffer as " + std::to_string(unroll) + " rows), " + load;
  if (layout == 2)
    return "short blocks of " + std::to_string(threads) + " threads x unroll " + std::to_string(unroll) +
           ", one " + std::to_string(threads * unroll * kL2ChunkRounds * bytes / 1024) + " KiB chunk each, " + load;
  return std::to_string(blocks_per_sm) + " blocks/SM x " + std::to_string(threads) + " threads x unroll " +
         std::to_string(unroll) + ", " + load + ", " +
         (layout == 0 ? "a slice per block" : "all blocks over the whole buffer");
}

std::vector<LaunchConfig> default_stream_candidates(bool quick) {
  std::vector<LaunchConfig> c;
  if (quick) {
    for (int f : {0, 2})
      for (int u : {2, 4})
        for (int bps : {2, 0}) c.push_back({bps, 512, u, f});
    return c;
  }
  // Persistent grids at half and full occupancy, and a grid covering the array (blocks_per_sm 0).
  for (int f : {0, 1, 2})
    for (int u : {1, 2, 4, 8})
      for (int t : {256, 512, 1024})
        for (int bps : {std::max(1, 1024 / t), 2048 / t, 0}) c.push_back({bps, t, u, f});
  return c;
}

namespace {

constexpr double kScalar = 3.0;
// Integer-valued doubles: every sum below is exact, so checks compare with ==.
__host__ __device__ inline double a_value(std::size_t i) { return static_cast<double>(i % 1021); }
__host__ __device__ inline double b_value(std::size_t i) { return static_cast<double>(i % 997); }
constexpr double kWriteValue = 7.0;

__host__ __device__ inline double expected_c(StreamPattern p, std::size_t i) {
  switch (p) {
    case StreamPattern::write: return kWriteValue;
    case StreamPattern::copy: return a_value(i);
    case StreamPattern::scale: return kScalar * a_value(i);
    case StreamPattern::triad: return a_value(i) + kScalar * b_value(i);
    default: return 0;
  }
}

__global__ void init_ab(double2* a, double2* b, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    a[i] = make_double2(a_value(2 * i), a_value(2 * i + 1));
    if (b) b[i] = make_double2(b_value(2 * i), b_value(2 * i + 1));
  }
}

template <int F>
__device__ __forceinline__ double2 ld16(const double2* p) {
  if constexpr (F == 0) {
    return __ldcs(p);
  } else if constexpr (F == 1) {
    double2 v;
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v2.f64 {%0,%1}, [%2];" : "=d"(v.x), "=d"(v.y) : "l"(p));
    return v;
  } else if constexpr (F == 2) {
    return __ldg(p);
  } else {
    return *p;  // plain ld.global (LDG.E.128), as the validation kernels load in-L2 data
  }
}
template <int F>
__device__ __forceinline__ void st16(double2* p, double2 v) {
  if constexpr (F == 0)
    __stcs(p, v);
  else
    *p = v;
}

// U independent 16-byte accesses per thread per trip, all loads issued before any use. Access u
// of a thread lies blockDim apart (Warp false) or, Warp true, right after the warp's access u - 1
// (each warp one contiguous run of U x 512 bytes per trip, as the validation kernels lay out rows:
// in L2 an intensity kernel moved 15 MB 7% faster than every blockDim-strided configuration).
template <StreamPattern P, int U, int F, bool Warp = false>
__global__ void stream_kernel(const double2* __restrict__ a, const double2* __restrict__ b, double2* __restrict__ c,
                              std::size_t n, double* sum) {
  double acc = 0;
  auto one = [&](std::size_t j) {
    if constexpr (P == StreamPattern::read) {
      const double2 v = ld16<F>(a + j);
      acc += v.x + v.y;
    } else if constexpr (P == StreamPattern::write) {
      st16<F>(c + j, make_double2(kWriteValue, kWriteValue));
    } else if constexpr (P == StreamPattern::copy) {
      st16<F>(c + j, ld16<F>(a + j));
    } else if constexpr (P == StreamPattern::scale) {
      const double2 v = ld16<F>(a + j);
      st16<F>(c + j, make_double2(kScalar * v.x, kScalar * v.y));
    } else {
      const double2 v = ld16<F>(a + j), w = ld16<F>(b + j);
      st16<F>(c + j, make_double2(v.x + kScalar * w.x, v.y + kScalar * w.y));
    }
  };
  if constexpr (U == 0) {
    // One access per thread, no loop: the leanest shape (a grid over the array), as the
    // validation kernels are written; small warm runs are per-thread-latency bound.
    const std::size_t j = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
    if (j < n) one(j);
  } else {
  // Each trip a block covers one contiguous chunk of blockDim * U elements (DRAM page locality).
  const std::size_t chunk = static_cast<std::size_t>(blockDim.x) * U;
  for (std::size_t base = blockIdx.x * chunk; base < n; base += static_cast<std::size_t>(gridDim.x) * chunk) {
    const std::size_t j0 = Warp ? base + (threadIdx.x >> 5) * (32 * U) + (threadIdx.x & 31) : base + threadIdx.x;
    const std::size_t step = Warp ? 32 : blockDim.x;
    if (base + chunk > n) {
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (j0 + u * step < n) one(j0 + u * step);
      continue;
    }
    if constexpr (P == StreamPattern::write) {
#pragma unroll
      for (int u = 0; u < U; ++u) one(j0 + u * step);
    } else {
      double2 va[U], vb[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        va[u] = ld16<F>(a + j0 + u * step);
        if constexpr (P == StreamPattern::triad) vb[u] = ld16<F>(b + j0 + u * step);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const std::size_t j = j0 + u * step;
        if constexpr (P == StreamPattern::read) acc += va[u].x + va[u].y;
        if constexpr (P == StreamPattern::copy) st16<F>(c + j, va[u]);
        if constexpr (P == StreamPattern::scale) st16<F>(c + j, make_double2(kScalar * va[u].x, kScalar * va[u].y));
        if constexpr (P == StreamPattern::triad)
          st16<F>(c + j, make_double2(va[u].x + kScalar * vb[u].x, va[u].y + kScalar * vb[u].y));
      }
    }
  }
  }
  if constexpr (P == StreamPattern::read) {
    // One slot per block (sum has >= gridDim.x): per-warp atomics on one address serialized in
    // the L2 and made small reads slow (21 MB cold took 16.8 us on an H100, 2.5x a write).
    __shared__ double warp_sums[32];
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffU, acc, o);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
      double s = 0;
      for (unsigned w = 0; w < (blockDim.x + 31) / 32; ++w) s += warp_sums[w];
      sum[blockIdx.x] = s;
    }
  }
}

// Blocks of a stream launch: blocks_per_sm x SMs, or a grid covering the array (0).
unsigned stream_grid(const LaunchConfig& cfg, std::size_t n, int sms) {
  const std::size_t chunk = static_cast<std::size_t>(cfg.threads) * std::max(1, cfg.unroll);
  return cfg.blocks_per_sm > 0 && cfg.unroll > 0 ? static_cast<unsigned>(cfg.blocks_per_sm * sms)
                               : static_cast<unsigned>((n + chunk - 1) / chunk);
}
// Slots for per-block read sums: enough for any candidate (the smallest chunk is 128 x 1).
std::size_t sum_slots(std::size_t n, int sms) { return std::max<std::size_t>((n + 127) / 128, 64 * static_cast<std::size_t>(sms)) + 1; }

// sum over i < 2n of (i mod 1021), in closed form (exact in double below 2^53).
double expected_read_sum(std::size_t n) {
  const std::size_t N = 2 * n, m = 1021, q = N / m, rem = N % m;
  return static_cast<double>(q) * (m * (m - 1) / 2) + static_cast<double>(rem * (rem - 1) / 2);
}

// One launch of a read into zeroed slots, then the slots of its grid added on the host.
template <class Launch>
double read_checksum(Launch launch, const LaunchConfig& cfg, std::size_t n, int sms, double* slots) {
  const unsigned grid = stream_grid(cfg, n, sms);
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemset(slots, 0, grid * sizeof(double)));
  launch(cfg, nullptr);
  CUDA_CHECK_LAUNCH();
  std::vector<double> h(grid);
  CUDA_CHECK(cudaMemcpy(h.data(), slots, grid * sizeof(double), cudaMemcpyDeviceToHost));
  double total = 0;
  for (double v : h) total += v;
  return total;
}

__global__ void count_mismatches(const double2* c, std::size_t n, StreamPattern p, unsigned long long* bad) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const double2 v = c[i];
    local += (v.x != expected_c(p, 2 * i)) + (v.y != expected_c(p, 2 * i + 1));
  }
  if (local) atomicAdd(bad, local);
}

using StreamFn = void (*)(const double2*, const double2*, double2*, std::size_t, double*);

template <StreamPattern P, int F>
StreamFn pick_stream(int unroll, int layout) {
  if (layout == 1 && (F == 2 || F == 3)) {  // warp-contiguous accesses (warm L2 candidates)
    switch (unroll) {
      case 2: return stream_kernel<P, 2, F, true>;
      case 4: return stream_kernel<P, 4, F, true>;
      case 8: return stream_kernel<P, 8, F, true>;
    }
    throw std::invalid_argument("stream: warp-contiguous accesses need unroll 2, 4 or 8");
  }
  if (layout != 0) throw std::invalid_argument("stream: layout 1 (warp-contiguous) needs flavor 2 or 3");
  switch (unroll) {
    case 0: return stream_kernel<P, 0, F>;
    case 1: return stream_kernel<P, 1, F>;
    case 2: return stream_kernel<P, 2, F>;
    case 4: return stream_kernel<P, 4, F>;
    case 8: return stream_kernel<P, 8, F>;
  }
  throw std::invalid_argument("stream: unroll must be 0 (one access per thread, no loop), 1, 2, 4 or 8");
}

template <StreamPattern P>
StreamFn pick_flavor(int unroll, int flavor, int layout) {
  switch (flavor) {
    case 0: return pick_stream<P, 0>(unroll, layout);
    case 1: return pick_stream<P, 1>(unroll, layout);
    case 2: return pick_stream<P, 2>(unroll, layout);
    case 3: return pick_stream<P, 3>(unroll, layout);
  }
  throw std::invalid_argument("stream: flavor must be 0, 1, 2 or 3");
}

StreamFn stream_fn(StreamPattern p, const LaunchConfig& cfg) {
  switch (p) {
    case StreamPattern::read: return pick_flavor<StreamPattern::read>(cfg.unroll, cfg.flavor, cfg.layout);
    case StreamPattern::write: return pick_flavor<StreamPattern::write>(cfg.unroll, cfg.flavor, cfg.layout);
    case StreamPattern::copy: return pick_flavor<StreamPattern::copy>(cfg.unroll, cfg.flavor, cfg.layout);
    case StreamPattern::scale: return pick_flavor<StreamPattern::scale>(cfg.unroll, cfg.flavor, cfg.layout);
    case StreamPattern::triad: return pick_flavor<StreamPattern::triad>(cfg.unroll, cfg.flavor, cfg.layout);
  }
  throw std::invalid_argument("stream: unknown pattern");
}

int sms_now() {
  int dev = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return sms;
}

// Blocks per SM actually possible for this kernel and block size; 0 if the size is refused.
// Blocks per SM actually possible (wanted 0 = grid over the array: kept when one block fits);
// -1 if this block size cannot run at all.
template <class K>
int fit_blocks(K kernel, int threads, int wanted) {
  int n = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, 0) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  if (n < 1) return -1;
  return wanted == 0 ? 0 : std::min(n, wanted);
}

// Times every candidate briefly, then the best `finalists` (DRAM 3, L2 1) with the full options;
// the fastest of those counts. (One finalist left the figure to the search's noise: the H200's DRAM read pattern was
// 4.51, 4.52 and 4.39 TB/s in three calibrations, the last with another configuration.)
// before_final runs before each finalist (it resets what the caller verifies); where the winner
// was not the last finalist, it runs once more and the winner launches once, so the caller's
// check after this function sees the winner's output.
template <class Launch, class Fit>
BandwidthResult search_and_time(const std::vector<LaunchConfig>& candidates, double bytes_per_run, Launch launch,
                                Fit fit, const gpu::TimingOptions& opt, int search_repeats,
                                const std::function<void()>& before_final, int finalists_wanted) {
  if (candidates.empty()) throw std::invalid_argument("bandwidth: no launch configuration to try");
  BandwidthResult r;
  r.bytes_per_run = bytes_per_run;
  gpu::TimingOptions quick_opt = opt;
  quick_opt.warmup = 1;
  quick_opt.repeats = std::max(2, search_repeats);
  quick_opt.max_retries = 0;
  quick_opt.clock_samples = 0;  // the search compares times; a 200 us clock sample per repeat doubled it
  std::vector<std::pair<double, LaunchConfig>> searched;
  std::map<std::string, bool> seen;
  for (LaunchConfig cfg : candidates) {
    cfg.blocks_per_sm = fit(cfg);
    if (cfg.blocks_per_sm < 0 || seen[cfg.str()]) continue;
    seen[cfg.str()] = true;
    r.tried.push_back(cfg);
    const auto t = gpu::time_kernel([&](cudaStream_t s) { launch(cfg, s); }, quick_opt);
    searched.emplace_back(t.summary.median, cfg);
  }
  if (searched.empty()) throw std::runtime_error("bandwidth: no launch configuration fits this device");
  std::stable_sort(searched.begin(), searched.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  const std::size_t finalists = std::min<std::size_t>(std::max(1, finalists_wanted), searched.size());
  std::size_t best = 0;
  for (std::size_t i = 0; i < finalists; ++i) {
    if (before_final) before_final();
    gpu::Timing t = gpu::time_kernel([&](cudaStream_t s) { launch(searched[i].second, s); }, opt);
    if (i == 0 || t.summary.median < r.timing.summary.median) {
      r.timing = std::move(t);
      r.config = searched[i].second;
      best = i;
    }
  }
  if (best + 1 != finalists) {
    if (before_final) before_final();
    launch(r.config, nullptr);
    CUDA_CHECK_LAUNCH();
  }
  return r;
}

// ---- L2: all SMs re-reading a buffer with ld.cg (uint4), wrapping 64-bit checksum ----

__global__ void init_words(uint4* w, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    w[i] = make_uint4(l2check::word(4 * i), l2check::word(4 * i + 1), l2check::word(4 * i + 2), l2check::word(4 * i + 3));
}

template <int F>
__device__ __forceinline__ uint4 l2_load(const uint4* p) {
  if constexpr (F == 0) {
    return __ldcg(p);
  } else {
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
  }
}

// Layout 0: each block re-reads its own contiguous slice (lines stay in the L2 partition next
// to its SM, so the whole L2 holds the buffer). Layout 1: every block strides over the whole
// buffer (each line read by all SMs). Layout 2: many short-lived blocks, each reading one
// contiguous chunk of kL2ChunkRounds x U x blockDim uint4 once (block b reads chunk b mod chunks;
// the grid holds `passes` rounds of all chunks), so every SM streams from every L2 partition
// with no long-lived block state (the shape of gpu-benches' L2 test, written anew here).

template <int U, int F>
__device__ __forceinline__ unsigned long long l2_read_range(const uint4* __restrict__ w, std::size_t j,
                                                            std::size_t hi, std::size_t step) {
  unsigned long long acc = 0;
  for (; j + (U - 1) * step < hi; j += U * step) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = l2_load<F>(w + j + u * step);
#pragma unroll
    for (int u = 0; u < U; ++u) acc += static_cast<unsigned long long>(v[u].x) + v[u].y + v[u].z + v[u].w;
  }
  for (; j < hi; j += step) {
    const uint4 v = l2_load<F>(w + j);
    acc += static_cast<unsigned long long>(v.x) + v.y + v.z + v.w;
  }
  return acc;
}

// Layout 2 with 8-byte loads (flavor 2: ld.global.cg, L1 bypassed; flavor 3: plain ld.global,
// L1-allocating, as gpu-benches' L2 test does — kept only as a comparison, since L1 hits between
// blocks on one SM would count as L2 bandwidth).
template <int U, int F>
__global__ void l2_kernel8(const uint4* __restrict__ w16, std::size_t n16, int, unsigned long long* sum) {
  const uint2* __restrict__ w = reinterpret_cast<const uint2*>(w16);
  const std::size_t n = 2 * n16;
  const std::size_t chunk = static_cast<std::size_t>(blockDim.x) * U * kL2ChunkRounds;
  const std::size_t chunks = (n + chunk - 1) / chunk;
  const std::size_t lo = (blockIdx.x % chunks) * chunk;
  const std::size_t hi = lo + chunk < n ? lo + chunk : n;
  const std::size_t step = blockDim.x;
  unsigned long long acc = 0;
  std::size_t j = lo + threadIdx.x;
  for (; j + (U - 1) * step < hi; j += U * step) {
    uint2 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = F == 2 ? __ldcg(w + j + u * step) : w[j + u * step];
#pragma unroll
    for (int u = 0; u < U; ++u) acc += static_cast<unsigned long long>(v[u].x) + v[u].y;
  }
  for (; j < hi; j += step) {
    const uint2 v = F == 2 ? __ldcg(w + j) : w[j];
    acc += static_cast<unsigned long long>(v.x) + v.y;
  }
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffU, acc, o);
  if ((threadIdx.x & 31) == 0) atomicAdd(sum, acc);
}

// Layout 3 (8-byte loads): the buffer as R rows; block b reads column b mod columns, blockDim
// words wide, in every row, its R loads all in flight: at any time the running blocks read
// from R places spread over the whole buffer (gpu-benches' L2 test reads this shape, 32 rows of
// 8 KiB per block; written anew here). The grid holds `passes` rounds of all columns.
template <int R, int F>
__global__ void l2_kernel8_columns(const uint4* __restrict__ w16, std::size_t n16, int, unsigned long long* sum) {
  const uint2* __restrict__ w = reinterpret_cast<const uint2*>(w16);
  const std::size_t row_len = 2 * n16 / R;  // the caller makes 2 * n16 a multiple of R
  const std::size_t columns = (row_len + blockDim.x - 1) / blockDim.x;
  const std::size_t col = (blockIdx.x % columns) * blockDim.x + threadIdx.x;
  unsigned long long acc = 0;
  if (col < row_len) {
    uint2 v[R];
#pragma unroll
    for (int r = 0; r < R; ++r) v[r] = F == 2 ? __ldcg(w + r * row_len + col) : w[r * row_len + col];
#pragma unroll
    for (int r = 0; r < R; ++r) acc += static_cast<unsigned long long>(v[r].x) + v[r].y;
  }
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffU, acc, o);
  if ((threadIdx.x & 31) == 0) atomicAdd(sum, acc);
}

template <int U, int F, int L>
__global__ void l2_kernel(const uint4* __restrict__ w, std::size_t n, int passes, unsigned long long* sum) {
  unsigned long long acc = 0;
  if constexpr (L == 2) {
    const std::size_t chunk = static_cast<std::size_t>(blockDim.x) * U * kL2ChunkRounds;
    const std::size_t chunks = (n + chunk - 1) / chunk;
    const std::size_t lo = (blockIdx.x % chunks) * chunk;
    const std::size_t hi = lo + chunk < n ? lo + chunk : n;
    acc = l2_read_range<U, F>(w, lo + threadIdx.x, hi, blockDim.x);
  } else {
    const std::size_t lo = L == 0 ? n * blockIdx.x / gridDim.x : blockIdx.x * static_cast<std::size_t>(blockDim.x);
    const std::size_t hi = L == 0 ? n * (blockIdx.x + 1) / gridDim.x : n;
    const std::size_t step = L == 0 ? blockDim.x : static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (int pass = 0; pass < passes; ++pass) acc += l2_read_range<U, F>(w, lo + threadIdx.x, hi, step);
  }
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffU, acc, o);
  if ((threadIdx.x & 31) == 0) atomicAdd(sum, acc);
}

using L2Fn = void (*)(const uint4*, std::size_t, int, unsigned long long*);
template <int F, int L>
L2Fn l2_fn_u(int unroll) {
  switch (unroll) {
    case 1: return l2_kernel<1, F, L>;
    case 2: return l2_kernel<2, F, L>;
    case 4: return l2_kernel<4, F, L>;
    case 8: return l2_kernel<8, F, L>;
  }
  throw std::invalid_argument("l2: unroll must be 1, 2, 4 or 8");
}
template <int F>
L2Fn l2_fn8(int unroll) {
  switch (unroll) {
    case 2: return l2_kernel8<2, F>;
    case 4: return l2_kernel8<4, F>;
    case 8: return l2_kernel8<8, F>;
    case 16: return l2_kernel8<16, F>;
    case 32: return l2_kernel8<32, F>;
  }
  throw std::invalid_argument("l2: 8-byte unroll must be 2, 4, 8, 16 or 32");
}
template <int F>
L2Fn l2_fn_columns(int rows) {
  switch (rows) {
    case 16: return l2_kernel8_columns<16, F>;
    case 32: return l2_kernel8_columns<32, F>;
  }
  throw std::invalid_argument("l2: column rows (unroll) must be 16 or 32");
}
L2Fn l2_fn(const LaunchConfig& c) {
  if (c.layout == 3) {
    if (c.flavor != 2 && c.flavor != 3) throw std::invalid_argument("l2: layout 3 takes 8-byte loads (flavor 2 or 3)");
    return c.flavor == 2 ? l2_fn_columns<2>(c.unroll) : l2_fn_columns<3>(c.unroll);
  }
  if (c.layout == 2 && (c.flavor == 2 || c.flavor == 3)) return c.flavor == 2 ? l2_fn8<2>(c.unroll) : l2_fn8<3>(c.unroll);
  if (c.flavor < 0 || c.flavor > 1 || c.layout < 0 || c.layout > 2)
    throw std::invalid_argument("l2: flavor must be 0 or 1 (2, 3 with layout 2), layout 0, 1 or 2");
  if (c.layout == 0) return c.flavor == 0 ? l2_fn_u<0, 0>(c.unroll) : l2_fn_u<1, 0>(c.unroll);
  if (c.layout == 1) return c.flavor == 0 ? l2_fn_u<0, 1>(c.unroll) : l2_fn_u<1, 1>(c.unroll);
  return c.flavor == 0 ? l2_fn_u<0, 2>(c.unroll) : l2_fn_u<1, 2>(c.unroll);
}

// ---- per-SM L1 / shared: one 1024-thread block per SM, 16-byte loads, clock64 per block ----
constexpr int kPerSmThreads = 1024;
constexpr int kPerSmUnroll = 4;
constexpr int kWindowVec = kPerSmUnroll * kPerSmThreads;  // 64 KiB: every load of a trip distinct

__device__ __forceinline__ unsigned smid() {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

// out per block: [cycles, ns, smid]; sum: wrapping checksum of everything read. `step` is 0 at
// run time but unknown to the compiler, so the loads cannot be hoisted out of the loop.
template <bool Shared>
__global__ void __launch_bounds__(kPerSmThreads, 1)
    per_sm_kernel(const uint4* __restrict__ window, int iterations, int step, long long* out, unsigned long long* sum) {
  extern __shared__ uint4 tile[];
  if constexpr (Shared) {
    for (int i = threadIdx.x; i < kWindowVec; i += blockDim.x) tile[i] = window[i];
  } else {
    unsigned warm = 0;
    for (int i = threadIdx.x; i < kWindowVec; i += blockDim.x) warm += window[i].x;  // fill L1
    if (warm == 0x5eedU) out[0] = warm;
  }
  __syncthreads();
  long long c0 = 0;
  unsigned long long t0 = 0;
  if (threadIdx.x == 0) {
    c0 = clock64();
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  }
  unsigned a0 = 0, a1 = 0;
#pragma unroll 1
  for (int it = 0; it < iterations; ++it) {
    const int base = threadIdx.x + it * step;
    uint4 v[kPerSmUnroll];
#pragma unroll
    for (int u = 0; u < kPerSmUnroll; ++u) {
      if constexpr (Shared)
        v[u] = tile[base + u * kPerSmThreads];
      else
        v[u] = window[base + u * kPerSmThreads];
    }
#pragma unroll
    for (int u = 0; u < kPerSmUnroll; ++u) {
      a0 += v[u].x + v[u].y;
      a1 += v[u].z + v[u].w;
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    const long long c1 = clock64();
    unsigned long long t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    out[3 * blockIdx.x] = c1 - c0;
    out[3 * blockIdx.x + 1] = static_cast<long long>(t1 - t0);
    out[3 * blockIdx.x + 2] = smid();
  }
  unsigned long long acc = static_cast<unsigned long long>(a0) + a1;
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffU, acc, o);
  if ((threadIdx.x & 31) == 0) atomicAdd(sum, acc);
}

PerSmBandwidth per_sm_bandwidth(bool shared, int iterations, int repeats) {
  if (iterations < 1 || repeats < 1) throw std::invalid_argument("per-SM bandwidth: iterations and repeats must be >= 1");
  const int sms = sms_now();
  gpu::DeviceBuffer<uint4> window(kWindowVec);
  init_words<<<sms, 256>>>(window.data(), kWindowVec);
  CUDA_CHECK_LAUNCH();
  // Expected checksum, folded exactly as the kernel does (32-bit lanes, then 64-bit sums).
  std::vector<uint4> host(kWindowVec);
  CUDA_CHECK(cudaMemcpy(host.data(), window.data(), window.bytes(), cudaMemcpyDeviceToHost));
  unsigned long long per_block = 0;
  for (int t = 0; t < kPerSmThreads; ++t) {
    unsigned a0 = 0, a1 = 0;
    for (int u = 0; u < kPerSmUnroll; ++u) {
      const uint4& v = host[t + u * kPerSmThreads];
      a0 += (v.x + v.y) * static_cast<unsigned>(iterations);
      a1 += (v.z + v.w) * static_cast<unsigned>(iterations);
    }
    per_block += static_cast<unsigned long long>(a0) + a1;
  }
  gpu::DeviceBuffer<long long> out(3 * sms);
  gpu::DeviceBuffer<unsigned long long> sum(1);
  const std::size_t smem = shared ? kWindowVec * sizeof(uint4) : 0;
  auto kernel = shared ? per_sm_kernel<true> : per_sm_kernel<false>;
  if (smem) CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  // The L1 variant asks for the largest L1 carveout; the shared variant for the largest shared.
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, shared ? 100 : 0));
  PerSmBandwidth r;
  const double bytes_per_block = static_cast<double>(kPerSmThreads) * kPerSmUnroll * 16.0 * iterations;
  for (int rep = -1; rep < repeats; ++rep) {  // rep -1: warm-up, not kept
    CUDA_CHECK(cudaMemset(sum.data(), 0, sizeof(unsigned long long)));
    kernel<<<sms, kPerSmThreads, smem>>>(window.data(), iterations, 0, out.data(), sum.data());
    CUDA_CHECK_LAUNCH();
    unsigned long long got = 0;
    CUDA_CHECK(cudaMemcpy(&got, sum.data(), sizeof got, cudaMemcpyDeviceToHost));
    const unsigned long long want = per_block * static_cast<unsigned long long>(sms);
    if (got != want)
      throw std::runtime_error(std::string(shared ? "shared" : "L1") + " bandwidth: checksum " + std::to_string(got) +
                               " != expected " + std::to_string(want));
    std::vector<long long> h(3 * sms);
    CUDA_CHECK(cudaMemcpy(h.data(), out.data(), out.bytes(), cudaMemcpyDeviceToHost));
    // Blocks that shared an SM are combined: bytes add up, the window is the longest.
    std::map<long long, std::pair<double, long long>> by_sm;
    std::vector<double> hz;
    for (int b = 0; b < sms; ++b) {
      auto& e = by_sm[h[3 * b + 2]];
      e.first += bytes_per_block;
      e.second = std::max(e.second, h[3 * b]);
      if (h[3 * b + 1] > 0) hz.push_back(static_cast<double>(h[3 * b]) / static_cast<double>(h[3 * b + 1]) * 1e9);
    }
    std::vector<double> bpc;
    for (const auto& [sm, e] : by_sm) bpc.push_back(e.first / static_cast<double>(e.second));
    if (rep < 0) continue;
    r.bytes_per_clock.push_back(median(bpc));
    r.sm_clock_hz.push_back(hz.empty() ? 0.0 : median(hz));
  }
  return r;
}

}  // namespace

BandwidthResult stream_bandwidth(StreamPattern p, std::size_t elements, const std::vector<LaunchConfig>& candidates,
                                 const gpu::TimingOptions& opt, int search_repeats, gpu::PowerMeter* power,
                                 gpu::PowerReading* power_out) {
  if (elements < 1) throw std::invalid_argument("stream: no elements");
  const int sms = sms_now();
  gpu::DeviceBuffer<double2> a(elements), b(p == StreamPattern::triad ? elements : 1), c(elements);
  gpu::DeviceBuffer<double> sum(p == StreamPattern::read ? sum_slots(elements, sms) : 1);
  gpu::DeviceBuffer<unsigned long long> bad(1);
  init_ab<<<4 * sms, 256>>>(a.data(), p == StreamPattern::triad ? b.data() : nullptr, elements);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
  auto launch = [&](const LaunchConfig& cfg, cudaStream_t s) {
    stream_fn(p, cfg)<<<stream_grid(cfg, elements, sms), cfg.threads, 0, s>>>(a.data(), b.data(), c.data(), elements,
                                                                             sum.data());
  };
  auto fit = [&](const LaunchConfig& cfg) {
    return fit_blocks(stream_fn(p, cfg), cfg.threads, cfg.blocks_per_sm);
  };
  auto before_final = [&] {
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemset(c.data(), 0xff, c.bytes()));  // NaN: every element must be written again
  };
  BandwidthResult r = search_and_time(candidates, 16.0 * elements * arrays_touched(p), launch, fit, opt, search_repeats,
                                      before_final, 3);
  CUDA_CHECK(cudaDeviceSynchronize());
  if (p == StreamPattern::read) {
    const double got = read_checksum(launch, r.config, elements, sms, sum.data());
    const double want = expected_read_sum(elements);
    if (got != want)
      throw std::runtime_error("stream read: checksum " + std::to_string(got) + " != " + std::to_string(want));
  } else {
    CUDA_CHECK(cudaMemset(bad.data(), 0, sizeof(unsigned long long)));
    count_mismatches<<<4 * sms, 256>>>(c.data(), elements, p, bad.data());
    CUDA_CHECK_LAUNCH();
    unsigned long long nbad = 0;
    CUDA_CHECK(cudaMemcpy(&nbad, bad.data(), sizeof nbad, cudaMemcpyDeviceToHost));
    if (nbad)
      throw std::runtime_error("stream " + to_string(p) + ": " + std::to_string(nbad) + " of " +
                               std::to_string(2 * elements) + " written values are wrong");
  }
  if (power && power_out) *power_out = power->measure([&](cudaStream_t s) { launch(r.config, s); });
  return r;
}

BandwidthResult l2_bandwidth(std::size_t buffer_bytes, int passes, const std::vector<LaunchConfig>& candidates,
                             const gpu::TimingOptions& opt, int search_repeats, gpu::PowerMeter* power,
                             gpu::PowerReading* power_out, int final_passes) {
  const std::size_t n = buffer_bytes / sizeof(uint4);
  if (n < 1 || passes < 1 || final_passes < 0) throw std::invalid_argument("l2 bandwidth: empty buffer or no pass");
  const int sms = sms_now();
  gpu::DeviceBuffer<uint4> w(n);
  gpu::DeviceBuffer<unsigned long long> sum(1);
  init_words<<<4 * sms, 256>>>(w.data(), n);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaMemset(sum.data(), 0, sizeof(unsigned long long)));
  long long launches = 0;
  bool counting = false;
  auto launch = [&](const LaunchConfig& cfg, cudaStream_t s) {
    // Layout 2: the grid is `passes` rounds of every chunk; otherwise blocks per SM x SMs.
    const bool eight = cfg.flavor >= 2;  // 8-byte loads: a chunk covers half as many uint4
    const std::size_t chunk = static_cast<std::size_t>(cfg.threads) * cfg.unroll * kL2ChunkRounds / (eight ? 2 : 1);
    const std::size_t row_len = 2 * n / std::max(cfg.unroll, 1);  // layout 3: words per row
    const std::size_t grid = cfg.layout == 2   ? (n + chunk - 1) / chunk * static_cast<std::size_t>(passes)
                             : cfg.layout == 3 ? (row_len + cfg.threads - 1) / cfg.threads * static_cast<std::size_t>(passes)
                                               : static_cast<std::size_t>(cfg.blocks_per_sm) * sms;
    l2_fn(cfg)<<<static_cast<unsigned>(grid), cfg.threads, 0, s>>>(w.data(), n, passes, sum.data());
    if (counting) ++launches;
  };
  auto fit = [&](const LaunchConfig& cfg) {
    if (cfg.layout == 3 && (cfg.unroll < 1 || (2 * n) % static_cast<std::size_t>(cfg.unroll))) return -1;  // rows must tile it
    return fit_blocks(l2_fn(cfg), cfg.threads, cfg.blocks_per_sm);
  };
  auto before_final = [&] {
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemset(sum.data(), 0, sizeof(unsigned long long)));
    counting = true;
    launches = 0;
  };
  BandwidthResult r = search_and_time(candidates, static_cast<double>(n) * 16.0 * passes, launch, fit, opt,
                                      search_repeats, before_final, 1);
  const unsigned long long per_pass = l2check::word_sum(4 * n);  // closed form of sum l2check::word(i), i < 4n
  const auto check = [&] {
    CUDA_CHECK(cudaDeviceSynchronize());
    const unsigned long long want =
        per_pass * static_cast<unsigned long long>(passes) * static_cast<unsigned long long>(launches);
    unsigned long long got = 0;
    CUDA_CHECK(cudaMemcpy(&got, sum.data(), sizeof got, cudaMemcpyDeviceToHost));
    if (got != want)
      throw std::runtime_error("l2 bandwidth: checksum " + std::to_string(got) + " != expected " + std::to_string(want));
  };
  check();
  // The best configuration again with longer launches; the faster of the two counts. (H200:
  // 8 GiB launches gave 9.56 TB/s at 30 MiB against 9.41 for 2 GiB, where the launch's ramp and
  // tail weigh; at 7.5 MiB 10.3 against 11.6: a long L2 stream runs at a lower clock.)
  if (final_passes > 0 && final_passes != passes) {
    const int short_passes = passes;
    passes = final_passes;  // `launch` reads it
    launches = 0;
    CUDA_CHECK(cudaMemset(sum.data(), 0, sizeof(unsigned long long)));
    const gpu::Timing t = gpu::time_kernel([&](cudaStream_t s) { launch(r.config, s); }, opt);
    check();
    const double long_bytes = static_cast<double>(n) * 16.0 * passes;
    if (long_bytes / t.summary.median > r.bytes_per_run / r.timing.summary.median) {
      r.timing = t;
      r.bytes_per_run = long_bytes;
    } else {
      passes = short_passes;
    }
  }
  if (power && power_out) {
    counting = false;  // the checksum is done: these launches are not counted
    *power_out = power->measure([&](cudaStream_t s) { launch(r.config, s); });
  }
  return r;
}

std::vector<LaunchConfig> ramp_candidates(RampTiming timing, bool quick) {
  // Grids over the array (blocks_per_sm 0) suit small sizes, persistent full-occupancy grids
  // (2048 / threads blocks per SM) large ones; warm in-L2 data wants plain loads, cold DRAM data
  // streaming (.cs) or plain ones.
  struct Shape {
    int threads, unroll, bps;  // bps -1: 2048 / threads
  };
  const std::vector<Shape> shapes =
      quick ? std::vector<Shape>{{256, 0, 0}, {256, 1, 0}, {512, 2, 0}, {1024, 2, -1}}
            : std::vector<Shape>{{128, 0, 0}, {256, 0, 0}, {512, 0, 0}, {128, 1, 0}, {256, 1, 0}, {512, 1, 0}, {1024, 1, 0}, {256, 2, 0},
                                 {512, 2, 0}, {256, 4, 0}, {1024, 2, -1}, {512, 4, -1}, {256, 8, -1}};
  const std::vector<int> flavors = timing == RampTiming::cold ? std::vector<int>{0, 2, 3} : std::vector<int>{2, 3};
  std::vector<LaunchConfig> c;
  for (int f : flavors)
    for (const Shape& s : shapes) c.push_back({s.bps < 0 ? 2048 / s.threads : s.bps, s.threads, s.unroll, f, 0});
  // Warm: also each warp's accesses side by side (the validation kernels' row layout).
  if (timing == RampTiming::warm)
    for (int f : flavors)
      for (const Shape& s : shapes)
        if (s.unroll >= 2) c.push_back({s.bps < 0 ? 2048 / s.threads : s.bps, s.threads, s.unroll, f, 1});
  return c;
}

std::vector<RampPoint> stream_ramp(StreamPattern p, const std::vector<std::size_t>& elements, RampTiming timing,
                                   const std::vector<LaunchConfig>& candidates, int repeats, int search_repeats) {
  if (elements.empty() || candidates.empty()) throw std::invalid_argument("ramp: no sizes or no configurations");
  if (repeats < 1 || search_repeats < 1) throw std::invalid_argument("ramp: repeats must be >= 1");
  const std::size_t max_n = *std::max_element(elements.begin(), elements.end());
  if (max_n < 1) throw std::invalid_argument("ramp: no elements");
  const int sms = sms_now();
  const bool reads = p != StreamPattern::write, writes = p != StreamPattern::read;
  gpu::DeviceBuffer<double2> a(reads ? max_n : 1), b(p == StreamPattern::triad ? max_n : 1), c(writes ? max_n : 1);
  gpu::DeviceBuffer<double> sum(p == StreamPattern::read ? sum_slots(max_n, sms) : 1);
  gpu::DeviceBuffer<unsigned long long> bad(1);
  if (reads) {
    init_ab<<<4 * sms, 256>>>(a.data(), p == StreamPattern::triad ? b.data() : nullptr, max_n);
    CUDA_CHECK_LAUNCH();
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<RampPoint> out;
  for (const std::size_t n : elements) {
    if (n < 1 || n > max_n) throw std::invalid_argument("ramp: element count out of range");
    const auto launch = [&](const LaunchConfig& cfg, cudaStream_t s) {
      stream_fn(p, cfg)<<<stream_grid(cfg, n, sms), cfg.threads, 0, s>>>(a.data(), b.data(), c.data(), n, sum.data());
    };
    // Timed as validate times a kernel at this level (kernels/runner.cpp `measure`).
    struct Timed {
      gpu::Timing t;
      int launches = 1;
    };
    // final: the chosen configuration's counted run. Warm, it takes a clock sample after every
    // repeat as validate does (gpu::TimingOptions), so the GPU is kept busy between repeats the
    // same way; the search takes none (its samples took 3 of the ramp's 3.7 s on an H200).
    const auto timed = [&](const LaunchConfig& cfg, int reps, bool final) {
      Timed r;
      gpu::TimingOptions o;
      o.max_retries = 0;
      o.max_cv = 1.0;  // the least time is what counts; noise only makes it larger
      o.clock_samples = final && timing == RampTiming::warm ? -1 : 0;
      if (timing == RampTiming::cold) {
        o.warmup = 1;
        o.repeats = reps;
        o.flush_l2 = true;
        r.t = gpu::time_kernel([&](cudaStream_t s) { launch(cfg, s); }, o);
        return r;
      }
      gpu::TimingOptions one = o;
      one.warmup = 2;
      one.repeats = 3;
      const double single = gpu::time_kernel([&](cudaStream_t s) { launch(cfg, s); }, one).summary.median;
      const int k = std::clamp(static_cast<int>(std::ceil(50e-6 / single)), 1, 64);
      o.warmup = 1;
      o.repeats = reps;
      r.t = gpu::time_kernel([&](cudaStream_t s) {
        for (int i = 0; i < k; ++i) launch(cfg, s);
      }, o);
      for (double& x : r.t.seconds) x /= k;
      r.t.summary = summarize(r.t.seconds);
      r.launches = k;
      return r;
    };
    RampPoint pt;
    pt.working_set_bytes = 16.0 * static_cast<double>(n) * arrays_touched(p);
    double best = -1;
    std::map<std::string, bool> seen;
    for (LaunchConfig cfg : candidates) {
      cfg.blocks_per_sm = fit_blocks(stream_fn(p, cfg), cfg.threads, cfg.blocks_per_sm);
      if (cfg.blocks_per_sm < 0 || seen[cfg.str()]) continue;
      seen[cfg.str()] = true;
      ++pt.configs_tried;
      const Timed t = timed(cfg, search_repeats, false);
      if (best < 0 || t.t.summary.median < best) {
        best = t.t.summary.median;
        pt.config = cfg;
      }
    }
    if (best < 0) throw std::runtime_error("ramp: no launch configuration fits this device");
    const Timed final_t = timed(pt.config, repeats, true);
    pt.min_s = final_t.t.summary.min;
    pt.median_s = final_t.t.summary.median;
    pt.cv = final_t.t.summary.cv;
    pt.launches = final_t.launches;
    // Its output, poisoned first, from one more launch of the chosen configuration.
    CUDA_CHECK(cudaDeviceSynchronize());
    if (!writes) {
      const double got = read_checksum(launch, pt.config, n, sms, sum.data());
      if (got != expected_read_sum(n))
        throw std::runtime_error("ramp read: checksum " + std::to_string(got) + " != " +
                                 std::to_string(expected_read_sum(n)));
    } else {
      CUDA_CHECK(cudaMemset(c.data(), 0xff, n * sizeof(double2)));  // NaN
      launch(pt.config, nullptr);
      CUDA_CHECK_LAUNCH();
      CUDA_CHECK(cudaMemset(bad.data(), 0, sizeof(unsigned long long)));
      count_mismatches<<<4 * sms, 256>>>(c.data(), n, p, bad.data());
      CUDA_CHECK_LAUNCH();
      unsigned long long nbad = 0;
      CUDA_CHECK(cudaMemcpy(&nbad, bad.data(), sizeof nbad, cudaMemcpyDeviceToHost));
      if (nbad)
        throw std::runtime_error("ramp " + to_string(p) + ": " + std::to_string(nbad) + " of " + std::to_string(2 * n) +
                                 " written values are wrong");
    }
    out.push_back(pt);
  }
  return out;
}

PerSmBandwidth l1_bandwidth_per_sm(int iterations, int repeats) { return per_sm_bandwidth(false, iterations, repeats); }
PerSmBandwidth shared_bandwidth_per_sm(int iterations, int repeats) { return per_sm_bandwidth(true, iterations, repeats); }

}  // namespace ceiling::probes::mem
