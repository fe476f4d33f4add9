// Reuse of a per-architecture probe's results (ProbeInfo::per_architecture: the tensor cores'
// arithmetic is the same on every GPU of a compute capability): where calibrate finds them instead
// of a run. Plain C++ (CPU-tested); probes/calibration.cpp applies it.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/descriptor.hpp"

namespace ceiling::probes {

// Where a per-architecture probe's results can come from instead of a run: the starting
// descriptor when its compute capability is the device's, else the first candidate of that
// compute capability; in either case only if it holds numerics entries written by `probe`.
// `instructions` are those entries with the numerics only (no timings); `details` the probe's
// entry of the source's probe-details file, when there is one.
struct ArchitectureReuse {
  std::string source;  // file (or "the starting descriptor (<origin>)")
  std::string measured;  // latest date among the reused entries
  std::vector<TensorInstruction> instructions;
  nlohmann::json details;  // null when the source has no probe details for it
};
std::optional<ArchitectureReuse> architecture_reuse(const std::string& probe, const std::string& compute_capability,
                                                    const HardwareDescriptor& start, const std::string& start_cc,
                                                    const std::string& start_origin,
                                                    const std::vector<std::filesystem::path>& candidates);

}  // namespace ceiling::probes
