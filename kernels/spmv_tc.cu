// SpMV y = A x on FP64 tensor cores, in the spirit of DASP (Lu & Liu, SC'23; our own code, issue 10).
// Plan (kernels/spmv_plan.hpp plan_tensor_core): rows up to 256 nnz sorted by length inside windows
// of 8192 rows and packed 8 at a time into dense groups padded to a multiple of 4 columns; longer
// rows cut into groups of 8 slices of the row. One warp per group: per k-step of 4 columns one
// mma.m8n8k4, A[g][t] = value (row g, column t), B[t][g] = x at that entry's column (lane 4g+t
// holds both), so D[g][g] is row g's dot product: 1/8 of the MMA work is useful, as in SCALE and
// GEMV. Four steps' loads are in flight before their MMAs (two accumulator chains).
// Its Q is its own (Eq. 9, tensor_core_spmv_model): (nnz + m + n) D plus the padded zeros' 8 B, the
// padded entries' 4-B columns, 8 row ids per group and the group records (the CSR row_ptr is not read).
#include <memory>
#include <string>
#include <vector>

#include "spmv_packed_layout.cuh"

namespace ceiling::kernels {
namespace {

constexpr int kWarps = kPackedWarps;
constexpr int kSteps = 4;

template <bool Streaming>
__global__ void __launch_bounds__(kWarps * 32)
    spmv_tensor_core_groups(const int4* __restrict__ groups, int ngroups, const int* __restrict__ rows,
                            const double* __restrict__ pval, const int* __restrict__ pcol,
                            const double* __restrict__ x, double* __restrict__ y, const int4* __restrict__ long_rows,
                            double* __restrict__ partial, unsigned* __restrict__ counter) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int gi = static_cast<int>(blockIdx.x) * kWarps + warp;
  if (gi >= ngroups) return;
  const int4 g = groups[gi];  // {step_begin, steps, rows_at, long_index}
  const double* __restrict__ v = pval + static_cast<long long>(g.x) * 32 + lane;
  const int* __restrict__ c = pcol + static_cast<long long>(g.x) * 32 + lane;
  double d0 = 0.0, d1 = 0.0, e0 = 0.0, e1 = 0.0;
  int s = 0;
  for (; s + kSteps <= g.y; s += kSteps) {
    double av[kSteps], xv[kSteps];
    int cv[kSteps];
#pragma unroll
    for (int u = 0; u < kSteps; ++u) {
      av[u] = load_stream<Streaming>(v + (s + u) * 32);
      cv[u] = load_stream<Streaming>(c + (s + u) * 32);
    }
#pragma unroll
    for (int u = 0; u < kSteps; ++u) xv[u] = __ldg(&x[cv[u]]);
#pragma unroll
    for (int u = 0; u < kSteps; u += 2) {
      mma_m8n8k4_fp64(d0, d1, av[u], xv[u], d0, d1);
      mma_m8n8k4_fp64(e0, e1, av[u + 1], xv[u + 1], e0, e1);
    }
  }
  for (; s < g.y; ++s) {
    const double a = load_stream<Streaming>(v + s * 32);
    const double b = __ldg(&x[load_stream<Streaming>(c + s * 32)]);
    mma_m8n8k4_fp64(d0, d1, a, b, d0, d1);
  }
  d0 += e0;
  d1 += e1;
  // D[r][r] sits in lane 4r + r/2, element r % 2 (lane (r, t) holds D[r][2t], D[r][2t+1]).
  const int r = lane >> 2, t = lane & 3;
  const bool diagonal = t == (r >> 1);
  const double dot = diagonal ? ((r & 1) ? d1 : d0) : 0.0;
  if (g.w < 0) {
    if (diagonal) {
      const int row = rows[g.z + r];
      if (row >= 0) y[row] = dot;
    }
    return;
  }
  double sum = dot;
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
  if (lane == 0) {
    const int4 lr = long_rows[g.w];  // {row, first_slot, pieces, first_item}
    finish_piece(sum, lr.x, lr.y, lr.z, gi - lr.w, partial, counter, g.w, y);
  }
}

KernelVariant tensor_core_variant() {
  KernelVariant v;
  v.kind = "spmv-csr";
  v.implementation = "dasp-like";
  v.unit = ComputeUnit::tensor_core;
  v.precision = Precision::fp64;
  v.description = "rows sorted by length in windows, 8-row groups padded to 4 columns, FP64 mma.m8n8k4, dot products on D's diagonal";
  v.tensor_core_fraction = 1.0 / 8.0;  // the diagonal of D: 8 of its 64 products are wanted
  v.adjust_model = packed_layout_model;
  v.create = [](const KernelParams& params, const RunContext& ctx) -> std::unique_ptr<KernelInstance> {
    return std::make_unique<PackedLayoutInstance>(params, ctx, spmv_tensor_core_groups<true>,
                                                  spmv_tensor_core_groups<false>);
  };
  v.sass = {{"spmv_tensor_core_groups", "DMMA", ""}};
  return v;
}

const Registrar spmv_tc{tensor_core_variant()};

}  // namespace
}  // namespace ceiling::kernels
