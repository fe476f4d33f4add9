// `ceiling profile` (issue 19): a user's kernels, profiled by Nsight Compute, held against the
// calibrated ceilings of a descriptor. Pure C++: the analysis of an ncu raw-page export runs on
// any machine. Units are in the names (flop, bytes, seconds).
//
// Per launch, from the counters:
//   W = CUDA-core flops (add, mul: 1; FMA: 2, per thread instruction of FP64/FP32/FP16) plus the
//       tensor-path ops of each source type (sm__ops_path_tensor_src_*: flops as executed, padding
//       included; the flops per tensor instruction tell the shape: 512 = DMMA m8n8k4).
//   Q per level: DRAM bytes read + written; L2 = sectors from L1 (read + write) x 32 B; L1 =
//       l1tex__t_bytes; shared = smsp__sass_data_bytes_mem_shared.
//   bound = max( max over levels of max(Q/BW, latency + Q_read/BW), max over units W/P )
// BW is the level's tight roof for the launch's read:write mix (memory_roof().bandwidth_max: the
// largest bandwidth any probe measured for that mix; L1 and shared: bytes/clock/SM x SMs x the
// launch's clock); latency is the level's measured load latency at the higher of the descriptor's
// and the launch's SM clock; P is the descriptor's peak of that unit and precision. The tight
// bound's launch and first-byte terms are not added: they are calibrated with CUDA events around a
// launch, and ncu's gpu__time_duration does not contain the launch. Every term is a measured
// maximum rate or minimum latency, so a kernel below the bound is a defect in a counter, a probe or
// the model ("beats-bound").
#pragma once
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "descriptor.hpp"
#include "ncu_csv.hpp"

namespace ceiling {

inline constexpr const char* kProfileSchema = "ceiling/profile/1";

// The metrics `ceiling profile` asks ncu for (Nsight Compute 2025.3 names), in the order given to
// --metrics. `required`: without them there is no bound (time, DRAM bytes, CUDA-core flop counts).
struct ProfileMetric {
  std::string name;
  bool required = false;
  std::string what;  // one line: what ceiling uses it for
};
const std::vector<ProfileMetric>& profile_metrics();
std::string profile_metric_list();  // comma-separated, for ncu --metrics

// Levels a launch's traffic is counted at, in the order the table prints them.
inline constexpr MemoryLevelKind kProfileLevels[] = {MemoryLevelKind::dram, MemoryLevelKind::l2, MemoryLevelKind::l1,
                                                     MemoryLevelKind::shared};

struct LevelTraffic {
  double read_bytes = 0, write_bytes = 0;  // write 0 and read = bytes where the split is unknown (L1, shared)
  bool split_known = true;
  double bytes() const { return read_bytes + write_bytes; }
};

// What one launch (or the sum of a kernel's launches) did, from the counters.
struct ProfileCounts {
  double time_s = 0;
  std::map<Precision, double> cuda_core_flop;    // by precision
  std::map<Precision, double> tensor_core_flop;  // by source type (fp64, fp16, bf16, tf32, fp8, int8)
  std::map<std::string, double> tensor_instructions;  // "dmma", "hmma", "imma", "gmma"
  // Thread instructions of a precision that are not add/mul/fma (ncu's fp64/fp32/fp16 category
  // minus them): BF16 arithmetic, conversions, compares, min/max. Not in W; a note names them.
  std::map<Precision, double> other_fp_instructions;
  std::map<MemoryLevelKind, LevelTraffic> traffic;    // levels whose counters are present
  double work_flop() const;
  double tensor_flop() const;
  double cuda_core_flop_total() const;
};

// One term of a bound: "dram", "l2", "l1", "shared", "tensor_core.fp64", "cuda_core.fp32".
struct BoundTerm {
  std::string name;
  double time_s = 0;
  double bandwidth_or_peak = 0;   // bytes/s or flop/s used
  double latency_s = 0;           // memory terms: the load latency added to the reads
  std::string how;                // "scale mix (read share 0.5), measured maximum"
};

// Eq. 22 for a CUDA-core kernel (what tensor cores could give), or the reverse for a tensor-core
// kernel (what CUDA cores would lose): S = T(CUDA cores) / T(tensor cores) lies in [lower, upper].
struct ProfileSpeedup {
  std::string direction;   // "tensor cores could give" | "CUDA cores would lose"
  Precision precision = Precision::fp64;
  std::string level;       // memory level whose roof gives B
  double alpha = 0, balance = 0, intensity = 0;
  double lower = 0, upper = 0;
  std::string regime;      // "memory-bound" | "compute-bound" | "alpha<=1"
  std::string note;        // e.g. "CUDA-core peak of fp32 used for bf16"
};

struct ProfileLaunch {
  std::string id;
  int line = 0;           // record in the export
  std::string grid, block;
  double clock_hz = 0;    // sm__cycles_elapsed.avg.per_second, 0 when absent
  ProfileCounts counts;
  std::vector<BoundTerm> terms;
  double bound_s = 0;
  std::string bounded_by;  // the largest term's name
  double efficiency = 0;   // bound / time
  std::string verdict;     // "within-bound" | "beats-bound"
};

struct ProfileKernel {
  std::string name;        // as ncu prints it
  std::string short_name;  // the function name without scope, template arguments and parameters
  int launches = 0;
  int launches_beating = 0;
  ProfileCounts counts;    // sums over launches
  double time_share = 0;   // of all profiled launches' time
  std::string unit;        // "tensor_core" | "cuda_core" | "none" (no flops counted)
  std::optional<Precision> precision;  // of the most flops
  double flop_per_tensor_instruction = 0;  // tensor flops / tensor-pipe instructions (the shape)
  std::map<MemoryLevelKind, double> intensity;  // W / Q per level
  double bound_s = 0;      // sum of the launches' bounds
  std::map<std::string, double> term_s;  // sum per term name
  std::string bounded_by;  // term with the largest sum
  double efficiency = 0;   // bound_s / time_s
  std::string verdict;     // "beats-bound" when the summed time is below the summed bound
  double clock_hz = 0;     // time-weighted mean of the launches' clocks
  std::optional<ProfileSpeedup> speedup;
  std::string speedup_missing;  // why there is none
  std::vector<ProfileLaunch> per_launch;  // filled when asked for
};

struct ProfileOptions {
  bool per_launch = false;
  SourcePreference source = SourcePreference::measured_else_spec;
};

struct ProfileResult {
  std::string hardware_id, hardware_name, export_file;
  std::vector<std::string> devices;  // GPU names in the export
  int launches = 0;
  double time_s = 0;
  std::vector<ProfileKernel> kernels;  // sorted by time, largest first
  std::vector<std::string> notes;      // missing metrics, device mismatch, skipped lines
  std::vector<std::string> provenance; // descriptor numbers used
  std::vector<std::string> ncu_command;  // when `ceiling profile` ran ncu
};

// Counts of one launch; metrics the export lacks count 0 (analyse_profile notes them).
ProfileCounts launch_counts(const NcuLaunch& l);
// The function name of a demangled kernel name: "void ns::scale_cuda_core<double, 1>(const double*,
// ...)" -> "scale_cuda_core"; "sm90_xmma_gemm_..." unchanged.
std::string kernel_short_name(const std::string& demangled);
// The template arguments right after `short_name` in `demangled`, without the parameter list:
// "<2, at::AUnaryFunctor<double, ...>>"; namespaces ("at::", "std::") left out when asked.
std::string kernel_template_arguments(const std::string& demangled, const std::string& short_name,
                                      bool drop_namespaces = true);

// Throws std::runtime_error naming what is missing: an export without profiled launches, or
// without the required metrics (the message lists them and says how to export them).
ProfileResult analyse_profile(const NcuExport& ex, const HardwareDescriptor& hw, const ProfileOptions& opt = {});

nlohmann::json profile_to_json(const ProfileResult& r);
// The text table, kernels by time share (the one worth working on first), then the notes.
std::string profile_table(const ProfileResult& r, std::size_t max_rows = 40);

}  // namespace ceiling
