// The calibration session: choose probes, start from a descriptor, run each probe, merge its
// measurements (spec values kept, measured ones replaced), and save the descriptor and its probe
// details (docs/FORMATS.md) atomically after every probe, so an interrupted run resumes.
#pragma once
#include <filesystem>
#include <optional>
#include <nlohmann/json.hpp>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "../model/descriptor.hpp"
#include "host/architecture_reuse.hpp"
#include "registry.hpp"

namespace ceiling::probes {

struct CalibrationOptions {
  int device = 0;
  std::vector<std::string> probes;  // registry names; empty = all (the in_quick ones with `quick`)
  bool quick = false;
  // Descriptor to write, merged into when it exists. Empty: "<id>.yaml" in the working directory,
  // id of the candidate that matches the device name, else id_from_name(device name).
  std::filesystem::path out;
  // Where to start when `out` does not exist yet: `base` (given as the caller wrote it and turned
  // into a file by resolve_base, called only then; empty = none), else the first of `candidates`
  // whose identity.name is the device's, else a new descriptor. The library knows no directories.
  std::string base;
  std::function<std::filesystem::path(const std::string&)> resolve_base;  // empty: `base` is a path
  std::vector<std::filesystem::path> candidates;
  std::function<std::string(const std::string& device_name)> id_from_name;  // required when `out` is empty
  // Run the per-architecture probes (ProbeInfo::per_architecture) even where their results can be
  // reused; naming them in `probes` does the same for those named.
  bool remeasure_architecture = false;
  // Board power through NVML under the probes that support it (ProbeContext::power).
  bool power = false;
  // Idle before each counted tensor-core run (ProbeContext::tc_rest_ms).
  int tc_rest_ms = 50;
  // Probes marked least_over_processes (memory-ramp) run this many times in all, the others each
  // alone in a new process through run_probe_in_child, and the descriptor keeps the least time at
  // each size (merge_ramp_runs). 1, or no run_probe_in_child: this process only.
  int ramp_processes = 1;
  // Runs probe `probe` alone on this device in a new process (`run`: 2 .. ramp_processes) and returns
  // the descriptor it wrote; throws std::runtime_error with the reason when it fails. The library
  // starts no processes: the CLI runs itself.
  std::function<HardwareDescriptor(const std::string& probe, int run)> run_probe_in_child;
};

// ok: measured now; skipped: could not run (reason); reused: a per-architecture probe's results
// taken from a descriptor of the same compute capability (reason says which, and when measured).
enum class ProbeStatus { ok, skipped, reused };
std::string_view to_string(ProbeStatus);

struct ProbeRunSummary {
  std::string name;
  ProbeStatus status = ProbeStatus::ok;
  std::string reason;  // why it was skipped (cannot run here, or "failed: ...")
  double seconds = 0;
  std::vector<FieldMeasurement> fields;  // what it measured, in the probe's order
};

struct CalibrationResult {
  std::filesystem::path descriptor_path;
  std::filesystem::path probes_path;  // probes_path_for(descriptor_path)
  std::string origin;                 // what the descriptor started from, for the log
  std::string device_name, device_uuid, compute_capability;
  HardwareDescriptor descriptor;      // as saved after the last probe
  std::vector<ProbeRunSummary> probes;
  double seconds = 0;
  int ran() const;  // probes with status ok
};

// What the session is doing, for a progress display (the library prints nothing on stdout).
struct CalibrationEvent {
  enum class Kind { running, progress, done };
  Kind kind = Kind::running;
  std::size_t index = 0;  // 1-based position among the chosen probes
  std::size_t count = 0;
  std::string probe;
  double fraction = 0;  // progress: [0, 1]
  std::string label;    // progress: what the probe is at
  double seconds = 0;   // done: time the probe took
};
using CalibrationProgress = std::function<void(const CalibrationEvent&)>;

// No usable GPU here: nothing can be measured (the CLI exits 2).
class NoGpuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The probes `names` select (all, or the quick subset, when empty). Throws std::runtime_error
// naming the known probes for an unknown name; needs no GPU.
std::vector<const ProbeInfo*> choose_probes(const std::vector<std::string>& names, bool quick);

// Runs the session. Throws std::runtime_error for an unknown probe (before looking for a GPU),
// NoGpuError without a GPU, std::runtime_error for a device out of range or a descriptor that
// cannot be read or written. A probe that fails is recorded as skipped with its reason.
CalibrationResult run_calibration(const CalibrationOptions& options, const CalibrationProgress& progress = {});

}  // namespace ceiling::probes
