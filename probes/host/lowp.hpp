// Low-precision floating-point formats and exact rounding, on the CPU: the reference side of the
// tensor-core numeric probes (issue 13, Sun et al. §8). Every value of every format here is a
// double exactly, so a format is its field widths plus the rules of its special values; sums are
// kept exact (ExactSum, fixed point over the whole range the probes reach) and rounded once, in
// any of the four IEEE directions, with or without subnormals.
#pragma once
#include <array>
#include <cstdint>
#include <string>

namespace ceiling::numerics {

enum class Round { nearest_even, toward_zero, down, up };
const char* round_name(Round r);  // "RN", "RZ", "RD", "RU"

struct Format {
  std::string name;       // "fp32", "tf32", "fp16", "bf16", "e4m3", "e5m2"
  int exp_bits = 8;
  int man_bits = 23;      // stored fraction bits
  int storage_bits = 32;  // register width of one element (tf32: 32, the low 13 bits zero)
  bool has_inf = true;    // e4m3 (OCP FP8): no infinities; S.1111.111 is NaN, max finite 448

  int bias() const { return (1 << (exp_bits - 1)) - 1; }
  int emin() const { return 1 - bias(); }
  int emax() const { return has_inf ? bias() : bias() + 1; }
  double max_finite() const;
  double min_normal() const;
  double min_subnormal() const;
  // Exactly representable (finite), subnormals included.
  bool representable(double v) const;
  // Bits of v (finite and representable, or +-inf / NaN where the format has them); throws
  // std::invalid_argument for a value the format cannot hold.
  uint64_t encode(double v) const;
  double decode(uint64_t bits) const;
};

const Format& fp32();
const Format& tf32();
const Format& fp16();
const Format& bf16();
const Format& e4m3();
// FP32's range with fewer fraction bits (12, 13 or 14): an accumulator narrower than its FP32
// register (Hopper's FP8 wgmma keeps about 14 significant bits).
const Format& fp32_narrow(int man_bits);
const Format& e5m2();
const Format& format_by_name(const std::string& name);  // throws std::invalid_argument

// Exact sum of doubles whose significant bits lie in [2^-400, 2^400) (products and sums of any
// two values of the formats above do): a two's complement fixed-point integer of 896 bits.
class ExactSum {
 public:
  ExactSum() { limbs_.fill(0); }
  explicit ExactSum(double x) : ExactSum() { add(x); }
  // Adds x exactly; throws std::domain_error for inf/NaN or bits outside the range.
  void add(double x);
  bool is_zero() const;
  int sign() const;  // -1, 0, +1
  // Exponent of the leading bit (value in [2^e, 2^(e+1))); undefined for zero.
  int exponent() const;
  // The sum rounded once to `f` in direction `r`. Overflow follows IEEE (to inf in the direction
  // of rounding, max finite otherwise; NaN for a format without infinities). flush_subnormal:
  // a result below the smallest normal becomes a zero of the same sign.
  double round(const Format& f, Round r, bool flush_subnormal = false) const;
  // The sum as a double, rounded to nearest (for references in FP64).
  double to_double() const;

 private:
  static constexpr int kLimbs = 14;          // 896 bits
  static constexpr int kLsbExponent = -448;  // weight of bit 0
  std::array<uint64_t, kLimbs> limbs_;
  double round_bits(int man_bits, int emin, double max_finite, bool has_inf, Round r, bool flush,
                    double min_normal) const;
};

// x rounded once to f (direction r): RN is the conversion the CUDA intrinsics __float2half_rn,
// __float2bfloat16_rn, cvt.rna.tf32 (ties away: see round_tf32_rna) and __nv_cvt_float_to_fp8
// with __NV_SATFINITE (saturate: see the flag) perform.
double round_to(double x, const Format& f, Round r = Round::nearest_even, bool saturate = false);
// TF32 conversion of cvt.rna.tf32.f32: nearest, ties away from zero.
double round_tf32_rna(double x);
// x truncated toward zero to a multiple of 2^q (exact).
double truncate_to_quantum(double x, int q);
// floor(log2|x|) for finite non-zero x.
int exponent_of(double x);

}  // namespace ceiling::numerics
