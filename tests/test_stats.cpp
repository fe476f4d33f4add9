#include <doctest/doctest.h>

#include <vector>

#include "model/stats.hpp"

using namespace ceiling;

TEST_CASE("median of odd and even counts") {
  std::vector<double> odd{5, 1, 3};
  CHECK(median(odd) == 3);
  std::vector<double> even{4, 1, 3, 2};
  CHECK(median(even) == doctest::Approx(2.5));  // gpu-benches once returned the upper middle
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
  CHECK(percentile(v, 25) == doctest::Approx(20));
  CHECK(percentile(v, 10) == doctest::Approx(14));
  CHECK_THROWS(percentile(v, 101));
}

TEST_CASE("summary: spread and coefficient of variation") {
  std::vector<double> v{2, 4, 4, 4, 5, 5, 7, 9};
  const Summary s = summarize(v);
  CHECK(s.count == 8);
  CHECK(s.min == 2);
  CHECK(s.max == 9);
  CHECK(s.mean == doctest::Approx(5));
  CHECK(s.stddev == doctest::Approx(2.13808993529939));
  CHECK(s.cv == doctest::Approx(2.13808993529939 / 5));
  CHECK(s.median == doctest::Approx(4.5));
}

TEST_CASE("geometric mean") {
  std::vector<double> v{1, 4, 16};
  CHECK(geometric_mean(v) == doctest::Approx(4));
  std::vector<double> bad{1, 0};
  CHECK_THROWS(geometric_mean(bad));
}
