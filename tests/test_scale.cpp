// Scale (issue 17 item 8): results files of hundreds of thousands of rows. Behaviour only (no
// timing assertion); the 1,000,000-row `ceiling report` time is measured by hand (docs/RELIABILITY.md).
#include <doctest/doctest.h>

#include "approx.hpp"

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include "model/validation.hpp"

using namespace ceiling::validation;

TEST_CASE("speedups pair 100,000 tensor-core with 100,000 CUDA-core results by kernel, precision and size") {
  constexpr int kPairs = 100000;
  std::vector<KernelResult> rows;
  rows.reserve(2 * kPairs + 2);
  for (int i = 0; i < kPairs; ++i)
    for (const char* variant : {"cuda_core", "tensor_core"}) {
      KernelResult r;
      r.kernel = i % 2 ? "gemv" : "scale";
      r.variant = variant;
      r.precision = i % 3 ? "fp64" : "fp16";
      r.size = i % 2 ? std::map<std::string, double>{{"m", 1000.0 + i}, {"n", 2000.0 + i}}
                     : std::map<std::string, double>{{"n", 1000.0 + i}};
      r.memory_level = "dram";
      r.time_s.median = r.variant == "cuda_core" ? 3.0 + i : 1.0 + i;  // T(CC)/T(TC) = (3+i)/(1+i)
      r.time_s.repeats = 10;
      r.speedup_bound_eq22 = 4;
      r.alpha = 8;
      rows.push_back(r);
    }
  // Unmatched rows on both sides: another precision, another size.
  KernelResult lone_cc = rows[0];
  lone_cc.precision = "fp32";
  rows.push_back(lone_cc);
  KernelResult lone_tc = rows[1];
  lone_tc.size = {{"n", 0.5}};
  rows.push_back(lone_tc);
  std::shuffle(rows.begin(), rows.end(), std::mt19937(17));

  const std::vector<SpeedupResult> s = speedups(rows);
  REQUIRE(s.size() == kPairs);
  int checked = 0;
  for (const auto& x : s) {
    const double i = x.size.at("n") - (x.kernel == "gemv" ? 2000.0 : 1000.0);
    REQUIRE(x.precision == (static_cast<long>(i) % 3 ? "fp64" : "fp16"));
    REQUIRE(x.measured == ceiling_test::Rel((3.0 + i) / (1.0 + i)));
    ++checked;
  }
  CHECK(checked == kPairs);
  // In file order of the tensor-core results, as before.
  std::vector<const KernelResult*> tc;
  for (const auto& r : rows)
    if (r.variant == "tensor_core" && r.size != lone_tc.size) tc.push_back(&r);
  REQUIRE(tc.size() == s.size());
  for (size_t k = 0; k < s.size(); k += 997) CHECK(s[k].size == tc[k]->size);
}

TEST_CASE("speedups: two CUDA-core results of one size pair with the tensor-core one twice, in file order") {
  KernelResult cc1, cc2, tc;
  for (KernelResult* r : {&cc1, &cc2, &tc}) {
    r->kernel = "scale";
    r->precision = "fp64";
    r->size = {{"n", 1024}};
    r->time_s.repeats = 5;
  }
  cc1.variant = cc2.variant = "cuda_core";
  tc.variant = "tensor_core";
  cc1.time_s.median = 2, cc2.time_s.median = 3, tc.time_s.median = 1;
  const auto s = speedups({cc1, tc, cc2});
  REQUIRE(s.size() == 2);
  CHECK(s[0].measured == 2);
  CHECK(s[1].measured == 3);
}
