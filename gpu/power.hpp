// Board power through NVML (issue 14: watts and TFLOP/W per instruction, pJ per byte of a memory
// level, the SM clock under each load). libnvidia-ml.so.1 is loaded at run time: no build-time
// dependency, and "not available" (with the reason) where it is missing or the GPU does not report.
//
// Method: a sampler thread reads the board's total-energy counter (mJ), the instantaneous power
// reading (mW) and the SM clock every 2 ms while the load runs back to back. The counter moves in
// steps (its update period is measured, not assumed); the power is the energy between the first
// and the last step seen during the load over the time between them, so a partial period at either
// end does not count. A load shorter than 10 update periods is lengthened (run again) until it is
// long enough; it is never reported from fewer.
#pragma once
#include <cuda_runtime.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "probes/host/power_reading.hpp"

namespace ceiling::gpu {

class PowerMeter {
 public:
  // NVML device of this CUDA device (by UUID, "GPU-..."). Never throws: available() says.
  explicit PowerMeter(const std::string& uuid);
  ~PowerMeter();
  PowerMeter(const PowerMeter&) = delete;
  PowerMeter& operator=(const PowerMeter&) = delete;
  bool available() const { return impl_ != nullptr; }
  const std::string& why_not() const { return why_; }
  // Runs `launch` back to back on a stream of its own for at least max(min_seconds, 10 counter
  // updates), synchronizing every few launches; returns the reading (ok = false with the reason
  // when NVML gave nothing usable).
  PowerReading measure(const std::function<void(cudaStream_t)>& launch, double min_seconds = 0.5);
  // The same with nothing running (the GPU idle but awake).
  PowerReading idle(double seconds = 0.5);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string why_;
};

}  // namespace ceiling::gpu
