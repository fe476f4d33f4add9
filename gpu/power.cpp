#include "power.hpp"

#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "cuda_check.hpp"

namespace ceiling::gpu {
namespace {

// The few NVML entry points used, with their C types (nvml.h is not needed at build time).
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;  // NVML_CLOCK_SM

struct Nvml {
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*by_uuid)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  std::string error;
};

const Nvml& nvml() {
  static Nvml lib;
  static std::once_flag once;
  std::call_once(once, [] {
    void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      lib.error = "libnvidia-ml.so.1 not found (it comes with the NVIDIA driver)";
      return;
    }
    auto get = [&](auto& fn, const char* sym) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, sym));
      if (!fn && lib.error.empty()) lib.error = std::string("libnvidia-ml.so.1 lacks ") + sym;
    };
    get(lib.init, "nvmlInit_v2");
    get(lib.shutdown, "nvmlShutdown");
    get(lib.by_uuid, "nvmlDeviceGetHandleByUUID");
    get(lib.power, "nvmlDeviceGetPowerUsage");
    get(lib.energy, "nvmlDeviceGetTotalEnergyConsumption");
    get(lib.clock, "nvmlDeviceGetClockInfo");
    get(lib.error_string, "nvmlErrorString");
  });
  return lib;
}

std::string nvml_error(const char* what, nvmlReturn_t rc) {
  const Nvml& n = nvml();
  return std::string(what) + ": " + (n.error_string ? n.error_string(rc) : ("NVML error " + std::to_string(rc)));
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

struct PowerMeter::Impl {
  nvmlDevice_t dev = nullptr;
  std::mutex mu;
  std::vector<PowerSample> samples;
  std::atomic<bool> stop{false};
  std::thread thread;

  void start() {
    samples.clear();
    samples.reserve(1 << 14);
    stop = false;
    thread = std::thread([this] {
      const Nvml& n = nvml();
      while (!stop.load()) {
        PowerSample s;
        unsigned long long e = 0;
        unsigned p = 0, c = 0;
        const bool ok = n.energy(dev, &e) == kNvmlSuccess;
        n.power(dev, &p);
        n.clock(dev, kNvmlClockSm, &c);
        s.t = now_s();
        s.energy_mj = e;
        s.power_mw = p;
        s.sm_clock_mhz = c;
        if (ok) {
          std::lock_guard<std::mutex> g(mu);
          samples.push_back(s);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    });
  }
  std::vector<PowerSample> finish() {
    stop = true;
    if (thread.joinable()) thread.join();
    std::lock_guard<std::mutex> g(mu);
    return samples;
  }
};

PowerMeter::PowerMeter(const std::string& uuid) {
  const Nvml& n = nvml();
  if (!n.error.empty()) {
    why_ = n.error;
    return;
  }
  if (auto rc = n.init(); rc != kNvmlSuccess) {
    why_ = nvml_error("nvmlInit", rc);
    return;
  }
  auto impl = std::make_unique<Impl>();
  if (auto rc = n.by_uuid(uuid.c_str(), &impl->dev); rc != kNvmlSuccess) {
    why_ = nvml_error(("nvmlDeviceGetHandleByUUID(" + uuid + ")").c_str(), rc);
    n.shutdown();
    return;
  }
  unsigned long long e = 0;
  if (auto rc = n.energy(impl->dev, &e); rc != kNvmlSuccess) {
    why_ = nvml_error("nvmlDeviceGetTotalEnergyConsumption", rc);
    n.shutdown();
    return;
  }
  impl_ = std::move(impl);
}

PowerMeter::~PowerMeter() {
  if (impl_) {
    impl_->finish();
    nvml().shutdown();
  }
}

PowerReading PowerMeter::measure(const std::function<void(cudaStream_t)>& launch, double min_seconds) {
  PowerReading r;
  if (!impl_) {
    r.why = why_;
    return r;
  }
  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  // Warm up (clocks and power settle within tens of ms), then sample while the load runs.
  const double t_warm = now_s();
  while (now_s() - t_warm < 0.1) {
    for (int i = 0; i < 4; ++i) launch(stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  double seconds = min_seconds;
  for (int attempt = 0; attempt < 4; ++attempt) {
    impl_->start();
    const double t0 = now_s();
    long long launches = 0;
    while (now_s() - t0 < seconds) {
      for (int i = 0; i < 4; ++i, ++launches) launch(stream);
      CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    const double t1 = now_s();
    const auto samples = impl_->finish();
    // The load ran from t0 (the first launch) to t1 (the last one finished); the queue was never
    // empty for long (a sync every 4 launches of >= 1 ms each).
    r = reading_from_samples(samples, t0, t1, 10);
    r.launches = launches;
    r.run_seconds = t1 - t0;
    if (r.ok) break;
    // Too few counter updates: lengthen the run (a load shorter than the sensor's period is
    // lengthened, never reported).
    seconds *= 3;
  }
  CUDA_CHECK(cudaStreamDestroy(stream));
  return r;
}

PowerReading PowerMeter::idle(double seconds) {
  PowerReading r;
  if (!impl_) {
    r.why = why_;
    return r;
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  for (int attempt = 0; attempt < 3; ++attempt) {
    impl_->start();
    const double t0 = now_s();
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    const double t1 = now_s();
    r = reading_from_samples(impl_->finish(), t0, t1, 10);
    if (r.ok) break;
    seconds *= 3;
  }
  return r;
}

}  // namespace ceiling::gpu
