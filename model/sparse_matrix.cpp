// CSR helpers (model/sparse_matrix.hpp): the invariants check, row-length statistics, COO -> CSR,
// the CPU reference y = A x and the registered-matrix catalog.
#include "sparse_matrix.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

namespace ceiling {

double CsrMatrix::csr_bytes(int index_bytes) const {
  const double entries = static_cast<double>(nnz());
  return entries * 8 + entries * index_bytes + (static_cast<double>(rows) + 1) * index_bytes;
}

void check_csr(const CsrMatrix& a) {
  const auto fail = [&](const std::string& what) {
    throw std::invalid_argument("CSR matrix '" + a.name + "': " + what);
  };
  if (a.rows < 0 || a.cols < 0)
    fail("negative size " + std::to_string(a.rows) + " x " + std::to_string(a.cols));
  if (a.row_ptr.size() != static_cast<std::size_t>(a.rows) + 1)
    fail("row_ptr has " + std::to_string(a.row_ptr.size()) + " entries, rows + 1 = " + std::to_string(a.rows + std::int64_t{1}));
  if (a.col.size() != a.val.size())
    fail("col has " + std::to_string(a.col.size()) + " entries, val " + std::to_string(a.val.size()));
  if (a.col.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    fail(std::to_string(a.col.size()) + " entries need 64-bit indices (int32 row_ptr)");
  if (a.row_ptr.front() != 0) fail("row_ptr[0] = " + std::to_string(a.row_ptr.front()) + ", not 0");
  if (a.row_ptr.back() != static_cast<std::int32_t>(a.col.size()))
    fail("row_ptr[rows] = " + std::to_string(a.row_ptr.back()) + ", not nnz = " + std::to_string(a.col.size()));
  for (std::size_t r = 0; r < static_cast<std::size_t>(a.rows); ++r) {
    const std::int32_t begin = a.row_ptr[r], end = a.row_ptr[r + 1];
    if (end < begin) fail("row_ptr decreases at row " + std::to_string(r));
    if (end > a.row_ptr.back()) fail("row_ptr[" + std::to_string(r + 1) + "] is past nnz");
    for (std::int32_t k = begin; k < end; ++k) {
      const std::int32_t c = a.col[static_cast<std::size_t>(k)];
      if (c < 0 || c >= a.cols)
        fail("row " + std::to_string(r) + ": column " + std::to_string(c) + " out of range 0.." + std::to_string(a.cols - 1));
      if (k > begin && c <= a.col[static_cast<std::size_t>(k) - 1])
        fail("row " + std::to_string(r) + ": column " + std::to_string(c) +
             (c == a.col[static_cast<std::size_t>(k) - 1] ? " duplicated" : " not sorted"));
      if (!std::isfinite(a.val[static_cast<std::size_t>(k)]))
        fail("row " + std::to_string(r) + ", column " + std::to_string(c) + ": value not finite");
    }
  }
}

RowStats row_stats(const CsrMatrix& a) {
  RowStats s;
  s.rows = a.rows;
  s.nnz = a.nnz();
  if (a.rows <= 0 || a.row_ptr.size() != static_cast<std::size_t>(a.rows) + 1) return s;
  s.mean = static_cast<double>(s.nnz) / static_cast<double>(a.rows);
  s.min = std::numeric_limits<std::int64_t>::max();
  double squares = 0, band = 0;
  std::int64_t nonempty = 0;
  for (std::size_t r = 0; r < static_cast<std::size_t>(a.rows); ++r) {
    const std::int64_t len = a.row_ptr[r + 1] - a.row_ptr[r];
    s.min = std::min(s.min, len);
    s.max = std::max(s.max, len);
    const double d = static_cast<double>(len) - s.mean;
    squares += d * d;
    if (len == 0) {
      ++s.empty_rows;
      continue;
    }
    ++nonempty;
    const std::int32_t first = a.col[static_cast<std::size_t>(a.row_ptr[r])];
    const std::int32_t last = a.col[static_cast<std::size_t>(a.row_ptr[r + 1]) - 1];
    band += static_cast<double>(last - first + 1) / static_cast<double>(a.cols);
  }
  s.cv = s.mean > 0 ? std::sqrt(squares / static_cast<double>(a.rows)) / s.mean : 0;
  s.bandwidth_mean = nonempty > 0 ? band / static_cast<double>(nonempty) : 0;
  return s;
}

CsrMatrix csr_from_coo(std::int32_t rows, std::int32_t cols, const std::vector<std::int32_t>& row,
                       const std::vector<std::int32_t>& col, const std::vector<double>& val, CooSymmetry symmetry) {
  if (rows < 0 || cols < 0)
    throw std::invalid_argument("csr_from_coo: negative size " + std::to_string(rows) + " x " + std::to_string(cols));
  if (row.size() != col.size() || row.size() != val.size())
    throw std::invalid_argument("csr_from_coo: row, col and val differ in length (" + std::to_string(row.size()) + ", " +
                                std::to_string(col.size()) + ", " + std::to_string(val.size()) + ")");
  const bool mirror = symmetry != CooSymmetry::general;
  const double mirror_sign = symmetry == CooSymmetry::skew_symmetric ? -1.0 : 1.0;
  // Count the entries of each row (mirrors included) and check every index once.
  std::vector<std::int64_t> count(static_cast<std::size_t>(rows) + 1, 0);
  for (std::size_t k = 0; k < row.size(); ++k) {
    const std::int32_t i = row[k], j = col[k];
    if (i < 0 || i >= rows || j < 0 || j >= cols)
      throw std::invalid_argument("csr_from_coo: entry " + std::to_string(k) + " (" + std::to_string(i) + ", " +
                                  std::to_string(j) + ") out of range for " + std::to_string(rows) + " x " + std::to_string(cols));
    ++count[static_cast<std::size_t>(i) + 1];
    if (mirror && i != j) {
      if (j >= rows)
        throw std::invalid_argument("csr_from_coo: a symmetric matrix must be square, got " + std::to_string(rows) + " x " +
                                    std::to_string(cols));
      ++count[static_cast<std::size_t>(j) + 1];
    }
  }
  for (std::size_t r = 0; r < static_cast<std::size_t>(rows); ++r) count[r + 1] += count[r];
  const std::int64_t total = count.back();
  if (total > std::numeric_limits<std::int32_t>::max())
    throw std::invalid_argument("csr_from_coo: " + std::to_string(total) +
                                " entries need 64-bit indices (ceiling uses int32, at most 2147483647)");

  CsrMatrix a;
  a.rows = rows;
  a.cols = cols;
  a.col.resize(static_cast<std::size_t>(total));
  a.val.resize(static_cast<std::size_t>(total));
  {
    std::vector<std::int32_t> next(static_cast<std::size_t>(rows));
    for (std::size_t r = 0; r < next.size(); ++r) next[r] = static_cast<std::int32_t>(count[r]);
    const auto put = [&](std::int32_t i, std::int32_t j, double v) {
      const auto at = static_cast<std::size_t>(next[static_cast<std::size_t>(i)]++);
      a.col[at] = j;
      a.val[at] = v;
    };
    for (std::size_t k = 0; k < row.size(); ++k) {
      put(row[k], col[k], val[k]);
      if (mirror && row[k] != col[k]) put(col[k], row[k], mirror_sign * val[k]);
    }
  }
  // Sort each row by column (files written row- or column-major arrive sorted), sum duplicates, compact.
  a.row_ptr.assign(static_cast<std::size_t>(rows) + 1, 0);
  std::vector<std::pair<std::int32_t, double>> scratch;
  std::size_t out = 0;
  for (std::size_t r = 0; r < static_cast<std::size_t>(rows); ++r) {
    const auto begin = static_cast<std::size_t>(count[r]), end = static_cast<std::size_t>(count[r + 1]);
    bool sorted = true;
    for (std::size_t k = begin + 1; k < end && sorted; ++k) sorted = a.col[k - 1] <= a.col[k];
    if (!sorted) {
      scratch.clear();
      for (std::size_t k = begin; k < end; ++k) scratch.emplace_back(a.col[k], a.val[k]);
      std::stable_sort(scratch.begin(), scratch.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
      for (std::size_t k = begin; k < end; ++k) {
        a.col[k] = scratch[k - begin].first;
        a.val[k] = scratch[k - begin].second;
      }
    }
    const std::size_t row_start = out;
    for (std::size_t k = begin; k < end; ++k) {
      if (out > row_start && a.col[out - 1] == a.col[k]) {
        a.val[out - 1] += a.val[k];
      } else {
        a.col[out] = a.col[k];
        a.val[out] = a.val[k];
        ++out;
      }
    }
    a.row_ptr[r + 1] = static_cast<std::int32_t>(out);
  }
  a.col.resize(out);
  a.val.resize(out);
  a.col.shrink_to_fit();
  a.val.shrink_to_fit();
  return a;
}

void spmv_reference(const CsrMatrix& a, const double* x, double* y) {
  for (std::size_t r = 0; r < static_cast<std::size_t>(a.rows); ++r) {
    long double sum = 0;
    for (auto k = static_cast<std::size_t>(a.row_ptr[r]); k < static_cast<std::size_t>(a.row_ptr[r + 1]); ++k)
      sum += static_cast<long double>(a.val[k]) * static_cast<long double>(x[a.col[k]]);
    y[r] = static_cast<double>(sum);
  }
}

// ---- the registered-matrix catalog ----------------------------------------------------------------

namespace {

struct Catalog {
  std::mutex mutex;
  std::vector<std::shared_ptr<const CsrMatrix>> matrices;
};

Catalog& catalog() {
  static Catalog c;
  return c;
}

}  // namespace

int register_matrix(std::shared_ptr<const CsrMatrix> a) {
  if (!a) throw std::invalid_argument("register_matrix: no matrix (null pointer)");
  Catalog& c = catalog();
  const std::lock_guard<std::mutex> lock(c.mutex);
  c.matrices.push_back(std::move(a));
  return static_cast<int>(c.matrices.size()) - 1;
}

std::shared_ptr<const CsrMatrix> registered_matrix(int id) {
  Catalog& c = catalog();
  const std::lock_guard<std::mutex> lock(c.mutex);
  if (id < 0 || static_cast<std::size_t>(id) >= c.matrices.size())
    throw std::out_of_range("no registered matrix " + std::to_string(id) + " (" + std::to_string(c.matrices.size()) +
                            " registered)");
  return c.matrices[static_cast<std::size_t>(id)];
}

int registered_matrix_count() {
  Catalog& c = catalog();
  const std::lock_guard<std::mutex> lock(c.mutex);
  return static_cast<int>(c.matrices.size());
}

void clear_registered_matrices() {
  Catalog& c = catalog();
  const std::lock_guard<std::mutex> lock(c.mutex);
  c.matrices.clear();
}

}  // namespace ceiling
