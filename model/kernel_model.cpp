// Work and traffic of the kernels of GPGPU'25 §3, kernel files, and `predict`.
#include "kernel_model.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include "files.hpp"
#include "kernel_kind.hpp"
#include "memory_roof.hpp"
#include "roofline.hpp"
#include "units.hpp"

namespace ceiling {
namespace {

// 4096 stays 4096; 1e9 reads "1e9", not "1e+09".
std::string num(double v) {
  std::ostringstream os;
  if (v == std::floor(v) && std::fabs(v) < 1e7) {
    os << static_cast<long long>(v);
    return os.str();
  }
  os << v;
  std::string s = os.str();
  if (const auto e = s.find("e+"); e != std::string::npos) {
    size_t digits = e + 2;
    while (digits + 1 < s.size() && s[digits] == '0') ++digits;
    s = s.substr(0, e + 1) + s.substr(digits);
  }
  return s;
}

void require_size(double v, const char* what) {
  if (!(v > 0) || !std::isfinite(v))
    throw std::invalid_argument(std::string(what) + " must be a finite positive number, got " + num(v));
}

std::string precision_name(Precision p) { return std::string(to_string(p)); }

}  // namespace

double parse_work_flop(std::string_view text, std::string_view field) {
  const std::string t(text);
  if (t.find("/s") != std::string::npos)
    throw UnitError(std::string(field) + ": '" + t + "' is a rate; work is an amount of flop (e.g. '2 GFLOP')");
  const Quantity bare = [&] {
    try {
      return parse_quantity(t);
    } catch (const UnitError&) {
      return Quantity{0, Dimension::bytes};  // not a bare number; try as flop below
    }
  }();
  double v = 0;
  if (bare.dimension == Dimension::dimensionless) {
    v = bare.value;
  } else {
    // units.hpp knows FLOP/s but not FLOP: read "2 GFLOP" as the rate "2 GFLOP/s" times one second.
    try {
      v = parse_as(t + "/s", Dimension::flop_per_second);
    } catch (const UnitError&) {
      throw UnitError(std::string(field) + ": '" + t + "' is not an amount of work (e.g. '2 GFLOP', '1.5 TOP', 2e9)");
    }
  }
  if (!(v > 0)) throw UnitError(std::string(field) + ": work must be positive, got '" + t + "'");
  if (v > kMaxKernelAmount)  // beyond it W/Q or W/P can overflow to inf (issue 17)
    throw UnitError(std::string(field) + ": work must be at most 1e30 flop, got '" + t + "'");
  return v;
}

double parse_traffic_bytes(std::string_view text, std::string_view field) {
  const Quantity q = [&] {
    try {
      return parse_quantity(text);
    } catch (const UnitError& e) {
      throw UnitError(std::string(field) + ": " + e.what());
    }
  }();
  double v = q.value;
  if (q.dimension != Dimension::dimensionless) v = parse_as(text, Dimension::bytes, field);
  if (!(v >= 1) || v > kMaxKernelAmount)  // less than a byte, or so much that W/Q or Q/BW overflow (issue 17)
    throw UnitError(std::string(field) + ": traffic must be 1 B to 1e30 B, got '" + std::string(text) + "'");
  return v;
}

double parse_size(std::string_view text, std::string_view field) {
  double v = 0;
  try {
    v = parse_as(text, Dimension::dimensionless, field);
  } catch (const UnitError& e) {
    throw std::invalid_argument(e.what());
  }
  if (!(v > 0) || !std::isfinite(v) || v != std::floor(v))
    throw std::invalid_argument(std::string(field) + ": '" + std::string(text) +
                                "' is not a positive whole number (e.g. 4096 or 1e9)");
  if (v > kMaxKernelCount)  // past 2^53 a double no longer holds every whole number; W and Q may overflow
    throw std::invalid_argument(std::string(field) + ": '" + std::string(text) +
                                "' is too large; a size is at most 2^53 = 9007199254740992");
  return v;
}

double scale_tensor_core_fraction(Precision p) {
  // A = B*(qI) fills one of max(m,n) columns: fp64 mma is m8n8k4 (1/8), the others m16n8kK (1/16).
  return p == Precision::fp64 ? 1.0 / 8 : 1.0 / 16;
}

KernelModel scale_model(double n, Precision p) {
  require_size(n, "scale: n");
  const double D = bytes_per_value(p);
  KernelModel k;
  k.kind = "scale";
  k.description = "SCALE n=" + num(n) + " " + precision_name(p);
  k.precision = p;
  k.work_flop = n;                 // one multiply per element
  k.traffic_bytes = 2 * n * D;     // load b, store a
  k.read_bytes = n * D;
  k.write_bytes = n * D;
  k.working_set_bytes = 2 * n * D;
  k.tensor_core_fraction = scale_tensor_core_fraction(p);
  return k;
}

KernelModel gemv_model(double m, double n, Precision p) {
  require_size(m, "gemv: m");
  require_size(n, "gemv: n");
  const double D = bytes_per_value(p);
  KernelModel k;
  k.kind = "gemv";
  k.description = "GEMV " + num(m) + "x" + num(n) + " " + precision_name(p);
  k.precision = p;
  k.work_flop = 2 * m * n;                // Eq. 7
  k.traffic_bytes = (m * n + m + n) * D;  // A, x, y once each
  k.read_bytes = (m * n + n) * D;
  k.write_bytes = m * D;
  k.working_set_bytes = k.traffic_bytes;
  return k;
}

KernelModel spmv_csr_model(double m, double n, double nnz, int index_bytes, Precision p) {
  require_size(m, "spmv-csr: m");
  require_size(n, "spmv-csr: n");
  require_size(nnz, "spmv-csr: nnz");
  if (index_bytes < 1 || index_bytes > 8)
    throw std::invalid_argument("spmv-csr: index bytes must be 1..8, got " + std::to_string(index_bytes));
  if (nnz > m * n) throw std::invalid_argument("spmv-csr: nnz " + num(nnz) + " exceeds m*n = " + num(m * n));
  const double D = bytes_per_value(p);
  KernelModel k;
  k.kind = "spmv-csr";
  k.description = "SpMV CSR " + num(m) + "x" + num(n) + " nnz=" + num(nnz) + " idx=" + std::to_string(index_bytes) +
                  "B " + precision_name(p);
  k.precision = p;
  k.work_flop = 2 * nnz;
  k.traffic_bytes = (nnz + m + n) * D + (nnz + m + 1) * index_bytes;  // Eq. 10
  k.write_bytes = m * D;  // y; values, indices and x are read
  k.read_bytes = k.traffic_bytes - k.write_bytes;
  k.working_set_bytes = k.traffic_bytes;
  return k;
}

KernelModel spmv_generic_model(double m, double n, double nnz, double index_count, int index_bytes,
                               double packed_count, int packed_bytes, Precision p) {
  require_size(m, "spmv: m");
  require_size(n, "spmv: n");
  require_size(nnz, "spmv: nnz");
  if (!(index_count >= 0) || !(packed_count >= 0) || !std::isfinite(index_count) || !std::isfinite(packed_count))
    throw std::invalid_argument("spmv: index and packed counts must be finite and >= 0");
  if (index_bytes < 0 || index_bytes > 8 || packed_bytes < 0 || packed_bytes > 64)
    throw std::invalid_argument("spmv: index bytes must be 0..8 and packed bytes 0..64");
  const double D = bytes_per_value(p);
  KernelModel k;
  k.kind = "spmv";
  k.description = "SpMV " + num(m) + "x" + num(n) + " nnz=" + num(nnz) + " " + precision_name(p);
  k.precision = p;
  k.work_flop = 2 * nnz;
  k.traffic_bytes = (nnz + m + n) * D + index_count * index_bytes + packed_count * packed_bytes;  // Eq. 9
  k.write_bytes = m * D;
  k.read_bytes = k.traffic_bytes - k.write_bytes;
  k.working_set_bytes = k.traffic_bytes;
  return k;
}

KernelModel stencil_model(int points, int dims, double nx, double ny, double nz, int steps, Precision p) {
  if (points < 1) throw std::invalid_argument("stencil: points must be >= 1, got " + std::to_string(points));
  if (dims != 2 && dims != 3) throw std::invalid_argument("stencil: dims must be 2 or 3, got " + std::to_string(dims));
  if (steps < 1) throw std::invalid_argument("stencil: steps must be >= 1, got " + std::to_string(steps));
  require_size(nx, "stencil: nx");
  require_size(ny, "stencil: ny");
  if (dims == 3) require_size(nz, "stencil: nz");
  if (dims == 2 && !(nz == 0 || nz == 1))
    throw std::invalid_argument("stencil: a 2-D stencil takes no nz (got " + num(nz) + ")");
  const double points_in_grid = nx * ny * (dims == 3 ? nz : 1);
  const double D = bytes_per_value(p);
  KernelModel k;
  k.kind = "stencil";
  k.description = "stencil " + std::to_string(dims) + "d" + std::to_string(points) + "pt " + num(nx) + "x" + num(ny) +
                  (dims == 3 ? "x" + num(nz) : std::string{}) + " t=" + std::to_string(steps) + " " +
                  precision_name(p);
  k.precision = p;
  k.work_flop = 2.0 * points * steps * points_in_grid;  // Eq. 13: W_t = 2|S|t per point
  k.traffic_bytes = 2 * D * points_in_grid;             // Eq. 12: one load of u, one store of v
  k.read_bytes = D * points_in_grid;
  k.write_bytes = D * points_in_grid;
  k.working_set_bytes = k.traffic_bytes;
  k.temporal_steps = steps;
  k.intensity_one_step = points / D;  // Eq. 12: |S| / D
  return k;
}

KernelModel gemm_model(double m, double n, double k_dim, Precision p) {
  require_size(m, "gemm: m");
  require_size(n, "gemm: n");
  require_size(k_dim, "gemm: k");
  const double D = bytes_per_value(p);
  KernelModel k;
  k.kind = "gemm";
  k.description = "GEMM " + num(m) + "x" + num(n) + "x" + num(k_dim) + " " + precision_name(p);
  k.precision = p;
  k.work_flop = 2 * m * n * k_dim;
  k.outer_product = true;
  k.traffic_bytes = (m * k_dim + k_dim * n + 2 * m * n) * D;  // A, B once; C read and written
  k.read_bytes = (m * k_dim + k_dim * n + m * n) * D;
  k.write_bytes = m * n * D;
  k.working_set_bytes = (m * k_dim + k_dim * n + m * n) * D;
  return k;
}

KernelModel custom_model(double work_flop, double traffic_bytes, Precision p) {
  require_size(work_flop, "custom: work");
  require_size(traffic_bytes, "custom: traffic");
  KernelModel k;
  k.kind = "custom";
  k.description = "custom W=" + num(work_flop) + " flop, Q=" + num(traffic_bytes) + " B " + precision_name(p);
  k.precision = p;
  k.work_flop = work_flop;
  k.traffic_bytes = traffic_bytes;
  k.working_set_bytes = traffic_bytes;  // bytes touched once, unless the kernel file says otherwise
  return k;
}

int intensity_row_width(Precision p) {
  // One row is a tensor-core tile row: FP64 m16n8k8 (8), FP16/BF16 m16n8k16 (16), 8-bit k32 (32);
  // 4-byte values keep 8 (TF32 m16n8k8).
  const int D = bytes_per_value(p);
  return D >= 4 ? 8 : D == 2 ? 16 : 32;
}

double intensity_tensor_core_fraction(double k, Precision p) {
  return std::min(1.0, k / intensity_row_width(p));
}

KernelModel intensity_model(double n, double k, Precision p) {
  require_size(n, "intensity: n");
  const int w = intensity_row_width(p);
  if (!(k >= 1) || k != std::floor(k) || !std::isfinite(k))
    throw std::invalid_argument("intensity: k must be a whole number >= 1, got " + num(k));
  const bool banded = k < w && w % static_cast<int>(k) == 0 && (static_cast<int>(k) & (static_cast<int>(k) - 1)) == 0;
  if (!banded && std::fmod(k, w) != 0)
    throw std::invalid_argument("intensity: k must be a power of two below " + std::to_string(w) + " or a multiple of " +
                                std::to_string(w) + " (the row width of " + precision_name(p) + "), got " + num(k));
  if (std::fmod(n, w) != 0)
    throw std::invalid_argument("intensity: n must be a multiple of the row width " + std::to_string(w) + " (" +
                                precision_name(p) + "), got " + num(n));
  const double D = bytes_per_value(p);
  KernelModel m;
  m.kind = "intensity";
  m.description = "intensity n=" + num(n) + " k=" + num(k) + " " + precision_name(p);
  m.precision = p;
  m.work_flop = 2 * k * n;       // k FMAs per output value
  m.traffic_bytes = 2 * n * D;   // read x, write y
  m.read_bytes = n * D;
  m.write_bytes = n * D;
  m.working_set_bytes = 2 * n * D;
  m.tensor_core_fraction = intensity_tensor_core_fraction(k, p);
  m.mma_sync_ceiling = true;  // w x w matrices: mma.sync m16n8k*, not wgmma's 64 x 64..256 tiles
  return m;
}

// ---------------------------------------------------------------------------------------------
// Kernel files

namespace {

// Keys every kernel file may carry besides its kind's parameters.
const std::vector<std::string>& common_keys() {
  static const std::vector<std::string> keys{"kind", "precision", "description", "working_set", "tensor_core_fraction"};
  return keys;
}

}  // namespace

KernelModel load_kernel_file(const std::filesystem::path& file) {
  const std::string name = file.string();
  std::string text;
  try {  // at most 4 MiB, UTF-8, no aliases, bounded nesting (model/files.hpp)
    text = read_input_file(file, kMaxYamlInputBytes, "kernel file");
    check_yaml_input(text, name);
  } catch (const InputFileError& e) {
    throw KernelFileError(e.file(), e.line(), e.column(), e.key(), e.cause());
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw KernelFileError(name, e.mark.line + 1, e.mark.column + 1, "", "YAML syntax: " + e.msg);
  }
  if (!root.IsMap()) throw KernelFileError(name, 1, 1, "", "a kernel file is a YAML mapping (kind: ..., sizes)");

  std::map<std::string, YAML::Node> values;  // key -> value node
  std::map<std::string, YAML::Mark> marks;   // key -> where the key is written
  for (const auto& kv : root) {
    const std::string key = kv.first.Scalar();
    if (values.count(key))
      throw KernelFileError(name, kv.first.Mark().line + 1, kv.first.Mark().column + 1, key, "duplicate key");
    if (!kv.second.IsScalar())
      throw KernelFileError(name, kv.second.Mark().line + 1, kv.second.Mark().column + 1, key,
                            "expected a single value");
    values[key] = kv.second;
    marks[key] = kv.first.Mark();
  }
  // A value's error points at the value; a missing key's at the kind line.
  const auto fail = [&](const std::string& key, const std::string& cause) -> KernelFileError {
    const std::string at = values.count(key) ? key : "kind";
    const YAML::Mark m = values.count(at) ? values[at].Mark() : YAML::Mark{};
    return KernelFileError(name, m.line + 1, m.column + 1, key, cause);
  };
  if (!values.count("kind"))
    throw KernelFileError(name, 1, 1, "kind", "missing (one of " + kernel_kind_names() + ")");
  const std::string kind_name = values["kind"].Scalar();
  const KernelKind* kind = find_kernel_kind(kind_name);
  if (!kind) throw fail("kind", "unknown kind '" + kind_name + "' (one of " + kernel_kind_names() + ")");
  std::vector<std::string> allowed;
  for (const auto& spec : kind->params) allowed.push_back(spec.name);
  const auto is_common = [](const std::string& key) {
    return std::find(common_keys().begin(), common_keys().end(), key) != common_keys().end();
  };
  for (const auto& [key, node] : values) {
    if (is_common(key) || std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    std::string list;
    for (const auto& k : allowed) list += (list.empty() ? "" : ", ") + k;
    for (const auto& k : common_keys()) list += ", " + k;
    const YAML::Mark m = marks[key];
    throw KernelFileError(name, m.line + 1, m.column + 1, key, "unknown key for kind " + kind_name + " (allowed: " + list + ")");
  }
  for (const auto& spec : kind->params)
    if (spec.required && !values.count(spec.name)) {
      std::string needs;
      for (const auto& s : kind->params)
        if (s.required) needs += (needs.empty() ? "" : ", ") + s.name;
      throw fail(spec.name, "missing; kind " + kind_name + " needs " + needs);
    }

  Precision p = Precision::fp64;
  if (values.count("precision")) {
    try {
      p = parse_precision(values["precision"].Scalar());
    } catch (const std::exception& e) {
      throw fail("precision", e.what());
    }
  }
  KernelParams given;
  for (const auto& spec : kind->params) {
    if (!values.count(spec.name)) continue;
    try {
      given[spec.name] = parse_param(spec, values[spec.name].Scalar(), spec.name);
    } catch (const std::exception& e) {
      // The error already says "file:line:col: key: "; drop the key the value parser put in front.
      std::string cause = e.what();
      if (cause.rfind(spec.name + ": ", 0) == 0) cause.erase(0, spec.name.size() + 2);
      throw fail(spec.name, cause);
    }
  }
  KernelModel k;
  try {
    k = make_kernel_model(*kind, given, p);
  } catch (const KernelParamError& e) {
    throw fail(e.param(), e.what());  // a combination the model rejects (e.g. nnz > m*n)
  }
  if (values.count("working_set")) {
    try {
      k.working_set_bytes = parse_traffic_bytes(values["working_set"].Scalar(), "working_set");
    } catch (const std::exception& e) {
      throw fail("working_set", e.what());
    }
  }
  if (values.count("tensor_core_fraction")) {
    double f = 0;
    try {
      f = parse_as(values["tensor_core_fraction"].Scalar(), Dimension::dimensionless, "tensor_core_fraction");
    } catch (const std::exception& e) {
      throw fail("tensor_core_fraction", e.what());
    }
    if (!(f >= 1e-6 && f <= 1)) throw fail("tensor_core_fraction", "must lie in [1e-6, 1], got " + num(f));
    k.tensor_core_fraction = f;
  }
  if (values.count("description")) k.description = values["description"].Scalar();
  return k;
}

// ---------------------------------------------------------------------------------------------
// predict

namespace {

std::string descriptor_name(const HardwareDescriptor& hw) {
  return !hw.id.empty() ? hw.id : !hw.identity.name.empty() ? hw.identity.name : std::string("the descriptor");
}

// One number taken from the descriptor (or an override), with where it came from.
struct Taken {
  double value = 0;
  std::string source;  // "measured" | "spec" | "override"
};

std::string describe(const Field& f, std::string_view source) {
  if (source == "spec" && f.spec) return "spec" + (f.spec->reference.empty() ? "" : " (" + f.spec->reference + ")");
  if (source == "measured" && f.measured) {
    const MeasuredValue& m = *f.measured;
    std::string s = "measured (";
    s += m.probe.empty() ? "probe ?" : "probe " + m.probe;
    if (!m.date.empty()) s += ", " + m.date;
    if (m.repeats > 0) s += ", median of " + std::to_string(m.repeats);
    if (m.cv > 0) s += ", cv " + num(std::round(m.cv * 1e4) / 1e2) + "%";
    if (m.flagged) s += ", FLAGGED";
    return s + ")";
  }
  return std::string(source);
}

Taken take(const Field* f, const std::string& path, Dimension d, SourcePreference pref, const HardwareDescriptor& hw,
           std::vector<std::string>& provenance) {
  if (!f || !f->present()) throw std::runtime_error(path + " is missing in " + descriptor_name(hw));
  const std::optional<double> v = f->value(pref);
  if (!v)
    throw std::runtime_error(path + " has no " + std::string(to_string(pref)) + " value in " + descriptor_name(hw) +
                             (f->spec ? " (a spec value exists: use source spec or auto)" : ""));
  const std::string source(f->source(pref));
  provenance.push_back(path + " = " + format_quantity(*v, d) + ": " + describe(*f, source));
  return {*v, source};
}

Taken take_override(double v, const std::string& what, Dimension d, std::vector<std::string>& provenance) {
  provenance.push_back(what + " = " + format_quantity(v, d) + ": override (what-if)");
  return {v, "override"};
}

// The rate under sustained load (issue 14): the instruction behind a measured tensor-core ceiling
// (dense, same input type, the same throughput) with a power reading (calibrate --power), whose
// rate during that reading (back to back for over a second at the board's power limit) sits below
// the ceiling. The ceiling stays the timed run's (a short kernel runs at that clock); the line
// says what a kernel that runs as long as the reading can reach, and the clock NVML reported.
std::optional<std::string> sustained_note(const HardwareDescriptor& hw, Precision p, double ceiling) {
  for (const auto& ti : hw.tensor_instructions) {
    if (ti.sparse || ti.input != p || !ti.throughput.measured || !ti.sustained.measured) continue;
    const MeasuredValue& t = *ti.throughput.measured;
    if (std::fabs(t.median - ceiling) > 1e-6 * ceiling) continue;
    const MeasuredValue& s = *ti.sustained.measured;
    const double ratio = s.median / ceiling;
    if (ratio >= 0.99) return std::nullopt;
    std::string line = "sustained: " + format_quantity(s.median, Dimension::flop_per_second) + " = " +
                       num(std::round(1000 * ratio) / 10) + "% of the ceiling (" + ti.key() +
                       " back to back during its power reading, calibrate --power";
    if (ti.power.measured)
      line += ": " + format_quantity(ti.power.measured->median, Dimension::watts) +
              (s.sm_clock_hz > 0 ? ", NVML clock " + format_quantity(s.sm_clock_hz, Dimension::hertz) : "");
    return line + "): a kernel that runs that long at the power limit reaches at most this";
  }
  return std::nullopt;
}

const Field* find_compute(const HardwareDescriptor& hw, ComputeUnit u, Precision p) {
  const auto unit = hw.compute.find(u);
  if (unit == hw.compute.end()) return nullptr;
  const auto f = unit->second.find(p);
  return f == unit->second.end() ? nullptr : &f->second;
}

}  // namespace

TightBound tight_bound(const HardwareDescriptor& hw, const MemoryRoof& roof, double traffic_bytes, double t_compute_s,
                       bool back_to_back, int passes) {
  if (passes < 1) throw std::invalid_argument("tight_bound: passes must be >= 1, got " + std::to_string(passes));
  TightBound b;
  b.back_to_back = back_to_back;
  b.passes = back_to_back ? passes : 1;
  b.bandwidth = roof.bandwidth_max;
  b.t_memory_s = traffic_bytes / roof.bandwidth_max;
  b.t_compute_s = t_compute_s;
  b.asymptotic_s = std::max(b.t_memory_s, t_compute_s);
  const std::string level(to_string(roof.level));
  b.provenance.push_back("memory." + level + " roof " + format_quantity(roof.bandwidth_max, Dimension::bytes_per_second) +
                         ": " + roof.how + " (measured maximum)");
  // A measured minimum where there is one (a bound needs the least seen), else the spec value.
  const auto least = [](const Field& f) -> std::optional<double> {
    if (f.measured) return f.measured->min > 0 ? f.measured->min : f.measured->median;
    if (f.spec) return f.spec->value;
    return std::nullopt;
  };
  const Field& launch = back_to_back ? hw.fixed_costs.launch_back_to_back : hw.fixed_costs.launch_single;
  const std::string launch_path = back_to_back ? "fixed_costs.launch_back_to_back" : "fixed_costs.launch_single";
  if (const auto v = least(launch)) {
    b.launch_s = *v;
    b.provenance.push_back(launch_path + " = " + format_quantity(*v, Dimension::seconds) +
                           (launch.measured ? " (measured minimum)" : " (spec)"));
  } else {
    b.missing.push_back(launch_path);
  }
  if (roof.has_first_byte) {
    b.first_byte_s = roof.first_byte_s;
    b.first_byte_from = "ramp envelope";
    b.provenance.push_back("memory." + level + ".first_byte = " + format_quantity(b.first_byte_s, Dimension::seconds) +
                           " (ramp envelope for this mix)");
  } else {
    const std::string lat_path = "memory." + level + ".latency";
    const auto lvl = hw.memory.find(roof.level);
    const std::optional<double> cycles = lvl == hw.memory.end() ? std::nullopt : least(lvl->second.latency);
    const std::optional<double> clock = hw.sm_clock.value();
    if (cycles && clock && *clock > 0) {
      b.first_byte_s = *cycles / *clock;
      b.first_byte_from = "level latency";
      b.provenance.push_back(lat_path + " = " + format_quantity(*cycles, Dimension::cycles) + " at sm_clock " +
                             format_quantity(*clock, Dimension::hertz) + " = " +
                             format_quantity(b.first_byte_s, Dimension::seconds) +
                             " (no memory." + level + ".first_byte: calibrate with the memory-ramp probe)");
    } else {
      b.missing.push_back(cycles ? "sm_clock" : lat_path);
    }
  }
  if (!roof.ramp.empty()) {
    const double per_pass = traffic_bytes / b.passes;
    b.ramp_s = b.passes * roof.ramp_time(per_pass);
    b.provenance.push_back("memory." + level + ".ramp: the least time measured to move " +
                           format_quantity(per_pass, Dimension::bytes) + " in this mix = " +
                           format_quantity(b.ramp_s / b.passes, Dimension::seconds) + " (lower convex hull of " +
                           roof.ramp_how + ")" + (b.passes > 1 ? ", x " + std::to_string(b.passes) + " passes" : ""));
  }
  if (passes > 1)
    b.provenance.push_back(std::to_string(passes) + " dependent launches: " +
                           (back_to_back ? "launch and first byte paid by each (timed back-to-back)"
                                         : "launch and first byte counted once (a cold run's later launches queue behind the first)"));
  b.update();
  return b;
}

void TightBound::update() {
  const double p = std::max(1, passes);
  time_s = std::max({p * launch_s, p * first_byte_s + asymptotic_s, ramp_s});
}

std::optional<double> l2_capacity_bytes(const HardwareDescriptor& hw, SourcePreference pref) {
  const auto l2 = hw.memory.find(MemoryLevelKind::l2);
  if (l2 == hw.memory.end() || !l2->second.capacity.present()) return std::nullopt;
  const SourcePreference cap_pref = pref == SourcePreference::measured ? SourcePreference::measured_else_spec : pref;
  return l2->second.capacity.value(cap_pref);
}

Prediction predict(const HardwareDescriptor& hw, const KernelModel& k, const PredictOptions& opt) {
  if (!(k.work_flop > 0) || !(k.traffic_bytes > 0))
    throw std::invalid_argument("predict: kernel '" + k.description + "' needs positive work and traffic");
  if (!(k.tensor_core_fraction > 0 && k.tensor_core_fraction <= 1))
    throw std::invalid_argument("predict: tensor_core_fraction must lie in (0, 1], got " + num(k.tensor_core_fraction));
  for (const auto& [what, v] : {std::pair{"bandwidth", opt.bandwidth_override},
                                std::pair{"CUDA-core peak", opt.peak_cuda_core_override},
                                std::pair{"tensor-core peak", opt.peak_tensor_core_override}})
    if (v && (!(*v > 0) || !std::isfinite(*v)))
      throw std::invalid_argument(std::string("predict: the ") + what + " override must be positive, got " + num(*v));

  Prediction r;
  const SourcePreference pref = opt.source;
  std::vector<std::string>& prov = r.provenance;

  // Which memory level bounds the working set: the paper splits at half the L2 capacity.
  const auto dram_it = hw.memory.find(MemoryLevelKind::dram);
  const auto l2_it = hw.memory.find(MemoryLevelKind::l2);
  const MemoryLevel* l2 = l2_it == hw.memory.end() ? nullptr : &l2_it->second;
  MemoryLevelKind level = MemoryLevelKind::dram;
  const std::string ws = format_quantity(k.working_set_bytes, Dimension::bytes);
  const std::optional<double> l2_cap = l2_capacity_bytes(hw, pref);
  const SourcePreference cap_pref = pref == SourcePreference::measured ? SourcePreference::measured_else_spec : pref;
  if (!l2_cap) {
    r.memory_level_reason = "the descriptor has no L2 capacity; DRAM bounds every working set";
  } else {
    const double cap = *l2_cap;
    const std::string half = format_quantity(cap / 2, Dimension::bytes);
    prov.push_back("memory.l2.capacity = " + format_quantity(cap, Dimension::bytes) + ": " +
                   describe(l2->capacity, l2->capacity.source(cap_pref)));
    if (!fits_in_l2(k.working_set_bytes, cap)) {
      r.memory_level_reason = "working set " + ws + " > half of L2 (" + half + ")";
    } else if (!l2->bandwidth.value(pref) && !opt.bandwidth_override) {
      r.memory_level_reason = "working set " + ws + " <= half of L2 (" + half + "), but the descriptor has no " +
                              (l2->bandwidth.present() ? std::string(to_string(pref)) + " " : "") +
                              "L2 bandwidth; DRAM bandwidth used";
    } else {
      level = MemoryLevelKind::l2;
      r.memory_level_reason = "working set " + ws + " <= half of L2 (" + half + ")";
    }
  }
  r.memory_level = std::string(to_string(level));
  const std::string bw_path = "memory." + r.memory_level + ".bandwidth";
  // The roof of that level for the kernel's read:write mix (stream-aware; validate uses the same).
  Taken bw;
  MemoryRoof roof;
  if (dram_it == hw.memory.end() && level == MemoryLevelKind::dram && !opt.bandwidth_override)
    throw std::runtime_error(bw_path + " is missing in " + descriptor_name(hw));
  if (hw.memory.count(level)) roof = memory_roof(hw, level, k.read_bytes, k.write_bytes, pref);
  if (opt.bandwidth_override) {
    bw = take_override(*opt.bandwidth_override, bw_path, Dimension::bytes_per_second, prov);
    roof.level = level;
    roof.bandwidth = roof.bandwidth_max = *opt.bandwidth_override;
    roof.how = "override (what-if)";
    roof.ramp.clear();  // the measured ramp is not the what-if machine's
    r.bandwidth_how = roof.how;
  } else {
    bw = {roof.bandwidth, roof.source};
    r.bandwidth_how = roof.how;
    for (const auto& line : roof.provenance) prov.push_back(line);
  }
  bool link_bound = false;
  if (opt.link) {
    const LinkLevel& L = *opt.link;
    if (!(L.bandwidth > 0) || !(L.read_fraction > 0 && L.read_fraction <= 1))
      throw std::invalid_argument("predict: the link level needs a positive bandwidth and a read fraction in (0, 1]");
    const double reads = k.read_bytes > 0 ? k.read_bytes : k.traffic_bytes;
    const double q_link = L.read_fraction * reads;
    const double q_local = std::max(0.0, k.traffic_bytes - q_link);
    const auto effective = [&](double local_bw, double link_bw) {
      return k.traffic_bytes / std::max(q_local / local_bw, q_link / link_bw);
    };
    const double t_local = q_local / bw.value, t_link = q_link / L.bandwidth;
    link_bound = t_link >= t_local;
    prov.push_back(L.provenance);
    prov.push_back("link: " + format_quantity(q_link, Dimension::bytes) + " of the reads (" + num(L.read_fraction) +
                   ") over " + L.name + " in " + format_quantity(t_link, Dimension::seconds) + ", " +
                   format_quantity(q_local, Dimension::bytes) + " local in " + format_quantity(t_local, Dimension::seconds) +
                   ": effective bandwidth Q / max = " + format_quantity(effective(bw.value, L.bandwidth), Dimension::bytes_per_second));
    r.memory_level_reason += std::string("; ") + (link_bound ? "the link bounds it: " : "the link does not bound it: ") +
                             num(L.read_fraction) + " of the reads come over " + L.name;
    if (link_bound) r.memory_level = "link";
    r.bandwidth_how = "local " + r.bandwidth_how + " and " + L.name + " side by side";
    roof.bandwidth_max = effective(roof.bandwidth_max > 0 ? roof.bandwidth_max : bw.value, L.bandwidth_max > 0 ? L.bandwidth_max : L.bandwidth);
    roof.ramp.clear();  // the level's ramp was measured without a link in the path
    bw.value = effective(bw.value, L.bandwidth);
  }

  Precision cc_p = k.precision;
  if (cc_p == Precision::tf32 && !find_compute(hw, ComputeUnit::cuda_core, cc_p) && !opt.peak_cuda_core_override) {
    cc_p = Precision::fp32;  // CUDA cores have no TF32: the CUDA-core formulation runs in FP32
    prov.push_back("CUDA-core precision = fp32: CUDA cores have no tf32");
  }
  if (cc_p == Precision::fp8 && !find_compute(hw, ComputeUnit::cuda_core, cc_p) && !opt.peak_cuda_core_override) {
    cc_p = Precision::fp16;  // no FP8 arithmetic on CUDA cores: the inputs are widened to FP16 (HFMA2)
    prov.push_back("CUDA-core precision = fp16: CUDA cores have no fp8 arithmetic (inputs widened to fp16)");
  }
  std::string cc_path = "compute.cuda_core." + precision_name(cc_p);
  const Field* cc_field = find_compute(hw, ComputeUnit::cuda_core, cc_p);
  if (k.outer_product && !opt.peak_cuda_core_override) {
    // GEMM on CUDA cores: the GEMM loop's rate (the outer product fed from shared memory), else the
    // outer-product rate, where the descriptor has it for this source.
    const auto gl = hw.gemm_loop.find(cc_p);
    const auto op = hw.outer_product.find(cc_p);
    if (gl != hw.gemm_loop.end() && gl->second.value(pref)) {
      cc_path = "compute.cuda_core_gemm_loop." + precision_name(cc_p);
      cc_field = &gl->second;
      prov.push_back("CUDA-core ceiling = the GEMM loop's rate: a " + k.kind +
                     "'s CUDA-core inner loop takes two operands per FMA from the register file and loads its "
                     "operands from shared memory every k step, which neither the pipe peak (compute.cuda_core." +
                     precision_name(cc_p) + ") nor the register-only outer product (compute.cuda_core_outer_product." +
                     precision_name(cc_p) + ") pays");
    } else if (op != hw.outer_product.end() && op->second.value(pref)) {
      cc_path = "compute.cuda_core_outer_product." + precision_name(cc_p);
      cc_field = &op->second;
      prov.push_back("CUDA-core ceiling = the outer-product rate: a " + k.kind +
                     "'s CUDA-core inner loop takes two operands per FMA from the register file, which the pipe "
                     "peak (compute.cuda_core." + precision_name(cc_p) + ") does not");
    }
  }
  std::string tc_path = "compute.tensor_core." + precision_name(k.precision);
  const Field* tc_field = find_compute(hw, ComputeUnit::tensor_core, k.precision);
  if (k.mma_sync_ceiling && !opt.peak_tensor_core_override) {
    const auto ms = hw.tensor_core_mma_sync.find(k.precision);
    if (ms != hw.tensor_core_mma_sync.end() && ms->second.value(pref)) {
      tc_path = "compute.tensor_core_mma_sync." + precision_name(k.precision);
      tc_field = &ms->second;
      prov.push_back("tensor-core ceiling = the mma.sync rate: the " + k.kind +
                     " kind's matrices are narrower than a wgmma tile (64 rows x 64..256 columns), which "
                     "compute.tensor_core." + precision_name(k.precision) + " may need");
    }
  }
  const Taken cc = opt.peak_cuda_core_override
                       ? take_override(*opt.peak_cuda_core_override, cc_path, Dimension::flop_per_second, prov)
                       : take(cc_field, cc_path, Dimension::flop_per_second, pref, hw, prov);
  const Taken tc = opt.peak_tensor_core_override
                       ? take_override(*opt.peak_tensor_core_override, tc_path, Dimension::flop_per_second, prov)
                       : take(tc_field, tc_path, Dimension::flop_per_second, pref, hw, prov);
  if (k.tensor_core_fraction != 1.0)
    prov.push_back("tensor-core fraction = " + num(k.tensor_core_fraction) + ": the kernel's tensor-core formulation (" +
                   k.kind + ")");
  if (!opt.peak_tensor_core_override && tc.source == "measured")
    if (auto line = sustained_note(hw, k.precision, tc.value)) prov.push_back(*line);

  const std::set<std::string> sources{bw.source, cc.source, tc.source};
  r.source = sources.size() == 1 ? *sources.begin() : "mixed";

  r.bandwidth = bw.value;
  r.peak_cuda_core = cc.value;
  r.peak_tensor_core = tc.value;
  r.peak_cuda_core_path = cc_path;
  r.peak_tensor_core_path = tc_path;
  r.peak_cuda_core_source = cc.source;
  r.peak_tensor_core_source = tc.source;
  r.tensor_core_effective_peak = tc.value * k.tensor_core_fraction;
  r.intensity = operational_intensity(k.work_flop, k.traffic_bytes);         // Eq. 2
  r.balance_cuda_core = machine_balance(cc.value, bw.value);                 // Eq. 1
  r.balance_tensor_core = machine_balance(tc.value, bw.value);               // Eq. 1, nominal peak
  r.memory_bound = is_memory_bound(r.intensity, r.balance_cuda_core);        // Eq. 4
  r.attainable_cuda_core = attainable_flop_per_s(cc.value, bw.value, r.intensity);  // Eq. 3
  r.attainable_tensor_core = attainable_flop_per_s(r.tensor_core_effective_peak, bw.value, r.intensity);
  r.t_compute_cuda_core = compute_time_s(k.work_flop, cc.value);
  r.t_compute_tensor_core = compute_time_s(k.work_flop, r.tensor_core_effective_peak);
  r.t_memory = memory_time_s(k.traffic_bytes, bw.value);
  r.t_overlapped = overlapped_time_s(r.t_memory, r.t_compute_cuda_core);    // Eq. 17
  r.t_unoverlapped = unoverlapped_time_s(r.t_memory, r.t_compute_cuda_core);  // Eq. 18
  r.alpha = r.tensor_core_effective_peak / cc.value;
  r.speedup_exact_unoverlapped = tensor_core_speedup(r.t_compute_cuda_core, r.t_memory, 0, r.alpha);  // Eq. 19-20
  r.speedup_kernel_bound = speedup_bound(r.alpha, r.balance_cuda_core, r.intensity);                 // Eq. 22
  r.speedup_memory_bound_limit = memory_bound_speedup_limit(r.alpha);                                // Eq. 23
  r.speedup_workload_limit = workload_speedup_limit(r.balance_cuda_core, r.intensity);               // Eq. 24
  r.balance_tensor_core_effective = machine_balance(r.tensor_core_effective_peak, bw.value);
  r.speedup_overlapped = overlapped_speedup(r.alpha, r.balance_cuda_core, r.intensity);
  r.speedup_upper_bound = speedup_upper_bound(r.alpha, r.balance_cuda_core, r.intensity);
  r.speedup_lower_bound = speedup_lower_bound(r.alpha, r.balance_cuda_core, r.intensity);
  const auto fmt = [](double v) {
    std::ostringstream os;
    os.precision(4);
    os << v;
    return os.str();
  };
  if (r.alpha <= 1) {
    r.speedup_regime = "alpha<=1";
    r.speedup_note = "alpha " + fmt(r.alpha) + " <= 1: tensor cores cannot speed this kernel up; S lies in [" +
                     fmt(r.speedup_lower_bound) + ", " + fmt(r.speedup_upper_bound) +
                     "] (un-overlapped Eq. 19-22 to overlapped); Eq. 22 and 23 are lower bounds here";
  } else if (r.memory_bound) {
    r.speedup_regime = "memory-bound";
    r.speedup_note = "memory-bound: tensor cores gain at most " + fmt(r.speedup_upper_bound) +
                     " (Eq. 22, un-overlapped; overlapped S = 1); no memory-bound kernel gains more than " +
                     fmt(r.speedup_memory_bound_limit) + " (Eq. 23)";
  } else {
    r.speedup_regime = "compute-bound";
    r.speedup_note = "compute-bound: tensor cores gain at most " + fmt(r.speedup_upper_bound) + " (" +
                     (r.speedup_upper_bound == r.speedup_overlapped ? "overlapped, min(alpha, I/B)" : "un-overlapped, Eq. 19-20") +
                     "); Eq. 22/23 are stated for memory-bound kernels and do not bound this one";
  }
  r.tight = tight_bound(hw, roof, k.traffic_bytes, r.t_compute_cuda_core, false);
  if (opt.link && link_bound && opt.link->latency_s > r.tight.first_byte_s) {
    // The first bytes come over the link: its least small-transfer time replaces the level's.
    r.tight.first_byte_s = opt.link->latency_s;
    r.tight.first_byte_from = "link latency";
    r.tight.provenance.push_back("first byte = " + format_quantity(opt.link->latency_s, Dimension::seconds) + ": least " +
                                 opt.link->name + " small-transfer time");
    r.tight.update();
  }
  if (k.intensity_one_step > 0) {  // temporally blocked kinds (stencils)
    r.temporal_blocking_threshold = temporal_blocking_threshold(r.balance_cuda_core, k.intensity_one_step);  // Eq. 14
    r.temporal_blocking_min_steps = temporal_blocking_min_steps(r.balance_cuda_core, k.intensity_one_step);
  }
  return r;
}

}  // namespace ceiling
