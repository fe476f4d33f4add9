#include "stencil_plan.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace ceiling::kernels {

StencilRadii stencil_radii(const StencilShape& s) {
  StencilRadii r;
  for (const auto& p : s.points) {
    r.x = std::max(r.x, std::abs(p.dx));
    r.y = std::max(r.y, std::abs(p.dy));
    r.z = std::max(r.z, std::abs(p.dz));
  }
  return r;
}

std::string StencilTile::text() const {
  char buf[160];
  if (bz > 1 || tz > 1)
    std::snprintf(buf, sizeof buf, "%dx%dx%d tile (+%d,%d,%d halo), %.1f KiB shared, %.2f loads/point", tx, ty, tz, hx,
                  hy, hz, smem_bytes / 1024.0, load_ratio);
  else
    std::snprintf(buf, sizeof buf, "%dx%d tile (+%d,%d halo), %.1f KiB shared, %.2f loads/point", tx, ty, hx, hy,
                  smem_bytes / 1024.0, load_ratio);
  return buf;
}

StencilTensorCorePlan plan_stencil_tensor_core(const StencilShape& s) {
  const StencilRadii r = stencil_radii(s);
  StencilTensorCorePlan p;
  p.k_chunks = (8 + 2 * r.x + 3) / 4;
  for (int dz = -r.z; dz <= r.z; ++dz)
    for (int dy = -r.y; dy <= r.y; ++dy) {
      bool any = false;
      for (const auto& q : s.points) any |= q.dy == dy && q.dz == dz;
      if (any) p.lines.emplace_back(dy, dz);
    }
  p.b_fragments.assign(p.lines.size() * static_cast<std::size_t>(p.k_chunks) * 32, 0.0);
  for (std::size_t l = 0; l < p.lines.size(); ++l)
    for (int c = 0; c < p.k_chunks; ++c)
      for (int lane = 0; lane < 32; ++lane) {
        const int k = 4 * c + lane % 4, n = lane / 4, dx = k - r.x - n;
        double w = 0;
        for (const auto& q : s.points)
          if (q.dx == dx && q.dy == p.lines[l].first && q.dz == p.lines[l].second) w = q.weight;
        p.b_fragments[(l * p.k_chunks + c) * 32 + lane] = w;
      }
  p.useful_fraction = p.lines.empty() ? 0.0
                                      : static_cast<double>(s.size()) * 128.0 /
                                            (static_cast<double>(p.lines.size()) * p.k_chunks * 512.0);
  return p;
}

namespace {

// The tensor-core kernel reads up to 4 k_chunks - 1 - rx past an 8-column block's start and 7 rows
// plus ry past an 8-row block's: 12 columns and 8 rows of zeros beyond the halo cover both. Its
// row length is 4 mod 16 doubles, so the 8 rows x 4 columns of an A fragment fill the 32 banks
// twice (two wavefronts, the least for 256 bytes).
constexpr int kTcPadX = 12, kTcPadY = 8;

StencilTile make_tile(int tx, int ty, int tz, const StencilRadii& r, int steps, bool tc, std::size_t extra_bytes) {
  StencilTile t;
  t.tx = tx;
  t.ty = ty;
  t.tz = tz;
  t.hx = steps * r.x;
  t.hy = steps * r.y;
  t.hz = steps * r.z;
  t.bx = tx + 2 * t.hx;
  t.by = ty + 2 * t.hy;
  t.bz = tz + 2 * t.hz;
  const double loaded = static_cast<double>(t.bx) * t.by * t.bz;
  if (tc) {
    t.bx += kTcPadX;
    t.bx += ((4 - t.bx % 16) + 16) % 16;
    t.by += kTcPadY;
  }
  t.load_ratio = loaded / (static_cast<double>(tx) * ty * tz);
  t.smem_bytes = 2 * sizeof(double) * static_cast<std::size_t>(t.bx) * t.by * t.bz + extra_bytes;
  return t;
}

}  // namespace

StencilTile plan_stencil_tile(const StencilShape& s, int steps, bool tensor_core, std::size_t smem_limit) {
  if (steps < 1) throw std::invalid_argument("stencil tile: steps must be >= 1");
  const StencilRadii r = stencil_radii(s);
  const std::size_t extra = tensor_core ? plan_stencil_tensor_core(s).b_fragments.size() * sizeof(double) : 0;
  std::vector<std::array<int, 3>> candidates;
  if (s.dims == 2) candidates = {{64, 32, 1}, {32, 32, 1}, {32, 16, 1}, {32, 8, 1}};
  else candidates = {{32, 8, 8}, {32, 8, 4}, {32, 4, 4}, {16, 8, 4}};
  StencilTile best;
  double best_ratio = std::numeric_limits<double>::infinity();
  for (const auto& c : candidates) {
    const StencilTile t = make_tile(c[0], c[1], c[2], r, steps, tensor_core, extra);
    if (t.smem_bytes > smem_limit) continue;
    if (t.load_ratio < best_ratio) {
      best = t;
      best_ratio = t.load_ratio;
    }
  }
  if (!(best_ratio < std::numeric_limits<double>::infinity()))
    throw std::invalid_argument("stencil " + s.name + ": no shared-memory tile for " + std::to_string(steps) +
                                " fused steps fits " + std::to_string(smem_limit / 1024) + " KiB (halo " +
                                std::to_string(steps) + " x radius per side)");
  return best;
}

}  // namespace ceiling::kernels
