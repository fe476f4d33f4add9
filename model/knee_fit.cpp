#include "knee_fit.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace ceiling {

namespace {

// Prefix sums let every candidate piece be fit in O(1): the normal equations of y = a + b x.
struct Prefix {
  std::vector<double> n, sx, sy, sxx, sxy, syy;
  explicit Prefix(std::span<const double> x, std::span<const double> y) {
    const std::size_t m = x.size();
    n.assign(m + 1, 0);
    sx = sy = sxx = sxy = syy = n;
    for (std::size_t i = 0; i < m; ++i) {
      n[i + 1] = n[i] + 1;
      sx[i + 1] = sx[i] + x[i];
      sy[i + 1] = sy[i] + y[i];
      sxx[i + 1] = sxx[i] + x[i] * x[i];
      sxy[i + 1] = sxy[i] + x[i] * y[i];
      syy[i + 1] = syy[i] + y[i] * y[i];
    }
  }
  // Least-squares line through points [i, j] and its residual sum of squares.
  LineSegment fit(std::size_t i, std::size_t j) const {
    const double cnt = n[j + 1] - n[i], X = sx[j + 1] - sx[i], Y = sy[j + 1] - sy[i];
    const double XX = sxx[j + 1] - sxx[i], XY = sxy[j + 1] - sxy[i], YY = syy[j + 1] - syy[i];
    Eigen::Matrix2d A;
    A << cnt, X, X, XX;
    const Eigen::Vector2d rhs(Y, XY);
    LineSegment s;
    s.first = i;
    s.last = j;
    // Pieces of fewer than 4 points get a level only: a line through 2-3 points fits any step
    // and would hide short plateaus (a half-L2 partition spans one octave of the sweep).
    if (cnt < 4 || XX - X * X / cnt <= 1e-12 * std::max(1.0, std::abs(XX))) {
      s.slope = 0;
      s.intercept = Y / cnt;
    } else {
      const Eigen::Vector2d ab = A.ldlt().solve(rhs);
      s.intercept = ab(0);
      s.slope = ab(1);
    }
    const double a = s.intercept, b = s.slope;
    // sum (y - a - b x)^2 expanded over the prefix sums.
    s.sse = std::max(0.0, YY - 2 * a * Y - 2 * b * XY + cnt * a * a + 2 * a * b * X + b * b * XX);
    return s;
  }
};

void check_input(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size())
    throw std::invalid_argument("segmented_least_squares: x has " + std::to_string(x.size()) +
                                " points, y " + std::to_string(y.size()));
  for (std::size_t i = 1; i < x.size(); ++i)
    if (!(x[i] > x[i - 1])) throw std::invalid_argument("segmented_least_squares: x not strictly ascending");
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!std::isfinite(x[i]) || !std::isfinite(y[i]))
      throw std::invalid_argument("segmented_least_squares: non-finite point");
}

}  // namespace

std::vector<LineSegment> segmented_least_squares(std::span<const double> x, std::span<const double> y,
                                                 int segments, int min_points) {
  check_input(x, y);
  const std::size_t m = x.size();
  if (segments < 1 || min_points < 1)
    throw std::invalid_argument("segmented_least_squares: segments and min_points must be >= 1");
  if (m < static_cast<std::size_t>(segments) * static_cast<std::size_t>(min_points))
    throw std::invalid_argument("segmented_least_squares: " + std::to_string(m) + " points cannot make " +
                                std::to_string(segments) + " pieces of " + std::to_string(min_points));
  const Prefix pre(x, y);
  const double inf = std::numeric_limits<double>::infinity();
  const std::size_t K = segments, mp = min_points;
  // best[k][j]: least SSE covering points [0, j) with k pieces; from[k][j]: start of the last piece.
  std::vector<std::vector<double>> best(K + 1, std::vector<double>(m + 1, inf));
  std::vector<std::vector<std::size_t>> from(K + 1, std::vector<std::size_t>(m + 1, 0));
  best[0][0] = 0;
  for (std::size_t k = 1; k <= K; ++k)
    for (std::size_t j = k * mp; j <= m; ++j)
      for (std::size_t i = (k - 1) * mp; i + mp <= j; ++i) {
        if (best[k - 1][i] == inf) continue;
        const double c = best[k - 1][i] + pre.fit(i, j - 1).sse;
        if (c < best[k][j]) {
          best[k][j] = c;
          from[k][j] = i;
        }
      }
  std::vector<LineSegment> out(K);
  std::size_t j = m;
  for (std::size_t k = K; k >= 1; --k) {
    const std::size_t i = from[k][j];
    out[k - 1] = pre.fit(i, j - 1);
    j = i;
  }
  return out;
}

std::vector<LineSegment> segmented_least_squares_auto(std::span<const double> x, std::span<const double> y,
                                                      int max_segments, int min_points, double noise_floor) {
  check_input(x, y);
  const double n = static_cast<double>(x.size());
  if (x.empty()) throw std::invalid_argument("segmented_least_squares_auto: no points");
  double mean_abs = 0;
  for (double v : y) mean_abs += std::abs(v);
  mean_abs /= n;
  const double var_floor = std::max(1e-300, std::pow(noise_floor * mean_abs, 2));
  const int kmax = std::min<int>(max_segments, static_cast<int>(x.size()) / std::max(min_points, 1));
  std::vector<LineSegment> best;
  double best_bic = std::numeric_limits<double>::infinity();
  for (int k = 1; k <= std::max(kmax, 1); ++k) {
    auto fit = segmented_least_squares(x, y, k, min_points);
    double sse = 0;
    for (const auto& s : fit) sse += s.sse;
    // BIC charging 2 parameters per piece (level and breakpoint; short pieces carry no slope).
    const double bic = n * std::log(std::max(sse / n, var_floor)) + 2.0 * k * std::log(n);
    if (bic < best_bic - 1e-9) {
      best_bic = bic;
      best = std::move(fit);
    }
  }
  return best;
}

std::vector<Knee> find_knees(std::span<const double> footprint, std::span<const double> y, int max_segments,
                             double min_rise, double flat_rise, double noise_floor) {
  if (footprint.size() != y.size()) throw std::invalid_argument("find_knees: size mismatch");
  std::vector<double> lx(footprint.size());
  for (std::size_t i = 0; i < footprint.size(); ++i) {
    if (!(footprint[i] > 0)) throw std::invalid_argument("find_knees: footprint must be > 0");
    lx[i] = std::log2(footprint[i]);
  }
  if (lx.size() < 4) return {};
  const auto segs = segmented_least_squares_auto(lx, y, max_segments, 2, noise_floor);
  std::vector<Knee> knees;
  for (std::size_t s = 0; s + 1 < segs.size(); ++s) {
    const auto& a = segs[s];
    const auto& b = segs[s + 1];
    const double a0 = a.at(lx[a.first]), a1 = a.at(lx[a.last]);
    double level = 0.5 * (a0 + a1);
    std::size_t idx = a.last;
    bool flat = level > 0 && std::abs(a1 - a0) <= flat_rise * level;
    for (std::size_t i = a.first; flat && i <= a.last; ++i) flat = std::abs(y[i] - a.at(lx[i])) <= flat_rise * level;
    if (!flat && a.last >= a.first + 3) {
      // The piece may have absorbed the first rising point, which tilts its line (seen on an
      // H200 L2 sweep: 30, 35, 42 MiB level, 50 MiB +13%, 60 MiB +80%): refit without it.
      const std::size_t end = a.last - 1;
      const double m = static_cast<double>(end - a.first + 1);
      double sx = 0, sy = 0, sxx = 0, sxy = 0;
      for (std::size_t i = a.first; i <= end; ++i) {
        sx += lx[i];
        sy += y[i];
        sxx += lx[i] * lx[i];
        sxy += lx[i] * y[i];
      }
      const double den = m * sxx - sx * sx;
      const double slope = den != 0 ? (m * sxy - sx * sy) / den : 0;
      const double icpt = (sy - slope * sx) / m;
      const auto at = [&](double x) { return icpt + slope * x; };
      const double r0 = at(lx[a.first]), r1 = at(lx[end]);
      level = 0.5 * (r0 + r1);
      flat = level > 0 && std::abs(r1 - r0) <= flat_rise * level;
      for (std::size_t i = a.first; flat && i <= end; ++i) flat = std::abs(y[i] - at(lx[i])) <= flat_rise * level;
      // The dropped point must itself sit above the plateau, or the piece was a ramp.
      flat = flat && y[a.last] > level * (1 + flat_rise);
      idx = end;
    }
    if (!flat) continue;  // not a plateau
    const double after = b.at(lx[b.last]);
    if (after <= level * (1 + min_rise)) continue;
    // The plateau piece may have absorbed the first rising point: step back while a point sits
    // clearly above the plateau level.
    while (idx > a.first && y[idx] > level * (1 + min_rise / 2)) --idx;
    // ...or a short next piece may have taken plateau points: step forward while they stay level.
    while (idx + 1 <= b.last && std::abs(y[idx + 1] - level) <= flat_rise * level) ++idx;
    knees.push_back({idx, footprint[idx], level, after});
  }
  return knees;
}

std::vector<Knee> find_tlb_knees(std::span<const double> footprint, std::span<const double> cycles) {
  return find_knees(footprint, cycles, 10, kTlbMinRise, kTlbFlatRise, kTlbNoiseFloor);
}

StepCrossing half_way_crossing(std::span<const double> footprint, std::span<const double> y, const Knee& k,
                               const std::function<double(double)>& measure, double grain, double plateau_tol) {
  if (footprint.size() != y.size() || k.index + 1 >= footprint.size())
    throw std::invalid_argument("half_way_crossing: the knee needs a point after it");
  const double mid = 0.5 * (k.level_before + k.level_after);
  std::size_t up = k.index + 1;
  while (up + 1 < footprint.size() && y[up] < mid) ++up;
  StepCrossing c;
  c.plateau_end = k.footprint;
  for (std::size_t j = k.index; j < up; ++j)
    if (y[j] <= k.level_before * (1 + plateau_tol)) c.plateau_end = std::max(c.plateau_end, footprint[j]);
  const double lo = footprint[up - 1], hi = footprint[up];
  c.fine_footprint.push_back(lo);
  c.fine_y.push_back(y[up - 1]);
  for (int j = 1; j < 8; ++j) {
    const double f = std::floor((lo + (hi - lo) * j / 8.0) / grain) * grain;
    c.fine_footprint.push_back(f);
    c.fine_y.push_back(measure(f));
  }
  c.fine_footprint.push_back(hi);
  c.fine_y.push_back(y[up]);
  c.capacity = hi;
  for (std::size_t j = 1; j < c.fine_y.size(); ++j) {
    if (c.fine_y[j] <= k.level_before * (1 + plateau_tol)) c.plateau_end = std::max(c.plateau_end, c.fine_footprint[j]);
    if (c.fine_y[j - 1] < mid && c.fine_y[j] >= mid) {
      const double t = (mid - c.fine_y[j - 1]) / (c.fine_y[j] - c.fine_y[j - 1]);
      c.capacity = c.fine_footprint[j - 1] + t * (c.fine_footprint[j] - c.fine_footprint[j - 1]);
      break;
    }
  }
  return c;
}

}  // namespace ceiling
