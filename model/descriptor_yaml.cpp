// Hardware descriptor YAML: strict loading with file:line:column errors, canonical writing.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>
#include <unistd.h>

#include "descriptor.hpp"
#include "files.hpp"

namespace ceiling {

namespace {

// ---- plausible physical ranges (docs/RELIABILITY.md): one table, checked on every load ----
// Wide enough for any GPU of the next decades and for partial measurements; a value outside is a
// typo, a unit slip or an attack, and would give the model inf or nonsense (alpha = inf, ...).

enum class FieldKind {
  capacity,          // memory.<level>.capacity
  bytes,             // other byte counts (extra: tlb_reach, near_half_capacity...)
  bandwidth,         // memory.<level>.bandwidth, patterns
  bytes_per_clock,   // bandwidth_per_sm, extra per-clock figures
  flop_rate,         // compute.*, tensor throughput
  clock,             // sm_clock, memory_clock, measured.sm_clock
  latency,           // memory.<level>.latency, tensor latency
  seconds,           // extra times
  per_clock_count,   // fma_per_clock_per_sm, other bare numbers
  per_second_count,  // bare counts per second (dsm.histogram elements per second)
  cv,                // measured.cv (a fraction; 0 when unknown)
  power,             // watts (NVML readings)
};

struct Plausible {
  FieldKind kind;
  double min, max;
  const char* what;
};

constexpr Plausible kPlausible[] = {
    {FieldKind::capacity, 1024, 0x1p50, "a memory capacity"},              // 1 KiB .. 1 PiB
    {FieldKind::bytes, 1, 0x1p50, "a byte count"},                         // 1 B .. 1 PiB
    {FieldKind::bandwidth, 1, 1e17, "a bandwidth"},                        // 1 B/s .. 100 PB/s
    {FieldKind::bytes_per_clock, 0.01, 1e5, "bytes per clock"},            // whole device up to 100k B/clk
    {FieldKind::flop_rate, 1e6, 1e18, "a compute rate"},                   // 1 MFLOP/s .. 1 EFLOP/s
    {FieldKind::clock, 1e6, 1e11, "a clock"},                              // 1 MHz .. 100 GHz
    {FieldKind::latency, 1, 1e7, "a latency in cycles"},
    {FieldKind::seconds, 1e-12, 1e6, "a time"},
    {FieldKind::per_clock_count, 1e-3, 1e7, "a count per clock"},
    {FieldKind::per_second_count, 1, 1e18, "a count per second"},
    {FieldKind::cv, 0, 10, "a coefficient of variation"},
    {FieldKind::power, 1e-3, 1e5, "a power"},  // 1 mW .. 100 kW
};

// Whole numbers: the same idea, and nothing wraps (int fields).
struct IntRange {
  long long min, max;
  const char* what;
};
constexpr IntRange kSmCount{1, 100000, "an SM count"};
constexpr IntRange kRepeats{1, 1000000000, "a repeat count"};
constexpr IntRange kWarpsPerSm{1, 1024, "warps per SM"};
constexpr IntRange kIlp{1, 1024, "instructions in flight per warp"};

const Plausible& plausible(FieldKind k) {
  for (const auto& p : kPlausible)
    if (p.kind == k) return p;
  throw std::logic_error("no plausible range for a field kind");
}

// The range of a field whose dimension comes from its text (memory.<level>.extra.*).
FieldKind kind_of(Dimension d) {
  switch (d) {
    case Dimension::bytes: return FieldKind::bytes;
    case Dimension::bytes_per_second: return FieldKind::bandwidth;
    case Dimension::flop_per_second: return FieldKind::flop_rate;
    case Dimension::hertz: return FieldKind::clock;
    case Dimension::cycles: return FieldKind::latency;
    case Dimension::seconds: return FieldKind::seconds;
    case Dimension::bytes_per_cycle: return FieldKind::bytes_per_clock;
    case Dimension::dimensionless: return FieldKind::per_clock_count;
    case Dimension::watts: return FieldKind::power;
  }
  return FieldKind::per_clock_count;
}

std::string range_text(const Plausible& r, Dimension d) {
  return format_quantity(r.min, d, 3) + " to " + format_quantity(r.max, d, 3);
}

// One key of a mapping with its nodes, so errors can point at the key or at the value.
struct Entry {
  YAML::Node key;
  YAML::Node value;
};

class Loader {
 public:
  explicit Loader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Mark& m, const std::string& key, const std::string& cause) const {
    const int line = m.is_null() ? 0 : m.line + 1;
    const int column = m.is_null() ? 0 : m.column + 1;
    throw DescriptorError(file_, line, column, key, cause);
  }

  // Reads a mapping strictly: every key must be in `allowed` (empty = any key) and appear once.
  std::map<std::string, Entry> mapping(const YAML::Node& node, const YAML::Mark& where, const std::string& path,
                                       std::initializer_list<std::string_view> allowed) const {
    if (!node.IsMap()) fail(node.IsNull() ? where : node.Mark(), path, "expected a mapping of keys");
    std::map<std::string, Entry> out;
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (!it->first.IsScalar()) fail(it->first.Mark(), path, "keys must be plain names");
      const std::string k = it->first.Scalar();
      const std::string kpath = join(path, k);
      if (allowed.size() != 0 && std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
        std::string known;
        for (auto a : allowed) known += (known.empty() ? "" : ", ") + std::string(a);
        fail(it->first.Mark(), kpath, "unknown key (allowed here: " + known + ")");
      }
      if (!out.emplace(k, Entry{it->first, it->second}).second) fail(it->first.Mark(), kpath, "duplicate key");
    }
    return out;
  }

  const Entry& require(const std::map<std::string, Entry>& m, const std::string& k, const YAML::Mark& where,
                       const std::string& path) const {
    auto it = m.find(k);
    if (it == m.end()) fail(where, join(path, k), "required key is missing");
    return it->second;
  }

  std::string scalar(const Entry& e, const std::string& path) const {
    if (!e.value.IsScalar()) fail(value_mark(e), path, "expected a text value");
    return e.value.Scalar();
  }

  std::string nonempty(const Entry& e, const std::string& path) const {
    std::string s = scalar(e, path);
    if (s.empty()) fail(value_mark(e), path, "must not be empty");
    return s;
  }

  // A whole number in [range.min, range.max], written in decimal digits (no sign, exponent or point).
  int integer(const Entry& e, const std::string& path, const IntRange& range) const {
    const std::string s = scalar(e, path);
    long long v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc::result_out_of_range && p == s.data() + s.size())
      fail(value_mark(e), path, "must be at most " + std::to_string(range.max) + ", got " + s);
    if (ec != std::errc{} || p != s.data() + s.size()) fail(value_mark(e), path, "'" + s + "' is not a whole number");
    if (v < range.min) fail(value_mark(e), path, "must be at least " + std::to_string(range.min) + ", got " + s);
    if (v > range.max) fail(value_mark(e), path, "must be at most " + std::to_string(range.max) + " (" + range.what + "), got " + s);
    return static_cast<int>(v);
  }

  bool boolean(const Entry& e, const std::string& path) const {
    const std::string s = scalar(e, path);
    if (s == "true") return true;
    if (s == "false") return false;
    fail(value_mark(e), path, "expected true or false, got '" + s + "'");
  }

  // A quantity of a known dimension (or of the dimension its text gives when `dim` is empty),
  // within the plausible range of its kind (kPlausible; the dimension's range for extra fields).
  double quantity(const Entry& e, const std::string& path, std::optional<Dimension>& dim, bool positive,
                  std::optional<FieldKind> kind) const {
    const std::string s = scalar(e, path);
    Quantity q;
    try {
      q.value = dim ? parse_as(s, *dim) : parse_quantity(s).value;
      q.dimension = dim ? *dim : parse_quantity(s).dimension;
    } catch (const UnitError& err) {
      fail(value_mark(e), path, err.what());
    }
    if (!dim) dim = q.dimension;
    if (positive && !(q.value > 0)) fail(value_mark(e), path, "must be positive, got '" + s + "'");
    if (!positive && q.value < 0) fail(value_mark(e), path, "must not be negative, got '" + s + "'");
    const Plausible& r = plausible(kind ? *kind : kind_of(q.dimension));
    if (!(q.value >= r.min && q.value <= r.max) && !(q.value == 0 && !positive))
      fail(value_mark(e), path,
           "'" + s + "' is outside the plausible range of " + r.what + " (" + range_text(r, q.dimension) + ")");
    return q.value;
  }

  static YAML::Mark value_mark(const Entry& e) { return e.value.IsNull() ? e.key.Mark() : e.value.Mark(); }
  static std::string join(const std::string& path, const std::string& k) { return path.empty() ? k : path + "." + k; }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

bool valid_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_' ||
           c == '-';
  });
}

struct DescriptorReader {
  const Loader& L;
  std::map<std::string, std::string> references;

  // A reference is a key of `references:` or a citation in words; a one-word reference that is
  // not a key is most likely a typo of one.
  void check_reference(const Entry& e, const std::string& path, const std::string& ref) const {
    if (references.count(ref)) return;
    if (ref.find(' ') == std::string::npos) {
      std::string keys;
      for (const auto& [k, _] : references) keys += (keys.empty() ? "" : ", ") + k;
      L.fail(Loader::value_mark(e), path, "'" + ref + "' is not a key of references (keys: " + keys + ")");
    }
  }

  // A measurement's provenance: probe and date required (ISO 8601), sm_clock and note optional.
  void provenance(const std::map<std::string, Entry>& s, const YAML::Mark& where, const std::string& p,
                  std::string& probe, std::string& date, double& sm_clock_hz, std::string& note) const {
    probe = L.nonempty(L.require(s, "probe", where, p), p + ".probe");
    const Entry& d = L.require(s, "date", where, p);
    date = L.nonempty(d, p + ".date");
    if (const std::string why = iso_date_problem(date); !why.empty())
      L.fail(Loader::value_mark(d), p + ".date", why + ", got '" + date + "'");
    if (auto v = s.find("sm_clock"); v != s.end()) {
      std::optional<Dimension> hz = Dimension::hertz;
      sm_clock_hz = L.quantity(v->second, p + ".sm_clock", hz, true, FieldKind::clock);
    }
    if (auto v = s.find("note"); v != s.end()) note = L.scalar(v->second, p + ".note");
  }

  // `dim` empty: the dimension comes from the text (memory.<level>.extra.*).
  Field field(const Entry& e, const std::string& path, std::optional<Dimension> dim,
              std::optional<FieldKind> kind) const {
    auto m = L.mapping(e.value, e.key.Mark(), path, {"spec", "measured"});
    if (m.empty()) L.fail(e.key.Mark(), path, "needs a spec or a measured value");
    Field f;
    if (auto it = m.find("spec"); it != m.end()) {
      const std::string p = path + ".spec";
      auto s = L.mapping(it->second.value, it->second.key.Mark(), p, {"value", "ref"});
      SpecValue sv;
      sv.value = L.quantity(L.require(s, "value", it->second.key.Mark(), p), p + ".value", dim, true, kind);
      const Entry& ref = L.require(s, "ref", it->second.key.Mark(), p);
      sv.reference = L.nonempty(ref, p + ".ref");
      check_reference(ref, p + ".ref", sv.reference);
      f.spec = sv;
    }
    if (auto it = m.find("measured"); it != m.end()) {
      const std::string p = path + ".measured";
      auto s = L.mapping(it->second.value, it->second.key.Mark(), p,
                         {"median", "min", "max", "repeats", "cv", "probe", "date", "sm_clock", "flagged", "note"});
      const YAML::Mark where = it->second.key.Mark();
      MeasuredValue mv;
      mv.median = L.quantity(L.require(s, "median", where, p), p + ".median", dim, true, kind);
      if (auto v = s.find("min"); v != s.end()) mv.min = L.quantity(v->second, p + ".min", dim, true, kind);
      if (auto v = s.find("max"); v != s.end()) mv.max = L.quantity(v->second, p + ".max", dim, true, kind);
      if (mv.min > 0 && mv.min > mv.median) L.fail(Loader::value_mark(s.at("min")), p + ".min", "larger than the median");
      if (mv.max > 0 && mv.max < mv.median) L.fail(Loader::value_mark(s.at("max")), p + ".max", "smaller than the median");
      if (auto v = s.find("repeats"); v != s.end()) mv.repeats = L.integer(v->second, p + ".repeats", kRepeats);
      if (auto v = s.find("cv"); v != s.end()) {
        std::optional<Dimension> bare = Dimension::dimensionless;
        mv.cv = L.quantity(v->second, p + ".cv", bare, false, FieldKind::cv);
      }
      provenance(s, where, p, mv.probe, mv.date, mv.sm_clock_hz, mv.note);
      if (auto v = s.find("flagged"); v != s.end()) mv.flagged = L.boolean(v->second, p + ".flagged");
      f.measured = mv;
    }
    f.dimension = dim.value_or(Dimension::dimensionless);
    return f;
  }

  Field field(const Entry& e, const std::string& path, Dimension dim, FieldKind kind) const {
    return field(e, path, std::optional<Dimension>(dim), kind);
  }

  // Name-keyed fields (patterns, extra).
  std::map<std::string, Field> named_fields(const Entry& e, const std::string& path,
                                            std::optional<Dimension> dim, std::optional<FieldKind> kind) const {
    std::map<std::string, Field> out;
    for (const auto& [k, sub] : L.mapping(e.value, e.key.Mark(), path, {})) {
      const std::string p = path + "." + k;
      if (!valid_name(k) || k.find('-') != std::string::npos)
        L.fail(sub.key.Mark(), p, "names are lower case letters, digits and '_'");
      out.emplace(k, field(sub, p, dim, kind));
    }
    return out;
  }

  // memory.<level>.ramp.<pattern>: {points: [[bytes, time], ...], probe, date, sm_clock, note, timing}.
  std::map<std::string, RampTable> ramps(const Entry& e, const std::string& path) const {
    static const std::set<std::string> kPatterns{"read", "write", "copy", "scale", "triad"};
    std::map<std::string, RampTable> out;
    for (const auto& [k, sub] : L.mapping(e.value, e.key.Mark(), path, {})) {
      const std::string p = path + "." + k;
      if (!kPatterns.count(k)) L.fail(sub.key.Mark(), p, "not a stream pattern (read, write, copy, scale, triad)");
      auto m = L.mapping(sub.value, sub.key.Mark(), p, {"points", "probe", "date", "sm_clock", "note", "timing"});
      RampTable t;
      const Entry& pts = L.require(m, "points", sub.key.Mark(), p);
      if (!pts.value.IsSequence() || pts.value.size() < 2)
        L.fail(Loader::value_mark(pts), p + ".points", "expected a list of at least 2 [bytes, time] pairs");
      for (std::size_t i = 0; i < pts.value.size(); ++i) {
        const YAML::Node pt = pts.value[i];
        const std::string pp = p + ".points[" + std::to_string(i) + "]";
        if (!pt.IsSequence() || pt.size() != 2)
          L.fail(pt.Mark(), pp, "expected [bytes, time], e.g. [\"25.2 MB\", \"8.42 us\"]");
        std::optional<Dimension> bytes = Dimension::bytes, secs = Dimension::seconds;
        const double x = L.quantity(Entry{pt[0], pt[0]}, pp + "[0]", bytes, true, FieldKind::bytes);
        const double y = L.quantity(Entry{pt[1], pt[1]}, pp + "[1]", secs, true, FieldKind::seconds);
        if (!t.points.empty() && !(x > t.points.back().first))
          L.fail(pt.Mark(), pp, "bytes must grow from one point to the next");
        t.points.emplace_back(x, y);
      }
      provenance(m, sub.key.Mark(), p, t.probe, t.date, t.sm_clock_hz, t.note);
      if (auto v = m.find("timing"); v != m.end()) {
        t.timing = L.scalar(v->second, p + ".timing");
        if (std::find(std::begin(kRampTimings), std::end(kRampTimings), t.timing) == std::end(kRampTimings))
          L.fail(Loader::value_mark(v->second), p + ".timing",
                 "expected cold, warm or warm-validate, got '" + t.timing + "'");
      }
      out.emplace(k, std::move(t));
    }
    return out;
  }

  MemoryLevel level(const Entry& e, const std::string& path) const {
    MemoryLevel l;
    if (e.value.IsMap() && e.value.size() == 0) return l;
    auto m = L.mapping(e.value, e.key.Mark(), path,
                       {"capacity", "bandwidth", "bandwidth_per_sm", "latency", "patterns", "extra", "first_byte", "ramp_bandwidth",
                        "ramp"});
    if (auto it = m.find("capacity"); it != m.end()) l.capacity = field(it->second, path + ".capacity", Dimension::bytes, FieldKind::capacity);
    if (auto it = m.find("bandwidth"); it != m.end())
      l.bandwidth = field(it->second, path + ".bandwidth", Dimension::bytes_per_second, FieldKind::bandwidth);
    if (auto it = m.find("bandwidth_per_sm"); it != m.end())
      l.bandwidth_per_sm = field(it->second, path + ".bandwidth_per_sm", Dimension::bytes_per_cycle, FieldKind::bytes_per_clock);
    if (auto it = m.find("latency"); it != m.end()) l.latency = field(it->second, path + ".latency", Dimension::cycles, FieldKind::latency);
    if (auto it = m.find("patterns"); it != m.end())
      l.patterns = named_fields(it->second, path + ".patterns", Dimension::bytes_per_second, FieldKind::bandwidth);
    if (auto it = m.find("extra"); it != m.end()) l.extra = named_fields(it->second, path + ".extra", std::nullopt, std::nullopt);
    if (auto it = m.find("first_byte"); it != m.end())
      l.first_byte = named_fields(it->second, path + ".first_byte", Dimension::seconds, FieldKind::seconds);
    if (auto it = m.find("ramp_bandwidth"); it != m.end())
      l.ramp_bandwidth = named_fields(it->second, path + ".ramp_bandwidth", Dimension::bytes_per_second, FieldKind::bandwidth);
    if (auto it = m.find("ramp"); it != m.end()) l.ramp = ramps(it->second, path + ".ramp");
    return l;
  }

  Precision precision(const Entry& e, const std::string& path) const {
    try {
      return parse_precision(L.scalar(e, path));
    } catch (const std::invalid_argument& err) {
      L.fail(Loader::value_mark(e), path, err.what());
    }
  }

  TensorInstruction instruction(const YAML::Node& node, const YAML::Mark& where, const std::string& path) const {
    auto m = L.mapping(node, where, path,
                       {"api", "shape", "input", "input_detail", "accumulate", "sparse", "operand_a", "sass", "latency",
                        "throughput", "fma_per_clock_per_sm", "power", "sustained", "best_warps", "best_ilp", "numerics"});
    const YAML::Mark at = node.Mark();
    TensorInstruction ti;
    const Entry& api = L.require(m, "api", at, path);
    ti.api = L.scalar(api, path + ".api");
    if (ti.api != "mma" && ti.api != "wgmma")
      L.fail(Loader::value_mark(api), path + ".api", "expected mma or wgmma, got '" + ti.api + "'");
    const Entry& shape = L.require(m, "shape", at, path);
    ti.shape = L.scalar(shape, path + ".shape");
    {
      // m<M>n<N>k<K>
      const std::string& s = ti.shape;
      size_t i = 0;
      bool ok = true;
      for (char c : {'m', 'n', 'k'}) {
        if (i >= s.size() || s[i] != c) ok = false;
        ++i;
        size_t d = i;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
        if (i == d) ok = false;
      }
      if (!ok || i != s.size()) L.fail(Loader::value_mark(shape), path + ".shape", "expected m<M>n<N>k<K>, got '" + s + "'");
    }
    ti.input = precision(L.require(m, "input", at, path), path + ".input");
    ti.accumulate = precision(L.require(m, "accumulate", at, path), path + ".accumulate");
    if (auto it = m.find("input_detail"); it != m.end()) ti.input_detail = L.nonempty(it->second, path + ".input_detail");
    if (auto it = m.find("sparse"); it != m.end()) ti.sparse = L.boolean(it->second, path + ".sparse");
    if (auto it = m.find("operand_a"); it != m.end()) {
      ti.operand_a = L.scalar(it->second, path + ".operand_a");
      if (ti.api != "wgmma" || (ti.operand_a != "ss" && ti.operand_a != "rs"))
        L.fail(Loader::value_mark(it->second), path + ".operand_a", "only for wgmma, and ss or rs");
    }
    if (auto it = m.find("sass"); it != m.end()) ti.sass = L.nonempty(it->second, path + ".sass");
    if (auto it = m.find("latency"); it != m.end()) ti.latency = field(it->second, path + ".latency", Dimension::cycles, FieldKind::latency);
    if (auto it = m.find("throughput"); it != m.end())
      ti.throughput = field(it->second, path + ".throughput", Dimension::flop_per_second, FieldKind::flop_rate);
    if (auto it = m.find("fma_per_clock_per_sm"); it != m.end())
      ti.fma_per_clock_per_sm = field(it->second, path + ".fma_per_clock_per_sm", Dimension::dimensionless, FieldKind::per_clock_count);
    if (auto it = m.find("power"); it != m.end())
      ti.power = field(it->second, path + ".power", Dimension::watts, FieldKind::power);
    if (auto it = m.find("sustained"); it != m.end())
      ti.sustained = field(it->second, path + ".sustained", Dimension::flop_per_second, FieldKind::flop_rate);
    if (auto it = m.find("best_warps"); it != m.end()) ti.best_warps = L.integer(it->second, path + ".best_warps", kWarpsPerSm);
    if (auto it = m.find("best_ilp"); it != m.end()) ti.best_ilp = L.integer(it->second, path + ".best_ilp", kIlp);
    if (auto it = m.find("numerics"); it != m.end()) ti.numerics = numerics(it->second, path + ".numerics");
    return ti;
  }

  // dpx[i]: one DPX function's latency, calls/clk/SM and the by-blocks curve (issue 14).
  DpxFunction dpx(const YAML::Node& node, const YAML::Mark& where, const std::string& path) const {
    auto m = L.mapping(node, where, path, {"function", "sass", "latency", "throughput_per_sm", "by_blocks"});
    const YAML::Mark at = node.Mark();
    DpxFunction f;
    const Entry& fn = L.require(m, "function", at, path);
    f.function = L.nonempty(fn, path + ".function");
    if (std::find(kDpxFunctionNames.begin(), kDpxFunctionNames.end(), f.function) == kDpxFunctionNames.end())
      L.fail(Loader::value_mark(fn), path + ".function",
             "'" + f.function + "' is not a DPX function of the CUDA math API (e.g. __vimax3_s32, __viaddmax_s16x2)");
    if (auto it = m.find("sass"); it != m.end()) f.sass = L.nonempty(it->second, path + ".sass");
    if (auto it = m.find("latency"); it != m.end()) f.latency = field(it->second, path + ".latency", Dimension::cycles, FieldKind::latency);
    if (auto it = m.find("throughput_per_sm"); it != m.end())
      f.throughput_per_sm =
          field(it->second, path + ".throughput_per_sm", Dimension::dimensionless, FieldKind::per_clock_count);
    if (auto it = m.find("by_blocks"); it != m.end()) {
      const std::string p = path + ".by_blocks";
      const YAML::Node& seq = it->second.value;
      if (!seq.IsSequence() || seq.size() == 0)
        L.fail(Loader::value_mark(it->second), p, "expected a list of [blocks, calls per clock per SM] pairs");
      constexpr IntRange kBlocks{1, 10000000, "blocks"};
      for (std::size_t i = 0; i < seq.size(); ++i) {
        const YAML::Node pt = seq[i];
        const std::string pp = p + "[" + std::to_string(i) + "]";
        if (!pt.IsSequence() || pt.size() != 2) L.fail(pt.Mark(), pp, "expected [blocks, calls per clock per SM], e.g. [114, 63.9]");
        const int blocks = L.integer(Entry{pt[0], pt[0]}, pp + "[0]", kBlocks);
        std::optional<Dimension> bare = Dimension::dimensionless;
        const double v = L.quantity(Entry{pt[1], pt[1]}, pp + "[1]", bare, true, FieldKind::per_clock_count);
        if (!f.by_blocks.empty() && !(blocks > f.by_blocks.back().first))
          L.fail(pt.Mark(), pp, "blocks must grow from one point to the next");
        f.by_blocks.emplace_back(blocks, v);
      }
    }
    if (!f.present()) L.fail(at, path, "needs latency, throughput_per_sm or by_blocks");
    return f;
  }

  // async_copy: {methods: [...], matmul: [...]} (issue 14, probe async-copy).
  AsyncCopy async_copy(const Entry& e) const {
    auto top = L.mapping(e.value, e.key.Mark(), "async_copy", {"methods", "matmul"});
    if (top.empty()) L.fail(e.key.Mark(), "async_copy", "needs methods or matmul");
    AsyncCopy a;
    if (auto it = top.find("methods"); it != top.end()) {
      const YAML::Node& seq = it->second.value;
      if (!seq.IsSequence() || seq.size() == 0)
        L.fail(Loader::value_mark(it->second), "async_copy.methods", "expected a list of copy methods");
      for (std::size_t i = 0; i < seq.size(); ++i) {
        const std::string p = "async_copy.methods[" + std::to_string(i) + "]";
        AsyncCopyMethod m = copy_method(seq[i], seq[i].Mark(), p);
        if (a.method(m.method)) L.fail(seq[i].Mark(), p, "duplicate method " + m.method);
        a.methods.push_back(std::move(m));
      }
    }
    if (auto it = top.find("matmul"); it != top.end()) {
      const YAML::Node& seq = it->second.value;
      if (!seq.IsSequence() || seq.size() == 0)
        L.fail(Loader::value_mark(it->second), "async_copy.matmul", "expected a list of matmul rows");
      for (std::size_t i = 0; i < seq.size(); ++i) {
        const std::string p = "async_copy.matmul[" + std::to_string(i) + "]";
        AsyncMatmulRow r = matmul_row(seq[i], seq[i].Mark(), p);
        if (a.row(r.variant, r.block))
          L.fail(seq[i].Mark(), p, "duplicate row " + r.variant + " block " + std::to_string(r.block));
        a.matmul.push_back(std::move(r));
      }
    }
    return a;
  }

  AsyncCopyMethod copy_method(const YAML::Node& node, const YAML::Mark& where, const std::string& path) const {
    auto m = L.mapping(node, where, path, {"method", "sass", "bandwidth", "config", "sweep"});
    const YAML::Mark at = node.Mark();
    AsyncCopyMethod c;
    const Entry& me = L.require(m, "method", at, path);
    c.method = L.nonempty(me, path + ".method");
    if (std::find(kAsyncCopyMethods.begin(), kAsyncCopyMethods.end(), c.method) == kAsyncCopyMethods.end())
      L.fail(Loader::value_mark(me), path + ".method", "'" + c.method + "' is not a copy method (sync, cp_async, bulk, tensor_2d)");
    if (auto it = m.find("sass"); it != m.end()) c.sass = L.nonempty(it->second, path + ".sass");
    if (auto it = m.find("config"); it != m.end()) c.config = L.nonempty(it->second, path + ".config");
    if (auto it = m.find("bandwidth"); it != m.end())
      c.bandwidth = field(it->second, path + ".bandwidth", Dimension::bytes_per_second, FieldKind::bandwidth);
    if (auto it = m.find("sweep"); it != m.end()) {
      const std::string p = path + ".sweep";
      const YAML::Node& seq = it->second.value;
      if (!seq.IsSequence() || seq.size() == 0)
        L.fail(Loader::value_mark(it->second), p, "expected a list of [threads, stages, tile, bandwidth]");
      constexpr IntRange kThreads{1, 1024, "threads per block"};
      constexpr IntRange kStages{1, 64, "stages"};
      for (std::size_t i = 0; i < seq.size(); ++i) {
        const YAML::Node pt = seq[i];
        const std::string pp = p + "[" + std::to_string(i) + "]";
        if (!pt.IsSequence() || pt.size() != 4)
          L.fail(pt.Mark(), pp, "expected [threads, stages, tile, bandwidth], e.g. [256, 4, \"16 KiB\", \"2.9 TB/s\"]");
        AsyncCopyPoint q;
        q.threads = L.integer(Entry{pt[0], pt[0]}, pp + "[0]", kThreads);
        q.stages = L.integer(Entry{pt[1], pt[1]}, pp + "[1]", kStages);
        std::optional<Dimension> bytes = Dimension::bytes, bw = Dimension::bytes_per_second;
        q.tile_bytes = L.quantity(Entry{pt[2], pt[2]}, pp + "[2]", bytes, true, FieldKind::bytes);
        q.bytes_per_second = L.quantity(Entry{pt[3], pt[3]}, pp + "[3]", bw, true, FieldKind::bandwidth);
        c.sweep.push_back(q);
      }
    }
    if (!c.present()) L.fail(at, path, "needs bandwidth or sweep");
    return c;
  }

  AsyncMatmulRow matmul_row(const YAML::Node& node, const YAML::Mark& where, const std::string& path) const {
    auto m = L.mapping(node, where, path, {"variant", "block", "blocks_per_sm", "spec", "measured"});
    const YAML::Mark at = node.Mark();
    AsyncMatmulRow r;
    const Entry& ve = L.require(m, "variant", at, path);
    r.variant = L.nonempty(ve, path + ".variant");
    if (r.variant != "sync_share" && r.variant != "async_pipe")
      L.fail(Loader::value_mark(ve), path + ".variant", "'" + r.variant + "' is not sync_share or async_pipe");
    constexpr IntRange kBlock{1, 32, "a block edge (block x block threads)"};
    r.block = L.integer(L.require(m, "block", at, path), path + ".block", kBlock);
    const Entry& be = L.require(m, "blocks_per_sm", at, path);
    {
      const std::string p = path + ".blocks_per_sm";
      if (!be.value.IsSequence() || be.value.size() == 0) L.fail(Loader::value_mark(be), p, "expected a list of blocks per SM");
      constexpr IntRange kPerSm{1, 100000, "blocks per SM"};
      for (std::size_t i = 0; i < be.value.size(); ++i) {
        const YAML::Node x = be.value[i];
        const int v = L.integer(Entry{x, x}, p + "[" + std::to_string(i) + "]", kPerSm);
        if (!r.blocks_per_sm.empty() && v <= r.blocks_per_sm.back())
          L.fail(x.Mark(), p + "[" + std::to_string(i) + "]", "blocks per SM must grow from one column to the next");
        r.blocks_per_sm.push_back(v);
      }
    }
    for (const char* which : {"spec", "measured"}) {
      auto it = m.find(which);
      if (it == m.end()) continue;
      const bool spec = std::string(which) == "spec";
      const std::string p = path + "." + which;
      auto s = spec ? L.mapping(it->second.value, it->second.key.Mark(), p, {"values", "gain_percent", "ref"})
                    : L.mapping(it->second.value, it->second.key.Mark(), p,
                                {"values", "probe", "date", "sm_clock", "repeats", "note"});
      CurveSource c;
      const Entry& ve2 = L.require(s, "values", it->second.key.Mark(), p);
      if (!ve2.value.IsSequence() || ve2.value.size() != r.blocks_per_sm.size())
        L.fail(Loader::value_mark(ve2), p + ".values",
               "expected a list of " + std::to_string(r.blocks_per_sm.size()) + " rates, one per blocks_per_sm column");
      for (std::size_t i = 0; i < ve2.value.size(); ++i) {
        std::optional<Dimension> fl = Dimension::flop_per_second;
        c.values.push_back(L.quantity(Entry{ve2.value[i], ve2.value[i]}, p + ".values[" + std::to_string(i) + "]", fl, true,
                                      FieldKind::flop_rate));
      }
      if (spec) {
        const Entry& ref = L.require(s, "ref", it->second.key.Mark(), p);
        c.reference = L.nonempty(ref, p + ".ref");
        check_reference(ref, p + ".ref", c.reference);
        if (auto g = s.find("gain_percent"); g != s.end()) {
          const std::string t = L.scalar(g->second, p + ".gain_percent");
          double v = 0;
          auto [q, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
          if (ec != std::errc{} || q != t.data() + t.size() || !std::isfinite(v) || v < -100 || v > 10000)
            L.fail(Loader::value_mark(g->second), p + ".gain_percent", "expected a percentage (-100 to 10000), got '" + t + "'");
          c.gain_percent = v;
        }
        r.spec = c;
      } else {
        provenance(s, it->second.key.Mark(), p, c.probe, c.date, c.sm_clock_hz, c.note);
        if (auto v = s.find("repeats"); v != s.end()) c.repeats = L.integer(v->second, p + ".repeats", kRepeats);
        r.measured = c;
      }
    }
    if (!r.spec && !r.measured) L.fail(at, path, "needs spec or measured values");
    return r;
  }

  // dsm: distributed shared memory (issue 14): latencies, ring-based copy, histogram.
  DistributedSharedMemory dsm(const Entry& e, const std::string& path) const {
    auto m = L.mapping(e.value, e.key.Mark(), path,
                       {"latency", "local_latency", "ring_bandwidth", "ring_bandwidth_per_sm", "ring_best",
                        "ring_by_cluster_size", "ring", "histogram"});
    DistributedSharedMemory d;
    constexpr IntRange kCluster{1, 64, "a cluster size"};
    constexpr IntRange kThreads{1, 4096, "threads per block"};
    constexpr IntRange kBlocks{1, 10000000, "blocks"};
    constexpr IntRange kBins{1, 1 << 24, "histogram bins"};
    if (auto it = m.find("latency"); it != m.end()) d.latency = field(it->second, path + ".latency", Dimension::cycles, FieldKind::latency);
    if (auto it = m.find("local_latency"); it != m.end())
      d.local_latency = field(it->second, path + ".local_latency", Dimension::cycles, FieldKind::latency);
    if (auto it = m.find("ring_bandwidth"); it != m.end())
      d.ring_bandwidth = field(it->second, path + ".ring_bandwidth", Dimension::bytes_per_second, FieldKind::bandwidth);
    if (auto it = m.find("ring_bandwidth_per_sm"); it != m.end())
      d.ring_bandwidth_per_sm =
          field(it->second, path + ".ring_bandwidth_per_sm", Dimension::bytes_per_cycle, FieldKind::bytes_per_clock);
    if (auto it = m.find("ring_best"); it != m.end()) {
      const std::string p = path + ".ring_best";
      auto b = L.mapping(it->second.value, it->second.key.Mark(), p, {"cluster_size", "block_threads", "ilp"});
      const YAML::Mark at = it->second.key.Mark();
      d.ring_cluster_size = L.integer(L.require(b, "cluster_size", at, p), p + ".cluster_size", kCluster);
      d.ring_block_threads = L.integer(L.require(b, "block_threads", at, p), p + ".block_threads", kThreads);
      d.ring_ilp = L.integer(L.require(b, "ilp", at, p), p + ".ilp", kIlp);
      if (!d.ring_bandwidth.measured) L.fail(at, p, "names the configuration of a measured ring_bandwidth, which is missing");
    }
    if (auto it = m.find("ring_by_cluster_size"); it != m.end()) {
      const std::string p = path + ".ring_by_cluster_size";
      const YAML::Node& seq = it->second.value;
      if (!seq.IsSequence() || seq.size() == 0)
        L.fail(Loader::value_mark(it->second), p, "expected a list of {cluster_size, bandwidth, block_threads, ilp}");
      for (std::size_t i = 0; i < seq.size(); ++i) {
        const std::string pp = p + "[" + std::to_string(i) + "]";
        const YAML::Mark at = seq[i].Mark();
        auto c = L.mapping(seq[i], at, pp, {"cluster_size", "block_threads", "ilp", "bandwidth"});
        DsmRingByClusterSize x;
        x.cluster_size = L.integer(L.require(c, "cluster_size", at, pp), pp + ".cluster_size", kCluster);
        if (auto v = c.find("block_threads"); v != c.end()) x.block_threads = L.integer(v->second, pp + ".block_threads", kThreads);
        if (auto v = c.find("ilp"); v != c.end()) x.ilp = L.integer(v->second, pp + ".ilp", kIlp);
        x.bandwidth = field(L.require(c, "bandwidth", at, pp), pp + ".bandwidth", Dimension::bytes_per_second, FieldKind::bandwidth);
        if ((x.block_threads || x.ilp) && !x.bandwidth.measured)
          L.fail(at, pp, "block_threads and ilp describe a measured bandwidth, which is missing");
        if (!d.ring_by_cluster_size.empty() && !(x.cluster_size > d.ring_by_cluster_size.back().cluster_size))
          L.fail(at, pp, "cluster sizes must grow from one entry to the next");
        d.ring_by_cluster_size.push_back(std::move(x));
      }
    }
    // A curve: {points: [{...}, ...], probe, date, sm_clock, note}; `point` reads one point.
    const auto curve = [&](const Entry& ce, const std::string& p, auto& out, auto point) {
      auto c = L.mapping(ce.value, ce.key.Mark(), p, {"points", "probe", "date", "sm_clock", "note"});
      const Entry& pts = L.require(c, "points", ce.key.Mark(), p);
      if (!pts.value.IsSequence() || pts.value.size() == 0) L.fail(Loader::value_mark(pts), p + ".points", "expected a list of points");
      for (std::size_t i = 0; i < pts.value.size(); ++i) {
        const YAML::Node pt = pts.value[i];
        const std::string pp = p + ".points[" + std::to_string(i) + "]";
        auto x = point(pt, pp);
        if (std::find(out.points.begin(), out.points.end(), x) != out.points.end()) L.fail(pt.Mark(), pp, "duplicate point");
        out.points.push_back(x);
      }
      provenance(c, ce.key.Mark(), p, out.probe, out.date, out.sm_clock_hz, out.note);
    };
    const auto same_config = [&](const auto& pts, const auto& x, const auto& key) {
      return std::any_of(pts.begin(), pts.end(), [&](const auto& y) { return key(y) == key(x); });
    };
    if (auto it = m.find("ring"); it != m.end())
      curve(it->second, path + ".ring", d.ring, [&](const YAML::Node& pt, const std::string& pp) {
        auto c = L.mapping(pt, pt.Mark(), pp, {"cluster_size", "block_threads", "ilp", "blocks", "bandwidth"});
        DsmRingPoint x;
        x.cluster_size = L.integer(L.require(c, "cluster_size", pt.Mark(), pp), pp + ".cluster_size", kCluster);
        x.block_threads = L.integer(L.require(c, "block_threads", pt.Mark(), pp), pp + ".block_threads", kThreads);
        x.ilp = L.integer(L.require(c, "ilp", pt.Mark(), pp), pp + ".ilp", kIlp);
        x.blocks = L.integer(L.require(c, "blocks", pt.Mark(), pp), pp + ".blocks", kBlocks);
        std::optional<Dimension> bw = Dimension::bytes_per_second;
        x.bytes_per_second = L.quantity(L.require(c, "bandwidth", pt.Mark(), pp), pp + ".bandwidth", bw, true, FieldKind::bandwidth);
        if (x.blocks % x.cluster_size != 0) L.fail(pt.Mark(), pp + ".blocks", "not a multiple of the cluster size");
        const auto key = [](const DsmRingPoint& y) { return std::tuple(y.cluster_size, y.block_threads, y.ilp); };
        if (same_config(d.ring.points, x, key)) L.fail(pt.Mark(), pp, "duplicate configuration (cluster_size, block_threads, ilp)");
        return x;
      });
    if (auto it = m.find("histogram"); it != m.end())
      curve(it->second, path + ".histogram", d.histogram, [&](const YAML::Node& pt, const std::string& pp) {
        auto c = L.mapping(pt, pt.Mark(), pp, {"cluster_size", "block_threads", "bins", "elements_per_second"});
        DsmHistogramPoint x;
        x.cluster_size = L.integer(L.require(c, "cluster_size", pt.Mark(), pp), pp + ".cluster_size", kCluster);
        x.block_threads = L.integer(L.require(c, "block_threads", pt.Mark(), pp), pp + ".block_threads", kThreads);
        x.bins = L.integer(L.require(c, "bins", pt.Mark(), pp), pp + ".bins", kBins);
        std::optional<Dimension> bare = Dimension::dimensionless;
        x.elements_per_second = L.quantity(L.require(c, "elements_per_second", pt.Mark(), pp), pp + ".elements_per_second",
                                           bare, true, FieldKind::per_second_count);
        if (x.bins % x.cluster_size != 0) L.fail(pt.Mark(), pp + ".bins", "not a multiple of the cluster size");
        const auto key = [](const DsmHistogramPoint& y) { return std::tuple(y.cluster_size, y.block_threads, y.bins); };
        if (same_config(d.histogram.points, x, key)) L.fail(pt.Mark(), pp, "duplicate configuration (cluster_size, block_threads, bins)");
        return x;
      });
    if (!d.present()) L.fail(e.key.Mark(), path, "needs at least one of latency, local_latency, ring_bandwidth, ring, histogram, ...");
    return d;
  }

  // A mean error: a plain non-negative finite number ("1.29e-03", "0").
  double error_number(const Entry& e, const std::string& path) const {
    const std::string s = L.scalar(e, path);
    double v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || p != s.data() + s.size() || !std::isfinite(v))
      L.fail(Loader::value_mark(e), path, "'" + s + "' is not a number");
    if (v < 0) L.fail(Loader::value_mark(e), path, "an error is not negative, got " + s);
    return v;
  }

  std::map<std::string, std::map<std::string, double>> error_table(const Entry& e, const std::string& path) const {
    std::map<std::string, std::map<std::string, double>> out;
    for (const auto& [k, sub] : L.mapping(e.value, e.key.Mark(), path, {"multiplication", "inner_product", "accumulation"})) {
      const std::string p = path + "." + k;
      auto m = L.mapping(sub.value, sub.key.Mark(), p, {"init_low", "init_fp32"});
      if (m.empty()) L.fail(sub.key.Mark(), p, "needs init_low or init_fp32");
      for (const auto& [init, v] : m) out[k][init] = error_number(v, p + "." + init);
    }
    return out;
  }

  // tensor_instructions[i].numerics: verdicts, errors, provenance (probe + date, or ref).
  NumericBehaviour numerics(const Entry& e, const std::string& path) const {
    auto m = L.mapping(e.value, e.key.Mark(), path,
                       {"verdicts", "summary", "errors", "errors_out", "cases", "models", "samples", "probe", "date", "ref", "note"});
    NumericBehaviour nb;
    const YAML::Mark at = e.key.Mark();
    if (auto it = m.find("verdicts"); it != m.end()) {
      for (const auto& [k, v] : L.mapping(it->second.value, it->second.key.Mark(), path + ".verdicts", {})) {
        if (std::find(kNumericVerdictKeys.begin(), kNumericVerdictKeys.end(), k) == kNumericVerdictKeys.end()) {
          std::string keys;
          for (const auto& x : kNumericVerdictKeys) keys += (keys.empty() ? "" : ", ") + x;
          L.fail(v.key.Mark(), path + ".verdicts." + k, "unknown verdict (allowed: " + keys + ")");
        }
        nb.verdicts[k] = L.nonempty(v, path + ".verdicts." + k);
      }
    }
    if (auto it = m.find("summary"); it != m.end()) nb.summary = L.nonempty(it->second, path + ".summary");
    if (auto it = m.find("errors"); it != m.end()) nb.errors = error_table(it->second, path + ".errors");
    if (auto it = m.find("errors_out"); it != m.end()) nb.errors_out = error_table(it->second, path + ".errors_out");
    constexpr IntRange kCount{0, 100000000, "a count"};
    if (auto it = m.find("cases"); it != m.end()) nb.cases = L.integer(it->second, path + ".cases", kCount);
    if (auto it = m.find("models"); it != m.end()) nb.models = L.integer(it->second, path + ".models", kCount);
    if (auto it = m.find("samples"); it != m.end()) nb.samples = L.integer(it->second, path + ".samples", kCount);
    if (nb.verdicts.empty() && nb.errors.empty()) L.fail(at, path, "needs verdicts or errors");
    if (auto it = m.find("ref"); it != m.end()) {
      if (m.count("probe") || m.count("date")) L.fail(it->second.key.Mark(), path + ".ref", "a paper's figures (ref) or a measurement (probe, date), not both");
      nb.reference = L.nonempty(it->second, path + ".ref");
      check_reference(it->second, path + ".ref", nb.reference);
      if (auto n = m.find("note"); n != m.end()) nb.note = L.scalar(n->second, path + ".note");
    } else {
      double clock = 0;
      provenance(m, at, path, nb.probe, nb.date, clock, nb.note);
    }
    return nb;
  }
};

HardwareDescriptor read_descriptor(const YAML::Node& root, const Loader& L, const std::string& default_id) {
  const YAML::Mark top = YAML::Mark();  // line 1, column 1
  if (!root.IsMap()) L.fail(root.IsDefined() && !root.IsNull() ? root.Mark() : top, "", "a descriptor is a YAML mapping");
  auto m = L.mapping(root, top, "",
                     {"schema", "tool_version", "id", "identity", "sm_clock", "memory_clock", "fixed_costs", "memory",
                      "compute", "tensor_instructions", "dpx", "async_copy", "dsm", "references", "notes"});
  HardwareDescriptor d;
  const Entry& schema = L.require(m, "schema", top, "");
  d.schema = L.scalar(schema, "schema");
  if (d.schema != kHardwareSchema)
    L.fail(Loader::value_mark(schema), "schema",
           "unsupported schema '" + d.schema + "' (this build reads " + kHardwareSchema + ")");
  if (auto it = m.find("tool_version"); it != m.end()) d.tool_version = L.nonempty(it->second, "tool_version");
  d.id = default_id;
  if (auto it = m.find("id"); it != m.end()) {
    d.id = L.nonempty(it->second, "id");
    if (!valid_name(d.id)) L.fail(Loader::value_mark(it->second), "id", "ids are lower case letters, digits, '-' and '_'");
  }

  DescriptorReader R{L, {}};
  if (auto it = m.find("references"); it != m.end())
    for (const auto& [k, e] : L.mapping(it->second.value, it->second.key.Mark(), "references", {})) {
      if (!valid_name(k)) L.fail(e.key.Mark(), "references." + k, "keys are lower case letters, digits, '-' and '_'");
      R.references[k] = L.nonempty(e, "references." + k);
    }
  d.references = R.references;

  {
    const Entry& id = L.require(m, "identity", top, "");
    auto im = L.mapping(id.value, id.key.Mark(), "identity",
                        {"name", "uuid", "sm_count", "compute_capability", "driver", "cuda_version", "memory_type"});
    const YAML::Mark at = id.key.Mark();
    d.identity.name = L.nonempty(L.require(im, "name", at, "identity"), "identity.name");
    d.identity.sm_count = L.integer(L.require(im, "sm_count", at, "identity"), "identity.sm_count", kSmCount);
    if (auto it = im.find("uuid"); it != im.end()) d.identity.uuid = L.nonempty(it->second, "identity.uuid");
    if (auto it = im.find("compute_capability"); it != im.end()) {
      d.identity.compute_capability = L.nonempty(it->second, "identity.compute_capability");
      const auto& cc = d.identity.compute_capability;
      const size_t dot = cc.find('.');
      const bool ok = dot != std::string::npos && dot > 0 && dot + 1 < cc.size() &&
                      std::all_of(cc.begin(), cc.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; }) &&
                      cc.find('.', dot + 1) == std::string::npos;
      if (!ok) L.fail(Loader::value_mark(it->second), "identity.compute_capability", "expected major.minor, e.g. 9.0, got '" + cc + "'");
    }
    if (auto it = im.find("driver"); it != im.end()) d.identity.driver = L.nonempty(it->second, "identity.driver");
    if (auto it = im.find("cuda_version"); it != im.end()) d.identity.cuda_version = L.nonempty(it->second, "identity.cuda_version");
    if (auto it = im.find("memory_type"); it != im.end()) d.identity.memory_type = L.nonempty(it->second, "identity.memory_type");
  }

  if (auto it = m.find("sm_clock"); it != m.end()) d.sm_clock = R.field(it->second, "sm_clock", Dimension::hertz, FieldKind::clock);
  if (auto it = m.find("memory_clock"); it != m.end()) d.memory_clock = R.field(it->second, "memory_clock", Dimension::hertz, FieldKind::clock);
  if (auto it = m.find("fixed_costs"); it != m.end()) {
    auto fm = L.mapping(it->second.value, it->second.key.Mark(), "fixed_costs", {"launch_single", "launch_back_to_back"});
    if (auto f = fm.find("launch_single"); f != fm.end())
      d.fixed_costs.launch_single = R.field(f->second, "fixed_costs.launch_single", Dimension::seconds, FieldKind::seconds);
    if (auto f = fm.find("launch_back_to_back"); f != fm.end())
      d.fixed_costs.launch_back_to_back = R.field(f->second, "fixed_costs.launch_back_to_back", Dimension::seconds, FieldKind::seconds);
  }

  {
    const Entry& mem = L.require(m, "memory", top, "");
    auto mm = L.mapping(mem.value, mem.key.Mark(), "memory", {"dram", "l2", "l1", "shared"});
    bool any_bandwidth = false;
    for (const auto& [k, e] : mm) {
      MemoryLevel l = R.level(e, "memory." + k);
      any_bandwidth = any_bandwidth || l.bandwidth.present();
      d.memory[parse_memory_level(k)] = std::move(l);
    }
    if (!any_bandwidth) L.fail(mem.key.Mark(), "memory", "at least one memory level needs a bandwidth");
  }

  if (auto it = m.find("compute"); it != m.end()) {
    for (const auto& [uk, ue] : L.mapping(it->second.value, it->second.key.Mark(), "compute",
                                          {"cuda_core", "tensor_core", "cuda_core_outer_product", "cuda_core_gemm_loop",
                                           "cuda_core_power", "tensor_core_mma_sync"})) {
      if (uk == "cuda_core_outer_product" || uk == "cuda_core_gemm_loop" || uk == "cuda_core_power" ||
          uk == "tensor_core_mma_sync") {
        const bool watts = uk == "cuda_core_power";
        auto& target = watts                          ? d.cuda_core_power
                       : uk == "tensor_core_mma_sync" ? d.tensor_core_mma_sync
                       : uk == "cuda_core_gemm_loop"  ? d.gemm_loop
                                                      : d.outer_product;
        if (ue.value.IsMap() && ue.value.size() == 0) continue;
        for (const auto& [pk, pe] : L.mapping(ue.value, ue.key.Mark(), "compute." + uk,
                                              {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "int4", "int32"}))
          target[parse_precision(pk)] = watts ? R.field(pe, "compute." + uk + "." + pk, Dimension::watts, FieldKind::power)
                                              : R.field(pe, "compute." + uk + "." + pk, Dimension::flop_per_second,
                                                        FieldKind::flop_rate);
        continue;
      }
      auto& unit = d.compute[parse_compute_unit(uk)];
      if (ue.value.IsMap() && ue.value.size() == 0) continue;
      for (const auto& [pk, pe] : L.mapping(ue.value, ue.key.Mark(), "compute." + uk,
                                            {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "int4", "int32"}))
        unit[parse_precision(pk)] = R.field(pe, "compute." + uk + "." + pk, Dimension::flop_per_second, FieldKind::flop_rate);
    }
  }

  if (auto it = m.find("tensor_instructions"); it != m.end()) {
    const YAML::Node& seq = it->second.value;
    if (!seq.IsSequence()) L.fail(Loader::value_mark(it->second), "tensor_instructions", "expected a list of instructions");
    std::set<std::string> keys;
    for (size_t i = 0; i < seq.size(); ++i) {
      const std::string p = "tensor_instructions[" + std::to_string(i) + "]";
      TensorInstruction ti = R.instruction(seq[i], seq[i].Mark(), p);
      if (!keys.insert(ti.key()).second) L.fail(seq[i].Mark(), p, "duplicate instruction " + ti.key());
      d.tensor_instructions.push_back(std::move(ti));
    }
  }

  if (auto it = m.find("dpx"); it != m.end()) {
    const YAML::Node& seq = it->second.value;
    if (!seq.IsSequence()) L.fail(Loader::value_mark(it->second), "dpx", "expected a list of DPX functions");
    std::set<std::string> names;
    for (size_t i = 0; i < seq.size(); ++i) {
      const std::string p = "dpx[" + std::to_string(i) + "]";
      DpxFunction f = R.dpx(seq[i], seq[i].Mark(), p);
      if (!names.insert(f.function).second) L.fail(seq[i].Mark(), p, "duplicate function " + f.function);
      d.dpx.push_back(std::move(f));
    }
  }

  if (auto it = m.find("async_copy"); it != m.end()) d.async_copy = R.async_copy(it->second);

  if (auto it = m.find("dsm"); it != m.end()) d.dsm = R.dsm(it->second, "dsm");

  if (auto it = m.find("notes"); it != m.end()) {
    const YAML::Node& seq = it->second.value;
    if (!seq.IsSequence()) L.fail(Loader::value_mark(it->second), "notes", "expected a list of texts");
    for (size_t i = 0; i < seq.size(); ++i) {
      if (!seq[i].IsScalar()) L.fail(seq[i].Mark(), "notes[" + std::to_string(i) + "]", "expected a text");
      d.notes.push_back(seq[i].Scalar());
    }
  }
  return d;
}

// ---- writing ----

void emit_quantity(YAML::Emitter& out, const char* key, double v, Dimension d) {
  out << YAML::Key << key << YAML::Value << YAML::DoubleQuoted << format_exact(v, d);
}

// Significant digits of the number in "57.125 MiB" (5) or "0.0032" (2).
int significant_digits(const std::string& text) {
  std::string number = text.substr(0, text.find(' '));
  number = number.substr(0, number.find_first_of("eE"));
  int n = 0;
  bool leading = true;
  for (char c : number) {
    if (!std::isdigit(static_cast<unsigned char>(c))) continue;
    if (leading && c == '0') continue;
    leading = false;
    ++n;
  }
  return n;
}

// Step (a power of ten, in the base unit) a measured median, min and max are rounded to: half a
// step stays within a tenth of the spread of the repeats (max - min) and of their standard
// deviation (cv x median), with at least 3 significant digits. nullopt when no spread is known.
std::optional<int> measured_step(const MeasuredValue& m) {
  double tol = std::numeric_limits<double>::infinity();
  const double lo = m.min > 0 ? m.min : m.median, hi = m.max > 0 ? m.max : m.median;
  if (hi > lo) tol = hi - lo;
  if (m.cv > 0) tol = std::min(tol, m.cv * std::fabs(m.median));
  if (!std::isfinite(tol) || !(tol > 0)) return std::nullopt;
  const int e = decimal_exponent(m.median);
  int k = decimal_exponent(tol / 5);                  // 10^k <= tol / 5
  k = std::min(k, e - 2);                             // at least 3 significant digits
  if (m.min > 0) k = std::min(k, decimal_exponent(m.min));  // the minimum stays positive
  return std::max(k, e - 14);                         // at most 15
}

// How a measured value is written: median, min and max in one decimal unit, down to the step the
// repeats support (see measured_step; without a spread the exact text when it has at most 6
// significant digits, as "57.125 MiB", else 6), cv with 2 significant digits, SM clock with 5.
struct MeasuredTexts {
  std::string median, min, max, cv, sm_clock;
  bool operator==(const MeasuredTexts&) const = default;
};

std::string rounded_in_own_unit(double v, Dimension d, int step) {
  return format_rounded(v, d, step, decimal_prefix_exponent(round_to_step(v, step), d));
}

MeasuredTexts measured_texts(MeasuredValue m, Dimension d) {
  MeasuredTexts t;
  if (m.cv != 0) {
    t.cv = format_rounded(m.cv, Dimension::dimensionless, decimal_exponent(m.cv) - 1, 0);
    m.cv = parse_as(t.cv, Dimension::dimensionless);  // the step follows the cv as written
  }
  if (m.sm_clock_hz != 0) t.sm_clock = rounded_in_own_unit(m.sm_clock_hz, Dimension::hertz, decimal_exponent(m.sm_clock_hz) - 4);
  if (const auto step = measured_step(m)) {
    const int prefix = decimal_prefix_exponent(round_to_step(m.median, *step), d);
    t.median = format_rounded(m.median, d, *step, prefix);
    if (m.min != 0) t.min = format_rounded(m.min, d, *step, prefix);
    if (m.max != 0) t.max = format_rounded(m.max, d, *step, prefix);
  } else {
    const auto text = [d](double v) {
      std::string exact = format_exact(v, d);
      return significant_digits(exact) <= 6 ? exact : rounded_in_own_unit(v, d, decimal_exponent(v) - 5);
    };
    t.median = text(m.median);
    if (m.min != 0) t.min = text(m.min);
    if (m.max != 0) t.max = text(m.max);
  }
  return t;
}

// The texts a save of the loaded file writes again: rounding once more changes nothing
// (to_yaml(load(to_yaml(d))) == to_yaml(d)). A few passes reach it when a rounded value moves the step.
MeasuredTexts stable_measured_texts(const MeasuredValue& m, Dimension d) {
  MeasuredTexts t = measured_texts(m, d);
  for (int pass = 0; pass < 8; ++pass) {
    MeasuredValue r = m;
    r.median = parse_as(t.median, d);
    if (!t.min.empty()) r.min = parse_as(t.min, d);
    if (!t.max.empty()) r.max = parse_as(t.max, d);
    if (!t.cv.empty()) r.cv = parse_as(t.cv, Dimension::dimensionless);
    if (!t.sm_clock.empty()) r.sm_clock_hz = parse_as(t.sm_clock, Dimension::hertz);
    MeasuredTexts again = measured_texts(r, d);
    if (again == t) break;
    t = std::move(again);
  }
  return t;
}

void emit_text(YAML::Emitter& out, const char* key, const std::string& s) {
  out << YAML::Key << key << YAML::Value << YAML::DoubleQuoted << s;
}

void emit_field(YAML::Emitter& out, const std::string& key, const Field& f) {
  if (!f.present()) return;
  out << YAML::Key << key << YAML::Value << YAML::BeginMap;
  if (f.spec) {
    out << YAML::Key << "spec" << YAML::Value << YAML::Flow << YAML::BeginMap;
    emit_quantity(out, "value", f.spec->value, f.dimension);
    emit_text(out, "ref", f.spec->reference);
    out << YAML::EndMap;
  }
  if (f.measured) {
    const MeasuredValue& m = *f.measured;
    const MeasuredTexts t = stable_measured_texts(m, f.dimension);
    out << YAML::Key << "measured" << YAML::Value << YAML::BeginMap;
    emit_text(out, "median", t.median);
    if (!t.min.empty()) emit_text(out, "min", t.min);
    if (!t.max.empty()) emit_text(out, "max", t.max);
    if (m.repeats != 0) out << YAML::Key << "repeats" << YAML::Value << m.repeats;
    if (!t.cv.empty()) emit_text(out, "cv", t.cv);
    emit_text(out, "probe", m.probe);
    emit_text(out, "date", m.date);
    if (!t.sm_clock.empty()) emit_text(out, "sm_clock", t.sm_clock);
    if (m.flagged) out << YAML::Key << "flagged" << YAML::Value << true;
    if (!m.note.empty()) emit_text(out, "note", m.note);
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

void emit_named(YAML::Emitter& out, const char* key, const std::map<std::string, Field>& fields) {
  if (std::none_of(fields.begin(), fields.end(), [](const auto& kv) { return kv.second.present(); })) return;
  out << YAML::Key << key << YAML::Value << YAML::BeginMap;
  for (const auto& [k, f] : fields) emit_field(out, k, f);
  out << YAML::EndMap;
}

void emit_ramps(YAML::Emitter& out, const std::map<std::string, RampTable>& ramps) {
  if (std::none_of(ramps.begin(), ramps.end(), [](const auto& kv) { return kv.second.present(); })) return;
  out << YAML::Key << "ramp" << YAML::Value << YAML::BeginMap;
  for (const auto& [k, t] : ramps) {
    if (!t.present()) continue;
    out << YAML::Key << k << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "points" << YAML::Value << YAML::BeginSeq;
    for (const auto& [x, y] : t.points)
      out << YAML::Flow << YAML::BeginSeq << YAML::DoubleQuoted << format_exact(x, Dimension::bytes) << YAML::DoubleQuoted
          << format_exact(y, Dimension::seconds) << YAML::EndSeq;
    out << YAML::EndSeq;
    emit_text(out, "probe", t.probe);
    emit_text(out, "date", t.date);
    if (t.sm_clock_hz > 0) emit_quantity(out, "sm_clock", t.sm_clock_hz, Dimension::hertz);
    if (!t.note.empty()) emit_text(out, "note", t.note);
    if (!t.timing.empty()) emit_text(out, "timing", t.timing);
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

// Shortest text that reads back to the same double.
std::string shortest(double v) {
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, p);
}

void emit_errors(YAML::Emitter& out, const char* key, const std::map<std::string, std::map<std::string, double>>& t) {
  if (t.empty()) return;
  out << YAML::Key << key << YAML::Value << YAML::BeginMap;
  for (const auto& [exp, inits] : t) {
    out << YAML::Key << exp << YAML::Value << YAML::Flow << YAML::BeginMap;
    for (const auto& [init, v] : inits) out << YAML::Key << init << YAML::Value << shortest(v);
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

void emit_numerics(YAML::Emitter& out, const NumericBehaviour& nb) {
  out << YAML::Key << "numerics" << YAML::Value << YAML::BeginMap;
  if (!nb.verdicts.empty()) {
    out << YAML::Key << "verdicts" << YAML::Value << YAML::BeginMap;
    for (const auto& k : kNumericVerdictKeys)  // a fixed order
      if (auto it = nb.verdicts.find(k); it != nb.verdicts.end()) emit_text(out, k.c_str(), it->second);
    out << YAML::EndMap;
  }
  if (!nb.summary.empty()) emit_text(out, "summary", nb.summary);
  emit_errors(out, "errors", nb.errors);
  emit_errors(out, "errors_out", nb.errors_out);
  if (nb.cases) out << YAML::Key << "cases" << YAML::Value << nb.cases;
  if (nb.models) out << YAML::Key << "models" << YAML::Value << nb.models;
  if (nb.samples) out << YAML::Key << "samples" << YAML::Value << nb.samples;
  if (!nb.reference.empty()) {
    emit_text(out, "ref", nb.reference);
  } else {
    emit_text(out, "probe", nb.probe);
    emit_text(out, "date", nb.date);
  }
  if (!nb.note.empty()) emit_text(out, "note", nb.note);
  out << YAML::EndMap;
}

}  // namespace

static bool leap_year(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

// "" when `s` is a real ISO 8601 date or date-time (month 1-12, the month's days, hour 0-23,
// minute 0-59, second 0-60, offset within +-14:00), else why not.
std::string iso_date_problem(const std::string& s) {
  static const std::regex iso8601(
      R"((\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|([+-])(\d{2}):?(\d{2}))?)?)");
  std::smatch m;
  if (!std::regex_match(s, m, iso8601)) return "expected an ISO 8601 date, e.g. 2026-11-21T11:00:00Z";
  const auto num = [&](int i) { return m[i].matched ? std::stoi(m[i].str()) : 0; };
  const int year = num(1), month = num(2), day = num(3);
  static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12) return "month " + m[2].str() + " is not 01-12";
  const int last = days[month - 1] + (month == 2 && leap_year(year));
  if (day < 1 || day > last) return "day " + m[3].str() + " is not in 01-" + std::to_string(last);
  if (m[4].matched && num(4) > 23) return "hour " + m[4].str() + " is not 00-23";
  if (m[5].matched && num(5) > 59) return "minute " + m[5].str() + " is not 00-59";
  if (m[6].matched && num(6) > 60) return "second " + m[6].str() + " is not 00-60";
  if (m[9].matched && (num(9) > 14 || num(10) > 59 || (num(9) == 14 && num(10) > 0)))
    return "UTC offset " + m[8].str() + m[9].str() + ":" + m[10].str() + " is not within +-14:00";
  return {};
}

HardwareDescriptor parse_descriptor(const std::string& yaml_text, const std::string& name_for_errors) {
  const Loader L(name_for_errors);
  if (yaml_text.size() > kMaxYamlInputBytes)
    L.fail(YAML::Mark::null_mark(), "", "larger than " + std::to_string(kMaxYamlInputBytes >> 20) + " MiB, the limit for a descriptor");
  try {
    check_yaml_input(yaml_text, name_for_errors);
  } catch (const InputFileError& e) {
    throw DescriptorError(e.file(), e.line(), e.column(), e.key(), e.cause());
  }
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    L.fail(e.mark, "", "not valid YAML: " + e.msg);
  }
  return read_descriptor(root, L, std::filesystem::path(name_for_errors).stem().string());
}

HardwareDescriptor load_descriptor(const std::filesystem::path& file) {
  std::string text;
  try {
    text = read_input_file(file, kMaxYamlInputBytes, "descriptor");
  } catch (const InputFileError& e) {
    throw DescriptorError(e.file(), e.line(), e.column(), e.key(), e.cause());
  }
  return parse_descriptor(text, file.string());
}

std::string to_yaml(const HardwareDescriptor& d) {
  YAML::Emitter out;
  out.SetIndent(2);
  out << YAML::BeginMap;
  out << YAML::Key << "schema" << YAML::Value << d.schema;
  if (!d.tool_version.empty()) emit_text(out, "tool_version", d.tool_version);
  out << YAML::Key << "id" << YAML::Value << YAML::DoubleQuoted << d.id;

  out << YAML::Key << "identity" << YAML::Value << YAML::BeginMap;
  emit_text(out, "name", d.identity.name);
  if (!d.identity.uuid.empty()) emit_text(out, "uuid", d.identity.uuid);
  out << YAML::Key << "sm_count" << YAML::Value << d.identity.sm_count;
  if (!d.identity.compute_capability.empty()) emit_text(out, "compute_capability", d.identity.compute_capability);
  if (!d.identity.driver.empty()) emit_text(out, "driver", d.identity.driver);
  if (!d.identity.cuda_version.empty()) emit_text(out, "cuda_version", d.identity.cuda_version);
  if (!d.identity.memory_type.empty()) emit_text(out, "memory_type", d.identity.memory_type);
  out << YAML::EndMap;

  emit_field(out, "sm_clock", d.sm_clock);
  emit_field(out, "memory_clock", d.memory_clock);
  if (d.fixed_costs.launch_single.present() || d.fixed_costs.launch_back_to_back.present()) {
    out << YAML::Key << "fixed_costs" << YAML::Value << YAML::BeginMap;
    emit_field(out, "launch_single", d.fixed_costs.launch_single);
    emit_field(out, "launch_back_to_back", d.fixed_costs.launch_back_to_back);
    out << YAML::EndMap;
  }

  out << YAML::Key << "memory" << YAML::Value << YAML::BeginMap;
  for (const auto& [kind, l] : d.memory) {
    out << YAML::Key << std::string(to_string(kind)) << YAML::Value;
    const bool empty = !l.capacity.present() && !l.bandwidth.present() && !l.bandwidth_per_sm.present() &&
                       !l.latency.present() &&
                       std::none_of(l.patterns.begin(), l.patterns.end(), [](const auto& kv) { return kv.second.present(); }) &&
                       std::none_of(l.extra.begin(), l.extra.end(), [](const auto& kv) { return kv.second.present(); }) &&
                       std::none_of(l.first_byte.begin(), l.first_byte.end(), [](const auto& kv) { return kv.second.present(); }) &&
                       std::none_of(l.ramp_bandwidth.begin(), l.ramp_bandwidth.end(), [](const auto& kv) { return kv.second.present(); }) &&
                       std::none_of(l.ramp.begin(), l.ramp.end(), [](const auto& kv) { return kv.second.present(); });
    if (empty) {
      out << YAML::Flow << YAML::BeginMap << YAML::EndMap;
      continue;
    }
    out << YAML::BeginMap;
    emit_field(out, "capacity", l.capacity);
    emit_field(out, "bandwidth", l.bandwidth);
    emit_field(out, "bandwidth_per_sm", l.bandwidth_per_sm);
    emit_field(out, "latency", l.latency);
    emit_named(out, "patterns", l.patterns);
    emit_named(out, "extra", l.extra);
    emit_named(out, "first_byte", l.first_byte);
    emit_named(out, "ramp_bandwidth", l.ramp_bandwidth);
    emit_ramps(out, l.ramp);
    out << YAML::EndMap;
  }
  out << YAML::EndMap;

  const auto any_present = [](const std::map<Precision, Field>& m) {
    return std::any_of(m.begin(), m.end(), [](const auto& kv) { return kv.second.present(); });
  };
  bool any_compute = any_present(d.outer_product) || any_present(d.gemm_loop) || any_present(d.cuda_core_power) ||
                     any_present(d.tensor_core_mma_sync);
  for (const auto& [u, m] : d.compute) any_compute = any_compute || any_present(m);
  if (any_compute) {
    out << YAML::Key << "compute" << YAML::Value << YAML::BeginMap;
    const auto emit_map = [&](const std::string& key, const std::map<Precision, Field>& m) {
      if (!any_present(m)) return;
      out << YAML::Key << key << YAML::Value << YAML::BeginMap;
      for (const auto& [p, f] : m) emit_field(out, std::string(to_string(p)), f);
      out << YAML::EndMap;
    };
    for (const auto& [u, m] : d.compute) emit_map(std::string(to_string(u)), m);
    emit_map("cuda_core_outer_product", d.outer_product);
    emit_map("cuda_core_gemm_loop", d.gemm_loop);
    emit_map("cuda_core_power", d.cuda_core_power);
    emit_map("tensor_core_mma_sync", d.tensor_core_mma_sync);
    out << YAML::EndMap;
  }

  if (!d.tensor_instructions.empty()) {
    out << YAML::Key << "tensor_instructions" << YAML::Value << YAML::BeginSeq;
    for (const auto& ti : d.tensor_instructions) {
      out << YAML::BeginMap;
      out << YAML::Key << "api" << YAML::Value << ti.api;
      out << YAML::Key << "shape" << YAML::Value << ti.shape;
      out << YAML::Key << "input" << YAML::Value << std::string(to_string(ti.input));
      if (!ti.input_detail.empty()) emit_text(out, "input_detail", ti.input_detail);
      out << YAML::Key << "accumulate" << YAML::Value << std::string(to_string(ti.accumulate));
      if (ti.sparse) out << YAML::Key << "sparse" << YAML::Value << true;
      if (!ti.operand_a.empty()) out << YAML::Key << "operand_a" << YAML::Value << ti.operand_a;
      if (!ti.sass.empty()) emit_text(out, "sass", ti.sass);
      emit_field(out, "latency", ti.latency);
      emit_field(out, "throughput", ti.throughput);
      emit_field(out, "fma_per_clock_per_sm", ti.fma_per_clock_per_sm);
      if (ti.power.present()) emit_field(out, "power", ti.power);
      if (ti.sustained.present()) emit_field(out, "sustained", ti.sustained);
      if (ti.best_warps) out << YAML::Key << "best_warps" << YAML::Value << *ti.best_warps;
      if (ti.best_ilp) out << YAML::Key << "best_ilp" << YAML::Value << *ti.best_ilp;
      if (ti.numerics) emit_numerics(out, *ti.numerics);
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }

  if (std::any_of(d.dpx.begin(), d.dpx.end(), [](const DpxFunction& f) { return f.present(); })) {
    out << YAML::Key << "dpx" << YAML::Value << YAML::BeginSeq;
    for (const auto& f : d.dpx) {
      if (!f.present()) continue;
      out << YAML::BeginMap;
      emit_text(out, "function", f.function);
      if (!f.sass.empty()) emit_text(out, "sass", f.sass);
      emit_field(out, "latency", f.latency);
      emit_field(out, "throughput_per_sm", f.throughput_per_sm);
      if (!f.by_blocks.empty()) {
        out << YAML::Key << "by_blocks" << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (const auto& [blocks, v] : f.by_blocks)
          out << YAML::Flow << YAML::BeginSeq << blocks << YAML::DoubleQuoted << shortest(v) << YAML::EndSeq;
        out << YAML::EndSeq;
      }
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }

  if (d.async_copy.present()) {
    out << YAML::Key << "async_copy" << YAML::Value << YAML::BeginMap;
    if (!d.async_copy.methods.empty()) {
      out << YAML::Key << "methods" << YAML::Value << YAML::BeginSeq;
      for (const auto& c : d.async_copy.methods) {
        out << YAML::BeginMap;
        emit_text(out, "method", c.method);
        if (!c.sass.empty()) emit_text(out, "sass", c.sass);
        emit_field(out, "bandwidth", c.bandwidth);
        if (!c.config.empty()) emit_text(out, "config", c.config);
        if (!c.sweep.empty()) {
          out << YAML::Key << "sweep" << YAML::Value << YAML::BeginSeq;
          for (const auto& q : c.sweep)
            out << YAML::Flow << YAML::BeginSeq << q.threads << q.stages << YAML::DoubleQuoted
                << format_exact(q.tile_bytes, Dimension::bytes) << YAML::DoubleQuoted
                << format_exact(q.bytes_per_second, Dimension::bytes_per_second) << YAML::EndSeq;
          out << YAML::EndSeq;
        }
        out << YAML::EndMap;
      }
      out << YAML::EndSeq;
    }
    if (!d.async_copy.matmul.empty()) {
      out << YAML::Key << "matmul" << YAML::Value << YAML::BeginSeq;
      for (const auto& r : d.async_copy.matmul) {
        out << YAML::BeginMap;
        emit_text(out, "variant", r.variant);
        out << YAML::Key << "block" << YAML::Value << r.block;
        out << YAML::Key << "blocks_per_sm" << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (int b : r.blocks_per_sm) out << b;
        out << YAML::EndSeq;
        const auto values = [&](const CurveSource& c) {
          out << YAML::Key << "values" << YAML::Value << YAML::Flow << YAML::BeginSeq;
          for (double v : c.values) out << YAML::DoubleQuoted << format_exact(v, Dimension::flop_per_second);
          out << YAML::EndSeq;
        };
        if (r.spec) {
          out << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
          values(*r.spec);
          if (r.spec->gain_percent) emit_text(out, "gain_percent", shortest(*r.spec->gain_percent));
          emit_text(out, "ref", r.spec->reference);
          out << YAML::EndMap;
        }
        if (r.measured) {
          const CurveSource& c = *r.measured;
          out << YAML::Key << "measured" << YAML::Value << YAML::BeginMap;
          values(c);
          emit_text(out, "probe", c.probe);
          emit_text(out, "date", c.date);
          if (c.sm_clock_hz > 0) emit_quantity(out, "sm_clock", c.sm_clock_hz, Dimension::hertz);
          if (c.repeats) out << YAML::Key << "repeats" << YAML::Value << c.repeats;
          if (!c.note.empty()) emit_text(out, "note", c.note);
          out << YAML::EndMap;
        }
        out << YAML::EndMap;
      }
      out << YAML::EndSeq;
    }
    out << YAML::EndMap;
  }

  if (d.dsm.present()) {
    const DistributedSharedMemory& x = d.dsm;
    out << YAML::Key << "dsm" << YAML::Value << YAML::BeginMap;
    emit_field(out, "latency", x.latency);
    emit_field(out, "local_latency", x.local_latency);
    emit_field(out, "ring_bandwidth", x.ring_bandwidth);
    emit_field(out, "ring_bandwidth_per_sm", x.ring_bandwidth_per_sm);
    if (x.ring_cluster_size > 0 && x.ring_bandwidth.measured)
      out << YAML::Key << "ring_best" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "cluster_size"
          << YAML::Value << x.ring_cluster_size << YAML::Key << "block_threads" << YAML::Value << x.ring_block_threads
          << YAML::Key << "ilp" << YAML::Value << x.ring_ilp << YAML::EndMap;
    if (!x.ring_by_cluster_size.empty()) {
      out << YAML::Key << "ring_by_cluster_size" << YAML::Value << YAML::BeginSeq;
      for (const auto& c : x.ring_by_cluster_size) {
        out << YAML::BeginMap << YAML::Key << "cluster_size" << YAML::Value << c.cluster_size;
        if (c.bandwidth.measured && c.block_threads > 0) out << YAML::Key << "block_threads" << YAML::Value << c.block_threads;
        if (c.bandwidth.measured && c.ilp > 0) out << YAML::Key << "ilp" << YAML::Value << c.ilp;
        emit_field(out, "bandwidth", c.bandwidth);
        out << YAML::EndMap;
      }
      out << YAML::EndSeq;
    }
    const auto provenance = [&](const auto& c) {
      emit_text(out, "probe", c.probe);
      emit_text(out, "date", c.date);
      if (c.sm_clock_hz > 0) emit_quantity(out, "sm_clock", c.sm_clock_hz, Dimension::hertz);
      if (!c.note.empty()) emit_text(out, "note", c.note);
    };
    if (x.ring.present()) {
      out << YAML::Key << "ring" << YAML::Value << YAML::BeginMap << YAML::Key << "points" << YAML::Value << YAML::BeginSeq;
      for (const auto& p : x.ring.points)
        out << YAML::Flow << YAML::BeginMap << YAML::Key << "cluster_size" << YAML::Value << p.cluster_size << YAML::Key
            << "block_threads" << YAML::Value << p.block_threads << YAML::Key << "ilp" << YAML::Value << p.ilp << YAML::Key
            << "blocks" << YAML::Value << p.blocks << YAML::Key << "bandwidth" << YAML::Value << YAML::DoubleQuoted
            << format_exact(p.bytes_per_second, Dimension::bytes_per_second) << YAML::EndMap;
      out << YAML::EndSeq;
      provenance(x.ring);
      out << YAML::EndMap;
    }
    if (x.histogram.present()) {
      out << YAML::Key << "histogram" << YAML::Value << YAML::BeginMap << YAML::Key << "points" << YAML::Value << YAML::BeginSeq;
      for (const auto& p : x.histogram.points)
        out << YAML::Flow << YAML::BeginMap << YAML::Key << "cluster_size" << YAML::Value << p.cluster_size << YAML::Key
            << "block_threads" << YAML::Value << p.block_threads << YAML::Key << "bins" << YAML::Value << p.bins << YAML::Key
            << "elements_per_second" << YAML::Value << YAML::DoubleQuoted << shortest(p.elements_per_second) << YAML::EndMap;
      out << YAML::EndSeq;
      provenance(x.histogram);
      out << YAML::EndMap;
    }
    out << YAML::EndMap;
  }

  if (!d.references.empty()) {
    out << YAML::Key << "references" << YAML::Value << YAML::BeginMap;
    for (const auto& [k, v] : d.references) out << YAML::Key << k << YAML::Value << YAML::DoubleQuoted << v;
    out << YAML::EndMap;
  }
  if (!d.notes.empty()) {
    out << YAML::Key << "notes" << YAML::Value << YAML::BeginSeq;
    for (const auto& n : d.notes) out << YAML::DoubleQuoted << n;
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
  if (!out.good()) throw std::logic_error("descriptor YAML emitter: " + out.GetLastError());
  return std::string(out.c_str()) + "\n";
}

void save_descriptor(const HardwareDescriptor& d, const std::filesystem::path& file) {
  write_file_atomically(file, to_yaml(d));
}

}  // namespace ceiling
