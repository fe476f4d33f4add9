// GEMV y = A x, A m x n row-major FP64 (GPGPU'25 §3.2): W = 2mn, Q = (mn + m + n) D (gemv_model).
// CUDA-core: one warp per row, 16-byte loads, 8 loads in flight, shuffle reduction; rows per
// block (2, 4 or 8) chosen per size by timing each once (measured: 8 rows won on an H200 at
// 3968^2 and 7936^2, 4 rows on an H100 at 3328^2, by 5-15%: block geometry, not bandwidth).
// Tensor-core: a block of 4, 8 or 16 warps owns 8 rows; per FP64 mma.m8n8k4 a warp multiplies an 8x4 tile
// of A (8 rows x 4 columns) by a 4x8 B whose every column is the matching piece of x, so D
// accumulates the 8 partial dot products (1/8 of the tensor-core work is useful); the warps
// split the columns and add their partial sums through shared memory; the next step's loads are
// in flight while this step's DMMAs run.
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common.cuh"
#include "gemv_shapes.hpp"
#include "gpu/gpu.hpp"
#include "runner.hpp"
#include "verify.hpp"

namespace ceiling::kernels {
namespace {

constexpr int kCcUnroll = 8;  // 4 KiB of A in flight per warp

// Streaming: A read with ld.global.cs (evict first; A is read once, x by every row), tried beside
// plain loads by the tuner (the ramp's fastest DRAM read configurations use .cs at most sizes).
// Prefetch: the next kCcUnroll x 32 double2 of the row are loaded before this chunk's FMAs (register
// double buffering), so a row of c chunks costs about one memory round trip, not c (in L2, 576^2: 9
// double2 per lane were two round trips, 1088^2 three). Same sums in the same order either way.
template <int Rows, bool Streaming, bool Prefetch>
__global__ void __launch_bounds__(Rows * 32) gemv_cuda_core(const double* __restrict__ A,
                                                            const double* __restrict__ x,
                                                            double* __restrict__ y, long long m,
                                                            long long n) {
  const long long row = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const int lane = threadIdx.x & 31;
  if (row >= m) return;
  const double2* __restrict__ a = reinterpret_cast<const double2*>(A + row * n);  // n even
  const double2* __restrict__ xv = reinterpret_cast<const double2*>(x);
  const long long nv = n / 2;
  double acc[kCcUnroll] = {};
  long long j = lane;
  // A chunk of kCcUnroll x 32 double2 from j0: every load issued before the first FMA, predicated
  // at the row's end; FMAs only on the columns that exist (the executed FMAs are exactly m n: ncu's
  // counters, `ceiling profile`, count W from them).
  const auto load = [&](double2 (&av)[kCcUnroll], double2 (&xx)[kCcUnroll], long long j0) {
#pragma unroll
    for (int u = 0; u < kCcUnroll; ++u) {
      const bool in = j0 + u * 32 < nv;
      av[u] = in ? load_stream<Streaming>(a + j0 + u * 32) : make_double2(0.0, 0.0);
      xx[u] = in ? __ldg(&xv[j0 + u * 32]) : make_double2(0.0, 0.0);
    }
  };
  const auto fmas = [&](const double2 (&av)[kCcUnroll], const double2 (&xx)[kCcUnroll], long long j0) {
#pragma unroll
    for (int u = 0; u < kCcUnroll; ++u)
      if (j0 + u * 32 < nv) acc[u] = fma(av[u].y, xx[u].y, fma(av[u].x, xx[u].x, acc[u]));
  };
  if constexpr (Prefetch) {
    double2 av[kCcUnroll], xx[kCcUnroll];
    load(av, xx, j);
    for (; j < nv; j += kCcUnroll * 32) {
      double2 an[kCcUnroll], xn[kCcUnroll];
      load(an, xn, j + kCcUnroll * 32);
      fmas(av, xx, j);
#pragma unroll
      for (int u = 0; u < kCcUnroll; ++u) {
        av[u] = an[u];
        xx[u] = xn[u];
      }
    }
  } else {
    for (; j + (kCcUnroll - 1) * 32 < nv; j += kCcUnroll * 32) {
      double2 av[kCcUnroll], xx[kCcUnroll];
#pragma unroll
      for (int u = 0; u < kCcUnroll; ++u) av[u] = load_stream<Streaming>(a + j + u * 32);
#pragma unroll
      for (int u = 0; u < kCcUnroll; ++u) xx[u] = __ldg(&xv[j + u * 32]);
#pragma unroll
      for (int u = 0; u < kCcUnroll; ++u) acc[u] = fma(av[u].y, xx[u].y, fma(av[u].x, xx[u].x, acc[u]));
    }
    // The rest (< kCcUnroll x 32 double2) as one predicated chunk. A loop of one load per trip made
    // a short row a chain of L2 latencies (3 us at 450^2 on an H200).
    if (j < nv) {
      double2 av[kCcUnroll], xx[kCcUnroll];
      load(av, xx, j);
      fmas(av, xx, j);
    }
  }
  double s = 0;
#pragma unroll
  for (int u = 0; u < kCcUnroll; ++u) s += acc[u];
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
  if (lane == 0) y[row] = s;
}

// Lane (g, t) of warp w: row r0+g, columns c + 8j + 2t (+1) of each 8*Loads-column step; the .x
// values feed one mma (A[g][t], B[t][*] = x), the .y values a second one, accumulating in D.
// The next step's loads are issued before this step's DMMAs (register double buffering), so the
// DMMA dependency chain hides under memory latency (measured on H200: 3.94 vs 3.62 TB/s at 7936^2).
// Warps (4, 8, 16) split the columns of one 8-row block; Loads (4, 8) double2 per lane per step.
// A block owns 8 rows, so a small matrix has few blocks (576^2: 72 on 132 SMs): there the time is
// a few dependent L2 round trips per warp, and more columns in flight per step (Loads 8) or more
// warps per row block (16) cut their number; the instance times the shapes once and keeps the
// fastest, as the CUDA-core side does.
template <int Loads, int Warps, bool Streaming>
__global__ void __launch_bounds__(Warps * 32) gemv_tensor_core(const double* __restrict__ A,
                                                               const double* __restrict__ x,
                                                               double* __restrict__ y, long long m,
                                                               long long n) {
  __shared__ double partial[Warps][8];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int g = lane >> 2, t = lane & 3;
  const long long r0 = static_cast<long long>(blockIdx.x) * 8;  // m % 8 == 0
  const double2* __restrict__ a = reinterpret_cast<const double2*>(A + (r0 + g) * n);
  const double2* __restrict__ xv = reinterpret_cast<const double2*>(x);
  constexpr int kStep = 8 * Loads;                      // columns per warp step; n % kStep == 0
  constexpr long long kStride = static_cast<long long>(Warps) * kStep;
  double d0 = 0.0, d1 = 0.0, e0 = 0.0, e1 = 0.0;        // two accumulator chains
  long long c = static_cast<long long>(warp) * kStep;
  double2 av[Loads], xx[Loads];
  if (c < n) {
#pragma unroll
    for (int j = 0; j < Loads; ++j) {
      av[j] = load_stream<Streaming>(a + (c + 8 * j + 2 * t) / 2);
      xx[j] = __ldg(&xv[(c + 8 * j + 2 * t) / 2]);
    }
  }
  for (; c < n; c += kStride) {
    double2 an[Loads], xn[Loads];
    if (c + kStride < n) {
#pragma unroll
      for (int j = 0; j < Loads; ++j) {
        an[j] = load_stream<Streaming>(a + (c + kStride + 8 * j + 2 * t) / 2);
        xn[j] = __ldg(&xv[(c + kStride + 8 * j + 2 * t) / 2]);
      }
    }
#pragma unroll
    for (int j = 0; j < Loads; ++j) {
      mma_m8n8k4_fp64(d0, d1, av[j].x, xx[j].x, d0, d1);
      mma_m8n8k4_fp64(e0, e1, av[j].y, xx[j].y, e0, e1);
    }
#pragma unroll
    for (int j = 0; j < Loads; ++j) {
      av[j] = an[j];
      xx[j] = xn[j];
    }
  }
  (void)d1;  // every column of D holds the same dot product; column 0 is read
  (void)e1;
  if (t == 0) partial[warp][g] = d0 + e0;
  __syncthreads();
  if (threadIdx.x < 8) {
    double s = 0.0;
#pragma unroll
    for (int w = 0; w < Warps; ++w) s += partial[w][threadIdx.x];
    if (r0 + threadIdx.x < m) y[r0 + threadIdx.x] = s;
  }
}


// Tensor-core rows: a warp per row, as the CUDA-core kernel reads it (16-byte loads, kCcUnroll per
// lane in flight, the next chunk prefetched), and each load's products go through a DMMA instead of
// FMAs. Lane (g, t) holds the double2 at columns 2 (j0 + 32 u + lane) (+1) of A's row and of x; with
// A[g][t] = the row's value and B[t][g] = x's value, D[g][g] = sum over t of lane (g, t)'s products,
// so the row's dot product is the sum of D's diagonal (8 of its 64 entries useful, the 1/8 the
// 8-row kernel has). The 8-row kernel gives a block 8 rows (72 blocks at 576^2, 144 at 1152^2 on
// 132 SMs: few blocks, or one SM in ten with twice the rows); here rows spread over 2, 4 or 8 rows
// per block like the CUDA-core side. Four chains of accumulators (u mod 4) cut the DMMA chain per chunk to 2 deep.
// Split (1, 2, 4) warps per row, in the L2: a warp issues one DMMA.884 every ~17 cycles (the mma
// probe: 15 FMA/clk/SM from one warp), so a warp per row spends ~n/2 cycles on a row's DMMAs
// after its loads land (0.15 us at 576^2, where the CUDA-core kernel's DFMAs take 36 cycles);
// Split warps take interleaved 32-double2 slices of the row and add their sums in shared memory.
template <int Rows, bool Streaming, bool Prefetch, int Split = 1>
__global__ void __launch_bounds__(Rows * Split * 32) gemv_tensor_core_rows(const double* __restrict__ A,
                                                                           const double* __restrict__ x,
                                                                           double* __restrict__ y, long long m,
                                                                           long long n) {
  static_assert(Split == 1 || Split == 2 || Split == 4, "GEMV rows: 1, 2 or 4 warps per row");
  static_assert(Split == 1 || Rows * Split <= gemv_shapes::kMaxSplitWarps, "GEMV split rows: at most 16 warps per block");
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, part = warp % Split;
  const long long row = static_cast<long long>(blockIdx.x) * Rows + warp / Split;
  // Split 1: warp-uniform exit. Split > 1: the host launches m / Rows whole blocks (m % 8 == 0), so
  // every warp has a row and reaches the barrier below.
  if (Split == 1 && row >= m) return;
  const double2* __restrict__ a = reinterpret_cast<const double2*>(A + row * n) + part * 32;  // n % 64 == 0
  const double2* __restrict__ xv = reinterpret_cast<const double2*>(x) + part * 32;
  const long long nv = n / 2 - part * 32;  // this warp's slices start at part * 32: each in or out whole
  constexpr int kStep = 32 * Split;        // double2 between a warp's slices
  double d[4][2] = {}, e[4][2] = {};
  const auto load = [&](double2 (&av)[kCcUnroll], double2 (&xx)[kCcUnroll], long long j0) {
#pragma unroll
    for (int u = 0; u < kCcUnroll; ++u) {
      const bool in = j0 + u * kStep < nv;
      av[u] = in ? load_stream<Streaming>(a + j0 + u * kStep + lane) : make_double2(0.0, 0.0);
      xx[u] = in ? __ldg(&xv[j0 + u * kStep + lane]) : make_double2(0.0, 0.0);
    }
  };
  const auto mmas = [&](const double2 (&av)[kCcUnroll], const double2 (&xx)[kCcUnroll], long long j0) {
#pragma unroll
    for (int u = 0; u < kCcUnroll; ++u)
      if (j0 + u * kStep < nv) {  // warp-uniform
        mma_m8n8k4_fp64(d[u & 3][0], d[u & 3][1], av[u].x, xx[u].x, d[u & 3][0], d[u & 3][1]);
        mma_m8n8k4_fp64(e[u & 3][0], e[u & 3][1], av[u].y, xx[u].y, e[u & 3][0], e[u & 3][1]);
      }
  };
  long long j0 = 0;
  if constexpr (Prefetch) {
    double2 av[kCcUnroll], xx[kCcUnroll];
    load(av, xx, j0);
    for (; j0 < nv; j0 += kCcUnroll * kStep) {
      double2 an[kCcUnroll], xn[kCcUnroll];
      load(an, xn, j0 + kCcUnroll * kStep);
      mmas(av, xx, j0);
#pragma unroll
      for (int u = 0; u < kCcUnroll; ++u) {
        av[u] = an[u];
        xx[u] = xn[u];
      }
    }
  } else {
    // Whole chunks without predicates, then the rest as one predicated chunk (as the CUDA-core
    // kernel: ncu at 576^2 counted 1.6x its instructions with every chunk predicated).
    for (; j0 + (kCcUnroll - 1) * kStep + 32 <= nv; j0 += kCcUnroll * kStep) {
      double2 av[kCcUnroll], xx[kCcUnroll];
#pragma unroll
      for (int u = 0; u < kCcUnroll; ++u) av[u] = load_stream<Streaming>(a + j0 + u * kStep + lane);
#pragma unroll
      for (int u = 0; u < kCcUnroll; ++u) xx[u] = __ldg(&xv[j0 + u * kStep + lane]);
#pragma unroll
      for (int u = 0; u < kCcUnroll; ++u) {
        mma_m8n8k4_fp64(d[u & 3][0], d[u & 3][1], av[u].x, xx[u].x, d[u & 3][0], d[u & 3][1]);
        mma_m8n8k4_fp64(e[u & 3][0], e[u & 3][1], av[u].y, xx[u].y, e[u & 3][0], e[u & 3][1]);
      }
    }
    if (j0 < nv) {
      double2 av[kCcUnroll], xx[kCcUnroll];
      load(av, xx, j0);
      mmas(av, xx, j0);
    }
  }
  // D[g][g] sits in lane (g, g / 2), element g % 2 ({c0, c1} = D[g][2t], D[g][2t + 1]).
  const int g = lane >> 2, t = lane & 3;
  double c0 = 0.0, c1 = 0.0;
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    c0 += d[q][0] + e[q][0];
    c1 += d[q][1] + e[q][1];
  }
  double s = t == (g >> 1) ? ((g & 1) ? c1 : c0) : 0.0;
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
  if constexpr (Split == 1) {
    if (lane == 0) y[row] = s;
  } else {
    __shared__ double sums[Rows][Split];
    if (lane == 0) sums[warp / Split][part] = s;
    __syncthreads();
    if (part == 0 && lane == 0) {
      double total = 0.0;
#pragma unroll
      for (int q = 0; q < Split; ++q) total += sums[warp / Split][q];
      y[row] = total;
    }
  }
}

class GemvInstance final : public KernelInstance {
 public:
  // launch_config > 0 pins the launch shape (tests check every one); 0 tunes it on first use.
  GemvInstance(long long m, long long n, ComputeUnit unit, const RunContext& ctx, int launch_config)
      : m_(m), n_(n), unit_(unit), cold_(!ctx.in_l2), A_(static_cast<size_t>(m * n)), x_(n), y_(m) {
    if (m % 8 != 0 || n % 64 != 0)
      throw std::invalid_argument("GEMV needs m % 8 == 0 and n % 64 == 0, got " + std::to_string(m) + " x " +
                                  std::to_string(n));
    if (launch_config != 0 && !gemv_shapes::known(unit == ComputeUnit::tensor_core, launch_config))
      throw std::invalid_argument("GEMV: no launch shape " + std::to_string(launch_config) + " (kernels/gemv_shapes.hpp)");
    (unit == ComputeUnit::tensor_core ? tc_config_ : cc_rows_) = launch_config;
  }
  void randomize(std::uint64_t seed) override {
    seed_ = seed;
    fill_random(A_.data(), m_ * n_, seed_);
    fill_random(x_.data(), n_, seed_ ^ kXSalt);
    CUDA_CHECK(cudaDeviceSynchronize());
    if (unit_ == ComputeUnit::cuda_core && cc_rows_ == 0) tune_cuda_core();
    if (unit_ == ComputeUnit::tensor_core && tc_config_ == 0) tune_tensor_core();
  }
  void poison_output() override { poison(y_.data(), y_.bytes()); }
  long long output_elements() const override { return m_; }
  std::string launch_text() const override {
    const bool tc = unit_ == ComputeUnit::tensor_core;
    return gemv_shapes::text(tc, tc ? (tc_config_ ? tc_config_ : gemv_shapes::kTcDefault)
                                    : (cc_rows_ ? cc_rows_ : gemv_shapes::kCcDefault));
  }
  void launch(Stream s) override {
    if (unit_ == ComputeUnit::tensor_core)
      launch_tensor_core(tc_config_ ? tc_config_ : gemv_shapes::kTcDefault, s);
    else
      launch_cuda_core(cc_rows_ ? cc_rows_ : gemv_shapes::kCcDefault, s);
    CUDA_CHECK_LAUNCH();
  }
  Verification verify() override {
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<double> out(static_cast<size_t>(m_));
    CUDA_CHECK(cudaMemcpy(out.data(), y_.data(), y_.bytes(), cudaMemcpyDeviceToHost));
    std::vector<double> xh(static_cast<size_t>(n_));
    for (long long j = 0; j < n_; ++j) xh[static_cast<size_t>(j)] = random_value(seed_ ^ kXSalt, static_cast<std::uint64_t>(j));
    // Norm-wise: a correct FP64 sum of n <= 1e5 terms lands near 1e-15; wrong indexing near 1.
    return check_normwise(
        out,
        [&](long long i) {
          long double ref = 0;
          const std::uint64_t base = static_cast<std::uint64_t>(i * n_);
          for (long long j = 0; j < n_; ++j)
            ref += static_cast<long double>(random_value(seed_, base + static_cast<std::uint64_t>(j))) *
                   xh[static_cast<size_t>(j)];
          return ref;
        },
        1e-12);
  }

 private:
  // config = rows per block (2, 4, 8) + 16 when A is read with streaming loads + 32 with the next
  // chunk prefetched.
  template <int Rows>
  void launch_cc(bool streaming, bool prefetch, unsigned grid, cudaStream_t s) {
    const auto f = streaming ? (prefetch ? gemv_cuda_core<Rows, true, true> : gemv_cuda_core<Rows, true, false>)
                             : (prefetch ? gemv_cuda_core<Rows, false, true> : gemv_cuda_core<Rows, false, false>);
    f<<<grid, Rows * 32, 0, s>>>(A_.data(), x_.data(), y_.data(), m_, n_);
  }
  void launch_cuda_core(int config, cudaStream_t s) {
    const int rows = config & 15;
    const auto grid = static_cast<unsigned>((m_ + rows - 1) / rows);
    const bool streaming = config & gemv_shapes::kCcStreaming, prefetch = config & gemv_shapes::kCcPrefetch;
    switch (rows) {
      case 2: launch_cc<2>(streaming, prefetch, grid, s); break;
      case 4: launch_cc<4>(streaming, prefetch, grid, s); break;
      case 8: launch_cc<8>(streaming, prefetch, grid, s); break;
      default: throw std::logic_error("GEMV: no CUDA-core launch shape " + std::to_string(config));
    }
  }
  // Times each block shape (and, out of L2, each load kind) once (median of 5, in the L2 state
  // validate will time it in) and keeps the fastest: the CUDA-core side gets its best launch, as
  // the probes search theirs.
  void tune_cuda_core() {
    cc_rows_ = pick_fastest(gemv_shapes::cuda_core(cold_), [this](int config, cudaStream_t s) { launch_cuda_core(config, s); },
                            cold_);
  }

  // Tensor-core shapes (loads per step, warps per 8-row block) timed once like the CUDA-core ones;
  // out of L2 also with streaming loads of A.
  void tune_tensor_core() {
    tc_config_ = pick_fastest(gemv_shapes::tensor_core(cold_),
                              [this](int config, cudaStream_t s) { launch_tensor_core(config, s); }, cold_);
  }
  template <int Loads, int Warps>
  void launch_tc(bool streaming, cudaStream_t s) {
    const auto grid = static_cast<unsigned>(m_ / 8);
    if (streaming) gemv_tensor_core<Loads, Warps, true><<<grid, Warps * 32, 0, s>>>(A_.data(), x_.data(), y_.data(), m_, n_);
    else gemv_tensor_core<Loads, Warps, false><<<grid, Warps * 32, 0, s>>>(A_.data(), x_.data(), y_.data(), m_, n_);
  }
  template <int Rows>
  void launch_tc_rows(bool streaming, bool prefetch, int split, cudaStream_t s) {
    const auto grid = static_cast<unsigned>((m_ + Rows - 1) / Rows);  // whole blocks: m % 8 == 0
    if (split == 1) {
      const auto f = streaming ? (prefetch ? gemv_tensor_core_rows<Rows, true, true> : gemv_tensor_core_rows<Rows, true, false>)
                               : (prefetch ? gemv_tensor_core_rows<Rows, false, true> : gemv_tensor_core_rows<Rows, false, false>);
      f<<<grid, Rows * 32, 0, s>>>(A_.data(), x_.data(), y_.data(), m_, n_);
      return;
    }
    if (streaming) throw std::logic_error("GEMV: split rows are an in-L2 shape (plain loads)");
    if (split == 2) {
      const auto f = prefetch ? gemv_tensor_core_rows<Rows, false, true, 2> : gemv_tensor_core_rows<Rows, false, false, 2>;
      f<<<grid, Rows * 2 * 32, 0, s>>>(A_.data(), x_.data(), y_.data(), m_, n_);
    } else if constexpr (Rows * 4 <= gemv_shapes::kMaxSplitWarps) {
      const auto f = prefetch ? gemv_tensor_core_rows<Rows, false, true, 4> : gemv_tensor_core_rows<Rows, false, false, 4>;
      f<<<grid, Rows * 4 * 32, 0, s>>>(A_.data(), x_.data(), y_.data(), m_, n_);
    } else {
      throw std::logic_error("GEMV: 4 warps per row take 2 or 4 rows per block");
    }
  }
  void launch_tensor_core(int config, cudaStream_t s) {
    const bool streaming = config & gemv_shapes::kTcStreaming;
    if (config & gemv_shapes::kTcRowKernel) {
      const bool prefetch = config & gemv_shapes::kTcRowPrefetch;
      const int split = gemv_shapes::tc_row_warps(config);
      switch (config & 15) {
        case 2: launch_tc_rows<2>(streaming, prefetch, split, s); return;
        case 4: launch_tc_rows<4>(streaming, prefetch, split, s); return;
        case 8: launch_tc_rows<8>(streaming, prefetch, split, s); return;
        default: throw std::logic_error("GEMV: no tensor-core launch shape " + std::to_string(config));
      }
    }
    switch (config & ~gemv_shapes::kTcStreaming) {
      case 8 | 8 << 4: launch_tc<8, 8>(streaming, s); break;
      case 4 | 16 << 4: launch_tc<4, 16>(streaming, s); break;
      case 8 | 16 << 4: launch_tc<8, 16>(streaming, s); break;
      case 8 | 4 << 4: launch_tc<8, 4>(streaming, s); break;
      case 4 | 8 << 4: launch_tc<4, 8>(streaming, s); break;
      default: throw std::logic_error("GEMV: no tensor-core launch shape " + std::to_string(config));
    }
  }

  static constexpr std::uint64_t kXSalt = 0xC0FFEEull;
  int tc_config_ = 0;  // tensor-core launch configuration, 0 until tuned
  int cc_rows_ = 0;  // CUDA-core launch configuration (rows per block, +16 streaming loads), 0 until tuned
  long long m_, n_;
  ComputeUnit unit_;
  bool cold_ = false;  // out of L2: tuned with the L2 evicted, as validate times it
  gpu::DeviceBuffer<double> A_, x_, y_;
  std::uint64_t seed_ = 1;
};

KernelVariant gemv_variant(ComputeUnit unit) {
  KernelVariant v;
  v.kind = "gemv";
  v.unit = unit;
  v.precision = Precision::fp64;
  const bool tc = unit == ComputeUnit::tensor_core;
  v.description = tc ? "FP64 mma.m8n8k4, tuned per size: 8 rows per block with x as every column of B (4/8/16 warps split the "
                       "columns, 32 or 64 per warp step, loads double-buffered), or a warp per row with the products on D's "
                       "diagonal (2/4/8 rows per block, 16-byte loads, next chunk prefetched or not; in the L2 also 2 or 4 warps "
                       "per row, summed in shared memory); out of L2 also streaming loads of A"
                     : "one warp per row, 16-byte loads, 8 in flight (and the next 8 prefetched, tuned), shuffle reduction, "
                       "2/4/8 rows per block and (out of L2) plain or streaming loads of A tuned per size";
  v.tensor_core_fraction = tc ? 1.0 / 8.0 : 1.0;  // one useful column of the 8 in D
  // Square, multiples of 64 (8-row blocks, 32-column steps).
  v.round = [](KernelParams params) {
    const double n = std::max(64.0, std::floor((params.at("n") + 32) / 64) * 64);
    params["n"] = n;
    params["m"] = n;
    return params;
  };
  v.create = [unit](const KernelParams& params, const RunContext& ctx) -> std::unique_ptr<KernelInstance> {
    const auto pinned = params.find("launch_config");
    return std::make_unique<GemvInstance>(static_cast<long long>(params.at("m")), static_cast<long long>(params.at("n")),
                                          unit, ctx, pinned == params.end() ? 0 : static_cast<int>(pinned->second));
  };
  if (tc)
    v.sass = {{"gemv_tensor_core", "DMMA", ""}};
  else
    v.sass = {{"gemv_cuda_core", "LDG\\.E[A-Z0-9.]*\\.128", "DMMA"}};
  return v;
}

const Registrar gemv_fp64_cc{gemv_variant(ComputeUnit::cuda_core)};
const Registrar gemv_fp64_tc{gemv_variant(ComputeUnit::tensor_core)};

}  // namespace
}  // namespace ceiling::kernels
