// Sparse matrices for SpMV (model/sparse_matrix.hpp): CSR helpers, the strict streaming Matrix
// Market reader, the Table 2 generators, the CPU reference and the registered-matrix catalog.
// Eigen's loadMarket was not used: it reports no line of a bad entry and accepts out-of-range indices.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <limits>
#include <numbers>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "files.hpp"
#include "input_error.hpp"
#include "sparse_matrix.hpp"

namespace ceiling {

// ---- CSR --------------------------------------------------------------------------------------

double CsrMatrix::csr_bytes(int index_bytes) const {
  const double nz = static_cast<double>(nnz());
  return nz * 8 + nz * index_bytes + (static_cast<double>(rows) + 1) * index_bytes;
}

void check_csr(const CsrMatrix& a) {
  const auto fail = [&](const std::string& what) { throw std::invalid_argument("CSR " + a.name + ": " + what); };
  if (a.rows < 0 || a.cols < 0) fail("negative size");
  if (a.row_ptr.size() != static_cast<size_t>(a.rows) + 1) fail("row_ptr has " + std::to_string(a.row_ptr.size()) + " entries, want rows + 1");
  if (a.col.size() != a.val.size()) fail("col and val differ in length");
  if (a.row_ptr.front() != 0 || a.row_ptr.back() != static_cast<std::int32_t>(a.col.size())) fail("row_ptr does not span [0, nnz]");
  for (std::int32_t r = 0; r < a.rows; ++r) {
    const auto b = a.row_ptr[static_cast<size_t>(r)], e = a.row_ptr[static_cast<size_t>(r) + 1];
    if (e < b) fail("row_ptr decreases at row " + std::to_string(r));
    for (auto k = b; k < e; ++k) {
      const auto c = a.col[static_cast<size_t>(k)];
      if (c < 0 || c >= a.cols) fail("column " + std::to_string(c) + " out of range in row " + std::to_string(r));
      if (k > b && c <= a.col[static_cast<size_t>(k) - 1]) fail("columns not sorted or duplicated in row " + std::to_string(r));
      if (!std::isfinite(a.val[static_cast<size_t>(k)])) fail("non-finite value in row " + std::to_string(r));
    }
  }
}

RowStats row_stats(const CsrMatrix& a) {
  RowStats s;
  s.rows = a.rows;
  s.nnz = a.nnz();
  if (a.rows == 0) return s;
  s.mean = static_cast<double>(s.nnz) / a.rows;
  s.min = std::numeric_limits<std::int64_t>::max();
  double var = 0, band = 0;
  std::int64_t nonempty = 0;
  for (std::int32_t r = 0; r < a.rows; ++r) {
    const std::int64_t len = a.row_ptr[static_cast<size_t>(r) + 1] - a.row_ptr[static_cast<size_t>(r)];
    s.min = std::min(s.min, len);
    s.max = std::max(s.max, len);
    var += (static_cast<double>(len) - s.mean) * (static_cast<double>(len) - s.mean);
    if (len == 0) {
      ++s.empty_rows;
    } else {
      ++nonempty;
      band += static_cast<double>(a.col[static_cast<size_t>(a.row_ptr[static_cast<size_t>(r) + 1]) - 1] -
                                  a.col[static_cast<size_t>(a.row_ptr[static_cast<size_t>(r)])] + 1) /
              a.cols;
    }
  }
  s.cv = s.mean > 0 ? std::sqrt(var / a.rows) / s.mean : 0;
  s.bandwidth_mean = nonempty ? band / static_cast<double>(nonempty) : 0;
  return s;
}

void spmv_reference(const CsrMatrix& a, const double* x, double* y) {
  for (std::int32_t r = 0; r < a.rows; ++r) {
    long double s = 0;
    for (auto k = a.row_ptr[static_cast<size_t>(r)]; k < a.row_ptr[static_cast<size_t>(r) + 1]; ++k)
      s += static_cast<long double>(a.val[static_cast<size_t>(k)]) * x[a.col[static_cast<size_t>(k)]];
    y[r] = static_cast<double>(s);
  }
}

namespace {
std::mutex catalog_mutex;
std::vector<std::shared_ptr<const CsrMatrix>>& catalog() {
  static std::vector<std::shared_ptr<const CsrMatrix>> c;
  return c;
}

// COO (row, col, value) triples to CSR: counting sort by row, then each row sorted by column with
// duplicates summed.
CsrMatrix coo_to_csr(std::int32_t rows, std::int32_t cols, const std::vector<std::int32_t>& ri,
                     const std::vector<std::int32_t>& ci, const std::vector<double>& v) {
  CsrMatrix a;
  a.rows = rows;
  a.cols = cols;
  a.row_ptr.assign(static_cast<size_t>(rows) + 1, 0);
  for (const auto r : ri) ++a.row_ptr[static_cast<size_t>(r) + 1];
  for (size_t r = 0; r < static_cast<size_t>(rows); ++r) a.row_ptr[r + 1] += a.row_ptr[r];
  std::vector<std::int32_t> at(a.row_ptr.begin(), a.row_ptr.end() - 1);
  std::vector<std::pair<std::int32_t, double>> tmp(ri.size());
  for (size_t k = 0; k < ri.size(); ++k) tmp[static_cast<size_t>(at[static_cast<size_t>(ri[k])]++)] = {ci[k], v[k]};
  a.col.reserve(tmp.size());
  a.val.reserve(tmp.size());
  std::vector<std::int32_t> out_ptr(static_cast<size_t>(rows) + 1, 0);
  for (std::int32_t r = 0; r < rows; ++r) {
    auto b = tmp.begin() + a.row_ptr[static_cast<size_t>(r)], e = tmp.begin() + a.row_ptr[static_cast<size_t>(r) + 1];
    std::sort(b, e, [](const auto& x, const auto& y) { return x.first < y.first; });
    for (auto it = b; it != e; ++it) {
      if (!a.col.empty() && static_cast<std::int32_t>(a.col.size()) > out_ptr[static_cast<size_t>(r)] && a.col.back() == it->first)
        a.val.back() += it->second;
      else {
        a.col.push_back(it->first);
        a.val.push_back(it->second);
      }
    }
    out_ptr[static_cast<size_t>(r) + 1] = static_cast<std::int32_t>(a.col.size());
  }
  a.row_ptr = std::move(out_ptr);
  return a;
}
}  // namespace

int register_matrix(std::shared_ptr<const CsrMatrix> a) {
  std::lock_guard<std::mutex> lock(catalog_mutex);
  catalog().push_back(std::move(a));
  return static_cast<int>(catalog().size()) - 1;
}
std::shared_ptr<const CsrMatrix> registered_matrix(int id) {
  std::lock_guard<std::mutex> lock(catalog_mutex);
  if (id < 0 || id >= static_cast<int>(catalog().size()))
    throw std::out_of_range("no registered matrix " + std::to_string(id) + " (" + std::to_string(catalog().size()) + " registered)");
  return catalog()[static_cast<size_t>(id)];
}
int registered_matrix_count() {
  std::lock_guard<std::mutex> lock(catalog_mutex);
  return static_cast<int>(catalog().size());
}
void clear_registered_matrices() {
  std::lock_guard<std::mutex> lock(catalog_mutex);
  catalog().clear();
}

// ---- Matrix Market ----------------------------------------------------------------------------

namespace {

struct MmParser {
  std::string path;
  std::string text;
  size_t pos = 0;
  int line = 0;

  [[noreturn]] void fail(int col, const std::string& cause) const { throw InputFileError(path, line, col, "", cause); }

  // The next line (without the newline); false at the end of the file.
  bool next(std::string_view& out) {
    if (pos >= text.size()) return false;
    const size_t nl = text.find('\n', pos);
    const size_t end = nl == std::string::npos ? text.size() : nl;
    out = std::string_view(text).substr(pos, end - pos);
    if (!out.empty() && out.back() == '\r') out.remove_suffix(1);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    ++line;
    return true;
  }
};

std::string lower(std::string_view s) {
  std::string o(s);
  for (auto& c : o) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return o;
}

// Splits on blanks; column numbers (1-based) of each token.
std::vector<std::pair<std::string_view, int>> tokens(std::string_view l) {
  std::vector<std::pair<std::string_view, int>> t;
  size_t i = 0;
  while (i < l.size()) {
    while (i < l.size() && (l[i] == ' ' || l[i] == '\t')) ++i;
    const size_t b = i;
    while (i < l.size() && l[i] != ' ' && l[i] != '\t') ++i;
    if (i > b) t.push_back({l.substr(b, i - b), static_cast<int>(b) + 1});
  }
  return t;
}

bool blank(std::string_view l) { return l.find_first_not_of(" \t") == std::string_view::npos; }

std::int64_t parse_int(MmParser& p, std::string_view tok, int col, const char* what) {
  std::int64_t v = 0;
  const auto r = std::from_chars(tok.data(), tok.data() + tok.size(), v);
  if (r.ec != std::errc() || r.ptr != tok.data() + tok.size())
    p.fail(col, std::string(what) + " '" + std::string(tok.substr(0, 40)) + "' is not a whole number");
  return v;
}

double parse_real(MmParser& p, std::string_view tok, int col) {
  double v = 0;
  const char* b = tok.data();
  if (!tok.empty() && *b == '+') ++b;
  const auto r = std::from_chars(b, tok.data() + tok.size(), v);
  if (r.ec == std::errc::result_out_of_range) p.fail(col, "value '" + std::string(tok.substr(0, 40)) + "' is out of the range of a double");
  if (r.ec != std::errc() || r.ptr != tok.data() + tok.size())
    p.fail(col, "value '" + std::string(tok.substr(0, 40)) + "' is not a number");
  if (!std::isfinite(v)) p.fail(col, "value '" + std::string(tok.substr(0, 40)) + "' is not finite");
  return v;
}

struct Header {
  MatrixMarketHeader h;
  bool pattern = false;
};

Header parse_header(MmParser& p) {
  std::string_view l;
  if (!p.next(l)) {
    p.line = 1;
    p.fail(1, "empty file: a Matrix Market file starts with '%%MatrixMarket matrix coordinate ...'");
  }
  const auto t = tokens(l);
  if (t.empty() || lower(t[0].first) != "%%matrixmarket")
    p.fail(1, "no '%%MatrixMarket' banner: not a Matrix Market file");
  if (t.size() != 5) p.fail(1, "banner needs 4 words after %%MatrixMarket (object format field symmetry), got " + std::to_string(t.size() - 1));
  if (lower(t[1].first) != "matrix") p.fail(t[1].second, "object '" + std::string(t[1].first) + "' is not supported (only 'matrix')");
  const std::string format = lower(t[2].first);
  if (format == "array")
    p.fail(t[2].second, "array (dense) format is not supported: ceiling reads coordinate (sparse) files");
  if (format != "coordinate") p.fail(t[2].second, "format '" + std::string(t[2].first) + "' is not 'coordinate'");
  Header hd;
  hd.h.field = lower(t[3].first);
  if (hd.h.field == "complex") p.fail(t[3].second, "complex matrices are not supported (FP64 real SpMV)");
  if (hd.h.field != "real" && hd.h.field != "integer" && hd.h.field != "pattern" && hd.h.field != "double")
    p.fail(t[3].second, "field '" + std::string(t[3].first) + "' is not real, integer or pattern");
  if (hd.h.field == "double") hd.h.field = "real";
  hd.pattern = hd.h.field == "pattern";
  hd.h.symmetry = lower(t[4].first);
  if (hd.h.symmetry == "hermitian") p.fail(t[4].second, "hermitian matrices are not supported (complex)");
  if (hd.h.symmetry != "general" && hd.h.symmetry != "symmetric" && hd.h.symmetry != "skew-symmetric")
    p.fail(t[4].second, "symmetry '" + std::string(t[4].first) + "' is not general, symmetric or skew-symmetric");
  // Comments, then the size line.
  while (true) {
    if (!p.next(l)) p.fail(1, "the file ends before the size line 'rows cols entries'");
    if (blank(l) || l.front() == '%') continue;
    break;
  }
  const auto s = tokens(l);
  if (s.size() != 3) p.fail(1, "size line needs 3 numbers 'rows cols entries', got " + std::to_string(s.size()) + " words");
  hd.h.rows = parse_int(p, s[0].first, s[0].second, "rows");
  hd.h.cols = parse_int(p, s[1].first, s[1].second, "columns");
  hd.h.entries = parse_int(p, s[2].first, s[2].second, "entries");
  if (hd.h.rows < 0 || hd.h.cols < 0 || hd.h.entries < 0) p.fail(1, "negative size on the size line");
  if (hd.h.rows == 0 || hd.h.cols == 0) p.fail(1, "empty matrix (" + std::to_string(hd.h.rows) + " x " + std::to_string(hd.h.cols) + "): nothing to multiply");
  if (hd.h.rows > INT32_MAX || hd.h.cols > INT32_MAX)
    p.fail(1, "size " + std::to_string(hd.h.rows) + " x " + std::to_string(hd.h.cols) + " needs 64-bit indices (ceiling uses int32)");
  if (hd.h.entries == 0) p.fail(s[2].second, "empty matrix: 0 entries, nothing to multiply");
  if (hd.h.symmetry != "general" && hd.h.rows != hd.h.cols) p.fail(1, hd.h.symmetry + " matrix must be square");
  return hd;
}

std::string read_whole(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputFileError(path, 0, 0, "", "is a directory, not a Matrix Market file");
  if (!std::filesystem::exists(path, ec)) throw InputFileError(path, 0, 0, "", "no such file");
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw InputFileError(path, 0, 0, "", std::string("cannot open: ") + std::strerror(errno));
  std::string text;
  text.reserve(static_cast<size_t>(std::filesystem::file_size(path, ec)));
  char buf[1 << 20];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  std::fclose(f);
  return text;
}

}  // namespace

MatrixMarketHeader read_matrix_market_header(const std::string& path) {
  MmParser p;
  p.path = path;
  {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw InputFileError(path, 0, 0, "", "is a directory, not a Matrix Market file");
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) throw InputFileError(path, 0, 0, "", std::string("cannot open: ") + std::strerror(errno));
    char buf[1 << 16];
    const size_t n = std::fread(buf, 1, sizeof buf, f);
    std::fclose(f);
    p.text.assign(buf, n);
  }
  return parse_header(p).h;
}

CsrMatrix read_matrix_market(const std::string& path, const MatrixReadOptions& o) {
  MmParser p;
  p.path = path;
  p.text = read_whole(path);
  const Header hd = parse_header(p);
  const auto& h = hd.h;
  // A size line that claims far more entries than the file can hold ("1 1\n" is 4 bytes) is
  // refused before anything is allocated; a file a little short reads to its end and is truncated.
  const std::int64_t min_bytes_per_entry = 4;
  const std::int64_t left = static_cast<std::int64_t>(p.text.size() - p.pos);
  if (h.entries > 16 * (left / min_bytes_per_entry) + 4096)
    p.fail(1, "the size line declares " + std::to_string(h.entries) + " entries but the rest of the file (" +
                  std::to_string(left) + " bytes) cannot hold that many");
  const bool sym = h.symmetry != "general";
  if (h.entries > o.max_nnz || (sym && 2 * h.entries > o.max_nnz + h.rows))
    p.fail(1, "the size line declares " + std::to_string(h.entries) + " entries: above " + std::to_string(o.max_nnz) +
                  " (int32 indices)");
  std::vector<std::int32_t> ri, ci;
  std::vector<double> v;
  const std::int64_t can_hold = left / min_bytes_per_entry + 1;
  const size_t reserve = static_cast<size_t>(std::min(h.entries, can_hold) * (sym ? 2 : 1));
  ri.reserve(reserve);
  ci.reserve(reserve);
  v.reserve(reserve);
  const bool skew = h.symmetry == "skew-symmetric";
  std::int64_t read = 0;
  const std::int64_t step = std::max<std::int64_t>(h.entries / 10, 5'000'000);
  std::string_view l;
  while (p.next(l)) {
    if (blank(l) || l.front() == '%') continue;
    if (read == h.entries) p.fail(1, "more entries than the " + std::to_string(h.entries) + " the size line declares");
    // Fast path (no allocation): "row col [value]" with blanks between; anything else, or any
    // value out of range, goes through the token path below, which names the column and cause.
    {
      const char* q = l.data();
      const char* e = q + l.size();
      const auto blanks = [&] { while (q < e && (*q == ' ' || *q == '\t')) ++q; };
      std::int64_t r = 0, c = 0;
      double val = 1.0;
      bool ok = true;
      blanks();
      auto rr = std::from_chars(q, e, r);
      ok = rr.ec == std::errc() && rr.ptr < e && (*rr.ptr == ' ' || *rr.ptr == '\t');
      if (ok) {
        q = rr.ptr;
        blanks();
        auto rc = std::from_chars(q, e, c);
        ok = rc.ec == std::errc();
        q = rc.ptr;
      }
      if (ok && !hd.pattern) {
        ok = q < e && (*q == ' ' || *q == '\t');
        blanks();
        if (ok && h.field == "integer") {
          std::int64_t iv = 0;
          auto rv = std::from_chars(q, e, iv);
          ok = rv.ec == std::errc();
          q = rv.ptr;
          val = static_cast<double>(iv);
        } else if (ok) {
          auto rv = std::from_chars(q, e, val);
          ok = rv.ec == std::errc() && std::isfinite(val);
          q = rv.ptr;
        }
      }
      if (ok) blanks();
      ok = ok && q == e && r >= 1 && r <= h.rows && c >= 1 && c <= h.cols && !(skew && r == c);
      if (ok) {
        ri.push_back(static_cast<std::int32_t>(r - 1));
        ci.push_back(static_cast<std::int32_t>(c - 1));
        v.push_back(val);
        if (sym && r != c) {
          ri.push_back(static_cast<std::int32_t>(c - 1));
          ci.push_back(static_cast<std::int32_t>(r - 1));
          v.push_back(skew ? -val : val);
        }
        ++read;
        if (o.progress && read % step == 0) o.progress(read, h.entries);
        continue;
      }
    }
    const auto t = tokens(l);
    const size_t want = hd.pattern ? 2 : 3;
    if (t.size() != want)
      p.fail(t.empty() ? 1 : t.back().second, "entry needs " + std::to_string(want) + " numbers (row col" +
                                                  (hd.pattern ? ")" : " value)") + ", got " + std::to_string(t.size()));
    const std::int64_t r = parse_int(p, t[0].first, t[0].second, "row");
    const std::int64_t c = parse_int(p, t[1].first, t[1].second, "column");
    if (r < 1 || r > h.rows)
      p.fail(t[0].second, "row " + std::to_string(r) + " out of range 1.." + std::to_string(h.rows) + (r == 0 ? " (indices are 1-based)" : ""));
    if (c < 1 || c > h.cols)
      p.fail(t[1].second, "column " + std::to_string(c) + " out of range 1.." + std::to_string(h.cols) + (c == 0 ? " (indices are 1-based)" : ""));
    double val = 1.0;
    if (!hd.pattern) {
      if (h.field == "integer") val = static_cast<double>(parse_int(p, t[2].first, t[2].second, "value"));
      else val = parse_real(p, t[2].first, t[2].second);
    }
    if (skew && r == c) p.fail(t[0].second, "skew-symmetric matrix has a diagonal entry (it must be zero and absent)");
    ri.push_back(static_cast<std::int32_t>(r - 1));
    ci.push_back(static_cast<std::int32_t>(c - 1));
    v.push_back(val);
    // Symmetric files store one triangle (either is accepted); the other is mirrored.
    if (sym && r != c) {
      ri.push_back(static_cast<std::int32_t>(c - 1));
      ci.push_back(static_cast<std::int32_t>(r - 1));
      v.push_back(skew ? -val : val);
    }
    ++read;
    if (o.progress && read % step == 0) o.progress(read, h.entries);
  }
  if (read < h.entries) {
    ++p.line;  // where the first missing entry should be
    p.fail(1, "truncated: " + std::to_string(read) + " entries, the size line declares " + std::to_string(h.entries));
  }
  if (static_cast<std::int64_t>(ri.size()) > o.max_nnz)
    p.fail(1, std::to_string(ri.size()) + " entries after mirroring: above " + std::to_string(o.max_nnz) + " (int32 indices)");
  if (o.progress) o.progress(read, h.entries);
  CsrMatrix a = coo_to_csr(static_cast<std::int32_t>(h.rows), static_cast<std::int32_t>(h.cols), ri, ci, v);
  a.name = std::filesystem::path(path).stem().string();
  a.source = path;
  return a;
}

void write_matrix_market(const CsrMatrix& a, const std::string& path) {
  std::string out;
  out.reserve(static_cast<size_t>(a.nnz()) * 32 + 128);
  out += "%%MatrixMarket matrix coordinate real general\n% written by ceiling: " + a.name + "\n";
  out += std::to_string(a.rows) + " " + std::to_string(a.cols) + " " + std::to_string(a.nnz()) + "\n";
  char buf[96];
  for (std::int32_t r = 0; r < a.rows; ++r)
    for (auto k = a.row_ptr[static_cast<size_t>(r)]; k < a.row_ptr[static_cast<size_t>(r) + 1]; ++k) {
      const int n = std::snprintf(buf, sizeof buf, "%d %d %.17g\n", r + 1, a.col[static_cast<size_t>(k)] + 1, a.val[static_cast<size_t>(k)]);
      out.append(buf, static_cast<size_t>(n));
    }
  write_file_atomically(path, out);
}

// ---- Table 2 generators -----------------------------------------------------------------------

const std::vector<SuiteMatrix>& table2_suite() {
  static const std::vector<SuiteMatrix> t{
      {"D1", "dc2", 116835, 766396, "circuit"},
      {"D2", "scircuit", 170998, 958936, "circuit"},
      {"D3", "mac_econ_fwd500", 206500, 1273389, "economics"},
      {"D4", "conf5_4x8x-10", 49152, 1916928, "qcd"},
      {"D5", "mc2depi", 525825, 2100225, "banded"},
      {"D6", "rma10", 46835, 2374001, "fem-banded"},
      {"D7", "cop20k_A", 121192, 2624331, "fem-irregular"},
      {"D8", "webbase-1M", 1000005, 3105536, "web-graph"},
      {"D9", "ASIC_680k", 682862, 3871773, "circuit"},
      {"D10", "cant", 62451, 4007383, "fem-banded"},
      {"D11", "pdb1HYS", 36417, 4344765, "fem-banded"},
      {"D12", "consph", 83334, 6010480, "fem-banded"},
      {"D13", "shipsec1", 140874, 7813404, "fem-banded"},
      {"D14", "mip1", 66463, 10352819, "dense-blocks"},
      {"D15", "pwtk", 217918, 11634424, "fem-banded"},
      {"D16", "Si41Ge41H72", 185639, 15011265, "quantum-chemistry"},
      {"D17", "in-2004", 1382908, 16917053, "web-graph"},
      {"D18", "Ga41As41H72", 268096, 18488476, "quantum-chemistry"},
      {"D19", "eu-2005", 862664, 19235140, "web-graph"},
      {"D20", "FullChip", 2987012, 26621990, "circuit"},
      {"D21", "circuit5M", 5558326, 59524291, "circuit"},
  };
  return t;
}

const SuiteMatrix& table2_matrix(const std::string& name_or_code) {
  for (const auto& m : table2_suite())
    if (m.name == name_or_code || m.code == name_or_code) return m;
  std::string names;
  for (const auto& m : table2_suite()) names += (names.empty() ? "" : ", ") + m.name;
  throw std::invalid_argument("unknown matrix '" + name_or_code + "' in table2 (one of " + names + ", or D1..D21)");
}

namespace {

struct Rng {  // xoshiro256**, seeded by splitmix64: the same stream everywhere
  std::uint64_t s[4];
  explicit Rng(std::uint64_t seed) {
    for (auto& x : s) {
      seed += 0x9E3779B97F4A7C15ull;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      x = z ^ (z >> 31);
    }
  }
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t next() {
    const std::uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }                  // [0, 1)
  std::int64_t below(std::int64_t n) { return n <= 1 ? 0 : static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(n)); }
  double normal() {  // Box-Muller
    const double u = std::max(uniform(), 1e-300), v = uniform();
    return std::sqrt(-2 * std::log(u)) * std::cos(2 * std::numbers::pi * v);
  }
};

// Row lengths drawn from the family, then scaled and nudged so they sum to exactly nnz, each in [0, cols].
std::vector<std::int64_t> row_lengths(const std::string& family, std::int64_t rows, std::int64_t cols, std::int64_t nnz, Rng& g) {
  const double mu = static_cast<double>(nnz) / static_cast<double>(rows);
  std::vector<double> w(static_cast<size_t>(rows));
  for (auto& x : w) {
    const double u = std::max(g.uniform(), 1e-12);
    if (family == "qcd" || family == "banded") x = mu;
    else if (family == "fem-banded") x = mu * (0.75 + 0.5 * u);
    else if (family == "fem-irregular") x = mu * std::exp(0.45 * g.normal() - 0.1);
    else if (family == "dense-blocks") x = mu * std::exp(0.7 * g.normal() - 0.245) * (g.uniform() < 0.01 ? 8 : 1);
    else if (family == "quantum-chemistry") x = mu * std::exp(0.9 * g.normal() - 0.405);
    else if (family == "web-graph") x = std::min(static_cast<double>(cols) / 4, 0.45 * mu * std::pow(u, -1.0 / 1.8));  // Pareto
    else if (family == "economics") x = 1 + (mu - 1) * -std::log(u);
    else x = 1 + (mu - 1) * 0.8 * -std::log(u);  // circuit: short rows
  }
  if (family == "circuit") {  // a few very dense rows (supply nets): ~8% of the entries
    const std::int64_t dense = std::max<std::int64_t>(1, rows / 60000);
    for (std::int64_t d = 0; d < dense; ++d)
      w[static_cast<size_t>(g.below(rows))] = 0.08 * static_cast<double>(nnz) / static_cast<double>(dense);
  }
  double sum = std::accumulate(w.begin(), w.end(), 0.0);
  std::vector<std::int64_t> len(static_cast<size_t>(rows));
  std::int64_t total = 0;
  const bool blocks3 = family == "fem-banded";
  for (size_t r = 0; r < len.size(); ++r) {
    double x = w[r] * static_cast<double>(nnz) / sum;
    if (blocks3) x = std::round(x / 3) * 3;  // 3x3 blocks (3 degrees of freedom per node)
    len[r] = std::clamp<std::int64_t>(static_cast<std::int64_t>(std::llround(x)), 0, cols);
    total += len[r];
  }
  // Nudge to exactly nnz: +-1 on random rows (the constant-length families stay within one).
  std::int64_t guard = 0;
  while (total != nnz && guard++ < 64 * rows + 1000000) {
    const size_t r = static_cast<size_t>(g.below(rows));
    if (total < nnz && len[r] < cols) ++len[r], ++total;
    else if (total > nnz && len[r] > (family == "web-graph" || family == "economics" || family == "circuit" ? 1 : 0)) --len[r], --total;
  }
  if (total != nnz) throw std::logic_error("generate_table2: could not reach nnz");
  return len;
}

// `n` distinct sorted columns of row r for the family.
void row_columns(const std::string& family, std::int64_t r, std::int64_t n, std::int64_t rows, std::int64_t cols, Rng& g,
                 std::vector<std::int32_t>& out) {
  out.clear();
  if (n == 0) return;
  const auto clampc = [&](std::int64_t c) { return static_cast<std::int32_t>(((c % cols) + cols) % cols); };
  const std::int64_t grid = std::max<std::int64_t>(2, static_cast<std::int64_t>(std::sqrt(static_cast<double>(rows))));
  if (n >= cols) {
    for (std::int64_t c = 0; c < cols; ++c) out.push_back(static_cast<std::int32_t>(c));
    return;
  }
  if (family == "fem-banded" || family == "dense-blocks") {
    // Dense runs of 3 (nodes) around the diagonal and one or two neighbour bands.
    const int bands = n > 40 ? 3 : n > 12 ? 2 : 1;
    const std::int64_t per = (n + bands - 1) / bands;
    for (int b = 0; b < bands; ++b) {
      const std::int64_t centre = r + (b == 0 ? 0 : (b == 1 ? grid : -grid)) + g.below(7) - 3;
      const std::int64_t start = std::clamp<std::int64_t>(centre - per / 2, 0, std::max<std::int64_t>(0, cols - per));
      for (std::int64_t k = 0; k < per; ++k) out.push_back(static_cast<std::int32_t>(std::min(cols - 1, start + k)));
    }
  } else if (family == "qcd" || family == "banded") {
    static const std::int64_t offs[] = {0, 1, -1, 2, -2, 3, -3, 8, -8, 9, -9, 10, -10, 64, -64, 65, -65, 66, -66, 512,
                                        -512, 513, -513, 514, -514, 4096, -4096, 4097, -4097, 4098, -4098, 24576, -24576,
                                        24577, -24577, 24578, -24578, 12288, -12288};
    if (family == "banded") {
      const std::int64_t b[] = {0, -1, 1, -grid, grid};
      for (std::int64_t k = 0; k < n && k < 5; ++k) out.push_back(clampc(r + b[k]));
    } else {
      for (std::int64_t k = 0; k < n && k < 39; ++k) out.push_back(clampc(r + offs[k]));
    }
  } else if (family == "web-graph") {
    // Host locality: most links near the page, the rest to popular pages (low ids, power law).
    for (std::int64_t k = 0; k < n; ++k) {
      if (g.uniform() < 0.6) out.push_back(clampc(r + g.below(2001) - 1000));
      else out.push_back(static_cast<std::int32_t>(static_cast<double>(cols) * std::pow(g.uniform(), 3.0)));
    }
  } else if (family == "quantum-chemistry") {
    for (std::int64_t k = 0; k < n; ++k) {
      if (g.uniform() < 0.5) out.push_back(clampc(r + g.below(4001) - 2000));
      else out.push_back(clampc(r + g.below(rows / 2 + 1) - rows / 4));
    }
  } else if (family == "economics" || family == "fem-irregular") {
    const std::int64_t w = family == "economics" ? std::max<std::int64_t>(10, cols / 20) : std::max<std::int64_t>(10, grid * 4);
    for (std::int64_t k = 0; k < n; ++k) out.push_back(clampc(r + g.below(2 * w + 1) - w));
  } else {  // circuit: the diagonal, near neighbours, some far nets; dense rows spread everywhere
    out.push_back(static_cast<std::int32_t>(r % cols));
    for (std::int64_t k = 1; k < n; ++k) {
      if (n > 1000 || g.uniform() < 0.3) out.push_back(static_cast<std::int32_t>(g.below(cols)));
      else out.push_back(clampc(r + g.below(101) - 50));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (static_cast<std::int64_t>(out.size()) > n) out.resize(static_cast<size_t>(n));
  // Top up with random distinct columns near the row, then anywhere.
  std::int64_t tries = 0;
  while (static_cast<std::int64_t>(out.size()) < n) {
    const std::int64_t want = n - static_cast<std::int64_t>(out.size());
    for (std::int64_t k = 0; k < want; ++k)
      out.push_back(tries < 4 ? clampc(r + g.below(4 * n + 64) - 2 * n - 32) : static_cast<std::int32_t>(g.below(cols)));
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    ++tries;
  }
  if (static_cast<std::int64_t>(out.size()) > n) out.resize(static_cast<size_t>(n));
}

}  // namespace

CsrMatrix generate_table2(const std::string& name_or_code, double scale, std::uint64_t seed) {
  const SuiteMatrix& m = table2_matrix(name_or_code);
  if (!(scale > 0) || scale > 1) throw std::invalid_argument("generate_table2: scale must be in (0, 1], got " + std::to_string(scale));
  const std::int64_t rows = std::max<std::int64_t>(8, std::llround(static_cast<double>(m.rows) * scale));
  const std::int64_t nnz = std::clamp<std::int64_t>(std::llround(static_cast<double>(m.nnz) * scale), rows, rows * rows);
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a of the name: each matrix its own stream
  for (const char c : m.name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  Rng g(seed * 0x9E3779B97F4A7C15ull ^ h);
  const auto len = row_lengths(m.family, rows, rows, nnz, g);
  CsrMatrix a;
  a.name = m.name;
  a.source = "generated: table2 " + m.name + " (" + m.family + "), scale " + std::to_string(scale) + ", seed " + std::to_string(seed);
  a.rows = static_cast<std::int32_t>(rows);
  a.cols = static_cast<std::int32_t>(rows);
  a.row_ptr.resize(static_cast<size_t>(rows) + 1);
  a.col.reserve(static_cast<size_t>(nnz));
  a.val.reserve(static_cast<size_t>(nnz));
  std::vector<std::int32_t> cols;
  for (std::int64_t r = 0; r < rows; ++r) {
    row_columns(m.family, r, len[static_cast<size_t>(r)], rows, rows, g, cols);
    for (const auto c : cols) {
      a.col.push_back(c);
      a.val.push_back(0.5 + g.uniform());
    }
    a.row_ptr[static_cast<size_t>(r) + 1] = static_cast<std::int32_t>(a.col.size());
  }
  return a;
}

}  // namespace ceiling
