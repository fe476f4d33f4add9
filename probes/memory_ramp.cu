// The ramp from latency-bound to bandwidth-bound (issue 12, the tight bound's first-byte term):
// per memory level and stream pattern, the least time all SMs take to move X bytes as X grows,
// timed exactly as validate times a kernel at that level (DRAM: L2 evicted clean, events around
// one launch; L2: back-to-back launches, per launch), the launch configuration searched at each
// size. The lower envelope T(X) >= first_byte + X / BW of those times (model/memory_roof.hpp)
// gives memory.<level>.first_byte.<pattern> and, for L2, the level's read/write/scale patterns
// (memory.l2.patterns.*); for DRAM, whose patterns come from dram-bandwidth, the slope goes to
// memory.dram.ramp_bandwidth.* so the tight roof stays under every ramp point.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "../model/memory_roof.hpp"
#include "memory_probes.hpp"
#include "probe_util.hpp"
#include "registry.hpp"

namespace ceiling::probes {
namespace {

using mem::RampTiming;
using mem::StreamPattern;

constexpr StreamPattern kPatterns[] = {StreamPattern::read, StreamPattern::write, StreamPattern::scale};

// Working sets from lo to hi, `per_octave` points per doubling (both ends included).
std::vector<double> sizes_between(double lo, double hi, int per_octave) {
  std::vector<double> v;
  const int steps = std::max(1, static_cast<int>(std::ceil(std::log2(hi / lo) * per_octave - 1e-9)));
  for (int i = 0; i <= steps; ++i) v.push_back(lo * std::pow(hi / lo, static_cast<double>(i) / steps));
  return v;
}

MeasuredValue fitted(double value, int points, const std::string& note, double clock_hz) {
  MeasuredValue m;
  m.median = m.min = m.max = value;  // one value: the envelope is already a minimum over sizes
  m.repeats = points;
  m.cv = 0;
  m.probe = "memory-ramp";
  m.date = gpu::utc_now_iso8601();
  m.sm_clock_hz = clock_hz;
  m.note = note;
  return m;
}

ProbeOutput run_memory_ramp(const ProbeContext& ctx) {
  CUDA_CHECK(cudaSetDevice(ctx.device));
  ProbeOutput out;
  const double l2 = static_cast<double>(ctx.l2_bytes);
  if (!(l2 > 0)) {
    out.skipped = "the device reports no L2 size";
    return out;
  }
  const double clock = gpu::measure_sm_clock_hz(ctx.device, 0.02);
  const int per_octave = ctx.quick ? 1 : 2;
  const int repeats = ctx.quick ? 10 : 30;
  // The two ranges overlap around half the L2: validate splits at the descriptor's L2, which may
  // be a little below or above the device's, and each level's envelope must cover its sizes.
  struct Level {
    const char* name;
    RampTiming timing;
    double lo, hi;
  };
  const Level levels[] = {{"l2", RampTiming::warm, l2 / 64, 0.55 * l2}, {"dram", RampTiming::cold, 0.4 * l2, 8 * l2}};
  nlohmann::json details = nlohmann::json::object();
  int done = 0;
  for (const Level& lv : levels) {
    const auto candidates = mem::ramp_candidates(lv.timing, ctx.quick);
    for (StreamPattern p : kPatterns) {
      if (ctx.progress) ctx.progress(done / 6.0, std::string(lv.name) + " " + mem::to_string(p));
      ++done;
      std::vector<std::size_t> elements;
      for (double ws : sizes_between(lv.lo, lv.hi, per_octave))
        elements.push_back(std::max<std::size_t>(
            1024, static_cast<std::size_t>(ws / (16.0 * mem::arrays_touched(p))) / 1024 * 1024));
      const auto pts = mem::stream_ramp(p, elements, lv.timing, candidates, repeats);
      std::vector<double> x, t;
      nlohmann::json jp = nlohmann::json::array();
      for (const auto& q : pts) {
        x.push_back(q.working_set_bytes);
        t.push_back(q.min_s);
        jp.push_back({{"bytes", q.working_set_bytes}, {"min_s", q.min_s}, {"median_s", q.median_s}, {"cv", q.cv},
                      {"launches_per_region", q.launches}, {"config", q.config.str()}, {"configs_tried", q.configs_tried}});
      }
      const EnvelopeFit f = fit_lower_envelope(x, t);
      const std::string pat = mem::to_string(p);
      // Every point (5 significant digits of time: the events' resolution is ~0.5 ns at 1 us):
      // the tight bound takes their lower convex hull (model/memory_roof.hpp).
      RampOutput ro;
      ro.level = std::string(lv.name) == "l2" ? MemoryLevelKind::l2 : MemoryLevelKind::dram;
      ro.pattern = pat;
      for (size_t i = 0; i < x.size(); ++i) {
        const double e = std::pow(10.0, std::floor(std::log10(t[i])) - 4);
        ro.table.points.emplace_back(std::round(x[i]), std::round(t[i] / e) * e);
      }
      ro.table.probe = "memory-ramp";
      ro.table.date = gpu::utc_now_iso8601();
      ro.table.sm_clock_hz = clock;
      // The warm points' counted repeats are clock-sampled as validate's (mem::stream_ramp).
      ro.table.timing = lv.timing == RampTiming::cold ? "cold" : "warm-validate";
      ro.table.note = std::string("least time over the launch configurations tried at each size, ") +
                      (lv.timing == RampTiming::cold ? "cold: L2 evicted, events around one launch"
                                                     : "warm: back-to-back launches, per launch");
      out.ramps.push_back(std::move(ro));
      details[lv.name][pat] = {{"points", jp},
                               {"first_byte_s", f.intercept_s},
                               {"bandwidth_bytes_per_s", f.bandwidth()},
                               {"relative_gap", f.relative_gap},
                               {"median_gap", f.median_gap},
                               {"max_gap", f.max_gap}};
      const std::string note = ramp_fit_note(f, x, lv.timing == RampTiming::cold, 1);
      const std::string level(lv.name);
      // An envelope through the origin (write-back left in the L2 makes mid sizes fast per byte)
      // is written as 1 ps, the least time a descriptor holds.
      out.fields.push_back({"memory." + level + ".first_byte." + pat, Dimension::seconds,
                            fitted(std::max(f.intercept_s, 1e-12), static_cast<int>(pts.size()),
                                   note + (f.intercept_s < 1e-12 ? "; through the origin" : ""), clock)});
      if (!(f.seconds_per_byte > 0)) {
        details[lv.name][pat]["note"] = "flat envelope (latency-bound at every size): no bandwidth from it";
        continue;
      }
      const std::string bw_path = level == "l2" ? "memory.l2.patterns." + pat : "memory." + level + ".ramp_bandwidth." + pat;
      out.fields.push_back({bw_path, Dimension::bytes_per_second,
                            fitted(f.bandwidth(), static_cast<int>(pts.size()), "slope of the " + level + " " + pat +
                                   " ramp envelope (" + note + ")", clock)});
    }
  }
  details["sm_clock_hz"] = clock;
  out.details = details;
  if (ctx.progress) ctx.progress(1.0, "done");
  return out;
}

ProbeInfo memory_ramp_info() {
  ProbeInfo p{
    "memory-ramp", "memory",
    "Least time for all SMs to move X bytes (read, write, scale) as X grows, timed as validate times each level; "
    "lower envelope -> first-byte time and slope",
    {{"level", {"l2 (warm, back-to-back)", "dram (cold, one launch)"}},
     {"pattern", {"read", "write", "scale"}},
     {"working set", {"L2/64 .. 0.55 L2", "0.4 L2 .. 8 L2"}}},
    {"memory.l2.first_byte.read", "memory.l2.first_byte.write", "memory.l2.first_byte.scale", "memory.l2.patterns.read",
     "memory.l2.patterns.write", "memory.l2.patterns.scale", "memory.dram.first_byte.read", "memory.dram.first_byte.write",
     "memory.dram.first_byte.scale", "memory.dram.ramp_bandwidth.read", "memory.dram.ramp_bandwidth.write",
     "memory.dram.ramp_bandwidth.scale", "memory.l2.ramp.*", "memory.dram.ramp.*"},
    80,
    true,
    run_memory_ramp};
  p.least_over_processes = true;
  return p;
}

const Registrar reg{memory_ramp_info()};

}  // namespace
}  // namespace ceiling::probes
