// The strict Matrix Market reader and the writer (model/sparse_matrix.hpp): every bad input is one
// line "file:line:column: cause", good files become sorted CSR with symmetric entries mirrored.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "scratch.hpp"
#include "model/input_error.hpp"
#include "model/sparse_matrix.hpp"

using namespace ceiling;
namespace fs = std::filesystem;
using test::message_of;

namespace {

const std::string kGeneral = "%%MatrixMarket matrix coordinate real general\n";

// One scratch directory for the small files, removed at exit.
struct CaseDir {
  fs::path dir = test::scratch_dir("mtx", "cases");
  int next = 0;
  ~CaseDir() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

// `text` as <scratch>/<n>/<name>.
fs::path mtx(const std::string& text, const std::string& name = "a.mtx") {
  static CaseDir cases;
  const fs::path p = cases.dir / std::to_string(cases.next++) / name;
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

// The message of reading `text`; checks it is one line, an InputFileError naming the file and `line`.
std::string refusal(const std::string& text, int line, const MatrixReadOptions& options = {}) {
  const fs::path p = mtx(text);
  std::string what = "(no error)";
  try {
    read_matrix_market(p.string(), options);
  } catch (const InputFileError& e) {
    what = e.what();
    CHECK(e.file() == p.string());
    CHECK(e.line() == line);
  } catch (const std::exception& e) {
    what = std::string("not an InputFileError: ") + e.what();
  }
  CHECK(what.find('\n') == std::string::npos);
  CHECK(what.rfind(p.string() + ":" + std::to_string(line) + ":", 0) == 0);
  return what;
}

bool has(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return true;
  MESSAGE("'" << part << "' not in: " << text);
  return false;
}

}  // namespace

TEST_CASE("matrix market: a general real file becomes sorted CSR with duplicates summed") {
  const fs::path p = mtx(kGeneral + "% a comment\n%\n\n3 4 6\n3 2 -1.5\n1 4 2e0\n1 1 1\n\n1 4 0.25\n2 3 +7\n3 1 .5\n", "tiny.mtx");
  const CsrMatrix a = read_matrix_market(p.string());
  CHECK_NOTHROW(check_csr(a));
  CHECK(a.name == "tiny");
  CHECK(a.source == p.string());
  CHECK(a.rows == 3);
  CHECK(a.cols == 4);
  CHECK(a.row_ptr == std::vector<std::int32_t>{0, 2, 3, 5});
  CHECK(a.col == std::vector<std::int32_t>{0, 3, 2, 0, 1});
  CHECK(a.val == std::vector<double>{1, 2.25, 7, 0.5, -1.5});
}

TEST_CASE("matrix market: duplicates whose sum is past a double are refused (found by the fuzzer)") {
  const fs::path p = mtx(kGeneral + "2 2 3\n1 1 1e308\n2 2 1\n1 1 1e308\n", "overflow.mtx");
  const std::string e = message_of([&] { read_matrix_market(p.string()); });
  CHECK(has(e, p.string()));
  CHECK(has(e, "duplicates of entry (1, 1) sum to a value past a double"));
  CHECK(e.find('\n') == std::string::npos);
  // An index of 20 digits (the fast path once multiplied it past int64: UB, found by the fuzzer).
  const fs::path q = mtx(kGeneral + "3 3 1\n1 44444444444444444441 4\n", "digits.mtx");
  const std::string d = message_of([&] { read_matrix_market(q.string()); });
  CHECK(has(d, q.string() + ":3:3: column index '44444444444444444441' is too large"));
  CHECK(d.find('\n') == std::string::npos);
  // Large but finite sums load.
  CHECK(read_matrix_market(mtx(kGeneral + "1 1 2\n1 1 1e307\n1 1 1e307\n", "big.mtx").string()).val ==
        std::vector<double>{2e307});
}

TEST_CASE("matrix market: symmetric, skew-symmetric, pattern and integer files") {
  SUBCASE("symmetric: off-diagonal entries mirrored, the diagonal once; either triangle accepted") {
    // Lower triangle as the spec stores it, plus one upper entry (1, 3) that some writers emit.
    const CsrMatrix a = read_matrix_market(
        mtx("%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 4\n2 1 1\n3 3 5\n1 3 2\n").string());
    CHECK(a.nnz() == 6);  // 2 diagonal + 2 x 2 off-diagonal
    CHECK(a.row_ptr == std::vector<std::int32_t>{0, 3, 4, 6});
    CHECK(a.col == std::vector<std::int32_t>{0, 1, 2, 0, 0, 2});
    CHECK(a.val == std::vector<double>{4, 1, 2, 1, 2, 5});
    const MatrixMarketHeader h = read_matrix_market_header(mtx("%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 4\n2 1 1\n3 3 5\n1 3 2\n").string());
    CHECK(h.rows == 3);
    CHECK(h.cols == 3);
    CHECK(h.entries == 4);  // as declared, before mirroring
    CHECK(h.symmetry == "symmetric");
    CHECK(h.field == "real");
  }
  SUBCASE("skew-symmetric: the mirror negated") {
    const CsrMatrix a = read_matrix_market(mtx("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 3\n").string());
    CHECK(a.col == std::vector<std::int32_t>{1, 0});
    CHECK(a.val == std::vector<double>{-3, 3});
  }
  SUBCASE("pattern: every value is 1 (symmetric pattern mirrored too)") {
    const CsrMatrix a = read_matrix_market(mtx("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n1 1\n3 1\n3 2\n").string());
    CHECK(a.nnz() == 5);
    CHECK(a.val == std::vector<double>(5, 1.0));
    CHECK(read_matrix_market_header(mtx("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1\n").string()).field == "pattern");
  }
  SUBCASE("integer") {
    const CsrMatrix a = read_matrix_market(mtx("%%MatrixMarket matrix coordinate integer general\n1 2 2\n1 1 -3\n1 2 12\n").string());
    CHECK(a.val == std::vector<double>{-3, 12});
  }
  SUBCASE("keywords in any case, CRLF line endings, blank lines anywhere, no final newline") {
    const CsrMatrix a = read_matrix_market(mtx("%%MatrixMarket Matrix Coordinate REAL General\r\n\r\n% c\r\n2 2 2\r\n\r\n1 1 1.0\r\n  2\t2   2.0").string());
    CHECK(a.nnz() == 2);
    CHECK(a.val == std::vector<double>{1, 2});
  }
}

TEST_CASE("matrix market: progress is reported at the end with (read, declared)") {
  std::vector<std::pair<std::int64_t, std::int64_t>> calls;
  MatrixReadOptions o;
  o.progress = [&](std::int64_t done, std::int64_t total) { calls.emplace_back(done, total); };
  read_matrix_market(mtx(kGeneral + "2 2 3\n1 1 1\n2 2 1\n1 2 1\n").string(), o);
  REQUIRE(!calls.empty());
  CHECK(calls.back() == std::pair<std::int64_t, std::int64_t>{3, 3});
}

TEST_CASE("matrix market: each bad input is one line naming file:line and the cause") {
  SUBCASE("truncated: fewer entries than declared") {
    CHECK(has(refusal(kGeneral + "3 3 4\n1 1 1\n2 2 1\n", 5), ":5:1: truncated: 2 entries where the size line (line 2) declares 4"));
    // cut in the middle of an entry
    CHECK(has(refusal(kGeneral + "3 3 2\n1 1 1.0000000000\n2 2", 4), "entry needs 3 numbers 'row column value', this line has 2"));
  }
  SUBCASE("a size line whose count lies: more entries than declared") {
    CHECK(has(refusal(kGeneral + "3 3 2\n1 1 1\n2 2 1\n3 3 1\n", 5), ":5:1: more entries than the 2 entries the size line (line 2) declares"));
  }
  SUBCASE("a row index out of range, with its column") {
    const std::string m = refusal(kGeneral + "3 3 1\n4 1 1\n", 3);
    CHECK(has(m, ":3:1: row 4 out of range 1..3"));
  }
  SUBCASE("a column index out of range, with its column") {
    CHECK(has(refusal(kGeneral + "3 3 2\n1 1 1\n2   9 1\n", 4), ":4:5: column 9 out of range 1..3"));
  }
  SUBCASE("zero-based indices") {
    CHECK(has(refusal(kGeneral + "3 3 1\n0 1 1\n", 3), "row 0 out of range 1..3 (Matrix Market indices are 1-based)"));
    CHECK(has(refusal(kGeneral + "3 3 1\n1 0 1\n", 3), "column 0 out of range 1..3 (Matrix Market indices are 1-based)"));
  }
  SUBCASE("a negative index") { CHECK(has(refusal(kGeneral + "3 3 1\n-1 1 1\n", 3), "row -1 out of range")); }
  SUBCASE("a non-numeric value, with its column") {
    CHECK(has(refusal(kGeneral + "3 3 1\n1 1 abc\n", 3), ":3:5: value 'abc' is not a number"));
    CHECK(has(refusal(kGeneral + "3 3 1\n1 1 1.5x\n", 3), "value '1.5x' is not a number"));
    CHECK(has(refusal(kGeneral + "3 3 1\n1 1 1,5\n", 3), "is not a number"));
    CHECK(has(refusal(kGeneral + "3 3 1\n1 1 0x10\n", 3), "is not a number"));
  }
  SUBCASE("a non-numeric or fractional index") {
    CHECK(has(refusal(kGeneral + "3 3 1\nx 1 1\n", 3), "row index 'x' is not a whole number"));
    CHECK(has(refusal(kGeneral + "3 3 1\n1 1.0 1\n", 3), "column index '1.0' is not a whole number"));
    CHECK(has(refusal(kGeneral + "3 3 1\n99999999999999999999 1 1\n", 3), "is too large"));
  }
  SUBCASE("a fractional value in an integer file") {
    CHECK(has(refusal("%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 1.5\n", 3), "value '1.5' is not a whole number"));
  }
  SUBCASE("NaN and infinite values") {
    CHECK(has(refusal(kGeneral + "3 3 1\n1 1 nan\n", 3), "value 'nan' is not finite"));
    CHECK(has(refusal(kGeneral + "3 3 1\n1 1 -inf\n", 3), "value '-inf' is not finite"));
    CHECK(has(refusal(kGeneral + "3 3 1\n1 1 Infinity\n", 3), "not finite"));
    CHECK(has(refusal(kGeneral + "3 3 1\n1 1 1e400\n", 3), "value '1e400' is out of the range of a double"));
  }
  SUBCASE("an empty matrix: rows and columns but no entries") {
    CHECK(has(refusal(kGeneral + "3 3 0\n", 2), "empty matrix: 0 entries, nothing to multiply"));
  }
  SUBCASE("a 0x0 header") {
    CHECK(has(refusal(kGeneral + "0 0 0\n", 2), "empty matrix (0 x 0): nothing to multiply"));
    CHECK(has(refusal(kGeneral + "5 0 0\n", 2), "empty matrix (5 x 0)"));
  }
  SUBCASE("negative sizes") {
    CHECK(has(refusal(kGeneral + "-3 3 1\n1 1 1\n", 2), ":2:1: negative size: rows -3"));
    CHECK(has(refusal(kGeneral + "3 3 -1\n1 1 1\n", 2), "negative size: entries -1"));
  }
  SUBCASE("a claim far beyond what the file's bytes can hold is refused before allocating") {
    const auto start = std::chrono::steady_clock::now();
    CHECK(has(refusal(kGeneral + "1000000 1000000 2500000000\n1 1 1\n", 2),
              ":2:17: the size line declares 2500000000 entries but the rest of the file (6 bytes) cannot hold that many"));
    CHECK(has(refusal(kGeneral + "1000 1000 4200\n1 1 1\n", 2), "the header lies or the file is truncated"));
    // a little short: read to its end, then "truncated" at the first missing entry
    CHECK(has(refusal(kGeneral + "1000 1000 4000\n1 1 1\n", 4), "truncated: 1 entries where the size line (line 2) declares 4000"));
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
  }
  SUBCASE("more entries than int32 indices allow") {
    CHECK(has(refusal(kGeneral + "3000000000 3 1\n1 1 1\n", 2), "needs 64-bit indices: ceiling uses int32"));
    MatrixReadOptions o;
    o.max_nnz = 3;
    CHECK(has(refusal(kGeneral + "3 3 4\n1 1 1\n2 2 1\n3 3 1\n1 2 1\n", 2, o), "the size line declares 4 entries: above 3 (int32 indices)"));
    CHECK(has(refusal("%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 1\n2 1 1\n3 1 1\n", 5, o),
              "more than 3 entries after mirroring the symmetric entries: above 3 (int32 indices)"));
  }
  SUBCASE("a missing or wrong banner") {
    CHECK(has(refusal("3 3 1\n1 1 1\n", 1), ":1:1: no '%%MatrixMarket' banner"));
    CHECK(has(refusal("%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1\n", 1), "no '%%MatrixMarket' banner"));
    CHECK(has(refusal("%%MatrixMarket matrix coordinate real\n3 3 1\n1 1 1\n", 1), "incomplete banner"));
    CHECK(has(refusal("%%MatrixMarket vector coordinate real general\n3 1\n1 1\n", 1), ":1:16: object 'vector' is not supported"));
    CHECK(has(refusal("%%MatrixMarket matrix coordinate real general extra\n3 3 1\n1 1 1\n", 1), "extra word 'extra' on the banner line"));
    CHECK(has(refusal("%%MatrixMarket matrix coordinate real upper\n3 3 1\n1 1 1\n", 1), "symmetry 'upper' is not general"));
    CHECK(has(refusal("%%MatrixMarket matrix coordinate double general\n3 3 1\n1 1 1\n", 1), "field 'double' is not real"));
  }
  SUBCASE("array format") {
    CHECK(has(refusal("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", 1),
              ":1:23: array (dense) format is not supported: ceiling reads coordinate (sparse) files"));
  }
  SUBCASE("complex and hermitian") {
    CHECK(has(refusal("%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1 0\n", 1), "complex values are not supported"));
    CHECK(has(refusal("%%MatrixMarket matrix coordinate real hermitian\n2 2 1\n1 1 1\n", 1), "hermitian matrices are not supported"));
  }
  SUBCASE("extra tokens on a line") {
    CHECK(has(refusal(kGeneral + "3 3 1\n1 1 1 7\n", 3), ":3:7: entry needs 3 numbers 'row column value', this line has more: extra word '7'"));
    CHECK(has(refusal("%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 1\n", 3), "entry needs 2 numbers 'row column', this line has more: extra word '1'"));
    CHECK(has(refusal(kGeneral + "3 3 1 1\n1 1 1\n", 2), "extra word '1' after 'rows columns entries'"));
  }
  SUBCASE("missing tokens on a line") {
    CHECK(has(refusal(kGeneral + "3 3 1\n1 1     \n", 3), ":3:9: entry needs 3 numbers 'row column value', this line has 2"));
    CHECK(has(refusal(kGeneral + "3 3\n1 1 1\n", 2), "size line needs 3 numbers 'rows columns entries', it has 2"));
  }
  SUBCASE("a skew-symmetric file with a diagonal entry") {
    CHECK(has(refusal("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n2 2 1\n", 4), "skew-symmetric matrix has a diagonal entry (2, 2)"));
  }
  SUBCASE("a symmetric file that is not square") {
    CHECK(has(refusal("%%MatrixMarket matrix coordinate real symmetric\n3 4 1\n1 1 1\n", 2), "a symmetric matrix must be square, this one is 3 x 4"));
  }
  SUBCASE("an empty file, or one without a size line") {
    CHECK(has(refusal("", 1), "empty file"));
    CHECK(has(refusal(kGeneral + "% only comments\n", 2), "the file ends before the size line"));
  }
  SUBCASE("binary junk") { CHECK(has(refusal(std::string("\0\x01\x02garbage", 10), 1), "no '%%MatrixMarket' banner")); }
}

TEST_CASE("matrix market: a directory, a missing file and a non-regular file are refused with their name") {
  const fs::path dir = test::scratch_dir("mtx", "dir");
  for (const auto& reader : {+[](const std::string& p) { read_matrix_market(p); },
                             +[](const std::string& p) { read_matrix_market_header(p); }}) {
    std::string m = message_of([&] { reader(dir.string()); });
    CHECK(has(m, dir.string() + ":0:0: is a directory, not a Matrix Market file"));
    m = message_of([&] { reader((dir / "missing.mtx").string()); });
    CHECK(has(m, (dir / "missing.mtx").string() + ":0:0: cannot open the Matrix Market file"));
    if (fs::exists("/dev/null")) CHECK(has(message_of([&] { reader("/dev/null"); }), "/dev/null:0:0: not a regular file"));
  }
  fs::remove_all(dir);
}

TEST_CASE("matrix market: the header reader checks what the header says and reads no entries") {
  CHECK(has(message_of([] { read_matrix_market_header(mtx("%%MatrixMarket matrix array real general\n2 2\n").string()); }),
            "array (dense) format is not supported"));
  CHECK(has(message_of([] { read_matrix_market_header(mtx(kGeneral + "9 9 1000000000\n1 1 1\n").string()); }), "cannot hold that many"));
  // entries after the size line are not read: a bad one is found only by the full reader
  const MatrixMarketHeader h = read_matrix_market_header(mtx(kGeneral + "% c\n4 5 2\n1 1 1\n1 1 oops\n").string());
  CHECK(h.rows == 4);
  CHECK(h.cols == 5);
  CHECK(h.entries == 2);
  CHECK(h.symmetry == "general");
}

TEST_CASE("matrix market: write then read gives the same matrix, values to the last bit") {
  const fs::path dir = test::scratch_dir("mtx", "roundtrip");
  CsrMatrix a = generate_table2("dc2", 0.01, 7);
  a.val[0] = 1.0 / 3.0;
  a.val[1] = -2.5e-300;
  a.val[2] = 1.7976931348623157e308;
  a.val[3] = 5e-324;
  const fs::path p = dir / "sub" / "dc2.mtx";
  write_matrix_market(a, p.string());
  const CsrMatrix b = read_matrix_market(p.string());
  CHECK(b.rows == a.rows);
  CHECK(b.cols == a.cols);
  CHECK(b.row_ptr == a.row_ptr);
  CHECK(b.col == a.col);
  CHECK(b.val == a.val);
  CHECK(b.name == "dc2");
  const MatrixMarketHeader h = read_matrix_market_header(p.string());
  CHECK(h.entries == a.nnz());
  CHECK(h.field == "real");
  CHECK(h.symmetry == "general");
  CHECK(test::slurp(p).rfind("%%MatrixMarket matrix coordinate real general\n", 0) == 0);

  CsrMatrix broken = a;
  broken.col[0] = a.cols;
  CHECK(has(message_of([&] { write_matrix_market(broken, (dir / "broken.mtx").string()); }), "out of range"));
  CHECK(!fs::exists(dir / "broken.mtx"));
  fs::remove_all(dir);
}

TEST_CASE("matrix market: a large file is read in parallel parts, errors still name their line") {
  // 400 000 distinct entries (~6 MB): several blocks and parts; a comment and blank lines in the middle.
  constexpr int kEntries = 400000, kRows = 20000;
  const auto body = [&](int bad_at, const std::string& bad) {
    std::string text = kGeneral + "% big\n" + std::to_string(kRows) + " " + std::to_string(kRows) + " " + std::to_string(kEntries) + "\n";
    for (int k = 0; k < kEntries; ++k) {
      if (k == 123457) text += "% a comment among the entries\n\n";
      if (k == bad_at) {
        text += bad + "\n";
        continue;
      }
      text += std::to_string(k % kRows + 1) + " " + std::to_string(k / kRows * 1000 + k % 997 + 1) + " " + std::to_string(k) + ".25\n";
    }
    return text;
  };
  // line of entry k: banner, comment, size line, then entries (two more lines from entry 123457 on)
  const auto line_of = [](int k) { return 3 + k + 1 + (k >= 123457 ? 2 : 0); };
  const CsrMatrix a = read_matrix_market(mtx(body(-1, "")).string());
  CHECK(a.nnz() == kEntries);
  CHECK_NOTHROW(check_csr(a));
  double sum = 0;
  for (const double v : a.val) sum += v;
  CHECK(sum == ceiling_test::Rel(0.5 * kEntries * (kEntries - 1.0) + 0.25 * kEntries));
  CHECK(has(refusal(body(350001, "1 1 oops"), line_of(350001)), ":5: value 'oops' is not a number"));
  CHECK(has(refusal(body(299999, "1 0 1"), line_of(299999)), "column 0 out of range"));
  CHECK(has(refusal(body(5, "1 1 1 1"), line_of(5)), "extra word"));
  CHECK(has(refusal(body(kEntries - 1, "20001 1 1"), line_of(kEntries - 1)), "row 20001 out of range 1..20000"));
  // one entry too many at the end, and one too few
  CHECK(has(refusal(body(-1, "") + "1 1 1\n", line_of(kEntries)), "more entries than the 400000 entries"));
  std::string short_text = body(-1, "");
  short_text.resize(short_text.rfind('\n', short_text.size() - 2) + 1);  // the last entry removed
  CHECK(has(refusal(short_text, line_of(kEntries - 1)), "truncated: 399999 entries where the size line (line 3) declares 400000"));
  MatrixReadOptions o;
  o.max_nnz = 300000;
  CHECK(has(refusal(body(-1, ""), 2 + 1, o), "declares 400000 entries: above 300000 (int32 indices)"));
}

TEST_CASE("matrix market: a 10 GB file of zeros behind its header is refused without reading it all") {
  const fs::path p = mtx(kGeneral + "1000000 1000000 1000000000\n", "zeros.mtx");
  std::error_code ec;
  fs::resize_file(p, std::uintmax_t{10} << 30, ec);  // sparse on the usual file systems
  if (ec) {
    MESSAGE("no 10 GB sparse file here (" << ec.message() << "): skipped");
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  const std::string m = message_of([&] { read_matrix_market(p.string()); });
  CHECK(has(m, p.string() + ":3:1: line longer than 64 MiB: not a Matrix Market file"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  fs::remove(p);
}

// Run explicitly: ceiling_tests -tc='*60M*' --no-skip. Writes ~2.4 GB under the temp directory.
TEST_CASE("matrix market: write and read circuit5M, 59.5 M entries (timing)" * doctest::skip()) {
  using clock = std::chrono::steady_clock;
  const auto seconds = [](clock::duration d) { return std::chrono::duration<double>(d).count(); };
  const fs::path dir = test::scratch_dir("mtx", "60M");
  const fs::path p = dir / "circuit5M.mtx";
  auto t = clock::now();
  const CsrMatrix a = generate_table2("circuit5M");
  const double generate_s = seconds(clock::now() - t);
  t = clock::now();
  write_matrix_market(a, p.string());
  const double write_s = seconds(clock::now() - t);
  MatrixReadOptions o;
  int calls = 0;
  o.progress = [&](std::int64_t, std::int64_t) { ++calls; };
  t = clock::now();
  const CsrMatrix b = read_matrix_market(p.string(), o);
  const double read_s = seconds(clock::now() - t);
  MESSAGE("circuit5M: " << a.nnz() << " entries, file " << fs::file_size(p) / 1e9 << " GB; generate " << generate_s
                        << " s, write " << write_s << " s, read " << read_s << " s (" << calls << " progress calls)");
  CHECK(b.row_ptr == a.row_ptr);
  CHECK(b.col == a.col);
  CHECK(b.val == a.val);
  fs::remove_all(dir);
}
