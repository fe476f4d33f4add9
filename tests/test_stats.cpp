#include <doctest/doctest.h>

#include "approx.hpp"

#include <vector>

#include "model/stats.hpp"

using namespace ceiling;

TEST_CASE("median of odd and even counts") {
  std::vector<double> odd{5, 1, 3};
  CHECK(median(odd) == 3);
  std::vector<double> even{4, 1, 3, 2};
  CHECK(median(even) == ceiling_test::Rel(2.5));  // gpu-benches once returned the upper middle
  std::vector<double> one{7};
  CHECK(median(one) == 7);
  std::vector<double> none;
  CHECK_THROWS(median(none));
}

TEST_CASE("percentiles interpolate between ranks") {
  std::vector<double> v{10, 20, 30, 40, 50};
  CHECK(percentile(v, 0) == 10);
  CHECK(percentile(v, 100) == 50);
  CHECK(percentile(v, 50) == 30);
  CHECK(percentile(v, 25) == ceiling_test::Rel(20));
  CHECK(percentile(v, 10) == ceiling_test::Rel(14));
  CHECK_THROWS(percentile(v, 101));
}

TEST_CASE("summary: spread and coefficient of variation") {
  std::vector<double> v{2, 4, 4, 4, 5, 5, 7, 9};
  const Summary s = summarize(v);
  CHECK(s.count == 8);
  CHECK(s.min == 2);
  CHECK(s.max == 9);
  CHECK(s.mean == ceiling_test::Rel(5));
  CHECK(s.stddev == ceiling_test::Rel(2.13808993529939));
  CHECK(s.cv == ceiling_test::Rel(2.13808993529939 / 5));
  CHECK(s.median == ceiling_test::Rel(4.5));
}

TEST_CASE("geometric mean") {
  std::vector<double> v{1, 4, 16};
  CHECK(geometric_mean(v) == ceiling_test::Rel(4));
  std::vector<double> bad{1, 0};
  CHECK_THROWS(geometric_mean(bad));
}

TEST_CASE("sample_flag: a sagging clock or a wide spread is named, steady samples pass") {
  const std::vector<double> steady{100, 100.1, 99.9, 100.05};
  const std::vector<double> clocks{1.98e9, 1.98e9, 1.97e9, 1.98e9};
  CHECK(sample_flag(steady, clocks, 0.05).empty());
  // One repeat at 1.60 GHz of 1.98: below 0.9 x the fastest.
  const std::vector<double> sagging{1.98e9, 1.60e9, 1.98e9, 1.97e9};
  CHECK(sample_flag(steady, sagging, 0.05) == "throttled: SM clock fell to 1600 MHz (max 1980 MHz)");
  // 1.79 of 1.98 GHz is 0.904: not throttled by the 0.9 rule.
  const std::vector<double> mild{1.98e9, 1.79e9};
  CHECK(sample_flag(steady, mild, 0.05).empty());
  const std::vector<double> noisy{100, 130, 80, 110};
  CHECK(sample_flag(noisy, clocks, 0.05).rfind("noisy: CV 0.198", 0) == 0);  // sd 20.8 of mean 105
  CHECK(sample_flag(noisy, clocks, 0).empty());  // spread not judged
  // Unmeasured clocks (0) are not samples; one value has no spread.
  const std::vector<double> none{0, 0};
  CHECK(sample_flag(steady, none, 0.05).empty());
  const std::vector<double> one{5};
  CHECK(sample_flag(one, none, 0.05).empty());
}
