// ceiling predict: the model's numbers for one kernel on one descriptor (issue 2, "The predict contract").
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "common.hpp"
#include "kernels/stencil_plan.hpp"
#include "model/descriptor.hpp"
#include "model/kernel_kind.hpp"
#include "model/kernel_model.hpp"
#include "model/link.hpp"
#include "model/roofline.hpp"
#include "model/sparse_matrix.hpp"
#include "model/stencil_shape.hpp"
#include "model/units.hpp"

namespace ceiling::cli {
namespace {
namespace fs = std::filesystem;

struct PredictArgs {
  std::string hw, kernel, precision = "fp64", source = "auto";
  std::map<std::string, std::string> params;  // parameter name -> text, one option per name of the kind table
  std::string bandwidth, peak_cuda_core, peak_tensor_core;
  bool json = false;
  // SpMV: m, n and nnz from a Matrix Market file or a suite member (model/sparse_matrix.hpp).
  std::string matrix, suite, name;
  double scale = 1.0;
  // Stencils: points, dims and the weights from a shape (model/stencil_shape.hpp), built-in or a file.
  std::string shape;
  // The link level (issue 16): a node descriptor and which link the reads come over.
  std::string node, link;
  double link_fraction = 1.0;
};

bool kind_takes(const KernelKind* kind, const char* name) {
  return kind && std::any_of(kind->params.begin(), kind->params.end(), [&](const ParamSpec& p) { return p.name == name; });
}

// points, dims and shape_id of --shape NAME|FILE (registered); empty without --shape.
KernelParams shape_params(const PredictArgs& a, std::optional<StencilShape>& shape) {
  if (a.shape.empty()) return {};
  if (!kind_takes(find_kernel_kind(a.kernel), "shape_id"))
    throw std::runtime_error("--shape applies to the kinds with stencil shapes (--kernel stencil), not '" + a.kernel + "'");
  StencilShape s;
  try {
    s = load_stencil_shape(a.shape);
  } catch (const InputFileError&) {
    throw;  // "file:line:col: key: cause" already
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(std::string("--shape: ") + e.what());
  }
  shape = s;
  const int id = register_stencil_shape(s);
  return {{"points", s.size()}, {"dims", s.dims}, {"shape_id", id}};
}

// m, n, nnz of --matrix FILE or --suite table2 --name X; empty when neither is given.
KernelParams matrix_params(const PredictArgs& a, std::string& label) {
  if (a.matrix.empty() && a.suite.empty()) {
    if (!a.name.empty()) throw std::runtime_error("--name picks a matrix of --suite (e.g. --suite table2 --name cant)");
    return {};
  }
  // A matrix gives m, n and nnz: it applies to the kinds that take those (SpMV), by their parameters.
  const KernelKind* kind = find_kernel_kind(a.kernel);
  const auto takes = [&](const char* name) {
    return kind && std::any_of(kind->params.begin(), kind->params.end(), [&](const ParamSpec& p) { return p.name == name; });
  };
  if (!takes("m") || !takes("n") || !takes("nnz"))
    throw std::runtime_error("--matrix and --suite apply to the kinds with --m --n --nnz (SpMV), not '" + a.kernel + "'");
  if (!a.matrix.empty() && !a.suite.empty()) throw std::runtime_error("give --matrix or --suite, not both");
  if (!a.matrix.empty()) {
    MatrixReadOptions ro;
    ro.progress = [&a](std::int64_t done, std::int64_t total) {
      if (done < total) spdlog::info("{}: {} of {} entries", a.matrix, done, total);
    };
    const CsrMatrix m = read_matrix_market(a.matrix, ro);
    label = m.name + " (" + a.matrix + ")";
    return {{"m", m.rows}, {"n", m.cols}, {"nnz", static_cast<double>(m.nnz())}};
  }
  if (a.suite != "table2")
    throw std::runtime_error("--suite: unknown suite '" + a.suite + "' (known: table2, the 21 matrices of GPGPU'25 Table 2)");
  if (a.name.empty()) {
    std::string names;
    for (const auto& m : table2_suite()) names += (names.empty() ? "" : ", ") + m.name;
    throw std::runtime_error("--suite table2 needs --name (one of " + names + ")");
  }
  const SuiteMatrix& m = table2_matrix(a.name);
  const double rows = std::max(1.0, std::round(static_cast<double>(m.rows) * a.scale));
  const double nnz = std::max(1.0, std::round(static_cast<double>(m.nnz) * a.scale));
  label = m.code + " " + m.name + (a.scale != 1.0 ? " at scale " + std::to_string(a.scale) : "");
  return {{"m", rows}, {"n", rows}, {"nnz", nnz}};
}

bool looks_like_file(const std::string& s) {
  std::error_code ec;
  const std::string ext = fs::path(s).extension().string();
  return fs::is_regular_file(s, ec) || ext == ".yaml" || ext == ".yml";
}

// One option per parameter name of the kind table; its help lists the kinds that take it.
struct ParamOption {
  const CLI::Option* option = nullptr;
  std::string type_name;
};

KernelModel build_kernel(const PredictArgs& a, const std::map<std::string, ParamOption>& opts, std::string& label,
                         std::optional<StencilShape>& shape) {
  const auto given = [&](const std::string& name) { return opts.at(name).option->count() > 0; };
  KernelParams from_matrix = matrix_params(a, label);
  for (const auto& [name, v] : from_matrix)
    if (given(name)) throw std::runtime_error(param_option(name) + " comes from the matrix; leave it out with --matrix/--suite");
  if (!a.shape.empty() && looks_like_file(a.kernel) && !find_kernel_kind(a.kernel))
    throw std::runtime_error("--shape does not apply to a kernel file: its sizes come from " + a.kernel);
  const KernelParams from_shape = shape_params(a, shape);
  for (const auto& [name, v] : from_shape) from_matrix[name] = v;
  if (looks_like_file(a.kernel) && !find_kernel_kind(a.kernel)) {
    std::error_code ec;
    if (!fs::is_regular_file(a.kernel, ec)) throw std::runtime_error("--kernel: no kernel file '" + a.kernel + "'");
    for (const auto& [name, o] : opts)
      if (given(name))
        throw std::runtime_error(param_option(name) + " does not apply to a kernel file: its sizes come from " + a.kernel);
    return load_kernel_file(a.kernel);
  }
  const KernelKind* kind = find_kernel_kind(a.kernel);
  if (!kind)
    throw std::runtime_error("--kernel: unknown kind '" + a.kernel + "' (one of " + kernel_kind_names() +
                             ", or a kernel YAML file)");
  std::vector<std::string> required, missing, takes;
  for (const auto& spec : kind->params) {
    if (spec.hidden) continue;
    takes.push_back(param_option(spec.name));
    if (!spec.required) continue;
    required.push_back(param_option(spec.name));
    if (!given(spec.name) && !from_matrix.count(spec.name)) missing.push_back(param_option(spec.name));
  }
  const auto join = [](const std::vector<std::string>& v, const char* sep) {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : sep) + x;
    return out;
  };
  if (!missing.empty())
    throw std::runtime_error("--kernel " + a.kernel + " needs " + join(required, " ") + " (missing: " +
                             join(missing, " ") + ")");
  KernelParams params = from_matrix;
  for (const auto& [name, o] : opts) {
    if (!given(name)) continue;
    const auto spec = std::find_if(kind->params.begin(), kind->params.end(), [&](const ParamSpec& p) { return p.name == name; });
    if (spec == kind->params.end())
      throw std::runtime_error(param_option(name) + " does not apply to --kernel " + a.kernel + " (it takes " +
                               join(takes, ", ") + ")");
    params[name] = parse_param(*spec, a.params.at(name), param_option(name));
    if (const auto it = from_shape.find(name); it != from_shape.end() && it->second != params[name])
      throw std::runtime_error(param_option(name) + " " + a.params.at(name) + " disagrees with --shape " + shape->name +
                               " (" + name + " " + fmt::format("{}", it->second) + "); leave it out with --shape");
    if (from_shape.count(name)) params[name] = from_shape.at(name);
  }
  Precision p;
  try {
    p = parse_precision(a.precision);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("--precision: ") + e.what());
  }
  try {
    KernelModel k = make_kernel_model(*kind, params, p);
    if (!label.empty()) k.description += " (" + label + ")";
    return k;
  } catch (const KernelParamError& e) {
    const std::string what = e.what();
    throw std::runtime_error(e.param().empty() ? what : param_option(e.param()) + ": " + what);
  }
}

// ----- output

std::string flop_amount(double v) {
  std::string s = format_quantity(v, Dimension::flop_per_second);
  return s.substr(0, s.size() - 2);  // "2 GFLOP/s" -> "2 GFLOP"
}
std::string ratio(double v) { return fmt::format("{:.4g}", v); }
std::string fraction_text(double f) {
  const double inv = 1 / f;
  if (std::fabs(inv - std::round(inv)) < 1e-9) return fmt::format("1/{:.0f}", inv);
  return ratio(f);
}

// The shape's figures beside the prediction: name, |S|, radius and Eq. 14's depth for this shape.
// The tensor-core formulations of a stencil that validate runs (FP64 only): what share of each mma's
// products is useful, the alpha that leaves against the CUDA cores, and the speedup that alpha allows at
// the variant's own intensity (plain-mma makes one pass per step: I / t; toeplitz-mma fuses the t steps:
// I, as the CUDA-core variant it pairs with).
// The kind's alpha above assumes every tensor-core product useful; a real Toeplitz formulation pads
// each line to whole chunks of 4 and fills the matrix's zeros, so its alpha is the useful share of it.
struct StencilTcFormulation {
  std::string variant, how;
  int mma_per_block = 0;
  double useful = 0, alpha = 0, upper = 0, eq22 = 0;
};
std::vector<StencilTcFormulation> stencil_tc_formulations(const StencilShape& s, const Prediction& r, Precision p,
                                                          int steps) {
  std::vector<StencilTcFormulation> out;
  if (p != Precision::fp64 || !(r.peak_cuda_core > 0) || !(r.peak_tensor_core > 0)) return out;
  const auto add = [&](std::string variant, std::string how, int mma, double useful, double intensity) {
    StencilTcFormulation f{std::move(variant), std::move(how), mma, useful, 0, 0, 0};
    f.alpha = useful * r.peak_tensor_core / r.peak_cuda_core;
    f.upper = speedup_upper_bound(f.alpha, r.balance_cuda_core, intensity);
    f.eq22 = speedup_bound(f.alpha, r.balance_cuda_core, intensity);
    out.push_back(std::move(f));
  };
  const kernels::StencilColumnMmaPlan c = kernels::plan_stencil_column_mma(s);
  add("plain-mma", "one pass per step, 16x8 blocks, column lines x Toeplitz over y, mma.m16n8k4", c.mma_per_block(),
      c.useful_fraction, r.intensity / std::max(1, steps));
  const kernels::StencilTensorCorePlan t = kernels::plan_stencil_tensor_core(s);
  add("toeplitz-mma", "fused steps in a tile, 8x8 blocks, row lines x Toeplitz over x, mma.m8n8k4", t.mma_per_block(),
      t.useful_fraction, r.intensity);
  return out;
}

nlohmann::json shape_json(const StencilShape& s, const Prediction& r, Precision p, int steps) {
  return {{"name", s.name},
          {"source", s.source},
          {"dims", s.dims},
          {"points", s.size()},
          {"radius", s.radius()},
          {"radius_xyz", {s.radius(0), s.radius(1), s.radius(2)}},
          {"temporal_blocking_min_steps", temporal_blocking_min_steps_for_shape(s, r.balance_cuda_core, p)},
          {"tensor_core_formulations", [&] {
             nlohmann::json a = nlohmann::json::array();
             for (const auto& f : stencil_tc_formulations(s, r, p, steps))
               a.push_back({{"variant", f.variant}, {"how", f.how}, {"mma_per_block", f.mma_per_block},
                            {"useful_fraction", f.useful}, {"alpha", f.alpha}, {"speedup_bound_eq22", f.eq22},
                            {"speedup_upper_bound", f.upper}});
             return a;
           }()}};
}

nlohmann::json to_json(const HardwareDescriptor& hw, const fs::path& hw_path, const KernelModel& k,
                       const Prediction& r) {
  nlohmann::json j;
  j["schema"] = "ceiling/predict/1";
  j["hardware"] = {{"id", hw.id}, {"name", hw.identity.name}, {"path", hw_path.string()}};
  j["kernel"] = {{"kind", k.kind},
                 {"description", k.description},
                 {"precision", std::string(to_string(k.precision))},
                 {"work_flop", k.work_flop},
                 {"traffic_bytes", k.traffic_bytes},
                 {"working_set_bytes", k.working_set_bytes},
                 {"tensor_core_fraction", k.tensor_core_fraction},
                 {"temporal_steps", k.temporal_steps}};
  j["intensity_flop_per_byte"] = r.intensity;
  j["balance_flop_per_byte"] = {{"cuda_core", r.balance_cuda_core},
                                {"tensor_core", r.balance_tensor_core},
                                {"tensor_core_effective", r.balance_tensor_core_effective}};
  j["bound"] = r.memory_bound ? "memory" : "compute";
  j["memory_level"] = r.memory_level;
  j["memory_level_reason"] = r.memory_level_reason;
  j["bandwidth_bytes_per_s"] = r.bandwidth;
  j["peak_flop_per_s"] = {{"cuda_core", r.peak_cuda_core}, {"tensor_core", r.peak_tensor_core}};
  j["attainable_flop_per_s"] = {{"cuda_core", r.attainable_cuda_core}, {"tensor_core", r.attainable_tensor_core}};
  j["tensor_core_effective_peak_flop_per_s"] = r.tensor_core_effective_peak;
  j["time_s"] = {{"compute_cuda_core", r.t_compute_cuda_core},
                 {"compute_tensor_core", r.t_compute_tensor_core},
                 {"memory", r.t_memory},
                 {"overlapped", r.t_overlapped},
                 {"unoverlapped", r.t_unoverlapped}};
  j["tensor_core_speedup"] = {{"alpha", r.alpha},
                              {"exact_unoverlapped", r.speedup_exact_unoverlapped},
                              {"kernel_bound", r.speedup_kernel_bound},
                              {"memory_bound_limit", r.speedup_memory_bound_limit},
                              {"workload_limit", r.speedup_workload_limit},
                              {"overlapped", r.speedup_overlapped},
                              {"upper_bound", r.speedup_upper_bound},
                              {"lower_bound", r.speedup_lower_bound},
                              {"regime", r.speedup_regime},
                              {"note", r.speedup_note}};
  j["temporal_blocking_min_steps"] =
      r.temporal_blocking_min_steps ? nlohmann::json(*r.temporal_blocking_min_steps) : nlohmann::json(nullptr);
  j["temporal_blocking_threshold"] =
      r.temporal_blocking_threshold ? nlohmann::json(*r.temporal_blocking_threshold) : nlohmann::json(nullptr);
  j["bandwidth_how"] = r.bandwidth_how;
  j["tight_bound"] = {{"form", "max(launch_single, first_byte + max(Q/BW_max, W/P), ramp(Q))"},
                      {"time_s", r.tight.time_s},
                      {"launch_s", r.tight.launch_s},
                      {"first_byte_s", r.tight.first_byte_s},
                      {"ramp_s", r.tight.ramp_s},
                      {"first_byte_from", r.tight.first_byte_from},
                      {"bandwidth_bytes_per_s", r.tight.bandwidth},
                      {"memory_s", r.tight.t_memory_s},
                      {"compute_s", r.tight.t_compute_s},
                      {"asymptotic_s", r.tight.asymptotic_s},
                      {"missing", r.tight.missing},
                      {"provenance", r.tight.provenance}};
  j["source"] = r.source;
  j["provenance"] = r.provenance;
  return j;
}

void print_human(const HardwareDescriptor& hw, const KernelModel& k, const Prediction& r,
                 const std::optional<StencilShape>& shape) {
  const auto B = [](double v) { return format_quantity(v, Dimension::bytes); };
  const auto F = [](double v) { return format_quantity(v, Dimension::flop_per_second); };
  const auto S = [](double v) { return format_quantity(v, Dimension::seconds); };
  const std::string name = hw.identity.name.empty() ? hw.id : hw.identity.name + " (" + hw.id + ")";
  std::string o;
  o += fmt::format("{} on {}\n\n", k.description, name);
  if (shape)
    o += fmt::format("  {:<22}{} ({}): |S| = {}, radius {} (x {}, y {}, z {}), {}-D\n", "stencil shape", shape->name,
                     shape->source, shape->size(), shape->radius(), shape->radius(0), shape->radius(1), shape->radius(2),
                     shape->dims);
  o += fmt::format("  {:<22}W {}, Q {}, working set {}\n", "kernel", flop_amount(k.work_flop), B(k.traffic_bytes),
                   B(k.working_set_bytes));
  o += fmt::format("  {:<22}{} flop/B\n", "intensity I = W/Q", ratio(r.intensity));
  o += fmt::format("  {:<22}{} at {}: {}\n", "memory level", r.memory_level,
                   format_quantity(r.bandwidth, Dimension::bytes_per_second), r.memory_level_reason);
  o += fmt::format("  {:<22}{}\n", "roof for its streams", r.bandwidth_how);
  o += fmt::format("  {:<22}{}: I {} {} B {} (CUDA core, Eq. 4)\n\n", "bound", r.memory_bound ? "memory" : "compute",
                   ratio(r.intensity), r.memory_bound ? "<" : ">=", ratio(r.balance_cuda_core));
  o += fmt::format("  {:<22}{:<18}{}\n", "", "CUDA core", "tensor core");
  const std::string tc_peak = k.tensor_core_fraction == 1.0
                                  ? F(r.peak_tensor_core)
                                  : fmt::format("{} ({} x {})", F(r.tensor_core_effective_peak),
                                                fraction_text(k.tensor_core_fraction), F(r.peak_tensor_core));
  o += fmt::format("  {:<22}{:<18}{}\n", "peak P", F(r.peak_cuda_core), tc_peak);
  o += fmt::format("  {:<22}{:<18}{}\n", "balance B = P/BW", ratio(r.balance_cuda_core) + " flop/B",
                   k.tensor_core_fraction == 1.0
                       ? ratio(r.balance_tensor_core) + " flop/B"
                       : fmt::format("{} flop/B effective, {} nominal", ratio(r.balance_tensor_core_effective),
                                     ratio(r.balance_tensor_core)));
  o += fmt::format("  {:<22}{:<18}{}\n", "attainable (Eq. 3)", F(r.attainable_cuda_core), F(r.attainable_tensor_core));
  o += fmt::format("  {:<22}{:<18}{}\n", "compute time W/P", S(r.t_compute_cuda_core), S(r.t_compute_tensor_core));
  o += fmt::format("  {:<22}{}\n", "memory time Q/BW", S(r.t_memory));
  o += fmt::format("  {:<22}{} overlapped (Eq. 17), {} un-overlapped (Eq. 18)\n", "time on CUDA cores",
                   S(r.t_overlapped), S(r.t_unoverlapped));
  o += fmt::format("  {:<22}{} = max(launch {}, first byte {} [{}] + max(Q/BW {} at {}, W/P {}), ramp(Q) {}) (launched once{})\n\n",
                   "tight bound", S(r.tight.time_s), S(r.tight.launch_s), S(r.tight.first_byte_s),
                   r.tight.first_byte_from.empty() ? "missing" : r.tight.first_byte_from, S(r.tight.t_memory_s),
                   format_quantity(r.tight.bandwidth, Dimension::bytes_per_second), S(r.tight.t_compute_s),
                   r.tight.ramp_s > 0 ? S(r.tight.ramp_s) : std::string("none (no memory ramp tables)"),
                   r.tight.missing.empty() ? std::string() : "; not in the descriptor, taken as 0: " + [&] {
                     std::string m;
                     for (const auto& x : r.tight.missing) m += (m.empty() ? "" : ", ") + x;
                     return m;
                   }());
  o += fmt::format("  tensor-core speedup, alpha = P(TC, effective) / P(CC) = {}\n", ratio(r.alpha));
  o += fmt::format("  {:<38}{}\n", "exact, un-overlapped (Eq. 19-20)", ratio(r.speedup_exact_unoverlapped));
  o += fmt::format("  {:<38}{}\n", "fully overlapped (Eq. 17, both units)", ratio(r.speedup_overlapped));
  o += fmt::format("  {:<38}{}\n", "kernel bound (Eq. 22)", ratio(r.speedup_kernel_bound));
  o += fmt::format("  {:<38}{}\n", "memory-bound limit (Eq. 23)", ratio(r.speedup_memory_bound_limit));
  o += fmt::format("  {:<38}{}\n", "workload limit, alpha->inf (Eq. 24)", ratio(r.speedup_workload_limit));
  o += "  => " + r.speedup_note + "\n";
  if (r.temporal_blocking_min_steps)
    o += fmt::format("  {:<38}t I >= B: t >= B/I = {} -> t >= {} (Eq. 14)\n", "temporal blocking to compute-bound",
                     fmt::format("{:.2f}", *r.temporal_blocking_threshold), *r.temporal_blocking_min_steps);
  if (shape)
    o += fmt::format("  {:<38}t |S|/D > B for {} (|S| = {}): t >= {} (Eq. 14)\n", "temporal blocking, this shape",
                     shape->name, shape->size(), temporal_blocking_min_steps_for_shape(*shape, r.balance_cuda_core, k.precision));
  if (shape) {
    const auto forms = stencil_tc_formulations(*shape, r, k.precision, k.temporal_steps);
    if (!forms.empty())
      o += "  tensor-core formulations of this shape (validate's variants; alpha = useful share x P(TC) / P(CC)):\n";
    for (const auto& f : forms)
      o += fmt::format("    {:<13}{}: {} mma per block, {} useful -> alpha {}: tensor cores gain at most {}{}\n",
                       f.variant, f.how, f.mma_per_block, fraction_text(f.useful), ratio(f.alpha), ratio(f.upper),
                       f.alpha <= 1 ? " (alpha <= 1)" : "");
  }
  o += fmt::format("\n  numbers from: {}\n", r.source);
  for (const auto& line : r.provenance) o += "    " + line + "\n";
  for (const auto& [key, citation] : hw.references)
    if (std::any_of(r.provenance.begin(), r.provenance.end(),
                    [&](const std::string& l) { return l.find("(" + key + ")") != std::string::npos; }))
      o += fmt::format("    [{}] {}\n", key, citation);
  std::cout << o;
}

}  // namespace

Subcommand add_predict(CLI::App& root) {
  auto a = std::make_shared<PredictArgs>();
  Subcommand s;
  CLI::App* app = root.add_subcommand(
      "predict", "Roofline numbers and tensor-core speedup bounds of a kernel on a descriptor (no GPU needed)");
  s.app = app;
  app->add_option("--hw", a->hw, "Hardware descriptor: a YAML file or a shipped id (gh200, a100-80gb, ...)")
      ->type_name("FILE|ID")
      ->required();
  app->add_option("--kernel", a->kernel, "A kind (" + kernel_kind_names(" | ") + ") or a kernel YAML file")
      ->type_name("KIND|FILE")
      ->required();
  app->add_option("--precision", a->precision, "fp64 | fp32 | tf32 | fp16 | bf16 | fp8 | int8 (default fp64)");
  // Parameter options, generated from the kind table: one per name, help per kind.
  std::map<std::string, ParamOption> params;
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> helps;  // name -> (help, kinds)
  for (const auto& kind : kernel_kind_table())
    for (const auto& spec : kind.params) {
      if (spec.hidden) continue;
      if (!helps.count(spec.name)) order.push_back(spec.name);
      auto& h = helps[spec.name];
      const auto same = std::find_if(h.begin(), h.end(), [&](const auto& x) { return x.first == spec.help; });
      if (same == h.end()) h.push_back({spec.help, kind.name});
      else same->second += ", " + kind.name;
      params[spec.name].type_name =
          spec.type == ParamType::flop || spec.type == ParamType::bytes ? "QTY" : "N";
    }
  for (const auto& name : order) {
    std::string help;
    for (const auto& [text, kinds] : helps[name]) help += (help.empty() ? "" : "; ") + kinds + ": " + text;
    a->params[name];
    params[name].option = app->add_option(param_option(name), a->params[name], help)->type_name(params[name].type_name);
  }
  std::string kinds_text = "Kinds:\n";
  for (const auto& kind : kernel_kind_table()) {
    std::string opts;
    for (const auto& spec : kind.params)
      if (!spec.hidden) opts += " " + (spec.required ? param_option(spec.name) : "[" + param_option(spec.name) + "]");
    kinds_text += "  " + kind.name + opts + "\n      " + kind.summary + "\n";
  }
  app->add_option("--matrix", a->matrix, "spmv-csr/spmv: take m, n, nnz from a Matrix Market file")->type_name("FILE");
  app->add_option("--suite", a->suite, "spmv-csr/spmv: take m, n, nnz from a suite member ('table2', with --name)");
  app->add_option("--name", a->name, "spmv-csr/spmv: the --suite member (e.g. cant or D10)");
  app->add_option("--scale", a->scale, "spmv-csr/spmv: rows and nnz of the --suite member times this (default 1)")
      ->check(CLI::Range(1e-6, 1.0));
  app->add_option("--shape", a->shape,
                  "stencil: points, dims and weights of a shape: built-in (" + builtin_stencil_shape_names() +
                      ") or a YAML file")
      ->type_name("NAME|FILE");
  app->add_option("--bandwidth", a->bandwidth, "What-if: bandwidth of the bounding level, e.g. '3 TB/s'")
      ->type_name("QTY");
  app->add_option("--peak-cuda-core", a->peak_cuda_core, "What-if: CUDA-core peak, e.g. '9.7 TFLOP/s'")
      ->type_name("QTY");
  app->add_option("--peak-tensor-core", a->peak_tensor_core, "What-if: nominal tensor-core peak, e.g. '19.5 TFLOP/s'")
      ->type_name("QTY");
  app->add_option("--source", a->source, "spec | measured | auto (default auto: measured where present, else spec)")
      ->check(CLI::IsMember({"spec", "measured", "auto"}));
  app->add_option("--node", a->node, "Node descriptor (node.yaml of calibrate --devices) with the measured links")
      ->type_name("FILE");
  app->add_option("--link", a->link,
                  "The kernel's reads come over a link of --node: peer:FROM:TO (a kernel on GPU TO reads GPU FROM's "
                  "memory) or host:GPU (page-locked host memory read by GPU)")
      ->type_name("SPEC");
  app->add_option("--link-fraction", a->link_fraction, "Share of the kernel's read bytes that cross --link (default 1)")
      ->check(CLI::Range(1e-9, 1.0));
  app->add_flag("--json", a->json, "One JSON object on stdout");
  app->footer(kinds_text +
      "\nExamples:\n"
      "  ceiling predict --hw gh200 --kernel scale --n 1e9\n"
      "  ceiling predict --hw a100-80gb --kernel gemv --m 8192 --n 8192 --source spec --json\n"
      "  ceiling predict --hw gh200 --kernel stencil --shape 2d9pt --nx 9000 --ny 9000 --steps 3\n"
      "  ceiling predict --hw h200 --kernel stencil --shape my-shape.yaml --nx 512 --ny 512 --nz 512\n"
      "  ceiling predict --hw h200 --kernel custom --work '2 GFLOP' --traffic '8 GB'\n"
      "  ceiling predict --hw h200 --kernel spmv-csr --suite table2 --name cant\n"
      "  ceiling predict --hw h200 --kernel spmv-csr --matrix my.mtx --json\n"
      "  ceiling predict --hw h200 --kernel scale --n 1e9 --node node.yaml --link peer:1:0   # x on GPU 1, kernel on GPU 0");
  const CLI::Option* precision_opt = app->get_option("--precision");
  const CLI::Option* bw_opt = app->get_option("--bandwidth");
  const CLI::Option* cc_opt = app->get_option("--peak-cuda-core");
  const CLI::Option* tc_opt = app->get_option("--peak-tensor-core");

  s.run = [a, params, precision_opt, bw_opt, cc_opt, tc_opt]() -> int {
    const fs::path hw_path = resolve_hardware(a->hw);
    const HardwareDescriptor hw = load_descriptor(hw_path);
    if (precision_opt->count() > 0 && looks_like_file(a->kernel) && !find_kernel_kind(a->kernel))
      throw std::runtime_error("--precision does not apply to a kernel file (write precision: in " + a->kernel + ")");
    std::string label;
    std::optional<StencilShape> shape;
    const KernelModel k = build_kernel(*a, params, label, shape);

    PredictOptions opt;
    opt.source = parse_source_preference(a->source);
    if (bw_opt->count() > 0) opt.bandwidth_override = parse_as(a->bandwidth, Dimension::bytes_per_second, "--bandwidth");
    if (cc_opt->count() > 0)
      opt.peak_cuda_core_override = parse_as(a->peak_cuda_core, Dimension::flop_per_second, "--peak-cuda-core");
    if (tc_opt->count() > 0)
      opt.peak_tensor_core_override = parse_as(a->peak_tensor_core, Dimension::flop_per_second, "--peak-tensor-core");
    if (a->node.empty() != a->link.empty())
      throw std::runtime_error("--node and --link go together (e.g. --node node.yaml --link peer:1:0)");
    if (!a->node.empty()) opt.link = link_level(load_node_descriptor(a->node), a->link, a->link_fraction);
    spdlog::debug("predict: {} on {} ({})", k.description, hw.id, hw_path.string());
    const Prediction r = predict(hw, k, opt);

    // SpMV: Q counts x once (n D). That holds when the gathered x stays in the L2 between uses;
    // validate measures how far off it is per matrix (achieved bandwidth above the roof = reuse
    // better than assumed is impossible, far below = x re-read).
    const KernelKind* kk = find_kernel_kind(k.kind);
    const bool spmv = kk && std::any_of(kk->params.begin(), kk->params.end(), [](const ParamSpec& p) { return p.name == "nnz"; });
    const std::string x_note =
        "Q counts x once (n x " + std::to_string(static_cast<int>(bytes_per_value(k.precision))) +
        " B): the gathered x is assumed to stay in the L2 between uses; when x does not fit the L2 or the columns "
        "scatter, x lines are re-read and the true traffic exceeds Q (validate --kernels spmv measures it per matrix)";
    if (a->json) {
      auto j = to_json(hw, hw_path, k, r);
      if (spmv) j["assumption"] = x_note;
      if (opt.link)
        j["link"] = {{"name", opt.link->name}, {"bandwidth_bytes_per_s", opt.link->bandwidth},
                     {"bandwidth_max_bytes_per_s", opt.link->bandwidth_max}, {"latency_s", opt.link->latency_s},
                     {"read_fraction", opt.link->read_fraction}, {"node", a->node}};
      if (!label.empty()) j["matrix"] = label;
      if (shape) j["stencil_shape"] = shape_json(*shape, r, k.precision, k.temporal_steps);
      std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else {
      print_human(hw, k, r, shape);
      if (spmv) std::cout << "Assumption: " << x_note << "\n";
    }
    return 0;
  };
  return s;
}

}  // namespace ceiling::cli
