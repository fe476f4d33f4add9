// Small statistics used by every measurement: median, percentiles, spread.
#pragma once
#include <span>
#include <string>
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

// Why a probe's samples must not be taken at face value (the rules of gpu::time_kernel, for probes
// that gather their own samples): "throttled: SM clock fell to X MHz (max Y MHz)" when a clock
// sample is below min_clock_ratio x the largest, else "noisy: CV c > max_cv" when the values
// spread more than max_cv (max_cv <= 0: spread not judged), else "". Non-positive clocks are not
// samples (not measured). The descriptor keeps the median and flags it (MeasuredValue::flagged).
std::string sample_flag(std::span<const double> values, std::span<const double> clocks_hz, double max_cv,
                        double min_clock_ratio = 0.9);

}  // namespace ceiling
