// ceiling predict: the model's numbers for one kernel on one descriptor (issue 2, "The predict contract").
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "common.hpp"
#include "model/descriptor.hpp"
#include "model/kernel_model.hpp"
#include "model/units.hpp"

namespace ceiling::cli {
namespace {
namespace fs = std::filesystem;

struct PredictArgs {
  std::string hw, kernel, precision = "fp64", source = "auto";
  std::string n, m, k, nnz, index_bytes, points, dims, nx, ny, nz, steps;
  std::string work, traffic, bandwidth, peak_cuda_core, peak_tensor_core;
  bool json = false;
};

// The size options each built-in kind takes; `required` must all be given.
struct KindOptions {
  std::vector<std::string> required, optional;
};
const std::map<std::string, KindOptions>& kind_options() {
  static const std::map<std::string, KindOptions> m{
      {"scale", {{"--n"}, {}}},
      {"gemv", {{"--m", "--n"}, {}}},
      {"spmv-csr", {{"--m", "--n", "--nnz"}, {"--index-bytes"}}},
      {"stencil", {{"--points", "--dims", "--nx", "--ny"}, {"--nz", "--steps"}}},
      {"gemm", {{"--m", "--n", "--k"}, {}}},
      {"custom", {{"--work", "--traffic"}, {}}},
  };
  return m;
}

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

int as_int(const std::string& text, const char* option) {
  const double v = parse_size(text, option);
  if (v > 1e9) throw std::runtime_error(std::string(option) + ": " + text + " is too large");
  return static_cast<int>(v);
}

bool looks_like_file(const std::string& s) {
  std::error_code ec;
  const std::string ext = fs::path(s).extension().string();
  return fs::is_regular_file(s, ec) || ext == ".yaml" || ext == ".yml";
}

KernelModel build_kernel(const PredictArgs& a, const std::map<std::string, const CLI::Option*>& opts) {
  const auto given = [&](const std::string& name) { return opts.at(name)->count() > 0; };
  std::vector<std::string> size_options;
  for (const auto& [name, opt] : opts) size_options.push_back(name);

  if (looks_like_file(a.kernel) && !kind_options().count(a.kernel)) {
    std::error_code ec;
    if (!fs::is_regular_file(a.kernel, ec)) throw std::runtime_error("--kernel: no kernel file '" + a.kernel + "'");
    for (const auto& name : size_options)
      if (given(name))
        throw std::runtime_error(name + " does not apply to a kernel file: its sizes come from " + a.kernel);
    return load_kernel_file(a.kernel);
  }
  const auto kind = kind_options().find(a.kernel);
  if (kind == kind_options().end()) {
    std::vector<std::string> kinds;
    for (const auto& [k, o] : kind_options()) kinds.push_back(k);
    throw std::runtime_error("--kernel: unknown kind '" + a.kernel + "' (one of " + join(kinds) +
                             ", or a kernel YAML file; generic SpMV is kind: spmv in a kernel file)");
  }
  const KindOptions& ko = kind->second;
  std::vector<std::string> missing;
  for (const auto& name : ko.required)
    if (!given(name)) missing.push_back(name);
  if (!missing.empty())
    throw std::runtime_error("--kernel " + a.kernel + " needs " + join(ko.required, " ") + " (missing: " +
                             join(missing, " ") + ")");
  for (const auto& name : size_options) {
    if (!given(name)) continue;
    const bool applies = std::count(ko.required.begin(), ko.required.end(), name) ||
                         std::count(ko.optional.begin(), ko.optional.end(), name);
    if (!applies) {
      std::vector<std::string> takes = ko.required;
      takes.insert(takes.end(), ko.optional.begin(), ko.optional.end());
      throw std::runtime_error(name + " does not apply to --kernel " + a.kernel + " (it takes " + join(takes) + ")");
    }
  }

  Precision p;
  try {
    p = parse_precision(a.precision);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("--precision: ") + e.what());
  }
  const std::string& kd = a.kernel;
  if (kd == "scale") return scale_model(parse_size(a.n, "--n"), p);
  if (kd == "gemv") return gemv_model(parse_size(a.m, "--m"), parse_size(a.n, "--n"), p);
  if (kd == "gemm") return gemm_model(parse_size(a.m, "--m"), parse_size(a.n, "--n"), parse_size(a.k, "--k"), p);
  if (kd == "spmv-csr") {
    const int idx = given("--index-bytes") ? as_int(a.index_bytes, "--index-bytes") : 4;
    if (idx > 8) throw std::runtime_error("--index-bytes: must be 1..8, got " + a.index_bytes);
    return spmv_csr_model(parse_size(a.m, "--m"), parse_size(a.n, "--n"), parse_size(a.nnz, "--nnz"), idx, p);
  }
  if (kd == "stencil") {
    const int dims = as_int(a.dims, "--dims");
    if (dims != 2 && dims != 3) throw std::runtime_error("--dims: must be 2 or 3, got " + a.dims);
    if (dims == 3 && !given("--nz")) throw std::runtime_error("--dims 3 needs --nz");
    if (dims == 2 && given("--nz")) throw std::runtime_error("--nz does not apply to --dims 2");
    const int steps = given("--steps") ? as_int(a.steps, "--steps") : 1;
    return stencil_model(as_int(a.points, "--points"), dims, parse_size(a.nx, "--nx"), parse_size(a.ny, "--ny"),
                         dims == 3 ? parse_size(a.nz, "--nz") : 0, steps, p);
  }
  return custom_model(parse_work_flop(a.work, "--work"), parse_traffic_bytes(a.traffic, "--traffic"), p);
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
  j["balance_flop_per_byte"] = {{"cuda_core", r.balance_cuda_core}, {"tensor_core", r.balance_tensor_core}};
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
                              {"workload_limit", r.speedup_workload_limit}};
  j["temporal_blocking_min_steps"] =
      r.temporal_blocking_min_steps ? nlohmann::json(*r.temporal_blocking_min_steps) : nlohmann::json(nullptr);
  j["temporal_blocking_threshold"] =
      r.temporal_blocking_threshold ? nlohmann::json(*r.temporal_blocking_threshold) : nlohmann::json(nullptr);
  j["source"] = r.source;
  j["provenance"] = r.provenance;
  return j;
}

void print_human(const HardwareDescriptor& hw, const KernelModel& k, const Prediction& r) {
  const auto B = [](double v) { return format_quantity(v, Dimension::bytes); };
  const auto F = [](double v) { return format_quantity(v, Dimension::flop_per_second); };
  const auto S = [](double v) { return format_quantity(v, Dimension::seconds); };
  const std::string name = hw.identity.name.empty() ? hw.id : hw.identity.name + " (" + hw.id + ")";
  std::string o;
  o += fmt::format("{} on {}\n\n", k.description, name);
  o += fmt::format("  {:<22}W {}, Q {}, working set {}\n", "kernel", flop_amount(k.work_flop), B(k.traffic_bytes),
                   B(k.working_set_bytes));
  o += fmt::format("  {:<22}{} flop/B\n", "intensity I = W/Q", ratio(r.intensity));
  o += fmt::format("  {:<22}{} at {}: {}\n", "memory level", r.memory_level,
                   format_quantity(r.bandwidth, Dimension::bytes_per_second), r.memory_level_reason);
  o += fmt::format("  {:<22}{}: I {} {} B {} (CUDA core, Eq. 4)\n\n", "bound", r.memory_bound ? "memory" : "compute",
                   ratio(r.intensity), r.memory_bound ? "<" : ">=", ratio(r.balance_cuda_core));
  o += fmt::format("  {:<22}{:<18}{}\n", "", "CUDA core", "tensor core");
  const std::string tc_peak = k.tensor_core_fraction == 1.0
                                  ? F(r.peak_tensor_core)
                                  : fmt::format("{} ({} x {})", F(r.tensor_core_effective_peak),
                                                fraction_text(k.tensor_core_fraction), F(r.peak_tensor_core));
  o += fmt::format("  {:<22}{:<18}{}\n", "peak P", F(r.peak_cuda_core), tc_peak);
  o += fmt::format("  {:<22}{:<18}{}\n", "balance B = P/BW", ratio(r.balance_cuda_core) + " flop/B",
                   ratio(r.balance_tensor_core) + " flop/B (nominal P)");
  o += fmt::format("  {:<22}{:<18}{}\n", "attainable (Eq. 3)", F(r.attainable_cuda_core), F(r.attainable_tensor_core));
  o += fmt::format("  {:<22}{:<18}{}\n", "compute time W/P", S(r.t_compute_cuda_core), S(r.t_compute_tensor_core));
  o += fmt::format("  {:<22}{}\n", "memory time Q/BW", S(r.t_memory));
  o += fmt::format("  {:<22}{} overlapped (Eq. 17), {} un-overlapped (Eq. 18)\n\n", "time on CUDA cores",
                   S(r.t_overlapped), S(r.t_unoverlapped));
  o += fmt::format("  tensor-core speedup, alpha = P(TC, effective) / P(CC) = {}\n", ratio(r.alpha));
  o += fmt::format("  {:<38}{}\n", "exact, un-overlapped (Eq. 19-20)", ratio(r.speedup_exact_unoverlapped));
  o += fmt::format("  {:<38}{}\n", "kernel bound (Eq. 22)", ratio(r.speedup_kernel_bound));
  o += fmt::format("  {:<38}{}\n", "memory-bound limit (Eq. 23)", ratio(r.speedup_memory_bound_limit));
  o += fmt::format("  {:<38}{}\n", "workload limit, alpha->inf (Eq. 24)", ratio(r.speedup_workload_limit));
  if (r.speedup_kernel_bound < 1)
    o += "  => tensor cores would slow this kernel down (Eq. 22 bound < 1)\n";
  else if (r.memory_bound)
    o += fmt::format("  => memory-bound: tensor cores gain at most {}x here; no memory-bound kernel gains "
                     "more than {}x (Eq. 23)\n",
                     ratio(r.speedup_kernel_bound), ratio(r.speedup_memory_bound_limit));
  if (r.temporal_blocking_min_steps)
    o += fmt::format("  {:<38}t > B/I = {} -> t >= {} (Eq. 14)\n", "temporal blocking to compute-bound",
                     fmt::format("{:.2f}", *r.temporal_blocking_threshold), *r.temporal_blocking_min_steps);
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
  app->add_option("--kernel", a->kernel,
                  "scale | gemv | spmv-csr | stencil | gemm | custom, or a kernel YAML file")
      ->type_name("KIND|FILE")
      ->required();
  app->add_option("--precision", a->precision, "fp64 | fp32 | tf32 | fp16 | bf16 | fp8 | int8 (default fp64)");
  std::map<std::string, const CLI::Option*> sizes;
  const auto size = [&](const std::string& name, std::string& target, const std::string& help) {
    sizes[name] = app->add_option(name, target, help)->type_name(name == "--work" || name == "--traffic" ? "QTY" : "N");
  };
  size("--n", a->n, "scale: elements; gemv/gemm/spmv-csr: columns (1e9 or 4096)");
  size("--m", a->m, "gemv/gemm/spmv-csr: rows");
  size("--k", a->k, "gemm: inner dimension");
  size("--nnz", a->nnz, "spmv-csr: non-zeros");
  size("--index-bytes", a->index_bytes, "spmv-csr: bytes per index (default 4)");
  size("--points", a->points, "stencil: points |S| (5 for 2d5pt)");
  size("--dims", a->dims, "stencil: 2 or 3");
  size("--nx", a->nx, "stencil: grid size in x");
  size("--ny", a->ny, "stencil: grid size in y");
  size("--nz", a->nz, "stencil: grid size in z (3-D)");
  size("--steps", a->steps, "stencil: temporal blocking depth t (default 1)");
  size("--work", a->work, "custom: work W, e.g. '2 GFLOP' or 2e9");
  size("--traffic", a->traffic, "custom: traffic Q, e.g. '8 GB'");
  app->add_option("--bandwidth", a->bandwidth, "What-if: bandwidth of the bounding level, e.g. '3 TB/s'")
      ->type_name("QTY");
  app->add_option("--peak-cuda-core", a->peak_cuda_core, "What-if: CUDA-core peak, e.g. '9.7 TFLOP/s'")
      ->type_name("QTY");
  app->add_option("--peak-tensor-core", a->peak_tensor_core, "What-if: nominal tensor-core peak, e.g. '19.5 TFLOP/s'")
      ->type_name("QTY");
  app->add_option("--source", a->source, "spec | measured | auto (default auto: measured where present, else spec)")
      ->check(CLI::IsMember({"spec", "measured", "auto"}));
  app->add_flag("--json", a->json, "One JSON object on stdout");
  app->footer(
      "Examples:\n"
      "  ceiling predict --hw gh200 --kernel scale --n 1e9\n"
      "  ceiling predict --hw a100-80gb --kernel gemv --m 8192 --n 8192 --source spec --json\n"
      "  ceiling predict --hw gh200 --kernel stencil --points 5 --dims 2 --nx 9000 --ny 9000 --steps 3\n"
      "  ceiling predict --hw h200 --kernel custom --work '2 GFLOP' --traffic '8 GB'");
  const CLI::Option* precision_opt = app->get_option("--precision");
  const CLI::Option* bw_opt = app->get_option("--bandwidth");
  const CLI::Option* cc_opt = app->get_option("--peak-cuda-core");
  const CLI::Option* tc_opt = app->get_option("--peak-tensor-core");

  s.run = [a, sizes, precision_opt, bw_opt, cc_opt, tc_opt]() -> int {
    const fs::path hw_path = resolve_hardware(a->hw);
    const HardwareDescriptor hw = load_descriptor(hw_path);
    if (precision_opt->count() > 0 && looks_like_file(a->kernel) && !kind_options().count(a->kernel))
      throw std::runtime_error("--precision does not apply to a kernel file (write precision: in " + a->kernel + ")");
    const KernelModel k = build_kernel(*a, sizes);

    PredictOptions opt;
    opt.source = parse_source_preference(a->source);
    if (bw_opt->count() > 0) opt.bandwidth_override = parse_as(a->bandwidth, Dimension::bytes_per_second, "--bandwidth");
    if (cc_opt->count() > 0)
      opt.peak_cuda_core_override = parse_as(a->peak_cuda_core, Dimension::flop_per_second, "--peak-cuda-core");
    if (tc_opt->count() > 0)
      opt.peak_tensor_core_override = parse_as(a->peak_tensor_core, Dimension::flop_per_second, "--peak-tensor-core");
    spdlog::debug("predict: {} on {} ({})", k.description, hw.id, hw_path.string());
    const Prediction r = predict(hw, k, opt);

    if (a->json)
      std::cout << to_json(hw, hw_path, k, r).dump(2) << "\n";
    else
      print_human(hw, k, r);
    return 0;
  };
  return s;
}

}  // namespace ceiling::cli
