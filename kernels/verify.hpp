// Shared output checks of the validation kernels (STYLE habit 9): each instance regenerates its
// inputs on the host (random.hpp), computes the reference and compares with one of these.
// Plain C++: usable by CPU tests and by fake instances.
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "registry.hpp"

namespace ceiling::kernels {

// Element-wise: every output within `tolerance` relative error of ref(i); NaN (the poison) counts
// as unwritten. `what` names the reference in the message ("q*b").
template <class T, class Ref>
Verification check_elementwise(const std::vector<T>& got, Ref&& ref, double tolerance, const std::string& what) {
  Verification v;
  v.tolerance = tolerance;
  const long long n = static_cast<long long>(got.size());
  for (long long i = 0; i < n; ++i) {
    const double g = static_cast<double>(got[static_cast<size_t>(i)]);
    if (std::isnan(g)) {
      ++v.unwritten;
      ++v.bad;
      continue;
    }
    const double r = static_cast<double>(ref(i));
    const double rel = std::fabs(g - r) / std::fabs(r);
    if (rel > v.error) v.error = rel;
    if (!(rel <= tolerance)) ++v.bad;
  }
  v.ok = v.bad == 0;
  v.message = v.ok ? "all " + std::to_string(n) + " values match " + what
                   : std::to_string(v.bad) + " of " + std::to_string(n) + " values wrong (" +
                         std::to_string(v.unwritten) + " unwritten), max relative error " + std::to_string(v.error);
  return v;
}

// Norm-wise: ||got - ref|| / ||ref|| <= tolerance over the outputs, none unwritten; an element
// off by more than `tolerance` relative to itself counts as bad (reported, not failing alone).
template <class T, class Ref>
Verification check_normwise(const std::vector<T>& got, Ref&& ref, double tolerance) {
  Verification v;
  v.tolerance = tolerance;
  long double err2 = 0, ref2 = 0;
  const long long n = static_cast<long long>(got.size());
  for (long long i = 0; i < n; ++i) {
    const long double r = ref(i);
    const double g = static_cast<double>(got[static_cast<size_t>(i)]);
    if (std::isnan(g)) {
      ++v.unwritten;
      ++v.bad;
      continue;
    }
    const long double d = g - r;
    if (std::fabs(static_cast<double>(d)) > tolerance * std::fabs(static_cast<double>(r)) + 1e-300) ++v.bad;
    err2 += d * d;
    ref2 += r * r;
  }
  v.error = ref2 > 0 ? static_cast<double>(std::sqrt(err2 / ref2)) : 0.0;
  v.ok = v.unwritten == 0 && v.error <= v.tolerance;
  v.message = v.ok ? "output matches the CPU reference (relative error " + std::to_string(v.error) + ")"
                   : std::to_string(v.unwritten) + " of " + std::to_string(n) + " outputs unwritten, " +
                         std::to_string(v.bad) + " off, relative error " + std::to_string(v.error);
  return v;
}

}  // namespace ceiling::kernels
