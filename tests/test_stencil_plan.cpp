// The stencil variants' plans (kernels/stencil_plan.hpp): the tensor-core formulation reproduces
// the stencil on the CPU (fragments emulated lane by lane as mma.m8n8k4 reads them), its useful
// share per shape, and the shared-memory tiles.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "kernels/stencil_plan.hpp"
#include "model/stencil_shape.hpp"

using namespace ceiling;
using namespace ceiling::kernels;

TEST_SUITE_BEGIN("stencil-plan");

TEST_CASE("the Toeplitz fragments reproduce every built-in shape on an 8x8 block (mma emulated on the CPU)") {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  for (const auto& s : builtin_stencil_shapes()) {
    const StencilRadii r = stencil_radii(s);
    const StencilTensorCorePlan p = plan_stencil_tensor_core(s);
    REQUIRE(p.k_chunks * 4 >= 8 + 2 * r.x);
    // A grid big enough for the block's halo and the padded K columns.
    const int W = 8 + 2 * r.x + 4 * p.k_chunks, H = 8 + 2 * r.y, Z = 1 + 2 * r.z;
    std::vector<double> g(static_cast<size_t>(W * H * Z));
    for (auto& x : g) x = u(rng);
    const auto at = [&](int x, int y, int z) { return g[static_cast<size_t>((z * H + y) * W + x)]; };
    const int x0 = r.x, y0 = r.y, z0 = r.z;  // the block's first output
    double worst = 0;
    for (int gi = 0; gi < 8; ++gi)
      for (int n = 0; n < 8; ++n) {
        double direct = 0;
        for (const auto& q : s.points) direct += q.weight * at(x0 + n + q.dx, y0 + gi + q.dy, z0 + q.dz);
        double mma = 0;  // D[gi][n] = sum over lines and chunks of A[gi][k] B[k][n], B[k][n] in lane 4n + k % 4
        for (size_t l = 0; l < p.lines.size(); ++l)
          for (int c = 0; c < p.k_chunks; ++c)
            for (int t = 0; t < 4; ++t) {
              const double a = at(x0 - r.x + 4 * c + t, y0 + gi + p.lines[l].first, z0 + p.lines[l].second);
              mma += a * p.b_fragments[(l * p.k_chunks + c) * 32 + 4 * n + t];
            }
        worst = std::max(worst, std::fabs(mma - direct));
      }
    INFO(s.name);
    CHECK(worst < 1e-14);
  }
}

TEST_CASE("the tensor core's useful share per shape: |S| 128 / (lines x K/4 x 512)") {
  const std::map<std::string, double> expect{{"2d5pt", 640.0 / 4608}, {"2d9pt", 0.25},      {"2d13pt", 1664.0 / 14336},
                                             {"2d49pt", 0.4375},      {"3d7pt", 896.0 / 7680}, {"3d27pt", 0.25}};
  for (const auto& s : builtin_stencil_shapes()) {
    INFO(s.name);
    REQUIRE(expect.count(s.name));
    CHECK(plan_stencil_tensor_core(s).useful_fraction == ceiling_test::Rel(expect.at(s.name)).epsilon(1e-12));
  }
  const auto p = plan_stencil_tensor_core(*find_builtin_stencil_shape("3d7pt"));
  CHECK(p.lines.size() == 5);  // (0,0), (+-1, 0), (0, +-1): the corner lines of the 3x3 are empty
  CHECK(p.k_chunks == 3);
}

TEST_CASE("shared-memory tiles: halo t x radius, within the limit, the fewest loads per point") {
  const auto& s5 = *find_builtin_stencil_shape("2d5pt");
  const StencilTile t = plan_stencil_tile(s5, 3, false, 100 * 1024);
  CHECK(t.tx == 64);
  CHECK(t.ty == 32);
  CHECK(t.hx == 3);
  CHECK(t.hy == 3);
  CHECK(t.bx == 70);
  CHECK(t.smem_bytes == 2 * 8 * 70 * 38);
  CHECK(t.load_ratio == ceiling_test::Rel(70.0 * 38 / (64 * 32)));
  const StencilTile tc = plan_stencil_tile(s5, 3, true, 100 * 1024);
  CHECK(tc.bx % 16 == 4);          // A fragments conflict-free
  CHECK(tc.bx >= 70 + 12);         // the padded K columns
  CHECK(tc.by >= 38 + 8);
  const auto& s7 = *find_builtin_stencil_shape("3d7pt");
  const StencilTile t3 = plan_stencil_tile(s7, 3, false, 100 * 1024);
  CHECK(t3.smem_bytes <= 100 * 1024);
  CHECK(t3.tx == 32);
  CHECK(t3.hz == 3);
  // Nothing fits: a radius-3 box with 4 fused steps in 16 KiB.
  CHECK_THROWS_AS(plan_stencil_tile(*find_builtin_stencil_shape("2d49pt"), 4, true, 16 * 1024), std::invalid_argument);
  CHECK_THROWS_AS(plan_stencil_tile(s5, 0, false, 100 * 1024), std::invalid_argument);
}

namespace {

// max |got - ref| / max |ref|; infinite where an output is unwritten (NaN).
double normwise_error(const std::vector<double>& got, const std::vector<double>& ref) {
  double worst = 0, norm = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    worst = std::max(worst, std::isnan(got[i]) ? INFINITY : std::abs(got[i] - ref[i]));
    norm = std::max(norm, std::abs(ref[i]));
  }
  return worst / norm;
}

// The streaming kernel's algorithm on the CPU, block by block and level by level as the kernel runs
// it between barriers (kernels/stencil_common.cuh, stencil_streaming_kernel): rings of `ring` planes
// per level, the plan's [slot][point] offsets, level `steps` written to the output.
std::vector<double> emulate_streaming(const StencilShape& s, const StencilDomain& d, int steps,
                                      const StencilStreamPlan& pl, const std::vector<double>& in) {
  std::vector<double> out(in.size(), std::nan(""));
  const std::int64_t na = d.nx, nb = s.dims == 3 ? d.ny : 1, nm = s.dims == 3 ? d.nz : d.ny;
  const std::int64_t mstride = s.dims == 3 ? d.nx * d.ny : d.nx;
  const int P = pl.cells(), npts = s.size();
  std::vector<double> smem(static_cast<size_t>(steps) * pl.ring * P, std::nan(""));
  const auto slot = [&](std::int64_t p) { return static_cast<int>(((p % pl.ring) + pl.ring) % pl.ring); };
  for (std::int64_t bz = 0; bz < pl.chunks; ++bz)
    for (std::int64_t by = 0; by < pl.blocks_b; ++by)
      for (std::int64_t bx = 0; bx < pl.blocks_a; ++bx) {
        const std::int64_t a0 = bx * pl.tx - steps * pl.ra, b0 = by * pl.ty - steps * pl.rb;
        const std::int64_t m0 = bz * pl.chunk, m1 = std::min<std::int64_t>(m0 + pl.chunk, nm);
        std::vector<int> cls(P), depth(P);
        std::vector<std::int64_t> rel(P);
        for (int i = 0; i < P; ++i) {
          const int ca = i % pl.sx, cb = i / pl.sx;
          const std::int64_t ga = a0 + ca, gb = b0 + cb;
          const bool inside = ga >= 0 && ga < na && gb >= 0 && gb < nb;
          const bool inner = ga >= pl.ra && ga < na - pl.ra && gb >= pl.rb && gb < nb - pl.rb;
          cls[i] = inside ? (inner ? 2 : 1) : 0;
          depth[i] = std::min(pl.ra ? std::min(ca, pl.sx - 1 - ca) / pl.ra : 64, pl.rb ? std::min(cb, pl.sy - 1 - cb) / pl.rb : 64);
          rel[i] = gb * na + ga;
        }
        for (std::int64_t p = m0 - steps * pl.rm; p < m1 + steps * pl.rm; ++p) {
          for (int i = 0; i < P; ++i)
            smem[static_cast<size_t>(slot(p)) * P + i] =
                cls[i] && p >= 0 && p < nm ? in[static_cast<size_t>(p * mstride + rel[i])] : 0.0;
          for (int lv = 1; lv <= steps; ++lv) {
            const std::int64_t q = p - lv * pl.rm;
            if (q < m0 - (steps - lv) * pl.rm || q >= m1 + (steps - lv) * pl.rm) continue;
            const int qcls = q >= 0 && q < nm ? (q >= pl.rm && q < nm - pl.rm ? 2 : 1) : 0;
            const int rot = slot(q);
            const double* src = smem.data() + static_cast<size_t>(lv - 1) * pl.ring * P;
            for (int l = 0; l < P; ++l) {
              if (depth[l] < lv) continue;
              const int c = std::min(cls[l], qcls);
              double v = 0.0;
              if (c == 2)
                for (int j = 0; j < npts; ++j)
                  v = std::fma(s.points[j].weight, src[l + pl.offsets[static_cast<size_t>(rot) * npts + j]], v);
              else if (c == 1)
                v = src[rot * P + l];
              if (lv < steps) smem[(static_cast<size_t>(lv) * pl.ring + rot) * P + l] = v;
              else if (c > 0 && q >= m0 && q < m1) out[static_cast<size_t>(q * mstride + rel[l])] = v;
            }
          }
        }
      }
  return out;
}

}  // namespace

TEST_CASE("streaming sections: core plus t x radius, rings of 2r + 1 planes, the kernel's algorithm reproduces the reference") {
  const StencilShape& s5 = *find_builtin_stencil_shape("2d5pt");
  const StencilShape& s7 = *find_builtin_stencil_shape("3d7pt");
  // The measured cases: 9000^2 and 512^3 at three steps on 132 SMs, 6 and 3 blocks per SM.
  const StencilStreamPlan p2 = plan_stencil_streaming(s5, parse_stencil_domain("9000x9000"), 3, 6 * 132, 100 * 1024);
  CHECK(p2.sx == 512);
  CHECK(p2.tx == 506);
  CHECK(p2.ring == 3);
  CHECK(p2.smem_bytes == 3 * 3 * 512 * 8);
  CHECK(p2.blocks_a == 18);
  CHECK(p2.chunks * p2.chunk >= 9000);
  // Whole waves: 18 columns x 44 chunks = 792 blocks = one wave of 6 x 132.
  CHECK(p2.chunks == 44);
  CHECK(p2.blocks_a * p2.chunks == 792);
  CHECK(p2.load_ratio == ceiling_test::Rel(512.0 / 506 * (p2.chunk + 6.0) / p2.chunk));
  const StencilStreamPlan p3 = plan_stencil_streaming(s7, parse_stencil_domain("512x512x512"), 3, 3 * 132, 100 * 1024);
  CHECK(p3.sx == 32);
  CHECK(p3.sy == 32);
  CHECK(p3.tx == 26);
  CHECK(p3.ty == 26);
  CHECK(p3.smem_bytes == 3 * 3 * 32 * 32 * 8);
  // 400 columns on 396 resident blocks: more chunks (several waves) beat a 2-wave tail of 4 blocks.
  CHECK(p3.blocks_a * p3.blocks_b == 400);
  const double fill3 = static_cast<double>(400 * p3.chunks) / (std::ceil(400.0 * p3.chunks / 396) * 396);
  CHECK(fill3 > 0.9);
  // Offsets: point p of ring slot rot sits at mod(rot + dz, 3) planes, dx + dy sx cells away.
  for (int rot = 0; rot < 3; ++rot)
    for (int j = 0; j < s7.size(); ++j) {
      const auto& q = s7.points[j];
      CHECK(p3.offsets[rot * s7.size() + j] == ((rot + q.dz + 3) % 3) * 1024 + q.dx + q.dy * 32);
    }
  // Too many steps for the limit: refused, naming the shape and steps.
  CHECK_THROWS_WITH_AS(plan_stencil_streaming(s7, parse_stencil_domain("64x64x64"), 12, 396, 100 * 1024),
                       doctest::Contains("3d7pt: no streaming section for 12 fused steps"), std::invalid_argument);
  CHECK_THROWS_AS(plan_stencil_streaming(s5, parse_stencil_domain("64x64"), 0, 396, 100 * 1024), std::invalid_argument);
  CHECK_THROWS_AS(plan_stencil_streaming(s5, parse_stencil_domain("64x64"), 1, 0, 100 * 1024), std::invalid_argument);

  // The algorithm, emulated, against the CPU reference: every built-in shape, 1-3 steps, odd
  // domains, a small SM count so that several chunks and columns meet.
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  for (const auto& s : builtin_stencil_shapes()) {
    const StencilDomain d = parse_stencil_domain(s.dims == 2 ? "611x203" : "67x41x37");
    std::vector<double> in(static_cast<size_t>(d.points()));
    for (auto& x : in) x = u(rng);
    for (int t = 1; t <= 3; ++t) {
      const StencilStreamPlan pl = plan_stencil_streaming(s, d, t, 7, 226 * 1024);
      INFO(s.name << " t=" << t << " " << pl.text());
      CHECK((pl.chunks > 1 || pl.chunk == (s.dims == 3 ? 37 : 203)));
      const std::vector<double> got = emulate_streaming(s, d, t, pl, in);
      const std::vector<double> ref = stencil_reference(s, d, in.data(), t);
      CHECK(normwise_error(got, ref) <= 1e-12);
    }
  }
}

TEST_CASE("streaming threads per block: 128 where 4 or more blocks fit an SM, else 256, the section's cells divide evenly") {
  CHECK(streaming_threads(6) == 128);
  CHECK(streaming_threads(4) == 128);
  CHECK(streaming_threads(3) == 256);  // the 3-D rings (72 KiB at t = 3)
  CHECK(streaming_threads(1) == 256);
  CHECK(streaming_threads(0) == 256);
  for (const int t : {streaming_threads(6), streaming_threads(1)}) {
    CHECK(kStreamMaxCells % t == 0);  // every thread owns kStreamMaxCells / t cells of a plane
    CHECK(t % 32 == 0);
  }
  // Every built-in shape's section fits the kernel's cells per plane.
  for (const auto& s : builtin_stencil_shapes()) {
    const StencilDomain d = s.dims == 3 ? StencilDomain{3, 256, 256, 256} : StencilDomain{2, 4096, 4096, 1};
    const StencilStreamPlan p = plan_stencil_streaming(s, d, 3, 132 * 3, 226 * 1024);
    CHECK(p.cells() <= kStreamMaxCells);
  }
}

TEST_CASE("rows plan: 2-D radius <= 3 and 1 to 4 steps only, star or box, the shape's weights on the dense grid") {
  const StencilShape& s5 = *find_builtin_stencil_shape("2d5pt");
  const StencilShape& s9 = *find_builtin_stencil_shape("2d9pt");
  const StencilShape& s13 = *find_builtin_stencil_shape("2d13pt");
  const StencilShape& s49 = *find_builtin_stencil_shape("2d49pt");
  const StencilShape& s3d = *find_builtin_stencil_shape("3d7pt");
  CHECK(stencil_rows_refusal(s5, 3).empty());
  CHECK(stencil_rows_refusal(s49, 4).empty());
  CHECK(stencil_rows_refusal(s3d, 1).find("2-D only") != std::string::npos);
  CHECK(stencil_rows_refusal(s5, 5).find("1 to 4 steps") != std::string::npos);
  CHECK(stencil_rows_refusal(s5, 0).find("1 to 4 steps") != std::string::npos);
  StencilShape wide = s5;
  wide.points.push_back({4, 0, 0, 0.5});
  CHECK(stencil_rows_refusal(wide, 1).find("radius <= 3") != std::string::npos);
  CHECK_THROWS_AS(plan_stencil_rows(wide, parse_stencil_domain("100x100"), 1, 100, 100), std::invalid_argument);
  CHECK_THROWS_AS(plan_stencil_rows(s3d, parse_stencil_domain("10x10x10"), 1, 100, 100), std::invalid_argument);

  const StencilDomain d = parse_stencil_domain("1000x700");
  struct Want {
    const StencilShape* s;
    int radius;
    bool box;
  };
  for (const Want& w : {Want{&s5, 1, false}, Want{&s9, 1, true}, Want{&s13, 3, false}, Want{&s49, 3, true}}) {
    INFO(w.s->name);
    const StencilRowsPlan p = plan_stencil_rows(*w.s, d, 1, 528, 1056);
    CHECK(p.radius == w.radius);
    CHECK(p.box == w.box);
    const int K = 2 * p.radius + 1;
    REQUIRE(p.weights.size() == static_cast<size_t>(K * K));
    double sum_plan = 0, sum_shape = 0;
    for (double x : p.weights) sum_plan += x;
    for (const auto& q : w.s->points) {
      sum_shape += q.weight;
      CHECK(p.weights[static_cast<size_t>((q.dy + p.radius) * K + q.dx + p.radius)] == q.weight);
    }
    CHECK(sum_plan == ceiling_test::Rel(sum_shape).epsilon(1e-14));  // zeros elsewhere
    int nonzero = 0;
    for (double x : p.weights) nonzero += x != 0.0;
    CHECK(nonzero == w.s->size());
  }
  // A shape of radius 2 on one axis only runs the R = 2 kernel; a single point R = 1.
  StencilShape two{"two", 2, {{0, 0, 0, 1.0}, {2, 0, 0, 0.5}, {0, -1, 0, 0.25}}};
  CHECK(plan_stencil_rows(two, d, 2, 528, 1056).radius == 2);
  CHECK_FALSE(plan_stencil_rows(two, d, 2, 528, 1056).box);
  StencilShape one{"one", 2, {{0, 0, 0, 1.0}}};
  CHECK(plan_stencil_rows(one, d, 2, 528, 1056).radius == 1);
}

TEST_CASE("rows plan: halo of steps x R per side, chunks that cover the rows, whole waves where they can") {
  const StencilShape& s5 = *find_builtin_stencil_shape("2d5pt");
  const StencilShape& s49 = *find_builtin_stencil_shape("2d49pt");
  for (const std::string dom : {"10240x10240", "9000x9000", "960x960", "67x45", "3001x2999", "100000x3"}) {
    const StencilDomain d = parse_stencil_domain(dom);
    for (int steps = 1; steps <= 4; ++steps)
      for (const StencilShape* s : {&s5, &s49}) {
        INFO(dom << " " << s->name << " t=" << steps);
        const StencilRowsPlan p = plan_stencil_rows(*s, d, steps, 132 * 4, 132 * 8);
        CHECK((p.threads == 256 || p.threads == 128));
        CHECK(p.columns == 1);  // two per thread measured slower (kernels/stencil_common.cuh)
        const int w = p.threads * p.columns;
        CHECK(p.core == w - 2 * steps * p.radius);
        CHECK(2 * p.core >= w);
        CHECK(p.blocks_a * p.core >= d.nx);
        CHECK((p.blocks_a - 1) * p.core < d.nx);
        CHECK(p.chunks * p.chunk >= d.ny);
        CHECK((p.chunks - 1) * p.chunk < d.ny);
        const size_t pad = static_cast<size_t>(p.radius);  // zero cells on each side of a level's row
        CHECK(p.smem_bytes == 8u * static_cast<size_t>(steps + 1) * (static_cast<size_t>(w) + 2 * pad));
        CHECK(p.load_ratio == ceiling_test::Rel(static_cast<double>(w) * (p.chunk + 2 * steps * p.radius) /
                                                (static_cast<double>(p.core) * p.chunk)).epsilon(1e-12));
        CHECK(p.text().find(std::to_string(w) + "-wide rows") == 0);
      }
  }
  // 10240^2, 2d5pt, 3 steps, 528 resident blocks of 256 threads: 41 sections of 256 cells (core 250;
  // 128 threads: 84 of 122, more halo); the chunks fill the waves to within 5%, in more than one wave.
  const StencilRowsPlan big = plan_stencil_rows(s5, parse_stencil_domain("10240x10240"), 3, 528, 1056);
  CHECK(big.threads == 256);
  CHECK(big.blocks_a == 41);
  const std::int64_t blocks = big.blocks_a * big.chunks;
  const std::int64_t waves = (blocks + 527) / 528;
  CHECK(static_cast<double>(blocks) / static_cast<double>(waves * 528) > 0.95);
  CHECK(waves >= 2);
  CHECK(big.load_ratio < 1.1);
  // 2d13pt 10240^2 at 792 resident blocks: 41 x 19 chunks would fit one wave (779 blocks); the tail
  // weight takes more waves of shorter chunks (measured faster, kernels/stencil_plan.cpp).
  const StencilRowsPlan star = plan_stencil_rows(*find_builtin_stencil_shape("2d13pt"), parse_stencil_domain("10240x10240"), 1, 792, 1584);
  CHECK(star.blocks_a * star.chunks > 792);
}

TEST_CASE("planes plan: 3-D radius 1 and 1 to 3 steps, star or box, 32 x 32 sections, chunks that cover z") {
  const StencilShape& s7 = *find_builtin_stencil_shape("3d7pt");
  const StencilShape& s27 = *find_builtin_stencil_shape("3d27pt");
  CHECK(stencil_planes_refusal(s7, 3).empty());
  CHECK(stencil_planes_refusal(s27, 1).empty());
  CHECK(stencil_planes_refusal(s7, 4).find("1 to 3 steps") != std::string::npos);
  CHECK(stencil_planes_refusal(*find_builtin_stencil_shape("2d5pt"), 1).find("3-D only") != std::string::npos);
  StencilShape wide = s7;
  wide.points.push_back({0, 0, 2, 0.5});
  CHECK(stencil_planes_refusal(wide, 1).find("radius 1") != std::string::npos);
  CHECK_THROWS_AS(plan_stencil_planes(wide, parse_stencil_domain("64x64x64"), 1, 132), std::invalid_argument);
  // stencil_register_refusal: rows for 2-D, planes for 3-D.
  CHECK(stencil_register_refusal(*find_builtin_stencil_shape("2d49pt"), 4).empty());
  CHECK_FALSE(stencil_register_refusal(s7, 4).empty());
  CHECK(stencil_register_refusal(s7, 3).empty());

  for (const std::string dom : {"1024x1024x1024", "512x512x512", "234x312x2560", "97x97x97", "37x29x23", "70x9x41"})
    for (int steps = 1; steps <= 3; ++steps)
      for (const StencilShape* s : {&s7, &s27}) {
        INFO(dom << " " << s->name << " t=" << steps);
        const StencilDomain d = parse_stencil_domain(dom);
        const StencilPlanesPlan p = plan_stencil_planes(*s, d, steps, 132);
        CHECK(p.box == (s == &s27));
        CHECK(p.core == 32 - 2 * steps);
        CHECK(p.blocks_x * p.core >= d.nx);
        CHECK((p.blocks_x - 1) * p.core < d.nx);
        CHECK(p.blocks_y * p.core >= d.ny);
        CHECK((p.blocks_y - 1) * p.core < d.ny);
        CHECK(p.chunks * p.chunk >= d.nz);
        CHECK((p.chunks - 1) * p.chunk < d.nz);
        CHECK(p.smem_bytes == 8u * static_cast<size_t>(steps + 1) * 34 * 34);
        CHECK(p.load_ratio == ceiling_test::Rel(1024.0 * (p.chunk + 2 * steps) / (static_cast<double>(p.core) * p.core * p.chunk)).epsilon(1e-12));
        REQUIRE(p.weights.size() == 27u);
        int nonzero = 0;
        for (double w : p.weights) nonzero += w != 0.0;
        CHECK(nonzero == s->size());
        for (const auto& q : s->points) CHECK(p.weights[static_cast<size_t>((q.dz + 1) * 9 + (q.dy + 1) * 3 + q.dx + 1)] == q.weight);
      }
}

namespace {

// The rows (2-D) and planes (3-D) kernels' algorithm on the CPU, block by block, input row (plane) by
// input row and level by level as the kernels run it between barriers (kernels/stencil_common.cuh,
// stencil_rows_kernel, stencil_planes_kernel): per thread the partial sums acc[level][k] and the own
// values own[level][k], per level one row (plane) of the section with zero cells around it, the
// star's skipped taps skipped, level `steps` written where the thread's cell is in the core.
std::vector<double> emulate_register(const StencilShape& s, const StencilDomain& d, int steps, const std::vector<double>& in,
                                     std::int64_t resident) {
  const bool three = s.dims == 3;
  const StencilRadii r = stencil_radii(s);
  StencilRowsPlan rp;
  StencilPlanesPlan pp;
  if (three) pp = plan_stencil_planes(s, d, steps, resident);
  else rp = plan_stencil_rows(s, d, steps, resident, 2 * resident);
  const int R = three ? 1 : rp.radius, K = 2 * R + 1;
  const bool box = three ? pp.box : rp.box;
  const std::vector<double>& w = three ? pp.weights : rp.weights;
  const int sx = three ? kPlanesSide : rp.threads, sy = three ? kPlanesSide : 1, core = three ? pp.core : rp.core;
  const int chunk = three ? pp.chunk : rp.chunk;
  const std::int64_t bxn = three ? pp.blocks_x : rp.blocks_a, byn = three ? pp.blocks_y : 1, chunks = three ? pp.chunks : rp.chunks;
  const std::int64_t nm = three ? d.nz : d.ny, plane = three ? d.nx * d.ny : d.nx;
  const int px = sx + 2 * R, py = three ? sy + 2 : 1, nthreads = sx * sy;
  std::vector<double> out(in.size(), std::nan(""));
  for (std::int64_t bz = 0; bz < chunks; ++bz)
    for (std::int64_t by = 0; by < byn; ++by)
      for (std::int64_t bx = 0; bx < bxn; ++bx) {
        const std::int64_t m0 = bz * chunk, m1 = std::min<std::int64_t>(m0 + chunk, nm);
        std::vector<double> acc(static_cast<size_t>(nthreads * steps * K), 0.0), own(static_cast<size_t>(nthreads * steps * (R + 1)), 0.0);
        // Level buffers (level 0 and 1..steps-1), zero outside the section.
        std::vector<std::vector<double>> buf(static_cast<size_t>(steps), std::vector<double>(static_cast<size_t>(px * py), 0.0));
        std::vector<double> cur(static_cast<size_t>(nthreads));
        const auto at = [&](int tx, int ty) { return three ? (ty + 1) * px + tx + 1 : tx + R; };
        for (std::int64_t p = m0 - steps * R; p < m1 + steps * R; ++p) {
          for (int t = 0; t < nthreads; ++t) {
            const std::int64_t x = bx * core - steps * R + t % sx, y = by * core - steps * R + t / sx;
            const bool xin = x >= 0 && x < d.nx && (!three || (y >= 0 && y < d.ny));
            cur[static_cast<size_t>(t)] = xin && p >= 0 && p < nm ? in[static_cast<size_t>(p * plane + (three ? y * d.nx : 0) + x)] : 0.0;
            buf[0][static_cast<size_t>(at(t % sx, t / sx))] = cur[static_cast<size_t>(t)];
          }
          for (int lv = 1; lv <= steps; ++lv) {
            const std::int64_t o = p - lv * R;
            std::vector<double> val(static_cast<size_t>(nthreads));
            for (int t = 0; t < nthreads; ++t) {
              const int tx = t % sx, ty = t / sx;
              const std::int64_t x = bx * core - steps * R + tx, y = by * core - steps * R + ty;
              double* a = &acc[static_cast<size_t>((t * steps + lv - 1) * K)];
              double* ow = &own[static_cast<size_t>((t * steps + lv - 1) * (R + 1))];
              const double c = cur[static_cast<size_t>(t)];
              const auto nb = [&](int dx, int dy) {
                return dx == 0 && dy == 0 ? c : buf[static_cast<size_t>(lv - 1)][static_cast<size_t>(at(tx, ty) + dy * px + dx)];
              };
              for (int k = R; k > 0; --k) ow[k] = ow[k - 1];
              ow[0] = c;
              for (int k = 0; k < K; ++k) {
                const int dm = R - k;  // the march-axis offset of this input for output k
                if (three) {
                  for (int dy = -1; dy <= 1; ++dy)
                    for (int dx = -1; dx <= 1; ++dx) {
                      const bool used = box || (dm == 0 ? (dx == 0 || dy == 0) : (dx == 0 && dy == 0));
                      if (used) a[k] = std::fma(w[static_cast<size_t>((dm + 1) * 9 + (dy + 1) * 3 + dx + 1)], nb(dx, dy), a[k]);
                    }
                } else {
                  for (int dd = -R; dd <= R; ++dd)
                    if (box || dm == 0 || dd == 0) a[k] = std::fma(w[static_cast<size_t>((dm + R) * K + dd + R)], nb(dd, 0), a[k]);
                }
              }
              const bool xint = x >= r.x && x < d.nx - r.x && (!three || (y >= r.y && y < d.ny - r.y));
              const int rm = three ? r.z : r.y;
              val[static_cast<size_t>(t)] = xint && o >= rm && o < nm - rm ? a[0] : ow[R];
              for (int k = 0; k + 1 < K; ++k) a[k] = a[k + 1];
              a[K - 1] = 0.0;
              const bool xcore = tx >= steps * R && tx < sx - steps * R && x < d.nx &&
                                 (!three || (ty >= steps * R && ty < sy - steps * R && y < d.ny));
              if (lv == steps && xcore && o >= m0 && o < m1)
                out[static_cast<size_t>(o * plane + (three ? y * d.nx : 0) + x)] = val[static_cast<size_t>(t)];
            }
            if (lv < steps)
              for (int t = 0; t < nthreads; ++t) {
                buf[static_cast<size_t>(lv)][static_cast<size_t>(at(t % sx, t / sx))] = val[static_cast<size_t>(t)];
                cur[static_cast<size_t>(t)] = val[static_cast<size_t>(t)];
              }
          }
        }
      }
  return out;
}

}  // namespace

TEST_CASE("rows and planes kernels: the algorithm, emulated, reproduces the reference (every built-in shape, odd domains, all steps)") {
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> u(-1, 1);
  StencilShape lopsided{"lopsided", 2, {{0, 0, 0, 0.5}, {2, 0, 0, 0.25}, {0, -1, 0, -0.75}, {-1, 1, 0, 0.125}}};
  std::vector<StencilShape> shapes = builtin_stencil_shapes();
  shapes.push_back(lopsided);
  for (const auto& s : shapes) {
    const StencilDomain d = parse_stencil_domain(s.dims == 2 ? "301x97" : "41x37x23");
    std::vector<double> in(static_cast<size_t>(d.points()));
    for (auto& x : in) x = u(rng);
    for (int t = 1; t <= (s.dims == 2 ? kRowsMaxSteps : kPlanesMaxSteps); ++t) {
      INFO(s.name << " t=" << t);
      const std::vector<double> got = emulate_register(s, d, t, in, 5);  // 5 resident blocks: several chunks meet
      const std::vector<double> ref = stencil_reference(s, d, in.data(), t);
      CHECK(normwise_error(got, ref) <= 1e-12);
    }
  }
}

// The plain-mma kernel (stencil_column_mma_kernel) emulated lane by lane: warps of 16 columns x
// kColumnMmaRowBlocks 8-row blocks at one z, per line the chunks of 4 rows from the line's row offset
// loaded as lane (g, t) loads them for its columns g and g + 8 (0 outside the grid), the mma as
// D[m][n] += sum_k A[m][k] B[k][n] with A[m][k] from lane 4 (m % 8) + k and B[k][n] from lane 4 n + k
// of the plan's fragments, the fixed boundary copied. One step; t steps apply it t times.
std::vector<double> emulate_column_mma(const StencilShape& s, const StencilDomain& d, const std::vector<double>& in) {
  const StencilColumnMmaPlan p = plan_stencil_column_mma(s);
  const long long nx = d.nx, ny = d.ny, nz = d.nz;
  std::vector<double> out(in.size(), std::nan(""));
  const auto at = [&](long long x, long long y, long long z) {
    return x >= 0 && x < nx && y >= 0 && y < ny && z >= 0 && z < nz ? in[static_cast<size_t>((z * ny + y) * nx + x)] : 0.0;
  };
  const int NB = kColumnMmaRowBlocks, KC = p.k_chunks;
  for (long long z = 0; z < nz; ++z)
    for (long long yb = 0; yb < ny; yb += kColumnMmaBlockY)
      for (long long x0 = 0; x0 < nx; x0 += 16) {  // one warp
        double D[kColumnMmaRowBlocks][16][8] = {};
        for (std::size_t l = 0; l < p.lines.size(); ++l) {
          const StencilColumnMmaLine& ln = p.lines[l];
          const int nj = 2 * NB + ln.chunks - 2;
          double A[16][4 * (2 * kColumnMmaRowBlocks + kColumnMmaMaxChunks)] = {};  // [m][4 j + t]
          for (int j = 0; j < nj; ++j)
            for (int lane = 0; lane < 32; ++lane) {
              const int g = lane / 4, t = lane % 4;
              const long long y = yb - p.ry + ln.row_offset + 4 * j + t;
              A[g][4 * j + t] = at(x0 + g + ln.dx, y, z + ln.dz);
              A[g + 8][4 * j + t] = at(x0 + 8 + g + ln.dx, y, z + ln.dz);
            }
          for (int b = 0; b < NB; ++b)
            for (int c = 0; c < ln.chunks; ++c)
              for (int m = 0; m < 16; ++m)
                for (int n = 0; n < 8; ++n)
                  for (int k = 0; k < 4; ++k)
                    D[b][m][n] += A[m][4 * (2 * b + c) + k] * p.b_fragments[(l * KC + c) * 32 + 4 * n + k];
        }
        for (int b = 0; b < NB; ++b)
          for (int m = 0; m < 16; ++m)
            for (int n = 0; n < 8; ++n) {
              const long long x = x0 + m, y = yb + 8 * b + n;
              if (x >= nx || y >= ny) continue;
              const bool interior = x >= p.rx && x < nx - p.rx && y >= p.ry && y < ny - p.ry && z >= p.rz && z < nz - p.rz;
              out[static_cast<size_t>((z * ny + y) * nx + x)] = interior ? D[b][m][n] : at(x, y, z);
            }
      }
  return out;
}

TEST_CASE("plain-mma plan: column lines (dx, dz), each line's chunks over its own dy range, the useful share") {
  // (lines, mma per 8x8 block): a line of one point takes 2 chunks, a line over dy in [-r, r] ceil((8 + 2r) / 4).
  const std::map<std::string, std::pair<int, int>> lines_mma{{"2d5pt", {3, 7}},  {"2d9pt", {3, 9}}, {"2d13pt", {7, 16}},
                                                             {"2d49pt", {7, 28}}, {"3d7pt", {5, 11}}, {"3d27pt", {9, 27}}};
  for (const auto& s : builtin_stencil_shapes()) {
    INFO(s.name);
    const StencilColumnMmaPlan p = plan_stencil_column_mma(s);
    CHECK(static_cast<int>(p.lines.size()) == lines_mma.at(s.name).first);
    CHECK(p.mma_per_block() == lines_mma.at(s.name).second);
    CHECK(p.k_chunks >= 2);
    CHECK(p.k_chunks <= kColumnMmaMaxChunks);
    CHECK(p.useful_fraction == ceiling_test::Rel(s.size() * 128.0 / (p.mma_per_block() * 512.0)).epsilon(1e-12));
    // Every weight of the shape sits in the fragments once per output row it reaches: 8 times.
    double sum = 0, want = 0;
    for (double w : p.b_fragments) sum += w;
    for (const auto& q : s.points) want += 8 * q.weight;
    CHECK(sum == ceiling_test::Rel(want).epsilon(1e-12));
    // A line's rows: from its lowest dy to 7 past its highest, in whole chunks.
    for (const auto& ln : p.lines) {
      int lo = 99, hi = -99;
      for (const auto& q : s.points)
        if (q.dx == ln.dx && q.dz == ln.dz) {
          lo = std::min(lo, q.dy);
          hi = std::max(hi, q.dy);
        }
      CHECK(ln.row_offset == lo + p.ry);
      CHECK(4 * ln.chunks >= 8 + hi - lo);
      CHECK(4 * ln.chunks < 8 + hi - lo + 4);
    }
  }
  CHECK(plan_stencil_column_mma(*find_builtin_stencil_shape("2d5pt")).useful_fraction ==
        ceiling_test::Rel(5.0 * 128 / (7 * 512)).epsilon(1e-12));
  CHECK(plan_stencil_column_mma(*find_builtin_stencil_shape("2d49pt")).text() ==
        "7 lines, 28 mma.m16n8k4 per 16x8 block (43.8% of the products useful)");
  // The largest radius a user's shape may have still fits the compiled chunks.
  StencilShape far{"far", 2, {{0, 0, 0, 0.5}, {0, kMaxStencilRadius, 0, 0.25}, {0, -kMaxStencilRadius, 0, 0.25}}};
  CHECK(plan_stencil_column_mma(far).k_chunks == kColumnMmaMaxChunks);
}

TEST_CASE("plain-mma kernel: the algorithm, emulated lane by lane, reproduces the reference (every built-in shape, odd domains, 1-3 steps)") {
  std::mt19937_64 rng(23);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<StencilShape> shapes = builtin_stencil_shapes();
  shapes.push_back(StencilShape{"lopsided", 2, {{0, 0, 0, 0.5}, {2, 0, 0, 0.25}, {0, -1, 0, -0.75}, {-1, 1, 0, 0.125}, {1, 3, 0, 0.0625}, {1, 2, 0, 0.5}}});
  shapes.push_back(StencilShape{"lopsided3", 3, {{0, 0, 0, 0.5}, {1, 0, -1, 0.25}, {0, 2, 0, -0.75}, {-1, -1, 1, 0.125}}});
  for (const auto& s : shapes) {
    const StencilDomain d = parse_stencil_domain(s.dims == 2 ? "141x75" : "71x37x9");
    std::vector<double> grid(static_cast<size_t>(d.points()));
    for (auto& x : grid) x = u(rng);
    const std::vector<double> u0 = grid;
    for (int t = 1; t <= 3; ++t) {
      INFO(s.name << " t=" << t);
      grid = emulate_column_mma(s, d, grid);
      const std::vector<double> ref = stencil_reference(s, d, u0.data(), t);
      CHECK(normwise_error(grid, ref) <= 1e-12);
    }
  }
}

TEST_CASE("SmallDiv: the tile kernels' division by a multiply is exact over their range") {
  // Every divisor a region width can take (<= 2^11) and every cell index of a tile (< 2^15): the
  // kernels' cell walk (kernels/stencil_common.cuh) depends on it.
  long long wrong = 0;
  for (unsigned d = 1; d <= 2048; ++d) {
    const SmallDiv q(d);
    for (unsigned c = 0; c < (1u << 15); ++c) wrong += q.div(c) != c / d;
  }
  CHECK(wrong == 0);
  // The stated condition (c d < 2^32) is what keeps it exact: past it, a divisor that is not a
  // power of two goes wrong (3 at c = 2^32 - 2, 7 at 2^32 - 5), a power of two never does.
  CHECK(SmallDiv(3).div(0xFFFFFFFEu) != 0xFFFFFFFEu / 3);
  CHECK(SmallDiv(7).div(0xFFFFFFFBu) != 0xFFFFFFFBu / 7);
  CHECK(SmallDiv(1024).div(0xFFFFFFFFu) == 0xFFFFFFFFu / 1024);
  CHECK(SmallDiv(1).div(0xFFFFFFFFu) == 0xFFFFFFFFu);
  // The largest tile any plan makes stays inside that range.
  for (const char* name : {"2d5pt", "2d9pt", "2d13pt", "2d49pt", "3d7pt", "3d27pt"})
    for (int steps = 1; steps <= 4; ++steps)
      for (bool tc : {false, true}) {
        const StencilTile t = plan_stencil_tile(*find_builtin_stencil_shape(name), steps, tc, 227 * 1024);
        CAPTURE(name);
        CAPTURE(steps);
        CHECK(static_cast<long long>(t.bx) * t.by * t.bz < (1 << 15));
        CHECK(t.bx <= 2048);
        CHECK(t.by <= 2048);
      }
}

TEST_CASE("plain window kernel: 4 points per thread, 2 where 4 leaves less than one wave of 8 blocks per SM") {
  const auto dom2 = [](std::int64_t nx, std::int64_t ny) {
    StencilDomain d;
    d.dims = 2;
    d.nx = nx;
    d.ny = ny;
    return d;
  };
  // 2-D at K = 4: ceil(nx / 128) x ceil(ny / 8) blocks. 960^2: 8 x 120 = 960 < 8 x 132 -> 2; 10240^2: 80 x 1280 -> 4.
  CHECK(plain_window_rows(dom2(960, 960), false, 132) == 2);
  CHECK(plain_window_rows(dom2(10240, 10240), false, 132) == 4);
  CHECK(plain_window_rows(dom2(9000, 9000), false, 132) == 4);
  // The wave edge: 1056 blocks (= 8 x 132) take 4, one block row fewer takes 2.
  CHECK(plain_window_rows(dom2(128 * 8, 8 * 132), false, 132) == 4);
  CHECK(plain_window_rows(dom2(128 * 8, 8 * 131), false, 132) == 2);
  CHECK(plain_window_rows(dom2(128 * 8 - 127, 8 * 132 - 7), false, 132) == 4);  // partial blocks count
  // More SMs need more blocks for the same domain.
  CHECK(plain_window_rows(dom2(1024, 1024), false, 16) == 4);  // 8 x 128 = 1024 blocks
  CHECK(plain_window_rows(dom2(1024, 1024), false, 132) == 2);
  // 3-D at K = 4: ceil(nx / 32) x ceil(ny / 8) x ceil(nz / 4).
  StencilDomain d3;
  d3.dims = 3;
  d3.nx = 97;
  d3.ny = 97;
  d3.nz = 97;
  CHECK(plain_window_rows(d3, true, 132) == 4);  // 4 x 13 x 25 = 1300 blocks >= 8 x 132
  d3.nx = d3.ny = d3.nz = 64;
  CHECK(plain_window_rows(d3, true, 132) == 2);  // 2 x 8 x 16 = 256
  CHECK(plain_window_rows(d3, true, 32) == 4);   // >= 8 x 32
}
