// Helpers for probe authors: turn timings or per-repeat samples into a MeasuredValue with
// provenance (probe name, UTC date, measured SM clock, flag), and small launch utilities.
#pragma once
#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "../gpu/gpu.hpp"
#include "../gpu/power.hpp"
#include "../model/descriptor.hpp"
#include "../model/stats.hpp"
#include "registry.hpp"

namespace ceiling::probes {

// From per-repeat values already in the field's base unit (bytes/s, cycles, bytes...).
inline MeasuredValue measured_from_samples(std::span<const double> values, const std::string& probe,
                                           double sm_clock_hz, bool flagged = false,
                                           const std::string& note = {}) {
  const Summary s = summarize(values);
  MeasuredValue m;
  m.median = s.median;
  m.min = s.min;
  m.max = s.max;
  m.repeats = s.count;
  m.cv = s.cv;
  m.probe = probe;
  m.date = gpu::utc_now_iso8601();
  m.sm_clock_hz = sm_clock_hz;
  m.flagged = flagged;
  m.note = note;
  return m;
}

// From a Timing: value_of(seconds) maps each repeat's time to the field's value, e.g.
// [&](double s) { return bytes / s; } for a bandwidth. The flag and its reason carry over.
template <class F>
MeasuredValue measured_from_timing(const gpu::Timing& t, const std::string& probe, F value_of,
                                   std::string note = {}) {
  std::vector<double> v;
  v.reserve(t.seconds.size());
  for (double s : t.seconds) v.push_back(value_of(s));
  if (t.flagged) note += (note.empty() ? "" : "; ") + t.flag_reason;
  return measured_from_samples(v, probe, t.sm_clock_hz, t.flagged, note);
}

// Rate = work / seconds (bytes/s from bytes moved, FLOP/s from FLOP done).
inline MeasuredValue measured_rate(const gpu::Timing& t, double work, const std::string& probe,
                                   const std::string& note = {}) {
  return measured_from_timing(t, probe, [work](double s) { return work / s; }, note);
}

// Duration itself (seconds).
inline MeasuredValue measured_seconds(const gpu::Timing& t, const std::string& probe,
                                      const std::string& note = {}) {
  return measured_from_timing(t, probe, [](double s) { return s; }, note);
}

// Board power of `launch` run back to back (calibrate --power): the descriptor's measured value
// (watts; min/max: the NVML power samples' range; repeats: counter updates; sm_clock: NVML's SM
// clock under the load) and the reading itself for the probe details. Nothing when power was not
// asked for or the reading failed (the reason goes to the details).
struct PowerResult {
  std::optional<MeasuredValue> value;
  // The work rate during the reading (work_per_launch > 0): the sustained figure at the power limit.
  std::optional<MeasuredValue> rate;
  nlohmann::json details;  // {"watts", "sm_clock_hz", "note"} or {"error"}
};
inline PowerResult measure_power(const ProbeContext& ctx, const std::string& probe,
                                 const std::function<void(cudaStream_t)>& launch, double work_per_launch = 0,
                                 const char* work_unit = "FLOP") {
  PowerResult out;
  if (!ctx.power) return out;
  const gpu::PowerReading r = ctx.power->measure(launch);
  if (!r.ok) {
    out.details = {{"error", r.why}};
    return out;
  }
  MeasuredValue m;
  m.median = r.watts;
  m.min = r.watts_min;
  m.max = r.watts_max;
  m.repeats = r.counter_steps;
  m.probe = probe;
  m.date = gpu::utc_now_iso8601();
  m.sm_clock_hz = r.sm_clock_hz;
  m.note = r.note();
  out.value = m;
  out.details = {{"watts", r.watts}, {"sm_clock_hz", r.sm_clock_hz}, {"seconds", r.seconds},
                 {"launches", r.launches}, {"note", r.note()}};
  if (work_per_launch > 0 && r.run_seconds > 0) {
    // The rate during the reading (its clock may sit below the short timed run's) and the work
    // per joule at that rate: what Table XI's TFLOPS/W means.
    const double rate = work_per_launch * static_cast<double>(r.launches) / r.run_seconds;
    out.details["work_unit"] = work_unit;
    out.details["rate_during"] = rate;
    out.details["work_per_joule"] = rate / r.watts;
    MeasuredValue sustained;
    sustained.median = sustained.min = sustained.max = rate;
    sustained.repeats = static_cast<int>(r.launches);
    sustained.probe = probe;
    sustained.date = m.date;
    sustained.sm_clock_hz = r.sm_clock_hz;
    char what[160];
    std::snprintf(what, sizeof what, "%lld launches back to back over %.3f s during the power reading (%.4g W)",
                  static_cast<long long>(r.launches), r.run_seconds, r.watts);
    sustained.note = what;
    out.rate = sustained;
    char buf[160];
    if (std::string(work_unit) == "B")
      std::snprintf(buf, sizeof buf, "; %.4g TB/s during it: %.4g pJ/B", rate / 1e12, 1e12 * r.watts / rate);
    else
      std::snprintf(buf, sizeof buf, "; %.4g T%s/s during it: %.4g T%s/s per W", rate / 1e12, work_unit,
                    rate / 1e12 / r.watts, work_unit);
    out.value->note += buf;
  }
  return out;
}

// Blocks of `threads` that fit on one SM for `kernel` (occupancy calculator), at least 1.
template <class Kernel>
int blocks_per_sm(Kernel kernel, int threads, size_t dynamic_smem = 0) {
  int n = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, dynamic_smem));
  return std::max(n, 1);
}

}  // namespace ceiling::probes
