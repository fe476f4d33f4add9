// GPU test of the async-copy probe (--quick): every copy configuration's block sums and the
// matmul's sampled entries match the CPU references, the bandwidths lie between 0 and what the
// memory can deliver, the TMA methods run on cc >= 9.0 (and are skipped with a reason below it),
// and the figures are printed for the notes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>

#include "gpu/gpu.hpp"
#include "probe_context.hpp"
#include "probes/registry.hpp"

using namespace ceiling;
using namespace ceiling::probes;

TEST_CASE("async-copy (quick): global->shared bandwidth per method and the SyncShare/AsyncPipe matmul, checked") {
  const ProbeContext ctx = test::probe_context(true);
  const gpu::DeviceInfo dev = gpu::query_device(0);
  const ProbeInfo* p = registry().find("async-copy");
  REQUIRE(p != nullptr);
  const ProbeOutput o = p->run(ctx);
  INFO(o.details.dump());
  REQUIRE_FALSE(o.skipped.has_value());
  REQUIRE(o.async_copy.has_value());
  const AsyncCopy& a = *o.async_copy;

  // Upper bound: the buffer (>= 4x L2) streams from DRAM; no HBM generation signals faster than
  // 9.6 Gb/s per pin (HBM3E), so bus width x 9.6 Gb/s / 8 bounds DRAM, and at most an L2's worth of
  // the buffer can be found in the L2 by the next repeat: bound = peak / (1 - L2 / buffer).
  const double buffer = o.details["buffer_bytes"].get<double>();
  CHECK(buffer >= 4.0 * static_cast<double>(dev.l2_bytes));
  const double pin_peak = dev.memory_bus_width_bits > 0 ? dev.memory_bus_width_bits * 9.6e9 / 8 : 10e12;
  const double bound = pin_peak / (1 - static_cast<double>(dev.l2_bytes) / buffer);
  std::printf("  async-copy: buffer %.0f MiB, bandwidth bound %.3g TB/s (bus %d bits)\n", buffer / (1 << 20), bound / 1e12,
              dev.memory_bus_width_bits);

  const int cc = 10 * ctx.cc_major + ctx.cc_minor;
  for (const auto& m : o.details["methods"]) {
    const std::string name = m["method"];
    const bool tma = name == "bulk" || name == "tensor_2d";
    if (cc < 90 && tma) {
      CHECK(m.contains("skipped"));  // sm_80: cp.async.bulk needs sm_90
      continue;
    }
    CHECK_MESSAGE(!m.contains("skipped"), m.dump());
    for (const auto& row : m["rows"])
      if (row["check"] != "does not fit on an SM") CHECK_MESSAGE(row["check"] == "passed", row.dump());
  }
  for (const auto& m : a.methods) {
    REQUIRE(m.bandwidth.measured);
    const double bw = m.bandwidth.measured->median;
    std::printf("  %-10s %7.1f GB/s  %s%s\n", m.method.c_str(), bw / 1e9, m.config.c_str(),
                m.bandwidth.measured->flagged ? "  FLAGGED" : "");
    CHECK(bw > 0);
    CHECK(bw <= bound);
    CHECK(!m.sweep.empty());
    for (const auto& q : m.sweep) {
      CHECK(q.bytes_per_second > 0);
      CHECK(q.bytes_per_second <= bound);
      CHECK(q.bytes_per_second <= 1.25 * bw);  // the best, timed again with more repeats, is within noise of the sweep's
    }
  }
  CHECK(a.method("sync"));
  CHECK(a.method("cp_async"));
  if (cc >= 90) {
    CHECK(a.method("bulk"));
    CHECK(a.method("tensor_2d"));
  }

  // Tables XIII-XIV: every row, every column, positive and below the FP32 peak (128 FMA/clk/SM).
  CHECK(o.details["matmul_check"] == "passed");
  REQUIRE(a.matmul.size() == 6);
  const double clock = o.details["sm_clock_hz"].get<double>();
  const double fp32_peak = 2.0 * 128 * ctx.sm_count * clock * 1.1;  // 10% for the clock moving during the run
  for (const auto& r : a.matmul) {
    REQUIRE(r.measured);
    REQUIRE(r.measured->values.size() == r.blocks_per_sm.size());
    CHECK(r.blocks_per_sm.size() == 6);
    std::printf("  %-10s %2dx%-2d", r.variant.c_str(), r.block, r.block);
    for (std::size_t i = 0; i < r.blocks_per_sm.size(); ++i) {
      const double v = r.measured->values[i];
      std::printf(" %d:%.1f", r.blocks_per_sm[i], v / 1e9);
      CHECK(v > 0);
      CHECK(v < fp32_peak);
    }
    std::printf(" GFLOP/s\n");
  }
}
