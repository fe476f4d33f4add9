// One validation measurement: verify a variant on fresh data, then time it (gpu::time_kernel).
#pragma once
#include <cstdint>
#include <functional>

#include "gpu/gpu.hpp"
#include "registry.hpp"

namespace ceiling::kernels {

struct MeasureOptions {
  int warmup = 3;
  int repeats = 20;
  bool flush_l2 = false;        // cold runs (clean_l2 before each repeat): out-of-L2 sizes;
                                // in-L2 sizes stay warm on purpose
  // Warm runs: back-to-back launches per timed region, chosen so a region lasts at least this
  // long (a single in-L2 launch is mostly launch latency); times are reported per launch.
  double warm_region_s = 50e-6;
  int max_launches = 64;
  std::uint64_t seed = 0x243F6A8885A308D3ull;
  cudaStream_t stream = nullptr;
};

struct Measurement {
  ProblemSize size;
  KernelModel model;
  Verification check;
  gpu::Timing timing;   // per launch
  bool l2_flushed = false;
  int launches = 1;      // per timed region
};

// Verifies (fresh random inputs, poisoned output, CPU reference) and throws std::runtime_error
// naming the variant and size when the output is wrong; then warms up and times.
Measurement measure(const KernelVariant& v, const ProblemSize& s, const MeasureOptions& o);

// Evicts the L2 and leaves it clean (gpu::flush_l2 reads twice the L2, so dirty lines are
// written back inside the flush): a cold run neither finds its data cached nor pays for
// someone else's write-backs.
void clean_l2(cudaStream_t stream = nullptr);

// Cold timing: clean_l2 before every repeat, each repeat timed by gpu::time_kernel.
gpu::Timing time_cold(const std::function<void(cudaStream_t)>& launch, int warmup, int repeats,
                      cudaStream_t stream = nullptr);

// Only the check (used by the GPU tests): fresh inputs, poison, one launch, compare.
Verification verify_once(const KernelVariant& v, KernelInstance& inst, std::uint64_t seed);

}  // namespace ceiling::kernels
