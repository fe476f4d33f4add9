// Probe "cuda-core": peak FMA rate of the CUDA cores for FP64 (DFMA), FP32 (FFMA), FP16x2
// (HFMA2), BF16x2 (HFMA2.BF16) and INT32 (IMAD). Every thread runs CHAINS independent FMA chains
// (enough to cover the pipeline latency), the loop unrolled so loop overhead takes < 2% of the
// issue slots; all SMs busy. The final values are checked against their closed form.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
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
  out.details["units"] = details;
  return out;
}

const Registrar reg{ProbeInfo{
    "cuda-core", "compute",
    "CUDA-core FMA peak: FP64 DFMA, FP32 FFMA, FP16x2/BF16x2 HFMA2, INT32 IMAD; closed-form check",
    {{"precision", {"fp64", "fp32", "fp16", "bf16", "int32"}}},
    {"compute.cuda_core.fp64", "compute.cuda_core.fp32", "compute.cuda_core.fp16",
     "compute.cuda_core.bf16", "compute.cuda_core.int32"},
    80, true, run_cuda_core}};

}  // namespace
}  // namespace ceiling::probes::compute
