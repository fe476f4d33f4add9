// Knees of a latency-versus-footprint curve by segmented least squares (Saavedra & Smith's
// P-chase plots; the fit is the classic dynamic-programming segmentation, each piece a line).
#pragma once
#include <cstddef>
#include <functional>
#include <span>
#include <vector>

namespace ceiling {

// One piece of a segmented fit: points [first, last] fit by y = intercept + slope * x.
struct LineSegment {
  std::size_t first = 0, last = 0;
  double slope = 0, intercept = 0;
  double sse = 0;  // residual sum of squares of this piece
  double at(double x) const { return intercept + slope * x; }
};

// Optimal split of (x, y) (x ascending) into exactly `segments` contiguous pieces of at least
// `min_points` points each, minimizing the total squared residual. Throws std::invalid_argument
// when the sizes do not match, x is not ascending, or there are too few points.
std::vector<LineSegment> segmented_least_squares(std::span<const double> x, std::span<const double> y,
                                                 int segments, int min_points = 2);

// Same, choosing the number of pieces (1..max_segments) by the Bayesian information criterion;
// `noise_floor` is the smallest residual standard deviation believed (relative to mean |y|), so
// noise-free curves are not split further once they are fit exactly.
std::vector<LineSegment> segmented_least_squares_auto(std::span<const double> x, std::span<const double> y,
                                                      int max_segments, int min_points = 2,
                                                      double noise_floor = 5e-3);

// A capacity knee: the last sweep point of a flat piece that is followed by a rise.
struct Knee {
  std::size_t index = 0;     // index of the last point that still sits on the lower plateau
  double footprint = 0;      // footprint at that point (bytes)
  double level_before = 0;   // fitted level of the plateau (e.g. cycles)
  double level_after = 0;    // fitted value at the end of the next piece
};

// Knees of y(footprint) (footprint ascending, > 0), fit in log2(footprint). A piece is flat when
// its fitted rise is under `flat_rise` of its level; a knee needs the next piece to end more than
// `min_rise` (relative) above the plateau. `noise_floor` is segmented_least_squares_auto's.
std::vector<Knee> find_knees(std::span<const double> footprint, std::span<const double> y,
                             int max_segments = 8, double min_rise = 0.15, double flat_rise = 0.08,
                             double noise_floor = 5e-3);

// Knees of a TLB sweep (pages in one fixed order per lap, cycles against footprint): a TLB miss
// that hits the next TLB level costs a few cycles on an L2 hit, so the steps are 1-4% (H100 80GB
// HBM3, 2 MiB pages, 2026-11-26: flat at 276 cycles within 0.2% up to 256 MiB, 279 at 362 MiB,
// rising to 286.5 at 16 GiB). Thresholds for such steps: a knee needs the next piece to end 1.5%
// above a plateau flat within 0.6%, and the fit trusts residuals down to 0.2% (the default 0.5%
// merges the steps into one slope). On the recorded sweeps the knee comes out at the same footprint
// in every run and under +-0.25 cycle of added noise (tests/test_knee_fit.cpp).
inline constexpr double kTlbMinRise = 0.015, kTlbFlatRise = 0.006, kTlbNoiseFloor = 2e-3;
std::vector<Knee> find_tlb_knees(std::span<const double> footprint, std::span<const double> cycles);

// Where y steps half-way from a knee's plateau to the next level, for capacities of caches whose
// replacement blurs the step. The crossing is searched between the last sweep point below half-way
// and the first one above it (not always the knee's own next point), with 7 points measured there
// by `measure(footprint)` (rounded down to `grain` bytes); linear interpolation between the two
// points that straddle half-way. `plateau_end` is the largest footprint seen within `plateau_tol`
// of the plateau level.
struct StepCrossing {
  double capacity = 0;
  double plateau_end = 0;
  std::vector<double> fine_footprint, fine_y;  // the sampled points, in order
};
StepCrossing half_way_crossing(std::span<const double> footprint, std::span<const double> y, const Knee& k,
                               const std::function<double(double)>& measure, double grain = 65536,
                               double plateau_tol = 0.075);

}  // namespace ceiling
