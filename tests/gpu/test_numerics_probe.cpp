// GPU test of the mma-numerics probe (--quick): the packing of eight dot products per mma is
// right (exact cases come back exact), the bits repeat, integer mma is exact, and the verdicts are
// printed for the notes.
#include <doctest/doctest.h>

#include <cstdio>

#include "gpu/gpu.hpp"
#include "probe_context.hpp"
#include "probes/registry.hpp"

using namespace ceiling;
using namespace ceiling::probes;

TEST_CASE("mma-numerics (quick): products exact, the same bits twice, integers exact, a verdict per instruction") {
  const ProbeContext ctx = test::probe_context(true);
  const ProbeInfo* p = registry().find("mma-numerics");
  REQUIRE(p != nullptr);
  const ProbeOutput o = p->run(ctx);
  REQUIRE_FALSE(o.skipped.has_value());
  int floats = 0, ints = 0;
  for (const auto& ti : o.instructions) {
    REQUIRE(ti.numerics.has_value());
    const NumericBehaviour& nb = *ti.numerics;
    std::printf("  %-28s %s\n", ti.key().c_str(), nb.summary.c_str());
    INFO(ti.key() << ": " << nb.summary);
    CHECK(nb.verdicts.at("products") == "exact");
    if (nb.verdicts.count("integer")) {
      ++ints;
      CHECK(nb.verdicts.at("integer").rfind("exact", 0) == 0);
      continue;
    }
    ++floats;
    CHECK(nb.note == "the same bits in two runs");
    // One product of low-precision inputs fits an FP32 D exactly (Tables 12, 13, 15: 0.0).
    if (ti.accumulate == Precision::fp32) CHECK(nb.errors.at("multiplication").at("init_low") == 0.0);
    CHECK(nb.errors.at("multiplication").at("init_fp32") > 0.0);  // the conversion of FP32 inputs
  }
  CHECK(floats >= 7);
  CHECK(ints == 2);
  for (const auto& e : o.details["instructions"])
    if (e.contains("consistent") && e["consistent"].get<int>() == 0)
      std::printf("  no model fits %s: closest misses %d, first %s\n", e["instruction"].get<std::string>().c_str(),
                  e["closest_misses"].get<int>(), e["first_miss"].get<std::string>().c_str());
  for (const auto& c : o.details["chains"])
    if (c["length"].get<int>() == 1 || c["length"].get<int>() == 8)
      std::printf("  chain %-5s init %-4s N=%d rel err %.3g (%d chains, %d overflowed)\n",
                  c["input"].get<std::string>().c_str(), c["init"].get<std::string>().c_str(), c["length"].get<int>(),
                  c["mean_rel_err"].is_number() ? c["mean_rel_err"].get<double>() : -1.0, c["chains"].get<int>(),
                  c["overflowed"].get<int>());
}

TEST_CASE("wgmma-numerics (quick, sm_90a): every instruction classified or its miss reported, the same bits twice") {
  const ProbeContext ctx = test::probe_context(true);
  const ProbeInfo* p = registry().find("wgmma-numerics");
  REQUIRE(p != nullptr);
  const ProbeOutput o = p->run(ctx);
  if (ctx.cc_major != 9 || ctx.cc_minor != 0) {
    CHECK(o.skipped.has_value());
    return;
  }
  REQUIRE_FALSE(o.skipped.has_value());
  for (const auto& e : o.details["instructions"]) {
    std::printf("  %-36s %s\n", e["instruction"].get<std::string>().c_str(),
                e.contains("summary") ? e["summary"].get<std::string>().c_str() : e.dump().c_str());
    CHECK_MESSAGE(e.contains("summary"), e.dump());  // no descriptor-convention failure
  }
  CHECK(o.instructions.size() == 5);
  for (const auto& ti : o.instructions) {
    INFO(ti.key());
    REQUIRE(ti.numerics.has_value());
    CHECK(ti.numerics->note.rfind("the same bits in two runs", 0) == 0);
    CHECK(ti.numerics->verdicts.at("products") == "exact");
  }
}
