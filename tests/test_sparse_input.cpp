// SpMV inputs on the CPU (issue 10): the Matrix Market reader (round trip, symmetric mirroring,
// pattern values, duplicates summed, and every bad input of the issue as a one-line error naming
// file:line and the cause), the Table 2 generators (exact rows and nnz, the families' shapes,
// determinism), the CPU reference, and predict/validate reading m, n, nnz from a matrix.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include <memory>
#include "model/input_error.hpp"
#include "model/sparse_matrix.hpp"
#include "scratch.hpp"

using namespace ceiling;
namespace fs = std::filesystem;

namespace {

fs::path write_mtx(const fs::path& dir, const std::string& name, const std::string& text) {
  fs::create_directories(dir);
  const fs::path p = dir / name;
  std::ofstream(p) << text;
  return p;
}

// The reader's error for a file, "" when it reads.
std::string read_error(const fs::path& p) {
  try {
    read_matrix_market(p.string());
  } catch (const InputFileError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("(not an InputFileError) ") + e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("Matrix Market: general, symmetric, skew-symmetric, pattern and integer files read as CSR") {
  const fs::path dir = test::scratch_dir("sparse", "read");
  const auto a = read_matrix_market(
      write_mtx(dir, "g.mtx",
                "%%MatrixMarket matrix coordinate real general\n% a comment\n\n3 4 5\n1 1 1.5\n3 4 -2e-3\n"
                "2 2 7\n1 3 +4\n1 1 0.5\n")
          .string());
  CHECK(a.name == "g");
  CHECK(a.rows == 3);
  CHECK(a.cols == 4);
  CHECK(a.nnz() == 4);  // (1,1) twice: summed
  check_csr(a);
  CHECK(a.row_ptr == std::vector<std::int32_t>{0, 2, 3, 4});
  CHECK(a.col == std::vector<std::int32_t>{0, 2, 1, 3});
  CHECK(a.val == std::vector<double>{2.0, 4.0, 7.0, -2e-3});

  const auto s = read_matrix_market(
      write_mtx(dir, "s.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 2\n3 1 5\n2 2 1\n").string());
  CHECK(s.nnz() == 4);  // the off-diagonal entry mirrored, the diagonal once
  CHECK(s.col == std::vector<std::int32_t>{0, 2, 1, 0});
  const auto k = read_matrix_market(
      write_mtx(dir, "k.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 3\n").string());
  CHECK(k.val == std::vector<double>{-3.0, 3.0});
  const auto p = read_matrix_market(
      write_mtx(dir, "p.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 2\n2 1\n").string());
  CHECK(p.val == std::vector<double>{1.0, 1.0});
  const auto i = read_matrix_market(
      write_mtx(dir, "i.mtx", "%%MatrixMarket matrix coordinate integer general\r\n2 2 1\r\n2 1 -4\r\n").string());
  CHECK(i.val == std::vector<double>{-4.0});
  const auto h = read_matrix_market_header(write_mtx(dir, "h.mtx", "%%MatrixMarket matrix coordinate real symmetric\n%c\n5 5 9\n").string());
  CHECK(h.rows == 5);
  CHECK(h.entries == 9);
  CHECK(h.symmetry == "symmetric");

  // Round trip through the writer (17 significant digits).
  const CsrMatrix g = generate_table2("mc2depi", 0.001, 3);
  write_matrix_market(g, (dir / "rt.mtx").string());
  const CsrMatrix back = read_matrix_market((dir / "rt.mtx").string());
  CHECK(back.row_ptr == g.row_ptr);
  CHECK(back.col == g.col);
  CHECK(back.val == g.val);
  fs::remove_all(dir);
}

TEST_CASE("Matrix Market: every bad input is one line naming file:line and the cause") {
  const fs::path dir = test::scratch_dir("sparse", "bad");
  const std::string banner = "%%MatrixMarket matrix coordinate real general\n";
  struct Case {
    const char* name;
    std::string text;
    int line;
    const char* cause;
  };
  const std::vector<Case> cases{
      {"truncated", banner + "3 3 4\n1 1 1\n2 2 1\n", 5, "truncated: 2 entries"},
      {"nnz-lies", banner + "3 3 1\n1 1 1\n2 2 1\n", 4, "more entries than the 1"},
      {"row-range", banner + "3 3 1\n4 1 1\n", 3, "row 4 out of range 1..3"},
      {"zero-based", banner + "3 3 1\n0 1 1\n", 3, "1-based"},
      {"col-range", banner + "3 3 1\n1 9 1\n", 3, "column 9 out of range"},
      {"non-numeric", banner + "3 3 1\n1 1 abc\n", 3, "value 'abc' is not a number"},
      {"nan", banner + "3 3 1\n1 1 nan\n", 3, "not finite"},
      {"empty-matrix", banner + "3 3 0\n", 2, "empty matrix: 0 entries"},
      {"zero-by-zero", banner + "0 0 0\n", 2, "empty matrix (0 x 0)"},
      {"huge-claim", banner + "100000000 100000000 1000000000\n1 1 1\n", 2, "cannot hold that many"},
      {"array", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", 1, "array (dense) format is not supported"},
      {"complex", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", 1, "complex"},
      {"no-banner", "3 3 1\n1 1 1\n", 1, "no '%%MatrixMarket' banner"},
      {"extra-token", banner + "3 3 1\n1 1 1 7\n", 3, "entry needs 3 numbers"},
      {"skew-diagonal", "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 3\n", 3, "diagonal entry"},
      {"symmetric-not-square", "%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n1 1 3\n", 2, "must be square"},
      {"no-size-line", banner + "% only comments\n", 2, "ends before the size line"},
      {"int64-size", banner + "3000000000 3 1\n1 1 1\n", 2, "64-bit indices"},
      {"empty-file", "", 1, "empty file"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const fs::path p = write_mtx(dir, std::string(c.name) + ".mtx", c.text);
    const std::string e = read_error(p);
    CHECK(e.find(p.string() + ":" + std::to_string(c.line) + ":") == 0);
    CHECK(e.find(c.cause) != std::string::npos);
    CHECK(e.find('\n') == std::string::npos);
    if (e.find(c.cause) == std::string::npos) MESSAGE(e);
  }
  // A directory and a missing file.
  CHECK(read_error(dir).find("is a directory") != std::string::npos);
  CHECK(read_error(dir / "absent.mtx").find("no such file") != std::string::npos);
  // More entries than int32 indices allow (checked from the size line, before any allocation).
  MatrixReadOptions small;
  small.max_nnz = 2;
  try {
    read_matrix_market(write_mtx(dir, "cap.mtx", banner + "3 3 3\n1 1 1\n2 2 1\n3 3 1\n").string(), small);
    FAIL("no error");
  } catch (const InputFileError& e) {
    CHECK(std::string(e.what()).find("above 2 (int32 indices)") != std::string::npos);
  }
  fs::remove_all(dir);
}

TEST_CASE("Matrix Market: the CLI refuses a bad file with exit != 0 and the reader's line") {
  const fs::path dir = test::scratch_dir("sparse", "cli");
  const fs::path bad = write_mtx(dir, "bad.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n");
  const auto r = test::run_ceiling("predict --hw h200 --kernel spmv-csr --matrix '" + bad.string() + "'", true);
  CHECK(r.rc != 0);
  CHECK(r.out.find(bad.string() + ":4:") != std::string::npos);
  CHECK(r.out.find("truncated") != std::string::npos);
  const fs::path good = write_mtx(dir, "good.mtx", "%%MatrixMarket matrix coordinate real symmetric\n4 4 3\n1 1 1\n2 1 1\n4 4 1\n");
  const auto ok = test::run_ceiling("predict --hw h200 --kernel spmv-csr --matrix '" + good.string() + "' --json");
  CHECK(ok.rc == 0);
  CHECK(ok.out.find("\"matrix\": \"good (") != std::string::npos);
  CHECK(ok.out.find("\"assumption\"") != std::string::npos);
  const auto suite = test::run_ceiling("predict --hw h200 --kernel spmv-csr --suite table2 --name cant");
  CHECK(suite.rc == 0);
  CHECK(suite.out.find("D10 cant") != std::string::npos);
  const auto unknown = test::run_ceiling("predict --hw h200 --kernel spmv-csr --suite table2 --name nope", true);
  CHECK(unknown.rc != 0);
  CHECK(unknown.out.find("unknown matrix 'nope' in table2") != std::string::npos);
  const auto wrong_kind = test::run_ceiling("predict --hw h200 --kernel gemv --matrix '" + good.string() + "'", true);
  CHECK(wrong_kind.rc != 0);
  CHECK(wrong_kind.out.find("apply to the kinds with --m --n --nnz") != std::string::npos);
  const auto both = test::run_ceiling("predict --hw h200 --kernel spmv-csr --matrix '" + good.string() + "' --m 4", true);
  CHECK(both.rc != 0);
  CHECK(both.out.find("--m comes from the matrix") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("Table 2 generators: exact rows and nnz, the families' shapes, deterministic") {
  CHECK(table2_suite().size() == 21);
  CHECK(table2_matrix("D10").name == "cant");
  CHECK(table2_matrix("circuit5M").nnz == 59524291);
  CHECK_THROWS_AS(table2_matrix("nope"), std::invalid_argument);
  // Full size for the small ones: exactly the table's rows and nnz.
  for (const char* name : {"dc2", "conf5_4x8x-10", "mc2depi", "rma10", "cant"}) {
    CAPTURE(name);
    const CsrMatrix a = generate_table2(name);
    check_csr(a);
    CHECK(a.rows == table2_matrix(name).rows);
    CHECK(a.nnz() == table2_matrix(name).nnz);
    const RowStats s = row_stats(a);
    if (table2_matrix(name).family == "qcd") {  // 39 lattice neighbours per row, every row
      CHECK(s.cv == 0);
      CHECK(s.mean == 39);
    }
    if (table2_matrix(name).family == "fem-banded") {  // dense blocks near the diagonal
      CHECK(s.cv < 0.5);
      CHECK(s.bandwidth_mean < 0.05);
    }
  }
  // Every matrix at 1/100: valid, nnz = round(nnz / 100), and the families differ as the originals.
  for (const auto& m : table2_suite()) {
    CAPTURE(m.name);
    const CsrMatrix a = generate_table2(m.name, 0.01);
    check_csr(a);
    CHECK(a.nnz() == std::llround(static_cast<double>(m.nnz) * 0.01));
    const RowStats s = row_stats(a);
    if (m.family == "qcd") {
      CHECK(s.cv < 0.01);  // 39 per row but for the rounding of nnz / 100
    } else if (m.family == "web-graph") {
      CHECK(s.cv > 1);
      CHECK(s.max > 20 * s.mean);
    } else if (m.family == "circuit") {
      CHECK(static_cast<double>(s.max) >= 100 * s.mean);
    } else if (m.family == "fem-banded") {
      CHECK(s.cv < 0.5);
    }
  }
  // Deterministic from the seed.
  const CsrMatrix a = generate_table2("webbase-1M", 0.01, 7), b = generate_table2("webbase-1M", 0.01, 7),
                  c = generate_table2("webbase-1M", 0.01, 8);
  CHECK(a.col == b.col);
  CHECK(a.val == b.val);
  CHECK(a.col != c.col);
  CHECK_THROWS_AS(generate_table2("cant", 0.0), std::invalid_argument);
  CHECK_THROWS_AS(generate_table2("cant", 2.0), std::invalid_argument);
}

TEST_CASE("the CPU reference sums rows in long double") {
  CsrMatrix a;
  a.name = "tiny";
  a.rows = 2;
  a.cols = 3;
  a.row_ptr = {0, 2, 3};
  a.col = {0, 2, 1};
  a.val = {1e16, 1.0, 3.0};
  check_csr(a);
  const double x[] = {1.0, 2.0, 1.0};
  double y[2];
  spmv_reference(a, x, y);
  CHECK(y[0] == 1e16 + 1.0);
  CHECK(y[1] == 6.0);
  CHECK(a.csr_bytes(4) == 3 * 8 + 3 * 4 + 3 * 4);
  clear_registered_matrices();
  CHECK(register_matrix(std::make_shared<CsrMatrix>(a)) == 0);
  CHECK(registered_matrix_count() == 1);
  CHECK(registered_matrix(0)->name == "tiny");
  CHECK_THROWS_AS(registered_matrix(1), std::out_of_range);
  clear_registered_matrices();
}
