// ceiling calibrate: parse the options, run the calibration session of the probes library
// (probes/calibration.hpp), print its summary and map its errors to exit codes.
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common.hpp"
#include "model/descriptor.hpp"
#include "model/units.hpp"

#ifdef CEILING_HAVE_CUDA
#include "probes/calibration.hpp"
#include "probes/registry.hpp"
#endif

namespace ceiling::cli {
using nlohmann::json;

namespace {

#ifdef CEILING_HAVE_CUDA
std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

int print_list(bool as_json) {
  const auto& all = probes::registry().all();
  if (as_json) {
    json arr = json::array();
    for (const auto& p : all) {
      json axes = json::object();
      for (const auto& [k, v] : p.axes) axes[k] = v;
      arr.push_back({{"name", p.name},
                     {"group", p.group},
                     {"description", p.description},
                     {"axes", axes},
                     {"fills", p.fills},
                     {"min_cc", std::to_string(p.min_cc / 10) + "." + std::to_string(p.min_cc % 10)},
                     {"in_quick", p.in_quick}});
    }
    std::cout << json{{"probes", arr}}.dump(2) << "\n";
    return 0;
  }
  for (const auto& p : all) {
    std::cout << p.name << "  [" << p.group << "]  min cc " << p.min_cc / 10 << "." << p.min_cc % 10
              << (p.in_quick ? "" : "  (not in --quick)") << "\n    " << p.description << "\n";
    for (const auto& [k, v] : p.axes) std::cout << "    axis " << k << ": " << join(v) << "\n";
    std::cout << "    fills: " << join(p.fills) << "\n";
  }
  if (all.empty()) std::cout << "(no probes registered)\n";
  return 0;
}

std::string describe(const std::string& path, const MeasuredValue& m, const HardwareDescriptor& d) {
  const Field* f = d.find_field(path);
  const Dimension dim = f ? f->dimension : Dimension::dimensionless;
  char cv[32];
  std::snprintf(cv, sizeof cv, "%.2f%%", 100 * m.cv);
  return format_quantity(m.median, dim) + "  (cv " + cv + ", n=" + std::to_string(m.repeats) +
         (m.flagged ? ", FLAGGED" : "") + ")";
}

// "[2/7] dram-bandwidth: running", progress at most every 0.5 s, "done in 1.2 s" (stderr).
probes::CalibrationProgress progress_printer() {
  auto last_print = std::make_shared<std::chrono::steady_clock::time_point>();
  return [last_print](const probes::CalibrationEvent& e) {
    using Kind = probes::CalibrationEvent::Kind;
    const std::string tag = "[" + std::to_string(e.index) + "/" + std::to_string(e.count) + "] " + e.probe;
    const auto now = std::chrono::steady_clock::now();
    switch (e.kind) {
      case Kind::running:
        *last_print = now;
        std::fprintf(stderr, "%s: running\n", tag.c_str());
        break;
      case Kind::progress:
        if (now - *last_print < std::chrono::milliseconds(500) && e.fraction < 1.0) return;
        *last_print = now;
        std::fprintf(stderr, "%s: %3.0f%% %s\n", tag.c_str(), 100 * e.fraction, e.label.c_str());
        break;
      case Kind::done:
        std::fprintf(stderr, "%s: done in %.1f s\n", tag.c_str(), e.seconds);
        break;
    }
  };
}

void print_summary(const probes::CalibrationResult& r, bool as_json) {
  if (as_json) {
    json summary = json::array();
    for (const auto& p : r.probes) {
      json sum = {{"name", p.name}, {"status", std::string(to_string(p.status))}, {"seconds", p.seconds},
                  {"fields", json::array()}};
      if (p.status == probes::ProbeStatus::skipped) sum["reason"] = p.reason;
      for (const auto& fm : p.fields)
        sum["fields"].push_back({{"path", fm.path}, {"median", fm.value.median}, {"cv", fm.value.cv},
                                 {"flagged", fm.value.flagged}});
      summary.push_back(sum);
    }
    std::cout << json{{"descriptor", r.descriptor_path.string()},
                      {"probes_json", r.probes_path.string()},
                      {"device", {{"name", r.device_name}, {"uuid", r.device_uuid},
                                  {"compute_capability", r.compute_capability}}},
                      {"seconds", r.seconds},
                      {"probes", summary}}
                     .dump(2)
              << "\n";
    return;
  }
  std::cout << "calibrated " << r.device_name << " in " << std::lround(r.seconds * 10) / 10.0 << " s -> "
            << r.descriptor_path.string() << " (+ " << r.probes_path.filename().string() << ")\n";
  for (const auto& p : r.probes) {
    std::cout << "  " << p.name << ": " << to_string(p.status);
    if (p.status == probes::ProbeStatus::skipped) std::cout << " (" << p.reason << ")";
    std::cout << "\n";
    for (const auto& fm : p.fields) {
      const Field* fld = r.descriptor.find_field(fm.path);
      if (fld && fld->measured)
        std::cout << "    " << fm.path << " = " << describe(fm.path, *fld->measured, r.descriptor) << "\n";
    }
  }
}
#endif

}  // namespace

int run_calibrate(const CalibrateOptions& opt) {
#ifndef CEILING_HAVE_CUDA
  (void)opt;
  spdlog::error("calibrate: this build has no CUDA support (no CUDA compiler was found at build time); "
                "nothing can be measured");
  return 2;
#else
  probes::CalibrationOptions o;
  o.device = opt.device;
  o.probes = opt.probes;
  o.quick = opt.quick;
  o.out = opt.out;
  o.base = opt.base;
  o.resolve_base = [](const std::string& name) { return resolve_hardware(name); };
  o.candidates = shipped_descriptors();
  o.id_from_name = [](const std::string& name) { return id_from_name(name); };
  probes::CalibrationResult r;
  try {
    r = probes::run_calibration(o, progress_printer());
  } catch (const probes::NoGpuError& e) {
    spdlog::error("{}", e.what());
    return 2;
  }
  print_summary(r, opt.json);
  if (r.ran() == 0) {
    spdlog::error("calibrate: no probe could run on {}", r.device_name);
    return 1;
  }
  return 0;
#endif
}

Subcommand add_calibrate(CLI::App& root) {
  auto opt = std::make_shared<CalibrateOptions>();
  auto list = std::make_shared<bool>(false);
  Subcommand s;
  s.app = root.add_subcommand("calibrate", "Measure this GPU with the probes and write a hardware descriptor");
  s.app->add_option("--device", opt->device, "CUDA device ordinal")->capture_default_str();
  s.app->add_option("--out", opt->out,
                    "Descriptor to write (merged into when it exists; resumes an interrupted run). "
                    "Default: <id>.yaml, id of the shipped descriptor of this GPU or from its name");
  s.app->add_option("--base", opt->base, "Descriptor (file or shipped id) whose spec values to start from");
  s.app->add_option("--probes", opt->probes, "Only these probes (comma-separated; see --list)")->delimiter(',');
  s.app->add_flag("--quick", opt->quick, "Smaller sweeps and fewer repeats");
  s.app->add_flag("--list", *list, "List the registered probes and exit (no GPU needed)");
  s.app->add_flag("--json", opt->json, "Machine-readable summary on stdout");
  s.app->footer(
      "Examples:\n"
      "  ceiling calibrate --quick                      # memory + compute probes, short\n"
      "  ceiling calibrate --probes dram-bandwidth,pchase-latency --out my-h200.yaml\n"
      "  ceiling calibrate --list");
  s.run = [opt, list] {
    if (*list) {
#ifdef CEILING_HAVE_CUDA
      return print_list(opt->json);
#else
      std::cout << (opt->json ? "{\"probes\": []}\n" : "(this build has no CUDA support: no probes)\n");
      return 0;
#endif
    }
    return run_calibrate(*opt);
  };
  return s;
}

}  // namespace ceiling::cli
