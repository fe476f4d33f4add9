// Measured SM clock, CUDA-event timing with throttle/noise detection, L2 flush.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "clock_sampling.hpp"
#include "gpu.hpp"

namespace ceiling::gpu {

namespace {

__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Every thread spins with dependent FMAs until `ns` of wall time passed; thread 0 of each block
// records (cycles, nanoseconds) of its SM over that window.
__global__ void clock_sampler(unsigned long long ns, long long* cycles, long long* nanos, float* sink) {
  __shared__ unsigned long long t0s;
  __shared__ long long c0s;
  if (threadIdx.x == 0) {
    t0s = global_timer_ns();
    c0s = clock64();
  }
  __syncthreads();
  const unsigned long long t0 = t0s;
  float x = threadIdx.x * 1e-3f, y = 1.0001f;
  unsigned long long t = t0;
  while (t - t0 < ns) {
#pragma unroll
    for (int i = 0; i < 64; ++i) x = fmaf(x, y, 1e-7f);
    t = global_timer_ns();
  }
  if (x == 12345.678f) *sink = x;  // keeps the FMAs alive; practically never true
  __syncthreads();
  if (threadIdx.x == 0) {
    const long long c1 = clock64();
    const unsigned long long t1 = global_timer_ns();
    cycles[blockIdx.x] = c1 - c0s;
    nanos[blockIdx.x] = static_cast<long long>(t1 - t0s);
  }
}

// Holds its stream until the host sets *flag (host-mapped) or `timeout_ns` passed: the repeat
// behind it is queued whole before it starts, so the timed region holds no host launch gaps
// (nvbench's blocking kernel, written anew). The timeout keeps a launch that synchronizes
// from deadlocking; it then costs the timeout, not a hang.
__global__ void gate_kernel(const volatile int* flag, unsigned long long timeout_ns) {
  const unsigned long long t0 = global_timer_ns();
  while (*flag == 0 && global_timer_ns() - t0 < timeout_ns) __nanosleep(200);
}

struct ClockScratch {
  long long* cycles = nullptr;
  long long* nanos = nullptr;
  float* sink = nullptr;
  int* gate_host = nullptr;    // host-mapped flag of gate_kernel
  int* gate_device = nullptr;
  int capacity = 0;
};

// One scratch area per device, kept for the process (freeing at exit races the context teardown).
ClockScratch& scratch_for_current_device(int blocks) {
  static std::mutex m;
  static std::map<int, ClockScratch> per_device;
  std::lock_guard<std::mutex> lock(m);
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  ClockScratch& s = per_device[dev];
  if (s.capacity < blocks) {
    if (s.cycles) CUDA_CHECK(cudaFree(s.cycles));
    if (s.nanos) CUDA_CHECK(cudaFree(s.nanos));
    if (!s.sink) CUDA_CHECK(cudaMalloc(&s.sink, sizeof(float)));
    if (!s.gate_host) {
      CUDA_CHECK(cudaHostAlloc(&s.gate_host, sizeof(int), cudaHostAllocMapped));
      CUDA_CHECK(cudaHostGetDevicePointer(&s.gate_device, s.gate_host, 0));
    }
    CUDA_CHECK(cudaMalloc(&s.cycles, blocks * sizeof(long long)));
    CUDA_CHECK(cudaMalloc(&s.nanos, blocks * sizeof(long long)));
    s.capacity = blocks;
  }
  return s;
}

class DeviceGuard {
 public:
  explicit DeviceGuard(int ordinal) {
    CUDA_CHECK(cudaGetDevice(&previous_));
    if (ordinal != previous_) CUDA_CHECK(cudaSetDevice(ordinal));
  }
  ~DeviceGuard() { CUDA_CHECK_NOTHROW(cudaSetDevice(previous_)); }

 private:
  int previous_ = 0;
};

double hz_of(long long cycles, long long nanos) {
  return nanos > 0 ? static_cast<double>(cycles) / static_cast<double>(nanos) * 1e9 : 0.0;
}

// A short one-block sample enqueued after each timed repeat: the clock right after the work.
constexpr unsigned long long kSampleNs = 200'000;
constexpr unsigned long long kGateTimeoutNs = 20'000'000;

}  // namespace

namespace {

std::mutex stats_mutex;
TimingStats stats;

}  // namespace

TimingStats timing_stats() {
  std::lock_guard<std::mutex> lock(stats_mutex);
  return stats;
}

void reset_timing_stats() {
  std::lock_guard<std::mutex> lock(stats_mutex);
  stats = {};
}

double measure_sm_clock_hz(int ordinal, double seconds) {
  if (!(seconds > 0)) throw std::invalid_argument("measure_sm_clock_hz: seconds must be > 0");
  DeviceGuard guard(ordinal);
  int sms = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ordinal));
  const int blocks = 2 * sms;  // two blocks per SM: every SM busy
  ClockScratch& s = scratch_for_current_device(blocks);
  // A short first launch ramps the clock up from idle; the second is measured.
  clock_sampler<<<blocks, 256>>>(2'000'000, s.cycles, s.nanos, s.sink);
  CUDA_CHECK_LAUNCH();
  clock_sampler<<<blocks, 256>>>(static_cast<unsigned long long>(seconds * 1e9), s.cycles, s.nanos,
                                 s.sink);
  CUDA_CHECK_LAUNCH();
  std::vector<long long> c(blocks), n(blocks);
  CUDA_CHECK(cudaMemcpy(c.data(), s.cycles, blocks * sizeof(long long), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(n.data(), s.nanos, blocks * sizeof(long long), cudaMemcpyDeviceToHost));
  std::vector<double> hz(blocks);
  for (int i = 0; i < blocks; ++i) hz[i] = hz_of(c[i], n[i]);
  const double med = median(hz);
  if (!(med > 1e6)) throw std::runtime_error("measure_sm_clock_hz: implausible clock " + std::to_string(med) + " Hz");
  return med;
}

Timing time_kernel(const std::function<void(cudaStream_t)>& launch, const TimingOptions& opt,
                   cudaStream_t stream) {
  if (opt.repeats < 1) throw std::invalid_argument("time_kernel: repeats must be >= 1");
  ClockScratch& s = scratch_for_current_device(opt.repeats);
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  struct Events {
    cudaEvent_t a, b;
    ~Events() {
      CUDA_CHECK_NOTHROW(cudaEventDestroy(a));
      CUDA_CHECK_NOTHROW(cudaEventDestroy(b));
    }
  } events{start, stop};

  Timing t, best;
  bool have_best = false;
  const auto wall0 = std::chrono::steady_clock::now();
  long launches = 0;
  double timed = 0;
  for (int attempt = 0; attempt <= opt.max_retries; ++attempt) {
    launches += opt.warmup + opt.repeats;
    for (int i = 0; i < opt.warmup; ++i) {
      launch(stream);
      CUDA_CHECK_LAUNCH();
    }
    std::vector<double> seconds(opt.repeats);
    const std::vector<int> sampled = sampled_repeats(opt.repeats, opt.clock_samples);
    std::size_t next_sample = 0;
    for (int r = 0; r < opt.repeats; ++r) {
      // The clock sample after a repeat also kept the GPU busy while the host queued the next
      // one (200 us); a repeat with no sample before it waits behind the gate instead. (Without
      // either, back-to-back in-L2 launches ran at the host's launch rate: the L2 first-byte
      // terms doubled on an H200.)
      // A cold repeat's flush keeps the GPU busy while the host queues the repeat, as it always did.
      const bool gated = !opt.flush_l2 && r > 0 && (next_sample == 0 || sampled[next_sample - 1] != r - 1);
      if (gated) {
        *reinterpret_cast<volatile int*>(s.gate_host) = 0;
        gate_kernel<<<1, 1, 0, stream>>>(s.gate_device, kGateTimeoutNs);
        CUDA_CHECK_LAUNCH();
      }
      if (opt.flush_l2) flush_l2(stream);
      CUDA_CHECK(cudaEventRecord(start, stream));
      launch(stream);
      CUDA_CHECK_LAUNCH();
      CUDA_CHECK(cudaEventRecord(stop, stream));
      if (gated) {
        std::atomic_thread_fence(std::memory_order_seq_cst);
        *reinterpret_cast<volatile int*>(s.gate_host) = 1;
      }
      // Clock sample after the timed region: how fast the SMs ran right after this repeat.
      if (next_sample < sampled.size() && sampled[next_sample] == r) {
        clock_sampler<<<1, 32, 0, stream>>>(kSampleNs, s.cycles + next_sample, s.nanos + next_sample, s.sink);
        CUDA_CHECK_LAUNCH();
        ++next_sample;
      }
      CUDA_CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      seconds[r] = ms * 1e-3;
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    const std::size_t ns = sampled.size();
    std::vector<long long> c(ns), n(ns);
    if (ns) {
      CUDA_CHECK(cudaMemcpy(c.data(), s.cycles, ns * sizeof(long long), cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaMemcpy(n.data(), s.nanos, ns * sizeof(long long), cudaMemcpyDeviceToHost));
    }
    std::vector<double> hz(ns);
    for (std::size_t r = 0; r < ns; ++r) hz[r] = hz_of(c[r], n[r]);
    const double hz_max = ns ? *std::max_element(hz.begin(), hz.end()) : 0.0;
    const double hz_min = ns ? *std::min_element(hz.begin(), hz.end()) : 0.0;

    for (double x : seconds) timed += x;
    t.seconds = std::move(seconds);
    t.summary = summarize(t.seconds);
    t.sm_clock_hz = ns ? median(hz) : 0.0;
    t.flag_reason.clear();
    if (ns && hz_min < opt.min_clock_ratio * hz_max)
      t.flag_reason = "throttled: SM clock fell to " + std::to_string(hz_min / 1e6) + " MHz (max " +
                      std::to_string(hz_max / 1e6) + " MHz)";
    else if (opt.repeats > 1 && t.summary.cv > opt.max_cv)
      t.flag_reason = "noisy: CV " + std::to_string(t.summary.cv) + " > " + std::to_string(opt.max_cv);
    t.flagged = !t.flag_reason.empty();
    if (!have_best || steadier_attempt(t.flagged, t.summary.cv, best.flagged, best.summary.cv)) {
      best = t;
      have_best = true;
    }
    if (!t.flagged) break;
  }
  t = std::move(best);
  {
    std::lock_guard<std::mutex> lock(stats_mutex);
    stats.calls += 1;
    stats.launches += launches;
    stats.timed_seconds += timed;
    stats.wall_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  }
  return t;
}

namespace {
// Reads every 16-byte word; the sum is stored only if it matches an impossible value, so the
// loads stay but nothing is written.
__global__ void l2_flush_read(const double2* __restrict__ p, long long n, double* __restrict__ sink) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  double s = 0;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const double2 v = p[i];
    s += v.x + v.y;
  }
  if (s == 1234.5) *sink = s;  // never true for the zero-filled buffer
}

struct FlushBuffer {
  double2* data = nullptr;
  long long count = 0;
  double* sink = nullptr;
  int blocks = 0;
};
}  // namespace

void flush_l2(cudaStream_t stream) {
  static std::mutex m;
  static std::map<int, FlushBuffer> buffers;  // kept for the process
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  FlushBuffer b;
  {
    std::lock_guard<std::mutex> lock(m);
    auto& e = buffers[dev];
    if (!e.data) {
      int l2 = 0, sms = 0;
      CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
      CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
      const size_t bytes = 2 * static_cast<size_t>(std::max(l2, 1 << 20));
      CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&e.data), bytes));
      CUDA_CHECK(cudaMemset(e.data, 0, bytes));
      CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&e.sink), sizeof(double)));
      CUDA_CHECK(cudaDeviceSynchronize());
      e.count = static_cast<long long>(bytes / sizeof(double2));
      e.blocks = 4 * std::max(sms, 1);
    }
    b = e;
  }
  // Evict by reading twice the L2: lines the timed work dirtied are written back here, inside
  // the flush, and the L2 is left clean. (Evicting by writing would leave a full L2 of dirty
  // lines whose write-back the next timed kernel pays: ~13 us per flush on an H200.)
  l2_flush_read<<<b.blocks, 512, 0, stream>>>(b.data, b.count, b.sink);
  CUDA_CHECK_LAUNCH();
}

}  // namespace ceiling::gpu
