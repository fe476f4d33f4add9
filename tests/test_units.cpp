#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>

#include "model/units.hpp"

using namespace ceiling;

namespace {
bool same_bits(double a, double b) {
  std::uint64_t x, y;
  std::memcpy(&x, &a, sizeof x);
  std::memcpy(&y, &b, sizeof y);
  return x == y;
}
std::string error_of(std::string_view text, Dimension d, std::string_view field = {}) {
  try {
    parse_as(text, d, field);
  } catch (const UnitError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("units: decimal prefixes are exact powers of ten") {
  // kerncraft's prefixes once shipped wrong: each prefix checked against its exact value.
  CHECK(parse_as("1 kFLOP/s", Dimension::flop_per_second) == 1e3);
  CHECK(parse_as("1 MFLOP/s", Dimension::flop_per_second) == 1e6);
  CHECK(parse_as("1 GFLOP/s", Dimension::flop_per_second) == 1e9);
  CHECK(parse_as("1 TFLOP/s", Dimension::flop_per_second) == 1e12);
  CHECK(parse_as("1 TFLOP/s", Dimension::flop_per_second) != 1e13);
  CHECK(parse_as("1 PFLOP/s", Dimension::flop_per_second) == 1e15);
  CHECK(parse_as("1 TOP/s", Dimension::flop_per_second) == 1e12);
  CHECK(parse_as("1979 TOP/s", Dimension::flop_per_second) == 1979e12);
  CHECK(parse_as("9.7 TFLOP/s", Dimension::flop_per_second) == 9.7e12);
  CHECK(parse_as("494.7 TFLOP/s", Dimension::flop_per_second) == 494.7e12);
  CHECK(parse_as("1 kB", Dimension::bytes) == 1000);
  CHECK(parse_as("1 KB", Dimension::bytes) == 1000);
  CHECK(parse_as("1 MB", Dimension::bytes) == 1e6);
  CHECK(parse_as("1 GB", Dimension::bytes) == 1e9);
  CHECK(parse_as("1 TB", Dimension::bytes) == 1e12);
  CHECK(parse_as("4.8 TB/s", Dimension::bytes_per_second) == 4.8e12);
  CHECK(parse_as("1.94 TB/s", Dimension::bytes_per_second) == 1.94e12);
  CHECK(parse_as("3.35 TB/s", Dimension::bytes_per_second) == 3.35e12);
  CHECK(parse_as("1 GB/s", Dimension::bytes_per_second) == 1e9);
  CHECK(parse_as("1980 MHz", Dimension::hertz) == 1.98e9);
  CHECK(parse_as("1.98 GHz", Dimension::hertz) == 1.98e9);
  CHECK(parse_as("1 kHz", Dimension::hertz) == 1e3);
  CHECK(parse_as("5 Hz", Dimension::hertz) == 5);
  CHECK(parse_as("1.2 ms", Dimension::seconds) == 1.2e-3);
  CHECK(parse_as("3 us", Dimension::seconds) == 3e-6);
  CHECK(parse_as("7 ns", Dimension::seconds) == 7e-9);
  CHECK(parse_as("2 s", Dimension::seconds) == 2);
}

TEST_CASE("units: binary prefixes are exact powers of two") {
  CHECK(parse_as("1 KiB", Dimension::bytes) == 1024);
  CHECK(parse_as("1 MiB", Dimension::bytes) == 1048576);
  CHECK(parse_as("50 MiB", Dimension::bytes) == 50.0 * 1048576);
  CHECK(parse_as("1 GiB", Dimension::bytes) == std::ldexp(1.0, 30));
  CHECK(parse_as("1 TiB", Dimension::bytes) == std::ldexp(1.0, 40));
  CHECK(parse_as("1 TiB/s", Dimension::bytes_per_second) == std::ldexp(1.0, 40));
  CHECK(parse_as("2 GiB/s", Dimension::bytes_per_second) == std::ldexp(1.0, 31));
}

TEST_CASE("units: cycles, bytes per clock, bare numbers, spacing, exponents") {
  CHECK(parse_as("283 cycles", Dimension::cycles) == 283);
  CHECK(parse_as("1 cycle", Dimension::cycles) == 1);
  CHECK(parse_as("33 clk", Dimension::cycles) == 33);
  CHECK(parse_as("128 B/clk", Dimension::bytes_per_cycle) == 128);
  CHECK(parse_as("64 B/cycle", Dimension::bytes_per_cycle) == 64);
  CHECK(parse_as("42", Dimension::dimensionless) == 42);
  CHECK(parse_as("0.125", Dimension::dimensionless) == 0.125);
  CHECK(parse_as("  4.8 TB/s  ", Dimension::bytes_per_second) == 4.8e12);
  CHECK(parse_as("4.8TB/s", Dimension::bytes_per_second) == 4.8e12);
  CHECK(parse_as("4.8e3 GB/s", Dimension::bytes_per_second) == 4.8e12);
  CHECK(parse_as("48e-1 TB/s", Dimension::bytes_per_second) == 4.8e12);
  CHECK(parse_as("-3 ns", Dimension::seconds) == -3e-9);
  const Quantity q = parse_quantity("67 TFLOP/s");
  CHECK(q.dimension == Dimension::flop_per_second);
  CHECK(q.value == 67e12);
}

TEST_CASE("units: bad text is rejected") {
  for (const char* bad : {"", "   ", "TB/s", "4.8 TB/sec", "4.8 tb/s", "4.8 Tb/s", "4.8 TB/s extra",
                          "inf TB/s", "nan", "NaN B", "1e999 B", "4.8 XB", "4.8 kiB", "4.8 KHz",
                          "1.2 msec", "4,8 TB/s", "+4.8 TB/s", "0x10 B", "4.8 T", "4.8 FLOPS",
                          "1 EFLOP/s", "4.8 TB/s/s"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_quantity(bad), UnitError);
  }
}

TEST_CASE("units: dimension mismatch names the field and the text") {
  const std::string e = error_of("4.8 TB", Dimension::bytes_per_second, "memory.dram.bandwidth");
  CHECK(e.find("memory.dram.bandwidth") != std::string::npos);
  CHECK(e.find("4.8 TB") != std::string::npos);
  CHECK(e.find("bytes_per_second") != std::string::npos);
  CHECK(error_of("4.8", Dimension::bytes_per_second, "bw").find("no unit") != std::string::npos);
  CHECK(error_of("5 ns", Dimension::dimensionless, "ratio").find("bare number") != std::string::npos);
  CHECK(error_of("1980 MHz", Dimension::cycles, "lat").find("hertz") != std::string::npos);
  CHECK(error_of("4.8 TB/q", Dimension::bytes_per_second, "x.y").find("x.y: unknown unit") != std::string::npos);
  CHECK_THROWS_AS(parse_as("9.7 TFLOP/s", Dimension::bytes_per_second), UnitError);
  CHECK_THROWS_AS(parse_as("128 B/clk", Dimension::bytes_per_second), UnitError);
  CHECK_THROWS_AS(parse_as("283 cycles", Dimension::seconds), UnitError);
}

TEST_CASE("units: human printing") {
  CHECK(format_quantity(4.8e12, Dimension::bytes_per_second) == "4.8 TB/s");
  CHECK(format_quantity(1.94e12, Dimension::bytes_per_second) == "1.94 TB/s");
  CHECK(format_quantity(50.0 * 1048576, Dimension::bytes) == "50 MiB");
  CHECK(format_quantity(40e6, Dimension::bytes) == "40 MB");
  CHECK(format_quantity(80e9, Dimension::bytes) == "80 GB");
  CHECK(format_quantity(256 * 1024.0, Dimension::bytes) == "256 KiB");
  CHECK(format_quantity(1.98e9, Dimension::hertz) == "1.98 GHz");
  CHECK(format_quantity(9.7e12, Dimension::flop_per_second) == "9.7 TFLOP/s");
  CHECK(format_quantity(1.979e15, Dimension::flop_per_second) == "1.979 PFLOP/s");
  CHECK(format_quantity(494.7e12, Dimension::flop_per_second, 3) == "495 TFLOP/s");
  CHECK(format_quantity(283, Dimension::cycles) == "283 cycles");
  CHECK(format_quantity(1.2e-3, Dimension::seconds) == "1.2 ms");
  CHECK(format_quantity(3.5e-6, Dimension::seconds) == "3.5 us");
  CHECK(format_quantity(128, Dimension::bytes_per_cycle) == "128 B/clk");
  CHECK(format_quantity(0.125, Dimension::dimensionless) == "0.125");
  CHECK(format_quantity(0, Dimension::bytes_per_second) == "0 B/s");
  CHECK(format_quantity(999.96e9, Dimension::bytes_per_second) == "1 TB/s");  // rounding crosses the prefix
  CHECK(format_quantity(999.94e9, Dimension::bytes_per_second) == "999.9 GB/s");
  CHECK(format_quantity(-4.8e12, Dimension::bytes_per_second) == "-4.8 TB/s");
  CHECK(format_quantity(2.5e18, Dimension::flop_per_second) == "2500 PFLOP/s");
}

TEST_CASE("units: exact printing is short for datasheet values") {
  CHECK(format_exact(4.8e12, Dimension::bytes_per_second) == "4.8 TB/s");
  CHECK(format_exact(50.0 * 1048576, Dimension::bytes) == "50 MiB");
  CHECK(format_exact(40e6, Dimension::bytes) == "40 MB");
  CHECK(format_exact(141e9, Dimension::bytes) == "141 GB");
  CHECK(format_exact(1.98e9, Dimension::hertz) == "1.98 GHz");
  CHECK(format_exact(494.7e12, Dimension::flop_per_second) == "494.7 TFLOP/s");
  CHECK(format_exact(283, Dimension::cycles) == "283 cycles");
  CHECK(format_exact(1513e12, Dimension::flop_per_second) == "1513 TFLOP/s");  // shorter than 1.513 PFLOP/s
  CHECK(format_exact(1.5e15, Dimension::flop_per_second) == "1.5 PFLOP/s");
  CHECK(format_exact(1755e6, Dimension::hertz) == "1755 MHz");  // shortest text wins
  CHECK(format_exact(2039e9, Dimension::bytes_per_second) == "2039 GB/s");
  CHECK(format_exact(1.98e9, Dimension::hertz) == "1.98 GHz");  // a tie keeps the natural prefix
  CHECK(format_exact(0.1 + 0.2, Dimension::dimensionless) == "0.30000000000000004");
  CHECK(format_exact(1.2e-3, Dimension::seconds) == "1.2 ms");
  CHECK(format_exact(0, Dimension::seconds) == "0 s");
  CHECK_THROWS_AS(format_exact(std::nan(""), Dimension::seconds), UnitError);
}

TEST_CASE("units: exact printing round-trips bit for bit") {
  std::mt19937_64 rng(20251121);
  const Dimension dims[] = {Dimension::bytes,  Dimension::bytes_per_second, Dimension::flop_per_second,
                            Dimension::hertz,  Dimension::cycles,           Dimension::seconds,
                            Dimension::bytes_per_cycle, Dimension::dimensionless};
  std::uniform_real_distribution<double> exponent(-15, 18);
  std::uniform_real_distribution<double> unit(1, 10);
  int checked = 0;
  for (int i = 0; i < 20000; ++i) {
    double v;
    switch (i % 4) {
      case 0: v = unit(rng) * std::pow(10.0, exponent(rng)); break;      // any magnitude
      case 1: v = std::round(unit(rng) * 1e3) * 1e9; break;              // datasheet-like
      case 2: v = std::ldexp(std::round(unit(rng) * 100), static_cast<int>(rng() % 50)); break;  // powers of two
      default: {
        std::uint64_t bits = rng();
        std::memcpy(&v, &bits, sizeof v);  // arbitrary bit patterns
        if (!std::isfinite(v)) continue;
      }
    }
    for (Dimension d : dims) {
      const std::string text = format_exact(v, d);
      CAPTURE(text);
      REQUIRE(same_bits(parse_as(text, d), v));
      ++checked;
    }
  }
  CHECK(checked > 100000);
  CHECK(same_bits(parse_as(format_exact(-0.0, Dimension::seconds), Dimension::seconds), -0.0));
  CHECK(same_bits(parse_as(format_exact(5e-324, Dimension::bytes), Dimension::bytes), 5e-324));
  CHECK(same_bits(parse_as(format_exact(1.7976931348623157e308, Dimension::flop_per_second),
                           Dimension::flop_per_second),
                  1.7976931348623157e308));
}

TEST_CASE("units: dimension names") {
  CHECK(to_string(Dimension::bytes_per_second) == "bytes_per_second");
  CHECK(to_string(Dimension::cycles) == "cycles");
}

TEST_CASE("units: decimal exponent of the leading digit, exact at powers of ten") {
  CHECK(decimal_exponent(4664.2) == 3);
  CHECK(decimal_exponent(0.0032) == -3);
  CHECK(decimal_exponent(1e-3) == -3);
  CHECK(decimal_exponent(1000) == 3);
  CHECK(decimal_exponent(999.9999) == 2);
  CHECK(decimal_exponent(-25) == 1);
  CHECK(decimal_exponent(0) == 0);
  CHECK(decimal_prefix_exponent(4.8e12, Dimension::bytes_per_second) == 12);
  CHECK(decimal_prefix_exponent(1.98e9, Dimension::hertz) == 9);
  CHECK(decimal_prefix_exponent(649.6, Dimension::cycles) == 0);
}

TEST_CASE("units: rounded printing to a step, in a given prefix") {
  const auto bw = Dimension::bytes_per_second;
  CHECK(format_rounded(4.664225401615592e12, bw, 9, 12) == "4.664 TB/s");
  CHECK(format_rounded(4.630752270319e12, bw, 9, 12) == "4.631 TB/s");
  // One prefix for several values: a max above 1000 GB/s stays in GB/s when asked.
  CHECK(format_rounded(1.00049e12, bw, 9, 9) == "1000 GB/s");
  CHECK(format_rounded(999.96e9, bw, 8, 12) == "1.0000 TB/s");  // the carry reaches the next digit
  CHECK(format_rounded(4.31e12, bw, 9, 12) == "4.310 TB/s");     // written down to the step
  CHECK(format_rounded(1.9799896540331073e9, Dimension::hertz, 3, 9) == "1.979990 GHz");
  CHECK(format_rounded(649.5916137695312, Dimension::cycles, -1, 0) == "649.6 cycles");
  CHECK(format_rounded(0.0032057982578306498, Dimension::dimensionless, -4, 0) == "0.0032");
  CHECK(format_rounded(0.000010512612232998355, Dimension::dimensionless, -6, 0) == "0.000011");
  CHECK(format_rounded(32, Dimension::cycles, -3, 0) == "32.000 cycles");
  CHECK(format_rounded(0.4, Dimension::cycles, 0, 0) == "0 cycles");   // below half a step
  CHECK(format_rounded(6, Dimension::cycles, 1, 0) == "10 cycles");    // half a step or more
  CHECK_THROWS_AS(format_rounded(1, Dimension::cycles, 0, 3), std::invalid_argument);
  CHECK_THROWS_AS(format_rounded(std::nan(""), Dimension::cycles, 0, 0), UnitError);
}

TEST_CASE("units: rounded text reads back as round_to_step, and rounding again changes nothing") {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mant(1.0, 10.0);
  std::uniform_int_distribution<int> exp10(-6, 15), keep(0, 9);
  for (int i = 0; i < 2000; ++i) {
    const double v = mant(rng) * std::pow(10.0, exp10(rng));
    const int step = decimal_exponent(v) - keep(rng);
    const int prefix = decimal_prefix_exponent(v, Dimension::bytes_per_second);
    const std::string text = format_rounded(v, Dimension::bytes_per_second, step, prefix);
    CAPTURE(text);
    const double r = round_to_step(v, step);
    CHECK(same_bits(parse_as(text, Dimension::bytes_per_second), r));
    CHECK(std::fabs(r - v) <= 0.5 * std::pow(10.0, step) * (1 + 1e-9));
    CHECK(same_bits(round_to_step(r, step), r));
    CHECK(format_rounded(r, Dimension::bytes_per_second, step, prefix) == text);
  }
}
