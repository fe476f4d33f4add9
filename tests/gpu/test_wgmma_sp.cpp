// GPU test of the wgmma-sp probe (--quick, sm_90a): every sparse product and its dense twin match
// the CPU reference before a figure counts, and every checked variant yields a throughput and a
// measured sparse/dense ratio (printed for the notes; the ratio itself is the hardware's).
#include <doctest/doctest.h>

#include <cstdio>

#include "probe_context.hpp"
#include "probes/registry.hpp"

using namespace ceiling;
using namespace ceiling::probes;

TEST_CASE("wgmma-sp (quick, sm_90a): products checked against the CPU, throughput and ratio per variant") {
  const ProbeContext ctx = test::probe_context(true);
  const ProbeInfo* p = registry().find("wgmma-sp");
  REQUIRE(p != nullptr);
  const ProbeOutput o = p->run(ctx);
  if (ctx.cc_major != 9 || ctx.cc_minor != 0) {
    CHECK(o.skipped.has_value());
    return;
  }
  REQUIRE_FALSE(o.skipped.has_value());
  int checked = 0;
  for (const auto& c : o.details["checks"]) {
    INFO(c.dump());
    std::printf("  %-36s check %s, metadata layout %s, dense twin %s\n", c["instruction"].get<std::string>().c_str(),
                c["check"].get<std::string>().c_str(), c["metadata_layout"].get<std::string>().c_str(),
                c["dense_twin_check"].get<std::string>().c_str());
    CHECK(c["check"] == "passed");
    CHECK(c["dense_twin_check"] == "passed");
    ++checked;
  }
  CHECK(checked >= 5);
  CHECK(o.instructions.size() == static_cast<size_t>(checked));
  for (const auto& ti : o.instructions) {
    CHECK(ti.sparse);
    REQUIRE(ti.throughput.measured.has_value());
    CHECK(ti.throughput.measured->median > 0);
  }
  for (const auto& s : o.details["sparse_vs_dense"]) {
    REQUIRE(s.contains("ratio_fma_per_clock"));
    std::printf("  %-36s sparse/dense %.3f (FMA/clk/SM), %.3f (FLOP/s)\n", s["sparse"].get<std::string>().c_str(),
                s["ratio_fma_per_clock"].get<double>(), s["ratio_flop_per_s"].get<double>());
    CHECK(s["ratio_fma_per_clock"].get<double>() > 0);
  }
}
