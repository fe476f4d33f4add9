// Work (W, flop) and traffic (Q, bytes) of the kernels we model, declared once and used by
// both `predict` and `validate` (STYLE habit 7). Formulas from GPGPU'25 §3.
#pragma once
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "descriptor.hpp"
#include "link.hpp"

namespace ceiling {

struct KernelModel {
  std::string kind;         // a name of the kind table (kernel_kind.hpp): "scale", "gemv", ...
  std::string description;  // e.g. "GEMV 4096x4096 fp64"
  Precision precision = Precision::fp64;
  double work_flop = 0;
  double traffic_bytes = 0;
  double working_set_bytes = 0;  // bytes touched once; decides which memory level bounds it
  // The streams of Q: bytes read and bytes written (0 and 0 when unknown, e.g. a custom kernel).
  // The calibrated memory pattern a kernel resembles follows from these, not from its name.
  double read_bytes = 0, write_bytes = 0;
  // Fraction of tensor-core peak the tensor-core formulation can use (SCALE via B*(qI): 1/8).
  double tensor_core_fraction = 1.0;
  // The CUDA-core formulation's inner loop is a register-blocked outer product (GEMM): every FMA
  // takes two operands fresh from the register file, so its ceiling is the descriptor's
  // compute.cuda_core_gemm_loop.<p> where measured, else compute.cuda_core_outer_product.<p>, else the
  // pipe peak.
  bool outer_product = false;
  // The tensor-core formulation's matrices are narrower than wgmma's (64 rows x 64..256 columns):
  // the intensity kind multiplies 8- or 16-value rows by a w x w matrix, so no instruction wider than
  // mma.sync's m16n8k* fits. Its ceiling is compute.tensor_core_mma_sync.<p> where measured (else
  // compute.tensor_core.<p>, the best instruction of all).
  bool mma_sync_ceiling = false;
  int temporal_steps = 1;                    // stencils
  // Dependent launches per run, each moving traffic_bytes / passes (the plain stencil: one launch
  // per step). Where launches are timed back-to-back every pass pays the tight bound's launch and
  // first-byte terms (tight_bound); 1 for a kernel that runs as one launch.
  int passes = 1;
  double intensity_one_step = 0;             // stencils: I for t = 1
  double intensity() const { return work_flop / traffic_bytes; }
};

// D = bytes per value of the precision; Iidx = index bytes.
KernelModel scale_model(double n, Precision p = Precision::fp64);                    // W=n, Q=2nD
KernelModel gemv_model(double m, double n, Precision p = Precision::fp64);           // W=2mn, Q=(mn+m+n)D
KernelModel spmv_csr_model(double m, double n, double nnz, int index_bytes = 4,
                           Precision p = Precision::fp64);  // Q=(nnz+m+n)D+(nnz+m+1)Iidx
// Generic: Q=(nnz+m+n)D + alpha_index*Iidx + beta_packed*Z (Eq. 9), alpha/beta as counts.
KernelModel spmv_generic_model(double m, double n, double nnz, double index_count,
                               int index_bytes, double packed_count, int packed_bytes,
                               Precision p = Precision::fp64);
// |S| points, dims 2 or 3, grid nx*ny(*nz), t steps: W=2|S|t per point, Q=2D per point.
KernelModel stencil_model(int points, int dims, double nx, double ny, double nz, int steps,
                          Precision p = Precision::fp64);
KernelModel gemm_model(double m, double n, double k, Precision p = Precision::fp64);  // W=2mnk, Q=(mk+kn+2mn)D
KernelModel custom_model(double work_flop, double traffic_bytes, Precision p = Precision::fp64);
// Intensity sweep (issue 12): a stream of n values viewed as rows of w values (w =
// intensity_row_width: 8 for 8- and 4-byte values, 16 for 2-byte, 32 for 1-byte); each row leaves as
// y = x (M_1 + ... + M_r), k FMAs per output. k >= w: a multiple of w, r = k/w dense w x w products;
// k < w (a power of two dividing w): one block-diagonal matrix with k non-zeros per column, which a
// tensor core still multiplies in full (tensor_core_fraction k/w). W = 2kn, Q = 2nD, I = k/D.
KernelModel intensity_model(double n, double k, Precision p = Precision::fp64);
int intensity_row_width(Precision p);
double intensity_tensor_core_fraction(double k, Precision p);  // min(1, k/w)
// Small YAML kernel file: {kind: custom, work: "1 GFLOP"?...}; see docs. Throws DescriptorError-like
// errors with file:line.
KernelModel load_kernel_file(const std::filesystem::path& file);

// --- added by model-eq ---
// Any problem in a kernel file: message is "file:line:column: key: cause".
class KernelFileError : public InputFileError {
 public:
  using InputFileError::InputFileError;
};
// "2 GFLOP", "1.5 TOP" or a bare number of flop; a rate ("2 GFLOP/s") is an error naming `field`.
double parse_work_flop(std::string_view text, std::string_view field = "work");
// "8 GB", "1 GiB" or a bare number of bytes; anything else is a UnitError naming `field`.
double parse_traffic_bytes(std::string_view text, std::string_view field = "traffic");
// A problem size: "1e9", "4096"; positive, finite and a whole number, else std::invalid_argument.
double parse_size(std::string_view text, std::string_view field);
// Upper limits of kernel sizes (docs/RELIABILITY.md): a count is a whole number a double holds
// exactly; work and traffic stay far enough from DBL_MAX that W/Q, W/P and Q/BW stay finite.
inline constexpr double kMaxKernelCount = 9007199254740992.0;  // 2^53
inline constexpr double kMaxKernelAmount = 1e30;
// Fraction of tensor-core peak that SCALE as B*(qI) uses: 1/max(m,n) of the mma shape.
double scale_tensor_core_fraction(Precision p);

// Everything `ceiling predict` reports for one kernel on one descriptor.
struct PredictOptions {
  SourcePreference source = SourcePreference::measured_else_spec;
  std::optional<double> bandwidth_override;          // bytes/s
  std::optional<double> peak_cuda_core_override;     // flop/s
  std::optional<double> peak_tensor_core_override;   // flop/s
  // The link level (issue 16): a share of the kernel's reads comes over a link (a peer GPU's
  // memory, the host's page-locked memory) measured in a node descriptor. Local and link traffic
  // run side by side: T_memory = max(Q_local / BW_level, Q_link / BW_link), the bandwidth used
  // downstream is Q / T_memory, and the tight bound adds the link's latency as its first byte.
  std::optional<LinkLevel> link;
};

// The tight bound (ours, issue 12): fixed costs a kernel cannot avoid, each a measured minimum:
//   T >= max(launch, first_byte(level) + max(Q/BW(level, mix), W/P), ramp(level, mix, Q))
// ramp(Q) = the lower convex hull of the ramp probe's least times to move X bytes in the
// kernel's mix (memory.dram.ramp), evaluated at Q: the line first_byte + Q/BW is fitted under
// every size at once and at large sizes lay 5% under the probe's own times (written lines left
// in the L2 make mid sizes cheaper per byte); the hull passes through the least time at each.
// DRAM only (cold single launches); in L2 the term is 0 (memory_roof.cpp says why).
// launch = the shortest time of an empty kernel timed the same way (events around one launch, or
// per launch back-to-back). first_byte = the intercept for the kernel's mix (memory_roof: the least
// of the level's patterns up to read share 1/2, rising to the read pattern's at 1) of the ramp
// probe's lower envelopes T(X) >= first_byte + X/BW of that level's patterns, timed as validate times
// that level (cold single launches for DRAM, warm back-to-back for L2): the launch's share that
// does not overlap, the first bytes' latency, the wave ramp and the write-back left at the end.
// Without a ramp in the descriptor it is the level's load latency at the measured SM clock.
// BW = the largest bandwidth measured for the mix (memory_roof().bandwidth_max). The terms do not
// add with the launch: on an H100 a 50 MiB SCALE timed by events took 16.6 us against 3.1 us
// (empty launch) + 0.34 us + 15.9 us (Q/BW) = 19.4 us. A term the descriptor lacks is 0 and
// named in `missing`, so the result stays a lower bound.
// A kernel of p dependent launches timed back-to-back (KernelModel::passes) is p kernels, each
// bounded as above: T >= max(p launch, p first_byte + max(Q/BW, W/P), p ramp(Q/p)), whatever the split of
// Q and W between them (a sum of maxima is at least the maximum of the sums; the ramp hull is convex).
struct TightBound {
  bool back_to_back = false;
  // Times the fixed costs are paid: the kernel's passes when timed back-to-back, else 1 (a cold run's
  // later passes are launched behind the first, so only its launch and first byte are certain).
  int passes = 1;
  double launch_s = 0, first_byte_s = 0, t_memory_s = 0, t_compute_s = 0;
  double ramp_s = 0;       // the ramp hull at Q; 0 without memory.<level>.ramp
  double bandwidth = 0;    // bytes/s of the roof used (the mix's measured maximum)
  std::string first_byte_from;  // "ramp envelope" | "level latency" | ""
  double time_s = 0;       // the bound
  double asymptotic_s = 0; // max(Q/BW, W/P) with the tight roof
  std::vector<std::string> missing;  // descriptor fields absent, their term taken as 0
  std::vector<std::string> provenance;
  void update();  // time_s from the terms
};

struct Prediction {
  double intensity = 0;
  double balance_cuda_core = 0;
  double balance_tensor_core = 0;
  bool memory_bound = true;        // against the CUDA-core balance
  std::string memory_level;        // "dram" | "l2" | ...
  std::string memory_level_reason;
  double bandwidth = 0;            // bytes/s of that level for the kernel's read:write mix
  std::string bandwidth_how;       // which patterns gave it (memory_roof().how)
  double peak_cuda_core = 0;       // flop/s
  double peak_tensor_core = 0;     // flop/s, nominal
  double tensor_core_effective_peak = 0;  // nominal * tensor_core_fraction
  // Where each peak came from: the descriptor path ("compute.cuda_core_gemm_loop.fp64", ...) and its
  // source ("measured", "spec", "override").
  std::string peak_cuda_core_path, peak_tensor_core_path, peak_cuda_core_source, peak_tensor_core_source;
  double attainable_cuda_core = 0;
  double attainable_tensor_core = 0;
  double t_compute_cuda_core = 0, t_compute_tensor_core = 0, t_memory = 0;
  double t_overlapped = 0, t_unoverlapped = 0;  // CUDA core
  double alpha = 0;                 // effective P(TC)/P(CC) for this kernel
  double speedup_exact_unoverlapped = 0;  // Eq. 19-20
  double speedup_kernel_bound = 0;        // Eq. 22
  double speedup_memory_bound_limit = 0;  // Eq. 23
  double speedup_workload_limit = 0;      // Eq. 24
  double balance_tensor_core_effective = 0;  // P(TC) * tensor_core_fraction / BW: the roof applied
  double speedup_overlapped = 0;          // Eq. 17 on both units: max(Tm,Tc) / max(Tm,Tc/alpha)
  // What holds for this kernel whatever the overlap: S lies in [lower, upper] (min/max of the
  // overlapped and un-overlapped speedups). Eq. 22/23 are upper bounds only for a memory-bound
  // kernel with alpha > 1; `speedup_regime` says which case applies and which value is the top.
  double speedup_upper_bound = 0, speedup_lower_bound = 0;
  std::string speedup_regime;  // "memory-bound" | "compute-bound" | "alpha<=1"
  std::string speedup_note;    // one line: the bound that holds and why
  TightBound tight;            // launched once, on CUDA cores
  std::optional<int> temporal_blocking_min_steps;  // stencils (Eq. 14)
  std::optional<double> temporal_blocking_threshold;
  std::string source;               // what was used: "measured", "spec", "mixed", "override"
  std::vector<std::string> provenance;  // one line per number used, e.g. "dram bandwidth: spec (ref)"
};

// The one L2 size the model and validate use: memory.l2.capacity of the descriptor. Capacity is
// structure, not speed, so a spec value serves unless only spec is refused (pref spec: spec only).
// nullopt when the descriptor has none.
std::optional<double> l2_capacity_bytes(const HardwareDescriptor& hw,
                                        SourcePreference pref = SourcePreference::measured_else_spec);

struct MemoryRoof;
// `roof` from memory_roof() for the level the working set sits in; traffic Q in bytes.
// passes: the kernel's dependent launches (KernelModel::passes); they count only when back_to_back.
TightBound tight_bound(const HardwareDescriptor& hw, const MemoryRoof& roof, double traffic_bytes, double t_compute_s,
                       bool back_to_back, int passes = 1);

// Throws std::runtime_error naming the missing descriptor field when a number is absent.
Prediction predict(const HardwareDescriptor& hw, const KernelModel& k, const PredictOptions& opt = {});

}  // namespace ceiling
