// Intensity sweep (issue 12): y = x (M_1 + ... + M_r) row by row, k FMAs per streamed value
// (intensity_model: W = 2kn, Q = 2nD, I = k/D). Rows of w values (fp64/fp32 8, fp16 16) are stored
// in blocks of 32 rows, each block as 16-byte column groups: value i of row R sits at
//   (R/32)*32w + (i/V)*32V + (R%32)*V + i%V,   V = 16/D values per 16-byte vector,
// so that one row per thread (CUDA cores) and tensor-core fragments (rows g, g+8 of a 16-row tile)
// both load whole 128-byte segments. Both units compute the same y from the same matrices.
// k >= w: r = k/w applications of one dense w x w matrix M (the same M_j = M for every j, a
// compile-time constant: matrix_entry_value), multiplied one after another into one accumulator
// (no compiler may fold an FMA chain); k < w: one block-diagonal matrix (k x k blocks, k non-zeros
// per column), which the CUDA cores skip and the tensor cores multiply in full (tensor_core_fraction k/w).
// CUDA cores: k < 16 one row per thread (fp64/fp32 k <= 4 and fp16 k <= 8: one k-block per thread, as
// SCALE one 16-byte vector per thread), the matrices in __constant__; k >= 16 staged kernels (several
// rows per thread, matrices in shared memory) and the immediate kernel (M's entries as instruction
// immediates), the faster of the two timed once per instance; fp16 accumulates in fp16
// (HFMA2). Tensor cores: FP64 mma.m16n8k8 (sm_90; four
// m8n8k4 elsewhere) and FP16 mma.m16n8k16 with FP16 accumulate (as the HFMA2 side and as the wgmma
// probe that filled compute.tensor_core.fp16); a warp multiplies four independent 16-row tiles per
// step (ILP 4; two in 2-warp blocks where that spreads the rows over the schedulers better,
// kernels/work_units.hpp) against B fragments staged once per block in shared memory; persistent grid.
// Matrix entries s (16+u)/16 2^-e (u < 16, e = 1 + ceil(log2 k / 2)) are exact in fp16, fp32
// and fp64 and keep |y| near 0.5 sqrt(r) for every k; fp16 inputs are 11-bit values in [0.25, 1).
#include <cuda_fp16.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common.cuh"
#include "gpu/gpu.hpp"
#include "runner.hpp"
#include "verify.hpp"
#include "work_units.hpp"

namespace ceiling::kernels {
namespace {

constexpr int kCcThreads = 256;
constexpr int kTcThreads = 256;  // 8 warps at most (kernels/work_units.hpp intensity_tc_launch: 2 or 8)
constexpr int kMaxK = 4096;       // the immediate and tensor-core kernels; the staged ones stop at 256
constexpr int kStagedMaxK = 256;  // staged kernels: r matrices in shared memory (static, <= 48 KiB)
constexpr int kConstantEntries = 2048;  // the k < 16 kernels (r = 1): w * w entries or half2 pairs
constexpr const char* kLdg128 = "LDG\\.E[A-Z0-9.]*\\.128";

template <class T> CEILING_HOST_DEVICE constexpr int row_width() { return sizeof(T) == 2 ? 16 : 8; }
template <class T> CEILING_HOST_DEVICE constexpr int vec_values() { return 16 / static_cast<int>(sizeof(T)); }

// Where value i of row `row` lives (the blocked layout above), in values.
template <class T>
CEILING_HOST_DEVICE inline long long value_index(long long row, int i) {
  constexpr int W = row_width<T>(), V = vec_values<T>();
  return (row >> 5) * (32LL * W) + (i / V) * (32 * V) + (row & 31) * V + i % V;
}

// Inputs exact in T, identical on host and device: fp16 keeps 11 significant bits.
template <class T>
CEILING_HOST_DEVICE inline double input_value(std::uint64_t seed, long long i) {
  const double z = random_value(seed, static_cast<std::uint64_t>(i));
  if constexpr (sizeof(T) == 2) {
    const double q = std::floor(std::fabs(z) * 2048.0) / 2048.0;  // [0.25, 1) in steps of 2^-11
    return z < 0 ? -q : q;
  } else {
    return static_cast<double>(static_cast<T>(z));
  }
}

template <class T>
__global__ void intensity_fill(T* __restrict__ p, long long n, std::uint64_t seed) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    if constexpr (sizeof(T) == 2) p[i] = __float2half_rn(static_cast<float>(input_value<T>(seed, i)));
    else p[i] = static_cast<T>(input_value<T>(seed, i));
  }
}

// The matrix of k: M[i][c] = s (16 + u) / 16 2^-e with u < 16 and the sign s drawn from a hash of
// (k, i, c), e = 1 + ceil(log2 k / 2); k < w: block-diagonal (k x k blocks). A compile-time constant,
// so the CUDA-core kernels at k >= kImmMinK take its entries as instruction immediates (below), and
// the same for every seed: the inputs x are the fresh random data of each check.
CEILING_HOST_DEVICE constexpr std::uint64_t entry_hash(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
CEILING_HOST_DEVICE constexpr int entry_exponent(int k) {
  int l = 0;
  while ((1 << l) < k) ++l;
  return 1 + (l + 1) / 2;  // 1 + ceil(log2 k / 2), k a power of two
}
CEILING_HOST_DEVICE constexpr double matrix_entry_value(int k, int w, int i, int c) {
  const int blk = k < w ? k : w;
  if (i / blk != c / blk) return 0.0;
  const std::uint64_t h = entry_hash(static_cast<std::uint64_t>(k) * 1000003u + static_cast<std::uint64_t>(i) * 131u +
                                     static_cast<std::uint64_t>(c));
  double v = (16.0 + static_cast<double>(h & 15)) / 16.0;
  for (int q = 0; q < entry_exponent(k); ++q) v /= 2;
  return (h >> 4) & 1 ? -v : v;
}
static_assert(matrix_entry_value(256, 8, 3, 5) != 0 && matrix_entry_value(2, 8, 0, 2) == 0, "block-diagonal below w");

// y = x (M_1 + ... + M_r), M_j = M for every j: M_j[i][c] at (j*w + i)*w + c, j < r = max(1, k/w).
// The kernels still multiply r times (k FMAs per value; no compiler folds FMA chains), and the
// sum of the r copies is exact (5-bit entries, r a power of two).
std::vector<double> make_matrices(int k, int w) {
  const int r = std::max(1, k / w);
  std::vector<double> m(static_cast<size_t>(r) * w * w, 0.0);
  for (size_t idx = 0; idx < m.size(); ++idx)
    m[idx] = matrix_entry_value(k, w, static_cast<int>(idx / w % w), static_cast<int>(idx % w));
  return m;
}

__constant__ double c_m_fp64[kConstantEntries];
__constant__ float c_m_fp32[kConstantEntries];
__constant__ __half2 c_m_fp16[kConstantEntries];
// Which instance's matrices the constant banks hold (a counter drawn at randomize, never reused).
unsigned long long g_constant_generation = 0, g_next_generation = 1;

// ---- CUDA cores: one row per thread ----------------------------------------------------------

template <class T> __device__ __forceinline__ T matrix_entry(int idx);
template <> __device__ __forceinline__ double matrix_entry<double>(int idx) { return c_m_fp64[idx]; }
template <> __device__ __forceinline__ float matrix_entry<float>(int idx) { return c_m_fp32[idx]; }

// acc[c] += x[i] * M_j[i][c] over j, then i in c's block; K and W known at compile time, so every
// matrix entry is an immediate c[][] operand.
template <class T, int K, int W>
__device__ __forceinline__ void row_products(const T (&x)[W], T (&acc)[W]) {
  constexpr int R = K >= W ? K / W : 1, BLK = K >= W ? W : K;
#pragma unroll
  for (int c = 0; c < W; ++c) acc[c] = T(0);
// i outside c: the W accumulators are updated back to back (independent), not one chain at a
// time; each accumulator still sums j, then i in order.
#pragma unroll
  for (int j = 0; j < R; ++j)
#pragma unroll
    for (int i = 0; i < W; ++i)
#pragma unroll
      for (int c = (i / BLK) * BLK; c < (i / BLK) * BLK + BLK; ++c) acc[c] = fma(x[i], matrix_entry<T>((j * W + i) * W + c), acc[c]);
}

template <int K, bool Streaming>
__global__ void __launch_bounds__(kCcThreads) intensity_cuda_core_fp64(const double2* __restrict__ x,
                                                                       double2* __restrict__ y, long long rows) {
  constexpr int W = 8, NV = W / 2;
  const long long row = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const long long base = (row >> 5) * (32 * NV) + (row & 31);
  double xv[W], acc[W];
#pragma unroll
  for (int v = 0; v < NV; ++v) {
    const double2 t = load_stream<Streaming>(x + base + 32 * v);
    xv[2 * v] = t.x;
    xv[2 * v + 1] = t.y;
  }
  row_products<double, K, W>(xv, acc);
#pragma unroll
  for (int v = 0; v < NV; ++v) store_stream<Streaming>(y + base + 32 * v, make_double2(acc[2 * v], acc[2 * v + 1]));
}

template <int K, bool Streaming>
__global__ void __launch_bounds__(kCcThreads) intensity_cuda_core_fp32(const float4* __restrict__ x,
                                                                       float4* __restrict__ y, long long rows) {
  constexpr int W = 8, NV = W / 4;
  const long long row = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const long long base = (row >> 5) * (32 * NV) + (row & 31);
  float xv[W], acc[W];
#pragma unroll
  for (int v = 0; v < NV; ++v) {
    const float4 t = load_stream<Streaming>(x + base + 32 * v);
    xv[4 * v] = t.x;
    xv[4 * v + 1] = t.y;
    xv[4 * v + 2] = t.z;
    xv[4 * v + 3] = t.w;
  }
  row_products<float, K, W>(xv, acc);
#pragma unroll
  for (int v = 0; v < NV; ++v)
    store_stream<Streaming>(y + base + 32 * v, make_float4(acc[4 * v], acc[4 * v + 1], acc[4 * v + 2], acc[4 * v + 3]));
}

// ---- CUDA cores, compute-bound k (>= 16): several rows per thread, next rows in flight ----------
// One entry per FMA from __constant__ costs an issue slot (ULDC per DFMA, ULDC.64 per two FFMA)
// or, for HFMA2, a register load (LDC) per instruction: at large k the CUDA cores then ran at
// 1/8 (fp16) to 1/2 of their peak. Here a warp owns a group of wide_rows<T>() blocks of 32 rows
// (lane = row in each block); the matrices are staged once per block in shared memory and read as
// 16-byte broadcasts, each entry feeding wide_rows FMAs (one LDS.128 per 8 DFMA or 16 FFMA/HFMA2).
// Persistent grid: each warp walks groups with a stride, loading its next group before computing
// the current one, so memory and the FMA pipes overlap (one row group per launch left them in
// lock-step: load, then compute). Same sums in the same order as the one-row kernels.
constexpr int kWideThreads = 128;
constexpr int kWideMinK = 16;
template <class T> CEILING_HOST_DEVICE constexpr int wide_rows() { return sizeof(T) == 8 ? 2 : 4; }

// Bit-exact views of 16-byte vectors (registers, no memory round trip).
__device__ __forceinline__ unsigned word(const uint4& v, int e) { return e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w; }
template <class T> __device__ __forceinline__ T element(const uint4& v, int e);
template <> __device__ __forceinline__ double element<double>(const uint4& v, int e) {
  return __hiloint2double(static_cast<int>(word(v, 2 * e + 1)), static_cast<int>(word(v, 2 * e)));
}
template <> __device__ __forceinline__ float element<float>(const uint4& v, int e) { return __uint_as_float(word(v, e)); }
template <> __device__ __forceinline__ __half2 element<__half2>(const uint4& v, int e) {
  const unsigned u = word(v, e);
  return *reinterpret_cast<const __half2*>(&u);
}
__device__ __forceinline__ unsigned bits(double v, int half) {
  return static_cast<unsigned>(half ? __double2hiint(v) : __double2loint(v));
}
__device__ __forceinline__ uint4 pack(double a, double b) { return make_uint4(bits(a, 0), bits(a, 1), bits(b, 0), bits(b, 1)); }
__device__ __forceinline__ uint4 pack(float a, float b, float c, float d) {
  return make_uint4(__float_as_uint(a), __float_as_uint(b), __float_as_uint(c), __float_as_uint(d));
}
__device__ __forceinline__ unsigned bits(__half2 h) { return *reinterpret_cast<const unsigned*>(&h); }

// ---- CUDA cores, k values below a row (fp64 k <= 4, fp32 k <= 4, fp16 k <= 8): a thread per k x k block ----
// The block-diagonal M of k < w couples only the values of one k-block, so a thread needs S =
// max(1, k/V) of its row's 16-byte vectors, not all w/V: threads are vectors/S, and at S = 1
// thread t reads vector t (SCALE's layout: one 16-byte vector per thread). One row per thread
// (4 vectors, a quarter of the threads) ran intensity fp64 k = 1 in the L2 at 13.2 MB in 5.09 us
// where the tensor-core kernel took 4.29 and SCALE ~4.0 (H100, 2026-11-27). Same sums in the same
// order as the one-row kernels.
template <class T> CEILING_HOST_DEVICE constexpr int vec_threads_vectors(int k) {
  return k <= vec_values<T>() ? 1 : k / vec_values<T>();
}
// Whether k runs on a k-block kernel (the launch and launch_text both ask this): k below a row and a
// thread's vectors fewer than the row's (fp64 k <= 4, fp32 k <= 4, fp16 k <= 8).
template <class T> CEILING_HOST_DEVICE constexpr bool vec_kernel_takes(int k) {
  return k < row_width<T>() && vec_threads_vectors<T>(k) < row_width<T>() / vec_values<T>();
}
static_assert(vec_kernel_takes<double>(4) && !vec_kernel_takes<double>(8) && vec_kernel_takes<float>(4) &&
                  !vec_kernel_takes<float>(8) && vec_kernel_takes<__half>(8) && !vec_kernel_takes<__half>(16),
              "the k-block kernels' range");
template <class T, int K, bool Streaming>
__global__ void __launch_bounds__(kCcThreads) intensity_cuda_core_vec(const uint4* __restrict__ x, uint4* __restrict__ y,
                                                                      long long vectors) {
  constexpr int W = row_width<T>(), V = vec_values<T>(), NV = W / V;
  constexpr int S = vec_threads_vectors<T>(K), P = NV / S;  // vectors per thread, threads per row
  static_assert(sizeof(T) >= 4 && K < W && S < NV, "the vector kernel takes k-blocks narrower than a row");
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= vectors / S) return;
  const int p = static_cast<int>((t >> 5) % P);  // warp-uniform: which S vectors of the rows
  const long long base = (t / (32 * P)) * (32 * NV) + p * S * 32 + (t & 31);
  T xv[S * V], acc[S * V];
#pragma unroll
  for (int q = 0; q < S; ++q) {
    const uint4 u = load_stream<Streaming>(x + base + 32 * q);
#pragma unroll
    for (int e = 0; e < V; ++e) xv[q * V + e] = element<T>(u, e);
  }
  const int off = p * S * V;  // the row's first value this thread holds
#pragma unroll
  for (int c = 0; c < S * V; ++c) acc[c] = T(0);
#pragma unroll
  for (int i = 0; i < S * V; ++i)
#pragma unroll
    for (int c = (i / K) * K; c < (i / K) * K + K; ++c) acc[c] = fma(xv[i], matrix_entry<T>((off + i) * W + off + c), acc[c]);
#pragma unroll
  for (int q = 0; q < S; ++q) {
    if constexpr (sizeof(T) == 8) store_stream<Streaming>(y + base + 32 * q, pack(acc[2 * q], acc[2 * q + 1]));
    else store_stream<Streaming>(y + base + 32 * q, pack(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]));
  }
}

// fp16 (every k below a row: k <= 8): one 16-byte vector (8 values, 4 half2 pairs) per thread, two
// threads per 16-value row; outputs in pairs (2p, 2p+1), HFMA2 with the input broadcast to both
// halves; k = 1 pairs (x_2p, x_2p+1) with the diagonal (M[2p][2p], M[2p+1][2p+1]). Accumulates in
// fp16. Against one 16-value row per thread (H200 GPU-ebc0bb8f, 2026-11-27, old/new time, min of 2
// validate runs each): out of L2 1.028-1.037 at k = 1..8; in the L2 k = 4 1.048, k = 8 1.044, k = 2
// 0.988, k = 1 0.949 (3.75 -> 3.95 us, 96.6% of the tight bound).
template <int K, bool Streaming>
__global__ void __launch_bounds__(kCcThreads) intensity_cuda_core_vec_fp16(const uint4* __restrict__ x, uint4* __restrict__ y,
                                                                           long long vectors) {
  constexpr int W = row_width<__half>(), V = vec_values<__half>(), NV = W / V, P = W / 2;
  static_assert(vec_kernel_takes<__half>(K) && vec_threads_vectors<__half>(K) == 1, "one vector per thread");
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= vectors) return;
  const int p = static_cast<int>((t >> 5) % NV);  // warp-uniform: which vector of the rows
  const long long base = (t / (32 * NV)) * (32 * NV) + p * 32 + (t & 31);
  const uint4 u = load_stream<Streaming>(x + base);
  __half2 xv[V / 2], acc[V / 2];
#pragma unroll
  for (int q = 0; q < V / 2; ++q) xv[q] = element<__half2>(u, q);
  const __half2 zero = __float2half2_rn(0.0f);
#pragma unroll
  for (int q = 0; q < V / 2; ++q) acc[q] = zero;
  const int off = p * V;  // the row's first value this thread holds; its first pair is off / 2
  if constexpr (K == 1) {
#pragma unroll
    for (int q = 0; q < V / 2; ++q) acc[q] = __hfma2(xv[q], c_m_fp16[off / 2 + q], acc[q]);
  } else {
#pragma unroll
    for (int i = 0; i < V; ++i) {
      const __half2 xi = (i & 1) ? __high2half2(xv[i / 2]) : __low2half2(xv[i / 2]);
#pragma unroll
      for (int q = (i / K) * K / 2; q < ((i / K) * K + K) / 2; ++q)
        acc[q] = __hfma2(xi, c_m_fp16[(off + i) * P + off / 2 + q], acc[q]);
    }
  }
  store_stream<Streaming>(y + base, make_uint4(bits(acc[0]), bits(acc[1]), bits(acc[2]), bits(acc[3])));
}

// FP32 at k >= 64: x read and y written as 4-byte words, not 16-byte vectors. An FFMA here
// reads its accumulator and one of x or the matrix entry from the register file (the third
// operand comes from the reuse cache), and two reads from registers of the same parity cost an
// extra cycle (register-file banks). A 16-byte load or store pins its four registers to an aligned
// quad (fixed parities); word by word ptxas may put x and the accumulators anywhere. H100 scratch
// bench (2026-11-26, docs/NOTES.md): same-bank pairs in the FFMA loop 67% -> 49% of the FFMAs and
// FP32 k = 256 out of L2 59.6% -> 65.2% of the FFMA peak (the count predicted 56% and 65%).
// validate on an H100: FP32 k = 64 / 128 / 256 out of L2 66.0 / 55.6 / 58.0% -> 70.9 / 61.9 / 66.7% of
// the tight bound. The FP16 kernel (HFMA2) the same way was not faster (45-55% either way): not used.
template <bool Streaming>
__device__ __forceinline__ uint4 load_words(const uint4* p) {
  const unsigned* w = reinterpret_cast<const unsigned*>(p);
  unsigned v[4];
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    if constexpr (Streaming) asm("ld.global.cs.b32 %0, [%1];" : "=r"(v[e]) : "l"(w + e));
    else asm("ld.global.nc.b32 %0, [%1];" : "=r"(v[e]) : "l"(w + e));
  }
  return make_uint4(v[0], v[1], v[2], v[3]);
}
template <bool Streaming>
__device__ __forceinline__ void store_words(uint4* p, const uint4& v) {
  unsigned* w = reinterpret_cast<unsigned*>(p);
  const unsigned u[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    if constexpr (Streaming) asm volatile("st.global.cs.b32 [%0], %1;" ::"l"(w + e), "r"(u[e]) : "memory");
    else asm volatile("st.global.b32 [%0], %1;" ::"l"(w + e), "r"(u[e]) : "memory");
  }
}
constexpr int kWordsMinK = 64;
template <bool Words, bool Streaming>
__device__ __forceinline__ uint4 wide_load(const uint4* p) {
  if constexpr (Words) return load_words<Streaming>(p);
  else return load_stream<Streaming>(p);
}
template <bool Words, bool Streaming>
__device__ __forceinline__ void wide_store(uint4* p, const uint4& v) {
  if constexpr (Words) store_words<Streaming>(p, v);
  else store_stream<Streaming>(p, v);
}

// x of row group grp (G blocks of 32 rows; lane = row, NV 16-byte vectors per row) into v; zeros past
// the last group or row block (computed on, never stored). The wide and immediate kernels' loads.
template <int G, int NV, bool Words, bool Streaming>
__device__ __forceinline__ void load_row_group(uint4 (&v)[G][NV], const uint4* __restrict__ x, long long grp,
                                               long long groups, long long row_blocks, int lane) {
#pragma unroll
  for (int q = 0; q < G; ++q)
#pragma unroll
    for (int e = 0; e < NV; ++e)
      v[q][e] = grp < groups && grp * G + q < row_blocks ? wide_load<Words, Streaming>(x + (grp * G + q) * (32 * NV) + lane + 32 * e)
                                                         : make_uint4(0, 0, 0, 0);
}

// The body of both wide kernels (Words: x and y as 4-byte words, above).
template <class T, int K, bool Streaming, bool Words>
__device__ __forceinline__ void wide_body(const uint4* __restrict__ x, uint4* __restrict__ y, long long row_blocks,
                                          const uint4* __restrict__ mats) {
  constexpr int W = row_width<T>(), NV = W * static_cast<int>(sizeof(T)) / 16;  // 16-byte vectors per row
  constexpr int R = K / W, G = wide_rows<T>();
  constexpr int MV = NV;  // 16-byte vectors per matrix row (fp16: 8 HFMA2 pairs in 2 vectors)
  static_assert(K >= W && K % W == 0, "wide kernel: whole matrices");
  __shared__ uint4 m_s[R * W * MV];
  for (int i = threadIdx.x; i < R * W * MV; i += blockDim.x) m_s[i] = mats[i];
  __syncthreads();
  const int lane = threadIdx.x & 31;
  const long long groups = (row_blocks + G - 1) / G;
  const long long stride = static_cast<long long>(gridDim.x) * (kWideThreads / 32);
  long long g = static_cast<long long>(blockIdx.x) * (kWideThreads / 32) + (threadIdx.x >> 5);
  const auto load = [&](uint4 (&v)[G][NV], long long grp) { load_row_group<G, NV, Words, Streaming>(v, x, grp, groups, row_blocks, lane); };
  uint4 xv[G][NV], xn[G][NV];
  load(xv, g);
  for (; g < groups; g += stride) {
    load(xn, g + stride);
    if constexpr (sizeof(T) == 2) {
      constexpr int P = W / 2;
      __half2 acc[G][P];
#pragma unroll
      for (int q = 0; q < G; ++q)
#pragma unroll
        for (int p = 0; p < P; ++p) acc[q][p] = __float2half2_rn(0.0f);
#pragma unroll 1
      for (int j = 0; j < R; ++j)
#pragma unroll
        for (int ip = 0; ip < W / 2; ++ip)  // inputs 2ip (low half) and 2ip + 1 (high half): no select
#pragma unroll
          for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int mv = 0; mv < MV; ++mv) {
              const uint4 m4 = m_s[(j * W + 2 * ip + h) * MV + mv];
#pragma unroll
              for (int q = 0; q < G; ++q) {
                const __half2 xw = element<__half2>(xv[q][ip / 4], ip % 4);
                const __half2 xi = h ? __high2half2(xw) : __low2half2(xw);
#pragma unroll
                for (int e = 0; e < 4; ++e) acc[q][mv * 4 + e] = __hfma2(xi, element<__half2>(m4, e), acc[q][mv * 4 + e]);
              }
              // One matrix (no j loop): keep ptxas from hoisting every LDS.128 ahead (it spilled).
              if constexpr (R == 1) asm volatile("" ::: "memory");
            }
#pragma unroll
      for (int q = 0; q < G; ++q) {
        if (g * G + q >= row_blocks) continue;
#pragma unroll
        for (int v = 0; v < NV; ++v)
          wide_store<Words, Streaming>(y + (g * G + q) * (32 * NV) + lane + 32 * v,
                                  make_uint4(bits(acc[q][4 * v]), bits(acc[q][4 * v + 1]), bits(acc[q][4 * v + 2]),
                                             bits(acc[q][4 * v + 3])));
      }
    } else {
      constexpr int E = 16 / static_cast<int>(sizeof(T));  // values per vector
      T acc[G][W];
#pragma unroll
      for (int q = 0; q < G; ++q)
#pragma unroll
        for (int c = 0; c < W; ++c) acc[q][c] = T(0);
#pragma unroll 1
      for (int j = 0; j < R; ++j)
#pragma unroll
        for (int i = 0; i < W; ++i)
#pragma unroll
          for (int mv = 0; mv < MV; ++mv) {
            const uint4 m4 = m_s[(j * W + i) * MV + mv];
#pragma unroll
            for (int q = 0; q < G; ++q) {
              const T xi = element<T>(xv[q][i / E], i % E);
#pragma unroll
              for (int e = 0; e < E; ++e) acc[q][mv * E + e] = fma(xi, element<T>(m4, e), acc[q][mv * E + e]);
            }
          }
#pragma unroll
      for (int q = 0; q < G; ++q) {
        if (g * G + q >= row_blocks) continue;
#pragma unroll
        for (int v = 0; v < NV; ++v) {
          if constexpr (sizeof(T) == 8)
            wide_store<Words, Streaming>(y + (g * G + q) * (32 * NV) + lane + 32 * v, pack(acc[q][2 * v], acc[q][2 * v + 1]));
          else
            wide_store<Words, Streaming>(y + (g * G + q) * (32 * NV) + lane + 32 * v,
                                    pack(acc[q][4 * v], acc[q][4 * v + 1], acc[q][4 * v + 2], acc[q][4 * v + 3]));
        }
      }
    }
#pragma unroll
    for (int q = 0; q < G; ++q)
#pragma unroll
      for (int e = 0; e < NV; ++e) xv[q][e] = xn[q][e];
  }
}

template <class T, int K, bool Streaming>
__global__ void __launch_bounds__(kWideThreads, 3) intensity_cuda_core_wide(const uint4* __restrict__ x, uint4* __restrict__ y,
                                                                         long long row_blocks,
                                                                         const uint4* __restrict__ mats) {
  wide_body<T, K, Streaming, false>(x, y, row_blocks, mats);
}
template <class T, int K, bool Streaming>
__global__ void __launch_bounds__(kWideThreads, 3) intensity_cuda_core_wide_words(const uint4* __restrict__ x,
                                                                               uint4* __restrict__ y, long long row_blocks,
                                                                               const uint4* __restrict__ mats) {
  wide_body<T, K, Streaming, true>(x, y, row_blocks, mats);
}

// ---- CUDA cores, FP64, k >= 64: the 8 columns split between the two half-warps -------------------
// The wide kernel above reached 61-66% of the FP64 peak at k = 64-256 on an H200 (2 row blocks per
// warp, 138 registers, 3 blocks of 128). Here lane l of a warp computes rows l % 16 and l % 16 + 16
// of each of its kSplitBlocks = 3 row blocks (6 rows) for columns 4 (l / 16) .. + 3: per (j, i) two
// 16-byte broadcast reads of the matrix feed 24 DFMA, and the accumulators (6 x 4) and inputs (6 x 8)
// fit in 168 registers (166 on sm_90), three blocks of 128 per SM. Persistent grid; the groups of 3
// row blocks are handed out dynamically (a ticket counter, below), not by a static stride.
// H100 scratch bench (GPU-86a09983, 2026-11-26, docs/NOTES.md), this body with 3 row blocks,
// __launch_bounds__(128, 3) and dynamic groups: 68.5 / 76.9 / 79.6% of the FP64 peak at k = 64 / 128
// / 256 out of L2 (the previous 4 row blocks, 2 blocks per SM, static stride: 59.1 / 70.8 / 75.8%),
// 48.5 / 64.4 / 71.8% in L2; y bit for bit the wide kernel's (same sums, same order).
constexpr int kSplitBlocks = 3;
constexpr int kSplitMinK = 64;

// Ticket counter of the split kernel's dynamic scheduling, 0 between launches. In a launch every
// warp takes tickets (lane 0: atomicAdd, broadcast to the warp), computes group `ticket` while it
// is below `groups`, and exits at its first ticket >= groups. The counter only grows during the
// launch, so the tickets taken are 0, 1, ..., N - 1 with no gap or repeat; each of the T = gridDim.x
// * kWideThreads / 32 warps takes exactly one failing ticket (every warp fetches at least once: no
// early return), so N > groups, every group 0 .. groups - 1 is computed exactly once, and
// N = groups + T. The warp holding ticket groups + T - 1 took the last ticket of the launch: every
// other atomicAdd on the counter came before its own (they returned smaller values) and none comes
// after, so it resets the counter to 0 (atomicExch) and no ticket of this launch is lost. Launches
// on one stream run one after another and a kernel's global writes are visible to the next, so
// the next launch starts from 0 with no host-side reset (nothing added to the timed loop), whatever
// its grid or group count. (As spmv_common.cuh's finish_piece counters; two split launches must not
// run concurrently on one device: every launch here is issued on one stream.)
__device__ unsigned long long g_split_ticket = 0;

template <int K, bool Streaming>
__global__ void __launch_bounds__(kWideThreads, 3) intensity_cuda_core_fp64_split(const uint4* __restrict__ x, uint4* __restrict__ y,
                                                                               long long row_blocks,
                                                                               const uint4* __restrict__ mats) {
  constexpr int W = 8, NV = 4, R = K / W, G = kSplitBlocks, RT = 2 * G;  // rows per thread
  static_assert(K >= W && K % W == 0, "split kernel: whole matrices");
  __shared__ uint4 m_s[R * W * NV];
  for (int i = threadIdx.x; i < R * W * NV; i += blockDim.x) m_s[i] = mats[i];
  __syncthreads();
  const int lane = threadIdx.x & 31, half = lane >> 4, r16 = lane & 15;
  const long long groups = (row_blocks + G - 1) / G;
  const unsigned long long last_ticket =
      static_cast<unsigned long long>(groups) + static_cast<unsigned long long>(gridDim.x) * (kWideThreads / 32) - 1;
  const auto next_ticket = [&] {
    unsigned long long t = 0;
    if (lane == 0) t = atomicAdd(&g_split_ticket, 1ULL);
    return __shfl_sync(0xffffffffu, t, 0);
  };
  for (unsigned long long ticket = next_ticket();; ticket = next_ticket()) {
    if (ticket >= static_cast<unsigned long long>(groups)) {
      if (lane == 0 && ticket == last_ticket) atomicExch(&g_split_ticket, 0ULL);  // the launch's last ticket
      break;
    }
    const long long g = static_cast<long long>(ticket);
    double xs[RT][W];
#pragma unroll
    for (int q = 0; q < G; ++q)
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int e = 0; e < NV; ++e) {
          const uint4 v = g * G + q < row_blocks ? load_stream<Streaming>(x + (g * G + q) * (32 * NV) + r16 + 16 * h + 32 * e)
                                                 : make_uint4(0, 0, 0, 0);  // computed on zeros, never stored
          xs[2 * q + h][2 * e] = element<double>(v, 0);
          xs[2 * q + h][2 * e + 1] = element<double>(v, 1);
        }
    double acc[RT][4];
#pragma unroll
    for (int t = 0; t < RT; ++t)
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[t][c] = 0.0;
#pragma unroll 1
    for (int j = 0; j < R; ++j)
#pragma unroll
      for (int i = 0; i < W; ++i) {
        const uint4 m0 = m_s[(j * W + i) * NV + 2 * half], m1 = m_s[(j * W + i) * NV + 2 * half + 1];
#pragma unroll
        for (int t = 0; t < RT; ++t) {
          acc[t][0] = fma(xs[t][i], element<double>(m0, 0), acc[t][0]);
          acc[t][1] = fma(xs[t][i], element<double>(m0, 1), acc[t][1]);
          acc[t][2] = fma(xs[t][i], element<double>(m1, 0), acc[t][2]);
          acc[t][3] = fma(xs[t][i], element<double>(m1, 1), acc[t][3]);
        }
      }
    // Columns 4 half .. 4 half + 3 of a row are its vectors 2 half and 2 half + 1.
#pragma unroll
    for (int q = 0; q < G; ++q) {
      if (g * G + q >= row_blocks) continue;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int t = 2 * q + h;
        uint4* base = y + (g * G + q) * (32 * NV) + r16 + 16 * h;
        store_stream<Streaming>(base + 32 * (2 * half), pack(acc[t][0], acc[t][1]));
        store_stream<Streaming>(base + 32 * (2 * half + 1), pack(acc[t][2], acc[t][3]));
      }
    }
  }
}

// ---- CUDA cores, k >= kImmMinK: the matrix as instruction immediates ------------------------------
// M is a compile-time constant (matrix_entry_value), so every FMA takes its entry as an immediate
// and reads one register-file operand, its accumulator: x comes from the operand reuse cache (the
// loop runs the w accumulators of one input back to back), nothing is read from shared memory and
// no two register reads can share a bank (what held the staged kernels above at 46-75% of the peak).
// fp16: the inputs are broadcast to both halves of a register once per row group (PRMT), so HFMA2
// needs no .H0_H0/.H1_H1 operand selector; with the selector ptxas issued every HFMA2 to one FP16
// pipe (48% of the peak), without it half of them as HFMA2.MMA, the other pipe.
// A warp owns imm_rows<T>() blocks of 32 rows (lane = row), persistent grid, the next group's x
// loaded before this group's FMAs. H100 scratch bench (2026-11-26, GPU-c5460912 and GPU-01bedae4,
// out of L2, medians of 15, y checked exactly against a CPU replay): k = 256 fp64 92.0%, fp32
// 90.8%, fp16 90.4% of the calibrated peaks; k = 128 85.6 / 84.6 / 82.6% (near the ridge).
// From k = 16 (r = 2 fp64/fp32 matrices, one fp16): at k = 16 the staged kernels ran 5.45 us (fp32)
// and 5.57 us (fp16) on 14.7 MB in the L2 of an H200 (GPU-455b4e05, 2026-11-27), slower than the
// immediates at k = 32 (4.93 / 4.96 us) with twice the FMAs; the tuner keeps the faster.
constexpr int kImmMinK = 16;
template <class T> CEILING_HOST_DEVICE constexpr int imm_rows() { return sizeof(T) == 4 ? 4 : 2; }

template <int N, class F>
__device__ __forceinline__ void static_for(F&& f) {
  [&]<int... I>(std::integer_sequence<int, I...>) { (f(std::integral_constant<int, I>{}), ...); }(std::make_integer_sequence<int, N>{});
}
template <class T, int K, int W, int I, int C>
__device__ __forceinline__ T immediate() {
  constexpr double v = matrix_entry_value(K, W, I, C);
  return static_cast<T>(v);
}
// fp16 bits of an entry (normal, 5 significant bits: exact), at compile time; 0 for 0.
CEILING_HOST_DEVICE constexpr unsigned exact_half_bits(double v) {
  if (v == 0) return 0;
  const unsigned sign = v < 0 ? 0x8000u : 0u;
  double a = v < 0 ? -v : v;
  int e = 0;
  while (a >= 2) { a /= 2; ++e; }
  while (a < 1) { a *= 2; --e; }
  return sign | static_cast<unsigned>(e + 15) << 10 | static_cast<unsigned>((a - 1.0) * 1024.0);
}
template <int K, int I, int P>
__device__ __forceinline__ __half2 immediate_pair() {  // (M[I][2P], M[I][2P+1]) as one 32-bit immediate
  constexpr unsigned lo = exact_half_bits(matrix_entry_value(K, 16, I, 2 * P));
  constexpr unsigned hi = exact_half_bits(matrix_entry_value(K, 16, I, 2 * P + 1));
  __half2_raw r;
  r.x = static_cast<unsigned short>(lo);
  r.y = static_cast<unsigned short>(hi);
  return __half2(r);
}

// G: row blocks per warp, imm_rows<T>() or 1 (where that balances the schedulers better: in the L2,
// kernels/work_units.hpp intensity_imm_group).
template <class T, int K, bool Streaming, int G = imm_rows<T>()>
__global__ void __launch_bounds__(kWideThreads) intensity_cuda_core_imm(const uint4* __restrict__ x, uint4* __restrict__ y,
                                                                     long long row_blocks) {
  constexpr int W = row_width<T>(), NV = W * static_cast<int>(sizeof(T)) / 16, R = K / W;
  static_assert(K >= W && K % W == 0, "immediate kernel: whole matrices");
  const int lane = threadIdx.x & 31;
  const long long groups = (row_blocks + G - 1) / G;
  const long long stride = static_cast<long long>(gridDim.x) * (kWideThreads / 32);
  long long g = static_cast<long long>(blockIdx.x) * (kWideThreads / 32) + (threadIdx.x >> 5);
  const auto load = [&](uint4 (&v)[G][NV], long long grp) { load_row_group<G, NV, false, Streaming>(v, x, grp, groups, row_blocks, lane); };
  uint4 xv[G][NV], xn[G][NV];
  load(xv, g);
  for (; g < groups; g += stride) {
    load(xn, g + stride);
    uint4 out[G][NV];
    if constexpr (sizeof(T) == 2) {
      __half2 xb[G][W], acc[G][W / 2];
#pragma unroll
      for (int q = 0; q < G; ++q) {
#pragma unroll
        for (int i = 0; i < W; ++i) {  // input i in both halves: bytes 0,1 (even i) or 2,3 (odd i) of its word
          unsigned b;
          asm volatile("prmt.b32 %0, %1, 0, %2;" : "=r"(b) : "r"(word(xv[q][i / 8], (i / 2) % 4)), "r"((i & 1) ? 0x3232 : 0x1010));
          xb[q][i] = *reinterpret_cast<const __half2*>(&b);
        }
#pragma unroll
        for (int p = 0; p < W / 2; ++p) acc[q][p] = __float2half2_rn(0.0f);
      }
#pragma unroll 1
      for (int j = 0; j < R; ++j)
        static_for<W>([&](auto I) {
#pragma unroll
          for (int q = 0; q < G; ++q)
            static_for<W / 2>([&](auto P) {
              acc[q][P.value] = __hfma2(xb[q][I.value], immediate_pair<K, I.value, P.value>(), acc[q][P.value]);
            });
        });
#pragma unroll
      for (int q = 0; q < G; ++q)
#pragma unroll
        for (int v = 0; v < NV; ++v)
          out[q][v] = make_uint4(bits(acc[q][4 * v]), bits(acc[q][4 * v + 1]), bits(acc[q][4 * v + 2]), bits(acc[q][4 * v + 3]));
    } else {
      constexpr int E = 16 / static_cast<int>(sizeof(T));  // values per vector
      T xs[G][W], acc[G][W];
#pragma unroll
      for (int q = 0; q < G; ++q)
#pragma unroll
        for (int c = 0; c < W; ++c) {
          xs[q][c] = element<T>(xv[q][c / E], c % E);
          acc[q][c] = T(0);
        }
#pragma unroll 1
      for (int j = 0; j < R; ++j)
        static_for<W>([&](auto I) {
#pragma unroll
          for (int q = 0; q < G; ++q)
            static_for<W>([&](auto C) {
              acc[q][C.value] = fma(xs[q][I.value], immediate<T, K, W, I.value, C.value>(), acc[q][C.value]);
            });
        });
#pragma unroll
      for (int q = 0; q < G; ++q)
#pragma unroll
        for (int v = 0; v < NV; ++v) {
          if constexpr (sizeof(T) == 8) out[q][v] = pack(acc[q][2 * v], acc[q][2 * v + 1]);
          else out[q][v] = pack(acc[q][4 * v], acc[q][4 * v + 1], acc[q][4 * v + 2], acc[q][4 * v + 3]);
        }
    }
#pragma unroll
    for (int q = 0; q < G; ++q) {
      if (g * G + q >= row_blocks) continue;
#pragma unroll
      for (int v = 0; v < NV; ++v) store_stream<Streaming>(y + (g * G + q) * (32 * NV) + lane + 32 * v, out[q][v]);
    }
#pragma unroll
    for (int q = 0; q < G; ++q)
#pragma unroll
      for (int e = 0; e < NV; ++e) xv[q][e] = xn[q][e];
  }
}

// ---- tensor cores ------------------------------------------------------------------------------

// D(16x8) = A(16x8) B(8x8) + C, FP64. Lane (g, t) = (lane/4, lane%4): a = {A[g][t], A[g+8][t],
// A[g][t+4], A[g+8][t+4]}, b = {B[t][g], B[t+4][g]}, d = {D[g][2t], D[g][2t+1], D[g+8][2t], D[g+8][2t+1]}
// (CUTLASS SM90_16x8x8_F64F64F64F64_TN). Before sm_90: the same product as four m8n8k4.
__device__ __forceinline__ void mma_m16n8k8_fp64(double (&d)[4], double a0, double a1, double a2, double a3,
                                                 double b0, double b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
      : "d"(a0), "d"(a1), "d"(a2), "d"(a3), "d"(b0), "d"(b1));
#else
  mma_m8n8k4_fp64(d[0], d[1], a0, b0, d[0], d[1]);
  mma_m8n8k4_fp64(d[0], d[1], a2, b1, d[0], d[1]);
  mma_m8n8k4_fp64(d[2], d[3], a1, b0, d[2], d[3]);
  mma_m8n8k4_fp64(d[2], d[3], a3, b1, d[2], d[3]);
#endif
}

// D(16x8) = A(16x16) B(16x8) + C, FP16 in, FP16 accumulate: a = {(A[g][2t], A[g][2t+1]),
// (A[g+8][2t], ..), (A[g][2t+8], ..), (A[g+8][2t+8], ..)}, b = {(B[2t][g], B[2t+1][g]),
// (B[2t+8][g], B[2t+9][g])}, d = {(D[g][2t], D[g][2t+1]), (D[g+8][2t], D[g+8][2t+1])}.
__device__ __forceinline__ void mma_m16n8k16_fp16(unsigned (&d)[2], unsigned a0, unsigned a1, unsigned a2,
                                                  unsigned a3, unsigned b0, unsigned b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0, %1}, {%2, %3, %4, %5}, {%6, %7}, {%0, %1};\n"
      : "+r"(d[0]), "+r"(d[1])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// One warp step: Tiles (4 or 2) tiles of 16 rows (Tiles / 2 32-row blocks of 128 double2). Lane (g, t) loads the
// double2 holding values 2t, 2t+1 of rows g and g+8 of each tile; A's k-slot t takes value 2t and
// slot t+4 value 2t+1 (the B fragments are permuted to match), so D lands on the same positions.
// Every M_j is the one M, so a lane's B fragment is read once (32 per matrix, from global memory).
template <int R, bool Streaming, int Tiles>
__global__ void __launch_bounds__(kTcThreads) intensity_tensor_core_fp64(const double2* __restrict__ x,
                                                                         double2* __restrict__ y, long long steps,
                                                                         const double2* __restrict__ frag) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const double2 b = frag[lane];
  const long long warps = static_cast<long long>(gridDim.x) * (blockDim.x >> 5);
  for (long long s = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5; s < steps; s += warps) {
    long long at[Tiles];
    double2 lo[Tiles], hi[Tiles];
#pragma unroll
    for (int q = 0; q < Tiles; ++q) {
      at[q] = s * (64 * Tiles) + (q >> 1) * 128 + t * 32 + (q & 1) * 16 + g;
      lo[q] = load_stream<Streaming>(x + at[q]);
      hi[q] = load_stream<Streaming>(x + at[q] + 8);
    }
    double d[Tiles][4];
#pragma unroll
    for (int q = 0; q < Tiles; ++q) d[q][0] = d[q][1] = d[q][2] = d[q][3] = 0.0;
#pragma unroll(R <= 32 ? R : 8)
    for (int j = 0; j < R; ++j) {
#pragma unroll
      for (int q = 0; q < Tiles; ++q) mma_m16n8k8_fp64(d[q], lo[q].x, hi[q].x, lo[q].y, hi[q].y, b.x, b.y);
    }
#pragma unroll
    for (int q = 0; q < Tiles; ++q) {
      store_stream<Streaming>(y + at[q], make_double2(d[q][0], d[q][1]));
      store_stream<Streaming>(y + at[q] + 8, make_double2(d[q][2], d[q][3]));
    }
  }
}

// fp16: lane (g, t) loads 4 halves (values 4t..4t+3) of rows g and g+8 as one 8-byte word each:
// A slots 2t, 2t+1 take values 4t, 4t+1 and slots 2t+8, 2t+9 values 4t+2, 4t+3. Two mma per tile
// (n-halves h = 0, 1); D column n of half h is output 4(n/2) + 2h + n%2, so lane (g, t) ends with
// outputs 4t..4t+3 of its rows and stores them where it loaded.
template <int R, bool Streaming, int Tiles>
__global__ void __launch_bounds__(kTcThreads) intensity_tensor_core_fp16(const uint2* __restrict__ x,
                                                                         uint2* __restrict__ y, long long steps,
                                                                         const uint4* __restrict__ frag) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const uint4 b = frag[lane];  // the one M's fragment (as the fp64 kernel)
  const long long warps = static_cast<long long>(gridDim.x) * (blockDim.x >> 5);
  for (long long s = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5; s < steps; s += warps) {
    long long at[Tiles];
    uint2 lo[Tiles], hi[Tiles];
#pragma unroll
    for (int q = 0; q < Tiles; ++q) {
      // block of 32 rows x 16 halves = 128 words of 8 bytes; row r, values 4t.. at (t/2)*64 + 2r + t%2
      at[q] = s * (64 * Tiles) + (q >> 1) * 128 + (t >> 1) * 64 + ((q & 1) * 16 + g) * 2 + (t & 1);
      lo[q] = load_stream<Streaming>(x + at[q]);
      hi[q] = load_stream<Streaming>(x + at[q] + 16);
    }
    unsigned d[Tiles][2][2];
#pragma unroll
    for (int q = 0; q < Tiles; ++q) d[q][0][0] = d[q][0][1] = d[q][1][0] = d[q][1][1] = 0u;
#pragma unroll(R <= 32 ? R : 8)
    for (int j = 0; j < R; ++j) {
#pragma unroll
      for (int q = 0; q < Tiles; ++q) {
        mma_m16n8k16_fp16(d[q][0], lo[q].x, hi[q].x, lo[q].y, hi[q].y, b.x, b.y);
        mma_m16n8k16_fp16(d[q][1], lo[q].x, hi[q].x, lo[q].y, hi[q].y, b.z, b.w);
      }
    }
#pragma unroll
    for (int q = 0; q < Tiles; ++q) {
      store_stream<Streaming>(y + at[q], make_uint2(d[q][0][0], d[q][1][0]));
      store_stream<Streaming>(y + at[q] + 16, make_uint2(d[q][0][1], d[q][1][1]));
    }
  }
}

// ---- dispatch ---------------------------------------------------------------------------------

template <class F>
void with_k(int k, F&& f) {
  switch (k) {
    case 1: f(std::integral_constant<int, 1>{}); break;
    case 2: f(std::integral_constant<int, 2>{}); break;
    case 4: f(std::integral_constant<int, 4>{}); break;
    case 8: f(std::integral_constant<int, 8>{}); break;
    case 16: f(std::integral_constant<int, 16>{}); break;
    case 32: f(std::integral_constant<int, 32>{}); break;
    case 64: f(std::integral_constant<int, 64>{}); break;
    case 128: f(std::integral_constant<int, 128>{}); break;
    case 256: f(std::integral_constant<int, 256>{}); break;
    case 512: f(std::integral_constant<int, 512>{}); break;
    case 1024: f(std::integral_constant<int, 1024>{}); break;
    case 2048: f(std::integral_constant<int, 2048>{}); break;
    case 4096: f(std::integral_constant<int, 4096>{}); break;
    default: throw std::invalid_argument("intensity: no kernel for k = " + std::to_string(k));
  }
}
template <int MaxR, class F>
void with_r(int r, F&& f) {
  switch (r) {
    case 1: f(std::integral_constant<int, 1>{}); break;
    case 2: f(std::integral_constant<int, 2>{}); break;
    case 4: f(std::integral_constant<int, 4>{}); break;
    case 8: f(std::integral_constant<int, 8>{}); break;
    case 16: f(std::integral_constant<int, 16>{}); break;
    case 32: f(std::integral_constant<int, 32>{}); break;
    case 64: f(std::integral_constant<int, 64>{}); break;
    case 128: f(std::integral_constant<int, 128>{}); break;
    case 256: f(std::integral_constant<int, 256>{}); break;
    case 512: if constexpr (MaxR >= 512) { f(std::integral_constant<int, 512>{}); break; } [[fallthrough]];
    default: throw std::invalid_argument("intensity: no tensor-core kernel for r = " + std::to_string(r));
  }
}

bool supported_k(long long k) { return k >= 1 && k <= kMaxK && (k & (k - 1)) == 0; }

std::uint16_t half_bits(double v) {
  const __half h = __float2half_rn(static_cast<float>(v));  // exact: the entries have 5 significant bits
  return static_cast<__half_raw>(h).x;
}
unsigned pack_halves(double lo, double hi) { return half_bits(lo) | (static_cast<unsigned>(half_bits(hi)) << 16); }

template <class T>
class IntensityInstance final : public KernelInstance {
  static constexpr int W = row_width<T>();
  using Frag = std::conditional_t<sizeof(T) == 8, double2, uint4>;

 public:
  // launch_config (hidden parameter; the GPU test checks each): 0 tunes on first use, 1 the
  // staged kernels (constant or shared-memory matrices, k <= 256), 2 the immediate kernel (CUDA
  // cores, k >= 16; the only one above k = 256), 3 the immediate kernel with one row block per
  // warp (in the L2 only; tried where it balances the schedulers better, work_units.hpp).
  IntensityInstance(long long n, long long k, ComputeUnit unit, const RunContext& ctx, int launch_config)
      : n_(n), k_(static_cast<int>(k)), unit_(unit), x_(n), y_(n), cc_config_(launch_config) {
    if (!supported_k(k)) throw std::invalid_argument("intensity kernels run k = 1, 2, 4, ..., 256, got " + std::to_string(k));
    streaming_ = !ctx.in_l2;
    if (launch_config != 0 && (unit != ComputeUnit::cuda_core || launch_config < 0 || launch_config > 3 ||
                               (launch_config >= 2 && k < kImmMinK) || (launch_config == 1 && k > kStagedMaxK) ||
                               (launch_config == 3 && streaming_)))
      throw std::invalid_argument("intensity: no launch configuration " + std::to_string(launch_config) +
                                  " here (CUDA cores: 1 staged at k <= " + std::to_string(kStagedMaxK) +
                                  ", 2 immediates at k >= " + std::to_string(kImmMinK) +
                                  ", 3 immediates by single row blocks at k >= " + std::to_string(kImmMinK) + " in the L2)");
    if (n % (64LL * W) != 0)
      throw std::invalid_argument("intensity kernels need n % " + std::to_string(64 * W) + " == 0 (64 rows of " +
                                  std::to_string(W) + "), got " + std::to_string(n));
    if (unit_ == ComputeUnit::tensor_core && sizeof(T) == 4) throw std::invalid_argument("no fp32 tensor-core intensity kernel");
    if (unit_ == ComputeUnit::tensor_core) frag_ = gpu::DeviceBuffer<Frag>(32);  // the one M's fragments
  }
  long long output_elements() const override { return n_; }
  void randomize(std::uint64_t seed) override {
    seed_ = seed;
    m_ = make_matrices(k_, W);
    msum_.assign(static_cast<size_t>(W) * W, 0.0);
    for (size_t idx = 0; idx < m_.size(); ++idx) msum_[idx % (W * W)] += m_[idx];  // exact: 5-bit entries, one exponent
    const int blocks = static_cast<int>(std::min<long long>(current_sm_count() * 8LL, (n_ + 255) / 256));
    intensity_fill<<<std::max(blocks, 1), 256>>>(x_.data(), n_, seed_);
    CUDA_CHECK_LAUNCH();
    generation_ = g_next_generation++;
    if (unit_ == ComputeUnit::tensor_core) upload_fragments();
    else if (wide() && k_ <= kStagedMaxK) upload_wide_matrices();
    else if (!wide()) upload_constants();  // above k = 256 only the immediate kernel runs: nothing to upload
    CUDA_CHECK(cudaDeviceSynchronize());
    // Staged or immediate kernel (and in the L2 the immediates by single row blocks where they
    // balance the schedulers better): each timed once (median of 5, in the L2 state validate
    // times it in), the fastest kept, as GEMV tunes its shapes.
    if (unit_ == ComputeUnit::cuda_core && k_ >= kImmMinK && cc_config_ == 0) {
      std::vector<int> configs;
      if (k_ <= kStagedMaxK) configs.push_back(1);
      configs.push_back(2);
      if (!streaming_ && single_blocks_balance_better()) configs.push_back(3);
      cc_config_ = configs.size() == 1 ? configs[0]
                                       : pick_fastest(configs, [this](int config, cudaStream_t st) { launch_cuda_core(config, st); }, streaming_);
    }
  }
  // Whether one row block per warp spreads the work over the schedulers better than imm_rows<T>()
  // (by more than 5 points), for the grids the two launches would take.
  bool single_blocks_balance_better() {
    const long long row_blocks = n_ / W / 32;
    bool better = false;
    with_k(k_, [&](auto kc) {
      constexpr int K = decltype(kc)::value;
      if constexpr (K >= kImmMinK) {
        constexpr int G = imm_rows<T>(), warps = kWideThreads / 32;
        const long long grid_wide = resident_grid(intensity_cuda_core_imm<T, K, false>, kWideThreads, ((row_blocks + G - 1) / G + warps - 1) / warps);
        const long long grid_one = resident_grid(intensity_cuda_core_imm<T, K, false, 1>, kWideThreads, (row_blocks + warps - 1) / warps);
        better = intensity_imm_group(row_blocks, G, grid_wide, grid_one, warps, current_sm_count()) == 1;
      }
    });
    return better;
  }
  void poison_output() override { poison(y_.data(), y_.bytes()); }
  std::string launch_text() const override {
    if (unit_ == ComputeUnit::tensor_core)
      return std::to_string(tc_launch_.tiles) + " tiles of 16 rows per warp step, " + std::to_string(tc_launch_.threads) +
             "-thread blocks, persistent grid";
    const int config = cc_config_ != 0 ? cc_config_ : k_ > kStagedMaxK ? 2 : 1;
    if (config == 2) return "immediates, " + std::to_string(imm_rows<T>()) + " row blocks of 32 per warp, persistent grid";
    if (config == 3) return "immediates, one row block of 32 per warp, persistent grid";
    if (wide()) {
      if (sizeof(T) == 8 && k_ >= kSplitMinK) return "staged, " + std::to_string(kSplitBlocks) + " row blocks per warp split by columns";
      return "staged, " + std::to_string(wide_rows<T>()) + " rows per thread" +
             (sizeof(T) == 4 && k_ >= kWordsMinK ? ", x and y as 4-byte words" : "");
    }
    if (vec_kernel_takes<T>(k_))
      return vec_threads_vectors<T>(k_) == 1 ? std::string("a k-block per thread (one 16-byte vector)")
                                             : "a k-block per thread (" + std::to_string(vec_threads_vectors<T>(k_)) + " 16-byte vectors)";
    return "one " + std::to_string(W) + "-value row per thread";
  }
  void launch(Stream s) override {
    if (unit_ == ComputeUnit::cuda_core) launch_cuda_core(cc_config_ != 0 ? cc_config_ : k_ > kStagedMaxK ? 2 : 1, s);
    else launch_tensor_core(s);
    CUDA_CHECK_LAUNCH();
  }
  void launch_cuda_core(int config, cudaStream_t s) {
    if (config == 2 || config == 3) {  // immediates; 3: one row block per warp, in the L2 only (the constructor
                                       // refuses it streaming)
      const long long row_blocks = n_ / W / 32;
      with_k(k_, [&](auto kc) {
        constexpr int K = decltype(kc)::value;
        if constexpr (K >= kImmMinK) {
          const bool single = config == 3;
          auto* kernel = single ? intensity_cuda_core_imm<T, K, false, 1>
                                : streaming_ ? intensity_cuda_core_imm<T, K, true> : intensity_cuda_core_imm<T, K, false>;
          int& grid = single ? imm1_grid_ : imm_grid_;
          if (grid == 0) {  // persistent: a warp per group of G row blocks at most
            const int g = single ? 1 : imm_rows<T>();
            grid = resident_grid(kernel, kWideThreads, ((row_blocks + g - 1) / g + kWideThreads / 32 - 1) / (kWideThreads / 32));
          }
          kernel<<<grid, kWideThreads, 0, s>>>(reinterpret_cast<const uint4*>(x_.data()), reinterpret_cast<uint4*>(y_.data()),
                                               row_blocks);
        } else {
          throw std::logic_error("intensity: the immediate kernel needs k >= " + std::to_string(kImmMinK));
        }
      });
    } else if (wide()) {
      const long long row_blocks = n_ / W / 32;
      const long long warps = (row_blocks + wide_rows<T>() - 1) / wide_rows<T>();
      const long long need_wide = (warps + kWideThreads / 32 - 1) / (kWideThreads / 32);
      const auto* x = reinterpret_cast<const uint4*>(x_.data());
      auto* y = reinterpret_cast<uint4*>(y_.data());
      with_k(k_, [&](auto kc) {
        constexpr int K = decltype(kc)::value;
        if constexpr (K >= kWideMinK && K <= kStagedMaxK) {
          constexpr bool split = sizeof(T) == 8 && K >= kSplitMinK;
          auto* kernel = [&] {
            if constexpr (split)
              return streaming_ ? intensity_cuda_core_fp64_split<K, true> : intensity_cuda_core_fp64_split<K, false>;
            else if constexpr (sizeof(T) == 4 && K >= kWordsMinK)
              return streaming_ ? intensity_cuda_core_wide_words<T, K, true> : intensity_cuda_core_wide_words<T, K, false>;
            else
              return streaming_ ? intensity_cuda_core_wide<T, K, true> : intensity_cuda_core_wide<T, K, false>;
          }();
          // Blocks that give every group (split: kSplitBlocks row blocks) a warp; the split kernel's
          // warps take groups from a counter, so any grid computes all of them.
          const long long need =
              split ? ((row_blocks + kSplitBlocks - 1) / kSplitBlocks + kWideThreads / 32 - 1) / (kWideThreads / 32) : need_wide;
          if (wide_grid_ == 0) wide_grid_ = resident_grid(kernel, kWideThreads, need);  // persistent
          kernel<<<wide_grid_, kWideThreads, 0, s>>>(x, y, row_blocks, wide_.data());
        } else {
          throw std::logic_error("intensity: no staged kernel for k = " + std::to_string(K));
        }
      });
    } else {
      if (g_constant_generation != generation_) upload_constants();  // another instance ran in between
      const long long rows = n_ / W;
      const auto grid = static_cast<unsigned>((rows + kCcThreads - 1) / kCcThreads);
      with_k(k_, [&](auto kc) {
        constexpr int K = decltype(kc)::value;
        if constexpr (K >= kWideMinK) {
          throw std::logic_error("intensity: the one-row kernels run k < " + std::to_string(kWideMinK));
        } else if constexpr (vec_kernel_takes<T>(K)) {
          const long long vectors = n_ / vec_values<T>();
          const long long threads_needed = vectors / vec_threads_vectors<T>(K);
          const auto vgrid = static_cast<unsigned>((threads_needed + kCcThreads - 1) / kCcThreads);
          auto* x = reinterpret_cast<const uint4*>(x_.data());
          auto* y = reinterpret_cast<uint4*>(y_.data());
          if constexpr (sizeof(T) == 2) {
            if (streaming_) intensity_cuda_core_vec_fp16<K, true><<<vgrid, kCcThreads, 0, s>>>(x, y, vectors);
            else intensity_cuda_core_vec_fp16<K, false><<<vgrid, kCcThreads, 0, s>>>(x, y, vectors);
          } else {
            if (streaming_) intensity_cuda_core_vec<T, K, true><<<vgrid, kCcThreads, 0, s>>>(x, y, vectors);
            else intensity_cuda_core_vec<T, K, false><<<vgrid, kCcThreads, 0, s>>>(x, y, vectors);
          }
        } else if constexpr (sizeof(T) == 8) {
          auto* x = reinterpret_cast<const double2*>(x_.data());
          auto* y = reinterpret_cast<double2*>(y_.data());
          if (streaming_) intensity_cuda_core_fp64<K, true><<<grid, kCcThreads, 0, s>>>(x, y, rows);
          else intensity_cuda_core_fp64<K, false><<<grid, kCcThreads, 0, s>>>(x, y, rows);
        } else if constexpr (sizeof(T) == 4) {
          auto* x = reinterpret_cast<const float4*>(x_.data());
          auto* y = reinterpret_cast<float4*>(y_.data());
          if (streaming_) intensity_cuda_core_fp32<K, true><<<grid, kCcThreads, 0, s>>>(x, y, rows);
          else intensity_cuda_core_fp32<K, false><<<grid, kCcThreads, 0, s>>>(x, y, rows);
        } else {
          throw std::logic_error("intensity: fp16 k = " + std::to_string(K) + " below 16 runs on the k-block kernel");
        }
      });
    }
  }
  void launch_tensor_core(cudaStream_t s) {
    if constexpr (sizeof(T) != 4) {
      if (tc_launch_.tiles == 0) tc_launch_ = intensity_tc_launch(n_ / W, current_sm_count());
      const long long steps = n_ / (16LL * tc_launch_.tiles * W);
      constexpr int kMaxR = kMaxK / W;
      with_r<kMaxR>(r(), [&](auto rc) {
        constexpr int R = decltype(rc)::value;
        if constexpr (R <= kMaxR) {
          if constexpr (sizeof(T) == 8) {
            auto* x = reinterpret_cast<const double2*>(x_.data());
            auto* y = reinterpret_cast<double2*>(y_.data());
            if (tc_launch_.tiles == 2)
              run_tc(streaming_ ? intensity_tensor_core_fp64<R, true, 2> : intensity_tensor_core_fp64<R, false, 2>, x, y, steps, s);
            else
              run_tc(streaming_ ? intensity_tensor_core_fp64<R, true, 4> : intensity_tensor_core_fp64<R, false, 4>, x, y, steps, s);
          } else {
            auto* x = reinterpret_cast<const uint2*>(x_.data());
            auto* y = reinterpret_cast<uint2*>(y_.data());
            if (tc_launch_.tiles == 2)
              run_tc(streaming_ ? intensity_tensor_core_fp16<R, true, 2> : intensity_tensor_core_fp16<R, false, 2>, x, y, steps, s);
            else
              run_tc(streaming_ ? intensity_tensor_core_fp16<R, true, 4> : intensity_tensor_core_fp16<R, false, 4>, x, y, steps, s);
          }
        }
      });
    }
  }
  // Every output checked for the poison; values against x (M_1 + ... + M_r) for every row when
  // n <= 2^20, else for 65536 rows spread over the array (the CPU must not dominate validate).
  // Norm-wise tolerance (4 sqrt(k) + 4) u: a chain of k roundings of partial sums no larger than
  // |y| leaves ~0.3-0.4 sqrt(k) u |y| (RMS; the tensor cores round less often), so 10x the expected
  // error, while one missing product of the r (the r matrices are one M, so each adds 1/r of y)
  // costs 1/r >= 1/32, above the tolerance at every k (fp16 k = 256: 1/16 against 68 u = 3.3%;
  // fp32 k = 256: 1/32 against 7.9e-6), and a misplaced value costs about 1/sqrt(w).
  Verification verify() override {
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<T> out(static_cast<size_t>(n_));
    CUDA_CHECK(cudaMemcpy(out.data(), y_.data(), y_.bytes(), cudaMemcpyDeviceToHost));
    long long unwritten = 0;
    for (const T& v : out) unwritten += std::isnan(to_double(v));
    const long long rows = n_ / W;
    const long long sampled = rows <= (1LL << 20) / W ? rows : 65536;
    const long long stride = rows / sampled;
    std::vector<double> got(static_cast<size_t>(sampled * W));
    std::vector<long long> row_of(static_cast<size_t>(sampled));
    for (long long s = 0; s < sampled; ++s) {
      const long long row = s * stride + (stride > 1 ? s % stride : 0);
      row_of[static_cast<size_t>(s)] = row;
      for (int c = 0; c < W; ++c) got[static_cast<size_t>(s * W + c)] = to_double(out[static_cast<size_t>(value_index<T>(row, c))]);
    }
    const double u = sizeof(T) == 8 ? 0x1.0p-53 : sizeof(T) == 4 ? 0x1.0p-24 : 0x1.0p-11;
    Verification v = check_normwise(
        got,
        [&](long long idx) {
          const long long row = row_of[static_cast<size_t>(idx / W)];
          const int c = static_cast<int>(idx % W);
          long double ref = 0;
          for (int i = 0; i < W; ++i)
            ref += static_cast<long double>(input_value<T>(seed_, value_index<T>(row, i))) * msum_[static_cast<size_t>(i * W + c)];
          return ref;
        },
        (4 * std::sqrt(static_cast<double>(k_)) + 4) * u);
    v.unwritten = unwritten;
    v.ok = v.ok && unwritten == 0;
    v.message += "; " + std::to_string(sampled) + " of " + std::to_string(rows) + " rows checked, " +
                 std::to_string(unwritten) + " of " + std::to_string(n_) + " outputs unwritten";
    return v;
  }

 private:
  int r() const { return std::max(1, k_ / W); }
  bool wide() const { return unit_ == ComputeUnit::cuda_core && k_ >= kWideMinK; }
  // The wide kernels' matrices in global memory, staged per block: fp64/fp32 M_j[i][c] at
  // (j w + i) w + c; fp16 the HFMA2 pairs (M_j[i][2p], M_j[i][2p+1]) at (j w + i) w/2 + p.
  void upload_wide_matrices() {
    const size_t bytes = static_cast<size_t>(r()) * W * W * sizeof(T);
    std::vector<unsigned char> h(bytes);
    for (int j = 0; j < r(); ++j)
      for (int i = 0; i < W; ++i)
        for (int c = 0; c < W; ++c) {
          const size_t at = static_cast<size_t>((j * W + i) * W + c);
          if constexpr (sizeof(T) == 2) {
            const std::uint16_t b = half_bits(m(j, i, c));
            std::memcpy(h.data() + at * 2, &b, 2);  // pair p = c/2: low half c even, high half c odd
          } else {
            const T v = static_cast<T>(m(j, i, c));
            std::memcpy(h.data() + at * sizeof(T), &v, sizeof(T));
          }
        }
    wide_ = gpu::DeviceBuffer<uint4>(bytes / sizeof(uint4));
    CUDA_CHECK(cudaMemcpy(wide_.data(), h.data(), bytes, cudaMemcpyHostToDevice));
  }
  static double to_double(const T& v) {
    if constexpr (sizeof(T) == 2) return static_cast<double>(__half2float(v));
    else return static_cast<double>(v);
  }
  double m(int j, int i, int c) const { return m_[static_cast<size_t>((j * W + i) * W + c)]; }
  void upload_constants() {
    if constexpr (sizeof(T) == 2) {
      std::vector<__half2> h(kConstantEntries);
      const auto pair = [](double a, double b) {
        const unsigned bits = pack_halves(a, b);
        return *reinterpret_cast<const __half2*>(&bits);
      };
      if (k_ == 1) {
        for (int p = 0; p < W / 2; ++p) h[static_cast<size_t>(p)] = pair(m(0, 2 * p, 2 * p), m(0, 2 * p + 1, 2 * p + 1));
      } else {
        for (int j = 0; j < r(); ++j)
          for (int i = 0; i < W; ++i)
            for (int p = 0; p < W / 2; ++p)
              h[static_cast<size_t>((j * W + i) * (W / 2) + p)] = pair(m(j, i, 2 * p), m(j, i, 2 * p + 1));
      }
      CUDA_CHECK(cudaMemcpyToSymbol(c_m_fp16, h.data(), h.size() * sizeof(__half2)));
    } else {
      std::vector<T> h(m_.begin(), m_.end());
      CUDA_CHECK(cudaMemcpyToSymbol(sizeof(T) == 8 ? static_cast<const void*>(&c_m_fp64) : static_cast<const void*>(&c_m_fp32),
                                    h.data(), h.size() * sizeof(T)));
    }
    g_constant_generation = generation_;
  }
  // Lane (g, t) of matrix j: fp64 {M_j[2t][g], M_j[2t+1][g]}; fp16, n-half h with column
  // s_h = 4(g/2) + 2h + g%2: {(M_j[4t][s_0], M_j[4t+1][s_0]), (M_j[4t+2][s_0], M_j[4t+3][s_0]), same for s_1}.
  // M_j = M for every j: the kernels read matrix 0's fragments only.
  void upload_fragments() {
    std::vector<Frag> f(32);
    constexpr int j = 0;
    for (int lane = 0; lane < 32; ++lane) {
      const int g = lane >> 2, t = lane & 3;
      Frag& e = f[static_cast<size_t>(lane)];
      if constexpr (sizeof(T) == 8) {
        e = make_double2(m(j, 2 * t, g), m(j, 2 * t + 1, g));
      } else {
        const int s0 = 4 * (g >> 1) + (g & 1), s1 = s0 + 2;
        e = make_uint4(pack_halves(m(j, 4 * t, s0), m(j, 4 * t + 1, s0)), pack_halves(m(j, 4 * t + 2, s0), m(j, 4 * t + 3, s0)),
                       pack_halves(m(j, 4 * t, s1), m(j, 4 * t + 1, s1)), pack_halves(m(j, 4 * t + 2, s1), m(j, 4 * t + 3, s1)));
      }
    }
    CUDA_CHECK(cudaMemcpy(frag_.data(), f.data(), f.size() * sizeof(Frag), cudaMemcpyHostToDevice));
  }
  // Persistent grid: as many blocks as stay resident, no more than the work needs.
  template <class X, class Y>
  void run_tc(void (*kernel)(const X*, Y*, long long, const Frag*), const X* x, Y* y, long long steps, Stream s) {
    const int warps = tc_launch_.threads / 32;
    if (tc_grid_ == 0) tc_grid_ = resident_grid(kernel, tc_launch_.threads, (steps + warps - 1) / warps);
    kernel<<<tc_grid_, tc_launch_.threads, 0, s>>>(x, y, steps, frag_.data());
  }

  long long n_;
  int k_;
  ComputeUnit unit_;
  gpu::DeviceBuffer<T> x_, y_;
  gpu::DeviceBuffer<Frag> frag_;
  gpu::DeviceBuffer<uint4> wide_;
  bool streaming_ = false;
  int tc_grid_ = 0, wide_grid_ = 0, imm_grid_ = 0, imm1_grid_ = 0;
  IntensityTcLaunch tc_launch_{0, 0};  // chosen on the first tensor-core launch
  int cc_config_ = 0;  // CUDA cores: 1 staged, 2 immediates, 3 immediates by single row blocks; 0 until tuned (k < kImmMinK: staged)
  std::uint64_t seed_ = 1;
  unsigned long long generation_ = 0;
  std::vector<double> m_, msum_;
};

template <class T>
KernelVariant intensity_variant(ComputeUnit unit) {
  constexpr Precision p = sizeof(T) == 8 ? Precision::fp64 : sizeof(T) == 4 ? Precision::fp32 : Precision::fp16;
  constexpr int W = row_width<T>();
  KernelVariant v;
  v.kind = "intensity";
  v.unit = unit;
  v.precision = p;
  const bool tc = unit == ComputeUnit::tensor_core;
  const std::string name = sizeof(T) == 8 ? "fp64" : sizeof(T) == 4 ? "fp32" : "fp16";
  if (tc)
    v.description = sizeof(T) == 8
                        ? "y = x (M_1 + .. + M_r) per 8-value row, FP64 mma.m16n8k8, 4 tiles of 16 rows per warp step (2 where the rows are few), "
                          "M's B fragment read once per lane (M_j = M), persistent grid"
                        : "y = x (M_1 + .. + M_r) per 16-value row, FP16 mma.m16n8k16 with FP16 accumulate, 4 tiles of "
                          "16 rows per warp step (2 where the rows are few), M's B fragment read once per lane (M_j = M), persistent grid";
  else
    v.description = "y = x (M_1 + .. + M_r), " +
                    (sizeof(T) == 2 ? std::string("HFMA2 with FP16 accumulate") : std::string(sizeof(T) == 8 ? "DFMA" : "FFMA")) +
                    ", 16-byte loads/stores; k < 16: " +
                    (sizeof(T) == 2 ? std::string("a thread per k-block of the row (one 16-byte vector)")
                                    : "one " + std::to_string(W) +
                                          "-value row per thread (k <= 4: a thread per k-block of the row, one 16-byte vector per thread at k <= " +
                                          std::to_string(vec_values<T>()) + ")") +
                    ", matrices in __constant__" +
                    "; k = 16 .. " + std::to_string(kStagedMaxK) + ": " +
                    std::to_string(wide_rows<T>()) + " rows per thread, matrices staged in shared memory (one 16-byte broadcast read per " +
                    std::to_string(wide_rows<T>()) + " rows' FMAs), persistent grid, next rows loaded during the FMAs; k >= " +
                    std::to_string(kImmMinK) + ": or " + std::to_string(imm_rows<T>()) +
                    " rows per thread with the matrix's entries as instruction immediates" +
                    (sizeof(T) == 2 ? std::string(" (inputs broadcast to both halves, HFMA2 on both FP16 pipes)") : std::string()) +
                    ", the faster of the two timed once per size (above k = " + std::to_string(kStagedMaxK) + " the immediates only)" +
                    (sizeof(T) == 8 ? "; staged at k >= " + std::to_string(kSplitMinK) + ": " + std::to_string(2 * kSplitBlocks) +
                                          " rows x 4 of the 8 columns per thread (the half-warps split the columns), two "
                                          "16-byte broadcast reads per " + std::to_string(8 * kSplitBlocks) +
                                          " DFMA, groups of " + std::to_string(kSplitBlocks) +
                                          " row blocks handed out by an atomic ticket counter"
                                    : std::string());
  // The useful share of the tensor-core work depends on k (k/w below the row width): the kind's.
  v.tensor_core_fraction = 0;
  // 64 whole rows (one tensor-core warp step) for every variant, so CUDA and tensor cores share sizes.
  v.round = [](KernelParams params) {
    const double unit_values = 64.0 * W;
    params["n"] = std::max(unit_values, std::floor(params.at("n") / unit_values) * unit_values);
    return params;
  };
  v.create = [unit](const KernelParams& params, const RunContext& ctx) -> std::unique_ptr<KernelInstance> {
    const auto k = params.count("k") ? static_cast<long long>(params.at("k")) : 8LL;
    const auto pinned = params.find("launch_config");
    return std::make_unique<IntensityInstance<T>>(static_cast<long long>(params.at("n")), k, unit, ctx,
                                                  pinned == params.end() ? 0 : static_cast<int>(pinned->second));
  };
  if (tc) {
    v.sass = {{"intensity_tensor_core_" + name, sizeof(T) == 8 ? "DMMA" : "HMMA", ""}};
    if (sizeof(T) == 8) v.sass.push_back({"intensity_tensor_core_fp64", kLdg128, ""});
  } else {
    const std::string fma = sizeof(T) == 8 ? "DFMA" : sizeof(T) == 4 ? "FFMA" : "HFMA2";
    const std::string wide = std::string("intensity_cuda_core_wide<") + (sizeof(T) == 8 ? "double" : sizeof(T) == 4 ? "float" : "__half");
    v.sass = {{wide, fma, "DMMA|HMMA"}, {wide, "LDS\\.128", ""}, {wide, kLdg128, ""}};
    if (sizeof(T) >= 4) {  // one row per thread (fp64 and fp32 k = 8; fp16 has none: every k below 16 is a k-block)
      v.sass.push_back({"intensity_cuda_core_" + name, fma, "DMMA|HMMA"});
      v.sass.push_back({"intensity_cuda_core_" + name, kLdg128, ""});
    }
    {  // k-blocks below a row: a thread per block (SCALE's one vector per thread at k <= V)
      const std::string vec = sizeof(T) == 2 ? std::string("intensity_cuda_core_vec_fp16<")
                                             : std::string("intensity_cuda_core_vec<") + (sizeof(T) == 8 ? "double" : "float");
      v.sass.push_back({vec, fma, "DMMA|HMMA"});
      v.sass.push_back({vec, kLdg128, ""});
    }
    if (sizeof(T) == 4) {  // k >= 64: x and y as 4-byte words (32-bit LDG, no 8/16-byte STG), see wide_body
      const std::string words = "intensity_cuda_core_wide_words<float";
      v.sass.push_back({words, "FFMA", "DMMA|HMMA|STG\\.E[A-Z0-9.]*\\.(64|128)"});
      v.sass.push_back({words, "LDG\\.E(\\.[A-Z]+)* ", ""});
      v.sass.push_back({words, "LDS\\.128", ""});
    }
    // The immediate kernel: no shared-memory loads; fp16 issues HFMA2 on both
    // pipes (HFMA2.MMA with a register product operand, not only the zeroing idiom HFMA2.MMA R, -RZ, RZ).
    const std::string imm = std::string("intensity_cuda_core_imm<") + (sizeof(T) == 8 ? "double" : sizeof(T) == 4 ? "float" : "__half");
    v.sass.push_back({imm, fma, "DMMA|HMMA|LDS"});
    v.sass.push_back({imm, kLdg128, ""});
    if (sizeof(T) == 2) v.sass.push_back({imm, "HFMA2\\.MMA R[0-9]+, R[0-9]+,", ""});
    if (sizeof(T) == 8)  // ATOMG: the ticket counter (an atomicAdd whose result is used)
      for (const char* want : {"DFMA", "LDS\\.128", kLdg128, "ATOMG"})
        v.sass.push_back({"intensity_cuda_core_fp64_split", want, std::string(want) == "DFMA" ? "DMMA|HMMA" : ""});
  }
  return v;
}

const Registrar intensity_fp64_cc{intensity_variant<double>(ComputeUnit::cuda_core)};
const Registrar intensity_fp64_tc{intensity_variant<double>(ComputeUnit::tensor_core)};
const Registrar intensity_fp32_cc{intensity_variant<float>(ComputeUnit::cuda_core)};
const Registrar intensity_fp16_cc{intensity_variant<__half>(ComputeUnit::cuda_core)};
const Registrar intensity_fp16_tc{intensity_variant<__half>(ComputeUnit::tensor_core)};

}  // namespace
}  // namespace ceiling::kernels
