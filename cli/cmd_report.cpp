// ceiling report: descriptors (+ probe details) + validation results (+ profiles) -> HTML/Markdown/SVG/PNG/CSV.
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "common.hpp"
#include "reports/report.hpp"

namespace ceiling::cli {
namespace fs = std::filesystem;

namespace {

// Validation results shipped beside the descriptors: <hardware dir>/../results/*-validation.json.
std::vector<fs::path> shipped_results() {
  std::vector<fs::path> out;
  std::error_code ec;
  fs::path dir = hardware_dir().parent_path() / "results";
  if (hardware_dir().filename().empty()) dir = hardware_dir().parent_path().parent_path() / "results";
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() > 16 && name.ends_with("-validation.json")) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string command_line(const ReportOptions& opt) {
  std::string c = "ceiling report";
  for (const auto& h : opt.hw) c += " --hw " + h;
  for (const auto& r : opt.results) c += " --results " + r;
  for (const auto& p : opt.profiles) c += " --profile " + p;
  return c + " --out " + opt.out;
}

}  // namespace

int run_report(const ReportOptions& opt) {
  if (opt.out.empty()) throw std::runtime_error("report: --out DIR is required");
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
  reports::ReportInput in = reports::load_report_input(hw, results, profiles);
  if (default_results) {
    // Shipped results of GPUs not in this report are not this report's business.
    std::erase_if(in.results, [](const reports::ResultsInput& r) { return r.gpu_id.empty(); });
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
  s.app->add_option("--out", opt->out, "Output directory (new, empty, or a previous ceiling report)")->required();
  s.app->add_flag("--json", opt->json, "Print a JSON summary on stdout");
  s.app->footer(
      "Examples:\n"
      "  ceiling report --hw h200 --hw gh200 --results results/h200-validation.json --out report/\n"
      "  ceiling profile --hw h100-sxm --from-ncu app.csv --out app-profile.json\n"
      "  ceiling report --hw h100-sxm --profile app-profile.json --out report/   # your kernels beside ceiling's");
  s.run = [opt] { return run_report(*opt); };
  return s;
}

}  // namespace ceiling::cli
