// Nsight Compute raw-page CSV reader (issue 19). See ncu_csv.hpp.
#include "ncu_csv.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <unordered_map>

namespace ceiling {
namespace {

// One CSV record: its fields and where each starts (1-based character column).
struct Record {
  std::vector<std::string> fields;
  std::vector<int> columns;
};

// Splits one line into fields: quoted ("a, b", "" for a quote) or bare up to the next comma.
// Returns false with *cause set when a quote is not closed or text follows a closing quote.
bool split_record(std::string_view line, Record& r, std::string* cause) {
  r.fields.clear();
  r.columns.clear();
  std::size_t i = 0;
  const std::size_t n = line.size();
  while (true) {
    r.columns.push_back(static_cast<int>(i) + 1);
    std::string field;
    if (i < n && line[i] == '"') {
      ++i;
      bool closed = false;
      while (i < n) {
        if (line[i] == '"') {
          if (i + 1 < n && line[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          closed = true;
          break;
        }
        field += line[i++];
      }
      if (!closed) {
        *cause = "a quoted field is not closed before the end of the line";
        return false;
      }
      if (i < n && line[i] != ',') {
        *cause = "text after a closing quote (expected ',')";
        return false;
      }
    } else {
      const std::size_t end = line.find(',', i);
      const std::size_t stop = end == std::string_view::npos ? n : end;
      field.assign(line.substr(i, stop - i));
      i = stop;
    }
    r.fields.push_back(std::move(field));
    if (i >= n) break;
    ++i;  // the comma
    if (i == n) {  // a trailing comma: one more, empty field
      r.columns.push_back(static_cast<int>(i) + 1);
      r.fields.emplace_back();
      break;
    }
  }
  return true;
}

// Lines of a file or a string, each at most kNcuMaxLineBytes; a final line without '\n' counts.
class LineSource {
 public:
  LineSource(std::string_view text, std::string name) : text_(text), name_(std::move(name)) {}
  LineSource(std::FILE* f, std::string name) : file_(f), name_(std::move(name)) {}

  bool next(std::string& line) {
    line.clear();
    if (file_) {
      bool any = false;
      while (true) {
        if (pos_ == len_) {
          len_ = std::fread(buf_.get(), 1, kBuf, file_);
          pos_ = 0;
          if (len_ == 0) {
            if (std::ferror(file_)) throw std::runtime_error(name_ + ": read error");
            break;
          }
          total_ += len_;
          if (total_ > kNcuMaxFileBytes)
            throw NcuCsvError(name_, line_no_ + 1, 1, "", "file larger than 8 GiB (the reader's limit)");
        }
        any = true;
        const char* start = buf_.get() + pos_;
        const void* nl = std::memchr(start, '\n', len_ - pos_);
        const std::size_t take = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - start) : len_ - pos_;
        line.append(start, take);
        check_length(line);
        pos_ += take;
        if (nl) {
          ++pos_;
          break;
        }
      }
      if (!any && line.empty()) return false;
    } else {
      if (tpos_ >= text_.size()) return false;
      const std::size_t nl = text_.find('\n', tpos_);
      const std::size_t stop = nl == std::string_view::npos ? text_.size() : nl;
      line.assign(text_.substr(tpos_, stop - tpos_));
      check_length(line);
      tpos_ = nl == std::string_view::npos ? text_.size() : nl + 1;
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    ++line_no_;
    return true;
  }
  int line_no() const { return line_no_; }

 private:
  void check_length(const std::string& line) const {
    if (line.size() > kNcuMaxLineBytes)
      throw NcuCsvError(name_, line_no_ + 1, 1, "", "line longer than 16 MiB (the reader's limit)");
  }
  static constexpr std::size_t kBuf = 1 << 20;
  std::string_view text_;
  std::size_t tpos_ = 0;
  std::FILE* file_ = nullptr;
  std::unique_ptr<char[]> buf_{new char[kBuf]};
  std::size_t pos_ = 0, len_ = 0;
  std::uint64_t total_ = 0;
  std::string name_;
  int line_no_ = 0;
};

NcuExport parse_lines(LineSource& src, const std::string& name, const std::vector<std::string>& keep) {
  NcuExport ex;
  ex.file = name;
  std::string line, cause;
  Record rec;
  bool have_header = false, have_units = false;
  std::vector<double> factor;        // per column, from the units row
  std::vector<std::string> units;
  std::vector<int> kept;             // column indices converted into metrics
  int i_id = -1, i_proc = -1, i_kernel = -1, i_dev = -1, i_block = -1, i_grid = -1, i_name = -1, i_sms = -1;
  const auto find = [&](std::string_view col) {
    const auto it = std::find(ex.columns.begin(), ex.columns.end(), col);
    return it == ex.columns.end() ? -1 : static_cast<int>(it - ex.columns.begin());
  };
  while (src.next(line)) {
    const int ln = src.line_no();
    if (line.empty() || line[0] != '"') {
      if (line.rfind("==ERROR==", 0) == 0 || line.rfind("==WARNING==", 0) == 0) ex.ncu_messages.push_back(line);
      if (!line.empty()) ++ex.skipped_lines;
      continue;
    }
    if (!split_record(line, rec, &cause)) throw NcuCsvError(name, ln, 1, "", cause);
    if (!have_header) {
      const bool details = std::find(rec.fields.begin(), rec.fields.end(), "Metric Name") != rec.fields.end() &&
                           std::find(rec.fields.begin(), rec.fields.end(), "Metric Value") != rec.fields.end();
      if (details)
        throw NcuCsvError(name, ln, 1, "",
                          "this is a details-page export (Metric Name/Metric Value columns); ceiling reads the raw "
                          "page: export with `ncu --csv --page raw`");
      if (rec.fields.empty() || rec.fields[0] != "ID" ||
          std::find(rec.fields.begin(), rec.fields.end(), "Kernel Name") == rec.fields.end())
        throw NcuCsvError(name, ln, 1, "",
                          "expected the ncu raw-page header (\"ID\",...,\"Kernel Name\",...) as the first record: "
                          "export with `ncu --csv --page raw`");
      ex.columns = rec.fields;
      {
        std::vector<std::string> sorted = ex.columns;
        std::sort(sorted.begin(), sorted.end());
        const auto dup = std::adjacent_find(sorted.begin(), sorted.end());
        if (dup != sorted.end()) throw NcuCsvError(name, ln, 1, *dup, "column named twice in the header");
      }
      have_header = true;
      i_id = find("ID");
      i_proc = find("Process Name");
      i_kernel = find("Kernel Name");
      i_dev = find("Device");
      i_block = find("Block Size");
      i_grid = find("Grid Size");
      i_name = find("device__attribute_display_name");
      i_sms = find("device__attribute_multiprocessor_count");
      factor.assign(ex.columns.size(), 1.0);
      units.assign(ex.columns.size(), "");
      if (keep.empty()) {
        for (std::size_t c = 0; c < ex.columns.size(); ++c)
          if (ex.columns[c].find("__") != std::string::npos) kept.push_back(static_cast<int>(c));
      } else {
        for (const auto& k : keep)
          if (const int c = find(k); c >= 0) kept.push_back(c);
      }
      continue;
    }
    if (rec.fields.size() != ex.columns.size())
      throw NcuCsvError(name, ln, 1, "",
                        "record has " + std::to_string(rec.fields.size()) + " fields, the header " +
                            std::to_string(ex.columns.size()) + " (a truncated or edited export?)");
    if (!have_units && rec.fields[static_cast<std::size_t>(i_id)].empty()) {
      have_units = true;
      for (const int c : kept) {
        const auto& u = rec.fields[static_cast<std::size_t>(c)];
        const auto f = ncu_unit_factor(u);
        if (!f) {
          if (!keep.empty())
            throw NcuCsvError(name, ln, rec.columns[static_cast<std::size_t>(c)], ex.columns[static_cast<std::size_t>(c)],
                              "unit '" + u + "' is not one ceiling converts (byte, second, hertz, counts with K/M/G/T)");
          factor[static_cast<std::size_t>(c)] = std::nan("");
        } else {
          factor[static_cast<std::size_t>(c)] = *f;
        }
        units[static_cast<std::size_t>(c)] = u;
      }
      continue;
    }
    have_units = true;  // a file without a units row: base units assumed
    if (ex.launches.size() >= kNcuMaxLaunches)
      throw NcuCsvError(name, ln, 1, "", "more than 4194304 launches (the reader's limit)");
    NcuLaunch l;
    l.line = ln;
    const auto field = [&](int c) { return c >= 0 ? rec.fields[static_cast<std::size_t>(c)] : std::string{}; };
    l.id = field(i_id);
    l.process = field(i_proc);
    l.kernel = field(i_kernel);
    l.device = field(i_dev);
    l.block = field(i_block);
    l.grid = field(i_grid);
    if (l.kernel.empty()) throw NcuCsvError(name, ln, 1, "Kernel Name", "empty kernel name");
    for (const int c : kept) {
      const auto& cell = rec.fields[static_cast<std::size_t>(c)];
      if (cell.empty() || cell == "n/a" || cell == "N/A") continue;
      const double f = factor[static_cast<std::size_t>(c)];
      const auto v = parse_ncu_number(cell);
      if (!v || std::isnan(f)) {
        if (keep.empty()) continue;  // reading every column: text columns are not metrics
        throw NcuCsvError(name, ln, rec.columns[static_cast<std::size_t>(c)], ex.columns[static_cast<std::size_t>(c)],
                          "'" + cell.substr(0, 40) + "' is not a number");
      }
      const double value = *v * f;
      // Counters count: never negative, and far below 1e30 (so sums over launches stay finite).
      if (!std::isfinite(value) || value < 0 || value > kNcuMaxValue)
        throw NcuCsvError(name, ln, rec.columns[static_cast<std::size_t>(c)], ex.columns[static_cast<std::size_t>(c)],
                          "value '" + cell.substr(0, 40) + "' out of range (0 .. 1e30 in base units)");
      l.metrics.emplace(ex.columns[static_cast<std::size_t>(c)], value);
    }
    if (i_name >= 0) {
      const auto dn = field(i_name);
      if (!dn.empty() && std::find(ex.device_names.begin(), ex.device_names.end(), dn) == ex.device_names.end())
        ex.device_names.push_back(dn);
    }
    if (i_sms >= 0 && !ex.sm_count) {
      if (const auto v = parse_ncu_number(field(i_sms)); v && *v >= 1 && *v < 1e6) ex.sm_count = static_cast<int>(*v);
    }
    ex.launches.push_back(std::move(l));
  }
  if (!have_header)
    throw NcuCsvError(name, std::max(1, src.line_no()), 1, "",
                      ex.ncu_messages.empty()
                          ? "no ncu raw-page header found: export with `ncu --csv --page raw`"
                          : "no ncu raw-page header found; ncu said: " + ex.ncu_messages.front());
  return ex;
}

}  // namespace

std::optional<double> NcuLaunch::get(std::string_view name) const {
  const auto it = metrics.find(std::string(name));
  if (it == metrics.end()) return std::nullopt;
  return it->second;
}

double NcuLaunch::get_or(std::string_view name, double fallback) const { return get(name).value_or(fallback); }

bool NcuExport::has_column(std::string_view name) const {
  return std::find(columns.begin(), columns.end(), name) != columns.end();
}

std::optional<double> parse_ncu_number(std::string_view cell) {
  std::string s;
  s.reserve(cell.size());
  // Thousands separators: a comma between digits, groups of three after the first.
  for (std::size_t i = 0; i < cell.size(); ++i) {
    const char c = cell[i];
    if (c == ',') {
      if (i == 0 || i + 3 >= cell.size() || !std::isdigit(static_cast<unsigned char>(cell[i - 1]))) return std::nullopt;
      for (int k = 1; k <= 3; ++k)
        if (!std::isdigit(static_cast<unsigned char>(cell[i + static_cast<std::size_t>(k)]))) return std::nullopt;
      if (i + 4 < cell.size() && std::isdigit(static_cast<unsigned char>(cell[i + 4]))) return std::nullopt;
      continue;
    }
    s += c;
  }
  if (s.empty()) return std::nullopt;
  double v = 0;
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (*b == '+') ++b;
  const auto [p, ec] = std::from_chars(b, e, v);
  if (ec != std::errc{} || p != e || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<double> ncu_unit_factor(std::string_view unit) {
  static const std::unordered_map<std::string_view, double> exact = {
      {"", 1},        {"ns", 1e-9},     {"nsecond", 1e-9}, {"us", 1e-6},      {"usecond", 1e-6}, {"ms", 1e-3},
      {"msecond", 1e-3}, {"s", 1},      {"second", 1},     {"hz", 1},         {"Hz", 1},         {"cycle/second", 1},
      {"cycle/nsecond", 1e9}, {"cycle/usecond", 1e6}, {"cycle/msecond", 1e3}, {"%", 1},
  };
  if (const auto it = exact.find(unit); it != exact.end()) return it->second;
  // Counts and bytes, with an SI prefix as ncu prints them (Kbyte = 1000 bytes, Mhz, Ginst).
  static const char* bases[] = {"byte", "inst", "sector", "hz", "cycle", "warp", "thread", "block", "request",
                                "wavefront", "pass", "SM", "cluster", "register/thread", "byte/block", "byte/second",
                                "register", "instance"};
  double f = 1;
  std::string_view rest = unit;
  if (!rest.empty()) {
    switch (rest[0]) {
      case 'K': f = 1e3; rest.remove_prefix(1); break;
      case 'M': f = 1e6; rest.remove_prefix(1); break;
      case 'G': f = 1e9; rest.remove_prefix(1); break;
      case 'T': f = 1e12; rest.remove_prefix(1); break;
      default: break;
    }
  }
  for (const char* b : bases)
    if (rest == b) return f;
  return std::nullopt;
}

NcuExport read_ncu_csv(const std::filesystem::path& file, const std::vector<std::string>& keep) {
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec))
    throw std::runtime_error(file.string() + ": is a directory, not an ncu CSV export");
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(file.c_str(), "rb"), &std::fclose);
  if (!f) throw std::runtime_error(file.string() + ": cannot open (" + std::string(std::strerror(errno)) + ")");
  LineSource src(f.get(), file.string());
  return parse_lines(src, file.string(), keep);
}

NcuExport parse_ncu_csv(std::string_view text, const std::string& name_for_errors, const std::vector<std::string>& keep) {
  LineSource src(text, name_for_errors);
  return parse_lines(src, name_for_errors, keep);
}

}  // namespace ceiling
