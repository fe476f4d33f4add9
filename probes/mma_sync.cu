// Probe "mma": warp-level mma.sync on the tensor cores. One kernel template over (instruction,
// ILP); per instruction: a product checked against a CPU reference, completion latency (ILP 1,
// one warp, clock64), an ILP x warps/SM sweep with one block per SM (per-SM clock64 cycles),
// and a full-GPU run at the best point timed with CUDA events (Hopper paper §IV-C method).
#include <algorithm>
#include <cstdio>
#include <functional>
#include <numeric>
#include <optional>
#include <tuple>

#include "host/sparse24.hpp"
#include "mma_ops.cuh"
#include "probe_util.hpp"

namespace ceiling::probes::compute {
namespace {

using namespace mma_ops;

__device__ __forceinline__ double combine(double x, double y) { return x + y; }
__device__ __forceinline__ float combine(float x, float y) { return x + y; }
__device__ __forceinline__ uint32_t combine(uint32_t x, uint32_t y) { return x ^ y; }

template <class Op>
inline constexpr bool kVaryOperands = Op::a_elem == Elem::e4m3 || Op::a_elem == Elem::e5m2;

// ILP independent accumulator chains per warp; every warp of the block runs `iters` rounds.
// clocks[2*block] / [2*block+1]: the block's SM clock before the first and after the last mma.
template <class Op, int ILP>
__global__ void mma_loop_kernel(const typename Op::AReg* a, const typename Op::AReg* b, int iters,
                                long long* clocks, typename Op::CReg* sink) {
  const int lane = threadIdx.x & 31;
  typename Op::AReg ar[Op::NA], br[Op::NB];
#pragma unroll
  for (int r = 0; r < Op::NA; ++r) ar[r] = a[lane * Op::NA + r];
#pragma unroll
  for (int r = 0; r < Op::NB; ++r) br[r] = b[lane * Op::NB + r];
  typename Op::CReg acc[ILP][Op::NC];
#pragma unroll
  for (int i = 0; i < ILP; ++i)
#pragma unroll
    for (int r = 0; r < Op::NC; ++r) acc[i][r] = typename Op::CReg(i);
  // Distinct starts per chain: ptxas lowers some mma (s4, fp8 on sm_90) to other instructions
  // and would merge chains that compute the same values.
  __syncthreads();
  const long long t0 = clock64();
  uint32_t seed = threadIdx.x;
  for (int it = 0; it < iters; ++it) {
    if constexpr (kVaryOperands<Op>) seed = seed * 1664525u + 1013904223u;  // LCG: new bits per round
#pragma unroll
    for (int i = 0; i < ILP; ++i) {
      if constexpr (kVaryOperands<Op>) {
        // sm_90 has no FP8 mma: ptxas computes A*B with HMMA into zero and adds it with FADD,
        // so a loop-invariant product would be hoisted out of the loop. A new A per mma (low
        // mantissa bits of each byte from the LCG: values stay finite) stops it.
        typename Op::AReg av[Op::NA];
#pragma unroll
        for (int r = 0; r < Op::NA; ++r) av[r] = ar[r];
        av[0] ^= (seed >> i) & 0x03030303u;
        Op::mma(acc[i], av, br);
      } else {
        Op::mma(acc[i], ar, br);
      }
    }
  }
  __syncthreads();
  const long long t1 = clock64();
  if (threadIdx.x == 0) {
    clocks[2 * blockIdx.x] = t0;
    clocks[2 * blockIdx.x + 1] = t1;
  }
  typename Op::CReg s = acc[0][0];
#pragma unroll
  for (int i = 0; i < ILP; ++i)
#pragma unroll
    for (int r = 0; r < Op::NC; ++r)
      if (i || r) s = combine(s, acc[i][r]);
  sink[blockIdx.x * blockDim.x + threadIdx.x] = s;  // keeps every chain alive
}

struct InstrSpec {
  std::string name;     // "f16.f32.m16n8k16" (for --list and logs)
  int min_cc;
  std::string sass;     // what this build's SASS shows (scripts/sass_check.sh checks it)
  bool fills_field;     // the descriptor's tensor_core.<precision> comes from this probe
};

// Everything the probe needs for one instruction, with the type erased.
struct MmaRunner {
  TensorInstruction proto;
  int min_cc = 80;
  double fma_per_mma = 0;
  std::function<std::optional<std::string>(std::mt19937_64&)> check;  // error text or nullopt
  // (ilp, warps, blocks, iters) -> per-block cycles; also the launch for event timing
  std::function<std::vector<double>(int, int, int, int)> run_cycles;
  std::function<void(int, int, int, int, cudaStream_t)> launch;
  std::function<int(int)> max_warps;  // per ILP: what the kernel's register use allows per block
};

// A[row * cols + col]: cols = K, or K/2 for a sparse A's compressed values.
template <class Op>
std::vector<typename Op::AReg> pack_a(const std::vector<double>& A, int cols = Op::K) {
  using L = Layout<Op>;
  std::vector<typename Op::AReg> out(32 * Op::NA);
  for (int lane = 0; lane < 32; ++lane)
    for (int r = 0; r < Op::NA; ++r) {
      uint64_t bits = 0;
      for (int j = 0; j < L::e; ++j) {
        int row, col;
        L::a(lane, r, j, row, col);
        bits |= encode(Op::a_elem, A[row * cols + col]) << (j * elem_bits(Op::a_elem));
      }
      std::memcpy(&out[lane * Op::NA + r], &bits, sizeof(typename Op::AReg));
    }
  return out;
}

template <class Op>
std::vector<typename Op::AReg> pack_b(const std::vector<double>& B) {  // B[k*N + n]
  using L = Layout<Op>;
  std::vector<typename Op::AReg> out(32 * Op::NB);
  for (int lane = 0; lane < 32; ++lane)
    for (int r = 0; r < Op::NB; ++r) {
      uint64_t bits = 0;
      for (int j = 0; j < L::e; ++j) {
        int k, n;
        L::b(lane, r, j, k, n);
        bits |= encode(Op::a_elem, B[k * Op::N + n]) << (j * elem_bits(Op::a_elem));
      }
      std::memcpy(&out[lane * Op::NB + r], &bits, sizeof(typename Op::AReg));
    }
  return out;
}

// C[row*N + col] into the lanes' accumulator registers (packed f16: two per register, low half
// first). The dense and the sparse product checks share it.
template <class Op>
std::vector<typename Op::CReg> pack_c(const std::vector<double>& C) {
  using L = Layout<Op>;
  std::vector<typename Op::CReg> hc(32 * Op::NC);
  for (int lane = 0; lane < 32; ++lane)
    for (int v = 0; v < Op::NV; ++v) {
      int row, col;
      L::c(lane, v, row, col);
      const uint64_t bits = encode(Op::c_elem, C[row * Op::N + col]);
      if constexpr (Op::NV == Op::NC) {
        std::memcpy(&hc[lane * Op::NC + v], &bits, sizeof(typename Op::CReg));
      } else {
        uint32_t w;
        std::memcpy(&w, &hc[lane * Op::NC + v / 2], 4);
        w = (v % 2) ? ((w & 0xFFFFu) | static_cast<uint32_t>(bits << 16))
                    : ((w & 0xFFFF0000u) | static_cast<uint32_t>(bits));
        std::memcpy(&hc[lane * Op::NC + v / 2], &w, 4);
      }
    }
  return hc;
}

// Value v of a lane's accumulator registers (packed f16: two per register, low half first).
template <class Op>
uint64_t c_bits(const std::vector<typename Op::CReg>& regs, int lane, int v) {
  uint64_t raw = 0;
  if constexpr (Op::NV == Op::NC) {
    std::memcpy(&raw, &regs[lane * Op::NC + v], sizeof(typename Op::CReg));
  } else {
    uint32_t w;
    std::memcpy(&w, &regs[lane * Op::NC + v / 2], 4);
    raw = (v % 2) ? (w >> 16) : (w & 0xFFFFu);
  }
  return raw;
}

template <class Op>
std::optional<std::string> check_product(std::mt19937_64& rng) {
  using L = Layout<Op>;
  std::vector<double> A(Op::M * Op::K), B(Op::K * Op::N), C(Op::M * Op::N);
  for (auto& x : A) x = draw_exact(Op::a_elem, rng);
  for (auto& x : B) x = draw_exact(Op::a_elem, rng);
  for (auto& x : C) x = draw_exact(Op::c_elem == Elem::f64 ? Elem::f64 : Elem::s8, rng);
  const auto ha = pack_a<Op>(A), hb = pack_b<Op>(B);
  const auto hc = pack_c<Op>(C);
  gpu::DeviceBuffer<typename Op::AReg> da(ha.size()), db(hb.size());
  gpu::DeviceBuffer<typename Op::CReg> dd(hc.size());
  CUDA_CHECK(cudaMemcpy(da.data(), ha.data(), da.bytes(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(db.data(), hb.data(), db.bytes(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dd.data(), hc.data(), dd.bytes(), cudaMemcpyHostToDevice));
  mma_groups_kernel<Op><<<1, 32>>>(da.data(), db.data(), dd.data(), 1, 0);
  CUDA_CHECK_LAUNCH();
  std::vector<typename Op::CReg> hd(hc.size());
  CUDA_CHECK(cudaMemcpy(hd.data(), dd.data(), dd.bytes(), cudaMemcpyDeviceToHost));
  int bad = 0;
  std::string first;
  for (int lane = 0; lane < 32; ++lane)
    for (int v = 0; v < Op::NV; ++v) {
      int row, col;
      L::c(lane, v, row, col);
      double ref = C[row * Op::N + col];
      for (int k = 0; k < Op::K; ++k) ref += A[row * Op::K + k] * B[k * Op::N + col];
      const double got = decode(Op::c_elem, c_bits<Op>(hd, lane, v));
      if (got != ref) {  // exact: every input is small and dyadic, every sum representable
        if (!bad++)
          first = "D[" + std::to_string(row) + "][" + std::to_string(col) + "] = " +
                  std::to_string(got) + ", CPU reference " + std::to_string(ref);
      }
    }
  if (bad) return std::to_string(bad) + " of " + std::to_string(32 * Op::NV) + " values differ; first " + first;
  return std::nullopt;
}

// 2:4 sparse product, once per valid metadata nibble (every chunk of every row the same pattern,
// so the metadata's thread layout does not matter): compressed A (M x K/2) in the dense layout of
// that shape, each row expanded by probes/host/sparse24 for the CPU reference.
template <class Op>
std::optional<std::string> check_sparse_product(std::mt19937_64& rng) {
  using L = Layout<Op>;
  constexpr int KC = Op::K / 2;
  constexpr bool kPairs = Op::a_elem == Elem::tf32;  // 1:2 over 32-bit elements
  for (const uint8_t nib : kPairs ? numerics::valid_nibbles_32bit() : numerics::valid_nibbles()) {
    std::vector<double> Ac(Op::M * KC), B(Op::K * Op::N), C(Op::M * Op::N);
    for (auto& x : Ac) x = draw_exact(Op::a_elem, rng);
    for (auto& x : B) x = draw_exact(Op::a_elem, rng);
    for (auto& x : C) x = draw_exact(Elem::s8, rng);
    const auto ha = pack_a<Op>(Ac, KC);
    const auto hb = pack_b<Op>(B);
    const auto hc = pack_c<Op>(C);
    gpu::DeviceBuffer<typename Op::AReg> da(ha.size()), db(hb.size());
    gpu::DeviceBuffer<typename Op::CReg> dd(hc.size());
    CUDA_CHECK(cudaMemcpy(da.data(), ha.data(), da.bytes(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(db.data(), hb.data(), db.bytes(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dd.data(), hc.data(), dd.bytes(), cudaMemcpyHostToDevice));
    mma_groups_kernel<Op><<<1, 32>>>(da.data(), db.data(), dd.data(), 1, numerics::uniform_metadata(nib));
    CUDA_CHECK_LAUNCH();
    std::vector<typename Op::CReg> hd(hc.size());
    CUDA_CHECK(cudaMemcpy(hd.data(), dd.data(), dd.bytes(), cudaMemcpyDeviceToHost));
    for (int lane = 0; lane < 32; ++lane)
      for (int v = 0; v < Op::NV; ++v) {
        int row, col;
        L::c(lane, v, row, col);
        std::vector<double> arow;
        if constexpr (kPairs) {
          arow = numerics::expand_12(std::vector<double>(Ac.begin() + row * KC, Ac.begin() + (row + 1) * KC),
                                     std::vector<uint8_t>(Op::K / 2, nib));
        } else {
          numerics::Compressed24 cr;
          cr.values.assign(Ac.begin() + row * KC, Ac.begin() + (row + 1) * KC);
          cr.nibbles.assign(Op::K / 4, nib);
          arow = numerics::expand_24(cr);
        }
        double ref = C[row * Op::N + col];
        for (int k = 0; k < Op::K; ++k) ref += arow[k] * B[k * Op::N + col];
        const double got = decode(Op::c_elem, c_bits<Op>(hd, lane, v));
        if (got != ref)
          return "metadata nibble " + std::to_string(nib) + ": D[" + std::to_string(row) + "][" + std::to_string(col) +
                 "] = " + std::to_string(got) + ", CPU reference " + std::to_string(ref);
      }
  }
  return std::nullopt;
}

// Device buffers of random operand fragments and sinks for one instruction, kept across launches.
template <class Op>
struct LoopState {
  gpu::DeviceBuffer<typename Op::AReg> a, b;
  gpu::DeviceBuffer<typename Op::CReg> sink;
  gpu::DeviceBuffer<long long> clocks;
  size_t smem = 0;
};

template <class Op, int ILP>
void launch_loop(LoopState<Op>& s, int warps, int blocks, int iters, cudaStream_t stream) {
  mma_loop_kernel<Op, ILP><<<blocks, 32 * warps, s.smem, stream>>>(s.a.data(), s.b.data(), iters,
                                                                     s.clocks.data(), s.sink.data());
}

template <class Op>
MmaRunner make_runner(const std::string& sass, int min_cc) {
  MmaRunner r;
  r.proto.api = "mma";
  r.proto.shape = Op::shape;
  r.proto.input = Op::input;
  r.proto.input_detail = elem_detail(Op::a_elem);
  r.proto.accumulate = Op::accumulate;
  r.proto.sass = sass;
  r.proto.sparse = Op::sparse;
  r.min_cc = min_cc;
  // Sparse: the dense-equivalent work (the logical K), as the papers and datasheets count it.
  r.fma_per_mma = static_cast<double>(Op::M) * Op::N * Op::K;
  if constexpr (Op::sparse)
    r.check = [](std::mt19937_64& rng) { return check_sparse_product<Op>(rng); };
  else
    r.check = [](std::mt19937_64& rng) { return check_product<Op>(rng); };
  auto state = std::make_shared<LoopState<Op>>();
  auto ensure = [state](int blocks, int warps) {
    LoopState<Op>& s = *state;
    if (!s.a.size()) {
      std::mt19937_64 rng(1234);
      std::vector<double> A(Op::M * Op::K), B(Op::K * Op::N);  // sparse: A's first K/2 columns per row are used
      for (auto& x : A) x = draw_small(Op::a_elem, rng);
      for (auto& x : B) x = draw_small(Op::a_elem, rng);
      const auto ha = pack_a<Op>(A), hb = pack_b<Op>(B);
      s.a = gpu::DeviceBuffer<typename Op::AReg>(ha.size());
      s.b = gpu::DeviceBuffer<typename Op::AReg>(hb.size());
      CUDA_CHECK(cudaMemcpy(s.a.data(), ha.data(), s.a.bytes(), cudaMemcpyHostToDevice));
      CUDA_CHECK(cudaMemcpy(s.b.data(), hb.data(), s.b.bytes(), cudaMemcpyHostToDevice));
      int dev = 0;
      CUDA_CHECK(cudaGetDevice(&dev));
      s.smem = one_block_per_sm_smem(dev);
      auto set = [&](auto kernel) {
        CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(s.smem)));
      };
      set(mma_loop_kernel<Op, 1>);
      set(mma_loop_kernel<Op, 2>);
      set(mma_loop_kernel<Op, 4>);
      set(mma_loop_kernel<Op, 8>);
    }
    if (s.clocks.size() < static_cast<size_t>(2 * blocks))
      s.clocks = gpu::DeviceBuffer<long long>(2 * blocks);
    if (s.sink.size() < static_cast<size_t>(blocks * warps * 32))
      s.sink = gpu::DeviceBuffer<typename Op::CReg>(static_cast<size_t>(blocks) * 32 * 32);
  };
  r.launch = [state, ensure](int ilp, int warps, int blocks, int iters, cudaStream_t stream) {
    ensure(blocks, warps);
    LoopState<Op>& s = *state;
    switch (ilp) {
      case 1: launch_loop<Op, 1>(s, warps, blocks, iters, stream); break;
      case 2: launch_loop<Op, 2>(s, warps, blocks, iters, stream); break;
      case 4: launch_loop<Op, 4>(s, warps, blocks, iters, stream); break;
      case 8: launch_loop<Op, 8>(s, warps, blocks, iters, stream); break;
      default: throw std::invalid_argument("mma probe: ILP must be 1, 2, 4 or 8");
    }
  };
  r.max_warps = [](int ilp) {
    cudaFuncAttributes a{};
    switch (ilp) {
      case 1: CUDA_CHECK(cudaFuncGetAttributes(&a, mma_loop_kernel<Op, 1>)); break;
      case 2: CUDA_CHECK(cudaFuncGetAttributes(&a, mma_loop_kernel<Op, 2>)); break;
      case 4: CUDA_CHECK(cudaFuncGetAttributes(&a, mma_loop_kernel<Op, 4>)); break;
      default: CUDA_CHECK(cudaFuncGetAttributes(&a, mma_loop_kernel<Op, 8>)); break;
    }
    return a.maxThreadsPerBlock / 32;
  };
  r.run_cycles = [state, launch = r.launch](int ilp, int warps, int blocks, int iters) {
    launch(ilp, warps, blocks, iters, nullptr);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<long long> c(2 * blocks);
    CUDA_CHECK(cudaMemcpy(c.data(), state->clocks.data(), c.size() * sizeof(long long),
                          cudaMemcpyDeviceToHost));
    return block_cycles(c, blocks);
  };
  return r;
}

// The instruction table: SASS as seen with cuobjdump on this build for sm_90 (sass_check.sh).
std::vector<MmaRunner> runners() {
  std::vector<MmaRunner> v;
  v.push_back(make_runner<F64_m8n8k4>("DMMA.8x8x4", 80));
  v.push_back(make_runner<F64_m16n8k4>("DMMA.16x8x4", 90));
  v.push_back(make_runner<F64_m16n8k8>("DMMA.16x8x8", 90));
  v.push_back(make_runner<F64_m16n8k16>("DMMA.16x8x16", 90));
  v.push_back(make_runner<F16F16_m16n8k8>("HMMA.1688.F16", 80));
  v.push_back(make_runner<F16F16_m16n8k16>("HMMA.16816.F16", 80));
  v.push_back(make_runner<F16F32_m16n8k8>("HMMA.1688.F32", 80));
  v.push_back(make_runner<F16F32_m16n8k16>("HMMA.16816.F32", 80));
  v.push_back(make_runner<BF16_m16n8k8>("HMMA.1688.F32.BF16", 80));
  v.push_back(make_runner<BF16_m16n8k16>("HMMA.16816.F32.BF16", 80));
  v.push_back(make_runner<TF32_m16n8k4>("HMMA.1684.F32.TF32", 80));
  v.push_back(make_runner<TF32_m16n8k8>("HMMA.1688.F32.TF32", 80));
  v.push_back(make_runner<S8_m16n8k16>("IMMA.16816.S8.S8", 80));
  v.push_back(make_runner<S8_m16n8k32>("IMMA.16832.S8.S8", 80));
  v.push_back(make_runner<S4_m16n8k32>("CALL to a subroutine: s4 unpacked to s8 (IMAD.SHL/IMAD.U32), IMMA.16816.S8.S8", 80));
  v.push_back(make_runner<S4_m16n8k64>("CALL to a subroutine: s4 unpacked to s8 (IMAD.SHL/IMAD.U32), 2x IMMA.16832.S8.S8", 80));
  v.push_back(make_runner<E4M3_m16n8k32>("F2FP.F16.E4M3.UNPACK_B, 2x HMMA.16816.F32 (into zero), FADD into C", 89));
  v.push_back(make_runner<E5M2_m16n8k32>("F2FP.F16.E5M2.UNPACK_B, 2x HMMA.16816.F32 (into zero), FADD into C", 89));
  // 2:4 sparse A (mma.sp::ordered_metadata); SASS as cuobjdump showed it on the H100 (scripts/sass_check.sh).
  v.push_back(make_runner<SP_F16F32_m16n8k16>("HMMA.SP.16816.F32", 80));
  v.push_back(make_runner<SP_F16F32_m16n8k32>("HMMA.SP.16832.F32", 80));
  v.push_back(make_runner<SP_F16F16_m16n8k16>("HMMA.SP.16816.F16", 80));
  v.push_back(make_runner<SP_F16F16_m16n8k32>("HMMA.SP.16832.F16", 80));
  v.push_back(make_runner<SP_BF16_m16n8k16>("HMMA.SP.16816.F32.BF16", 80));
  v.push_back(make_runner<SP_BF16_m16n8k32>("HMMA.SP.16832.F32.BF16", 80));
  v.push_back(make_runner<SP_TF32_m16n8k8>("HMMA.SP.1688.F32.TF32", 80));
  v.push_back(make_runner<SP_TF32_m16n8k16>("HMMA.SP.16816.F32.TF32", 80));
  v.push_back(make_runner<SP_S8_m16n8k32>("IMMA.SP.16832.S8.S8", 80));
  v.push_back(make_runner<SP_S8_m16n8k64>("IMMA.SP.16864.S8.S8", 80));
  v.push_back(make_runner<SP_E4M3_m16n8k64>("F2FP.F16.E4M3.UNPACK_B, HMMA.SP.16832.F32", 89));
  return v;
}

constexpr double kTargetCycles = 200000;  // per sweep point: ~0.1 ms at 2 GHz, clock64 noise << 1%

// Per-SM FMA/clock of one (ilp, warps) point: a short launch sizes `iters`, the second counts.
double sweep_point(MmaRunner& r, int ilp, int warps, int sms) {
  int iters = 64;
  auto c = r.run_cycles(ilp, warps, sms, iters);
  const double cyc = median(c);
  iters = static_cast<int>(std::clamp(iters * kTargetCycles / std::max(cyc, 1.0), 64.0, double(1 << 20)));
  c = r.run_cycles(ilp, warps, sms, iters);
  const double fma = r.fma_per_mma * ilp * warps * static_cast<double>(iters);
  return fma / median(c);
}

ProbeOutput run_mma(const ProbeContext& ctx) {
  ProbeOutput out;
  const int cc = 10 * ctx.cc_major + ctx.cc_minor;
  const std::vector<int> ilps = ctx.quick ? std::vector<int>{1, 4, 8} : std::vector<int>{1, 2, 4, 8};
  const std::vector<int> warps_axis =
      ctx.quick ? std::vector<int>{4, 8, 16} : std::vector<int>{1, 2, 4, 8, 16, 32};
  const double clock_hz = gpu::measure_sm_clock_hz(ctx.device, 0.02);
  nlohmann::json grid = nlohmann::json::array(), checks = nlohmann::json::array();
  std::map<Precision, std::pair<double, std::string>> best_per_precision;
  std::mt19937_64 rng(0xC0FFEE);
  nlohmann::json power_rows = nlohmann::json::array();
  struct PowerLater {
    size_t runner, instruction;
    int ilp, warps, iters;
    double flop;
  };
  std::vector<PowerLater> later;  // calibrate --power: read after every timed run
  auto rs = runners();
  for (size_t idx = 0; idx < rs.size(); ++idx) {
    MmaRunner& r = rs[idx];
    TensorInstruction ti = r.proto;
    const std::string key = instruction_key(ti);
    if (ctx.progress) ctx.progress(static_cast<double>(idx) / rs.size(), key);
    if (cc < r.min_cc) {
      checks.push_back({{"instruction", key}, {"skipped", "needs compute capability " +
                         std::to_string(r.min_cc / 10) + "." + std::to_string(r.min_cc % 10)}});
      continue;
    }
    if (auto err = r.check(rng)) {
      checks.push_back({{"instruction", key}, {"check", "failed"}, {"error", *err}});
      continue;  // no time counts for an instruction that computes a wrong product
    }
    checks.push_back({{"instruction", key}, {"check", "passed"}});
    // Completion latency: one warp, one chain; five repeats must agree.
    std::vector<double> lat;
    const int lat_iters = 1024;
    r.run_cycles(1, 1, 1, 64);  // warm-up
    for (int k = 0; k < 5; ++k) lat.push_back(r.run_cycles(1, 1, 1, lat_iters)[0] / lat_iters);
    const auto [lo, hi] = std::minmax_element(lat.begin(), lat.end());
    ti.latency.measured = probes::measured_from_samples(lat, "mma", clock_hz, *hi - *lo > 1.0,
                                                        "ILP 1, 1 warp, clock64 over 1024 dependent mma");
    // ILP x warps sweep, one block per SM.
    double best = 0;
    int best_w = 0, best_i = 0;
    std::vector<std::tuple<int, int, double>> pts;
    for (int w : warps_axis)
      for (int i : ilps) {
        if (w > r.max_warps(i)) continue;  // registers per thread x threads exceed the SM's file
        const double f = sweep_point(r, i, w, ctx.sm_count);
        pts.emplace_back(w, i, f);
        grid.push_back({{"instruction", key}, {"warps", w}, {"ilp", i}, {"fma_per_clock_per_sm", f},
                        {"flop_per_s", 2.0 * f * ctx.sm_count * clock_hz}});
        if (f > best) best = f, best_w = w, best_i = i;
      }
    // Smallest point (fewest warps x ILP, then fewest warps) reaching 95% of the best.
    int sw = best_w, si = best_i;
    for (auto [w, i, f] : pts)
      if (f >= 0.95 * best && (w * i < sw * si || (w * i == sw * si && w < sw))) sw = w, si = i;
    ti.best_warps = sw;
    ti.best_ilp = si;
    // Full-GPU run at the best point: events for FLOP/s, clock64 for FMA/clock/SM.
    const double cyc_per_iter = best_w * best_i * r.fma_per_mma / best;
    const int iters = std::max(64, static_cast<int>(4e6 / cyc_per_iter));  // ~2 ms at 2 GHz
    gpu::TimingOptions opt;  // one warm-up and five repeats (~12 ms), as wgmma
    opt.warmup = 1;
    opt.repeats = 5;
    const gpu::Timing t = gpu::time_kernel(
        [&](cudaStream_t s) { r.launch(best_i, best_w, ctx.sm_count, iters, s); }, opt);
    const double fma_total = r.fma_per_mma * best_i * best_w * static_cast<double>(iters) * ctx.sm_count;
    const std::string note = "warps " + std::to_string(best_w) + ", ILP " + std::to_string(best_i) +
                             ", one block per SM, " + std::to_string(ctx.sm_count) + " SMs";
    const auto c = r.run_cycles(best_i, best_w, ctx.sm_count, iters);
    // SM clock during the run: clock64 cycles over event time (the post-run sample reads high
    // when the tensor cores pull the clock down under load).
    const double run_clock_hz = median(c) / t.summary.median;
    ti.throughput.measured = probes::measured_rate(t, 2.0 * fma_total, "mma", note);
    ti.throughput.measured->sm_clock_hz = run_clock_hz;
    std::vector<double> per_sm;
    for (double x : c) per_sm.push_back(fma_total / ctx.sm_count / x);
    ti.fma_per_clock_per_sm.measured = probes::measured_from_samples(per_sm, "mma", run_clock_hz, t.flagged,
                                                                     note + "; spread over SMs");
    if (ctx.power) later.push_back({idx, out.instructions.size(), best_i, best_w, iters, 2.0 * fma_total});
    out.instructions.push_back(ti);
    const double flops = ti.throughput.measured->median;
    if (ti.sparse) continue;  // the dense ceilings come from dense instructions
    auto& bp = best_per_precision[ti.input];
    if (flops > bp.first) bp = {flops, key};
  }
  // calibrate --power, after every timed run (a reading at the power limit lowers the clock of what
  // runs next): the same launch back to back under the NVML energy counter (Table XI); the rate
  // during it is the instruction's sustained figure.
  for (const PowerLater& pl : later) {
    MmaRunner& r = rs[pl.runner];
    TensorInstruction& ti = out.instructions[pl.instruction];
    const std::string key = instruction_key(ti);
    if (ctx.progress) ctx.progress(static_cast<double>(pl.runner) / rs.size(), key + " (power)");
    auto pw = probes::measure_power(
        ctx, "mma", [&](cudaStream_t s) { r.launch(pl.ilp, pl.warps, ctx.sm_count, pl.iters, s); }, pl.flop, "FLOP");
    if (pw.value) ti.power.measured = pw.value;
    if (pw.value && pw.rate) ti.sustained.measured = pw.rate;
    pw.details["instruction"] = key;
    power_rows.push_back(pw.details);
  }
  // Tensor-core ceilings: on sm_90 wgmma is the faster path for everything but FP64 and INT4, so
  // the wgmma probe fills those precisions there.
  // compute.tensor_core_mma_sync.<p> keeps every precision's best dense mma.sync: the ceiling of a
  // kernel whose matrices are too narrow for wgmma (64 rows x 64..256 columns), e.g. the intensity
  // kind's 16-value fp16 rows (wgmma m64n16k16 measured below mma.sync m16n8k16 on the H200).
  for (auto& [p, v] : best_per_precision) {
    for (const auto& ti : out.instructions)
      if (instruction_key(ti) == v.second) {
        MeasuredValue m = *ti.throughput.measured;
        m.note = "best mma.sync: " + v.second + "; " + m.note;
        out.fields.push_back({std::string("compute.tensor_core_mma_sync.") + precision_name(p), Dimension::flop_per_second, m});
        if (cc >= 90 && p != Precision::fp64) continue;
        out.fields.push_back({std::string("compute.tensor_core.") + precision_name(p), Dimension::flop_per_second, m});
      }
  }
  // Sparse against dense: the dense instruction of the same shape and types, else the fastest dense
  // one of those types (Sun et al. Tables 6-7: the sparse speedup per type).
  nlohmann::json svd = nlohmann::json::array();
  for (const auto& sp : out.instructions) {
    if (!sp.sparse || !sp.throughput.measured) continue;
    const TensorInstruction* same_shape = nullptr;
    const TensorInstruction* best = nullptr;
    for (const auto& de : out.instructions) {
      if (de.sparse || !de.throughput.measured || de.input != sp.input || de.accumulate != sp.accumulate ||
          de.input_detail != sp.input_detail)
        continue;
      if (de.shape == sp.shape) same_shape = &de;
      if (!best || de.throughput.measured->median > best->throughput.measured->median) best = &de;
    }
    const TensorInstruction* ref = same_shape ? same_shape : best;
    if (!ref) continue;
    svd.push_back({{"sparse", instruction_key(sp)}, {"dense", instruction_key(*ref)},
                   {"same_shape", same_shape != nullptr},
                   {"ratio", sp.throughput.measured->median / ref->throughput.measured->median}});
  }
  out.details["sparse_vs_dense"] = svd;
  out.details["grid"] = grid;
  out.details["checks"] = checks;
  out.details["sm_clock_hz_before"] = clock_hz;
  if (ctx.power) out.details["power"] = power_rows;
  return out;
}

const Registrar reg{ProbeInfo{
    "mma", "compute",
    "mma.sync latency and throughput per shape/type over ILP x warps/SM; CPU-checked products",
    {{"instruction", {"f64 m8n8k4/m16n8k4/k8/k16", "f16 f16|f32 m16n8k8/k16", "bf16 m16n8k8/k16",
                      "tf32 m16n8k4/k8", "s8 m16n8k16/k32", "s4 m16n8k32/k64", "e4m3/e5m2 m16n8k32",
                      "sparse 2:4: f16 f16|f32 and bf16 m16n8k16/k32, tf32 m16n8k8/k16, s8 m16n8k32/k64, e4m3 m16n8k64"}},
     {"ilp", {"1", "2", "4", "8"}},
     {"warps_per_sm", {"1", "2", "4", "8", "16", "32"}}},
    {"compute.tensor_core.fp64", "compute.tensor_core_mma_sync.<precision>", "tensor_instructions"},
    80, true, run_mma, /*per_architecture=*/false, /*runs_sparse_tensor=*/true}};

}  // namespace
}  // namespace ceiling::probes::compute
