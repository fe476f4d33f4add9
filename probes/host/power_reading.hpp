// The arithmetic of a power reading (gpu/power.hpp samples NVML; this turns samples into watts).
// Plain C++, CPU-tested.
#pragma once
#include <string>
#include <vector>

namespace ceiling::gpu {

struct PowerReading {
  bool ok = false;
  std::string why;           // when not ok
  double watts = 0;          // energy-counter steps: energy / time between the first and last step
  // The least and largest power of one counter update (its energy step over its time): the total
  // (watts) is their time-weighted mean, so it always lies between them.
  double watts_min = 0, watts_max = 0;
  double sample_watts_min = 0, sample_watts_max = 0, watts_median = 0;  // NVML's power readings (its own average)
  double seconds = 0;        // time between the first and last counter step used
  int counter_steps = 0;     // counter updates inside the load
  double update_period_s = 0;  // median time between counter updates
  int samples = 0;           // sampler reads
  double sample_interval_s = 0;  // median time between sampler reads
  double sm_clock_hz = 0;    // NVML SM clock, median of the samples
  long long launches = 0;    // launches of the load during the measurement
  double run_seconds = 0;    // from the first launch to the last one's end (launches ran back to back)
  std::string note() const;  // "NVML energy counter: 1.23 s, 12 updates every 100 ms; 800 samples ..."
};

// From sampler reads (time s, energy mJ as read, power mW, SM clock MHz): the reading over
// [t_begin, t_end]. Plain arithmetic, CPU-tested. Fewer than `min_steps` counter steps inside the
// window: ok = false and why says how many were seen.
struct PowerSample {
  double t = 0;
  unsigned long long energy_mj = 0;
  unsigned power_mw = 0;
  unsigned sm_clock_mhz = 0;
};
PowerReading reading_from_samples(const std::vector<PowerSample>& samples, double t_begin, double t_end,
                                  int min_steps = 10);

}  // namespace ceiling::gpu
