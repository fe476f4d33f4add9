// Helpers for probe authors: turn timings or per-repeat samples into a MeasuredValue with
// provenance (probe name, UTC date, measured SM clock, flag), and small launch utilities.
#pragma once
#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "../gpu/gpu.hpp"
#include "../model/descriptor.hpp"
#include "../model/stats.hpp"

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

// Blocks of `threads` that fit on one SM for `kernel` (occupancy calculator), at least 1.
template <class Kernel>
int blocks_per_sm(Kernel kernel, int threads, size_t dynamic_smem = 0) {
  int n = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, dynamic_smem));
  return std::max(n, 1);
}

}  // namespace ceiling::probes
