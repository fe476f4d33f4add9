// GEMM C = A B in FP64 on the CUDA cores (DFMA): the CUDA-core side of the FP64 TC/CC pair in the
// compute-bound regime (Eq. 22 past the ridge), tuned toward the DFMA ceiling (no DMMA, no cuBLAS).
// Column-major A (m x k), B (k x n), C (m x n); beta = 0 (C is written, never read).
//
// The ceiling: a GEMM's inner loop is an outer product, every DFMA takes an operand and its
// accumulator fresh from the register file; on sm_90 the DFMA pipe does not stay full that way
// (probe cuda-core, compute.cuda_core_outer_product.fp64: 29.9 of 33.3 TFLOP/s on the H200), and
// the model bounds this kernel by that rate.
//
// Design (the classic SIMT register-blocked GEMM, as in CUTLASS's SIMT path), 2026-11-26:
//  - B is first transposed into a scratch buffer (k rows of n contiguous values; one extra read
//    and write of B, < 1% of the time at 8192^3), so both operand tiles are rows of contiguous
//    values that cp.async copies straight into shared memory (16 B each, no register staging).
//  - kWM x kWN warps per block, each warp a 32 x 64 tile of C, each thread an 8 x 8 micro-tile in
//    64 FP64 registers: per k step 8 + 8 values from shared memory (8 LDS.128) feed 64 DFMAs.
//  - kStages shared-memory stages of kBK k rows (cp.async groups); one barrier per k tile.
//  - The fragments of step l + 1 are loaded into a second register set while step l computes
//    (fragment double buffering), so no DFMA waits for a shared load.
//  - Lane layout: tm (0..3) from lane bits 1 and 4, tn (0..7) from lane bits 0, 2 and 3; lanes i
//    and i^1 read the same A addresses, i and i^2 the same B: two wavefronts per LDS.128, no bank
//    conflicts (ncu on the H200: 0 conflicts, 2.0 wavefronts per shared load).
//  - Blocks are walked in groups of 8 tile rows (m) so a wave of blocks shares A and B panels in L2.
//  - Split k where the tiles of C fill less than one block per SM (1024^3: 64 tiles on 132 SMs):
//    `splits` blocks per tile each take a k range and add their products into C, zeroed first
//    (atomicAdd; with two splits 0 + a + b = 0 + b + a, so the result does not depend on the order).
// Measured (scratch benchmark, H200, 8192^3, checked): the previous design (register-staged tiles
// transposed on the way, 2 stages of 8) 17.2 TFLOP/s; this one 25.2 (BK 16, 2 stages); cuBLAS DMMA
// 56.4. ncu: FP64 pipe 78% active, 2 warps per scheduler (236 registers), stalls: the pipe and the
// DFMA's fixed latency, no shared-memory bank conflicts.
// Sizes are rounded to multiples of 128 (m, n, k), so no edge handling is needed.
#include <memory>

#include "gemm_common.cuh"
#include "gpu/cp_async.cuh"

namespace ceiling::kernels {
namespace {

constexpr int kWM = 4, kWN = 2;           // warps per block (m, n)
constexpr int kMinBlocks = 1;             // blocks per SM the registers are budgeted for
constexpr int kBK = 16, kStages = 2;      // k rows per tile, shared-memory stages
constexpr int kWarpM = 32, kWarpN = 64;   // warp tile
constexpr int kTM = 8, kTN = 8;           // thread micro-tile: 4 x 8 threads per warp
constexpr int kThreads = 32 * kWM * kWN;
constexpr int kBM = kWM * kWarpM, kBN = kWN * kWarpN;  // block tile of C
constexpr int kGroupM = 8;                // block rasterization: tile rows per group
constexpr int kTile = 128;                // size multiple (v.round)
constexpr int kSmemBytes = kStages * kBK * (kBM + kBN) * static_cast<int>(sizeof(double));
constexpr int kAChunks = kBK * kBM / 2 / kThreads, kBChunks = kBK * kBN / 2 / kThreads;  // 16-byte copies per thread

static_assert(kWarpM / kTM * (kWarpN / kTN) == 32, "one micro-tile per lane");
static_assert(kAChunks >= 1 && kBChunks >= 1 && kBK * kBM / 2 % kThreads == 0 && kBK * kBN / 2 % kThreads == 0,
              "whole 16-byte copies per thread");
static_assert(kTile % kBM == 0 && kTile % kBN == 0 && kTile % kBK == 0, "rounded sizes are whole tiles");
static_assert(kStages >= 2, "at least double buffering");

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
using gpu::cp_async_commit;
using gpu::cp_async_wait;

__global__ void __launch_bounds__(kThreads, kMinBlocks)
    dgemm_cuda_core(int m, int n, int k, int splits, const double* __restrict__ A, const double* __restrict__ Bt,
                    double* __restrict__ C) {
  extern __shared__ __align__(16) double smem[];
  double* const As = smem;                            // [stage][k row][kBM]
  double* const Bs = smem + kStages * kBK * kBM;      // [stage][k row][kBN]

  // Block -> tile of C: groups of kGroupM tile rows, m fastest within a group (a 1-D grid).
  const int tiles_m = m / kBM, tiles_n = n / kBN;
  const int split = static_cast<int>(blockIdx.x) / (tiles_m * tiles_n);  // which k range
  const int tile = static_cast<int>(blockIdx.x) % (tiles_m * tiles_n);
  const int per_group = kGroupM * tiles_n;
  const int group = tile / per_group, in_group = tile % per_group;
  const int first_m = group * kGroupM;
  const int group_m = min(tiles_m - first_m, kGroupM);
  const long long row0 = static_cast<long long>(first_m + in_group % group_m) * kBM;
  const long long col0 = static_cast<long long>(in_group / group_m) * kBN;
  const int tid = static_cast<int>(threadIdx.x);

  // Tile kt into stage st: k row kk of A is kBM contiguous doubles of column kt*kBK + kk, of Bt
  // kBN contiguous doubles of row kt*kBK + kk; copy c of a thread takes 16 bytes.
  const int k_tiles = k / kBK / splits;
  const int kt0 = split * k_tiles;
  auto issue = [&](int kt, int st) {
    const long long kk0 = static_cast<long long>(kt0 + kt) * kBK;
#pragma unroll
    for (int i = 0; i < kAChunks; ++i) {
      const int c = tid + i * kThreads, kk = c / (kBM / 2), col = 2 * (c % (kBM / 2));
      cp_async16(As + (st * kBK + kk) * kBM + col, A + row0 + col + (kk0 + kk) * m);
    }
#pragma unroll
    for (int i = 0; i < kBChunks; ++i) {
      const int c = tid + i * kThreads, kk = c / (kBN / 2), col = 2 * (c % (kBN / 2));
      cp_async16(Bs + (st * kBK + kk) * kBN + col, Bt + col0 + col + (kk0 + kk) * n);
    }
  };

  const int warp = tid / 32, lane = tid % 32;
  const int tm = ((lane >> 1) & 1) | ((lane >> 3) & 2);
  const int tn = (lane & 1) | ((lane >> 1) & 6);
  const int a_frag = (warp % kWM) * kWarpM + 2 * tm;  // rows a_frag + 8q + {0, 1}, q = 0..3
  const int b_frag = (warp / kWM) * kWarpN + 2 * tn;  // columns b_frag + 16q + {0, 1}, q = 0..3

  double acc[kTM][kTN];
#pragma unroll
  for (int i = 0; i < kTM; ++i)
#pragma unroll
    for (int j = 0; j < kTN; ++j) acc[i][j] = 0;
  double fa[2][kTM], fb[2][kTN];
  auto load_fragments = [&](int st, int l, int set) {
    const double* as = As + (st * kBK + l) * kBM + a_frag;
    const double* bs = Bs + (st * kBK + l) * kBN + b_frag;
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

#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {  // prologue: tiles 0 .. kStages - 2
    if (s < k_tiles) issue(s, s);
    cp_async_commit();
  }
  cp_async_wait<kStages - 2>();
  __syncthreads();
  load_fragments(0, 0, 0);
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int st = kt % kStages;
    // Tile kt + kStages - 1 goes to the stage tile kt - 1 used: every thread finished reading it
    // before the barrier that ended iteration kt - 1. One commit per iteration (empty at the end)
    // keeps wait_group's count uniform.
    {
      const int next = kt + kStages - 1;
      if (next < k_tiles) issue(next, next % kStages);
      cp_async_commit();
    }
#pragma unroll
    for (int l = 0; l < kBK; ++l) {
      if (l == kBK - 1) {  // the next tile's first fragments: its copies must have landed
        cp_async_wait<kStages - 2>();
        __syncthreads();
        if (kt + 1 < k_tiles) load_fragments((kt + 1) % kStages, 0, (l + 1) & 1);
      } else {
        load_fragments(st, l + 1, (l + 1) & 1);
      }
#pragma unroll
      for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTN; ++j) acc[i][j] = fma(fa[l & 1][i], fb[l & 1][j], acc[i][j]);  // k order per output
    }
  }

  // Epilogue: acc[i][j] is C(row0 + a_frag + 8(i/2) + i%2, col0 + b_frag + 16(j/2) + j%2); row
  // pairs are contiguous in column-major C, so double2 stores. __stcg: C is not read again here.
  double* const c_base = C + row0 + a_frag + (col0 + b_frag) * static_cast<long long>(m);
#pragma unroll
  for (int j = 0; j < kTN; ++j) {
    double* const c_col = c_base + static_cast<long long>(16 * (j / 2) + j % 2) * m;
#pragma unroll
    for (int q = 0; q < kTM / 2; ++q) {
      if (splits == 1) {
        __stcg(reinterpret_cast<double2*>(c_col + 8 * q), make_double2(acc[2 * q][j], acc[2 * q + 1][j]));
      } else {
        atomicAdd(c_col + 8 * q, acc[2 * q][j]);
        atomicAdd(c_col + 8 * q + 1, acc[2 * q + 1][j]);
      }
    }
  }
}

// Blocks per tile of C: 2 where the tiles give less than one block per SM (and k splits evenly).
int k_splits(long long m, long long n, long long k, int sms) {
  const long long tiles = (m / kBM) * (n / kBN);
  return tiles < sms && (k / kBK) % 2 == 0 ? 2 : 1;
}

class CudaCoreGemm final : public gemm::GemmInstanceBase<double, double> {
 public:
  explicit CudaCoreGemm(const KernelParams& p) : GemmInstanceBase(p, {1e-12, 0}), bt_(static_cast<size_t>(k_ * n_)) {
    static const bool configured = [] {
      CUDA_CHECK(cudaFuncSetAttribute(dgemm_cuda_core, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
      return true;
    }();
    (void)configured;
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device));
  }
  void poison_output() override {
    GemmInstanceBase::poison_output();
    CUDA_CHECK(cudaMemset(bt_.data(), 0xFF, bt_.bytes()));  // a stale transpose cannot pass the check
  }
  void launch(Stream s) override {
    const int splits = k_splits(m_, n_, k_, sms_);
    if (splits > 1) CUDA_CHECK(cudaMemsetAsync(c_.data(), 0, c_.bytes(), s));
    transpose_b<<<dim3(static_cast<unsigned>(k_ / 32), static_cast<unsigned>(n_ / 32)), dim3(32, 8), 0, s>>>(
        static_cast<int>(k_), static_cast<int>(n_), b_.data(), bt_.data());
    const long long blocks = (m_ / kBM) * (n_ / kBN) * splits;
    dgemm_cuda_core<<<static_cast<unsigned>(blocks), kThreads, kSmemBytes, s>>>(
        static_cast<int>(m_), static_cast<int>(n_), static_cast<int>(k_), splits, a_.data(), bt_.data(), c_.data());
  }

 private:
  gpu::DeviceBuffer<double> bt_;  // B transposed, rebuilt by every launch
  int sms_ = 0;
};

KernelVariant cuda_core_variant() {
  KernelVariant v;
  v.kind = "gemm";
  v.unit = ComputeUnit::cuda_core;
  v.precision = Precision::fp64;
  v.description =
      "FP64 DFMA, B transposed first, 128x128 tiles of C per 256-thread block, 8x8 outputs per thread, cp.async "
      "into 2 shared-memory stages of 16 k rows, fragments double-buffered in registers, k split in 2 where the "
      "tiles of C are fewer than the SMs";
  v.round = [](KernelParams p) {
    for (const char* d : {"m", "n", "k"})
      p[d] = std::max(static_cast<double>(kTile), std::round(p.at(d) / kTile) * kTile);
    return p;
  };
  v.create = [](const KernelParams& params, const RunContext&) -> std::unique_ptr<KernelInstance> {
    return std::make_unique<CudaCoreGemm>(params);
  };
  v.adjust_model = gemm::without_c_read;
  v.sass = {{"dgemm_cuda_core", "DFMA", "DMMA"}, {"dgemm_cuda_core", "LDGSTS", ""}};
  return v;
}

const Registrar gemm_cuda_core{cuda_core_variant()};

}  // namespace
}  // namespace ceiling::kernels
