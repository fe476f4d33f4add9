// Issue 14, DPX: the CPU reference of the DPX functions (the probe's check), the descriptor's `dpx`
// list (strict, exact round trip, calibrate's merge), the shipped H800 file, `show` and the report's
// table and plot.
#include <doctest/doctest.h>

#include "approx.hpp"
#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "cli_run.hpp"
#include "model/descriptor.hpp"
#include "probes/host/dpx.hpp"
#include "reports/report.hpp"
#include "scratch.hpp"

using namespace ceiling;
namespace fs = std::filesystem;
namespace dpx = ceiling::probes::dpx;
using nlohmann::json;

namespace {

const fs::path kHardware = fs::path(CEILING_SOURCE_DIR) / "hardware";
const fs::path kReportData = fs::path(CEILING_TEST_DATA_DIR) / "report";

uint32_t w(int32_t v) { return static_cast<uint32_t>(v); }
uint32_t lanes(int16_t lo, int16_t hi) { return dpx::ref::pack(lo, hi); }

MeasuredValue measured(double v, double lo, double hi) {
  MeasuredValue m;
  m.median = v;
  m.min = lo;
  m.max = hi;
  m.repeats = 7;
  m.probe = "dpx";
  m.date = "2026-11-26T10:00:00Z";
  m.sm_clock_hz = 1.755e9;
  m.note = "one thread, dependent chain of 8192 calls, clock64";
  return m;
}

DpxFunction measured_dpx(const std::string& name, double latency, double per_sm) {
  DpxFunction f;
  f.function = name;
  f.latency.measured = measured(latency, latency - 0.5, latency + 0.5);
  f.throughput_per_sm.measured = measured(per_sm, per_sm - 1, per_sm + 1);
  f.by_blocks = {{1, 63.9}, {2, 63.88}, {64, 63.5}, {100, 63.4}, {101, 32.3}, {200, 63.1}};
  return f;
}

// The descriptor text with `from` replaced by `to`, loaded: the error message, or "accepted".
std::string load_edited(const std::string& text, const std::string& from, const std::string& to) {
  std::string s = text;
  const auto at = s.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  s.replace(at, from.size(), to);
  try {
    parse_descriptor(s, "bad.yaml");
  } catch (const DescriptorError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("dpx reference: the CUDA Math API definitions, per 16-bit lane and with wrap-around adds") {
  using dpx::Fn;
  using dpx::reference;
  // Three-way max/min, signed and unsigned.
  CHECK(reference(Fn::vimax3_s32, w(-5), w(3), w(2)) == w(3));
  CHECK(reference(Fn::vimax3_s32, w(INT_MIN), w(-1), w(INT_MIN)) == w(-1));
  CHECK(reference(Fn::vimin3_s32, w(-5), w(3), w(INT_MAX)) == w(-5));
  CHECK(reference(Fn::vimax3_u32, 0xFFFFFFFFu, 0, 1) == 0xFFFFFFFFu);  // -1 is the largest unsigned
  CHECK(reference(Fn::vimin3_u32, 0xFFFFFFFFu, 7, 0x80000000u) == 7u);
  // 16-bit lanes: each lane on its own, signed, at the limits.
  CHECK(reference(Fn::vimax3_s16x2, lanes(32767, -1), lanes(-32768, 5), lanes(0, -32768)) == lanes(32767, 5));
  CHECK(reference(Fn::vimin3_s16x2, lanes(32767, -1), lanes(-32768, 5), lanes(0, -32768)) == lanes(-32768, -32768));
  CHECK(reference(Fn::vimax3_s16x2_relu, lanes(-3, -1), lanes(-7, 9), lanes(-2, 4)) == lanes(0, 9));
  // Add then max/min: the add wraps (add.s32 / add.s16x2), then the compare.
  CHECK(reference(Fn::viaddmax_s32, w(INT_MAX), w(1), w(0)) == w(0));  // INT_MAX + 1 wraps to INT_MIN
  CHECK(reference(Fn::viaddmax_s32, w(40), w(2), w(41)) == w(42));
  CHECK(reference(Fn::viaddmin_s32, w(40), w(2), w(41)) == w(41));
  CHECK(reference(Fn::viaddmin_s32, w(INT_MIN), w(-1), w(0)) == w(0));  // INT_MIN - 1 wraps to INT_MAX
  CHECK(reference(Fn::viaddmax_u32, 0xFFFFFFFFu, 2u, 0u) == 1u);
  CHECK(reference(Fn::viaddmin_u32, 0xFFFFFFFFu, 2u, 5u) == 1u);
  CHECK(reference(Fn::viaddmax_s16x2, lanes(32767, 100), lanes(1, -50), lanes(-5, 10)) == lanes(-5, 50));
  // relu = max(., 0).
  CHECK(reference(Fn::vimax_s32_relu, w(-3), w(-7), w(123)) == 0u);  // c ignored
  CHECK(reference(Fn::vimax_s32_relu, w(5), w(-7), w(0)) == w(5));
  CHECK(reference(Fn::vimax3_s32_relu, w(-1), w(-2), w(-3)) == 0u);
  CHECK(reference(Fn::vimax3_s32_relu, w(-1), w(2), w(INT_MIN)) == w(2));
  // __vibmax: max and pred = (a >= b); equal operands set it.
  bool p = false;
  CHECK(reference(Fn::vibmax_s32, w(3), w(3), 0, &p) == w(3));
  CHECK(p);
  CHECK(reference(Fn::vibmax_s32, w(-1), w(1), 0, &p) == w(1));
  CHECK_FALSE(p);
  CHECK(reference(Fn::vibmax_u32, 0xFFFFFFFFu, 1u, 0, &p) == 0xFFFFFFFFu);  // unsigned: 0xFFFFFFFF >= 1
  CHECK(p);
  CHECK(reference(Fn::vibmax_u32, 1u, 2u, 0, &p) == 2u);
  CHECK_FALSE(p);

  // Properties over random and edge operands: a max/min of three is one of them and bounds all.
  std::mt19937_64 rng(14);
  int edges = 0;
  for (int i = 0; i < 4000; ++i) {
    const uint32_t a = dpx::test_operand(rng()), b = dpx::test_operand(rng()), c = dpx::test_operand(rng());
    for (uint32_t x : {a, b, c}) edges += (x == 0x7FFFFFFFu || x == 0x80000000u || x == 0x7FFF7FFFu || x == 0x80008000u);
    const int32_t mx = static_cast<int32_t>(reference(Fn::vimax3_s32, a, b, c));
    CHECK((mx == static_cast<int32_t>(a) || mx == static_cast<int32_t>(b) || mx == static_cast<int32_t>(c)));
    CHECK(mx >= static_cast<int32_t>(a));
    CHECK(static_cast<int32_t>(reference(Fn::vimin3_s32, a, b, c)) <= static_cast<int32_t>(c));
    for (int l = 0; l < 2; ++l) {
      const int16_t m16 = dpx::ref::lane(reference(Fn::vimax3_s16x2, a, b, c), l);
      CHECK(m16 >= dpx::ref::lane(a, l));
      CHECK(m16 >= dpx::ref::lane(c, l));
      CHECK(dpx::ref::lane(reference(Fn::vimax3_s16x2_relu, a, b, c), l) >= 0);
    }
    CHECK(reference(Fn::vimax3_s32_relu, a, b, c) == std::max(reference(Fn::vimax3_s32, a, b, c), 0u, [](uint32_t x, uint32_t y) {
            return static_cast<int32_t>(x) < static_cast<int32_t>(y);
          }));
  }
  CHECK(edges > 300);  // the test inputs reach the limits often (1 in 4 draws is an edge)

  // Every function the probe times is a name the descriptor accepts.
  CHECK(kDpxFunctionNames.size() == 36);
  for (Fn f : dpx::kFunctions) {
    INFO(dpx::name(f));
    CHECK(std::find(kDpxFunctionNames.begin(), kDpxFunctionNames.end(), std::string(dpx::name(f))) != kDpxFunctionNames.end());
  }
}

TEST_CASE("descriptor: dpx entries load strictly, keep their provenance and round-trip exactly") {
  HardwareDescriptor hw = load_descriptor(kReportData / "fixture-gpu.yaml");
  DpxFunction a = measured_dpx("__vimax3_s32", 4.5, 63.5);
  a.sass = "VIMNMX3";
  a.latency.spec = SpecValue{4, "a paper's figure, for the test"};
  hw.upsert_dpx(a);
  hw.upsert_dpx(measured_dpx("__viaddmax_s16x2", 6.25, 31.5));
  DpxFunction spec_only;
  spec_only.function = "__vibmax_s32";
  spec_only.throughput_per_sm.spec = SpecValue{16, "a paper's figure, for the test"};
  hw.upsert_dpx(spec_only);
  const std::string text = to_yaml(hw);
  CHECK(text.find("dpx:") != std::string::npos);
  CHECK(text.find("by_blocks: [[1, \"63.9\"], [2, \"63.88\"]") != std::string::npos);
  const HardwareDescriptor back = parse_descriptor(text, "dpx.yaml");
  REQUIRE(back.dpx.size() == 3);
  CHECK(back.dpx[0] == a);
  CHECK(back.dpx[0].latency.spec->value == 4);
  CHECK(back.dpx[0].latency.measured->probe == "dpx");
  CHECK(back.dpx[1].by_blocks.at(3) == std::pair<int, double>{100, 63.4});
  CHECK(back.dpx[2].throughput_per_sm.spec->value == 16);
  CHECK(back == hw);
  CHECK(to_yaml(back) == text);

  // Strict: unknown keys, wrong units, unknown functions, duplicates, bad curves; file:line each.
  const std::string key = load_edited(text, "throughput_per_sm:", "throughput_sm:");
  CHECK(key.find("bad.yaml:") == 0);
  CHECK(key.find("unknown key") != std::string::npos);
  CHECK(key.find("dpx[0].throughput_sm") != std::string::npos);
  const std::string unit = load_edited(text, "median: \"4.50 cycles\"", "median: \"4.50 GB/s\"");
  CHECK(unit.find("bad.yaml:") == 0);
  CHECK(unit.find("dpx[0].latency.measured.median") != std::string::npos);
  CHECK(load_edited(text, "function: \"__vimax3_s32\"", "function: \"__vimax4_s32\"").find("not a DPX function") !=
        std::string::npos);
  CHECK(load_edited(text, "function: \"__viaddmax_s16x2\"", "function: \"__vimax3_s32\"").find("duplicate function") !=
        std::string::npos);
  CHECK(load_edited(text, "[2, \"63.88\"]", "[1, \"63.88\"]").find("blocks must grow") != std::string::npos);
  CHECK(load_edited(text, "[2, \"63.88\"]", "[2, \"-3\"]").find("must be positive") != std::string::npos);
  CHECK(load_edited(text, "[2, \"63.88\"]", "[2]").find("expected [blocks, calls per clock per SM]") != std::string::npos);
  // The line is the offending key's: the unknown key's line number in the text.
  const auto line_of = [&](const std::string& needle) {
    return 1 + std::count(text.begin(), text.begin() + static_cast<long>(text.find(needle)), '\n');
  };
  CHECK(key.find("bad.yaml:" + std::to_string(line_of("throughput_per_sm:")) + ":") == 0);
}

TEST_CASE("descriptor: calibrate's DPX merge keeps a paper's spec values beside new measurements") {
  HardwareDescriptor hw;
  DpxFunction paper;
  paper.function = "__vimax3_s32";
  paper.latency.spec = SpecValue{4, "a paper's figure, for the test"};
  hw.upsert_dpx(paper);
  DpxFunction run = measured_dpx("__vimax3_s32", 4.5, 63.5);
  run.sass.clear();
  hw.upsert_dpx(run);
  REQUIRE(hw.dpx.size() == 1);
  CHECK(hw.dpx[0].latency.spec.has_value());
  CHECK(hw.dpx[0].latency.measured->median == 4.5);
  CHECK(hw.dpx[0].by_blocks.size() == 6);
  hw.upsert_dpx(measured_dpx("__vimin3_s32", 4.5, 63.5));
  CHECK(hw.dpx.size() == 2);
}

TEST_CASE("shipped H800 descriptor: loads, the paper's DPX figures are plots only, so no DPX numbers") {
  const HardwareDescriptor h800 = load_descriptor(kHardware / "h800-pcie.yaml");
  // Luo et al. give the DPX latency and throughput as Figs. 6-7 (bar charts) and no number in the text:
  // nothing is shipped as a spec value, and a note says why.
  CHECK(h800.dpx.empty());
  CHECK(std::any_of(h800.notes.begin(), h800.notes.end(),
                    [](const std::string& n) { return n.find("DPX") != std::string::npos && n.find("Figs. 6-7") != std::string::npos; }));
}

TEST_CASE("show: a DPX group in the text and in --json") {
  const fs::path dir = test::scratch_dir("dpx", "show");
  HardwareDescriptor hw = load_descriptor(kReportData / "fixture-gpu.yaml");
  DpxFunction a = measured_dpx("__vimax3_s32", 4.5, 63.5);
  a.sass = "VIMNMX3";
  hw.upsert_dpx(a);
  const fs::path file = dir / "dpx-gpu.yaml";
  save_descriptor(hw, file);
  const auto j = test::run_ceiling("show --hw '" + file.string() + "' --json");
  REQUIRE(j.rc == 0);
  const json doc = json::parse(j.out);
  REQUIRE(doc["dpx"].size() == 1);
  CHECK(doc["dpx"][0]["function"] == "__vimax3_s32");
  CHECK(doc["dpx"][0]["sass"] == "VIMNMX3");
  CHECK(doc["dpx"][0]["latency"]["value"].get<double>() == 4.5);
  CHECK(doc["dpx"][0]["latency"]["source"] == "measured");
  CHECK(doc["dpx"][0]["throughput_per_sm"]["measured"]["probe"] == "dpx");
  CHECK(doc["dpx"][0]["by_blocks"][3]["blocks"] == 100);
  const double per_s = doc["dpx"][0]["throughput_per_s"].get<double>();
  CHECK(per_s == ceiling_test::Rel(63.5 * hw.identity.sm_count * *hw.sm_clock.value()));
  const auto t = test::run_ceiling("show --hw '" + file.string() + "'");
  REQUIRE(t.rc == 0);
  CHECK(t.out.find("DPX functions") != std::string::npos);
  CHECK(t.out.find("__vimax3_s32") != std::string::npos);
  CHECK(t.out.find("VIMNMX3") != std::string::npos);
  CHECK(t.out.find("101:32.3") != std::string::npos);
  // A descriptor without DPX figures has an empty list, and no group in the text.
  const auto none = test::run_ceiling("show --hw h800-pcie --json");
  REQUIRE(none.rc == 0);
  CHECK(json::parse(none.out)["dpx"].empty());
  CHECK(test::run_ceiling("show --hw h800-pcie").out.find("DPX functions (") == std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("report: the DPX table beside a paper's column, its section and the by-blocks plot") {
  const fs::path dir = test::scratch_dir("dpx", "report");
  const fs::path in_dir = dir / "in", out_dir = dir / "out";
  fs::create_directories(in_dir);
  HardwareDescriptor hw = load_descriptor(kReportData / "fixture-gpu.yaml");
  hw.upsert_dpx(measured_dpx("__vimax3_s32", 4.5, 63.5));
  hw.upsert_dpx(measured_dpx("__viaddmax_s32", 4.25, 62.5));
  save_descriptor(hw, in_dir / "fixture-gpu.yaml");
  std::ofstream(in_dir / "fixture-gpu.probes.json") << std::ifstream(kReportData / "fixture-gpu.probes.json").rdbuf();

  reports::ReportInput in = reports::load_report_input({in_dir / "fixture-gpu.yaml"}, {});
  // A paper's column (figures invented for the test: the shipped H800 file carries none, see above).
  reports::GpuInput paper;
  paper.descriptor_path = kHardware / "h800-pcie.yaml";
  paper.hw = load_descriptor(paper.descriptor_path);
  DpxFunction p;
  p.function = "__vimax3_s32";
  p.latency.spec = SpecValue{3, "figure invented for the test"};
  p.throughput_per_sm.spec = SpecValue{64, "figure invented for the test"};
  paper.hw.upsert_dpx(p);
  in.references.push_back(paper);
  reports::WriteOptions opt;
  opt.render_plots = false;
  const reports::ReportOutput out = reports::write_report(in, out_dir, opt);

  const json table = json::parse(std::ifstream(out_dir / "table-dpx.json"));
  bool ours = false, theirs = false, per_gpu = false, missing_row = false;
  for (const auto& row : table["rows"])
    for (const auto& c : row) {
      if (c.value("field", "") == "dpx:__vimax3_s32.latency" && c["gpu"] == "fixture-gpu" && c["source"] == "measured") {
        CHECK(c["value"].get<double>() == 4.5);
        ours = true;
      }
      if (c.value("field", "") == "dpx:__vimax3_s32.throughput_per_sm" && c["gpu"] == "h800-pcie" && c["source"] == "spec") {
        CHECK(c["value"].get<double>() == 64);
        theirs = true;
      }
      if (c.value("field", "") == "dpx:__vimax3_s32.throughput_per_s" && c["gpu"] == "fixture-gpu") {
        CHECK(c["value"].get<double>() == ceiling_test::Rel(63.5 * hw.identity.sm_count * *hw.sm_clock.value()));
        per_gpu = true;
      }
      if (c.value("field", "") == "dpx:__viaddmax_s32.latency" && c["gpu"] == "h800-pcie") missing_row = c["source"] == "missing";
    }
  CHECK(ours);
  CHECK(theirs);
  CHECK(per_gpu);
  CHECK(missing_row);  // a function the paper's column lacks is marked missing, never filled in
  const json rj = json::parse(std::ifstream(out_dir / "report.json"));
  bool section = false;
  for (const auto& s : rj["sections"]) section = section || s["id"] == "other-instructions";
  CHECK(section);
  bool plotted = false;
  for (const auto& pl : out.plots) plotted = plotted || pl.name == "dpx-fixture-gpu";
  CHECK(plotted);
  const std::string csv = test::slurp(out_dir / "dpx-fixture-gpu.csv");
  CHECK(csv.find("__viaddmax_s32,101,32.3") != std::string::npos);
  fs::remove_all(dir);
}
