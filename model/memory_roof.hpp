// The memory roof a kernel meets at one level, from its read:write mix (issue 12), and the
// lower-envelope fit behind the tight bound's fixed time. Pure C++: predict and validate both
// call memory_roof(), so they hold a kernel against the same numbers.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "descriptor.hpp"

namespace ceiling {

// Share of a calibrated pattern's bytes that are reads: read 1, triad 2/3, copy and scale 1/2,
// write 0; nullopt for a name that is not a stream pattern.
std::optional<double> pattern_read_share(std::string_view pattern);

// A line T(X) = intercept + X * seconds_per_byte lying on or below every point (X_i, T_i), the
// one of least total relative gap sum (T_i - line_i) / T_i (an edge of the lower convex hull;
// each point's efficiency against the line is what validation reports). Slope and intercept
// are kept >= 0. Needs >= 1 point with X > 0 and T > 0 (throws std::invalid_argument).
struct EnvelopeFit {
  double intercept_s = 0;
  double seconds_per_byte = 0;
  double bandwidth() const { return seconds_per_byte > 0 ? 1.0 / seconds_per_byte : 0; }
  std::vector<double> relative_gap;  // (T_i - line_i) / T_i, >= 0, one per point
  double median_gap = 0, max_gap = 0;
};
EnvelopeFit fit_lower_envelope(const std::vector<double>& bytes, const std::vector<double>& seconds);

// The field note of a ramp envelope fit (memory.<level>.first_byte.<pattern> and its slope): the
// sizes, how they were timed (cold: one launch after an L2 eviction; warm: back-to-back launches),
// in how many processes the least times were taken, the slope and the points' gaps above the line.
std::string ramp_fit_note(const EnvelopeFit& f, const std::vector<double>& bytes, bool cold, int processes);

// The ramp measured again in other processes (calibrate --ramp-processes; issue 12). Warm L2 least
// times move by 2-8% between processes on one board (2026-11-27: SCALE at 25 MB on an H200 ran 6%
// faster in a validating process than in the calibrating process's ramp), so one process's least
// time is no bound for the next. Every ramp table of `d` takes, at each of its sizes, the least
// time over `d` and `others` (the table of the same level and pattern; a size matches within 1e-6
// relative; sizes only another run has are not added), and its fields are fitted again from the
// merged points: memory.<level>.first_byte.<pattern> and the slope (memory.l2.patterns.<pattern>,
// memory.dram.ramp_bandwidth.<pattern>), their notes saying over how many processes. A table no
// other run has is left as it is. Returns the number of tables that took a point from another run.
int merge_ramp_runs(HardwareDescriptor& d, const std::vector<HardwareDescriptor>& others);

// The lower convex hull of points (X_i, T_i) (sorted by X; the first and last points are always
// vertices): the largest convex function on or below every point, so it passes through the least
// times where they are convex and is tight at every measured size. Throws std::invalid_argument
// without 2 points of positive X and T.
std::vector<std::pair<double, double>> lower_convex_hull(std::vector<std::pair<double, double>> points);

// A hull evaluated at X: linear between vertices; below the first vertex the first edge extended
// (never below 0); past the last vertex T_last + (X - X_last) / bandwidth_beyond (the largest
// bandwidth measured: a bound past the measured sizes).
double hull_time(const std::vector<std::pair<double, double>>& hull, double bytes, double bandwidth_beyond);

// The roof of one memory level for a kernel's streams.
struct MemoryRoof {
  MemoryLevelKind level = MemoryLevelKind::dram;
  double read_share = -1;    // read / (read + write); -1 when the streams are unknown
  // The paper-style roof (Eq. 17): the patterns' measured medians (spec where none) mixed by
  // read share, or the ramp envelope's slope for the mix where larger; the level's `bandwidth`
  // when the streams or the patterns are unknown.
  double bandwidth = 0;
  // The tight bound's roof: the largest bandwidth measured for this mix (patterns' maxima and the
  // ramp envelope's slope), so no run of the probes beat it.
  double bandwidth_max = 0;
  // The largest bandwidth sustained at the probes' largest sizes for this mix: the patterns' maxima
  // (dram-bandwidth times 1 GiB arrays), without the ramp envelope's slope, a fit over every size
  // that the mid sizes pull up (written lines still in the L2: 3.43 TB/s for scale on an H100 whose
  // HBM3 is 3.35 TB/s). 0 when the level has no patterns for the mix (bandwidth_max serves).
  double bandwidth_sustained = 0;
  // The ramp-envelope intercept for this mix (memory.<level>.first_byte): the least of the level's
  // patterns up to read share 1/2, rising linearly to the read pattern's at 1 (memory_roof.cpp says
  // why); 0 when absent.
  double first_byte_s = 0;
  bool has_first_byte = false;
  std::string how;           // "scale (read share 1/2)", "read 1 .. triad 0.667 at 0.9998", ...
  std::string source;        // "measured" | "spec" | "mixed"
  std::vector<std::string> provenance;
  // DRAM's ramp tables for this mix (memory.dram.ramp.*; the L2's are data only: its warm
  // back-to-back least times move between runs, see memory_roof.cpp): the hulls of the patterns at the
  // neighbouring read shares, weighted like the bandwidths (the least where two patterns share
  // one). ramp_time(Q) is the least time measured to move Q bytes in this mix; 0 without tables.
  // Past a table's largest size X it adds (Q - X) at the larger of bandwidth_sustained and the
  // hull's last edge (bandwidth_max without patterns): the L2's help is in the time at X already.
  struct RampSide {
    double weight = 0;
    std::vector<std::vector<std::pair<double, double>>> hulls;  // the least of them at each X
  };
  std::vector<RampSide> ramp;
  std::string ramp_how;  // "scale (10 sizes 25.2 MB .. 503 MB)"
  double ramp_time(double bytes) const;
};

// Throws std::runtime_error naming the field when the level has neither patterns for the mix nor
// a `bandwidth` under `pref`.
MemoryRoof memory_roof(const HardwareDescriptor& hw, MemoryLevelKind level, double read_bytes, double write_bytes,
                       SourcePreference pref = SourcePreference::measured_else_spec);

}  // namespace ceiling
