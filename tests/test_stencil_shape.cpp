// Stencil shapes as data (model/stencil_shape.hpp): the six built-ins of GPGPU'25 Table 3, a user's
// shape from YAML (every refusal with file:line:col), domains, the CPU reference and its light-cone
// samples, Eq. 14 per shape, the validate sweep's selection, and `ceiling validate`'s stencil options
// refusing bad input before any GPU work.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <cmath>
#include <filesystem>
#include <map>
#include <random>
#include <set>

#include "cli_run.hpp"
#include "model/kernel_kind.hpp"
#include "model/stencil_shape.hpp"
#include "scratch.hpp"

using namespace ceiling;
using ceiling::test::message_of;
using ceiling::test::run_ceiling;
namespace fs = std::filesystem;

namespace {

fs::path shape_file(const std::string& name) { return fs::path(CEILING_TEST_DATA_DIR) / "stencils" / name; }

StencilShape builtin(const std::string& name) {
  const StencilShape* s = find_builtin_stencil_shape(name);
  REQUIRE(s != nullptr);
  return *s;
}

std::vector<double> random_grid(const StencilDomain& d, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> g(static_cast<size_t>(d.points()));
  for (auto& x : g) x = u(rng);
  return g;
}

}  // namespace

TEST_SUITE_BEGIN("stencil-shape");

TEST_CASE("the six built-in shapes of Table 3: |S|, dims, radius, weights summing to 1") {
  const std::map<std::string, std::tuple<int, int, int>> expect{// |S|, dims, radius
                                                                {"2d5pt", {5, 2, 1}},  {"2d9pt", {9, 2, 1}},
                                                                {"2d13pt", {13, 2, 3}}, {"2d49pt", {49, 2, 3}},
                                                                {"3d7pt", {7, 3, 1}},  {"3d27pt", {27, 3, 1}}};
  const auto& all = builtin_stencil_shapes();
  REQUIRE(all.size() == 6);
  std::vector<std::string> order;
  for (const auto& s : all) {
    INFO(s.name);
    order.push_back(s.name);
    REQUIRE(expect.count(s.name));
    const auto [n, dims, r] = expect.at(s.name);
    CHECK(s.size() == n);
    CHECK(s.dims == dims);
    CHECK(s.radius() == r);
    CHECK(s.source == "built-in");
    double sum = 0;
    for (const auto& p : s.points) {
      CHECK(p.weight > 0);
      sum += p.weight;
      if (dims == 2) CHECK(p.dz == 0);
    }
    CHECK(sum == ceiling_test::Rel(1.0).epsilon(1e-14));
    CHECK_NOTHROW(check_stencil_shape(s));
  }
  CHECK(order == std::vector<std::string>{"2d5pt", "2d9pt", "2d13pt", "2d49pt", "3d7pt", "3d27pt"});
  // Star shapes have no diagonal points; boxes have every point of their cube.
  for (const auto& p : builtin("2d13pt").points) CHECK((p.dx == 0 || p.dy == 0));
  std::set<std::tuple<int, int, int>> box;
  for (const auto& p : builtin("3d27pt").points) box.insert({p.dx, p.dy, p.dz});
  CHECK(box.size() == 27);
  CHECK(find_builtin_stencil_shape("2d7pt") == nullptr);
  CHECK(builtin_stencil_shape_names() == "2d5pt, 2d9pt, 2d13pt, 2d49pt, 3d7pt, 3d27pt");
}

TEST_CASE("a user's shape from YAML: name, dims, offsets and weights as written, the stem names an unnamed shape") {
  const StencilShape s = read_stencil_shape_yaml(shape_file("good.yaml"));
  CHECK(s.name == "my5pt");
  CHECK(s.dims == 2);
  REQUIRE(s.size() == 5);
  CHECK(s.points[0].weight == 0.6);
  CHECK(s.points[1].dx == 1);
  CHECK(s.points[4].dy == -1);
  CHECK(s.radius() == 1);
  CHECK(s.source == shape_file("good.yaml").string());
  const StencilShape t = load_stencil_shape(shape_file("good3d.yaml").string());
  CHECK(t.name == "good3d");
  CHECK(t.dims == 3);
  CHECK(t.radius(0) == 2);
  CHECK(t.radius(1) == 0);
  CHECK(t.radius(2) == 1);
  // A built-in name loads the built-in; an unknown name lists them.
  CHECK(load_stencil_shape("3d7pt").size() == 7);
  const std::string unknown = message_of([] { load_stencil_shape("2d7pt"); });
  CHECK(unknown.find("unknown stencil shape '2d7pt'") != std::string::npos);
  CHECK(unknown.find("2d5pt, 2d9pt") != std::string::npos);
}

TEST_CASE("a bad shape file is refused with file:line:col and the cause") {
  struct Case {
    const char* file;
    const char* where;  // ":line:col: key"
    const char* cause;
  };
  const Case cases[] = {
      {"typo-key.yaml", ":3:1: pionts", "unknown key"},
      {"beyond-radius.yaml", ":5:", "radius"},
      {"duplicate-offset.yaml", ":6:", "duplicate offset [1, 0] (first on line 5)"},
      {"nan-weight.yaml", ":4:", "finite"},
      {"wrong-length.yaml", ":4:", "points[0].offset"},
      {"fractional-offset.yaml", ":4:", "whole number"},
      {"no-points.yaml", ":3:", "at least one point"},
      {"bad-dims.yaml", ":2:", "must be 2 or 3, got 4"},
  };
  for (const auto& c : cases) {
    INFO(c.file);
    const std::string msg = message_of([&] { read_stencil_shape_yaml(shape_file(c.file)); });
    INFO(msg);
    CHECK(msg.find(shape_file(c.file).string() + c.where) == 0);
    CHECK(msg.find(c.cause) != std::string::npos);
    CHECK(msg.find('\n') == std::string::npos);
    CHECK_THROWS_AS(load_stencil_shape(shape_file(c.file).string()), StencilShapeError);
  }
  const fs::path missing = shape_file("no-such-shape.yaml");
  CHECK(message_of([&] { load_stencil_shape(missing.string()); }).find("no-such-shape.yaml") != std::string::npos);
}

TEST_CASE("shapes built in code follow the same rules") {
  StencilShape s{"mine", 2, {{0, 0, 0, 1.0}}, "code"};
  CHECK_NOTHROW(check_stencil_shape(s));
  s.points.push_back({kMaxStencilRadius + 1, 0, 0, 0.5});
  CHECK(message_of([&] { check_stencil_shape(s); }).find("radius limit") != std::string::npos);
  s.points.back() = {0, 0, 0, 0.5};
  CHECK(message_of([&] { check_stencil_shape(s); }).find("same offset") != std::string::npos);
  s.points.back() = {1, 0, 0, std::nan("")};
  CHECK(message_of([&] { check_stencil_shape(s); }).find("not finite") != std::string::npos);
  s.points.back() = {1, 0, 1, 0.5};
  CHECK(message_of([&] { check_stencil_shape(s); }).find("dz = 0") != std::string::npos);
  s.points.clear();
  CHECK(message_of([&] { check_stencil_shape(s); }).find("no points") != std::string::npos);
}

TEST_CASE("domains: NXxNY and NXxNYxNZ, zero, malformed and overflowing ones are refused") {
  CHECK(parse_stencil_domain("10240x10240") == StencilDomain{2, 10240, 10240, 1});
  CHECK(parse_stencil_domain("234x312x2560") == StencilDomain{3, 234, 312, 2560});
  CHECK(parse_stencil_domain("234x312x2560").text() == "234x312x2560");
  CHECK(parse_stencil_domain("9000x9000").points() == 81e6);
  const std::map<std::string, std::string> bad{{"0x100", "at least 1"},
                                               {"100", "NXxNY"},
                                               {"100x", "whole numbers"},
                                               {"x100", "whole numbers"},
                                               {"10x10x10x10", "at most 3"},
                                               {"-5x10", "whole numbers"},
                                               {"1e4x10", "whole numbers"},
                                               {"99999999999999999999999x2", "2^34"},
                                               {"131072x131072x2", "2^34 points"},
                                               {"", "NXxNY"}};
  for (const auto& [text, cause] : bad) {
    INFO(text);
    const std::string msg = message_of([&] { parse_stencil_domain(text); });
    INFO(msg);
    CHECK(msg.find("stencil domain '" + text + "'") == 0);
    CHECK(msg.find(cause) != std::string::npos);
  }
  // A domain needs an interior point for the shape's radius on each axis, and the shape's dims.
  CHECK_NOTHROW(check_stencil_domain(builtin("2d13pt"), {2, 7, 7, 1}));
  CHECK(message_of([&] { check_stencil_domain(builtin("2d13pt"), {2, 6, 100, 1}); }).find("nx") != std::string::npos);
  CHECK(message_of([&] { check_stencil_domain(builtin("3d7pt"), {2, 100, 100, 1}); }).find("2-D") != std::string::npos);
  // Table 3's domains, and the in-L2 one.
  CHECK(table3_domains(2) == std::vector<StencilDomain>{{2, 10240, 10240, 1}, {2, 9000, 9000, 1}});
  CHECK(table3_domains(3) ==
        std::vector<StencilDomain>{{3, 1024, 1024, 1024}, {3, 512, 512, 512}, {3, 234, 312, 2560}});
  const StencilDomain l2 = stencil_domain_for_bytes(2, 15e6);  // two FP64 grids in 15 MB: 968^2
  CHECK(l2 == StencilDomain{2, 968, 968, 1});
  CHECK(2 * 8 * l2.points() <= 15e6);
  CHECK(stencil_domain_for_bytes(3, 100).nx == 8);  // at least 8 per axis
  CHECK(table3_steps("2d5pt") == 3);
  CHECK(table3_steps("2d49pt") == 1);
  CHECK(table3_steps("my5pt") == 1);
}

TEST_CASE("the CPU reference: one step by hand, the fixed boundary, and light-cone samples equal the whole grid") {
  const StencilShape s = builtin("2d5pt");
  const StencilDomain d{2, 5, 4, 1};
  std::vector<double> u(20);
  for (int i = 0; i < 20; ++i) u[static_cast<size_t>(i)] = i * i;
  std::vector<double> v(20, -1);
  stencil_step_reference(s, d, u.data(), v.data());
  double expect = 0;  // point (2, 1): index 7
  for (const auto& p : s.points) expect += p.weight * u[static_cast<size_t>((1 + p.dy) * 5 + 2 + p.dx)];
  CHECK(v[7] == ceiling_test::Rel(expect).epsilon(1e-15));
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 5; ++x)
      if (x == 0 || x == 4 || y == 0 || y == 3) CHECK(v[static_cast<size_t>(y * 5 + x)] == u[static_cast<size_t>(y * 5 + x)]);
  // Several steps: the light-cone samples equal the whole-grid reference bit for bit, for every shape.
  for (const auto& shape : builtin_stencil_shapes()) {
    INFO(shape.name);
    const StencilDomain dom = shape.dims == 2 ? StencilDomain{2, 41, 29, 1} : StencilDomain{3, 17, 13, 11};
    const auto u0 = random_grid(dom, 7);
    const int steps = 3;
    const auto whole = stencil_reference(shape, dom, u0.data(), steps);
    std::vector<std::int64_t> idx{0, static_cast<std::int64_t>(dom.points()) - 1};
    std::mt19937_64 rng(5);
    std::uniform_int_distribution<std::int64_t> pick(0, static_cast<std::int64_t>(dom.points()) - 1);
    for (int i = 0; i < 200; ++i) idx.push_back(pick(rng));
    const auto part = stencil_reference_points(shape, dom, u0.data(), steps, idx);
    REQUIRE(part.size() == idx.size());
    int same = 0;
    for (size_t i = 0; i < idx.size(); ++i) same += part[i] == whole[static_cast<size_t>(idx[i])];
    CHECK(same == static_cast<int>(idx.size()));
    // And the steps matter: three steps differ from one inside the domain.
    const auto one = stencil_reference(shape, dom, u0.data(), 1);
    CHECK(one != whole);
  }
}

TEST_CASE("Eq. 14 per shape: the smallest t with t |S| / D > B") {
  // FP64, D = 8: I(1) = |S| / 8. H200-like balance B = 67 TFLOP/s / 4.8 TB/s ~ 13.96 FLOP/B.
  const double b = 67e12 / 4.8e12;
  const std::map<std::string, int> expect{{"2d5pt", 23}, {"2d9pt", 13}, {"2d13pt", 9},
                                          {"2d49pt", 3}, {"3d7pt", 16}, {"3d27pt", 5}};
  for (const auto& s : builtin_stencil_shapes()) {
    INFO(s.name);
    const int t = temporal_blocking_min_steps_for_shape(s, b);
    CHECK(t == expect.at(s.name));
    CHECK(t * s.size() / 8.0 > b);
    CHECK((t - 1) * s.size() / 8.0 <= b);
  }
  // Exactly at the balance: strictly greater is needed (t |S| / D = B is not past it).
  CHECK(temporal_blocking_min_steps_for_shape(builtin("2d5pt"), 5.0 / 8 * 4) == 5);
  CHECK(temporal_blocking_min_steps_for_shape(builtin("2d5pt"), 0) == 1);
  CHECK_THROWS_AS(temporal_blocking_min_steps_for_shape(builtin("2d5pt"), -1), std::invalid_argument);
  CHECK_THROWS_AS(temporal_blocking_min_steps_for_shape(builtin("2d5pt"), std::nan("")), std::invalid_argument);
}

TEST_CASE("the validate sweep: every registered shape on Table 3's domains plus one in L2, or the selection") {
  clear_registered_stencil_shapes();
  set_stencil_sweep_selection({});
  const KernelKind& k = kernel_kind("stencil");
  REQUIRE(k.sweep_points);
  const auto all = k.sweep_points(50e6, Precision::fp64, false);
  // 4 2-D shapes x (2 + 1) domains + 2 3-D shapes x (3 + 1).
  CHECK(all.size() == 4 * 3 + 2 * 4);
  CHECK(registered_stencil_shape_count() == 6);
  for (const auto& p : all) {
    const StencilShape& s = registered_stencil_shape(static_cast<int>(p.at("shape_id")));
    CHECK(p.at("points") == s.size());
    CHECK(p.at("steps") == table3_steps(s.name));
    CHECK_NOTHROW(k.model(p, Precision::fp64));
  }
  // A selection: one user shape, one domain, t = 2.
  clear_registered_stencil_shapes();
  register_stencil_shape(read_stencil_shape_yaml(shape_file("good.yaml")));
  StencilSweepSelection sel;
  sel.domains = {{2, 300, 200, 1}, {3, 20, 20, 20}};
  sel.steps = 2;
  set_stencil_sweep_selection(sel);
  const auto some = k.sweep_points(50e6, Precision::fp64, false);
  REQUIRE(some.size() == 1);  // the 3-D domain matches no 2-D shape
  CHECK(some[0].at("nx") == 300);
  CHECK(some[0].at("ny") == 200);
  CHECK(some[0].at("steps") == 2);
  CHECK(k.input_label(some[0]) == "my5pt");
  CHECK(kernel_size_text("stencil", some[0]) == "300x200 t=2");
  CHECK_THROWS_AS(set_stencil_sweep_selection({{{2, 0, 5, 1}}, 0, true}), std::invalid_argument);
  CHECK_THROWS_AS(set_stencil_sweep_selection({{}, -1, true}), std::invalid_argument);
  // Registering the same shape again gives its first id.
  CHECK(register_stencil_shape(read_stencil_shape_yaml(shape_file("good.yaml"))) == 0);
  clear_registered_stencil_shapes();
  set_stencil_sweep_selection({});
}

TEST_CASE("validate's stencil options refuse bad input with one line and a non-zero exit, before any GPU work") {
  const std::string bad_file = shape_file("typo-key.yaml").string();
  struct Case {
    std::string args;
    std::string expect;
  };
  const std::vector<Case> cases{
      {"--kernels stencil --shapes " + bad_file, bad_file + ":3:1: pionts: unknown key"},
      {"--kernels stencil --shapes " + shape_file("beyond-radius.yaml").string(), "radius"},
      {"--kernels stencil --shapes 2d7pt", "unknown stencil shape '2d7pt'"},
      {"--kernels stencil --steps 0", "--steps 0: the fused time steps t must be 1..16"},
      {"--kernels stencil --steps 17", "--steps 17"},
      {"--kernels stencil --domain 0x100", "--domain: stencil domain '0x100': every extent must be at least 1"},
      {"--kernels stencil --domain 99999999999999x99999999999", "2^34"},
      {"--kernels stencil --domain 10x10xz", "whole numbers"},
      {"--kernels stencil --shapes 2d13pt --domain 6x100", "--domain 6x100: "},
      {"--kernels stencil --shapes 2d5pt --domain 64x64x64", "no selected shape is 3-D"},
      {"--kernels scale --shapes 2d5pt", "add stencil to --kernels"},
      {"--kernels scale --steps 2", "add stencil to --kernels"},
  };
  for (const auto& c : cases) {
    INFO(c.args);
    const auto r = run_ceiling("validate --hw h200 " + c.args, true);
    INFO(r.out);
    CHECK(r.rc != 0);
    CHECK(r.out.find(c.expect) != std::string::npos);
    CHECK(r.out.find("CUDA") == std::string::npos);  // refused before the GPU (or no-CUDA) step
  }
  // Good options pass the checks and reach the GPU step (no GPU here: a different error).
  const auto ok = run_ceiling("validate --hw h200 --kernels stencil --shapes 2d5pt," + shape_file("good.yaml").string() +
                                  " --domain 4096x4096 --steps 3 --device 99 --out /dev/null/x.json",
                              true);
  CHECK(ok.rc != 0);
  CHECK(ok.out.find("--shapes") == std::string::npos);
  CHECK(ok.out.find("--domain") == std::string::npos);
  CHECK(ok.out.find("--steps") == std::string::npos);
  // Stencils are sized by shapes, not matrices: no SpMV suite is generated for them (it was, ~10 s and
  // ~2 GB of host memory per stencil run, because both kinds label their inputs).
  CHECK(ok.out.find("matrices of table2") == std::string::npos);
  // --help teaches the options.
  const auto help = run_ceiling("validate --help");
  CHECK(help.out.find("--shapes") != std::string::npos);
  CHECK(help.out.find("234x312x2560") != std::string::npos);
  CHECK(help.out.find("--kernels stencil --shapes 2d5pt,my.yaml --domain 4096x4096 --steps 3") != std::string::npos);
}
