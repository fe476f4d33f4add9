#include "runner.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/clock_sampling.hpp"
#include "model/units.hpp"

namespace ceiling::kernels {

Verification verify_once(KernelInstance& inst, std::uint64_t seed) {
  inst.randomize(seed);
  inst.poison_output();
  inst.launch(nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  return inst.verify();
}

gpu::Timing time_cold(const std::function<void(cudaStream_t)>& launch, int warmup, int repeats,
                      cudaStream_t stream) {
  if (repeats < 1) throw std::invalid_argument("time_cold: repeats must be >= 1");
  for (int i = 0; i < warmup; ++i) {
    launch(stream);
    CUDA_CHECK_LAUNCH();
  }
  gpu::TimingOptions one;
  one.warmup = 0;
  one.repeats = 1;
  one.max_retries = 0;
  gpu::Timing t;
  std::vector<double> clocks;
  for (int r = 0; r < repeats; ++r) {
    clean_l2(stream);
    const gpu::Timing x = gpu::time_kernel(launch, one, stream);
    t.seconds.push_back(x.seconds.at(0));
    clocks.push_back(x.sm_clock_hz);
  }
  t.summary = summarize(t.seconds);
  t.sm_clock_hz = median(clocks);
  const double lo = *std::min_element(clocks.begin(), clocks.end());
  const double hi = *std::max_element(clocks.begin(), clocks.end());
  const gpu::TimingOptions def;
  if (lo < def.min_clock_ratio * hi)
    t.flag_reason = "throttled: SM clock fell to " + std::to_string(lo / 1e6) + " MHz (max " + std::to_string(hi / 1e6) + " MHz)";
  else if (t.summary.cv > def.max_cv)
    t.flag_reason = "noisy: CV " + std::to_string(t.summary.cv) + " > " + std::to_string(def.max_cv);
  t.flagged = !t.flag_reason.empty();
  return t;
}

int pick_fastest(const std::vector<int>& candidates, const std::function<void(int, cudaStream_t)>& launch, bool cold,
                 int repeats) {
  if (candidates.empty()) throw std::invalid_argument("pick_fastest: no candidates");
  int best = candidates.front();
  double best_s = -1;
  for (int c : candidates) {
    const auto run = [&](cudaStream_t s) { launch(c, s); };
    const gpu::Timing t = cold ? time_cold(run, 1, repeats) : [&] {
      gpu::TimingOptions o;
      o.warmup = 1;
      o.repeats = repeats;
      o.max_retries = 0;
      return gpu::time_kernel(run, o);
    }();
    if (best_s < 0 || t.summary.median < best_s) {
      best_s = t.summary.median;
      best = c;
    }
  }
  return best;
}

Measurement measure(const KernelVariant& v, const KernelParams& params, const RunContext& ctx,
                    const MeasureOptions& o) {
  Measurement m;
  m.params = params;
  m.model = v.model(params);
  m.l2_flushed = o.flush_l2;
  auto inst = v.create(params, ctx);
  m.check = verify_once(*inst, o.seed);
  if (!m.check.ok)
    throw std::runtime_error(v.name() + " at " + kernel_size_text(v.kind, params) + ": wrong output: " + m.check.message);
  m.launch_text = inst->launch_text();
  KernelInstance* p = inst.get();
  const auto launch = [p](cudaStream_t st) { p->launch(st); };
  if (o.flush_l2) {
    // A cold run whose repeats spread by more than 1% met interference (one H200 run: a SCALE
    // median 5% above its own minimum and its neighbours): time it again, keep the steadiest of
    // three attempts; time_cold flags what stays noisy.
    m.timing = time_cold(launch, o.warmup, o.repeats, o.stream);
    for (int attempt = 1; attempt < 3 && m.timing.summary.cv > 0.01; ++attempt) {
      gpu::Timing again = time_cold(launch, o.warmup, o.repeats, o.stream);
      if (gpu::steadier_attempt(again.flagged, again.summary.cv, m.timing.flagged, m.timing.summary.cv))
        m.timing = std::move(again);
    }
  } else {
    gpu::TimingOptions probe;
    probe.warmup = o.warmup;
    probe.repeats = 3;
    probe.max_retries = 0;
    const double single = gpu::time_kernel(launch, probe, o.stream).summary.median;
    const int k = std::clamp(static_cast<int>(std::ceil(o.warm_region_s / single)), 1, std::max(1, o.max_launches));
    m.launches = k;
    gpu::TimingOptions t;
    t.warmup = 1;
    t.repeats = o.repeats;
    m.timing = gpu::time_kernel(
        [&launch, k](cudaStream_t st) {
          for (int i = 0; i < k; ++i) launch(st);
        },
        t, o.stream);
    for (double& x : m.timing.seconds) x /= k;
    m.timing.summary = summarize(m.timing.seconds);
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  return m;
}

Measurer gpu_measurer() {
  return [](const MeasureRequest& req) {
    MeasureOptions mo;
    mo.flush_l2 = !req.context.in_l2;
    mo.seed = req.seed;
    const Measurement m = measure(*req.variant, req.params, req.context, mo);
    MeasureResult r;
    r.time = {m.timing.summary.median, m.timing.summary.min, m.timing.summary.max, m.timing.summary.cv,
              m.timing.summary.count, m.launches};
    r.sm_clock_hz = m.timing.sm_clock_hz;
    r.flagged = m.timing.flagged;
    r.flag_reason = m.timing.flag_reason;
    r.verify_error = m.check.error;
    r.how = mo.flush_l2 ? "cold: L2 evicted and clean before each repeat"
                        : "warm: " + std::to_string(m.launches) + " back-to-back launches per timed region";
    if (!m.launch_text.empty()) r.how += "; launch: " + m.launch_text;
    return r;
  };
}

validation::ValidationReport run_validation_on_gpu(const HardwareDescriptor& hw, const std::string& descriptor_path,
                                                   const std::vector<const KernelVariant*>& variants, Sweep sweep,
                                                   int device, const std::string& command_line) {
  using namespace ceiling::validation;
  const auto t0 = std::chrono::steady_clock::now();
  if (gpu::device_count() == 0) throw std::runtime_error("validate needs a GPU: " + gpu::no_gpu_reason());
  if (device < 0 || device >= gpu::device_count())
    throw std::runtime_error("--device " + std::to_string(device) + " out of range (" +
                             std::to_string(gpu::device_count()) + " device(s))");
  CUDA_CHECK(cudaSetDevice(device));
  const gpu::DeviceInfo info = gpu::query_device(device);
  if (!hw.identity.name.empty() && hw.identity.name != info.name)
    spdlog::warn("descriptor '{}' describes '{}' but device {} is '{}': bounds come from the descriptor", hw.id,
                 hw.identity.name, device, info.name);
  sweep.l2_bytes = sweep_l2_bytes(hw);
  const double device_l2 = static_cast<double>(info.l2_bytes);
  if (std::fabs(sweep.l2_bytes - device_l2) > 0.1 * device_l2)
    spdlog::warn("descriptor L2 capacity {} differs from the device's {} by more than 10%: the split follows the "
                 "descriptor", format_quantity(sweep.l2_bytes, Dimension::bytes), format_quantity(device_l2, Dimension::bytes));
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  sweep.memory_limit_bytes = 0.9 * static_cast<double>(free_bytes) - 2.5 * device_l2;  // flush buffers
  sweep.seed ^= static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  const double clock = gpu::measure_sm_clock_hz(device);
  spdlog::info("validate on {} ({} SMs, L2 {}, split at half of {}, SM clock {:.0f} MHz) against descriptor '{}' ({})",
               info.name, info.sm_count, format_quantity(device_l2, Dimension::bytes),
               format_quantity(sweep.l2_bytes, Dimension::bytes), clock / 1e6, hw.id, descriptor_path);

  ValidationReport rep = run_validation(hw, variants, sweep, gpu_measurer());
  rep.tool_version = CEILING_VERSION;
  rep.date = gpu::utc_now_iso8601();
  rep.command_line = command_line;
  rep.device.name = info.name;
  rep.device.uuid = info.uuid;
  rep.device.sm_count = info.sm_count;
  rep.device.compute_capability = info.compute_capability();
  rep.device.driver = info.driver_text();
  rep.device.cuda_version =
      std::to_string(info.runtime_version / 1000) + "." + std::to_string(info.runtime_version % 1000 / 10);
  rep.device.l2_bytes = device_l2;
  rep.descriptor_id = hw.id;
  rep.descriptor_path = descriptor_path;
  rep.sm_clock_hz = clock;
  rep.wall_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

}  // namespace ceiling::kernels
