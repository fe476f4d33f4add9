// One validation measurement: verify a variant on fresh data, then time it (gpu::time_kernel).
#pragma once
#include <cstdint>

#include "gpu/gpu.hpp"
#include "registry.hpp"

namespace ceiling::kernels {

struct MeasureOptions {
  int warmup = 3;
  int repeats = 20;
  bool flush_l2 = false;        // cold runs: out-of-L2 sizes; in-L2 sizes stay warm on purpose
  std::uint64_t seed = 0x243F6A8885A308D3ull;
  cudaStream_t stream = nullptr;
};

struct Measurement {
  ProblemSize size;
  KernelModel model;
  Verification check;
  gpu::Timing timing;
  bool l2_flushed = false;
};

// Verifies (fresh random inputs, poisoned output, CPU reference) and throws std::runtime_error
// naming the variant and size when the output is wrong; then warms up and times.
Measurement measure(const KernelVariant& v, const ProblemSize& s, const MeasureOptions& o);

// Only the check (used by the GPU tests): fresh inputs, poison, one launch, compare.
Verification verify_once(const KernelVariant& v, KernelInstance& inst, std::uint64_t seed);

}  // namespace ceiling::kernels
