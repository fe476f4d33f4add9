// Stream-aware roofs and the ramp envelope (issue 12) with synthetic numbers: the pattern a
// kernel's read:write mix picks, interpolation between shares, the tight roof from measured
// maxima and the ramp slope, the first-byte time of the mix, the lower-envelope fit, and that
// predict and validate hold a kernel against the same roof.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "model/descriptor.hpp"
#include "model/kernel_model.hpp"
#include "model/memory_roof.hpp"
#include "model/validation.hpp"

using namespace ceiling;

namespace {

MeasuredValue mv(double median, double min, double max, const char* probe = "dram-bandwidth") {
  return MeasuredValue{median, min, max, 20, 0.005, probe, "2026-11-23T00:00:00Z", 1.98e9, false, ""};
}

HardwareDescriptor streams_gpu() {
  HardwareDescriptor hw;
  hw.id = "streams";
  hw.identity.name = "Synthetic GPU";
  hw.identity.sm_count = 132;
  hw.references["test"] = "a test value";
  hw.sm_clock.measured = mv(2e9, 2e9, 2e9, "sm-clock");
  auto& dram = hw.memory[MemoryLevelKind::dram];
  dram.bandwidth.measured = mv(4.6e12, 4.5e12, 4.65e12);  // the best pattern (write)
  dram.patterns["read"].measured = mv(4.40e12, 4.30e12, 4.45e12);
  dram.patterns["write"].measured = mv(4.60e12, 4.50e12, 4.65e12);
  dram.patterns["copy"].measured = mv(4.28e12, 4.20e12, 4.29e12);
  dram.patterns["scale"].measured = mv(4.30e12, 4.25e12, 4.31e12);
  dram.patterns["triad"].measured = mv(4.39e12, 4.30e12, 4.40e12);
  for (auto& [_, f] : dram.patterns) f.dimension = Dimension::bytes_per_second;
  dram.latency.measured = mv(650, 640, 660, "pchase-latency");
  auto& l2 = hw.memory[MemoryLevelKind::l2];
  l2.capacity.spec = SpecValue{60.0 * (1 << 20), "test"};
  l2.bandwidth.measured = mv(11.5e12, 11.4e12, 11.6e12, "l2-bandwidth");
  l2.latency.measured = mv(270, 268, 275, "pchase-latency");
  hw.compute[ComputeUnit::cuda_core][Precision::fp64] = Field{Dimension::flop_per_second, SpecValue{34e12, "test"}};
  hw.compute[ComputeUnit::tensor_core][Precision::fp64] = Field{Dimension::flop_per_second, SpecValue{67e12, "test"}};
  hw.fixed_costs.launch_single.measured = mv(2.8e-6, 2.6e-6, 5e-6, "launch-overhead");
  hw.fixed_costs.launch_back_to_back.measured = mv(1.4e-6, 1.3e-6, 3e-6, "launch-overhead");
  return hw;
}

}  // namespace

TEST_CASE("pattern read shares") {
  CHECK(*pattern_read_share("read") == 1.0);
  CHECK(*pattern_read_share("triad") == ceiling_test::Rel(2.0 / 3.0));
  CHECK(*pattern_read_share("copy") == 0.5);
  CHECK(*pattern_read_share("scale") == 0.5);
  CHECK(*pattern_read_share("write") == 0.0);
  CHECK_FALSE(pattern_read_share("far_half").has_value());
}

TEST_CASE("memory roof: the kernel's read:write mix picks and mixes the calibrated patterns") {
  const HardwareDescriptor hw = streams_gpu();
  // SCALE reads as much as it writes: the better of copy and scale, not the best pattern (write).
  const MemoryRoof s = memory_roof(hw, MemoryLevelKind::dram, 8e9, 8e9);
  CHECK(s.read_share == 0.5);
  CHECK(s.bandwidth == 4.30e12);
  CHECK(s.bandwidth_max == 4.31e12);  // the measured maximum: the tight roof
  CHECK(s.how.find("scale") != std::string::npos);
  CHECK(s.source == "measured");
  // Read-only (or nearly, GEMV): the read pattern; between read and triad linearly in the share.
  CHECK(memory_roof(hw, MemoryLevelKind::dram, 1, 0).bandwidth == 4.40e12);
  const double r = 0.9;  // 0.9 of the bytes read: between triad (2/3) and read (1)
  const double w = (r - 2.0 / 3.0) / (1 - 2.0 / 3.0);
  CHECK(memory_roof(hw, MemoryLevelKind::dram, r, 1 - r).bandwidth == ceiling_test::Rel((1 - w) * 4.39e12 + w * 4.40e12));
  CHECK(memory_roof(hw, MemoryLevelKind::dram, 1, 3).bandwidth == ceiling_test::Rel(0.5 * 4.60e12 + 0.5 * 4.30e12));
  // Unknown streams (a custom kernel): the level's bandwidth, and it says why.
  const MemoryRoof u = memory_roof(hw, MemoryLevelKind::dram, 0, 0);
  CHECK(u.bandwidth == 4.6e12);
  CHECK(u.how.find("unknown") != std::string::npos);
  // A level without patterns: its bandwidth, whatever the streams.
  const MemoryRoof l2 = memory_roof(hw, MemoryLevelKind::l2, 1, 1);
  CHECK(l2.bandwidth == 11.5e12);
  CHECK(l2.how.find("no calibrated patterns") != std::string::npos);
  // spec only: the patterns have no spec value, so the level's spec bandwidth (none here) is asked for.
  CHECK_THROWS_AS(memory_roof(hw, MemoryLevelKind::dram, 1, 1, SourcePreference::spec), std::runtime_error);
}

TEST_CASE("memory roof: the ramp's slope raises only the tight roof, first byte of the mix") {
  HardwareDescriptor hw = streams_gpu();
  auto& dram = hw.memory[MemoryLevelKind::dram];
  dram.ramp_bandwidth["scale"] = Field{Dimension::bytes_per_second, std::nullopt, mv(4.35e12, 4.35e12, 4.35e12, "memory-ramp")};
  dram.ramp_bandwidth["read"] = Field{Dimension::bytes_per_second, std::nullopt, mv(4.40e12, 4.40e12, 4.40e12, "memory-ramp")};
  dram.first_byte["scale"] = Field{Dimension::seconds, std::nullopt, mv(3.1e-6, 3.1e-6, 3.1e-6, "memory-ramp")};
  dram.first_byte["read"] = Field{Dimension::seconds, std::nullopt, mv(2.6e-6, 2.6e-6, 2.6e-6, "memory-ramp")};
  const MemoryRoof s = memory_roof(hw, MemoryLevelKind::dram, 1, 1);
  CHECK(s.bandwidth == 4.35e12);      // the envelope's slope is above the pattern's median: both roofs take it
  CHECK(s.bandwidth_max == 4.35e12);  // and above the pattern's maximum
  REQUIRE(s.has_first_byte);
  // Read 2.6 us is the least intercept here: read share 1/2 takes it.
  CHECK(s.first_byte_s == 2.6e-6);
  const MemoryRoof rd = memory_roof(hw, MemoryLevelKind::dram, 1, 0);
  CHECK(rd.bandwidth_max == 4.45e12);  // the pattern's maximum is above the slope: it stays
  CHECK(rd.bandwidth == 4.40e12);      // the slope equals the median: no change
  CHECK(rd.first_byte_s == 2.6e-6);
  CHECK(memory_roof(hw, MemoryLevelKind::dram, 3, 1).first_byte_s == 2.6e-6);
  dram.first_byte["write"] = Field{Dimension::seconds, std::nullopt, mv(1.9e-6, 1.9e-6, 1.9e-6, "memory-ramp")};
  // Up to read share 1/2 the least intercept (write's); above it rising to read's at 1.
  CHECK(memory_roof(hw, MemoryLevelKind::dram, 1, 1).first_byte_s == 1.9e-6);
  CHECK(memory_roof(hw, MemoryLevelKind::dram, 0, 1).first_byte_s == 1.9e-6);
  CHECK(memory_roof(hw, MemoryLevelKind::dram, 1, 0).first_byte_s == ceiling_test::Rel(2.6e-6));
  CHECK(memory_roof(hw, MemoryLevelKind::dram, 3, 1).first_byte_s == ceiling_test::Rel(1.9e-6 + 0.5 * 0.7e-6));
  dram.first_byte.erase("write");
  CHECK_FALSE(memory_roof(hw, MemoryLevelKind::l2, 1, 1).has_first_byte);  // another level's ramp does not count
  // The tight bound takes both.
  const MemoryRoof roof = memory_roof(hw, MemoryLevelKind::dram, 8e9, 8e9);
  const TightBound t = tight_bound(hw, roof, 16e9, 1e-6, false);
  CHECK(t.first_byte_from == "ramp envelope");
  CHECK(t.bandwidth == 4.35e12);
  CHECK(t.time_s == ceiling_test::Rel(2.6e-6 + 16e9 / 4.35e12));
  // Tiny: the first byte (2.6 us) is at the launch (2.6 us), and no launch time is added to it; the
  // 1 ns of compute is more than the 0.23 ns of memory, so it is what follows the first byte.
  // (The old expectation, 2.6 us + Q/BW, passed only because Approx was absolute below 1.)
  CHECK(tight_bound(hw, roof, 1e3, 1e-9, false).time_s == ceiling_test::Rel(2.6e-6 + 1e-9));
  CHECK(tight_bound(hw, roof, 1e3, 1e-12, false).time_s == ceiling_test::Rel(2.6e-6 + 1e3 / 4.35e12));
  hw.fixed_costs.launch_single.measured = mv(6e-6, 5e-6, 7e-6, "launch-overhead");
  CHECK(tight_bound(hw, roof, 1e3, 1e-9, false).time_s == 5e-6);  // launch-bound: the measured minimum
}

TEST_CASE("memory roof: the first byte rises with the read share above one half") {
  // The shipped H100's L2 intercepts (2026-11-27): write 1.58, scale 1.85, read 2.29 us.
  HardwareDescriptor hw = streams_gpu();
  auto& l2 = hw.memory[MemoryLevelKind::l2];
  l2.first_byte["write"] = Field{Dimension::seconds, std::nullopt, mv(1.58e-6, 1.58e-6, 1.58e-6, "memory-ramp")};
  l2.first_byte["scale"] = Field{Dimension::seconds, std::nullopt, mv(1.85e-6, 1.85e-6, 1.85e-6, "memory-ramp")};
  l2.first_byte["read"] = Field{Dimension::seconds, std::nullopt, mv(2.29e-6, 2.29e-6, 2.29e-6, "memory-ramp")};
  const auto fb = [&](double read, double write) { return memory_roof(hw, MemoryLevelKind::l2, read, write); };
  // SCALE, the intensity kernels, stencils (1/2) and anything writing more: the least, write's, not scale's.
  CHECK(fb(1, 1).first_byte_s == 1.58e-6);
  CHECK(fb(1, 3).first_byte_s == 1.58e-6);
  CHECK(fb(0, 1).first_byte_s == 1.58e-6);
  // GEMV 1024^2 (reads A and x, writes y): nearly read's.
  const double m = 1024, n = 1024;
  const MemoryRoof g = fb((m * n + n) * 8, m * 8);
  const double w = (g.read_share - 0.5) / 0.5;
  CHECK(g.read_share > 0.999);
  CHECK(g.first_byte_s == ceiling_test::Rel(1.58e-6 + w * (2.29e-6 - 1.58e-6)));
  CHECK(g.first_byte_s > 2.28e-6);
  CHECK(fb(1, 0).first_byte_s == ceiling_test::Rel(2.29e-6));
  CHECK(fb(3, 1).first_byte_s == ceiling_test::Rel(1.58e-6 + 0.5 * 0.71e-6));  // linear between 1/2 and 1
  // The provenance says which intercepts and the share.
  const std::string text = g.provenance.back();
  CHECK(text.find("memory.l2.first_byte") != std::string::npos);
  CHECK(text.find("write") != std::string::npos);
  CHECK(text.find("to read's") != std::string::npos);
  // Without a read pattern: the least, whatever the share.
  l2.first_byte.erase("read");
  CHECK(fb(1, 0).first_byte_s == 1.58e-6);
  // A read pattern below the others (not seen on a board): it is the least, every share takes it.
  l2.first_byte["read"] = Field{Dimension::seconds, std::nullopt, mv(1.2e-6, 1.2e-6, 1.2e-6, "memory-ramp")};
  CHECK(fb(1, 0).first_byte_s == 1.2e-6);
  CHECK(fb(1, 1).first_byte_s == 1.2e-6);
}

TEST_CASE("predict and validate hold a kernel against the same roof") {
  const HardwareDescriptor hw = streams_gpu();
  const KernelModel scale = scale_model(5e8);  // 8 GB: DRAM
  const Prediction p = predict(hw, scale);
  CHECK(p.memory_level == "dram");
  CHECK(p.bandwidth == 4.30e12);  // was memory.dram.bandwidth (4.6, the write pattern) for every kernel
  CHECK(p.bandwidth_how.find("scale") != std::string::npos);
  const validation::TimeBound b = validation::time_bound(hw, scale, ComputeUnit::cuda_core, "dram");
  CHECK(b.bandwidth == p.bandwidth);
  CHECK(b.t_memory == ceiling_test::Rel(p.t_memory));
  const KernelModel gemv = gemv_model(20000, 20000);
  CHECK(predict(hw, gemv).bandwidth == ceiling_test::Rel(validation::time_bound(hw, gemv, ComputeUnit::cuda_core, "dram").bandwidth));
  CHECK(predict(hw, gemv).bandwidth < 4.40e12);  // mostly reads, a few writes: just under read
  CHECK(predict(hw, gemv).bandwidth > 4.39e12);
  // A what-if bandwidth still overrides everything.
  PredictOptions o;
  o.bandwidth_override = 1e12;
  CHECK(predict(hw, scale, o).bandwidth == 1e12);
}

TEST_CASE("lower envelope: below every point, through the hull edge of least relative gap") {
  // On a line: recovered exactly, every gap 0.
  std::vector<double> x{1e6, 2e6, 4e6, 8e6, 16e6, 32e6}, t;
  for (double b : x) t.push_back(2e-6 + b / 5e12);
  EnvelopeFit f = fit_lower_envelope(x, t);
  CHECK(f.intercept_s == ceiling_test::Rel(2e-6));
  CHECK(f.bandwidth() == ceiling_test::Rel(5e12));
  CHECK(f.max_gap == doctest::Approx(0).epsilon(1e-9));
  // Noise above the line and one fast point (write-back left in the cache): still below all.
  std::vector<double> noisy = t;
  noisy[1] *= 1.05;
  noisy[3] *= 1.02;
  noisy[4] *= 0.97;
  f = fit_lower_envelope(x, noisy);
  for (size_t i = 0; i < x.size(); ++i) CHECK(f.intercept_s + x[i] * f.seconds_per_byte <= noisy[i] * (1 + 1e-12));
  for (double g : f.relative_gap) CHECK(g >= 0);
  CHECK(f.intercept_s > 0);
  CHECK(f.bandwidth() > 4e12);
  // Latency-bound points only (flat): intercept = the least time, slope 0.
  f = fit_lower_envelope({1e3, 2e3, 4e3}, {2e-6, 2.1e-6, 2.05e-6});
  CHECK(f.seconds_per_byte < 1e-10);  // ~flat: 0.05 us over 3 kB
  CHECK(f.intercept_s <= 2e-6);
  CHECK(f.intercept_s >= 1.9e-6);
  // Rising faster than through the origin at small sizes would need a negative intercept: a >= 0 holds.
  f = fit_lower_envelope({1e6, 2e6}, {1e-6, 3e-6});
  CHECK(f.intercept_s >= 0);
  CHECK(f.intercept_s + 2e6 * f.seconds_per_byte <= 3e-6 * (1 + 1e-12));
  CHECK_THROWS_AS(fit_lower_envelope({}, {}), std::invalid_argument);
  CHECK_THROWS_AS(fit_lower_envelope({1, 2}, {1}), std::invalid_argument);
  CHECK_THROWS_AS(fit_lower_envelope({1, -2}, {1, 1}), std::invalid_argument);
}

TEST_CASE("descriptor: first_byte and ramp_bandwidth load strictly and round-trip") {
  HardwareDescriptor hw = streams_gpu();
  hw.set_measured("memory.l2.first_byte.scale", mv(1.9e-6, 1.9e-6, 1.9e-6, "memory-ramp"));
  hw.set_measured("memory.dram.ramp_bandwidth.read", mv(4.41e12, 4.41e12, 4.41e12, "memory-ramp"));
  CHECK(hw.find_field("memory.l2.first_byte.scale")->dimension == Dimension::seconds);
  CHECK(hw.find_field("memory.dram.ramp_bandwidth.read")->dimension == Dimension::bytes_per_second);
  const std::string text = to_yaml(hw);
  CHECK(text.find("first_byte:") != std::string::npos);
  CHECK(text.find("ramp_bandwidth:") != std::string::npos);
  const HardwareDescriptor back = parse_descriptor(text, "ramp.yaml");
  REQUIRE(back.find_field("memory.l2.first_byte.scale"));
  CHECK(back.find_field("memory.l2.first_byte.scale")->measured->median == ceiling_test::Rel(1.9e-6).epsilon(0.01));
  CHECK(to_yaml(back) == to_yaml(parse_descriptor(to_yaml(back), "again.yaml")));
  // A size where a time belongs is refused with its place.
  std::string bad = text;
  const auto at = bad.find("first_byte:");
  bad.insert(at + 11, "\n      read:\n        spec: {value: \"3 GB\", ref: test}");
  CHECK_THROWS_AS(parse_descriptor(bad, "bad.yaml"), DescriptorError);
}
