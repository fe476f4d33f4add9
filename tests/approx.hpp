// doctest::Approx(x) accepts |a - x| < epsilon * (1 + max(|a|, |x|)): below 1 that is an absolute
// 1.2e-5, so times in seconds (microseconds) would match almost anything. Rel(x) is relative only.
#pragma once
#include <doctest/doctest.h>

namespace ceiling_test {
inline doctest::Approx Rel(double x) { return doctest::Approx(x).scale(1e-300); }  // 0 == Rel(0) still holds
}  // namespace ceiling_test
