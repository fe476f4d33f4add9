// Quantities with units, parsed strictly and printed with SI/IEC prefixes.
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>

#include "input_error.hpp"

namespace ceiling {

// What a number measures. Values are held in the base unit of their dimension:
// bytes, bytes/s, FLOP/s (OP/s is the same dimension), Hz, cycles, seconds,
// bytes per clock (per SM where the field says so), or a bare number.
enum class Dimension {
  bytes,
  bytes_per_second,
  flop_per_second,
  hertz,
  cycles,
  seconds,
  bytes_per_cycle,
  dimensionless,
  watts,  // electrical power (NVML readings, issue 14)
};

std::string_view to_string(Dimension d);

// Thrown for any text that is not a valid quantity of the expected dimension.
// The message names the field when one was given.
class UnitError : public std::runtime_error {
 public:
  explicit UnitError(const std::string& what) : std::runtime_error(one_line(what)) {}  // input text quoted on one line
};

struct Quantity {
  double value = 0;  // in the base unit of `dimension`
  Dimension dimension = Dimension::dimensionless;
};

// "4.8 TB/s", "1980 MHz", "50 MiB", "283 cycles", "9.7 TFLOP/s", "1.2 ms", "128 B/clk".
// Decimal prefixes k M G T P (K is accepted for bytes as 1000), binary Ki Mi Gi Ti.
// Throws UnitError on anything else (no unit, unknown unit, trailing text, nan/inf).
Quantity parse_quantity(std::string_view text);

// Parse and require a dimension; `field` names the key in error messages.
double parse_as(std::string_view text, Dimension expected, std::string_view field = {});

// Human form with a decimal prefix (bytes: binary prefix when exact, e.g. "50 MiB"),
// `significant` significant digits: format_quantity(4.8e12, bytes_per_second) == "4.8 TB/s".
std::string format_quantity(double value, Dimension d, int significant = 4);

// Exact form: parse_as(format_exact(v, d), d) == v bit for bit. Used by the YAML writer for spec values.
std::string format_exact(double value, Dimension d);

// Power of ten of |value|'s leading digit: 3 for 4664.2, -3 for 0.0032, 0 for 0.
int decimal_exponent(double value);
// The decimal prefix (power of ten) format_quantity picks for `value`: 12 for 4.8e12 B/s.
int decimal_prefix_exponent(double value, Dimension d);
// `value` rounded to a multiple of 10^step_exponent (base unit) and written down to that step, with
// the decimal prefix 10^prefix_exponent (one of the dimension's, else std::invalid_argument):
// format_rounded(4.664225e12, Dimension::bytes_per_second, 9, 12) == "4.664 TB/s",
// format_rounded(4.31e12, Dimension::bytes_per_second, 9, 12) == "4.310 TB/s". At most 17
// significant digits. Several values given one prefix and one step read in one unit, aligned.
std::string format_rounded(double value, Dimension d, int step_exponent, int prefix_exponent);
// The value format_rounded's text reads back as.
double round_to_step(double value, int step_exponent);

}  // namespace ceiling
