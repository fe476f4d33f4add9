// GEMM C = A B in FP64 on the CUDA cores (DFMA): the CUDA-core side of the FP64 TC/CC pair in the
// compute-bound regime (Eq. 22 past the ridge). A classic shared-memory tiling: 64 x 64 tiles of
// C per 256-thread block, k in steps of 16, 4 x 4 outputs per thread in registers. Sizes are
// rounded to multiples of 64. Not tuned to the CUDA cores' peak yet (a slow kernel here shows as a
// TC/CC speedup above the bound: the kernel's defect, see docs/NOTES.md).
#include <memory>

#include "gemm_common.cuh"

namespace ceiling::kernels {
namespace {

constexpr int kBM = 64, kBN = 64, kBK = 16, kTM = 4, kTN = 4;

__global__ void __launch_bounds__(256) dgemm_cuda_core(int m, int n, int k, const double* __restrict__ A,
                                                       const double* __restrict__ B, double* __restrict__ C) {
  __shared__ double As[kBK][kBM];
  __shared__ double Bs[kBK][kBN + 1];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const long long row0 = static_cast<long long>(blockIdx.x) * kBM, col0 = static_cast<long long>(blockIdx.y) * kBN;
  double acc[kTM][kTN];
#pragma unroll
  for (int i = 0; i < kTM; ++i)
#pragma unroll
    for (int j = 0; j < kTN; ++j) acc[i][j] = 0;
  for (int kk = 0; kk < k; kk += kBK) {
    // A tile (64 x 16, column-major in memory: consecutive threads read consecutive rows).
#pragma unroll
    for (int e = threadIdx.x; e < kBM * kBK; e += 256) {
      const int i = e % kBM, l = e / kBM;
      As[l][i] = A[(row0 + i) + static_cast<long long>(kk + l) * m];
    }
    // B tile (16 x 64): consecutive threads read consecutive k of one column.
#pragma unroll
    for (int e = threadIdx.x; e < kBK * kBN; e += 256) {
      const int l = e % kBK, j = e / kBK;
      Bs[l][j] = B[(kk + l) + (col0 + j) * static_cast<long long>(k)];
    }
    __syncthreads();
#pragma unroll
    for (int l = 0; l < kBK; ++l) {
      double a[kTM], b[kTN];
#pragma unroll
      for (int i = 0; i < kTM; ++i) a[i] = As[l][tx + 16 * i];
#pragma unroll
      for (int j = 0; j < kTN; ++j) b[j] = Bs[l][ty + 16 * j];
#pragma unroll
      for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTN; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kTM; ++i)
#pragma unroll
    for (int j = 0; j < kTN; ++j) C[(row0 + tx + 16 * i) + (col0 + ty + 16 * j) * static_cast<long long>(m)] = acc[i][j];  // consecutive tx: consecutive rows
}

class CudaCoreGemm final : public gemm::GemmInstanceBase<double, double> {
 public:
  explicit CudaCoreGemm(const KernelParams& p) : GemmInstanceBase(p, {1e-12, 0}) {}
  void launch(Stream s) override {
    const dim3 grid(static_cast<unsigned>(m_ / kBM), static_cast<unsigned>(n_ / kBN));
    dgemm_cuda_core<<<grid, 256, 0, s>>>(static_cast<int>(m_), static_cast<int>(n_), static_cast<int>(k_), a_.data(),
                                          b_.data(), c_.data());
  }
};

KernelVariant cuda_core_variant() {
  KernelVariant v;
  v.kind = "gemm";
  v.unit = ComputeUnit::cuda_core;
  v.precision = Precision::fp64;
  v.description = "FP64 DFMA, 64x64 tiles of C per 256-thread block, k steps of 16, 4x4 outputs per thread";
  v.round = [](KernelParams p) {
    for (const char* d : {"m", "n", "k"}) p[d] = std::max(64.0, std::round(p.at(d) / 64) * 64);
    return p;
  };
  v.create = [](const KernelParams& params, const RunContext&) -> std::unique_ptr<KernelInstance> {
    return std::make_unique<CudaCoreGemm>(params);
  };
  v.adjust_model = gemm::without_c_read;
  v.sass = {{"dgemm_cuda_core", "DFMA", "DMMA"}};
  return v;
}

const Registrar gemm_cuda_core{cuda_core_variant()};

}  // namespace
}  // namespace ceiling::kernels
