#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <stdexcept>
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

}  // namespace

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
