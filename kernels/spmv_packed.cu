// SpMV y = A x on CUDA cores over the tensor-core variant's packed layout (issue 10): the same plan
// (kernels/spmv_plan.hpp plan_tensor_core: rows sorted by length in windows, 8-row groups padded to
// 4 columns, long rows cut into 8-slice groups), the same bytes (its Q is the tensor-core variant's,
// Eq. 9) and the same loads, with each lane's value x gathered x summed by FMA and the 4 lanes of a
// row added by shuffles instead of an mma. It answers whether the tensor-core SpMV's gain over the
// CSR kernels comes from the tensor cores or from the layout: T(packed) / T(dasp-like) on the same
// matrix is the tensor cores' share.
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
    spmv_packed_cuda_core(const int4* __restrict__ groups, int ngroups, const int* __restrict__ rows,
                          const double* __restrict__ pval, const int* __restrict__ pcol,
                          const double* __restrict__ x, double* __restrict__ y, const int4* __restrict__ long_rows,
                          double* __restrict__ partial, unsigned* __restrict__ counter) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int gi = static_cast<int>(blockIdx.x) * kWarps + warp;
  if (gi >= ngroups) return;
  const int4 g = groups[gi];  // {step_begin, steps, rows_at, long_index}
  const double* __restrict__ v = pval + static_cast<long long>(g.x) * 32 + lane;
  const int* __restrict__ c = pcol + static_cast<long long>(g.x) * 32 + lane;
  double d0 = 0.0, e0 = 0.0;
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
      d0 = fma(av[u], xv[u], d0);
      e0 = fma(av[u + 1], xv[u + 1], e0);
    }
  }
  for (; s < g.y; ++s) {
    const double a = load_stream<Streaming>(v + s * 32);
    const double b = __ldg(&x[load_stream<Streaming>(c + s * 32)]);
    d0 = fma(a, b, d0);
  }
  d0 += e0;
  // Lane 4r + t holds row r's entries at columns t, t + 4, ...: the row's sum over its 4 lanes.
  const int r = lane >> 2, t = lane & 3;
  double dot = d0 + __shfl_xor_sync(0xffffffffu, d0, 1);
  dot += __shfl_xor_sync(0xffffffffu, dot, 2);
  const bool first_lane = t == 0;
  if (g.w < 0) {
    if (first_lane) {
      const int row = rows[g.z + r];
      if (row >= 0) y[row] = dot;
    }
    return;
  }
  double sum = first_lane ? dot : 0.0;  // one copy of each slice's sum
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
  if (lane == 0) {
    const int4 lr = long_rows[g.w];  // {row, first_slot, pieces, first_item}
    finish_piece(sum, lr.x, lr.y, lr.z, gi - lr.w, partial, counter, g.w, y);
  }
}

KernelVariant packed_cuda_core_variant() {
  KernelVariant v;
  v.kind = "spmv-csr";
  v.implementation = "packed";
  v.unit = ComputeUnit::cuda_core;
  v.precision = Precision::fp64;
  v.description = "the dasp-like packed layout (sorted 8-row groups padded to 4 columns) on CUDA cores: FMA per lane, 4-lane shuffle sums";
  v.adjust_model = packed_layout_model;
  v.create = [](const KernelParams& params, const RunContext& ctx) -> std::unique_ptr<KernelInstance> {
    return std::make_unique<PackedLayoutInstance>(params, ctx, spmv_packed_cuda_core<true>,
                                                  spmv_packed_cuda_core<false>);
  };
  v.sass = {{"spmv_packed_cuda_core", "DFMA", "DMMA"}};
  return v;
}

const Registrar spmv_packed{packed_cuda_core_variant()};

}  // namespace
}  // namespace ceiling::kernels
