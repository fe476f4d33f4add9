#include <doctest/doctest.h>

#include "approx.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "model/descriptor.hpp"

using namespace ceiling;
namespace fs = std::filesystem;

namespace {

const fs::path kHardware = fs::path(CEILING_SOURCE_DIR) / "hardware";
const fs::path kBroken = fs::path(CEILING_TEST_DATA_DIR) / "broken";

std::vector<fs::path> shipped() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(kHardware))
    if (e.path().extension() == ".yaml") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// The line of a fixture that carries the "# expect:" marker (a cross-check of the table below).
int marker_line(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (line.find("# expect:") != std::string::npos) return n;
  return -1;
}

const char* kMinimal = R"(schema: ceiling/hardware/1
identity:
  name: "Test GPU"
  sm_count: 10
memory:
  dram:
    bandwidth:
      spec: {value: "1 TB/s", ref: "a datasheet"}
)";

}  // namespace

TEST_CASE("descriptor: enum names round-trip") {
  for (auto p : {Precision::fp64, Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16, Precision::fp8,
                 Precision::int8, Precision::int4, Precision::int32})
    CHECK(parse_precision(to_string(p)) == p);
  CHECK(parse_compute_unit("tensor_core") == ComputeUnit::tensor_core);
  CHECK(parse_memory_level("shared") == MemoryLevelKind::shared);
  CHECK(to_string(MemoryLevelKind::l2) == "l2");
  CHECK_THROWS_AS(parse_precision("fp128"), std::invalid_argument);
  CHECK_THROWS_AS(parse_compute_unit("cuda"), std::invalid_argument);
  CHECK_THROWS_AS(parse_memory_level("l3"), std::invalid_argument);
  CHECK(bytes_per_value(Precision::fp64) == 8);
  CHECK(bytes_per_value(Precision::tf32) == 4);
  CHECK(bytes_per_value(Precision::bf16) == 2);
  CHECK(bytes_per_value(Precision::fp8) == 1);
  CHECK(parse_source_preference("auto") == SourcePreference::measured_else_spec);
  CHECK(parse_source_preference("spec") == SourcePreference::spec);
  CHECK(parse_source_preference("measured") == SourcePreference::measured);
  CHECK_THROWS_AS(parse_source_preference("best"), std::invalid_argument);
}

TEST_CASE("descriptor: field value and source follow the preference") {
  Field f{Dimension::bytes_per_second};
  CHECK_FALSE(f.present());
  CHECK_FALSE(f.value().has_value());
  CHECK(f.source() == "missing");
  f.spec = SpecValue{4.8e12, "datasheet"};
  CHECK(*f.value() == 4.8e12);
  CHECK(f.source() == "spec");
  CHECK_FALSE(f.value(SourcePreference::measured).has_value());
  CHECK(f.source(SourcePreference::measured) == "missing");
  MeasuredValue m;
  m.median = 4.1e12;
  f.measured = m;
  CHECK(*f.value() == 4.1e12);
  CHECK(f.source() == "measured");
  CHECK(*f.value(SourcePreference::spec) == 4.8e12);
  CHECK(f.source(SourcePreference::spec) == "spec");
}

TEST_CASE("descriptor: instruction keys") {
  TensorInstruction ti;
  ti.api = "mma";
  ti.shape = "m8n8k4";
  CHECK(ti.key() == "mma.m8n8k4.fp64.fp64");
  ti.api = "wgmma";
  ti.shape = "m64n256k16";
  ti.input = Precision::fp16;
  ti.accumulate = Precision::fp32;
  ti.operand_a = "ss";
  CHECK(ti.key() == "wgmma.m64n256k16.fp16.fp32.ss");
  ti.sparse = true;
  CHECK(ti.key() == "wgmma.m64n256k16.fp16.fp32.ss.sp");
  ti.input = Precision::fp8;
  ti.input_detail = "e4m3";
  CHECK(ti.key() == "wgmma.m64n256k16.fp8_e4m3.fp32.ss.sp");
}

TEST_CASE("descriptor: dotted paths create, find and reject") {
  HardwareDescriptor d;
  CHECK(d.find_field("memory.dram.bandwidth") == nullptr);
  CHECK(d.find_field("memory.dram.patterns.copy") == nullptr);
  CHECK(d.find_field("compute.tensor_core.fp64") == nullptr);
  CHECK(&d.field("sm_clock") == &d.sm_clock);
  CHECK(&d.field("memory_clock") == &d.memory_clock);
  CHECK(&d.field("memory.l1.latency") == &d.memory[MemoryLevelKind::l1].latency);
  CHECK(d.field("memory.dram.patterns.copy").dimension == Dimension::bytes_per_second);
  CHECK(d.field("memory.l2.extra.far_half").dimension == Dimension::bytes);
  CHECK(d.field("compute.tensor_core.fp64").dimension == Dimension::flop_per_second);
  CHECK(d.field("memory.shared.bandwidth_per_sm").dimension == Dimension::bytes_per_cycle);
  CHECK(d.find_field("memory.dram.patterns.copy") == &d.memory[MemoryLevelKind::dram].patterns["copy"]);
  CHECK(d.find_field("compute.tensor_core.fp64") != nullptr);
  for (const char* bad : {"", "memory", "memory.dram", "memory.l3.bandwidth", "memory.dram.speed",
                          "memory.dram.patterns", "memory.dram.patterns.Copy", "memory.dram.patterns.copy.x",
                          "compute.cuda_core", "compute.cuda_core.fp128", "compute.gpu.fp64", "clock",
                          "sm_clock.spec", "identity.name"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(d.field(bad), std::invalid_argument);
  }
  CHECK_THROWS_AS(d.find_field("memory.l3.bandwidth"), std::invalid_argument);
}

TEST_CASE("descriptor: the CUDA-core outer-product rate and power (issue 14): paths, YAML, strictness") {
  HardwareDescriptor d = parse_descriptor(kMinimal, "mini.yaml");
  CHECK(d.find_field("compute.cuda_core_outer_product.fp64") == nullptr);
  CHECK(d.field("compute.cuda_core_outer_product.fp64").dimension == Dimension::flop_per_second);
  CHECK(d.field("compute.cuda_core_power.fp32").dimension == Dimension::watts);
  CHECK(d.find_field("compute.cuda_core_outer_product.fp64") == &d.outer_product[Precision::fp64]);
  CHECK_THROWS_AS(d.field("compute.cuda_core_outer_product.fp128"), std::invalid_argument);
  CHECK_THROWS_AS(d.field("compute.cuda_core_power"), std::invalid_argument);
  MeasuredValue rate{29.87e12, 29.8e12, 29.9e12, 7, 0.001, "cuda-core", "2026-11-26T01:00:00Z", 1.98e9, false,
                     "4x8 accumulators per thread"};
  MeasuredValue watts{512.5, 500, 520, 14, 0, "cuda-core", "2026-11-26T01:00:00Z", 1.98e9, false, "NVML"};
  d.set_measured("compute.cuda_core_outer_product.fp64", rate);
  d.set_measured("compute.cuda_core_power.fp64", watts);
  const std::string text = to_yaml(d);
  CHECK(text.find("cuda_core_outer_product:") != std::string::npos);
  CHECK(text.find("cuda_core_power:") != std::string::npos);
  const HardwareDescriptor again = parse_descriptor(text, "again.yaml");
  CHECK(parse_descriptor(to_yaml(again), "again2.yaml") == again);  // written values are rounded to their spread once
  REQUIRE(again.outer_product.count(Precision::fp64));
  CHECK(*again.outer_product.at(Precision::fp64).value() == ceiling_test::Rel(29.87e12).epsilon(0.005));
  CHECK(*again.cuda_core_power.at(Precision::fp64).value() == ceiling_test::Rel(512.5).epsilon(0.005));
  CHECK(to_yaml(again) == text);
  // A descriptor that differs only there is not equal.
  HardwareDescriptor other = again;
  other.outer_product.clear();
  CHECK_FALSE(other == again);
  // Strict: a watts figure under the rate key (or a typo in the key) fails with the path.
  std::string wrong = text;
  const auto at = wrong.find("cuda_core_power:");
  wrong.replace(at, std::string("cuda_core_power:").size(), "cuda_core_powr:");
  CHECK_THROWS_WITH_AS(parse_descriptor(wrong, "wrong.yaml"), doctest::Contains("cuda_core_powr"), DescriptorError);
}

TEST_CASE("descriptor: the CUDA-core GEMM loop's rate: path, YAML round trip, strictness") {
  HardwareDescriptor d = parse_descriptor(kMinimal, "mini.yaml");
  CHECK(d.find_field("compute.cuda_core_gemm_loop.fp64") == nullptr);
  CHECK(d.field("compute.cuda_core_gemm_loop.fp64").dimension == Dimension::flop_per_second);
  CHECK(d.find_field("compute.cuda_core_gemm_loop.fp64") == &d.gemm_loop[Precision::fp64]);
  CHECK_THROWS_AS(d.field("compute.cuda_core_gemm_loop.fp99"), std::invalid_argument);
  MeasuredValue rate{28.41e12, 28.3e12, 28.5e12, 7, 0.001, "gemm-loop", "2026-11-28T16:00:00Z", 1.98e9, false,
                     "8x8 accumulators per thread, operands from shared memory"};
  d.set_measured("compute.cuda_core_gemm_loop.fp64", rate);
  const std::string text = to_yaml(d);
  CHECK(text.find("cuda_core_gemm_loop:") != std::string::npos);
  const HardwareDescriptor again = parse_descriptor(text, "again.yaml");
  REQUIRE(again.gemm_loop.count(Precision::fp64));
  CHECK(*again.gemm_loop.at(Precision::fp64).value() == ceiling_test::Rel(28.41e12).epsilon(0.005));
  CHECK(again.outer_product.empty());  // its own map, not the outer product's
  CHECK(to_yaml(again) == text);
  HardwareDescriptor other = again;
  other.gemm_loop.clear();
  CHECK_FALSE(other == again);
  // Strict: a misspelt key fails with its name; a watts figure is no rate.
  std::string wrong = text;
  wrong.replace(wrong.find("cuda_core_gemm_loop:"), std::string("cuda_core_gemm_loop:").size(), "cuda_core_gemm_lop:");
  CHECK_THROWS_WITH_AS(parse_descriptor(wrong, "wrong.yaml"), doctest::Contains("cuda_core_gemm_lop"), DescriptorError);
  std::string watts = text;
  const auto at = watts.find("TFLOP/s", watts.find("cuda_core_gemm_loop:"));
  REQUIRE(at != std::string::npos);
  watts.replace(at, std::string("TFLOP/s").size(), "W");
  CHECK_THROWS_AS(parse_descriptor(watts, "watts.yaml"), DescriptorError);
}

TEST_CASE("descriptor: the mma.sync tensor-core rate per precision (issue 12): paths, YAML, strictness") {
  HardwareDescriptor d = parse_descriptor(kMinimal, "mini.yaml");
  CHECK(d.find_field("compute.tensor_core_mma_sync.fp16") == nullptr);
  CHECK(d.field("compute.tensor_core_mma_sync.fp16").dimension == Dimension::flop_per_second);
  CHECK(d.find_field("compute.tensor_core_mma_sync.fp16") == &d.tensor_core_mma_sync[Precision::fp16]);
  CHECK_THROWS_AS(d.field("compute.tensor_core_mma_sync.fp128"), std::invalid_argument);
  CHECK_THROWS_AS(d.field("compute.tensor_core_mma_sync"), std::invalid_argument);
  MeasuredValue rate{712.1e12, 711e12, 713e12, 5, 0.001, "mma", "2026-11-26T21:00:00Z", 1.98e9, false,
                     "best mma.sync: mma.m16n8k16.fp16.fp16"};
  d.set_measured("compute.tensor_core_mma_sync.fp16", rate);
  const std::string text = to_yaml(d);
  CHECK(text.find("tensor_core_mma_sync:") != std::string::npos);
  const HardwareDescriptor again = parse_descriptor(text, "again.yaml");
  CHECK(parse_descriptor(to_yaml(again), "again2.yaml") == again);
  REQUIRE(again.tensor_core_mma_sync.count(Precision::fp16));
  CHECK(*again.tensor_core_mma_sync.at(Precision::fp16).value() == ceiling_test::Rel(712.1e12).epsilon(0.005));
  CHECK(to_yaml(again) == text);
  HardwareDescriptor other = again;
  other.tensor_core_mma_sync.clear();
  CHECK_FALSE(other == again);
  std::string wrong = text;
  const auto at = wrong.find("tensor_core_mma_sync:");
  wrong.replace(at, std::string("tensor_core_mma_sync:").size(), "tensor_core_mmasync:");
  CHECK_THROWS_WITH_AS(parse_descriptor(wrong, "wrong.yaml"), doctest::Contains("tensor_core_mmasync"), DescriptorError);
}

TEST_CASE("descriptor: set_measured keeps the spec, replaces an earlier measurement") {
  HardwareDescriptor d = parse_descriptor(kMinimal, "mini.yaml");
  MeasuredValue m;
  m.median = 0.9e12;
  m.probe = "dram-bandwidth";
  m.date = "2026-11-21T11:00:00Z";
  d.set_measured("memory.dram.bandwidth", m);
  const Field* f = d.find_field("memory.dram.bandwidth");
  REQUIRE(f != nullptr);
  REQUIRE(f->spec.has_value());
  CHECK(f->spec->value == 1e12);
  CHECK(f->spec->reference == "a datasheet");
  CHECK(*d.bandwidth(MemoryLevelKind::dram) == 0.9e12);
  CHECK(*d.bandwidth(MemoryLevelKind::dram, SourcePreference::spec) == 1e12);
  m.median = 0.95e12;
  d.set_measured("memory.dram.bandwidth", m);
  CHECK(*d.bandwidth(MemoryLevelKind::dram) == 0.95e12);
  CHECK_FALSE(d.bandwidth(MemoryLevelKind::l2).has_value());
  CHECK_FALSE(d.peak(ComputeUnit::tensor_core, Precision::fp64).has_value());
  d.set_measured("compute.tensor_core.fp64", MeasuredValue{60e12, 59e12, 61e12, 10, 0.01, "dmma", "2026-11-21", 1.98e9,
                                                           false, ""});
  CHECK(*d.peak(ComputeUnit::tensor_core, Precision::fp64) == 60e12);
  CHECK_FALSE(d.peak(ComputeUnit::tensor_core, Precision::fp64, SourcePreference::spec).has_value());
}

TEST_CASE("descriptor: upsert_instruction replaces by key") {
  HardwareDescriptor d;
  TensorInstruction a;
  a.api = "mma";
  a.shape = "m8n8k4";
  a.latency.spec = SpecValue{16, "x y"};
  d.upsert_instruction(a);
  TensorInstruction b = a;
  b.shape = "m16n8k4";
  d.upsert_instruction(b);
  CHECK(d.tensor_instructions.size() == 2);
  a.latency.spec->value = 17;
  d.upsert_instruction(a);
  REQUIRE(d.tensor_instructions.size() == 2);
  CHECK(d.tensor_instructions[0].latency.spec->value == 17);
  CHECK(d.tensor_instructions[1].shape == "m16n8k4");
}

TEST_CASE("descriptor: an instruction's power and sustained rate: YAML round trip, kept by a run without --power") {
  HardwareDescriptor d = parse_descriptor(kMinimal, "mini.yaml");
  TensorInstruction ti;
  ti.api = "wgmma";
  ti.shape = "m64n256k16";
  ti.input = Precision::bf16;
  ti.accumulate = Precision::fp32;
  ti.operand_a = "ss";
  ti.throughput.measured = MeasuredValue{938.4e12, 937e12, 939e12, 10, 0.001, "wgmma", "2026-11-26T01:52:13Z", 1.7358e9, false, "x"};
  ti.power.measured = MeasuredValue{686, 680, 690, 14, 0, "wgmma", "2026-11-26T01:52:15Z", 1.77e9, false, "NVML"};
  ti.sustained.measured = MeasuredValue{854.2e12, 854.2e12, 854.2e12, 596, 0, "wgmma", "2026-11-26T01:52:15Z", 1.77e9, false,
                                        "596 launches back to back"};
  d.upsert_instruction(ti);
  const std::string text = to_yaml(d);
  CHECK(text.find("sustained:") != std::string::npos);
  const HardwareDescriptor again = parse_descriptor(text, "again.yaml");
  REQUIRE(again.tensor_instructions.size() == 1);
  REQUIRE(again.tensor_instructions[0].sustained.measured);
  CHECK(again.tensor_instructions[0].sustained.measured->median == ceiling_test::Rel(854.2e12));
  CHECK(to_yaml(again) == text);
  // A later run without --power replaces the throughput and keeps the reading and its rate.
  TensorInstruction rerun = ti;
  rerun.power = Field{Dimension::watts};
  rerun.sustained = Field{Dimension::flop_per_second};
  rerun.throughput.measured->median = 940e12;
  d.upsert_instruction(rerun);
  CHECK(d.tensor_instructions[0].throughput.measured->median == 940e12);
  REQUIRE(d.tensor_instructions[0].sustained.measured);
  CHECK(d.tensor_instructions[0].sustained.measured->median == 854.2e12);
  CHECK(d.tensor_instructions[0].power.measured->median == 686);
}

TEST_CASE("descriptor: every shipped descriptor loads and round-trips exactly") {
  // Shipped files are written by the writer (or written as it would): a save changes nothing.
  const auto files = shipped();
  REQUIRE(files.size() >= 2);
  for (const auto& file : files) {
    CAPTURE(file.string());
    const HardwareDescriptor d = load_descriptor(file);
    CHECK(d.schema == kHardwareSchema);
    CHECK(d.id == file.stem().string());
    CHECK(!d.identity.name.empty());
    CHECK(d.identity.sm_count > 0);
    CHECK(d.bandwidth(MemoryLevelKind::dram, SourcePreference::spec).has_value());
    const std::string text = to_yaml(d);
    const HardwareDescriptor again = parse_descriptor(text, file.string());
    CHECK(again == d);
    CHECK(to_yaml(again) == text);  // canonical form is stable
  }
}

TEST_CASE("descriptor: measured values are rounded once, then round-trip bit for bit") {
  HardwareDescriptor d = parse_descriptor(kMinimal, "mini.yaml");
  MeasuredValue m{3.1415926535e12, 3.0000000001e12, 3.2e12, 30, 0.012345678901234, "dram-bandwidth",
                  "2026-11-21T11:22:33Z", 1.9799999e9, true, "pattern: copy, 8 waves"};
  d.set_measured("memory.dram.bandwidth", m);
  d.set_measured("memory.dram.patterns.triad", m);
  Field& knee = d.field("memory.l2.extra.far_half");
  knee.measured = MeasuredValue{25.5 * 1048576, 0, 0, 0, 0, "pchase-latency", "2026-11-21", 0, false, ""};
  Field& tlb = d.field("memory.l2.extra.tlb_latency");
  tlb.dimension = Dimension::cycles;
  tlb.measured = MeasuredValue{612.25, 0, 0, 3, 0, "pchase-latency", "2026-11-21", 0, false, ""};
  d.field("memory.dram.patterns.read");  // created, never set: not part of the descriptor
  d.memory[MemoryLevelKind::shared];     // an empty level survives as an empty mapping
  TensorInstruction ti;
  ti.api = "wgmma";
  ti.shape = "m64n256k32";
  ti.input = Precision::fp8;
  ti.input_detail = "e4m3";
  ti.accumulate = Precision::fp32;
  ti.operand_a = "rs";
  ti.sparse = true;
  ti.sass = "QGMMA.64x256x32.F32.E4M3.E4M3";
  ti.fma_per_clock_per_sm.measured = MeasuredValue{4096.5, 0, 0, 5, 0, "wgmma", "2026-11-21", 1.98e9, false, ""};
  ti.best_warps = 8;
  ti.best_ilp = 2;
  d.upsert_instruction(ti);
  d.notes.push_back("a note with: colons, \"quotes\" and # hashes");
  d.identity.uuid = "GPU-1234";
  d.tool_version = "0.1.0";
  const std::string text = to_yaml(d);
  CAPTURE(text);
  const HardwareDescriptor again = parse_descriptor(text, "mini.yaml");
  CHECK(to_yaml(again) == text);
  CHECK(parse_descriptor(to_yaml(again), "mini.yaml") == again);  // written values read back exactly
  // Everything but the measured numbers is kept exactly; those keep what the spread supports.
  const MeasuredValue& bw = *again.memory.at(MemoryLevelKind::dram).bandwidth.measured;
  CHECK(bw.median == 3.142e12);
  CHECK(bw.min == 3.0e12);
  CHECK(bw.max == 3.2e12);
  CHECK(bw.cv == 0.012);
  CHECK(bw.sm_clock_hz == 1.98e9);
  CHECK(std::tie(bw.repeats, bw.probe, bw.date, bw.flagged, bw.note) ==
        std::tie(m.repeats, m.probe, m.date, m.flagged, m.note));
  CHECK(again.find_field("memory.l2.extra.far_half")->measured->median == 25.5 * 1048576);  // exact: "25.5 MiB"
  CHECK(again.find_field("memory.l2.extra.tlb_latency")->measured->median == 612.25);
  CHECK(again.tensor_instructions == d.tensor_instructions);
  CHECK(again.notes == d.notes);
  CHECK(again.identity == d.identity);
  CHECK(again.memory.at(MemoryLevelKind::dram).bandwidth.spec == d.memory.at(MemoryLevelKind::dram).bandwidth.spec);
  CHECK(again.find_field("memory.l2.extra.tlb_latency")->dimension == Dimension::cycles);
  CHECK(again.find_field("memory.dram.patterns.read") == nullptr);
  // Equality sees a one-ulp change.
  HardwareDescriptor changed = again;
  changed.memory[MemoryLevelKind::dram].bandwidth.measured->median = std::nextafter(bw.median, 0.0);
  CHECK_FALSE(changed == again);
}

namespace {

// The texts to_yaml writes for the one measured value of a descriptor.
struct Written {
  std::string median, min, max, cv, sm_clock;
};
std::string value_of(const std::string& text, const std::string& key) {
  const std::string k = " " + key + ": \"";
  const size_t at = text.find(k);
  if (at == std::string::npos) return {};
  const size_t from = at + k.size();
  return text.substr(from, text.find('"', from) - from);
}
Written written(const MeasuredValue& m, const char* path = "memory.dram.patterns.copy") {
  HardwareDescriptor d = parse_descriptor(kMinimal, "mini.yaml");
  d.set_measured(path, m);
  const std::string text = to_yaml(d);
  return {value_of(text, "median"), value_of(text, "min"), value_of(text, "max"), value_of(text, "cv"),
          value_of(text, "sm_clock")};
}
MeasuredValue measured(double median, double min, double max, double cv, int repeats = 20) {
  return MeasuredValue{median, min, max, repeats, cv, "dram-bandwidth", "2026-11-21T12:49:04Z", 1.9756533727621484e9,
                       false, ""};
}
std::string unit_of(const std::string& q) { return q.substr(q.find(' ') + 1); }
int significant(const std::string& q) {
  int n = 0;
  bool leading = true;
  for (char c : q.substr(0, q.find(' '))) {
    if (c < '0' || c > '9' || (leading && c == '0')) continue;
    leading = false;
    ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("descriptor: a measured value keeps the digits its spread supports") {
  // The shipped H200 DRAM write bandwidth: cv 0.32% of 4.66 TB/s is 15 GB/s, so GB/s is the last digit.
  const Written w = written(measured(4.664225401615592e12, 4.630752270319e12, 4.677227673049437e12, 0.0032057982578306498));
  CHECK(w.median == "4.664 TB/s");
  CHECK(w.min == "4.631 TB/s");
  CHECK(w.max == "4.677 TB/s");
  CHECK(w.cv == "0.0032");
  CHECK(w.sm_clock == "1.9757 GHz");
  // Ten times the spread: one digit fewer; a hundred times: two.
  CHECK(written(measured(4.664225401615592e12, 4.3e12, 4.9e12, 0.032)).median == "4.66 TB/s");
  CHECK(written(measured(4.664225401615592e12, 4.4e12, 4.8e12, 0.0032)).median == "4.664 TB/s");  // cv decides
  CHECK(written(measured(4.664225401615592e12, 4.66e12, 4.67e12, 0.032)).median == "4.664 TB/s");  // spread decides
  const Written tight = written(measured(4.664225401615592e12, 4.6642e12, 4.66425e12, 0.0000032));
  CHECK(tight.median == "4.664225 TB/s");
  CHECK(tight.min == "4.664200 TB/s");  // written down to the same digit as the median
  CHECK(tight.max == "4.664250 TB/s");
  // Never fewer than 3 significant digits, however wide the spread.
  const Written wide = written(measured(4.664225401615592e12, 1e12, 9e12, 0.9));
  CHECK(wide.median == "4.66 TB/s");
  CHECK(wide.min == "1.00 TB/s");
  CHECK(wide.max == "9.00 TB/s");
  // Latency in cycles, sm_clock of the sm-clock probe itself.
  CHECK(written(measured(649.5916137695312, 648.4174194335938, 651.3922729492188, 0.0016635774473764025),
                "memory.dram.latency")
            .median == "649.6 cycles");
  CHECK(written(measured(1.9799896540331073e9, 1.9799528713206494e9, 1.9799985604050684e9, 0.000010512612232998355, 7),
                "sm_clock")
            .median == "1.979990 GHz");
}

TEST_CASE("descriptor: a measured value without a spread is exact when short, else 6 digits") {
  CHECK(written(measured(57.125 * 1048576, 57.125 * 1048576, 57.125 * 1048576, 0, 1), "memory.l2.capacity").median ==
        "57.125 MiB");
  CHECK(written(measured(246496, 246496, 246496, 0, 1), "memory.l1.capacity").median == "246496 B");
  const Written w = written(measured(196.51171875, 196.51171875, 196.51171875, 0, 5), "memory.l2.latency");
  CHECK(w.median == "196.512 cycles");
  CHECK(w.min == "196.512 cycles");
  CHECK(w.max == "196.512 cycles");
  CHECK(w.cv.empty());
}

TEST_CASE("descriptor: median, min and max of one value are written in one unit") {
  // The shipped H200 triad had its min as "3.97002450572581 TiB/s" next to a median in TB/s.
  const Written triad = written(measured(4.3951055337697637e12, 4.365053e12, 4.407710617505108e12, 0.0022495493188853183));
  CHECK(triad.median == "4.395 TB/s");
  CHECK(triad.min == "4.365 TB/s");
  CHECK(triad.max == "4.408 TB/s");
  // Across a prefix boundary the median's unit is kept.
  const Written edge = written(measured(999.7e9, 990.2e9, 1.0041e12, 0.003));
  CHECK(edge.median == "999.7 GB/s");
  CHECK(edge.min == "990.2 GB/s");
  CHECK(edge.max == "1004.1 GB/s");
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> mant(1.0, 10.0), rel(0.0, 0.05);
  std::uniform_int_distribution<int> exp10(0, 15);
  for (int i = 0; i < 500; ++i) {
    const double med = mant(rng) * std::pow(10.0, exp10(rng));
    const Written w = written(measured(med, med * (1 - rel(rng)), med * (1 + rel(rng)), rel(rng) / 3));
    CAPTURE(w.median);
    CAPTURE(w.min);
    CAPTURE(w.max);
    CHECK(unit_of(w.min) == unit_of(w.median));
    CHECK(unit_of(w.max) == unit_of(w.median));
    CHECK(significant(w.median) >= 3);
  }
}

TEST_CASE("descriptor: rounding stays within a tenth of the spread and of the cv, save, load, save is stable") {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> mant(1.0, 10.0), rel(1e-7, 0.05), u(0.0, 1.0);
  std::uniform_int_distribution<int> exp10(0, 15);
  for (int i = 0; i < 1000; ++i) {
    const double med = mant(rng) * std::pow(10.0, exp10(rng));
    const double lo = med * (1 - rel(rng) * u(rng)), hi = med * (1 + rel(rng) * u(rng));
    const double cv = u(rng) < 0.2 ? 0 : rel(rng) / 3;
    HardwareDescriptor d = parse_descriptor(kMinimal, "mini.yaml");
    d.set_measured("memory.dram.bandwidth", measured(med, lo, hi, cv));
    const std::string text = to_yaml(d);
    CAPTURE(text);
    const HardwareDescriptor again = parse_descriptor(text, "mini.yaml");
    CHECK(to_yaml(again) == text);
    const MeasuredValue& r = *again.memory.at(MemoryLevelKind::dram).bandwidth.measured;
    double tol = hi - lo;
    if (r.cv > 0) tol = std::min(tol, r.cv * med);
    const double three_digits = 0.5 * std::pow(10.0, std::floor(std::log10(med)) - 2);
    const double allowed = std::max(std::min(tol / 10, three_digits), med * 1e-14);
    CHECK(std::fabs(r.median - med) <= allowed * (1 + 1e-9));
    CHECK(std::fabs(r.min - lo) <= allowed * (1 + 1e-9));
    CHECK(std::fabs(r.max - hi) <= allowed * (1 + 1e-9));
  }
}

TEST_CASE("descriptor: files written before values were rounded still load, and save rounded") {
  const std::string old = std::string(kMinimal) + R"(      measured:
        median: "4.3951055337697637 TB/s"
        min: "3.97002450572581 TiB/s"
        max: "4.407710617505108 TB/s"
        repeats: 20
        cv: "0.0022495493188853183"
        probe: "dram-bandwidth"
        date: "2026-11-21T12:49:05Z"
        sm_clock: "1.979747961304765 GHz"
)";
  const HardwareDescriptor d = parse_descriptor(old, "old.yaml");
  const MeasuredValue& m = *d.memory.at(MemoryLevelKind::dram).bandwidth.measured;
  CHECK(m.median == 4.3951055337697637e12);
  CHECK(m.min == std::ldexp(3.97002450572581, 40));
  const std::string text = to_yaml(d);
  CAPTURE(text);
  CHECK(text.find("median: \"4.395 TB/s\"") != std::string::npos);
  CHECK(text.find("min: \"4.365 TB/s\"") != std::string::npos);
  CHECK(text.find("max: \"4.408 TB/s\"") != std::string::npos);
  CHECK(text.find("cv: \"0.0022\"") != std::string::npos);
  CHECK(text.find("sm_clock: \"1.9797 GHz\"") != std::string::npos);
  CHECK(to_yaml(parse_descriptor(text, "old.yaml")) == text);
}

TEST_CASE("descriptor: save is atomic and loads back") {
  const fs::path dir = fs::temp_directory_path() / ("ceiling-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const HardwareDescriptor d = parse_descriptor(kMinimal, "mini.yaml");
  const fs::path file = dir / "mini.yaml";
  save_descriptor(d, file);
  CHECK(load_descriptor(file) == d);
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++entries;
  CHECK(entries == 1);  // no temporary left behind
  // A missing directory is created (write_file_atomically); one that cannot be is an error.
  save_descriptor(d, dir / "new-dir" / "x.yaml");
  CHECK(load_descriptor(dir / "new-dir" / "x.yaml") == d);
  CHECK_THROWS(save_descriptor(d, file / "x.yaml"));  // under a regular file
  CHECK(load_descriptor(file) == d);
  fs::remove_all(dir);
}

TEST_CASE("descriptor: id defaults to the file stem, an unreadable file names itself") {
  CHECK(parse_descriptor(kMinimal, "some/dir/my-gpu.yaml").id == "my-gpu");
  try {
    load_descriptor("/nonexistent/x.yaml");
    FAIL("no error");
  } catch (const DescriptorError& e) {
    CHECK(std::string(e.what()).find("/nonexistent/x.yaml") != std::string::npos);
  }
}

TEST_CASE("descriptor: broken descriptors give their error with key and line") {
  struct Case {
    const char* file;
    int line;
    const char* key;
    const char* cause;  // a part of the cause
  };
  const Case cases[] = {
      {"unknown_top_key.yaml", 9, "bandwith", "unknown key"},
      {"unknown_level_key.yaml", 9, "memory.dram.latnecy", "unknown key"},
      {"wrong_dimension.yaml", 8, "memory.dram.bandwidth.spec.value", "'4.8 TB' is bytes, expected bytes_per_second"},
      {"unknown_unit.yaml", 12, "compute.cuda_core.fp64.spec.value", "unknown unit 'TFLOPS'"},
      {"bare_number.yaml", 11, "memory.l2.latency.spec.value", "has no unit"},
      {"negative_value.yaml", 12, "compute.tensor_core.fp64.spec.value", "must be positive"},
      {"zero_measured.yaml", 10, "memory.dram.bandwidth.measured.median", "must be positive"},
      {"missing_name.yaml", 2, "identity.name", "required key is missing"},
      {"bad_sm_count.yaml", 4, "identity.sm_count", "not a whole number"},
      {"missing_schema.yaml", 1, "schema", "required key is missing"},
      {"wrong_schema.yaml", 1, "schema", "unsupported schema 'ceiling/hardware/2'"},
      {"no_bandwidth.yaml", 5, "memory", "needs a bandwidth"},
      {"unknown_level.yaml", 9, "memory.l3", "unknown key"},
      {"unknown_precision.yaml", 11, "compute.cuda_core.fp128", "unknown key"},
      {"unknown_reference.yaml", 8, "memory.dram.bandwidth.spec.ref", "not a key of references"},
      {"not_yaml.yaml", 8, "", "not valid YAML"},
      {"duplicate_key.yaml", 12, "memory.l2", "duplicate key"},
      {"empty_field.yaml", 9, "memory.dram.latency", "needs a spec or a measured value"},
      {"missing_probe.yaml", 8, "memory.dram.bandwidth.measured.probe", "required key is missing"},
      {"unknown_spec_key.yaml", 9, "memory.dram.bandwidth.spec.source", "unknown key"},
      {"bad_instruction_shape.yaml", 11, "tensor_instructions[0].shape", "expected m<M>n<N>k<K>"},
      {"instruction_wrong_unit.yaml", 15, "tensor_instructions[0].latency.spec.value", "expected cycles"},
      {"min_above_median.yaml", 10, "memory.dram.bandwidth.measured.min", "larger than the median"},
      {"bad_date.yaml", 11, "memory.dram.bandwidth.measured.date", "expected an ISO 8601 date"},
      {"empty.yaml", 1, "", "a descriptor is a YAML mapping"},
      {"mapping_expected.yaml", 2, "identity", "expected a mapping"},
  };
  int files_in_dir = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(kBroken)) ++files_in_dir;
  CHECK(files_in_dir == static_cast<int>(std::size(cases)));  // every fixture is in the table
  for (const Case& c : cases) {
    const fs::path file = kBroken / c.file;
    const std::string name = c.file;
    CAPTURE(name);
    REQUIRE(fs::exists(file));
    CHECK(marker_line(file) == c.line);
    try {
      load_descriptor(file);
      FAIL("loaded without error");
    } catch (const DescriptorError& e) {
      const std::string what = e.what();
      CAPTURE(what);
      CHECK(e.file() == file.string());
      CHECK(e.line() == c.line);
      CHECK(e.column() >= 1);
      CHECK(e.key() == c.key);
      CHECK(e.cause().find(c.cause) != std::string::npos);
      const std::string prefix = file.string() + ":" + std::to_string(c.line) + ":";
      CHECK(std::string(e.what()).rfind(prefix, 0) == 0);
    }
  }
}

TEST_CASE("descriptor: a minimal descriptor with only the required keys loads") {
  const HardwareDescriptor d = parse_descriptor(kMinimal, "mini.yaml");
  CHECK(d.identity.name == "Test GPU");
  CHECK(d.identity.sm_count == 10);
  CHECK(*d.bandwidth(MemoryLevelKind::dram) == 1e12);
  CHECK(d.find_field("memory.dram.bandwidth")->source() == "spec");
}

TEST_CASE("descriptor: shipped descriptors carry the papers' and datasheets' figures") {
  const auto spec = SourcePreference::spec;
  const HardwareDescriptor gh = load_descriptor(kHardware / "gh200.yaml");  // GPGPU'25 Table 1
  CHECK(*gh.bandwidth(MemoryLevelKind::dram, spec) == 4.00e12);
  CHECK(*gh.peak(ComputeUnit::cuda_core, Precision::fp64, spec) == 34.0e12);
  CHECK(*gh.peak(ComputeUnit::tensor_core, Precision::fp64, spec) == 67.0e12);
  CHECK(gh.find_field("memory.l2.capacity")->spec->value == 50.0 * 1048576);
  CHECK(gh.identity.cuda_version == "12.6");
  const HardwareDescriptor a = load_descriptor(kHardware / "a100-80gb.yaml");
  CHECK(*a.bandwidth(MemoryLevelKind::dram, spec) == 1.94e12);
  CHECK(*a.peak(ComputeUnit::cuda_core, Precision::fp64, spec) == 9.7e12);
  CHECK(*a.peak(ComputeUnit::tensor_core, Precision::fp64, spec) == 19.5e12);
  CHECK(a.find_field("memory.l2.capacity")->spec->value == 40.0 * 1048576);
  CHECK(a.identity.cuda_version == "12.1");
  const HardwareDescriptor h800 = load_descriptor(kHardware / "h800-pcie.yaml");  // Hopper paper
  CHECK(h800.identity.sm_count == 114);
  CHECK(*h800.sm_clock.value(spec) == 1755e6);
  CHECK(*h800.bandwidth(MemoryLevelKind::dram, spec) == 2039e9);
  CHECK(h800.find_field("memory.l2.latency")->spec->value == 263.0);
  CHECK(h800.find_field("memory.dram.latency")->spec->value == 478.8);
  CHECK(h800.find_field("memory.shared.bandwidth_per_sm")->spec->value == 127.9);
  CHECK(h800.tensor_instructions.size() == 28);
  const HardwareDescriptor h100 = load_descriptor(kHardware / "h100-sxm.yaml");
  CHECK(*h100.bandwidth(MemoryLevelKind::dram, spec) == 3.35e12);
  CHECK(*h100.peak(ComputeUnit::tensor_core, Precision::fp16, spec) == 989.4e12);
  CHECK(*h100.peak(ComputeUnit::tensor_core, Precision::int8, spec) == 1979e12);
  const HardwareDescriptor h200 = load_descriptor(kHardware / "h200.yaml");
  CHECK(*h200.bandwidth(MemoryLevelKind::dram, spec) == 4.8e12);
  CHECK(h200.find_field("memory.dram.capacity")->spec->value == 141e9);
  CHECK(*h200.peak(ComputeUnit::tensor_core, Precision::fp64, spec) == 67e12);
  CHECK_FALSE(h200.sm_clock.spec);  // not in the datasheet: missing, not invented
  CHECK(h200.sm_clock.measured);    // the shipped H200 file is calibrated by our probes
}

TEST_CASE("descriptor: any damaged line gives a DescriptorError inside the file, never another exception") {
  // Each line of a shipped descriptor deleted, or its value replaced by nonsense: the loader must
  // either accept the result or report a DescriptorError that points into the text.
  std::ifstream in(kHardware / "h800-pcie.yaml");
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  REQUIRE(lines.size() > 100);
  int errors = 0, accepted = 0;
  const std::vector<std::string> damage{"", "x: [", "  bogus: 1", "\t"};
  for (size_t i = 0; i < lines.size(); ++i) {
    for (const auto& d : damage) {
      std::string text;
      for (size_t k = 0; k < lines.size(); ++k) text += (k == i ? d : lines[k]) + "\n";
      CAPTURE(i);
      CAPTURE(d);
      try {
        parse_descriptor(text, "damaged.yaml");
        ++accepted;
      } catch (const DescriptorError& e) {
        ++errors;
        CHECK(e.line() >= 1);
        CHECK(e.line() <= static_cast<int>(lines.size()) + 1);
      } catch (const std::exception& e) {
        FAIL("not a DescriptorError: " << e.what());
      }
    }
  }
  CHECK(errors > static_cast<int>(lines.size()));  // most damage is caught
  CHECK(accepted > 0);                             // deleting a comment or a note is fine
}
