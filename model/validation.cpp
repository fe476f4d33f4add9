#include "validation.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <limits>
#include <optional>
#include <type_traits>

#include "files.hpp"
#include "json_file.hpp"
#include "kernel_kind.hpp"
#include "roofline.hpp"
#include "stats.hpp"
#include "units.hpp"

namespace ceiling::validation {
namespace {

std::string pct(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", 100.0 * x);
  return b;
}
std::string num(double x, const char* f = "%.3g") {
  char b[48];
  std::snprintf(b, sizeof b, f, x);
  return b;
}
std::string bw_text(double bytes_per_s) { return format_quantity(bytes_per_s, Dimension::bytes_per_second, 4); }
std::string bytes_text(double bytes) { return format_quantity(bytes, Dimension::bytes, 3); }

}  // namespace

std::string memory_level_for(double working_set_bytes, double l2_bytes) {
  if (!(l2_bytes > 0)) throw std::invalid_argument("memory_level_for: L2 size must be positive");
  return fits_in_l2(working_set_bytes, l2_bytes) ? "l2" : "dram";
}

std::string side_of_split(const std::string& memory_level) {
  return memory_level == "l2" ? "in-l2" : "out-of-l2";
}

std::vector<double> default_sweep_bytes(double l2_bytes, bool quick) {
  if (!(l2_bytes > 0)) throw std::invalid_argument("default_sweep_bytes: L2 size must be positive");
  const int per_octave = quick ? 1 : 4;
  std::vector<double> out;
  // l2/32 .. 8*l2: 8 octaves; l2/2 = 2^-1 l2 is the point at step 4 octaves in.
  for (int i = -5 * per_octave; i <= 3 * per_octave; ++i)
    out.push_back(l2_bytes * std::exp2(static_cast<double>(i) / per_octave));
  return out;
}

TimeBound time_bound(const HardwareDescriptor& hw, const KernelModel& k, ComputeUnit unit,
                     const std::string& memory_level) {
  TimeBound b;
  b.memory_level = memory_level;
  MemoryLevelKind level = parse_memory_level(memory_level);
  const auto roof_at = [&](MemoryLevelKind l) -> std::optional<MemoryRoof> {
    if (!hw.memory.count(l)) return std::nullopt;
    try {
      return memory_roof(hw, l, k.read_bytes, k.write_bytes);
    } catch (const std::runtime_error&) {
      return std::nullopt;
    }
  };
  std::optional<MemoryRoof> roof = roof_at(level);
  if (!roof && level == MemoryLevelKind::l2) {
    // No L2 bandwidth (uncalibrated descriptor): DRAM is the only roof the model has.
    level = MemoryLevelKind::dram;
    roof = roof_at(level);
    b.memory_level = "dram";
    b.note = "descriptor has no L2 bandwidth: bounded with DRAM bandwidth";
  }
  if (!roof)
    throw std::runtime_error("descriptor '" + hw.id + "' has no bandwidth for memory." + memory_level +
                             " (needed to bound a " + k.kind + " working set of " +
                             bytes_text(k.working_set_bytes) + ")");
  b.roof = *roof;
  b.bandwidth = roof->bandwidth;
  b.bandwidth_source = roof->source;
  try {
    PredictOptions opt;
    opt.bandwidth_override = b.bandwidth;  // the level the working set sits in, not predict's choice
    const Prediction p = predict(hw, k, opt);
    b.t_memory = p.t_memory;
    b.t_compute = unit == ComputeUnit::tensor_core ? p.t_compute_tensor_core : p.t_compute_cuda_core;
    const bool tc = unit == ComputeUnit::tensor_core;
    const double peak = tc ? p.tensor_core_effective_peak : p.peak_cuda_core;
    if (peak > 0)
      b.compute_text = std::string(tc ? "tensor-core" : "CUDA-core") + " ceiling " +
                       format_quantity(peak, Dimension::flop_per_second, 4) + " (" +
                       (tc ? p.peak_tensor_core_path : p.peak_cuda_core_path) + ", " +
                       (tc ? p.peak_tensor_core_source : p.peak_cuda_core_source) +
                       (tc && k.tensor_core_fraction != 1.0 ? ", x " + num(k.tensor_core_fraction) + " useful" : "") + ")";
    // Eq. 22/23 at this level: alpha = effective P(TC)/P(CC), B = P(CC)/BW(level).
    if (p.peak_cuda_core > 0 && p.tensor_core_effective_peak > 0) {
      b.alpha = p.tensor_core_effective_peak / p.peak_cuda_core;
      b.speedup_bound_eq22 =
          speedup_bound(b.alpha, machine_balance(p.peak_cuda_core, b.bandwidth), k.intensity());
      b.speedup_limit_eq23 = memory_bound_speedup_limit(b.alpha);
      b.speedup_upper_bound =
          speedup_upper_bound(b.alpha, machine_balance(p.peak_cuda_core, b.bandwidth), k.intensity());
    }
  } catch (const std::exception& e) {
    // No compute peak for this unit/precision: the memory time alone is still a lower bound.
    b.t_memory = memory_time_s(k.traffic_bytes, b.bandwidth);
    const auto peak = unit == ComputeUnit::cuda_core ? hw.peak(unit, k.precision) : std::nullopt;
    b.t_compute = peak && *peak > 0 ? compute_time_s(k.work_flop, *peak) : 0;
    b.note += std::string(b.note.empty() ? "" : "; ") + (b.t_compute > 0 ? "no speedup bounds" : "memory-only bound") +
              " (predict: " + e.what() + ")";
  }
  b.time_s = overlapped_time_s(b.t_memory, b.t_compute);  // Eq. 17: nothing runs faster than full overlap
  return b;
}

double noise_margin(double cv, int repeats) {
  if (repeats <= 0 || !(cv >= 0)) return 0;
  return 2.0 * 1.2533 * cv / std::sqrt(static_cast<double>(repeats));
}

double measurement_margin(const TimeStats& t) {
  const double resolution = t.median > 0 ? kEventResolutionS / (std::max(1, t.launches) * t.median) : 0;
  return noise_margin(t.cv, t.repeats) + resolution;
}

Verdict judge_time(double efficiency, const TimeStats& t, const VerdictContext& ctx) {
  Verdict v;
  const double margin = measurement_margin(t);
  const std::string level = ctx.memory_level == "l2" ? "L2" : "DRAM";
  const bool compute = ctx.compute_bound && !ctx.compute_text.empty();
  const std::string bound_text =
      compute ? ctx.compute_text : level + " bandwidth " + bw_text(ctx.bound_bandwidth) + " (" + ctx.bandwidth_source + ")";
  if (efficiency <= 1.0 + margin) {
    v.verdict = "within-bound";
    v.reason = pct(efficiency) + " of the bound at " + bound_text;
    if (efficiency > 1.0)
      v.reason += "; above 100% by less than the measurement margin " + pct(margin) + " (cv " + pct(t.cv) +
                  ", event resolution)";
    return v;
  }
  v.verdict = "beats-bound";
  if (compute) {
    v.reason = pct(efficiency) + " of the compute bound at the " + ctx.compute_text +
               ": the ceiling is below what this kernel runs (a probe that missed a faster configuration, a clock "
               "above the calibration's) or the kernel's FLOP count is too high";
    return v;
  }
  const std::string achieved = "achieved " + bw_text(ctx.achieved_bandwidth) + " > " + bound_text;
  if (ctx.memory_level == "dram" && ctx.working_set_bytes <= ctx.l2_bytes) {
    v.reason = "working set " + bytes_text(ctx.working_set_bytes) + " fits the L2 (" + bytes_text(ctx.l2_bytes) +
               ") but is bounded with DRAM bandwidth: part of the traffic hit the L2 (" + achieved + ")";
    if (!ctx.l2_flushed) v.reason += "; L2 not flushed between repeats";
  } else if (ctx.memory_level == "dram" && ctx.working_set_bytes <= 4 * ctx.l2_bytes) {
    v.reason = "dirty lines left in the L2 at kernel end (write-back not counted) or descriptor DRAM bandwidth "
               "below measured: " + achieved;
  } else if (ctx.memory_level == "dram") {
    v.reason = "descriptor DRAM bandwidth below measured: " + achieved;
  } else {
    v.reason = "descriptor L2 bandwidth below measured (L1 hits or a better pattern than the probe's): " + achieved;
  }
  if (ctx.bandwidth_source == "spec") v.reason += "; the bound uses a spec value, calibrate the descriptor";
  return v;
}

std::string tight_beats_reason(const HardwareDescriptor& hw, const KernelResult& r) {
  const auto t_text = [](double s) { return format_quantity(s, Dimension::seconds, 3); };
  const double measured = r.time_s.median;
  std::string s = pct(r.tight_efficiency) + " of the tight bound " + t_text(r.tight_bound_time_s) + " (terms: ";
  if (r.tight_launch_s > 0) s += "launch " + t_text(r.tight_launch_s) + ", ";
  s += "first byte " + t_text(r.tight_first_byte_s);
  if (!r.tight_first_byte_from.empty()) s += " from the " + r.tight_first_byte_from;
  if (r.tight_bandwidth > 0) s += ", Q/BW " + t_text(r.traffic_bytes / r.tight_bandwidth) + " at " + bw_text(r.tight_bandwidth);
  if (r.tight_ramp_s > 0) s += ", ramp hull " + t_text(r.tight_ramp_s);
  if (r.tight_passes > 1) s += ", " + std::to_string(r.tight_passes) + " passes";
  s += "), beyond the measurement margin " + pct(measurement_margin(r.time_s));
  const std::string level_name = r.bound_level.empty() ? r.memory_level : r.bound_level;
  std::optional<MemoryLevelKind> kind;
  try {
    kind = parse_memory_level(level_name);
  } catch (const std::exception&) {  // a results file's unknown level: no ramp to compare with
  }
  const auto lvl = kind ? hw.memory.find(*kind) : hw.memory.end();
  // The level's ramp table whose pattern's read share (memory_roof.hpp pattern_read_share) is
  // nearest the result's.
  const RampTable* ramp = nullptr;
  std::string pattern;
  if (lvl != hw.memory.end()) {
    const double total = r.read_bytes + r.write_bytes;
    const double share = total > 0 ? r.read_bytes / total : 1.0;
    double gap = 2;
    for (const auto& [name, table] : lvl->second.ramp) {
      const std::optional<double> x = pattern_read_share(name);
      if (!x || !table.present() || !(std::fabs(share - *x) < gap)) continue;
      gap = std::fabs(share - *x);
      ramp = &table;
      pattern = name;
    }
  }
  const double q = r.traffic_bytes;
  if (!ramp || !(q >= ramp->points.front().first) || !(q <= ramp->points.back().first)) {
    s += "; no " + level_name + " memory-ramp point brackets " + bytes_text(q) +
         ": check the descriptor's first byte and bandwidth of this level, measured in the calibrating process";
    return s;
  }
  const auto hi = std::lower_bound(ramp->points.begin(), ramp->points.end(), std::make_pair(q, -1.0));
  double ramp_s = hi->second;
  if (hi != ramp->points.begin() && hi->first > q) {
    const auto lo = std::prev(hi);
    ramp_s = lo->second + (hi->second - lo->second) * (q - lo->first) / (hi->first - lo->first);
  }
  s += "; the calibration's memory-ramp (" + pattern + (ramp->date.empty() ? "" : ", " + ramp->date) + ") took " +
       t_text(ramp_s) + " for " + bytes_text(q) + " (least over its launch configurations)";
  if (measured < ramp_s)
    s += ", this run " + t_text(measured) + " (" + num(ramp_s / measured, "%.3f") +
         "x faster): the term that fails is the ramp's least time, a minimum within the calibrating process; times of "
         "this level move between processes";
  else
    s += ", this run " + t_text(measured) +
         " (not faster): the run beats the envelope's line (first byte + Q/BW) between the ramp's points, so the line's fit fails";
  return s;
}

KernelResult evaluate(const HardwareDescriptor& hw, const KernelModel& k, ComputeUnit unit,
                      const std::map<std::string, double>& size, const TimeStats& t, double l2_bytes,
                      bool l2_flushed) {
  if (!(t.median > 0)) throw std::invalid_argument("evaluate: measured median time must be positive");
  KernelResult r;
  r.kernel = k.kind;
  r.variant = std::string(to_string(unit));
  r.precision = std::string(to_string(k.precision));
  r.size = size;
  r.working_set_bytes = k.working_set_bytes;
  r.memory_level = memory_level_for(k.working_set_bytes, l2_bytes);
  r.work_flop = k.work_flop;
  r.traffic_bytes = k.traffic_bytes;
  r.intensity = operational_intensity(k.work_flop, k.traffic_bytes);
  r.time_s = t;
  r.achieved_bytes_per_s = k.traffic_bytes / t.median;
  r.achieved_flop_per_s = k.work_flop / t.median;
  const TimeBound b = time_bound(hw, k, unit, r.memory_level);
  r.bound_time_s = b.time_s;
  r.efficiency = b.time_s / t.median;
  r.bound_bandwidth = b.bandwidth;
  r.bandwidth_source = b.bandwidth_source;
  r.bound_level = b.memory_level;
  r.t_memory_s = b.t_memory;
  r.t_compute_s = b.t_compute;
  r.alpha = b.alpha;
  r.speedup_bound_eq22 = b.speedup_bound_eq22;
  r.speedup_limit_eq23 = b.speedup_limit_eq23;
  r.speedup_upper_bound = b.speedup_upper_bound;
  r.bound_note = b.note;
  r.l2_flushed = l2_flushed;
  r.read_bytes = k.read_bytes;
  r.write_bytes = k.write_bytes;
  const std::string pattern = dram_pattern_for_streams(k.read_bytes, k.write_bytes);
  if (r.memory_level == "dram" && !pattern.empty()) {
    const auto lvl = hw.memory.find(MemoryLevelKind::dram);
    if (lvl != hw.memory.end()) {
      const auto f = lvl->second.patterns.find(pattern);
      if (f != lvl->second.patterns.end() && f->second.measured) {
        r.dram_pattern = pattern;
        r.dram_pattern_bytes_per_s = f->second.measured->median;
      }
    }
  }
  {
    const TightBound tb = tight_bound(hw, b.roof, k.traffic_bytes, b.t_compute, !l2_flushed && t.launches > 1, k.passes);
    r.tight_bound_time_s = tb.time_s;
    r.tight_efficiency = tb.time_s / t.median;
    r.tight_launch_s = tb.launch_s;
    r.tight_first_byte_s = tb.first_byte_s;
    r.tight_ramp_s = tb.ramp_s;
    r.tight_bandwidth = tb.bandwidth;
    r.tight_first_byte_from = tb.first_byte_from;
    r.tight_passes = tb.passes;
    r.passes = k.passes;
    for (const auto& m : tb.missing) r.tight_missing += (r.tight_missing.empty() ? "" : ", ") + m;
    r.tight_verdict = r.tight_efficiency <= 1.0 + measurement_margin(t) ? "within-bound" : "beats-bound";
    if (r.tight_verdict == "beats-bound") r.tight_reason = tight_beats_reason(hw, r);
  }
  VerdictContext ctx{k.working_set_bytes, l2_bytes, b.memory_level, b.bandwidth_source, b.bandwidth,
                     r.achieved_bytes_per_s, l2_flushed, b.t_compute > 0 && b.t_compute >= b.t_memory, b.compute_text};
  const Verdict v = judge_time(r.efficiency, t, ctx);
  r.verdict = v.verdict;
  r.verdict_reason = v.reason;
  return r;
}

void note_run_clock(KernelResult& r, const HardwareDescriptor& hw) {
  const std::optional<double> ceiling_clock = hw.sm_clock.value(SourcePreference::measured);
  if (!ceiling_clock || !(*ceiling_clock > 0) || !(r.sm_clock_hz > 0)) return;
  if (!(r.t_compute_s > 0) || r.t_compute_s < r.t_memory_s) return;  // memory-bound: the SM clock is not the roof
  if (r.sm_clock_hz >= 0.97 * *ceiling_clock) return;
  r.verdict_reason += "; SM clock " + num(r.sm_clock_hz / 1e9, "%.3f") + " GHz in this run, " +
                      num(*ceiling_clock / 1e9, "%.3f") + " GHz in the calibration: " +
                      pct(r.efficiency * *ceiling_clock / r.sm_clock_hz) + " at the calibration clock";
}

std::vector<SpeedupResult> speedups(const std::vector<KernelResult>& results) {
  // CUDA-core results by (kernel, precision, size), in file order: one look-up per tensor-core
  // result instead of a scan of every result (1,000,000 rows were quadratic, issue 17).
  using Key = std::tuple<const std::string*, const std::string*, const std::map<std::string, double>*>;
  const auto less = [](const Key& a, const Key& b) {
    if (*std::get<0>(a) != *std::get<0>(b)) return *std::get<0>(a) < *std::get<0>(b);
    if (*std::get<1>(a) != *std::get<1>(b)) return *std::get<1>(a) < *std::get<1>(b);
    return *std::get<2>(a) < *std::get<2>(b);
  };
  std::map<Key, std::vector<const KernelResult*>, decltype(less)> cuda_core(less);
  for (const auto& cc : results)
    if (cc.variant == "cuda_core") cuda_core[Key{&cc.kernel, &cc.precision, &cc.size}].push_back(&cc);
  std::vector<SpeedupResult> out;
  for (const auto& tc : results) {
    if (tc.variant != "tensor_core") continue;
    const auto match = cuda_core.find(Key{&tc.kernel, &tc.precision, &tc.size});
    if (match == cuda_core.end()) continue;
    for (const KernelResult* cc_ptr : match->second) {
      const KernelResult& cc = *cc_ptr;
      // Eq. 22 asks what tensor cores give the same algorithm: a CUDA-core result whose model moves
      // more bytes than the tensor-core one is another algorithm (a stencil's one pass per step
      // against fused steps) and pairing them would credit the tensor cores with the fusion.
      if (tc.traffic_bytes > 0 && cc.traffic_bytes > tc.traffic_bytes * (1 + 1e-9)) continue;
      // Nor another number of passes: a tensor-core kernel of one launch per step against fused steps
      // on the CUDA cores would charge the tensor cores with the passes.
      if (cc.passes != tc.passes) continue;
      SpeedupResult s;
      s.kernel = tc.kernel;
      s.precision = tc.precision;
      s.size = tc.size;
      s.working_set_bytes = tc.working_set_bytes;
      s.memory_level = tc.memory_level;
      s.measured = cc.time_s.median / tc.time_s.median;
      s.bound_eq22 = tc.speedup_bound_eq22;
      s.limit_eq23 = tc.speedup_limit_eq23;
      s.alpha = tc.alpha;
      s.cuda_core_implementation = cc.implementation;
      s.tensor_core_implementation = tc.implementation;
      s.label = tc.label;
      // Eq. 22 bounds the un-overlapped case; full overlap gives S = 1, so the top is max(1, Eq. 22).
      // Eq. 22 bounds the un-overlapped case, the overlapped one gives max(Tm,Tc)/max(Tm,Tc/alpha)
      // (1 for a memory-bound kernel with alpha >= 1): the top is the larger (roofline.hpp).
      s.upper_bound = tc.speedup_upper_bound > 0 ? tc.speedup_upper_bound : std::max(1.0, s.bound_eq22);
      const double margin = std::hypot(measurement_margin(cc.time_s), measurement_margin(tc.time_s));
      if (s.bound_eq22 <= 0) {
        s.verdict = "within-bound";
        s.verdict_reason = "no Eq. 22 bound (descriptor lacks a compute peak)";
      } else if (s.measured <= s.upper_bound * (1.0 + margin)) {
        s.verdict = "within-bound";
        s.verdict_reason = "speedup " + num(s.measured, "%.3f") + " <= " + num(s.upper_bound, "%.3f") +
                           (s.alpha <= 1 ? " (alpha " + num(s.alpha, "%.3f") + " <= 1: the overlapped speedup is the top)"
                                             : " (Eq. 22)");
        if (s.measured > s.upper_bound) s.verdict_reason += ", above by less than the measurement margin " + pct(margin);
      } else {
        s.verdict = "beats-bound";
        // Eq. 22 is the ratio of the two bounds, so with both results inside their own bounds a speedup
        // above it means the CUDA-core result sits further below its bound than the tensor-core one.
        s.verdict_reason = "tensor-core speedup " + num(s.measured, "%.3f") + " exceeds " + num(s.upper_bound, "%.3f") + ": " +
                           (tc.verdict == "beats-bound"
                                ? "the tensor-core result beats its own bound (efficiency " + pct(tc.efficiency) + ")"
                                : "the CUDA-core variant reaches less of its own bound than the tensor-core one "
                                  "(efficiency " + pct(cc.efficiency) + " vs " + pct(tc.efficiency) +
                                  ") and Eq. 22 compares the bounds: the CUDA-core kernel's shortfall");
      }
      out.push_back(std::move(s));
    }
  }
  return out;
}

std::vector<Geomean> geomeans(const std::vector<SpeedupResult>& s) {
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  std::map<Key, std::vector<double>> groups;
  std::vector<Key> order;
  for (const auto& x : s) {
    if (!(x.measured > 0)) continue;
    auto key = std::make_tuple(x.kernel, x.precision, side_of_split(x.memory_level), x.cuda_core_implementation);
    if (!groups.count(key)) order.push_back(key);
    groups[key].push_back(x.measured);  // T(CC)/T(TC)
  }
  std::vector<Geomean> out;
  for (const auto& key : order) {
    const auto& v = groups[key];
    Geomean g;
    std::tie(g.kernel, g.precision, g.side, g.cuda_core_implementation) = key;
    g.cc_over_tc = geometric_mean(v);
    g.cc_speedup = 1.0 / g.cc_over_tc;
    g.count = static_cast<int>(v.size());
    out.push_back(g);
  }
  return out;
}

OverlapFit fit_overlap(const std::vector<OverlapPoint>& points) {
  const int n = static_cast<int>(points.size());
  if (n < 3) throw std::invalid_argument("fit_overlap: need at least 3 points, got " + std::to_string(n));
  Eigen::MatrixXd X(n, 2);
  Eigen::VectorXd y(n), T(n), hi(n), lo(n);
  for (int i = 0; i < n; ++i) {
    const auto& p = points[static_cast<size_t>(i)];
    hi(i) = std::max(p.t_memory, p.t_compute);
    lo(i) = std::min(p.t_memory, p.t_compute);
    T(i) = p.t_measured;
    X(i, 0) = lo(i);
    X(i, 1) = 1.0;
    y(i) = T(i) - hi(i);  // = (1 - phi) min + Tother
  }
  OverlapFit f;
  f.points = n;
  const auto qr = X.colPivHouseholderQr();
  if (qr.rank() < 2) {
    f.note = "min(Tmem, Tcmp) does not vary: phi not identifiable, set to 0";
    f.phi_raw = 0;
  } else {
    const Eigen::Vector2d beta = qr.solve(y);
    f.phi_raw = 1.0 - beta(0);
    f.t_other_s = beta(1);
    // Standard error of (1 - phi): sigma^2 (X^T X)^-1 with sigma^2 = SSR / (n - 2).
    const double ssr = (y - X * beta).squaredNorm();
    const Eigen::Matrix2d cov = (X.transpose() * X).inverse() * (ssr / (n - 2));
    f.phi_stderr = std::sqrt(std::max(0.0, cov(0, 0)));
  }
  f.phi = std::clamp(f.phi_raw, 0.0, 1.0);
  if (f.phi != f.phi_raw || qr.rank() < 2) {
    f.clamped = f.phi != f.phi_raw;
    f.t_other_s = (y - (1.0 - f.phi) * lo).mean();  // refit Tother with phi held
    if (f.clamped && f.note.empty())
      f.note = f.phi_raw < 0 ? "phi < 0: the measured time exceeds max + min, so the memory roof is optimistic "
                               "(efficiency shortfall, not missing overlap)"
                             : "phi > 1: measured below max + min scaled, clamped to full overlap";
  }
  const Eigen::VectorXd fitted = hi + (1.0 - f.phi) * lo + Eigen::VectorXd::Constant(n, f.t_other_s);
  const double ss_res = (T - fitted).squaredNorm();
  const double ss_tot = (T.array() - T.mean()).matrix().squaredNorm();
  f.r2 = ss_tot > 0 ? 1.0 - ss_res / ss_tot : 0.0;
  f.residual_rms = std::sqrt(((T - fitted).array() / T.array()).square().mean());
  return f;
}

std::vector<OverlapFit> overlap_fits(const std::vector<KernelResult>& results) {
  using Key = std::tuple<std::string, std::string, std::string>;
  std::vector<Key> order;
  std::map<Key, std::vector<const KernelResult*>> groups;
  for (const auto& r : results) {
    Key key{r.kernel, r.variant, r.precision};
    if (!groups.count(key)) order.push_back(key);
    groups[key].push_back(&r);
  }
  const auto near_ridge = [](const KernelResult& r) {
    return r.t_memory_s > 0 && r.t_compute_s > 0 && r.t_memory_s <= kOverlapRidgeSpan * r.t_compute_s &&
           r.t_compute_s <= kOverlapRidgeSpan * r.t_memory_s;
  };
  const std::string span = num(kOverlapRidgeSpan, "%g");
  std::vector<OverlapFit> out;
  for (const auto& key : order) {
    const auto& group = groups[key];
    // Near-ridge results per memory level, in the order the levels first appear.
    std::vector<std::string> levels;
    std::map<std::string, std::vector<OverlapPoint>> near;
    for (const auto* r : group) {
      if (!near_ridge(*r)) continue;
      if (!near.count(r->memory_level)) levels.push_back(r->memory_level);
      near[r->memory_level].push_back({r->time_s.median, r->t_memory_s, r->t_compute_s});
    }
    bool fitted = false;
    for (const auto& level : levels) {
      if (near[level].size() < 3) continue;
      OverlapFit f = fit_overlap(near[level]);
      std::tie(f.kernel, f.variant, f.precision) = key;
      f.memory_level = level;
      f.points_total = static_cast<int>(group.size());
      f.selection = "near the ridge: " + std::to_string(f.points) + " " + level + " results with Tm/Tc in [1/" + span +
                    ", " + span + "]";
      out.push_back(f);
      fitted = true;
    }
    if (fitted || group.size() < 3) continue;
    std::vector<OverlapPoint> all;
    for (const auto* r : group) all.push_back({r->time_s.median, r->t_memory_s, r->t_compute_s});
    OverlapFit f = fit_overlap(all);
    std::tie(f.kernel, f.variant, f.precision) = key;
    f.points_total = static_cast<int>(group.size());
    f.selection = "every result (fewer than 3 per level with Tm/Tc in [1/" + span + ", " + span +
                  "]): phi poorly identified";
    out.push_back(f);
  }
  return out;
}

void summarize(ValidationReport& r) {
  r.speedups = speedups(r.results);
  r.geomeans = geomeans(r.speedups);
  r.overlap_fits = overlap_fits(r.results);
}

// ---- JSON ----------------------------------------------------------------------------------

using ojson = nlohmann::ordered_json;

static ojson size_json(const std::map<std::string, double>& s) {
  ojson j = ojson::object();
  // "m" before "n" reads as the matrix shape.
  for (const auto& [k, v] : s) j[k] = v == std::floor(v) && std::fabs(v) < 9e15 ? ojson(static_cast<long long>(v)) : ojson(v);
  return j;
}

ojson to_json(const ValidationReport& r) {
  ojson j;
  j["schema"] = r.schema;
  j["tool_version"] = r.tool_version;
  j["date"] = r.date;
  j["command_line"] = r.command_line;
  j["device"] = {{"name", r.device.name},
                 {"uuid", r.device.uuid},
                 {"sm_count", r.device.sm_count},
                 {"compute_capability", r.device.compute_capability},
                 {"driver", r.device.driver},
                 {"cuda_version", r.device.cuda_version},
                 {"l2_bytes", r.device.l2_bytes}};
  j["sm_clock_hz"] = r.sm_clock_hz;
  if (r.l2_split_bytes > 0) j["l2_split_bytes"] = r.l2_split_bytes;
  j["descriptor"] = {{"id", r.descriptor_id}, {"path", r.descriptor_path}};
  j["wall_time_s"] = r.wall_time_s;
  ojson results = ojson::array();
  for (const auto& x : r.results) {
    ojson e;
    e["kernel"] = x.kernel;
    e["variant"] = x.variant;
    e["precision"] = x.precision;
    e["size"] = size_json(x.size);
    e["working_set_bytes"] = x.working_set_bytes;
    e["memory_level"] = x.memory_level;
    e["work_flop"] = x.work_flop;
    e["traffic_bytes"] = x.traffic_bytes;
    e["intensity"] = x.intensity;
    e["time_s"] = {{"median", x.time_s.median}, {"min", x.time_s.min}, {"max", x.time_s.max},
                   {"cv", x.time_s.cv}, {"repeats", x.time_s.repeats}, {"launches", x.time_s.launches}};
    e["achieved_bytes_per_s"] = x.achieved_bytes_per_s;
    e["achieved_flop_per_s"] = x.achieved_flop_per_s;
    e["bound_time_s"] = x.bound_time_s;
    e["efficiency"] = x.efficiency;
    e["verdict"] = x.verdict;
    e["verdict_reason"] = x.verdict_reason;
    e["bound_bandwidth_bytes_per_s"] = x.bound_bandwidth;
    e["bandwidth_source"] = x.bandwidth_source;
    e["bound_level"] = x.bound_level;
    e["t_memory_s"] = x.t_memory_s;
    e["t_compute_s"] = x.t_compute_s;
    e["alpha"] = x.alpha;
    e["speedup_bound_eq22"] = x.speedup_bound_eq22;
    e["speedup_limit_eq23"] = x.speedup_limit_eq23;
    if (x.speedup_upper_bound > 0) e["speedup_upper_bound"] = x.speedup_upper_bound;
    if (x.tight_bound_time_s > 0)
      e["tight_bound"] = {{"time_s", x.tight_bound_time_s}, {"efficiency", x.tight_efficiency},
                          {"launch_s", x.tight_launch_s},  {"first_byte_s", x.tight_first_byte_s},
                          {"ramp_s", x.tight_ramp_s},
                          {"bandwidth_bytes_per_s", x.tight_bandwidth}, {"first_byte_from", x.tight_first_byte_from},
                          {"verdict", x.tight_verdict},     {"missing", x.tight_missing}};
    if (x.tight_bound_time_s > 0 && x.tight_passes > 1) e["tight_bound"]["passes"] = x.tight_passes;
    if (x.passes > 1) e["passes"] = x.passes;
    if (x.tight_bound_time_s > 0 && !x.tight_reason.empty()) e["tight_bound"]["reason"] = x.tight_reason;
    e["bound_note"] = x.bound_note;
    e["sm_clock_hz"] = x.sm_clock_hz;
    e["l2_flushed"] = x.l2_flushed;
    e["flagged"] = x.flagged;
    e["flag_reason"] = x.flag_reason;
    e["verify_error"] = x.verify_error;
    e["description"] = x.description;
    if (x.read_bytes + x.write_bytes > 0) e["streams"] = {{"read_bytes", x.read_bytes}, {"write_bytes", x.write_bytes}};
    if (x.dram_pattern_bytes_per_s > 0)
      e["dram_pattern"] = {{"name", x.dram_pattern},
                           {"bytes_per_s", x.dram_pattern_bytes_per_s},
                           {"fraction", x.achieved_bytes_per_s / x.dram_pattern_bytes_per_s}};
    if (!x.implementation.empty()) e["implementation"] = x.implementation;
    if (!x.label.empty()) e["label"] = x.label;
    results.push_back(std::move(e));
  }
  j["results"] = std::move(results);
  ojson sp = ojson::array();
  for (const auto& s : r.speedups) {
    sp.push_back({{"kernel", s.kernel},
                  {"precision", s.precision},
                  {"size", size_json(s.size)},
                  {"working_set_bytes", s.working_set_bytes},
                  {"memory_level", s.memory_level},
                  {"measured", s.measured},
                  {"bound_eq22", s.bound_eq22},
                  {"limit_eq23", s.limit_eq23},
                  {"upper_bound", s.upper_bound},
                  {"alpha", s.alpha},
                  {"verdict", s.verdict},
                  {"verdict_reason", s.verdict_reason}});
    if (!s.cuda_core_implementation.empty()) sp.back()["cuda_core_implementation"] = s.cuda_core_implementation;
    if (!s.tensor_core_implementation.empty()) sp.back()["tensor_core_implementation"] = s.tensor_core_implementation;
    if (!s.label.empty()) sp.back()["label"] = s.label;
  }
  j["speedups"] = std::move(sp);
  ojson gm = ojson::array();
  for (const auto& g : r.geomeans)
    gm.push_back({{"kernel", g.kernel}, {"precision", g.precision}, {"side", g.side}, {"cc_over_tc", g.cc_over_tc},
                  {"cc_speedup_over_tc", g.cc_speedup}, {"count", g.count}});
  for (size_t i = 0; i < r.geomeans.size(); ++i)
    if (!r.geomeans[i].cuda_core_implementation.empty())
      gm[i]["cuda_core_implementation"] = r.geomeans[i].cuda_core_implementation;
  j["geomeans"] = std::move(gm);
  ojson fits = ojson::array();
  for (const auto& f : r.overlap_fits)
    fits.push_back({{"kernel", f.kernel}, {"variant", f.variant}, {"precision", f.precision}, {"phi", f.phi},
                    {"r2", f.r2}, {"points", f.points}, {"phi_raw", f.phi_raw}, {"t_other_s", f.t_other_s},
                    {"clamped", f.clamped}, {"note", f.note}, {"phi_stderr", f.phi_stderr},
                    {"residual_rms", f.residual_rms}, {"points_total", f.points_total},
                    {"memory_level", f.memory_level}, {"selection", f.selection}});
  j["overlap_fits"] = std::move(fits);
  return j;
}

// One row per line in the lists (a file of a million rows stays ~1 KB a row and diffs by row);
// the rest one member per line.
std::string dump_report(const ValidationReport& r) {
  const nlohmann::ordered_json j = to_json(r);
  const auto dump = [](const nlohmann::ordered_json& v) {
    return v.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  };
  std::string out = "{";
  bool first = true;
  for (auto it = j.begin(); it != j.end(); ++it) {
    out += first ? "\n  " : ",\n  ";
    first = false;
    out += dump(nlohmann::ordered_json(it.key())) + ": ";
    if (it->is_array() && !it->empty()) {
      out += "[";
      bool first_row = true;
      for (const auto& row : *it) {
        out += first_row ? "\n    " : ",\n    ";
        first_row = false;
        out += dump(row);
      }
      out += "\n  ]";
    } else {
      out += dump(*it);
    }
  }
  return out + "\n}\n";
}

void save_report(const ValidationReport& r, const std::filesystem::path& file) {
  write_file_atomically(file, dump_report(r));
}


// ---- table ---------------------------------------------------------------------------------

static std::string size_text(const std::string& kind, const std::map<std::string, double>& s) {
  return kernel_size_text(kind, s);
}
static std::string short_unit(const std::string& v) { return v == "tensor_core" ? "TC" : v == "cuda_core" ? "CC" : v; }
// "CC", or "CC:cusparse" where a unit has several implementations.
static std::string unit_text(const std::string& v, const std::string& impl) {
  return short_unit(v) + (impl.empty() ? "" : ":" + impl);
}
static std::string input_text(const KernelResult& x) { return x.label.empty() ? size_text(x.kernel, x.size) : x.label; }

std::string format_table(const ValidationReport& r) {
  std::ostringstream o;
  char line[512];
  o << "ceiling validate: " << r.device.name << " (" << r.device.sm_count << " SMs, L2 "
    << bytes_text(r.device.l2_bytes) << ", SM clock " << num(r.sm_clock_hz / 1e6, "%.0f") << " MHz), descriptor "
    << r.descriptor_id << "\n";
  o << "split at half the L2 = " << bytes_text(r.split_l2_bytes() / 2)
    << "; bound = max(Q/BW(level), W/P(unit)); efficiency = bound / median time; tight = tight bound / median time\n\n";
  std::snprintf(line, sizeof line, "%-6s %-2s %-4s %-12s %9s %-4s %10s %10s %9s %10s %6s %6s  %s\n", "kernel", "u",
                "prec", "size", "ws", "lvl", "median", "bandwidth", "GFLOP/s", "bound", "eff", "tight", "verdict");
  o << line;
  std::string prev;
  bool other_level = false;
  for (const auto& x : r.results) {
    const bool star = !x.bound_level.empty() && x.bound_level != x.memory_level;
    other_level |= star;
    const std::string lvl = x.memory_level + (star ? "*" : "");
    const std::string group = x.kernel + x.variant + x.implementation + x.precision;
    if (!prev.empty() && group != prev) o << "\n";
    prev = group;
    const std::string tight = x.tight_bound_time_s > 0 ? num(100 * x.tight_efficiency, "%5.1f") + "%" : "-";
    std::snprintf(line, sizeof line, "%-6s %-2s %-4s %-12s %9s %-4s %8.2fus %10s %9.1f %8.2fus %5.1f%% %6s  %s%s%s\n",
                  x.kernel.c_str(), unit_text(x.variant, x.implementation).c_str(), x.precision.c_str(), input_text(x).c_str(),
                  bytes_text(x.working_set_bytes).c_str(), lvl.c_str(), x.time_s.median * 1e6,
                  bw_text(x.achieved_bytes_per_s).c_str(), x.achieved_flop_per_s / 1e9, x.bound_time_s * 1e6,
                  100 * x.efficiency, tight.c_str(), x.verdict.c_str(), x.flagged ? " (flagged)" : "",
                  x.tight_verdict == "beats-bound" ? " (beats the tight bound)" : "");
    o << line;
  }
  if (other_level) o << "  * bounded with another level's bandwidth (the descriptor lacks this level's): see bound_note\n";
  for (const auto& x : r.results)
    if (x.verdict == "beats-bound")
      o << "  beats-bound " << x.kernel << " " << unit_text(x.variant, x.implementation) << " " << input_text(x) << ": "
        << x.verdict_reason << "\n";
  if (!r.speedups.empty()) {
    o << "\nTensor-core speedup T(CC)/T(TC) against the model (Eq. 22 bound, Eq. 23 limit, effective alpha):\n";
    std::snprintf(line, sizeof line, "%-6s %-12s %9s %-4s %8s %8s %8s %7s  %s\n", "kernel", "size", "ws", "lvl",
                  "measured", "eq22", "eq23", "alpha", "verdict");
    o << line;
    for (const auto& s : r.speedups) {
      const std::string who = s.cuda_core_implementation.empty() ? s.kernel : s.kernel + " vs " + s.cuda_core_implementation;
      std::snprintf(line, sizeof line, "%-6s %-12s %9s %-4s %8.3f %8.3f %8.3f %7.3f  %s\n", who.c_str(),
                    (s.label.empty() ? size_text(s.kernel, s.size) : s.label).c_str(), bytes_text(s.working_set_bytes).c_str(), s.memory_level.c_str(),
                    s.measured, s.bound_eq22, s.limit_eq23, s.alpha, s.verdict.c_str());
      o << line;
    }
  }
  if (!r.geomeans.empty()) {
    o << "\nGeometric means per side of the L2 split (GPGPU'25 Figure 6 reports the CUDA-core speedup):\n";
    for (const auto& g : r.geomeans) {
      const std::string who = g.cuda_core_implementation.empty() ? g.kernel : g.kernel + " (" + g.cuda_core_implementation + ")";
      std::snprintf(line, sizeof line, "  %-6s %-4s %-10s T(CC)/T(TC) %6.3f  CUDA cores %6.3fx faster  (%d sizes)\n",
                    who.c_str(), g.precision.c_str(), g.side.c_str(), g.cc_over_tc, g.cc_speedup, g.count);
      o << line;
    }
  }
  if (!r.overlap_fits.empty()) {
    o << "\nPartial overlap T = max + (1-phi) min + Tother, least squares (near the ridge where there are points):\n";
    for (const auto& f : r.overlap_fits) {
      std::snprintf(line, sizeof line,
                    "  %-9s %-2s %-4s %-4s phi %.3f +- %.3f (raw %.3g) Tother %.2fus r2 %.4f rms %.1f%% (%d of %d)%s%s\n",
                    f.kernel.c_str(), short_unit(f.variant).c_str(), f.precision.c_str(),
                    f.memory_level.empty() ? "all" : f.memory_level.c_str(), f.phi, f.phi_stderr, f.phi_raw,
                    f.t_other_s * 1e6, f.r2, 100 * f.residual_rms, f.points, std::max(f.points, f.points_total),
                    f.note.empty() ? "" : "  ", f.note.c_str());
      o << line;
    }
  }
  // Summary per variant: median efficiency per side, and the largest size against the calibrated
  // DRAM pattern (issue #5 targets).
  o << "\nSummary (median efficiency per side; largest size vs the calibrated DRAM pattern):\n";
  std::vector<std::string> seen;
  for (const auto& x : r.results) {
    const std::string key = x.kernel + " " + unit_text(x.variant, x.implementation) + " " + x.precision;
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(key);
    std::vector<double> in, out;
    const KernelResult* largest = nullptr;
    for (const auto& y : r.results) {
      if (y.kernel != x.kernel || y.variant != x.variant || y.precision != x.precision ||
          y.implementation != x.implementation)
        continue;
      (y.memory_level == "l2" ? in : out).push_back(y.efficiency);
      if (!largest || y.working_set_bytes > largest->working_set_bytes) largest = &y;
    }
    std::snprintf(line, sizeof line, "  %-16s in-l2 %6s  out-of-l2 %6s  largest %s: %s", key.c_str(),
                  in.empty() ? "-" : pct(median(in)).c_str(), out.empty() ? "-" : pct(median(out)).c_str(),
                  bytes_text(largest->working_set_bytes).c_str(), bw_text(largest->achieved_bytes_per_s).c_str());
    o << line;
    if (largest->dram_pattern_bytes_per_s > 0)
      o << " = " << pct(largest->achieved_bytes_per_s / largest->dram_pattern_bytes_per_s) << " of calibrated "
        << largest->dram_pattern << " " << bw_text(largest->dram_pattern_bytes_per_s);
    else if (const std::string pat = dram_pattern_for_streams(largest->read_bytes, largest->write_bytes); !pat.empty())
      o << " (no calibrated DRAM " << pat << " pattern in the descriptor)";
    o << "\n";
  }
  // The tight bound (launch + first byte + max(Q/BW, W/P), issue 12), when the results carry it.
  if (std::any_of(r.results.begin(), r.results.end(), [](const KernelResult& x) { return x.tight_bound_time_s > 0; })) {
    o << "\nTight bound max(launch, first byte + max(Q/BW, W/P), ramp(Q)), efficiency per side (issue 12):\n";
    std::vector<std::string> keys;
    for (const auto& x : r.results) {
      const std::string key = x.kernel + " " + unit_text(x.variant, x.implementation) + " " + x.precision;
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
      keys.push_back(key);
      std::vector<double> in, out, all;
      int tight_beats = 0;
      std::string missing;
      for (const auto& y : r.results) {
        if (y.kernel != x.kernel || y.variant != x.variant || y.precision != x.precision ||
            y.implementation != x.implementation || !(y.tight_bound_time_s > 0))
          continue;
        (y.memory_level == "l2" ? in : out).push_back(y.tight_efficiency);
        all.push_back(y.tight_efficiency);
        tight_beats += y.tight_verdict == "beats-bound";
        if (!y.tight_missing.empty()) missing = y.tight_missing;
      }
      if (all.empty()) continue;
      std::snprintf(line, sizeof line, "  %-16s in-l2 %6s  out-of-l2 %6s  all %6s  worst %6s  best %6s  beats %d%s%s\n",
                    key.c_str(), in.empty() ? "-" : pct(median(in)).c_str(), out.empty() ? "-" : pct(median(out)).c_str(),
                    pct(median(all)).c_str(), pct(*std::min_element(all.begin(), all.end())).c_str(),
                    pct(*std::max_element(all.begin(), all.end())).c_str(), tight_beats,
                    missing.empty() ? "" : "  (missing: ", missing.empty() ? "" : (missing + ")").c_str());
      o << line;
    }
    for (const auto& x : r.results)
      if (x.tight_verdict == "beats-bound")
        o << "  beats the tight bound " << x.kernel << " " << unit_text(x.variant, x.implementation) << " " << x.precision
          << " " << input_text(x) << " (" << x.memory_level << "): "
          << (x.tight_reason.empty() ? pct(x.tight_efficiency) + " of the tight bound" : x.tight_reason) << "\n";
  }
  int beats = 0, tight_beats = 0;
  for (const auto& x : r.results) beats += x.verdict == "beats-bound";
  for (const auto& s : r.speedups) beats += s.verdict == "beats-bound";
  for (const auto& x : r.results) tight_beats += x.tight_verdict == "beats-bound";
  o << "\n" << r.results.size() << " measurements, " << r.speedups.size() << " speedups, " << beats
    << " beats-bound";
  if (tight_beats > 0) o << ", " << tight_beats << " beat the tight bound";
  if (r.wall_time_s > 0) o << ", " << num(r.wall_time_s, "%.1f") << " s";
  o << "\n";
  return o.str();
}

}  // namespace ceiling::validation
