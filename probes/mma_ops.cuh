// The mma.sync instructions the probe covers, one trait struct each: shape, operand encodings,
// register counts and the inline PTX. The fragment layout is the same rule for every shape
// (PTX ISA "Matrix fragments for mma.m16n8k*"): slot r, element j of a lane (g = lane/4,
// t = lane%4, e = elements per slot):
//   A: row g + 8*(r % (M/8)),  col t*e + j + 4*e*(r / (M/8))
//   B: k   t*e + j + 4*e*r,    col g
//   C: value v -> row g + 8*(v/2), col 2t + v%2   (f16 accumulators: two values per register)
#pragma once
#include <cstdint>

#include "mma_common.cuh"

namespace ceiling::probes::compute::mma_ops {

// Six operand-count forms cover every instruction: (C values, A slots, B slots).
#define CEILING_MMA_C2_A1_B1(PTX, CC, AC)                                                 \
  asm volatile(PTX " {%0,%1}, {%2}, {%3}, {%0,%1};"                                      \
               : "+" CC(d[0]), "+" CC(d[1])                                              \
               : AC(a[0]), AC(b[0]))
#define CEILING_MMA_C4_A2_B1(PTX, CC, AC)                                                 \
  asm volatile(PTX " {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"                       \
               : "+" CC(d[0]), "+" CC(d[1]), "+" CC(d[2]), "+" CC(d[3])                  \
               : AC(a[0]), AC(a[1]), AC(b[0]))
#define CEILING_MMA_C4_A4_B2(PTX, CC, AC)                                                 \
  asm volatile(PTX " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"              \
               : "+" CC(d[0]), "+" CC(d[1]), "+" CC(d[2]), "+" CC(d[3])                  \
               : AC(a[0]), AC(a[1]), AC(a[2]), AC(a[3]), AC(b[0]), AC(b[1]))
#define CEILING_MMA_C4_A8_B4(PTX, CC, AC)                                                 \
  asm volatile(PTX " {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15},"     \
                   " {%0,%1,%2,%3};"                                                     \
               : "+" CC(d[0]), "+" CC(d[1]), "+" CC(d[2]), "+" CC(d[3])                  \
               : AC(a[0]), AC(a[1]), AC(a[2]), AC(a[3]), AC(a[4]), AC(a[5]), AC(a[6]),   \
                 AC(a[7]), AC(b[0]), AC(b[1]), AC(b[2]), AC(b[3]))
#define CEILING_MMA_C2_A2_B1(PTX, CC, AC)                                                 \
  asm volatile(PTX " {%0,%1}, {%2,%3}, {%4}, {%0,%1};"                                   \
               : "+" CC(d[0]), "+" CC(d[1])                                              \
               : AC(a[0]), AC(a[1]), AC(b[0]))
#define CEILING_MMA_C2_A4_B2(PTX, CC, AC)                                                 \
  asm volatile(PTX " {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};"                          \
               : "+" CC(d[0]), "+" CC(d[1])                                              \
               : AC(a[0]), AC(a[1]), AC(a[2]), AC(a[3]), AC(b[0]), AC(b[1]))

#define CEILING_CC_D "d"
#define CEILING_CC_F "f"
#define CEILING_CC_R "r"
#define CEILING_AC_D(x) "d"(x)
#define CEILING_AC_R(x) "r"(x)

// One trait struct per instruction. AReg/CReg: register types; NA/NB/NC: registers per lane;
// NV: accumulator values per lane (NC, or 2*NC for packed f16 accumulators).
#define CEILING_MMA_OP(NAME, SHAPE, M_, N_, K_, A_ELEM, C_ELEM, AREG, CREG, NA_, NB_, NC_, NV_, \
                       IN_P, ACC_P, FORM, PTX, CC, AC)                                          \
  struct NAME {                                                                                 \
    static constexpr const char* shape = SHAPE;                                                 \
    static constexpr const char* ptx = PTX;                                                     \
    static constexpr int M = M_, N = N_, K = K_;                                                \
    static constexpr Elem a_elem = Elem::A_ELEM, c_elem = Elem::C_ELEM;                          \
    static constexpr Precision input = Precision::IN_P, accumulate = Precision::ACC_P;         \
    using AReg = AREG;                                                                          \
    using CReg = CREG;                                                                          \
    static constexpr int NA = NA_, NB = NB_, NC = NC_, NV = NV_;                                \
    static constexpr bool sparse = false;                                                       \
    __device__ __forceinline__ static void mma(CReg (&d)[NC], const AReg (&a)[NA],             \
                                               const AReg (&b)[NB]) {                          \
      FORM(PTX, CC, AC);                                                                        \
    }                                                                                           \
  };

// FP64 (DMMA): m8n8k4 since sm_80; m16n8k4/k8/k16 new in sm_90.
CEILING_MMA_OP(F64_m8n8k4, "m8n8k4", 8, 8, 4, f64, f64, double, double, 1, 1, 2, 2, fp64, fp64,
               CEILING_MMA_C2_A1_B1, "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64",
               CEILING_CC_D, CEILING_AC_D)
CEILING_MMA_OP(F64_m16n8k4, "m16n8k4", 16, 8, 4, f64, f64, double, double, 2, 1, 4, 4, fp64, fp64,
               CEILING_MMA_C4_A2_B1, "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64",
               CEILING_CC_D, CEILING_AC_D)
CEILING_MMA_OP(F64_m16n8k8, "m16n8k8", 16, 8, 8, f64, f64, double, double, 4, 2, 4, 4, fp64, fp64,
               CEILING_MMA_C4_A4_B2, "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64",
               CEILING_CC_D, CEILING_AC_D)
CEILING_MMA_OP(F64_m16n8k16, "m16n8k16", 16, 8, 16, f64, f64, double, double, 8, 4, 4, 4, fp64,
               fp64, CEILING_MMA_C4_A8_B4, "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64",
               CEILING_CC_D, CEILING_AC_D)
// FP16 with FP32 and FP16 accumulate.
CEILING_MMA_OP(F16F32_m16n8k8, "m16n8k8", 16, 8, 8, f16, f32, uint32_t, float, 2, 1, 4, 4, fp16,
               fp32, CEILING_MMA_C4_A2_B1, "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32",
               CEILING_CC_F, CEILING_AC_R)
CEILING_MMA_OP(F16F32_m16n8k16, "m16n8k16", 16, 8, 16, f16, f32, uint32_t, float, 4, 2, 4, 4, fp16,
               fp32, CEILING_MMA_C4_A4_B2, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
               CEILING_CC_F, CEILING_AC_R)
CEILING_MMA_OP(F16F16_m16n8k8, "m16n8k8", 16, 8, 8, f16, f16, uint32_t, uint32_t, 2, 1, 2, 4, fp16,
               fp16, CEILING_MMA_C2_A2_B1, "mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16",
               CEILING_CC_R, CEILING_AC_R)
CEILING_MMA_OP(F16F16_m16n8k16, "m16n8k16", 16, 8, 16, f16, f16, uint32_t, uint32_t, 4, 2, 2, 4,
               fp16, fp16, CEILING_MMA_C2_A4_B2, "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16",
               CEILING_CC_R, CEILING_AC_R)
// BF16 (FP32 accumulate only).
CEILING_MMA_OP(BF16_m16n8k8, "m16n8k8", 16, 8, 8, bf16, f32, uint32_t, float, 2, 1, 4, 4, bf16,
               fp32, CEILING_MMA_C4_A2_B1, "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32",
               CEILING_CC_F, CEILING_AC_R)
CEILING_MMA_OP(BF16_m16n8k16, "m16n8k16", 16, 8, 16, bf16, f32, uint32_t, float, 4, 2, 4, 4, bf16,
               fp32, CEILING_MMA_C4_A4_B2, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
               CEILING_CC_F, CEILING_AC_R)
// TF32.
CEILING_MMA_OP(TF32_m16n8k4, "m16n8k4", 16, 8, 4, tf32, f32, uint32_t, float, 2, 1, 4, 4, tf32,
               fp32, CEILING_MMA_C4_A2_B1, "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32",
               CEILING_CC_F, CEILING_AC_R)
CEILING_MMA_OP(TF32_m16n8k8, "m16n8k8", 16, 8, 8, tf32, f32, uint32_t, float, 4, 2, 4, 4, tf32,
               fp32, CEILING_MMA_C4_A4_B2, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
               CEILING_CC_F, CEILING_AC_R)
// INT8 and INT4 (s32 accumulate).
CEILING_MMA_OP(S8_m16n8k16, "m16n8k16", 16, 8, 16, s8, s32, uint32_t, uint32_t, 2, 1, 4, 4, int8,
               int32, CEILING_MMA_C4_A2_B1, "mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32",
               CEILING_CC_R, CEILING_AC_R)
CEILING_MMA_OP(S8_m16n8k32, "m16n8k32", 16, 8, 32, s8, s32, uint32_t, uint32_t, 4, 2, 4, 4, int8,
               int32, CEILING_MMA_C4_A4_B2, "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",
               CEILING_CC_R, CEILING_AC_R)
CEILING_MMA_OP(S4_m16n8k32, "m16n8k32", 16, 8, 32, s4, s32, uint32_t, uint32_t, 2, 1, 4, 4, int4,
               int32, CEILING_MMA_C4_A2_B1, "mma.sync.aligned.m16n8k32.row.col.s32.s4.s4.s32",
               CEILING_CC_R, CEILING_AC_R)
CEILING_MMA_OP(S4_m16n8k64, "m16n8k64", 16, 8, 64, s4, s32, uint32_t, uint32_t, 4, 2, 4, 4, int4,
               int32, CEILING_MMA_C4_A4_B2, "mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32",
               CEILING_CC_R, CEILING_AC_R)
// FP8 (PTX 8.4+ accepts mma m16n8k32 e4m3/e5m2 for sm_89 and later).
CEILING_MMA_OP(E4M3_m16n8k32, "m16n8k32", 16, 8, 32, e4m3, f32, uint32_t, float, 4, 2, 4, 4, fp8,
               fp32, CEILING_MMA_C4_A4_B2, "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32",
               CEILING_CC_F, CEILING_AC_R)
CEILING_MMA_OP(E5M2_m16n8k32, "m16n8k32", 16, 8, 32, e5m2, f32, uint32_t, float, 4, 2, 4, 4, fp8,
               fp32, CEILING_MMA_C4_A4_B2, "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32",
               CEILING_CC_F, CEILING_AC_R)

// One mma per warp on fragments in memory: warp w reads group w (32 lanes x NA / NB / NC registers,
// lane-major), D overwrites C. The product checks of the mma probe (one group, dense or sparse) and
// the numeric probe (thousands) run it. `metadata`: the sparse A's metadata word (ignored when dense).
template <class Op>
__global__ void mma_groups_kernel(const typename Op::AReg* a, const typename Op::AReg* b, typename Op::CReg* d,
                                  int groups, uint32_t metadata) {
  const int warp = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / 32), lane = threadIdx.x & 31;
  if (warp >= groups) return;  // whole warps only
  const size_t w = static_cast<size_t>(warp) * 32 + lane;
  typename Op::AReg ar[Op::NA], br[Op::NB];
  typename Op::CReg acc[Op::NC];
#pragma unroll
  for (int r = 0; r < Op::NA; ++r) ar[r] = a[w * Op::NA + r];
#pragma unroll
  for (int r = 0; r < Op::NB; ++r) br[r] = b[w * Op::NB + r];
#pragma unroll
  for (int r = 0; r < Op::NC; ++r) acc[r] = d[w * Op::NC + r];
  if constexpr (Op::sparse) Op::mma_meta(acc, ar, br, metadata);
  else Op::mma(acc, ar, br);
#pragma unroll
  for (int r = 0; r < Op::NC; ++r) d[w * Op::NC + r] = acc[r];
}

// Sparse A (2:4, mma.sp::ordered_metadata, PTX ISA 8.5+): A holds the compressed M x K/2 matrix
// in the dense layout of that shape (so Layout<> below serves it: NA registers of the K/2 shape),
// B and C as for the dense M x N x K. `e` is the metadata word, the sparsity selector is 0 (valid
// for every shape). mma() is the timing loop's form: every nibble 0b0100, the first two positions
// of every chunk, so the metadata's thread layout does not matter; the product check runs
// mma_meta() with each of the six valid nibbles.
#define CEILING_MMA_SP_C4_A2_B2(PTX, CC, AC)                                                \
  asm volatile(PTX " {%0,%1,%2,%3}, {%4,%5}, {%6,%7}, {%0,%1,%2,%3}, %8, 0x0;"              \
               : "+" CC(d[0]), "+" CC(d[1]), "+" CC(d[2]), "+" CC(d[3])                     \
               : AC(a[0]), AC(a[1]), AC(b[0]), AC(b[1]), "r"(e))
#define CEILING_MMA_SP_C4_A4_B4(PTX, CC, AC)                                                \
  asm volatile(PTX " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9,%10,%11}, {%0,%1,%2,%3}, %12, 0x0;" \
               : "+" CC(d[0]), "+" CC(d[1]), "+" CC(d[2]), "+" CC(d[3])                     \
               : AC(a[0]), AC(a[1]), AC(a[2]), AC(a[3]), AC(b[0]), AC(b[1]), AC(b[2]), AC(b[3]), "r"(e))

// FP16 accumulate: D and C are two registers of packed f16 pairs.
#define CEILING_MMA_SP_C2_A2_B2(PTX, CC, AC)                                                \
  asm volatile(PTX " {%0,%1}, {%2,%3}, {%4,%5}, {%0,%1}, %6, 0x0;"                           \
               : "+" CC(d[0]), "+" CC(d[1])                                                 \
               : AC(a[0]), AC(a[1]), AC(b[0]), AC(b[1]), "r"(e))
#define CEILING_MMA_SP_C2_A4_B4(PTX, CC, AC)                                                \
  asm volatile(PTX " {%0,%1}, {%2,%3,%4,%5}, {%6,%7,%8,%9}, {%0,%1}, %10, 0x0;"              \
               : "+" CC(d[0]), "+" CC(d[1])                                                 \
               : AC(a[0]), AC(a[1]), AC(a[2]), AC(a[3]), AC(b[0]), AC(b[1]), AC(b[2]), AC(b[3]), "r"(e))

#define CEILING_MMA_SP_OP(NAME, SHAPE, M_, N_, K_, A_ELEM, C_ELEM, AREG, CREG, NA_, NB_, NC_, NV_, \
                          IN_P, ACC_P, FORM, PTX, CC, AC)                                          \
  struct NAME {                                                                                    \
    static constexpr const char* shape = SHAPE;                                                    \
    static constexpr const char* ptx = PTX;                                                        \
    static constexpr int M = M_, N = N_, K = K_;                                                   \
    static constexpr Elem a_elem = Elem::A_ELEM, c_elem = Elem::C_ELEM;                             \
    static constexpr Precision input = Precision::IN_P, accumulate = Precision::ACC_P;            \
    using AReg = AREG;                                                                             \
    using CReg = CREG;                                                                             \
    static constexpr int NA = NA_, NB = NB_, NC = NC_, NV = NV_;                                   \
    static constexpr bool sparse = true;                                                           \
    static constexpr uint32_t kTimingMetadata = 0x44444444u;                                       \
    __device__ __forceinline__ static void mma_meta(CReg (&d)[NC], const AReg (&a)[NA],           \
                                                    const AReg (&b)[NB], uint32_t e) {             \
      FORM(PTX, CC, AC);                                                                           \
    }                                                                                              \
    __device__ __forceinline__ static void mma(CReg (&d)[NC], const AReg (&a)[NA],                \
                                               const AReg (&b)[NB]) {                             \
      mma_meta(d, a, b, kTimingMetadata);                                                          \
    }                                                                                              \
  };

CEILING_MMA_SP_OP(SP_F16F32_m16n8k16, "m16n8k16", 16, 8, 16, f16, f32, uint32_t, float, 2, 2, 4, 4, fp16, fp32,
                  CEILING_MMA_SP_C4_A2_B2, "mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
                  CEILING_CC_F, CEILING_AC_R)
CEILING_MMA_SP_OP(SP_F16F32_m16n8k32, "m16n8k32", 16, 8, 32, f16, f32, uint32_t, float, 4, 4, 4, 4, fp16, fp32,
                  CEILING_MMA_SP_C4_A4_B4, "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32",
                  CEILING_CC_F, CEILING_AC_R)
CEILING_MMA_SP_OP(SP_F16F16_m16n8k16, "m16n8k16", 16, 8, 16, f16, f16, uint32_t, uint32_t, 2, 2, 2, 4, fp16, fp16,
                  CEILING_MMA_SP_C2_A2_B2, "mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16",
                  CEILING_CC_R, CEILING_AC_R)
CEILING_MMA_SP_OP(SP_F16F16_m16n8k32, "m16n8k32", 16, 8, 32, f16, f16, uint32_t, uint32_t, 4, 4, 2, 4, fp16, fp16,
                  CEILING_MMA_SP_C2_A4_B4, "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f16.f16.f16.f16",
                  CEILING_CC_R, CEILING_AC_R)
CEILING_MMA_SP_OP(SP_BF16_m16n8k16, "m16n8k16", 16, 8, 16, bf16, f32, uint32_t, float, 2, 2, 4, 4, bf16, fp32,
                  CEILING_MMA_SP_C4_A2_B2, "mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
                  CEILING_CC_F, CEILING_AC_R)
CEILING_MMA_SP_OP(SP_BF16_m16n8k32, "m16n8k32", 16, 8, 32, bf16, f32, uint32_t, float, 4, 4, 4, 4, bf16, fp32,
                  CEILING_MMA_SP_C4_A4_B4, "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32",
                  CEILING_CC_F, CEILING_AC_R)
// TF32: 1:2 sparsity (one non-zero per pair of elements), metadata 0b0100 / 0b1110 per pair.
CEILING_MMA_SP_OP(SP_TF32_m16n8k8, "m16n8k8", 16, 8, 8, tf32, f32, uint32_t, float, 2, 2, 4, 4, tf32, fp32,
                  CEILING_MMA_SP_C4_A2_B2, "mma.sp::ordered_metadata.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
                  CEILING_CC_F, CEILING_AC_R)
CEILING_MMA_SP_OP(SP_TF32_m16n8k16, "m16n8k16", 16, 8, 16, tf32, f32, uint32_t, float, 4, 4, 4, 4, tf32, fp32,
                  CEILING_MMA_SP_C4_A4_B4, "mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32",
                  CEILING_CC_F, CEILING_AC_R)
CEILING_MMA_SP_OP(SP_S8_m16n8k32, "m16n8k32", 16, 8, 32, s8, s32, uint32_t, uint32_t, 2, 2, 4, 4, int8, int32,
                  CEILING_MMA_SP_C4_A2_B2, "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",
                  CEILING_CC_R, CEILING_AC_R)
CEILING_MMA_SP_OP(SP_S8_m16n8k64, "m16n8k64", 16, 8, 64, s8, s32, uint32_t, uint32_t, 4, 4, 4, 4, int8, int32,
                  CEILING_MMA_SP_C4_A4_B4, "mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.s32.s8.s8.s32",
                  CEILING_CC_R, CEILING_AC_R)
CEILING_MMA_SP_OP(SP_E4M3_m16n8k64, "m16n8k64", 16, 8, 64, e4m3, f32, uint32_t, float, 4, 4, 4, 4, fp8, fp32,
                  CEILING_MMA_SP_C4_A4_B4, "mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.f32.e4m3.e4m3.f32",
                  CEILING_CC_F, CEILING_AC_R)

// Host side of the layout rule above: which (row, col) of A / (k, n) of B / (row, col) of C a
// lane's slot and element hold.
template <class Op>
struct Layout {
  static constexpr int e = (elem_bits(Op::a_elem) >= 32) ? 1 : 32 / elem_bits(Op::a_elem);
  static constexpr int mgroups = Op::M / 8;
  static void a(int lane, int r, int j, int& row, int& col) {
    const int g = lane / 4, t = lane % 4;
    row = g + 8 * (r % mgroups);
    col = t * e + j + 4 * e * (r / mgroups);
  }
  static void b(int lane, int r, int j, int& k, int& n) {
    const int g = lane / 4, t = lane % 4;
    k = t * e + j + 4 * e * r;
    n = g;
  }
  static void c(int lane, int v, int& row, int& col) {
    const int g = lane / 4, t = lane % 4;
    row = g + 8 * (v / 2);
    col = 2 * t + v % 2;
  }
};

}  // namespace ceiling::probes::compute::mma_ops
