// GPU test of the dsm probe (--quick; Hopper only, skipped below cc 9.0): every part passes its own
// check (the chase's end, every ring word, every histogram bin), the two latency blocks ran on
// different SMs, the figures are plausible and below physical bounds, and they are printed for the notes.
#include <doctest/doctest.h>

#include <cstdio>

#include "gpu/gpu.hpp"
#include "probe_context.hpp"
#include "probes/host/dsm.hpp"
#include "probes/registry.hpp"

using namespace ceiling;
using namespace ceiling::probes;

TEST_CASE("dsm (quick): SM-to-SM latency, ring-based copy and histogram, each checked first") {
  const ProbeContext ctx = test::probe_context(true);
  const ProbeInfo* p = registry().find("dsm");
  REQUIRE(p != nullptr);
  CHECK(p->min_cc == 90);
  const ProbeOutput o = p->run(ctx);
  INFO(o.details.dump());
  if (ctx.cc_major < 9) {
    REQUIRE(o.skipped.has_value());
    CHECK(o.skipped->find("needs cc 9.0") != std::string::npos);
    return;
  }
  REQUIRE_FALSE(o.skipped.has_value());
  REQUIRE(o.dsm.has_value());
  const DistributedSharedMemory& m = *o.dsm;
  const double clock = o.details["sm_clock_hz"].get<double>();
  REQUIRE(clock > 0);

  // Latency: both parts passed, the blocks of the remote chase sat on different SMs.
  for (const char* part : {"local", "remote"}) {
    const auto& row = o.details["latency"][part];
    CHECK_MESSAGE(row["check"] == "passed", row.dump());
    CHECK(row["different_sms"] == true);
    CHECK(row["smid"][0] != row["smid"][1]);
  }
  REQUIRE(m.latency.measured.has_value());
  REQUIRE(m.local_latency.measured.has_value());
  const double remote = m.latency.measured->median, local = m.local_latency.measured->median;
  std::printf("  DSM latency: SM-to-SM %.1f cycles, own shared memory %.1f cycles (Luo et al. H800: 180)\n", remote, local);
  CHECK(local > 5);
  CHECK(local < 500);
  CHECK(remote > local);  // the network is farther than the SM's own shared memory
  CHECK(remote > 50);
  CHECK(remote < 2000);   // below a DRAM access (~500-900 cycles) with room; more means a wrong path

  // Ring: every configuration that ran passed its check; the best is plausible.
  int ran = 0;
  for (const auto& row : o.details["ring"]) {
    if (row.contains("skipped")) continue;
    CHECK_MESSAGE(row["check"] == "passed", row.dump());
    ++ran;
  }
  CHECK(ran > 0);
  REQUIRE(m.ring_bandwidth.measured.has_value());
  REQUIRE(m.ring_bandwidth_per_sm.measured.has_value());
  const double bps = m.ring_bandwidth.measured->median, per_sm = m.ring_bandwidth_per_sm.measured->median;
  std::printf("  ring copy best: %.4g TB/s, %.3g B/clk/SM (cluster %d, %d threads, ILP %d; Luo et al. H800: 3.27 TB/s at CS 2)\n",
              bps / 1e12, per_sm, m.ring_cluster_size, m.ring_block_threads, m.ring_ilp);
  for (const auto& c : m.ring_by_cluster_size)
    std::printf("    cluster %2d: %.4g TB/s (%d threads, ILP %d)\n", c.cluster_size, c.bandwidth.measured->median / 1e12,
                c.block_threads, c.ilp);
  CHECK(bps > 0);
  CHECK(per_sm > 0.5);
  // Bound: a remote store is a shared-memory store instruction; an SM's shared memory takes at most
  // 32 lanes x 4 bytes per clock (128 B/clk/SM), and every SM used sends as much as it receives.
  CHECK(per_sm < dsm::kRingBytesPerClockPerSmBound);
  CHECK(bps < dsm::kRingBytesPerClockPerSmBound * ctx.sm_count * clock * 1.1);  // 10% for clock drift
  CHECK(m.ring_cluster_size >= 2);
  for (const auto& pt : m.ring.points) {
    CHECK(pt.blocks % pt.cluster_size == 0);
    CHECK(pt.blocks <= ctx.sm_count);  // one block per SM
  }

  // Histogram: every bin of every configuration matched the CPU; rates positive and bounded.
  ran = 0;
  for (const auto& row : o.details["histogram"]) {
    if (row.contains("skipped")) continue;
    CHECK_MESSAGE(row["check"] == "passed", row.dump());
    ++ran;
  }
  CHECK(ran > 0);
  REQUIRE(m.histogram.present());
  for (const auto& pt : m.histogram.points) {
    std::printf("    histogram CS %d, %4d threads, %5d bins: %.4g Gelem/s\n", pt.cluster_size, pt.block_threads, pt.bins,
                pt.elements_per_second / 1e9);
    CHECK(pt.elements_per_second > 0);
    // One atomic per element; an SM issues at most 4 warp instructions (128 lanes) per clock.
    CHECK(pt.elements_per_second < 128.0 * ctx.sm_count * clock);
  }
}
