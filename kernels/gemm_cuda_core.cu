// GEMM C = A B in FP64 on the CUDA cores (DFMA): the CUDA-core side of the FP64 TC/CC pair in the
// compute-bound regime (Eq. 22 past the ridge), tuned toward the DFMA ceiling (no DMMA, no cuBLAS).
// Column-major A (m x k), B (k x n), C (m x n); beta = 0 (C is written, never read).
//
// The ceiling: a GEMM's inner loop is an outer product, every DFMA takes an operand and its
// accumulator fresh from the register file, and every k step loads TM + TN operands from shared
// memory. On sm_90 the DFMA pipe does not stay full that way: the register-only outer product
// reaches 29.9-30.2 of 33.3 TFLOP/s on the H200 (probe cuda-core), the same loop with its operand
// loads 28.4 (probe gemm-loop, compute.cuda_core_gemm_loop.fp64), and the model bounds this kernel
// by the latter where the descriptor has it.
//
// Design (the classic SIMT register-blocked GEMM, as in CUTLASS's SIMT path), 2026-11-26:
//  - B is first transposed into a scratch buffer (k rows of n contiguous values; one extra read
//    and write of B, 1% of the time at 8192^3, 4% at 1024^3), so both operand tiles are rows of
//    contiguous values that cp.async copies straight into shared memory (16 B each, no staging).
//  - kWM x kWN warps per block, each warp a 32 x 64 tile of C, each thread an 8 x 8 micro-tile in
//    64 FP64 registers: per k step 8 + 8 values from shared memory (8 LDS.128) feed 64 DFMAs.
//  - Copies: thread t copies 4 chunks 256 B apart of k row t / 16 of each operand tile (lanes
//    0-15 and 16-31 read 256 contiguous bytes of two rows): one global pointer per operand,
//    advanced by kBK rows per tile, immediate offsets. (The former mapping, chunk t + 256 i,
//    re-derived 8 64-bit addresses per tile: ~70 integer instructions per 1024 DFMAs, 3% of the
//    time.)
//  - No block-wide barrier in the k loop: kStages stages of kBK k rows, two mbarriers per stage.
//    full[s] completes when every thread's copies of the tile in stage s landed
//    (cp.async.mbarrier.arrive.noinc), empty[s] when all 8 warps read it. Tile t + kStages - 2 is
//    issued at the start of tile t into the stage tile t - 2 used, so a warp waits only when
//    another is more than a whole tile behind. (A __syncthreads per tile of 16 cost 3.5%: every
//    warp waited for the slowest.)
//  - The fragments of step l + 1 are loaded into a second register set while step l computes
//    (fragment double buffering), so no DFMA waits for a shared load.
//  - Lane layout: tm (0..3) from lane bits 1 and 4, tn (0..7) from lane bits 0, 2 and 3; lanes i
//    and i^1 read the same A addresses, i and i^2 the same B: two wavefronts per LDS.128, no bank
//    conflicts (ncu on the H200: 0 conflicts, 2.0 wavefronts per shared load).
//  - Blocks are walked in groups of 8 tile rows (m) so a wave of blocks shares A and B panels in L2.
//  - Tiles to blocks (gemm_stream_k.hpp): whole tiles one block each for every whole wave; the
//    remaining tiles shared out by k tile over one block per SM (stream-K), a shared tile written
//    by the last of its blocks to finish, which adds all partial sums in block order (a fixed order:
//    the result does not depend on timing). Before (to 2026-11-28), 1024^3's 64 tiles split k in 2
//    over 128 blocks, zeroing C and adding with atomics (7 + 7 us of 112), and 2048^3 to 8192^3
//    ended on a last wave 94%, 76% and 3% full.
// Measured (scratch benchmark `dg3`, H100, GEMM kernel alone, checked): 4096^3 24.5 TFLOP/s (the
// 2026-11-26 design: 2 stages of 16 rows, a barrier per tile) -> 25.3 (copy addressing) -> 25.7
// (this one); 8192^3 24.6 -> 25.7, 2048^3 24.0 -> 25.2, 1024^3 18.4 -> 19.4. The steady state is
// bounded by the register file: each DFMA reads its accumulator and one operand (the other from
// the reuse cache), and ptxas breaks reuse at every yield point (ncu: FP64 pipe 76% active;
// without the copies and the barrier the loop reaches 90% of the outer-product ceiling).
// Sizes are rounded to multiples of 128 (m, n, k), so no edge handling is needed.
#include <memory>
#include <stdexcept>
#include <string>

#include "gemm_common.cuh"
#include "gemm_stream_k.hpp"
#include "gpu/cp_async.cuh"

namespace ceiling::kernels {
namespace {

constexpr int kWM = 4, kWN = 2;           // warps per block (m, n)
constexpr int kMinBlocks = 1;             // blocks per SM the registers are budgeted for
// k rows per tile and shared-memory stages: 32 x 3 (192 KiB) where the device gives a block that much
// shared memory (sm_90), else 16 x 4 (128 KiB; sm_80's limit is 163 KiB). 4096^3 on an H100: 25.7 and
// 25.4 TFLOP/s.
constexpr int kBK = 32, kStages = 3;
constexpr int kBKSmall = 16, kStagesSmall = 4;
constexpr int kWarpM = 32, kWarpN = 64;   // warp tile
constexpr int kTM = 8, kTN = 8;           // thread micro-tile: 4 x 8 threads per warp
constexpr int kThreads = 32 * kWM * kWN;
constexpr int kWarps = kThreads / 32;
constexpr int kBM = kWM * kWarpM, kBN = kWN * kWarpN;  // block tile of C
constexpr int kGroupM = 8;                // block rasterization: tile rows per group
constexpr int kTile = 128;                // size multiple (v.round)
template <int BK, int S>
constexpr int smem_bytes() { return S * BK * (kBM + kBN) * static_cast<int>(sizeof(double)); }
constexpr int kCopyRows = kThreads / 16;  // k rows one pass of the copy covers (16 threads per row)

static_assert(kWarpM / kTM * (kWarpN / kTN) == 32, "one micro-tile per lane");
static_assert(kBM == 128 && kBN == 128, "a k row of a tile is 64 chunks of 16 B: 16 threads x 4 chunks 256 B apart");
static_assert(kTile % kBM == 0 && kTile % kBN == 0 && kTile % kBK == 0 && kTile % kBKSmall == 0,
              "rounded sizes are whole tiles");

// Bt (k x n, n contiguous per k row) = B (k x n column-major): 32 x 32 tiles through shared memory.
__global__ void transpose_b(int k, int n, const double* __restrict__ B, double* __restrict__ Bt) {
  __shared__ double t[32][33];
  const int k0 = static_cast<int>(blockIdx.x) * 32, j0 = static_cast<int>(blockIdx.y) * 32;
  for (int r = static_cast<int>(threadIdx.y); r < 32; r += 8)
    t[r][threadIdx.x] = B[(k0 + threadIdx.x) + static_cast<long long>(j0 + r) * k];
  __syncthreads();
  for (int r = static_cast<int>(threadIdx.y); r < 32; r += 8)
    Bt[static_cast<long long>(k0 + r) * n + j0 + threadIdx.x] = t[threadIdx.x][r];
}

using gpu::cp_async16;
using gpu::cp_async_mbar_arrive;
using gpu::mbar_arrive;
using gpu::mbar_init;
using gpu::mbar_init_fence;
using gpu::mbar_wait_parity;

template <int BK, int S>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    dgemm_cuda_core(int m, int n, int k, gemm::StreamKPlan plan, const double* __restrict__ A,
                    const double* __restrict__ Bt, double* __restrict__ C, double* __restrict__ partials,
                    int* __restrict__ arrivals) {
  static_assert(BK % kCopyRows == 0, "whole copy passes per tile");
  static_assert(S >= 3, "a tile is issued two tiles after its stage was last read");
  extern __shared__ __align__(16) double smem[];
  __shared__ __align__(8) uint64_t full[S], empty[S];
  __shared__ int finishes;                            // this block adds the partial sums of the tile
  double* const As = smem;                            // [stage][k row][kBM]
  double* const Bs = smem + S * BK * kBM;             // [stage][k row][kBN]
  const int tid = static_cast<int>(threadIdx.x);
  const int k_tiles = k / BK;

  if (tid < S) {
    mbar_init(&full[tid], kThreads);
    mbar_init(&empty[tid], kWarps);
  }
  mbar_init_fence();
  __syncthreads();

  // The copy: row kr = tid / 16 (+ kCopyRows per pass), chunks at columns kc + 32 i.
  const int kr = tid / 16, kc = 2 * (tid % 16);
  const long long step_a = static_cast<long long>(BK) * m, step_b = static_cast<long long>(BK) * n;
  double* const sa = As + kr * kBM + kc;
  double* const sb = Bs + kr * kBN + kc;
  const int warp = tid / 32, lane = tid % 32;
  const int tm = ((lane >> 1) & 1) | ((lane >> 3) & 2);
  const int tn = (lane & 1) | ((lane >> 1) & 6);
  const int a_frag = (warp % kWM) * kWarpM + 2 * tm;  // rows a_frag + 8q + {0, 1}, q = 0..3
  const int b_frag = (warp / kWM) * kWarpN + 2 * tn;  // columns b_frag + 16q + {0, 1}, q = 0..3

  double acc[kTM][kTN];
  double fa[2][kTM], fb[2][kTN];
  auto load_fragments = [&](int st, int l, int set) {
    const double* as = As + (st * BK + l) * kBM + a_frag;
    const double* bs = Bs + (st * BK + l) * kBN + b_frag;
#pragma unroll
    for (int q = 0; q < kTM / 2; ++q) {
      const double2 v = *reinterpret_cast<const double2*>(as + 8 * q);
      fa[set][2 * q] = v.x;
      fa[set][2 * q + 1] = v.y;
    }
#pragma unroll
    for (int q = 0; q < kTN / 2; ++q) {
      const double2 v = *reinterpret_cast<const double2*>(bs + 16 * q);
      fb[set][2 * q] = v.x;
      fb[set][2 * q + 1] = v.y;
    }
  };

  // Tile -> origin of its block of C: groups of kGroupM tile rows, m fastest within a group.
  const int tiles_m = m / kBM, tiles_n = n / kBN;
  auto origin = [&](long long tile, long long& row0, long long& col0) {
    const long long per_group = static_cast<long long>(kGroupM) * tiles_n;
    const long long group = tile / per_group, in_group = tile % per_group;
    const long long first_m = group * kGroupM;
    const long long group_m = min(static_cast<long long>(tiles_m) - first_m, static_cast<long long>(kGroupM));
    row0 = (first_m + in_group % group_m) * kBM;
    col0 = (in_group / group_m) * kBN;
  };

  // acc = the products of k tiles [kt0, kt0 + count) of the tile at (row0, col0). `seq` counts the k
  // tiles this block consumed before: k tile number g of the block goes through stage g % S, whose
  // barriers are then in phase g / S, so one block can run several tiles back to back.
  int seq = 0;
  auto run_tile = [&](long long row0, long long col0, int kt0, int count) {
    const double* ga = A + row0 + kc + (static_cast<long long>(kt0) * BK + kr) * m;
    const double* gb = Bt + col0 + kc + (static_cast<long long>(kt0) * BK + kr) * n;
    // k tile t (< count) into stage (seq + t) % S, once every warp read the tile that stage held.
    auto issue = [&](int t) {
      const int g = seq + t, st = g % S;
      if (g >= S) mbar_wait_parity(&empty[st], (g / S - 1) & 1);
#pragma unroll
      for (int p = 0; p < BK / kCopyRows; ++p) {
        const double* a = ga + static_cast<long long>(p) * kCopyRows * m;
        const double* b = gb + static_cast<long long>(p) * kCopyRows * n;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          cp_async16(sa + (st * BK + p * kCopyRows) * kBM + 32 * i, a + 32 * i);
          cp_async16(sb + (st * BK + p * kCopyRows) * kBN + 32 * i, b + 32 * i);
        }
      }
      cp_async_mbar_arrive(&full[st]);
      ga += step_a;
      gb += step_b;
    };
#pragma unroll
    for (int i = 0; i < kTM; ++i)
#pragma unroll
      for (int j = 0; j < kTN; ++j) acc[i][j] = 0;
    for (int t = 0; t < S - 2 && t < count; ++t) issue(t);  // prologue
    mbar_wait_parity(&full[seq % S], (seq / S) & 1);
    load_fragments(seq % S, 0, 0);
    for (int kt = 0; kt < count; ++kt) {
      const int g = seq + kt, st = g % S;
      if (kt + S - 2 < count) issue(kt + S - 2);
#pragma unroll
      for (int l = 0; l < BK; ++l) {
        if (l == BK - 1) {  // k tile kt read to the end (step BK - 1's fragments are in registers)
          __syncwarp();
          if (lane == 0) mbar_arrive(&empty[st]);
          if (kt + 1 < count) {
            const int ns = (g + 1) % S;
            mbar_wait_parity(&full[ns], ((g + 1) / S) & 1);
            load_fragments(ns, 0, (l + 1) & 1);
          }
        } else {
          load_fragments(st, l + 1, (l + 1) & 1);
        }
#pragma unroll
        for (int i = 0; i < kTM; ++i)
#pragma unroll
          for (int j = 0; j < kTN; ++j) acc[i][j] = fma(fa[l & 1][i], fb[l & 1][j], acc[i][j]);  // k order per output
      }
    }
    seq += count;
  };

  // acc[i][j] is C(row0 + a_frag + 8(i/2) + i%2, col0 + b_frag + 16(j/2) + j%2); row pairs are
  // contiguous in column-major C, so double2 stores. __stcg: C is not read again here.
  auto store_c = [&](long long row0, long long col0) {
    double* const c_base = C + row0 + a_frag + (col0 + b_frag) * static_cast<long long>(m);
#pragma unroll
    for (int j = 0; j < kTN; ++j) {
      double* const c_col = c_base + static_cast<long long>(16 * (j / 2) + j % 2) * m;
#pragma unroll
      for (int q = 0; q < kTM / 2; ++q)
        __stcg(reinterpret_cast<double2*>(c_col + 8 * q), make_double2(acc[2 * q][j], acc[2 * q + 1][j]));
    }
  };

  // Blocks below dp_tiles: tile blockIdx whole. The others (stream-K block s): units [unit_begin(s),
  // unit_begin(s + 1)) of the shared tiles, tile by tile.
  const long long b = blockIdx.x;
  const bool whole = b < plan.dp_tiles;
  const int s = whole ? 0 : static_cast<int>(b - plan.dp_tiles);
  const long long u_end = whole ? k_tiles : plan.unit_begin(s + 1);
  for (long long u = whole ? 0 : plan.unit_begin(s); u < u_end;) {
    const long long t = whole ? b : plan.dp_tiles + u / k_tiles;  // tile of C
    const int kt0 = static_cast<int>(u % k_tiles);
    const int count = static_cast<int>(min(static_cast<long long>(k_tiles - kt0), u_end - u));
    {
      long long row0, col0;
      origin(t, row0, col0);
      run_tile(row0, col0, kt0, count);
    }
    u += count;
    long long row0, col0;
    origin(t, row0, col0);
    const int first = whole ? 0 : plan.first_block(t - plan.dp_tiles);
    const int last = whole ? 0 : plan.last_block(t - plan.dp_tiles);
    if (first == last) {  // the whole tile here
      store_c(row0, col0);
      continue;
    }
    // A partial sum: to this block's workspace slot (element (j, q) of thread tid at (j * 4 + q) * 256 +
    // tid: a warp's double2 stores are 512 contiguous bytes), then count the arrival.
    const long long st = t - plan.dp_tiles;  // among the shared tiles
    double2* const mine = reinterpret_cast<double2*>(partials) + plan.slot(s, st) * (kBM * kBN / 2);
#pragma unroll
    for (int j = 0; j < kTN; ++j)
#pragma unroll
      for (int q = 0; q < kTM / 2; ++q)
        __stcg(mine + (j * 4 + q) * kThreads + tid, make_double2(acc[2 * q][j], acc[2 * q + 1][j]));
    __threadfence();
    __syncthreads();
    if (tid == 0) {
      finishes = atomicAdd(&arrivals[st], 1) == last - first;
      if (finishes) arrivals[st] = 0;  // ready for the next launch
    }
    __syncthreads();
    if (!finishes) continue;
    __threadfence();
    // The last to arrive: C = the partial sums of blocks first..last, added in that order (its own is
    // read back from the workspace like the others), in acc.
    const double2* const slots = reinterpret_cast<const double2*>(partials) + tid;
    for (int c = first; c <= last; ++c) {
      const double2* const src = slots + plan.slot(c, st) * (kBM * kBN / 2);
#pragma unroll
      for (int j = 0; j < kTN; ++j)
#pragma unroll
        for (int q = 0; q < kTM / 2; ++q) {
          const double2 v = __ldcg(src + (j * 4 + q) * kThreads);
          acc[2 * q][j] = c == first ? v.x : acc[2 * q][j] + v.x;
          acc[2 * q + 1][j] = c == first ? v.y : acc[2 * q + 1][j] + v.y;
        }
    }
    store_c(row0, col0);
  }
}

class CudaCoreGemm final : public gemm::GemmInstanceBase<double, double> {
 public:
  // pinned: 0 picks the pipeline by the device's shared memory; 1 (32 x 3) or 2 (16 x 4) pins it (GPU tests).
  CudaCoreGemm(const KernelParams& p, int pinned)
      : GemmInstanceBase(p, {1e-12, 0}), bt_(static_cast<size_t>(k_ * n_)) {
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device));
    int optin = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    const bool fits = optin >= smem_bytes<kBK, kStages>() + 1024;  // + the mbarriers (static) and some slack
    if (pinned != 0 && pinned != 1 && pinned != 2)
      throw std::invalid_argument("DFMA GEMM: no pipeline " + std::to_string(pinned) + " (1: 32 x 3, 2: 16 x 4)");
    if (pinned == 1 && !fits)
      throw std::invalid_argument("DFMA GEMM: pipeline 1 needs " + std::to_string(smem_bytes<kBK, kStages>()) +
                                  " bytes of shared memory per block; this device gives " + std::to_string(optin));
    large_ = pinned == 0 ? fits : pinned == 1;
    static const bool configured = [] {
      CUDA_CHECK(cudaFuncSetAttribute(dgemm_cuda_core<kBKSmall, kStagesSmall>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      smem_bytes<kBKSmall, kStagesSmall>()));
      return true;
    }();
    (void)configured;
    if (large_) {
      static const bool configured_large = [] {
        CUDA_CHECK(cudaFuncSetAttribute(dgemm_cuda_core<kBK, kStages>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        smem_bytes<kBK, kStages>()));
        return true;
      }();
      (void)configured_large;
    }
    const int k_tiles = static_cast<int>(k_ / (large_ ? kBK : kBKSmall));
    plan_ = gemm::plan_stream_k((m_ / kBM) * (n_ / kBN), k_tiles, sms_);
    partials_ = gpu::DeviceBuffer<double>(static_cast<size_t>(std::max<long long>(
        1, static_cast<long long>(plan_.sk_blocks) * plan_.slots_per_block * kBM * kBN)));
    arrivals_ = gpu::DeviceBuffer<int>(static_cast<size_t>(std::max<long long>(1, plan_.sk_tiles)));
    CUDA_CHECK(cudaMemset(arrivals_.data(), 0, arrivals_.bytes()));
  }
  void poison_output() override {
    GemmInstanceBase::poison_output();
    CUDA_CHECK(cudaMemset(bt_.data(), 0xFF, bt_.bytes()));  // a stale transpose cannot pass the check
    CUDA_CHECK(cudaMemset(partials_.data(), 0xFF, partials_.bytes()));  // nor a stale partial sum
    // arrivals_ is not reset: every launch leaves it at 0 (the GPU test checks a second launch).
  }
  void launch(Stream s) override {
    transpose_b<<<dim3(static_cast<unsigned>(k_ / 32), static_cast<unsigned>(n_ / 32)), dim3(32, 8), 0, s>>>(
        static_cast<int>(k_), static_cast<int>(n_), b_.data(), bt_.data());
    const auto blocks = static_cast<unsigned>(plan_.blocks());
    const int m = static_cast<int>(m_), n = static_cast<int>(n_), k = static_cast<int>(k_);
    if (large_)
      dgemm_cuda_core<kBK, kStages><<<blocks, kThreads, smem_bytes<kBK, kStages>(), s>>>(
          m, n, k, plan_, a_.data(), bt_.data(), c_.data(), partials_.data(), arrivals_.data());
    else
      dgemm_cuda_core<kBKSmall, kStagesSmall><<<blocks, kThreads, smem_bytes<kBKSmall, kStagesSmall>(), s>>>(
          m, n, k, plan_, a_.data(), bt_.data(), c_.data(), partials_.data(), arrivals_.data());
  }
  std::string launch_text() const override {
    if (plan_.sk_blocks == 0)
      return std::to_string(plan_.tiles) + " tiles in whole waves of " + std::to_string(sms_) + " SMs";
    return std::to_string(plan_.dp_tiles) + " tiles one block each, " + std::to_string(plan_.sk_tiles) +
           " shared by k tile over " + std::to_string(plan_.sk_blocks) + " blocks (stream-K)";
  }

 private:
  gpu::DeviceBuffer<double> bt_;  // B transposed, rebuilt by every launch
  int sms_ = 0;
  bool large_ = false;  // 32 x 3 stages fit (else 16 x 4)
  gemm::StreamKPlan plan_;
  gpu::DeviceBuffer<double> partials_;  // stream-K partial sums: [block][slot][tile of C]
  gpu::DeviceBuffer<int> arrivals_;     // per shared tile: blocks done with it (0 between launches)
};

KernelVariant cuda_core_variant() {
  KernelVariant v;
  v.kind = "gemm";
  v.unit = ComputeUnit::cuda_core;
  v.precision = Precision::fp64;
  v.description =
      "FP64 DFMA, B transposed first, 128x128 tiles of C per 256-thread block, 8x8 outputs per thread, cp.async "
      "into 3 shared-memory stages of 32 k rows (4 of 16 where a block gets less than 193 KiB) synchronised by "
      "mbarriers (no block barrier in the k loop), "
      "fragments double-buffered in registers; the tiles past the last whole wave shared out by k tile over one "
      "block per SM (stream-K), a shared tile's partial sums added in block order by the last block to finish";
  v.round = [](KernelParams p) {
    for (const char* d : {"m", "n", "k"})
      p[d] = std::max(static_cast<double>(kTile), std::round(p.at(d) / kTile) * kTile);
    return p;
  };
  v.create = [](const KernelParams& params, const RunContext&) -> std::unique_ptr<KernelInstance> {
    const auto pinned = params.find("launch_config");
    return std::make_unique<CudaCoreGemm>(params, pinned == params.end() ? 0 : static_cast<int>(pinned->second));
  };
  v.adjust_model = [](const KernelParams& p, KernelModel k) {
    k = gemm::without_c_read(p, std::move(k));
    // One pass over the data (KernelModel::passes): transpose_b is a second launch the bound omits (a bound
    // may omit a cost), and Eq. 22 pairs results of equal passes (cuBLAS: one).
    return k;
  };
  v.sass = {{"dgemm_cuda_core", "DFMA", "DMMA"}, {"dgemm_cuda_core", "LDGSTS", ""}};
  return v;
}

const Registrar gemm_cuda_core{cuda_core_variant()};

}  // namespace
}  // namespace ceiling::kernels
