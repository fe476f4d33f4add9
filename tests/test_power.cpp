// Power readings (issue 14): the arithmetic from NVML samples to watts (probes/host/power_reading),
// the watts unit, and the descriptor's power fields (strict, round trip, kept across a run without
// --power).
#include <doctest/doctest.h>

#include "approx.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>

#include "model/descriptor.hpp"
#include "model/units.hpp"
#include "probes/host/power_reading.hpp"
#include "scratch.hpp"

namespace {
using ceiling::gpu::PowerSample;
using ceiling::gpu::reading_from_samples;

// A counter that steps every `period` s at `watts` (mJ, truncated like NVML's), read every 2 ms.
std::vector<PowerSample> samples(double t0, double t1, double period, double watts, unsigned clock_mhz = 1755) {
  std::vector<PowerSample> v;
  for (double t = t0; t <= t1; t += 0.002) {
    const double last_step = t0 + period * std::floor((t - t0) / period);
    PowerSample s;
    s.t = t;
    s.energy_mj = 1000000 + static_cast<unsigned long long>(watts * (last_step - t0) * 1e3);
    s.power_mw = static_cast<unsigned>(watts * 1e3);
    s.sm_clock_mhz = clock_mhz;
    v.push_back(s);
  }
  return v;
}
}  // namespace

TEST_CASE("power: watts from the energy counter's steps, not from partial periods at the ends") {
  const auto v = samples(0.0, 2.0, 0.1, 400.0);
  // A window that starts and ends mid-period: only whole periods between the first and last step.
  const auto r = reading_from_samples(v, 0.05, 1.93, 10);
  REQUIRE(r.ok);
  CHECK(r.watts == ceiling_test::Rel(400.0).epsilon(0.01));
  CHECK(r.update_period_s == ceiling_test::Rel(0.1).epsilon(0.03));
  CHECK(r.counter_steps >= 16);
  CHECK(r.counter_steps <= 18);
  CHECK(r.sample_interval_s == ceiling_test::Rel(0.002).epsilon(0.01));
  CHECK(r.sm_clock_hz == ceiling_test::Rel(1755e6));
  CHECK(r.watts_median == ceiling_test::Rel(400.0));
  // Per-update powers bracket the total (the descriptor's min <= median <= max).
  CHECK(r.watts_min <= r.watts);
  CHECK(r.watts_max >= r.watts);
  CHECK(r.watts_min > 300.0);
  CHECK(r.watts_max < 500.0);
  CHECK(r.note().find("updates, one every 100.0 ms") != std::string::npos);
}

TEST_CASE("power: a load shorter than 10 counter updates is refused, with how many were seen") {
  const auto v = samples(0.0, 2.0, 0.1, 300.0);
  const auto r = reading_from_samples(v, 0.0, 0.55, 10);
  CHECK_FALSE(r.ok);
  CHECK(r.why.find("moved 4 times") != std::string::npos);
  CHECK(r.why.find("run the load longer") != std::string::npos);
  CHECK(r.note().find("power not measured") == 0);
}

TEST_CASE("power: a counter that goes backwards, or no samples, is an error, not a number") {
  auto v = samples(0.0, 1.0, 0.05, 200.0);
  v[200].energy_mj = v[199].energy_mj - 1;  // one read below the one before it
  const auto r = reading_from_samples(v, 0.0, 1.0, 10);
  CHECK_FALSE(r.ok);
  CHECK(r.why.find("backwards") != std::string::npos);
  CHECK_FALSE(reading_from_samples({}, 0.0, 1.0).ok);
}

TEST_CASE("power: watts parse and format as a unit") {
  CHECK(ceiling::parse_as("350 W", ceiling::Dimension::watts) == 350.0);
  CHECK(ceiling::parse_as("1.2 kW", ceiling::Dimension::watts) == ceiling_test::Rel(1200.0));
  CHECK(ceiling::parse_as("750 mW", ceiling::Dimension::watts) == ceiling_test::Rel(0.75));
  CHECK(ceiling::parse_quantity("350 W").dimension == ceiling::Dimension::watts);
  CHECK(ceiling::format_quantity(412.5, ceiling::Dimension::watts) == "412.5 W");
  CHECK_THROWS_AS(ceiling::parse_as("350 W", ceiling::Dimension::hertz), ceiling::UnitError);
}

TEST_CASE("power: a tensor instruction's power round-trips, is range-checked, and survives a run without --power") {
  namespace fs = std::filesystem;
  auto d = ceiling::load_descriptor(fs::path(CEILING_SOURCE_DIR) / "hardware" / "h100-sxm.yaml");
  REQUIRE_FALSE(d.tensor_instructions.empty());
  ceiling::MeasuredValue m;
  m.median = 412.5;
  m.min = 405;
  m.max = 420;
  m.repeats = 14;
  m.probe = "mma";
  m.date = "2026-11-25T22:00:00Z";
  m.sm_clock_hz = 1.755e9;
  m.note = "NVML energy counter";
  d.tensor_instructions[0].power.measured = m;
  const fs::path dir = ceiling::test::scratch_dir("power", "rt");
  ceiling::save_descriptor(d, dir / "x.yaml");
  const auto back = ceiling::load_descriptor(dir / "x.yaml");
  REQUIRE(back.tensor_instructions[0].power.measured);
  // Written with the digits its spread justifies (405..420 W): 412 W.
  CHECK(back.tensor_instructions[0].power.measured->median == ceiling_test::Rel(412.5).epsilon(0.002));
  CHECK(back.tensor_instructions[0].power.measured->sm_clock_hz == ceiling_test::Rel(1.755e9));

  // A new timing of the same instruction without --power keeps the reading.
  auto again = back;
  ceiling::TensorInstruction t = again.tensor_instructions[0];
  t.power = ceiling::Field{ceiling::Dimension::watts};
  again.upsert_instruction(t);
  CHECK(again.tensor_instructions[0].power.measured);

  // Out of range (1 mW .. 100 kW) and the wrong unit are refused with the file's line.
  std::string text = ceiling::test::slurp(dir / "x.yaml");
  const auto power_at = text.find("power:");
  REQUIRE(power_at != std::string::npos);
  const auto at = text.find("median: \"", power_at) + 9;
  const auto len = text.find('"', at) - at;
  REQUIRE(text.substr(at, len).find(" W") != std::string::npos);
  std::string bad = text;
  bad.replace(at, len, "412.5 MHz");
  std::ofstream(dir / "bad.yaml") << bad;
  const std::string msg = ceiling::test::message_of([&] { ceiling::load_descriptor(dir / "bad.yaml"); });
  CHECK(msg.find("bad.yaml:") != std::string::npos);
  CHECK(msg.find("power") != std::string::npos);
  bad = text;
  bad.replace(at, len, "412 kW");  // 412 kW: above the 100 kW a board can draw
  std::ofstream(dir / "big.yaml") << bad;
  CHECK(ceiling::test::message_of([&] { ceiling::load_descriptor(dir / "big.yaml"); }) != "(no error)");
  fs::remove_all(dir);
}
