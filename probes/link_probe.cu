// The link probe's CUDA backend. See link_probe.hpp and model/link.hpp.
#include "link_probe.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "../gpu/gpu.hpp"

namespace ceiling::probes {
namespace {

__host__ __device__ inline std::uint64_t pattern_word(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;  // splitmix64
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

__global__ void fill_pattern(std::uint64_t* p, std::uint64_t words, std::uint64_t seed) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < words; i += std::uint64_t(gridDim.x) * blockDim.x)
    p[i] = pattern_word(seed, i);
}

__global__ void count_mismatches(const std::uint64_t* p, std::uint64_t words, std::uint64_t seed,
                                 unsigned long long* bad) {
  unsigned long long local = 0;
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < words; i += std::uint64_t(gridDim.x) * blockDim.x)
    local += p[i] != pattern_word(seed, i);
  if (local) atomicAdd(bad, local);
}

// Reads `words` 8-byte words of `src` (a peer's memory or mapped host memory) and adds them into
// *sum: the output the run is checked by. 16-byte loads where aligned, .cv (fetched again every
// launch: nothing is served from this GPU's L2 on a repeat).
__global__ void read_sum(const std::uint64_t* __restrict__ src, std::uint64_t words, unsigned long long* sum) {
  unsigned long long acc = 0;
  const std::uint64_t pairs = words / 2;
  const ulonglong2* v = reinterpret_cast<const ulonglong2*>(src);
  const std::uint64_t stride = std::uint64_t(gridDim.x) * blockDim.x;
  std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x;
  for (; i + 3 * stride < pairs; i += 4 * stride) {
    const ulonglong2 a = __ldcv(v + i), b = __ldcv(v + i + stride), c = __ldcv(v + i + 2 * stride),
                     d = __ldcv(v + i + 3 * stride);
    acc += a.x + a.y + b.x + b.y + c.x + c.y + d.x + d.y;
  }
  for (; i < pairs; i += stride) {
    const ulonglong2 a = __ldcv(v + i);
    acc += a.x + a.y;
  }
  if (words % 2 && blockIdx.x == 0 && threadIdx.x == 0) acc += __ldcv(reinterpret_cast<const unsigned long long*>(src) + words - 1);
  for (int o = 16; o > 0; o /= 2) acc += __shfl_down_sync(0xffffffffu, acc, o);
  if ((threadIdx.x & 31) == 0 && acc) atomicAdd(sum, acc);
}

std::uint64_t host_pattern_sum(std::uint64_t words, std::uint64_t seed) {
  std::uint64_t s = 0;
  for (std::uint64_t i = 0; i < words; ++i) s += pattern_word(seed, i);
  return s;
}

void host_fill(std::uint64_t* p, std::uint64_t words, std::uint64_t seed) {
  for (std::uint64_t i = 0; i < words; ++i) p[i] = pattern_word(seed, i);
}

std::uint64_t host_mismatches(const std::uint64_t* p, std::uint64_t words, std::uint64_t seed) {
  std::uint64_t bad = 0;
  for (std::uint64_t i = 0; i < words; ++i) bad += p[i] != pattern_word(seed, i);
  return bad;
}

class CudaLinkBackend final : public LinkBackend {
 public:
  CudaLinkBackend() {
    CUDA_CHECK(cudaGetDeviceCount(&count_));
    dev_.resize(static_cast<std::size_t>(count_));
  }
  ~CudaLinkBackend() override {
    for (int d = 0; d < count_; ++d) {
      auto& s = dev_[static_cast<std::size_t>(d)];
      if (!s.init) continue;
      cudaSetDevice(d);
      if (s.buf) CUDA_CHECK_NOTHROW(cudaFree(s.buf));
      if (s.counter) CUDA_CHECK_NOTHROW(cudaFree(s.counter));
      CUDA_CHECK_NOTHROW(cudaEventDestroy(s.start));
      CUDA_CHECK_NOTHROW(cudaEventDestroy(s.stop));
      CUDA_CHECK_NOTHROW(cudaStreamDestroy(s.stream));
    }
    if (pinned_) CUDA_CHECK_NOTHROW(cudaFreeHost(pinned_));
  }

  int device_count() override { return count_; }

  LinkGpuInfo device(int d) override {
    const gpu::DeviceInfo i = gpu::query_device(d);
    return {i.name, i.uuid};
  }

  bool can_access_peer(int from, int to) override {
    int ok = 0;
    CUDA_CHECK(cudaDeviceCanAccessPeer(&ok, to, from));
    return ok != 0;
  }

  std::vector<double> time_transfers(LinkPath path, int a, int b, std::uint64_t bytes, int repeats) override {
    if (bytes % 8 != 0) throw std::runtime_error("link probe: transfer sizes are whole 8-byte words");
    check_device(a);
    if (!is_host_path(path)) check_device(b);
    const std::uint64_t words = bytes / 8;
    const std::uint64_t seed = 0x1234567ull + (++calls_) * 0x9E3779B97F4A7C15ull;
    switch (path) {
      case LinkPath::h2d_pinned:
      case LinkPath::h2d_pageable: return host_to_device(path == LinkPath::h2d_pinned, a, words, seed, repeats);
      case LinkPath::d2h_pinned:
      case LinkPath::d2h_pageable: return device_to_host(path == LinkPath::d2h_pinned, a, words, seed, repeats);
      case LinkPath::host_sm_read: return host_sm_read(a, words, seed, repeats);
      case LinkPath::peer_ce:
      case LinkPath::staged_ce: return peer_copy(path == LinkPath::peer_ce, a, b, words, seed, repeats);
      case LinkPath::peer_sm_read: return peer_sm_read(a, b, words, seed, repeats);
    }
    throw std::runtime_error("link probe: unknown path");
  }

 private:
  struct Dev {
    int id = 0;
    bool init = false;
    std::uint64_t* buf = nullptr;
    std::uint64_t words = 0;
    unsigned long long* counter = nullptr;
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    int sms = 0;
  };
  int count_ = 0;
  std::uint64_t calls_ = 0;
  std::vector<Dev> dev_;
  std::uint64_t* pinned_ = nullptr;
  std::uint64_t pinned_words_ = 0;
  std::vector<std::uint64_t> pageable_;

  void check_device(int d) const {
    if (d < 0 || d >= count_) throw std::runtime_error("link probe: device " + std::to_string(d) + " does not exist");
  }

  Dev& dev(int d, std::uint64_t words) {
    Dev& s = dev_[static_cast<std::size_t>(d)];
    CUDA_CHECK(cudaSetDevice(d));
    if (!s.init) {
      s.id = d;
      CUDA_CHECK(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
      CUDA_CHECK(cudaEventCreate(&s.start));
      CUDA_CHECK(cudaEventCreate(&s.stop));
      CUDA_CHECK(cudaMalloc(&s.counter, sizeof(unsigned long long)));
      CUDA_CHECK(cudaDeviceGetAttribute(&s.sms, cudaDevAttrMultiProcessorCount, d));
      s.init = true;
    }
    if (s.words < words) {
      if (s.buf) CUDA_CHECK(cudaFree(s.buf));
      s.buf = nullptr;
      CUDA_CHECK(cudaMalloc(&s.buf, words * 8));
      s.words = words;
    }
    return s;
  }

  std::uint64_t* pinned(std::uint64_t words) {
    if (pinned_words_ < words) {
      if (pinned_) CUDA_CHECK(cudaFreeHost(pinned_));
      pinned_ = nullptr;
      // Portable: every device may copy from it; mapped: kernels read it (host_sm_read).
      CUDA_CHECK(cudaHostAlloc(&pinned_, words * 8, cudaHostAllocPortable | cudaHostAllocMapped));
      pinned_words_ = words;
    }
    return pinned_;
  }

  std::uint64_t* pageable(std::uint64_t words) {
    if (pageable_.size() < words) pageable_.assign(words, 0);  // touched: no first-touch faults in the timing
    return pageable_.data();
  }

  static unsigned grid_for(const Dev& s) { return static_cast<unsigned>(std::max(1, s.sms) * 8); }

  // Each helper makes its device current: a stream only takes work from its own device.
  void device_fill(Dev& s, std::uint64_t words, std::uint64_t seed) {
    CUDA_CHECK(cudaSetDevice(s.id));
    fill_pattern<<<grid_for(s), 256, 0, s.stream>>>(s.buf, words, seed);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(s.stream));
  }

  void device_poison(Dev& s, std::uint64_t words) {
    CUDA_CHECK(cudaSetDevice(s.id));
    CUDA_CHECK(cudaMemsetAsync(s.buf, 0xA5, words * 8, s.stream));
    CUDA_CHECK(cudaStreamSynchronize(s.stream));
  }

  void device_check(Dev& s, std::uint64_t words, std::uint64_t seed, const char* what) {
    CUDA_CHECK(cudaSetDevice(s.id));
    CUDA_CHECK(cudaMemsetAsync(s.counter, 0, sizeof(unsigned long long), s.stream));
    count_mismatches<<<grid_for(s), 256, 0, s.stream>>>(s.buf, words, seed, s.counter);
    CUDA_CHECK(cudaGetLastError());
    unsigned long long bad = 0;
    CUDA_CHECK(cudaMemcpyAsync(&bad, s.counter, sizeof bad, cudaMemcpyDeviceToHost, s.stream));
    CUDA_CHECK(cudaStreamSynchronize(s.stream));
    if (bad) throw std::runtime_error(std::string(what) + ": " + std::to_string(bad) + " of " + std::to_string(words) + " words wrong after the copy");
  }

  // Events around one async operation on `s.stream`; seconds.
  template <class F>
  std::vector<double> time_events(Dev& s, int repeats, F&& op) {
    CUDA_CHECK(cudaSetDevice(s.id));
    std::vector<double> t;
    op();  // warm-up
    CUDA_CHECK(cudaStreamSynchronize(s.stream));
    for (int r = 0; r < repeats; ++r) {
      CUDA_CHECK(cudaEventRecord(s.start, s.stream));
      op();
      CUDA_CHECK(cudaEventRecord(s.stop, s.stream));
      CUDA_CHECK(cudaEventSynchronize(s.stop));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, s.start, s.stop));
      t.push_back(static_cast<double>(ms) * 1e-3);
    }
    return t;
  }

  // Host clock around a copy and the stream's synchronisation: a pageable copy is staged by the
  // driver through its own page-locked buffers, and cudaMemcpy may return before the last DMA.
  template <class F>
  static std::vector<double> time_host(int repeats, F&& op) {
    std::vector<double> t;
    op();
    for (int r = 0; r < repeats; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      op();
      t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return t;
  }

  std::vector<double> host_to_device(bool pin, int d, std::uint64_t words, std::uint64_t seed, int repeats) {
    Dev& s = dev(d, words);
    std::uint64_t* h = pin ? pinned(words) : pageable(words);
    host_fill(h, words, seed);
    device_poison(s, words);
    if (pin) {
      CUDA_CHECK(cudaMemcpyAsync(s.buf, h, words * 8, cudaMemcpyHostToDevice, s.stream));
      CUDA_CHECK(cudaStreamSynchronize(s.stream));
    } else {
      CUDA_CHECK(cudaMemcpyAsync(s.buf, h, words * 8, cudaMemcpyHostToDevice, s.stream));
      CUDA_CHECK(cudaStreamSynchronize(s.stream));
    }
    device_check(s, words, seed, pin ? "h2d_pinned" : "h2d_pageable");
    if (pin)
      return time_events(s, repeats, [&] { CUDA_CHECK(cudaMemcpyAsync(s.buf, h, words * 8, cudaMemcpyHostToDevice, s.stream)); });
    return time_host(repeats, [&] {
      CUDA_CHECK(cudaMemcpyAsync(s.buf, h, words * 8, cudaMemcpyHostToDevice, s.stream));
      CUDA_CHECK(cudaStreamSynchronize(s.stream));
    });
  }

  std::vector<double> device_to_host(bool pin, int d, std::uint64_t words, std::uint64_t seed, int repeats) {
    Dev& s = dev(d, words);
    std::uint64_t* h = pin ? pinned(words) : pageable(words);
    device_fill(s, words, seed);
    std::memset(h, 0xA5, words * 8);
    if (pin) {
      CUDA_CHECK(cudaMemcpyAsync(h, s.buf, words * 8, cudaMemcpyDeviceToHost, s.stream));
      CUDA_CHECK(cudaStreamSynchronize(s.stream));
    } else {
      CUDA_CHECK(cudaMemcpyAsync(h, s.buf, words * 8, cudaMemcpyDeviceToHost, s.stream));
      CUDA_CHECK(cudaStreamSynchronize(s.stream));
    }
    if (const auto bad = host_mismatches(h, words, seed))
      throw std::runtime_error(std::string(pin ? "d2h_pinned" : "d2h_pageable") + ": " + std::to_string(bad) + " of " +
                               std::to_string(words) + " words wrong after the copy");
    if (pin)
      return time_events(s, repeats, [&] { CUDA_CHECK(cudaMemcpyAsync(h, s.buf, words * 8, cudaMemcpyDeviceToHost, s.stream)); });
    return time_host(repeats, [&] {
      CUDA_CHECK(cudaMemcpyAsync(h, s.buf, words * 8, cudaMemcpyDeviceToHost, s.stream));
      CUDA_CHECK(cudaStreamSynchronize(s.stream));
    });
  }

  // A kernel on `s`'s device summing `words` of `src`; checked against `expect` on the first launch.
  std::vector<double> read_kernel(Dev& s, const std::uint64_t* src, std::uint64_t words, std::uint64_t expect,
                                  int repeats, const char* what) {
    CUDA_CHECK(cudaSetDevice(s.id));
    const unsigned grid = static_cast<unsigned>(std::min<std::uint64_t>(grid_for(s), std::max<std::uint64_t>(1, (words / 2 + 255) / 256)));
    CUDA_CHECK(cudaMemsetAsync(s.counter, 0, sizeof(unsigned long long), s.stream));
    read_sum<<<grid, 256, 0, s.stream>>>(src, words, s.counter);
    CUDA_CHECK(cudaGetLastError());
    unsigned long long got = 0;
    CUDA_CHECK(cudaMemcpyAsync(&got, s.counter, sizeof got, cudaMemcpyDeviceToHost, s.stream));
    CUDA_CHECK(cudaStreamSynchronize(s.stream));
    if (got != expect)
      throw std::runtime_error(std::string(what) + ": the kernel's checksum " + std::to_string(got) + " differs from the data's " +
                               std::to_string(expect));
    return time_events(s, repeats, [&] {
      read_sum<<<grid, 256, 0, s.stream>>>(src, words, s.counter);
      CUDA_CHECK(cudaGetLastError());
    });
  }

  std::vector<double> host_sm_read(int d, std::uint64_t words, std::uint64_t seed, int repeats) {
    Dev& s = dev(d, 1);
    std::uint64_t* h = pinned(words);
    host_fill(h, words, seed);
    std::uint64_t* mapped = nullptr;
    CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&mapped), h, 0));
    return read_kernel(s, mapped, words, host_pattern_sum(words, seed), repeats, "host_sm_read");
  }

  // Peer access from `to` to `from` (and back) on or off; returns what it enabled so it can be undone.
  static void set_peer(int from, int to, bool on) {
    for (const auto& [self, other] : {std::pair{to, from}, std::pair{from, to}}) {
      int can = 0;
      CUDA_CHECK(cudaDeviceCanAccessPeer(&can, self, other));
      if (!can) {
        if (on && self == to) throw std::runtime_error("cudaDeviceCanAccessPeer: no peer access between these GPUs");
        continue;
      }
      CUDA_CHECK(cudaSetDevice(self));
      const cudaError_t e = on ? cudaDeviceEnablePeerAccess(other, 0) : cudaDeviceDisablePeerAccess(other);
      if (e == cudaErrorPeerAccessAlreadyEnabled || e == cudaErrorPeerAccessNotEnabled) {
        (void)cudaGetLastError();  // the state wanted is there already
      } else if (e != cudaSuccess) {
        throw gpu::CudaError(e, on ? "cudaDeviceEnablePeerAccess" : "cudaDeviceDisablePeerAccess", __FILE__, __LINE__);
      }
    }
  }

  // Peer access between a pair as one measurement wants it (on or off), switched off again after it,
  // also when the measurement throws.
  struct PeerScope {
    int from, to;
    PeerScope(int f, int t, bool on) : from(f), to(t) {
      try {
        set_peer(f, t, on);
      } catch (...) {
        off();
        throw;
      }
    }
    ~PeerScope() { off(); }
    PeerScope(const PeerScope&) = delete;
    PeerScope& operator=(const PeerScope&) = delete;
    void off() const noexcept {
      try {
        set_peer(from, to, false);
      } catch (...) {
      }
    }
  };

  std::vector<double> peer_copy(bool peer, int from, int to, std::uint64_t words, std::uint64_t seed, int repeats) {
    Dev& src = dev(from, words);
    Dev& dst = dev(to, words);
    const PeerScope scope(from, to, peer);
    device_fill(src, words, seed);
    device_poison(dst, words);
    CUDA_CHECK(cudaSetDevice(to));
    CUDA_CHECK(cudaMemcpyPeerAsync(dst.buf, to, src.buf, from, words * 8, dst.stream));
    CUDA_CHECK(cudaStreamSynchronize(dst.stream));
    device_check(dst, words, seed, peer ? "peer_ce" : "staged_ce");
    CUDA_CHECK(cudaSetDevice(to));
    return time_events(dst, repeats,
                       [&] { CUDA_CHECK(cudaMemcpyPeerAsync(dst.buf, to, src.buf, from, words * 8, dst.stream)); });
  }

  std::vector<double> peer_sm_read(int from, int to, std::uint64_t words, std::uint64_t seed, int repeats) {
    Dev& src = dev(from, words);
    Dev& dst = dev(to, 1);
    const PeerScope scope(from, to, true);
    device_fill(src, words, seed);
    CUDA_CHECK(cudaSetDevice(to));
    return read_kernel(dst, src.buf, words, host_pattern_sum(words, seed), repeats, "peer_sm_read");
  }
};

}  // namespace

std::unique_ptr<LinkBackend> make_cuda_link_backend() { return std::make_unique<CudaLinkBackend>(); }

}  // namespace ceiling::probes
