// Shared pieces of the compute probes (cuda-core, mma, wgmma): value encodings for the host side
// of fragment packing, one-block-per-SM launch helper, per-SM cycle reduction, JSON of results.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "../gpu/gpu.hpp"
#include "../model/descriptor.hpp"
#include "mma_report.cuh"
#include "registry.hpp"

namespace ceiling::probes::compute {

// Element encodings an operand register can hold.
enum class Elem { f64, f32, tf32, f16, bf16, e4m3, e5m2, s8, s4, s32 };

constexpr int elem_bits(Elem e) {
  switch (e) {
    case Elem::f64: return 64;
    case Elem::f32: case Elem::tf32: case Elem::s32: return 32;
    case Elem::f16: case Elem::bf16: return 16;
    case Elem::e4m3: case Elem::e5m2: case Elem::s8: return 8;
    case Elem::s4: return 4;
  }
  return 32;
}

// Bits of `v` in encoding `e` (v must be representable: callers draw small dyadic values).
inline uint64_t encode(Elem e, double v) {
  switch (e) {
    case Elem::f64: { uint64_t u; std::memcpy(&u, &v, 8); return u; }
    case Elem::f32: case Elem::tf32: { float f = static_cast<float>(v); uint32_t u; std::memcpy(&u, &f, 4); return u; }
    case Elem::f16: { __half h = __double2half(v); uint16_t u; std::memcpy(&u, &h, 2); return u; }
    case Elem::bf16: { __nv_bfloat16 h = __double2bfloat16(v); uint16_t u; std::memcpy(&u, &h, 2); return u; }
    case Elem::e4m3: { __nv_fp8_e4m3 h(static_cast<float>(v)); return h.__x; }
    case Elem::e5m2: { __nv_fp8_e5m2 h(static_cast<float>(v)); return h.__x; }
    case Elem::s8: return static_cast<uint8_t>(static_cast<int8_t>(std::lround(v)));
    case Elem::s4: return static_cast<uint64_t>(std::lround(v)) & 0xFu;
    case Elem::s32: return static_cast<uint32_t>(static_cast<int32_t>(std::lround(v)));
  }
  return 0;
}

inline double decode(Elem e, uint64_t u) {
  switch (e) {
    case Elem::f64: { double d; std::memcpy(&d, &u, 8); return d; }
    case Elem::f32: case Elem::tf32: { uint32_t x = static_cast<uint32_t>(u); float f; std::memcpy(&f, &x, 4); return f; }
    case Elem::f16: { uint16_t x = static_cast<uint16_t>(u); __half h; std::memcpy(&h, &x, 2); return __half2float(h); }
    case Elem::bf16: { uint16_t x = static_cast<uint16_t>(u); __nv_bfloat16 h; std::memcpy(&h, &x, 2); return __bfloat162float(h); }
    case Elem::s32: return static_cast<int32_t>(static_cast<uint32_t>(u));
    default: throw std::logic_error("decode: not an accumulator encoding");
  }
}

// Random value exactly representable in every input encoding and summable without rounding:
// small integers (|v| <= 3) for the narrow types, multiples of 1/256 in [-4,4] for fp64.
inline double draw_exact(Elem e, std::mt19937_64& rng) {
  if (e == Elem::f64) return static_cast<double>(static_cast<int>(rng() % 2049) - 1024) / 256.0;
  return static_cast<double>(static_cast<int>(rng() % 7) - 3);
}

// Small random value for timed loops (keeps fp16 accumulators finite over many iterations).
inline double draw_small(Elem e, std::mt19937_64& rng) {
  if (e == Elem::s8 || e == Elem::s4 || e == Elem::s32) return static_cast<double>(static_cast<int>(rng() % 7) - 3);
  const double u = static_cast<double>(rng() % 2001) / 1000.0 - 1.0;  // [-1,1]
  return u / 16.0;
}

inline std::string elem_detail(Elem e) {
  return e == Elem::e4m3 ? "e4m3" : e == Elem::e5m2 ? "e5m2" : "";
}

// Per-block [start, end] clocks (clock64 of the block's SM) -> cycles of each block.
inline std::vector<double> block_cycles(const std::vector<long long>& start_end, int blocks) {
  std::vector<double> c(blocks);
  for (int b = 0; b < blocks; ++b) c[b] = static_cast<double>(start_end[2 * b + 1] - start_end[2 * b]);
  return c;
}

// Dynamic shared memory that lets only one block reside on an SM (so "one block per SM" holds).
inline size_t one_block_per_sm_smem(int device) {
  int per_sm = 0, per_block = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const size_t want = static_cast<size_t>(per_sm) / 2 + 1024;
  return std::min(want, static_cast<size_t>(per_block));
}

}  // namespace ceiling::probes::compute
