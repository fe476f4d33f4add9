// ceiling validate: parse options, call kernels::run_validation_on_gpu (the sweep lives in
// kernels/sweep.cpp), print the table or JSON, write the results file (docs/FORMATS.md).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "common.hpp"
#include "model/descriptor.hpp"
#include "model/units.hpp"
#include "model/validation.hpp"

#include "kernels/registry.hpp"
#include "kernels/sweep.hpp"
#include "model/kernel_kind.hpp"
#include "model/sparse_matrix.hpp"
#include "model/stencil_shape.hpp"
#ifdef CEILING_HAVE_CUDA
#include "kernels/runner.hpp"
#endif

namespace ceiling::cli {
namespace fs = std::filesystem;

namespace {

[[maybe_unused]] std::string process_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string out;
  for (char c : raw) out += c == '\0' ? ' ' : c;
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string kernel_kinds_with_variants_text() {
  std::string s;
  for (const auto& k : kernels::kind_names_with_variants()) s += (s.empty() ? "" : ", ") + k;
  return s.empty() ? "none in a build without CUDA" : s;
}

// The registered variants (and the SASS each must compile to): no GPU needed.
int print_variants(bool as_json) {
  using nlohmann::json;
  json arr = json::array();
  std::ostringstream o;
  for (const auto& v : kernels::registry()) {
    json sass = json::array();
    for (const auto& e : v.sass) sass.push_back({{"function", e.function}, {"require", e.require}, {"forbid", e.forbid}});
    arr.push_back({{"name", v.name()},
                   {"kind", v.kind},
                   {"implementation", v.implementation},
                   {"unit", std::string(to_string(v.unit))},
                   {"precision", std::string(to_string(v.precision))},
                   {"tensor_core_fraction", v.tensor_core_fraction},
                   {"description", v.description},
                   {"sass", sass}});
    o << v.name() << "\n    " << v.description << "\n";
    if (v.unit == ComputeUnit::tensor_core) {
      if (v.tensor_core_fraction > 0) o << "    tensor-core fraction " << v.tensor_core_fraction << "\n";
      else o << "    tensor-core fraction: per size, from the kind's model\n";
    }
    for (const auto& e : v.sass)
      o << "    SASS of " << e.function << ": has /" << e.require << "/" << (e.forbid.empty() ? "" : ", no /" + e.forbid + "/")
        << "\n";
  }
  if (as_json)
    std::cout << json{{"variants", arr}}.dump(2) << "\n";
  else
    std::cout << (arr.empty() ? std::string("(this build has no CUDA support: no kernel variants)\n") : o.str());
  return 0;
}

// Registers the SpMV inputs (model/sparse_matrix.hpp): the Matrix Market files, then the suite's
// matrices, each with its row statistics on stderr. Returns how many.
[[maybe_unused]] int register_spmv_inputs(const ValidateOptions& opt) {
  clear_registered_matrices();
  const auto log_matrix = [](const CsrMatrix& a, double seconds) {
    const RowStats st = row_stats(a);
    spdlog::info("  {}: {} x {}, nnz {}, row length mean {:.1f} max {} cv {:.2f}, CSR {} ({:.1f} s)", a.name, a.rows, a.cols,
                 a.nnz(), st.mean, st.max, st.cv, format_quantity(a.csr_bytes(4), Dimension::bytes), seconds);
  };
  for (const auto& path : opt.matrices) {
    const auto t0 = std::chrono::steady_clock::now();
    spdlog::info("reading {}", path);
    MatrixReadOptions ro;
    ro.progress = [&path](std::int64_t done, std::int64_t total) {
      if (done < total) spdlog::info("  {}: {} of {} entries", path, done, total);
    };
    auto a = std::make_shared<CsrMatrix>(read_matrix_market(path, ro));
    log_matrix(*a, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    register_matrix(std::move(a));
  }
  if (!opt.suite.empty()) {
    if (opt.suite != "table2")
      throw std::runtime_error("--suite: unknown suite '" + opt.suite + "' (known: table2, the 21 matrices of GPGPU'25 Table 2)");
    std::vector<std::string> names = opt.names;
    if (names.empty())
      for (const auto& m : table2_suite()) names.push_back(m.name);
    for (const auto& n : names) table2_matrix(n);  // every name checked before the first is generated
    spdlog::info("generating {} matrices of table2 (scale {}, seed {})", names.size(), opt.scale, opt.matrix_seed);
    for (const auto& n : names) {
      const auto t0 = std::chrono::steady_clock::now();
      auto a = std::make_shared<CsrMatrix>(generate_table2(n, opt.scale, opt.matrix_seed));
      log_matrix(*a, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      register_matrix(std::move(a));
    }
  } else if (!opt.names.empty()) {
    throw std::runtime_error("--name picks matrices of a --suite (e.g. --suite table2 --name cant,pwtk)");
  }
  return registered_matrix_count();
}

}  // namespace

constexpr int kMaxValidateSteps = 16;

void select_stencil_inputs(const ValidateOptions& opt) {
  const bool any = !opt.shapes.empty() || !opt.domains.empty() || opt.steps != 0 || opt.steps_given;
  clear_registered_stencil_shapes();
  set_stencil_sweep_selection({});
  if (!any) return;
  if (!opt.kernels.empty()) {
    const bool named = std::any_of(opt.kernels.begin(), opt.kernels.end(), [](const std::string& k) {
      const KernelKind* kind = find_kernel_kind(k.substr(0, k.find(':')));
      return kind && kind->stencil_inputs;
    });
    if (!named) throw std::runtime_error("--shapes, --domain and --steps are stencil inputs: add stencil to --kernels");
  }
  if (opt.steps < 0 || opt.steps > kMaxValidateSteps || (opt.steps == 0 && opt.steps_given))
    throw std::runtime_error("--steps " + std::to_string(opt.steps) + ": the fused time steps t must be 1.." +
                             std::to_string(kMaxValidateSteps));
  std::vector<StencilShape> shapes;
  for (const auto& name : opt.shapes) {
    try {
      shapes.push_back(load_stencil_shape(name));
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(std::string("--shapes: ") + e.what());
    }
  }
  if (shapes.empty()) shapes = builtin_stencil_shapes();
  StencilSweepSelection sel;
  sel.steps = opt.steps;
  for (const auto& text : opt.domains) {
    StencilDomain d;
    try {
      d = parse_stencil_domain(text);
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(std::string("--domain: ") + e.what());
    }
    int matching = 0;
    for (const auto& s : shapes) {
      if (s.dims != d.dims) continue;
      ++matching;
      try {
        check_stencil_domain(s, d);
      } catch (const std::invalid_argument& e) {
        throw std::runtime_error(std::string("--domain ") + text + ": " + e.what());
      }
    }
    if (matching == 0)
      throw std::runtime_error("--domain " + text + ": no selected shape is " + std::to_string(d.dims) +
                               "-D (--shapes names the shapes; 2-D domains are NXxNY, 3-D NXxNYxNZ)");
    sel.domains.push_back(d);
  }
  for (auto& s : shapes) register_stencil_shape(std::move(s));
  set_stencil_sweep_selection(std::move(sel));
}

int run_validate(const ValidateOptions& opt) {
  using namespace ceiling::validation;
  const fs::path hw_path = resolve_hardware(opt.hw);
  const HardwareDescriptor hw = load_descriptor(hw_path);
  kernels::Sweep sweep;
  for (const auto& t : opt.sizes) sweep.sizes.push_back(kernels::parse_size_request(t));
  sweep.quick = opt.quick;
  sweep.l2_bytes = kernels::sweep_l2_bytes(hw);  // checked before any GPU work
  select_stencil_inputs(opt);                     // likewise: bad shapes, domains or steps fail here
#ifndef CEILING_HAVE_CUDA
  spdlog::error("this build has no CUDA support: 'ceiling validate' needs a GPU build");
  return 2;
#else
  std::vector<const kernels::KernelVariant*> variants;
  for (const auto* v : kernels::select_variants(opt.kernels)) {
    const std::string why = v->unavailable ? v->unavailable() : std::string();
    if (why.empty()) variants.push_back(v);
    else spdlog::warn("{} left out: {}", v->name(), why);
  }
  // Kinds sized by registered matrices (KernelKind::matrix_inputs): SpMV. Named on --kernels without
  // --matrix/--suite, they run the Table 2 suite; left to the default (all kinds) they need an input.
  const auto needs_matrices = [](const kernels::KernelVariant* v) { return kernel_kind(v->kind).matrix_inputs; };
  const bool spmv = std::any_of(variants.begin(), variants.end(), needs_matrices);
  const bool spmv_named = !opt.kernels.empty() && spmv;
  ValidateOptions inputs = opt;
  if (spmv_named && inputs.matrices.empty() && inputs.suite.empty()) inputs.suite = "table2";
  if (!spmv && (!inputs.matrices.empty() || !inputs.suite.empty()))
    throw std::runtime_error("--matrix and --suite are SpMV inputs: add spmv to --kernels");
  if (spmv) register_spmv_inputs(inputs);
  sweep.on_result = [](size_t done, size_t total, const KernelResult& r) {
    spdlog::info("[{}/{}] {}.{}.{} {} ws {} ({}): {:.2f} us, {}, eff {:.1f}%, {}", done, total, r.kernel, r.precision,
                 r.variant, kernel_size_text(r.kernel, r.size), format_quantity(r.working_set_bytes, Dimension::bytes),
                 r.memory_level, r.time_s.median * 1e6,
                 format_quantity(r.achieved_bytes_per_s, Dimension::bytes_per_second), 100 * r.efficiency, r.verdict);
    if (r.flagged) spdlog::warn("  flagged: {}", r.flag_reason);
  };
  sweep.on_skip = [](size_t done, size_t total, const std::string& why) { spdlog::warn("[{}/{}] {}", done, total, why); };
  const ValidationReport rep =
      kernels::run_validation_on_gpu(hw, hw_path.string(), variants, sweep, opt.device, process_command_line());

  const fs::path out = opt.out.empty() ? fs::path("results") / (hw.id + "-validation.json") : fs::path(opt.out);
  save_report(rep, out);
  spdlog::info("wrote {} ({:.1f} s)", out.string(), rep.wall_time_s);
  if (opt.json)
    std::cout << to_json(rep).dump(2) << "\n";
  else
    std::cout << format_table(rep);
  int beats = 0;
  for (const auto& r : rep.results) beats += r.verdict == "beats-bound";
  for (const auto& s : rep.speedups) beats += s.verdict == "beats-bound";
  if (beats) spdlog::warn("{} beats-bound verdict(s): each names the cause to investigate", beats);
  return 0;
#endif
}

Subcommand add_validate(CLI::App& root) {
  auto opt = std::make_shared<ValidateOptions>();
  auto list = std::make_shared<bool>(false);
  Subcommand s;
  s.app = root.add_subcommand("validate",
                              "Run the validation kernels (" + kernel_kinds_with_variants_text() +
                                  ") on CUDA cores and tensor cores over a size sweep and hold the measured times "
                                  "against the model's bounds (GPU)");
  s.app->add_option("--hw", opt->hw, "Hardware descriptor: a YAML file or a shipped id (e.g. h200)");
  s.app->add_option("--kernels", opt->kernels,
                    "Kernels to run, comma-separated (" + kernel_kinds_with_variants_text() +
                        "; default all). KIND:IMPL narrows to one implementation or unit: spmv:ours, spmv:cusparse, "
                        "spmv:tensor_core, scale:cuda_core (speedups need both units)")
      ->delimiter(',');
  s.app->add_option("--sizes", opt->sizes,
                    "Working-set sizes (\"64MiB\") or element counts (SCALE n, GEMV square n, intensity n at k = 8), "
                    "comma-separated; default: L2/32 .. 8 x L2, 4 per octave, L2 = the descriptor's L2 capacity "
                    "(intensity: k = 1, 2, 4 .. 1024 (fp16 .. 4096) at L2/4 and 4 x L2; --quick: k = 1, 4, 16, 32 .. 256)")
      ->delimiter(',');
  s.app->add_option("--matrix", opt->matrices,
                    "SpMV: Matrix Market files (coordinate real/integer/pattern, general/symmetric/skew-symmetric), "
                    "comma-separated")
      ->delimiter(',');
  s.app->add_option("--suite", opt->suite,
                    "SpMV: generated matrices shaped like GPGPU'25 Table 2 ('table2'; the default of --kernels spmv "
                    "without --matrix)");
  s.app->add_option("--name", opt->names, "SpMV: members of --suite to run (names or codes, e.g. cant,D15; default all 21)")
      ->delimiter(',');
  s.app->add_option("--scale", opt->scale, "SpMV: rows and nnz of the generated matrices times this (default 1: Table 2's)")
      ->check(CLI::Range(1e-6, 1.0));
  s.app->add_option("--matrix-seed", opt->matrix_seed, "SpMV: seed of the generated matrices (default 1)");
  s.app->add_option("--shapes", opt->shapes,
                    "Stencil: shapes, comma-separated: built-in names (" + builtin_stencil_shape_names() +
                        ") or YAML files (docs/FORMATS.md); default the six built-ins")
      ->delimiter(',');
  s.app->add_option("--domain", opt->domains,
                    "Stencil: domains NXxNY (2-D shapes) or NXxNYxNZ (3-D), comma-separated; default Table 3's "
                    "(10240x10240, 9000x9000; 1024x1024x1024, 512x512x512, 234x312x2560) plus one that fits the L2")
      ->delimiter(',');
  s.app->add_option("--steps", opt->steps, "Stencil: time steps t fused per launch, 1..16 (default Table 3's per shape)")
      ->each([opt](const std::string&) { opt->steps_given = true; });
  s.app->add_option("--out", opt->out, "Results JSON (default results/<hw id>-validation.json)");
  s.app->add_flag("--quick", opt->quick, "One size per octave instead of four");
  s.app->add_option("--device", opt->device, "CUDA device ordinal")->check(CLI::NonNegativeNumber);
  s.app->add_flag("--list", *list, "List the kernel variants and the SASS each must compile to, then exit (no GPU)");
  s.app->add_flag("--json", opt->json, "Print the results JSON (or the --list) on stdout instead of the table");
  s.app->footer(
      "Examples:\n"
      "  ceiling validate --hw h200\n"
      "  ceiling validate --hw hardware/h200.yaml --kernels scale --sizes 8MiB,1GiB --out /tmp/r.json\n"
      "  ceiling validate --hw h200 --kernels spmv                      # the 21 Table 2 matrices, 3 variants\n"
      "  ceiling validate --hw h200 --kernels spmv --suite table2 --name cant,webbase-1M --scale 0.1\n"
      "  ceiling validate --hw h200 --kernels spmv --matrix my.mtx\n"
      "  ceiling validate --hw h200 --kernels stencil                   # 6 shapes x 3 variants, Table 3's domains\n"
      "  ceiling validate --hw h200 --kernels stencil --shapes 2d5pt,my.yaml --domain 4096x4096 --steps 3\n"
      "  ceiling validate --list --json");
  s.run = [opt, list] {
    if (*list) return print_variants(opt->json);
    if (opt->hw.empty()) throw std::runtime_error("validate: --hw is required (a descriptor file or a shipped id)");
    return run_validate(*opt);
  };
  return s;
}

}  // namespace ceiling::cli
