// GEMM C = A B in FP64 on the CUDA cores (DFMA): the CUDA-core side of the FP64 TC/CC pair in the
// compute-bound regime (Eq. 22 past the ridge), tuned toward the DFMA peak (no DMMA, no cuBLAS).
// Column-major A (m x k), B (k x n), C (m x n); beta = 0 (C is written, never read).
//
// Tiling (the classic SIMT register-blocked GEMM, as in CUTLASS's SIMT path):
//  - 128 x 128 tile of C per 256-thread block, k in steps of 8 (one "k tile").
//  - 8 warps as 4 (m) x 2 (n), each warp a 32 x 64 tile; each thread an 8 x 8 micro-tile of C in
//    64 FP64 registers: per k step 8 + 8 values from shared memory feed 64 DFMAs.
//  - Shared memory double-buffered (2 x 8 k rows of A and B, 32.25 KiB); the next k tile's global
//    loads (16-byte double2) go to registers before the current tile's math and to the other
//    shared buffer after it: one __syncthreads per k tile, global latency hidden behind 512 DFMAs
//    per thread.
//  - Why these shapes: 8 x 8 per thread is the largest micro-tile that fits 255 registers with
//    the prefetch registers, and it needs 16 shared values per 64 DFMAs. A 16-byte shared load
//    by a warp costs 4 wavefronts (128 B/clk return), 2 when thread pairs share addresses (as
//    Nsight Compute reports on sm_70..sm_90; not yet profiled for this kernel). Here lane pairs
//    (i, i^1) read the same A and (i, i^2) the same B (the lane layout below): 8 loads x 2 = 16
//    wavefronts against 64 DFMAs = 32 clocks of the SM's 64 FP64 lanes, so the shared-memory
//    pipe stays at about half load. The B rows are padded to 130 doubles so the
//    transposing stores of B (two k rows per double2 loaded) are free of bank conflicts.
//  - Blocks are walked in groups of 8 tile rows (m) so one wave of blocks shares A and B panels
//    in L2 (fewer DRAM re-reads of A at large n).
// Sizes are rounded to multiples of 128 (m, n, k), so no edge handling is needed.
#include <memory>

#include "gemm_common.cuh"

namespace ceiling::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kBM = 128, kBN = 128, kBK = 8;  // block tile of C, k tile
constexpr int kWarpM = 32, kWarpN = 64;       // warp tile: 4 x 2 warps per block
constexpr int kTM = 8, kTN = 8;               // thread micro-tile: 4 x 8 threads per warp
constexpr int kBNPad = kBN + 2;               // B row stride in shared memory (see store_tile)
constexpr int kGroupM = 8;                    // block rasterization: tile rows per group
constexpr int kTile = 128;                    // size multiple (v.round)

static_assert(kBM / kWarpM * (kBN / kWarpN) == kThreads / 32, "one warp tile per warp");
static_assert(kWarpM / kTM * (kWarpN / kTN) == 32, "one micro-tile per lane");
static_assert(kBM * kBK == 4 * kThreads && kBK * kBN == 4 * kThreads, "two double2 of A and of B per thread");
static_assert(kTile % kBM == 0 && kTile % kBN == 0 && kTile % kBK == 0, "rounded sizes are whole tiles");
static_assert((kBNPad * sizeof(double)) % 16 == 0, "B rows stay 16-byte aligned for double2 reads");

__global__ void __launch_bounds__(kThreads, 1)
    dgemm_cuda_core(int m, int n, int k, const double* __restrict__ A, const double* __restrict__ B,
                    double* __restrict__ C) {
  // [stage][k row][m or n]: a k step reads one row of each.
  __shared__ __align__(16) double As[2][kBK][kBM];
  __shared__ __align__(16) double Bs[2][kBK][kBNPad];

  // Block -> tile of C: groups of kGroupM tile rows, m fastest within a group (a 1-D grid).
  const int tiles_m = m / kBM, tiles_n = n / kBN;
  const int per_group = kGroupM * tiles_n;
  const int group = static_cast<int>(blockIdx.x) / per_group, in_group = static_cast<int>(blockIdx.x) % per_group;
  const int first_m = group * kGroupM;
  const int group_m = min(tiles_m - first_m, kGroupM);
  const long long row0 = static_cast<long long>(first_m + in_group % group_m) * kBM;
  const long long col0 = static_cast<long long>(in_group / group_m) * kBN;

  const int tid = static_cast<int>(threadIdx.x);

  // Global -> shared mapping, per k tile (kk = first k of the tile):
  //  A tile (128 rows x 8 k): thread loads rows a_row, a_row + 1 of k columns kk + a_k and
  //    kk + a_k + 4 (64 threads cover one 1 KiB column: coalesced); stored as double2 into
  //    As[.][a_k (+4)][a_row].
  //  B tile (8 k x 128 columns): thread loads k rows kk + b_k, kk + b_k + 1 of columns b_col and
  //    b_col + 64 (4 threads cover one column's 64 contiguous bytes); stored as 4 doubles into
  //    Bs[.][b_k (+1)][b_col (+64)].
  const int a_row = 2 * (tid % 64), a_k = tid / 64;
  const int b_k = 2 * (tid % 4), b_col = tid / 4;
  const double* const a_base = A + row0 + a_row + static_cast<long long>(a_k) * m;
  const double* const b_base = B + b_k + (col0 + b_col) * static_cast<long long>(k);
  const long long a_other = 4LL * m;   // A: k column + 4
  const long long b_other = 64LL * k;  // B: column + 64
  double2 a_ld[2], b_ld[2];

  auto load_tile = [&](int kt) {  // global -> registers
    const double* a = a_base + static_cast<long long>(kt) * kBK * m;
    const double* b = b_base + static_cast<long long>(kt) * kBK;
    a_ld[0] = __ldg(reinterpret_cast<const double2*>(a));
    a_ld[1] = __ldg(reinterpret_cast<const double2*>(a + a_other));
    b_ld[0] = __ldg(reinterpret_cast<const double2*>(b));
    b_ld[1] = __ldg(reinterpret_cast<const double2*>(b + b_other));
  };
  auto store_tile = [&](int s) {  // registers -> shared stage s
    *reinterpret_cast<double2*>(&As[s][a_k][a_row]) = a_ld[0];
    *reinterpret_cast<double2*>(&As[s][a_k + 4][a_row]) = a_ld[1];
    // B is transposed on the way (k contiguous in memory, n contiguous in shared memory). A half
    // warp writes k rows b_k in {0, 2, 4, 6} x 4 columns; with the row stride of 130 doubles
    // (2 mod 16 eight-byte banks) the 16 addresses fall in 16 distinct bank pairs.
    Bs[s][b_k][b_col] = b_ld[0].x;
    Bs[s][b_k + 1][b_col] = b_ld[0].y;
    Bs[s][b_k][b_col + 64] = b_ld[1].x;
    Bs[s][b_k + 1][b_col + 64] = b_ld[1].y;
  };

  // Lane layout in the warp's 32 x 64 tile: tm (0..3) from lane bits 1 and 4, tn (0..7) from
  // lane bits 0, 2 and 3. Lanes i and i^1 then share tm (same A addresses), lanes i and i^2
  // share tn (same B addresses): the pairing that halves the wavefronts of a 16-byte shared load.
  // Thread rows: wm*32 + 8q + 2tm + {0,1}, q = 0..3; columns: wn*64 + 16q + 2tn + {0,1}, q = 0..3.
  // For each q a warp reads 4 (A) or 8 (B) contiguous double2: no bank conflicts.
  const int warp = tid / 32, lane = tid % 32;
  const int tm = ((lane >> 1) & 1) | ((lane >> 3) & 2);
  const int tn = (lane & 1) | ((lane >> 1) & 6);
  const int a_frag = (warp % (kBM / kWarpM)) * kWarpM + 2 * tm;
  const int b_frag = (warp / (kBM / kWarpM)) * kWarpN + 2 * tn;

  double acc[kTM][kTN];
#pragma unroll
  for (int i = 0; i < kTM; ++i)
#pragma unroll
    for (int j = 0; j < kTN; ++j) acc[i][j] = 0;

  const int k_tiles = k / kBK;
  load_tile(0);
  store_tile(0);
  __syncthreads();
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int s = kt & 1;
    const bool more = kt + 1 < k_tiles;  // block-uniform
    if (more) load_tile(kt + 1);  // in flight during the math below
#pragma unroll
    for (int l = 0; l < kBK; ++l) {
      double a[kTM], b[kTN];
#pragma unroll
      for (int q = 0; q < kTM / 2; ++q) {
        const double2 v = *reinterpret_cast<const double2*>(&As[s][l][a_frag + 8 * q]);
        a[2 * q] = v.x;
        a[2 * q + 1] = v.y;
      }
#pragma unroll
      for (int q = 0; q < kTN / 2; ++q) {
        const double2 v = *reinterpret_cast<const double2*>(&Bs[s][l][b_frag + 16 * q]);
        b[2 * q] = v.x;
        b[2 * q + 1] = v.y;
      }
#pragma unroll
      for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTN; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);  // k order per output
    }
    // Stage s^1 was last read in iteration kt - 1, which every thread finished before the
    // barrier that ended it; the barrier below publishes it for iteration kt + 1.
    if (more) store_tile(s ^ 1);
    __syncthreads();
  }

  // Epilogue: acc[i][j] is C(row0 + a_frag + 8(i/2) + i%2, col0 + b_frag + 16(j/2) + j%2); row
  // pairs are contiguous in column-major C, so double2 stores (a warp writes 64 contiguous bytes
  // in each of 8 columns per store). __stcg (st.global.cg: C is not read again here); it also
  // keeps every store 16 bytes wide (a plain assignment let NVVM split some into two 8-byte ones).
  double* const c_base = C + row0 + a_frag + (col0 + b_frag) * static_cast<long long>(m);
#pragma unroll
  for (int j = 0; j < kTN; ++j) {
    double* const c_col = c_base + static_cast<long long>(16 * (j / 2) + j % 2) * m;
#pragma unroll
    for (int q = 0; q < kTM / 2; ++q)
      __stcg(reinterpret_cast<double2*>(c_col + 8 * q), make_double2(acc[2 * q][j], acc[2 * q + 1][j]));
  }
}

class CudaCoreGemm final : public gemm::GemmInstanceBase<double, double> {
 public:
  explicit CudaCoreGemm(const KernelParams& p) : GemmInstanceBase(p, {1e-12, 0}) {}
  void launch(Stream s) override {
    const long long blocks = (m_ / kBM) * (n_ / kBN);
    dgemm_cuda_core<<<static_cast<unsigned>(blocks), kThreads, 0, s>>>(
        static_cast<int>(m_), static_cast<int>(n_), static_cast<int>(k_), a_.data(), b_.data(), c_.data());
  }
};

KernelVariant cuda_core_variant() {
  KernelVariant v;
  v.kind = "gemm";
  v.unit = ComputeUnit::cuda_core;
  v.precision = Precision::fp64;
  v.description =
      "FP64 DFMA, 128x128 tiles of C per 256-thread block, k steps of 8, 8x8 outputs per thread, "
      "double-buffered shared memory with register prefetch of the next k tile (double2 loads)";
  v.round = [](KernelParams p) {
    for (const char* d : {"m", "n", "k"})
      p[d] = std::max(static_cast<double>(kTile), std::round(p.at(d) / kTile) * kTile);
    return p;
  };
  v.create = [](const KernelParams& params, const RunContext&) -> std::unique_ptr<KernelInstance> {
    return std::make_unique<CudaCoreGemm>(params);
  };
  v.adjust_model = gemm::without_c_read;
  v.sass = {{"dgemm_cuda_core", "DFMA", "DMMA"}};
  return v;
}

const Registrar gemm_cuda_core{cuda_core_variant()};

}  // namespace
}  // namespace ceiling::kernels
