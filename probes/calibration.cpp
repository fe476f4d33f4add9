#include "calibration.hpp"

#include "../model/memory_roof.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "../gpu/gpu.hpp"
#include "../gpu/power.hpp"
#include "../model/files.hpp"
#include "../model/json_file.hpp"

namespace ceiling::probes {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::string cc_text(int cc) { return std::to_string(cc / 10) + "." + std::to_string(cc % 10); }

std::string version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

// The probe details to merge into; a file that is not valid probe details is kept aside under a
// new name with a warning (model/json_file.hpp), never replaced.
json load_probes_json(const fs::path& file) {
  ProbeDetailsForUpdate u = read_probe_details_for_update(file);
  if (!u.set_aside.empty())
    spdlog::warn("{}; kept it as {} and starting a new probe-details file", u.problem, u.set_aside.string());
  return std::move(u.content);
}

// Descriptor to merge into: the output file itself (resume), else the base, else the candidate
// of this device's name, else a new one.
HardwareDescriptor starting_descriptor(const CalibrationOptions& opt, const fs::path& out,
                                       const gpu::DeviceInfo& dev, std::string& origin) {
  std::error_code ec;
  if (fs::is_regular_file(out, ec)) {
    origin = out.string() + " (resumed)";
    return load_descriptor(out);
  }
  if (!opt.base.empty()) {
    const fs::path base = opt.resolve_base ? opt.resolve_base(opt.base) : fs::path(opt.base);
    origin = base.string();
    return load_descriptor(base);
  }
  for (const auto& p : opt.candidates) {
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
  d.id = opt.id_from_name(dev.name);
  d.identity.name = dev.name;
  return d;
}

// Stores one measurement. The probe's dimension must be the field's; an extra takes the
// probe's (a spec value of another dimension in the file is a conflict, not a conversion).
void merge(HardwareDescriptor& d, const FieldMeasurement& fm) {
  Field& f = d.field(fm.path);
  if (fm.path.find(".extra.") != std::string::npos && !f.spec) {
    f.dimension = fm.dimension;
  } else if (f.dimension != fm.dimension) {
    throw std::logic_error(fm.path + " is " + std::string(to_string(f.dimension)) + " but the probe measured " +
                           std::string(to_string(fm.dimension)));
  }
  d.set_measured(fm.path, fm.value);
}

}  // namespace

std::string_view to_string(ProbeStatus s) {
  switch (s) {
    case ProbeStatus::ok: return "ok";
    case ProbeStatus::skipped: return "skipped";
    case ProbeStatus::reused: return "reused";
  }
  return "unknown";
}



int CalibrationResult::ran() const {
  int n = 0;
  for (const auto& p : probes) n += p.status == ProbeStatus::ok;
  return n;
}

std::vector<const ProbeInfo*> choose_probes(const std::vector<std::string>& names, bool quick) {
  std::vector<const ProbeInfo*> chosen;
  if (!names.empty()) {
    for (const auto& name : names) {
      const auto* p = registry().find(name);
      if (!p) {
        std::vector<std::string> known;
        for (const auto& q : registry().all()) known.push_back(q.name);
        throw std::runtime_error("calibrate: unknown probe '" + name + "' (known: " + join(known) + ")");
      }
      chosen.push_back(p);
    }
    // The order given is kept (it is how an experiment asks for one), but a probe that runs sparse
    // tensor instructions lowers the clock of the tensor-core throughput runs after it in this
    // process (wgmma's; not the numerics probes', whose results do not depend on the clock).
    const auto times_tensor_cores = [](const ProbeInfo* p) {
      return !p->runs_sparse_tensor && !p->per_architecture &&
             std::find(p->fills.begin(), p->fills.end(), "tensor_instructions") != p->fills.end();
    };
    for (std::size_t i = 0; i < chosen.size(); ++i) {
      if (!chosen[i]->runs_sparse_tensor) continue;
      for (std::size_t j = i + 1; j < chosen.size(); ++j)
        if (times_tensor_cores(chosen[j])) {
          spdlog::warn("calibrate: {} runs before {}: it runs sparse tensor instructions, after which tensor-core "
                       "runs in the same process get a lower SM clock (H200: -1 to -3%); the default order runs "
                       "it last",
                       chosen[i]->name, chosen[j]->name);
          break;
        }
    }
  } else {
    for (const auto& p : registry().all())
      if (!quick || p.in_quick) chosen.push_back(&p);
    // Registration order, except that probes running sparse tensor instructions go last (see
    // ProbeInfo::runs_sparse_tensor).
    std::stable_partition(chosen.begin(), chosen.end(), [](const ProbeInfo* p) { return !p->runs_sparse_tensor; });
  }
  return chosen;
}

namespace {
// The probe run again in opt.ramp_processes - 1 new processes (least_over_processes): their ramp
// tables merged into d (the least time at each size), the summary's fields refreshed from d.
json again_in_processes(const CalibrationOptions& opt, const std::string& probe, HardwareDescriptor& d,
                        ProbeRunSummary& sum, const std::function<void(double, const std::string&)>& progress) {
  std::vector<HardwareDescriptor> others;
  json failed = json::array();
  for (int run = 2; run <= opt.ramp_processes; ++run) {
    if (progress) progress(1.0, "again in process " + std::to_string(run) + " of " + std::to_string(opt.ramp_processes));
    try {
      others.push_back(opt.run_probe_in_child(probe, run));
    } catch (const std::exception& e) {
      spdlog::warn("{}: run {} of {} in a new process failed: {}", probe, run, opt.ramp_processes, e.what());
      failed.push_back({{"run", run}, {"reason", e.what()}});
    }
  }
  const int changed = merge_ramp_runs(d, others);
  for (auto& fm : sum.fields)
    if (const Field* f = d.find_field(fm.path); f && f->measured) fm.value = *f->measured;
  spdlog::info("{}: least times over {} processes ({} failed); {} tables took a point from another process", probe,
               1 + others.size(), failed.size(), changed);
  return {{"asked", opt.ramp_processes}, {"merged", 1 + others.size()}, {"failed", failed}, {"tables_changed", changed}};
}

}  // namespace

CalibrationResult run_calibration(const CalibrationOptions& opt, const CalibrationProgress& progress) {
  // A typo in the probe names is reported even where no GPU is present.
  const std::vector<const ProbeInfo*> chosen = choose_probes(opt.probes, opt.quick);
  if (gpu::device_count() == 0) throw NoGpuError("calibrate: " + gpu::no_gpu_reason() + "; nothing measured");
  if (opt.device < 0 || opt.device >= gpu::device_count())
    throw std::runtime_error("calibrate: --device " + std::to_string(opt.device) + " out of range (" +
                             std::to_string(gpu::device_count()) + " device(s))");
  if (opt.out.empty() && !opt.id_from_name)
    throw std::invalid_argument("run_calibration: options.id_from_name is required when options.out is empty");
  CUDA_CHECK(cudaSetDevice(opt.device));
  const gpu::DeviceInfo dev = gpu::query_device(opt.device);
  const int cc = dev.cc_major * 10 + dev.cc_minor;

  CalibrationResult res;
  res.device_name = dev.name;
  res.device_uuid = dev.uuid;
  res.compute_capability = dev.compute_capability();
  fs::path out = opt.out.empty() ? fs::path(opt.id_from_name(dev.name) + ".yaml") : opt.out;
  HardwareDescriptor& d = res.descriptor;
  d = starting_descriptor(opt, out, dev, res.origin);
  if (opt.out.empty() && !d.id.empty()) {
    out = fs::path(d.id + ".yaml");
    std::error_code ec;
    if (fs::is_regular_file(out, ec)) d = starting_descriptor(opt, out, dev, res.origin);
  }
  const std::string start_cc = d.identity.compute_capability;  // before it becomes the device's
  if (d.id.empty()) d.id = out.stem().string();
  d.tool_version = CEILING_VERSION;
  d.identity.uuid = dev.uuid;
  d.identity.sm_count = dev.sm_count;
  d.identity.compute_capability = dev.compute_capability();
  d.identity.driver = dev.driver_text();
  d.identity.cuda_version = version_string(dev.runtime_version);
  if (!out.parent_path().empty()) fs::create_directories(out.parent_path());
  res.descriptor_path = out;
  res.probes_path = probes_path_for(out);
  json pj = load_probes_json(res.probes_path);
  pj["schema"] = kProbesSchema;
  pj["device"] = {{"name", dev.name}, {"uuid", dev.uuid}};
  if (!pj.contains("probes") || !pj["probes"].is_object()) pj["probes"] = json::object();

  spdlog::info("calibrate: {} (cc {}, {} SMs, L2 {} ), starting from {}; writing {}", dev.name, dev.compute_capability(),
               dev.sm_count, format_quantity(static_cast<double>(dev.l2_bytes), Dimension::bytes), res.origin,
               out.string());

  ProbeContext ctx;
  ctx.device = opt.device;
  ctx.quick = opt.quick;
  if (opt.tc_rest_ms < 0 || opt.tc_rest_ms > 60000)
    throw std::invalid_argument("calibrate: --tc-rest-ms " + std::to_string(opt.tc_rest_ms) + " out of range (0..60000)");
  ctx.tc_rest_ms = opt.tc_rest_ms;
  ctx.sm_count = dev.sm_count;
  ctx.cc_major = dev.cc_major;
  ctx.cc_minor = dev.cc_minor;
  ctx.l2_bytes = dev.l2_bytes;

  std::unique_ptr<gpu::PowerMeter> meter;
  if (opt.power) {
    meter = std::make_unique<gpu::PowerMeter>(dev.uuid);
    if (meter->available()) {
      const gpu::PowerReading idle = meter->idle(0.5);
      pj["power_idle"] = {{"ok", idle.ok}, {"watts", idle.watts}, {"note", idle.note()}};
      spdlog::info("calibrate --power: idle {}", idle.note());
      ctx.power = meter.get();
    } else {
      spdlog::warn("calibrate --power: not available: {}", meter->why_not());
      pj["power_idle"] = {{"ok", false}, {"note", "not available: " + meter->why_not()}};
    }
  }
  auto emit = [&](CalibrationEvent e) {
    if (progress) progress(e);
  };
  const auto t_all = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const ProbeInfo& p = *chosen[i];
    const std::string tag = "[" + std::to_string(i + 1) + "/" + std::to_string(chosen.size()) + "] " + p.name;
    CalibrationEvent base_event;
    base_event.index = i + 1;
    base_event.count = chosen.size();
    base_event.probe = p.name;
    json entry = {{"date", gpu::utc_now_iso8601()}, {"skipped", nullptr}, {"details", json::object()}};
    ProbeRunSummary sum;
    sum.name = p.name;
    const auto t0 = std::chrono::steady_clock::now();
    gpu::reset_timing_stats();
    ctx.progress = [&](double f, const std::string& what) {
      CalibrationEvent e = base_event;
      e.kind = CalibrationEvent::Kind::progress;
      e.fraction = f;
      e.label = what;
      emit(e);
    };
    std::optional<std::string> skipped;
    std::optional<ArchitectureReuse> reuse;
    if (p.per_architecture && opt.probes.empty() && !opt.remeasure_architecture && cc >= p.min_cc)
      reuse = architecture_reuse(p.name, dev.compute_capability(), d, start_cc, res.origin, opt.candidates);
    if (reuse) {
      for (auto ti : reuse->instructions) {
        ti.numerics->note += std::string(ti.numerics->note.empty() ? "" : "; ") + "reused by calibrate from " +
                             reuse->source + " (same compute capability " + dev.compute_capability() + ")";
        d.upsert_numerics(ti);
      }
      sum.status = ProbeStatus::reused;
      sum.reason = "an architecture property: " + std::to_string(reuse->instructions.size()) + " entries from " +
                   reuse->source + " (compute capability " + dev.compute_capability() + ", measured " +
                   reuse->measured + "); --probes " + p.name + " or --remeasure-architecture measures it here";
      spdlog::info("{}: reused: {}", tag, sum.reason);
      entry["reused_from"] = reuse->source;
      entry["details"] = reuse->details.is_null() ? json::object() : reuse->details;
      sum.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      CalibrationEvent e = base_event;
      e.kind = CalibrationEvent::Kind::done;
      e.seconds = sum.seconds;
      emit(e);
      pj["probes"][p.name] = entry;
      save_descriptor(d, out);
      write_file_atomically(res.probes_path, pj.dump(1) + "\n");
      res.probes.push_back(std::move(sum));
      continue;
    }
    if (cc < p.min_cc) {
      skipped = "needs compute capability " + cc_text(p.min_cc) + ", device has " + dev.compute_capability();
    } else {
      emit(base_event);
      try {
        ProbeOutput po = p.run(ctx);
        if (po.skipped) {
          skipped = po.skipped;
        } else {
          for (const auto& fm : po.fields) merge(d, fm);
          for (const auto& ti : po.instructions) {
            // A numeric probe's entry carries only numerics: it must not wipe the timings.
            const bool numerics_only = ti.numerics && !ti.latency.present() && !ti.throughput.present();
            if (numerics_only) d.upsert_numerics(ti);
            else d.upsert_instruction(ti);
          }
          for (const auto& f : po.dpx) d.upsert_dpx(f);
          if (po.async_copy) d.upsert_async_copy(*po.async_copy);
          if (po.dsm) d.upsert_dsm(*po.dsm);
          for (const auto& r : po.ramps) d.memory[r.level].ramp[r.pattern] = r.table;
          sum.fields = po.fields;
          entry["details"] = po.details;
          if (p.least_over_processes && opt.ramp_processes > 1 && opt.run_probe_in_child)
            entry["details"]["processes"] = again_in_processes(opt, p.name, d, sum, ctx.progress);
          // A run without --power keeps the descriptor's power fields (merge) and, here, the
          // readings behind them: the previous run's details["power"], with its date.
          if (!ctx.power && entry["details"].is_object() && !entry["details"].contains("power")) {
            const auto prev = pj["probes"].find(p.name);
            if (prev != pj["probes"].end() && prev->is_object() && prev->contains("details") &&
                (*prev)["details"].is_object() && (*prev)["details"].contains("power")) {
              entry["details"]["power"] = (*prev)["details"]["power"];
              entry["details"]["power_measured"] =
                  (*prev)["details"].value("power_measured", prev->value("date", std::string()));
            }
          }
        }
      } catch (const std::exception& e) {
        skipped = std::string("failed: ") + e.what();
        spdlog::error("{}: {}", tag, e.what());
        cudaGetLastError();  // clear a non-sticky error so the next probe can try
      }
    }
    ctx.progress = nullptr;
    sum.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    {
      const gpu::TimingStats ts = gpu::timing_stats();
      spdlog::debug("{}: {:.2f} s; time_kernel: {} calls, {} launches, {:.2f} s timed, {:.2f} s inside", tag,
                    sum.seconds, ts.calls, ts.launches, ts.timed_seconds, ts.wall_seconds);
    }
    if (skipped) {
      entry["skipped"] = *skipped;
      sum.status = ProbeStatus::skipped;
      sum.reason = *skipped;
      sum.fields.clear();
      spdlog::warn("{}: skipped: {}", tag, *skipped);
      // Keep the details of an earlier successful run of this probe, if any.
      const auto prev = pj["probes"].find(p.name);
      if (prev != pj["probes"].end() && prev->is_object() && prev->value("skipped", json(nullptr)).is_null() &&
          prev->contains("details"))
        entry["details"] = (*prev)["details"];
    } else {
      CalibrationEvent e = base_event;
      e.kind = CalibrationEvent::Kind::done;
      e.seconds = sum.seconds;
      emit(e);
    }
    pj["probes"][p.name] = entry;
    // Saved after every probe: an interrupted run keeps what it measured and can resume.
    save_descriptor(d, out);
    write_file_atomically(res.probes_path, pj.dump(1) + "\n");
    res.probes.push_back(std::move(sum));
  }
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_all).count();
  return res;
}

}  // namespace ceiling::probes
