#include "power_reading.hpp"

#include <algorithm>
#include <cstdio>

namespace ceiling::gpu {
namespace {
double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
}  // namespace

std::string PowerReading::note() const {
  if (!ok) return "power not measured: " + why;
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "NVML energy counter over %.3f s (%d updates, one every %.1f ms; %.1f..%.1f W per update); %d samples "
                "every %.1f ms (power reading %.1f..%.1f W, median %.1f W); SM clock %.0f MHz; %lld launches",
                seconds, counter_steps, 1e3 * update_period_s, watts_min, watts_max, samples, 1e3 * sample_interval_s,
                sample_watts_min, sample_watts_max, watts_median, sm_clock_hz / 1e6, launches);
  return buf;
}

PowerReading reading_from_samples(const std::vector<PowerSample>& samples, double t_begin, double t_end,
                                  int min_steps) {
  PowerReading r;
  std::vector<const PowerSample*> in;
  for (const auto& s : samples)
    if (s.t >= t_begin && s.t <= t_end) in.push_back(&s);
  r.samples = static_cast<int>(in.size());
  if (in.size() < 2) {
    r.why = "only " + std::to_string(in.size()) + " sampler reads during the load";
    return r;
  }
  // Counter steps: the first read of each new value (the counter only grows; a smaller value
  // means it wrapped or was reset: refuse rather than guess).
  std::vector<const PowerSample*> steps;
  std::vector<double> gaps, watts, clocks;
  for (size_t i = 1; i < in.size(); ++i) {
    gaps.push_back(in[i]->t - in[i - 1]->t);
    if (in[i]->energy_mj < in[i - 1]->energy_mj) {
      r.why = "the energy counter went backwards during the load";
      return r;
    }
    if (in[i]->energy_mj != in[i - 1]->energy_mj) steps.push_back(in[i]);
  }
  for (const auto* s : in) {
    watts.push_back(s->power_mw / 1e3);
    if (s->sm_clock_mhz) clocks.push_back(s->sm_clock_mhz * 1e6);
  }
  r.sample_interval_s = median_of(gaps);
  r.sample_watts_min = *std::min_element(watts.begin(), watts.end());
  r.sample_watts_max = *std::max_element(watts.begin(), watts.end());
  r.watts_median = median_of(watts);
  r.sm_clock_hz = median_of(clocks);
  r.counter_steps = steps.empty() ? 0 : static_cast<int>(steps.size()) - 1;
  if (r.counter_steps < min_steps) {
    r.why = "the energy counter moved " + std::to_string(r.counter_steps) + " times between its first and last "
            "update in the load (at least " + std::to_string(min_steps) + " needed): run the load longer";
    return r;
  }
  std::vector<double> periods, step_watts;
  for (size_t i = 1; i < steps.size(); ++i) {
    const double dt = steps[i]->t - steps[i - 1]->t;
    periods.push_back(dt);
    if (dt > 0) step_watts.push_back(static_cast<double>(steps[i]->energy_mj - steps[i - 1]->energy_mj) / 1e3 / dt);
  }
  if (!step_watts.empty()) {
    r.watts_min = *std::min_element(step_watts.begin(), step_watts.end());
    r.watts_max = *std::max_element(step_watts.begin(), step_watts.end());
  }
  r.update_period_s = median_of(periods);
  r.seconds = steps.back()->t - steps.front()->t;
  if (!(r.seconds > 0)) {
    r.why = "no time between the counter's first and last update";
    return r;
  }
  r.watts = static_cast<double>(steps.back()->energy_mj - steps.front()->energy_mj) / 1e3 / r.seconds;
  r.ok = true;
  return r;
}

}  // namespace ceiling::gpu
