// The stencil variants' plans (kernels/stencil_plan.hpp): the tensor-core formulation reproduces
// the stencil on the CPU (fragments emulated lane by lane as mma.m8n8k4 reads them), its useful
// share per shape, and the shared-memory tiles.
#include <doctest/doctest.h>

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
    CHECK(plan_stencil_tensor_core(s).useful_fraction == doctest::Approx(expect.at(s.name)).epsilon(1e-12));
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
  CHECK(t.load_ratio == doctest::Approx(70.0 * 38 / (64 * 32)));
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
