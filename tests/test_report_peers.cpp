// `ceiling report --peers`: the one-run comparison with the public suites (scripts/compare-peers.sh,
// schema ceiling/peers/1, docs/PEERS.md) as a table and a plot; bad files refused with one line
// naming the file and the key; the report of the shipped descriptors shows the shipped comparisons.
#include <doctest/doctest.h>

#include "approx.hpp"
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_run.hpp"
#include "reports/report.hpp"
#include "scratch.hpp"

namespace {
namespace fs = std::filesystem;
using nlohmann::json;
using namespace ceiling;
using namespace ceiling::reports;
using test::message_of;
using test::slurp;

const fs::path kH200 = fs::path(CEILING_SOURCE_DIR) / "hardware" / "h200.yaml";
const fs::path kH100 = fs::path(CEILING_SOURCE_DIR) / "hardware" / "h100-sxm.yaml";
const fs::path kPeersH200 = fs::path(CEILING_SOURCE_DIR) / "results" / "peers-h200-2026-11-26.json";

fs::path write_json(const fs::path& file, const json& j) {
  std::ofstream(file) << j.dump(1);
  return file;
}

json read_json(const fs::path& p) { return json::parse(slurp(p)); }

}  // namespace

TEST_CASE("report --peers: the shipped H200 comparison as a table and a plot") {
  const PeersInput p = load_peers(kPeersH200);
  CHECK(p.gpu_name == "NVIDIA H200");
  CHECK(p.descriptor_id == "h200");
  REQUIRE(p.rows.size() >= 20);
  int rates = 0;
  for (const auto& r : p.rows) {
    INFO(r.label);
    if (r.unit != "cycles" && r.ratio && r.ours && r.best_peer_value()) {
      ++rates;
      CHECK(*r.ratio == ceiling_test::Rel(*r.ours / *r.best_peer_value()).epsilon(1e-9));
    }
  }
  const ReportInput in = load_report_input({kH200}, {}, {}, {kPeersH200});
  REQUIRE(in.peers.size() == 1);
  CHECK(in.peers[0].gpu_id == "h200");

  const fs::path dir = test::scratch_dir("report-peers", "h200");
  WriteOptions wo;
  wo.render_plots = false;
  write_report(in, dir / "report", wo);
  const json table = read_json(dir / "report" / "table-peers.json");
  CHECK(table["rows"].size() == p.rows.size());
  const json plot = read_json(dir / "report" / "peers-h200.json");
  CHECK(plot["bars"].size() == static_cast<std::size_t>(rates));
  for (const auto& b : plot["bars"]) CHECK(b["unit"] != "cycles");
  const json rep = read_json(dir / "report" / "report.json");
  bool section = false;
  for (const auto& s : rep["sections"]) section = section || s["id"] == "peers";
  CHECK(section);
  CHECK(slurp(dir / "report" / "report.md").find("Beside the public suites") != std::string::npos);
  CHECK(fs::is_regular_file(dir / "report" / "inputs" / kPeersH200.filename()));
  // A report without peers files has no such section.
  const fs::path plain = dir / "plain";
  write_report(load_report_input({kH200}, {}), plain, wo);
  CHECK_FALSE(fs::exists(plain / "table-peers.json"));
  fs::remove_all(dir);
}

TEST_CASE("report --peers: bad files give one line naming the file and the key") {
  const fs::path dir = test::scratch_dir("report-peers", "bad");
  const json good = read_json(kPeersH200);
  const auto error_for = [&](const std::string& name, const json& j) {
    const fs::path f = write_json(dir / name, j);
    const std::string e = message_of([&] { load_report_input({kH200}, {}, {}, {f}); });
    CHECK(e.find(f.string()) == 0);
    CHECK(e.find('\n') == std::string::npos);
    return e;
  };
  json j = good;
  j["schema"] = "ceiling/profile/1";
  CHECK(error_for("schema.json", j).find("schema: is 'ceiling/profile/1', expected 'ceiling/peers/1'") != std::string::npos);

  j = good;
  j["rows"][2].erase("ratio");
  CHECK(error_for("missing.json", j).find("rows[2].ratio: is missing") != std::string::npos);

  j = good;
  j["rows"][0]["peers"][0]["value"] = "2.7";
  CHECK(error_for("type.json", j).find("rows[0].peers[0].value: expected a number or null, got string") !=
        std::string::npos);

  j = good;
  j["rows"][0]["best_peer"] = "nobody";
  CHECK(error_for("best.json", j).find("rows[0].best_peer: 'nobody' is not one of the row's peers") != std::string::npos);

  j = good;
  j["rows"][1]["ratio"] = -1;
  CHECK(error_for("ratio.json", j).find("rows[1].ratio: must be > 0") != std::string::npos);

  j = good;
  j["rows"] = json::object();
  CHECK(error_for("rows.json", j).find("rows: expected an array, got object") != std::string::npos);

  j = good;
  j["descriptor"] = "b200";
  j["gpu"] = "NVIDIA B200";
  const std::string e = error_for("unknown-gpu.json", j);
  CHECK(e.find("descriptor: 'b200' (NVIDIA B200) matches no descriptor") != std::string::npos);
  CHECK(e.find("h200 (NVIDIA H200)") != std::string::npos);

  // Matched by device name when the id differs (a calibration written under another id).
  j = good;
  j["descriptor"] = "h200-238c0f96";
  const fs::path renamed = write_json(dir / "renamed.json", j);
  CHECK(load_report_input({kH200}, {}, {}, {renamed}).peers.at(0).gpu_id == "h200");

  const std::string text = good.dump(1);
  const fs::path cut = dir / "truncated.json";
  std::ofstream(cut) << text.substr(0, text.size() / 3);
  const std::string te = message_of([&] { load_report_input({kH200}, {}, {}, {cut}); });
  CHECK(te.find(cut.string() + ": not valid JSON") == 0);
  CHECK(te.find('\n') == std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("ceiling report --peers: the command, its help, the shipped default, and its errors") {
  const fs::path dir = test::scratch_dir("report-peers", "cli");
  const fs::path out = dir / "report";
  test::CliRun r = test::run_ceiling("report --hw h200 --peers '" + kPeersH200.string() + "' --out '" + out.string() +
                                     "' --json");
  INFO(r.out);
  REQUIRE(r.rc == 0);
  CHECK(fs::is_regular_file(out / "table-peers.csv"));
  CHECK(read_json(out / "report.json")["command_line"].get<std::string>().find("--peers") != std::string::npos);

  const test::CliRun help = test::run_ceiling("report --help");
  CHECK(help.out.find("--peers") != std::string::npos);
  CHECK(help.out.find("compare-peers") != std::string::npos);

  // The report of every shipped descriptor shows the shipped comparisons of the GPUs that have one.
  const fs::path all = dir / "all";
  r = test::run_ceiling("report --out '" + all.string() + "'");
  REQUIRE(r.rc == 0);
  const json table = read_json(all / "table-peers.json");
  bool h200 = false, h100 = false;
  for (const auto& row : table["rows"]) {
    h200 = h200 || row[0]["text"] == "h200";
    h100 = h100 || row[0]["text"] == "h100-sxm";
  }
  CHECK(h200);
  CHECK(h100);
  // --hw without --peers: none (a new calibration is not the shipped run).
  const fs::path one = dir / "one";
  r = test::run_ceiling("report --hw h200 --out '" + one.string() + "'");
  REQUIRE(r.rc == 0);
  CHECK_FALSE(fs::exists(one / "table-peers.csv"));

  // A peers file of a GPU not in the report: exit 1, one line, no output directory.
  const fs::path out2 = dir / "report2";
  r = test::run_ceiling("report --hw h100-sxm --peers '" + kPeersH200.string() + "' --out '" + out2.string() + "'", true);
  CHECK(r.rc == 1);
  CHECK(r.out.find(kPeersH200.string() + ": descriptor: 'h200' (NVIDIA H200) matches no descriptor") != std::string::npos);
  CHECK_FALSE(fs::exists(out2));
  fs::remove_all(dir);
}
