// Issue 13's numeric figures in the outputs: the descriptor's `numerics` entries (strict, with
// provenance, exact round trip), the shipped paper figures (Sun et al. Tables 12-15), `show` and
// the report's tables and chain plot.
#include <doctest/doctest.h>

#include "approx.hpp"
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "cli_run.hpp"
#include "model/descriptor.hpp"
#include "reports/report.hpp"
#include "scratch.hpp"

using namespace ceiling;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const fs::path kHardware = fs::path(CEILING_SOURCE_DIR) / "hardware";
const fs::path kReportData = fs::path(CEILING_TEST_DATA_DIR) / "report";

TensorInstruction measured_numerics() {
  TensorInstruction ti;
  ti.api = "mma";
  ti.shape = "m16n8k8";
  ti.input = Precision::bf16;
  ti.accumulate = Precision::fp32;
  NumericBehaviour nb;
  nb.verdicts = {{"products", "exact"}, {"block", "8"}, {"extra_bits", "3"}, {"rounding", "RZ"},
                 {"c_added", "inside the first block"}, {"subnormal_ab", "kept"}};
  nb.summary = "products exact; block 8; extra_bits 3; rounding RZ";
  nb.errors["multiplication"] = {{"init_low", 0.0}, {"init_fp32", 0.00131}};
  nb.errors["accumulation"] = {{"init_low", 2.07e-08}, {"init_fp32", 0.00114}};
  nb.cases = 1095;
  nb.models = 1;
  nb.samples = 1000;
  nb.probe = "mma-numerics";
  nb.date = "2026-11-25T15:00:00Z";
  nb.note = "the same bits in two runs";
  ti.numerics = nb;
  return ti;
}

const NumericBehaviour* numerics_of(const HardwareDescriptor& d, const std::string& key) {
  for (const auto& ti : d.tensor_instructions)
    if (ti.key() == key && ti.numerics) return &*ti.numerics;
  return nullptr;
}

}  // namespace

TEST_CASE("descriptor: numerics load strictly, keep their provenance and round-trip exactly") {
  HardwareDescriptor hw = load_descriptor(kReportData / "fixture-gpu.yaml");
  hw.upsert_numerics(measured_numerics());
  const std::string text = to_yaml(hw);
  CHECK(text.find("numerics:") != std::string::npos);
  const HardwareDescriptor back = parse_descriptor(text, "numerics.yaml");
  const NumericBehaviour* nb = numerics_of(back, "mma.m16n8k8.bf16.fp32");
  REQUIRE(nb != nullptr);
  CHECK(*nb == *measured_numerics().numerics);
  CHECK(nb->errors.at("accumulation").at("init_low") == 2.07e-08);  // shortest text, read back bit for bit
  CHECK(back == hw);
  CHECK(to_yaml(back) == text);

  const auto broken = [&](const std::string& from, const std::string& to) {
    std::string s = text;
    const auto at = s.find(from);
    REQUIRE_MESSAGE(at != std::string::npos, from);
    s.replace(at, from.size(), to);
    try {
      parse_descriptor(s, "bad.yaml");
    } catch (const DescriptorError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(broken("rounding: \"RZ\"", "roundng: \"RZ\"").find("unknown verdict") != std::string::npos);
  CHECK(broken("init_fp32: 0.00114", "init_fp32: -0.00114").find("not negative") != std::string::npos);
  CHECK(broken("init_fp32: 0.00114", "init_fp32: lots").find("is not a number") != std::string::npos);
  CHECK(broken("accumulation: {", "accumulate: {").find("unknown key") != std::string::npos);
  CHECK(broken("probe: \"mma-numerics\"", "ref: \"sun-dissecting\"").find("not both") != std::string::npos);
  CHECK(broken("probe: \"mma-numerics\"", "prob: \"mma-numerics\"").find("unknown key") != std::string::npos);
  const std::string e = broken("date: \"2026-11-25T15:00:00Z\"\n      note", "note");
  CHECK(e.find("numerics.date") != std::string::npos);
  CHECK(e.find("required key is missing") != std::string::npos);
}

TEST_CASE("descriptor: a timing probe's entry keeps the numerics, a numerics entry keeps the timings") {
  HardwareDescriptor hw;
  TensorInstruction timed;
  timed.api = "mma";
  timed.shape = "m16n8k8";
  timed.input = Precision::bf16;
  timed.accumulate = Precision::fp32;
  timed.latency.measured = MeasuredValue{33, 33, 33, 5, 0, "mma", "2026-11-25T14:00:00Z", 0, false, ""};
  hw.upsert_instruction(timed);
  hw.upsert_numerics(measured_numerics());
  REQUIRE(hw.tensor_instructions.size() == 1);
  CHECK(hw.tensor_instructions[0].latency.measured.has_value());
  CHECK(hw.tensor_instructions[0].numerics.has_value());
  hw.upsert_instruction(timed);  // a later mma run
  CHECK(hw.tensor_instructions[0].numerics.has_value());
  TensorInstruction other = measured_numerics();
  other.input = Precision::fp16;
  hw.upsert_numerics(other);  // no timed entry of that key yet: appended
  CHECK(hw.tensor_instructions.size() == 2);
}

TEST_CASE("shipped A100 descriptor: Sun et al. Tables 12-15 as the paper's figures") {
  const HardwareDescriptor a100 = load_descriptor(kHardware / "a100-80gb.yaml");
  const NumericBehaviour* bf = numerics_of(a100, "mma.m16n8k8.bf16.fp32");
  REQUIRE(bf != nullptr);
  CHECK(bf->reference == "sun-dissecting");
  CHECK(bf->probe.empty());
  CHECK(bf->errors.at("accumulation").at("init_low") == 1.89e-08);  // Table 12
  CHECK(bf->errors.at("multiplication").at("init_fp32") == 1.29e-03);
  const NumericBehaviour* h16 = numerics_of(a100, "mma.m16n8k8.fp16.fp16");
  REQUIRE(h16 != nullptr);
  CHECK(h16->errors.at("inner_product").at("init_fp32") == 2.99e-04);  // Table 14, CPU_FP32
  CHECK(h16->errors_out.at("inner_product").at("init_low") == 0.0);     // Table 14, CPU_FP32cvtFP16
  CHECK(numerics_of(a100, "mma.m16n8k8.tf32.fp32")->errors.at("inner_product").at("init_fp32") == 2.17e-04);  // Table 15
  CHECK(numerics_of(a100, "mma.m16n8k8.fp16.fp32")->errors.at("accumulation").at("init_fp32") == 1.36e-04);   // Table 13
}

TEST_CASE("show: the numeric verdicts and the Tables 12-15 layout, text and --json") {
  const auto r = test::run_ceiling("show --hw a100-80gb");
  REQUIRE(r.rc == 0);
  CHECK(r.out.find("Numeric behaviour of the tensor instructions") != std::string::npos);
  CHECK(r.out.find("mma.m16n8k8.bf16.fp32: A x B inside the tensor cores") != std::string::npos);
  CHECK(r.out.find("1.89e-08") != std::string::npos);
  const auto j = test::run_ceiling("show --hw a100-80gb --json");
  REQUIRE(j.rc == 0);
  const json doc = json::parse(j.out);
  bool found = false;
  for (const auto& ti : doc["tensor_instructions"])
    if (ti["key"] == "mma.m16n8k8.bf16.fp32") {
      found = true;
      CHECK(ti["numerics"]["errors"]["accumulation"]["init_low"].get<double>() == 1.89e-08);
      CHECK(ti["numerics"]["ref"] == "sun-dissecting");
    }
  CHECK(found);
}

TEST_CASE("report: numeric tables beside the paper's A100 column, and the chain plot") {
  const fs::path dir = test::scratch_dir("numerics", "report");
  const fs::path in_dir = dir / "in", out_dir = dir / "out";
  fs::create_directories(in_dir);
  HardwareDescriptor hw = load_descriptor(kReportData / "fixture-gpu.yaml");
  hw.upsert_numerics(measured_numerics());
  // Sparse mma beside its dense twin, and bank-conflict latencies (the sparse and conflict plots).
  auto measured = [](double v, const char* probe) {
    MeasuredValue m;
    m.median = m.min = m.max = v;
    m.repeats = 7;
    m.probe = probe;
    m.date = "2026-11-25T15:00:00Z";
    return m;
  };
  for (const bool sparse : {false, true})
    for (const char* shape : {"m16n8k16", "m16n8k32"}) {
      if (!sparse && std::string(shape) == "m16n8k32") continue;  // no dense k32: the sparse k32 is set beside k16
      TensorInstruction ti;
      ti.api = "mma";
      ti.shape = shape;
      ti.input = Precision::fp16;
      ti.accumulate = Precision::fp32;
      ti.sparse = sparse;
      ti.throughput.measured = measured(sparse ? (std::string(shape) == "m16n8k32" ? 1.5e15 : 1.0e15) : 1.0e15, "mma");
      hw.upsert_instruction(ti);
    }
  for (const auto& [name, v] : std::vector<std::pair<std::string, double>>{
           {"ld_u32_latency_1way", 29}, {"ld_u32_latency_2way", 31}, {"ld_u32_latency_32way", 91}, {"ld_u64_latency_2way", 31}})
    hw.field("memory.shared.extra." + name).dimension = Dimension::cycles,
        hw.set_measured("memory.shared.extra." + name, measured(v, "shared-access"));
  save_descriptor(hw, in_dir / "fixture-gpu.yaml");
  json probes = json::parse(std::ifstream(kReportData / "fixture-gpu.probes.json"));
  json chains = json::array();
  for (int len = 1; len <= 4; ++len)
    for (const char* init : {"low", "fp32"})
      chains.push_back({{"instruction", "mma.m16n8k8.bf16.fp32"}, {"input", "bf16"}, {"init", init}, {"length", len},
                        {"mean_rel_err", 1e-3 * len * (init[0] == 'f' ? 2 : 1)}, {"chains", 1000}, {"overflowed", 0}});
  probes["probes"]["mma-numerics"] = {{"date", "2026-11-25T15:00:00Z"}, {"skipped", nullptr}, {"details", {{"chains", chains}}}};
  std::ofstream(in_dir / "fixture-gpu.probes.json") << probes.dump(1);

  reports::ReportInput in = reports::load_report_input({in_dir / "fixture-gpu.yaml"}, {});
  reports::GpuInput paper;
  paper.descriptor_path = kHardware / "a100-80gb.yaml";
  paper.hw = load_descriptor(paper.descriptor_path);
  in.references.push_back(paper);
  const reports::ReportOutput out = reports::write_report(in, out_dir);

  const json errors = json::parse(std::ifstream(out_dir / "table-numerics-errors.json"));
  bool ours = false, theirs = false;
  for (const auto& row : errors["rows"])
    for (const auto& c : row) {
      if (!c.contains("value")) continue;
      if (c["gpu"] == "fixture-gpu" && c["field"] == "numerics:mma.m16n8k8.bf16.fp32.errors.accumulation.init_low") {
        CHECK(c["value"].get<double>() == 2.07e-08);
        CHECK(c["source"] == "measured");
        ours = true;
      }
      if (c["gpu"] == "a100-80gb" && c["field"] == "numerics:mma.m16n8k8.bf16.fp32.errors.accumulation.init_low") {
        CHECK(c["value"].get<double>() == 1.89e-08);
        CHECK(c["source"] == "spec");
        theirs = true;
      }
    }
  CHECK(ours);
  CHECK(theirs);
  // Sun et al. Table 10 beside it (the shared-access table takes the paper's column too).
  const json shared = json::parse(std::ifstream(out_dir / "table-shared-access.json"));
  bool table10 = false;
  for (const auto& row : shared["rows"])
    for (const auto& c : row)
      if (c.contains("value") && c["gpu"] == "a100-80gb" && c["field"] == "memory.shared.extra.ld_u32_latency_8way") {
        CHECK(c["value"].get<double>() == 37.0);
        CHECK(c["source"] == "spec");
        table10 = true;
      }
  CHECK(table10);
  const json verdicts = json::parse(std::ifstream(out_dir / "table-numerics.json"));
  CHECK(verdicts.dump().find("extra_bits 3") != std::string::npos);
  CHECK(fs::is_regular_file(out_dir / "chain-fixture-gpu.csv"));
  bool plotted = false;
  for (const auto& p : out.plots)
    if (p.name == "chain-fixture-gpu") plotted = true;
  CHECK(plotted);
  {
    // Sparse plot: k16 against its dense twin (ratio 1), k32 against the fastest dense shape (1.5).
    const json sp = json::parse(std::ifstream(out_dir / "sparse-fixture-gpu.json"));
    std::map<std::string, double> ratio;
    for (const auto& e : sp["pairs"]) ratio[e["sparse"].get<std::string>()] = e["ratio"].get<double>();
    CHECK(ratio.at("mma.m16n8k16.fp16.fp32.sp") == ceiling_test::Rel(1.0));
    CHECK(ratio.at("mma.m16n8k32.fp16.fp32.sp") == ceiling_test::Rel(1.5));
    const json bc = json::parse(std::ifstream(out_dir / "bank-conflicts-fixture-gpu.json"));
    REQUIRE(bc["latency"].size() == 4);
    CHECK(bc["latency"][2]["ways"] == 32);
    CHECK(bc["latency"][2]["cycles"].get<double>() == 91.0);
  }
  const std::string html = [&] {
    std::ifstream f(out_dir / "index.html");
    return std::string(std::istreambuf_iterator<char>(f), {});
  }();
  CHECK(html.find("Tensor-core numeric errors") != std::string::npos);
  fs::remove_all(dir);
}
