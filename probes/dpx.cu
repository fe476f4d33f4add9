// Probe "dpx": the DPX functions of the CUDA math API (issue 14; Luo et al. §III-D and §IV-E,
// Figs. 6-7): hardware on sm_90, emulated before it. Per function (probes/host/dpx.hpp):
// - correctness first: 4096 random operand triples (1 in 4 an edge: 0, +-1, the 32- and 16-bit
//   limits per lane) against the CPU reference; a mismatch fails the function, it gets no figures;
// - latency: one thread, a dependent chain (each result is the next call's first operand),
//   clock64 around it: cycles per call;
// - throughput per SM: one block of 1024 threads per SM on every SM (shared memory keeps a second
//   block off), 8 independent chains per thread, per-SM clock64: calls / cycles, median over SMs
//   and repeats;
// - by blocks: 1, 2, 4, ... blocks up to twice the SMs (plus the SM count and one more), timed
//   with events: calls per clock per SM used (Luo et al.: the unit is per SM when this stays flat
//   up to the SM count and drops just past it).
// The chains end where the CPU replay says (latency: the whole chain; throughput: every 613th
// thread), else the function fails. Against folding: operands come from memory and rotate over 8
// registers, every result goes through an empty `asm volatile("" : "+r"(x))` (no instruction,
// but the compiler can no longer see the value, so max(max(x, b), b) is not simplified across
// calls), results and the __vibmax predicates are stored. Expected SASS (dpx::expected_sass):
// sm_90 VIMNMX3 / VIADDMNMX / VIMNMX.RELU, sm_80 IMNMX (+IADD3, PRMT per 16-bit lane); the
// __vibmax figures include the use of the predicate (one add per call), without which the
// compiler drops it (the paper's A100 note).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "host/dpx.hpp"
#include "probe_util.hpp"
#include "registry.hpp"

namespace ceiling::probes {
namespace {

using dpx::Fn;

constexpr int kThreads = 1024;
constexpr int kChains = 8;
constexpr int kUnroll = 32;  // a multiple of dpx::kOperands: step k of the unrolled body is step k of the chain mod 8
constexpr int kTable = 4096; // operand words the threads draw from
constexpr int kCheckInputs = 4096;
constexpr int kCheckStride = 4099;  // the throughput kernel's threads replayed on the CPU (every 613th: 0.5 s of CPU per calibration)

static_assert(kUnroll % dpx::kOperands == 0);

// dpx::operand_b / operand_c for the kernels (the host header is plain C++).
__host__ __device__ constexpr int op_b(int k) { return k % dpx::kOperands; }
__host__ __device__ constexpr int op_c(int k) { return (k + 3) % dpx::kOperands; }
static_assert(op_b(5) == dpx::operand_b(5) && op_c(5) == dpx::operand_c(5) && op_c(13) == dpx::operand_c(13));

template <Fn F>
__device__ __forceinline__ uint32_t call(uint32_t a, uint32_t b, uint32_t c, uint32_t& side) {
  const int sa = static_cast<int>(a), sb = static_cast<int>(b), sc = static_cast<int>(c);
  if constexpr (F == Fn::vimax3_s32) return static_cast<uint32_t>(__vimax3_s32(sa, sb, sc));
  else if constexpr (F == Fn::vimin3_s32) return static_cast<uint32_t>(__vimin3_s32(sa, sb, sc));
  else if constexpr (F == Fn::vimax3_s16x2) return __vimax3_s16x2(a, b, c);
  else if constexpr (F == Fn::vimin3_s16x2) return __vimin3_s16x2(a, b, c);
  else if constexpr (F == Fn::viaddmax_s32) return static_cast<uint32_t>(__viaddmax_s32(sa, sb, sc));
  else if constexpr (F == Fn::viaddmin_s32) return static_cast<uint32_t>(__viaddmin_s32(sa, sb, sc));
  else if constexpr (F == Fn::viaddmax_s16x2) return __viaddmax_s16x2(a, b, c);
  else if constexpr (F == Fn::vimax_s32_relu) return static_cast<uint32_t>(__vimax_s32_relu(sa, sb));
  else if constexpr (F == Fn::vimax3_s32_relu) return static_cast<uint32_t>(__vimax3_s32_relu(sa, sb, sc));
  else if constexpr (F == Fn::vibmax_s32) {
    bool p = false;
    const int r = __vibmax_s32(sa, sb, &p);
    side += p ? 1u : 0u;
    return static_cast<uint32_t>(r);
  } else if constexpr (F == Fn::vimax3_u32) return __vimax3_u32(a, b, c);
  else if constexpr (F == Fn::vimin3_u32) return __vimin3_u32(a, b, c);
  else if constexpr (F == Fn::viaddmax_u32) return __viaddmax_u32(a, b, c);
  else if constexpr (F == Fn::viaddmin_u32) return __viaddmin_u32(a, b, c);
  else if constexpr (F == Fn::vibmax_u32) {
    bool p = false;
    const unsigned r = __vibmax_u32(a, b, &p);
    side += p ? 1u : 0u;
    return r;
  } else {
    static_assert(F == Fn::vimax3_s16x2_relu);
    return __vimax3_s16x2_relu(a, b, c);
  }
}

// One call per input triple; the predicate (0/1) in side.
template <Fn F>
__global__ void check_kernel(const uint32_t* a, const uint32_t* b, const uint32_t* c, int n, uint32_t* out,
                             uint32_t* pred) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint32_t side = 0;
  out[i] = call<F>(a[i], b[i], c[i], side);
  pred[i] = side;
}

// One thread: x <- f(x, v[k % 8], v[(k + 3) % 8]) for outer * kUnroll steps; cycles in cycles[0].
template <Fn F>
__global__ void latency_kernel(const uint32_t* init, int outer, long long* cycles, uint32_t* out) {
  uint32_t x = init[0], side = 0, v[dpx::kOperands];
#pragma unroll
  for (int k = 0; k < dpx::kOperands; ++k) v[k] = init[1 + k];
  const long long t0 = clock64();
  for (int o = 0; o < outer; ++o) {
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      x = call<F>(x, v[op_b(k)], v[op_c(k)], side);
      asm volatile("" : "+r"(x));  // the value is opaque to the compiler: no folding across calls
    }
  }
  const long long t1 = clock64();
  out[0] = x;
  out[1] = side;
  cycles[0] = t1 - t0;
}

// Thread t's operand j (0-7) and chain start c (8 + c) from the table.
__host__ __device__ inline int table_index(long long tid, int j) { return static_cast<int>((tid * 17 + j) % kTable); }

// Every thread: kChains independent chains, chain c at step k reading v[(k + c) % 8], v[(k + c + 3) % 8].
template <Fn F>
__global__ void __launch_bounds__(kThreads, 1) throughput_kernel(const uint32_t* table, int outer, long long* clocks,
                                                                 uint32_t* out) {
  extern __shared__ uint32_t keep_others_off[];  // one block per SM: per-block clocks are per-SM clocks
  const long long tid = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  uint32_t v[dpx::kOperands], x[kChains], side = 0;
#pragma unroll
  for (int j = 0; j < dpx::kOperands; ++j) v[j] = table[table_index(tid, j)];
#pragma unroll
  for (int c = 0; c < kChains; ++c) x[c] = table[table_index(tid, dpx::kOperands + c)];
  if (threadIdx.x == 0) keep_others_off[0] = 0;
  __syncthreads();
  const long long t0 = clock64();
  for (int o = 0; o < outer; ++o) {
#pragma unroll
    for (int k = 0; k < kUnroll; ++k)
#pragma unroll
      for (int c = 0; c < kChains; ++c) {
        x[c] = call<F>(x[c], v[op_b(k + c)], v[op_c(k + c)], side);
        asm volatile("" : "+r"(x[c]));
      }
  }
  __syncthreads();
  const long long t1 = clock64();
#pragma unroll
  for (int c = 0; c < kChains; ++c) out[tid * (kChains + 1) + c] = x[c];
  out[tid * (kChains + 1) + kChains] = side;
  if (threadIdx.x == 0) clocks[2 * blockIdx.x] = t0, clocks[2 * blockIdx.x + 1] = t1;
}

// CPU replay of one chain: `steps` calls from x, chain offset `shift` (the chain index c).
std::pair<uint32_t, uint32_t> replay(Fn f, uint32_t x, const uint32_t* v, long long steps, int shift) {
  uint32_t side = 0;
  for (long long k = 0; k < steps; ++k) {
    bool p = false;
    const int kk = static_cast<int>(k % dpx::kOperands) + shift;
    x = dpx::reference(f, x, v[dpx::operand_b(kk)], v[dpx::operand_c(kk)], &p);
    side += p ? 1u : 0u;
  }
  return {x, side};
}

double round_significant(double v, int digits) {
  char b[40];
  std::snprintf(b, sizeof b, "%.*g", digits, v);
  return std::strtod(b, nullptr);
}

std::string hex(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}

// Dynamic shared memory above half an SM's: a second block cannot join the first.
template <class Kernel>
size_t one_block_per_sm(Kernel kernel, int device) {
  int per_sm = 0, per_block = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const size_t bytes = std::min(static_cast<size_t>(per_sm) / 2 + 1024, static_cast<size_t>(per_block));
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  return bytes;
}

struct Session {
  const ProbeContext& pc;
  double clock_hz = 0;
  int repeats = 5;
  std::vector<uint32_t> table;  // kTable operand words
  ProbeOutput& out;
  nlohmann::json& rows;
};

// "" when the function's results match the CPU reference on the test inputs, else the first miss.
template <Fn F>
std::string check_function(std::mt19937_64& rng) {
  std::vector<uint32_t> a(kCheckInputs), b(kCheckInputs), c(kCheckInputs);
  for (int i = 0; i < kCheckInputs; ++i) a[i] = dpx::test_operand(rng()), b[i] = dpx::test_operand(rng()), c[i] = dpx::test_operand(rng());
  gpu::DeviceBuffer<uint32_t> da(kCheckInputs), db(kCheckInputs), dc(kCheckInputs), dout(kCheckInputs), dpred(kCheckInputs);
  CUDA_CHECK(cudaMemcpy(da.data(), a.data(), da.bytes(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(db.data(), b.data(), db.bytes(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dc.data(), c.data(), dc.bytes(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(dout.data(), 0xA5, dout.bytes()));
  CUDA_CHECK(cudaMemset(dpred.data(), 0xA5, dpred.bytes()));
  check_kernel<F><<<(kCheckInputs + 255) / 256, 256>>>(da.data(), db.data(), dc.data(), kCheckInputs, dout.data(), dpred.data());
  CUDA_CHECK_LAUNCH();
  std::vector<uint32_t> out(kCheckInputs), pred(kCheckInputs);
  CUDA_CHECK(cudaMemcpy(out.data(), dout.data(), dout.bytes(), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(pred.data(), dpred.data(), dpred.bytes(), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kCheckInputs; ++i) {
    bool p = false;
    const uint32_t want = dpx::reference(F, a[i], b[i], c[i], &p);
    const uint32_t want_pred = dpx::has_predicate(F) && p ? 1u : 0u;
    if (out[i] != want || pred[i] != want_pred)
      return std::string(dpx::name(F)) + "(" + hex(a[i]) + ", " + hex(b[i]) + ", " + hex(c[i]) + ") gave " + hex(out[i]) +
             " pred " + std::to_string(pred[i]) + ", the CPU reference " + hex(want) + " pred " + std::to_string(want_pred);
  }
  return {};
}

template <Fn F>
void run_function(Session& s, std::mt19937_64& rng) {
  const std::string fname(dpx::name(F));
  const bool sm90 = s.pc.cc_major >= 9;
  nlohmann::json row{{"function", fname}, {"expected_sass", std::string(dpx::expected_sass(F, sm90))}};
  std::string error = check_function<F>(rng);
  row["check"] = error.empty() ? "passed" : error;

  DpxFunction f;
  f.function = fname;
  // Latency: one thread, a dependent chain.
  const int lat_outer = s.pc.quick ? 64 : 256;
  const long long lat_steps = static_cast<long long>(lat_outer) * kUnroll;
  std::vector<double> lat;
  if (error.empty()) {
    std::vector<uint32_t> init(1 + dpx::kOperands);
    for (auto& w : init) w = dpx::test_operand(rng());
    gpu::DeviceBuffer<uint32_t> dinit(init.size()), dout(2);
    gpu::DeviceBuffer<long long> dcyc(1);
    CUDA_CHECK(cudaMemcpy(dinit.data(), init.data(), dinit.bytes(), cudaMemcpyHostToDevice));
    const auto [want, want_side] = replay(F, init[0], init.data() + 1, lat_steps, 0);
    for (int r = 0; r <= s.repeats && error.empty(); ++r) {
      latency_kernel<F><<<1, 1>>>(dinit.data(), lat_outer, dcyc.data(), dout.data());
      CUDA_CHECK_LAUNCH();
      long long cyc = 0;
      uint32_t got[2] = {0, 0};
      CUDA_CHECK(cudaMemcpy(&cyc, dcyc.data(), sizeof cyc, cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaMemcpy(got, dout.data(), sizeof got, cudaMemcpyDeviceToHost));
      if (got[0] != want || got[1] != want_side)
        error = "latency chain ended at " + hex(got[0]) + " (predicates " + std::to_string(got[1]) + "), the CPU replay at " +
                hex(want) + " (" + std::to_string(want_side) + ")";
      if (r) lat.push_back(static_cast<double>(cyc) / static_cast<double>(lat_steps));  // the first run warms up
    }
  }

  // Throughput: one block per SM, per-SM clocks; then blocks 1, 2, 4, ... with events.
  const int outer = s.pc.quick ? 64 : 256;
  const long long steps = static_cast<long long>(outer) * kUnroll;
  const double calls_per_block = static_cast<double>(kThreads) * kChains * static_cast<double>(steps);
  std::vector<double> tput;
  std::vector<std::pair<int, double>> by_blocks;
  nlohmann::json curve = nlohmann::json::array();
  if (error.empty()) {
    const int sms = s.pc.sm_count, max_blocks = 2 * sms;
    const size_t smem = one_block_per_sm(throughput_kernel<F>, s.pc.device);
    gpu::DeviceBuffer<uint32_t> dtable(kTable), dout(static_cast<size_t>(max_blocks) * kThreads * (kChains + 1));
    gpu::DeviceBuffer<long long> dclk(2 * static_cast<size_t>(max_blocks));
    CUDA_CHECK(cudaMemcpy(dtable.data(), s.table.data(), dtable.bytes(), cudaMemcpyHostToDevice));
    for (int r = 0; r <= s.repeats && error.empty(); ++r) {
      throughput_kernel<F><<<sms, kThreads, smem>>>(dtable.data(), outer, dclk.data(), dout.data());
      CUDA_CHECK_LAUNCH();
      std::vector<long long> clk(2 * static_cast<size_t>(sms));
      CUDA_CHECK(cudaMemcpy(clk.data(), dclk.data(), clk.size() * sizeof(long long), cudaMemcpyDeviceToHost));
      if (r == 0) {  // the chains of every 613th thread against the CPU replay
        std::vector<uint32_t> h(static_cast<size_t>(sms) * kThreads * (kChains + 1));
        CUDA_CHECK(cudaMemcpy(h.data(), dout.data(), h.size() * sizeof(uint32_t), cudaMemcpyDeviceToHost));
        for (long long t = 0; t < static_cast<long long>(sms) * kThreads && error.empty(); t += kCheckStride) {
          uint32_t v[dpx::kOperands], side = 0;
          for (int j = 0; j < dpx::kOperands; ++j) v[j] = s.table[table_index(t, j)];
          for (int c = 0; c < kChains && error.empty(); ++c) {
            const auto [want, want_side] = replay(F, s.table[table_index(t, dpx::kOperands + c)], v, steps, c);
            side += want_side;
            if (h[t * (kChains + 1) + c] != want)
              error = "throughput chain " + std::to_string(c) + " of thread " + std::to_string(t) + " ended at " +
                      hex(h[t * (kChains + 1) + c]) + ", the CPU replay at " + hex(want);
          }
          if (error.empty() && h[t * (kChains + 1) + kChains] != side)
            error = "thread " + std::to_string(t) + " counted " + std::to_string(h[t * (kChains + 1) + kChains]) +
                    " predicates, the CPU replay " + std::to_string(side);
        }
        continue;  // the first run warms up
      }
      std::vector<double> per_sm(sms);
      for (int b = 0; b < sms; ++b) per_sm[b] = calls_per_block / static_cast<double>(clk[2 * b + 1] - clk[2 * b]);
      tput.push_back(median(per_sm));
    }
    if (error.empty()) {
      std::vector<int> counts;
      for (int b = 1; b <= max_blocks; b *= 2) counts.push_back(b);
      counts.push_back(sms);
      counts.push_back(sms + 1);
      counts.push_back(max_blocks);
      std::sort(counts.begin(), counts.end());
      counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
      gpu::TimingOptions opt;
      opt.warmup = 1;
      opt.repeats = 3;  // a curve's shape (four digits); 5 repeats took 0.3 s more of the probe's 1.5 s
      for (int blocks : counts) {
        const gpu::Timing t = gpu::time_kernel(
            [&](cudaStream_t st) {
              throughput_kernel<F><<<blocks, kThreads, smem, st>>>(dtable.data(), outer, dclk.data(), dout.data());
            },
            opt);
        const double clocks = t.summary.median * t.sm_clock_hz;
        const double per_sm_used = calls_per_block * blocks / clocks / std::min(blocks, sms);
        // Four significant digits: the curve's shape, not its noise, and a short descriptor line.
        by_blocks.emplace_back(blocks, round_significant(per_sm_used, 4));
        curve.push_back({{"blocks", blocks}, {"calls_per_clock_per_sm_used", per_sm_used}, {"time_s", t.summary.median},
                         {"sm_clock_hz", t.sm_clock_hz}, {"flagged", t.flagged}});
      }
    }
  }
  row["check"] = error.empty() ? "passed" : error;
  if (!error.empty()) {
    s.rows.push_back(row);
    return;  // a wrong result measured something else: no figure counts
  }
  const std::string lat_note = "one thread, dependent chain of " + std::to_string(lat_steps) + " calls, clock64";
  const std::string tput_note = std::to_string(s.pc.sm_count) + " blocks (one per SM) x " + std::to_string(kThreads) +
                                " threads x " + std::to_string(kChains) + " chains x " + std::to_string(steps) +
                                " calls, per-SM clock64" + (dpx::has_predicate(F) ? "; the predicate is used (one add per call)" : "");
  f.sass = std::string(dpx::expected_sass(F, sm90));  // checked by scripts/sass_check.sh, not at run time
  f.latency.measured = measured_from_samples(lat, "dpx", s.clock_hz, false, lat_note);
  const auto [lo, hi] = std::minmax_element(tput.begin(), tput.end());
  f.throughput_per_sm.measured = measured_from_samples(tput, "dpx", s.clock_hz, *hi > 1.05 * *lo, tput_note);
  f.by_blocks = by_blocks;
  row["latency_cycles"] = f.latency.measured->median;
  row["calls_per_clock_per_sm"] = f.throughput_per_sm.measured->median;
  row["by_blocks"] = curve;
  s.rows.push_back(row);
  s.out.dpx.push_back(std::move(f));
}

template <std::size_t... I>
void run_all(Session& s, std::mt19937_64& rng, std::index_sequence<I...>) {
  int done = 0;
  const auto step = [&](auto fn_runner) {
    if (s.pc.progress) s.pc.progress(static_cast<double>(done) / dpx::kFunctions.size(), "DPX functions");
    fn_runner();
    ++done;
  };
  (step([&] { run_function<dpx::kFunctions[I]>(s, rng); }), ...);
}

ProbeOutput run_dpx(const ProbeContext& pc) {
  ProbeOutput out;
  nlohmann::json rows = nlohmann::json::array();
  Session s{pc, gpu::measure_sm_clock_hz(pc.device, 0.02), pc.quick ? 3 : 7, {}, out, rows};
  std::mt19937_64 rng(0xD9C0FFEEull);
  s.table.resize(kTable);
  for (auto& w : s.table) w = dpx::test_operand(rng());
  run_all(s, rng, std::make_index_sequence<dpx::kFunctions.size()>{});
  out.details["functions"] = rows;
  out.details["sm_clock_hz"] = s.clock_hz;
  out.details["hardware_dpx"] = pc.cc_major >= 9;
  if (out.dpx.empty()) out.skipped = "no DPX function matched the CPU reference (details: functions[].check)";
  return out;
}

std::vector<std::string> function_names() {
  std::vector<std::string> v;
  for (Fn f : dpx::kFunctions) v.emplace_back(dpx::name(f));
  return v;
}

const Registrar reg{ProbeInfo{
    "dpx", "compute",
    "DPX functions (__vimax3_s32, __viaddmax_s16x2, __vibmax_s32, ...): latency, calls/clk/SM and the curve over "
    "blocks (Luo et al. Figs. 6-7); checked against a CPU reference",
    {{"function", function_names()}, {"measure", {"latency", "throughput_per_sm", "by_blocks"}}},
    {"dpx"},
    80, true, run_dpx}};

}  // namespace
}  // namespace ceiling::probes
