// One validation measurement on the GPU: verify a variant on fresh data, then time it
// (gpu::time_kernel), and the sweep's GPU measurer and entry point.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "gpu/gpu.hpp"
#include "registry.hpp"
#include "sweep.hpp"

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
  KernelParams params;
  KernelModel model;
  Verification check;
  gpu::Timing timing;   // per launch
  bool l2_flushed = false;
  int launches = 1;      // per timed region
  std::string launch_text;  // KernelInstance::launch_text() of the timed instance
};

// Verifies (fresh random inputs, poisoned output, CPU reference) and throws std::runtime_error
// naming the variant and size when the output is wrong; then warms up and times.
Measurement measure(const KernelVariant& v, const KernelParams& params, const RunContext& ctx,
                    const MeasureOptions& o);

// Evicts the L2 and leaves it clean (gpu::flush_l2 reads twice the L2, so dirty lines are
// written back inside the flush): a cold run neither finds its data cached nor pays for
// someone else's write-backs.
void clean_l2(cudaStream_t stream = nullptr);

// Cold timing: clean_l2 before every repeat, each repeat timed by gpu::time_kernel.
gpu::Timing time_cold(const std::function<void(cudaStream_t)>& launch, int warmup, int repeats,
                      cudaStream_t stream = nullptr);

// Tuning helper: times launch(candidate) for each candidate (median of `repeats`, L2 evicted
// before each repeat when `cold`) and returns the fastest candidate.
int pick_fastest(const std::vector<int>& candidates, const std::function<void(int, cudaStream_t)>& launch, bool cold,
                 int repeats = 5);

// Only the check (used by the GPU tests): fresh inputs, poison, one launch, compare.
Verification verify_once(KernelInstance& inst, std::uint64_t seed);

// The sweep's measurement on the current device: measure() with cold runs outside the L2.
Measurer gpu_measurer();

// `ceiling validate` as a library call on device `device`: the sweep on the descriptor's L2 size,
// the free device memory as the size limit, the device record, dates and command line filled.
validation::ValidationReport run_validation_on_gpu(const HardwareDescriptor& hw, const std::string& descriptor_path,
                                                   const std::vector<const KernelVariant*>& variants, Sweep sweep,
                                                   int device, const std::string& command_line);

}  // namespace ceiling::kernels
