// The CPU side of the tensor-core numeric probes (issue 13): formats, exact rounding, the model
// family and the classifier that names the hardware's arithmetic, the paper's error tables and
// the chained products. A model of the family stands in for the GPU.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>

#include "probes/host/numerics.hpp"
#include "probes/host/sparse24.hpp"

using namespace ceiling::numerics;

namespace {

NumericShape shape(const char* key, int K, const Format& in, const Format& out) {
  return NumericShape{key, 16, 8, K, &in, &out};
}

Hypothesis strided(Hypothesis h, int stride) {
  h.stride = stride;
  return h;
}

Hypothesis nominal(Hypothesis h) {
  h.align_nominal = true;
  return h;
}

Hypothesis model(int block, int extra, Round r, const Format& inter, bool c_after = false, bool flush_ab = false,
                 bool flush_c = false, bool flush_out = false) {
  Hypothesis h;
  h.block = block;
  h.extra_bits = extra;
  h.round = r;
  h.inter = &inter;
  h.c_after = c_after;
  h.flush_ab = flush_ab;
  h.flush_c = flush_c;
  h.flush_out = flush_out;
  return h;
}

std::string verdict(const Classification& c, const std::string& name) {
  for (const auto& p : c.parameters)
    if (p.name == name) return p.value;
  return "(none)";
}

}  // namespace

TEST_CASE("numerics: every bit pattern of the 8- and 16-bit formats decodes and encodes back") {
  for (const Format* f : {&fp16(), &bf16(), &e4m3(), &e5m2()}) {
    const int n = 1 << f->storage_bits;
    int finite = 0;
    for (int bits = 0; bits < n; ++bits) {
      const double v = f->decode(static_cast<uint64_t>(bits));
      if (std::isnan(v)) continue;
      if (std::isfinite(v)) {
        ++finite;
        CHECK(f->representable(v));
      }
      CHECK_MESSAGE(f->encode(v) == static_cast<uint64_t>(bits), f->name << " bits " << bits);
    }
    CHECK(finite > n / 2);
  }
  CHECK(fp16().decode(0x3C00) == 1.0);
  CHECK(fp16().decode(0x7BFF) == 65504.0);
  CHECK(fp16().decode(0x0001) == std::ldexp(1.0, -24));
  CHECK(bf16().decode(0x3F80) == 1.0);
  CHECK(e4m3().decode(0x7E) == 448.0);
  CHECK(std::isnan(e4m3().decode(0x7F)));
  CHECK(e4m3().decode(0x01) == std::ldexp(1.0, -9));
  CHECK(e5m2().decode(0x7B) == 57344.0);
  CHECK(std::isinf(e5m2().decode(0x7C)));
  CHECK(tf32().encode(1.0) == 0x3F800000u);
  CHECK(tf32().decode(0x3F802000u) == 1.0 + std::ldexp(1.0, -10));
  CHECK_FALSE(tf32().representable(1.0 + std::ldexp(1.0, -11)));
  CHECK_THROWS_AS(fp16().encode(1.0 + std::ldexp(1.0, -11)), std::invalid_argument);
  CHECK_THROWS_AS(e4m3().encode(INFINITY), std::invalid_argument);
  CHECK_THROWS_AS(format_by_name("fp7"), std::invalid_argument);
}

TEST_CASE("numerics: rounding to FP32 equals the CPU's float conversion, directed roundings bracket") {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  std::uniform_int_distribution<int> ex(-160, 130);
  for (int i = 0; i < 200000; ++i) {
    const double x = std::ldexp(u(rng), ex(rng));
    const double rn = round_to(x, fp32());
    const float f = static_cast<float>(x);
    REQUIRE_MESSAGE((rn == static_cast<double>(f) || (std::isinf(rn) && std::isinf(f))), x);
    const double dn = round_to(x, fp32(), Round::down), up = round_to(x, fp32(), Round::up),
                 rz = round_to(x, fp32(), Round::toward_zero);
    CHECK(dn <= x);
    CHECK(up >= x);
    CHECK(std::fabs(rz) <= std::fabs(x));
    if (std::isfinite(up) && std::isfinite(dn) && dn != up) CHECK(std::nextafter(static_cast<float>(dn), INFINITY) == static_cast<float>(up));
  }
  // Ties to even, overflow, subnormals, flush.
  CHECK(round_to(1.0 + std::ldexp(1.0, -11), fp16()) == 1.0);
  CHECK(round_to(1.0 + 3 * std::ldexp(1.0, -11), fp16()) == 1.0 + std::ldexp(1.0, -9));
  CHECK(std::isinf(round_to(65520.0, fp16())));
  CHECK(round_to(65520.0, fp16(), Round::toward_zero) == 65504.0);
  CHECK(round_to(1000.0, e4m3(), Round::nearest_even, true) == 448.0);
  CHECK(std::isnan(round_to(1000.0, e4m3())));
  CHECK(round_to(std::ldexp(1.0, -25), fp16()) == 0.0);                         // a tie: to even (0)
  CHECK(round_to(std::ldexp(1.5, -25), fp16()) == std::ldexp(1.0, -24));
  CHECK(ExactSum(std::ldexp(1.0, -130)).round(fp32(), Round::nearest_even, true) == 0.0);
  CHECK(round_tf32_rna(1.0 + std::ldexp(1.0, -11)) == 1.0 + std::ldexp(1.0, -10));  // ties away
  CHECK(round_to(1.0 + std::ldexp(1.0, -11), tf32()) == 1.0);                        // ties to even
}

TEST_CASE("numerics: ExactSum keeps every bit across 700 binades") {
  ExactSum s;
  s.add(std::ldexp(1.0, 300));
  s.add(std::ldexp(1.0, -300));
  s.add(-std::ldexp(1.0, 300));
  CHECK(s.to_double() == std::ldexp(1.0, -300));
  CHECK(s.sign() == 1);
  CHECK(s.exponent() == -300);
  s.add(-std::ldexp(3.0, -300));
  CHECK(s.to_double() == -std::ldexp(1.0, -299));
  s.add(std::ldexp(1.0, -299));
  CHECK(s.is_zero());
  CHECK_THROWS_AS(s.add(std::ldexp(1.0, 600)), std::domain_error);
  CHECK_THROWS_AS(s.add(NAN), std::domain_error);
  // 1 + 2^-24 + 2^-24: rounding once gives 1 + 2^-23; rounding after each add would give 1.
  ExactSum t(1.0);
  t.add(std::ldexp(1.0, -24));
  t.add(std::ldexp(1.0, -24));
  CHECK(t.round(fp32(), Round::nearest_even) == 1.0 + std::ldexp(1.0, -23));
}

TEST_CASE("numerics: the classifier names the model that produced the results") {
  struct Truth {
    NumericShape s;
    Hypothesis h;
    const char* block;
    const char* extra;
    const char* rounding;
  };
  const std::vector<Truth> truths{
      // Fasi et al.'s description of Ampere FP16: blocks of 8, 3 extra bits, truncation.
      {shape("f16f32", 16, fp16(), fp32()), model(8, 3, Round::toward_zero, fp32()), "8", "3", "RZ"},
      // An IEEE FMA chain: exact products, every partial sum rounded to nearest.
      {shape("bf16", 16, bf16(), fp32()), model(1, Hypothesis::kExact, Round::nearest_even, fp32()), "1",
       ">= ", "RN"},
      // FP8 on sm_90 mma.sync: HMMA into zero, then an FADD of C (SASS of this build).
      {shape("e4m3", 32, e4m3(), fp32()), model(16, 2, Round::toward_zero, fp32(), true), "16", "2", "RZ"},
      // A 14-bit accumulator (FP8 wgmma's, as reported for Hopper): fewer bits than FP32 holds.
      // (33 terms aligned to 14 bits never fill FP32's 24: no rounding happens, so none can be named.)
      {shape("e5m2", 32, e5m2(), fp32()), model(32, -9, Round::toward_zero, fp32()), "32", "-9",
       "undetermined (every direction fits)"},
      {shape("tf32", 8, tf32(), fp32()), model(4, 1, Round::nearest_even, fp32(), false, true, false, true), "4", "1",
       "RN"},
      // FP16 D from an FP32 running sum.
      {shape("f16f16", 16, fp16(), fp16()), model(8, 3, Round::toward_zero, fp32()), "8", "3", "RZ"},
      // Terms aligned on 2 integer bits before normalization (the H100's FP32-accumulate
      // results: the exact-exponent family misses ~1% of the cases there).
      {shape("bf16a", 16, bf16(), fp32()), nominal(model(16, 3, Round::toward_zero, fp32())), "16", "3", "RZ"},
      {shape("tf32a", 8, tf32(), fp32()), nominal(model(8, 2, Round::toward_zero, fp32())), "8", "2", "RZ"},
      // The H100's FP8 mma.sync: two FP16 HMMA.16816 taking k in pairs ({0,1,4,5,..}, then
      // {2,3,6,7,..}), the second onto the first, then an FADD of C.
      // An accumulator of 14 significant bits (FP32 range, 13 fraction bits) summing FP8 products.
      {shape("e5m2n", 32, e5m2(), fp32()), nominal(model(32, 3, Round::toward_zero, fp32_narrow(13))), "32", "3", "RZ"},
      {shape("e4m3p", 32, e4m3(), fp32()), strided(nominal(model(16, 3, Round::toward_zero, fp32(), true)), 2), "16",
       "3", "RZ"},
  };
  for (const auto& t : truths) {
    const auto cases = constructed_cases(t.s, 11);
    const auto got = emulator(t.h, t.s)(cases);
    const Classification c = classify(t.s, cases, got);
    INFO(t.s.key << ": " << c.summary);
    REQUIRE(c.consistent >= 1);
    CHECK(c.products_exact);
    CHECK(verdict(c, "block") == t.block);
    CHECK(verdict(c, "extra_bits").rfind(t.extra, 0) == 0);
    CHECK(verdict(c, "rounding") == t.rounding);
    CHECK(verdict(c, "c_added") == (t.h.c_after ? "after the products (RN)" : "inside the first block"));
    CHECK(verdict(c, "subnormal_ab") == (t.h.flush_ab ? "flushed" : "kept"));
    if (t.s.out != &fp32()) CHECK(verdict(c, "intermediate") == "fp32");
    if (t.s.out == &fp32() && t.s.in->storage_bits == 8) CHECK(verdict(c, "intermediate") == t.h.inter->name);
    if (t.h.block < t.s.K) CHECK(verdict(c, "k_order") == (t.h.stride ? "runs of 2 k, round-robin" : "contiguous"));
    // (With an FP16 D the final rounding hides the one bit the two references differ by.)
    if (t.h.extra_bits != Hypothesis::kExact && t.h.extra_bits > 0 && t.s.out == &fp32())
      CHECK(verdict(c, "alignment") == (t.h.align_nominal ? "2 integer bits" : "exact exponent"));
    // Every model that fits the cases also fits fresh random ones.
    const auto fresh = constructed_cases(t.s, 12345);
    const auto want = emulator(t.h, t.s)(fresh);
    for (const auto& m : c.models) {
      const auto other = emulator(m, t.s)(fresh);
      int differ = 0;
      for (size_t i = 0; i < want.size(); ++i)
        if (!(other[i] == want[i] || (std::isnan(other[i]) && std::isnan(want[i])))) ++differ;
      CHECK_MESSAGE(differ == 0, m.describe());
    }
  }
}

TEST_CASE("numerics: results no model makes are reported with the closest model and the case it misses") {
  const auto s = shape("f16f32", 16, fp16(), fp32());
  const auto cases = constructed_cases(s, 5);
  auto got = emulator(model(8, 3, Round::toward_zero, fp32()), s)(cases);
  // A device that rounds one rounding case the other way.
  for (size_t i = 0; i < cases.size(); ++i)
    if (cases[i].tag.find("round:0.75ulp") != std::string::npos) {
      got[i] = std::nextafter(static_cast<float>(got[i]), INFINITY);
      break;
    }
  const Classification c = classify(s, cases, got);
  CHECK(c.consistent == 0);
  CHECK(c.closest);
  CHECK(c.closest_misses == 1);
  // The closest models' parameters are stated, marked as closest, never as a fit.
  CHECK(verdict(c, "block") == "8 (closest)");
  CHECK(verdict(c, "rounding") == "RZ (closest)");
  CHECK(verdict(c, "extra_bits") == "3 (closest)");
  CHECK(c.first_miss.find("round:0.75ulp") != std::string::npos);
  CHECK(c.summary.find("no model of the family") == 0);
  CHECK_THROWS_AS(classify(s, cases, std::vector<double>(3)), std::invalid_argument);
}

TEST_CASE("numerics: the paper's error tables from a model (Tables 12-15 layout)") {
  auto table = [](const NumericShape& s, const Hypothesis& h) {
    const ErrorPlan plan = error_plan(s, 400, 2024);
    return error_table(s, plan, emulator(h, s)(plan.cases));
  };
  auto cell = [](const std::vector<ErrorRow>& t, Experiment e, bool low) {
    for (const auto& r : t)
      if (r.experiment == e && r.init_low == low) return r;
    FAIL("no row");
    return ErrorRow{};
  };
  const auto bf = shape("bf16", 16, bf16(), fp32()), hf = shape("f16", 16, fp16(), fp32());
  // Exact sums rounded once to nearest: no error at all with inputs drawn in the low precision.
  const auto ieee = table(bf, model(16, Hypothesis::kExact, Round::nearest_even, fp32()));
  for (Experiment e : {Experiment::multiplication, Experiment::inner_product, Experiment::accumulation})
    CHECK(cell(ieee, e, true).mean_abs_fp32 == 0.0);
  // Truncation shows only in accumulation at the FP32 level (Table 12's 1.89e-08).
  const auto rz = table(bf, model(16, 3, Round::toward_zero, fp32()));
  CHECK(cell(rz, Experiment::multiplication, true).mean_abs_fp32 == 0.0);
  const double acc = cell(rz, Experiment::accumulation, true).mean_abs_fp32;
  CHECK(acc > 1e-9);
  CHECK(acc < 1e-7);
  // FP32 inputs converted: the conversion error, BF16 (8 bits) far above FP16 (11 bits).
  const auto hrz = table(hf, model(16, 3, Round::toward_zero, fp32()));
  const double eb = cell(rz, Experiment::multiplication, false).mean_abs_fp32;
  const double eh = cell(hrz, Experiment::multiplication, false).mean_abs_fp32;
  CHECK(eb > 1e-4);
  CHECK(eh > 1e-5);
  CHECK(eb / eh > 4);
  for (const auto& r : rz) CHECK(r.samples == 400);
  // FP16 D: against FP32 the result always differs; against FP32 rounded to FP16, not at all.
  const auto hh = shape("f16f16", 16, fp16(), fp16());
  const auto t16 = table(hh, model(16, Hypothesis::kExact, Round::nearest_even, fp32()));
  CHECK(cell(t16, Experiment::inner_product, true).mean_abs_fp32 > 1e-5);
  CHECK(cell(t16, Experiment::inner_product, true).mean_abs_out == 0.0);
}

TEST_CASE("numerics: chained products grow their error, FP16 overflows, low-precision inputs start exact") {
  const auto h = model(8, Hypothesis::kExact, Round::nearest_even, fp32());
  const auto run = [&](const NumericShape& s) { return chain_errors(s, emulator(h, s), 12, 12, 7); };
  const auto bf = run(shape("bf16", 8, bf16(), fp32()));
  const auto hf = run(shape("f16", 8, fp16(), fp32()));
  auto at = [](const std::vector<ChainPoint>& v, int len, bool low) {
    for (const auto& p : v)
      if (p.length == len && p.init_low == low) return p;
    FAIL("no point");
    return ChainPoint{};
  };
  CHECK(at(bf, 1, true).mean_rel_err < 1e-6);      // one exact product, rounded once to FP32
  CHECK(at(bf, 1, false).mean_rel_err > 1e-3);     // BF16 conversion of FP32 inputs
  CHECK(at(bf, 8, true).mean_rel_err > at(bf, 2, true).mean_rel_err);
  CHECK(at(bf, 8, true).mean_rel_err > 4 * at(hf, 8, true).mean_rel_err);  // 8 vs 11 significand bits
  CHECK(at(hf, 12, true).overflowed > 0);          // 2.8x per step: past 65504 by length ~10
  CHECK(at(bf, 12, true).overflowed == 0);
  CHECK_THROWS_AS(chain_errors(shape("k16", 16, fp16(), fp32()), emulator(h, shape("k16", 16, fp16(), fp32())), 2, 2, 1),
                  std::invalid_argument);
}

TEST_CASE("2:4 sparsity: metadata nibbles, compression and expansion as mma.sp reads them") {
  const auto valid = valid_nibbles();
  REQUIRE(valid.size() == 6);
  CHECK(valid.front() == 0b0100);  // positions (0, 1): bits 1:0 = 0, bits 3:2 = 1
  CHECK(valid.back() == 0b1110);   // positions (2, 3)
  int n_valid = 0;
  for (int n = 0; n < 16; ++n) n_valid += valid_nibble(static_cast<uint8_t>(n));
  CHECK(n_valid == 6);
  for (uint8_t bad : {0b0000, 0b0101, 0b1010, 0b1111, 0b0001}) CHECK_FALSE(valid_nibble(bad));  // (1,0): not ordered
  CHECK_THROWS_AS(encode_pair(2, 2), std::invalid_argument);
  CHECK_THROWS_AS(encode_pair(3, 1), std::invalid_argument);
  CHECK(encode_pair(1, 3) == 0b1101);
  // Every pattern of every chunk round-trips; chunks with fewer non-zeros pick the lowest free positions.
  std::mt19937_64 rng(8);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<double> row(16, 0.0);
    for (int chunk = 0; chunk < 4; ++chunk) {
      const uint8_t n = valid[rng() % 6];
      const int keep = static_cast<int>(rng() % 3);  // 0, 1 or 2 non-zeros
      if (keep >= 1) row[4 * chunk + nibble_first(n)] = static_cast<double>(1 + rng() % 9);
      if (keep >= 2) row[4 * chunk + nibble_second(n)] = -static_cast<double>(1 + rng() % 9);
    }
    const Compressed24 c = compress_24(row);
    CHECK(c.values.size() == 8);
    CHECK(c.nibbles.size() == 4);
    for (uint8_t n : c.nibbles) CHECK(valid_nibble(n));
    CHECK(expand_24(c) == row);
  }
  CHECK(compress_24({0, 0, 5, 0}).nibbles[0] == encode_pair(0, 2));
  CHECK(compress_24({0, 0, 0, 0}).nibbles[0] == encode_pair(0, 1));
  CHECK_THROWS_AS(compress_24({1, 2, 3, 0}), std::invalid_argument);
  // 32-bit elements (tf32): 1:2, the nibble names both 16-bit halves of the non-zero element.
  CHECK(valid_nibbles_32bit() == std::vector<uint8_t>{0x4, 0xE});
  CHECK(expand_12({7, -3}, {0x4, 0xE}) == std::vector<double>{7, 0, 0, -3});
  CHECK_THROWS_AS(expand_12({1}, {encode_pair(0, 2)}), std::invalid_argument);  // half of two elements
  CHECK_THROWS_AS(expand_12({1, 2}, {0x4}), std::invalid_argument);
  CHECK_THROWS_AS(compress_24({1, 2, 3}), std::invalid_argument);
  Compressed24 bad{{1, 2}, {0b0101}};
  CHECK_THROWS_AS(expand_24(bad), std::invalid_argument);
  CHECK(uniform_metadata(0b0100) == 0x44444444u);
  CHECK(pack_nibbles({0x4, 0x8, 0xC, 0x9, 0xD, 0xE, 0x4, 0x8}) == 0x84ED9C84u);
  CHECK(pack_nibbles({0x4, 0x8, 0xC}, 1) == 0xC8u);
}
