// ceiling report: descriptors (+ probe details) + validation results (+ profiles) -> HTML/Markdown/SVG/PNG/CSV.
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <memory>

#include "common.hpp"
#include "model/files.hpp"
#include "model/fleet.hpp"
#include "reports/report.hpp"

namespace ceiling::cli {
namespace fs = std::filesystem;

namespace {

// Where results ship beside the descriptors: <hardware dir>/../results.
fs::path shipped_results_dir() {
  if (hardware_dir().filename().empty()) return hardware_dir().parent_path().parent_path() / "results";
  return hardware_dir().parent_path() / "results";
}

// Validation results shipped beside the descriptors: <hardware dir>/../results/*-validation.json.
std::vector<fs::path> shipped_results() {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(shipped_results_dir(), ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() > 16 && name.ends_with("-validation.json")) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The one-run comparisons with the public suites shipped beside them (results/peers-<gpu>-<date>.json,
// scripts/compare-peers.sh): the newest file of each of `gpus` (reports::gpu_for_peers), read.
std::vector<reports::PeersInput> shipped_peers(const std::vector<reports::GpuInput>& gpus) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(shipped_results_dir(), ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("peers-", 0) == 0 && name.ends_with(".json") && e.is_regular_file(ec)) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());  // peers-<gpu>-<YYYY-MM-DD>: the newest last
  std::map<std::string, reports::PeersInput> newest;  // GPU id -> its newest file
  for (const auto& f : files) {
    try {
      reports::PeersInput p = reports::load_peers(f);
      p.gpu_id = reports::gpu_for_peers(p, gpus);
      if (!p.gpu_id.empty()) newest[p.gpu_id] = std::move(p);
    } catch (const std::exception& e) {
      spdlog::warn("report: shipped peers file not read: {}", e.what());
    }
  }
  std::vector<reports::PeersInput> out;
  for (auto& [id, p] : newest) out.push_back(std::move(p));
  return out;
}

std::string command_line(const ReportOptions& opt) {
  std::string c = "ceiling report";
  for (const auto& h : opt.hw) c += " --hw " + h;
  for (const auto& r : opt.results) c += " --results " + r;
  for (const auto& p : opt.profiles) c += " --profile " + p;
  for (const auto& p : opt.peers) c += " --peers " + p;
  return c + " --out " + opt.out;
}

}  // namespace

// --fleet DIR: every descriptor under DIR, per GPU model the distribution of each figure and the
// outliers; fleet.md, fleet.csv (one row per GPU, sortable) and fleet.json in --out.
int run_fleet(const ReportOptions& opt) {
  if (!opt.hw.empty() || !opt.results.empty() || !opt.profiles.empty() || !opt.peers.empty())
    throw std::runtime_error("report --fleet reads every descriptor under its directory; --hw, --results, --profile and "
                             "--peers belong to the GPU report");
  if (!(opt.fleet_z > 0) || !(opt.fleet_min_deviation >= 0))
    throw std::runtime_error("report --fleet: --fleet-z must be > 0 and --fleet-min-deviation >= 0");
  const auto t0 = std::chrono::steady_clock::now();
  FleetOptions fo;
  fo.z = opt.fleet_z;
  fo.min_deviation = opt.fleet_min_deviation;
  fo.worse_only = !opt.fleet_both_sides;
  const FleetReport r = analyse_fleet(load_fleet(opt.fleet), fo);
  if (r.members.empty()) throw std::runtime_error("report --fleet: no descriptor (*.yaml) under " + opt.fleet);
  nlohmann::json j;
  j["schema"] = "ceiling/fleet/1";
  j["options"] = {{"z", fo.z}, {"min_deviation", fo.min_deviation}, {"worse_only", fo.worse_only}};
  j["members"] = nlohmann::json::array();
  for (const auto& m : r.members)
    j["members"].push_back({{"file", m.file}, {"id", m.id}, {"uuid", m.uuid}, {"model", m.model}, {"node", m.node},
                            {"error", m.error}, {"link_problems", m.problems}});
  j["groups"] = nlohmann::json::array();
  for (const auto& g : r.groups) {
    nlohmann::json gj{{"model", g.model}, {"gpus", g.members.size()}};
    for (const auto& [f, st] : g.stats)
      gj["figures"][f] = {{"n", st.n}, {"median", st.median}, {"sigma", st.sigma}, {"min", st.min}, {"max", st.max}};
    gj["outliers"] = nlohmann::json::array();
    for (const auto& o : g.outliers)
      gj["outliers"].push_back({{"file", r.members[o.member].file}, {"id", r.members[o.member].id},
                                {"uuid", r.members[o.member].uuid}, {"figure", o.figure}, {"value", o.value},
                                {"median", o.median}, {"deviation", o.deviation},
                                {"z", std::isfinite(o.z) ? nlohmann::json(o.z) : nlohmann::json(o.z > 0 ? "inf" : "-inf")}});
    j["groups"].push_back(gj);
  }
  fs::create_directories(opt.out);
  write_file_atomically(fs::path(opt.out) / "fleet.md", fleet_markdown(r));
  write_file_atomically(fs::path(opt.out) / "fleet.csv", fleet_csv(r));
  write_file_atomically(fs::path(opt.out) / "fleet.json", j.dump(1) + "\n");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (opt.json)
    std::cout << j.dump(1) << "\n";
  else
    std::cout << fleet_summary(r) << "fleet: wrote " << (fs::path(opt.out) / "fleet.md").string() << ", fleet.csv, fleet.json ("
              << s << " s)\n";
  return r.unreadable() ? 3 : 0;
}

int run_report(const ReportOptions& opt) {
  if (opt.out.empty()) throw std::runtime_error("report: --out DIR is required");
  if (!opt.fleet.empty()) return run_fleet(opt);
  std::vector<fs::path> hw;
  if (opt.hw.empty()) {
    hw = shipped_descriptors();
    if (hw.empty()) throw std::runtime_error("report: no --hw given and no shipped descriptors in " + hardware_dir().string());
  } else {
    for (const auto& h : opt.hw) hw.push_back(resolve_hardware(h));
  }
  const bool default_results = opt.results.empty();
  std::vector<fs::path> results;
  if (default_results)
    results = shipped_results();
  else
    for (const auto& r : opt.results) results.push_back(r);

  std::vector<fs::path> profiles(opt.profiles.begin(), opt.profiles.end());
  std::vector<fs::path> peers(opt.peers.begin(), opt.peers.end());
  reports::ReportInput in = reports::load_report_input(hw, results, profiles, peers);
  // The report of the shipped descriptors (no --hw) also shows their shipped one-run comparisons
  // with the public suites, unless --peers names files.
  if (opt.hw.empty() && opt.peers.empty()) in.peers = shipped_peers(in.gpus);
  if (default_results) {
    // Shipped results of GPUs not in this report are not this report's business.
    std::erase_if(in.results, [](const reports::ResultsInput& r) { return r.gpu_id.empty(); });
  }
  // The papers' figures (Sun et al. Tables 9-10 and 12-15, in the shipped A100 descriptor) beside
  // the GPUs of this report, when that descriptor is not one of them.
  for (const auto& p : shipped_descriptors()) {
    if (std::any_of(in.gpus.begin(), in.gpus.end(), [&](const reports::GpuInput& g) {
          std::error_code ec;
          return fs::equivalent(g.descriptor_path, p, ec);
        }))
      continue;
    try {
      reports::GpuInput g;
      g.descriptor_path = p;
      g.hw = load_descriptor(p);
      if (g.hw.id.empty()) g.hw.id = p.stem().string();
      const bool papers =
          std::any_of(g.hw.tensor_instructions.begin(), g.hw.tensor_instructions.end(),
                      [](const TensorInstruction& t) { return t.numerics && !t.numerics->reference.empty(); }) ||
          (g.hw.memory.count(MemoryLevelKind::shared) && !g.hw.memory.at(MemoryLevelKind::shared).extra.empty() &&
           g.hw.identity.uuid.empty()) ||  // a paper's shared-memory figures (Sun et al. Tables 9-10)
          std::any_of(g.hw.dpx.begin(), g.hw.dpx.end(), [](const DpxFunction& f) {
            return f.latency.spec || f.throughput_per_sm.spec;  // a paper's DPX figures (Luo et al. Figs. 6-7)
          }) ||
          std::any_of(g.hw.async_copy.matmul.begin(), g.hw.async_copy.matmul.end(),
                      [](const AsyncMatmulRow& r) { return r.spec.has_value(); }) ||  // Luo et al. Tables XIII-XIV
          g.hw.dsm.latency.spec || g.hw.dsm.ring_bandwidth.spec ||  // a paper's DSM figures (Luo et al. §IV-E, Fig. 8)
          std::any_of(g.hw.dsm.ring_by_cluster_size.begin(), g.hw.dsm.ring_by_cluster_size.end(),
                      [](const DsmRingByClusterSize& c) { return c.bandwidth.spec.has_value(); });
      if (papers) in.references.push_back(std::move(g));
    } catch (const std::exception& e) {
      spdlog::warn("report: shipped descriptor {} not read for its papers' figures: {}", p.string(), e.what());
    }
  }
  in.command_line = command_line(opt);
  spdlog::info("report: {} descriptor(s), {} results file(s), {} profile(s) -> {}", in.gpus.size(), in.results.size(),
               in.profiles.size(), opt.out);
  reports::ReportOutput out = reports::write_report(in, opt.out);

  int rendered = 0, missing = 0;
  for (const auto& p : out.plots) (p.rendered ? rendered : missing)++;
  if (opt.json) {
    nlohmann::json j;
    j["dir"] = out.dir.string();
    j["index"] = (out.dir / "index.html").string();
    j["files"] = out.files;
    j["seconds"] = out.seconds;
    j["warnings"] = out.warnings;
    j["plots"] = nlohmann::json::array();
    for (const auto& p : out.plots) {
      nlohmann::json pj{{"name", p.name}, {"rendered", p.rendered}};
      if (!p.missing_reason.empty()) pj["missing_reason"] = p.missing_reason;
      j["plots"].push_back(pj);
    }
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::cout << "report: " << (out.dir / "index.html").string() << "\n"
              << "  " << out.files.size() << " files, " << rendered << " plots rendered, " << missing
              << " missing or not rendered, " << in.gpus.size() << " GPU(s), " << in.results.size()
              << " results file(s), "
              << (in.profiles.empty() ? std::string() : std::to_string(in.profiles.size()) + " profile(s), ")
              << std::to_string(out.seconds).substr(0, 4) << " s\n";
    // One line per reason: "latency-h200, mma-h200: not measured (no h200.probes.json ...)".
    std::vector<std::pair<std::string, std::string>> by_reason;
    for (const auto& p : out.plots) {
      if (p.rendered) continue;
      const std::string& reason = p.missing_reason;
      auto it = std::find_if(by_reason.begin(), by_reason.end(), [&](const auto& e) { return e.second == reason; });
      if (it == by_reason.end()) by_reason.push_back({p.name, reason});
      else it->first += ", " + p.name;
    }
    for (const auto& [names, reason] : by_reason) std::cout << "  " << names << ": " << reason << "\n";
  }
  return 0;
}

Subcommand add_report(CLI::App& root) {
  auto opt = std::make_shared<ReportOptions>();
  Subcommand s;
  s.app = root.add_subcommand(
      "report", "Write a report directory: index.html (self-contained), report.md, plots (SVG, PNG, data, gnuplot "
                "scripts) and tables, from descriptors and validation results");
  s.app->add_option("--hw", opt->hw,
                    "Descriptor file or shipped id, repeatable (default: every shipped descriptor)");
  s.app->add_option("--results", opt->results,
                    "Validation results JSON, repeatable (default: the shipped results/*-validation.json of the "
                    "chosen GPUs)");
  s.app->add_option("--profile", opt->profiles,
                    "Output of `ceiling profile --out` (JSON, schema ceiling/profile/1), repeatable: its kernels "
                    "on the roofline and speedup-bound plots of the GPU named by its hardware.id, and a table");
  s.app->add_option("--peers", opt->peers,
                    "Output of scripts/compare-peers.sh (JSON, schema ceiling/peers/1), repeatable: ours beside the "
                    "public suites, run one after the other on the GPU of its descriptor id (default, without --hw: "
                    "the newest shipped results/peers-<gpu>-<date>.json of each shipped descriptor)");
  s.app->add_option("--out", opt->out, "Output directory (new, empty, or a previous ceiling report)")->required();
  s.app->add_flag("--json", opt->json, "Print a JSON summary on stdout");
  s.app->add_option("--fleet", opt->fleet,
                    "Fleet view instead of the GPU report: every descriptor (*.yaml) under this directory; per GPU "
                    "model each figure's median, robust spread, min/max, and the GPUs that deviate; writes fleet.md, "
                    "fleet.csv (one row per GPU, sortable) and fleet.json to --out. Node descriptors (node.yaml of calibrate "
                    "--devices) add each GPU's link figures and report failed GPUs and nodes; exit 3 when a descriptor "
                    "is unreadable or a GPU or node failed");
  s.app->add_option("--fleet-z", opt->fleet_z, "Fleet: robust standard deviations from the median that flag (default 3)");
  s.app->add_option("--fleet-min-deviation", opt->fleet_min_deviation,
                    "Fleet: and at least this relative deviation (default 0.01 = 1%)");
  s.app->add_flag("--fleet-both-sides", opt->fleet_both_sides,
                  "Fleet: flag GPUs better than their siblings too (default: only the bad side)");
  s.app->footer(
      "Examples:\n"
      "  ceiling report --hw h200 --hw gh200 --results results/h200-validation.json --out report/\n"
      "  ceiling profile --hw h100-sxm --from-ncu app.csv --out app-profile.json\n"
      "  ceiling report --hw h100-sxm --profile app-profile.json --out report/   # your kernels beside ceiling's\n"
      "  ceiling report --hw h200 --peers results/peers-h200-2026-11-26.json --out report/  # beside the public suites\n"
      "  ceiling report --fleet /shared/ceiling/descriptors --out fleet/          # which of my GPUs is slower");
  s.run = [opt] { return run_report(*opt); };
  return s;
}

}  // namespace ceiling::cli
