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

StencilColumnMmaPlan plan_stencil_column_mma(const StencilShape& s) {
  const StencilRadii r = stencil_radii(s);
  StencilColumnMmaPlan p;
  p.rx = r.x;
  p.ry = r.y;
  p.rz = r.z;
  for (int dz = -r.z; dz <= r.z; ++dz)
    for (int dx = -r.x; dx <= r.x; ++dx) {
      int lo = 1 << 30, hi = -(1 << 30);
      for (const auto& q : s.points)
        if (q.dx == dx && q.dz == dz) {
          lo = std::min(lo, q.dy);
          hi = std::max(hi, q.dy);
        }
      if (lo > hi) continue;
      p.lines.push_back({dx, dz, lo + r.y, (8 + hi - lo + 3) / 4});
      p.k_chunks = std::max(p.k_chunks, p.lines.back().chunks);
    }
  p.b_fragments.assign(p.lines.size() * static_cast<std::size_t>(p.k_chunks) * 32, 0.0);
  for (std::size_t l = 0; l < p.lines.size(); ++l) {
    const StencilColumnMmaLine& ln = p.lines[l];
    for (int c = 0; c < ln.chunks; ++c)
      for (int lane = 0; lane < 32; ++lane) {
        const int k = 4 * c + lane % 4, n = lane / 4, dy = ln.row_offset - r.y + k - n;
        double w = 0;
        for (const auto& q : s.points)
          if (q.dx == ln.dx && q.dy == dy && q.dz == ln.dz) w += q.weight;
        p.b_fragments[(l * p.k_chunks + c) * 32 + lane] = w;
      }
  }
  p.useful_fraction = p.lines.empty() ? 0.0 : static_cast<double>(s.size()) * 128.0 / (p.mma_per_block() * 512.0);
  return p;
}

int StencilColumnMmaPlan::mma_per_block() const {
  int n = 0;
  for (const auto& l : lines) n += l.chunks;
  return n;
}

std::string StencilColumnMmaPlan::text() const {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%zu lines, %d mma.m16n8k4 per 16x8 block (%.1f%% of the products useful)", lines.size(),
                mma_per_block(), 100.0 * useful_fraction);
  return buf;
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

std::string StencilStreamPlan::text() const {
  char buf[200];
  if (dims == 3)
    std::snprintf(buf, sizeof buf, "%dx%d section (core %dx%d), ring %d x %d levels, %.1f KiB shared, chunk %d, %.2f loads/point",
                  sx, sy, tx, ty, ring, steps, smem_bytes / 1024.0, chunk, load_ratio);
  else
    std::snprintf(buf, sizeof buf, "%d-wide section (core %d), ring %d x %d levels, %.1f KiB shared, chunk %d, %.2f loads/point",
                  sx, tx, ring, steps, smem_bytes / 1024.0, chunk, load_ratio);
  return buf;
}

int plain_window_rows(const StencilDomain& d, bool three, std::int64_t sms) {
  const std::int64_t blocks4 = three ? ((d.nx + 31) / 32) * ((d.ny + 7) / 8) * ((d.nz + 3) / 4)
                                     : ((d.nx + 127) / 128) * ((d.ny + 7) / 8);
  return blocks4 < 8 * sms ? 2 : 4;
}

int streaming_threads(int blocks_per_sm_at_128) { return blocks_per_sm_at_128 >= 4 ? kStreamThreads : 2 * kStreamThreads; }

StencilStreamPlan plan_stencil_streaming(const StencilShape& s, const StencilDomain& d, int steps,
                                         std::int64_t resident_blocks, std::size_t smem_limit) {
  if (steps < 1) throw std::invalid_argument("stencil streaming: steps must be >= 1");
  if (resident_blocks < 1) throw std::invalid_argument("stencil streaming: resident_blocks must be >= 1");
  const StencilRadii r = stencil_radii(s);
  StencilStreamPlan best;
  best.dims = s.dims;
  best.steps = steps;
  best.ra = r.x;
  best.rb = s.dims == 3 ? r.y : 0;
  best.rm = s.dims == 3 ? r.z : r.y;
  best.ring = 2 * best.rm + 1;
  const std::int64_t na = d.nx, nb = s.dims == 3 ? d.ny : 1, nm = s.dims == 3 ? d.nz : d.ny;
  std::vector<std::array<int, 2>> candidates;
  // 2-D: a 1024-wide section (3 blocks of 256 threads per SM) against 512 (H100 GPU-7e04c45e, every
  // built-in 2-D shape and domain): 2d5pt 5-14% faster, 2d9pt 2-6% slower out of L2 (4% faster in
  // L2), 2d13pt 8-23% and 2d49pt 11-40% slower; geomean T(512) / T(1024) 0.943. Not kept.
  if (s.dims == 2) candidates = {{512, 1}, {256, 1}, {128, 1}, {64, 1}};
  else candidates = {{32, 32}, {64, 16}, {16, 64}, {32, 16}, {16, 16}};
  double best_cost = std::numeric_limits<double>::infinity();
  for (const auto& c : candidates) {
    const int tx = c[0] - 2 * steps * best.ra, ty = c[1] - 2 * steps * best.rb;
    if (tx < 1 || ty < 1) continue;
    if (s.dims == 2 && 2 * tx < c[0]) continue;  // a core of less than half the section: too much halo
    const std::size_t smem = sizeof(double) * static_cast<std::size_t>(steps) * best.ring * c[0] * c[1];
    if (smem > smem_limit) continue;
    // 2-D: the first fitting width (the widest); 3-D: the fewest cells per output.
    const double cost = s.dims == 2 ? 0.0 : static_cast<double>(c[0]) * c[1] / (static_cast<double>(tx) * ty);
    if (cost < best_cost) {
      best_cost = cost;
      best.sx = c[0];
      best.sy = c[1];
      best.tx = tx;
      best.ty = ty;
      best.smem_bytes = smem;
      if (s.dims == 2) break;
    }
  }
  if (best.sx == 0)
    throw std::invalid_argument("stencil " + s.name + ": no streaming section for " + std::to_string(steps) +
                                " fused steps fits " + std::to_string(smem_limit / 1024) + " KiB (" +
                                std::to_string(steps) + " levels x " + std::to_string(best.ring) +
                                " planes, halo " + std::to_string(steps) + " x radius per side)");
  best.blocks_a = (na + best.tx - 1) / best.tx;
  best.blocks_b = (nb + best.ty - 1) / best.ty;
  // Chunks per column: the count whose blocks fill whole waves of `resident_blocks` best, each
  // chunk's warm-up (2 steps r_march planes, loaded and computed again) counted as lost time.
  const std::int64_t columns = best.blocks_a * best.blocks_b;
  double best_score = -1;
  for (std::int64_t want = 1; want <= std::min<std::int64_t>(nm, 256); ++want) {
    const std::int64_t chunk = (nm + want - 1) / want;
    const std::int64_t chunks = (nm + chunk - 1) / chunk;
    const std::int64_t blocks = columns * chunks;
    const std::int64_t waves = (blocks + resident_blocks - 1) / resident_blocks;
    const double fill = static_cast<double>(blocks) / static_cast<double>(waves * resident_blocks);
    const double useful = static_cast<double>(chunk) / static_cast<double>(chunk + 2 * steps * best.rm);
    const double score = std::min(1.0, fill) * useful;
    if (score > best_score + 1e-9) {
      best_score = score;
      best.chunk = static_cast<int>(chunk);
      best.chunks = chunks;
    }
  }
  const std::int64_t chunk = best.chunk;
  best.load_ratio = static_cast<double>(best.sx) * best.sy * static_cast<double>(chunk + 2 * steps * best.rm) /
                    (static_cast<double>(best.tx) * best.ty * static_cast<double>(chunk));
  const int plane = best.sx * best.sy;
  best.offsets.assign(static_cast<std::size_t>(best.ring) * s.points.size(), 0);
  for (int rot = 0; rot < best.ring; ++rot)
    for (std::size_t p = 0; p < s.points.size(); ++p) {
      const auto& q = s.points[p];
      const int dm = s.dims == 3 ? q.dz : q.dy, db = s.dims == 3 ? q.dy : 0;
      const int slot = ((rot + dm) % best.ring + best.ring) % best.ring;
      best.offsets[static_cast<std::size_t>(rot) * s.points.size() + p] = slot * plane + q.dx + db * best.sx;
    }
  return best;
}

namespace {

// The register kernels' chunks along the march axis (n cells): the count whose blocks (columns x
// chunks) fill whole waves of `resident` blocks best, each chunk's `warmup` cells counted as lost and a
// wave count w weighed w / (w + 0.1): one wave of long chunks ends on its slowest block, a few waves
// balance (2d13pt 10240^2 on an H200: 532 us in 0.98 of a wave, 492 us in 2.95 waves, 2026-11-27).
struct ChunkChoice {
  std::int64_t chunk = 0, chunks = 0;
  double score = -1;
};
ChunkChoice choose_chunks(std::int64_t n, std::int64_t columns, std::int64_t resident, int warmup) {
  ChunkChoice best;
  for (std::int64_t want = 1; want <= std::min<std::int64_t>(n, 1024); ++want) {
    const std::int64_t chunk = (n + want - 1) / want;
    const std::int64_t chunks = (n + chunk - 1) / chunk;
    const std::int64_t blocks = columns * chunks;
    const std::int64_t waves = (blocks + resident - 1) / resident;
    const double fill = static_cast<double>(blocks) / static_cast<double>(waves * resident);
    const double useful = static_cast<double>(chunk) / static_cast<double>(chunk + warmup);
    const double tail = static_cast<double>(waves) / (static_cast<double>(waves) + 0.1);
    const double score = fill * useful * tail;
    if (score > best.score + 1e-9) best = {chunk, chunks, score};
  }
  return best;
}

}  // namespace

std::string StencilRowsPlan::text() const {
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "%d-wide rows (core %d, %d per thread), %s R %d, %d levels, %.1f KiB shared, chunk %d, %.2f loads/point",
                threads * columns, core, columns, box ? "box" : "star", radius, steps, smem_bytes / 1024.0, chunk,
                load_ratio);
  return buf;
}

std::string stencil_rows_refusal(const StencilShape& s, int steps) {
  if (s.dims != 2) return "the rows kernel is 2-D only (" + s.name + " is " + std::to_string(s.dims) + "-D)";
  const StencilRadii r = stencil_radii(s);
  if (std::max(r.x, r.y) > kRowsMaxRadius)
    return "the rows kernel takes radius <= " + std::to_string(kRowsMaxRadius) + " (" + s.name + ": " +
           std::to_string(std::max(r.x, r.y)) + ")";
  if (steps < 1 || steps > kRowsMaxSteps)
    return "the rows kernel fuses 1 to " + std::to_string(kRowsMaxSteps) + " steps (asked " + std::to_string(steps) + ")";
  return "";
}

StencilRowsPlan plan_stencil_rows(const StencilShape& s, const StencilDomain& d, int steps, std::int64_t resident_256,
                                  std::int64_t resident_128) {
  const std::string why = stencil_rows_refusal(s, steps);
  if (!why.empty()) throw std::invalid_argument("stencil " + s.name + ": " + why);
  if (resident_256 < 1 || resident_128 < 1) throw std::invalid_argument("stencil rows: resident blocks must be >= 1");
  if (d.ny > 1000000000LL || d.nx > 1000000000LL)
    throw std::invalid_argument("stencil rows: domain " + d.text() + " has more than 10^9 cells on an axis (32-bit rows)");
  const StencilRadii r = stencil_radii(s);
  StencilRowsPlan best;
  best.radius = std::max({1, r.x, r.y});
  best.steps = steps;
  const int R = best.radius, K = 2 * R + 1;
  for (const auto& q : s.points) best.box = best.box || (q.dx != 0 && q.dy != 0);
  best.weights.assign(static_cast<std::size_t>(K) * K, 0.0);
  for (const auto& q : s.points) best.weights[static_cast<std::size_t>((q.dy + R) * K + q.dx + R)] += q.weight;
  double best_score = -1;
  best.columns = rows_columns_per_thread(R);
  for (const int threads : {256, 128}) {
    const int w = threads * best.columns;
    const int core = w - 2 * steps * R;
    if (2 * core < w) continue;
    const std::int64_t resident = threads == 256 ? resident_256 : resident_128;
    const std::int64_t columns = (d.nx + core - 1) / core;
    const ChunkChoice c = choose_chunks(d.ny, columns, resident, 2 * steps * R);
    const double score = c.score * static_cast<double>(core) / w;  // the halo columns lost too
    if (score > best_score + 1e-9) {
      best_score = score;
      best.threads = threads;
      best.core = core;
      best.chunk = static_cast<int>(c.chunk);
      best.chunks = c.chunks;
      best.blocks_a = columns;
    }
  }
  if (best.threads == 0)
    throw std::invalid_argument("stencil " + s.name + ": " + std::to_string(steps) + " fused steps of radius " +
                                std::to_string(R) + " leave the rows kernel a core of less than half its section");
  best.smem_bytes = rows_smem_bytes(R, steps, best.threads);
  best.load_ratio = static_cast<double>(best.threads) * best.columns * static_cast<double>(best.chunk + 2 * steps * R) /
                    (static_cast<double>(best.core) * best.chunk);
  return best;
}

std::string StencilPlanesPlan::text() const {
  char buf[200];
  std::snprintf(buf, sizeof buf, "%dx%d planes (core %dx%d), %s, %d levels, %.1f KiB shared, chunk %d, %.2f loads/point",
                kPlanesSide, kPlanesSide, core, core, box ? "box" : "star", steps, smem_bytes / 1024.0, chunk, load_ratio);
  return buf;
}

std::string stencil_planes_refusal(const StencilShape& s, int steps) {
  if (s.dims != 3) return "the planes kernel is 3-D only (" + s.name + " is " + std::to_string(s.dims) + "-D)";
  const StencilRadii r = stencil_radii(s);
  if (std::max({r.x, r.y, r.z}) > 1)
    return "the planes kernel takes radius 1 (" + s.name + ": " + std::to_string(std::max({r.x, r.y, r.z})) + ")";
  if (steps < 1 || steps > kPlanesMaxSteps)
    return "the planes kernel fuses 1 to " + std::to_string(kPlanesMaxSteps) + " steps (asked " + std::to_string(steps) + ")";
  return "";
}

std::string stencil_register_refusal(const StencilShape& s, int steps) {
  return s.dims == 2 ? stencil_rows_refusal(s, steps) : stencil_planes_refusal(s, steps);
}

StencilPlanesPlan plan_stencil_planes(const StencilShape& s, const StencilDomain& d, int steps, std::int64_t resident) {
  const std::string why = stencil_planes_refusal(s, steps);
  if (!why.empty()) throw std::invalid_argument("stencil " + s.name + ": " + why);
  if (resident < 1) throw std::invalid_argument("stencil planes: resident blocks must be >= 1");
  if (d.nz > 1000000000LL || d.nx * d.ny > 2000000000LL)
    throw std::invalid_argument("stencil planes: domain " + d.text() + " has too many cells per plane or planes (32-bit)");
  StencilPlanesPlan best;
  best.steps = steps;
  best.core = kPlanesSide - 2 * steps;
  int axes = 0;
  for (const auto& q : s.points) {
    axes = (q.dx != 0) + (q.dy != 0) + (q.dz != 0);
    best.box = best.box || axes > 1;
  }
  best.weights.assign(27, 0.0);
  for (const auto& q : s.points) best.weights[static_cast<std::size_t>((q.dz + 1) * 9 + (q.dy + 1) * 3 + q.dx + 1)] += q.weight;
  best.blocks_x = (d.nx + best.core - 1) / best.core;
  best.blocks_y = (d.ny + best.core - 1) / best.core;
  const std::int64_t columns = best.blocks_x * best.blocks_y;
  const ChunkChoice c = choose_chunks(d.nz, columns, resident, 2 * steps);
  best.chunk = static_cast<int>(c.chunk);
  best.chunks = c.chunks;
  best.smem_bytes = sizeof(double) * static_cast<std::size_t>(steps + 1) * (kPlanesSide + 2) * (kPlanesSide + 2);
  best.load_ratio = static_cast<double>(kPlanesSide) * kPlanesSide * static_cast<double>(best.chunk + 2 * steps) /
                    (static_cast<double>(best.core) * best.core * best.chunk);
  return best;
}

}  // namespace ceiling::kernels
