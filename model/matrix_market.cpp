// The strict streaming Matrix Market reader and the writer (model/sparse_matrix.hpp).
// Eigen's loadMarket was not used: it names no line for a bad entry. This reader reads the file in
// blocks of whole lines (4-32 MiB), parses the well-formed entries of a block in parallel parts
// with std::from_chars (no iostreams per token) and anything else in order, so tens of millions of
// entries take seconds and every refusal is one InputFileError "file:line:column: cause".
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "files.hpp"
#include "input_error.hpp"
#include "sparse_matrix.hpp"

namespace ceiling {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kBlockBytes = std::size_t{4} << 20;
constexpr std::size_t kMaxLineBytes = std::size_t{64} << 20;     // a longer line is not Matrix Market
constexpr std::int64_t kProgressEvery = std::int64_t{1} << 22;  // entries between progress calls
constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();

int line_number(std::int64_t line) { return static_cast<int>(std::min<std::int64_t>(line, std::numeric_limits<int>::max())); }

// The file as lines, read in large blocks: no copy of a line, no allocation per line.
class LineReader {
 public:
  explicit LineReader(std::string path) : path_(std::move(path)) {
    std::error_code ec;
    const fs::file_status st = fs::status(path_, ec);
    if (st.type() == fs::file_type::not_found)
      throw InputFileError(path_, 0, 0, "", "cannot open the Matrix Market file (no such file)");
    if (ec) throw InputFileError(path_, 0, 0, "", "cannot open the Matrix Market file (" + ec.message() + ")");
    if (fs::is_directory(st)) throw InputFileError(path_, 0, 0, "", "is a directory, not a Matrix Market file");
    if (!fs::is_regular_file(st)) throw InputFileError(path_, 0, 0, "", "not a regular file (a Matrix Market file is)");
    file_ = std::fopen(path_.c_str(), "rb");
    if (!file_)
      throw InputFileError(path_, 0, 0, "", std::string("cannot open the Matrix Market file (") + std::strerror(errno) + ")");
    size_ = static_cast<std::int64_t>(fs::file_size(path_, ec));
    if (ec) size_ = 0;
    buffer_.resize(kBlockBytes);
  }
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;
  ~LineReader() {
    if (file_) std::fclose(file_);
  }

  // The next line without its '\n'; false at the end of the file.
  bool next(std::string_view& line) {
    while (true) {
      if (const void* nl = begin_ < end_ ? std::memchr(buffer_.data() + begin_, '\n', end_ - begin_) : nullptr) {
        const auto at = static_cast<std::size_t>(static_cast<const char*>(nl) - buffer_.data());
        line = std::string_view(buffer_.data() + begin_, at - begin_);
        consumed_ += static_cast<std::int64_t>(at + 1 - begin_);
        begin_ = at + 1;
        ++line_;
        return true;
      }
      if (eof_) {
        if (begin_ == end_) return false;
        line = std::string_view(buffer_.data() + begin_, end_ - begin_);  // the last line has no '\n'
        consumed_ += static_cast<std::int64_t>(end_ - begin_);
        begin_ = end_;
        ++line_;
        return true;
      }
      refill();
    }
  }

  // Whole lines from here: at least `want` bytes unless the file ends first; false at the end.
  bool next_block(std::string_view& block, std::size_t want) {
    if (buffer_.size() < want + kBlockBytes) {
      if (begin_ > 0) compact();
      buffer_.resize(want + kBlockBytes);
    }
    while (true) {
      while (!eof_ && end_ - begin_ < want) refill();
      if (begin_ == end_) return false;
      std::size_t stop = end_;
      if (!eof_) {
        const std::size_t nl = std::string_view(buffer_.data() + begin_, end_ - begin_).rfind('\n');
        if (nl == std::string_view::npos) {  // one line longer than the block: read on
          refill();
          continue;
        }
        stop = begin_ + nl + 1;
      }
      block = std::string_view(buffer_.data() + begin_, stop - begin_);
      consumed_ += static_cast<std::int64_t>(stop - begin_);
      begin_ = stop;
      return true;
    }
  }
  void count_lines(std::int64_t n) { line_ += n; }

  const std::string& path() const { return path_; }
  std::int64_t line() const { return line_; }            // of the line `next` returned last
  std::int64_t bytes_left() const { return size_ - consumed_; }  // after that line

 private:
  void compact() {  // keep the unread bytes, at the front
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }

  void refill() {
    if (begin_ > 0) compact();
    if (end_ == buffer_.size()) {
      if (buffer_.size() >= kMaxLineBytes)
        throw InputFileError(path_, line_number(line_ + 1), 1, "",
                             "line longer than " + std::to_string(kMaxLineBytes >> 20) + " MiB: not a Matrix Market file");
      buffer_.resize(buffer_.size() * 2);
    }
    const std::size_t n = std::fread(buffer_.data() + end_, 1, buffer_.size() - end_, file_);
    if (n == 0) {
      if (std::ferror(file_))
        throw InputFileError(path_, line_number(line_ + 1), 1, "", std::string("read error: ") + std::strerror(errno));
      eof_ = true;
    }
    end_ += n;
  }

  std::string path_;
  std::FILE* file_ = nullptr;
  std::vector<char> buffer_;
  std::size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  std::int64_t line_ = 0, consumed_ = 0, size_ = 0;
};

[[noreturn]] void fail(const LineReader& in, std::int64_t line, std::size_t column, const std::string& cause) {
  throw InputFileError(in.path(), line_number(line), static_cast<int>(std::min<std::size_t>(column, 1u << 30)), "", cause);
}

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// One whitespace-separated word of a line, with its 1-based column.
struct Token {
  std::string_view text;
  std::size_t column = 0;
  bool empty() const { return text.empty(); }
};

// The next word at or after `pos` in `line` (empty at the end of the line).
Token next_token(std::string_view line, std::size_t& pos) {
  while (pos < line.size() && is_blank(line[pos])) ++pos;
  const std::size_t begin = pos;
  while (pos < line.size() && !is_blank(line[pos])) ++pos;
  return {line.substr(begin, pos - begin), begin + 1};
}

// A word quoted in a message: at most 40 characters.
std::string quoted(std::string_view word) {
  std::string out(1, '\'');
  out.append(word.substr(0, 40));
  out.append(word.size() > 40 ? "...'" : "'");
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

std::int64_t parse_whole(const LineReader& in, const Token& t, const char* what) {
  std::int64_t v = 0;
  const char* b = t.text.data();
  const char* e = b + t.text.size();
  if (b != e && *b == '+' && e - b > 1 && b[1] != '-') ++b;
  const auto r = std::from_chars(b, e, v);
  if (r.ec == std::errc::result_out_of_range) fail(in, in.line(), t.column, std::string(what) + " " + quoted(t.text) + " is too large");
  if (r.ec != std::errc() || r.ptr != e) fail(in, in.line(), t.column, std::string(what) + " " + quoted(t.text) + " is not a whole number");
  return v;
}

double parse_real(const LineReader& in, const Token& t) {
  const char* b = t.text.data();
  const char* e = b + t.text.size();
  if (b != e && *b == '+' && e - b > 1 && b[1] != '-') ++b;
  double v = 0;
  const auto r = std::from_chars(b, e, v);
  if (r.ec == std::errc::result_out_of_range && r.ptr == e) {
    v = std::strtod(std::string(b, e).c_str(), nullptr);  // an underflow to 0 or a subnormal is a value; past a double is not
    if (!std::isfinite(v)) fail(in, in.line(), t.column, "value " + quoted(t.text) + " is out of the range of a double");
    return v;
  }
  if (r.ec != std::errc() || r.ptr != e) fail(in, in.line(), t.column, "value " + quoted(t.text) + " is not a number");
  if (!std::isfinite(v)) fail(in, in.line(), t.column, "value " + quoted(t.text) + " is not finite (NaN and infinity are refused)");
  return v;
}

// A well-formed entry line, parsed without tokens: "row col [value]" with plain decimal indices, a
// value std::from_chars reads whole (finite), single spaces or tabs. False for anything else (blank
// lines, comments, errors): the checked parse then decides, with line and column.
bool fast_entry(std::string_view line, bool pattern, bool integer, std::int64_t& r, std::int64_t& c, double& v) {
  const char* p = line.data();
  const char* const e = p + line.size();
  const auto blanks = [&] {
    while (p < e && is_blank(*p)) ++p;
  };
  const auto index = [&](std::int64_t& out) {
    const char* b = p;
    std::int64_t x = 0;
    // At most 18 digits are accumulated (no int64 overflow); a longer index takes the checked path.
    for (; p < e && static_cast<unsigned>(*p - '0') < 10u; ++p)
      if (p - b < 18) x = x * 10 + (*p - '0');
    out = x;
    return p != b && p - b <= 18;
  };
  blanks();
  if (!index(r) || p == e || !is_blank(*p)) return false;
  blanks();
  if (!index(c)) return false;
  if (!pattern) {
    if (p == e || !is_blank(*p)) return false;
    blanks();
    if (p == e) return false;
    if (integer) {
      std::int64_t x = 0;
      const auto res = std::from_chars(p, e, x);
      if (res.ec != std::errc()) return false;
      p = res.ptr;
      v = static_cast<double>(x);
    } else {
      const auto res = std::from_chars(p, e, v);
      if (res.ec != std::errc() || !std::isfinite(v)) return false;
      p = res.ptr;
    }
    if (p < e && !is_blank(*p)) return false;  // "1.5x": the checked parse names it
  }
  blanks();
  return p == e;
}

struct Parsed {
  MatrixMarketHeader header;
  bool pattern = false, integer = false;
  CooSymmetry symmetry = CooSymmetry::general;
  std::int64_t size_line = 0;
};

// The banner, the comments and the size line; leaves `in` after the size line.
Parsed parse_header(LineReader& in) {
  static const char* kBanner = "%%MatrixMarket matrix coordinate <real|integer|pattern> <general|symmetric|skew-symmetric>";
  std::string_view line;
  if (!in.next(line)) fail(in, 1, 1, std::string("empty file: no Matrix Market banner (") + kBanner + ")");
  std::size_t pos = 0;
  const Token magic = next_token(line, pos);
  if (lower(magic.text) != "%%matrixmarket")
    fail(in, 1, 1, std::string("no '%%MatrixMarket' banner: not a Matrix Market file (want '") + kBanner + "')");
  Token words[4];
  for (auto& w : words) {
    w = next_token(line, pos);
    if (w.empty()) fail(in, 1, w.column, std::string("incomplete banner: want '") + kBanner + "'");
  }
  if (const Token extra = next_token(line, pos); !extra.empty())
    fail(in, 1, extra.column, "extra word " + quoted(extra.text) + " on the banner line (want '" + kBanner + "')");
  if (lower(words[0].text) != "matrix")
    fail(in, 1, words[0].column, "object " + quoted(words[0].text) + " is not supported: ceiling reads 'matrix' files");
  const std::string format = lower(words[1].text);
  if (format == "array") fail(in, 1, words[1].column, "array (dense) format is not supported: ceiling reads coordinate (sparse) files");
  if (format != "coordinate")
    fail(in, 1, words[1].column, "format " + quoted(words[1].text) + " is not supported: ceiling reads coordinate (sparse) files");
  Parsed p;
  p.header.field = lower(words[2].text);
  if (p.header.field == "complex")
    fail(in, 1, words[2].column, "complex values are not supported: ceiling multiplies real (FP64) matrices");
  if (p.header.field != "real" && p.header.field != "integer" && p.header.field != "pattern")
    fail(in, 1, words[2].column, "field " + quoted(words[2].text) + " is not real, integer or pattern");
  p.pattern = p.header.field == "pattern";
  p.integer = p.header.field == "integer";
  p.header.symmetry = lower(words[3].text);
  if (p.header.symmetry == "hermitian")
    fail(in, 1, words[3].column, "hermitian matrices are not supported (complex): ceiling multiplies real (FP64) matrices");
  if (p.header.symmetry == "symmetric") {
    p.symmetry = CooSymmetry::symmetric;
  } else if (p.header.symmetry == "skew-symmetric") {
    p.symmetry = CooSymmetry::skew_symmetric;
  } else if (p.header.symmetry != "general") {
    fail(in, 1, words[3].column, "symmetry " + quoted(words[3].text) + " is not general, symmetric or skew-symmetric");
  }

  // Comments (lines starting with %) and blank lines, then "rows cols entries".
  while (true) {
    if (!in.next(line)) fail(in, in.line(), 1, "the file ends before the size line 'rows columns entries'");
    pos = 0;
    const Token first = next_token(line, pos);
    if (first.empty() || first.text.front() == '%') continue;
    break;
  }
  p.size_line = in.line();
  pos = 0;
  Token t[3];
  const char* names[3] = {"rows", "columns", "entries"};
  std::int64_t v[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    t[i] = next_token(line, pos);
    if (t[i].empty()) fail(in, in.line(), t[i].column, "size line needs 3 numbers 'rows columns entries', it has " + std::to_string(i));
    v[i] = parse_whole(in, t[i], names[i]);
    if (v[i] < 0) fail(in, in.line(), t[i].column, "negative size: " + std::string(names[i]) + " " + std::to_string(v[i]));
  }
  if (const Token extra = next_token(line, pos); !extra.empty())
    fail(in, in.line(), extra.column, "extra word " + quoted(extra.text) + " after 'rows columns entries' on the size line");
  auto& h = p.header;
  h.rows = v[0];
  h.cols = v[1];
  h.entries = v[2];
  if (h.rows == 0 || h.cols == 0)
    fail(in, in.line(), 1, "empty matrix (" + std::to_string(h.rows) + " x " + std::to_string(h.cols) + "): nothing to multiply");
  if (h.rows > kInt32Max || h.cols > kInt32Max)
    fail(in, in.line(), h.rows > kInt32Max ? t[0].column : t[1].column,
         "size " + std::to_string(h.rows) + " x " + std::to_string(h.cols) +
             " needs 64-bit indices: ceiling uses int32 (at most 2147483647 rows and columns)");
  if (h.entries == 0) fail(in, in.line(), t[2].column, "empty matrix: 0 entries, nothing to multiply");
  if (p.symmetry != CooSymmetry::general && h.rows != h.cols)
    fail(in, in.line(), 1, "a " + h.symmetry + " matrix must be square, this one is " + std::to_string(h.rows) + " x " + std::to_string(h.cols));
  // Each entry takes at least "1 1\n" (4 bytes): a claim far beyond what the rest of the file can
  // hold is refused here, before anything is read; a file a little short reads to its end and is
  // "truncated" at the line of its first missing entry. (Arrays grow as entries arrive, so a claim
  // that passes allocates nothing by itself.)
  const std::int64_t left = std::max<std::int64_t>(in.bytes_left(), 0);
  if (h.entries > 16 * (left / 4) + 4096)
    fail(in, in.line(), t[2].column,
         "the size line declares " + std::to_string(h.entries) + " entries but the rest of the file (" +
             std::to_string(left) + " bytes) cannot hold that many: the header lies or the file is truncated");
  return p;
}

}  // namespace

MatrixMarketHeader read_matrix_market_header(const std::string& path) {
  LineReader in(path);
  return parse_header(in).header;
}

CsrMatrix read_matrix_market(const std::string& path, const MatrixReadOptions& options) {
  LineReader in(path);
  const Parsed p = parse_header(in);
  const MatrixMarketHeader& h = p.header;
  const std::int64_t max_nnz = std::clamp<std::int64_t>(options.max_nnz, 0, kInt32Max);
  const std::string declared = std::to_string(h.entries) + " entries the size line (line " + std::to_string(p.size_line) + ") declares";
  if (h.entries > max_nnz)
    fail(in, p.size_line, 1,
         "the size line declares " + std::to_string(h.entries) + " entries: above " + std::to_string(max_nnz) +
             " (int32 indices)");
  const bool mirror = p.symmetry != CooSymmetry::general;
  const bool skew = p.symmetry == CooSymmetry::skew_symmetric;
  const char* entry_form = p.pattern ? "'row column'" : "'row column value'";
  const int want_tokens = p.pattern ? 2 : 3;

  std::vector<std::int32_t> rows, cols;
  std::vector<double> vals;
  // Grows past 16 M entries as they arrive: a file of zeros behind a big claim allocates nothing.
  const auto reserve = static_cast<std::size_t>(std::min<std::int64_t>(h.entries, std::int64_t{1} << 24));
  rows.reserve(reserve);
  cols.reserve(reserve);
  vals.reserve(reserve);

  // The checked parse of one line: false for a blank line or a comment (skipped anywhere), else the
  // entry; throws naming the line and column for anything wrong with it.
  std::int64_t read = 0, expanded = 0;
  const auto checked_entry = [&](std::string_view line, std::int64_t& r, std::int64_t& c, double& v) {
    std::size_t pos = 0;
    Token t[3];
    t[0] = next_token(line, pos);
    if (t[0].empty() || t[0].text.front() == '%') return false;
    if (read == h.entries) fail(in, in.line(), t[0].column, "more entries than the " + declared);
    for (int i = 1; i < want_tokens; ++i) {
      t[i] = next_token(line, pos);
      if (t[i].empty())
        fail(in, in.line(), t[i].column,
             "entry needs " + std::to_string(want_tokens) + " numbers " + entry_form + ", this line has " + std::to_string(i));
    }
    if (const Token extra = next_token(line, pos); !extra.empty())
      fail(in, in.line(), extra.column,
           "entry needs " + std::to_string(want_tokens) + " numbers " + entry_form + ", this line has more: extra word " +
               quoted(extra.text));
    r = parse_whole(in, t[0], "row index");
    c = parse_whole(in, t[1], "column index");
    if (r < 1 || r > h.rows)
      fail(in, in.line(), t[0].column,
           "row " + std::to_string(r) + " out of range 1.." + std::to_string(h.rows) +
               (r == 0 ? " (Matrix Market indices are 1-based)" : ""));
    if (c < 1 || c > h.cols)
      fail(in, in.line(), t[1].column,
           "column " + std::to_string(c) + " out of range 1.." + std::to_string(h.cols) +
               (c == 0 ? " (Matrix Market indices are 1-based)" : ""));
    v = 1.0;  // pattern: every entry is 1
    if (p.integer) {
      v = static_cast<double>(parse_whole(in, t[2], "value"));
    } else if (!p.pattern) {
      v = parse_real(in, t[2]);
    }
    if (skew && r == c)
      fail(in, in.line(), t[0].column, "skew-symmetric matrix has a diagonal entry (" + std::to_string(r) + ", " +
                                           std::to_string(c) + "): its diagonal is zero and not stored");
    return true;
  };

  // Appends one entry of the line `in` counts last.
  std::int64_t next_progress = kProgressEvery;
  const auto accept = [&](std::int64_t r, std::int64_t c, double v) {
    // The MM spec stores the lower triangle of a symmetric file; we accept either triangle (some
    // writers store the upper one) and mirror each off-diagonal entry, the diagonal once.
    expanded += mirror && r != c ? 2 : 1;
    if (expanded > max_nnz)
      fail(in, in.line(), 1,
           "more than " + std::to_string(max_nnz) + " entries after mirroring the " + h.symmetry +
               " entries: above " + std::to_string(max_nnz) + " (int32 indices)");
    rows.push_back(static_cast<std::int32_t>(r - 1));
    cols.push_back(static_cast<std::int32_t>(c - 1));
    vals.push_back(v);
    ++read;
  };
  // The lines of `text` one after the other, each counted: the fast parse when it can, else the checked one.
  const auto in_order = [&](std::string_view text) {
    while (!text.empty()) {
      const void* nl = std::memchr(text.data(), '\n', text.size());
      const std::size_t end = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - text.data()) : text.size();
      const std::string_view line = text.substr(0, end);
      text.remove_prefix(std::min(text.size(), end + 1));
      in.count_lines(1);
      std::int64_t r = 0, c = 0;
      double v = 1.0;
      const bool fast = read < h.entries && fast_entry(line, p.pattern, p.integer, r, c, v) && r >= 1 &&
                        r <= h.rows && c >= 1 && c <= h.cols && !(skew && r == c);
      if (fast || checked_entry(line, r, c, v)) accept(r, c, v);
    }
  };

  // Blocks of whole lines, each cut into parts that threads parse with the fast parse, every part
  // into its own arrays, joined in file order. A part stops at its first line the fast parse does
  // not take (a blank line, a comment, an error): that line and the rest of the part are parsed in
  // order here, so every error names its line and nothing depends on the number of threads.
  struct Part {
    std::string_view text;
    std::vector<std::int32_t> r, c;
    std::vector<double> v;
    std::size_t stop = 0;  // bytes of `text` the fast parse took
    std::int64_t expanded = 0;
    std::exception_ptr error;
  };
  const auto fast_part = [&](Part& part) {
    try {
      part.r.clear();
      part.c.clear();
      part.v.clear();
      part.expanded = 0;
      std::size_t pos = 0;
      while (pos < part.text.size()) {
        const void* nl = std::memchr(part.text.data() + pos, '\n', part.text.size() - pos);
        const std::size_t end =
            nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - part.text.data()) : part.text.size();
        std::int64_t r = 0, c = 0;
        double v = 1.0;
        if (!fast_entry(part.text.substr(pos, end - pos), p.pattern, p.integer, r, c, v) || r < 1 || r > h.rows ||
            c < 1 || c > h.cols || (skew && r == c))
          break;
        part.r.push_back(static_cast<std::int32_t>(r - 1));
        part.c.push_back(static_cast<std::int32_t>(c - 1));
        part.v.push_back(v);
        part.expanded += mirror && r != c ? 2 : 1;
        pos = std::min(part.text.size(), end + 1);
      }
      part.stop = pos;
    } catch (...) {
      part.error = std::current_exception();
    }
  };
  const auto threads = static_cast<std::size_t>(
      in.bytes_left() < (std::int64_t{4} << 20) ? 1u : std::clamp(std::thread::hardware_concurrency(), 1u, 16u));
  // Four parts per thread, taken as threads come free: a thread the system delays holds up less.
  const std::size_t part_count = threads == 1 ? 1 : 4 * threads;
  std::vector<Part> parts(part_count);
  std::string_view block;
  while (in.next_block(block, threads == 1 ? kBlockBytes : std::size_t{8} << 20 << (threads > 4 ? 2 : 0))) {
    std::size_t from = 0;
    for (std::size_t t = 0; t < part_count; ++t) {
      std::size_t to = block.size();
      if (t + 1 < part_count) {
        const std::size_t guess = std::max(from, block.size() * (t + 1) / part_count);
        const std::size_t nl = guess < block.size() ? block.find('\n', guess) : std::string_view::npos;
        to = nl == std::string_view::npos ? block.size() : nl + 1;
      }
      parts[t].text = block.substr(from, to - from);
      from = to;
    }
    {
      std::atomic<std::size_t> next{0};
      const auto work = [&] {
        for (std::size_t i = next++; i < part_count; i = next++) fast_part(parts[i]);
      };
      std::vector<std::thread> pool;
      for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
      work();
      for (auto& th : pool) th.join();
    }
    for (Part& part : parts) {
      if (part.error) std::rethrow_exception(part.error);
      const auto taken = static_cast<std::int64_t>(part.r.size());
      if (read + taken > h.entries || expanded + part.expanded > max_nnz) {
        in_order(part.text);  // names the line past the declared count or the int32 limit
        continue;
      }
      rows.insert(rows.end(), part.r.begin(), part.r.end());
      cols.insert(cols.end(), part.c.begin(), part.c.end());
      vals.insert(vals.end(), part.v.begin(), part.v.end());
      read += taken;
      expanded += part.expanded;
      in.count_lines(taken);  // one entry per line
      in_order(part.text.substr(part.stop));
    }
    if (options.progress && read >= next_progress) {
      options.progress(read, h.entries);
      next_progress = (read / kProgressEvery + 1) * kProgressEvery;
    }
  }
  if (read < h.entries)
    fail(in, in.line() + 1, 1,
         "truncated: " + std::to_string(read) + " entries where the size line (line " + std::to_string(p.size_line) +
             ") declares " + std::to_string(h.entries));
  if (options.progress) options.progress(read, h.entries);

  CsrMatrix a = csr_from_coo(static_cast<std::int32_t>(h.rows), static_cast<std::int32_t>(h.cols), rows, cols, vals, p.symmetry);
  // Every value read is finite, but duplicates are summed: 1e308 + 1e308 is not (found by the fuzzer).
  for (std::size_t r = 0; r < static_cast<std::size_t>(a.rows); ++r)
    for (auto k = static_cast<std::size_t>(a.row_ptr[r]); k < static_cast<std::size_t>(a.row_ptr[r + 1]); ++k)
      if (!std::isfinite(a.val[k]))
        throw InputFileError(path, 0, 0, "",
                             "the duplicates of entry (" + std::to_string(r + 1) + ", " + std::to_string(a.col[k] + 1) +
                                 ") sum to a value past a double");
  a.name = fs::path(path).stem().string();
  a.source = path;
  return a;
}

void write_matrix_market(const CsrMatrix& a, const std::string& path) {
  check_csr(a);
  std::string text;
  text.reserve(static_cast<std::size_t>(a.nnz()) * 36 + 256);
  text += "%%MatrixMarket matrix coordinate real general\n";
  text += one_line("% written by ceiling: " + a.name + (a.source.empty() ? "" : " (" + a.source + ")")) + "\n";
  text += std::to_string(a.rows) + " " + std::to_string(a.cols) + " " + std::to_string(a.nnz()) + "\n";
  // row, column and value, each written with std::to_chars into its own part of the line
  char line[24 + 24 + 40];
  for (std::size_t r = 0; r < static_cast<std::size_t>(a.rows); ++r) {
    for (auto k = static_cast<std::size_t>(a.row_ptr[r]); k < static_cast<std::size_t>(a.row_ptr[r + 1]); ++k) {
      char* p = std::to_chars(line, line + 23, r + 1).ptr;
      *p++ = ' ';
      p = std::to_chars(p, p + 23, a.col[k] + 1).ptr;
      *p++ = ' ';
      p = std::to_chars(p, p + 39, a.val[k], std::chars_format::general, 17).ptr;
      *p++ = '\n';
      text.append(line, static_cast<std::size_t>(p - line));
    }
  }
  write_file_atomically(path, text);
}

}  // namespace ceiling
