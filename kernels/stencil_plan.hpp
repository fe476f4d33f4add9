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
#include <string>
#include <utility>
#include <vector>

#include "model/stencil_shape.hpp"

namespace ceiling::kernels {

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

// The tile for these steps: among candidate output tiles (2-D: 64x32, 32x32, 32x16, 32x8; 3-D:
// 32x8x8, 32x8x4, 32x4x4, 16x8x4), the one with the fewest loaded cells per output whose shared
// memory fits `smem_limit`; throws std::invalid_argument naming the shape and steps when none fits.
StencilTile plan_stencil_tile(const StencilShape& s, int steps, bool tensor_core, std::size_t smem_limit);

}  // namespace ceiling::kernels
