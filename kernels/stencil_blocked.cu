// Stencil on CUDA cores with temporal blocking (the EBISU role, issue 11): each block loads its
// output tile with a halo of t x radius per side into shared memory, runs the t steps there (the
// region shrinking by the radius per step, the fixed boundary kept), and writes the tile: the grid
// is read and written once for t steps (the kind's Q), the halo re-read from L2
// (kernels/stencil_plan.hpp picks the tile).
#include <memory>

#include "stencil_common.cuh"

namespace ceiling::kernels {
namespace {

KernelVariant blocked_variant() {
  KernelVariant v;
  v.kind = "stencil";
  v.implementation = "blocked";
  v.unit = ComputeUnit::cuda_core;
  v.precision = Precision::fp64;
  v.description = "t steps fused in a shared-memory tile with a t x radius halo, DFMA";
  v.create = [](const KernelParams& params, const RunContext& ctx) -> std::unique_ptr<KernelInstance> {
    return std::make_unique<StencilInstance<StencilMethod::blocked>>(params, ctx);
  };
  v.sass = {{"stencil_blocked_kernel", "DFMA", "DMMA"}};
  return v;
}

const Registrar stencil_blocked{blocked_variant()};

}  // namespace
}  // namespace ceiling::kernels
