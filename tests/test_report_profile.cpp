// `ceiling report --profile`: a user's kernels (the output of `ceiling profile`, schema
// ceiling/profile/1) on the roofline and speedup-bound plots and in a table; bad files refused
// with one line naming the file and the key.
#include <doctest/doctest.h>

#include "approx.hpp"
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_run.hpp"
#include "model/descriptor.hpp"
#include "model/ncu_csv.hpp"
#include "model/profile.hpp"
#include "reports/report.hpp"
#include "scratch.hpp"

namespace {
namespace fs = std::filesystem;
using nlohmann::json;
using namespace ceiling;
using namespace ceiling::reports;
using test::message_of;
using test::slurp;

const fs::path kH100 = fs::path(CEILING_SOURCE_DIR) / "hardware" / "h100-sxm.yaml";

// What `ceiling profile --hw h100-sxm --from-ncu tests/data/profile/h100-torch.csv --out` writes.
json torch_profile() {
  std::vector<std::string> metrics;
  for (const auto& m : profile_metrics()) metrics.push_back(m.name);
  const NcuExport ex = read_ncu_csv(fs::path(CEILING_TEST_DATA_DIR) / "profile" / "h100-torch.csv", metrics);
  return profile_to_json(analyse_profile(ex, load_descriptor(kH100)));
}

fs::path write_json(const fs::path& file, const json& j) {
  std::ofstream(file) << j.dump(1);
  return file;
}

json read_json(const fs::path& p) { return json::parse(slurp(p)); }

// The smallest kernel entry the report reads.
json small_kernel(const std::string& name, double share, const std::string& unit) {
  json k{{"name", "void " + name + "(double*)"}, {"short_name", name}, {"launches", 1}, {"time_s", share * 1e-3},
         {"time_share", share}, {"unit", unit}, {"precision", unit == "none" ? json(nullptr) : json("fp64")},
         {"intensity", {{"dram", 0.5}}}, {"counts", {{"work_flop", 1e6}, {"traffic", {{"dram", {{"bytes", 2e6}}}}}}},
         {"achieved_flop_per_s", 1e12}, {"bound_s", share * 0.8e-3}, {"bounded_by", "dram"}, {"efficiency", 0.8},
         {"verdict", "within-bound"}, {"speedup", nullptr}, {"speedup_missing", "no floating-point work counted"}};
  return k;
}

json small_profile(const std::string& hw, int kernels) {
  json j{{"schema", "ceiling/profile/1"}, {"hardware", {{"id", hw}, {"name", "test"}}}, {"time_s", 1e-3},
         {"kernels", json::array()}};
  for (int i = 0; i < kernels; ++i)
    j["kernels"].push_back(small_kernel(std::string("k").append(std::to_string(i)), 1.0 / (i + 2), "cuda_core"));
  return j;
}

}  // namespace

TEST_CASE("report --profile: the user's kernels on the roofline and speedup plots and in a table") {
  const fs::path dir = test::scratch_dir("report-profile", "torch");
  const json prof = torch_profile();
  const fs::path file = write_json(dir / "torch-profile.json", prof);
  const ReportInput in = load_report_input({kH100}, {}, {file});
  REQUIRE(in.profiles.size() == 1);
  const ProfileInput& p = in.profiles[0];
  CHECK(p.gpu_id == "h100-sxm");
  REQUIRE(p.kernels.size() == prof["kernels"].size());
  CHECK(std::is_sorted(p.kernels.begin(), p.kernels.end(),
                       [](const auto& a, const auto& b) { return a.time_share > b.time_share; }));

  const fs::path out = dir / "report";
  const ReportOutput ro = write_report(in, out);

  // The section and its table, in both documents, sorted by time share, marks on the first rows.
  for (const char* doc : {"report.md", "index.html"}) {
    INFO(doc);
    CHECK(slurp(out / doc).find("Profiled kernels (torch-profile.json)") != std::string::npos);
  }
  const json table = read_json(out / "table-profile-h100-sxm.json");
  REQUIRE(table["rows"].size() == p.kernels.size());
  const auto& columns = table["columns"];
  const auto col = [&](const std::string& name) {
    const auto it = std::find(columns.begin(), columns.end(), name);
    REQUIRE(it != columns.end());
    return static_cast<std::size_t>(it - columns.begin());
  };
  for (std::size_t i = 0; i < p.kernels.size(); ++i) {
    const auto& row = table["rows"][i];
    INFO("row ", i);
    CHECK(row[col("share")]["value"].get<double>() == ceiling_test::Rel(p.kernels[i].time_share * 100));
    CHECK(row[col("time")]["value"].get<double>() == p.kernels[i].time_s);
    CHECK(row[col("verdict")]["text"] == p.kernels[i].verdict);
    const std::string mark = i < 8 ? std::string(1, static_cast<char>('A' + i)) : std::string("\u2014");
    CHECK(row[col("plot mark")]["text"] == mark);
  }
  CHECK(table["rows"][0][col("kernel")]["text"] == prof["kernels"][0]["short_name"]);
  CHECK(table["rows"][0][col("speedup (Eq. 22)")]["text"].get<std::string>().find("CUDA cores would lose") == 0);

  // Roofline: every profiled point sits at the file's (intensity.dram, achieved_flop_per_s); the
  // largest kernel is drawn and marked A, in the data, the CSV and the script's key.
  const json rf = read_json(out / "roofline-h100-sxm.json");
  REQUIRE(rf.contains("profiled"));
  CHECK(rf["profiled"].size() >= 8);
  bool a_drawn = false;
  for (const auto& pt : rf["profiled"]) {
    const json* k = nullptr;  // short names repeat: the kernel of that name at that intensity
    for (const auto& c : prof["kernels"])
      if (c["short_name"] == pt["kernel"] && c["intensity"]["dram"] == pt["x"]) k = &c;
    REQUIRE(k);
    CHECK(pt["y"].get<double>() == (*k)["achieved_flop_per_s"].get<double>());
    if (pt.value("mark", "") == "A") {
      a_drawn = true;
      CHECK(pt["kernel"] == prof["kernels"][0]["short_name"]);
    }
  }
  CHECK(a_drawn);
  const std::string csv = slurp(out / "roofline-h100-sxm.csv");
  std::size_t csv_points = 0;
  for (std::size_t at = 0; (at = csv.find("\nprofiled,", at)) != std::string::npos; ++at) ++csv_points;
  CHECK(csv_points == rf["profiled"].size());
  CHECK(slurp(out / "roofline-h100-sxm.gp").find("'A: sm90_xmma_gemm") != std::string::npos);

  // Speedup plot: x = speedup.i_over_b, y = speedup.upper, both directions.
  const json sp = read_json(out / "speedup-bound.json");
  REQUIRE(sp.contains("profiled"));
  int gains = 0, losses = 0;
  for (const auto& pt : sp["profiled"]) {
    bool found = false;
    for (const auto& k : prof["kernels"])
      if (!k["speedup"].is_null() && k["short_name"] == pt["kernel"] && k["speedup"]["i_over_b"] == pt["x"]) {
        found = true;
        CHECK(pt["y"].get<double>() == k["speedup"]["upper"].get<double>());
        CHECK(pt["direction"] == k["speedup"]["direction"]);
      }
    CHECK(found);
    (pt["direction"] == "tensor cores could give" ? gains : losses)++;
  }
  CHECK(gains > 0);
  CHECK(losses > 0);

  // The profile is among the report's inputs; plots rendered when gnuplot is here, else marked.
  CHECK(fs::is_regular_file(out / "inputs" / "torch-profile.json"));
  bool listed = false;
  const json report = read_json(out / "report.json");
  for (const auto& i : report["inputs"]) listed |= i["kind"] == "profile";
  CHECK(listed);
  const bool gnuplot = !find_gnuplot().path.empty();
  for (const auto& pl : ro.plots)
    if (pl.name == "roofline-h100-sxm" || pl.name == "speedup-bound") {
      INFO(pl.name, " ", pl.missing_reason);
      CHECK(pl.rendered == gnuplot);
    }
  fs::remove_all(dir);
}

TEST_CASE("report --profile: hand-written files, nulls, two profiles of one GPU, a long table") {
  const fs::path dir = test::scratch_dir("report-profile", "small");
  json a = small_profile("h100-sxm", 3);
  a["kernels"][1]["achieved_flop_per_s"] = nullptr;  // no time: written as null, not drawn
  a["kernels"][2]["unit"] = "none";
  a["kernels"][2]["precision"] = nullptr;
  a["kernels"][0]["speedup"] = {{"direction", "tensor cores could give"}, {"alpha", 2.0}, {"balance", 10.0},
                                {"intensity", 0.5}, {"i_over_b", 0.05}, {"lower", 1.0}, {"upper", 1.0238},
                                {"level", "dram"}, {"regime", "memory-bound"}};
  const json b = small_profile("h100-sxm", 1005);
  const fs::path fa = write_json(dir / "a.json", a), fb = write_json(dir / "b.json", b);
  const ReportInput in = load_report_input({kH100}, {}, {fa, fb});
  REQUIRE(in.profiles.size() == 2);
  CHECK_FALSE(in.profiles[0].kernels[1].achieved_flop_per_s.has_value());
  CHECK(in.profiles[0].kernels[2].precision.empty());
  WriteOptions opt;
  opt.render_plots = false;
  write_report(in, dir / "report", opt);
  const json ta = read_json(dir / "report" / "table-profile-h100-sxm-1.json");
  const json tb = read_json(dir / "report" / "table-profile-h100-sxm-2.json");
  CHECK(ta["rows"].size() == 3);
  CHECK(ta["rows"][0].back()["text"] == "1A");
  CHECK(ta["rows"][0][12]["text"] == "tensor cores could give at most 1.02x (memory-bound)");
  CHECK(tb["rows"].size() == 1005);  // the file holds every row
  CHECK(tb["rows"][0].back()["text"] == "2A");
  const std::string md = slurp(dir / "report" / "report.md");
  CHECK(md.find("## Profiled kernels (a.json)") != std::string::npos);
  CHECK(md.find("## Profiled kernels (b.json)") != std::string::npos);
  CHECK(md.find("Shown: the first 1000 of 1005 rows; every row is in table-profile-h100-sxm-2.csv") !=
        std::string::npos);
  // Roofline: a.json's first kernel and b.json's; not the kernel without flop/s, not the one without flops.
  const json rf = read_json(dir / "report" / "roofline-h100-sxm.json");
  std::size_t from_a = 0;
  for (const auto& pt : rf["profiled"]) from_a += pt["profile"] == "a.json";
  CHECK(from_a == 1);
  CHECK(rf["profiled"].size() == 1 + 1005);
  const json sp = read_json(dir / "report" / "speedup-bound.json");
  REQUIRE(sp["profiled"].size() == 1);
  CHECK(sp["profiled"][0]["x"].get<double>() == 0.05);
  CHECK(sp["profiled"][0]["y"].get<double>() == 1.0238);
  fs::remove_all(dir);
}

TEST_CASE("report --profile: bad files give one line naming the file and the key") {
  const fs::path dir = test::scratch_dir("report-profile", "bad");
  const json good = small_profile("h100-sxm", 2);
  const auto error_for = [&](const std::string& name, const json& j) {
    const fs::path f = write_json(dir / name, j);
    const std::string e = message_of([&] { load_report_input({kH100}, {}, {f}); });
    CHECK(e.find(f.string()) == 0);
    CHECK(e.find('\n') == std::string::npos);
    return e;
  };
  json j = good;
  j["schema"] = "ceiling/validation/1";
  std::string e = error_for("schema.json", j);
  CHECK(e.find("schema: is 'ceiling/validation/1', expected 'ceiling/profile/1'") != std::string::npos);
  CHECK(e.find("--results") != std::string::npos);

  j = good;
  j["kernels"][1].erase("time_share");
  CHECK(error_for("missing.json", j).find("kernels[1].time_share: is missing") != std::string::npos);

  j = good;
  j["kernels"][0]["intensity"]["dram"] = "0.5";
  CHECK(error_for("type.json", j).find("kernels[0].intensity.dram: expected a number, got string") !=
        std::string::npos);

  j = good;
  j["kernels"][0]["speedup"] = {{"direction", "sideways"}};
  CHECK(error_for("direction.json", j).find("kernels[0].speedup.direction: is 'sideways'") != std::string::npos);

  j = good;
  j["kernels"] = json::object();
  CHECK(error_for("kernels.json", j).find("kernels: expected an array, got object") != std::string::npos);

  j = good;
  j["hardware"]["id"] = "b200";
  e = error_for("unknown-gpu.json", j);
  CHECK(e.find("hardware.id: 'b200' matches no descriptor") != std::string::npos);
  CHECK(e.find("h100-sxm (h100-sxm.yaml)") != std::string::npos);

  // Truncated: the parser's line and column.
  const std::string text = good.dump(1);
  const fs::path cut = dir / "truncated.json";
  std::ofstream(cut) << text.substr(0, text.size() / 2);
  e = message_of([&] { load_report_input({kH100}, {}, {cut}); });
  CHECK(e.find(cut.string() + ": not valid JSON") == 0);
  CHECK(e.find("line ") != std::string::npos);
  CHECK(e.find('\n') == std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("ceiling report --profile: the command, its help, and its errors (exit 1, no output directory)") {
  const fs::path dir = test::scratch_dir("report-profile", "cli");
  const fs::path file = write_json(dir / "torch.json", torch_profile());
  const fs::path out = dir / "report";
  test::CliRun r = test::run_ceiling("report --hw h100-sxm --profile '" + file.string() + "' --out '" + out.string() +
                                     "' --json");
  INFO(r.out);
  REQUIRE(r.rc == 0);
  CHECK(fs::is_regular_file(out / "table-profile-h100-sxm.csv"));
  CHECK(read_json(out / "report.json")["command_line"].get<std::string>().find("--profile") != std::string::npos);

  const test::CliRun help = test::run_ceiling("report --help");
  CHECK(help.out.find("--profile") != std::string::npos);
  CHECK(help.out.find("ceiling report --hw h100-sxm --profile") != std::string::npos);

  json wrong = small_profile("h200", 1);
  const fs::path other = write_json(dir / "h200.json", wrong);
  const fs::path out2 = dir / "report2";
  r = test::run_ceiling("report --hw h100-sxm --profile '" + other.string() + "' --out '" + out2.string() + "'", true);
  CHECK(r.rc == 1);
  CHECK(r.out.find(other.string() + ": hardware.id: 'h200' matches no descriptor") != std::string::npos);
  CHECK_FALSE(fs::exists(out2));
  {
    std::ofstream(dir / "cut.json") << "{\"schema\": \"ceiling/profile/1\", \"kernels\": [";
  }
  const fs::path cut = dir / "cut.json";
  r = test::run_ceiling("report --hw h100-sxm --profile '" + cut.string() + "' --out '" + out2.string() + "'", true);
  CHECK(r.rc == 1);
  CHECK(r.out.find("cut.json: not valid JSON (parse error at line 1") != std::string::npos);
  CHECK_FALSE(fs::exists(out2));
  fs::remove_all(dir);
}
