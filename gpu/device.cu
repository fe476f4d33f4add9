// Device discovery: count, identity, capabilities read from the device (never assumed).
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <regex>
#include <string>

#include "gpu.hpp"

namespace ceiling::gpu {

std::string DeviceInfo::compute_capability() const {
  return std::to_string(cc_major) + "." + std::to_string(cc_minor);
}

std::string DeviceInfo::driver_text() const {
  if (!driver_release.empty()) return driver_release;
  return "CUDA " + std::to_string(driver_version / 1000) + "." + std::to_string(driver_version % 1000 / 10) +
         " driver";
}

// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  ..." -> "580.159.04" (Linux only).
static std::string read_driver_release() {
  std::ifstream f("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(f, line)) return {};
  std::smatch m;
  static const std::regex re(R"(Kernel Module(?: for [a-z0-9_]+)?\s+([0-9]+(?:\.[0-9]+)+))");
  return std::regex_search(line, m, re) ? m[1].str() : std::string{};
}

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error
    return 0;
  }
  return n;
}

std::string no_gpu_reason() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e == cudaSuccess && n > 0) return {};
  cudaGetLastError();
  if (e == cudaSuccess) return "no CUDA device found";
  const std::string detail = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
  // Without a loaded NVIDIA kernel module the runtime reports an "insufficient" driver; say what it is.
  if ((e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice) && read_driver_release().empty())
    return "no NVIDIA driver loaded on this machine (" + detail + ")";
  return "no usable CUDA device (" + detail + ")";
}

static std::string format_uuid(const cudaUUID_t& u) {
  const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
  char s[64];
  std::snprintf(s, sizeof s,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return s;
}

DeviceInfo query_device(int ordinal) {
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, ordinal));
  DeviceInfo d;
  d.ordinal = ordinal;
  d.name = p.name;
  d.uuid = format_uuid(p.uuid);
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  d.l2_bytes = p.l2CacheSize;
  d.global_memory_bytes = static_cast<long long>(p.totalGlobalMem);
  d.shared_per_sm_bytes = static_cast<int>(p.sharedMemPerMultiprocessor);
  d.shared_per_block_optin_bytes = static_cast<int>(p.sharedMemPerBlockOptin);
  d.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  d.memory_bus_width_bits = p.memoryBusWidth;
  CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
  CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
  d.driver_release = read_driver_release();
  return d;
}

std::string utc_now_iso8601() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace ceiling::gpu
