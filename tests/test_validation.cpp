// Validation logic with synthetic timings: split, sweep, verdicts, speedups, geomeans, phi fit,
// results JSON. No GPU.
#include <functional>
#include <doctest/doctest.h>

#include "approx.hpp"

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "model/descriptor.hpp"
#include "model/kernel_model.hpp"
#include "model/roofline.hpp"
#include "model/validation.hpp"

using namespace ceiling;
using namespace ceiling::validation;

namespace {

constexpr double kL2 = 50.0 * 1024 * 1024;

// GH200-like numbers (GPGPU'25 Table 1) with an L2 bandwidth: spec values only.
HardwareDescriptor synthetic_descriptor() {
  HardwareDescriptor hw;
  hw.id = "synthetic";
  hw.identity.name = "Synthetic GPU";
  hw.identity.sm_count = 132;
  hw.memory[MemoryLevelKind::dram].bandwidth.dimension = Dimension::bytes_per_second;
  hw.memory[MemoryLevelKind::dram].bandwidth.spec = SpecValue{4.0e12, "test"};
  hw.memory[MemoryLevelKind::dram].capacity.spec = SpecValue{96e9, "test"};
  hw.memory[MemoryLevelKind::l2].bandwidth.dimension = Dimension::bytes_per_second;
  hw.memory[MemoryLevelKind::l2].bandwidth.spec = SpecValue{10.0e12, "test"};
  hw.memory[MemoryLevelKind::l2].capacity.spec = SpecValue{kL2, "test"};
  Field cc{Dimension::flop_per_second};
  cc.spec = SpecValue{34.0e12, "test"};
  Field tc{Dimension::flop_per_second};
  tc.spec = SpecValue{67.0e12, "test"};
  hw.compute[ComputeUnit::cuda_core][Precision::fp64] = cc;
  hw.compute[ComputeUnit::tensor_core][Precision::fp64] = tc;
  return hw;
}

KernelModel scale_k(double n, double fraction = 1.0) {
  KernelModel k = scale_model(n, Precision::fp64);
  k.tensor_core_fraction = fraction;
  k.working_set_bytes = 2 * n * 8;
  return k;
}

// Milliseconds-long warm batches: the event resolution is negligible unless a test says otherwise.
TimeStats stats(double median, double cv = 0.01, int repeats = 20, int launches = 100000) {
  return TimeStats{median, median * 0.99, median * 1.02, cv, repeats, launches};
}

KernelResult synthetic_result(const std::string& variant, double n, double t, const std::string& level,
                              double eq22 = 0.97, double cv = 0.01) {
  KernelResult r;
  r.kernel = "scale";
  r.variant = variant;
  r.precision = "fp64";
  r.size = {{"n", n}};
  r.working_set_bytes = 16 * n;
  r.memory_level = level;
  r.work_flop = n;
  r.traffic_bytes = 16 * n;
  r.intensity = 1.0 / 16;
  r.time_s = stats(t, cv);
  r.achieved_bytes_per_s = 16 * n / t;
  r.achieved_flop_per_s = n / t;
  r.bound_time_s = 16 * n / 4e12;
  r.efficiency = r.bound_time_s / t;
  r.verdict = "within-bound";
  r.verdict_reason = "synthetic";
  r.t_memory_s = r.bound_time_s;
  r.t_compute_s = n / 34e12;
  r.alpha = 0.246;
  r.speedup_bound_eq22 = eq22;
  r.speedup_limit_eq23 = 0.395;
  return r;
}

}  // namespace

TEST_CASE("the L2 split sits at half the L2, as in the paper") {
  CHECK(memory_level_for(kL2 / 2, kL2) == "l2");
  CHECK(memory_level_for(kL2 / 2 + 1, kL2) == "dram");
  CHECK(memory_level_for(1024, kL2) == "l2");
  CHECK(memory_level_for(8 * kL2, kL2) == "dram");
  CHECK(side_of_split("l2") == "in-l2");
  CHECK(side_of_split("dram") == "out-of-l2");
  CHECK_THROWS(memory_level_for(1, 0));
}

TEST_CASE("default sweep: L2/32 to 8 x L2, log-spaced, the split on a grid point") {
  const auto full = default_sweep_bytes(kL2, false);
  REQUIRE(full.size() == 33);
  CHECK(full.front() == ceiling_test::Rel(kL2 / 32));
  CHECK(full.back() == ceiling_test::Rel(8 * kL2));
  for (size_t i = 1; i < full.size(); ++i) CHECK(full[i] / full[i - 1] == ceiling_test::Rel(std::exp2(0.25)));
  int in_l2 = 0;
  for (double b : full) in_l2 += memory_level_for(b, kL2) == "l2";
  CHECK(in_l2 == 17);  // l2/32 .. l2/2 inclusive
  const auto quick = default_sweep_bytes(kL2, true);
  REQUIRE(quick.size() == 9);
  CHECK(quick[4] == ceiling_test::Rel(kL2 / 2));
}

TEST_CASE("noise margin shrinks with repeats and vanishes without spread") {
  CHECK(noise_margin(0, 20) == 0);
  CHECK(noise_margin(0.05, 20) == ceiling_test::Rel(2 * 1.2533 * 0.05 / std::sqrt(20.0)));
  CHECK(noise_margin(0.05, 80) < noise_margin(0.05, 20));
  // One event tick (0.5 us) on a 4 us single launch is 12.5%; over 16 launches, 0.8%.
  CHECK(measurement_margin(TimeStats{4e-6, 4e-6, 4e-6, 0, 20, 1}) == ceiling_test::Rel(0.125));
  CHECK(measurement_margin(TimeStats{4e-6, 4e-6, 4e-6, 0, 20, 16}) == ceiling_test::Rel(0.125 / 16));
}

TEST_CASE("a beat inside the event resolution is not a beat") {
  VerdictContext l2{8e6, kL2, "l2", "measured", 10e12, 11e12, false};
  CHECK(judge_time(1.1, TimeStats{4e-6, 4e-6, 4e-6, 0, 20, 1}, l2).verdict == "within-bound");
  CHECK(judge_time(1.1, TimeStats{4e-6, 4e-6, 4e-6, 0, 20, 16}, l2).verdict == "beats-bound");
}

TEST_CASE("time verdicts: within, within noise, beats with a named cause") {
  VerdictContext dram{400e6, kL2, "dram", "measured", 4.0e12, 3.8e12, true};
  auto v = judge_time(0.95, stats(1e-3), dram);
  CHECK(v.verdict == "within-bound");
  CHECK(v.reason.find("95.0%") != std::string::npos);

  // 0.5% above the bound with 5% spread over 20 repeats is noise, not a beat.
  v = judge_time(1.005, stats(1e-3, 0.05), dram);
  CHECK(v.verdict == "within-bound");
  CHECK(v.reason.find("measurement margin") != std::string::npos);
  // The same 0.5% with no spread is a beat.
  v = judge_time(1.005, stats(1e-3, 0.0), dram);
  CHECK(v.verdict == "beats-bound");
  CHECK(v.reason.find("descriptor DRAM bandwidth below measured") != std::string::npos);

  VerdictContext fits_l2{40e6, kL2, "dram", "spec", 4.0e12, 6.0e12, false};
  v = judge_time(1.5, stats(1e-5), fits_l2);
  CHECK(v.verdict == "beats-bound");
  CHECK(v.reason.find("fits the L2") != std::string::npos);
  CHECK(v.reason.find("spec") != std::string::npos);

  VerdictContext l2{8e6, kL2, "l2", "measured", 10e12, 12e12, false};
  v = judge_time(1.2, stats(1e-6), l2);
  CHECK(v.verdict == "beats-bound");
  CHECK(v.reason.find("descriptor L2 bandwidth below measured") != std::string::npos);

  VerdictContext near{120e6, kL2, "dram", "measured", 4.0e12, 4.4e12, true};
  v = judge_time(1.1, stats(1e-4, 0.0), near);
  CHECK(v.reason.find("dirty lines") != std::string::npos);
}

TEST_CASE("evaluate: a compute-bound result's verdict names the compute ceiling it was held to, not a bandwidth") {
  auto hw = synthetic_descriptor();
  MeasuredValue gl{28.3e12, 28.2e12, 28.4e12, 7, 0.001, "gemm-loop", "2026-11-28T16:00:00Z", 1.98e9, false, "8x8"};
  hw.set_measured("compute.cuda_core_gemm_loop.fp64", gl);
  KernelModel k = gemm_model(4096, 4096, 4096);
  k.working_set_bytes = k.traffic_bytes;
  const double t_cc = k.work_flop / 28.3e12;
  auto r = evaluate(hw, k, ComputeUnit::cuda_core, {{"m", 4096}, {"n", 4096}, {"k", 4096}}, stats(t_cc / 0.9), kL2, true);
  CHECK(r.verdict == "within-bound");
  CHECK(r.bound_time_s == ceiling_test::Rel(t_cc));
  INFO(r.verdict_reason);
  CHECK(r.verdict_reason.find("90.0% of the bound at CUDA-core ceiling 28.3 TFLOP/s") != std::string::npos);
  CHECK(r.verdict_reason.find("compute.cuda_core_gemm_loop.fp64, measured") != std::string::npos);
  CHECK(r.verdict_reason.find("bandwidth") == std::string::npos);
  // Faster than the ceiling: a compute beat, with its causes (no DRAM or L2 talk).
  r = evaluate(hw, k, ComputeUnit::cuda_core, {{"m", 4096}, {"n", 4096}, {"k", 4096}}, stats(t_cc / 1.2, 0.0), kL2, true);
  CHECK(r.verdict == "beats-bound");
  CHECK(r.verdict_reason.find("of the compute bound at the CUDA-core ceiling") != std::string::npos);
  CHECK(r.verdict_reason.find("bandwidth") == std::string::npos);
  // The tensor-core side names its own ceiling (spec here).
  r = evaluate(hw, k, ComputeUnit::tensor_core, {{"m", 4096}, {"n", 4096}, {"k", 4096}},
               stats(k.work_flop / 67.0e12 / 0.8), kL2, true);
  CHECK(r.verdict_reason.find("80.0% of the bound at tensor-core ceiling 67 TFLOP/s (compute.tensor_core.fp64, spec)") !=
        std::string::npos);
  // A memory-bound result keeps the bandwidth.
  const KernelModel sk = scale_k(16.0 * 1024 * 1024);
  r = evaluate(hw, sk, ComputeUnit::cuda_core, {{"n", 16.0 * 1024 * 1024}}, stats(1.0), kL2, true);
  CHECK(r.verdict_reason.find("DRAM bandwidth") != std::string::npos);
}

TEST_CASE("evaluate: memory-bound SCALE is bounded by Q/BW of the level its working set sits in") {
  const auto hw = synthetic_descriptor();
  // Out of L2: 256 MiB working set, DRAM at 4 TB/s.
  const double n = 16.0 * 1024 * 1024;
  const KernelModel k = scale_k(n);
  const double t_dram = 16 * n / 4.0e12;
  auto r = evaluate(hw, k, ComputeUnit::cuda_core, {{"n", n}}, stats(t_dram / 0.9), kL2, true);
  CHECK(r.memory_level == "dram");
  CHECK(r.bound_time_s == ceiling_test::Rel(t_dram));
  CHECK(r.efficiency == ceiling_test::Rel(0.9));
  CHECK(r.verdict == "within-bound");
  CHECK(r.achieved_bytes_per_s == ceiling_test::Rel(0.9 * 4.0e12));
  CHECK(r.achieved_flop_per_s == ceiling_test::Rel(n / (t_dram / 0.9)));
  CHECK(r.intensity == ceiling_test::Rel(1.0 / 16));
  CHECK(r.bandwidth_source == "spec");
  CHECK(r.dram_pattern.empty());  // no calibrated pattern in a spec-only descriptor

  // With a calibrated "scale" pattern the out-of-L2 result is also held against it.
  auto calibrated = hw;
  Field scale_pattern{Dimension::bytes_per_second};
  MeasuredValue mv;
  mv.median = 4.2e12;
  mv.probe = "dram-bandwidth";
  scale_pattern.measured = mv;
  calibrated.memory[MemoryLevelKind::dram].patterns["scale"] = scale_pattern;
  r = evaluate(calibrated, k, ComputeUnit::cuda_core, {{"n", n}}, stats(t_dram / 0.9), kL2, true);
  CHECK(r.dram_pattern == "scale");
  CHECK(r.dram_pattern_bytes_per_s == 4.2e12);
  CHECK(to_json(ValidationReport{}).contains("results"));

  // A run faster than DRAM allows is a beat.
  r = evaluate(hw, k, ComputeUnit::cuda_core, {{"n", n}}, stats(t_dram / 1.3, 0.0), kL2, true);
  CHECK(r.verdict == "beats-bound");

  // In L2: 8 MiB working set, L2 at 10 TB/s; the same time would beat DRAM but not the L2.
  const double m = 512.0 * 1024;
  const KernelModel small = scale_k(m);
  const double t_l2 = 16 * m / 10.0e12;
  r = evaluate(hw, small, ComputeUnit::cuda_core, {{"n", m}}, stats(t_l2 / 0.8), kL2, false);
  CHECK(r.memory_level == "l2");
  CHECK(r.bound_time_s == ceiling_test::Rel(t_l2));
  CHECK(r.efficiency == ceiling_test::Rel(0.8));
  CHECK(r.verdict == "within-bound");

  // Tensor-core SCALE: W/(P_TC/8) = n/8.375 TFLOP/s is still below Q/BW, the bound stays Tmem.
  const KernelModel ktc = scale_k(n, 1.0 / 8);
  r = evaluate(hw, ktc, ComputeUnit::tensor_core, {{"n", n}}, stats(t_dram / 0.9), kL2, true);
  CHECK(r.t_compute_s == ceiling_test::Rel(n / (67e12 / 8)));
  CHECK(r.t_compute_s < r.t_memory_s);
  CHECK(r.bound_time_s == ceiling_test::Rel(t_dram));
  CHECK(r.alpha == ceiling_test::Rel((67e12 / 8) / 34e12).epsilon(1e-3));
  // Eq. 22 with alpha < 1 predicts a slowdown.
  CHECK(r.speedup_bound_eq22 < 1.0);
  CHECK(r.speedup_bound_eq22 == ceiling_test::Rel(speedup_bound(r.alpha, 34e12 / 4e12, 1.0 / 16)).epsilon(1e-6));
}

TEST_CASE("speedups pair CUDA-core and tensor-core results and hold them against max(1, Eq. 22)") {
  std::vector<KernelResult> rs;
  rs.push_back(synthetic_result("cuda_core", 1e6, 10e-6, "l2"));
  rs.push_back(synthetic_result("tensor_core", 1e6, 12e-6, "l2"));
  rs.push_back(synthetic_result("cuda_core", 1e8, 400e-6, "dram"));
  rs.push_back(synthetic_result("tensor_core", 1e8, 400e-6, "dram"));
  rs.push_back(synthetic_result("cuda_core", 2e8, 800e-6, "dram", 0.97, 0.0));
  rs.push_back(synthetic_result("tensor_core", 2e8, 700e-6, "dram", 0.97, 0.0));  // TC 14% faster: a beat
  const auto s = speedups(rs);
  REQUIRE(s.size() == 3);
  CHECK(s[0].measured == ceiling_test::Rel(10.0 / 12.0));
  CHECK(s[0].verdict == "within-bound");
  CHECK(s[0].upper_bound == ceiling_test::Rel(1.0));  // alpha < 1: full overlap is the top
  CHECK(s[1].measured == ceiling_test::Rel(1.0));
  CHECK(s[1].verdict == "within-bound");
  CHECK(s[2].measured == ceiling_test::Rel(800.0 / 700.0));
  CHECK(s[2].verdict == "beats-bound");
  // The reason names the side: both results within their own bounds here, so it is the CUDA-core
  // result's shortfall; a tensor-core result above its own bound is named as that.
  CHECK(rs[5].verdict == "within-bound");
  CHECK(s[2].verdict_reason.find("CUDA-core variant reaches less of its own bound") != std::string::npos);
  rs[5].verdict = "beats-bound";
  const auto s3 = speedups(rs);
  REQUIRE(s3.size() == 3);
  CHECK(s3[2].verdict_reason.find("tensor-core result beats its own bound") != std::string::npos);

  // alpha > 1: the Eq. 22 bound itself is the top.
  std::vector<KernelResult> hi;
  hi.push_back(synthetic_result("cuda_core", 1e6, 12e-6, "l2", 1.2, 0.0));
  hi.push_back(synthetic_result("tensor_core", 1e6, 10e-6, "l2", 1.25, 0.0));
  const auto s2 = speedups(hi);
  REQUIRE(s2.size() == 1);
  CHECK(s2[0].upper_bound == ceiling_test::Rel(1.25));
  CHECK(s2[0].verdict == "within-bound");
}

TEST_CASE("speedups pair a tensor-core result only with CUDA-core results of as many passes that move no more bytes by their model") {
  // A stencil at t = 3: one pass per step moves 3 Q, the fused CUDA-core and tensor-core variants Q.
  std::vector<KernelResult> rs;
  KernelResult plain = synthetic_result("cuda_core", 1e8, 900e-6, "dram");
  plain.implementation = "plain";
  plain.traffic_bytes *= 3;
  KernelResult blocked = synthetic_result("cuda_core", 1e8, 400e-6, "dram");
  blocked.implementation = "blocked";
  KernelResult tc = synthetic_result("tensor_core", 1e8, 450e-6, "dram");
  tc.implementation = "toeplitz-mma";
  rs = {plain, blocked, tc};
  const auto s = speedups(rs);
  REQUIRE(s.size() == 1);  // not plain: pairing it would credit the tensor cores with the fusion
  CHECK(s[0].cuda_core_implementation == "blocked");
  CHECK(s[0].measured == ceiling_test::Rel(400.0 / 450.0));
  // A CUDA-core result with less traffic than the tensor core's (SpMV CSR against a padded layout) pairs.
  rs[0].traffic_bytes = tc.traffic_bytes / 2;
  CHECK(speedups(rs).size() == 2);
  // A tensor-core kernel of one launch per step (3 passes, 3 Q) pairs with the CUDA-core one (plain),
  // not with fused steps (blocked: fewer bytes, one pass), which would charge the tensor cores with
  // the passes.
  plain.passes = 3;
  KernelResult plain_mma = tc;
  plain_mma.implementation = "plain-mma";
  plain_mma.traffic_bytes = plain.traffic_bytes;
  plain_mma.passes = 3;
  const auto s2 = speedups({plain, blocked, plain_mma});
  REQUIRE(s2.size() == 1);
  CHECK(s2[0].cuda_core_implementation == "plain");
  CHECK(s2[0].tensor_core_implementation == "plain-mma");
  CHECK(s2[0].measured == ceiling_test::Rel(900.0 / 450.0));
}

TEST_CASE("geomeans of T(CC)/T(TC) per side of the L2 split, and the paper's CUDA-core speedup") {
  std::vector<SpeedupResult> s(4);
  const auto make = [](double n, double ws, const char* level, double measured) {
    SpeedupResult r;
    r.kernel = "scale";
    r.precision = "fp64";
    r.size = {{"n", n}};
    r.working_set_bytes = ws;
    r.memory_level = level;
    r.measured = measured;
    return r;
  };
  s[0] = make(1, 1e6, "l2", 0.5);    // TC twice as slow
  s[1] = make(2, 2e6, "l2", 0.125);  // TC 8x slower
  s[2] = make(3, 4e8, "dram", 1.0);
  s[3] = make(4, 8e8, "dram", 0.25);
  const auto g = geomeans(s);
  REQUIRE(g.size() == 2);
  CHECK(g[0].side == "in-l2");
  CHECK(g[0].cc_over_tc == ceiling_test::Rel(0.25));
  CHECK(g[0].cc_speedup == ceiling_test::Rel(4.0));
  CHECK(g[0].count == 2);
  CHECK(g[1].side == "out-of-l2");
  CHECK(g[1].cc_over_tc == ceiling_test::Rel(0.5));
  CHECK(g[1].cc_speedup == ceiling_test::Rel(2.0));
  CHECK(g[1].count == 2);
}

TEST_CASE("phi fit recovers the overlap factor of synthetic timings") {
  // Tm/Tc varies (two memory levels, two intensities) so (1-phi) and Tother are identifiable.
  const double phi = 0.3, t_other = 2e-6;
  std::vector<OverlapPoint> pts;
  for (double tm : {1e-5, 3e-5, 1e-4, 3e-4}) {
    for (double ratio : {0.1, 0.5, 2.0}) {
      const double tc = tm * ratio;
      pts.push_back({partial_overlap_time_s(tm, tc, phi, t_other), tm, tc});
    }
  }
  auto f = fit_overlap(pts);
  CHECK(f.phi == ceiling_test::Rel(phi).epsilon(1e-9));
  CHECK(f.phi_raw == ceiling_test::Rel(phi).epsilon(1e-9));
  CHECK(f.t_other_s == ceiling_test::Rel(t_other).epsilon(1e-6));
  CHECK(f.r2 == ceiling_test::Rel(1.0));
  CHECK_FALSE(f.clamped);
  CHECK(f.points == 12);

  // Timings slower than even the un-overlapped sum: phi clamps at 0 and says why.
  std::vector<OverlapPoint> slow;
  for (double tm : {1e-5, 1e-4, 1e-3}) slow.push_back({3.0 * tm, tm, 0.01 * tm});
  f = fit_overlap(slow);
  CHECK(f.phi_raw < 0);
  CHECK(f.phi == 0.0);
  CHECK(f.clamped);
  CHECK(f.note.find("phi < 0") != std::string::npos);
  CHECK(f.r2 < 0.9);

  // Noise lowers r2 below 1.
  std::vector<OverlapPoint> noisy = pts;
  for (size_t i = 0; i < noisy.size(); ++i) noisy[i].t_measured *= (i % 2 ? 1.05 : 0.95);
  f = fit_overlap(noisy);
  CHECK(f.r2 < 0.9999);
  CHECK(f.r2 > 0.9);

  CHECK_THROWS(fit_overlap({{1, 1, 1}, {2, 2, 2}}));
}

TEST_CASE("results JSON: the FORMATS.md keys, round trip, strict reading") {
  ValidationReport r;
  r.tool_version = "0.1.0";
  r.date = "2026-11-21T12:00:00Z";
  r.command_line = "ceiling validate --hw h200";
  r.device = {"NVIDIA H200", "GPU-1234", "9.0", "13.0", "13.0", 132, 62914560};
  r.sm_clock_hz = 1.98e9;
  r.descriptor_id = "h200";
  r.descriptor_path = "hardware/h200.yaml";
  for (double n : {1e5, 2e5, 4e5}) {
    r.results.push_back(synthetic_result("cuda_core", n, n * 4e-12, "l2"));
    r.results.push_back(synthetic_result("tensor_core", n, n * 5e-12, "l2"));
  }
  summarize(r);
  REQUIRE(r.speedups.size() == 3);
  REQUIRE(r.geomeans.size() == 1);
  CHECK(r.geomeans[0].cc_over_tc == ceiling_test::Rel(0.8));
  CHECK(r.geomeans[0].cc_speedup == ceiling_test::Rel(1.25));
  REQUIRE(r.overlap_fits.size() == 2);
  r.results[0].passes = 3;  // a kernel of one launch per step: the key appears above 1 and reads back

  const auto j = to_json(r);
  CHECK(j["schema"] == "ceiling/validation/1");
  for (const char* k : {"tool_version", "date", "command_line", "device", "sm_clock_hz", "descriptor", "results",
                        "speedups", "geomeans", "overlap_fits"})
    CHECK_MESSAGE(j.contains(k), k);
  for (const char* k : {"name", "uuid", "sm_count", "compute_capability", "driver", "cuda_version"})
    CHECK_MESSAGE(j["device"].contains(k), k);
  const auto& e = j["results"][0];
  for (const char* k : {"kernel", "variant", "precision", "size", "working_set_bytes", "memory_level", "work_flop",
                        "traffic_bytes", "intensity", "time_s", "achieved_bytes_per_s", "achieved_flop_per_s",
                        "bound_time_s", "efficiency", "verdict", "verdict_reason"})
    CHECK_MESSAGE(e.contains(k), k);
  for (const char* k : {"median", "min", "max", "cv", "repeats"}) CHECK_MESSAGE(e["time_s"].contains(k), k);
  CHECK(e["size"]["n"] == 100000);
  CHECK(e["time_s"]["launches"] == 100000);
  CHECK(e["passes"] == 3);
  CHECK_FALSE(j["results"][1].contains("passes"));
  for (const char* k : {"kernel", "size", "working_set_bytes", "memory_level", "measured", "bound_eq22", "limit_eq23",
                        "verdict"})
    CHECK_MESSAGE(j["speedups"][0].contains(k), k);
  for (const char* k : {"kernel", "side", "cc_over_tc", "count"}) CHECK_MESSAGE(j["geomeans"][0].contains(k), k);
  for (const char* k : {"kernel", "variant", "phi", "r2", "points"}) CHECK_MESSAGE(j["overlap_fits"][0].contains(k), k);

  const auto back = from_json(nlohmann::json::parse(j.dump()));
  CHECK(to_json(back).dump() == j.dump());

  auto bad = nlohmann::json::parse(j.dump());
  bad["schema"] = "ceiling/validation/0";
  CHECK_THROWS_WITH_AS(from_json(bad), doctest::Contains("schema"), std::runtime_error);
  bad = nlohmann::json::parse(j.dump());
  bad["results"][0]["passes"] = 0;
  CHECK_THROWS_WITH_AS(from_json(bad), doctest::Contains("passes"), std::runtime_error);
  bad = nlohmann::json::parse(j.dump());
  bad["results"][1].erase("efficiency");
  CHECK_THROWS_WITH_AS(from_json(bad), doctest::Contains("results[1]: missing key 'efficiency'"), std::runtime_error);
  // A value of the wrong type names where it is and what it should be, never nlohmann's own text
  // (a fuzzer found a schema given as an array leaking "[json.exception.type_error.302]").
  const auto refused = [&](const std::function<void(nlohmann::json&)>& spoil) {
    auto x = nlohmann::json::parse(j.dump());
    spoil(x);
    try {
      from_json(x);
    } catch (const std::runtime_error& err) {
      return std::string(err.what());
    }
    return std::string("accepted");
  };
  std::string m = refused([](nlohmann::json& x) { x["schema"] = nlohmann::json::array({"ceiling/validation/1"}); });
  CHECK(m == "validation results: top level.schema: expected a string, found an array");
  m = refused([](nlohmann::json& x) { x["results"][0]["l2_flushed"] = "yes"; });
  CHECK(m == "validation results: results[0].l2_flushed: expected true or false, found a string");
  m = refused([](nlohmann::json& x) { x["results"][2]["time_s"]["repeats"] = 1e30; });
  CHECK(m == "validation results: results[2].time_s.repeats: expected an integer, found 1e+30");
  m = refused([](nlohmann::json& x) { x["results"][0]["size"]["n"] = "big"; });
  CHECK(m == "validation results: results[0].size.n: expected a number, found a string");
  m = refused([](nlohmann::json& x) { x["speedups"] = nlohmann::json::object(); });
  CHECK(m == "validation results: top level.speedups: expected an array, found an object");
  m = refused([](nlohmann::json& x) { x["overlap_fits"][0]["clamped"] = 1; });
  CHECK(m == "validation results: overlap_fits[0].clamped: expected true or false, found 1");

  const auto path = std::filesystem::temp_directory_path() / "ceiling-test-validation.json";
  save_report(r, path);
  CHECK(to_json(load_report(path)).dump() == j.dump());
  std::filesystem::remove(path);

  const std::string table = format_table(r);
  CHECK(table.find("within-bound") != std::string::npos);
  CHECK(table.find("in-l2") != std::string::npos);
}

TEST_CASE("a compute-bound result run below the calibration clock says so, with its efficiency at that clock") {
  HardwareDescriptor hw;
  MeasuredValue clock;
  clock.median = 1.98e9;
  hw.sm_clock.measured = clock;
  KernelResult r = synthetic_result("cuda_core", 1e6, 10e-6, "dram");
  r.t_memory_s = 1e-6;
  r.t_compute_s = 8e-6;  // compute-bound
  r.efficiency = 0.775;
  r.sm_clock_hz = 1.80e9;
  note_run_clock(r, hw);
  CHECK(r.verdict_reason.find("SM clock 1.800 GHz in this run, 1.980 GHz in the calibration") != std::string::npos);
  CHECK(r.verdict_reason.find("85.2% at the calibration clock") != std::string::npos);  // 0.775 x 1.98 / 1.80
  CHECK(r.efficiency == ceiling_test::Rel(0.775));  // the bound and the efficiency stay
  CHECK(r.verdict == "within-bound");

  KernelResult same = synthetic_result("cuda_core", 1e6, 10e-6, "dram");
  same.t_memory_s = 1e-6;
  same.t_compute_s = 8e-6;
  same.sm_clock_hz = 1.95e9;  // within 3% of the calibration clock
  note_run_clock(same, hw);
  CHECK(same.verdict_reason == "synthetic");

  KernelResult memory = synthetic_result("cuda_core", 1e6, 10e-6, "dram");  // memory-bound: t_compute < t_memory
  memory.sm_clock_hz = 1.5e9;
  note_run_clock(memory, hw);
  CHECK(memory.verdict_reason == "synthetic");

  HardwareDescriptor spec_only;  // no measured clock: nothing to compare with
  KernelResult r2 = synthetic_result("cuda_core", 1e6, 10e-6, "dram");
  r2.t_memory_s = 1e-6;
  r2.t_compute_s = 8e-6;
  r2.sm_clock_hz = 1.5e9;
  note_run_clock(r2, spec_only);
  CHECK(r2.verdict_reason == "synthetic");
}
