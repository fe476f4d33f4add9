// ceiling calibrate: run the probes on a GPU and merge their measurements into a descriptor
// (spec values kept, measured values replaced), saved atomically after every probe.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common.hpp"
#include "model/descriptor.hpp"
#include "model/units.hpp"

#ifdef CEILING_HAVE_CUDA
#include "gpu/gpu.hpp"
#include "probes/registry.hpp"
#endif

namespace ceiling::cli {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

[[maybe_unused]] fs::path probes_json_path(const fs::path& out) {
  return out.parent_path() / (out.stem().string() + ".probes.json");
}

// Same atomic scheme as save_descriptor: temporary file in the same directory, then rename.
[[maybe_unused]] void write_atomically(const fs::path& file, const std::string& text) {
  const fs::path tmp = file.parent_path() / ("." + file.filename().string() + ".tmp");
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error("cannot write " + tmp.string());
    f << text;
    f.flush();
    if (!f) throw std::runtime_error("write failed: " + tmp.string());
  }
  fs::rename(tmp, file);
}

[[maybe_unused]] json load_probes_json(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return json::object();
  std::ifstream f(file);
  try {
    return json::parse(f);
  } catch (const std::exception& e) {
    spdlog::warn("{}: not valid JSON ({}); starting a new probe-details file", file.string(), e.what());
    return json::object();
  }
}

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

// Descriptor to merge into: the output file itself (resume), else --base, else the shipped
// descriptor of this device's name, else a new one.
HardwareDescriptor starting_descriptor(const CalibrateOptions& opt, const fs::path& out, const gpu::DeviceInfo& dev,
                                       std::string& origin) {
  std::error_code ec;
  if (fs::is_regular_file(out, ec)) {
    origin = out.string() + " (resumed)";
    return load_descriptor(out);
  }
  if (!opt.base.empty()) {
    const fs::path base = resolve_hardware(opt.base);
    origin = base.string();
    return load_descriptor(base);
  }
  for (const auto& p : shipped_descriptors()) {
    try {
      auto d = load_descriptor(p);
      if (d.identity.name == dev.name) {
        origin = p.string();
        return d;
      }
    } catch (const std::exception& e) {
      spdlog::debug("skipping {}: {}", p.string(), e.what());
    }
  }
  origin = "new descriptor";
  HardwareDescriptor d;
  d.id = id_from_name(dev.name);
  d.identity.name = dev.name;
  return d;
}

std::string version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

std::string describe(const std::string& path, const MeasuredValue& m, const HardwareDescriptor& d) {
  const Field* f = d.find_field(path);
  const Dimension dim = f ? f->dimension : Dimension::dimensionless;
  char cv[32];
  std::snprintf(cv, sizeof cv, "%.2f%%", 100 * m.cv);
  return format_quantity(m.median, dim) + "  (cv " + cv + ", n=" + std::to_string(m.repeats) +
         (m.flagged ? ", FLAGGED" : "") + ")";
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
  // Which probes: --probes names (checked), else all (or the --quick subset).
  std::vector<const probes::ProbeInfo*> chosen;
  if (!opt.probes.empty()) {
    for (const auto& name : opt.probes) {
      const auto* p = probes::registry().find(name);
      if (!p) {
        std::vector<std::string> known;
        for (const auto& q : probes::registry().all()) known.push_back(q.name);
        throw std::runtime_error("calibrate: unknown probe '" + name + "' (known: " + join(known) + ")");
      }
      chosen.push_back(p);
    }
  } else {
    for (const auto& p : probes::registry().all())
      if (!opt.quick || p.in_quick) chosen.push_back(&p);
  }

  // A typo in --probes is reported even where no GPU is present.
  if (gpu::device_count() == 0) {
    spdlog::error("calibrate: {}; nothing measured", gpu::no_gpu_reason());
    return 2;
  }
  if (opt.device < 0 || opt.device >= gpu::device_count())
    throw std::runtime_error("calibrate: --device " + std::to_string(opt.device) + " out of range (" +
                             std::to_string(gpu::device_count()) + " device(s))");
  CUDA_CHECK(cudaSetDevice(opt.device));
  const gpu::DeviceInfo dev = gpu::query_device(opt.device);
  const int cc = dev.cc_major * 10 + dev.cc_minor;

  fs::path out = opt.out.empty() ? fs::path(id_from_name(dev.name) + ".yaml") : fs::path(opt.out);
  std::string origin;
  HardwareDescriptor d = starting_descriptor(opt, out, dev, origin);
  if (opt.out.empty() && !d.id.empty()) {
    out = fs::path(d.id + ".yaml");
    std::error_code ec;
    if (fs::is_regular_file(out, ec)) d = starting_descriptor(opt, out, dev, origin);
  }
  if (d.id.empty()) d.id = out.stem().string();
  d.tool_version = CEILING_VERSION;
  d.identity.uuid = dev.uuid;
  d.identity.sm_count = dev.sm_count;
  d.identity.compute_capability = dev.compute_capability();
  d.identity.driver = dev.driver_text();
  d.identity.cuda_version = version_string(dev.runtime_version);
  if (!out.parent_path().empty()) fs::create_directories(out.parent_path());
  const fs::path pj_path = probes_json_path(out);
  json pj = load_probes_json(pj_path);
  pj["schema"] = "ceiling/probes/1";
  pj["device"] = {{"name", dev.name}, {"uuid", dev.uuid}};
  if (!pj.contains("probes") || !pj["probes"].is_object()) pj["probes"] = json::object();

  spdlog::info("calibrate: {} (cc {}, {} SMs, L2 {} ), starting from {}; writing {}", dev.name, dev.compute_capability(),
               dev.sm_count, format_quantity(static_cast<double>(dev.l2_bytes), Dimension::bytes), origin, out.string());

  probes::ProbeContext ctx;
  ctx.device = opt.device;
  ctx.quick = opt.quick;
  ctx.sm_count = dev.sm_count;
  ctx.cc_major = dev.cc_major;
  ctx.cc_minor = dev.cc_minor;
  ctx.l2_bytes = dev.l2_bytes;

  json summary = json::array();
  int ran = 0;
  const auto t_all = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const auto& p = *chosen[i];
    const std::string tag = "[" + std::to_string(i + 1) + "/" + std::to_string(chosen.size()) + "] " + p.name;
    json entry = {{"date", gpu::utc_now_iso8601()}, {"skipped", nullptr}, {"details", json::object()}};
    json sum = {{"name", p.name}, {"status", "ok"}, {"seconds", 0.0}, {"fields", json::array()}};
    const auto t0 = std::chrono::steady_clock::now();
    auto last_print = t0;
    ctx.progress = [&](double f, const std::string& what) {
      const auto now = std::chrono::steady_clock::now();
      if (now - last_print < std::chrono::milliseconds(500) && f < 1.0) return;
      last_print = now;
      std::fprintf(stderr, "%s: %3.0f%% %s\n", tag.c_str(), 100 * f, what.c_str());
    };
    std::optional<std::string> skipped;
    if (cc < p.min_cc) {
      skipped = "needs compute capability " + std::to_string(p.min_cc / 10) + "." + std::to_string(p.min_cc % 10) +
                ", device has " + dev.compute_capability();
    } else {
      std::fprintf(stderr, "%s: running\n", tag.c_str());
      try {
        probes::ProbeOutput po = p.run(ctx);
        if (po.skipped) {
          skipped = po.skipped;
        } else {
          for (const auto& fm : po.fields) {
            // Extras are bytes by default; a named latency or bandwidth extra says otherwise.
            if (fm.path.find(".extra.") != std::string::npos) {
              Field& f = d.field(fm.path);
              if (fm.path.ends_with("_latency")) f.dimension = Dimension::cycles;
              if (fm.path.ends_with("_bandwidth")) f.dimension = Dimension::bytes_per_second;
            }
            d.set_measured(fm.path, fm.value);
            sum["fields"].push_back({{"path", fm.path}, {"median", fm.value.median}, {"cv", fm.value.cv},
                                     {"flagged", fm.value.flagged}});
          }
          for (const auto& ti : po.instructions) d.upsert_instruction(ti);
          entry["details"] = po.details;
          ++ran;
        }
      } catch (const std::exception& e) {
        skipped = std::string("failed: ") + e.what();
        spdlog::error("{}: {}", tag, e.what());
        cudaGetLastError();  // clear a non-sticky error so the next probe can try
      }
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    sum["seconds"] = secs;
    if (skipped) {
      entry["skipped"] = *skipped;
      sum["status"] = "skipped";
      sum["reason"] = *skipped;
      spdlog::warn("{}: skipped: {}", tag, *skipped);
      // Keep the details of an earlier successful run of this probe, if any.
      if (pj["probes"].contains(p.name) && pj["probes"][p.name].value("skipped", json(nullptr)).is_null())
        entry["details"] = pj["probes"][p.name]["details"];
    } else {
      std::fprintf(stderr, "%s: done in %.1f s\n", tag.c_str(), secs);
    }
    pj["probes"][p.name] = entry;
    // Saved after every probe: an interrupted run keeps what it measured and can resume.
    save_descriptor(d, out);
    write_atomically(pj_path, pj.dump(1) + "\n");
    summary.push_back(sum);
  }
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_all).count();

  if (opt.json) {
    std::cout << json{{"descriptor", out.string()},
                      {"probes_json", pj_path.string()},
                      {"device", {{"name", dev.name}, {"uuid", dev.uuid}, {"compute_capability", dev.compute_capability()}}},
                      {"seconds", total},
                      {"probes", summary}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << "calibrated " << dev.name << " in " << std::lround(total * 10) / 10.0 << " s -> " << out.string()
              << " (+ " << pj_path.filename().string() << ")\n";
    for (const auto& s : summary) {
      std::cout << "  " << s["name"].get<std::string>() << ": " << s["status"].get<std::string>();
      if (s.contains("reason")) std::cout << " (" << s["reason"].get<std::string>() << ")";
      std::cout << "\n";
      for (const auto& f : s["fields"]) {
        const std::string path = f["path"];
        const Field* fld = d.find_field(path);
        if (fld && fld->measured) std::cout << "    " << path << " = " << describe(path, *fld->measured, d) << "\n";
      }
    }
  }
  if (ran == 0) {
    spdlog::error("calibrate: no probe could run on {}", dev.name);
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
