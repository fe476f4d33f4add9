// Memory probes on tiny configurations: each must pass its own verification and give values in
// physically possible ranges. The probes throw when a kernel's output is wrong.
#include <doctest/doctest.h>

#include <algorithm>

#include <cmath>
#include <cstdlib>

#include "gpu/gpu.hpp"
#include "probes/memory_probes.hpp"
#include "probes/probe_util.hpp"
#include "probes/registry.hpp"

using namespace ceiling;
using namespace ceiling::probes;

TEST_CASE("measured SM clock is plausible and time_kernel times a memset") {
  const double hz = gpu::measure_sm_clock_hz(0, 0.01);
  CHECK(hz > 2e8);
  CHECK(hz < 5e9);
  gpu::DeviceBuffer<char> buf(64 << 20);
  gpu::TimingOptions opt;
  opt.repeats = 5;
  const auto t = gpu::time_kernel([&](cudaStream_t s) { CUDA_CHECK(cudaMemsetAsync(buf.data(), 1, buf.bytes(), s)); }, opt);
  REQUIRE(t.seconds.size() == 5);
  CHECK(t.summary.median > 0);
  CHECK(t.sm_clock_hz > 2e8);
  const auto m = measured_rate(t, static_cast<double>(buf.bytes()), "test");
  CHECK(m.median == doctest::Approx(buf.bytes() / t.summary.median));
  CHECK(m.repeats == 5);
  CHECK(m.date.size() == 20);
  gpu::flush_l2();
  CUDA_CHECK(cudaDeviceSynchronize());
}

TEST_CASE("time_kernel without clock samples: gated repeats, no clock, a launch that synchronizes still ends") {
  gpu::DeviceBuffer<char> buf(16 << 20);
  gpu::TimingOptions opt;
  opt.repeats = 6;
  opt.clock_samples = 0;
  auto launch = [&](cudaStream_t s) {
    for (int i = 0; i < 8; ++i) CUDA_CHECK(cudaMemsetAsync(buf.data(), i, buf.bytes(), s));
  };
  const auto t = gpu::time_kernel(launch, opt);
  REQUIRE(t.seconds.size() == 6);
  CHECK(t.summary.min > 0);
  CHECK(t.sm_clock_hz == 0);
  opt.clock_samples = 2;
  const auto t2 = gpu::time_kernel(launch, opt);
  CHECK(t2.sm_clock_hz > 2e8);
  // A launch that waits for the device inside the timed region: the gate times out instead of
  // deadlocking (each gated repeat then costs the gate's timeout).
  opt.clock_samples = 0;
  opt.repeats = 2;
  const auto t3 = gpu::time_kernel([&](cudaStream_t s) {
    CUDA_CHECK(cudaMemsetAsync(buf.data(), 3, buf.bytes(), s));
    CUDA_CHECK(cudaStreamSynchronize(s));
  }, opt);
  CHECK(t3.seconds.size() == 2);
  char first = 0;
  CUDA_CHECK(cudaMemcpy(&first, buf.data(), 1, cudaMemcpyDeviceToHost));
  CHECK(first == 3);
}

TEST_CASE("pointer chase: every mode follows its ring and L1 < L2 < DRAM") {
  mem::PointerChase chase(64 << 20);
  const auto l1 = chase.run({mem::ChaseMode::ca, 8 << 10, 32, 2048});
  const auto sh = chase.run({mem::ChaseMode::shared, 8 << 10, 4, 2048});
  const auto l2 = chase.run({mem::ChaseMode::cg, 1 << 20, 32, 2048});
  mem::ChaseSpec cold{mem::ChaseMode::cg, 64 << 20, 128, 2048};
  cold.cold = true;
  const auto dram = chase.run(cold);
  mem::ChaseSpec tlb{mem::ChaseMode::tlb, 32 << 20, 2 << 20, 64};
  const auto pages = chase.run(tlb);
  MESSAGE("l1 " << l1.cycles_per_load << " shared " << sh.cycles_per_load << " l2 " << l2.cycles_per_load << " dram "
                << dram.cycles_per_load << " tlb16 " << pages.cycles_per_load);
  CHECK(l1.cycles_per_load > 5);
  CHECK(sh.cycles_per_load > 5);
  CHECK(l1.cycles_per_load < l2.cycles_per_load);
  CHECK(l2.cycles_per_load < dram.cycles_per_load);
  CHECK(sh.cycles_per_load < l2.cycles_per_load);
  CHECK(l1.sm_clock_hz > 2e8);
  CHECK_THROWS_AS(chase.run({mem::ChaseMode::cg, 128 << 20, 32, 64}), std::invalid_argument);
}

TEST_CASE("pointer chase: the TLB sweep with one line per page and with many (the near/far L2 average)") {
  // Printed side by side: with one line per page the few lines of a small footprint sit in the near
  // or the far L2 by chance; the default visits >= 4096 lines in all, the same pages in the same order.
  const std::size_t page = 2 << 20;
  mem::PointerChase chase(1024 * page + page);
  std::string one, many;
  for (std::size_t pages : {4, 8, 11, 16, 22, 32, 64, 128, 181, 256, 512, 1024}) {
    mem::ChaseSpec spec{mem::ChaseMode::tlb, pages * page, page, static_cast<long long>(std::max<std::size_t>(4096, pages))};
    const auto dflt = chase.run(spec);
    CHECK(dflt.elements == pages * std::clamp<std::size_t>((4096 + pages - 1) / pages, 1, 512));
    spec.lines_per_page = 1;
    const auto single = chase.run(spec);
    CHECK(single.elements == pages);
    char b[64];
    std::snprintf(b, sizeof b, " %zu:%.1f", pages * 2, single.cycles_per_load);
    one += b;
    std::snprintf(b, sizeof b, " %zu:%.1f", pages * 2, dflt.cycles_per_load);
    many += b;
  }
  MESSAGE("tlb sweep MiB:cycles, one line per page:" << one);
  MESSAGE("tlb sweep MiB:cycles, default lines:    " << many);
  mem::ChaseSpec bad{mem::ChaseMode::tlb, 8 * page, page, 64};
  bad.lines_per_page = 513;
  CHECK_THROWS_AS(chase.run(bad), std::invalid_argument);
  bad.lines_per_page = 0;
  bad.stride_bytes = 32 << 10;
  bad.footprint_bytes = 64 * bad.stride_bytes;
  CHECK_THROWS_AS(chase.run(bad), std::invalid_argument);
}

TEST_CASE("pointer chase: one element per line, warmed in ring order, steps near L2 < far L2 < DRAM") {
  const gpu::DeviceInfo d = gpu::query_device(0);
  const double l2 = static_cast<double>(d.l2_bytes);
  mem::PointerChase chase(static_cast<std::size_t>(2.5 * l2) + 4096);
  const auto at = [&](double fraction, std::size_t stride = 128, long long steps = 16384, long long warm = -1,
                      mem::WarmScope scope = mem::WarmScope::ring_order) {
    mem::ChaseSpec s{mem::ChaseMode::cg, static_cast<std::size_t>(fraction * l2) / stride * stride, stride, steps};
    s.warm = scope;
    s.warm_steps = warm;
    return chase.run(s).cycles_per_load;
  };
  const double near = at(0.25), far = at(0.8), dram = at(2.0);
  MESSAGE("near " << near << " far " << far << " dram " << dram);
  CHECK(far > 1.3 * near);   // H100: 276 vs 521 cycles
  CHECK(dram > 1.15 * far);  // 679 vs 521
  if (std::getenv("CEILING_PCHASE_EXPERIMENT")) {
    for (const double f : {0.3, 0.7, 0.8, 0.9, 1.5}) {
      const long long n = static_cast<long long>(f * l2 / 128);
      MESSAGE("footprint " << f << " x L2: ring-order warm " << at(f) << ", own lap " << at(f, 128, 16384, n)
                           << ", ring-order 131072 steps " << at(f, 128, 131072) << ", stride 256 " << at(f, 256)
                           << ", stride 64 " << at(f, 64) << ", address-order warm " << at(f, 128, 16384, -1, mem::WarmScope::this_sm));
    }
  }
}

TEST_CASE("ring order is a single cycle") {
  for (std::uint32_t n : {2u, 7u, 64u, 1000u, 4097u}) {
    std::vector<char> seen(n, 0);
    for (std::uint32_t k = 0; k < n; ++k) {
      const auto e = mem::ring_element(k, n, 3);
      REQUIRE(e < n);
      CHECK(!seen[e]);
      seen[e] = 1;
    }
    CHECK(mem::ring_element(n, n, 3) == mem::ring_element(0, n, 3));
  }
}

TEST_CASE("stream patterns verify and report a positive bandwidth") {
  gpu::TimingOptions opt;
  opt.warmup = 1;
  opt.repeats = 3;
  // Persistent grids and a grid over the array (blocks_per_sm 0), each load flavor once.
  const std::vector<mem::LaunchConfig> cands{{1, 256, 1, 0}, {2, 256, 4, 1}, {0, 128, 2, 2}};
  for (auto p : {mem::StreamPattern::read, mem::StreamPattern::write, mem::StreamPattern::copy, mem::StreamPattern::scale,
                 mem::StreamPattern::triad}) {
    CAPTURE(mem::to_string(p));
    // An odd element count exercises the tail loop.
    const auto r = mem::stream_bandwidth(p, (1 << 20) + 13, cands, opt, 2);
    CHECK(r.tried.size() == 3);
    CHECK(r.bytes_per_run == doctest::Approx(16.0 * ((1 << 20) + 13) * mem::arrays_touched(p)));
    CHECK(r.timing.summary.median > 0);
  }
}

TEST_CASE("warm ramp: warp-contiguous stream kernels verify at odd sizes (each one chosen alone)") {
  std::vector<mem::LaunchConfig> warp;
  for (const auto& c : mem::ramp_candidates(mem::RampTiming::warm, false))
    if (c.layout == 1) warp.push_back(c);
  REQUIRE(warp.size() >= 6);
  CHECK(warp.front().str().find("warp-contiguous") != std::string::npos);
  for (const auto& c : mem::ramp_candidates(mem::RampTiming::cold, false)) CHECK(c.layout == 0);
  for (auto p : {mem::StreamPattern::read, mem::StreamPattern::write, mem::StreamPattern::scale}) {
    CAPTURE(mem::to_string(p));
    for (const auto& c : warp) {
      CAPTURE(c.str());
      // Odd counts: the last trip of a block is partial. stream_ramp checks the chosen (only) one.
      const auto pts = mem::stream_ramp(p, {1000003, 65537}, mem::RampTiming::warm, {c}, 2);
      REQUIRE(pts.size() == 2);
      CHECK(pts[0].config.str() == c.str());
      CHECK(pts[0].min_s > 0);
    }
  }
}

TEST_CASE("L2, L1 and shared bandwidth kernels verify their checksums") {
  gpu::TimingOptions opt;
  opt.warmup = 1;
  opt.repeats = 3;
  // Both layouts (a slice per block, all blocks over the buffer) and both load flavors.
  const auto r = mem::l2_bandwidth((1 << 20) + 48, 3, {{1, 256, 2, 0, 0}, {1, 512, 8, 1, 1}, {2, 256, 4, 0, 1}}, opt, 2);
  CHECK(r.tried.size() == 3);
  CHECK(r.timing.summary.median > 0);
  const auto l1 = mem::l1_bandwidth_per_sm(16, 2);
  const auto sh = mem::shared_bandwidth_per_sm(16, 2);
  REQUIRE(l1.bytes_per_clock.size() == 2);
  REQUIRE(sh.bytes_per_clock.size() == 2);
  // Physical bound: nothing moves more than 256 B per clock per SM from L1 or shared.
  CHECK(l1.bytes_per_clock[0] > 1);
  CHECK(l1.bytes_per_clock[0] < 256);
  CHECK(sh.bytes_per_clock[0] > 1);
  CHECK(sh.bytes_per_clock[0] < 256);
}

TEST_CASE("memory probes are registered with their fields") {
  for (const char* name : {"sm-clock", "pchase-latency", "dram-bandwidth", "l2-bandwidth", "l1-bandwidth", "shared-bandwidth"}) {
    CAPTURE(name);
    const auto* p = registry().find(name);
    REQUIRE(p != nullptr);
    CHECK(p->group == "memory");
    CHECK(!p->fills.empty());
  }
}
