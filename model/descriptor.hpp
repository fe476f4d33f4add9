// Hardware descriptor: one GPU, every number with its provenance (SPEC "Hardware descriptors").
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "input_error.hpp"
#include "units.hpp"

namespace ceiling {

inline constexpr const char* kHardwareSchema = "ceiling/hardware/1";

enum class Precision { fp64, fp32, tf32, fp16, bf16, fp8, int8, int4, int32 };
enum class ComputeUnit { cuda_core, tensor_core };
enum class MemoryLevelKind { dram, l2, l1, shared };

std::string_view to_string(Precision);
std::string_view to_string(ComputeUnit);
std::string_view to_string(MemoryLevelKind);
Precision parse_precision(std::string_view);          // throws std::invalid_argument
ComputeUnit parse_compute_unit(std::string_view);     // "cuda_core" | "tensor_core"
MemoryLevelKind parse_memory_level(std::string_view); // "dram" | "l2" | "l1" | "shared"
int bytes_per_value(Precision);                       // fp64 8, fp32/tf32/int32 4, fp16/bf16 2, fp8/int8 1, int4 1 (rounded up)

// A value from a datasheet or paper.
struct SpecValue {
  double value = 0;       // base unit of the field's dimension
  std::string reference;  // where it comes from, e.g. "Zhang et al. GPGPU'25, Table 1"
};

// A value from one of our probes.
struct MeasuredValue {
  double median = 0;  // base unit of the field's dimension; this is "the" measured value
  double min = 0;
  double max = 0;
  int repeats = 0;
  double cv = 0;             // coefficient of variation of the repeats
  std::string probe;         // registry name, e.g. "dram-bandwidth"
  std::string date;          // ISO 8601, UTC
  double sm_clock_hz = 0;    // SM clock measured during the probe
  bool flagged = false;      // throttled or noisy after retries
  std::string note;          // optional, e.g. the pattern or configuration that reached it
};

enum class SourcePreference { measured_else_spec, spec, measured };
std::string_view to_string(SourcePreference);
SourcePreference parse_source_preference(std::string_view);  // "measured" | "spec" | "auto"

// One number of a descriptor with everything we know of where it comes from.
struct Field {
  Field() = default;
  // Same meaning as aggregate initialization, spelled out so `Field x{Dimension::bytes}` is warning-free.
  Field(Dimension d, std::optional<SpecValue> s = std::nullopt, std::optional<MeasuredValue> m = std::nullopt)
      : dimension(d), spec(std::move(s)), measured(std::move(m)) {}

  Dimension dimension = Dimension::dimensionless;
  std::optional<SpecValue> spec;
  std::optional<MeasuredValue> measured;

  bool present() const { return spec || measured; }
  // measured_else_spec: measured median if present, else spec. Returns nullopt when the
  // preferred source is absent (measured pref without a measurement).
  std::optional<double> value(SourcePreference pref = SourcePreference::measured_else_spec) const;
  // Which source value() used: "measured", "spec", or "missing".
  std::string_view source(SourcePreference pref = SourcePreference::measured_else_spec) const;
};

// The ramp probe's least times to move X bytes at one level in one stream pattern (issue 12),
// timed as validate times that level. The tight bound's memory term is the lower convex hull of
// these points (memory_roof.hpp): at mid sizes part of the written lines stay in the L2 when a
// kernel ends, so the time per byte grows with X and no single line is tight at every size.
struct RampTable {
  std::vector<std::pair<double, double>> points;  // (bytes, seconds), bytes strictly increasing
  std::string probe;         // registry name, "memory-ramp"
  std::string date;          // ISO 8601, UTC
  double sm_clock_hz = 0;
  std::string note;
  // How each point was timed (kRampTimings): "cold" (the L2 evicted, events around one launch, as
  // validate times out-of-L2 kernels), "warm" (back-to-back launches, per launch), or
  // "warm-validate" (as "warm", and the counted repeats each followed by a clock sample, exactly as
  // validate times in-L2 kernels); empty in descriptors written before 2026-11-27. Provenance
  // only: the L2's tables stay data (memory_roof.cpp says why).
  std::string timing;
  bool present() const { return !points.empty(); }
};
inline constexpr const char* kRampTimings[] = {"cold", "warm", "warm-validate"};

struct MemoryLevel {
  Field capacity{Dimension::bytes};
  Field bandwidth{Dimension::bytes_per_second};       // whole device, best sustained pattern
  Field bandwidth_per_sm{Dimension::bytes_per_cycle}; // bytes/clock/SM (L1, shared)
  Field latency{Dimension::cycles};                   // load-to-use, one dependent chain
  // Named access patterns, e.g. DRAM "read", "write", "copy", "scale", "triad".
  std::map<std::string, Field> patterns;               // each Dimension::bytes_per_second
  // Named capacity-like knees from the footprint sweep, e.g. "l2_far_half", "tlb_reach".
  std::map<std::string, Field> extra;                  // dimension as written
  // Per pattern, the fixed time of the ramp probe's lower envelope T(X) >= first_byte + X / BW
  // (issue 12: launch, first bytes and wave ramp of all SMs moving X bytes of this level, timed
  // as validate times that level: cold single launches for DRAM, back-to-back warm ones for L2).
  std::map<std::string, Field> first_byte;             // each Dimension::seconds
  // The envelope's slope per pattern, where the level's `patterns` come from another probe
  // (DRAM: dram-bandwidth); the tight bound takes the larger of the two, so it stays below the
  // envelope. For L2 the ramp's slopes are the L2 patterns themselves.
  std::map<std::string, Field> ramp_bandwidth;         // each Dimension::bytes_per_second
  // Per pattern, every point of the ramp (the least time at each size); see RampTable.
  std::map<std::string, RampTable> ramp;
};

// Fixed costs every kernel pays (measured minima bound a kernel's time from below; issue 12).
struct FixedCosts {
  // CUDA events around one launch of an empty one-block kernel: how validate times a cold run.
  Field launch_single{Dimension::seconds};
  // Per launch, back-to-back empty kernels on one stream: how validate times warm runs.
  Field launch_back_to_back{Dimension::seconds};
};

// What a numeric probe found about one instruction's arithmetic (issue 13; Sun et al. §8), or a
// paper's figures for it (then `reference` names the paper and probe/date stay empty).
struct NumericBehaviour {
  // Keys: products, block, k_order, extra_bits, alignment, rounding, intermediate, c_added,
  // subnormal_ab, subnormal_c, subnormal_d, integer (kNumericVerdictKeys). Values are short texts.
  std::map<std::string, std::string> verdicts;
  std::string summary;
  // Tables 12-15: experiment (multiplication, inner_product, accumulation) -> init (init_low,
  // init_fp32) -> mean absolute error against the CPU's FP32 result; errors_out: against that
  // result rounded to D's type (Table 14, FP16 D).
  std::map<std::string, std::map<std::string, double>> errors;
  std::map<std::string, std::map<std::string, double>> errors_out;
  int cases = 0;    // constructed cases behind the verdicts
  int models = 0;   // models of the family that reproduce all of them
  int samples = 0;  // draws per error-table cell
  std::string probe, date, reference, note;
  bool operator==(const NumericBehaviour&) const = default;
};
extern const std::vector<std::string> kNumericVerdictKeys;

struct TensorInstruction {
  std::string api;          // "mma" | "wgmma"
  std::string shape;        // "m8n8k4", "m64n256k16"
  Precision input = Precision::fp64;       // A/B type
  std::string input_detail;                // e.g. "e4m3" for fp8; empty otherwise
  Precision accumulate = Precision::fp64;  // C/D type
  bool sparse = false;
  std::string operand_a;    // wgmma: "ss" | "rs"; mma: empty
  std::string sass;         // SASS the PTX became, e.g. "DMMA.884", "IMAD.MOV.U32"
  Field latency{Dimension::cycles};                     // completion latency, ILP 1, one warp(group)
  Field throughput{Dimension::flop_per_second};         // whole device, saturated
  Field fma_per_clock_per_sm{Dimension::dimensionless}; // saturated, per SM
  // Board power while the instruction runs saturated (NVML energy counter over a run longer than
  // the counter's update period; calibrate --power). Its sm_clock is the clock under that load.
  Field power{Dimension::watts};
  // The rate during that power reading: the instruction back to back for over a second at the
  // board's power limit (issue 14). The timed throughput above is a short run at a higher clock; a
  // kernel that runs as long as this reading is bounded by this figure (predict says so).
  Field sustained{Dimension::flop_per_second};
  std::optional<int> best_warps;  // smallest (warps per SM, ILP) reaching 95% of saturation
  std::optional<int> best_ilp;
  std::optional<NumericBehaviour> numerics;
  // "mma.m8n8k4.fp64.fp64", "wgmma.m64n256k16.fp16.fp32.ss", "+.sp"; input_detail joins the input
  // type with '_': "wgmma.m64n256k32.fp8_e4m3.fp32.ss".
  std::string key() const;
};

// One DPX function of the CUDA math API (CUDA 12+; issue 14, Luo et al. "Benchmarking and
// Dissecting the Nvidia Hopper GPU Architecture" §IV-E, Figs. 6-7): hardware on sm_90, emulated
// with IMNMX/IADD/PRMT sequences before it.
struct DpxFunction {
  std::string function;  // "__vimax3_s32", one of kDpxFunctionNames
  std::string sass;      // what the call compiled to, e.g. "VIMNMX3"; empty when not known
  Field latency{Dimension::cycles};                   // one thread, dependent chain: cycles per call
  Field throughput_per_sm{Dimension::dimensionless};  // calls per clock per SM, every SM busy
  // Calls per clock per SM used, by blocks of 1024 threads launched (1, 2, 4, ... up to 2x the SMs):
  // the paper's evidence that the unit is in the SM. Same provenance as throughput_per_sm.
  std::vector<std::pair<int, double>> by_blocks;
  bool present() const { return latency.present() || throughput_per_sm.present() || !by_blocks.empty(); }
};
// Every DPX function name of CUDA 13's device_functions.h (the loader accepts only these).
extern const std::vector<std::string> kDpxFunctionNames;

// Global -> shared copies (issue 14; Luo et al. §III-D2, §IV-E, Tables XIII-XIV): probe
// "async-copy". One method's best bandwidth over a DRAM-sized buffer (every SM busy, each byte
// copied once into shared memory and summed there) and the sweep behind it.
struct AsyncCopyPoint {
  int threads = 0;               // per block
  int stages = 0;                // tiles in flight per block (sync: 1)
  double tile_bytes = 0;         // bytes per stage
  double bytes_per_second = 0;   // median of the repeats
  bool operator==(const AsyncCopyPoint&) const = default;
};
struct AsyncCopyMethod {
  std::string method;  // one of kAsyncCopyMethods: "sync", "cp_async", "bulk", "tensor_2d"
  std::string sass;    // expected opcodes, e.g. "UBLKCP + SYNCS"; empty when not known
  Field bandwidth{Dimension::bytes_per_second};  // the best configuration's
  std::string config;  // the best configuration in words ("256 threads, 4 stages x 16 KiB")
  std::vector<AsyncCopyPoint> sweep;  // every configuration tried; the provenance of `bandwidth`
  bool present() const { return bandwidth.present() || !sweep.empty(); }
};
extern const std::vector<std::string> kAsyncCopyMethods;

// A row of values with one provenance: a paper's (reference) or a probe's (probe, date, ...).
struct CurveSource {
  std::vector<double> values;  // base unit (FLOP/s), one per column
  std::string reference;       // spec: a key of references or a citation
  std::string probe, date, note;  // measured
  double sm_clock_hz = 0;
  int repeats = 0;
  std::optional<double> gain_percent;  // spec only: the paper's "Perf" column (mean gain of AsyncPipe)
  bool operator==(const CurveSource&) const = default;
};

// One row of Tables XIII-XIV: the tiled FP32 matrix multiply with block x block threads (and
// tiles), A's width = B's height = 2048, GFLOP/s against blocks per SM.
struct AsyncMatmulRow {
  std::string variant;  // "sync_share" (synchronous tile loads) | "async_pipe" (two-stage cp.async)
  int block = 0;        // 8, 16, 32
  std::vector<int> blocks_per_sm;  // the columns, strictly growing
  std::optional<CurveSource> spec, measured;  // FLOP/s, one per column
  bool operator==(const AsyncMatmulRow&) const = default;
};

struct AsyncCopy {
  std::vector<AsyncCopyMethod> methods;  // by method, at most one each
  std::vector<AsyncMatmulRow> matmul;    // by (variant, block), at most one each
  bool present() const { return !methods.empty() || !matmul.empty(); }
  const AsyncCopyMethod* method(const std::string& m) const;
  const AsyncMatmulRow* row(const std::string& variant, int block) const;
};
// Mean over the columns both rows have of async / sync - 1, in percent (our "Perf" column); nullopt
// without both rows' values from `measured` (true) or `spec` (false).
std::optional<double> async_pipe_gain_percent(const AsyncCopy& a, int block, bool measured);

// Distributed shared memory (issue 14; Luo et al. "Benchmarking and Dissecting the Nvidia Hopper
// GPU Architecture" §III-C-3 and §IV-E, Figs. 8-9): thread-block clusters on sm_90 reach the
// shared memory of the other blocks of their cluster over the SM-to-SM network.

// One ring-based-copy configuration (Fig. 8): one block per SM, clusters of cluster_size, block of
// rank R stores its registers into the shared memory of rank (R + 1) % cluster_size.
struct DsmRingPoint {
  int cluster_size = 0, block_threads = 0, ilp = 0;
  int blocks = 0;               // blocks launched, one per SM: the SMs used
  double bytes_per_second = 0;  // whole GPU: bytes stored to other SMs / time
  bool operator==(const DsmRingPoint&) const = default;
};

// One histogram configuration (Fig. 9): bins spread over the blocks of a cluster.
struct DsmHistogramPoint {
  int cluster_size = 0, block_threads = 0, bins = 0;
  double elements_per_second = 0;
  bool operator==(const DsmHistogramPoint&) const = default;
};

// A measured curve and its provenance (as RampTable: every point from one probe run).
template <class Point>
struct DsmCurve {
  std::vector<Point> points;
  std::string probe, date;
  double sm_clock_hz = 0;
  std::string note;
  bool present() const { return !points.empty(); }
  bool operator==(const DsmCurve&) const = default;
};

// The best ring rate at one cluster size (a paper's figure as spec, ours as measured with the
// configuration that reached it; 0 = not known).
struct DsmRingByClusterSize {
  int cluster_size = 0;
  int block_threads = 0, ilp = 0;
  Field bandwidth{Dimension::bytes_per_second};
};

struct DistributedSharedMemory {
  Field latency{Dimension::cycles};        // SM-to-SM: dependent ld.shared::cluster loads, cycles per load
  Field local_latency{Dimension::cycles};  // the same code on the block's own shared memory
  Field ring_bandwidth{Dimension::bytes_per_second};        // best ring configuration, whole GPU
  Field ring_bandwidth_per_sm{Dimension::bytes_per_cycle};  // the same, bytes per clock per SM used
  // The configuration of the measured ring_bandwidth (0 = not known).
  int ring_cluster_size = 0, ring_block_threads = 0, ring_ilp = 0;
  std::vector<DsmRingByClusterSize> ring_by_cluster_size;  // cluster sizes strictly growing
  DsmCurve<DsmRingPoint> ring;
  DsmCurve<DsmHistogramPoint> histogram;
  bool present() const {
    return latency.present() || local_latency.present() || ring_bandwidth.present() || ring_bandwidth_per_sm.present() ||
           !ring_by_cluster_size.empty() || ring.present() || histogram.present();
  }
};

struct Identity {
  std::string name;               // "NVIDIA H200"
  std::string uuid;               // empty for spec-only descriptors
  int sm_count = 0;
  std::string compute_capability; // "9.0"
  std::string driver;
  std::string cuda_version;
  std::string memory_type;        // "HBM3e"
};

struct HardwareDescriptor {
  std::string schema = kHardwareSchema;
  std::string tool_version;
  std::string id;                 // short name, e.g. "h200"; defaults to the file stem
  Identity identity;
  Field sm_clock{Dimension::hertz};      // boost clock (spec) / clock under load (measured)
  Field memory_clock{Dimension::hertz};
  std::map<MemoryLevelKind, MemoryLevel> memory;
  FixedCosts fixed_costs;  // "fixed_costs.launch_single", "fixed_costs.launch_back_to_back"
  std::map<ComputeUnit, std::map<Precision, Field>> compute;  // Dimension::flop_per_second
  // CUDA cores running a register-blocked outer product (GEMM's inner loop: every FMA takes two of
  // its operands fresh from the register file), per precision; compute.cuda_core_outer_product.<p>.
  // The pipe peak above needs operands the reuse cache holds; a GEMM cannot give it that (issue 14).
  std::map<Precision, Field> outer_product;  // Dimension::flop_per_second
  // The same outer product with its operands loaded from shared memory each k step, as every
  // register-blocked GEMM must (the largest micro-tiles the register file holds: 8x8, double-buffered,
  // or 12x8: TM + TN values per TM x TN FMAs); compute.cuda_core_gemm_loop.<p>, probe gemm-loop. The
  // GEMM kind's CUDA-core ceiling where measured (the operand loads take issue and register-file
  // cycles the outer product above does not spend).
  std::map<Precision, Field> gemm_loop;  // Dimension::flop_per_second
  // Tensor cores through the warp-level mma.sync (m16n8k*: 8 or 16 columns per instruction), the best
  // dense rate per precision; compute.tensor_core_mma_sync.<p>. compute.tensor_core.<p> is the best
  // instruction of all (on sm_90 wgmma, which needs 64 rows x up to 256 columns); a kernel whose
  // matrices are too narrow for those (the intensity kind's 8/16-value rows) is held to this rate.
  std::map<Precision, Field> tensor_core_mma_sync;  // Dimension::flop_per_second
  // Board power while the CUDA-core peak runs (calibrate --power); compute.cuda_core_power.<p>.
  std::map<Precision, Field> cuda_core_power;  // Dimension::watts
  std::vector<TensorInstruction> tensor_instructions;
  std::vector<DpxFunction> dpx;  // by function name, at most one entry each
  AsyncCopy async_copy;          // issue 14: optional key async_copy
  DistributedSharedMemory dsm;   // key `dsm`, written when present()
  std::map<std::string, std::string> references;  // short key -> full citation
  std::vector<std::string> notes;

  // Peak compute for a unit and precision, or nullopt.
  std::optional<double> peak(ComputeUnit, Precision,
                             SourcePreference = SourcePreference::measured_else_spec) const;
  // Memory bandwidth of a level, or nullopt.
  std::optional<double> bandwidth(MemoryLevelKind,
                                  SourcePreference = SourcePreference::measured_else_spec) const;

  // Addressing by dotted path, used by calibrate to store measurements:
  // "sm_clock", "memory.dram.bandwidth", "memory.dram.patterns.copy", "memory.l1.latency",
  // "memory.l2.extra.far_half", "compute.cuda_core.fp64". Creates missing levels/entries.
  // Throws std::invalid_argument for a path that names no field.
  // A new extra entry starts as Dimension::bytes (capacity-like knee); set .dimension for others.
  Field& field(std::string_view path);
  // nullptr when the entry does not exist (creates nothing); throws like field() for a bad path.
  const Field* find_field(std::string_view path) const;

  // Store a measurement (replacing any earlier one); keeps the spec value.
  void set_measured(std::string_view path, const MeasuredValue& m);
  // Insert or replace a tensor instruction with the same key().
  // Replaces the entry with ti's key (keeping its numerics when ti has none) or appends ti.
  void upsert_instruction(const TensorInstruction& ti);
  // Sets the numerics of the entry with ti's key, or appends ti (an entry with numerics only).
  void upsert_numerics(const TensorInstruction& ti);
  // Merges a DPX probe's entry into the one of the same function (or appends it): the measured
  // values, by_blocks and sass it carries replace the old ones; spec values (a paper's) stay.
  void upsert_dpx(const DpxFunction& f);
  // Merges an async-copy probe's result: methods by name and matmul rows by (variant, block); the
  // measured values, sweeps and configs it carries replace the old ones, spec values stay (a row
  // whose columns differ from the spec's is replaced whole).
  void upsert_async_copy(const AsyncCopy& a);
  // Merges a dsm probe's result: measured values, curves and configurations it carries replace the
  // old ones (ring_by_cluster_size per cluster size); spec values (a paper's) stay.
  void upsert_dsm(const DistributedSharedMemory& m);
};

// Any problem in a descriptor file: message is "file:line:column: key: cause".
class DescriptorError : public InputFileError {
 public:
  using InputFileError::InputFileError;
};

// Strict load: unknown keys, wrong units/dimensions, non-positive values, missing required
// fields (schema, identity.name, identity.sm_count, at least one memory level with bandwidth)
// and wrong schema versions throw DescriptorError with the line (1-based) of the offending key.
// A spec `ref` of one word must be a key of `references:`; a ref with spaces is a citation itself.
// Measured values need median, probe and an ISO 8601 date; min <= median <= max when given.
HardwareDescriptor load_descriptor(const std::filesystem::path& file);
// "" when `s` is a real ISO 8601 date or date-time (month 1-12, the month's days, hour 0-23, ...),
// else why not. Every file with a date field checks it with this.
std::string iso_date_problem(const std::string& s);
HardwareDescriptor parse_descriptor(const std::string& yaml_text, const std::string& name_for_errors);
// Canonical YAML. Spec values are written exactly (format_exact). A measured median, min and max
// are written in one unit with the digits their spread supports (half a rounding step within a
// tenth of max - min and of cv x median, at least 3 significant digits), cv with 2, the SM
// clock with 5; so to_yaml(load(to_yaml(d))) == to_yaml(d): a file this writer wrote saves unchanged.
std::string to_yaml(const HardwareDescriptor& d);
// Writes to a temporary file in the same directory, then renames: never a half-written file.
void save_descriptor(const HardwareDescriptor& d, const std::filesystem::path& file);

bool operator==(const SpecValue&, const SpecValue&);
bool operator==(const MeasuredValue&, const MeasuredValue&);
bool operator==(const Field&, const Field&);
bool operator==(const RampTable&, const RampTable&);
bool operator==(const MemoryLevel&, const MemoryLevel&);
bool operator==(const TensorInstruction&, const TensorInstruction&);
bool operator==(const DpxFunction&, const DpxFunction&);
bool operator==(const AsyncCopyMethod&, const AsyncCopyMethod&);
bool operator==(const AsyncCopy&, const AsyncCopy&);
bool operator==(const DsmRingByClusterSize&, const DsmRingByClusterSize&);
bool operator==(const DistributedSharedMemory&, const DistributedSharedMemory&);
bool operator==(const Identity&, const Identity&);
bool operator==(const HardwareDescriptor&, const HardwareDescriptor&);

}  // namespace ceiling
