// What the stencil variants share (issue 11): the registered shape and the domain a sweep point
// names, the grids on the device, fresh random input per seed, poisoned output, the five kernels
// (plain: one pass per step; blocked: t steps fused in a shared-memory tile; streaming: t steps
// fused while a section streams plane by plane through per-level rings in shared memory (2.5-D
// blocking); tensor core: the blocked tile, each step as FP64 mma.m8n8k4 products; plain-mma: one
// pass per step, column lines x Toeplitz over y on mma.m16n8k4; kernels/stencil_plan.hpp) and the
// check against the
// CPU reference (model/stencil_shape.hpp): the whole domain when it is small, else every output
// scanned for the poison on the device and a sample of points (random, the faces and the corners)
// against their light cones; norm-wise relative error <= 1e-12.
// Each .cu that includes this has its own constant memory (the shape's weights and offsets),
// uploaded by the instance that launches when another instance launched last.
#pragma once
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common.cuh"
#include "gpu/cp_async.cuh"
#include "gpu/gpu.hpp"
#include "model/stencil_shape.hpp"
#include "stencil_plan.hpp"
#include "verify.hpp"

namespace ceiling::kernels {
namespace {

enum class StencilMethod { plain, blocked, tensor_core, streaming, tensor_core_plain };

__constant__ double c_weight[kMaxStencilPoints];
__constant__ long long c_offset[kMaxStencilPoints];  // global linear offset dx + dy nx + dz nx ny
__constant__ int c_offset32[kMaxStencilPoints];      // the same where every offset fits 32 bits (the point kernel)
__constant__ int c_soffset[kMaxStencilPoints];       // shared-memory offset dx + dy bx + dz bx by
__constant__ int2 c_line[2 * kMaxStencilRadius + 1 > 0 ? (2 * kMaxStencilRadius + 1) * (2 * kMaxStencilRadius + 1) : 1];
// The streaming kernel's [ring slot][point] offsets (kernels/stencil_plan.hpp, StencilStreamPlan).
__constant__ int c_roff[(2 * kMaxStencilRadius + 1) * kMaxStencilPoints];
// The plain kernel's columns: the shape's points grouped by their in-plane offset (dx in 2-D, dx + dy nx
// in 3-D), each column's weights over the outer axis (dy in 2-D, dz in 3-D) at [column * (2 r + 1) + d + r]
// and the column's first and last d + r with a point.
constexpr int kMaxPlainColumnWeights = 1024;
__constant__ double c_colw[kMaxPlainColumnWeights];
__constant__ long long c_coloff[kMaxStencilPoints];
__constant__ int2 c_colrange[kMaxStencilPoints];
const void* g_constants_owner = nullptr;

struct Grid {
  long long nx, ny, nz;
  int rx, ry, rz;
  __device__ __forceinline__ bool inside(long long x, long long y, long long z) const {
    return x >= 0 && x < nx && y >= 0 && y < ny && z >= 0 && z < nz;
  }
  __device__ __forceinline__ bool interior(long long x, long long y, long long z) const {
    return x >= rx && x < nx - rx && y >= ry && y < ny - ry && z >= rz && z < nz - rz;
  }
};

struct Tile {
  int tx, ty, tz, hx, hy, hz, bx, by, bz, steps, kchunks, lines;
};

constexpr int kStencilThreads = 256;  // blockDim (32, 8)

// --- plain: K points per thread along the outer axis, one launch per step ------------------------
// 256 threads; 2-D: 128 x 2 threads, each K consecutive rows (tile 128 x 2K); 3-D: 32 x 8 threads,
// each K consecutive planes (tile 32 x 8 x K). An interior thread walks the shape's columns (points
// with the same in-plane offset): it loads the column's K + span - 1 values once into registers and
// adds each tap to its K sums, so the rows its K points share are loaded once, not once per point
// (loading per point with all loads issued together missed L1 on the same sectors at once: L2 read
// 1.56x compulsory, 2d5pt 9000^2 on H100; walking columns: 2d5pt 79% -> 87% of the bound). DM = the
// largest column span compiled (2 r + 1 of the outer radius: 3 or 7).
__host__ __device__ constexpr int plain_k(int) { return 8; }
constexpr int kPointPlanes = 4;  // the point kernel's points per thread along z (its compiled shapes)

template <int DM, int NC, int K, bool Streaming>
__global__ void __launch_bounds__(kStencilThreads)
    stencil_plain_kernel(const double* __restrict__ in, double* __restrict__ out, Grid g, int ncol, int npts) {
  const bool three = g.nz > 1 || g.rz > 0;
  long long x, y, o0, no, so;
  int ro;
  if (!three) {
    x = static_cast<long long>(blockIdx.x) * 128 + (threadIdx.x & 127);
    y = 0;
    o0 = (static_cast<long long>(blockIdx.y) * 2 + (threadIdx.x >> 7)) * K;
    no = g.ny;
    so = g.nx;
    ro = g.ry;
  } else {
    x = static_cast<long long>(blockIdx.x) * 32 + (threadIdx.x & 31);
    y = static_cast<long long>(blockIdx.y) * 8 + (threadIdx.x >> 5);
    o0 = static_cast<long long>(blockIdx.z) * K;
    no = g.nz;
    so = g.nx * g.ny;
    ro = g.rz;
  }
  if (x >= g.nx || y >= g.ny || o0 >= no) return;
  const bool inner = x >= g.rx && x < g.nx - g.rx && (!three || (y >= g.ry && y < g.ny - g.ry));
  const long long i0 = (three ? y * g.nx : 0) + x + o0 * so;
  if constexpr (NC > 0) {
    // NC columns of exactly DM taps each (the host picks this instance only then: 2d5pt, 2d9pt): every
    // column reads the same K + DM - 1 rows around the thread's K points, so every load is issued at
    // once, unguarded, and each tap is an FMA with the column's weight (0 where the shape has no point:
    // a star's side columns; the input is finite, so 0 x u adds exactly 0). The guarded form below
    // (a column's own row range, a branch per load and per tap) issued 87 instructions per point
    // (ncu, 2d5pt 960^2, H200 2026-11-28); this one ran 1.14-1.19x faster out of L2 and 1.54x in it (with K below).
    if (inner && o0 >= ro && o0 + K <= no - ro) {
      constexpr int R = K + DM - 1;
      const double* p = in + i0 - static_cast<long long>(DM / 2) * so;
      double r[NC][R];
#pragma unroll
      for (int c = 0; c < NC; ++c) {
        const double* pc = p + c_coloff[c];
#pragma unroll
        for (int j = 0; j < R; ++j) r[c][j] = __ldg(pc + j * so);
      }
      double v[K];
#pragma unroll
      for (int k = 0; k < K; ++k) v[k] = 0.0;
#pragma unroll
      for (int c = 0; c < NC; ++c) {
#pragma unroll
        for (int d = 0; d < DM; ++d) {
          const double wd = c_colw[c * DM + d];
#pragma unroll
          for (int k = 0; k < K; ++k) v[k] = fma(wd, r[c][k + d], v[k]);
        }
      }
#pragma unroll
      for (int k = 0; k < K; ++k) store_stream<Streaming>(out + i0 + k * so, v[k]);
      return;
    }
  } else if constexpr (DM > 0) {
    if (inner && o0 >= ro && o0 + K <= no - ro) {  // the whole column interior: no tests
      double v[K];
#pragma unroll
      for (int k = 0; k < K; ++k) v[k] = 0.0;
      const int dn = 2 * ro + 1;
      for (int c = 0; c < ncol; ++c) {
        const int2 rg = c_colrange[c];
        const int span = rg.y - rg.x + 1;
        const double* p = in + i0 + c_coloff[c] + static_cast<long long>(rg.x - ro) * so;
        double r[K + DM - 1];
#pragma unroll
        for (int j = 0; j < K + DM - 1; ++j) r[j] = j < K + span - 1 ? __ldg(p + j * so) : 0.0;
        const double* w = c_colw + c * dn + rg.x;
#pragma unroll
        for (int d = 0; d < DM; ++d) {
          if (d < span) {
            const double wd = w[d];
#pragma unroll
            for (int k = 0; k < K; ++k) v[k] = fma(wd, r[k + d], v[k]);
          }
        }
      }
#pragma unroll
      for (int k = 0; k < K; ++k) store_stream<Streaming>(out + i0 + k * so, v[k]);
      return;
    }
  }
  for (int k = 0; k < K && o0 + k < no; ++k) {  // near the boundary, or the generic kernel: per point
    const long long o = o0 + k, i = i0 + k * so;
    double v;
    if (!inner || o < ro || o >= no - ro) {
      v = __ldg(in + i);
    } else {
      v = 0.0;
      for (int s = 0; s < npts; ++s) v = fma(c_weight[s], __ldg(in + i + c_offset[s]), v);
    }
    store_stream<Streaming>(out + i, v);
  }
}

// The per-point kernel (2d13pt-like stars and 3-D shapes, where the column walk measured slower: 3d7pt
// 72% vs 81% of the bound, 2d13pt 58% vs 68%, H100): one point per thread, 32 x 8 threads, the
// built-in sizes fully unrolled so that every load of the point is in flight at once.
template <int N, bool Streaming>
__global__ void __launch_bounds__(kStencilThreads)
    stencil_plain_point_kernel(const double* __restrict__ in, double* __restrict__ out, Grid g, int npts) {
  if constexpr (N > 0) {
    // 32-bit coordinates and offsets (the host takes this instance only where every offset and axis fits
    // 32 bits), kPointPlanes points per thread along z, their loads unrolled together: the 64-bit form
    // with one point per thread issued 142 instructions per point (ncu, 3d7pt 97^3, H200); 3d7pt out of
    // L2 1.12-1.29x faster with both (H200, 2026-11-28; 2 planes per thread instead of 4: 0.92-1.02x of it).
    const int x = static_cast<int>(blockIdx.x * 32 + (threadIdx.x & 31));
    const int y = static_cast<int>(blockIdx.y * 8 + (threadIdx.x >> 5));
    if (x >= g.nx || y >= g.ny) return;
#pragma unroll
    for (int q = 0; q < kPointPlanes; ++q) {
    const int z = static_cast<int>(blockIdx.z) * kPointPlanes + q;
    if (z >= g.nz) return;
    const long long i = (static_cast<long long>(z) * g.ny + y) * g.nx + x;
    double v;
    const int nx = static_cast<int>(g.nx), ny = static_cast<int>(g.ny), nz = static_cast<int>(g.nz);
    const bool interior = static_cast<unsigned>(x - g.rx) < static_cast<unsigned>(max(nx - 2 * g.rx, 0)) &&
                          static_cast<unsigned>(y - g.ry) < static_cast<unsigned>(max(ny - 2 * g.ry, 0)) &&
                          static_cast<unsigned>(z - g.rz) < static_cast<unsigned>(max(nz - 2 * g.rz, 0));
    const double* p = in + i;
    if (!interior) {
      v = __ldg(p);
    } else {
      v = 0.0;
#pragma unroll
      for (int s = 0; s < N; ++s) v = fma(c_weight[s], __ldg(p + c_offset32[s]), v);
    }
    store_stream<Streaming>(out + i, v);
    }
  } else {  // any shape, 64-bit offsets
    const long long x = static_cast<long long>(blockIdx.x) * 32 + (threadIdx.x & 31);
    const long long y = static_cast<long long>(blockIdx.y) * 8 + (threadIdx.x >> 5);
    const long long z = blockIdx.z;
    if (x >= g.nx || y >= g.ny) return;
    const long long i = (z * g.ny + y) * g.nx + x;
    double v;
    if (!g.interior(x, y, z)) {
      v = __ldg(in + i);
    } else {
      v = 0.0;
#pragma unroll 4
      for (int s = 0; s < npts; ++s) v = fma(c_weight[s], __ldg(in + i + c_offset[s]), v);
    }
    store_stream<Streaming>(out + i, v);
  }
}

// --- the shared-memory tile: load with halo, run the steps, write the core -----------------------
// The domain and its interior in the tile's own coordinates (half-open, clamped to the tile), worked
// out once per block: the per-cell tests are then int compares, not 64-bit index arithmetic (which
// made the first version issue 2-4x the instructions of the plain kernel, ncu on H100).
struct LocalBox {
  int ox0, ox1, oy0, oy1, oz0, oz1;  // inside the domain
  int ix0, ix1, iy0, iy1, iz0, iz1;  // interior: updated by the stencil
  // x in [lo, hi) as one unsigned compare (hi <= lo: empty).
  __device__ __forceinline__ static bool in_range(int x, int lo, int hi) {
    return static_cast<unsigned>(x - lo) < static_cast<unsigned>(max(hi - lo, 0));
  }
  __device__ __forceinline__ bool inside(int x, int y, int z) const {
    return in_range(x, ox0, ox1) && in_range(y, oy0, oy1) && in_range(z, oz0, oz1);
  }
  __device__ __forceinline__ bool interior(int x, int y, int z) const {
    return in_range(x, ix0, ix1) && in_range(y, iy0, iy1) && in_range(z, iz0, iz1);
  }
};

__device__ __forceinline__ int clamp_local(long long v, int extent) {
  return static_cast<int>(v < 0 ? 0 : v > extent ? extent : v);
}

__device__ __forceinline__ LocalBox local_box(const Grid& g, const Tile& t, long long gx0, long long gy0, long long gz0) {
  LocalBox b;
  b.ox0 = clamp_local(-gx0, t.bx);
  b.ox1 = clamp_local(g.nx - gx0, t.bx);
  b.oy0 = clamp_local(-gy0, t.by);
  b.oy1 = clamp_local(g.ny - gy0, t.by);
  b.oz0 = clamp_local(-gz0, t.bz);
  b.oz1 = clamp_local(g.nz - gz0, t.bz);
  b.ix0 = clamp_local(g.rx - gx0, t.bx);
  b.ix1 = clamp_local(g.nx - g.rx - gx0, t.bx);
  b.iy0 = clamp_local(g.ry - gy0, t.by);
  b.iy1 = clamp_local(g.ny - g.ry - gy0, t.by);
  b.iz0 = clamp_local(g.rz - gz0, t.bz);
  b.iz1 = clamp_local(g.nz - g.rz - gz0, t.bz);
  // Opaque to the optimizer: left to itself it recomputed these (64-bit clamps) inside the tile loops,
  // for every cell (PTX of the blocked kernel, 2026-11-28).
  for (int* f : {&b.ox0, &b.ox1, &b.oy0, &b.oy1, &b.oz0, &b.oz1, &b.ix0, &b.ix1, &b.iy0, &b.iy1, &b.iz0, &b.iz1})
    asm volatile("" : "+r"(*f));
  return b;
}

// The tile's loads, steps and stores walk their cells as one list over the block's 256 threads (a
// thread's first cell from its index by SmallDiv, kernels/stencil_plan.hpp, the next ones by adds;
// the store divides per cell), so no lane idles at the end of a row (a 38-cell row on 32 lanes kept
// 6 busy in its second pass) and no warp at the end of a plane. The tile is copied by cp.async, every copy of a thread in flight at once, cells outside
// the domain zero-filled by the same copies. (The first version loaded one cell into a register and
// stored it, a row per warp: with one block per SM the load latency was exposed cell by cell, and
// 3-D blocked ran at 3% of its bound.)
__device__ __forceinline__ int tile_thread() { return static_cast<int>(threadIdx.y * 32 + threadIdx.x); }

__device__ __forceinline__ void tile_load(const double* __restrict__ in, double* A, double* B, const Grid& g,
                                          const Tile& t, const LocalBox& box, long long gx0, long long gy0,
                                          long long gz0) {
  const int x1 = min(t.tx + 2 * t.hx, box.ox1), y1 = min(t.ty + 2 * t.hy, box.oy1), z1 = min(t.tz + 2 * t.hz, box.oz1);
  const int cells = t.bx * t.by * t.bz;
  const int dq = kStencilThreads / t.bx, dr = kStencilThreads - dq * t.bx;  // rows and cells per pass
  const long long pass = dq * g.nx + dr, row_skip = g.nx - t.bx, plane_skip = (g.ny - t.by) * g.nx;
  int c = tile_thread();
  const int q0 = static_cast<int>(SmallDiv(static_cast<unsigned>(t.bx)).div(static_cast<unsigned>(c)));
  int cx = c - q0 * t.bx;
  int cz = static_cast<int>(SmallDiv(static_cast<unsigned>(t.by)).div(static_cast<unsigned>(q0)));
  int cy = q0 - cz * t.by;
  const double* src = in + ((gz0 + cz) * g.ny + gy0 + cy) * g.nx + gx0 + cx;  // only read where valid
  for (; c < cells; c += kStencilThreads) {
    const bool valid = LocalBox::in_range(cx, box.ox0, x1) && LocalBox::in_range(cy, box.oy0, y1) &&
                       LocalBox::in_range(cz, box.oz0, z1);
    gpu::cp_async8_zfill(A + c, valid ? src : in, valid);
    B[c] = 0.0;
    cx += dr;
    cy += dq;
    src += pass;
    if (cx >= t.bx) {
      cx -= t.bx;
      ++cy;
      src += row_skip;
    }
    while (cy >= t.by) {
      cy -= t.by;
      ++cz;
      src += plane_skip;
    }
  }
  gpu::cp_async_commit();
  gpu::cp_async_wait<0>();  // this thread's copies; the caller's __syncthreads makes them the block's
}

template <bool Streaming>
__device__ __forceinline__ void tile_store(double* __restrict__ out, const double* A, const Grid& g, const Tile& t,
                                           const LocalBox& box, long long gx0, long long gy0, long long gz0) {
  const int w = min(t.hx + t.tx, box.ox1) - t.hx, h = min(t.hy + t.ty, box.oy1) - t.hy;
  const int d = min(t.hz + t.tz, box.oz1) - t.hz;
  if (w <= 0 || h <= 0 || d <= 0) return;
  const int cells = w * h * d;
  const SmallDiv dw(static_cast<unsigned>(w)), dh(static_cast<unsigned>(h));
  for (int c = tile_thread(); c < cells; c += kStencilThreads) {
    const int q = static_cast<int>(dw.div(static_cast<unsigned>(c))), lx = t.hx + c - q * w;
    const int qz = static_cast<int>(dh.div(static_cast<unsigned>(q))), ly = t.hy + q - qz * h, lz = t.hz + qz;
    store_stream<Streaming>(out + ((gz0 + lz) * g.ny + gy0 + ly) * g.nx + gx0 + lx, A[(lz * t.by + ly) * t.bx + lx]);
  }
}

// One step on CUDA cores over the region [s r, extent - s r) of the tile: thread i takes cells i, i +
// 256, ... of the region, its position advanced by adds (no division per cell). Edge: a tile at the
// domain's edge, where the stencil is computed everywhere in the region (its reads stay in the tile)
// and the fixed boundary (copied) and the cells outside the domain (0) are selected, no branch per
// cell; most tiles lie inside the interior for the whole region and skip the tests.
template <int N, bool Edge>
__device__ __forceinline__ void tile_walk_cuda_core(const double* A, double* B, const Tile& t, const LocalBox& box,
                                                    int lox, int loy, int loz, int w, int h, int d, int npts) {
  const int cells = w * h * d;
  const SmallDiv dw(static_cast<unsigned>(w)), dh(static_cast<unsigned>(h));
  const int dq = kStencilThreads / w, dr = kStencilThreads - dq * w;  // rows and cells per pass
  // Byte steps: a pass, from a row's end to the next row, from a plane's last row to the next plane,
  // from a cell of A to the same cell of B.
  int pass = (dq * t.bx + dr) * 8, row_skip = (t.bx - w) * 8, plane_skip = (t.by - h) * t.bx * 8;
  int to_b = static_cast<int>(B - A) * 8;
  asm volatile("" : "+r"(pass), "+r"(row_skip), "+r"(plane_skip), "+r"(to_b));
  int c = tile_thread();
  const int q0 = static_cast<int>(dw.div(static_cast<unsigned>(c)));
  int cx = c - q0 * w;
  int cz = static_cast<int>(dh.div(static_cast<unsigned>(q0)));
  int cy = q0 - cz * h;
  const char* a = reinterpret_cast<const char*>(A + ((loz + cz) * t.by + loy + cy) * t.bx + lox + cx);
  // The points' byte offsets, computed once (in PTX one add per point instead of three; ptxas still
  // reloads each from constant memory, LDC + IMAD per point in the SASS of 2026-11-28).
  int off[N > 0 ? N : 1];
  if constexpr (N > 0) {
#pragma unroll
    for (int p = 0; p < N; ++p) {
      off[p] = c_soffset[p] * static_cast<int>(sizeof(double));
      if constexpr (N <= 27) asm volatile("" : "+r"(off[p]));
    }
  }
  for (; c < cells; c += kStencilThreads) {
    double v = 0.0;
    if constexpr (N > 0) {
#pragma unroll
      for (int p = 0; p < N; ++p) v = fma(c_weight[p], *reinterpret_cast<const double*>(a + off[p]), v);
    } else {
#pragma unroll 4
      for (int p = 0; p < npts; ++p) v = fma(c_weight[p], reinterpret_cast<const double*>(a)[c_soffset[p]], v);
    }
    if constexpr (Edge) {
      const int lx = lox + cx, ly = loy + cy, lz = loz + cz;
      const double own = *reinterpret_cast<const double*>(a);
      v = box.interior(lx, ly, lz) ? v : box.inside(lx, ly, lz) ? own : 0.0;
    }
    *reinterpret_cast<double*>(const_cast<char*>(a) + to_b) = v;
    cx += dr;
    cy += dq;
    a += pass;
    if (cx >= w) {
      cx -= w;
      ++cy;
      a += row_skip;
    }
    while (cy >= h) {
      cy -= h;
      ++cz;
      a += plane_skip;
    }
  }
}

template <int N>
__device__ __forceinline__ void tile_step_cuda_core(const double* A, double* B, const Grid& g, const Tile& t,
                                                    const LocalBox& box, int s, int npts) {
  const int lox = s * g.rx, w = t.tx + 2 * t.hx - 2 * s * g.rx;
  const int loy = s * g.ry, h = t.ty + 2 * t.hy - 2 * s * g.ry;
  const int loz = s * g.rz, d = t.tz + 2 * t.hz - 2 * s * g.rz;
  if (box.ix0 <= lox && lox + w <= box.ix1 && box.iy0 <= loy && loy + h <= box.iy1 && box.iz0 <= loz &&
      loz + d <= box.iz1)
    tile_walk_cuda_core<N, false>(A, B, t, box, lox, loy, loz, w, h, d, npts);
  else
    tile_walk_cuda_core<N, true>(A, B, t, box, lox, loy, loz, w, h, d, npts);
}

template <int N, bool Streaming>
__global__ void __launch_bounds__(kStencilThreads)
    stencil_blocked_kernel(const double* __restrict__ in, double* __restrict__ out, Grid g, Tile t, int npts) {
  extern __shared__ double smem[];
  double* A = smem;
  double* B = smem + t.bx * t.by * t.bz;
  const long long gx0 = static_cast<long long>(blockIdx.x) * t.tx - t.hx;
  const long long gy0 = static_cast<long long>(blockIdx.y) * t.ty - t.hy;
  const long long gz0 = static_cast<long long>(blockIdx.z) * t.tz - t.hz;
  const LocalBox box = local_box(g, t, gx0, gy0, gz0);
  tile_load(in, A, B, g, t, box, gx0, gy0, gz0);
  __syncthreads();
  for (int s = 1; s <= t.steps; ++s) {
    tile_step_cuda_core<N>(A, B, g, t, box, s, npts);
    __syncthreads();
    double* tmp = A;
    A = B;
    B = tmp;
  }
  tile_store<Streaming>(out, A, g, t, box, gx0, gy0, gz0);
}

// One step on tensor cores: each warp takes 8x8 (x, y) blocks of the region at one z; per non-empty
// line (dy, dz) and chunk of 4 columns one mma.m8n8k4 (A from the tile, B the line's Toeplitz
// fragment in shared memory).
__device__ __forceinline__ void tile_step_tensor_core(const double* A, double* B, const double* __restrict__ frag,
                                                      const Grid& g, const Tile& t, const LocalBox& box, int s) {
  const int lox = s * g.rx, hix = t.tx + 2 * t.hx - s * g.rx;
  const int loy = s * g.ry, hiy = t.ty + 2 * t.hy - s * g.ry;
  const int loz = s * g.rz, hiz = t.tz + 2 * t.hz - s * g.rz;
  const int nbx = (hix - lox + 7) / 8, nby = (hiy - loy + 7) / 8;
  const int blocks = nbx * nby * (hiz - loz);
  const int lane = threadIdx.x, warp = threadIdx.y;  // blockDim (32, 8)
  const int gi = lane >> 2, ti = lane & 3;
  const int plane = t.bx * t.by;
  for (int b = warp; b < blocks; b += 8) {
    const int bxi = b % nbx, rest = b / nbx, byi = rest % nby;
    const int lz = loz + rest / nby;
    const int x0 = lox + 8 * bxi, y0 = loy + 8 * byi;
    double d0 = 0.0, d1 = 0.0;
    const double* arow = A + (lz * t.by + y0 + gi) * t.bx + x0 - g.rx + ti;
    for (int li = 0; li < t.lines; ++li) {
      const int2 line = c_line[li];  // (dy, dz)
      const double* a = arow + line.y * plane + line.x * t.bx;
      const double* f = frag + li * t.kchunks * 32 + lane;
      for (int c = 0; c < t.kchunks; ++c) mma_m8n8k4_fp64(d0, d1, a[4 * c], f[32 * c], d0, d1);
    }
    const int ly = y0 + gi;
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int lx = x0 + 2 * ti + e;
      if (lx >= hix || ly >= hiy) continue;
      const int l = (lz * t.by + ly) * t.bx + lx;
      B[l] = !box.inside(lx, ly, lz) ? 0.0 : !box.interior(lx, ly, lz) ? A[l] : (e ? d1 : d0);
    }
  }
}

template <bool Streaming>
__global__ void __launch_bounds__(kStencilThreads)
    stencil_tensor_core_kernel(const double* __restrict__ in, double* __restrict__ out,
                               const double* __restrict__ fragments, Grid g, Tile t) {
  extern __shared__ double smem[];
  const int cells = t.bx * t.by * t.bz;
  double* A = smem;
  double* B = smem + cells;
  double* frag = smem + 2 * cells;
  const int nfrag = t.lines * t.kchunks * 32;
  for (int i = threadIdx.y * 32 + threadIdx.x; i < nfrag; i += kStencilThreads) frag[i] = __ldg(fragments + i);
  const long long gx0 = static_cast<long long>(blockIdx.x) * t.tx - t.hx;
  const long long gy0 = static_cast<long long>(blockIdx.y) * t.ty - t.hy;
  const long long gz0 = static_cast<long long>(blockIdx.z) * t.tz - t.hz;
  const LocalBox box = local_box(g, t, gx0, gy0, gz0);
  tile_load(in, A, B, g, t, box, gx0, gy0, gz0);
  __syncthreads();
  for (int s = 1; s <= t.steps; ++s) {
    tile_step_tensor_core(A, B, frag, g, t, box, s);
    __syncthreads();
    double* tmp = A;
    A = B;
    B = tmp;
  }
  tile_store<Streaming>(out, A, g, t, box, gx0, gy0, gz0);
}

// --- plain-mma: one step per launch on tensor cores, contracting along y --------------------------
// (kernels/stencil_plan.hpp, StencilColumnMmaPlan). blockDim (32, 8): warp w takes the 16 columns
// x0 = 128 blockIdx.x + 16 w .. + 15 and kColumnMmaRowBlocks 8-row output blocks (32 rows) at one z.
// Per line (dx, dz, row offset, chunks kc) a lane loads the 2 NB + kc - 2 chunks of 4 rows that the
// NB blocks need for its two columns (block b uses chunks 2b .. 2b + kc - 1: consecutive blocks
// share kc - 2), all in flight at once, through L1 (the lines re-read a row shifted by dx), and its B
// fragments (L1-resident), then runs NB x kc mma.m16n8k4. Lane (g, t) = (lane / 4, lane % 4): A[g][t]
// and A[g + 8][t] = the input at columns x0 + g + dx and x0 + 8 + g + dx, row y0 - ry + offset + 4c +
// t; D[g (+8)][2t + e] = the output at column x0 + g (+8), row y0 + 2t + e. Loads outside the grid
// read 0 (the outputs they reach are the fixed boundary, which copies its input).
// (A variant that first staged the block's input tile in shared memory was slower: H100, 2d5pt
// 10240^2 t = 3 2777 us against 2151 us, 3d7pt 512^3 9432 against 3651 us.)
__constant__ int4 c_cmline[(2 * kMaxStencilRadius + 1) * (2 * kMaxStencilRadius + 1)];  // (dx, dz, offset, chunks)

// D (16 x 8) += A (16 x 4) B (4 x 8): one mma.m16n8k4 on sm_90, two m8n8k4 before.
__device__ __forceinline__ void mma_m16n8k4_fp64(double (&d)[4], double a0, double a1, double b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
      : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
      : "d"(a0), "d"(a1), "d"(b));
#else
  mma_m8n8k4_fp64(d[0], d[1], a0, b, d[0], d[1]);
  mma_m8n8k4_fp64(d[2], d[3], a1, b, d[2], d[3]);
#endif
}

// One line's B fragments (its `chunks` of 4 rows, L1-resident) and its NB x chunks mma.m16n8k4 on the
// A chunks a0 / a1 the lane loaded.
template <int KC, int NB, int NJ>
__device__ __forceinline__ void column_mma_line(double (&acc)[NB][4], const double (&a0)[NJ], const double (&a1)[NJ],
                                                const double* __restrict__ f, int chunks) {
  double bf[KC];
#pragma unroll
  for (int c = 0; c < KC; ++c) bf[c] = c < chunks ? __ldg(f + 32 * c) : 0.0;
#pragma unroll
  for (int c = 0; c < KC; ++c) {
    if (c >= chunks) break;  // uniform over the warp
#pragma unroll
    for (int b = 0; b < NB; ++b) mma_m16n8k4_fp64(acc[b], a0[2 * b + c], a1[2 * b + c], bf[c]);
  }
}

template <int KC, bool Streaming>
__global__ void __launch_bounds__(kStencilThreads)
    stencil_column_mma_kernel(const double* __restrict__ in, double* __restrict__ out,
                              const double* __restrict__ fragments, Grid g, int nlines) {
  constexpr int NB = kColumnMmaRowBlocks, NJ = 2 * NB + KC - 2;
  const int lane = static_cast<int>(threadIdx.x), warp = static_cast<int>(threadIdx.y);
  const int gi = lane >> 2, ti = lane & 3;
  const long long x0 = static_cast<long long>(blockIdx.x) * kColumnMmaBlockX + 16 * warp;
  if (x0 >= g.nx) return;  // the whole warp: the mma needs every lane of the ones that stay
  const long long yb = static_cast<long long>(blockIdx.y) * kColumnMmaBlockY;
  const long long z = blockIdx.z;
  const long long plane = g.nx * g.ny;
  double acc[NB][4];
#pragma unroll
  for (int b = 0; b < NB; ++b) acc[b][0] = acc[b][1] = acc[b][2] = acc[b][3] = 0.0;
  // A warp whose every read and write lies inside the domain's interior (most of them): no test per load
  // or store, one 64-bit pointer per line and 32-bit row steps (the guarded form below spends ~10
  // instructions of 64-bit index arithmetic on each load). The last chunk of a line may read up to 3 rows
  // past its last point (their B rows are 0), hence the 3.
  const bool fast = x0 >= g.rx && x0 + 16 + g.rx <= g.nx && yb >= g.ry && yb + kColumnMmaBlockY + g.ry + 3 <= g.ny &&
                    z >= g.rz && z + g.rz < g.nz && g.nx < (1 << 24);  // 32-bit row steps
  if (fast) {
    const int row4 = 4 * static_cast<int>(g.nx);
    const double* base = in + (z * g.ny + yb - g.ry + ti) * g.nx + x0 + gi;
    for (int l = 0; l < nlines; ++l) {
      const int4 line = c_cmline[l];
      const double* p = base + (line.y * g.ny + line.z) * g.nx + line.x;
      const int nj = 2 * NB + line.w - 2;
      double a0[NJ], a1[NJ];
#pragma unroll
      for (int j = 0; j < NJ; ++j) {
        a0[j] = j < nj ? __ldg(p + j * row4) : 0.0;
        a1[j] = j < nj ? __ldg(p + j * row4 + 8) : 0.0;
      }
      column_mma_line<KC>(acc, a0, a1, fragments + l * KC * 32 + lane, line.w);
    }
    double* o = out + (z * g.ny + yb + 2 * ti) * g.nx + x0 + gi;
    const int nx = static_cast<int>(g.nx);
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int b = 0; b < NB; ++b)
#pragma unroll
        for (int e = 0; e < 2; ++e) store_stream<Streaming>(o + (8 * b + e) * nx + 8 * h, acc[b][2 * h + e]);
    return;
  }
  for (int l = 0; l < nlines; ++l) {
    const int4 line = c_cmline[l];
    const long long zz = z + line.y, xa = x0 + gi + line.x, xb = xa + 8;
    const bool in_plane = zz >= 0 && zz < g.nz;
    const bool ca = in_plane && xa >= 0 && xa < g.nx, cb = in_plane && xb >= 0 && xb < g.nx;
    const double* p = in + (in_plane ? zz * plane : 0);
    const long long y0 = yb - g.ry + line.z + ti;
    const int nj = 2 * NB + line.w - 2;
    double a0[NJ], a1[NJ];
#pragma unroll
    for (int j = 0; j < NJ; ++j) {
      const long long y = y0 + 4 * j;
      const bool row = j < nj && y >= 0 && y < g.ny;
      a0[j] = row && ca ? __ldg(p + y * g.nx + xa) : 0.0;
      a1[j] = row && cb ? __ldg(p + y * g.nx + xb) : 0.0;
    }
    column_mma_line<KC>(acc, a0, a1, fragments + static_cast<long long>(l) * KC * 32 + lane, line.w);
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const long long xo = x0 + 8 * h + gi;
    if (xo >= g.nx) continue;
#pragma unroll
    for (int b = 0; b < NB; ++b)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const long long y = yb + 8 * b + 2 * ti + e;
        if (y >= g.ny) continue;
        const long long i = z * plane + y * g.nx + xo;
        store_stream<Streaming>(out + i, g.interior(xo, y, z) ? acc[b][2 * h + e] : __ldg(in + i));
      }
  }
}

// --- 2.5-D streaming: march along the last axis, the steps pipelined through per-level rings --------
// (kernels/stencil_plan.hpp, StencilStreamPlan). Axes: a = x, b = y (3-D only), m = the march axis.
// Plane indices and in-plane offsets are 32-bit (the instance refuses domains where they are not):
// the per-plane work of a block is a few cells per thread, so any 64-bit index arithmetic or modulo
// per plane costs more than the stencil itself (ncu, H100: 112 warp instructions per cell-step in
// the first version, most of them a 64-bit modulo for the ring slot).
struct StreamTile {
  int sx, sy, tx, ty, ra, rb, rm, ring, steps, chunk;
  int na, nb, nm;        // extents on a, b, m
  long long mstride;     // elements between consecutive march planes
};

template <int N, bool Streaming, int T>
__global__ void __launch_bounds__(T)
    stencil_streaming_kernel(const double* __restrict__ in, double* __restrict__ out, StreamTile st, int npts) {
  extern __shared__ double smem[];
  constexpr int E = kStreamMaxCells / T;
  const int tid = threadIdx.x;
  const int P = st.sx * st.sy;
  const int a0 = static_cast<int>(blockIdx.x) * st.tx - st.steps * st.ra;
  const int b0 = static_cast<int>(blockIdx.y) * st.ty - st.steps * st.rb;
  const int m0 = static_cast<int>(blockIdx.z) * st.chunk;
  const int m1 = min(m0 + st.chunk, st.nm);
  // Per cell of this thread (cell tid + T k of the section): its in-plane global offset
  // and info = class (0 outside the domain, 1 fixed boundary, 2 interior) | depth << 2, depth being
  // the last level the section's halo lets it compute; -1 where the section has no such cell.
  int rel[E], info[E];
#pragma unroll
  for (int k = 0; k < E; ++k) {
    const int i = tid + k * T;
    rel[k] = 0;
    info[k] = -1;
    if (i < P) {
      const int ca = i % st.sx, cb = i / st.sx;
      const int ga = a0 + ca, gb = b0 + cb;
      const bool inside = ga >= 0 && ga < st.na && gb >= 0 && gb < st.nb;
      const bool inner = ga >= st.ra && ga < st.na - st.ra && gb >= st.rb && gb < st.nb - st.rb;
      const int da = st.ra ? min(ca, st.sx - 1 - ca) / st.ra : 64;
      const int db = st.rb ? min(cb, st.sy - 1 - cb) / st.rb : 64;
      info[k] = (inside ? (inner ? 2 : 1) : 0) | (min(min(da, db), 64) << 2);
      rel[k] = inside ? gb * st.na + ga : 0;
    }
  }
  const int p_begin = m0 - st.steps * st.rm, p_end = m1 + st.steps * st.rm;
  double pre[E];
  {
    const bool pin = p_begin >= 0 && p_begin < st.nm;
    const double* src = in + static_cast<long long>(p_begin) * st.mstride;
#pragma unroll
    for (int k = 0; k < E; ++k) pre[k] = pin && info[k] > 0 && (info[k] & 3) ? __ldg(src + rel[k]) : 0.0;
  }
  const int level_stride = st.ring * P;
  int slot = p_begin % st.ring;  // the ring slot of plane p (kept in [0, ring))
  if (slot < 0) slot += st.ring;
  for (int p = p_begin; p < p_end; ++p) {
    double* lvl0 = smem + slot * P;
#pragma unroll
    for (int k = 0; k < E; ++k)
      if (info[k] >= 0) lvl0[tid + k * T] = pre[k];
    if (p + 1 < p_end) {  // the next plane's loads fly while this plane's levels compute
      const bool pin = p + 1 >= 0 && p + 1 < st.nm;
      const double* src = in + static_cast<long long>(p + 1) * st.mstride;
#pragma unroll
      for (int k = 0; k < E; ++k) pre[k] = pin && info[k] > 0 && (info[k] & 3) ? __ldg(src + rel[k]) : 0.0;
    }
    __syncthreads();
    int back = 0;  // (s rm) mod ring
    for (int s = 1; s <= st.steps; ++s) {
      back += st.rm;
      if (back >= st.ring) back -= st.ring;
      const int q = p - s * st.rm;
      const int reach = (st.steps - s) * st.rm;
      if (q >= m0 - reach && q < m1 + reach) {  // uniform over the block
        const int qcls = q >= 0 && q < st.nm ? (q >= st.rm && q < st.nm - st.rm ? 2 : 1) : 0;
        int rot = slot - back;
        if (rot < 0) rot += st.ring;
        const double* src = smem + (s - 1) * level_stride;
        double* dst = smem + s * level_stride + rot * P;
        double* gout = out + static_cast<long long>(q) * st.mstride;
        const bool write = s == st.steps && q >= m0 && q < m1;
        const int* ro = c_roff + rot * npts;
#pragma unroll
        for (int k = 0; k < E; ++k) {
          if (info[k] < 0 || (info[k] >> 2) < s) continue;
          const int l = tid + k * T;
          const int c = min(info[k] & 3, qcls);
          double v;
          if (c == 2) {
            v = 0.0;
            if constexpr (N > 0) {
#pragma unroll
              for (int j = 0; j < N; ++j) v = fma(c_weight[j], src[l + ro[j]], v);
            } else {
#pragma unroll 4
              for (int j = 0; j < npts; ++j) v = fma(c_weight[j], src[l + ro[j]], v);
            }
          } else {
            v = c == 1 ? src[rot * P + l] : 0.0;
          }
          if (s < st.steps) dst[l] = v;
          else if (write && c > 0) store_stream<Streaming>(gout + rel[k], v);
        }
      }
      if (s < st.steps) __syncthreads();
    }
    if (st.steps == 1) __syncthreads();  // the next plane's level 0 overwrites a plane this one read
    if (++slot == st.ring) slot = 0;
  }
}

// --- the streaming variant's 2-D rows kernel (kernels/stencil_plan.hpp, StencilRowsPlan) ---------
// Thread = C adjacent columns of the block's section (C W cells: the core and steps R on each side),
// marching along y over the rows [m0, m1) of its chunk plus steps R warm-up rows on each side. Level
// s keeps acc[s][c][k], the partial sum of its output row j - R + k when its input row j (level s - 1)
// has arrived, and own[s][c][k], the level s - 1 value of column c in row j - k (a boundary cell
// copies it: fixed boundary). A level's row sits in shared memory with PAD zero cells on each side;
// a thread reads only its 2R outer neighbours there (its own C values are in registers). Input rows
// are prefetched D rows ahead, the loop unrolled by D so that each prefetch register is written once
// per D rows and read once (no register move waits on a load); for R = 1, D = 6 is also a multiple of
// the K = 3 partial rows and the 2 own values, so their rotation is register renaming.
// C, columns per thread, is 1: two (R = 1) halve the barrier, address and loop work per cell (one
// column issues 30.7 warp instructions per cell-step, 2d5pt t = 3, ncu, H200) but took 118 registers
// (2 blocks of 256 per SM): 2d5pt t = 3 10240^2 596 us against 507 us with one (H200, 2026-11-27).
// Capping R = 1 at 64 registers (4 blocks per SM) gained 2-4% out of the L2 and lost 13-16% in it.
__constant__ double c_rowsw[(2 * kRowsMaxRadius + 1) * (2 * kRowsMaxRadius + 1)];

struct RowsTile {
  int nx, ny, rx, ry, core, chunk;
};

template <int R, bool Box, int T>
__global__ void __launch_bounds__(256)
    stencil_rows_kernel(const double* __restrict__ in, double* __restrict__ out, RowsTile rt, bool stream_store) {
  constexpr int K = 2 * R + 1;
  constexpr int C = 1;  // = rows_columns_per_thread(R) (stencil_plan.hpp)
  constexpr int PAD = (R + C - 1) / C * C;
  constexpr int D = R == 1 ? 6 : 4;  // even: the level-0 buffer alternates with u
  extern __shared__ double smem[];
  const int tid = threadIdx.x, W = static_cast<int>(blockDim.x) * C, stride = W + 2 * PAD;
  for (int i = tid; i < (T + 1) * stride; i += blockDim.x) smem[i] = 0.0;  // the padding cells stay 0
  __syncthreads();
  const int x0 = static_cast<int>(blockIdx.x) * rt.core - T * R + C * tid;
  bool xin[C], xint[C], xcore[C];
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const int x = x0 + c, cell = C * tid + c;
    xin[c] = x >= 0 && x < rt.nx;
    xint[c] = x >= rt.rx && x < rt.nx - rt.rx;
    xcore[c] = cell >= T * R && cell < W - T * R && x < rt.nx;
  }
  const int m0 = static_cast<int>(blockIdx.y) * rt.chunk;
  const int m1 = min(m0 + rt.chunk, rt.ny);
  const int p_begin = m0 - T * R, p_end = m1 + T * R;
  const long long nx = rt.nx;
  double acc[T][C][K], own[T][C][R + 1], pre[D][C];
#pragma unroll
  for (int s = 0; s < T; ++s)
#pragma unroll
    for (int c = 0; c < C; ++c) {
#pragma unroll
      for (int k = 0; k < K; ++k) acc[s][c][k] = 0.0;
#pragma unroll
      for (int k = 0; k <= R; ++k) own[s][c][k] = 0.0;
    }
#pragma unroll
  for (int u = 0; u < D; ++u) {
    const int row = p_begin + u;
    const bool rin = row >= 0 && row < rt.ny;
#pragma unroll
    for (int c = 0; c < C; ++c) pre[u][c] = xin[c] && rin ? __ldg(in + row * nx + x0 + c) : 0.0;
  }
  for (int p = p_begin; p < p_end; p += D) {
#pragma unroll
    for (int u = 0; u < D; ++u) {
      const int row = p + u;
      if (row >= p_end) break;  // uniform: the chunk's last rows (no extra barrier rounds)
      double cur[C];
#pragma unroll
      for (int c = 0; c < C; ++c) cur[c] = pre[u][c];
      {
        const int next = row + D;
        const bool rin = next >= 0 && next < rt.ny;
#pragma unroll
        for (int c = 0; c < C; ++c) pre[u][c] = xin[c] && rin ? __ldg(in + next * nx + x0 + c) : 0.0;
      }
      double* b0 = smem + (u & 1) * stride + PAD;
      if constexpr (C == 2) *reinterpret_cast<double2*>(b0 + C * tid) = make_double2(cur[0], cur[1]);
      else b0[tid] = cur[0];
      __syncthreads();
#pragma unroll
      for (int s = 1; s <= T; ++s) {
        const double* b = s == 1 ? b0 : smem + s * stride + PAD;  // level s - 1 (buffer s), row j = row - (s - 1) R
        double nb[C + 2 * R];  // nb[e + R]: the level s - 1 value at column x0 + e
#pragma unroll
        for (int e = -R; e < C + R; ++e) nb[e + R] = e >= 0 && e < C ? cur[e >= 0 && e < C ? e : 0] : b[C * tid + e];
        const int o = row - s * R;  // complete now: acc[s - 1][c][0]
        const bool oin = o >= rt.ry && o < rt.ny - rt.ry;
        double val[C];
#pragma unroll
        for (int c = 0; c < C; ++c) {
#pragma unroll
          for (int k = R; k > 0; --k) own[s - 1][c][k] = own[s - 1][c][k - 1];
          own[s - 1][c][0] = cur[c];
          // Row j adds to output row j - R + k with dy = R - k; tap d (dx = d - R) reads nb[c + d].
#pragma unroll
          for (int k = 0; k < K; ++k) {
            const int dy = R - k;
            if (Box || dy == 0) {
#pragma unroll
              for (int d = 0; d < K; ++d) acc[s - 1][c][k] = fma(c_rowsw[(dy + R) * K + d], nb[c + d], acc[s - 1][c][k]);
            } else {
              acc[s - 1][c][k] = fma(c_rowsw[(dy + R) * K + R], nb[c + R], acc[s - 1][c][k]);
            }
          }
          val[c] = xint[c] && oin ? acc[s - 1][c][0] : own[s - 1][c][R];
#pragma unroll
          for (int k = 0; k + 1 < K; ++k) acc[s - 1][c][k] = acc[s - 1][c][k + 1];
          acc[s - 1][c][K - 1] = 0.0;
        }
        if (s < T) {
          double* dst = smem + (s + 1) * stride + PAD;  // level s lives at buffer s + 1 (0 and 1: level 0)
          if constexpr (C == 2) *reinterpret_cast<double2*>(dst + C * tid) = make_double2(val[0], val[1]);
          else dst[tid] = val[0];
          __syncthreads();
#pragma unroll
          for (int c = 0; c < C; ++c) cur[c] = val[c];
        } else if (o >= m0 && o < m1) {
#pragma unroll
          for (int c = 0; c < C; ++c) {
            if (!xcore[c]) continue;
            double* dst = out + o * nx + x0 + c;
            if (stream_store) __stcs(dst, val[c]);
            else *dst = val[c];
          }
        }
      }
    }
  }
}

// --- the streaming variant's 3-D planes kernel (kernels/stencil_plan.hpp, StencilPlanesPlan) -------
// The rows kernel one dimension up (radius 1): thread (tx, ty) owns column (x, y) of a 32 x 32
// section, marches along z; level s keeps acc[s][k] (output plane j - 1 + k, input plane j of level
// s - 1 just arrived) and own[s][k] (the level s - 1 value of its column in plane j - k, copied at the
// fixed boundary). One 34 x 34 plane per level in shared memory (level 0 twice), zero outside.
struct PlanesTile {
  int nx, ny, nz, rx, ry, rz, core, chunk;
};

template <bool Box, int T>
__global__ void __launch_bounds__(kPlanesSide * kPlanesSide, 1)
    stencil_planes_kernel(const double* __restrict__ in, double* __restrict__ out, PlanesTile pt, bool stream_store) {
  constexpr int S = kPlanesSide, P = S + 2, PLANE = P * P;
  constexpr int D = 4;  // planes in flight per thread
  extern __shared__ double smem[];
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (int i = ty * S + tx; i < (T + 1) * PLANE; i += S * S) smem[i] = 0.0;
  __syncthreads();
  const int x = static_cast<int>(blockIdx.x) * pt.core - T + tx;
  const int y = static_cast<int>(blockIdx.y) * pt.core - T + ty;
  const bool xin = x >= 0 && x < pt.nx && y >= 0 && y < pt.ny;
  const bool xint = x >= pt.rx && x < pt.nx - pt.rx && y >= pt.ry && y < pt.ny - pt.ry;
  const bool xcore = tx >= T && tx < S - T && ty >= T && ty < S - T && x < pt.nx && y < pt.ny;
  const int m0 = static_cast<int>(blockIdx.z) * pt.chunk;
  const int m1 = min(m0 + pt.chunk, pt.nz);
  const int p_begin = m0 - T, p_end = m1 + T;
  const long long plane = static_cast<long long>(pt.nx) * pt.ny;
  const long long col = xin ? static_cast<long long>(y) * pt.nx + x : 0;
  const int me = (ty + 1) * P + tx + 1;
  double acc[T][3], own[T][2], pre[D];
#pragma unroll
  for (int s = 0; s < T; ++s) {
    acc[s][0] = acc[s][1] = acc[s][2] = 0.0;
    own[s][0] = own[s][1] = 0.0;
  }
#pragma unroll
  for (int u = 0; u < D; ++u) {
    const int z = p_begin + u;
    pre[u] = xin && z >= 0 && z < pt.nz ? __ldg(in + z * plane + col) : 0.0;
  }
  for (int p = p_begin; p < p_end; p += D) {
#pragma unroll
    for (int u = 0; u < D; ++u) {
      const int z = p + u;
      if (z >= p_end) break;  // uniform
      double cur = pre[u];
      {
        const int next = z + D;
        pre[u] = xin && next >= 0 && next < pt.nz ? __ldg(in + next * plane + col) : 0.0;
      }
      double* b0 = smem + (u & 1) * PLANE;
      b0[me] = cur;
      __syncthreads();
#pragma unroll
      for (int s = 1; s <= T; ++s) {
        const double* b = s == 1 ? b0 : smem + s * PLANE;  // level s - 1 (buffer s), plane j = z - (s - 1)
        double nb[9];  // nb[(dy + 1) 3 + dx + 1]: level s - 1 in plane j around this column
#pragma unroll
        for (int dy = -1; dy <= 1; ++dy)
#pragma unroll
          for (int dx = -1; dx <= 1; ++dx) {
            const int i = (dy + 1) * 3 + dx + 1;
            if (dx == 0 && dy == 0) nb[i] = cur;
            else if (Box || dx == 0 || dy == 0) nb[i] = b[me + dy * P + dx];
            else nb[i] = 0.0;
          }
        own[s - 1][1] = own[s - 1][0];
        own[s - 1][0] = cur;
        // Plane j adds to output plane j - 1 + k with dz = 1 - k.
#pragma unroll
        for (int k = 0; k < 3; ++k) {
          const int dz = 1 - k;
          if (Box) {
#pragma unroll
            for (int i = 0; i < 9; ++i) acc[s - 1][k] = fma(c_rowsw[(dz + 1) * 9 + i], nb[i], acc[s - 1][k]);
          } else if (dz == 0) {
#pragma unroll
            for (int i = 1; i < 9; i += 2) acc[s - 1][k] = fma(c_rowsw[9 + i], nb[i], acc[s - 1][k]);
            acc[s - 1][k] = fma(c_rowsw[13], nb[4], acc[s - 1][k]);
          } else {
            acc[s - 1][k] = fma(c_rowsw[(dz + 1) * 9 + 4], nb[4], acc[s - 1][k]);
          }
        }
        const int o = z - s;  // complete now: acc[s - 1][0]
        const bool interior = xint && o >= pt.rz && o < pt.nz - pt.rz;
        const double val = interior ? acc[s - 1][0] : own[s - 1][1];
        acc[s - 1][0] = acc[s - 1][1];
        acc[s - 1][1] = acc[s - 1][2];
        acc[s - 1][2] = 0.0;
        if (s < T) {
          smem[(s + 1) * PLANE + me] = val;  // level s lives at buffer s + 1 (0 and 1: level 0)
          __syncthreads();
          cur = val;
        } else if (xcore && o >= m0 && o < m1) {
          double* dst = out + o * plane + col;
          if (stream_store) __stcs(dst, val);
          else *dst = val;
        }
      }
    }
  }
}

__global__ void count_nan_kernel(const double* __restrict__ p, long long n, unsigned long long* count) {
  unsigned long long c = 0;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    c += isnan(p[i]) ? 1 : 0;
  if (c) atomicAdd(count, c);
}

__global__ void gather_kernel(const double* __restrict__ p, const long long* __restrict__ idx, int n,
                              double* __restrict__ out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = p[idx[i]];
}

inline const StencilShape& shape_of(const KernelParams& params) {
  const auto it = params.find("shape_id");
  if (it == params.end())
    throw std::invalid_argument("a stencil needs a shape: validate --shapes 2d5pt,... (or the built-ins by default)");
  return registered_stencil_shape(static_cast<int>(it->second));
}

// The model of a variant of one launch per step (plain, plain-mma): each step reads and writes the
// grid, so Q is t times the kind's, and the t dependent launches each pay the launch and first byte
// when timed back-to-back.
inline KernelModel one_pass_per_step(const KernelParams& params, KernelModel k) {
  const double t = params.count("steps") ? params.at("steps") : 1.0;
  k.traffic_bytes *= t;
  k.read_bytes *= t;
  k.write_bytes *= t;
  k.passes = static_cast<int>(t);
  k.description += " (one pass per step: Q x " + std::to_string(static_cast<int>(t)) + ")";
  return k;
}

inline StencilDomain domain_of(const StencilShape& s, const KernelParams& p) {
  StencilDomain d;
  d.dims = s.dims;
  d.nx = static_cast<std::int64_t>(p.at("nx"));
  d.ny = static_cast<std::int64_t>(p.at("ny"));
  d.nz = s.dims == 3 ? static_cast<std::int64_t>(p.at("nz")) : 1;
  return d;
}

template <int DM, int NC, int K, bool S>
void launch_plain_n(dim3 grid, cudaStream_t st, const double* in, double* out, const Grid& g, int ncol, int npts) {
  stencil_plain_kernel<DM, NC, K, S><<<grid, kStencilThreads, 0, st>>>(in, out, g, ncol, npts);
}
template <int N, bool S>
void launch_point_n(dim3 grid, cudaStream_t st, const double* in, double* out, const Grid& g, int npts) {
  stencil_plain_point_kernel<N, S><<<grid, kStencilThreads, 0, st>>>(in, out, g, npts);
}
// The point kernel's compiled sizes (the rest run the generic instance, one point per thread).
inline bool point_kernel_compiled(int npts) {
  return npts == 5 || npts == 7 || npts == 9 || npts == 13 || npts == 27 || npts == 49;
}
template <int N, bool S>
void launch_blocked_n(dim3 grid, size_t smem, cudaStream_t st, const double* in, double* out, const Grid& g,
                      const Tile& t, int npts) {
  static bool configured = false;  // per instantiation: the opt-in to more than 48 KiB
  if (!configured) {
    CUDA_CHECK(cudaFuncSetAttribute(stencil_blocked_kernel<N, S>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    227 * 1024));
    configured = true;
  }
  stencil_blocked_kernel<N, S><<<grid, dim3(32, 8), smem, st>>>(in, out, g, t, npts);
}

template <int N, bool S, int T>
void launch_streaming_t(dim3 grid, size_t smem, cudaStream_t st, const double* in, double* out, const StreamTile& t,
                        int npts) {
  static bool configured = false;
  if (!configured) {
    CUDA_CHECK(cudaFuncSetAttribute(stencil_streaming_kernel<N, S, T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    227 * 1024));
    configured = true;
  }
  stencil_streaming_kernel<N, S, T><<<grid, T, smem, st>>>(in, out, t, npts);
}
template <int N, bool S>
void launch_streaming_n(dim3 grid, size_t smem, cudaStream_t st, const double* in, double* out, const StreamTile& t,
                        int npts, int threads) {
  if (threads == 2 * kStreamThreads) launch_streaming_t<N, S, 2 * kStreamThreads>(grid, smem, st, in, out, t, npts);
  else launch_streaming_t<N, S, kStreamThreads>(grid, smem, st, in, out, t, npts);
}

template <int T>
const void* streaming_kernel_for(int npts) {
  return npts == 5    ? reinterpret_cast<const void*>(stencil_streaming_kernel<5, true, T>)
         : npts == 7  ? reinterpret_cast<const void*>(stencil_streaming_kernel<7, true, T>)
         : npts == 9  ? reinterpret_cast<const void*>(stencil_streaming_kernel<9, true, T>)
         : npts == 13 ? reinterpret_cast<const void*>(stencil_streaming_kernel<13, true, T>)
         : npts == 27 ? reinterpret_cast<const void*>(stencil_streaming_kernel<27, true, T>)
         : npts == 49 ? reinterpret_cast<const void*>(stencil_streaming_kernel<49, true, T>)
                      : reinterpret_cast<const void*>(stencil_streaming_kernel<0, true, T>);
}

// The rows kernel for (R, box, steps): f.template run<R, Box, T>() with the compiled instance.
template <class F>
void rows_dispatch(int r, bool box, int steps, const F& f) {
  switch (r * 100 + (box ? 10 : 0) + steps) {
    case 101: f.template run<1, false, 1>(); return;
    case 102: f.template run<1, false, 2>(); return;
    case 103: f.template run<1, false, 3>(); return;
    case 104: f.template run<1, false, 4>(); return;
    case 111: f.template run<1, true, 1>(); return;
    case 112: f.template run<1, true, 2>(); return;
    case 113: f.template run<1, true, 3>(); return;
    case 114: f.template run<1, true, 4>(); return;
    case 201: f.template run<2, false, 1>(); return;
    case 202: f.template run<2, false, 2>(); return;
    case 203: f.template run<2, false, 3>(); return;
    case 204: f.template run<2, false, 4>(); return;
    case 211: f.template run<2, true, 1>(); return;
    case 212: f.template run<2, true, 2>(); return;
    case 213: f.template run<2, true, 3>(); return;
    case 214: f.template run<2, true, 4>(); return;
    case 301: f.template run<3, false, 1>(); return;
    case 302: f.template run<3, false, 2>(); return;
    case 303: f.template run<3, false, 3>(); return;
    case 304: f.template run<3, false, 4>(); return;
    case 311: f.template run<3, true, 1>(); return;
    case 312: f.template run<3, true, 2>(); return;
    case 313: f.template run<3, true, 3>(); return;
    case 314: f.template run<3, true, 4>(); return;
    default: break;
  }
  throw std::logic_error("stencil rows: no kernel for radius " + std::to_string(r) + ", " + std::to_string(steps) + " steps");
}
struct RowsLaunch {
  dim3 grid;
  int threads;
  std::size_t smem;
  cudaStream_t stream;
  const double* in;
  double* out;
  RowsTile tile;
  bool stream_store;
  template <int R, bool B, int T>
  void run() const {
    stencil_rows_kernel<R, B, T><<<grid, threads, smem, stream>>>(in, out, tile, stream_store);
  }
};
struct RowsOccupancy {
  int threads;
  std::size_t smem;
  int* blocks;
  template <int R, bool B, int T>
  void run() const {
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, stencil_rows_kernel<R, B, T>, threads, smem));
  }
};

template <class F>
void planes_dispatch(bool box, int steps, const F& f) {
  switch ((box ? 10 : 0) + steps) {
    case 1: f.template run<false, 1>(); return;
    case 2: f.template run<false, 2>(); return;
    case 3: f.template run<false, 3>(); return;
    case 11: f.template run<true, 1>(); return;
    case 12: f.template run<true, 2>(); return;
    case 13: f.template run<true, 3>(); return;
    default: break;
  }
  throw std::logic_error("stencil planes: no kernel for " + std::to_string(steps) + " steps");
}
struct PlanesLaunch {
  dim3 grid;
  std::size_t smem;
  cudaStream_t stream;
  const double* in;
  double* out;
  PlanesTile tile;
  bool stream_store;
  template <bool B, int T>
  void run() const {
    stencil_planes_kernel<B, T><<<grid, dim3(kPlanesSide, kPlanesSide), smem, stream>>>(in, out, tile, stream_store);
  }
};
struct PlanesOccupancy {
  std::size_t smem;
  int* blocks;
  template <bool B, int T>
  void run() const {
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, stencil_planes_kernel<B, T>, kPlanesSide * kPlanesSide, smem));
  }
};

// Blocks of the streaming kernel for this many points that fit one SM at this shared memory.
inline int streaming_blocks_per_sm(int npts, size_t smem, int threads) {
  const void* k = threads == 2 * kStreamThreads ? streaming_kernel_for<2 * kStreamThreads>(npts)
                                                : streaming_kernel_for<kStreamThreads>(npts);
  CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024));
  int n = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k, threads, smem));
  return n;
}

template <StencilMethod M>  // a template so that each variant's file compiles only its own kernels
class StencilInstance : public KernelInstance {
 public:
  StencilInstance(const KernelParams& params, const RunContext& ctx)
      : shape_(shape_of(params)),
        dom_(domain_of(shape_, params)),
        steps_(static_cast<int>(params.count("steps") ? params.at("steps") : 1)),
        streaming_(!ctx.in_l2),
        plain_config_(static_cast<int>(params.count("launch_config") ? params.at("launch_config") : 0)) {
    if (plain_config_ < kPlainAuto || plain_config_ > (M == StencilMethod::plain ? kPlainRegister : kStreamRows) ||
        (M != StencilMethod::plain && M != StencilMethod::streaming && plain_config_ != kPlainAuto))
      throw std::invalid_argument("stencil: no launch_config " + std::to_string(plain_config_) +
                                  " (plain: 0 chosen by shape and size, 1 one point per thread, 2 columns, 3 rows or "
                                  "planes at one step; "
                                  "streaming: 0 chosen by shape, 1 the ring kernel, 2 the rows (2-D) or planes (3-D) kernel)");
    check_stencil_domain(shape_, dom_);
    const StencilRadii r = stencil_radii(shape_);
    grid_ = Grid{dom_.nx, dom_.ny, dom_.nz, r.x, r.y, r.z};
    const size_t n = static_cast<size_t>(dom_.points());
    in_ = gpu::DeviceBuffer<double>(n);
    out_ = gpu::DeviceBuffer<double>(n);
    if ((M == StencilMethod::plain || M == StencilMethod::tensor_core_plain) && steps_ > 1)
      other_ = gpu::DeviceBuffer<double>(n);
    weights_.resize(static_cast<size_t>(shape_.size()));
    offsets_.resize(weights_.size());
    for (size_t p = 0; p < weights_.size(); ++p) {
      const auto& q = shape_.points[p];
      weights_[p] = q.weight;
      offsets_[p] = q.dx + q.dy * dom_.nx + q.dz * dom_.nx * dom_.ny;
    }
    // The point kernel's 32-bit form: every offset and every axis within int.
    offsets_fit32_ = dom_.nx <= INT_MAX && dom_.ny <= INT_MAX && dom_.nz <= INT_MAX;
    for (const long long o : offsets_) offsets_fit32_ = offsets_fit32_ && o >= INT_MIN && o <= INT_MAX;
    if (offsets_fit32_) offsets32_.assign(offsets_.begin(), offsets_.end());
    if (M == StencilMethod::streaming) {
      const std::string refusal = stencil_register_refusal(shape_, steps_);
      if (plain_config_ == kStreamRows && !refusal.empty())
        throw std::invalid_argument("stencil streaming: launch_config 2 (rows or planes): " + refusal);
      use_rows_ = refusal.empty() && plain_config_ != kStreamRing && shape_.dims == 2;
      use_planes_ = refusal.empty() && plain_config_ != kStreamRing && shape_.dims == 3;
    }
    if (M == StencilMethod::streaming && (use_rows_ || use_planes_)) {
      plan_register_kernel(steps_, r);
      launch_grid_ = reg_grid_;
    } else if (M == StencilMethod::streaming) {
      // The ring kernel. Two or more blocks per SM when the rings fit 100 KiB; else the opt-in 227 KiB.
      // Planned twice: the section first (for its shared memory), then the chunks for the blocks
      // that this kernel fits per SM at that shared memory (one wave, no tail, where it can).
      const std::int64_t sms = current_sm_count();
      std::size_t limit = 100 * 1024;
      try {
        stream_ = plan_stencil_streaming(shape_, dom_, steps_, 8 * sms, limit);
      } catch (const std::invalid_argument&) {
        limit = 226 * 1024;
        stream_ = plan_stencil_streaming(shape_, dom_, steps_, 8 * sms, limit);
      }
      stream_threads_ = streaming_threads(streaming_blocks_per_sm(shape_.size(), stream_.smem_bytes, kStreamThreads));
      const int per_sm = streaming_blocks_per_sm(shape_.size(), stream_.smem_bytes, stream_threads_);
      stream_ = plan_stencil_streaming(shape_, dom_, steps_, sms * std::max(1, per_sm), limit);
      if (stream_.blocks_b > 65535 || stream_.chunks > 65535 || stream_.blocks_a > 2147483647LL)
        throw std::invalid_argument("stencil: domain " + dom_.text() + " needs too many streaming blocks");
      const std::int64_t plane = dom_.dims == 3 ? dom_.nx * dom_.ny : dom_.nx;
      const std::int64_t planes = dom_.dims == 3 ? dom_.nz : dom_.ny;
      if (plane + 64 * stream_.sx > 2147483647LL || planes + 64 * stream_.chunk > 2147483647LL)
        throw std::invalid_argument("stencil streaming: domain " + dom_.text() +
                                    " has more than 2^31 cells per plane or planes (32-bit indices)");
      st_ = StreamTile{stream_.sx, stream_.sy, stream_.tx, stream_.ty, stream_.ra, stream_.rb, stream_.rm, stream_.ring,
                       steps_, stream_.chunk, static_cast<int>(dom_.nx), static_cast<int>(dom_.dims == 3 ? dom_.ny : 1),
                       static_cast<int>(dom_.dims == 3 ? dom_.nz : dom_.ny), dom_.dims == 3 ? dom_.nx * dom_.ny : dom_.nx};
      launch_grid_ = dim3(static_cast<unsigned>(stream_.blocks_a), static_cast<unsigned>(stream_.blocks_b),
                          static_cast<unsigned>(stream_.chunks));
    } else if (M == StencilMethod::tensor_core_plain) {
      cm_ = plan_stencil_column_mma(shape_);
      if (cm_.k_chunks < 2 || cm_.k_chunks > kColumnMmaMaxChunks)
        throw std::invalid_argument("stencil plain-mma: " + std::to_string(cm_.k_chunks) + " chunks of 4 rows (y radius " +
                                    std::to_string(cm_.ry) + ") not compiled (2.." + std::to_string(kColumnMmaMaxChunks) + ")");
      fragments_ = gpu::DeviceBuffer<double>(cm_.b_fragments.size());
      CUDA_CHECK(cudaMemcpy(fragments_.data(), cm_.b_fragments.data(), cm_.b_fragments.size() * sizeof(double),
                            cudaMemcpyHostToDevice));
      for (const auto& ln : cm_.lines) cm_lines_.push_back(make_int4(ln.dx, ln.dz, ln.row_offset, ln.chunks));
      const long long gx = (dom_.nx + kColumnMmaBlockX - 1) / kColumnMmaBlockX,
                      gy = (dom_.ny + kColumnMmaBlockY - 1) / kColumnMmaBlockY, gz = dom_.nz;
      if (gx > 2147483647LL || gy > 65535 || gz > 65535)
        throw std::invalid_argument("stencil: domain " + dom_.text() + " needs too many blocks for the plain-mma kernel");
      launch_grid_ = dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy), static_cast<unsigned>(gz));
    } else if (M != StencilMethod::plain) {
      // Two blocks per SM when a tile fits 100 KiB; else one block with the opt-in 227 KiB (deep 3-D
      // fusion on tensor cores: the padded tile of 3d7pt at t = 3 needs 144 KiB).
      try {
        tile_ = plan_stencil_tile(shape_, steps_, M == StencilMethod::tensor_core, 100 * 1024);
      } catch (const std::invalid_argument&) {
        tile_ = plan_stencil_tile(shape_, steps_, M == StencilMethod::tensor_core, 226 * 1024);
      }
      soffsets_.resize(weights_.size());
      for (size_t p = 0; p < weights_.size(); ++p) {
        const auto& q = shape_.points[p];
        soffsets_[p] = q.dx + q.dy * tile_.bx + q.dz * tile_.bx * tile_.by;
      }
      if (M == StencilMethod::tensor_core) {
        tc_ = plan_stencil_tensor_core(shape_);
        fragments_ = gpu::DeviceBuffer<double>(tc_.b_fragments.size());
        CUDA_CHECK(cudaMemcpy(fragments_.data(), tc_.b_fragments.data(), tc_.b_fragments.size() * sizeof(double),
                              cudaMemcpyHostToDevice));
        for (const auto& [dy, dz] : tc_.lines) lines_.push_back(make_int2(dy, dz));
      }
      t_ = Tile{tile_.tx, tile_.ty, tile_.tz, tile_.hx, tile_.hy, tile_.hz, tile_.bx, tile_.by, tile_.bz, steps_,
                tc_.k_chunks, static_cast<int>(tc_.lines.size())};
      const long long gx = (dom_.nx + tile_.tx - 1) / tile_.tx, gy = (dom_.ny + tile_.ty - 1) / tile_.ty,
                      gz = (dom_.nz + tile_.tz - 1) / tile_.tz;
      if (gy > 65535 || gz > 65535) throw std::invalid_argument("stencil: domain " + dom_.text() + " needs too many tiles");
      launch_grid_ = dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy), static_cast<unsigned>(gz));
    } else if (plain_config_ == kPlainRegister || (plain_config_ == kPlainAuto && plain_register_by_default())) {
      // One step per launch by the rows (2-D) or planes (3-D) kernel.
      const std::string refusal = stencil_register_refusal(shape_, 1);
      if (!refusal.empty()) throw std::invalid_argument("stencil plain: launch_config 3 (rows or planes): " + refusal);
      use_rows_ = shape_.dims == 2;
      use_planes_ = shape_.dims == 3;
      plan_register_kernel(1, r);
    } else {
      const bool three = dom_.nz > 1 || grid_.rz > 0;  // as the column kernel decides
      plan_plain_columns(three);
      // Points per thread along the outer axis (the window kernel: kernels/stencil_plan.hpp).
      plain_k_ = plain_dm_ == 3 && col_range_.size() == 3 && plain_dn_ == 3
                     ? plain_window_rows(dom_, three, current_sm_count())
                     : plain_k(plain_dm_);
      const bool point_planes = !plain_dm_ && offsets_fit32_ && point_kernel_compiled(shape_.size());
      const long long k = plain_k_;
      const bool cols2d = plain_dm_ && !three, cols3d = plain_dm_ && three;
      const long long gx = cols2d ? (dom_.nx + 127) / 128 : (dom_.nx + 31) / 32;
      const long long gy = cols2d ? (dom_.ny + 2 * k - 1) / (2 * k) : (dom_.ny + 7) / 8;
      const long long gz = cols2d ? 1 : cols3d ? (dom_.nz + k - 1) / k
                                  : point_planes ? (dom_.nz + kPointPlanes - 1) / kPointPlanes : dom_.nz;
      if (gx > 2147483647LL || gy > 65535 || gz > 65535)
        throw std::invalid_argument("stencil: domain " + dom_.text() + " needs too many blocks for the plain kernel");
      launch_grid_ = dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy), static_cast<unsigned>(gz));
    }
  }
  ~StencilInstance() override {
    if (g_constants_owner == this) g_constants_owner = nullptr;
  }

  void randomize(std::uint64_t seed) override {
    seed_ = seed;
    fill_random(in_.data(), static_cast<long long>(in_.size()), seed_);
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  void poison_output() override {
    poison(out_.data(), out_.bytes());
    if (other_.data()) poison(other_.data(), other_.bytes());
  }
  long long output_elements() const override { return static_cast<long long>(out_.size()); }

  void launch(Stream stream) override {
    upload_constants(stream);
    const int npts = shape_.size();
    if constexpr (M == StencilMethod::plain || M == StencilMethod::tensor_core_plain) {
      // in -> out, out -> other, other -> out, ...: the last step lands in `result()`.
      const double* src = in_.data();
      for (int s = 1; s <= steps_; ++s) {
        double* dst = ((steps_ - s) % 2 == 0) ? out_.data() : other_.data();
        if constexpr (M == StencilMethod::tensor_core_plain) column_mma(stream, src, dst);
        else if (use_rows_ || use_planes_) launch_register(stream, src, dst, streaming_, 1);
        else streaming_ ? plain(true, src, dst, stream, npts) : plain(false, src, dst, stream, npts);
        src = dst;
      }
    } else if constexpr (M == StencilMethod::blocked) {
      streaming_ ? blocked(true, stream, npts) : blocked(false, stream, npts);
    } else if constexpr (M == StencilMethod::streaming) {
      streaming_ ? marching<true>(stream, npts) : marching<false>(stream, npts);
    } else {
      static bool configured[2] = {false, false};
      auto kernel = streaming_ ? stencil_tensor_core_kernel<true> : stencil_tensor_core_kernel<false>;
      if (!configured[streaming_]) {
        CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024));
        configured[streaming_] = true;
      }
      kernel<<<launch_grid_, dim3(32, 8), tile_.smem_bytes, stream>>>(in_.data(), out_.data(), fragments_.data(), grid_,
                                                                      t_);
    }
    CUDA_CHECK_LAUNCH();
  }

  Verification verify() override {
    CUDA_CHECK(cudaDeviceSynchronize());
    const std::int64_t n = static_cast<std::int64_t>(out_.size());
    // The input as the device drew it (random.hpp), on all host cores.
    std::vector<double> u0(static_cast<size_t>(n));
    {
      const unsigned workers = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
      std::vector<std::thread> pool;
      for (unsigned w = 0; w < workers; ++w)
        pool.emplace_back([&, w] {
          for (std::int64_t i = w; i < n; i += workers) u0[static_cast<size_t>(i)] = random_value(seed_, static_cast<std::uint64_t>(i));
        });
      for (auto& th : pool) th.join();
    }
    const double work = dom_.points() * steps_ * shape_.size();
    if (work <= 4e8) {  // the whole domain
      std::vector<double> got(static_cast<size_t>(n));
      CUDA_CHECK(cudaMemcpy(got.data(), out_.data(), out_.bytes(), cudaMemcpyDeviceToHost));
      const std::vector<double> ref = stencil_reference(shape_, dom_, u0.data(), steps_);
      Verification v = check_normwise(got, [&](long long i) { return static_cast<long double>(ref[static_cast<size_t>(i)]); }, 1e-12);
      v.message = "whole domain " + dom_.text() + ": " + v.message;
      return v;
    }
    // Every output scanned for the poison; a sample against the light cones.
    gpu::DeviceBuffer<unsigned long long> count(1);
    CUDA_CHECK(cudaMemset(count.data(), 0, sizeof(unsigned long long)));
    count_nan_kernel<<<current_sm_count() * 4, 256>>>(out_.data(), n, count.data());
    CUDA_CHECK_LAUNCH();
    unsigned long long nan_count = 0;
    CUDA_CHECK(cudaMemcpy(&nan_count, count.data(), sizeof nan_count, cudaMemcpyDeviceToHost));
    const std::vector<std::int64_t> idx = sample_indices();
    std::vector<long long> idx_ll(idx.begin(), idx.end());
    gpu::DeviceBuffer<long long> didx(idx_ll.size());
    gpu::DeviceBuffer<double> dval(idx_ll.size());
    CUDA_CHECK(cudaMemcpy(didx.data(), idx_ll.data(), idx_ll.size() * sizeof(long long), cudaMemcpyHostToDevice));
    gather_kernel<<<static_cast<unsigned>((idx_ll.size() + 255) / 256), 256>>>(out_.data(), didx.data(),
                                                                              static_cast<int>(idx_ll.size()), dval.data());
    CUDA_CHECK_LAUNCH();
    std::vector<double> got(idx_ll.size());
    CUDA_CHECK(cudaMemcpy(got.data(), dval.data(), got.size() * sizeof(double), cudaMemcpyDeviceToHost));
    const std::vector<double> ref = stencil_reference_points(shape_, dom_, u0.data(), steps_, idx);
    Verification v = check_normwise(got, [&](long long i) { return static_cast<long double>(ref[static_cast<size_t>(i)]); }, 1e-12);
    v.unwritten += static_cast<long long>(nan_count);
    if (nan_count) {
      v.ok = false;
      v.bad += static_cast<long long>(nan_count);
    }
    v.message = std::to_string(got.size()) + " sampled points of " + dom_.text() + " (" + std::to_string(nan_count) +
                " poisoned outputs in all): " + v.message;
    return v;
  }

  std::string launch_text() const override { return tile_text(); }
  std::string tile_text() const {
    if constexpr (M == StencilMethod::plain) {
      if (use_rows_) return "rows kernel, one step per launch: " + rows_.text();
      if (use_planes_) return "planes kernel, one step per launch: " + planes_.text();
      if (!plain_dm_)
        return offsets_fit32_ && point_kernel_compiled(shape_.size())
                   ? "4 points per thread along z, 32x8x4 per block"
                   : "one point per thread, 32x8 per block";
      const bool window = col_range_.size() == 3 && plain_dn_ == 3;
      const std::string k = std::to_string(plain_k_);
      return k + (dom_.nz > 1 || grid_.rz > 0 ? " planes" : " rows") + " per thread by " +
             std::to_string(col_range_.size()) + (window ? " columns, one row window each, " : " columns, ") +
             (dom_.nz > 1 || grid_.rz > 0 ? "32x8x" + k : "128x" + std::to_string(2 * plain_k_)) + " per block";
    }
    else if constexpr (M == StencilMethod::streaming) return use_rows_ ? rows_.text() : use_planes_ ? planes_.text() : stream_.text();
    else if constexpr (M == StencilMethod::tensor_core_plain)
      return "a warp 16 columns x 4 blocks of 8 rows, 128x32 per block, one step per launch; " + cm_.text();
    else return tile_.text();
  }

 private:
  void upload_constants(cudaStream_t stream) {
    if (g_constants_owner == this) return;
    CUDA_CHECK(cudaMemcpyToSymbolAsync(c_weight, weights_.data(), weights_.size() * sizeof(double), 0,
                                       cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaMemcpyToSymbolAsync(c_offset, offsets_.data(), offsets_.size() * sizeof(long long), 0,
                                       cudaMemcpyHostToDevice, stream));
    if (!offsets32_.empty())
      CUDA_CHECK(cudaMemcpyToSymbolAsync(c_offset32, offsets32_.data(), offsets32_.size() * sizeof(int), 0,
                                         cudaMemcpyHostToDevice, stream));
    if (!col_range_.empty()) {
      CUDA_CHECK(cudaMemcpyToSymbolAsync(c_colw, col_w_.data(), col_w_.size() * sizeof(double), 0,
                                         cudaMemcpyHostToDevice, stream));
      CUDA_CHECK(cudaMemcpyToSymbolAsync(c_coloff, col_off_.data(), col_off_.size() * sizeof(long long), 0,
                                         cudaMemcpyHostToDevice, stream));
      CUDA_CHECK(cudaMemcpyToSymbolAsync(c_colrange, col_range_.data(), col_range_.size() * sizeof(int2), 0,
                                         cudaMemcpyHostToDevice, stream));
    }
    if (!soffsets_.empty())
      CUDA_CHECK(cudaMemcpyToSymbolAsync(c_soffset, soffsets_.data(), soffsets_.size() * sizeof(int), 0,
                                         cudaMemcpyHostToDevice, stream));
    if (!stream_.offsets.empty())
      CUDA_CHECK(cudaMemcpyToSymbolAsync(c_roff, stream_.offsets.data(), stream_.offsets.size() * sizeof(int), 0,
                                         cudaMemcpyHostToDevice, stream));
    if (!planes_.weights.empty())
      CUDA_CHECK(cudaMemcpyToSymbolAsync(c_rowsw, planes_.weights.data(), planes_.weights.size() * sizeof(double), 0,
                                         cudaMemcpyHostToDevice, stream));
    if (!rows_.weights.empty())
      CUDA_CHECK(cudaMemcpyToSymbolAsync(c_rowsw, rows_.weights.data(), rows_.weights.size() * sizeof(double), 0,
                                         cudaMemcpyHostToDevice, stream));
    if (!lines_.empty())
      CUDA_CHECK(cudaMemcpyToSymbolAsync(c_line, lines_.data(), lines_.size() * sizeof(int2), 0, cudaMemcpyHostToDevice,
                                         stream));
    if (!cm_lines_.empty())
      CUDA_CHECK(cudaMemcpyToSymbolAsync(c_cmline, cm_lines_.data(), cm_lines_.size() * sizeof(int4), 0,
                                         cudaMemcpyHostToDevice, stream));
    g_constants_owner = this;
  }

  // The rows (2-D) or planes (3-D) kernel at `steps` fused steps per launch (use_rows_ / use_planes_
  // decided): blocks per SM from the compiled kernel, then the plan and its grid.
  void plan_register_kernel(int steps, const StencilRadii& r) {
    // Only plain and streaming use them: the blocked and tensor-core files do not compile these kernels.
    if constexpr (M == StencilMethod::plain || M == StencilMethod::streaming) plan_register(steps, r);
  }
  void launch_register(cudaStream_t st, const double* src, double* dst, bool stream_store, int steps) {
    if constexpr (M == StencilMethod::plain || M == StencilMethod::streaming) launch_register_kernel(st, src, dst, stream_store, steps);
  }
  void plan_register(int steps, const StencilRadii& r) {
    const std::int64_t sms = current_sm_count();
    if (use_planes_) {
      const StencilPlanesPlan shape_plan = plan_stencil_planes(shape_, dom_, steps, 1);
      int blocks = 0;
      planes_dispatch(shape_plan.box, steps, PlanesOccupancy{shape_plan.smem_bytes, &blocks});
      planes_ = plan_stencil_planes(shape_, dom_, steps, sms * std::max(1, blocks));
      pt_ = PlanesTile{static_cast<int>(dom_.nx), static_cast<int>(dom_.ny), static_cast<int>(dom_.nz), r.x, r.y, r.z,
                       planes_.core, planes_.chunk};
      if (planes_.blocks_y > 65535 || planes_.chunks > 65535 || planes_.blocks_x > 2147483647LL)
        throw std::invalid_argument("stencil: domain " + dom_.text() + " needs too many streaming blocks");
      reg_grid_ = dim3(static_cast<unsigned>(planes_.blocks_x), static_cast<unsigned>(planes_.blocks_y),
                       static_cast<unsigned>(planes_.chunks));
      return;
    }
    const StencilRowsPlan shape_plan = plan_stencil_rows(shape_, dom_, steps, 1, 1);
    std::int64_t resident[2] = {0, 0};
    for (int i = 0; i < 2; ++i) {
      const int threads = i == 0 ? 256 : 128;
      int blocks = 0;
      rows_dispatch(shape_plan.radius, shape_plan.box, steps,
                    RowsOccupancy{threads, rows_smem_bytes(shape_plan.radius, steps, threads), &blocks});
      resident[i] = sms * std::max(1, blocks);
    }
    rows_ = plan_stencil_rows(shape_, dom_, steps, resident[0], resident[1]);
    rt_ = RowsTile{static_cast<int>(dom_.nx), static_cast<int>(dom_.ny), r.x, r.y, rows_.core, rows_.chunk};
    if (rows_.blocks_a > 2147483647LL || rows_.chunks > 65535)
      throw std::invalid_argument("stencil: domain " + dom_.text() + " needs too many streaming blocks");
    reg_grid_ = dim3(static_cast<unsigned>(rows_.blocks_a), static_cast<unsigned>(rows_.chunks), 1);
  }
  void launch_register_kernel(cudaStream_t st, const double* src, double* dst, bool stream_store, int steps) {
    if (use_planes_)
      planes_dispatch(planes_.box, steps, PlanesLaunch{reg_grid_, planes_.smem_bytes, st, src, dst, pt_, stream_store});
    else
      rows_dispatch(rows_.radius, rows_.box, steps,
                    RowsLaunch{reg_grid_, rows_.threads, rows_.smem_bytes, st, src, dst, rt_, stream_store});
  }
  // The plain variant's default per-step kernel: the rows / planes kernel for shapes of 13 or more
  // points, where it fits. It loads 2R (2-D) or 4-8 (3-D) shared values per cell against the point
  // and column kernels' |S| loads; for the 5-9 point shapes those stream better out of the L2. H100
  // (GPU-5af0b5b5 against GPU-cee67a4c's ship, 2026-11-27), T(old) / T(rows or planes) out of L2 /
  // in it: 2d13pt 1.16-1.19 / 0.87, 2d49pt 1.59-1.60 / 1.33, 3d27pt 1.17-1.37 / 1.07; 2d5pt 0.91-0.92
  // / 1.28, 2d9pt 0.92 / 1.27, 3d7pt 0.80-0.94 / 0.75.
  bool plain_register_by_default() const { return shape_.size() >= 13 && stencil_register_refusal(shape_, 1).empty(); }

  template <bool S>
  void plain_t(const double* src, double* dst, cudaStream_t st, int npts) {
    const int n = static_cast<int>(col_range_.size());
    switch (plain_dm_) {
      case 3:
        if (plain_k_ == 4) launch_plain_n<3, 3, 4, S>(launch_grid_, st, src, dst, grid_, n, npts);
        else if (plain_k_ == 2) launch_plain_n<3, 3, 2, S>(launch_grid_, st, src, dst, grid_, n, npts);
        else launch_plain_n<3, 0, 8, S>(launch_grid_, st, src, dst, grid_, n, npts);
        return;
      case 7: launch_plain_n<7, 0, 8, S>(launch_grid_, st, src, dst, grid_, n, npts); return;
      default: break;
    }
    switch (offsets_fit32_ ? npts : 0) {
      case 5: launch_point_n<5, S>(launch_grid_, st, src, dst, grid_, npts); break;
      case 7: launch_point_n<7, S>(launch_grid_, st, src, dst, grid_, npts); break;
      case 9: launch_point_n<9, S>(launch_grid_, st, src, dst, grid_, npts); break;
      case 13: launch_point_n<13, S>(launch_grid_, st, src, dst, grid_, npts); break;
      case 27: launch_point_n<27, S>(launch_grid_, st, src, dst, grid_, npts); break;
      case 49: launch_point_n<49, S>(launch_grid_, st, src, dst, grid_, npts); break;
      default: launch_point_n<0, S>(launch_grid_, st, src, dst, grid_, npts); break;
    }
  }
  void plain(bool s, const double* src, double* dst, cudaStream_t st, int npts) {
    s ? plain_t<true>(src, dst, st, npts) : plain_t<false>(src, dst, st, npts);
  }
  template <bool S>
  void blocked_t(cudaStream_t st, int npts) {
    const size_t sm = tile_.smem_bytes;
    switch (npts) {
      case 5: launch_blocked_n<5, S>(launch_grid_, sm, st, in_.data(), out_.data(), grid_, t_, npts); break;
      case 7: launch_blocked_n<7, S>(launch_grid_, sm, st, in_.data(), out_.data(), grid_, t_, npts); break;
      case 9: launch_blocked_n<9, S>(launch_grid_, sm, st, in_.data(), out_.data(), grid_, t_, npts); break;
      case 13: launch_blocked_n<13, S>(launch_grid_, sm, st, in_.data(), out_.data(), grid_, t_, npts); break;
      case 27: launch_blocked_n<27, S>(launch_grid_, sm, st, in_.data(), out_.data(), grid_, t_, npts); break;
      case 49: launch_blocked_n<49, S>(launch_grid_, sm, st, in_.data(), out_.data(), grid_, t_, npts); break;
      default: launch_blocked_n<0, S>(launch_grid_, sm, st, in_.data(), out_.data(), grid_, t_, npts); break;
    }
  }
  void blocked(bool s, cudaStream_t st, int npts) { s ? blocked_t<true>(st, npts) : blocked_t<false>(st, npts); }
  template <int KC>
  void column_mma_k(cudaStream_t st, const double* src, double* dst) {
    const int n = static_cast<int>(cm_.lines.size());
    if (streaming_)
      stencil_column_mma_kernel<KC, true><<<launch_grid_, dim3(32, 8), 0, st>>>(src, dst, fragments_.data(), grid_, n);
    else
      stencil_column_mma_kernel<KC, false><<<launch_grid_, dim3(32, 8), 0, st>>>(src, dst, fragments_.data(), grid_, n);
  }
  void column_mma(cudaStream_t st, const double* src, double* dst) {
    if constexpr (M == StencilMethod::tensor_core_plain) {  // only its own file compiles the kernel
      switch (cm_.k_chunks) {
        case 2: column_mma_k<2>(st, src, dst); break;
        case 3: column_mma_k<3>(st, src, dst); break;
        case 4: column_mma_k<4>(st, src, dst); break;
        case 5: column_mma_k<5>(st, src, dst); break;
        default: column_mma_k<6>(st, src, dst); break;
      }
    }
  }
  template <bool S>
  void marching(cudaStream_t st, int npts) {
    if (use_rows_ || use_planes_) {
      launch_register(st, in_.data(), out_.data(), S, steps_);
      return;
    }
    const size_t sm = stream_.smem_bytes;
    switch (npts) {
      case 5: launch_streaming_n<5, S>(launch_grid_, sm, st, in_.data(), out_.data(), st_, npts, stream_threads_); break;
      case 7: launch_streaming_n<7, S>(launch_grid_, sm, st, in_.data(), out_.data(), st_, npts, stream_threads_); break;
      case 9: launch_streaming_n<9, S>(launch_grid_, sm, st, in_.data(), out_.data(), st_, npts, stream_threads_); break;
      case 13: launch_streaming_n<13, S>(launch_grid_, sm, st, in_.data(), out_.data(), st_, npts, stream_threads_); break;
      case 27: launch_streaming_n<27, S>(launch_grid_, sm, st, in_.data(), out_.data(), st_, npts, stream_threads_); break;
      case 49: launch_streaming_n<49, S>(launch_grid_, sm, st, in_.data(), out_.data(), st_, npts, stream_threads_); break;
      default: launch_streaming_n<0, S>(launch_grid_, sm, st, in_.data(), out_.data(), st_, npts, stream_threads_); break;
    }
  }

  // ~16k random points, 8 per corner region and a band along every face (where the fixed boundary
  // and the tiles' edges meet), without repeats.
  std::vector<std::int64_t> sample_indices() const {
    std::mt19937_64 rng(seed_ ^ 0x5DEECE66Dull);
    std::vector<std::int64_t> out;
    const auto at = [&](std::int64_t x, std::int64_t y, std::int64_t z) { return (z * dom_.ny + y) * dom_.nx + x; };
    const auto pick = [&](std::int64_t n) { return static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n)); };
    for (int i = 0; i < 16384; ++i) out.push_back(at(pick(dom_.nx), pick(dom_.ny), pick(dom_.nz)));
    const std::int64_t band = 2 * steps_ * std::max({grid_.rx, grid_.ry, grid_.rz, 1}) + 2;
    const auto edge = [&](std::int64_t n) {
      const std::int64_t k = pick(std::min(band, n));
      return (rng() & 1) ? k : n - 1 - k;
    };
    for (int i = 0; i < 2048; ++i) {
      out.push_back(at(edge(dom_.nx), pick(dom_.ny), pick(dom_.nz)));
      out.push_back(at(pick(dom_.nx), edge(dom_.ny), pick(dom_.nz)));
      if (dom_.nz > 1) out.push_back(at(pick(dom_.nx), pick(dom_.ny), edge(dom_.nz)));
      out.push_back(at(edge(dom_.nx), edge(dom_.ny), dom_.nz > 1 ? edge(dom_.nz) : 0));
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  StencilShape shape_;  // a copy: the registry may grow while the instance lives
  StencilDomain dom_;
  int steps_ = 1;
  bool streaming_ = false;
  Grid grid_{};
  Tile t_{};
  StencilTile tile_;
  StencilTensorCorePlan tc_;
  StencilStreamPlan stream_;
  StreamTile st_{};
  StencilRowsPlan rows_;  // the streaming variant's 2-D rows kernel, where use_rows_
  RowsTile rt_{};
  bool use_rows_ = false;
  StencilPlanesPlan planes_;  // the streaming variant's 3-D planes kernel, where use_planes_
  PlanesTile pt_{};
  bool use_planes_ = false;
  dim3 reg_grid_;  // the rows or planes kernel's grid
  int stream_threads_ = kStreamThreads;  // streaming_threads(): 128 or 256
  dim3 launch_grid_;
  gpu::DeviceBuffer<double> in_, out_, other_, fragments_;
  std::vector<double> weights_;
  std::vector<long long> offsets_;
  std::vector<int> offsets32_;
  bool offsets_fit32_ = false;
  std::vector<int> soffsets_;
  // The plain kernel's columns (c_colw, c_coloff, c_colrange) and the span it was compiled for.
  std::vector<double> col_w_;
  std::vector<long long> col_off_;
  std::vector<int2> col_range_;
  int plain_dm_ = 0, plain_dn_ = 0;  // the compiled column span, the shape's (2 x outer radius + 1)
  int plain_k_ = 8;  // the column kernel's points per thread
  void plan_plain_columns(bool three) {
    const int ro = three ? grid_.rz : grid_.ry, dn = 2 * ro + 1;
    std::vector<std::pair<std::pair<int, int>, std::vector<std::pair<int, double>>>> cols;  // (dx, dy|dz) -> (d, w)
    for (const auto& q : shape_.points) {
      const std::pair<int, int> key{q.dx, three ? q.dy : q.dz};
      const int d = (three ? q.dz : q.dy) + ro;
      auto it = std::find_if(cols.begin(), cols.end(), [&](const auto& c) { return c.first == key; });
      if (it == cols.end()) it = cols.insert(cols.end(), {key, {}});
      it->second.emplace_back(d, q.weight);
    }
    // Columns for 2-D shapes of outer radius 1 or whose every column spans the whole radius (boxes);
    // the per-point kernel for the rest (measured faster there, see the kernel).
    bool full = true;
    for (const auto& c : cols) full = full && c.second.size() == static_cast<size_t>(dn);
    plain_dm_ = dn <= 3 ? 3 : dn <= 7 ? 7 : 0;
    plain_dn_ = dn;
    // 3-D: full boxes only (3d27pt), and only where the column grid (32 x 8 x K points per block)
    // still gives every SM 4 blocks: on an H100 (2026-11-27) 3d27pt out of L2 ran 17-20% faster by
    // columns (512^3 4564 -> 3792 us; 1024^3, 234 x 312 x 2560 alike), in L2 (93^3, 432 blocks)
    // 13% slower. 3d7pt's columns are not full (the point kernel measured faster, see the kernel).
    const long long col_blocks_3d = ((dom_.nx + 31) / 32) * ((dom_.ny + 7) / 8) * ((dom_.nz + 7) / 8);
    const bool columns_3d = three && full && col_blocks_3d >= 4LL * current_sm_count();
    const bool has_columns = (three ? full : (dn <= 3 || full)) && plain_dm_ &&
                             cols.size() * static_cast<size_t>(dn) <= static_cast<size_t>(kMaxPlainColumnWeights);
    if (plain_config_ == kPlainColumns && !has_columns)
      throw std::invalid_argument("stencil plain: launch_config 2 (columns) needs a 2-D shape of outer radius 1 or a full box");
    const bool use = plain_config_ != kPlainPoint && (plain_config_ == kPlainColumns || (has_columns && (!three || columns_3d)));
    if (!use) plain_dm_ = 0;
    if (!plain_dm_) return;
    for (const auto& [key, taps] : cols) {
      int lo = dn, hi = -1;
      const size_t base = col_w_.size();
      col_w_.resize(base + static_cast<size_t>(dn), 0.0);
      for (const auto& [d, w] : taps) {
        col_w_[base + static_cast<size_t>(d)] = w;
        lo = std::min(lo, d);
        hi = std::max(hi, d);
      }
      col_off_.push_back(key.first + static_cast<long long>(key.second) * (three ? dom_.nx : dom_.nx * dom_.ny));
      col_range_.push_back(make_int2(lo, hi));
    }
  }
  std::vector<int2> lines_;
  StencilColumnMmaPlan cm_;
  std::vector<int4> cm_lines_;
  std::uint64_t seed_ = 1;
  // Hidden `launch_config` of the plain variant (the GPU test pins each kernel).
  static constexpr int kPlainAuto = 0, kPlainPoint = 1, kPlainColumns = 2, kPlainRegister = 3;
  static constexpr int kStreamRing = 1, kStreamRows = 2;  // the streaming variant's (0: rows or planes where they fit)
  int plain_config_ = kPlainAuto;
};

}  // namespace
}  // namespace ceiling::kernels
