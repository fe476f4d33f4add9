// The paper's equations and worked examples (Zhang et al., GPGPU'25), through model/roofline.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "model/roofline.hpp"

using namespace ceiling;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
// A100-80GB and GH200, the paper's Table 1.
constexpr double kA100Bw = 1.94e12, kA100Cc = 9.7e12, kA100Tc = 19.5e12;
constexpr double kGh200Bw = 4.00e12, kGh200Cc = 34.0e12, kGh200Tc = 67.0e12;
double round2(double x) { return std::round(x * 100) / 100; }
}  // namespace

TEST_CASE("balance, intensity, roofline (Eq. 1-4)") {
  CHECK(machine_balance(kA100Cc, kA100Bw) == ceiling_test::Rel(5.0));
  CHECK(machine_balance(kGh200Cc, kGh200Bw) == ceiling_test::Rel(8.5));
  CHECK(operational_intensity(1, 16) == 0.0625);  // SCALE, fp64
  // Below the ridge the roof is BW * I, above it the peak.
  CHECK(attainable_flop_per_s(kA100Cc, kA100Bw, 0.25) == ceiling_test::Rel(0.485e12));
  CHECK(attainable_flop_per_s(kA100Cc, kA100Bw, 100) == kA100Cc);
  CHECK(attainable_flop_per_s(kA100Cc, kA100Bw, 5.0) == ceiling_test::Rel(kA100Cc));
  CHECK(is_memory_bound(0.25, 5));
  CHECK_FALSE(is_memory_bound(6, 5));
  CHECK_FALSE(is_memory_bound(5, 5));  // Eq. 4 is strict
}

TEST_CASE("times and Tmem/Tcmp = B/I (Eq. 15)") {
  const double w = 2e9, q = 8e9;
  const double t_cmp = compute_time_s(w, kA100Cc), t_mem = memory_time_s(q, kA100Bw);
  CHECK(t_cmp == ceiling_test::Rel(2e9 / 9.7e12));
  CHECK(t_mem == ceiling_test::Rel(8e9 / 1.94e12));
  CHECK(t_mem / t_cmp == ceiling_test::Rel(machine_balance(kA100Cc, kA100Bw) / operational_intensity(w, q)));
  CHECK(compute_time_s(0, kA100Cc) == 0);
}

TEST_CASE("overlapped, un-overlapped and partial overlap (Eq. 17-18, ours)") {
  CHECK(overlapped_time_s(3, 1) == 3);
  CHECK(overlapped_time_s(3, 1, 5) == 5);  // Eq. 17: Tothers can dominate
  CHECK(unoverlapped_time_s(3, 1) == 4);
  CHECK(unoverlapped_time_s(3, 1, 0.5) == 4.5);
  // phi = 1 is Eq. 17, phi = 0 is Eq. 18, and phi in between interpolates linearly.
  CHECK(partial_overlap_time_s(3, 1, 1.0) == overlapped_time_s(3, 1));
  CHECK(partial_overlap_time_s(1, 3, 1.0) == overlapped_time_s(1, 3));
  CHECK(partial_overlap_time_s(3, 1, 0.0) == unoverlapped_time_s(3, 1));
  CHECK(partial_overlap_time_s(3, 1, 0.0, 0.7) == ceiling_test::Rel(unoverlapped_time_s(3, 1, 0.7)));
  CHECK(partial_overlap_time_s(3, 1, 0.25) == ceiling_test::Rel(3.75));
  CHECK(partial_overlap_time_s(3, 1, 0.5, 2) == ceiling_test::Rel(5.5));
  for (double phi : {0.0, 0.3, 0.6, 1.0}) {
    const double t = partial_overlap_time_s(2, 1.5, phi);
    CHECK(t >= overlapped_time_s(2, 1.5));
    CHECK(t <= unoverlapped_time_s(2, 1.5));
  }
  CHECK_THROWS_AS(partial_overlap_time_s(3, 1, 1.5), std::invalid_argument);
  CHECK_THROWS_AS(partial_overlap_time_s(3, 1, -0.1), std::invalid_argument);
  CHECK_THROWS_AS(partial_overlap_time_s(3, 1, std::nan("")), std::invalid_argument);
}

TEST_CASE("Eq. 20 equals Eq. 19, and Eq. 22 bounds it") {
  for (double alpha : {0.25, 1.0, 2.0, 6.9, 100.0}) {
    for (double t_cmp : {0.1, 1.0, 7.0}) {
      for (double t_mem : {0.0, 0.5, 3.0}) {
        for (double t_other : {0.0, 0.2}) {
          const double eq19 = (t_cmp + t_mem + t_other) / (t_cmp / alpha + t_mem + t_other);
          const double eq20 = 1 + (alpha - 1) / (1 + alpha * (t_mem + t_other) / t_cmp);
          CHECK(tensor_core_speedup(t_cmp, t_mem, t_other, alpha) == ceiling_test::Rel(eq19));
          CHECK(tensor_core_speedup(t_cmp, t_mem, t_other, alpha) == ceiling_test::Rel(eq20));
        }
      }
    }
  }
  // Eq. 21 -> 22: with Tmem = Tcmp B/I and Tothers = 0 the bound is reached exactly,
  // with Tothers > 0 (and alpha > 1) the speedup stays strictly below it.
  const double B = 5, I = 0.25, t_cmp = 1e-3;
  CHECK(tensor_core_speedup(t_cmp, t_cmp * B / I, 0, 2) == ceiling_test::Rel(speedup_bound(2, B, I)));
  CHECK(tensor_core_speedup(t_cmp, t_cmp * B / I, 1e-4, 2) < speedup_bound(2, B, I));
  CHECK(speedup_bound(1, B, I) == 1);  // alpha = 1: no speedup
  CHECK(speedup_bound(0.25, B, I) < 1);  // a slower unit slows the kernel down
  CHECK(tensor_core_speedup(1, 1, 0, kInf) == 2);
}

TEST_CASE("worked example: FP64 alpha = 2 gives S < 1.33 (Eq. 23)") {
  CHECK(memory_bound_speedup_limit(2) == ceiling_test::Rel(4.0 / 3.0));
  CHECK(round2(memory_bound_speedup_limit(2)) == ceiling_test::Rel(1.33));
  // With the vendor figures of Table 1, alpha is only about 2, and the limit still rounds to 1.33.
  CHECK(round2(memory_bound_speedup_limit(kA100Tc / kA100Cc)) == ceiling_test::Rel(1.34));
  CHECK(round2(memory_bound_speedup_limit(kGh200Tc / kGh200Cc)) == ceiling_test::Rel(1.33));
  CHECK(memory_bound_speedup_limit(kA100Tc / kA100Cc) == ceiling_test::Rel(1.3356).epsilon(1e-4));
}

TEST_CASE("worked example: alpha -> infinity gives S < 2") {
  CHECK(memory_bound_speedup_limit(kInf) == 2);
  CHECK(memory_bound_speedup_limit(1e12) == ceiling_test::Rel(2));
  CHECK(memory_bound_speedup_limit(1e12) < 2);
  for (double a : {1.5, 2.0, 10.0, 1e3, 1e6}) CHECK(memory_bound_speedup_limit(a) < 2);
}

TEST_CASE("worked example: A100 GEMV S < 1.05 (Eq. 24)") {
  const double B = kA100Cc / kA100Bw;  // 5 flop/byte
  CHECK(B == ceiling_test::Rel(5));
  CHECK(workload_speedup_limit(B, 0.25) == ceiling_test::Rel(1.05));
  // The exact GEMV intensity 2mn / ((mn+m+n) 8) is below 1/4, so the bound is below 1.05.
  const double m = 4096, n = 4096;
  const double I = operational_intensity(2 * m * n, (m * n + m + n) * 8);
  CHECK(I < 0.25);
  CHECK(workload_speedup_limit(B, I) < 1.05);
  CHECK(workload_speedup_limit(B, I) == ceiling_test::Rel(1.05).epsilon(1e-3));
}

TEST_CASE("limits: Eq. 22 -> Eq. 23 as I -> B, Eq. 22 -> Eq. 24 as alpha -> inf") {
  const double B = 5;
  for (double alpha : {0.5, 2.0, 2.0103, 8.0}) {
    CHECK(speedup_bound(alpha, B, B) == ceiling_test::Rel(memory_bound_speedup_limit(alpha)));
    CHECK(speedup_bound(alpha, B, B * (1 - 1e-9)) == ceiling_test::Rel(memory_bound_speedup_limit(alpha)));
    // A memory-bound kernel (I < B) stays below the Eq. 23 limit.
    if (alpha > 1) CHECK(speedup_bound(alpha, B, 0.9 * B) < memory_bound_speedup_limit(alpha));
  }
  for (double I : {1.0 / 16, 0.25, 1.0, 4.9}) {
    CHECK(speedup_bound(1e12, B, I) == ceiling_test::Rel(workload_speedup_limit(B, I)));
    CHECK(speedup_bound(1e6, B, I) < workload_speedup_limit(B, I));
    CHECK(speedup_bound(kInf, B, I) == workload_speedup_limit(B, I));
  }
}

TEST_CASE("worked example: 2d5pt at balance 9.99 needs t > 15.98 (Eq. 14)") {
  const double I = operational_intensity(2 * 5, 2 * 8);  // Eq. 12: |S| / D
  CHECK(I == 0.625);
  CHECK(temporal_blocking_threshold(9.99, I) == ceiling_test::Rel(15.984));
  CHECK(round2(temporal_blocking_threshold(9.99, I)) == ceiling_test::Rel(15.98));
  CHECK(temporal_blocking_min_steps(9.99, I) == 16);
  // Exactly on the threshold t I = B: balanced, compute-bound as in Eq. 4 (is_memory_bound(B, B) is false).
  CHECK(temporal_blocking_min_steps(10.0, I) == 16);
  CHECK_FALSE(is_memory_bound(16 * I, 10.0));
  CHECK(is_memory_bound(15 * I, 10.0));
  CHECK(temporal_blocking_min_steps(0.5, I) == 1);   // already compute-bound at t = 1
  CHECK(temporal_blocking_min_steps(8.5, I) == 14);  // GH200 from Table 1: 34 / 4
}

TEST_CASE("arguments are validated") {
  CHECK_THROWS_AS(machine_balance(0, 1), std::invalid_argument);
  CHECK_THROWS_AS(machine_balance(1, -1), std::invalid_argument);
  CHECK_THROWS_AS(machine_balance(kInf, 1), std::invalid_argument);
  CHECK_THROWS_AS(operational_intensity(1, 0), std::invalid_argument);
  CHECK_THROWS_AS(operational_intensity(-1, 2), std::invalid_argument);
  CHECK_THROWS_AS(attainable_flop_per_s(1, 1, 0), std::invalid_argument);
  CHECK_THROWS_AS(is_memory_bound(1, 0), std::invalid_argument);
  CHECK_THROWS_AS(compute_time_s(1, 0), std::invalid_argument);
  CHECK_THROWS_AS(compute_time_s(-1, 1), std::invalid_argument);
  CHECK_THROWS_AS(memory_time_s(1, -2), std::invalid_argument);
  CHECK_THROWS_AS(overlapped_time_s(-1, 1), std::invalid_argument);
  CHECK_THROWS_AS(unoverlapped_time_s(1, std::nan("")), std::invalid_argument);
  CHECK_THROWS_AS(tensor_core_speedup(0, 1, 0, 2), std::invalid_argument);
  CHECK_THROWS_AS(tensor_core_speedup(1, 1, 0, 0), std::invalid_argument);
  CHECK_THROWS_AS(speedup_bound(-2, 5, 1), std::invalid_argument);
  CHECK_THROWS_AS(speedup_bound(2, 0, 1), std::invalid_argument);
  CHECK_THROWS_AS(speedup_bound(2, 5, 0), std::invalid_argument);
  CHECK_THROWS_AS(memory_bound_speedup_limit(0), std::invalid_argument);
  CHECK_THROWS_AS(memory_bound_speedup_limit(std::nan("")), std::invalid_argument);
  CHECK_THROWS_AS(workload_speedup_limit(0, 1), std::invalid_argument);
  CHECK_THROWS_AS(temporal_blocking_threshold(10, 0), std::invalid_argument);
  CHECK_THROWS_AS(temporal_blocking_min_steps(-1, 0.6), std::invalid_argument);
  CHECK_THROWS_AS(temporal_blocking_min_steps(1e300, 1e-300), std::invalid_argument);
}

TEST_CASE("overlapped speedup and the bounds that hold whatever the overlap") {
  // Memory-bound, alpha >= 1: overlapped S = 1, un-overlapped S = Eq. 22 is the top.
  CHECK(overlapped_speedup(2, 5, 0.25) == 1.0);
  CHECK(speedup_upper_bound(2, 5, 0.25) == ceiling_test::Rel(speedup_bound(2, 5, 0.25)));
  CHECK(speedup_lower_bound(2, 5, 0.25) == 1.0);
  // Compute-bound (I/B = 2): overlapped S = min(alpha, I/B).
  CHECK(overlapped_speedup(4, 5, 10) == ceiling_test::Rel(2.0));
  CHECK(overlapped_speedup(1.5, 5, 10) == ceiling_test::Rel(1.5));
  CHECK(speedup_upper_bound(4, 5, 10) == ceiling_test::Rel(2.0));
  CHECK(speedup_bound(1.5, 5, 10) < overlapped_speedup(1.5, 5, 10));  // overlapped is the top here
  CHECK(speedup_bound(8, 5, 10) > overlapped_speedup(8, 5, 10));      // un-overlapped is the top here
  // alpha < 1: tensor-core compute longer than the memory time slows even the overlapped case.
  CHECK(overlapped_speedup(0.25, 2, 1) == ceiling_test::Rel(0.5));  // Tm/Tc = 2 < 1/alpha = 4
  CHECK(overlapped_speedup(0.25, 80, 1) == 1.0);                  // Tm/Tc = 80 > 4: hidden
  CHECK(speedup_upper_bound(0.25, 80, 1) == 1.0);
  CHECK(speedup_lower_bound(0.25, 80, 1) == ceiling_test::Rel(speedup_bound(0.25, 80, 1)));
  // Any overlap phi lies between: S(phi) from the partial-overlap times on both units.
  const double alpha = 3, B = 5;
  for (double I : {0.1, 1.0, 5.0, 20.0})
    for (double phi : {0.0, 0.3, 0.7, 1.0}) {
      const double tc = 1.0, tm = B / I;  // Tcmp = 1, Tmem / Tcmp = B / I
      const double s = partial_overlap_time_s(tm, tc, phi) / partial_overlap_time_s(tm, tc / alpha, phi);
      CHECK(s <= speedup_upper_bound(alpha, B, I) * (1 + 1e-12));
      CHECK(s >= speedup_lower_bound(alpha, B, I) * (1 - 1e-12));
    }
  CHECK(overlapped_speedup(std::numeric_limits<double>::infinity(), 5, 10) == ceiling_test::Rel(2.0));
}
