// Stencil on CUDA cores, 2.5-D streaming with temporal blocking (the EBISU/AN5D role, issue 11):
// a block owns an x segment (2-D) or x-y rectangle (3-D) with a halo of t x radius, marches along
// the last axis over a chunk of it and pipelines the t steps through per-level rings of 2r + 1
// planes in shared memory (kernels/stencil_plan.hpp, StencilStreamPlan). The grid is read and
// written once for t steps (the kind's Q); the redundant work is the section's halo, not a halo on
// every axis as in `blocked`. 128 threads per block, or 256 where fewer than 4 blocks fit an SM
// (stencil_plan.hpp streaming_threads: the 3-D rings and 2d49pt). 2-D shapes of radius <= 3 at
// 1..4 steps run the rows kernel instead (stencil_plan.hpp StencilRowsPlan: partial output rows in
// registers, 2R shared loads per cell-step), 3-D shapes of radius 1 at 1..3 steps the planes kernel
// (StencilPlanesPlan); the hidden launch_config pins either (1 ring, 2 rows or planes).
#include <memory>

#include "stencil_common.cuh"

namespace ceiling::kernels {
namespace {

KernelVariant streaming_variant() {
  KernelVariant v;
  v.kind = "stencil";
  v.implementation = "streaming";
  v.unit = ComputeUnit::cuda_core;
  v.precision = Precision::fp64;
  v.description =
      "2.5-D: march along the last axis, t steps pipelined; partial output rows / planes in registers (2-D radius <= 3, "
      "3-D radius 1, t <= 4 / 3), else shared-memory rings; DFMA";
  v.create = [](const KernelParams& params, const RunContext& ctx) -> std::unique_ptr<KernelInstance> {
    return std::make_unique<StencilInstance<StencilMethod::streaming>>(params, ctx);
  };
  v.sass = {{"stencil_streaming_kernel", "DFMA", "DMMA"},
            {"stencil_rows_kernel", "DFMA", "DMMA"},
            {"stencil_planes_kernel", "DFMA", "DMMA"}};
  return v;
}

const Registrar stencil_streaming{streaming_variant()};

}  // namespace
}  // namespace ceiling::kernels
