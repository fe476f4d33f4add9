// Stencil on CUDA cores, one pass per step (the Brick role, issue 11): shapes of 13 or more points
// run the streaming variant's rows (2-D) or planes (3-D) kernel at one step (measured faster there,
// stencil_common.cuh plain_register_by_default); 2-D shapes of radius 1 walk the shape by columns, 8
// rows per thread, each shared row loaded once into registers; other shapes (3d7pt) one point per
// thread with every load of the point in flight; the
// weights and offsets in constant memory, the neighbours' reuse across threads left to L1 and L2; t steps are t launches (in -> out -> other -> out ...), so
// its traffic is t times the kind's (read and write the grid once per step) and it is t passes.
#include <memory>

#include "stencil_common.cuh"

namespace ceiling::kernels {
namespace {

KernelVariant plain_variant() {
  KernelVariant v;
  v.kind = "stencil";
  v.implementation = "plain";
  v.unit = ComputeUnit::cuda_core;
  v.precision = Precision::fp64;
  v.description =
      "one launch per step: shapes of 13+ points by the rows / planes kernel; 2-D radius-1 shapes by columns, 8 rows "
      "per thread; others one point per thread";
  v.adjust_model = one_pass_per_step;
  v.create = [](const KernelParams& params, const RunContext& ctx) -> std::unique_ptr<KernelInstance> {
    return std::make_unique<StencilInstance<StencilMethod::plain>>(params, ctx);
  };
  v.sass = {{"stencil_plain_kernel", "DFMA", "DMMA"},
            {"stencil_plain_point_kernel", "DFMA", "DMMA"},
            {"stencil_rows_kernel", "DFMA", "DMMA"},
            {"stencil_planes_kernel", "DFMA", "DMMA"}};
  return v;
}

const Registrar stencil_plain{plain_variant()};

}  // namespace
}  // namespace ceiling::kernels
