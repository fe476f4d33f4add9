// What the two SpMV variants on the packed layout share (kernels/spmv_tc.cu on tensor cores,
// kernels/spmv_packed.cu on CUDA cores): the plan (plan_tensor_core) uploaded once, one warp per
// group, 8 warps per block, and the model (Eq. 9: the layout's own bytes, tensor_core_spmv_model).
#pragma once
#include <algorithm>
#include <string>

#include "spmv_common.cuh"
#include "spmv_plan.hpp"

namespace ceiling::kernels {

constexpr int kPackedWarps = 8;  // warps (groups) per block

// A kernel over the packed groups: (groups, ngroups, rows, values, columns, x, y, long rows,
// partial sums, counters); one instantiation for cold runs (streaming loads), one for warm.
using PackedKernel = void (*)(const int4*, int, const int*, const double*, const int*, const double*, double*,
                              const int4*, double*, unsigned*);

class PackedLayoutInstance final : public SpmvInstanceBase {
 public:
  PackedLayoutInstance(const KernelParams& params, const RunContext& ctx, PackedKernel cold, PackedKernel warm)
      : SpmvInstanceBase(params), kernel_(ctx.in_l2 ? warm : cold) {
    const TcPlan plan = plan_tensor_core(*a_);
    launch_text_ = plan_text(plan);
    ngroups_ = static_cast<int>(plan.groups.size());
    groups_ = upload(plan.groups);
    rows_ = upload(plan.rows);
    val_ = upload(plan.val);
    col_ = upload(plan.col);
    long_rows_ = upload(plan.long_rows);
    partial_ = gpu::DeviceBuffer<double>(static_cast<size_t>(std::max(plan.partial_slots, 1)));
    counter_ = gpu::DeviceBuffer<unsigned>(std::max<size_t>(plan.long_rows.size(), 1));
    CUDA_CHECK(cudaMemset(counter_.data(), 0, counter_.bytes()));
  }
  std::string launch_text() const override { return launch_text_; }
  void launch(Stream s) override {
    if (ngroups_ == 0) return;
    const auto grid = static_cast<unsigned>((ngroups_ + kPackedWarps - 1) / kPackedWarps);
    kernel_<<<grid, kPackedWarps * 32, 0, s>>>(reinterpret_cast<const int4*>(groups_.data()), ngroups_, rows_.data(),
                                               val_.data(), col_.data(), x_.data(), y_.data(),
                                               reinterpret_cast<const int4*>(long_rows_.data()), partial_.data(),
                                               counter_.data());
    CUDA_CHECK_LAUNCH();
  }

 private:
  PackedKernel kernel_;
  std::string launch_text_;
  int ngroups_ = 0;
  gpu::DeviceBuffer<TcGroup> groups_;
  gpu::DeviceBuffer<int> rows_, col_;
  gpu::DeviceBuffer<double> val_;
  gpu::DeviceBuffer<LongRow> long_rows_;
  gpu::DeviceBuffer<double> partial_;
  gpu::DeviceBuffer<unsigned> counter_;
};

static_assert(sizeof(TcGroup) == sizeof(int4) && sizeof(LongRow) == sizeof(int4));

// The packed layout's Q (Eq. 9): padded zeros, their columns, row ids and group records.
inline KernelModel packed_layout_model(const KernelParams& params, KernelModel) {
  const auto a = matrix_of(params);
  return tensor_core_spmv_model(*a, plan_tensor_core(*a));
}

}  // namespace ceiling::kernels
