// Where calibrate takes a per-architecture probe's results from instead of running it
// (probes/host/architecture_reuse.hpp; issue 15's calibration time).
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "model/descriptor.hpp"
#include "model/files.hpp"
#include "probes/host/architecture_reuse.hpp"
#include "scratch.hpp"

namespace {
using ceiling::HardwareDescriptor;
using ceiling::TensorInstruction;
namespace fs = std::filesystem;

TensorInstruction numerics_entry(const std::string& probe, const std::string& shape, const std::string& date) {
  TensorInstruction ti;
  ti.api = probe == "wgmma-numerics" ? "wgmma" : "mma";
  ti.shape = shape;
  ti.input = ceiling::Precision::fp16;
  ti.accumulate = ceiling::Precision::fp32;
  if (ti.api == "wgmma") ti.operand_a = "ss";
  ceiling::NumericBehaviour n;
  n.probe = probe;
  n.date = date;
  n.summary = "products exact; block 16";
  n.verdicts["products"] = "exact";
  n.cases = 10;
  n.models = 1;
  ti.numerics = n;
  return ti;
}

// A valid descriptor (the shipped H100's, without its instruction table) under another name and
// compute capability.
HardwareDescriptor gpu(const std::string& id, const std::string& cc) {
  HardwareDescriptor d = ceiling::load_descriptor(fs::path(CEILING_SOURCE_DIR) / "hardware" / "h100-sxm.yaml");
  d.tensor_instructions.clear();
  d.id = id;
  d.identity.name = "NVIDIA " + id;
  d.identity.compute_capability = cc;
  return d;
}

}  // namespace

TEST_CASE("architecture reuse: the starting descriptor first, then a candidate of the same compute capability") {
  const fs::path dir = ceiling::test::scratch_dir("arch-reuse", "order");
  HardwareDescriptor other_cc = gpu("a100", "8.0");
  other_cc.tensor_instructions.push_back(numerics_entry("mma-numerics", "m16n8k16", "2026-01-01T00:00:00Z"));
  ceiling::save_descriptor(other_cc, dir / "a100.yaml");

  HardwareDescriptor same_cc = gpu("h100", "9.0");
  TensorInstruction timed = numerics_entry("mma-numerics", "m16n8k16", "2026-02-01T00:00:00Z");
  timed.latency.measured = ceiling::MeasuredValue{};
  timed.latency.measured->median = 33;
  timed.latency.measured->repeats = 3;
  timed.latency.measured->probe = "mma";
  timed.latency.measured->date = "2026-02-01T00:00:00Z";
  same_cc.tensor_instructions.push_back(timed);
  same_cc.tensor_instructions.push_back(numerics_entry("mma-numerics", "m16n8k8", "2026-03-01T00:00:00Z"));
  same_cc.tensor_instructions.push_back(numerics_entry("wgmma-numerics", "m64n256k32", "2026-04-01T00:00:00Z"));
  ceiling::save_descriptor(same_cc, dir / "h100.yaml");
  {
    std::ofstream(ceiling::probes_path_for(dir / "h100.yaml"))
        << R"({"schema": "ceiling/probes/1", "probes": {"mma-numerics": {"details": {"marker": 42}}}})";
  }
  const std::vector<fs::path> candidates{dir / "a100.yaml", dir / "h100.yaml"};
  // Both load back (the reuse passes over a file that does not).
  CHECK(ceiling::test::message_of([&] { ceiling::load_descriptor(dir / "a100.yaml"); }) == "(no error)");
  CHECK(ceiling::test::message_of([&] { ceiling::load_descriptor(dir / "h100.yaml"); }) == "(no error)");

  SUBCASE("a new H200 (9.0) without numerics of its own takes the H100's, timings stripped") {
    const HardwareDescriptor start = gpu("h200", "9.0");
    const auto r = ceiling::probes::architecture_reuse("mma-numerics", "9.0", start, "9.0", "new", candidates);
    REQUIRE(r);
    CHECK(r->source == (dir / "h100.yaml").string());
    REQUIRE(r->instructions.size() == 2);  // only mma-numerics' entries, not wgmma-numerics'
    for (const auto& ti : r->instructions) {
      CHECK(ti.numerics->probe == "mma-numerics");
      CHECK_FALSE(ti.latency.present());
      CHECK_FALSE(ti.throughput.present());
    }
    CHECK(r->measured == "2026-03-01T00:00:00Z");
    CHECK(r->details.value("marker", 0) == 42);
  }
  SUBCASE("another architecture (8.6) finds nothing: the probe runs") {
    const auto r = ceiling::probes::architecture_reuse("mma-numerics", "8.6", gpu("x", "8.6"), "8.6", "new", candidates);
    CHECK_FALSE(r);
  }
  SUBCASE("the A100 (8.0) takes only an 8.0 descriptor's") {
    const auto r = ceiling::probes::architecture_reuse("mma-numerics", "8.0", gpu("x", "8.0"), "8.0", "new", candidates);
    REQUIRE(r);
    CHECK(r->source == (dir / "a100.yaml").string());
    CHECK(r->details.is_null());  // no probe-details file beside it
  }
  SUBCASE("a starting descriptor of the same compute capability with its own numerics is used first") {
    HardwareDescriptor start = gpu("h200", "9.0");
    start.tensor_instructions.push_back(numerics_entry("wgmma-numerics", "m64n256k32", "2026-05-01T00:00:00Z"));
    const auto r = ceiling::probes::architecture_reuse("wgmma-numerics", "9.0", start, "9.0", "h200.yaml", candidates);
    REQUIRE(r);
    CHECK(r->source.find("starting descriptor (h200.yaml)") != std::string::npos);
    CHECK(r->measured == "2026-05-01T00:00:00Z");
  }
  SUBCASE("a starting descriptor of another compute capability is not trusted, even with numerics") {
    HardwareDescriptor start = gpu("h200", "8.0");
    start.tensor_instructions.push_back(numerics_entry("wgmma-numerics", "m64n256k32", "2026-05-01T00:00:00Z"));
    const auto r = ceiling::probes::architecture_reuse("wgmma-numerics", "9.0", start, "8.0", "old.yaml", candidates);
    REQUIRE(r);
    CHECK(r->source == (dir / "h100.yaml").string());
  }
  SUBCASE("a candidate that cannot be read is passed over") {
    std::ofstream(dir / "broken.yaml") << "schema: [unterminated\n";
    const std::vector<fs::path> with_broken{dir / "broken.yaml", dir / "h100.yaml"};
    const auto r = ceiling::probes::architecture_reuse("mma-numerics", "9.0", gpu("h200", "9.0"), "9.0", "new", with_broken);
    REQUIRE(r);
    CHECK(r->source == (dir / "h100.yaml").string());
  }
  fs::remove_all(dir);
}

TEST_CASE("architecture reuse: the shipped H100 descriptor serves a 9.0 GPU, both numerics probes") {
  const fs::path hw = fs::path(CEILING_SOURCE_DIR) / "hardware" / "h100-sxm.yaml";
  for (const char* probe : {"mma-numerics", "wgmma-numerics"}) {
    const auto r = ceiling::probes::architecture_reuse(probe, "9.0", gpu("new", "9.0"), "9.0", "new", {hw});
    REQUIRE_MESSAGE(r, probe);
    CHECK(r->instructions.size() >= 4);
    for (const auto& ti : r->instructions) CHECK_FALSE(ti.numerics->summary.empty());
  }
}
