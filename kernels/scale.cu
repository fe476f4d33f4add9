// SCALE a = q * b (STREAM scale, GPGPU'25 §3.1): W = n, Q = 2 n D (scale_model).
// CUDA-core: one 16-byte vector per thread, the grid covering the whole array (the layout the
// dram-bandwidth probe found fastest for scale on an H200); both variants use streaming
// (evict-first) loads/stores when the working set exceeds half the L2, plain ones inside it.
// Tensor-core: A = B (qI) with FP64 mma.m8n8k4 (the paper's Figure 5): each warp views 64
// consecutive values as two 8x4 tiles, multiplies each by [qI | 0] (4x8) and writes the result
// back to the same positions; only 1/8 of the tensor-core work is useful.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "common.cuh"
#include "gpu/gpu.hpp"

namespace ceiling::kernels {
namespace {

constexpr int kThreads = 256;

template <bool Streaming, class V>
__device__ __forceinline__ V load16(const V* p) {
  if constexpr (Streaming) return __ldcs(p);
  else return *p;
}
template <bool Streaming, class V>
__device__ __forceinline__ void store16(V* p, const V& v) {
  if constexpr (Streaming) __stcs(p, v);
  else *p = v;
}

template <class T> struct Vec16;
template <> struct Vec16<double> {
  using type = double2;
  static constexpr int lanes = 2;
  __device__ static type mul(type v, double q) { return {v.x * q, v.y * q}; }
};
template <> struct Vec16<float> {
  using type = float4;
  static constexpr int lanes = 4;
  __device__ static type mul(type v, float q) { return {v.x * q, v.y * q, v.z * q, v.w * q}; }
};

template <class T, bool Streaming>
__global__ void __launch_bounds__(kThreads) scale_cuda_core(const T* __restrict__ b, T* __restrict__ a,
                                                            T q, long long n) {
  using V = typename Vec16<T>::type;
  const long long nv = n / Vec16<T>::lanes;
  const V* __restrict__ bv = reinterpret_cast<const V*>(b);
  V* __restrict__ av = reinterpret_cast<V*>(a);
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < nv) store16<Streaming>(av + i, Vec16<T>::mul(load16<Streaming>(bv + i), q));
  const long long tail = nv * Vec16<T>::lanes;
  if (i < n - tail) a[tail + i] = q * b[tail + i];
}

// One warp scales 64 values (32 double2) with two DMMAs. Lane l = 4g+t holds values 8g+2t and
// 8g+2t+1; mma #1 takes the first as A[g][t], mma #2 the second. With B = [qI | 0] lanes t < 2
// receive q * values 8g+4t .. 8g+4t+3; lanes t >= 2 (whose D columns are zero) take the upper
// pair from lane l-2, so that every lane stores one double2: a full 512-byte coalesced store.
__device__ __forceinline__ void scale_tile_tc(const double2 v, const double bq, const int lane,
                                              double2& out, int& slot) {
  const int g = lane >> 2, t = lane & 3;
  double d0, d1, e0, e1;
  mma_m8n8k4_fp64(d0, d1, v.x, bq, 0.0, 0.0);
  mma_m8n8k4_fp64(e0, e1, v.y, bq, 0.0, 0.0);
  const double s0 = __shfl_sync(0xffffffffu, d1, (lane - 2) & 31);
  const double s1 = __shfl_sync(0xffffffffu, e1, (lane - 2) & 31);
  if (t < 2) {
    out = make_double2(d0, e0);
    slot = 4 * g + 2 * t;          // values 8g+4t, 8g+4t+1
  } else {
    out = make_double2(s0, s1);
    slot = 4 * g + 2 * (t - 2) + 1;  // values 8g+4(t-2)+2, +3
  }
}

template <bool Streaming>
__global__ void __launch_bounds__(kThreads) scale_tensor_core_fp64(const double* __restrict__ b,
                                                                   double* __restrict__ a, double q,
                                                                   long long n) {
  const int lane = threadIdx.x & 31;
  const int g = lane >> 2, t = lane & 3;
  const double bq = (t == g) ? q : 0.0;  // B[t][g] of [qI | 0]
  const long long tiles = n / 64;        // n % 64 == 0 (size_for rounds)
  const long long w = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const double2* __restrict__ bv = reinterpret_cast<const double2*>(b);
  double2* __restrict__ av = reinterpret_cast<double2*>(a);
  if (w < tiles) {  // warp-uniform: the mma needs the whole warp
    double2 out;
    int slot;
    scale_tile_tc(load16<Streaming>(bv + w * 32 + lane), bq, lane, out, slot);
    store16<Streaming>(av + w * 32 + slot, out);
  }
}

template <class T>
class ScaleInstance final : public KernelInstance {
 public:
  ScaleInstance(long long n, ComputeUnit unit) : n_(n), unit_(unit), b_(n), a_(n) {
    long long threads_needed;
    if (unit_ == ComputeUnit::tensor_core) {
      if (n % 64 != 0) throw std::invalid_argument("tensor-core SCALE needs n % 64 == 0, got " + std::to_string(n));
      threads_needed = n / 64 * 32;  // one warp per 64-value tile
    } else {
      threads_needed = std::max<long long>(n / Vec16<T>::lanes, n % Vec16<T>::lanes);
    }
    grid_ = static_cast<int>(std::max<long long>(1, (threads_needed + kThreads - 1) / kThreads));
    int dev = 0, l2 = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    streaming_ = 2.0 * static_cast<double>(n) * sizeof(T) > 0.5 * l2;  // same split as validate
  }
  void randomize(std::uint64_t seed) override {
    seed_ = seed;
    q_ = static_cast<T>(1.0 + 0.5 * std::fabs(random_value(seed ^ 0x5CA1Eull, 0)));  // q in (1.1, 1.5)
    fill_random(b_.data(), n_, seed_);
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  void poison_output() override { poison(a_.data(), a_.bytes()); }
  void launch(cudaStream_t s) override {
    if (unit_ == ComputeUnit::tensor_core) {
      if constexpr (std::is_same_v<T, double>) {
        if (streaming_)
          scale_tensor_core_fp64<true><<<grid_, kThreads, 0, s>>>(b_.data(), a_.data(), q_, n_);
        else
          scale_tensor_core_fp64<false><<<grid_, kThreads, 0, s>>>(b_.data(), a_.data(), q_, n_);
      }
    } else if (streaming_) {
      scale_cuda_core<T, true><<<grid_, kThreads, 0, s>>>(b_.data(), a_.data(), q_, n_);
    } else {
      scale_cuda_core<T, false><<<grid_, kThreads, 0, s>>>(b_.data(), a_.data(), q_, n_);
    }
    CUDA_CHECK_LAUNCH();
  }
  Verification verify() override {
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<T> out(static_cast<size_t>(n_));
    CUDA_CHECK(cudaMemcpy(out.data(), a_.data(), a_.bytes(), cudaMemcpyDeviceToHost));
    Verification v;
    // One rounding of q*b on either unit (tensor-core adds exact zeros): 1 ulp allowed.
    v.tolerance = std::is_same_v<T, double> ? 0x1.0p-52 : 0x1.0p-23;
    for (long long i = 0; i < n_; ++i) {
      const T ref = q_ * static_cast<T>(random_value(seed_, static_cast<std::uint64_t>(i)));
      const T got = out[static_cast<size_t>(i)];
      if (std::isnan(got)) {
        ++v.unwritten;
        ++v.bad;
        continue;
      }
      const double rel = std::fabs(static_cast<double>(got) - ref) / std::fabs(static_cast<double>(ref));
      if (rel > v.error) v.error = rel;
      if (!(rel <= v.tolerance)) ++v.bad;
    }
    v.ok = v.bad == 0;
    v.message = v.ok ? "all " + std::to_string(n_) + " values match q*b"
                     : std::to_string(v.bad) + " of " + std::to_string(n_) + " values wrong (" +
                           std::to_string(v.unwritten) + " unwritten), max relative error " +
                           std::to_string(v.error);
    return v;
  }

 private:
  long long n_;
  ComputeUnit unit_;
  gpu::DeviceBuffer<T> b_, a_;
  int grid_ = 1;
  bool streaming_ = false;
  std::uint64_t seed_ = 1;
  T q_ = 1;
};

template <class T>
KernelVariant scale_variant(ComputeUnit unit) {
  constexpr Precision p = std::is_same_v<T, double> ? Precision::fp64 : Precision::fp32;
  KernelVariant v;
  v.kernel = "scale";
  v.unit = unit;
  v.precision = p;
  const bool tc = unit == ComputeUnit::tensor_core;
  v.description = tc ? "A = B (qI), FP64 mma.m8n8k4, one warp per 64-value tile, 16-byte loads/stores"
                     : "a = q b, one 16-byte vector per thread over the whole array";
  // GPGPU'25 §5.1: 1/max(m,n) of the tile's work is useful (1/8 on m8n8k4), from the model.
  v.tensor_core_fraction = tc ? scale_model(64, p).tensor_core_fraction : 1.0;
  // W, Q and the working set (b and a, distinct arrays) are the model's.
  v.model = [p](const ProblemSize& s) { return scale_model(static_cast<double>(s.n), p); };
  // Multiples of 64 values for every SCALE variant, so that CUDA and tensor cores share sizes.
  v.size_for_count = [](long long count) {
    ProblemSize s;
    s.n = std::max<long long>(64, count / 64 * 64);
    return s;
  };
  v.size_for_bytes = [p, f = v.size_for_count](double bytes) {
    return f(static_cast<long long>(bytes / (2.0 * bytes_per_value(p))));
  };
  v.create = [unit](const ProblemSize& s) -> std::unique_ptr<KernelInstance> {
    return std::make_unique<ScaleInstance<T>>(s.n, unit);
  };
  return v;
}

const Registrar scale_fp64_cc{scale_variant<double>(ComputeUnit::cuda_core)};
const Registrar scale_fp64_tc{scale_variant<double>(ComputeUnit::tensor_core)};
const Registrar scale_fp32_cc{scale_variant<float>(ComputeUnit::cuda_core)};

}  // namespace
}  // namespace ceiling::kernels
