// GEMM through cuBLAS (cublasGemmEx, default algorithm, default math mode): FP64 (DMMA on sm_90),
// TF32 (CUBLAS_COMPUTE_32F_FAST_TF32), BF16 and FP16 (FP32 accumulation, D in the input type) on
// the tensor cores, held against the model's compute bound like every other kernel (issue 14;
// the Hopper paper's "tensor cores remain advantageous" side). libcublas is loaded at run time, as
// cuSPARSE is (kernels/spmv_cusparse.cu): without it the variants say so instead of failing.
// FP8 needs cuBLASLt (scale factors, TN layout): not here yet.
#include <cublas_v2.h>
#include <dlfcn.h>

#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "gemm_common.cuh"

namespace ceiling::kernels {
namespace {

struct Cublas {
  decltype(&::cublasCreate_v2) create = nullptr;
  decltype(&::cublasDestroy_v2) destroy = nullptr;
  decltype(&::cublasSetStream_v2) set_stream = nullptr;
  // cublasGemmEx is overloaded in C++ (a cudaDataType compute type); the C entry point's type:
  using GemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                    const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                                    cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
  GemmEx gemm_ex = nullptr;
  decltype(&::cublasGetStatusString) status_string = nullptr;
  std::string error;
};

const Cublas& cublas() {
  static Cublas lib;
  static std::once_flag once;
  std::call_once(once, [] {
    void* h = nullptr;
    std::string tried;
    for (const char* name : {"libcublas.so." CEILING_CUBLAS_SOVERSION, "libcublas.so",
                             "/usr/local/cuda/lib64/libcublas.so." CEILING_CUBLAS_SOVERSION}) {
      h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (h) break;
      tried += std::string(tried.empty() ? "" : ", ") + name;
    }
    if (!h) {
      lib.error = "cuBLAS not found (tried " + tried + "): install the CUDA toolkit's libcublas or set LD_LIBRARY_PATH";
      return;
    }
    auto get = [&](auto& fn, const char* sym) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, sym));
      if (!fn && lib.error.empty()) lib.error = std::string("cuBLAS lacks ") + sym;
    };
    get(lib.create, "cublasCreate_v2");
    get(lib.destroy, "cublasDestroy_v2");
    get(lib.set_stream, "cublasSetStream_v2");
    get(lib.gemm_ex, "cublasGemmEx");
    get(lib.status_string, "cublasGetStatusString");
  });
  return lib;
}

void check(cublasStatus_t st, const char* what) {
  if (st != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuBLAS ") + what + ": " +
                             (cublas().status_string ? cublas().status_string(st) : std::to_string(static_cast<int>(st))));
}

template <class T>
struct Types;
template <>
struct Types<double> {
  static constexpr cudaDataType_t data = CUDA_R_64F;
  static constexpr cublasComputeType_t compute = CUBLAS_COMPUTE_64F;
  using Scalar = double;
};
template <>
struct Types<float> {  // TF32 tensor cores
  static constexpr cudaDataType_t data = CUDA_R_32F;
  static constexpr cublasComputeType_t compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  using Scalar = float;
};
template <>
struct Types<__nv_bfloat16> {
  static constexpr cudaDataType_t data = CUDA_R_16BF;
  static constexpr cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  using Scalar = float;
};
template <>
struct Types<__half> {
  static constexpr cudaDataType_t data = CUDA_R_16F;
  static constexpr cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  using Scalar = float;
};

template <class T>
class CublasGemm final : public gemm::GemmInstanceBase<T, T> {
 public:
  CublasGemm(const KernelParams& p, gemm::Tolerance tol) : gemm::GemmInstanceBase<T, T>(p, tol) {
    const Cublas& cb = cublas();
    if (!cb.error.empty()) throw std::runtime_error(cb.error);
    check(cb.create(&handle_), "create");
  }
  ~CublasGemm() override {
    if (handle_) cublas().destroy(handle_);
  }
  void launch(Stream s) override {
    const Cublas& cb = cublas();
    check(cb.set_stream(handle_, s), "set stream");
    const int m = static_cast<int>(this->m_), n = static_cast<int>(this->n_), k = static_cast<int>(this->k_);
    // beta = 0: C is written, not read (the poisoned C must not leak into the result).
    check(cb.gemm_ex(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha_, this->a_.data(), Types<T>::data, m,
                     this->b_.data(), Types<T>::data, k, &beta_, this->c_.data(), Types<T>::data, m, Types<T>::compute,
                     CUBLAS_GEMM_DEFAULT),
          "GemmEx");
  }

 private:
  cublasHandle_t handle_ = nullptr;
  typename Types<T>::Scalar alpha_ = 1, beta_ = 0;
};

template <class T>
KernelVariant cublas_variant(Precision p, const char* what, gemm::Tolerance tol) {
  KernelVariant v;
  v.kind = "gemm";
  v.implementation = "cublas";
  v.unit = ComputeUnit::tensor_core;
  v.precision = p;
  v.description = std::string("cuBLAS cublasGemmEx ") + what + ", column-major NN, beta = 0, default algorithm";
  v.create = [tol](const KernelParams& params, const RunContext&) -> std::unique_ptr<KernelInstance> {
    return std::make_unique<CublasGemm<T>>(params, tol);
  };
  v.adjust_model = gemm::without_c_read;
  v.unavailable = [] { return cublas().error; };
  return v;  // no SASS expectation: the kernels are cuBLAS's
}

// Tolerances: FP64 1e-12 of sum |a b|; TF32 inputs rounded to 10 fraction bits inside cuBLAS
// (2^-10 per product); BF16/FP16 inputs exact, FP32 sums (k 2^-24), D rounded to the type.
const Registrar gemm_fp64{cublas_variant<double>(Precision::fp64, "FP64 (CUBLAS_COMPUTE_64F)", {1e-12, 0})};
const Registrar gemm_tf32{cublas_variant<float>(Precision::tf32, "FP32 data on TF32 tensor cores", {2e-3, 1e-6})};
const Registrar gemm_bf16{cublas_variant<__nv_bfloat16>(Precision::bf16, "BF16 in and out, FP32 accumulation", {1e-3, 0x1.0p-8})};
const Registrar gemm_fp16{cublas_variant<__half>(Precision::fp16, "FP16 in and out, FP32 accumulation", {1e-3, 0x1.0p-10})};

}  // namespace
}  // namespace ceiling::kernels
