// Reports of results files with many rows (issue 17, "Scale"): long tables show their first rows
// and write every row to their CSV/JSON; plots thin series of thousands of points; results files
// round-trip through the streaming reader; manifests of older reports (bytewise FNV-1a) still work.
// The million-row timing is scripts/scale-check.sh (a benchmark, not a test).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "model/validation.hpp"
#include "reports/detail.hpp"
#include "reports/report.hpp"
#include "scratch.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace ceiling;
using namespace ceiling::reports;

namespace {
const fs::path kData = fs::path(CEILING_TEST_DATA_DIR) / "report";

// The fixture's results repeated over `n` sizes: n x 6 results and n x 2 speedups.
validation::ValidationReport many_rows(int n) {
  validation::ValidationReport base = validation::load_report(kData / "fixture-gpu-validation.json");
  validation::ValidationReport r = base;
  r.results.clear();
  r.speedups.clear();
  for (int k = 0; k < n; ++k) {
    for (auto e : base.results) {
      for (auto& [name, v] : e.size) v += k;
      e.achieved_flop_per_s *= 1.0 + 0.01 * k;  // a new point on the plots for every k
      r.results.push_back(e);
    }
    for (auto s : base.speedups) {
      for (auto& [name, v] : s.size) v += k;
      r.speedups.push_back(s);
    }
  }
  return r;
}

size_t lines_of(const fs::path& p) {
  std::ifstream in(p);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}
}  // namespace

TEST_CASE("results files: a written file reads back the same through the streaming reader") {
  const validation::ValidationReport r = many_rows(300);
  const fs::path dir = test::scratch_dir("report-scale", "roundtrip");
  const fs::path p = dir / "many-validation.json";
  validation::save_report(r, p);
  // One row per line: 1800 results and 600 speedups are lines of their own.
  CHECK(lines_of(p) > 2400);
  CHECK(lines_of(p) < 2500);
  const validation::ValidationReport back = validation::load_report(p);
  CHECK(validation::to_json(back).dump() == validation::to_json(r).dump());
  // nlohmann reads the same file to the same document.
  CHECK(json::parse(test::slurp(p)) == json::parse(validation::to_json(r).dump()));
  fs::remove_all(dir);
}

TEST_CASE("report: a long table shows its first rows, its files hold every row, plots thin their points") {
  const int n = 2100;  // 12600 results (> kShownRows), 4200 speedups, roofline series of 2100 points (> 2000)
  const validation::ValidationReport r = many_rows(n);
  const fs::path dir = test::scratch_dir("report-scale", "long");
  const fs::path results = dir / "fixture-gpu-validation.json";
  validation::save_report(r, results);
  const ReportInput in = load_report_input({kData / "fixture-gpu.yaml"}, {results});
  REQUIRE(in.results.size() == 1);
  REQUIRE(in.results[0].report.results.size() == 6u * n);

  const auto tables = detail::build_tables(in);
  const detail::Table* t = nullptr;
  for (const auto& x : tables)
    if (x.id == "table-validation-fixture-gpu") t = &x;
  REQUIRE(t);
  CHECK(t->rows.size() == detail::kShownRows);
  CHECK(t->row_count() == 6u * n);
  CHECK(t->caption.find("Shown: the first 1000 of 12600 rows") != std::string::npos);

  WriteOptions opt;
  opt.render_plots = false;
  const fs::path out = dir / "report";
  write_report(in, out, opt);
  // The files hold every row: the CSV one line per cell (16 columns: 14 and the tight bound's two), the
  // JSON as table_json says.
  CHECK(lines_of(out / "table-validation-fixture-gpu.csv") == 1 + 16u * 6u * n);
  const json tj = json::parse(test::slurp(out / "table-validation-fixture-gpu.json"));
  CHECK(tj["rows"].size() == 6u * n);
  CHECK(tj == detail::table_json(*t));
  const json sj = json::parse(test::slurp(out / "table-validation-fixture-gpu-speedups.json"));
  CHECK(sj["rows"].size() == 2u * n);
  // report.json and the document: the shown rows, the total and where the rest are.
  const json rj = json::parse(test::slurp(out / "report.json"));
  bool found = false;
  for (const auto& x : rj["tables"])
    if (x["id"] == "table-validation-fixture-gpu") {
      found = true;
      CHECK(x["rows"].size() == detail::kShownRows);
      CHECK(x["rows_total"] == 6 * n);
    }
  CHECK(found);
  const std::string html = test::slurp(out / "index.html");
  CHECK(html.find("Shown: the first 1000 of 12600 rows; every row is in table-validation-fixture-gpu.csv") !=
        std::string::npos);
  // The roofline's series of 2000+ points are thinned, and the caption says how many are drawn.
  const json roof = json::parse(test::slurp(out / "roofline-fixture-gpu.json"));
  CHECK(roof["kernels"].size() < 6u * n);
  CHECK(roof["kernels"].size() > 0);
  CHECK(html.find(std::to_string(roof["kernels"].size()) + " of 12600 kernel points drawn") != std::string::npos);
  // The manifest hashes every file with the word-wise hash.
  const json man = json::parse(test::slurp(out / "manifest.json"));
  for (const auto& f : man["files"]) CHECK(f.contains("hash"));
  fs::remove_all(dir);
}

TEST_CASE("report: a manifest of an older report (bytewise fnv1a) still tells edited files from ours") {
  const fs::path dir = test::scratch_dir("report-scale", "legacy");
  const fs::path out = dir / "report";
  WriteOptions opt;
  opt.render_plots = false;
  const ReportInput in = load_report_input({kData / "fixture-gpu.yaml"}, {kData / "fixture-gpu-validation.json"});
  write_report(in, out, opt);
  // Rewrite the manifest as an older ceiling wrote it, then edit one file by hand.
  json man = json::parse(test::slurp(out / "manifest.json"));
  for (auto& f : man["files"]) {
    f.erase("hash");
    f["fnv1a"] = detail::fnv1a(test::slurp(out / f["path"].get<std::string>()));
  }
  std::ofstream(out / "manifest.json") << man.dump(1);
  std::ofstream(out / "table-platform.csv", std::ios::app) << "edited by hand\n";
  const ReportOutput again = write_report(in, out, opt);
  int edited = 0;
  for (const auto& e : fs::directory_iterator(out)) edited += e.path().filename().string().find(".edited-") != std::string::npos;
  CHECK(edited == 1);  // the edited file only: every other file's old hash matched
  bool kept = false;
  for (const auto& w : again.warnings) kept |= w.find("table-platform.csv was edited") != std::string::npos;
  CHECK(kept);
  fs::remove_all(dir);
}
