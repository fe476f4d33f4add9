// gpu::sampled_repeats: which timed repeats time_kernel follows with a clock sample.
#include <doctest/doctest.h>

#include <vector>

#include "gpu/clock_sampling.hpp"

using ceiling::gpu::sampled_repeats;

TEST_CASE("clock samples: every repeat by default, none on request") {
  CHECK(sampled_repeats(5, -1) == std::vector<int>{0, 1, 2, 3, 4});
  CHECK(sampled_repeats(5, 0).empty());
  CHECK(sampled_repeats(0, -1).empty());
}

TEST_CASE("clock samples: spread evenly, the last repeat always sampled") {
  CHECK(sampled_repeats(10, 1) == std::vector<int>{9});
  CHECK(sampled_repeats(10, 2) == std::vector<int>{0, 9});
  CHECK(sampled_repeats(10, 3) == std::vector<int>{0, 5, 9});  // 4.5 rounds away from zero
  CHECK(sampled_repeats(3, 7) == std::vector<int>{0, 1, 2});    // never more than the repeats
  CHECK(sampled_repeats(1, 3) == std::vector<int>{0});
}

TEST_CASE("time_kernel keeps an unflagged attempt, else the steadiest flagged one, not the last") {
  using ceiling::gpu::steadier_attempt;
  CHECK(steadier_attempt(false, 0.20, true, 0.01));   // unflagged beats flagged whatever the CVs
  CHECK_FALSE(steadier_attempt(true, 0.01, false, 0.20));
  CHECK(steadier_attempt(true, 0.10, true, 0.80));    // both noisy: the lower CV
  CHECK_FALSE(steadier_attempt(true, 0.80, true, 0.10));
  CHECK_FALSE(steadier_attempt(true, 0.30, true, 0.30));  // a tie keeps the earlier attempt
}
