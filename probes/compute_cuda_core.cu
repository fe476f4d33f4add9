// Probe "cuda-core": peak FMA rate of the CUDA cores for FP64 (DFMA), FP32 (FFMA), FP16x2
// (HFMA2), BF16x2 (HFMA2.BF16) and INT32 (IMAD). Every thread runs CHAINS independent FMA chains
// (enough to cover the pipeline latency), the loop unrolled so loop overhead takes < 2% of the
// issue slots; all SMs busy. The final values are checked against their closed form.
// Also, for FP64 and FP32, the outer-product rate: every thread holds a TM x TN block of
// accumulators and multiplies a column of TM values by a row of TN values per step (a GEMM's
// register-blocked inner loop, no memory traffic). Each FMA then takes two operands fresh from the
// register file (one operand and the accumulator) where the chains above take one, and on sm_90
// the DFMA pipe does not stay full that way (H200: 29.9 of 33.3 TFLOP/s). The best of a few
// shapes, orders and warp counts is the GEMM kind's CUDA-core ceiling
// (compute.cuda_core_outer_product.<p>). calibrate --power reads the board power under each peak.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mma_common.cuh"
#include "probe_util.hpp"

namespace ceiling::probes::compute {
namespace {

constexpr int kChains = 8;
constexpr int kUnroll = 32;
constexpr int kThreads = 512;
constexpr int kBlocksPerSm = 4;
constexpr int kGemmLoopB = 2048;  // gemm-loop probe: B's offset in its input (values)

// Per type: register type, one FMA, start value per (thread, chain), how a value is written out.
// Chains run x <- x*a + b. FP32/FP64/INT32: a = 1, so x_n = x_0 + n*b (exact: small dyadic b).
// FP16/BF16: a = -1, so x alternates x_0, b - x_0 (exact in 11/8-bit mantissas).
struct Fp64 {
  using T = double;
  static constexpr const char* name = "fp64";
  static constexpr Precision precision = Precision::fp64;
  static constexpr int values = 1, flop_per_fma = 2;
  static constexpr double a = 1.0, b = 1.0 / 16;
  __device__ static T make(double v, double) { return v; }
  __device__ static T fma(T x, T a_, T b_) { return ::fma(x, a_, b_); }
  __device__ static void store(double* o, T x) { o[0] = x; }
};
struct Fp32 {
  using T = float;
  static constexpr const char* name = "fp32";
  static constexpr Precision precision = Precision::fp32;
  static constexpr int values = 1, flop_per_fma = 2;
  static constexpr double a = 1.0, b = 1.0 / 16;
  __device__ static T make(double v, double) { return static_cast<float>(v); }
  __device__ static T fma(T x, T a_, T b_) { return fmaf(x, a_, b_); }
  __device__ static void store(double* o, T x) { o[0] = x; }
};
struct Fp16x2 {
  using T = __half2;
  static constexpr const char* name = "fp16";
  static constexpr Precision precision = Precision::fp16;
  static constexpr int values = 2, flop_per_fma = 4;
  static constexpr double a = -1.0, b = 0.5;
  __device__ static T make(double lo, double hi) { return __floats2half2_rn(float(lo), float(hi)); }
  __device__ static T fma(T x, T a_, T b_) { return __hfma2(x, a_, b_); }
  __device__ static void store(double* o, T x) { o[0] = __low2float(x); o[1] = __high2float(x); }
};
struct Bf16x2 {
  using T = __nv_bfloat162;
  static constexpr const char* name = "bf16";
  static constexpr Precision precision = Precision::bf16;
  static constexpr int values = 2, flop_per_fma = 4;
  static constexpr double a = -1.0, b = 0.5;
  __device__ static T make(double lo, double hi) { return __floats2bfloat162_rn(float(lo), float(hi)); }
  __device__ static T fma(T x, T a_, T b_) { return __hfma2(x, a_, b_); }
  __device__ static void store(double* o, T x) { o[0] = __low2float(x); o[1] = __high2float(x); }
};
struct Int32 {
  using T = int;
  static constexpr const char* name = "int32";
  static constexpr Precision precision = Precision::int32;
  static constexpr int values = 1, flop_per_fma = 2;
  static constexpr double a = 1.0, b = 3.0;
  __device__ static T make(double v, double) { return static_cast<int>(v); }
  __device__ static T fma(T x, T a_, T b_) { return x * a_ + b_; }
  __device__ static void store(double* o, T x) { o[0] = x; }
};

// Start values: small, exact in every type, different per thread and chain.
__host__ __device__ inline double start_value(long long tid, int chain, int half) {
  return static_cast<double>((tid + chain) % 8 + half);
}

template <class Tr>
__global__ void __launch_bounds__(kThreads) fma_chains_kernel(double a_in, double b_in, int outer,
                                                               double* out, long long* clocks) {
  const long long t0 = clock64();
  const long long tid = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const typename Tr::T a = Tr::make(a_in, a_in), b = Tr::make(b_in, b_in);
  typename Tr::T x[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) x[c] = Tr::make(start_value(tid, c, 0), start_value(tid, c, 1));
  for (int o = 0; o < outer; ++o) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int c = 0; c < kChains; ++c) x[c] = Tr::fma(x[c], a, b);
  }
#pragma unroll
  for (int c = 0; c < kChains; ++c) Tr::store(out + (tid * kChains + c) * 2, x[c]);
  if (threadIdx.x == 0) {
    clocks[2 * blockIdx.x] = t0;
    clocks[2 * blockIdx.x + 1] = clock64();
  }
}

// One thread: acc[i][j] += fa[i] * fb[j] for `iters` steps, i over TM, j over TN (serpentine: odd i
// walk j backwards, so consecutive FMAs share an operand at the turn). fa, fb: small integers read
// from `in` (the compiler cannot fold them), so every accumulator ends at iters * fa[i] * fb[j]
// exactly; all are written out and checked.
template <class T, int TM, int TN, int MAXT, bool SERP>
__global__ void __launch_bounds__(MAXT, 1) outer_product_kernel(const T* __restrict__ in, int iters, T* out) {
  const int t = static_cast<int>(threadIdx.x);
  T acc[TM][TN], fa[TM], fb[TN];
#pragma unroll
  for (int i = 0; i < TM; ++i) fa[i] = in[(t + i) % 64];
#pragma unroll
  for (int j = 0; j < TN; ++j) fb[j] = in[64 + (t + 3 * j) % 64];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0;
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int jj = 0; jj < TN; ++jj) {
        const int j = (SERP && (i & 1)) ? TN - 1 - jj : jj;
        acc[i][j] = fma(fa[i], fb[j], acc[i][j]);
      }
  }
  T* o = out + (static_cast<size_t>(blockIdx.x) * blockDim.x + t) * TM * TN;
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) o[i * TN + j] = acc[i][j];
}

// The operands: value v at index v (64 for fa, 64 for fb): 1..8, exact products and sums.
inline double outer_operand(int index) { return 1 + index % 8; }

struct OuterConfig {
  int tm, tn, max_threads;
  bool serpentine;
  void (*launch)(const void* in, int iters, void* out, int blocks, int threads, cudaStream_t s);
};

template <class T, int TM, int TN, int MAXT, bool SERP>
OuterConfig outer_config() {
  return {TM, TN, MAXT, SERP, [](const void* in, int iters, void* out, int blocks, int threads, cudaStream_t s) {
            outer_product_kernel<T, TM, TN, MAXT, SERP>
                <<<blocks, threads, 0, s>>>(static_cast<const T*>(in), iters, static_cast<T*>(out));
          }};
}

// Shapes and orders tried (H200, FP64: 8x8 serpentine at 8 warps 29.8, 4x8 serpentine at 16 warps
// 29.9, 4x4 29.1, 1x8 29.5 TFLOP/s; row order 1-5% below serpentine).
template <class T>
std::vector<OuterConfig> outer_configs() {
  return {outer_config<T, 8, 8, 256, true>(), outer_config<T, 8, 8, 256, false>(), outer_config<T, 4, 8, 512, true>(),
          outer_config<T, 4, 4, 1024, true>(), outer_config<T, 1, 8, 1024, false>()};
}

// The fastest of a probe's checked configurations (outer product, GEMM loop).
struct BestConfig {
  double rate = 0, flop = 0;
  std::optional<gpu::Timing> timing;
  std::string note;
};

// Times one checked configuration (one warm-up, 7 repeats; 3 with --quick), writes its rate into `row`
// and keeps it in `best` (with note()) when it is the fastest so far.
void time_config(const ProbeContext& ctx, const std::function<void(cudaStream_t)>& launch, double flop,
                 nlohmann::json& row, BestConfig& best, const std::function<std::string()>& note) {
  gpu::TimingOptions opt;
  opt.warmup = 1;
  opt.repeats = ctx.quick ? 3 : 7;
  const gpu::Timing t = gpu::time_kernel(launch, opt);
  const double rate = flop / t.summary.median;
  row["flop_per_s"] = rate;
  if (rate > best.rate) {
    best.rate = rate;
    best.flop = flop;
    best.timing = t;
    best.note = note();
  }
}

template <class T>
void run_outer(const ProbeContext& ctx, const char* name, ProbeOutput& out, nlohmann::json& details) {
  std::vector<T> host_in(128);
  for (int i = 0; i < 128; ++i) host_in[i] = static_cast<T>(outer_operand(i));
  gpu::DeviceBuffer<T> din(128);
  CUDA_CHECK(cudaMemcpy(din.data(), host_in.data(), din.bytes(), cudaMemcpyHostToDevice));
  const int blocks = ctx.sm_count;
  gpu::DeviceBuffer<T> dout(static_cast<size_t>(blocks) * 1024 * 64);
  nlohmann::json rows = nlohmann::json::array();
  BestConfig best;
  for (const OuterConfig& c : outer_configs<T>()) {
    const int per_thread = c.tm * c.tn;
    const int iters = (ctx.quick ? 2048 : 8192) * 64 / per_thread;
    for (int warps = 4; warps <= c.max_threads / 32; warps *= 2) {
      if (ctx.quick && warps < c.max_threads / 64) continue;  // --quick: the two largest warp counts
      const int threads = 32 * warps;
      nlohmann::json row{{"tile", std::to_string(c.tm) + "x" + std::to_string(c.tn)}, {"serpentine", c.serpentine},
                         {"warps_per_sm", warps}};
      // Check first: poisoned output, every accumulator of every thread against iters * a * b.
      CUDA_CHECK(cudaMemset(dout.data(), 0xFF, dout.bytes()));
      c.launch(din.data(), iters, dout.data(), blocks, threads, nullptr);
      CUDA_CHECK_LAUNCH();
      std::vector<T> h(static_cast<size_t>(blocks) * threads * per_thread);
      CUDA_CHECK(cudaMemcpy(h.data(), dout.data(), h.size() * sizeof(T), cudaMemcpyDeviceToHost));
      long long bad = 0;
      for (long long tid = 0; tid < static_cast<long long>(blocks) * threads; ++tid) {
        const int t = static_cast<int>(tid % threads);
        for (int i = 0; i < c.tm; ++i)
          for (int j = 0; j < c.tn; ++j) {
            const double want = iters * outer_operand((t + i) % 64) * outer_operand(64 + (t + 3 * j) % 64);
            if (static_cast<double>(h[static_cast<size_t>(tid) * per_thread + i * c.tn + j]) != want) ++bad;
          }
      }
      if (bad) {
        row["check"] = "failed: " + std::to_string(bad) + " accumulators differ from iters * a * b";
        rows.push_back(row);
        continue;
      }
      row["check"] = "passed";
      time_config(
          ctx, [&c, &din, &dout, iters, blocks, threads](cudaStream_t s) { c.launch(din.data(), iters, dout.data(), blocks, threads, s); },
          2.0 * per_thread * iters * static_cast<double>(blocks) * threads, row, best, [&] {
            return std::to_string(c.tm) + "x" + std::to_string(c.tn) + " accumulators per thread" +
                   (c.serpentine ? " (serpentine order)" : "") + ", " + std::to_string(warps) + " warps per SM, " +
                   std::to_string(blocks) + " SMs; best of the outer-product configurations";
          });
      rows.push_back(row);
    }
  }
  details.push_back({{"outer_product", name}, {"configurations", rows}});
  if (best.timing)
    out.fields.push_back({std::string("compute.cuda_core_outer_product.") + name, Dimension::flop_per_second,
                          probes::measured_rate(*best.timing, best.flop, "cuda-core", best.note)});
}

// Probe "gemm-loop": the outer product as a GEMM's inner loop runs it, its operands loaded from
// shared memory every k step (two FP64 values per 16-byte load, the lane layout of the DFMA GEMM:
// lanes i and i^1 share A, i and i^2 share B, no bank conflicts), with no global traffic and no
// barrier. Every register-blocked GEMM loads TM + TN values per TM x TN FMAs; the register file
// holds 8x8 (double-buffered) or 12x8 / 8x12 at most, so the best of these is a ceiling for any
// CUDA-core GEMM (the register-only outer product above is not: it omits the loads). The block's
// BK k rows of A (BK x 4TM) and B (BK x 8TN) are small integers; every accumulator ends at
// iters / BK * sum_l A[l][r] B[l][c] exactly, and all are checked.
__device__ __forceinline__ void lds_f64x2(double& x, double& y, const double* p) {
  asm volatile("ld.shared.v2.f64 {%0, %1}, [%2];" : "=d"(x), "=d"(y) : "r"(static_cast<uint32_t>(__cvta_generic_to_shared(p))));
}

template <int TM, int TN, bool DBUF, int BK>
__global__ void __launch_bounds__(256, 1) gemm_loop_kernel(const double* __restrict__ in, int iters, double* out) {
  constexpr int AW = 4 * TM, BW = 8 * TN;
  __shared__ __align__(16) double As[BK * AW], Bs[BK * BW];
  for (int i = static_cast<int>(threadIdx.x); i < BK * AW; i += blockDim.x) As[i] = in[i];
  for (int i = static_cast<int>(threadIdx.x); i < BK * BW; i += blockDim.x) Bs[i] = in[kGemmLoopB + i];
  __syncthreads();
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int tm = ((lane >> 1) & 1) | ((lane >> 3) & 2);  // rows 2 tm + 8q + {0, 1}
  const int tn = (lane & 1) | ((lane >> 1) & 6);         // columns 2 tn + 16q + {0, 1}
  double acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0;
  constexpr int NB = DBUF ? 2 : 1;
  double fa[NB][TM], fb[NB][TN];
  auto load = [&](int l, int set) {
#pragma unroll
    for (int q = 0; q < TM / 2; ++q) lds_f64x2(fa[set][2 * q], fa[set][2 * q + 1], As + l * AW + 2 * tm + 8 * q);
#pragma unroll
    for (int q = 0; q < TN / 2; ++q) lds_f64x2(fb[set][2 * q], fb[set][2 * q + 1], Bs + l * BW + 2 * tn + 16 * q);
  };
  if (DBUF) load(0, 0);
  for (int o = 0; o < iters / BK; ++o) {
#pragma unroll
    for (int l = 0; l < BK; ++l) {
      int set = 0;
      if (DBUF) {  // step l + 1's fragments load while step l computes
        load((l + 1) % BK, (l + 1) & 1);
        set = l & 1;
      } else {
        load(l, 0);
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int jj = 0; jj < TN; ++jj) {
          const int j = (i & 1) ? TN - 1 - jj : jj;  // serpentine
          acc[i][j] = fma(fa[set][i], fb[set][j], acc[i][j]);
        }
    }
  }
  double* o = out + (static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x) * TM * TN;
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) o[i * TN + j] = acc[i][j];
}

struct GemmLoopConfig {
  int tm, tn, bk;
  bool dbuf;
  void (*launch)(const double* in, int iters, double* out, int blocks, int threads, cudaStream_t s);
};

template <int TM, int TN, bool DBUF, int BK>
GemmLoopConfig gemm_loop_config() {
  static_assert(BK % 2 == 0 && 4 * TM * BK <= kGemmLoopB && 8 * TN * BK <= kGemmLoopB, "operands fit the input");
  return {TM, TN, BK, DBUF, [](const double* in, int iters, double* out, int blocks, int threads, cudaStream_t s) {
            gemm_loop_kernel<TM, TN, DBUF, BK><<<blocks, threads, 0, s>>>(in, iters, out);
          }};
}

// A: BK x 4TM at 0, B: BK x 8TN at kGemmLoopB, values 1..4.
inline double gemm_loop_a(int l, int r) { return 1 + (3 * l + r) % 4; }
inline double gemm_loop_b(int l, int c) { return 1 + (l + 2 * c) % 4; }

// H200 (2026-11-28, scratch run, GPU-8590ff01): register-only outer product 30.1-30.2 TFLOP/s; fed
// from shared memory 8x8 double-buffered 28.40 at 8 warps (24.05 at 4), single-buffered 28.14, 12x8
// 28.41, 8x12 27.52 (both spill a few bytes at 254 registers), 8x4 / 4x8 27.35 / 26.65.
ProbeOutput run_gemm_loop(const ProbeContext& ctx) {
  ProbeOutput out;
  const std::vector<GemmLoopConfig> configs{gemm_loop_config<8, 8, true, 32>(), gemm_loop_config<8, 8, false, 32>(),
                                            gemm_loop_config<12, 8, false, 16>(), gemm_loop_config<8, 12, false, 16>()};
  std::vector<double> host_in(2 * kGemmLoopB, 0.0);
  gpu::DeviceBuffer<double> din(2 * kGemmLoopB);
  const int blocks = ctx.sm_count;
  gpu::DeviceBuffer<double> dout(static_cast<size_t>(blocks) * 256 * 96);
  nlohmann::json rows = nlohmann::json::array();
  BestConfig best;
  for (const GemmLoopConfig& c : configs) {
    // This configuration's operands: A row-major BK x 4TM, B BK x 8TN.
    const int aw = 4 * c.tm, bw = 8 * c.tn;
    std::fill(host_in.begin(), host_in.end(), 0.0);
    for (int l = 0; l < c.bk; ++l) {
      for (int r = 0; r < aw; ++r) host_in[static_cast<size_t>(l * aw + r)] = gemm_loop_a(l, r);
      for (int col = 0; col < bw; ++col) host_in[static_cast<size_t>(kGemmLoopB + l * bw + col)] = gemm_loop_b(l, col);
    }
    CUDA_CHECK(cudaMemcpy(din.data(), host_in.data(), din.bytes(), cudaMemcpyHostToDevice));
    const int per_thread = c.tm * c.tn;
    const int iters = (ctx.quick ? 4096 : 16384) * 64 / per_thread / c.bk * c.bk;
    for (int warps : {4, 8}) {
      if (ctx.quick && warps != 8) continue;
      const int threads = 32 * warps;
      nlohmann::json row{{"tile", std::to_string(c.tm) + "x" + std::to_string(c.tn)}, {"k_rows", c.bk},
                         {"double_buffered", c.dbuf}, {"warps_per_sm", warps}};
      CUDA_CHECK(cudaMemset(dout.data(), 0xFF, dout.bytes()));  // NaN poison
      c.launch(din.data(), iters, dout.data(), blocks, threads, nullptr);
      CUDA_CHECK_LAUNCH();
      std::vector<double> h(static_cast<size_t>(blocks) * threads * per_thread);
      CUDA_CHECK(cudaMemcpy(h.data(), dout.data(), h.size() * sizeof(double), cudaMemcpyDeviceToHost));
      long long bad = 0;
      for (long long tid = 0; tid < static_cast<long long>(blocks) * threads; ++tid) {
        const int lane = static_cast<int>(tid % 32);
        const int tm = ((lane >> 1) & 1) | ((lane >> 3) & 2), tn = (lane & 1) | ((lane >> 1) & 6);
        for (int i = 0; i < c.tm; ++i)
          for (int j = 0; j < c.tn; ++j) {
            const int r = 2 * tm + 8 * (i / 2) + i % 2, col = 2 * tn + 16 * (j / 2) + j % 2;
            double sum = 0;
            for (int l = 0; l < c.bk; ++l) sum += gemm_loop_a(l, r) * gemm_loop_b(l, col);
            if (h[static_cast<size_t>(tid) * per_thread + i * c.tn + j] != sum * (iters / c.bk)) ++bad;
          }
      }
      if (bad) {
        row["check"] = "failed: " + std::to_string(bad) + " accumulators differ from iters / BK * sum_l a b";
        rows.push_back(row);
        continue;
      }
      row["check"] = "passed";
      const double* in = din.data();
      double* o = dout.data();
      time_config(
          ctx, [&c, in, o, iters, blocks, threads](cudaStream_t s) { c.launch(in, iters, o, blocks, threads, s); },
          2.0 * per_thread * iters * static_cast<double>(blocks) * threads, row, best, [&] {
            return std::to_string(c.tm) + "x" + std::to_string(c.tn) + " accumulators per thread, operands from shared " +
                   "memory (" + std::to_string(c.tm + c.tn) + " values per k step, " +
                   (c.dbuf ? "double-buffered" : "single-buffered") + ", " + std::to_string(c.bk) + " k rows), " +
                   std::to_string(warps) + " warps per SM, " + std::to_string(blocks) +
                   " SMs; best of the GEMM-loop configurations";
          });
      rows.push_back(row);
    }
  }
  out.details["configurations"] = rows;
  if (best.timing)
    out.fields.push_back({"compute.cuda_core_gemm_loop.fp64", Dimension::flop_per_second,
                          probes::measured_rate(*best.timing, best.flop, "gemm-loop", best.note)});
  return out;
}

template <class Tr>
double expected(long long tid, int chain, int half, long long steps) {
  const double x0 = start_value(tid, chain, half);
  if (Tr::a < 0) return (steps % 2) ? Tr::b - x0 : x0;
  if constexpr (Tr::precision == Precision::int32)  // wraps like the 32-bit register
    return static_cast<int32_t>(static_cast<uint32_t>(static_cast<int64_t>(x0)) +
                                static_cast<uint32_t>(steps * static_cast<int64_t>(Tr::b)));
  return x0 + static_cast<double>(steps) * Tr::b;
}

template <class Tr>
void run_one(const ProbeContext& ctx, int lanes_per_sm, ProbeOutput& out, nlohmann::json& details) {
  const int blocks = ctx.sm_count * kBlocksPerSm;
  const long long threads = static_cast<long long>(blocks) * kThreads;
  const int outer = ctx.quick ? 128 : 512;
  const long long steps = static_cast<long long>(outer) * kUnroll;
  gpu::DeviceBuffer<double> dout(static_cast<size_t>(threads) * kChains * 2);
  gpu::DeviceBuffer<long long> dclk(2 * static_cast<size_t>(blocks));
  // Check first: one launch, every value of every chain against its closed form.
  CUDA_CHECK(cudaMemset(dout.data(), 0xFF, dout.bytes()));  // NaN poison: unwritten values fail
  fma_chains_kernel<Tr><<<blocks, kThreads>>>(Tr::a, Tr::b, outer, dout.data(), dclk.data());
  CUDA_CHECK_LAUNCH();
  std::vector<double> h(dout.size());
  CUDA_CHECK(cudaMemcpy(h.data(), dout.data(), dout.bytes(), cudaMemcpyDeviceToHost));
  long long bad = 0;
  for (long long t = 0; t < threads; ++t)
    for (int c = 0; c < kChains; ++c)
      for (int v = 0; v < Tr::values; ++v)
        if (h[(t * kChains + c) * 2 + v] != expected<Tr>(t, c, v, steps)) ++bad;
  nlohmann::json d{{"precision", Tr::name}, {"lanes_per_sm", lanes_per_sm}, {"blocks", blocks},
                   {"threads_per_block", kThreads}, {"chains", kChains}, {"steps", steps}};
  if (bad) {
    d["check"] = "failed: " + std::to_string(bad) + " values differ from the closed form";
    details.push_back(d);
    return;
  }
  d["check"] = "passed";
  gpu::TimingOptions opt;
  opt.warmup = 2;
  opt.repeats = ctx.quick ? 5 : 15;
  const gpu::Timing t = gpu::time_kernel(
      [&](cudaStream_t s) { fma_chains_kernel<Tr><<<blocks, kThreads, 0, s>>>(Tr::a, Tr::b, outer, dout.data(), dclk.data()); },
      opt);
  const double flop = static_cast<double>(threads) * kChains * steps * Tr::flop_per_fma;
  MeasuredValue m = probes::measured_rate(t, flop, "cuda-core",
                                          std::to_string(blocks) + " blocks x " + std::to_string(kThreads) +
                                              " threads x " + std::to_string(kChains) + " chains");
  // Blocks run in waves here (registers limit residency), so a block's clock64 span is not the
  // run's: the clock is time_kernel's sample right after each repeat (no tensor-core load, so it
  // stays where it ran). The spans are kept in the details as a cross-check.
  std::vector<long long> clk(dclk.size());
  CUDA_CHECK(cudaMemcpy(clk.data(), dclk.data(), dclk.bytes(), cudaMemcpyDeviceToHost));
  const double run_clock_hz = t.sm_clock_hz;
  d["block_cycles_median"] = median(block_cycles(clk, blocks));
  const double flops = m.median;
  const double fma_per_clk_sm = flops / (2.0 * ctx.sm_count * run_clock_hz);  // packed: counts lanes x2
  const double analytic = static_cast<double>(ctx.sm_count) * lanes_per_sm * Tr::flop_per_fma * run_clock_hz;
  d["flop_per_s"] = flops;
  d["sm_clock_hz"] = run_clock_hz;
  d["fma_per_clock_per_sm"] = fma_per_clk_sm;  // scalar FMAs (a packed HFMA2 counts 2)
  d["analytic_flop_per_s"] = analytic;
  d["fraction_of_analytic"] = flops / analytic;
  d["time_s"] = t.summary.median;
  details.push_back(d);
  out.fields.push_back({std::string("compute.cuda_core.") + Tr::name, Dimension::flop_per_second, m});
  // calibrate --power: the same launch back to back under the NVML energy counter.
  if (ctx.power) {
    auto pw = probes::measure_power(
        ctx, "cuda-core",
        [&](cudaStream_t s) { fma_chains_kernel<Tr><<<blocks, kThreads, 0, s>>>(Tr::a, Tr::b, outer, dout.data(), dclk.data()); },
        flop, "FLOP");
    if (pw.value) out.fields.push_back({std::string("compute.cuda_core_power.") + Tr::name, Dimension::watts, *pw.value});
    pw.details["precision"] = Tr::name;
    details.back()["power"] = pw.details;
  }
}

ProbeOutput run_cuda_core(const ProbeContext& ctx) {
  ProbeOutput out;
  nlohmann::json details = nlohmann::json::array();
  // FMA lanes per SM (GH100/GA100 whitepapers): FP64 64 (A100 32), FP32 128 (A100 64), HFMA2
  // 128 (BF16x2 on A100 64), INT32 64. Only the analytic comparison uses them.
  const bool hopper = ctx.cc_major >= 9;
  run_one<Fp64>(ctx, hopper ? 64 : 32, out, details);
  run_one<Fp32>(ctx, hopper ? 128 : 64, out, details);
  run_one<Fp16x2>(ctx, 128, out, details);
  run_one<Bf16x2>(ctx, hopper ? 128 : 64, out, details);
  run_one<Int32>(ctx, 64, out, details);
  run_outer<double>(ctx, "fp64", out, details);
  run_outer<float>(ctx, "fp32", out, details);
  out.details["units"] = details;
  return out;
}

const Registrar reg{ProbeInfo{
    "cuda-core", "compute",
    "CUDA-core FMA peak: FP64 DFMA, FP32 FFMA, FP16x2/BF16x2 HFMA2, INT32 IMAD; FP64/FP32 outer-product rate "
    "(GEMM's inner loop); closed-form checks",
    {{"precision", {"fp64", "fp32", "fp16", "bf16", "int32"}},
     {"outer_product", {"8x8", "8x8 serpentine", "4x8 serpentine", "4x4 serpentine", "1x8"}}},
    {"compute.cuda_core.fp64", "compute.cuda_core.fp32", "compute.cuda_core.fp16",
     "compute.cuda_core.bf16", "compute.cuda_core.int32", "compute.cuda_core_outer_product.fp64",
     "compute.cuda_core_outer_product.fp32"},
    80, true, run_cuda_core}};

const Registrar reg_gemm_loop{ProbeInfo{
    "gemm-loop", "compute",
    "FP64 GEMM inner loop on the CUDA cores: the outer product with its operands loaded from shared memory every "
    "k step (8x8 double-buffered, 8x8, 12x8, 8x12 accumulators per thread; 4 and 8 warps per SM); the GEMM kind's "
    "CUDA-core ceiling; closed-form checks",
    {{"tile", {"8x8 double-buffered", "8x8", "12x8", "8x12"}}, {"warps_per_sm", {"4", "8"}}},
    {"compute.cuda_core_gemm_loop.fp64"},
    80, true, run_gemm_loop}};

}  // namespace
}  // namespace ceiling::probes::compute
