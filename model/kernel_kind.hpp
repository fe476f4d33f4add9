// The table of kernel kinds (STYLE habits 1 and 7): one typed entry per kind says which
// parameters it takes (type, required or optional, default, help), how its W, Q, read and write
// streams follow from them, how to pick a size for a working set and how to print a size.
// predict's options and --help, the kernel-file keys, the results' size fields and the validate
// sweep's size de-duplication are all generated from this table: a new kind is one entry.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "kernel_model.hpp"

namespace ceiling {

// Parameter values by name, in base units (counts, flop, bytes). Only given parameters and
// defaults are present: an optional parameter without a default is absent when not given.
using KernelParams = std::map<std::string, double>;

enum class ParamType {
  count,     // positive whole number, "4096" or "1e9"
  integer,   // whole number within [min, max] (or one of `allowed`)
  amount,    // finite number >= min (e.g. index counts, may be fractional)
  flop,      // an amount of work: "2 GFLOP", "1.5 TOP" or a bare number
  bytes,     // an amount of data: "8 GB", "1 GiB" or a bare number
};

struct ParamSpec {
  std::string name;                     // kernel-file key; the CLI option is "--" + name with '_' -> '-'
  ParamType type = ParamType::count;
  bool required = true;
  std::optional<double> default_value;  // optional parameters only
  std::string help;                     // one line, what it is for this kind
  double min = 0, max = 0;              // integer/amount: range (max 0 = no upper limit)
  std::vector<double> allowed;          // integer: the only values accepted (e.g. dims 2 or 3)
  bool hidden = false;                  // set by the program (a registered input's id), not a user option
};

// A parameter the kind rejects (alone or in combination): names the parameter, so a kernel file
// points at its line and the CLI at its option.
class KernelParamError : public std::invalid_argument {
 public:
  KernelParamError(std::string param, const std::string& message)
      : std::invalid_argument(message), param_(std::move(param)) {}
  const std::string& param() const { return param_; }

 private:
  std::string param_;
};

struct KernelKind {
  std::string name;     // "scale": --kernel scale, kind: scale, results' "kernel"
  std::string summary;  // one line for --help: "SCALE a = q b (STREAM scale), W = n, Q = 2nD"
  std::vector<ParamSpec> params;
  // W, Q, read/write streams and working set; throws KernelParamError on a bad combination.
  std::function<KernelModel(const KernelParams&, Precision)> model;
  // Parameters whose working set is close to `bytes`, and for a count given on the command line
  // (SCALE: n; GEMV: a square n x n). Empty when the kind cannot be swept by size.
  std::function<KernelParams(double bytes, Precision)> params_for_bytes;
  std::function<KernelParams(double count)> params_for_count;
  // "n=1048576", "4096x4096"; empty: "name=value" pairs in table order.
  std::function<std::string(const KernelParams&)> size_text;
  // The validate sweep's points when the user names no sizes, for kinds swept along another axis
  // than the working set (intensity: k across the ridge at one working set in and one out of the
  // L2 of `l2_bytes`); `quick` asks for fewer. Empty: the working-set sweep (params_for_bytes).
  std::function<std::vector<KernelParams>(double l2_bytes, Precision, bool quick)> sweep_points;
  // The input as people name it in results ("cant" for a registered matrix); empty: no label.
  std::function<std::string(const KernelParams&)> input_label;
  // validate --shapes/--domain/--steps choose this kind's sweep points (model/stencil_shape.hpp).
  bool stencil_inputs = false;
  // Sized by registered matrices (SpMV): validate --matrix/--suite register them, and naming the kind
  // on --kernels without either runs the Table 2 suite.
  bool matrix_inputs = false;
  // validate runs this kind only when --kernels names it (GEMM: a minute of compute-bound runs that
  // a memory-bound validation does not need).
  bool opt_in = false;
  // The report's per-input plot (GPGPU'25 Figures 7 and 8): the bar group of a result beside its
  // label (stencil: "9000x9000 t=3"; empty: the label alone), the FLOP per unit of the plotted rate
  // (stencil: 2|S| per grid point and step; empty: 1, FLOP/s) and the rate's axis label.
  std::function<std::string(const KernelParams&)> input_group;
  std::function<double(const KernelParams&)> flop_per_output;
  std::string output_rate = "GFLOP/s";
  std::string figure;         // "GPGPU'25 Figure 8 style"
  std::string plot_caption;   // what the bars and circles are
  std::string plot_bound;     // the circles' key: "bound (CSR, Eq. 10)"
  int order = 100;  // display and sweep order (the paper's: SCALE before GEMV)
};

// Every kind: the built-in ones first, then those registered (by tests or extensions).
const std::vector<KernelKind>& kernel_kind_table();
const KernelKind* find_kernel_kind(std::string_view name);
// Throws std::invalid_argument "unknown kind 'x' (one of scale, gemv, ...)".
const KernelKind& kernel_kind(std::string_view name);
std::string kernel_kind_names(const char* sep = ", ");  // "scale, gemv, ..."
// Adds a kind; throws std::logic_error when the name is taken or the entry is incomplete.
void register_kernel_kind(KernelKind kind);
struct KernelKindRegistrar {
  explicit KernelKindRegistrar(KernelKind kind) { register_kernel_kind(std::move(kind)); }
};

// The CLI option of a parameter: "index_bytes" -> "--index-bytes".
std::string param_option(const std::string& name);

// Reads one parameter value from text by its spec; `field` names it in the error
// (std::invalid_argument or UnitError).
double parse_param(const ParamSpec& spec, std::string_view text, std::string_view field);
// Checks given values against the kind (unknown, missing, out of range: KernelParamError naming
// the parameter), fills defaults and returns the kind's model.
KernelModel make_kernel_model(const KernelKind& kind, KernelParams given, Precision p);
// A size as people read it ("n=1048576", "4096x4096"); an unknown kind prints "k=v" pairs.
std::string kernel_size_text(std::string_view kind, const KernelParams& params);

// The calibrated DRAM pattern a kernel's streams resemble, by the share of bytes read:
// read 1, triad 2/3, scale 1/2, write 0 (the nearest); "" when the streams are unknown.
std::string dram_pattern_for_streams(double read_bytes, double write_bytes);

}  // namespace ceiling
