// The tight bound of issue 12 with synthetic numbers: max(launch, first byte + max(Q/BW, W/P), ramp(Q)),
// the launch timed as the result was (once or back-to-back); measured minima; missing terms named
// and taken as 0; the descriptor's fixed_costs round-trip; validate carries the bound.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <algorithm>
#include <string>

#include "model/descriptor.hpp"
#include "model/kernel_model.hpp"
#include "model/memory_roof.hpp"
#include "model/validation.hpp"

using namespace ceiling;

namespace {

MeasuredValue measured(double median, double min, double max) {
  return MeasuredValue{median, min, max, 100, 0.05, "launch-overhead", "2026-11-23T00:00:00Z", 1.98e9, false, ""};
}

HardwareDescriptor with_fixed_costs() {
  HardwareDescriptor hw;
  hw.id = "synthetic";
  hw.identity.name = "Synthetic GPU";
  hw.references["test"] = "a test value";
  hw.identity.sm_count = 132;
  hw.sm_clock.dimension = Dimension::hertz;
  hw.sm_clock.measured = MeasuredValue{2e9, 2e9, 2e9, 5, 0, "sm-clock", "2026-11-23T00:00:00Z", 2e9, false, ""};
  auto& dram = hw.memory[MemoryLevelKind::dram];
  dram.bandwidth.spec = SpecValue{4e12, "test"};
  dram.latency.measured = MeasuredValue{600, 590, 610, 7, 0.01, "pchase-latency", "2026-11-23T00:00:00Z", 2e9, false, ""};
  auto& l2 = hw.memory[MemoryLevelKind::l2];
  l2.bandwidth.spec = SpecValue{10e12, "test"};
  l2.capacity.spec = SpecValue{50.0 * (1 << 20), "test"};
  l2.latency.measured = MeasuredValue{270, 268, 275, 7, 0.01, "pchase-latency", "2026-11-23T00:00:00Z", 2e9, false, ""};
  hw.compute[ComputeUnit::cuda_core][Precision::fp64] = Field{Dimension::flop_per_second, SpecValue{34e12, "test"}};
  hw.compute[ComputeUnit::tensor_core][Precision::fp64] = Field{Dimension::flop_per_second, SpecValue{67e12, "test"}};
  hw.fixed_costs.launch_single.measured = measured(3.0e-6, 2.5e-6, 9e-6);
  hw.fixed_costs.launch_back_to_back.measured = measured(2.2e-6, 2.0e-6, 4e-6);
  return hw;
}

}  // namespace

// The old call shape: a level, a memory time at the level's bandwidth, a compute time.
static TightBound bound_at(const HardwareDescriptor& hw, const char* level, double t_memory, double t_compute, bool b2b) {
  const MemoryRoof roof = memory_roof(hw, parse_memory_level(level), 0, 0);
  return tight_bound(hw, roof, t_memory * roof.bandwidth_max, t_compute, b2b);
}

TEST_CASE("tight bound: the launch overlaps the run, first byte adds to the streaming time") {
  const HardwareDescriptor hw = with_fixed_costs();
  const TightBound once = bound_at(hw, "dram", 10e-6, 1e-6, false);
  CHECK(once.launch_s == 2.5e-6);                           // the measured minimum, not the median
  CHECK(once.first_byte_s == ceiling_test::Rel(590 / 2e9));   // least latency at the measured clock
  CHECK(once.first_byte_from == "level latency");           // no ramp in this descriptor
  CHECK(once.asymptotic_s == ceiling_test::Rel(10e-6));
  CHECK(once.time_s == ceiling_test::Rel(295e-9 + 10e-6));
  CHECK(once.missing.empty());
  CHECK(bound_at(hw, "dram", 0.5e-6, 0.1e-6, false).time_s == 2.5e-6);  // launch-bound, launched once
  const TightBound warm_small = bound_at(hw, "l2", 0.3e-6, 0.1e-6, true);
  CHECK(warm_small.time_s == 2.0e-6);  // launch-bound: the back-to-back launch period
  const TightBound warm_big = bound_at(hw, "l2", 30e-6, 0.1e-6, true);
  CHECK(warm_big.time_s == ceiling_test::Rel(268 / 2e9 + 30e-6));
  // A missing term is named and counts 0: still a lower bound.
  HardwareDescriptor bare = hw;
  bare.fixed_costs = {};
  bare.memory[MemoryLevelKind::dram].latency = Field{Dimension::cycles};
  const TightBound b = bound_at(bare, "dram", 10e-6, 1e-6, false);
  CHECK(b.time_s == ceiling_test::Rel(10e-6));  // == the paper's bound when the descriptor has no fixed costs
  REQUIRE(b.missing.size() == 2);
  CHECK(b.missing[0] == "fixed_costs.launch_single");
  CHECK(b.missing[1] == "memory.dram.latency");
}

TEST_CASE("tight bound: a kernel of several dependent launches pays the fixed costs per launch when timed back-to-back") {
  const HardwareDescriptor hw = with_fixed_costs();
  const MemoryRoof l2 = memory_roof(hw, MemoryLevelKind::l2, 0, 0);
  // Three passes of 3 us streaming each, back-to-back: each is a kernel of Q/3 bytes.
  const TightBound three = tight_bound(hw, l2, 9e-6 * l2.bandwidth_max, 0.3e-6, true, 3);
  CHECK(three.passes == 3);
  CHECK(three.first_byte_s == ceiling_test::Rel(268 / 2e9));  // the per-launch term, not the sum
  CHECK(three.time_s == ceiling_test::Rel(3 * 268 / 2e9 + 9e-6));
  CHECK(three.time_s > tight_bound(hw, l2, 9e-6 * l2.bandwidth_max, 0.3e-6, true).time_s);
  // Launch-bound passes: three back-to-back launch periods.
  CHECK(tight_bound(hw, l2, 0.3e-6 * l2.bandwidth_max, 0, true, 3).time_s == ceiling_test::Rel(3 * 2.0e-6));
  // Launched once (cold): the later launches queue behind the first, so the fixed costs count once.
  const MemoryRoof dram = memory_roof(hw, MemoryLevelKind::dram, 0, 0);
  const TightBound cold = tight_bound(hw, dram, 30e-6 * dram.bandwidth_max, 0, false, 3);
  CHECK(cold.passes == 1);
  CHECK(cold.time_s == ceiling_test::Rel(tight_bound(hw, dram, 30e-6 * dram.bandwidth_max, 0, false).time_s));
  CHECK(std::any_of(cold.provenance.begin(), cold.provenance.end(),
                    [](const std::string& l) { return l.find("3 dependent launches") != std::string::npos; }));
  CHECK_THROWS_AS(tight_bound(hw, l2, 1e6, 0, true, 0), std::invalid_argument);
  // validate takes the passes from the model, writes them and reads them back.
  KernelModel k = scale_model(1e5);  // 1.6 MB: in L2
  k.passes = 3;
  validation::TimeStats w{12e-6, 11.8e-6, 12.5e-6, 0.01, 20, 40};
  const auto r = validation::evaluate(hw, k, ComputeUnit::cuda_core, {{"n", 1e5}}, w, 50.0 * (1 << 20), false);
  CHECK(r.tight_passes == 3);
  CHECK(r.tight_bound_time_s == ceiling_test::Rel(std::max(3 * 2.0e-6, 3 * 268 / 2e9 + 1.6e6 / l2.bandwidth_max)));
  validation::ValidationReport rep;
  rep.results = {r};
  const auto j = validation::to_json(rep);
  CHECK(j["results"][0]["tight_bound"]["passes"] == 3);
  CHECK(validation::from_json(j).results[0].tight_passes == 3);
  for (const double bad : {0.0, -2.0, 1.5}) {  // a results file with passes below 1 or not whole is refused
    auto broken = j;
    broken["results"][0]["tight_bound"]["passes"] = bad;
    CHECK_THROWS(validation::from_json(broken));
  }
  KernelModel one = scale_model(1e5);
  const auto single = validation::evaluate(hw, one, ComputeUnit::cuda_core, {{"n", 1e5}}, w, 50.0 * (1 << 20), false);
  CHECK(single.tight_passes == 1);
  rep.results = {single};
  CHECK(!validation::to_json(rep)["results"][0]["tight_bound"].contains("passes"));  // one-launch files unchanged
}

TEST_CASE("predict shows the tight bound beside the paper's") {
  const Prediction p = predict(with_fixed_costs(), scale_model(1e5));  // 1.6 MB: in L2
  CHECK(p.memory_level == "l2");
  CHECK(p.tight.time_s == ceiling_test::Rel(std::max(2.5e-6, 268 / 2e9 + p.t_overlapped)));
  CHECK(p.tight.time_s > p.t_overlapped);
}

TEST_CASE("descriptor: fixed_costs load strictly and round-trip") {
  const HardwareDescriptor hw = with_fixed_costs();
  const std::string text = to_yaml(hw);
  CHECK(text.find("fixed_costs:") != std::string::npos);
  const HardwareDescriptor back = parse_descriptor(text, "mem.yaml");
  REQUIRE(back.fixed_costs.launch_single.measured);
  CHECK(back.fixed_costs.launch_single.measured->min == ceiling_test::Rel(2.5e-6).epsilon(0.02));
  CHECK(to_yaml(back) == to_yaml(parse_descriptor(to_yaml(back), "again.yaml")));
  CHECK(back.find_field("fixed_costs.launch_back_to_back") == &back.fixed_costs.launch_back_to_back);
  CHECK_THROWS_AS(HardwareDescriptor{}.field("fixed_costs.launch_twice"), std::invalid_argument);
  const std::string bad = text.substr(0, text.find("fixed_costs:")) + "fixed_costs:\n  launch_single:\n    spec: {value: \"3 GB\", ref: \"a b\"}\n" +
                          text.substr(text.find("fixed_costs:") + 12);
  CHECK_THROWS_AS(parse_descriptor(bad, "bad.yaml"), DescriptorError);  // a size is not a time
}

TEST_CASE("validate carries the tight bound of how each result was timed") {
  const HardwareDescriptor hw = with_fixed_costs();
  const KernelModel k = scale_model(1e8);  // 1.6 GB: DRAM, cold, launched once
  validation::TimeStats t{500e-6, 490e-6, 510e-6, 0.005, 20, 1};
  const auto r = validation::evaluate(hw, k, ComputeUnit::cuda_core, {{"n", 1e8}}, t, 50.0 * (1 << 20), true);
  CHECK(r.tight_bound_time_s == ceiling_test::Rel(295e-9 + 1.6e9 / 4e12));
  CHECK(r.tight_efficiency == ceiling_test::Rel(r.tight_bound_time_s / 500e-6));
  CHECK(r.tight_verdict == "within-bound");
  // A warm in-L2 result timed back-to-back: launch-bound at 2 us; 1.9 us per launch beats it.
  const KernelModel s = scale_model(1e4);
  validation::TimeStats w{1.9e-6, 1.9e-6, 1.9e-6, 0.001, 20, 26};
  const auto q = validation::evaluate(hw, s, ComputeUnit::cuda_core, {{"n", 1e4}}, w, 50.0 * (1 << 20), false);
  CHECK(q.tight_bound_time_s == 2.0e-6);
  CHECK(q.tight_verdict == "beats-bound");
  validation::ValidationReport rep;
  rep.results = {r, q};
  const auto back = validation::from_json(validation::to_json(rep));
  CHECK(back.results[1].tight_verdict == "beats-bound");
  CHECK(back.results[0].tight_bound_time_s == r.tight_bound_time_s);
  CHECK(validation::format_table(rep).find("Tight bound") != std::string::npos);
  // A beat names its terms and, without a ramp here, what to check; within-bound results carry no reason.
  INFO(q.tight_reason);
  CHECK(r.tight_reason.empty());
  CHECK(q.tight_reason.rfind("105.3% of the tight bound 2 us (terms: launch 2 us, first byte ", 0) == 0);
  CHECK(q.tight_reason.find("no l2 memory-ramp point brackets 160 kB") != std::string::npos);
  CHECK(back.results[1].tight_reason == q.tight_reason);
  CHECK(back.results[0].tight_reason.empty());
  CHECK(validation::to_json(rep)["results"][0]["tight_bound"].count("reason") == 0);
  const std::string table = validation::format_table(rep);
  CHECK(table.find("beats the tight bound scale CC fp64 ") != std::string::npos);
  CHECK(table.find("1 beat the tight bound") != std::string::npos);
  // Per result: the tight efficiency beside the paper's, and the beat marked on its row.
  CHECK(table.find(" tight  verdict") != std::string::npos);
  CHECK(table.find("105.3%  within-bound (beats the tight bound)") != std::string::npos);
}

namespace {

RampTable ramp_table(std::vector<std::pair<double, double>> pts) {
  RampTable t;
  t.points = std::move(pts);
  t.probe = "memory-ramp";
  t.date = "2026-11-25T00:00:00Z";
  t.sm_clock_hz = 1.98e9;
  t.note = "synthetic";
  return t;
}

// Shaped like the H200's cold scale ramp: mid sizes cheaper per byte than large ones (written
// lines left in the L2), so no line lies under every point and touches the largest.
std::vector<std::pair<double, double>> scale_points() {
  return {{25.2e6, 8.42e-6},  {35.1e6, 10.69e-6}, {49.0e6, 13.73e-6}, {68.3e6, 17.66e-6}, {95.3e6, 23.39e-6},
          {132.9e6, 31.55e-6}, {185.4e6, 43.49e-6}, {258.6e6, 60.06e-6}, {360.8e6, 83.46e-6}, {503.3e6, 116.90e-6}};
}

}  // namespace

TEST_CASE("lower convex hull: through the least times, tight at every convex point, a bound at all others") {
  const auto pts = scale_points();
  const auto h = lower_convex_hull(pts);
  REQUIRE(h.size() >= 3);
  CHECK(h.front() == pts.front());
  CHECK(h.back() == pts.back());
  for (const auto& [x, t] : pts) {
    CHECK(hull_time(h, x, 4.7e12) <= t * (1 + 1e-12));  // under every point
  }
  // The largest size is a vertex: the bound there is the probe's own least time (the fitted line
  // first_byte + X/BW lies 5% under it).
  CHECK(hull_time(h, 503.3e6, 4.7e12) == ceiling_test::Rel(116.90e-6));
  const EnvelopeFit line = fit_lower_envelope([&] { std::vector<double> v; for (auto& p : pts) v.push_back(p.first); return v; }(),
                                              [&] { std::vector<double> v; for (auto& p : pts) v.push_back(p.second); return v; }());
  CHECK(line.intercept_s + 503.3e6 * line.seconds_per_byte < 0.97 * 116.90e-6);
  for (const auto& [x, t] : pts) CHECK(hull_time(h, x, 4.7e12) >= line.intercept_s + x * line.seconds_per_byte - 1e-15);
  // Between vertices: linear; past the last: the largest bandwidth; before the first: the first edge, never < 0.
  CHECK(hull_time(h, 1e9, 5e12) == ceiling_test::Rel(116.90e-6 + (1e9 - 503.3e6) / 5e12));
  CHECK(hull_time(h, 1.0, 5e12) >= 0);
  CHECK(hull_time(h, 20e6, 5e12) < 8.42e-6);
  // Collinear and repeated sizes: the least time at a size, the straight line between ends.
  const auto c = lower_convex_hull({{3, 3}, {1, 1}, {2, 2}, {2, 1.5}});
  REQUIRE(c.size() == 3);
  CHECK(c[1] == std::pair<double, double>{2, 1.5});
  CHECK_THROWS_AS(lower_convex_hull({{1, 1}}), std::invalid_argument);
  CHECK_THROWS_AS(lower_convex_hull({{1, 1}, {2, -1}}), std::invalid_argument);
}

TEST_CASE("tight bound: the ramp hull of the kernel's mix is a term, a descriptor without ramp tables keeps the line") {
  HardwareDescriptor hw = with_fixed_costs();
  auto& dram = hw.memory[MemoryLevelKind::dram];
  dram.patterns["scale"] = Field{Dimension::bytes_per_second, std::nullopt,
                                 MeasuredValue{4.27e12, 4.25e12, 4.28e12, 20, 0.01, "dram-bandwidth", "2026-11-25T00:00:00Z", 1.98e9, false, ""}};
  dram.first_byte["scale"] = Field{Dimension::seconds, std::nullopt,
                                   MeasuredValue{3.04e-6, 3.04e-6, 3.04e-6, 10, 0, "memory-ramp", "2026-11-25T00:00:00Z", 1.98e9, false, ""}};
  dram.ramp_bandwidth["scale"] = Field{Dimension::bytes_per_second, std::nullopt,
                                       MeasuredValue{4.68e12, 4.68e12, 4.68e12, 10, 0, "memory-ramp", "2026-11-25T00:00:00Z", 1.98e9, false, ""}};
  const KernelModel k = scale_model(503.3e6 / 16);  // SCALE: read n, write n doubles
  const MemoryRoof no_table = memory_roof(hw, MemoryLevelKind::dram, k.read_bytes, k.write_bytes);
  const TightBound line = tight_bound(hw, no_table, k.traffic_bytes, 0, false);
  CHECK(line.ramp_s == 0);
  CHECK(line.time_s == ceiling_test::Rel(3.04e-6 + 503.3e6 / 4.68e12));

  dram.ramp["scale"] = ramp_table(scale_points());
  const MemoryRoof roof = memory_roof(hw, MemoryLevelKind::dram, k.read_bytes, k.write_bytes);
  REQUIRE(roof.ramp.size() == 1);
  CHECK(roof.ramp_how.find("scale (10 sizes") != std::string::npos);
  const TightBound b = tight_bound(hw, roof, k.traffic_bytes, 0, false);
  CHECK(b.ramp_s == ceiling_test::Rel(116.90e-6));
  CHECK(b.time_s == ceiling_test::Rel(116.90e-6));  // the ramp term is the largest
  CHECK(b.time_s > 1.04 * line.time_s);
  // Compute-bound: W/P dominates the ramp.
  CHECK(tight_bound(hw, roof, k.traffic_bytes, 300e-6, false).time_s == ceiling_test::Rel(3.04e-6 + 300e-6));
  // A mix between two tables: weighted by read share like the bandwidths.
  dram.ramp["read"] = ramp_table({{25e6, 8e-6}, {500e6, 110e-6}});
  const MemoryRoof mixed = memory_roof(hw, MemoryLevelKind::dram, 3, 1);  // read share 3/4: halfway
  REQUIRE(mixed.ramp.size() == 2);
  const double at = 250e6;
  CHECK(mixed.ramp_time(at) == ceiling_test::Rel(0.5 * hull_time(lower_convex_hull(scale_points()), at, mixed.bandwidth_max) +
                                               0.5 * hull_time(lower_convex_hull({{25e6, 8e-6}, {500e6, 110e-6}}), at, mixed.bandwidth_max)));
  // Past the largest size: the patterns' sustained maximum (or the hull's last edge where faster),
  // not the envelope's slope, which the mid sizes pull up (4.68 TB/s here against 4.28 sustained).
  const MemoryRoof scale_only = memory_roof(hw, MemoryLevelKind::dram, k.read_bytes, k.write_bytes);
  CHECK(scale_only.bandwidth_max == ceiling_test::Rel(4.68e12));
  CHECK(scale_only.bandwidth_sustained == ceiling_test::Rel(4.28e12));
  const double last_edge = (503.3e6 - 360.8e6) / (116.90e-6 - 83.46e-6);  // 4.26 TB/s: slower than sustained
  REQUIRE(last_edge < 4.28e12);
  CHECK(scale_only.ramp_time(2e9) == ceiling_test::Rel(116.90e-6 + (2e9 - 503.3e6) / 4.28e12));
  CHECK(scale_only.ramp_time(2e9) > 116.90e-6 + (2e9 - 503.3e6) / scale_only.bandwidth_max);
  CHECK(tight_bound(hw, scale_only, 2e9, 0, false).time_s == ceiling_test::Rel(116.90e-6 + (2e9 - 503.3e6) / 4.28e12));
  CHECK(std::any_of(scale_only.provenance.begin(), scale_only.provenance.end(), [](const std::string& l) {
    return l.find("past the largest size at") != std::string::npos;
  }));
  // A last edge faster than the patterns (a table from a better kernel than the pattern probe's): the edge.
  HardwareDescriptor fast = hw;
  fast.memory[MemoryLevelKind::dram].ramp.erase("read");
  fast.memory[MemoryLevelKind::dram].ramp["scale"] = ramp_table({{100e6, 30e-6}, {500e6, 110e-6}});  // 5 TB/s edge
  const MemoryRoof f = memory_roof(fast, MemoryLevelKind::dram, k.read_bytes, k.write_bytes);
  CHECK(f.ramp_time(1e9) == ceiling_test::Rel(110e-6 + 500e6 / 5e12));
  // The L2's warm ramp is data only, however it was timed: its least times move between runs by
  // more than its hull's slack (SCALE beat single-run hulls by up to 8%, H100 2026-11-27).
  auto& l2 = hw.memory[MemoryLevelKind::l2];
  l2.patterns["scale"] = Field{Dimension::bytes_per_second, std::nullopt,
                               MeasuredValue{7.9e12, 7.9e12, 7.9e12, 12, 0, "memory-ramp", "2026-11-27T00:00:00Z", 1.98e9, false, ""}};
  l2.first_byte["scale"] = Field{Dimension::seconds, std::nullopt,
                                 MeasuredValue{1.7e-6, 1.7e-6, 1.7e-6, 12, 0, "memory-ramp", "2026-11-27T00:00:00Z", 1.98e9, false, ""}};
  l2.ramp["scale"] = ramp_table({{1e6, 2.2e-6}, {4e6, 2.5e-6}, {20e6, 5e-6}});
  const KernelModel small = scale_model(4e6 / 16);  // 4 MB in the L2
  for (const std::string timing : {"", "warm", "cold", "warm-validate"}) {
    l2.ramp["scale"].timing = timing;
    const MemoryRoof r = memory_roof(hw, MemoryLevelKind::l2, small.read_bytes, small.write_bytes);
    CHECK(r.ramp.empty());
    const TightBound t = tight_bound(hw, r, small.traffic_bytes, 0, true);
    CHECK(t.ramp_s == 0);
    CHECK(t.time_s == ceiling_test::Rel(1.7e-6 + 4e6 / 7.9e12));  // the line, under the table's 2.5 us
  }
  l2.ramp.clear();
  l2.patterns.clear();
  l2.first_byte.clear();
  // What-if bandwidths leave the measured ramp out.
  PredictOptions what_if;
  what_if.bandwidth_override = 8e12;
  CHECK(predict(hw, k, what_if).tight.ramp_s == 0);
  CHECK(predict(hw, k).tight.ramp_s == ceiling_test::Rel(116.90e-6));
}

TEST_CASE("descriptor: ramp tables load strictly and round-trip") {
  HardwareDescriptor hw = with_fixed_costs();
  hw.memory[MemoryLevelKind::dram].ramp["scale"] = ramp_table(scale_points());
  const std::string text = to_yaml(hw);
  CHECK(text.find("ramp:") != std::string::npos);
  const HardwareDescriptor back = parse_descriptor(text, "ramp.yaml");
  REQUIRE(back.memory.at(MemoryLevelKind::dram).ramp.count("scale"));
  const RampTable& t = back.memory.at(MemoryLevelKind::dram).ramp.at("scale");
  CHECK(t == hw.memory.at(MemoryLevelKind::dram).ramp.at("scale"));
  CHECK(back == hw);
  CHECK(to_yaml(back) == text);
  const auto broken = [&](const std::string& from, const std::string& to) {
    std::string s = text;
    const auto at = s.find(from);
    REQUIRE(at != std::string::npos);
    s.replace(at, from.size(), to);
    try {
      parse_descriptor(s, "bad.yaml");
    } catch (const DescriptorError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string first = "[\"25.2 MB\", \"8.42 us\"]";
  REQUIRE(text.find(first) != std::string::npos);
  CHECK(broken(first, "[\"25.2 MB\", \"8.42 GB\"]").find("points[0][1]") != std::string::npos);   // a size is not a time
  CHECK(broken(first, "[\"600 MB\", \"8.42 us\"]").find("bytes must grow") != std::string::npos);  // out of order
  CHECK(broken(first, "[\"25.2 MB\"]").find("expected [bytes, time]") != std::string::npos);
  CHECK(broken("scale:\n        points:", "scales:\n        points:").find("not a stream pattern") != std::string::npos);
  CHECK(broken("probe: \"memory-ramp\"", "prob: \"memory-ramp\"").find("unknown key") != std::string::npos);
  // How the points were timed: one of three words, kept through a round trip.
  hw.memory[MemoryLevelKind::dram].ramp["scale"].timing = "cold";
  const std::string timed = to_yaml(hw);
  REQUIRE(timed.find("timing: \"cold\"") != std::string::npos);
  CHECK(parse_descriptor(timed, "ramp.yaml") == hw);
  std::string bad = timed;
  bad.replace(bad.find("timing: \"cold\""), std::string("timing: \"cold\"").size(), "timing: \"warmish\"");
  try {
    parse_descriptor(bad, "bad.yaml");
    FAIL("a ramp timing that is not cold, warm or warm-validate was accepted");
  } catch (const DescriptorError& e) {
    const std::string what = e.what();
    CHECK(what.find("bad.yaml:") != std::string::npos);
    CHECK(what.find("memory.dram.ramp.scale.timing") != std::string::npos);
    CHECK(what.find("expected cold, warm or warm-validate, got 'warmish'") != std::string::npos);
  }
}

TEST_CASE("a tight beat names the term that fails: the ramp's least time at that size, or the line between its points") {
  HardwareDescriptor hw = with_fixed_costs();
  const KernelModel k = scale_model(25e6 / 16);  // 25 MB read and written: in the L2
  REQUIRE(k.read_bytes == ceiling_test::Rel(k.write_bytes));
  auto& l2 = hw.memory[MemoryLevelKind::l2];
  // The read ramp is far slower: the scale table (the result's 1:1 mix) must be the one compared.
  l2.ramp["read"] = ramp_table({{1e6, 9e-6}, {20e6, 9e-6}, {30e6, 9e-6}});
  l2.ramp["scale"] = ramp_table({{1e6, 2.2e-6}, {20e6, 4.0e-6}, {30e6, 5.3e-6}});
  // Tight bound: max(launch 2 us, first byte 134 ns + 25 MB / 10 TB/s) = 2.634 us; the run takes 2.5 us.
  validation::TimeStats w{2.5e-6, 2.49e-6, 2.52e-6, 0.002, 20, 9};
  const auto r = validation::evaluate(hw, k, ComputeUnit::cuda_core, {{"n", 25e6 / 16}}, w, 50.0 * (1 << 20), false);
  REQUIRE(r.memory_level == "l2");
  CHECK(r.tight_bound_time_s == ceiling_test::Rel(134e-9 + 2.5e-6));
  REQUIRE(r.tight_verdict == "beats-bound");
  INFO(r.tight_reason);
  // The scale ramp at 25 MB, half-way between 4.0 and 5.3 us: 4.65 us, 1.86x this run.
  CHECK(r.tight_reason.find("the calibration's memory-ramp (scale, 2026-11-25T00:00:00Z) took 4.65 us for 25 MB") !=
        std::string::npos);
  CHECK(r.tight_reason.find("this run 2.5 us (1.860x faster): the term that fails is the ramp's least time") != std::string::npos);
  // A ramp faster than the run at this size: the run beats only the envelope's line.
  l2.ramp["scale"] = ramp_table({{1e6, 1.0e-6}, {20e6, 2.0e-6}, {30e6, 2.2e-6}});
  const auto line = validation::evaluate(hw, k, ComputeUnit::cuda_core, {{"n", 25e6 / 16}}, w, 50.0 * (1 << 20), false);
  INFO(line.tight_reason);
  CHECK(line.tight_reason.find("took 2.1 us for 25 MB") != std::string::npos);
  CHECK(line.tight_reason.find("(not faster): the run beats the envelope's line") != std::string::npos);
  // A size outside the ramp's points: nothing to compare.
  l2.ramp["scale"] = ramp_table({{1e6, 1.0e-6}, {20e6, 2.0e-6}});
  CHECK(validation::evaluate(hw, k, ComputeUnit::cuda_core, {{"n", 25e6 / 16}}, w, 50.0 * (1 << 20), false)
            .tight_reason.find("no l2 memory-ramp point brackets 25 MB") != std::string::npos);
}

TEST_CASE("ramp runs of several processes: the least time at each size, the fields fitted again from it") {
  HardwareDescriptor hw = with_fixed_costs();
  auto& l2 = hw.memory[MemoryLevelKind::l2];
  // This process: an envelope through (1 MB, 2 us) and (20 MB, 4 us); the 30 MB point above it.
  l2.ramp["scale"] = ramp_table({{1e6, 2.0e-6}, {20e6, 4.0e-6}, {30e6, 5.5e-6}});
  l2.ramp["scale"].timing = "warm-validate";
  l2.ramp["read"] = ramp_table({{1e6, 1.5e-6}, {20e6, 3.0e-6}});
  l2.first_byte["scale"].measured = MeasuredValue{1.8947e-6, 1.8947e-6, 1.8947e-6, 3, 0, "memory-ramp",
                                                 "2026-11-25T00:00:00Z", 1.98e9, false, "old"};
  auto& dram = hw.memory[MemoryLevelKind::dram];
  dram.ramp["scale"] = ramp_table({{100e6, 30e-6}, {500e6, 110e-6}});
  dram.ramp["scale"].timing = "cold";

  // Another process: faster at 30 MB (11% faster), slower at 1 MB, a size this run lacks,
  // and no read table; a third process has no L2 tables at all.
  HardwareDescriptor other = hw;
  other.memory[MemoryLevelKind::l2].ramp.erase("read");
  other.memory[MemoryLevelKind::l2].ramp["scale"] =
      ramp_table({{1e6, 2.1e-6}, {20e6, 4.0e-6}, {25e6, 1e-9}, {30e6, 4.9e-6}});
  other.memory[MemoryLevelKind::dram].ramp["scale"] = ramp_table({{100e6, 29e-6}, {500e6, 111e-6}});
  HardwareDescriptor bare;
  bare.memory[MemoryLevelKind::dram].ramp["scale"] = ramp_table({{100e6, 31e-6}, {500e6 * (1 + 1e-8), 100e-6}});

  CHECK(merge_ramp_runs(hw, {other, bare}) == 2);  // l2 scale and dram scale took points; l2 read had no other run
  const RampTable& t = hw.memory.at(MemoryLevelKind::l2).ramp.at("scale");
  REQUIRE(t.points.size() == 3);  // the 25 MB point only the other run has is not added
  // (Times compared in us: doctest's Approx is absolute below 1.)
  CHECK(t.points[0].second * 1e6 == ceiling_test::Rel(2.0));  // this run's, the other's 2.1 us is slower
  CHECK(t.points[1].second * 1e6 == ceiling_test::Rel(4.0));
  CHECK(t.points[2].second * 1e6 == ceiling_test::Rel(4.9));  // the faster process's
  CHECK(t.note == "synthetic; least over 2 processes");
  CHECK(t.timing == "warm-validate");
  // Before, the envelope passed through (1 MB, 2 us) and (20 MB, 4 us): first byte 1.895 us, 9.5 TB/s,
  // 5.05 us at 30 MB, above the other process's 4.9. Now through (1 MB, 2 us) and (30 MB, 4.9 us):
  // 10 TB/s, first byte 1.9 us, and (20 MB, 4 us) 0.1 us above it.
  const Field& fb = hw.memory.at(MemoryLevelKind::l2).first_byte.at("scale");
  REQUIRE(fb.measured);
  CHECK(fb.measured->median * 1e6 == ceiling_test::Rel(1.9));
  CHECK(fb.measured->min == fb.measured->median);
  CHECK(fb.measured->repeats == 3);
  CHECK(fb.measured->date == "2026-11-25T00:00:00Z");  // the field's provenance kept
  CHECK(fb.measured->note.find("over 3 sizes 1..30 MB in 2 processes (warm: back-to-back launches") != std::string::npos);
  const Field& bw = hw.memory.at(MemoryLevelKind::l2).patterns.at("scale");
  REQUIRE(bw.measured);
  CHECK(bw.measured->median / 1e12 == ceiling_test::Rel(10.0));
  CHECK(bw.dimension == Dimension::bytes_per_second);
  CHECK(bw.measured->note.find("slope of the l2 scale ramp envelope") == 0);
  // Every merged point lies on or above the new line: the least of the runs is what it bounds.
  for (const auto& [x, s] : t.points) CHECK(s >= fb.measured->median + x / bw.measured->median - 1e-15);
  // The read table had no other run: untouched, and its fields not written.
  CHECK(hw.memory.at(MemoryLevelKind::l2).ramp.at("read").note == "synthetic");
  CHECK(hw.memory.at(MemoryLevelKind::l2).first_byte.count("read") == 0);
  // DRAM: 29 us from the second run, 100 us from the third (a size within 1e-6 relative matches);
  // its slope goes to ramp_bandwidth, not to the patterns dram-bandwidth measures.
  const RampTable& d = hw.memory.at(MemoryLevelKind::dram).ramp.at("scale");
  CHECK(d.points[0].second * 1e6 == ceiling_test::Rel(29.0));
  CHECK(d.points[1].second * 1e6 == ceiling_test::Rel(100.0));
  CHECK(d.note == "synthetic; least over 3 processes");
  REQUIRE(hw.memory.at(MemoryLevelKind::dram).ramp_bandwidth.count("scale") == 1);
  CHECK(hw.memory.at(MemoryLevelKind::dram).ramp_bandwidth.at("scale").measured->median / 1e12 ==
        ceiling_test::Rel(400e6 / 71e-6 / 1e12));
  CHECK(hw.memory.at(MemoryLevelKind::dram).patterns.count("scale") == 0);
  CHECK(hw.memory.at(MemoryLevelKind::dram).first_byte.at("scale").measured->note.find("in 3 processes (cold:") !=
        std::string::npos);
  // Merging again does not stack the note; no other runs: nothing changes.
  HardwareDescriptor again = hw;
  CHECK(merge_ramp_runs(again, {other}) == 0);
  CHECK(again.memory.at(MemoryLevelKind::l2).ramp.at("scale").note == "synthetic; least over 2 processes");
  CHECK(merge_ramp_runs(again, {}) == 0);
}
