// How the stencil variants split a domain (issue 11), in plain C++ so CPU tests check it:
// the shared-memory tile of the temporally blocked and tensor-core kernels (output tile, halo
// t x radius per axis, buffer extents, shared memory) and the tensor-core formulation.
//
// Tensor-core formulation (our own, in the spirit of ConvStencil's "stencil as a matrix product"):
// an 8x8 block of outputs (8 rows y, 8 columns x, one z) is a sum over the shape's non-empty
// lines (dy, dz) of A_line (8 x K) times T_line (K x 8): A_line[i][k] = u(x0 - rx + k, y0 + i + dy,
// z + dz), T_line[k][n] = w(dx = k - rx - n, dy, dz), a banded Toeplitz matrix of the line's
// weights, K = 8 + 2 rx rounded up to the k = 4 of FP64 mma.m8n8k4. The A operand is read
// straight from the shared-memory tile (no stencil2row copy: the layout transform is the tile's
// row-major order), T is built once on the host. Useful share of the MMA work:
// |S| 2 x 64 / (lines x K/4 x 512): 2d5pt 0.139, 2d9pt 0.25, 2d13pt 0.116, 2d49pt 0.4375,
// 3d7pt 0.117, 3d27pt 0.25.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "host_device.hpp"
#include "model/stencil_shape.hpp"

namespace ceiling::kernels {

// c / d for a small divisor d > 0 as one multiply: (c m) >> 32 with m = ceil(2^32 / d) (m = 0 stands
// for d = 1). Exact whenever c d < 2^32 (the error term c (m d - 2^32) / 2^32 stays below 1; powers of
// two are exact for every c). The tile kernels (kernels/stencil_common.cuh) split cell indices below
// 2^15 by region widths <= 2^11 this way: a hardware division costs more than a cell's stencil.
struct SmallDiv {
  unsigned m = 0;
  CEILING_HOST_DEVICE explicit SmallDiv(unsigned divisor) : m(divisor > 1 ? 0xFFFFFFFFu / divisor + 1 : 0) {}
  CEILING_HOST_DEVICE unsigned div(unsigned c) const {
    return m ? static_cast<unsigned>((static_cast<unsigned long long>(c) * m) >> 32) : c;
  }
};

struct StencilRadii {
  int x = 0, y = 0, z = 0;
};
StencilRadii stencil_radii(const StencilShape& s);

// The shared-memory tile of one block: output tile tx x ty x tz, halo h = steps x radius per axis,
// buffer extents b (the tile with its halo, plus the tensor-core kernel's padding, which its
// over-reads of the padded K columns and of the last 8-row block touch), two buffers of doubles.
struct StencilTile {
  int tx = 0, ty = 0, tz = 1;
  int hx = 0, hy = 0, hz = 0;
  int bx = 0, by = 0, bz = 1;
  std::size_t smem_bytes = 0;  // 2 buffers + the tensor-core fragments
  double load_ratio = 0;       // cells loaded per output point (halo overhead): bx by bz / (tx ty tz)
  std::string text() const;    // "64x32 (+3 halo), 62.4 KiB"
};

// The tensor-core side: the non-empty lines, K/4 chunks and the T fragments per lane.
struct StencilTensorCorePlan {
  int k_chunks = 0;                           // ceil((8 + 2 rx) / 4)
  std::vector<std::pair<int, int>> lines;     // (dy, dz) with at least one point
  std::vector<double> b_fragments;            // [line][chunk][lane]: T[4 chunk + lane % 4][lane / 4]
  double useful_fraction = 0;                 // |S| 128 / (lines k_chunks 512)
  int mma_per_block() const { return static_cast<int>(lines.size()) * k_chunks; }
};
StencilTensorCorePlan plan_stencil_tensor_core(const StencilShape& s);

// The one-step tensor-core kernel ("plain-mma", kernels/stencil_tc_plain.cu): a warp takes 16 x
// columns and marches kColumnMmaRowBlocks 8-row output blocks along y at one z; a 16 (x) x 8 (y)
// block is, per non-empty column line (dx, dz) and chunk of 4 input rows, one mma.m16n8k4 (sm_90;
// two m8n8k4 on sm_80) with A = the input at x + dx, z + dz (16 columns x 4 rows) and B = the
// Toeplitz matrix of the line's weights over dy. A line whose points span dy in [lo, hi] reads rows
// y + lo .. y + hi + 7 of an output block at y: ceil((8 + hi - lo) / 4) chunks, B[k][n] = w(dx, lo +
// k - n, dz) (a line of one point takes 2 chunks, a full line of radius r ceil((8 + 2 r) / 4)). The
// contraction runs along y so that an A fragment is 4 rows of 8 consecutive doubles.
struct StencilColumnMmaLine {
  int dx = 0, dz = 0;
  int row_offset = 0;  // lo + ry: the line's first row, counted from the output block's row - ry
  int chunks = 0;      // ceil((8 + hi - lo) / 4)
};
struct StencilColumnMmaPlan {
  int k_chunks = 0;  // the most chunks of any line (the kernel's template argument)
  int rx = 0, ry = 0, rz = 0;
  std::vector<StencilColumnMmaLine> lines;  // (dx, dz) with at least one point, z then x ascending
  std::vector<double> b_fragments;          // [line][chunk < k_chunks][lane]: B[4 chunk + lane % 4][lane / 4]
  double useful_fraction = 0;               // |S| 128 / (sum of the lines' chunks x 512)
  int mma_per_block() const;                // sum of the lines' chunks (per 16 x 8 block)
  std::string text() const;                 // "3 lines, 7 mma.m16n8k4 per 16x8 block (17.9% of the products useful)"
};
StencilColumnMmaPlan plan_stencil_column_mma(const StencilShape& s);
// The kernel's shape: 8 warps side by side in x (128 columns), each 4 blocks of 8 rows (32 rows).
constexpr int kColumnMmaBlockX = 128, kColumnMmaBlockY = 32, kColumnMmaRowBlocks = 4;
constexpr int kColumnMmaMaxChunks = 6;  // a line over dy in [-8, 8] (kMaxStencilRadius)

// The tile for these steps: among candidate output tiles (2-D: 64x32, 32x32, 32x16, 32x8; 3-D:
// 32x8x8, 32x8x4, 32x4x4, 16x8x4), the one with the fewest loaded cells per output whose shared
// memory fits `smem_limit`; throws std::invalid_argument naming the shape and steps when none fits.
StencilTile plan_stencil_tile(const StencilShape& s, int steps, bool tensor_core, std::size_t smem_limit);

// The 2.5-D streaming kernel (temporal blocking without the 3-D tile's halo on every axis, in the
// spirit of EBISU/AN5D): a block owns a section of the cross-plane axes (2-D: an x segment; 3-D: an
// x-y rectangle), with a halo of steps x radius on those axes, and marches along the last axis (the
// "march" axis: y in 2-D, z in 3-D) over a chunk of it. Per level s = 0..steps-1 it keeps a ring of
// 2 r_march + 1 planes of the section in shared memory: each new input plane p fills level 0, then
// level s computes its plane p - s r_march from level s-1, and level `steps` is written to the output.
// Every cell is loaded once per chunk (plus 2 steps r_march warm-up planes and the section halo),
// and each step costs one pass over the section, so the redundant work is the section halo only.
struct StencilStreamPlan {
  int dims = 2;
  int sx = 0, sy = 1;          // section extents (core + 2 steps r on each cross axis)
  int tx = 0, ty = 1;          // core: outputs per plane per block
  int ra = 0, rb = 0, rm = 0;  // radii on the section's x, the section's y (3-D only) and the march axis
  int ring = 1;                // planes kept per level: 2 rm + 1
  int steps = 1;
  int chunk = 0;               // march-axis outputs per block
  std::int64_t blocks_a = 0, blocks_b = 1, chunks = 0;  // launch grid: section columns (x, y) and chunks
  std::size_t smem_bytes = 0;  // steps levels x ring planes x sx sy doubles
  double load_ratio = 0;       // cells loaded per output point: sx sy (chunk + 2 steps rm) / (tx ty chunk)
  // [rot][point]: where point p of the shape sits for an output in ring slot `rot`, relative to the
  // output's cell in its own plane: mod(rot + d_march, ring) sx sy + d_x + d_y sx (3-D) .
  std::vector<int> offsets;
  int cells() const { return sx * sy; }
  std::string text() const;  // "512-wide section (core 506), ring 3 x 3 levels, 36.0 KiB, chunk 153, 1.05 loads/point"
};
constexpr int kStreamThreads = 128;               // threads per block where 4 or more blocks fit an SM
constexpr int kStreamMaxCells = 8 * kStreamThreads;  // cells per section plane: 8 per thread at 128 threads
// Threads per block of the streaming kernel, from the blocks per SM it fits at 128 threads (its
// shared-memory rings decide): 128 (8 cells per thread, their loads in flight together) where 4 or
// more fit, else 256 (4 cells per thread), so an SM holding 2-3 blocks still has 16-24 warps to hide
// the barriers between levels. Measured on an H100 (GPU-ea8200a1, validate, every built-in shape and
// domain, 128 / 256 / 512 threads): 3-D (3 blocks per SM) 3d7pt 1024^3 21.25 / 16.97 / 16.25 ms,
// 3d27pt 47.3 / 38.1 / 39.1 ms; 2d49pt (2 per SM) 1896 / 1866 / 1925 us; 2-D radius 1 (6 per SM)
// 2d5pt 10240^2 1076 / 1171 / 1480 us.
int streaming_threads(int blocks_per_sm_at_128);

// The plain variant's window kernel (a shape whose 3 columns have outer radius 1: 2d5pt, 2d9pt) takes
// 4 points per thread along the outer axis, or 2 where 4 would give fewer than 8 blocks per SM (less
// than one wave: small, in-L2 domains). Blocks: 2-D 128 x 2 threads, each over K rows (128 x 2K
// points); 3-D 32 x 8 threads over K planes. Measured on an H200 (2026-11-28, 2d5pt / 2d9pt): K = 4
// against 8 1.02-1.05x out of L2 (95% of the tight bound), 1.26-1.28x in it; K = 2 in L2 another
// 1.04-1.07x, out of L2 0.91x.
int plain_window_rows(const StencilDomain& d, bool three, std::int64_t sms);

// The section for this shape, domain and steps: 2-D, the widest section of 512, 256, 128, 64 cells
// whose core keeps at least half of it; 3-D, the (sx, sy) of 32x32, 64x16, 16x64, 32x16, 16x16 with
// the fewest loaded cells per output; both within `smem_limit`. The march axis is cut into the
// number of chunks (1..256) whose blocks fill whole waves of `resident_blocks` (SMs x blocks per
// SM) best, each chunk's warm-up (2 steps r_march planes) counted as lost. Throws
// std::invalid_argument naming the shape and steps when no section fits.
StencilStreamPlan plan_stencil_streaming(const StencilShape& s, const StencilDomain& d, int steps,
                                         std::int64_t resident_blocks, std::size_t smem_limit);

// The streaming variant's 2-D kernel ("rows"): 2-D shapes of radius <= 3 and 1..4 fused steps.
// One thread per column of a W-wide section (core W - 2 steps R), marching along y over a chunk.
// Each level keeps the 2R + 1 output rows its newest input row contributes to as partial sums in
// registers: an arriving row (one value per column, in shared memory) adds each of its taps to every
// output row whose window holds it, and the oldest partial row is then complete. A cell-step costs
// 2R shared loads (its own column's value is in a register), the shape's FMAs, one shared store and,
// per row, one barrier per level; the ring kernel (above) pays a shared load per point, a constant
// offset per point and per-cell class tests (ncu, H100: 56 warp instructions per cell-step, 2d5pt).
// R is the shape's largest radius; a star (every point on an axis) skips the off-axis taps, any
// other shape runs the dense (2R+1)^2 box with zero weights where it has no point.
constexpr int kRowsMaxRadius = 3, kRowsMaxSteps = 4;
// Columns per thread (the kernel's C; 1: two measured slower, kernels/stencil_common.cuh) and the
// zero cells on each side of a level's row in shared memory (R rounded up to C: C cells stay aligned).
constexpr int rows_columns_per_thread(int /*radius*/) { return 1; }
constexpr int rows_pad(int radius) {
  return (radius + rows_columns_per_thread(radius) - 1) / rows_columns_per_thread(radius) * rows_columns_per_thread(radius);
}
// Level 0 twice, levels 1..steps-1 once: (steps + 1) (C threads + 2 pad) doubles.
constexpr std::size_t rows_smem_bytes(int radius, int steps, int threads) {
  return sizeof(double) * static_cast<std::size_t>(steps + 1) *
         static_cast<std::size_t>(rows_columns_per_thread(radius) * threads + 2 * rows_pad(radius));
}
struct StencilRowsPlan {
  int radius = 0;  // R compiled: max(rx, ry), at least 1
  bool box = false;
  int threads = 0, columns = 1;  // threads per block, columns per thread: a section of W = threads x columns
  int core = 0, steps = 1, chunk = 0;  // core = W - 2 steps R
  std::int64_t blocks_a = 0, chunks = 0;
  std::size_t smem_bytes = 0;  // rows_smem_bytes
  double load_ratio = 0;       // cells loaded per output: W (chunk + 2 steps R) / (core chunk)
  std::vector<double> weights;  // [(dy + R)(2R + 1) + dx + R], 0 where the shape has no point
  std::string text() const;  // "512-wide rows (core 506, 2 per thread), star R 1, 3 levels, 12.1 KiB shared, chunk 311, ..."
};
// Why the rows kernel cannot run this shape and steps ("" when it can).
std::string stencil_rows_refusal(const StencilShape& s, int steps);
// 256 or 128 threads and the chunks whose blocks fill whole waves best (resident blocks per width:
// SMs x blocks per SM at that width), each chunk's warm-up (2 steps R rows) counted as lost, and the
// halo columns (2 steps R of W) too, and a wave count w weighed w / (w + 0.1) (one wave's tail). Throws std::invalid_argument with stencil_rows_refusal's reason.
StencilRowsPlan plan_stencil_rows(const StencilShape& s, const StencilDomain& d, int steps,
                                  std::int64_t resident_256, std::int64_t resident_128);

// The streaming variant's 3-D kernel ("planes"): 3-D shapes of radius 1 and 1..3 fused steps. The
// rows kernel one dimension up: a 32 x 32 thread block, one (x, y) column per thread (core 32 - 2
// steps a side), marching along z; each level keeps its 3 partial output planes in registers and one
// plane of 34 x 34 cells in shared memory; a star (every point on an axis) reads 4 in-plane
// neighbours per cell-step, any other shape the 8 of the dense 3 x 3 x 3 box.
constexpr int kPlanesSide = 32, kPlanesMaxSteps = 3;
struct StencilPlanesPlan {
  bool box = false;
  int steps = 1, core = 0, chunk = 0;  // core: outputs per block on x and on y (32 - 2 steps)
  std::int64_t blocks_x = 0, blocks_y = 0, chunks = 0;
  std::size_t smem_bytes = 0;  // (steps + 1) planes of 34 x 34 doubles
  double load_ratio = 0;       // 32^2 (chunk + 2 steps) / (core^2 chunk)
  std::vector<double> weights;  // [(dz + 1) 9 + (dy + 1) 3 + dx + 1], 0 where the shape has no point
  std::string text() const;     // "32x32 planes (core 26x26), star, 3 levels, 36.1 KiB shared, chunk 147, 1.58 loads/point"
};
std::string stencil_planes_refusal(const StencilShape& s, int steps);  // "" when the planes kernel can run
// The register kernel for the shape's dimensions: rows (2-D) or planes (3-D); "" when it can run.
std::string stencil_register_refusal(const StencilShape& s, int steps);
// The z chunks whose blocks fill whole waves of `resident` blocks best (as plan_stencil_rows).
StencilPlanesPlan plan_stencil_planes(const StencilShape& s, const StencilDomain& d, int steps, std::int64_t resident);

}  // namespace ceiling::kernels
