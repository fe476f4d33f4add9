// Stencil on FP64 tensor cores (the ConvStencil role, issue 11; our own formulation,
// kernels/stencil_plan.hpp): the blocked variant's shared-memory tile and fused steps, each step as
// 8x8 output blocks = sum over the shape's lines of (8 x K rows of the tile) x (K x 8 Toeplitz
// matrix of the line's weights) on mma.m8n8k4. Same DRAM traffic as the blocked variant; the share
// of the tensor core it can use is |S| 128 / (lines K/4 512), set per shape in its model.
#include <memory>

#include "stencil_common.cuh"

namespace ceiling::kernels {
namespace {

KernelVariant tensor_core_variant() {
  KernelVariant v;
  v.kind = "stencil";
  v.implementation = "toeplitz-mma";
  v.unit = ComputeUnit::tensor_core;
  v.precision = Precision::fp64;
  v.description = "blocked tile, each step as 8x8 blocks of (tile rows) x (Toeplitz of each line's weights), FP64 mma.m8n8k4";
  v.tensor_core_fraction = 0;  // per shape, below
  v.adjust_model = [](const KernelParams& params, KernelModel k) {
    const auto it = params.find("shape_id");
    if (it != params.end())
      k.tensor_core_fraction = plan_stencil_tensor_core(registered_stencil_shape(static_cast<int>(it->second))).useful_fraction;
    return k;
  };
  v.create = [](const KernelParams& params, const RunContext& ctx) -> std::unique_ptr<KernelInstance> {
    return std::make_unique<StencilInstance<StencilMethod::tensor_core>>(params, ctx);
  };
  v.sass = {{"stencil_tensor_core_kernel", "DMMA", ""}};
  return v;
}

const Registrar stencil_tc{tensor_core_variant()};

}  // namespace
}  // namespace ceiling::kernels
