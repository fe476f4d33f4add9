#include "stats.hpp"

#include <cstdio>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace ceiling {

double median(std::span<const double> samples) {
  if (samples.empty()) throw std::invalid_argument("median of no samples");
  std::vector<double> v(samples.begin(), samples.end());
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  if (v.size() % 2 == 1) return v[mid];
  const double upper = v[mid];
  const double lower = *std::max_element(v.begin(), v.begin() + mid);
  return 0.5 * (lower + upper);
}

double percentile(std::span<const double> samples, double p) {
  if (samples.empty()) throw std::invalid_argument("percentile of no samples");
  if (!(p >= 0 && p <= 100)) throw std::invalid_argument("percentile outside [0,100]");
  std::vector<double> v(samples.begin(), samples.end());
  std::sort(v.begin(), v.end());
  const double rank = p / 100.0 * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (rank - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

Summary summarize(std::span<const double> samples) {
  if (samples.empty()) throw std::invalid_argument("summary of no samples");
  Summary s;
  s.count = static_cast<int>(samples.size());
  s.median = median(samples);
  const auto [mn, mx] = std::minmax_element(samples.begin(), samples.end());
  s.min = *mn;
  s.max = *mx;
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / s.count;
  if (s.count > 1) {
    double ss = 0;
    for (double x : samples) ss += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(ss / (s.count - 1));
    s.cv = s.mean != 0 ? s.stddev / std::fabs(s.mean) : 0;
  }
  return s;
}

double geometric_mean(std::span<const double> values) {
  if (values.empty()) throw std::invalid_argument("geometric mean of no values");
  double log_sum = 0;
  for (double x : values) {
    if (!(x > 0)) throw std::invalid_argument("geometric mean of a non-positive value");
    log_sum += std::log(x);
  }
  return std::exp(log_sum / static_cast<double>(values.size()));
}

std::string sample_flag(std::span<const double> values, std::span<const double> clocks_hz, double max_cv,
                        double min_clock_ratio) {
  double lo = 0, hi = 0;
  for (const double c : clocks_hz) {
    if (!(c > 0)) continue;
    lo = lo > 0 ? std::min(lo, c) : c;
    hi = std::max(hi, c);
  }
  char buf[160];
  if (hi > 0 && lo < min_clock_ratio * hi) {
    std::snprintf(buf, sizeof buf, "throttled: SM clock fell to %.0f MHz (max %.0f MHz)", lo / 1e6, hi / 1e6);
    return buf;
  }
  if (max_cv > 0 && values.size() > 1) {
    const Summary s = summarize(values);
    if (s.cv > max_cv) {
      std::snprintf(buf, sizeof buf, "noisy: CV %.4f > %.4f", s.cv, max_cv);
      return buf;
    }
  }
  return {};
}

}  // namespace ceiling
