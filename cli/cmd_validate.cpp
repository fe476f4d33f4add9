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

}  // namespace

int run_validate(const ValidateOptions& opt) {
  using namespace ceiling::validation;
  const fs::path hw_path = resolve_hardware(opt.hw);
  const HardwareDescriptor hw = load_descriptor(hw_path);
  kernels::Sweep sweep;
  for (const auto& t : opt.sizes) sweep.sizes.push_back(kernels::parse_size_request(t));
  sweep.quick = opt.quick;
  sweep.l2_bytes = kernels::sweep_l2_bytes(hw);  // checked before any GPU work
#ifndef CEILING_HAVE_CUDA
  spdlog::error("this build has no CUDA support: 'ceiling validate' needs a GPU build");
  return 2;
#else
  const auto variants = kernels::select_variants(opt.kernels);
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
                    "Kernels to run, comma-separated (" + kernel_kinds_with_variants_text() + "; default all)")
      ->delimiter(',');
  s.app->add_option("--sizes", opt->sizes,
                    "Working-set sizes (\"64MiB\") or element counts (SCALE n, GEMV square n, intensity n at k = 8), "
                    "comma-separated; default: L2/32 .. 8 x L2, 4 per octave, L2 = the descriptor's L2 capacity "
                    "(intensity: k = 1, 2, 4 .. 256 at L2/4 and 4 x L2; --quick: k = 1, 4, 16, 32 .. 256)")
      ->delimiter(',');
  s.app->add_option("--out", opt->out, "Results JSON (default results/<hw id>-validation.json)");
  s.app->add_flag("--quick", opt->quick, "One size per octave instead of four");
  s.app->add_option("--device", opt->device, "CUDA device ordinal")->check(CLI::NonNegativeNumber);
  s.app->add_flag("--list", *list, "List the kernel variants and the SASS each must compile to, then exit (no GPU)");
  s.app->add_flag("--json", opt->json, "Print the results JSON (or the --list) on stdout instead of the table");
  s.app->footer(
      "Examples:\n"
      "  ceiling validate --hw h200\n"
      "  ceiling validate --hw hardware/h200.yaml --kernels scale --sizes 8MiB,1GiB --out /tmp/r.json\n"
      "  ceiling validate --list --json");
  s.run = [opt, list] {
    if (*list) return print_variants(opt->json);
    if (opt->hw.empty()) throw std::runtime_error("validate: --hw is required (a descriptor file or a shipped id)");
    return run_validate(*opt);
  };
  return s;
}

}  // namespace ceiling::cli
