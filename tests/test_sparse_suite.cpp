// The Table 2 matrices (GPGPU'25, from DASP) and their generators (model/sparse_matrix.hpp): the
// table as printed, exact rows and nnz, valid CSR, deterministic arrays, and row-length shapes
// that differ between families as the originals' do.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "scratch.hpp"
#include "model/sparse_matrix.hpp"

using namespace ceiling;
using test::message_of;

namespace {

constexpr std::uint64_t kQcdHash = 6844726515068063837ull;  // FNV-1a of conf5_4x8x-10 at scale 0.01, seed 1 (columns, then values x 1e15)

std::int64_t scaled(std::int64_t n, double scale) { return std::llround(static_cast<double>(n) * scale); }

// Every generated matrix of the small scale, made once.
const std::map<std::string, CsrMatrix>& at_one_percent() {
  static const std::map<std::string, CsrMatrix> all = [] {
    std::map<std::string, CsrMatrix> m;
    for (const auto& s : table2_suite()) m.emplace(s.name, generate_table2(s.name, 0.01));
    return m;
  }();
  return all;
}

}  // namespace

TEST_CASE("sparse suite: Table 2 as printed, ranked by nnz") {
  const auto& t = table2_suite();
  REQUIRE(t.size() == 21);
  for (size_t i = 0; i < t.size(); ++i) {
    CHECK(t[i].code == std::string(1, 'D').append(std::to_string(i + 1)));
    CHECK(!t[i].family.empty());
    if (i > 0) CHECK(t[i].nnz > t[i - 1].nnz);
  }
  CHECK(t[0].name == "dc2");
  CHECK(t[0].rows == 116835);
  CHECK(t[0].nnz == 766396);
  CHECK(t[3].name == "conf5_4x8x-10");
  CHECK(t[3].nnz == 39 * t[3].rows);
  CHECK(t[9].name == "cant");
  CHECK(t[9].rows == 62451);
  CHECK(t[9].nnz == 4007383);
  CHECK(t[20].name == "circuit5M");
  CHECK(t[20].rows == 5558326);
  CHECK(t[20].nnz == 59524291);
  CHECK(table2_matrix("D10").name == "cant");
  CHECK(table2_matrix("cant").code == "D10");
  CHECK(table2_matrix("d21").name == "circuit5M");
  CHECK(table2_matrix("CIRCUIT5M").code == "D21");
  const std::string m = message_of([] { table2_matrix("nope"); });
  CHECK(m.find("unknown matrix 'nope' in table2 (one of dc2, scircuit, ") != std::string::npos);
  CHECK_THROWS_AS(table2_matrix("D22"), std::invalid_argument);
}

TEST_CASE("sparse suite: at scale 1 the rows and nnz are exactly Table 2's") {
  for (const char* name : {"dc2", "scircuit", "mac_econ_fwd500", "conf5_4x8x-10", "mc2depi", "rma10", "cant"}) {
    CAPTURE(name);
    const SuiteMatrix& s = table2_matrix(name);
    const CsrMatrix a = generate_table2(name);
    CHECK(a.rows == s.rows);
    CHECK(a.cols == s.rows);
    CHECK(a.nnz() == s.nnz);
    CHECK(a.name == s.name);
    CHECK(a.source == "generated: table2 " + s.name + ", scale 1, seed 1");
    CHECK_NOTHROW(check_csr(a));
  }
}

TEST_CASE("sparse suite: all 21 at scale 0.01 are valid CSR with the scaled rows and nnz") {
  for (const auto& s : table2_suite()) {
    CAPTURE(s.name);
    const CsrMatrix& a = at_one_percent().at(s.name);
    CHECK(a.rows == scaled(s.rows, 0.01));
    CHECK(a.cols == a.rows);
    CHECK(a.nnz() == scaled(s.nnz, 0.01));
    CHECK(a.source == "generated: table2 " + s.name + ", scale 0.01, seed 1");
    CHECK_NOTHROW(check_csr(a));
    bool in_range = true;
    for (const double v : a.val) in_range = in_range && v >= 0.5 && v < 1.5;
    CHECK(in_range);
  }
}

TEST_CASE("sparse suite: the families' row lengths differ as the originals' do") {
  const auto stats = [](const std::string& name) { return row_stats(at_one_percent().at(name)); };
  SUBCASE("QCD: exactly 39 in every row") {
    const RowStats s = row_stats(generate_table2("conf5_4x8x-10"));
    CHECK(s.mean == 39);
    CHECK(s.cv == 0);
    CHECK(s.min == 39);
    CHECK(s.max == 39);
  }
  SUBCASE("web graphs: power-law rows, a few very long, some empty") {
    for (const char* name : {"webbase-1M", "in-2004", "eu-2005"}) {
      CAPTURE(name);
      const RowStats s = stats(name);
      CHECK(s.cv > 1);
      CHECK(static_cast<double>(s.max) > 20 * s.mean);
      CHECK(s.empty_rows > 0);
    }
  }
  SUBCASE("circuits: short rows and very dense ones") {
    for (const char* name : {"dc2", "scircuit", "ASIC_680k", "FullChip", "circuit5M"}) {
      CAPTURE(name);
      const RowStats s = stats(name);
      CHECK(static_cast<double>(s.max) >= 100 * s.mean);
      CHECK(s.cv > 1);
    }
  }
  SUBCASE("FEM: rows of dense blocks, little spread") {
    for (const auto& s : table2_suite()) {
      if (s.family.rfind("fem", 0) != 0) continue;
      CAPTURE(s.name);
      CHECK(stats(s.name).cv < 0.5);
      CHECK(stats(s.name).min > 0);
    }
    // 3x3 blocks: cant's rows come in multiples of 3 nearly everywhere
    const CsrMatrix a = generate_table2("cant");
    std::int64_t multiples = 0;
    for (std::int32_t r = 0; r < a.rows; ++r) multiples += (a.row_ptr[static_cast<size_t>(r) + 1] - a.row_ptr[static_cast<size_t>(r)]) % 3 == 0;
    CHECK(static_cast<double>(multiples) > 0.99 * a.rows);
    CHECK(row_stats(a).max <= 78);
  }
  SUBCASE("mc2depi: a stencil, at most 4 per row, narrow band") {
    const RowStats s = stats("mc2depi");
    CHECK(s.max == 4);
    CHECK(s.cv < 0.1);
  }
  SUBCASE("the others: wide spread but no dense rows (quantum chemistry, economics); mip1 has both") {
    CHECK(stats("Si41Ge41H72").cv > 0.4);
    CHECK(stats("Ga41As41H72").cv > 0.4);
    CHECK(stats("mac_econ_fwd500").max <= 44);
    CHECK(stats("mip1").mean > 100);
    CHECK(static_cast<double>(stats("mip1").max) > 0.9 * at_one_percent().at("mip1").cols);
  }
}

TEST_CASE("sparse suite: the arrays depend only on the seed") {
  for (const char* name : {"eu-2005", "cant", "dc2"}) {
    CAPTURE(name);
    const CsrMatrix a = generate_table2(name, 0.02, 5);
    const CsrMatrix b = generate_table2(name, 0.02, 5);
    const CsrMatrix c = generate_table2(name, 0.02, 6);
    CHECK(a.row_ptr == b.row_ptr);
    CHECK(a.col == b.col);
    CHECK(a.val == b.val);
    CHECK(c.nnz() == a.nnz());
    CHECK(c.val != a.val);
    CHECK((c.col != a.col || c.row_ptr != a.row_ptr));
  }
  // A fixed stream on every platform (splitmix64, no std:: distribution): the QCD lattice's arrays
  // use no floating-point library call, so their hash is the same everywhere.
  const CsrMatrix q = generate_table2("conf5_4x8x-10", 0.01);
  std::uint64_t h = 1469598103934665603ull;
  const auto add = [&](std::uint64_t x) { h = (h ^ x) * 1099511628211ull; };
  for (const auto c : q.col) add(static_cast<std::uint64_t>(c));
  for (const auto v : q.val) add(static_cast<std::uint64_t>(std::llround(v * 1e15)));
  CHECK(h == kQcdHash);
}

TEST_CASE("sparse suite: tiny and odd scales stay valid, bad scales are refused") {
  for (const double scale : {1e-7, 2e-5, 1e-4, 0.003}) {
    for (const auto& s : table2_suite()) {
      CAPTURE(s.name);
      CAPTURE(scale);
      const CsrMatrix a = generate_table2(s.name, scale, 3);
      CHECK(a.rows >= 1);
      CHECK(a.nnz() >= 1);
      CHECK(a.nnz() <= static_cast<std::int64_t>(a.rows) * a.cols);
      CHECK_NOTHROW(check_csr(a));
    }
  }
  CHECK(message_of([] { generate_table2("cant", 0); }).find("scale must be in (0, 1]") != std::string::npos);
  CHECK_THROWS_AS(generate_table2("cant", -1), std::invalid_argument);
  CHECK_THROWS_AS(generate_table2("cant", std::nan("")), std::invalid_argument);
  CHECK_THROWS_AS(generate_table2("cant", 1.5), std::invalid_argument);
  CHECK(message_of([] { generate_table2("D99"); }).find("unknown matrix 'D99'") != std::string::npos);
}

// Run explicitly: ceiling_tests -tc='*RowStats table*' --no-skip (all 21 at full size, ~10 s).
TEST_CASE("sparse suite: RowStats table of all 21 at scale 1" * doctest::skip()) {
  std::printf("| code | name | family | rows | nnz | mean | min | max | cv | empty | band | generate s |\n");
  std::printf("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& s : table2_suite()) {
    const auto start = std::chrono::steady_clock::now();
    const CsrMatrix a = generate_table2(s.name);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(a.nnz() == s.nnz);
    CHECK_NOTHROW(check_csr(a));
    const RowStats r = row_stats(a);
    std::printf("| %s | %s | %s | %lld | %lld | %.2f | %lld | %lld | %.3f | %lld | %.4f | %.2f |\n", s.code.c_str(),
                s.name.c_str(), s.family.c_str(), static_cast<long long>(r.rows), static_cast<long long>(r.nnz), r.mean,
                static_cast<long long>(r.min), static_cast<long long>(r.max), r.cv, static_cast<long long>(r.empty_rows),
                r.bandwidth_mean, seconds);
    std::fflush(stdout);
  }
}
