// Shared GPU plumbing for probes/ and kernels/: device facts, measured SM clock, event timing,
// L2 flush, throttle detection. Implemented in gpu/*.cu (owner: the memory-probe work).
#pragma once
#include <cuda_runtime.h>

#include <functional>
#include <string>
#include <vector>

#include "../model/stats.hpp"
#include "cuda_check.hpp"

namespace ceiling::gpu {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  std::string uuid;           // "GPU-xxxxxxxx-..."
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  long long l2_bytes = 0;
  long long global_memory_bytes = 0;
  int shared_per_sm_bytes = 0;
  int shared_per_block_optin_bytes = 0;
  int max_threads_per_sm = 0;
  int memory_bus_width_bits = 0;
  int driver_version = 0;     // cudaDriverGetVersion, e.g. 13000 (the driver's CUDA API level)
  std::string driver_release; // NVIDIA driver release, e.g. "580.159.04" (/proc/driver/nvidia/version); may be empty
  int runtime_version = 0;
  std::string compute_capability() const;  // "9.0"
  // The release when known, else the CUDA API level: "580.159.04" or "CUDA 13.0 driver".
  std::string driver_text() const;
};

// Number of CUDA devices; 0 (not an exception) when there is no driver or no GPU.
int device_count();
// Why there is no usable GPU ("no CUDA driver", "no CUDA device"), empty when there is one.
std::string no_gpu_reason();
DeviceInfo query_device(int ordinal);

// SM clock measured while the GPU is busy: clock64 against %globaltimer on all SMs.
double measure_sm_clock_hz(int ordinal, double seconds = 0.05);

struct TimingOptions {
  int warmup = 3;
  int repeats = 20;
  bool flush_l2 = false;        // flush L2 before every timed repeat (cold runs)
  double min_clock_ratio = 0.9; // a repeat whose clock < ratio * run max is "throttled"
  int max_retries = 2;          // retry a throttled/noisy run this many times, then flag
  double max_cv = 0.05;         // a run with CV above this is "noisy"
  // How many timed repeats are followed by a 200 us clock sample (spread evenly, the last one
  // always): -1 every repeat; 0 none (Timing::sm_clock_hz stays 0, no throttle check). The
  // sample costs more than a short kernel: searches over launch configurations take 0.
  int clock_samples = -1;
};

struct Timing {
  std::vector<double> seconds;  // one per timed repeat
  Summary summary;              // of seconds
  double sm_clock_hz = 0;       // measured right after the sampled repeats (median); 0 if none
  bool flagged = false;         // still throttled/noisy after retries
  std::string flag_reason;
};

// Times `launch` (enqueues the work on the default/given stream) with CUDA events.
Timing time_kernel(const std::function<void(cudaStream_t)>& launch, const TimingOptions& opt = {},
                   cudaStream_t stream = nullptr);

// What time_kernel did since the last reset (this process, all devices): where a probe's wall
// time goes (calibrate -vv prints it per probe).
struct TimingStats {
  long calls = 0;            // time_kernel calls
  long launches = 0;         // warm-up and timed launches
  double timed_seconds = 0;  // sum of the timed repeats (event time)
  double wall_seconds = 0;   // wall time inside time_kernel
};
TimingStats timing_stats();
void reset_timing_stats();

// Evicts the L2 by reading a buffer of twice its size (reading leaves no dirty lines to write back).
void flush_l2(cudaStream_t stream = nullptr);

// RAII device buffer.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count) : count_(count) {
    if (count) CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&ptr_), count * sizeof(T)));
  }
  ~DeviceBuffer() {
    if (ptr_) CUDA_CHECK_NOTHROW(cudaFree(ptr_));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), count_(o.count_) {
    o.ptr_ = nullptr;
    o.count_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      if (ptr_) CUDA_CHECK_NOTHROW(cudaFree(ptr_));
      ptr_ = o.ptr_;
      count_ = o.count_;
      o.ptr_ = nullptr;
      o.count_ = 0;
    }
    return *this;
  }
  T* data() const { return ptr_; }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  size_t count_ = 0;
};

std::string utc_now_iso8601();

}  // namespace ceiling::gpu
