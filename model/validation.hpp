// Validation: measured kernel times held against the model (SPEC "Validation", issue #5).
// Pure C++: verdicts, efficiency, TC/CC speedups against Eq. 22/23, geometric means per side of
// the L2 split (GPGPU'25 Figure 6), the partial-overlap factor phi fitted by least squares, and
// the results JSON of docs/FORMATS.md ("ceiling/validation/1").
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "descriptor.hpp"
#include "kernel_model.hpp"
#include "memory_roof.hpp"

namespace ceiling::validation {

inline constexpr const char* kValidationSchema = "ceiling/validation/1";

// The paper's split (GPGPU'25 Figure 6): a working set of at most half the L2 is "in L2" and
// is bounded by the L2 bandwidth; anything larger is bounded by DRAM.
std::string memory_level_for(double working_set_bytes, double l2_bytes);  // "l2" | "dram"
std::string side_of_split(const std::string& memory_level);              // "in-l2" | "out-of-l2"

// Default working-set sweep: log-spaced from l2/32 to 8 x l2 (4 points per octave; --quick: 1),
// the split at l2/2 falls on a grid point.
std::vector<double> default_sweep_bytes(double l2_bytes, bool quick);

struct TimeStats {
  double median = 0, min = 0, max = 0, cv = 0;  // seconds per launch
  int repeats = 0;
  int launches = 1;  // back-to-back launches per timed region (warm runs); times are divided by it
};

// CUDA events resolve about 0.5 us (cudaEventElapsedTime); per launch that is 0.5 us / launches.
inline constexpr double kEventResolutionS = 0.5e-6;

// The model's lower bound on a variant's time at one memory level.
struct TimeBound {
  std::string memory_level;     // level whose bandwidth bounds: "l2" | "dram" (DRAM when the
                                // descriptor has no L2 bandwidth; `note` says so)
  double bandwidth = 0;         // bytes/s of that level for the kernel's read:write mix (memory_roof)
  std::string bandwidth_source; // "measured" | "spec" | "mixed"
  MemoryRoof roof;              // the same roof, with its measured maximum and first-byte time
  double t_memory = 0;          // Q / BW
  double t_compute = 0;         // W / P(unit) (tensor cores: P * tensor_core_fraction)
  double time_s = 0;            // max(t_memory, t_compute): the fully overlapped time, Eq. 17
  double alpha = 0;             // effective P(TC)/P(CC) for this kernel (from predict)
  double speedup_bound_eq22 = 0;
  double speedup_limit_eq23 = 0;
  double speedup_upper_bound = 0;  // max(overlapped, un-overlapped) speedup: holds in every regime
  std::string note;             // e.g. why predict() was not used
  // The compute ceiling behind t_compute, in words: "CUDA-core ceiling 28.28 TFLOP/s
  // (compute.cuda_core_gemm_loop.fp64, measured)"; empty where no peak was found.
  std::string compute_text;
};

// Bound of `k` on `unit` with the roof of `memory_level` for the kernel's streams (memory_roof,
// the function predict uses). Throws std::runtime_error when the descriptor lacks the level.
TimeBound time_bound(const HardwareDescriptor& hw, const KernelModel& k, ComputeUnit unit,
                     const std::string& memory_level);

// Statistical margin of a median over `repeats` samples of this spread: ~2 standard errors
// (standard error of a median ~ 1.2533 sigma / sqrt(n)). A bound beaten by less is not a beat.
double noise_margin(double cv, int repeats);
// Relative margin of a measurement: noise_margin plus the event resolution relative to the time.
double measurement_margin(const TimeStats& t);

struct Verdict {
  std::string verdict;  // "within-bound" | "beats-bound"
  std::string reason;
};

// Context a verdict needs to name the likely cause of a beat.
struct VerdictContext {
  double working_set_bytes = 0;
  double l2_bytes = 0;       // the L2 size of the split
  std::string memory_level;  // level the bound used
  std::string bandwidth_source;
  double bound_bandwidth = 0;
  double achieved_bandwidth = 0;
  bool l2_flushed = false;
  // Compute-bound (t_compute >= t_memory): the bound is the compute ceiling, named by compute_text.
  bool compute_bound = false;
  std::string compute_text;
};
Verdict judge_time(double efficiency, const TimeStats& t, const VerdictContext& ctx);

struct KernelResult {
  std::string kernel;     // "scale"
  std::string variant;    // "cuda_core" | "tensor_core"
  std::string precision;  // "fp64"
  std::map<std::string, double> size;  // {"n": ...} or {"m": ..., "n": ...}
  double working_set_bytes = 0;
  std::string memory_level;
  double work_flop = 0, traffic_bytes = 0, intensity = 0;
  TimeStats time_s;
  double achieved_bytes_per_s = 0, achieved_flop_per_s = 0;
  double bound_time_s = 0, efficiency = 0;
  std::string verdict, verdict_reason;
  // Beyond the required fields (readers may ignore them):
  double bound_bandwidth = 0;
  std::string bandwidth_source;
  std::string bound_level;  // level whose bandwidth the bound used (may differ from memory_level)
  double t_memory_s = 0, t_compute_s = 0;
  double sm_clock_hz = 0;
  bool l2_flushed = false;
  bool flagged = false;
  std::string flag_reason;
  double verify_error = 0;
  std::string description;
  double alpha = 0, speedup_bound_eq22 = 0, speedup_limit_eq23 = 0;  // from the bound (TC side)
  double speedup_upper_bound = 0;  // roofline.hpp speedup_upper_bound at this level (0: none)
  // The tight bound (kernel_model.hpp tight_bound) for how this result was timed: launched once
  // (cold) or back-to-back (warm, launches > 1); efficiency = tight bound / median.
  double tight_bound_time_s = 0, tight_efficiency = 0;
  double tight_launch_s = 0, tight_first_byte_s = 0;
  double tight_ramp_s = 0;             // the ramp hull at Q (0: the descriptor has no ramp tables)
  double tight_bandwidth = 0;          // the tight roof (the mix's measured maximum), bytes/s
  std::string tight_first_byte_from;   // "ramp envelope" | "level latency"
  int tight_passes = 1;                // launch and first byte counted this many times (KernelModel::passes, back-to-back)
  int passes = 1;                      // the model's dependent passes over the data (KernelModel::passes): a stencil's one launch per step
  std::string tight_verdict;  // "within-bound" | "beats-bound" (a defect in the kernel or a term)
  std::string tight_missing;  // descriptor fields the tight bound lacked (their terms taken as 0)
  std::string tight_reason;   // beats-bound only: which term fails (tight_beats_reason)
  std::string bound_note;
  // Bytes read and written (the kind's streams). For out-of-L2 sizes when the descriptor has a
  // measured value of the DRAM pattern the streams resemble (dram_pattern_for_streams: SCALE
  // "scale", GEMV "read"): its name and bandwidth; fraction = achieved / pattern.
  double read_bytes = 0, write_bytes = 0;
  std::string dram_pattern;
  double dram_pattern_bytes_per_s = 0;
  // Which implementation of the unit (several per kind and unit: SpMV "ours" and "cusparse"; empty
  // when the unit has one) and the input as people name it ("cant", "n=1048576"; empty: from size).
  std::string implementation;
  std::string label;
};

// Why a result beats its tight bound, for the reader who must find the defect: the terms, and the
// calibration's memory-ramp least time at this level and size (the ramp pattern nearest the result's
// read share, interpolated between its points). A run faster than the ramp at the same size names the
// ramp's least time (measured in the calibrating process) as the term that fails; a run between the
// envelope's line and the ramp's points names the line's fit.
std::string tight_beats_reason(const HardwareDescriptor& hw, const KernelResult& r);

// Builds a result from one measurement: bound, efficiency = bound / median, verdict.
KernelResult evaluate(const HardwareDescriptor& hw, const KernelModel& k, ComputeUnit unit,
                      const std::map<std::string, double>& size, const TimeStats& t,
                      double l2_bytes, bool l2_flushed);

// A compute-bound result whose run clock (r.sm_clock_hz, measured right after its repeats) is below
// the descriptor's measured SM clock (the clock its compute ceilings were timed at) by more than 3%:
// appends to the verdict reason the two clocks and the efficiency at the descriptor's clock, so a
// power or thermal clock drop is not read as the kernel's shortfall. The bound, the efficiency and
// the verdict stay as they are (the ceiling is a short-run figure; issue 14's "clock under load").
void note_run_clock(KernelResult& r, const HardwareDescriptor& hw);

struct SpeedupResult {
  std::string kernel;
  std::string precision;
  std::map<std::string, double> size;
  double working_set_bytes = 0;
  std::string memory_level;
  double measured = 0;        // T(CC) / T(TC): the tensor-core speedup, as in Eq. 19-22
  double bound_eq22 = 0;      // Eq. 22 with the kernel's effective alpha and this level's balance
  double limit_eq23 = 0;      // Eq. 23 with the same alpha
  double upper_bound = 0;     // max(overlapped, un-overlapped = Eq. 22): the top in every regime
  double alpha = 0;
  std::string verdict;        // "within-bound" | "beats-bound"
  std::string verdict_reason;
  std::string cuda_core_implementation, tensor_core_implementation;  // empty: the unit's only one
  std::string label;          // the input ("cant"), as the results' label
};
// Pairs cuda_core and tensor_core results of the same kernel, precision and size.
// The bounds come from the tensor-core result's own TimeBound (alpha, Eq. 22, Eq. 23).
std::vector<SpeedupResult> speedups(const std::vector<KernelResult>& results);

struct Geomean {
  std::string kernel;
  std::string precision;
  std::string side;          // "in-l2" | "out-of-l2"
  double cc_over_tc = 0;     // geomean of T(CC)/T(TC), the speedups' "measured" (docs/FORMATS.md)
  double cc_speedup = 0;     // 1 / cc_over_tc: CUDA cores' speedup over tensor cores, GPGPU'25 Fig. 6
  int count = 0;
  std::string cuda_core_implementation;  // one geomean per CUDA-core implementation (SpMV: ours, cusparse)
};
std::vector<Geomean> geomeans(const std::vector<SpeedupResult>& s);

// Partial overlap (ours): T = max(Tm, Tc) + (1 - phi) min(Tm, Tc) + Tother, fitted by linear
// least squares on (1 - phi, Tother). phi is clamped to [0, 1] (Tother refitted); phi_raw is the
// unconstrained solution, phi_stderr its standard error (least-squares covariance, n - 2 degrees of
// freedom; 0 with 3 points fitted exactly or phi not identifiable); r2 is of T against the fitted T,
// residual_rms the RMS of (T - fitted) / T.
struct OverlapPoint {
  double t_measured = 0, t_memory = 0, t_compute = 0;
};
struct OverlapFit {
  std::string kernel, variant, precision;
  double phi = 0, phi_raw = 0, t_other_s = 0, r2 = 0;
  double phi_stderr = 0, residual_rms = 0;
  int points = 0;        // fitted
  int points_total = 0;  // results of the (kernel, variant, precision)
  std::string memory_level;  // level of the points fitted; "" = every level
  std::string selection;     // which points were fitted and why
  bool clamped = false;
  std::string note;
};
OverlapFit fit_overlap(const std::vector<OverlapPoint>& points);  // throws with < 3 points
// Where Eq. 17 and 18 differ most: Tm/Tc in [1/4, 4] (I between B/4 and 4B).
inline constexpr double kOverlapRidgeSpan = 4.0;
// One fit per (kernel, variant, precision) and memory level with at least 3 results near the ridge
// (Tm/Tc within kOverlapRidgeSpan, the intensity sweep's); a group with fewer is fitted over every
// result (levels pooled; phi then poorly identified, `selection` says so).
std::vector<OverlapFit> overlap_fits(const std::vector<KernelResult>& results);

struct DeviceRecord {
  std::string name, uuid, compute_capability, driver, cuda_version;
  int sm_count = 0;
  double l2_bytes = 0;  // what the device reports (cudaDevAttrL2CacheSize)
};

struct ValidationReport {
  std::string schema = kValidationSchema;
  std::string tool_version, date, command_line;
  DeviceRecord device;
  double sm_clock_hz = 0;
  // The L2 size the sweep split at (the descriptor's L2 capacity); device.l2_bytes is what the
  // device reports. 0 in files written before both were recorded: the device's is used.
  double l2_split_bytes = 0;
  double split_l2_bytes() const { return l2_split_bytes > 0 ? l2_split_bytes : device.l2_bytes; }
  std::string descriptor_id, descriptor_path;
  std::vector<KernelResult> results;
  std::vector<SpeedupResult> speedups;
  std::vector<Geomean> geomeans;
  std::vector<OverlapFit> overlap_fits;
  double wall_time_s = 0;  // extra: how long the validate run took
};

// Fills speedups, geomeans and overlap fits from the results.
void summarize(ValidationReport& r);

nlohmann::ordered_json to_json(const ValidationReport& r);
// Throws std::runtime_error naming the key for a wrong schema or a missing/mistyped field.
ValidationReport from_json(const nlohmann::json& j);
// The file's text: lists one row per line, the rest one member per line.
std::string dump_report(const ValidationReport& r);
void save_report(const ValidationReport& r, const std::filesystem::path& file);  // tmp + rename
// Streams the file (model/json_stream.hpp): rows go straight into the report, the file is never
// held whole; at most 4,000,000 entries per list, 8 GiB. Errors name the file.
ValidationReport load_report(const std::filesystem::path& file);

// Terminal tables: results, speedups with bounds, geomeans, fits.
std::string format_table(const ValidationReport& r);

}  // namespace ceiling::validation
