// The DPX functions the "dpx" probe times (issue 14; Luo et al. §IV-E, Figs. 6-7) and their CPU
// reference, written from the CUDA Math API definitions (SIMD intrinsics, DPX): max/min of three,
// add then max/min, relu = max(., 0), per 16-bit lane for the x2 forms, wrap-around adds, and
// __vibmax_*(a, b, &pred) = max(a, b) with pred = (a >= b). Plain C++: the probe's check and the
// CPU tests share it.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>

namespace ceiling::probes::dpx {

enum class Fn {
  vimax3_s32,
  vimin3_s32,
  vimax3_s16x2,
  vimin3_s16x2,
  viaddmax_s32,
  viaddmin_s32,
  viaddmax_s16x2,
  vimax_s32_relu,
  vimax3_s32_relu,
  vibmax_s32,
  vimax3_u32,
  vimin3_u32,
  viaddmax_u32,
  viaddmin_u32,
  vibmax_u32,
  vimax3_s16x2_relu,
};

inline constexpr std::array<Fn, 16> kFunctions{
    Fn::vimax3_s32,   Fn::vimin3_s32,   Fn::vimax3_s16x2, Fn::vimin3_s16x2,   Fn::viaddmax_s32, Fn::viaddmin_s32,
    Fn::viaddmax_s16x2, Fn::vimax_s32_relu, Fn::vimax3_s32_relu, Fn::vibmax_s32, Fn::vimax3_u32, Fn::vimin3_u32,
    Fn::viaddmax_u32, Fn::viaddmin_u32, Fn::vibmax_u32, Fn::vimax3_s16x2_relu};

// The CUDA name ("__vimax3_s32"), as the descriptor's dpx[].function writes it.
constexpr std::string_view name(Fn f) {
  switch (f) {
    case Fn::vimax3_s32: return "__vimax3_s32";
    case Fn::vimin3_s32: return "__vimin3_s32";
    case Fn::vimax3_s16x2: return "__vimax3_s16x2";
    case Fn::vimin3_s16x2: return "__vimin3_s16x2";
    case Fn::viaddmax_s32: return "__viaddmax_s32";
    case Fn::viaddmin_s32: return "__viaddmin_s32";
    case Fn::viaddmax_s16x2: return "__viaddmax_s16x2";
    case Fn::vimax_s32_relu: return "__vimax_s32_relu";
    case Fn::vimax3_s32_relu: return "__vimax3_s32_relu";
    case Fn::vibmax_s32: return "__vibmax_s32";
    case Fn::vimax3_u32: return "__vimax3_u32";
    case Fn::vimin3_u32: return "__vimin3_u32";
    case Fn::viaddmax_u32: return "__viaddmax_u32";
    case Fn::viaddmin_u32: return "__viaddmin_u32";
    case Fn::vibmax_u32: return "__vibmax_u32";
    case Fn::vimax3_s16x2_relu: return "__vimax3_s16x2_relu";
  }
  return "";
}

// Two operands (the third is ignored): relu max of two and the __vibmax forms.
constexpr bool two_operands(Fn f) { return f == Fn::vimax_s32_relu || f == Fn::vibmax_s32 || f == Fn::vibmax_u32; }
// Sets a predicate besides the value.
constexpr bool has_predicate(Fn f) { return f == Fn::vibmax_s32 || f == Fn::vibmax_u32; }
// Two 16-bit lanes per 32-bit word.
constexpr bool lanes_16x2(Fn f) {
  return f == Fn::vimax3_s16x2 || f == Fn::vimin3_s16x2 || f == Fn::viaddmax_s16x2 || f == Fn::vimax3_s16x2_relu;
}

// The SASS each call becomes on sm_90 (CUDA 13, seen in cuobjdump of the probe's kernels on an
// H100, 2026-11-25; scripts/sass_check.sh checks it on every GPU run): VIMNMX3 / VIADDMNMX with
// .U32, .S16x2 and .RELU forms. Two exceptions: __vimax_s32_relu is VIMNMX.RELU alone, but ptxas
// fuses two dependent calls into one VIMNMX3.RELU (max is associative), so a chain of calls runs
// at twice the rate of the 3-input forms per call and the same per instruction; __vibmax_s32/_u32
// have no DPX instruction: ISETP + SEL. Before sm_90 the calls are emulated (IMNMX, IADD3, PRMT).
constexpr std::string_view expected_sass(Fn f, bool sm90) {
  if (!sm90) return lanes_16x2(f) ? "IMNMX/PRMT/VIMNMX (emulated, per lane)" : "IMNMX (+IADD3; emulated)";
  switch (f) {
    case Fn::viaddmax_s32:
    case Fn::viaddmin_s32: return "VIADDMNMX";
    case Fn::viaddmax_u32:
    case Fn::viaddmin_u32: return "VIADDMNMX.U32";
    case Fn::viaddmax_s16x2: return "VIADDMNMX.S16x2";
    case Fn::vimax_s32_relu: return "VIMNMX.RELU (pairs fuse: VIMNMX3.RELU)";
    case Fn::vimax3_s32_relu: return "VIMNMX3.RELU";
    case Fn::vimax3_s16x2_relu: return "VIMNMX3.S16x2.RELU";
    case Fn::vimax3_s16x2:
    case Fn::vimin3_s16x2: return "VIMNMX3.S16x2";
    case Fn::vimax3_u32:
    case Fn::vimin3_u32: return "VIMNMX3.U32";
    case Fn::vibmax_s32:
    case Fn::vibmax_u32: return "ISETP+SEL (no DPX op)";
    default: return "VIMNMX3";
  }
}

namespace ref {

constexpr int32_t s32(uint32_t x) { return static_cast<int32_t>(x); }
constexpr uint32_t u32(int32_t x) { return static_cast<uint32_t>(x); }
constexpr int16_t lane(uint32_t x, int i) { return static_cast<int16_t>(static_cast<uint16_t>(x >> (16 * i))); }
constexpr uint32_t pack(int16_t lo, int16_t hi) {
  return static_cast<uint32_t>(static_cast<uint16_t>(lo)) | (static_cast<uint32_t>(static_cast<uint16_t>(hi)) << 16);
}
constexpr int16_t add16(int16_t a, int16_t b) {  // wraps, as add.s16x2
  return static_cast<int16_t>(static_cast<uint16_t>(static_cast<uint16_t>(a) + static_cast<uint16_t>(b)));
}
constexpr int32_t add32(int32_t a, int32_t b) { return s32(u32(a) + u32(b)); }  // wraps, as add.s32

template <class Op>
constexpr uint32_t per_lane(uint32_t a, uint32_t b, uint32_t c, Op op) {
  return pack(op(lane(a, 0), lane(b, 0), lane(c, 0)), op(lane(a, 1), lane(b, 1), lane(c, 1)));
}

}  // namespace ref

// The function's value for operands a, b, c (c ignored by two_operand forms) as 32-bit words;
// *pred gets the predicate of the __vibmax forms (untouched otherwise).
constexpr uint32_t reference(Fn f, uint32_t a, uint32_t b, uint32_t c, bool* pred = nullptr) {
  using namespace ref;
  const int32_t sa = s32(a), sb = s32(b), sc = s32(c);
  switch (f) {
    case Fn::vimax3_s32: return u32(std::max({sa, sb, sc}));
    case Fn::vimin3_s32: return u32(std::min({sa, sb, sc}));
    case Fn::vimax3_s16x2:
      return per_lane(a, b, c, [](int16_t x, int16_t y, int16_t z) { return std::max({x, y, z}); });
    case Fn::vimin3_s16x2:
      return per_lane(a, b, c, [](int16_t x, int16_t y, int16_t z) { return std::min({x, y, z}); });
    case Fn::viaddmax_s32: return u32(std::max(add32(sa, sb), sc));
    case Fn::viaddmin_s32: return u32(std::min(add32(sa, sb), sc));
    case Fn::viaddmax_s16x2:
      return per_lane(a, b, c, [](int16_t x, int16_t y, int16_t z) { return std::max(add16(x, y), z); });
    case Fn::vimax_s32_relu: return u32(std::max({sa, sb, 0}));
    case Fn::vimax3_s32_relu: return u32(std::max({sa, sb, sc, 0}));
    case Fn::vibmax_s32:
      if (pred) *pred = sa >= sb;
      return u32(std::max(sa, sb));
    case Fn::vimax3_u32: return std::max({a, b, c});
    case Fn::vimin3_u32: return std::min({a, b, c});
    case Fn::viaddmax_u32: return std::max(a + b, c);
    case Fn::viaddmin_u32: return std::min(a + b, c);
    case Fn::vibmax_u32:
      if (pred) *pred = a >= b;
      return std::max(a, b);
    case Fn::vimax3_s16x2_relu:
      return per_lane(a, b, c, [](int16_t x, int16_t y, int16_t z) { return std::max({x, y, z, int16_t{0}}); });
  }
  return 0;
}

// The operands of a chain's step k (the timed kernels and their CPU replay): step k reads
// operand words k % 8 and (k + 3) % 8 of the thread's eight.
constexpr int kOperands = 8;
constexpr int operand_b(int k) { return k % kOperands; }
constexpr int operand_c(int k) { return (k + 3) % kOperands; }

// A value of the test inputs: 1 in 4 is an edge (0, +-1, the 32-bit and 16-bit limits, per lane),
// the rest uniform. `draw` is any 64-bit generator output.
constexpr uint32_t test_operand(uint64_t draw) {
  constexpr uint32_t edges[] = {0u,          1u,          0xFFFFFFFFu, 0x7FFFFFFFu, 0x80000000u, 0x7FFF7FFFu,
                                0x80008000u, 0x7FFF8000u, 0x80007FFFu, 0xFFFF0001u, 0x0001FFFFu, 0x7FFE8001u,
                                0x00007FFFu, 0x80000000u, 0xFFFF8000u, 0x7FFFFFFEu};
  if ((draw & 3u) == 0) return edges[(draw >> 2) % (sizeof edges / sizeof edges[0])];
  return static_cast<uint32_t>(draw >> 32);
}

}  // namespace ceiling::probes::dpx
