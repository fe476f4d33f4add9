// The tight bound of issue 12 with synthetic numbers: max(launch, first byte + max(Q/BW, W/P)),
// the launch timed as the result was (once or back-to-back); measured minima; missing terms named
// and taken as 0; the descriptor's fixed_costs round-trip; validate carries the bound.
#include <doctest/doctest.h>

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

TEST_CASE("tight bound: the launch overlaps the run; first byte adds to the streaming time") {
  const HardwareDescriptor hw = with_fixed_costs();
  const TightBound once = bound_at(hw, "dram", 10e-6, 1e-6, false);
  CHECK(once.launch_s == 2.5e-6);                           // the measured minimum, not the median
  CHECK(once.first_byte_s == doctest::Approx(590 / 2e9));   // least latency at the measured clock
  CHECK(once.first_byte_from == "level latency");           // no ramp in this descriptor
  CHECK(once.asymptotic_s == doctest::Approx(10e-6));
  CHECK(once.time_s == doctest::Approx(295e-9 + 10e-6));
  CHECK(once.missing.empty());
  CHECK(bound_at(hw, "dram", 0.5e-6, 0.1e-6, false).time_s == 2.5e-6);  // launch-bound, launched once
  const TightBound warm_small = bound_at(hw, "l2", 0.3e-6, 0.1e-6, true);
  CHECK(warm_small.time_s == 2.0e-6);  // launch-bound: the back-to-back launch period
  const TightBound warm_big = bound_at(hw, "l2", 30e-6, 0.1e-6, true);
  CHECK(warm_big.time_s == doctest::Approx(268 / 2e9 + 30e-6));
  // A missing term is named and counts 0: still a lower bound.
  HardwareDescriptor bare = hw;
  bare.fixed_costs = {};
  bare.memory[MemoryLevelKind::dram].latency = Field{Dimension::cycles};
  const TightBound b = bound_at(bare, "dram", 10e-6, 1e-6, false);
  CHECK(b.time_s == doctest::Approx(10e-6));  // == the paper's bound when the descriptor has no fixed costs
  REQUIRE(b.missing.size() == 2);
  CHECK(b.missing[0] == "fixed_costs.launch_single");
  CHECK(b.missing[1] == "memory.dram.latency");
}

TEST_CASE("predict shows the tight bound beside the paper's") {
  const Prediction p = predict(with_fixed_costs(), scale_model(1e5));  // 1.6 MB: in L2
  CHECK(p.memory_level == "l2");
  CHECK(p.tight.time_s == doctest::Approx(std::max(2.5e-6, 268 / 2e9 + p.t_overlapped)));
  CHECK(p.tight.time_s > p.t_overlapped);
}

TEST_CASE("descriptor: fixed_costs load strictly and round-trip") {
  const HardwareDescriptor hw = with_fixed_costs();
  const std::string text = to_yaml(hw);
  CHECK(text.find("fixed_costs:") != std::string::npos);
  const HardwareDescriptor back = parse_descriptor(text, "mem.yaml");
  REQUIRE(back.fixed_costs.launch_single.measured);
  CHECK(back.fixed_costs.launch_single.measured->min == doctest::Approx(2.5e-6).epsilon(0.02));
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
  CHECK(r.tight_bound_time_s == doctest::Approx(295e-9 + 1.6e9 / 4e12));
  CHECK(r.tight_efficiency == doctest::Approx(r.tight_bound_time_s / 500e-6));
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
}
