#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/knee_fit.hpp"

using namespace ceiling;

namespace {

// A P-chase curve: plateaus `levels` separated at `capacities`; past a capacity C the hit rate of
// a random chase falls as C/F (gradual) or at once (sharp). Deterministic +-0.5% ripple as noise.
struct Synthetic {
  std::vector<double> footprint, latency;
};

Synthetic make_curve(const std::vector<double>& capacities, const std::vector<double>& levels, bool sharp,
                     int points_per_octave = 4, double lo = 4096, double hi = 256.0 * 1024 * 1024) {
  Synthetic s;
  for (int i = 0;; ++i) {
    const double f = lo * std::pow(2.0, static_cast<double>(i) / points_per_octave);
    if (f > hi * 1.0001) break;
    double lat = levels[0];
    for (std::size_t k = 0; k < capacities.size(); ++k) {
      if (f <= capacities[k]) break;
      const double hit = sharp ? 0.0 : capacities[k] / f;
      lat = levels[k + 1] - (levels[k + 1] - lat) * hit;
    }
    s.footprint.push_back(f);
    s.latency.push_back(lat * (1 + 0.005 * std::sin(1.7 * i)));
  }
  return s;
}

std::size_t last_index_within(const std::vector<double>& f, double cap) {
  std::size_t idx = 0;
  for (std::size_t i = 0; i < f.size(); ++i)
    if (f[i] <= cap * 1.0001) idx = i;
  return idx;
}


// The TLB sweeps (one element per 2 MiB page, cycles per load) of the six calibrations behind
// results/peers-h{200,100}-2026-11-26.md (the probes.json of results/peers-2026-11-26-*/ours-N.yaml),
// footprints from 8 MiB by half octaves, rounded down to the page as the probe does.
struct TlbSweep {
  const char* gpu;
  std::vector<double> cycles;
};
const std::vector<TlbSweep>& recorded_tlb_sweeps() {
  static const std::vector<TlbSweep> s = {
      {"h200 run 1 (GPU-16f2fc15)", {272.29, 270.77, 273.51, 272.77, 277.29, 278.82, 278.75, 279.4, 278.22, 280.84, 279.88, 283.67, 285.62, 286.36, 287.83, 288.04, 288.85, 288.8, 288.94, 289.19, 289.42, 289.48, 289.82, 289.78, 289.91}},
      {"h200 run 2 (GPU-16f2fc15)", {272.28, 270.78, 273.52, 272.78, 277.29, 278.82, 278.75, 279.37, 278.24, 280.84, 279.88, 283.67, 285.64, 286.33, 287.83, 288.03, 288.82, 288.79, 288.95, 289.19, 289.42, 289.49, 289.81, 289.78, 289.9}},
      {"h200 run 3 (GPU-16f2fc15)", {272.29, 270.77, 273.53, 272.78, 277.27, 278.82, 278.76, 279.39, 278.25, 280.86, 279.9, 283.67, 285.64, 286.37, 287.85, 288.03, 288.83, 288.78, 288.95, 289.2, 289.42, 289.5, 289.81, 289.77, 289.91}},
      {"h100 run 1 (GPU-fd8c19c1)", {262.7, 261.9, 263.76, 266.52, 269.45, 269.1, 269.89, 269.65, 269.2, 268.75, 268.14, 271.81, 274.23, 276.31, 276.92, 277.15, 277.75, 278.32, 278.47, 278.75, 278.85, 278.85, 278.83}},
      {"h100 run 2 (GPU-fd8c19c1)", {262.51, 261.68, 263.57, 266.37, 269.24, 268.91, 269.67, 269.44, 268.94, 268.54, 267.92, 271.59, 273.95, 276.1, 276.73, 276.89, 277.54, 278.1, 278.25, 278.54, 278.64, 278.59, 278.61}},
      {"h100 run 3 (GPU-fd8c19c1)", {263.48, 262.64, 264.55, 267.41, 270.29, 269.92, 270.68, 270.46, 269.93, 269.52, 268.88, 272.6, 274.98, 277.13, 277.72, 277.86, 278.54, 279.11, 279.29, 279.54, 279.65, 279.62, 279.6}},
  };
  return s;
}
std::vector<double> tlb_footprints(std::size_t n) {
  std::vector<double> f;
  for (std::size_t i = 0; i < n; ++i)
    f.push_back(std::floor(8.0 * 1048576 * std::pow(2.0, 0.5 * static_cast<double>(i)) / 2097152) * 2097152);
  return f;
}
std::vector<double> knee_mib(const std::vector<Knee>& ks) {
  std::vector<double> v;
  for (const auto& k : ks) v.push_back(k.footprint / 1048576);
  return v;
}

}  // namespace

TEST_CASE("find_tlb_knees: both TLB steps of every recorded H200 and H100 sweep, at the same footprints") {
  // Before (find_knees with 4% / 2% and the default noise floor) these sweeps gave no knee at all:
  // the 2-4% steps were merged into one sloped piece.
  for (const auto& s : recorded_tlb_sweeps()) {
    INFO(s.gpu);
    const auto f = tlb_footprints(s.cycles.size());
    CHECK(find_knees(f, s.cycles, 10, 0.04, 0.02).empty());
    const auto ks = find_tlb_knees(f, s.cycles);
    REQUIRE(ks.size() == 2);
    const bool h200 = std::string(s.gpu).rfind("h200", 0) == 0;
    // Last footprint on each plateau (the sweep's resolution: half octaves).
    CHECK(ks[0].footprint / 1048576 == doctest::Approx(h200 ? 22 : 16));
    CHECK(ks[1].footprint / 1048576 == doctest::Approx(h200 ? 256 : 362));
    CHECK(ks[0].level_before < ks[1].level_before);
    // The steps are a few cycles on an L2 hit: 2-4% each.
    CHECK(ks[0].level_after / ks[0].level_before == doctest::Approx(1.03).epsilon(0.015));
    CHECK(ks[1].level_after / ks[1].level_before == doctest::Approx(1.03).epsilon(0.015));
  }
}

TEST_CASE("find_tlb_knees: the same knees under +-0.25 cycle of noise, none on a flat sweep") {
  std::mt19937 rng(20261126);
  std::uniform_real_distribution<double> u(-0.25, 0.25);
  for (const auto& s : recorded_tlb_sweeps()) {
    INFO(s.gpu);
    const auto f = tlb_footprints(s.cycles.size());
    const auto want = knee_mib(find_tlb_knees(f, s.cycles));
    for (int trial = 0; trial < 50; ++trial) {
      std::vector<double> y = s.cycles;
      for (auto& v : y) v += u(rng);
      CHECK(knee_mib(find_tlb_knees(f, y)) == want);
    }
  }
  // A sweep that stays within +-0.25 cycle of 280 has no TLB step.
  const auto f = tlb_footprints(25);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<double> y(f.size(), 280.0);
    for (auto& v : y) v += u(rng);
    CHECK(find_tlb_knees(f, y).empty());
  }
}

TEST_CASE("segmented least squares recovers exact pieces") {
  std::vector<double> x, y;
  for (int i = 0; i < 30; ++i) {
    x.push_back(i);
    y.push_back(i < 10 ? 5.0 : (i < 20 ? 5.0 + 2.0 * (i - 10) : 25.0));
  }
  const auto segs = segmented_least_squares(x, y, 3);
  REQUIRE(segs.size() == 3);
  CHECK(segs[0].first == 0);
  CHECK(segs[2].last == 29);
  double sse = 0;
  for (auto& s : segs) sse += s.sse;
  CHECK(sse < 3.0);  // the corner points at 10 and 20 fit either side within a small residual
  const auto autofit = segmented_least_squares_auto(x, y, 6);
  CHECK(autofit.size() >= 3);
  CHECK(autofit.size() <= 4);
  CHECK_THROWS_AS(segmented_least_squares(x, y, 20, 2), std::invalid_argument);
  std::vector<double> bad{1, 0, 2};
  std::vector<double> yy{1, 1, 1};
  CHECK_THROWS_AS(segmented_least_squares(bad, yy, 1), std::invalid_argument);
}

TEST_CASE("knees of synthetic cache curves are found within one sweep point") {
  const double KiB = 1024, MiB = 1024 * KiB;
  struct Case {
    bool sharp;
    std::vector<double> caps, levels;
    int min_ppo;  // coarsest sweep (points per octave) that resolves every plateau
  };
  // Sharp steps may sit one octave apart (the near/far halves of a partitioned L2); a gradual
  // C/F ramp needs room to reach its next plateau.
  const std::vector<Case> cases{{true, {256 * KiB, 25 * MiB, 50 * MiB}, {38, 262, 420, 640}, 2},
                                {false, {256 * KiB, 50 * MiB}, {38, 262, 640}, 2},
                                {true, {192 * KiB, 6 * MiB, 60 * MiB}, {33, 250, 380, 700}, 2}};
  for (const auto& cs : cases) {
    for (int ppo = cs.min_ppo; ppo <= 6; ++ppo) {
      CAPTURE(cs.sharp);
      CAPTURE(ppo);
      const auto c = make_curve(cs.caps, cs.levels, cs.sharp, ppo);
      const auto knees = find_knees(c.footprint, c.latency);
      REQUIRE(knees.size() == cs.caps.size());
      for (std::size_t k = 0; k < cs.caps.size(); ++k) {
        const auto expect = last_index_within(c.footprint, cs.caps[k]);
        CAPTURE(k);
        CHECK(std::llabs(static_cast<long long>(knees[k].index) - static_cast<long long>(expect)) <= 1);
      }
      CHECK(knees[0].level_before == doctest::Approx(cs.levels[0]).epsilon(0.03));
    }
  }
}

TEST_CASE("a flat curve has no knee, and a capacity off the grid lands next to it") {
  std::vector<double> f, y;
  for (int i = 0; i < 40; ++i) {
    f.push_back(4096 * std::pow(2.0, i / 4.0));
    y.push_back(100 * (1 + 0.003 * std::cos(i)));
  }
  CHECK(find_knees(f, y).empty());
  const double cap = 3.3e6;  // between grid points
  const auto c = make_curve({cap}, {40, 300}, false, 4, 4096, 64e6);
  const auto knees = find_knees(c.footprint, c.latency);
  REQUIRE(knees.size() == 1);
  const auto expect = last_index_within(c.footprint, cap);
  CHECK(std::llabs(static_cast<long long>(knees[0].index) - static_cast<long long>(expect)) <= 1);
}

TEST_CASE("a short plateau whose piece absorbed the first rising point still gives its knee") {
  // H200 L2 capacity sweep, 2026-11-21 (ps per byte vs MiB): the fit joined 50 MiB (+13%) to the
  // 30-42 MiB plateau, tilting its line past the flatness test, and no knee was reported.
  const std::vector<double> mib{30, 35, 42, 50, 60, 71, 84, 100, 120, 142, 169, 201, 240};
  const std::vector<double> y{0.1224, 0.1224, 0.1238, 0.1387, 0.221, 0.2282, 0.2319,
                              0.2358, 0.2371, 0.2346, 0.2357, 0.2376, 0.2377};
  std::vector<double> f;
  for (double m : mib) f.push_back(m * 1048576.0);
  const auto knees = find_knees(f, y, 10, 0.15, 0.1);
  REQUIRE(knees.size() == 1);
  CHECK(knees[0].footprint >= 42 * 1048576.0);  // the step lies between 50 and 60 MiB
  CHECK(knees[0].footprint <= 50 * 1048576.0);
  CHECK(knees[0].level_before == doctest::Approx(0.125).epsilon(0.03));
  CHECK(knees[0].level_after > 0.22);
}

TEST_CASE("half-way crossing: searched where the sweep crosses half-way, not only after the knee") {
  const std::vector<double> mib{30, 35, 42, 50, 60, 71, 84, 100, 120, 142, 169, 201, 240};
  const std::vector<double> y{0.1224, 0.1224, 0.1238, 0.1387, 0.221, 0.2282, 0.2319,
                              0.2358, 0.2371, 0.2346, 0.2357, 0.2376, 0.2377};
  std::vector<double> f;
  for (double m : mib) f.push_back(m * 1048576.0);
  const auto knees = find_knees(f, y, 10, 0.15, 0.1);
  REQUIRE(knees.size() == 1);
  // A step at 57 MiB between the 50 and 60 MiB points: lower level below it, upper above.
  int calls = 0;
  const auto measure = [&](double bytes) {
    ++calls;
    return bytes < 57 * 1048576.0 ? 0.1387 : 0.221;
  };
  const StepCrossing c = half_way_crossing(f, y, knees[0], measure);
  CHECK(calls == 7);
  CHECK(c.fine_footprint.front() == 50 * 1048576.0);  // not the knee's own 42 -> 50 MiB gap
  CHECK(c.fine_footprint.back() == 60 * 1048576.0);
  CHECK(c.capacity > 55 * 1048576.0);
  CHECK(c.capacity < 58.5 * 1048576.0);
  CHECK(c.plateau_end <= 50 * 1048576.0);
  const Knee bad{12, f[12], 0.1, 0.2};
  CHECK_THROWS(half_way_crossing(f, y, bad, measure));
}
