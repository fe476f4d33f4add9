// CSR helpers (model/sparse_matrix.hpp): the invariants check, row statistics, COO -> CSR, the CPU
// reference y = A x and the registered-matrix catalog.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <cmath>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "scratch.hpp"
#include "model/sparse_matrix.hpp"

using namespace ceiling;
using test::message_of;

namespace {

// [[1 0 2 0]
//  [0 0 0 0]
//  [0 3 0 4]
//  [5 0 0 0]]
CsrMatrix small() {
  CsrMatrix a;
  a.name = "small";
  a.rows = 4;
  a.cols = 4;
  a.row_ptr = {0, 2, 2, 4, 5};
  a.col = {0, 2, 1, 3, 0};
  a.val = {1, 2, 3, 4, 5};
  return a;
}

}  // namespace

TEST_CASE("sparse matrix: csr_bytes counts values, column indices and row pointers") {
  const CsrMatrix a = small();
  CHECK(a.nnz() == 5);
  CHECK(a.csr_bytes() == ceiling_test::Rel(5 * 8 + 5 * 4 + 5 * 4));
  CHECK(a.csr_bytes(8) == ceiling_test::Rel(5 * 8 + 5 * 8 + 5 * 8));
  CHECK(a.csr_bytes(2) == ceiling_test::Rel(5 * 8 + 5 * 2 + 5 * 2));
}

TEST_CASE("sparse matrix: check_csr accepts a valid matrix and names each broken invariant") {
  CHECK_NOTHROW(check_csr(small()));
  CsrMatrix empty;
  empty.row_ptr = {0};
  CHECK_NOTHROW(check_csr(empty));

  const auto broken = [](auto edit) {
    CsrMatrix a = small();
    edit(a);
    return message_of([&] { check_csr(a); });
  };
  CHECK(broken([](CsrMatrix& a) { a.row_ptr.pop_back(); }).find("row_ptr has 4 entries") != std::string::npos);
  CHECK(broken([](CsrMatrix& a) { a.val.pop_back(); }).find("col has 5 entries, val 4") != std::string::npos);
  CHECK(broken([](CsrMatrix& a) { a.row_ptr[0] = 1; }).find("row_ptr[0]") != std::string::npos);
  CHECK(broken([](CsrMatrix& a) { a.row_ptr[4] = 4; }).find("not nnz") != std::string::npos);
  CHECK(broken([](CsrMatrix& a) { a.row_ptr[2] = 1; }).find("decreases at row 1") != std::string::npos);
  CHECK(broken([](CsrMatrix& a) { a.col[1] = 4; }).find("column 4 out of range") != std::string::npos);
  CHECK(broken([](CsrMatrix& a) { a.col[1] = -1; }).find("out of range") != std::string::npos);
  CHECK(broken([](CsrMatrix& a) { a.col[3] = 0; }).find("row 2: column 0 not sorted") != std::string::npos);
  CHECK(broken([](CsrMatrix& a) { a.col[3] = 1; }).find("row 2: column 1 duplicated") != std::string::npos);
  CHECK(broken([](CsrMatrix& a) { a.val[2] = std::nan(""); }).find("not finite") != std::string::npos);
  CHECK(broken([](CsrMatrix& a) { a.val[2] = std::numeric_limits<double>::infinity(); }).find("not finite") != std::string::npos);
  CHECK(broken([](CsrMatrix& a) { a.rows = -1; }).find("negative size") != std::string::npos);
  CHECK(broken([](CsrMatrix& a) { a.name = "named"; a.col[1] = 9; }).find("'named'") != std::string::npos);
}

TEST_CASE("sparse matrix: row_stats of a small matrix") {
  const RowStats s = row_stats(small());
  CHECK(s.rows == 4);
  CHECK(s.nnz == 5);
  CHECK(s.mean == ceiling_test::Rel(1.25));
  CHECK(s.min == 0);
  CHECK(s.max == 2);
  CHECK(s.empty_rows == 1);
  // lengths 2 0 2 1: variance ((0.75)^2 + (1.25)^2 + (0.75)^2 + (0.25)^2) / 4 = 0.6875
  CHECK(s.cv == ceiling_test::Rel(std::sqrt(0.6875) / 1.25));
  // non-empty rows span 3, 3 and 1 of 4 columns
  CHECK(s.bandwidth_mean == ceiling_test::Rel((3.0 / 4 + 3.0 / 4 + 1.0 / 4) / 3));

  CsrMatrix constant;
  constant.rows = constant.cols = 3;
  constant.row_ptr = {0, 1, 2, 3};
  constant.col = {0, 1, 2};
  constant.val = {1, 1, 1};
  CHECK(row_stats(constant).cv == 0);
  CHECK(row_stats(constant).mean == 1);

  CsrMatrix none;
  none.row_ptr = {0};
  const RowStats z = row_stats(none);
  CHECK(z.rows == 0);
  CHECK(z.mean == 0);
  CHECK(z.cv == 0);
}

TEST_CASE("sparse matrix: csr_from_coo sorts rows, sums duplicates and mirrors symmetric entries") {
  SUBCASE("general: unsorted input, duplicates summed, an empty row") {
    const CsrMatrix a = csr_from_coo(3, 4, {2, 0, 0, 2, 0}, {1, 3, 1, 1, 3}, {1.0, 2.0, 3.0, 4.0, 0.5});
    CHECK_NOTHROW(check_csr(a));
    CHECK(a.row_ptr == std::vector<std::int32_t>{0, 2, 2, 3});
    CHECK(a.col == std::vector<std::int32_t>{1, 3, 1});
    CHECK(a.val == std::vector<double>{3.0, 2.5, 5.0});
  }
  SUBCASE("symmetric: the mirror of every off-diagonal entry, the diagonal once") {
    const CsrMatrix a = csr_from_coo(3, 3, {0, 1, 2}, {0, 0, 1}, {1.0, 2.0, 3.0}, CooSymmetry::symmetric);
    CHECK(a.nnz() == 5);
    CHECK(a.row_ptr == std::vector<std::int32_t>{0, 2, 4, 5});
    CHECK(a.col == std::vector<std::int32_t>{0, 1, 0, 2, 1});
    CHECK(a.val == std::vector<double>{1.0, 2.0, 2.0, 3.0, 3.0});
  }
  SUBCASE("skew-symmetric: the mirror negated") {
    const CsrMatrix a = csr_from_coo(2, 2, {1}, {0}, {2.5}, CooSymmetry::skew_symmetric);
    CHECK(a.col == std::vector<std::int32_t>{1, 0});
    CHECK(a.val == std::vector<double>{-2.5, 2.5});
  }
  SUBCASE("refusals") {
    CHECK(message_of([] { csr_from_coo(2, 2, {2}, {0}, {1.0}); }).find("out of range") != std::string::npos);
    CHECK(message_of([] { csr_from_coo(2, 2, {0}, {-1}, {1.0}); }).find("out of range") != std::string::npos);
    CHECK(message_of([] { csr_from_coo(2, 2, {0, 1}, {0}, {1.0}); }).find("differ in length") != std::string::npos);
    CHECK(message_of([] { csr_from_coo(2, 3, {0}, {2}, {1.0}, CooSymmetry::symmetric); }).find("square") != std::string::npos);
  }
}

TEST_CASE("sparse matrix: spmv_reference computes y = A x, each row in long double") {
  const CsrMatrix a = small();
  const std::vector<double> x{1, 10, 100, 1000};
  std::vector<double> y(4, -1);
  spmv_reference(a, x.data(), y.data());
  CHECK(y == std::vector<double>{201, 0, 4030, 5});

  if constexpr (std::numeric_limits<long double>::digits > std::numeric_limits<double>::digits) {
    // 1e16 + 1 - 1e16: 1 in long double, 0 in double
    CsrMatrix c;
    c.rows = 1;
    c.cols = 3;
    c.row_ptr = {0, 3};
    c.col = {0, 1, 2};
    c.val = {1e16, 1, -1e16};
    const std::vector<double> ones{1, 1, 1};
    double out = 0;
    spmv_reference(c, ones.data(), &out);
    CHECK(out == 1.0);
  }
}

TEST_CASE("sparse matrix: the registered-matrix catalog hands out ids 0, 1, ... and is thread-safe") {
  clear_registered_matrices();
  CHECK(registered_matrix_count() == 0);
  auto a = std::make_shared<const CsrMatrix>(small());
  CHECK(register_matrix(a) == 0);
  CHECK(register_matrix(std::make_shared<const CsrMatrix>()) == 1);
  CHECK(registered_matrix_count() == 2);
  CHECK(registered_matrix(0) == a);
  CHECK(registered_matrix(0)->name == "small");
  CHECK_THROWS_AS(registered_matrix(2), std::out_of_range);
  CHECK_THROWS_AS(registered_matrix(-1), std::out_of_range);
  CHECK(message_of([] { registered_matrix(7); }).find("no registered matrix 7 (2 registered)") != std::string::npos);
  CHECK_THROWS_AS(register_matrix(nullptr), std::invalid_argument);

  clear_registered_matrices();
  CHECK(registered_matrix_count() == 0);
  constexpr int kThreads = 8, kEach = 200;
  std::vector<std::vector<int>> ids(kThreads);
  {
    std::vector<std::thread> pool;
    for (int t = 0; t < kThreads; ++t)
      pool.emplace_back([&, t] {
        for (int i = 0; i < kEach; ++i) {
          ids[static_cast<size_t>(t)].push_back(register_matrix(a));
          (void)registered_matrix(ids[static_cast<size_t>(t)].back());
          (void)registered_matrix_count();
        }
      });
    for (auto& th : pool) th.join();
  }
  std::set<int> all;
  for (const auto& v : ids) all.insert(v.begin(), v.end());
  CHECK(all.size() == static_cast<size_t>(kThreads * kEach));
  CHECK(*all.begin() == 0);
  CHECK(*all.rbegin() == kThreads * kEach - 1);
  CHECK(registered_matrix_count() == kThreads * kEach);
  clear_registered_matrices();
}
