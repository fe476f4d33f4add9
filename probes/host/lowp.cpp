#include "lowp.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace ceiling::numerics {

const char* round_name(Round r) {
  switch (r) {
    case Round::nearest_even: return "RN";
    case Round::toward_zero: return "RZ";
    case Round::down: return "RD";
    case Round::up: return "RU";
  }
  return "?";
}

double Format::max_finite() const {
  // e4m3: the top exponent holds finite values except the all-ones fraction (NaN).
  if (!has_inf) return std::ldexp(2.0 - 2.0 * std::ldexp(1.0, -man_bits), emax());
  return std::ldexp(2.0 - std::ldexp(1.0, -man_bits), emax());
}
double Format::min_normal() const { return std::ldexp(1.0, emin()); }
double Format::min_subnormal() const { return std::ldexp(1.0, emin() - man_bits); }

bool Format::representable(double v) const {
  if (!std::isfinite(v)) return false;
  if (v == 0) return true;
  const double a = std::fabs(v);
  if (a > max_finite()) return false;
  const int e = std::max(exponent_of(a), emin());
  const double scaled = std::ldexp(a, man_bits - e);  // must be an integer
  return scaled == std::floor(scaled);
}

uint64_t Format::encode(double v) const {
  const int fields = exp_bits + man_bits;
  const uint64_t sign = std::signbit(v) ? (uint64_t{1} << fields) : 0;
  uint64_t bits = 0;
  if (std::isnan(v)) {
    bits = (uint64_t{1} << fields) - 1;  // all exponent and fraction bits: a NaN in every format
  } else if (std::isinf(v)) {
    if (!has_inf) throw std::invalid_argument(name + " has no infinity");
    bits = sign | (((uint64_t{1} << exp_bits) - 1) << man_bits);
  } else {
    if (!representable(v))
      throw std::invalid_argument(name + " cannot hold " + std::to_string(v) + " exactly");
    const double a = std::fabs(v);
    if (a == 0) {
      bits = sign;
    } else if (a < min_normal()) {
      bits = sign | static_cast<uint64_t>(std::ldexp(a, -(emin() - man_bits)));
    } else {
      const int e = exponent_of(a);
      const uint64_t frac = static_cast<uint64_t>(std::ldexp(a, man_bits - e)) - (uint64_t{1} << man_bits);
      bits = sign | (static_cast<uint64_t>(e + bias()) << man_bits) | frac;
    }
  }
  // tf32 lives in the upper 19 bits of a 32-bit register.
  return bits << (storage_bits - 1 - fields);
}

double Format::decode(uint64_t raw) const {
  const int fields = exp_bits + man_bits;
  const uint64_t bits = raw >> (storage_bits - 1 - fields);
  const bool neg = (bits >> fields) & 1;
  const uint64_t ef = (bits >> man_bits) & ((uint64_t{1} << exp_bits) - 1);
  const uint64_t frac = bits & ((uint64_t{1} << man_bits) - 1);
  const uint64_t emask = (uint64_t{1} << exp_bits) - 1;
  double v;
  if (ef == emask && has_inf) {
    v = frac ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (ef == emask && !has_inf && frac == (uint64_t{1} << man_bits) - 1) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (ef == 0) {
    v = std::ldexp(static_cast<double>(frac), emin() - man_bits);
  } else {
    v = std::ldexp(static_cast<double>(frac | (uint64_t{1} << man_bits)),
                   static_cast<int>(ef) - bias() - man_bits);
  }
  return neg ? -v : v;
}

namespace {
Format make(const char* n, int e, int m, int storage, bool inf) {
  Format f;
  f.name = n;
  f.exp_bits = e;
  f.man_bits = m;
  f.storage_bits = storage;
  f.has_inf = inf;
  return f;
}
}  // namespace

const Format& fp32() { static const Format f = make("fp32", 8, 23, 32, true); return f; }
const Format& tf32() { static const Format f = make("tf32", 8, 10, 32, true); return f; }
const Format& fp16() { static const Format f = make("fp16", 5, 10, 16, true); return f; }
const Format& bf16() { static const Format f = make("bf16", 8, 7, 16, true); return f; }
const Format& e4m3() { static const Format f = make("e4m3", 4, 3, 8, false); return f; }
const Format& e5m2() { static const Format f = make("e5m2", 5, 2, 8, true); return f; }
const Format& fp32_narrow(int man_bits) {
  static const Format f12 = make("fp32/m12", 8, 12, 32, true), f13 = make("fp32/m13", 8, 13, 32, true),
                      f14 = make("fp32/m14", 8, 14, 32, true);
  switch (man_bits) {
    case 12: return f12;
    case 13: return f13;
    case 14: return f14;
  }
  throw std::invalid_argument("fp32_narrow: 12, 13 or 14 fraction bits");
}

const Format& format_by_name(const std::string& name) {
  for (const Format* f : {&fp32(), &tf32(), &fp16(), &bf16(), &e4m3(), &e5m2()})
    if (f->name == name) return *f;
  throw std::invalid_argument("unknown number format '" + name + "' (fp32, tf32, fp16, bf16, e4m3, e5m2)");
}

int exponent_of(double x) { return std::ilogb(x); }

double truncate_to_quantum(double x, int q) { return std::ldexp(std::trunc(std::ldexp(x, -q)), q); }

// ---- ExactSum --------------------------------------------------------------------------------

void ExactSum::add(double x) {
  if (!std::isfinite(x)) throw std::domain_error("ExactSum: not a finite value");
  if (x == 0) return;
  int e;
  const double m = std::frexp(std::fabs(x), &e);  // |x| = m 2^e, m in [0.5, 1)
  uint64_t mant = static_cast<uint64_t>(std::ldexp(m, 53));
  int lsb = e - 53;
  const int tz = std::countr_zero(mant);
  mant >>= tz;
  lsb += tz;
  const int pos = lsb - kLsbExponent;
  const int top = pos + (64 - std::countl_zero(mant));
  if (pos < 0 || top >= kLimbs * 64 - 2)
    throw std::domain_error("ExactSum: value outside the exact range 2^-448..2^446");
  // (mant << pos) spread over up to two limbs, added or subtracted with carry.
  const int limb = pos / 64, off = pos % 64;
  uint64_t part[2] = {mant << off, off ? (mant >> (64 - off)) : 0};
  if (x > 0) {
    unsigned carry = 0;
    for (int i = limb; i < kLimbs; ++i) {
      const uint64_t add = (i - limb < 2) ? part[i - limb] : 0;
      const uint64_t s1 = limbs_[i] + add;
      const unsigned c1 = s1 < add;
      const uint64_t s2 = s1 + carry;
      const unsigned c2 = s2 < carry;
      limbs_[i] = s2;
      carry = c1 | c2;
      if (i - limb >= 1 && !carry) break;
    }
  } else {
    unsigned borrow = 0;
    for (int i = limb; i < kLimbs; ++i) {
      const uint64_t sub = (i - limb < 2) ? part[i - limb] : 0;
      const uint64_t d1 = limbs_[i] - sub;
      const unsigned b1 = limbs_[i] < sub;
      const uint64_t d2 = d1 - borrow;
      const unsigned b2 = d1 < borrow;
      limbs_[i] = d2;
      borrow = b1 | b2;
      if (i - limb >= 1 && !borrow) break;
    }
  }
}

bool ExactSum::is_zero() const {
  for (uint64_t l : limbs_)
    if (l) return false;
  return true;
}

int ExactSum::sign() const {
  if (is_zero()) return 0;
  return (limbs_[kLimbs - 1] >> 63) ? -1 : 1;
}

namespace {
using Limbs = std::array<uint64_t, 14>;
Limbs magnitude(const Limbs& l, bool neg) {
  if (!neg) return l;
  Limbs m;
  unsigned carry = 1;
  for (size_t i = 0; i < l.size(); ++i) {
    const uint64_t v = ~l[i];
    m[i] = v + carry;
    carry = carry && m[i] == 0;
  }
  return m;
}
int top_bit(const Limbs& m) {
  for (int i = static_cast<int>(m.size()) - 1; i >= 0; --i)
    if (m[i]) return i * 64 + 63 - std::countl_zero(m[i]);
  return -1;
}
bool bit_at(const Limbs& m, int b) { return b >= 0 && ((m[b / 64] >> (b % 64)) & 1); }
bool any_below(const Limbs& m, int b) {  // any set bit at positions < b
  if (b <= 0) return false;
  const int limb = b / 64, off = b % 64;
  for (int i = 0; i < limb; ++i)
    if (m[i]) return true;
  return off && (m[limb] & ((uint64_t{1} << off) - 1));
}
uint64_t bits_from(const Limbs& m, int b, int count) {  // bits [b, b+count), 0 <= b, count <= 60
  if (count <= 0) return 0;
  const int limb = b / 64, off = b % 64;
  uint64_t v = m[limb] >> off;
  if (off && limb + 1 < static_cast<int>(m.size())) v |= m[limb + 1] << (64 - off);
  return count >= 64 ? v : (v & ((uint64_t{1} << count) - 1));
}
}  // namespace

int ExactSum::exponent() const {
  const bool neg = sign() < 0;
  return top_bit(magnitude(limbs_, neg)) + kLsbExponent;
}

double ExactSum::round_bits(int man_bits, int emin, double max_finite, bool has_inf, Round r, bool flush,
                            double min_normal) const {
  const int s = sign();
  if (s == 0) return 0.0;
  const bool neg = s < 0;
  const Limbs m = magnitude(limbs_, neg);
  const int e = top_bit(m) + kLsbExponent;
  const int qe = std::max(e, emin) - man_bits;  // exponent of the last kept bit
  const int qbit = qe - kLsbExponent;
  uint64_t kept;
  bool half, sticky;
  if (qbit <= 0) {  // every bit is kept (cannot happen for the formats here; kept for safety)
    kept = bits_from(m, 0, std::min(60, top_bit(m) + 1)) << (-qbit);
    half = sticky = false;
  } else {
    kept = bits_from(m, qbit, std::max(0, top_bit(m) - qbit + 1));
    half = bit_at(m, qbit - 1);
    sticky = any_below(m, qbit - 1);
  }
  bool up = false;
  switch (r) {
    case Round::nearest_even: up = half && (sticky || (kept & 1)); break;
    case Round::toward_zero: up = false; break;
    case Round::down: up = neg && (half || sticky); break;
    case Round::up: up = !neg && (half || sticky); break;
  }
  kept += up ? 1 : 0;
  double v = std::ldexp(static_cast<double>(kept), qe);
  if (v > max_finite) {
    const bool to_inf = r == Round::nearest_even || (r == Round::up && !neg) || (r == Round::down && neg);
    if (to_inf) v = has_inf ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
    else v = max_finite;
  }
  if (flush && v < min_normal) v = 0.0;
  return neg ? -v : v;
}

double ExactSum::round(const Format& f, Round r, bool flush_subnormal) const {
  return round_bits(f.man_bits, f.emin(), f.max_finite(), f.has_inf, r, flush_subnormal, f.min_normal());
}

double ExactSum::to_double() const {
  return round_bits(52, -1022, std::numeric_limits<double>::max(), true, Round::nearest_even, false,
                    std::numeric_limits<double>::min());
}

double round_to(double x, const Format& f, Round r, bool saturate) {
  if (std::isnan(x)) return x;
  if (std::isinf(x)) {
    if (saturate) return x > 0 ? f.max_finite() : -f.max_finite();
    return f.has_inf ? x : std::numeric_limits<double>::quiet_NaN();
  }
  double v = ExactSum(x).round(f, r);
  if (saturate && !std::isfinite(v)) v = x > 0 ? f.max_finite() : -f.max_finite();
  return v;
}

double round_tf32_rna(double x) {
  if (!std::isfinite(x) || x == 0) return x;
  // Nearest with ties away from zero: the RN result unless x sits exactly halfway.
  const double dn = round_to(x, tf32(), Round::toward_zero);
  const double up = round_to(x, tf32(), x > 0 ? Round::up : Round::down);
  if (dn == up) return dn;
  const double mid = (dn + up) / 2;  // exact: both within 11 bits of significance
  if (x == mid) return up;
  return std::fabs(x - dn) < std::fabs(up - x) ? dn : up;
}

}  // namespace ceiling::numerics
