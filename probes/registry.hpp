// One registry for every probe (STYLE habit 1, nvbench NVBENCH_BENCH): name, axes, what it
// measures, which descriptor fields it fills, minimum compute capability, skip-with-reason.
#pragma once
#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "../model/descriptor.hpp"

namespace ceiling::gpu {
class PowerMeter;
}

namespace ceiling::probes {

struct ProbeContext {
  int device = 0;
  bool quick = false;  // smaller sweeps, fewer repeats: calibrate --quick
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  long long l2_bytes = 0;
  // Board power (calibrate --power; gpu/power.hpp): probes that support it (mma, wgmma-sp,
  // dram-bandwidth, l2-bandwidth) run their best configuration again under it and record watts.
  // Null: not asked for, or NVML not available.
  gpu::PowerMeter* power = nullptr;
  // Milliseconds of idle before each counted wgmma / wgmma-sp run: the tensor cores' clock (and
  // so their FLOP/s) follows how long the GPU rested before (calibrate --tc-rest-ms).
  int tc_rest_ms = 50;
  // Progress for long probes: fraction in [0,1] and a short label; may be empty.
  std::function<void(double, const std::string&)> progress;
};

// A measurement destined for a descriptor field, addressed as in HardwareDescriptor::field().
// The probe states the unit: it must match a fixed field's dimension (calibration checks it) and
// is the dimension of a new `memory.<level>.extra.<name>` entry.
struct FieldMeasurement {
  std::string path;
  Dimension dimension;
  MeasuredValue value;
};

// A whole ramp table (memory.<level>.ramp.<pattern>), not one number.
struct RampOutput {
  MemoryLevelKind level = MemoryLevelKind::dram;
  std::string pattern;
  RampTable table;
};

struct ProbeOutput {
  std::vector<FieldMeasurement> fields;
  std::vector<RampOutput> ramps;
  std::vector<TensorInstruction> instructions;
  std::vector<DpxFunction> dpx;  // merged with HardwareDescriptor::upsert_dpx (probe "dpx")
  std::optional<AsyncCopy> async_copy;  // merged with HardwareDescriptor::upsert_async_copy (probe "async-copy")
  std::optional<DistributedSharedMemory> dsm;  // merged with HardwareDescriptor::upsert_dsm (probe "dsm")
  // Curves and sweeps behind the numbers (latency vs footprint, ILP x warps grid, ...),
  // stored next to the descriptor and read by reports. Free-form but stable per probe.
  nlohmann::json details = nlohmann::json::object();
  std::optional<std::string> skipped;  // reason, when the probe could not run here
};

struct ProbeInfo {
  std::string name;         // "pchase-latency", "dram-bandwidth", "mma", ...
  std::string group;        // "memory" | "compute"
  std::string description;  // one line: what it measures
  std::map<std::string, std::vector<std::string>> axes;  // parameter axes, for --list
  std::vector<std::string> fills;  // descriptor paths it fills ("memory.dram.bandwidth", ...)
  int min_cc = 80;          // 10*major + minor
  bool in_quick = true;     // part of calibrate --quick
  std::function<ProbeOutput(const ProbeContext&)> run;
  // What it measures is a property of the architecture (the compute capability), not of one GPU:
  // the tensor cores' arithmetic (mma-numerics, wgmma-numerics). A calibration that does not name
  // it in --probes reuses its results from the starting descriptor or a shipped descriptor of the
  // same compute capability (measured there, never a paper value) and says so; naming it, or
  // --remeasure-architecture, runs it.
  bool per_architecture = false;
  // It runs sparse tensor-core instructions (mma.sp, wgmma.sp). Once one has run, every
  // tensor-core run later in the same process gets a lower SM clock (H200, 2026-11-26: wgmma
  // FP16/BF16/TF32/FP8/INT8 -1 to -3%, mma dense -3%, also after a one-warp mma.sp check kernel
  // alone; a 1 s rest does not recover it, a new process does; FP64 DMMA, CUDA-core and memory
  // figures unchanged). The default order runs such probes last.
  bool runs_sparse_tensor = false;
  // Its least times are not a bound across processes (memory-ramp: warm L2 times move by 2-8%
  // between processes on one board): calibrate runs it again in CalibrationOptions::ramp_processes
  // - 1 new processes and keeps the least time at each size (merge_ramp_runs).
  bool least_over_processes = false;
};

class Registry {
 public:
  void add(ProbeInfo info);
  const std::vector<ProbeInfo>& all() const { return probes_; }
  const ProbeInfo* find(const std::string& name) const;

 private:
  std::vector<ProbeInfo> probes_;
};

Registry& registry();

// Registration from any translation unit: static ceiling::probes::Registrar r{ProbeInfo{...}};
// (the probe libraries are linked as OBJECT libraries so static registrars are kept).
struct Registrar {
  explicit Registrar(ProbeInfo info) { registry().add(std::move(info)); }
};

}  // namespace ceiling::probes
