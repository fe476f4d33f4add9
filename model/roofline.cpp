// The equations of Zhang et al., GPGPU'25 (Eq. 1-24) plus our partial-overlap time.
#include "roofline.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace ceiling {
namespace {

// Rates and divisors: must be finite and > 0.
void require_positive(double v, const char* what, const char* fn) {
  if (!(v > 0) || !std::isfinite(v))
    throw std::invalid_argument(std::string(fn) + ": " + what + " must be a finite positive number, got " +
                                std::to_string(v));
}

// Amounts and times: finite and >= 0.
void require_non_negative(double v, const char* what, const char* fn) {
  if (!(v >= 0) || !std::isfinite(v))
    throw std::invalid_argument(std::string(fn) + ": " + what + " must be a finite non-negative number, got " +
                                std::to_string(v));
}

// alpha may be +inf (the paper's limit alpha -> infinity), never <= 0 or NaN.
void require_alpha(double alpha, const char* fn) {
  if (!(alpha > 0))
    throw std::invalid_argument(std::string(fn) + ": alpha must be positive (or +inf), got " +
                                std::to_string(alpha));
}

}  // namespace

double machine_balance(double peak_flop_per_s, double bandwidth_bytes_per_s) {
  require_positive(peak_flop_per_s, "peak", __func__);
  require_positive(bandwidth_bytes_per_s, "bandwidth", __func__);
  return peak_flop_per_s / bandwidth_bytes_per_s;  // Eq. 1
}

double operational_intensity(double work_flop, double traffic_bytes) {
  require_positive(work_flop, "work", __func__);
  require_positive(traffic_bytes, "traffic", __func__);
  return work_flop / traffic_bytes;  // Eq. 2
}

double attainable_flop_per_s(double peak_flop_per_s, double bandwidth_bytes_per_s, double intensity) {
  require_positive(peak_flop_per_s, "peak", __func__);
  require_positive(bandwidth_bytes_per_s, "bandwidth", __func__);
  require_positive(intensity, "intensity", __func__);
  return std::min(peak_flop_per_s, bandwidth_bytes_per_s * intensity);  // Eq. 3
}

bool is_memory_bound(double intensity, double balance) {
  require_positive(intensity, "intensity", __func__);
  require_positive(balance, "balance", __func__);
  return intensity < balance;  // Eq. 4
}

double compute_time_s(double work_flop, double peak_flop_per_s) {
  require_non_negative(work_flop, "work", __func__);
  require_positive(peak_flop_per_s, "peak", __func__);
  return work_flop / peak_flop_per_s;
}

double memory_time_s(double traffic_bytes, double bandwidth_bytes_per_s) {
  require_non_negative(traffic_bytes, "traffic", __func__);
  require_positive(bandwidth_bytes_per_s, "bandwidth", __func__);
  return traffic_bytes / bandwidth_bytes_per_s;
}

double overlapped_time_s(double t_mem, double t_cmp, double t_other) {
  require_non_negative(t_mem, "t_mem", __func__);
  require_non_negative(t_cmp, "t_cmp", __func__);
  require_non_negative(t_other, "t_other", __func__);
  return std::max({t_mem, t_cmp, t_other});  // Eq. 17
}

double unoverlapped_time_s(double t_mem, double t_cmp, double t_other) {
  require_non_negative(t_mem, "t_mem", __func__);
  require_non_negative(t_cmp, "t_cmp", __func__);
  require_non_negative(t_other, "t_other", __func__);
  return t_mem + t_cmp + t_other;  // Eq. 18
}

double partial_overlap_time_s(double t_mem, double t_cmp, double phi, double t_other) {
  require_non_negative(t_mem, "t_mem", __func__);
  require_non_negative(t_cmp, "t_cmp", __func__);
  require_non_negative(t_other, "t_other", __func__);
  if (!(phi >= 0 && phi <= 1))
    throw std::invalid_argument(std::string(__func__) + ": phi must lie in [0, 1], got " + std::to_string(phi));
  // phi = 1 hides the shorter of Tmem/Tcmp completely, phi = 0 hides nothing (Eq. 18).
  return std::max(t_mem, t_cmp) + (1 - phi) * std::min(t_mem, t_cmp) + t_other;
}

double tensor_core_speedup(double t_cmp_cuda_core, double t_mem, double t_other, double alpha) {
  require_positive(t_cmp_cuda_core, "t_cmp_cuda_core", __func__);
  require_non_negative(t_mem, "t_mem", __func__);
  require_non_negative(t_other, "t_other", __func__);
  require_alpha(alpha, __func__);
  // Eq. 19: T(CC) / T(TC) with T'cmp = Tcmp / alpha; alpha = inf drops the compute term.
  const double t_cc = t_cmp_cuda_core + t_mem + t_other;
  const double t_tc = (std::isinf(alpha) ? 0.0 : t_cmp_cuda_core / alpha) + t_mem + t_other;
  if (t_tc == 0) return std::numeric_limits<double>::infinity();
  return t_cc / t_tc;
}

double speedup_bound(double alpha, double balance_cuda_core, double intensity) {
  require_alpha(alpha, __func__);
  require_positive(balance_cuda_core, "balance", __func__);
  require_positive(intensity, "intensity", __func__);
  if (std::isinf(alpha)) return workload_speedup_limit(balance_cuda_core, intensity);  // Eq. 22 -> Eq. 24
  return 1 + (alpha - 1) / (1 + alpha * balance_cuda_core / intensity);              // Eq. 22
}

double memory_bound_speedup_limit(double alpha) {
  require_alpha(alpha, __func__);
  return 2 - 2 / (1 + alpha);  // Eq. 23; alpha = inf gives 2
}

double overlapped_speedup(double alpha, double balance_cuda_core, double intensity) {
  require_alpha(alpha, __func__);
  require_positive(balance_cuda_core, "balance", __func__);
  require_positive(intensity, "intensity", __func__);
  const double r = balance_cuda_core / intensity;  // Tm / Tc on CUDA cores
  return std::max(r, 1.0) / std::max(r, std::isinf(alpha) ? 0.0 : 1.0 / alpha);
}

double speedup_upper_bound(double alpha, double balance_cuda_core, double intensity) {
  return std::max(overlapped_speedup(alpha, balance_cuda_core, intensity), speedup_bound(alpha, balance_cuda_core, intensity));
}

double speedup_lower_bound(double alpha, double balance_cuda_core, double intensity) {
  return std::min(overlapped_speedup(alpha, balance_cuda_core, intensity), speedup_bound(alpha, balance_cuda_core, intensity));
}

double workload_speedup_limit(double balance_cuda_core, double intensity) {
  require_positive(balance_cuda_core, "balance", __func__);
  require_positive(intensity, "intensity", __func__);
  return 1 + intensity / balance_cuda_core;  // Eq. 24
}

double temporal_blocking_threshold(double balance, double intensity_one_step) {
  require_positive(balance, "balance", __func__);
  require_positive(intensity_one_step, "intensity_one_step", __func__);
  return balance / intensity_one_step;  // Eq. 14: compute-bound from t = B / I on
}

int temporal_blocking_min_steps(double balance, double intensity_one_step) {
  const double threshold = temporal_blocking_threshold(balance, intensity_one_step);
  if (threshold >= static_cast<double>(std::numeric_limits<int>::max() - 1))
    throw std::invalid_argument(std::string(__func__) + ": B / I = " + std::to_string(threshold) +
                                " needs more steps than an int holds");
  // t * I >= B (Eq. 13-14; I = B is compute-bound as in Eq. 4); correct the ceiling for rounding in B / I.
  int t = std::max(1, static_cast<int>(std::ceil(threshold)));
  while (t > 1 && (t - 1) * intensity_one_step >= balance) --t;
  while (!(t * intensity_one_step >= balance)) ++t;
  return t;
}

bool fits_in_l2(double working_set_bytes, double l2_capacity_bytes) {
  return working_set_bytes <= 0.5 * l2_capacity_bytes;
}

}  // namespace ceiling
