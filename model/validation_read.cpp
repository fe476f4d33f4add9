// Reading validation results (docs/FORMATS.md "ceiling/validation/1") as a stream: every row goes
// straight from the JSON tokens into its struct, so a file of a million rows is never held as a
// document (json_stream.hpp says why). Messages: "validation results: WHERE.KEY: cause".
#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <unordered_map>

#include "json_stream.hpp"
#include "validation.hpp"

namespace ceiling::validation {
namespace {

using Tok = JsonPull::Tok;

class Reader {
 public:
  explicit Reader(JsonPull& in) : in_(in) {}

  [[noreturn]] void bad(const std::string& where, const std::string& cause) const {
    throw std::runtime_error("validation results: " + where + ": " + cause);
  }
  std::string found(Tok t) const { return t == Tok::number ? in_.text() : JsonPull::tok_word(t); }
  [[noreturn]] void wrong(Tok t, const std::string& where, std::string_view key, const char* expected) const {
    bad(where + "." + std::string(key), std::string("expected ") + expected + ", found " + found(t));
  }
  double num(Tok t, const std::string& where, std::string_view key) const {
    if (t != Tok::number) wrong(t, where, key, "a number");
    return in_.number();
  }
  int integer(Tok t, const std::string& where, std::string_view key) const {
    if (t != Tok::number) wrong(t, where, key, "an integer");
    const double x = in_.number();
    if (!(std::isfinite(x) && x == std::floor(x) && x >= double(std::numeric_limits<int>::min()) &&
          x <= double(std::numeric_limits<int>::max())))
      wrong(t, where, key, "an integer");
    return static_cast<int>(x);
  }
  std::string str(Tok t, const std::string& where, std::string_view key) const {
    if (t != Tok::string) wrong(t, where, key, "a string");
    return in_.text();
  }
  bool boolean(Tok t, const std::string& where, std::string_view key) const {
    if (t != Tok::boolean) wrong(t, where, key, "true or false");
    return in_.flag();
  }

  // Calls on(key_index, value token) for each member whose key is in `keys` (the index) and skips
  // the others; every key of `required` (indices) must appear, checked in that order at the end.
  // A null value of a key not required counts as absent (its default stays).
  template <class On>
  void object(Tok t, const std::string& where, const std::unordered_map<std::string_view, int>& keys,
              std::initializer_list<std::pair<int, const char*>> required, On&& on) {
    if (t != Tok::begin_object) bad(where, std::string("expected an object, found ") + found(t));
    std::uint64_t seen = 0;
    for (;;) {
      const Tok k = in_.next();
      if (k == Tok::end_object) break;
      const auto it = keys.find(std::string_view(in_.text()));
      const Tok v = in_.next();
      if (it == keys.end()) {
        in_.skip(v);
        continue;
      }
      if (v == Tok::null) {
        bool req = false;
        for (const auto& [i, name] : required) req |= i == it->second;
        if (!req) continue;
      }
      seen |= std::uint64_t{1} << it->second;
      on(it->second, v);
    }
    for (const auto& [i, name] : required)
      if (!(seen & (std::uint64_t{1} << i))) bad(where, std::string("missing key '") + name + "'");
  }
  // Calls row(index, first token) for each element of an array (at most max_rows).
  template <class Row>
  void array(Tok t, const std::string& where, std::string_view key, Row&& row) {
    if (t != Tok::begin_array) wrong(t, where, key, "an array");
    for (std::size_t i = 0;; ++i) {
      const Tok e = in_.next();
      if (e == Tok::end_array) return;
      if (i >= kMaxRows)
        bad(std::string(key), "more than " + std::to_string(kMaxRows) + " entries (the limit of one results file)");
      row(i, e);
    }
  }

  std::map<std::string, double> size(Tok t, const std::string& where) {
    if (t != Tok::begin_object) bad(where + ".size", "not an object");
    std::map<std::string, double> out;
    for (;;) {
      if (in_.next() == Tok::end_object) return out;
      std::string k = in_.text();
      const Tok v = in_.next();
      out[k] = num(v, where + ".size", k);
    }
  }

  KernelResult result(Tok t, const std::string& w);
  SpeedupResult speedup(Tok t, const std::string& w);
  Geomean geomean(Tok t, const std::string& w);
  OverlapFit fit(Tok t, const std::string& w);
  ValidationReport report();

  static constexpr std::size_t kMaxRows = 4'000'000;

 private:
  JsonPull& in_;
};

using Keys = std::unordered_map<std::string_view, int>;

KernelResult Reader::result(Tok t, const std::string& w) {
  enum {
    kernel, variant, precision, size_, working_set_bytes, memory_level, work_flop, traffic_bytes, intensity, time_s,
    achieved_bytes_per_s, achieved_flop_per_s, bound_time_s, efficiency, verdict, verdict_reason,
    bound_bandwidth, bandwidth_source, bound_level, t_memory_s, t_compute_s, alpha, eq22, eq23, upper, tight_bound,
    bound_note, sm_clock_hz, l2_flushed, flagged, flag_reason, verify_error, description, streams, dram_pattern,
    implementation, label, passes_
  };
  static const Keys keys = {
      {"kernel", kernel}, {"variant", variant}, {"precision", precision}, {"size", size_},
      {"working_set_bytes", working_set_bytes}, {"memory_level", memory_level}, {"work_flop", work_flop},
      {"traffic_bytes", traffic_bytes}, {"intensity", intensity}, {"time_s", time_s},
      {"achieved_bytes_per_s", achieved_bytes_per_s}, {"achieved_flop_per_s", achieved_flop_per_s},
      {"bound_time_s", bound_time_s}, {"efficiency", efficiency}, {"verdict", verdict},
      {"verdict_reason", verdict_reason}, {"bound_bandwidth_bytes_per_s", bound_bandwidth},
      {"bandwidth_source", bandwidth_source}, {"bound_level", bound_level}, {"t_memory_s", t_memory_s},
      {"t_compute_s", t_compute_s}, {"alpha", alpha}, {"speedup_bound_eq22", eq22}, {"speedup_limit_eq23", eq23},
      {"speedup_upper_bound", upper}, {"tight_bound", tight_bound}, {"bound_note", bound_note},
      {"sm_clock_hz", sm_clock_hz}, {"l2_flushed", l2_flushed}, {"flagged", flagged}, {"flag_reason", flag_reason},
      {"verify_error", verify_error}, {"description", description}, {"streams", streams},
      {"dram_pattern", dram_pattern}, {"implementation", implementation}, {"label", label}, {"passes", passes_}};
  KernelResult x;
  bool has_bound_level = false;
  object(t, w, keys,
         {{kernel, "kernel"}, {variant, "variant"}, {precision, "precision"}, {size_, "size"},
          {working_set_bytes, "working_set_bytes"}, {memory_level, "memory_level"}, {work_flop, "work_flop"},
          {traffic_bytes, "traffic_bytes"}, {intensity, "intensity"}, {time_s, "time_s"},
          {achieved_bytes_per_s, "achieved_bytes_per_s"}, {achieved_flop_per_s, "achieved_flop_per_s"},
          {bound_time_s, "bound_time_s"}, {efficiency, "efficiency"}, {verdict, "verdict"},
          {verdict_reason, "verdict_reason"}},
         [&](int k, Tok v) {
           switch (k) {
             case kernel: x.kernel = str(v, w, "kernel"); break;
             case variant: x.variant = str(v, w, "variant"); break;
             case precision: x.precision = str(v, w, "precision"); break;
             case size_: x.size = size(v, w); break;
             case working_set_bytes: x.working_set_bytes = num(v, w, "working_set_bytes"); break;
             case memory_level: x.memory_level = str(v, w, "memory_level"); break;
             case work_flop: x.work_flop = num(v, w, "work_flop"); break;
             case traffic_bytes: x.traffic_bytes = num(v, w, "traffic_bytes"); break;
             case intensity: x.intensity = num(v, w, "intensity"); break;
             case time_s: {
               enum { median, min, max, cv, repeats, launches };
               static const Keys tk = {{"median", median}, {"min", min},         {"max", max},
                                       {"cv", cv},         {"repeats", repeats}, {"launches", launches}};
               const std::string tw = w + ".time_s";
               object(v, tw, tk, {{median, "median"}, {min, "min"}, {max, "max"}, {cv, "cv"}, {repeats, "repeats"}},
                      [&](int q, Tok u) {
                        switch (q) {
                          case median: x.time_s.median = num(u, tw, "median"); break;
                          case min: x.time_s.min = num(u, tw, "min"); break;
                          case max: x.time_s.max = num(u, tw, "max"); break;
                          case cv: x.time_s.cv = num(u, tw, "cv"); break;
                          case repeats: x.time_s.repeats = integer(u, tw, "repeats"); break;
                          case launches: x.time_s.launches = integer(u, tw, "launches"); break;
                        }
                      });
               break;
             }
             case achieved_bytes_per_s: x.achieved_bytes_per_s = num(v, w, "achieved_bytes_per_s"); break;
             case achieved_flop_per_s: x.achieved_flop_per_s = num(v, w, "achieved_flop_per_s"); break;
             case bound_time_s: x.bound_time_s = num(v, w, "bound_time_s"); break;
             case efficiency: x.efficiency = num(v, w, "efficiency"); break;
             case verdict: x.verdict = str(v, w, "verdict"); break;
             case verdict_reason: x.verdict_reason = str(v, w, "verdict_reason"); break;
             case bound_bandwidth: x.bound_bandwidth = num(v, w, "bound_bandwidth_bytes_per_s"); break;
             case bandwidth_source: x.bandwidth_source = str(v, w, "bandwidth_source"); break;
             case bound_level:
               x.bound_level = str(v, w, "bound_level");
               has_bound_level = true;
               break;
             case t_memory_s: x.t_memory_s = num(v, w, "t_memory_s"); break;
             case t_compute_s: x.t_compute_s = num(v, w, "t_compute_s"); break;
             case alpha: x.alpha = num(v, w, "alpha"); break;
             case eq22: x.speedup_bound_eq22 = num(v, w, "speedup_bound_eq22"); break;
             case eq23: x.speedup_limit_eq23 = num(v, w, "speedup_limit_eq23"); break;
             case upper: x.speedup_upper_bound = num(v, w, "speedup_upper_bound"); break;
             case tight_bound: {
               if (v != Tok::begin_object) {  // not an object: ignored, as before
                 in_.skip(v);
                 break;
               }
               enum { time, eff, launch, first_byte, ramp, bw, from, tverdict, missing, passes, treason };
               static const Keys bk = {{"time_s", time},         {"efficiency", eff},
                                       {"launch_s", launch},     {"first_byte_s", first_byte}, {"ramp_s", ramp},
                                       {"bandwidth_bytes_per_s", bw}, {"first_byte_from", from},
                                       {"verdict", tverdict},    {"missing", missing}, {"passes", passes},
                                       {"reason", treason}};
               const std::string bw_ = w + ".tight_bound";
               object(v, bw_, bk, {}, [&](int q, Tok u) {
                 switch (q) {
                   case time: x.tight_bound_time_s = num(u, bw_, "time_s"); break;
                   case eff: x.tight_efficiency = num(u, bw_, "efficiency"); break;
                   case launch: x.tight_launch_s = num(u, bw_, "launch_s"); break;
                   case first_byte: x.tight_first_byte_s = num(u, bw_, "first_byte_s"); break;
                   case ramp: x.tight_ramp_s = num(u, bw_, "ramp_s"); break;
                   case bw: x.tight_bandwidth = num(u, bw_, "bandwidth_bytes_per_s"); break;
                   case from: x.tight_first_byte_from = str(u, bw_, "first_byte_from"); break;
                   case tverdict: x.tight_verdict = str(u, bw_, "verdict"); break;
                   case missing: x.tight_missing = str(u, bw_, "missing"); break;
                   case treason: x.tight_reason = str(u, bw_, "reason"); break;
                   case passes:
                     x.tight_passes = integer(u, bw_, "passes");
                     if (x.tight_passes < 1) wrong(u, bw_, "passes", "an integer >= 1");
                     break;
                 }
               });
               break;
             }
             case bound_note: x.bound_note = str(v, w, "bound_note"); break;
             case sm_clock_hz: x.sm_clock_hz = num(v, w, "sm_clock_hz"); break;
             case l2_flushed: x.l2_flushed = boolean(v, w, "l2_flushed"); break;
             case flagged: x.flagged = boolean(v, w, "flagged"); break;
             case flag_reason: x.flag_reason = str(v, w, "flag_reason"); break;
             case verify_error: x.verify_error = num(v, w, "verify_error"); break;
             case description: x.description = str(v, w, "description"); break;
             case streams: {
               if (v != Tok::begin_object) {
                 in_.skip(v);
                 break;
               }
               static const Keys sk = {{"read_bytes", 0}, {"write_bytes", 1}};
               const std::string sw = w + ".streams";
               object(v, sw, sk, {}, [&](int q, Tok u) {
                 (q == 0 ? x.read_bytes : x.write_bytes) = num(u, sw, q == 0 ? "read_bytes" : "write_bytes");
               });
               break;
             }
             case dram_pattern: {
               if (v != Tok::begin_object) {
                 in_.skip(v);
                 break;
               }
               static const Keys dk = {{"name", 0}, {"bytes_per_s", 1}};
               const std::string dw = w + ".dram_pattern";
               object(v, dw, dk, {}, [&](int q, Tok u) {
                 if (q == 0) x.dram_pattern = str(u, dw, "name");
                 else x.dram_pattern_bytes_per_s = num(u, dw, "bytes_per_s");
               });
               break;
             }
             case implementation: x.implementation = str(v, w, "implementation"); break;
             case passes_:
               x.passes = integer(v, w, "passes");
               if (x.passes < 1) wrong(v, w, "passes", "an integer >= 1");
               break;
             case label: x.label = str(v, w, "label"); break;
           }
         });
  if (!has_bound_level) x.bound_level = x.memory_level;
  return x;
}

SpeedupResult Reader::speedup(Tok t, const std::string& w) {
  enum { kernel, precision, size_, working_set_bytes, memory_level, measured, eq22, eq23, upper, alpha, verdict,
         reason, cc_impl, tc_impl, label };
  static const Keys keys = {{"kernel", kernel}, {"precision", precision}, {"size", size_},
                            {"working_set_bytes", working_set_bytes}, {"memory_level", memory_level},
                            {"measured", measured}, {"bound_eq22", eq22}, {"limit_eq23", eq23},
                            {"upper_bound", upper}, {"alpha", alpha}, {"verdict", verdict},
                            {"verdict_reason", reason}, {"cuda_core_implementation", cc_impl},
                            {"tensor_core_implementation", tc_impl}, {"label", label}};
  SpeedupResult s;
  s.precision = "fp64";
  bool has_upper = false;
  object(t, w, keys,
         {{kernel, "kernel"}, {size_, "size"}, {working_set_bytes, "working_set_bytes"},
          {memory_level, "memory_level"}, {measured, "measured"}, {eq22, "bound_eq22"}, {eq23, "limit_eq23"},
          {verdict, "verdict"}},
         [&](int k, Tok v) {
           switch (k) {
             case kernel: s.kernel = str(v, w, "kernel"); break;
             case precision: s.precision = str(v, w, "precision"); break;
             case size_: s.size = size(v, w); break;
             case working_set_bytes: s.working_set_bytes = num(v, w, "working_set_bytes"); break;
             case memory_level: s.memory_level = str(v, w, "memory_level"); break;
             case measured: s.measured = num(v, w, "measured"); break;
             case eq22: s.bound_eq22 = num(v, w, "bound_eq22"); break;
             case eq23: s.limit_eq23 = num(v, w, "limit_eq23"); break;
             case upper:
               s.upper_bound = num(v, w, "upper_bound");
               has_upper = true;
               break;
             case alpha: s.alpha = num(v, w, "alpha"); break;
             case verdict: s.verdict = str(v, w, "verdict"); break;
             case reason: s.verdict_reason = str(v, w, "verdict_reason"); break;
             case cc_impl: s.cuda_core_implementation = str(v, w, "cuda_core_implementation"); break;
             case tc_impl: s.tensor_core_implementation = str(v, w, "tensor_core_implementation"); break;
             case label: s.label = str(v, w, "label"); break;
           }
         });
  if (!has_upper) s.upper_bound = std::max(1.0, s.bound_eq22);
  return s;
}

Geomean Reader::geomean(Tok t, const std::string& w) {
  enum { kernel, precision, side, cc_over_tc, cc_speedup, count, impl };
  static const Keys keys = {{"kernel", kernel}, {"precision", precision}, {"side", side},
                            {"cc_over_tc", cc_over_tc}, {"cc_speedup_over_tc", cc_speedup}, {"count", count},
                            {"cuda_core_implementation", impl}};
  Geomean g;
  g.precision = "fp64";
  bool has_speedup = false;
  object(t, w, keys, {{kernel, "kernel"}, {side, "side"}, {cc_over_tc, "cc_over_tc"}, {count, "count"}},
         [&](int k, Tok v) {
           switch (k) {
             case kernel: g.kernel = str(v, w, "kernel"); break;
             case precision: g.precision = str(v, w, "precision"); break;
             case side: g.side = str(v, w, "side"); break;
             case cc_over_tc: g.cc_over_tc = num(v, w, "cc_over_tc"); break;
             case cc_speedup:
               g.cc_speedup = num(v, w, "cc_speedup_over_tc");
               has_speedup = true;
               break;
             case count: g.count = integer(v, w, "count"); break;
             case impl: g.cuda_core_implementation = str(v, w, "cuda_core_implementation"); break;
           }
         });
  if (!has_speedup) g.cc_speedup = g.cc_over_tc > 0 ? 1.0 / g.cc_over_tc : 0.0;
  return g;
}

OverlapFit Reader::fit(Tok t, const std::string& w) {
  enum { kernel, variant, precision, phi, r2, points, phi_raw, t_other, clamped, note, stderr_, rms, total, level,
         selection };
  static const Keys keys = {{"kernel", kernel},       {"variant", variant},         {"precision", precision},
                            {"phi", phi},             {"r2", r2},                   {"points", points},
                            {"phi_raw", phi_raw},     {"t_other_s", t_other},       {"clamped", clamped},
                            {"note", note},           {"phi_stderr", stderr_},      {"residual_rms", rms},
                            {"points_total", total},  {"memory_level", level},      {"selection", selection}};
  OverlapFit f;
  f.precision = "fp64";
  bool has_raw = false, has_total = false;
  object(t, w, keys, {{kernel, "kernel"}, {variant, "variant"}, {phi, "phi"}, {r2, "r2"}, {points, "points"}},
         [&](int k, Tok v) {
           switch (k) {
             case kernel: f.kernel = str(v, w, "kernel"); break;
             case variant: f.variant = str(v, w, "variant"); break;
             case precision: f.precision = str(v, w, "precision"); break;
             case phi: f.phi = num(v, w, "phi"); break;
             case r2: f.r2 = num(v, w, "r2"); break;
             case points: f.points = integer(v, w, "points"); break;
             case phi_raw:
               f.phi_raw = num(v, w, "phi_raw");
               has_raw = true;
               break;
             case t_other: f.t_other_s = num(v, w, "t_other_s"); break;
             case clamped: f.clamped = boolean(v, w, "clamped"); break;
             case note: f.note = str(v, w, "note"); break;
             case stderr_: f.phi_stderr = num(v, w, "phi_stderr"); break;
             case rms: f.residual_rms = num(v, w, "residual_rms"); break;
             case total:
               f.points_total = integer(v, w, "points_total");
               has_total = true;
               break;
             case level: f.memory_level = str(v, w, "memory_level"); break;
             case selection: f.selection = str(v, w, "selection"); break;
           }
         });
  if (!has_raw) f.phi_raw = f.phi;
  if (!has_total) f.points_total = f.points;
  return f;
}

ValidationReport Reader::report() {
  enum { schema, tool_version, date, command_line, device, sm_clock_hz, l2_split, descriptor, wall, results, speedups,
         geomeans, fits };
  static const Keys keys = {{"schema", schema},       {"tool_version", tool_version}, {"date", date},
                            {"command_line", command_line}, {"device", device},   {"sm_clock_hz", sm_clock_hz},
                            {"l2_split_bytes", l2_split}, {"descriptor", descriptor}, {"wall_time_s", wall},
                            {"results", results},     {"speedups", speedups},     {"geomeans", geomeans},
                            {"overlap_fits", fits}};
  ValidationReport r;
  const std::string top = "top level";
  const Tok first = in_.next();
  if (first != Tok::begin_object) bad(top, std::string("expected an object, found ") + found(first));
  object(first, top, keys,
         {{schema, "schema"}, {tool_version, "tool_version"}, {date, "date"}, {command_line, "command_line"},
          {device, "device"}, {sm_clock_hz, "sm_clock_hz"}, {descriptor, "descriptor"}, {results, "results"},
          {speedups, "speedups"}, {geomeans, "geomeans"}, {fits, "overlap_fits"}},
         [&](int k, Tok v) {
           switch (k) {
             case schema:
               r.schema = str(v, top, "schema");
               if (r.schema != kValidationSchema)
                 throw std::runtime_error("validation results: schema '" + r.schema + "', expected '" +
                                          kValidationSchema + "'");
               break;
             case tool_version: r.tool_version = str(v, top, "tool_version"); break;
             case date: r.date = str(v, top, "date"); break;
             case command_line: r.command_line = str(v, top, "command_line"); break;
             case device: {
               enum { name, uuid, sm_count, cc, driver, cuda, l2 };
               static const Keys dk = {{"name", name},     {"uuid", uuid},         {"sm_count", sm_count},
                                       {"compute_capability", cc}, {"driver", driver}, {"cuda_version", cuda},
                                       {"l2_bytes", l2}};
               const std::string dw = "device";
               if (v != Tok::begin_object) bad(top + ".device", std::string("expected an object, found ") + found(v));
               object(v, dw, dk,
                      {{name, "name"}, {uuid, "uuid"}, {sm_count, "sm_count"}, {cc, "compute_capability"},
                       {driver, "driver"}, {cuda, "cuda_version"}},
                      [&](int q, Tok u) {
                        switch (q) {
                          case name: r.device.name = str(u, dw, "name"); break;
                          case uuid: r.device.uuid = str(u, dw, "uuid"); break;
                          case sm_count: r.device.sm_count = integer(u, dw, "sm_count"); break;
                          case cc: r.device.compute_capability = str(u, dw, "compute_capability"); break;
                          case driver: r.device.driver = str(u, dw, "driver"); break;
                          case cuda: r.device.cuda_version = str(u, dw, "cuda_version"); break;
                          case l2: r.device.l2_bytes = num(u, dw, "l2_bytes"); break;
                        }
                      });
               break;
             }
             case sm_clock_hz: r.sm_clock_hz = num(v, top, "sm_clock_hz"); break;
             case l2_split: r.l2_split_bytes = num(v, top, "l2_split_bytes"); break;
             case descriptor: {
               static const Keys dk = {{"id", 0}, {"path", 1}};
               if (v != Tok::begin_object)
                 bad(top + ".descriptor", std::string("expected an object, found ") + found(v));
               object(v, "descriptor", dk, {{0, "id"}, {1, "path"}}, [&](int q, Tok u) {
                 (q == 0 ? r.descriptor_id : r.descriptor_path) = str(u, "descriptor", q == 0 ? "id" : "path");
               });
               break;
             }
             case wall: r.wall_time_s = num(v, top, "wall_time_s"); break;
             case results:
               // Room for as many rows as the file could hold (>= 600 bytes each): pages never
               // written are never resident, and the list is not copied as it grows.
               r.results.reserve(std::min<std::uint64_t>(in_.size_hint() / 600 + 16, kMaxRows));
               array(v, top, "results", [&](std::size_t i, Tok e) {
                 r.results.push_back(result(e, "results[" + std::to_string(i) + "]"));
               });
               break;
             case speedups:
               r.speedups.reserve(std::min<std::uint64_t>(in_.size_hint() / 300 + 16, kMaxRows));
               array(v, top, "speedups", [&](std::size_t i, Tok e) {
                 r.speedups.push_back(speedup(e, "speedups[" + std::to_string(i) + "]"));
               });
               break;
             case geomeans:
               array(v, top, "geomeans", [&](std::size_t i, Tok e) {
                 r.geomeans.push_back(geomean(e, "geomeans[" + std::to_string(i) + "]"));
               });
               break;
             case fits:
               array(v, top, "overlap_fits", [&](std::size_t i, Tok e) {
                 r.overlap_fits.push_back(fit(e, "overlap_fits[" + std::to_string(i) + "]"));
               });
               break;
           }
         });
  if (in_.next() != Tok::end) bad(top, "more than one value");  // next() throws first; kept for clarity
  return r;
}

// The limits of the results reader: the file is streamed, so its size is bounded only by what
// a report can handle (kMaxRows rows per list); strings and nesting as every JSON file.
JsonLimits results_limits() {
  JsonLimits l;
  l.max_bytes = std::uintmax_t{8} << 30;
  return l;
}

}  // namespace

ValidationReport from_json(const nlohmann::json& j) {
  const std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  JsonPull in(JsonPull::FromText{}, text, "validation results", results_limits());
  Reader rd(in);
  return rd.report();
}

ValidationReport load_report(const std::filesystem::path& file) {
  JsonPull in(file, "validation results", results_limits());  // JsonFileError names the file
  Reader rd(in);
  try {
    return rd.report();
  } catch (const JsonFileError&) {
    throw;
  } catch (const std::exception& e) {
    throw std::runtime_error(file.string() + ": " + e.what());
  }
}

}  // namespace ceiling::validation
