// Which timed repeats of gpu::time_kernel are followed by a clock sample, and which of its attempts
// it keeps (host-only arithmetic, CPU-tested in tests/test_clock_sampling.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace ceiling::gpu {

// 0-based repeat indices, increasing, spread evenly over [0, repeats-1] with the last repeat
// always among them: clock_samples < 0 samples every repeat, 0 none.
inline std::vector<int> sampled_repeats(int repeats, int clock_samples) {
  std::vector<int> v;
  if (repeats < 1 || clock_samples == 0) return v;
  const int k = clock_samples < 0 ? repeats : std::min(clock_samples, repeats);
  for (int i = 0; i < k; ++i) {
    const int r = k == 1 ? repeats - 1
                         : static_cast<int>(std::lround(static_cast<double>(i) * (repeats - 1) / (k - 1)));
    if (v.empty() || v.back() != r) v.push_back(r);
  }
  return v;
}

// time_kernel retries a throttled or noisy attempt; when every attempt stays flagged it keeps the
// steadiest one (lowest CV), not the last: interference that lasted past the retries must not
// replace a cleaner earlier attempt (an H100 GEMV run kept a median 4x its minimum). An unflagged
// attempt always wins (time_kernel stops at the first one). The cold path in kernels/runner.cpp
// applies the same rule across its own attempts.
inline bool steadier_attempt(bool flagged, double cv, bool best_flagged, double best_cv) {
  if (flagged != best_flagged) return !flagged;
  return cv < best_cv;
}

}  // namespace ceiling::gpu
