// ceiling validate: run SCALE and GEMV on CUDA cores and tensor cores over a size sweep and hold
// the measured times against the model's bounds (issue #5). Table on stdout, logs on stderr,
// results JSON (docs/FORMATS.md) to --out.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "common.hpp"
#include "model/descriptor.hpp"
#include "model/units.hpp"
#include "model/validation.hpp"

#ifdef CEILING_HAVE_CUDA
#include "gpu/gpu.hpp"
#include "kernels/registry.hpp"
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

struct SizeSpec {
  bool is_bytes = true;  // working-set bytes ("64MiB") or an element count ("1048576", "1e6")
  double value = 0;
  std::string text;
};

[[maybe_unused]] SizeSpec parse_size(const std::string& text) {
  SizeSpec s;
  s.text = text;
  try {
    s.value = parse_as(text, Dimension::bytes, "--sizes");
    return s;
  } catch (const std::exception&) {
  }
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !(v >= 1))
    throw std::invalid_argument("--sizes: '" + text + "' is neither a working-set size (\"64MiB\") nor a count (\"1048576\")");
  s.is_bytes = false;
  s.value = v;
  return s;
}

}  // namespace

int run_validate(const ValidateOptions& opt) {
#ifndef CEILING_HAVE_CUDA
  (void)opt;
  spdlog::error("this build has no CUDA support: 'ceiling validate' needs a GPU build");
  return 2;
#else
  using namespace ceiling::validation;
  const auto t0 = std::chrono::steady_clock::now();
  const fs::path hw_path = resolve_hardware(opt.hw);
  const HardwareDescriptor hw = load_descriptor(hw_path);
  if (gpu::device_count() == 0) throw std::runtime_error("validate needs a GPU: " + gpu::no_gpu_reason());
  CUDA_CHECK(cudaSetDevice(opt.device));
  const gpu::DeviceInfo info = gpu::query_device(opt.device);
  const double l2 = static_cast<double>(info.l2_bytes);
  if (!hw.identity.name.empty() && hw.identity.name != info.name)
    spdlog::warn("descriptor '{}' describes '{}' but device {} is '{}': bounds come from the descriptor",
                 hw.id, hw.identity.name, opt.device, info.name);

  std::vector<SizeSpec> sizes;
  if (opt.sizes.empty()) {
    for (double b : default_sweep_bytes(l2, opt.quick)) sizes.push_back({true, b, ""});
  } else {
    for (const auto& t : opt.sizes) sizes.push_back(parse_size(t));
  }
  const auto variants = kernels::select_variants(opt.kernels);

  ValidationReport rep;
  rep.tool_version = CEILING_VERSION;
  rep.date = gpu::utc_now_iso8601();
  rep.command_line = process_command_line();
  rep.device.name = info.name;
  rep.device.uuid = info.uuid;
  rep.device.sm_count = info.sm_count;
  rep.device.compute_capability = info.compute_capability();
  rep.device.driver = info.driver_text();
  rep.device.cuda_version = std::to_string(info.runtime_version / 1000) + "." + std::to_string(info.runtime_version % 1000 / 10);
  rep.device.l2_bytes = l2;
  rep.descriptor_id = hw.id;
  rep.descriptor_path = hw_path.string();
  rep.sm_clock_hz = gpu::measure_sm_clock_hz(opt.device);
  spdlog::info("validate on {} ({} SMs, L2 {}, SM clock {:.0f} MHz) against descriptor '{}' ({})", info.name,
               info.sm_count, format_quantity(l2, Dimension::bytes), rep.sm_clock_hz / 1e6, hw.id, hw_path.string());

  size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  std::uint64_t seed = 0x243F6A8885A308D3ull ^ static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  const size_t total = variants.size() * sizes.size();
  size_t done = 0;
  for (const auto* v : variants) {
    std::vector<std::pair<long long, long long>> seen;  // small sweeps round to one tile shape
    for (const auto& spec : sizes) {
      ++done;
      const kernels::ProblemSize ps = spec.is_bytes ? v->size_for_bytes(spec.value)
                                                    : v->size_for_count(static_cast<long long>(spec.value));
      if (std::find(seen.begin(), seen.end(), std::make_pair(ps.m, ps.n)) != seen.end()) continue;
      seen.emplace_back(ps.m, ps.n);
      const KernelModel k = v->model(ps);
      if (k.working_set_bytes + 2.5 * l2 > 0.9 * static_cast<double>(free_bytes)) {
        spdlog::warn("[{}/{}] {} skipped: working set {} does not fit the free device memory", done, total, v->name(),
                     format_quantity(k.working_set_bytes, Dimension::bytes));
        continue;
      }
      kernels::MeasureOptions mo;
      mo.flush_l2 = memory_level_for(k.working_set_bytes, l2) == "dram";
      mo.seed = seed++;
      const kernels::Measurement m = kernels::measure(*v, ps, mo);
      TimeStats ts{m.timing.summary.median, m.timing.summary.min, m.timing.summary.max, m.timing.summary.cv,
                   m.timing.summary.count, m.launches};
      std::map<std::string, double> size;
      for (const auto& [key, val] : kernels::size_fields(*v, ps)) size[key] = val;
      KernelResult r = evaluate(hw, k, v->unit, size, ts, l2, mo.flush_l2);
      r.sm_clock_hz = m.timing.sm_clock_hz;
      r.flagged = m.timing.flagged;
      r.flag_reason = m.timing.flag_reason;
      r.verify_error = m.check.error;
      r.description = v->description + (mo.flush_l2 ? "; cold: L2 evicted and clean before each repeat"
                                                    : "; warm: " + std::to_string(m.launches) +
                                                          " back-to-back launches per timed region");
      spdlog::info("[{}/{}] {} ws {} ({}): {:.2f} us, {}, eff {:.1f}%, {}", done, total, v->name(),
                   format_quantity(k.working_set_bytes, Dimension::bytes), r.memory_level, ts.median * 1e6,
                   format_quantity(r.achieved_bytes_per_s, Dimension::bytes_per_second), 100 * r.efficiency, r.verdict);
      if (r.flagged) spdlog::warn("  flagged: {}", r.flag_reason);
      rep.results.push_back(std::move(r));
    }
  }
  summarize(rep);
  rep.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

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
  Subcommand s;
  s.app = root.add_subcommand("validate",
                              "Run SCALE and GEMV on CUDA cores and tensor cores over a size sweep and hold the "
                              "measured times against the model's bounds (GPU)");
  s.app->add_option("--hw", opt->hw, "Hardware descriptor: a YAML file or a shipped id (e.g. h200)")->required();
  s.app->add_option("--kernels", opt->kernels, "Kernels to run, comma-separated (scale,gemv; default all)")
      ->delimiter(',');
  s.app->add_option("--sizes", opt->sizes,
                    "Working-set sizes (\"64MiB\") or element counts (SCALE n, GEMV square n), comma-separated; "
                    "default: L2/32 .. 8 x L2, 4 per octave")
      ->delimiter(',');
  s.app->add_option("--out", opt->out, "Results JSON (default results/<hw id>-validation.json)");
  s.app->add_flag("--quick", opt->quick, "One size per octave instead of four");
  s.app->add_option("--device", opt->device, "CUDA device ordinal")->check(CLI::NonNegativeNumber);
  s.app->add_flag("--json", opt->json, "Print the results JSON on stdout instead of the table");
  s.app->footer(
      "Examples:\n"
      "  ceiling validate --hw h200\n"
      "  ceiling validate --hw hardware/h200.yaml --kernels scale --sizes 8MiB,1GiB --out /tmp/r.json");
  s.run = [opt] { return run_validate(*opt); };
  return s;
}

}  // namespace ceiling::cli
