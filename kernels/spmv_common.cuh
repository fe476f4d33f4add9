// What the SpMV variants share (issue 10): the registered matrix a sweep point names, x and y on
// the device, fresh random x per seed, poisoned y, and the check against the CPU reference
// (model/sparse_matrix.hpp spmv_reference, rows summed in long double): norm-wise relative error
// <= 1e-12 (values of a user's matrix may cancel; element-wise would judge the rounding of a sum
// that is near zero).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "common.cuh"
#include "gpu/gpu.hpp"
#include "model/sparse_matrix.hpp"
#include "verify.hpp"

namespace ceiling::kernels {

inline std::shared_ptr<const CsrMatrix> matrix_of(const KernelParams& params) {
  const auto it = params.find("matrix_id");
  if (it == params.end())
    throw std::invalid_argument("SpMV needs a matrix: validate --matrix FILE.mtx or --suite table2");
  return registered_matrix(static_cast<int>(it->second));
}

template <class T>
gpu::DeviceBuffer<T> upload(const std::vector<T>& host) {
  gpu::DeviceBuffer<T> d(host.size());
  if (!host.empty()) CUDA_CHECK(cudaMemcpy(d.data(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

class SpmvInstanceBase : public KernelInstance {
 public:
  explicit SpmvInstanceBase(const KernelParams& params)
      : a_(matrix_of(params)), x_(static_cast<size_t>(a_->cols)), y_(static_cast<size_t>(a_->rows)) {}
  void randomize(std::uint64_t seed) override {
    seed_ = seed;
    fill_random(x_.data(), a_->cols, seed_);
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  void poison_output() override { poison(y_.data(), y_.bytes()); }
  long long output_elements() const override { return a_->rows; }
  Verification verify() override {
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<double> out(static_cast<size_t>(a_->rows));
    CUDA_CHECK(cudaMemcpy(out.data(), y_.data(), y_.bytes(), cudaMemcpyDeviceToHost));
    std::vector<double> xh(static_cast<size_t>(a_->cols)), ref(static_cast<size_t>(a_->rows));
    for (std::int32_t j = 0; j < a_->cols; ++j) xh[static_cast<size_t>(j)] = random_value(seed_, static_cast<std::uint64_t>(j));
    spmv_reference(*a_, xh.data(), ref.data());
    return check_normwise(out, [&](long long i) { return static_cast<long double>(ref[static_cast<size_t>(i)]); }, 1e-12);
  }

 protected:
  std::shared_ptr<const CsrMatrix> a_;
  gpu::DeviceBuffer<double> x_, y_;
  std::uint64_t seed_ = 1;
};

// Block-wide sum of one value per thread (blockDim.x = Threads, a multiple of 32); thread 0 gets it.
template <int Threads>
__device__ __forceinline__ double block_sum(double v) {
  __shared__ double warp_sums[Threads / 32];
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = v;
  __syncthreads();
  double s = 0;
  if (threadIdx.x == 0) {
#pragma unroll
    for (int w = 0; w < Threads / 32; ++w) s += warp_sums[w];
  }
  return s;
}

// A long row's piece is done: write y when the row has one piece; else store the partial sum and
// let the last piece to arrive add all of them in slot order (deterministic) and reset the counter.
// Called by one thread.
__device__ __forceinline__ void finish_piece(double s, int row, int first_slot, int pieces, int piece,
                                             double* __restrict__ partial, unsigned* __restrict__ counter,
                                             int long_index, double* __restrict__ y) {
  if (pieces == 1) {
    y[row] = s;
    return;
  }
  partial[first_slot + piece] = s;
  __threadfence();
  const unsigned arrived = atomicAdd(&counter[long_index], 1u);
  if (arrived == static_cast<unsigned>(pieces - 1)) {
    __threadfence();
    double t = 0;
    for (int q = 0; q < pieces; ++q) t += __ldcg(&partial[first_slot + q]);
    y[row] = t;
    counter[long_index] = 0;  // ready for the next launch (kernel boundaries order it)
  }
}

}  // namespace ceiling::kernels
