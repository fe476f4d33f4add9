// Stencil on FP64 tensor cores, one launch per step (the plain variant's tensor-core twin, so that
// Eq. 22 compares the same traffic: t passes over the grid on both units). Each 16 (x) x 8 (y)
// output block is, per column line (dx, dz) of the shape, (16 columns x K rows of the input) x (K x 8
// Toeplitz matrix of the line's weights over dy) on mma.m16n8k4 (two m8n8k4 on sm_80;
// kernels/stencil_plan.hpp, StencilColumnMmaPlan): no shared-memory tile, the rows re-read by the
// lines through L1. The share of the tensor core it can use is |S| 128 / (the lines' chunks x 512),
// set per shape in its model.
#include <memory>
#include <utility>

#include "stencil_common.cuh"

namespace ceiling::kernels {
namespace {

KernelVariant plain_mma_variant() {
  KernelVariant v;
  v.kind = "stencil";
  v.implementation = "plain-mma";
  v.unit = ComputeUnit::tensor_core;
  v.precision = Precision::fp64;
  v.description =
      "one launch per step, each 16x8 block as (16 columns x K rows) x (Toeplitz of each column line's weights), FP64 "
      "mma.m16n8k4";
  v.tensor_core_fraction = 0;  // per shape, below
  v.adjust_model = [](const KernelParams& params, KernelModel k) {
    const auto it = params.find("shape_id");
    if (it != params.end())
      k.tensor_core_fraction = plan_stencil_column_mma(registered_stencil_shape(static_cast<int>(it->second))).useful_fraction;
    return one_pass_per_step(params, std::move(k));
  };
  v.create = [](const KernelParams& params, const RunContext& ctx) -> std::unique_ptr<KernelInstance> {
    return std::make_unique<StencilInstance<StencilMethod::tensor_core_plain>>(params, ctx);
  };
  v.sass = {{"stencil_column_mma_kernel", "DMMA", ""}};
  return v;
}

const Registrar stencil_tc_plain{plain_mma_variant()};

}  // namespace
}  // namespace ceiling::kernels
