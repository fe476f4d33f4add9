// Luo et al. Table XI beside our power figures (issue 14): the paper's P in the shipped H800 and
// A100 descriptors, its E against Table VII / P, our E per reading (probe details, else throughput /
// P), and the report's table-power, table-power-other and power-<id> plot.
#include <doctest/doctest.h>

#include "approx.hpp"
#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_run.hpp"
#include "model/descriptor.hpp"
#include "reports/power.hpp"
#include "reports/report.hpp"
#include "scratch.hpp"

using namespace ceiling;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const fs::path kHardware = fs::path(CEILING_SOURCE_DIR) / "hardware";
const fs::path kReportData = fs::path(CEILING_TEST_DATA_DIR) / "report";

const TensorInstruction* instruction(const HardwareDescriptor& hw, const std::string& key) {
  for (const auto& ti : hw.tensor_instructions)
    if (ti.key() == key) return &ti;
  return nullptr;
}

std::string two_decimals(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

MeasuredValue measured(double median, double spread, const std::string& probe, double clock_hz) {
  MeasuredValue m;
  m.median = median;
  m.min = median - spread;
  m.max = median + spread;
  m.repeats = 14;
  m.probe = probe;
  m.date = "2026-11-26T10:00:00Z";
  m.sm_clock_hz = clock_hz;
  m.note = "NVML energy counter (test)";
  return m;
}

TensorInstruction mma(const std::string& shape, Precision in, Precision acc, bool sparse) {
  TensorInstruction ti;
  ti.api = "mma";
  ti.shape = shape;
  ti.input = in;
  ti.accumulate = acc;
  ti.sparse = sparse;
  return ti;
}

// The report fixture GPU with power read under three instructions: FP16/FP16 dense (Table XI; its
// probe details give E), INT8 dense (Table XI; no details: E = throughput / P) and the fixture's FP64
// m8n8k4 (not in Table XI); probes.json also holds a dense wgmma reading the descriptor lacks.
struct PowerFixture {
  fs::path dir, yaml;
};
PowerFixture power_fixture(const std::string& tag) {
  PowerFixture f;
  f.dir = test::scratch_dir("power-table", tag);
  HardwareDescriptor hw = load_descriptor(kReportData / "fixture-gpu.yaml");
  TensorInstruction h = mma("m16n8k16", Precision::fp16, Precision::fp16, false);
  h.throughput.measured = measured(600e12, 2e12, "mma", 1.70e9);
  h.power.measured = measured(400, 2, "mma", 1.98e9);
  hw.upsert_instruction(h);
  TensorInstruction i = mma("m16n8k32", Precision::int8, Precision::int32, false);
  i.throughput.measured = measured(1200e12, 4e12, "mma", 1.75e9);
  i.power.measured = measured(480, 2, "mma", 1.95e9);
  hw.upsert_instruction(i);
  for (auto& ti : hw.tensor_instructions)
    if (ti.key() == "mma.m8n8k4.fp64.fp64") ti.power.measured = measured(300, 2, "mma", 1.80e9);
  f.yaml = f.dir / "fixture-gpu.yaml";
  save_descriptor(hw, f.yaml);
  json probes = json::parse(std::ifstream(kReportData / "fixture-gpu.probes.json"));
  probes["probes"]["mma"]["details"]["power"] = json::array(
      {{{"instruction", "mma.m16n8k16.fp16.fp16"}, {"watts", 400.1}, {"rate_during", 620e12},
        {"work_per_joule", 620e12 / 400.1}, {"sm_clock_hz", 1.98e9}, {"work_unit", "FLOP"}},
       // Another run's INT8 reading (its watts differ by more than 1%): not this reading's details.
       {{"instruction", "mma.m16n8k32.int8.int32"}, {"watts", 440.0}, {"rate_during", 1100e12},
        {"work_per_joule", 1100e12 / 440.0}, {"sm_clock_hz", 1.9e9}}});
  probes["probes"]["wgmma-sp"] = {
      {"date", "2026-11-26T10:00:00Z"},
      {"skipped", nullptr},
      {"details",
       {{"sparse_vs_dense",
         json::array({{{"dense", "wgmma.m64n256k16.fp16.fp32.ss"},
                       {"sparse", "wgmma.m64n256k32.fp16.fp32.ss.sp"},
                       {"power", {{"dense", {{"watts", 650.0}, {"rate_during", 780e12}, {"work_per_joule", 1.2e12},
                                             {"sm_clock_hz", 1.65e9}}}}}}})}}}};
  std::ofstream(f.dir / "fixture-gpu.probes.json") << probes.dump(1);
  return f;
}

// The cell of table JSON `t` with this field and GPU ("" for the paper's cells).
const json* cell(const json& t, const std::string& field, const std::string& gpu = "") {
  for (const auto& row : t["rows"])
    for (const auto& c : row)
      if (c.value("field", "") == field && c.value("gpu", "") == gpu) return &c;
  return nullptr;
}

}  // namespace

TEST_CASE("Table XI: the shipped H800 and A100 descriptors carry the paper's P as power spec") {
  const HardwareDescriptor h800 = load_descriptor(kHardware / "h800-pcie.yaml");
  const HardwareDescriptor a100 = load_descriptor(kHardware / "a100-80gb.yaml");
  for (const HardwareDescriptor* hw : {&h800, &a100}) {
    REQUIRE(hw->references.count("luo-hopper-t11") == 1);
    CHECK(hw->references.at("luo-hopper-t11").find("Table XI") != std::string::npos);
  }
  const auto& rows = reports::luo_table_xi();
  REQUIRE(rows.size() == 8);
  for (const auto& r : rows) {
    CAPTURE(r.key());
    const TensorInstruction* h = instruction(h800, r.key());
    const TensorInstruction* a = instruction(a100, r.key());
    REQUIRE(h);
    REQUIRE(a);
    REQUIRE(h->power.spec);
    REQUIRE(a->power.spec);
    CHECK(h->power.spec->value == r.watts[1]);
    CHECK(a->power.spec->value == r.watts[0]);
    CHECK(h->power.spec->reference == "luo-hopper-t11");
    CHECK(a->power.spec->reference == "luo-hopper-t11");
    CHECK_FALSE(h->power.measured);  // the paper's figures only
  }
  // Concrete rows, as printed.
  CHECK(instruction(h800, "mma.m16n8k16.fp16.fp16")->power.spec->value == 188.6);
  CHECK(instruction(h800, "mma.m16n8k64.int8.int32.sp")->power.spec->value == 163.3);
  CHECK(instruction(h800, "mma.m16n8k8.tf32.fp32")->power.spec->value == 254.9);
  CHECK(instruction(a100, "mma.m16n8k16.fp16.fp16")->power.spec->value == 173.4);
  CHECK(instruction(a100, "mma.m16n8k16.tf32.fp32.sp")->power.spec->value == 235.7);
  // No other instruction has a power spec; the H800 file keeps its 28 rows (all eight existed).
  int with_power = 0;
  for (const auto& ti : h800.tensor_instructions) with_power += ti.power.spec.has_value();
  CHECK(with_power == 8);
  CHECK(h800.tensor_instructions.size() == 28);
  // The A100 note says whose card it is.
  bool pcie = false;
  for (const auto& n : a100.notes) pcie = pcie || (n.find("Table XI") != std::string::npos && n.find("A100 PCIe") != std::string::npos);
  CHECK(pcie);
  CHECK(reports::paper_power_gpus()[1].name == "H800 PCIe");
  CHECK(reports::paper_power_gpus()[1].id == "h800-pcie");
}

TEST_CASE("Table XI: E = Table VII throughput / P reproduces every printed E (all 24), and the text's ratios") {
  // Reproduces: every one of the 24 printed E values (A100, H800, RTX 4090 x 8 rows) is the same row's
  // Table VII throughput / P rounded to two decimals, within 0.005. Nothing fails to reproduce.
  const HardwareDescriptor h800 = load_descriptor(kHardware / "h800-pcie.yaml");
  const HardwareDescriptor a100 = load_descriptor(kHardware / "a100-80gb.yaml");
  // Table VII, RTX 4090 column (no descriptor ships it), in luo_table_xi() order.
  const std::array<double, 8> rtx4090_t7{357.6, 711.8, 178.9, 356.0, 89.0, 178.7, 711.7, 1423};
  const auto& rows = reports::luo_table_xi();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    CAPTURE(r.key());
    const TensorInstruction* h = instruction(h800, r.key());
    const TensorInstruction* a = instruction(a100, r.key());
    REQUIRE(h->throughput.spec);
    REQUIRE(a->throughput.spec);
    CHECK(h->throughput.spec->reference == "luo-hopper-t7");
    CHECK(a->throughput.spec->reference == "luo-hopper-t7");
    const double e_h800 = h->throughput.spec->value / 1e12 / h->power.spec->value;
    const double e_a100 = a->throughput.spec->value / 1e12 / a->power.spec->value;
    const double e_4090 = rtx4090_t7[i] / r.watts[2];
    CHECK(std::abs(e_h800 - r.per_watt[1]) < 0.005);
    CHECK(std::abs(e_a100 - r.per_watt[0]) < 0.005);
    CHECK(std::abs(e_4090 - r.per_watt[2]) < 0.005);
    CHECK(two_decimals(e_h800) == two_decimals(r.per_watt[1]));
    CHECK(two_decimals(e_a100) == two_decimals(r.per_watt[0]));
    CHECK(two_decimals(e_4090) == two_decimals(r.per_watt[2]));
  }
  // The brief's example: H800 FP16/FP16 dense, 494.4 / 188.6 = 2.62.
  CHECK(494.4 / 188.6 == ceiling_test::Rel(2.6214).epsilon(1e-4));
  CHECK(rows[0].per_watt[1] == 2.62);
  CHECK(rows[7].per_watt[1] == 8.79);
  CHECK(rows[4].per_watt[0] == 0.71);
  CHECK(rows[5].per_watt[2] == 0.95);
  // §IV-C's "1.60 and 1.69 times" (dense) and "1.33 and 1.39 times" (sparse): ratios of the mean E.
  double mean[2][3] = {};
  for (const auto& r : rows)
    for (int g = 0; g < 3; ++g) mean[r.sparse][g] += r.per_watt[g] / 4;
  CHECK(two_decimals(mean[0][1] / mean[0][0]) == "1.60");
  CHECK(two_decimals(mean[0][1] / mean[0][2]) == "1.69");
  CHECK(two_decimals(mean[1][1] / mean[1][0]) == "1.33");
  CHECK(two_decimals(mean[1][1] / mean[1][2]) == "1.39");
}

TEST_CASE("power readings: E from the probe's details of the same reading, else throughput / P, no clock ratio") {
  const PowerFixture f = power_fixture("readings");
  const reports::ReportInput in = reports::load_report_input({f.yaml}, {});
  REQUIRE(in.gpus.size() == 1);
  const auto rs = reports::power_readings(in.gpus[0]);
  const auto find = [&](const std::string& key) -> const reports::PowerReading* {
    for (const auto& r : rs)
      if (r.key == key) return &r;
    return nullptr;
  };
  REQUIRE(rs.size() == 4);
  const auto* h = find("mma.m16n8k16.fp16.fp16");
  REQUIRE(h);
  CHECK(h->source == reports::EfficiencySource::probe_details);
  CHECK(h->watts == 400);
  CHECK(*h->per_watt == ceiling_test::Rel(620e12 / 400.1));
  CHECK(h->sm_clock_hz == 1.98e9);
  REQUIRE(h->measured);
  // INT8: the details are of another run (440 W against 480 W): E = throughput / P, not x 1.95/1.75.
  const auto* i = find("mma.m16n8k32.int8.int32");
  REQUIRE(i);
  CHECK(i->source == reports::EfficiencySource::throughput_over_power);
  CHECK(*i->per_watt == ceiling_test::Rel(2.5e12));
  CHECK(i->input == Precision::int8);
  // FP64: no details, throughput 52 TFLOP/s / 300 W.
  const auto* d = find("mma.m8n8k4.fp64.fp64");
  REQUIRE(d);
  CHECK(*d->per_watt == ceiling_test::Rel(52e12 / 300));
  // The dense wgmma partner: probes.json only.
  const auto* w = find("wgmma.m64n256k16.fp16.fp32.ss");
  REQUIRE(w);
  CHECK(w->measured == nullptr);
  CHECK(w->probe == "wgmma-sp");
  CHECK(w->watts == 650);
  CHECK(*w->per_watt == 1.2e12);
  CHECK(w->sm_clock_hz == 1.65e9);
  fs::remove_all(f.dir);
}

TEST_CASE("power readings of the shipped H200: probe details give E, else the descriptor's sustained / P, else throughput / P") {
  const reports::ReportInput in = reports::load_report_input({kHardware / "h200.yaml"}, {});
  REQUIRE(in.gpus.size() == 1);
  REQUIRE(in.gpus[0].probes);
  // The expected figures come from the shipped files themselves (re-calibrations change them).
  const HardwareDescriptor hw = load_descriptor(kHardware / "h200.yaml");
  const json probes = json::parse(std::ifstream(kHardware / "h200.probes.json"));
  const auto instruction = [&](const std::string& key) -> const TensorInstruction* {
    for (const auto& ti : hw.tensor_instructions)
      if (ti.key() == key) return &ti;
    return nullptr;
  };
  const auto details_of = [&](const std::string& probe, const std::string& key) {
    json found;
    for (const auto& row : probes["probes"][probe]["details"]["power"])
      if (row.value("instruction", "") == key) found = row;
    return found;
  };
  const auto rs = reports::power_readings(in.gpus[0]);
  for (const std::string key : {"mma.m16n8k16.fp16.fp16", "wgmma.m64n256k32.int8.int32.ss"}) {
    CAPTURE(key);
    const TensorInstruction* ti = instruction(key);
    REQUIRE(ti);
    REQUIRE(ti->power.measured);
    REQUIRE(ti->sustained.measured);
    const json d = details_of(key.rfind("wgmma", 0) == 0 ? "wgmma" : "mma", key);
    REQUIRE(d.contains("work_per_joule"));
    const reports::PowerReading* r = nullptr;
    for (const auto& x : rs)
      if (x.key == key) r = &x;
    REQUIRE(r);
    REQUIRE(r->measured);  // from the descriptor, not only from the details
    CHECK(r->measured->median == ti->power.measured->median);
    CHECK(r->watts == ti->power.measured->median);
    CHECK(r->source == reports::EfficiencySource::probe_details);
    CHECK(*r->per_watt == ceiling_test::Rel(d["work_per_joule"].get<double>()).epsilon(1e-9));
    // The descriptor keeps the same reading's rate: sustained / P is E to the rounding of P.
    CHECK(ti->sustained.measured->median / ti->power.measured->median ==
          ceiling_test::Rel(d["work_per_joule"].get<double>()).epsilon(0.01));
  }
  // Without probes.json: the descriptor's sustained / P; without that too, throughput / P.
  reports::GpuInput bare = in.gpus[0];
  bare.probes.reset();
  const TensorInstruction* fp16 = instruction("mma.m16n8k16.fp16.fp16");
  for (const auto& r : reports::power_readings(bare))
    if (r.key == "mma.m16n8k16.fp16.fp16") {
      CHECK(r.source == reports::EfficiencySource::sustained_over_power);
      CHECK(*r.per_watt == ceiling_test::Rel(fp16->sustained.measured->median / fp16->power.measured->median).epsilon(1e-12));
    }
  for (auto& ti : bare.hw.tensor_instructions) ti.sustained = Field{Dimension::flop_per_second};
  for (const auto& r : reports::power_readings(bare))
    if (r.key == "mma.m16n8k16.fp16.fp16") {
      CHECK(r.source == reports::EfficiencySource::throughput_over_power);
      CHECK(*r.per_watt == ceiling_test::Rel(fp16->throughput.measured->median / fp16->power.measured->median).epsilon(1e-12));
    }
}

TEST_CASE("report: table-power beside Luo et al.'s A100, H800 and RTX 4090, the other table, the plot, the section") {
  const PowerFixture f = power_fixture("report");
  const fs::path out_dir = f.dir / "out";
  const reports::ReportInput in = reports::load_report_input({f.yaml}, {});
  reports::WriteOptions opt;
  opt.render_plots = false;
  const reports::ReportOutput out = reports::write_report(in, out_dir, opt);

  const json t = json::parse(std::ifstream(out_dir / "table-power.json"));
  REQUIRE(t["rows"].size() == 2);  // FP16/FP16 D and INT8 D: the rows this GPU measured
  CHECK(t["caption"].get<std::string>().find("left out") != std::string::npos);
  const json* p = cell(t, "tensor:mma.m16n8k16.fp16.fp16.power", "fixture-gpu");
  REQUIRE(p);
  CHECK((*p)["value"].get<double>() == 400);
  CHECK((*p)["text"] == "400 W");
  const json* e = cell(t, "tensor:mma.m16n8k16.fp16.fp16.power.per_watt", "fixture-gpu");
  REQUIRE(e);
  CHECK((*e)["value"].get<double>() == ceiling_test::Rel(620.0 / 400.1));
  CHECK((*e)["text"] == "1.55");
  const json* ie = cell(t, "tensor:mma.m16n8k32.int8.int32.power.per_watt", "fixture-gpu");
  REQUIRE(ie);
  CHECK((*ie)["text"] == "2.5");
  const json* clk = cell(t, "tensor:mma.m16n8k16.fp16.fp16.power.sm_clock", "fixture-gpu");
  REQUIRE(clk);
  CHECK((*clk)["text"] == "1.98 GHz");
  // The paper's cells of both rows.
  const auto paper = [&](const std::string& gpu, const std::string& key, const char* what) {
    const json* c = cell(t, "paper:luo-t11." + gpu + "." + key + "." + what);
    REQUIRE(c);
    CHECK((*c)["source"] == "spec");
    return (*c)["value"].get<double>();
  };
  CHECK(paper("H800 PCIe", "mma.m16n8k16.fp16.fp16", "power") == 188.6);
  CHECK(paper("H800 PCIe", "mma.m16n8k16.fp16.fp16", "per_watt") == 2.62);
  CHECK(paper("A100 PCIe", "mma.m16n8k16.fp16.fp16", "power") == 173.4);
  CHECK(paper("A100 PCIe", "mma.m16n8k16.fp16.fp16", "per_watt") == 1.79);
  CHECK(paper("RTX 4090", "mma.m16n8k16.fp16.fp16", "power") == 189.1);
  CHECK(paper("RTX 4090", "mma.m16n8k16.fp16.fp16", "per_watt") == 1.89);
  CHECK(paper("H800 PCIe", "mma.m16n8k32.int8.int32", "per_watt") == 5.92);
  CHECK(cell(t, "paper:luo-t11.H800 PCIe.mma.m16n8k32.fp16.fp16.sp.power") == nullptr);  // not measured: left out

  const json o = json::parse(std::ifstream(out_dir / "table-power-other.json"));
  REQUIRE(o["rows"].size() == 2);
  CHECK(o["rows"][0][0]["text"] == "mma.m8n8k4.fp64.fp64");
  CHECK(o["rows"][1][0]["text"] == "wgmma.m64n256k16.fp16.fp32.ss");
  const json* we = cell(o, "tensor:wgmma.m64n256k16.fp16.fp32.ss.power.per_watt", "fixture-gpu");
  REQUIRE(we);
  CHECK((*we)["text"] == "1.2");

  // One document: the Markdown row has ours and the paper's figures.
  const std::string md = test::slurp(out_dir / "report.md");
  CHECK(md.find("## Tensor-core power and energy efficiency (Luo et al. Table XI)") != std::string::npos);
  CHECK(md.find("| **FP16** | **FP16** | **D** | **mma.m16n8k16.fp16.fp16** | 400 W [") != std::string::npos);
  CHECK(md.find("| 173.4 W [") != std::string::npos);
  CHECK(md.find("| 2.62 [") != std::string::npos);
  const std::string html = test::slurp(out_dir / "index.html");
  CHECK(html.find("id=\"power\"") != std::string::npos);
  const json rj = json::parse(std::ifstream(out_dir / "report.json"));
  bool section = false;
  for (const auto& s : rj["sections"]) section = section || s["id"] == "power";
  CHECK(section);

  bool plotted = false;
  for (const auto& pl : out.plots) plotted = plotted || pl.name == "power-fixture-gpu";
  CHECK(plotted);
  const std::string csv = test::slurp(out_dir / "power-fixture-gpu.csv");
  CHECK(csv.find("mma.m16n8k16.fp16.fp16,FP16/FP16 D,") != std::string::npos);
  CHECK(csv.find(",400,2.62,1.79,1.89\n") != std::string::npos);
  CHECK(csv.find("mma.m16n8k32.int8.int32,INT8/INT32 D,") != std::string::npos);
  CHECK(csv.find(",480,5.92,3.41,3.53\n") != std::string::npos);
  const std::string gp = test::slurp(out_dir / "power-fixture-gpu.gp");
  CHECK(gp.find("H800 PCIe (Luo et al.)") != std::string::npos);
  fs::remove_all(f.dir);
}

TEST_CASE("report: a descriptor without power gives no power rows, no section, and says how to measure it") {
  const fs::path dir = test::scratch_dir("power-table", "none");
  const reports::ReportInput in = reports::load_report_input({kReportData / "fixture-gpu.yaml"}, {});
  reports::WriteOptions opt;
  opt.render_plots = false;
  const reports::ReportOutput out = reports::write_report(in, dir / "out", opt);
  const json t = json::parse(std::ifstream(dir / "out" / "table-power.json"));
  CHECK(t["rows"].empty());
  CHECK(t["caption"].get<std::string>().find("ceiling calibrate --power") != std::string::npos);
  const json o = json::parse(std::ifstream(dir / "out" / "table-power-other.json"));
  CHECK(o["rows"].empty());
  const json rj = json::parse(std::ifstream(dir / "out" / "report.json"));
  for (const auto& s : rj["sections"]) CHECK(s["id"] != "power");
  for (const auto& pl : out.plots) CHECK(pl.name.rfind("power-", 0) != 0);
  // The hint sits in the tensor-core section.
  const std::string md = test::slurp(dir / "out" / "report.md");
  const auto tensor = md.find("## Tensor cores");
  const auto hint = md.find("Power under tensor-core load (Luo et al. Table XI): no GPU of this report has it measured");
  REQUIRE(tensor != std::string::npos);
  REQUIRE(hint != std::string::npos);
  CHECK(hint > tensor);
  CHECK(md.find("`ceiling calibrate --power`", hint) != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("show: the paper's H800 P and E beside the power of Table XI's rows") {
  const auto h = test::run_ceiling("show --hw h800-pcie");
  REQUIRE(h.rc == 0);
  CHECK(h.out.find("Power under tensor-core load") != std::string::npos);
  // The spec row: 494.4 TFLOP/s / 188.6 W, and the paper's figures beside it.
  CHECK(h.out.find("188.6 W, 2.62 TFLOP/s per W") != std::string::npos);
  // Twice on that row: the descriptor's own E (its spec throughput / spec power) and the paper's printed one.
  std::size_t twice = 0;
  for (auto at = h.out.find("2.62 TFLOP/s per W"); at != std::string::npos; at = h.out.find("2.62 TFLOP/s per W", at + 1)) ++twice;
  CHECK(twice == 2);
  CHECK(h.out.find("165.3 W, 5.92 TOP/s per W") != std::string::npos);
  CHECK(h.out.find("spec luo-hopper-t11") != std::string::npos);
  const auto j = json::parse(test::run_ceiling("show --hw h800-pcie --json").out);
  bool found = false;
  for (const auto& ti : j["tensor_instructions"])
    if (ti["key"] == "mma.m16n8k16.fp16.fp16") found = ti["power"]["spec"]["value"].get<double>() == 188.6;
  CHECK(found);
  const auto h200 = test::run_ceiling("show --hw h200");
  REQUIRE(h200.rc == 0);
  CHECK(h200.out.find("188.6 W, 2.62 TFLOP/s per W") != std::string::npos);
  const HardwareDescriptor shipped = load_descriptor(kHardware / "h200.yaml");
  for (const auto& ti : shipped.tensor_instructions)
    if (ti.key() == "mma.m16n8k16.fp16.fp16") {
      REQUIRE(ti.power.measured);
      CHECK(h200.out.find(format_quantity(ti.power.measured->median, Dimension::watts)) != std::string::npos);
    }
}
