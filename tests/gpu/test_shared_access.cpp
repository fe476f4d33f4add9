// GPU test of the shared-access probe (--quick): layouts and chains checked inside the probe (a
// wrong one skips it), conflicts cost latency in order, and the figures are printed for the notes.
#include <doctest/doctest.h>

#include <cstdio>
#include <map>

#include "gpu/gpu.hpp"
#include "probe_context.hpp"
#include "probes/registry.hpp"

using namespace ceiling;
using namespace ceiling::probes;

TEST_CASE("shared-access (quick): checked layouts, conflict latency grows with the ways, figures printed") {
  const ProbeContext ctx = test::probe_context(true);
  const int cc = 10 * ctx.cc_major + ctx.cc_minor;
  const ProbeInfo* p = registry().find("shared-access");
  REQUIRE(p != nullptr);
  const ProbeOutput o = p->run(ctx);
  INFO(o.details.dump());
  REQUIRE_FALSE(o.skipped.has_value());
  std::map<std::string, double> v;
  for (const auto& f : o.fields) {
    const std::string name = f.path.substr(f.path.rfind('.') + 1);
    v[name] = f.value.median;
    std::printf("  %-30s %8.2f  [%.2f .. %.2f]%s\n", name.c_str(), f.value.median, f.value.min, f.value.max,
                f.value.flagged ? "  FLAGGED" : "");
  }
  CHECK(v.at("ld_u32_latency_2way") > v.at("ld_u32_latency_1way"));
  CHECK(v.at("ld_u32_latency_8way") > v.at("ld_u32_latency_2way"));
  CHECK(v.at("ld_u32_latency_32way") > v.at("ld_u32_latency_8way"));
  CHECK(v.at("ld_u32_bytes_per_clk_1way") > v.at("ld_u32_bytes_per_clk_8way"));
  CHECK(v.at("ld_u32_bytes_per_clk_1way") <= 128.5);  // 32 banks x 4 bytes per clock
  CHECK(v.at("ldmatrix_x4_latency") >= v.at("ldmatrix_x1_latency"));
  if (cc >= 90) CHECK(v.count("stmatrix_x4_bytes_per_clk") == 1);
}
