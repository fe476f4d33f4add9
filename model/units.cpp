#include "units.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ceiling {

namespace {

// One accepted spelling of a unit. Decimal prefixes scale by 10^decimal_exponent (applied to the
// decimal text, so "4.8 TB/s" is the double nearest 4.8e12); binary prefixes by 2^binary_exponent.
struct UnitSpelling {
  std::string text;
  Dimension dimension;
  int decimal_exponent = 0;
  int binary_exponent = 0;
};

struct Prefix {
  const char* text;
  int decimal_exponent;
  int binary_exponent;
};

constexpr std::array<Prefix, 6> kDecimalPrefixes{{
    {"", 0, 0}, {"k", 3, 0}, {"M", 6, 0}, {"G", 9, 0}, {"T", 12, 0}, {"P", 15, 0}}};
constexpr std::array<Prefix, 5> kBinaryPrefixes{{
    {"Ki", 0, 10}, {"Mi", 0, 20}, {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}}};

const std::vector<UnitSpelling>& unit_table() {
  static const std::vector<UnitSpelling> table = [] {
    std::vector<UnitSpelling> t;
    auto add_byte_units = [&t](const std::string& suffix, Dimension d) {
      for (const auto& p : kDecimalPrefixes) t.push_back({p.text + suffix, d, p.decimal_exponent, 0});
      t.push_back({"K" + suffix, d, 3, 0});  // "KB" is common usage for 1000 bytes
      for (const auto& p : kBinaryPrefixes) t.push_back({p.text + suffix, d, 0, p.binary_exponent});
    };
    add_byte_units("B", Dimension::bytes);
    add_byte_units("B/s", Dimension::bytes_per_second);
    for (const auto& p : kDecimalPrefixes) {
      t.push_back({std::string(p.text) + "FLOP/s", Dimension::flop_per_second, p.decimal_exponent, 0});
      t.push_back({std::string(p.text) + "OP/s", Dimension::flop_per_second, p.decimal_exponent, 0});
    }
    for (const auto& p : {Prefix{"", 0, 0}, Prefix{"k", 3, 0}, Prefix{"M", 6, 0}, Prefix{"G", 9, 0}})
      t.push_back({std::string(p.text) + "Hz", Dimension::hertz, p.decimal_exponent, 0});
    for (const char* c : {"cycles", "cycle", "clk"}) t.push_back({c, Dimension::cycles, 0, 0});
    t.push_back({"s", Dimension::seconds, 0, 0});
    t.push_back({"ms", Dimension::seconds, -3, 0});
    t.push_back({"us", Dimension::seconds, -6, 0});
    t.push_back({"\xC2\xB5s", Dimension::seconds, -6, 0});  // µs
    t.push_back({"ns", Dimension::seconds, -9, 0});
    t.push_back({"B/clk", Dimension::bytes_per_cycle, 0, 0});
    t.push_back({"B/cycle", Dimension::bytes_per_cycle, 0, 0});
    t.push_back({"W", Dimension::watts, 0, 0});
    t.push_back({"mW", Dimension::watts, -3, 0});
    t.push_back({"kW", Dimension::watts, 3, 0});
    return t;
  }();
  return table;
}

// The unit written for each dimension when formatting, by decimal exponent.
struct OutputUnit {
  int decimal_exponent;
  const char* text;
};

std::vector<OutputUnit> output_units(Dimension d) {
  switch (d) {
    case Dimension::bytes:
      return {{0, "B"}, {3, "kB"}, {6, "MB"}, {9, "GB"}, {12, "TB"}, {15, "PB"}};
    case Dimension::bytes_per_second:
      return {{0, "B/s"}, {3, "kB/s"}, {6, "MB/s"}, {9, "GB/s"}, {12, "TB/s"}, {15, "PB/s"}};
    case Dimension::flop_per_second:
      return {{0, "FLOP/s"}, {3, "kFLOP/s"}, {6, "MFLOP/s"}, {9, "GFLOP/s"}, {12, "TFLOP/s"}, {15, "PFLOP/s"}};
    case Dimension::hertz:
      return {{0, "Hz"}, {3, "kHz"}, {6, "MHz"}, {9, "GHz"}};
    case Dimension::cycles:
      return {{0, "cycles"}};
    case Dimension::seconds:
      return {{-9, "ns"}, {-6, "us"}, {-3, "ms"}, {0, "s"}};
    case Dimension::bytes_per_cycle:
      return {{0, "B/clk"}};
    case Dimension::dimensionless:
      return {{0, ""}};
    case Dimension::watts:
      return {{-3, "mW"}, {0, "W"}, {3, "kW"}};
  }
  return {{0, ""}};
}

const char* example_unit(Dimension d) {
  switch (d) {
    case Dimension::bytes: return "50 MiB";
    case Dimension::bytes_per_second: return "4.8 TB/s";
    case Dimension::flop_per_second: return "9.7 TFLOP/s";
    case Dimension::hertz: return "1980 MHz";
    case Dimension::cycles: return "283 cycles";
    case Dimension::seconds: return "1.2 ms";
    case Dimension::bytes_per_cycle: return "128 B/clk";
    case Dimension::dimensionless: return "42";
    case Dimension::watts: return "350 W";
  }
  return "";
}

bool is_space(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

// Correctly rounded value of the decimal `number` (as written, e.g. "4.8" or "1.5e3") times 10^shift.
std::optional<double> scale_decimal(std::string_view number, int shift) {
  std::string mantissa(number);
  long long exponent = 0;
  if (auto e = number.find_first_of("eE"); e != std::string_view::npos) {
    mantissa = std::string(number.substr(0, e));
    std::string_view exp_text = number.substr(e + 1);
    if (!exp_text.empty() && exp_text.front() == '+') exp_text.remove_prefix(1);
    auto [p, ec] = std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exponent);
    if (ec != std::errc{} || p != exp_text.data() + exp_text.size()) return std::nullopt;
    if (exponent > 100000 || exponent < -100000) return std::nullopt;
  }
  const std::string text = mantissa + "e" + std::to_string(exponent + shift);
  double v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || p != text.data() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// Shortest decimal text that reads back as `v` (to_chars guarantees the round trip).
std::string shortest(double v) {
  std::array<char, 64> buf{};
  auto [p, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  return std::string(buf.data(), p);
}

// The shortest digits of `v` as (sign, digits, exponent) with v = sign 0.d1d2d3... * 10^exponent
// shifted so that v = digits * 10^(exponent - digits.size()); used to move the decimal point exactly.
struct DecimalDigits {
  bool negative = false;
  std::string digits;  // no leading zeros, nonempty
  int point = 0;       // value = 0.<digits> * 10^point
};

DecimalDigits decimal_digits(double v) {
  std::array<char, 64> buf{};
  auto [p, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v, std::chars_format::scientific);
  std::string_view s(buf.data(), static_cast<size_t>(p - buf.data()));
  DecimalDigits d;
  if (!s.empty() && s.front() == '-') {
    d.negative = true;
    s.remove_prefix(1);
  }
  const size_t e = s.find('e');
  std::string_view mant = s.substr(0, e);
  int exponent = std::stoi(std::string(s.substr(e + 1)));
  for (char c : mant)
    if (c != '.') d.digits.push_back(c);
  while (d.digits.size() > 1 && d.digits.back() == '0') d.digits.pop_back();
  d.point = exponent + 1;
  return d;
}

// Writes 0.<digits> * 10^point as a plain decimal ("4.8", "1980", "0.00125").
std::string plain_decimal(const DecimalDigits& d) {
  std::string out = d.negative ? "-" : "";
  const int n = static_cast<int>(d.digits.size());
  if (d.digits == "0") return "0";
  if (d.point <= 0) {
    out.append("0.").append(static_cast<size_t>(-d.point), '0').append(d.digits);
  } else if (d.point >= n) {
    out.append(d.digits).append(static_cast<size_t>(d.point - n), '0');
  } else {
    out.append(d.digits, 0, static_cast<size_t>(d.point)).append(".").append(d.digits, static_cast<size_t>(d.point));
  }
  return out;
}

// Number text for 0.<digits>*10^point: plain when short, scientific when it would be long.
std::string number_text(const DecimalDigits& d) {
  if (d.digits == "0") return "0";
  if (d.point > 21 || d.point < -6) {
    std::string out = d.negative ? "-" : "";
    out.append(d.digits, 0, 1);
    if (d.digits.size() > 1) out.append(".").append(d.digits, 1);
    out.append("e").append(std::to_string(d.point - 1));
    return out;
  }
  return plain_decimal(d);
}

// Picks the output unit whose prefix puts |v| in [1, 1000) where possible.
OutputUnit pick_decimal_unit(double v, Dimension d) {
  const auto units = output_units(d);
  OutputUnit best = units.front();
  if (v == 0) {
    for (const auto& u : units)
      if (u.decimal_exponent == 0) return u;
    return best;
  }
  const double a = std::fabs(v);
  for (const auto& u : units)
    if (a >= std::pow(10.0, u.decimal_exponent) * (1 - 1e-12)) best = u;
  return best;
}

std::string with_unit(const std::string& number, const char* unit) {
  if (unit[0] == '\0') return number;
  return number + " " + unit;
}

// Largest binary prefix k (1..5) with |v| / 2^(10k) >= 1, or 0.
int natural_binary_prefix(double v) {
  int k = 0;
  const double a = std::fabs(v);
  while (k < 5 && a >= std::ldexp(1.0, 10 * (k + 1))) ++k;
  return k;
}

const char* binary_unit(int k, Dimension d) {
  static const char* bytes[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  static const char* rates[] = {"B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s", "PiB/s"};
  return d == Dimension::bytes ? bytes[k] : rates[k];
}

// Rounds to `significant` significant digits and strips trailing zeros.
std::string significant_text(double v, int significant) {
  if (significant < 1) significant = 1;
  if (significant > 17) significant = 17;
  std::array<char, 64> buf{};
  std::snprintf(buf.data(), buf.size(), "%.*g", significant, v);
  std::string s(buf.data());
  // %g may produce an exponent for large mantissas; keep it, it is rare after prefix choice.
  if (s.find('e') == std::string::npos && s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

// 0.<digits> * 10^point of `value` rounded to a multiple of 10^step (at most 17 digits).
DecimalDigits rounded_digits(double value, int step) {
  DecimalDigits d;
  d.negative = std::signbit(value);
  if (value == 0) return {d.negative, "0", 0};
  const int e = decimal_exponent(value);
  const int n = std::min(e - step + 1, 17);  // significant digits kept
  if (n <= 0) {
    // Below one step: 0, or one step when at least half of it (n == 0).
    const bool up = n == 0 && std::fabs(value) >= 5 * std::pow(10.0, e);
    return up ? DecimalDigits{d.negative, "1", step + 1} : DecimalDigits{d.negative, "0", 0};
  }
  std::array<char, 64> buf{};
  std::snprintf(buf.data(), buf.size(), "%.*e", n - 1, std::fabs(value));
  const std::string s(buf.data());
  const size_t x = s.find('e');
  for (size_t i = 0; i < x; ++i)
    if (s[i] != '.') d.digits.push_back(s[i]);
  while (d.digits.size() > 1 && d.digits.back() == '0') d.digits.pop_back();
  d.point = std::stoi(s.substr(x + 1)) + 1;
  return d;
}

}  // namespace

int decimal_exponent(double value) {
  if (value == 0 || !std::isfinite(value)) return 0;
  std::array<char, 64> buf{};
  // The exponent of the shortest round-trip digits: exact at powers of ten, unlike floor(log10).
  auto [p, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), std::fabs(value), std::chars_format::scientific);
  const std::string_view s(buf.data(), static_cast<size_t>(p - buf.data()));
  return std::stoi(std::string(s.substr(s.find('e') + 1)));
}

int decimal_prefix_exponent(double value, Dimension d) { return pick_decimal_unit(value, d).decimal_exponent; }

std::string format_rounded(double value, Dimension d, int step_exponent, int prefix_exponent) {
  if (!std::isfinite(value)) throw UnitError("cannot write a non-finite value: " + shortest(value));
  const char* unit = nullptr;
  for (const auto& u : output_units(d))
    if (u.decimal_exponent == prefix_exponent) unit = u.text;
  if (!unit)
    throw std::invalid_argument("no prefix 10^" + std::to_string(prefix_exponent) + " for " +
                                std::string(to_string(d)));
  DecimalDigits digits = rounded_digits(value, step_exponent);
  if (digits.digits != "0") digits.point -= prefix_exponent;
  std::string number = number_text(digits);
  // Written down to the step: "4.310 TB/s" says the last digit is known.
  const int decimals = prefix_exponent - step_exponent;
  if (decimals > 0 && number.find('e') == std::string::npos) {
    const size_t dot = number.find('.');
    const int have = dot == std::string::npos ? 0 : static_cast<int>(number.size() - dot - 1);
    if (dot == std::string::npos) number += '.';
    number.append(static_cast<size_t>(std::max(decimals - have, 0)), '0');
  }
  return with_unit(number, unit);
}

double round_to_step(double value, int step_exponent) {
  const DecimalDigits digits = rounded_digits(value, step_exponent);
  const std::string text = number_text(digits);
  double v = 0;
  std::from_chars(text.data(), text.data() + text.size(), v);
  return v;
}

std::string_view to_string(Dimension d) {
  switch (d) {
    case Dimension::bytes: return "bytes";
    case Dimension::bytes_per_second: return "bytes_per_second";
    case Dimension::flop_per_second: return "flop_per_second";
    case Dimension::hertz: return "hertz";
    case Dimension::cycles: return "cycles";
    case Dimension::seconds: return "seconds";
    case Dimension::bytes_per_cycle: return "bytes_per_cycle";
    case Dimension::dimensionless: return "dimensionless";
    case Dimension::watts: return "watts";
  }
  return "unknown";
}

Quantity parse_quantity(std::string_view text) {
  const std::string_view s = trim(text);
  if (s.empty()) throw UnitError("empty quantity");
  double probe = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), probe);
  if (ec == std::errc::invalid_argument) throw UnitError("no number in " + quoted(text));
  const std::string_view number = s.substr(0, static_cast<size_t>(end - s.data()));
  // from_chars takes "inf"/"nan" literally; a quantity must be a finite decimal number.
  for (char c : number)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == 'e' || c == 'E' || c == '+'))
      throw UnitError("not a finite number: " + quoted(text));
  const std::string_view unit = trim(s.substr(number.size()));

  if (unit.empty()) {
    auto v = scale_decimal(number, 0);
    if (!v) throw UnitError("number out of range: " + quoted(text));
    return {*v, Dimension::dimensionless};
  }
  for (const auto& u : unit_table()) {
    if (u.text != unit) continue;
    auto v = scale_decimal(number, u.decimal_exponent);
    if (!v) throw UnitError("number out of range: " + quoted(text));
    double value = std::ldexp(*v, u.binary_exponent);
    if (!std::isfinite(value)) throw UnitError("number out of range: " + quoted(text));
    return {value, u.dimension};
  }
  throw UnitError("unknown unit " + quoted(unit) + " in " + quoted(text) +
                  " (known: B, kB, KiB, MB, MiB, GB, GiB, TB, TiB, B/s..TB/s, FLOP/s..PFLOP/s, OP/s, "
                  "Hz..GHz, cycles, s, ms, us, ns, B/clk)");
}

double parse_as(std::string_view text, Dimension expected, std::string_view field) {
  const std::string where = field.empty() ? std::string{} : std::string(field) + ": ";
  Quantity q;
  try {
    q = parse_quantity(text);
  } catch (const UnitError& e) {
    throw UnitError(where + e.what());
  }
  if (q.dimension != expected) {
    if (q.dimension == Dimension::dimensionless)
      throw UnitError(where + quoted(text) + " has no unit; expected " + std::string(to_string(expected)) +
                      " (e.g. '" + example_unit(expected) + "')");
    if (expected == Dimension::dimensionless)
      throw UnitError(where + quoted(text) + " is " + std::string(to_string(q.dimension)) +
                      "; expected a bare number");
    throw UnitError(where + quoted(text) + " is " + std::string(to_string(q.dimension)) + ", expected " +
                    std::string(to_string(expected)) + " (e.g. '" + example_unit(expected) + "')");
  }
  return q.value;
}

std::string format_quantity(double value, Dimension d, int significant) {
  if (!std::isfinite(value)) return shortest(value);
  if (d == Dimension::bytes || d == Dimension::bytes_per_second) {
    const int k = natural_binary_prefix(value);
    if (k > 0) {
      const double m = std::ldexp(value, -10 * k);
      if (m == std::floor(m) && std::fabs(m) < 1e6) return with_unit(shortest(m), binary_unit(k, d));
    }
  }
  const auto units = output_units(d);
  OutputUnit u = pick_decimal_unit(value, d);
  std::string text = significant_text(value / std::pow(10.0, u.decimal_exponent), significant);
  // Rounding may reach the next prefix: 999.96 GB/s at 4 digits is "1 TB/s", not "1000 GB/s".
  // strtod, not stod: a subnormal such as 1e-320 is a number here, not an out_of_range exception.
  if (std::fabs(std::strtod(text.c_str(), nullptr)) >= 1000)
    for (size_t i = 0; i + 1 < units.size(); ++i)
      if (units[i].decimal_exponent == u.decimal_exponent) {
        u = units[i + 1];
        text = significant_text(value / std::pow(10.0, u.decimal_exponent), significant);
        break;
      }
  return with_unit(text, u.text);
}

std::string format_exact(double value, Dimension d) {
  if (!std::isfinite(value)) throw UnitError("cannot write a non-finite value: " + shortest(value));
  const auto round_trips = [&](const std::string& s) {
    try {
      return parse_as(s, d) == value && std::signbit(parse_as(s, d)) == std::signbit(value);
    } catch (const UnitError&) {
      return false;
    }
  };
  std::vector<std::string> candidates;
  // Decimal prefix: move the decimal point of the shortest digits, so the text reads back exactly.
  // The natural prefix first (ties keep it), then one prefix lower ("1513 TFLOP/s" beats "1.513 PFLOP/s").
  {
    const OutputUnit natural = pick_decimal_unit(value, d);
    const auto units = output_units(d);
    std::vector<OutputUnit> tries{natural};
    for (size_t i = 1; i < units.size(); ++i)
      if (units[i].decimal_exponent == natural.decimal_exponent) tries.push_back(units[i - 1]);
    for (const OutputUnit& u : tries) {
      DecimalDigits digits = decimal_digits(value);
      if (digits.digits != "0") digits.point -= u.decimal_exponent;
      candidates.push_back(with_unit(number_text(digits), u.text));
    }
  }
  if (d == Dimension::bytes || d == Dimension::bytes_per_second) {
    const int k = natural_binary_prefix(value);
    if (k > 0) candidates.push_back(with_unit(number_text(decimal_digits(std::ldexp(value, -10 * k))), binary_unit(k, d)));
  }
  const std::string* best = nullptr;
  for (const auto& c : candidates)
    if (round_trips(c) && (!best || c.size() < best->size())) best = &c;
  if (best) return *best;
  // Base unit with the shortest round-trip digits: always exact.
  const auto units = output_units(d);
  const char* base = "";
  for (const auto& u : units)
    if (u.decimal_exponent == 0) base = u.text;
  return with_unit(shortest(value), base);
}

}  // namespace ceiling
