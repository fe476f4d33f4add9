// Small statistics used by every measurement: median, percentiles, spread.
#pragma once
#include <span>
#include <vector>

namespace ceiling {

struct Summary {
  double median = 0;
  double min = 0;
  double max = 0;
  double mean = 0;
  double stddev = 0;  // sample standard deviation (n-1)
  double cv = 0;      // stddev / mean; 0 for a single sample
  int count = 0;
};

// Median of an even count is the mean of the two middle values. Throws on empty input.
double median(std::span<const double> samples);
// Linear interpolation between closest ranks, p in [0,100].
double percentile(std::span<const double> samples, double p);
Summary summarize(std::span<const double> samples);
double geometric_mean(std::span<const double> values);  // throws on empty or non-positive

}  // namespace ceiling
