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
#include "verify.hpp"

namespace ceiling::kernels {
namespace {

constexpr int kThreads = 256;
constexpr const char* kLdg128 = "LDG\\.E[A-Z0-9.]*\\.128";  // 16-byte global loads

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
  if (i < nv) store_stream<Streaming>(av + i, Vec16<T>::mul(load_stream<Streaming>(bv + i), q));
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
    scale_tile_tc(load_stream<Streaming>(bv + w * 32 + lane), bq, lane, out, slot);
    store_stream<Streaming>(av + w * 32 + slot, out);
  }
}

template <class T>
class ScaleInstance final : public KernelInstance {
 public:
  ScaleInstance(long long n, ComputeUnit unit, const RunContext& ctx) : n_(n), unit_(unit), b_(n), a_(n) {
    long long threads_needed;
    if (unit_ == ComputeUnit::tensor_core) {
      if (n % 64 != 0) throw std::invalid_argument("tensor-core SCALE needs n % 64 == 0, got " + std::to_string(n));
      threads_needed = n / 64 * 32;  // one warp per 64-value tile
    } else {
      threads_needed = std::max<long long>(n / Vec16<T>::lanes, n % Vec16<T>::lanes);
    }
    grid_ = static_cast<int>(std::max<long long>(1, (threads_needed + kThreads - 1) / kThreads));
    streaming_ = !ctx.in_l2;  // the sweep's split: evict-first hints only for cold, out-of-L2 sizes
  }
  long long output_elements() const override { return n_; }
  void randomize(std::uint64_t seed) override {
    seed_ = seed;
    q_ = static_cast<T>(1.0 + 0.5 * std::fabs(random_value(seed ^ 0x5CA1Eull, 0)));  // q in (1.1, 1.5)
    fill_random(b_.data(), n_, seed_);
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  void poison_output() override { poison(a_.data(), a_.bytes()); }
  void launch(Stream s) override {
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
    // One rounding of q*b on either unit (tensor-core adds exact zeros): 1 ulp allowed.
    const double tolerance = std::is_same_v<T, double> ? 0x1.0p-52 : 0x1.0p-23;
    return check_elementwise(
        out, [&](long long i) { return q_ * static_cast<T>(random_value(seed_, static_cast<std::uint64_t>(i))); },
        tolerance, "q*b");
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
  v.kind = "scale";
  v.unit = unit;
  v.precision = p;
  const bool tc = unit == ComputeUnit::tensor_core;
  v.description = tc ? "A = B (qI), FP64 mma.m8n8k4, one warp per 64-value tile, 16-byte loads/stores"
                     : "a = q b, one 16-byte vector per thread over the whole array";
  // GPGPU'25 §5.1: 1/max(m,n) of the tile's work is useful (1/8 on m8n8k4), from the model.
  v.tensor_core_fraction = tc ? scale_tensor_core_fraction(p) : 1.0;
  // Multiples of 64 values for every SCALE variant, so that CUDA and tensor cores share sizes.
  v.round = [](KernelParams params) {
    params["n"] = std::max(64.0, std::floor(params.at("n") / 64) * 64);
    return params;
  };
  v.create = [unit](const KernelParams& params, const RunContext& ctx) -> std::unique_ptr<KernelInstance> {
    return std::make_unique<ScaleInstance<T>>(static_cast<long long>(params.at("n")), unit, ctx);
  };
  // 16-byte global accesses everywhere; DMMA only on the tensor-core side.
  if (tc)
    v.sass = {{"scale_tensor_core_fp64", "DMMA", ""}, {"scale_tensor_core_fp64", kLdg128, ""}};
  else
    v.sass = {{std::is_same_v<T, double> ? "scale_cuda_core<double" : "scale_cuda_core<float", kLdg128, "DMMA"}};
  return v;
}

const Registrar scale_fp64_cc{scale_variant<double>(ComputeUnit::cuda_core)};
const Registrar scale_fp64_tc{scale_variant<double>(ComputeUnit::tensor_core)};
const Registrar scale_fp32_cc{scale_variant<float>(ComputeUnit::cuda_core)};

}  // namespace
}  // namespace ceiling::kernels
