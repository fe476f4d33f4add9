// GEMM C = A B (column-major, A m x k, B k x n, C m x n, beta = 0: C is written, not read) for the
// compute-bound side of validate (issue 14). Inputs are a hash of (seed, matrix, index) in [-1, 1]
// (never 0) converted to the element type, on the device and, for the sampled check, on the host:
// the CPU reference needs no copy of A or B. The check: no output element left NaN (the poison),
// and 256 sampled elements within the precision's tolerance of the exact dot product.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/gpu.hpp"
#include "registry.hpp"

namespace ceiling::kernels::gemm {

__host__ __device__ inline double hash_value(std::uint64_t seed, int matrix, std::uint64_t index) {
  std::uint64_t z = seed ^ (static_cast<std::uint64_t>(matrix) << 58) ^ (index * 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  const double u = static_cast<double>(z >> 11) * 0x1.0p-53 * 2.0 - 1.0;
  return std::fabs(u) < 1.0 / 1024 ? 0.5 : u;  // never zero
}

template <class T> __host__ __device__ inline T from_double(double v);
template <> __host__ __device__ inline double from_double<double>(double v) { return v; }
template <> __host__ __device__ inline float from_double<float>(double v) { return static_cast<float>(v); }
template <> __host__ __device__ inline __half from_double<__half>(double v) { return __double2half(v); }
template <> __host__ __device__ inline __nv_bfloat16 from_double<__nv_bfloat16>(double v) { return __double2bfloat16(v); }

template <class T> __host__ __device__ inline double to_double(T v);
template <> __host__ __device__ inline double to_double<double>(double v) { return v; }
template <> __host__ __device__ inline double to_double<float>(float v) { return v; }
template <> __host__ __device__ inline double to_double<__half>(__half v) { return __half2float(v); }
template <> __host__ __device__ inline double to_double<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }

template <class T>
__global__ void fill_kernel(T* p, std::uint64_t count, std::uint64_t seed, int matrix) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    p[i] = from_double<T>(hash_value(seed, matrix, i));
}

template <class T>
__global__ void count_nan_kernel(const T* p, std::uint64_t count, unsigned long long* nan_count) {
  unsigned long long local = 0;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    local += isnan(to_double<T>(p[i])) ? 1 : 0;
  if (local) atomicAdd(nan_count, local);
}

// Per-entry tolerance: |got - ref| <= rel_sum * sum_l |a b| + rel_out * |ref|.
struct Tolerance {
  double rel_sum, rel_out;
};

// TA, TB: input element types; TC: output; `tol`: the precision's tolerance (see the variants).
template <class TA, class TC>
class GemmInstanceBase : public KernelInstance {
 public:
  GemmInstanceBase(const KernelParams& params, Tolerance tol)
      : m_(static_cast<long long>(params.at("m"))), n_(static_cast<long long>(params.at("n"))),
        k_(static_cast<long long>(params.at("k"))), tol_(tol), a_(static_cast<size_t>(m_ * k_)),
        b_(static_cast<size_t>(k_ * n_)), c_(static_cast<size_t>(m_ * n_)), nan_(1) {}

  void randomize(std::uint64_t seed) override {
    seed_ = seed;
    fill_kernel<TA><<<1024, 256>>>(a_.data(), a_.size(), seed, 0);
    CUDA_CHECK_LAUNCH();
    fill_kernel<TA><<<1024, 256>>>(b_.data(), b_.size(), seed, 1);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  void poison_output() override { CUDA_CHECK(cudaMemset(c_.data(), 0xFF, c_.bytes())); }  // all ones: NaN
  long long output_elements() const override { return m_ * n_; }

  Verification verify() override {
    CUDA_CHECK(cudaDeviceSynchronize());
    Verification v;
    v.tolerance = tol_.rel_sum;
    CUDA_CHECK(cudaMemset(nan_.data(), 0, sizeof(unsigned long long)));
    count_nan_kernel<TC><<<1024, 256>>>(c_.data(), c_.size(), nan_.data());
    CUDA_CHECK_LAUNCH();
    unsigned long long nans = 0;
    CUDA_CHECK(cudaMemcpy(&nans, nan_.data(), sizeof nans, cudaMemcpyDeviceToHost));
    v.unwritten = static_cast<long long>(nans);
    // 256 sampled entries against the exact dot product of the same (converted) inputs.
    std::uint64_t z = seed_ ^ 0xC0FFEEull;
    double worst = 0;
    for (int s = 0; s < 256; ++s) {
      z = z * 6364136223846793005ull + 1442695040888963407ull;
      const long long i = static_cast<long long>((z >> 33) % static_cast<std::uint64_t>(m_));
      z = z * 6364136223846793005ull + 1442695040888963407ull;
      const long long j = static_cast<long long>((z >> 33) % static_cast<std::uint64_t>(n_));
      long double ref = 0, mag = 0;
      for (long long l = 0; l < k_; ++l) {
        const double a = to_double<TA>(from_double<TA>(hash_value(seed_, 0, static_cast<std::uint64_t>(i + l * m_))));
        const double b = to_double<TA>(from_double<TA>(hash_value(seed_, 1, static_cast<std::uint64_t>(l + j * k_))));
        ref += static_cast<long double>(a) * b;
        mag += std::fabs(static_cast<long double>(a) * b);
      }
      TC got_t;
      CUDA_CHECK(cudaMemcpy(&got_t, c_.data() + i + j * m_, sizeof(TC), cudaMemcpyDeviceToHost));
      const double got = to_double<TC>(got_t);
      const double err = std::fabs(got - static_cast<double>(ref));
      const double allowed = tol_.rel_sum * static_cast<double>(mag) + tol_.rel_out * std::fabs(static_cast<double>(ref));
      const double rel = mag > 0 ? err / static_cast<double>(mag) : err;
      worst = std::max(worst, rel);
      if (!(err <= allowed)) {
        if (!v.bad++)
          v.message = "C(" + std::to_string(i) + "," + std::to_string(j) + ") = " + std::to_string(got) +
                      ", CPU reference " + std::to_string(static_cast<double>(ref));
      }
    }
    v.error = worst;
    v.ok = v.bad == 0 && v.unwritten == 0;
    if (v.unwritten && v.message.empty()) v.message = std::to_string(v.unwritten) + " output elements left unwritten (NaN)";
    return v;
  }

 protected:
  long long m_, n_, k_;
  Tolerance tol_;
  std::uint64_t seed_ = 0;
  gpu::DeviceBuffer<TA> a_, b_;
  gpu::DeviceBuffer<TC> c_;
  gpu::DeviceBuffer<unsigned long long> nan_;
};

// The kind's model counts C read and written (C += A B); these variants write C only (beta = 0).
inline KernelModel without_c_read(const KernelParams& p, KernelModel k) {
  const double c_bytes = p.at("m") * p.at("n") * bytes_per_value(k.precision);
  k.read_bytes -= c_bytes;
  k.traffic_bytes -= c_bytes;
  return k;
}

}  // namespace ceiling::kernels::gemm
