// GPU test of the dpx probe (--quick): every function matches the CPU reference (else the probe
// drops it), latencies and rates are plausible, the by-blocks curve is flat up to the SM count and
// drops just past it (Luo et al. §IV-E), and the figures are printed for the notes.
#include <doctest/doctest.h>

#include <cstdio>

#include "gpu/gpu.hpp"
#include "probe_context.hpp"
#include "probes/host/dpx.hpp"
#include "probes/registry.hpp"

using namespace ceiling;
using namespace ceiling::probes;

TEST_CASE("dpx (quick): every function checked against the CPU reference, latency, rate and the curve over blocks") {
  const ProbeContext ctx = test::probe_context(true);
  const ProbeInfo* p = registry().find("dpx");
  REQUIRE(p != nullptr);
  const ProbeOutput o = p->run(ctx);
  INFO(o.details.dump());
  REQUIRE_FALSE(o.skipped.has_value());
  for (const auto& row : o.details["functions"]) CHECK_MESSAGE(row["check"] == "passed", row.dump());
  CHECK(o.dpx.size() == dpx::kFunctions.size());
  for (const auto& f : o.dpx) {
    const double lat = f.latency.measured->median, rate = f.throughput_per_sm.measured->median;
    std::printf("  %-22s latency %6.2f cycles  %7.2f calls/clk/SM%s\n", f.function.c_str(), lat, rate,
                f.throughput_per_sm.measured->flagged ? "  FLAGGED" : "");
    std::printf("    by blocks:");
    for (const auto& [b, v] : f.by_blocks) std::printf(" %d:%.4g", b, v);
    std::printf("\n");
    CHECK(lat >= 1);
    CHECK(lat < 200);
    CHECK(rate > 0.5);
    CHECK(rate <= 128.5);  // at most 4 schedulers x 32 lanes per clock
    // Per SM used: flat from 1 block to the SM count (within 15%), lower just past it (a second wave).
    double at1 = 0, at_sms = 0, past = 0;
    for (const auto& [b, v] : f.by_blocks) {
      if (b == 1) at1 = v;
      if (b == ctx.sm_count) at_sms = v;
      if (b == ctx.sm_count + 1) past = v;
    }
    REQUIRE(at1 > 0);
    REQUIRE(at_sms > 0);
    REQUIRE(past > 0);
    CHECK(at_sms > 0.85 * at1);
    CHECK(past < 0.75 * at_sms);
  }
}
