// FP8 (E4M3) GEMM through cuBLASLt (cublasLtMatmul): A and B in E4M3, FP32 accumulation, D in
// BF16, the layout FP8 requires (TN: A stored k x m, "transposed"; B k x n; D m x n, column-major),
// scale factors left at their default 1 (no amax), beta = 0. Two variants:
//  - "cublaslt": the default matmul (CUBLASLT_MATMUL_DESC_FAST_ACCUM 0: cuBLASLt promotes the
//    tensor cores' narrow FP8 running sum into FP32 at intervals: the numerics probe measured the
//    FP8 wgmma running sum at 13 fraction bits, truncated);
//  - "cublaslt-fast": FAST_ACCUM 1 (the running sum stays in the tensor core: the rate
//    Transformer Engine uses for forward passes).
// Held against the model's compute bound with the measured wgmma FP8 ceiling like the other GEMMs
// (issue 14). libcublasLt is loaded at run time, as cuBLAS is (kernels/gemm_cublas.cu).
#include <cublasLt.h>
#include <cuda_fp8.h>
#include <dlfcn.h>

#include <cmath>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "gemm_common.cuh"

namespace ceiling::kernels::gemm {
template <> __host__ __device__ inline __nv_fp8_e4m3 from_double<__nv_fp8_e4m3>(double v) {
  return __nv_fp8_e4m3(static_cast<float>(v));  // round to nearest, saturating to +-448
}
template <> __host__ __device__ inline double to_double<__nv_fp8_e4m3>(__nv_fp8_e4m3 v) {
  return static_cast<float>(v);
}
}  // namespace ceiling::kernels::gemm

namespace ceiling::kernels {
namespace {

struct Lt {
  decltype(&::cublasLtCreate) create = nullptr;
  decltype(&::cublasLtDestroy) destroy = nullptr;
  decltype(&::cublasLtMatmulDescCreate) desc_create = nullptr;
  decltype(&::cublasLtMatmulDescDestroy) desc_destroy = nullptr;
  decltype(&::cublasLtMatmulDescSetAttribute) desc_set = nullptr;
  decltype(&::cublasLtMatrixLayoutCreate) layout_create = nullptr;
  decltype(&::cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
  decltype(&::cublasLtMatmulPreferenceCreate) pref_create = nullptr;
  decltype(&::cublasLtMatmulPreferenceDestroy) pref_destroy = nullptr;
  decltype(&::cublasLtMatmulPreferenceSetAttribute) pref_set = nullptr;
  decltype(&::cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
  decltype(&::cublasLtMatmul) matmul = nullptr;
  decltype(&::cublasLtGetStatusString) status_string = nullptr;
  std::string error;
};

const Lt& lt() {
  static Lt lib;
  static std::once_flag once;
  std::call_once(once, [] {
    void* h = nullptr;
    std::string tried;
    for (const char* name : {"libcublasLt.so." CEILING_CUBLAS_SOVERSION, "libcublasLt.so",
                             "/usr/local/cuda/lib64/libcublasLt.so." CEILING_CUBLAS_SOVERSION}) {
      h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (h) break;
      tried += std::string(tried.empty() ? "" : ", ") + name;
    }
    if (!h) {
      lib.error = "cuBLASLt not found (tried " + tried + "): install the CUDA toolkit's libcublasLt or set LD_LIBRARY_PATH";
      return;
    }
    auto get = [&](auto& fn, const char* sym) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, sym));
      if (!fn && lib.error.empty()) lib.error = std::string("cuBLASLt lacks ") + sym;
    };
    get(lib.create, "cublasLtCreate");
    get(lib.destroy, "cublasLtDestroy");
    get(lib.desc_create, "cublasLtMatmulDescCreate");
    get(lib.desc_destroy, "cublasLtMatmulDescDestroy");
    get(lib.desc_set, "cublasLtMatmulDescSetAttribute");
    get(lib.layout_create, "cublasLtMatrixLayoutCreate");
    get(lib.layout_destroy, "cublasLtMatrixLayoutDestroy");
    get(lib.pref_create, "cublasLtMatmulPreferenceCreate");
    get(lib.pref_destroy, "cublasLtMatmulPreferenceDestroy");
    get(lib.pref_set, "cublasLtMatmulPreferenceSetAttribute");
    get(lib.heuristic, "cublasLtMatmulAlgoGetHeuristic");
    get(lib.matmul, "cublasLtMatmul");
    get(lib.status_string, "cublasLtGetStatusString");
  });
  return lib;
}

void check(cublasStatus_t st, const char* what) {
  if (st != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuBLASLt ") + what + ": " +
                             (lt().status_string ? lt().status_string(st) : std::to_string(static_cast<int>(st))));
}

using E4M3 = __nv_fp8_e4m3;

// A stored k x m (column-major, leading dimension k): entry (i, l) of the logical A at l + i k,
// holding the same hash value the base class's CPU reference reads for A(i, l).
__global__ void fill_a_transposed(E4M3* p, long long m, long long k, std::uint64_t seed) {
  const std::uint64_t count = static_cast<std::uint64_t>(m) * k;
  for (std::uint64_t q = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; q < count;
       q += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t i = q / k, l = q % k;
    p[q] = gemm::from_double<E4M3>(gemm::hash_value(seed, 0, i + l * m));
  }
}

class LtFp8Gemm final : public gemm::GemmInstanceBase<E4M3, __nv_bfloat16> {
 public:
  LtFp8Gemm(const KernelParams& p, gemm::Tolerance tol, bool fast)
      : gemm::GemmInstanceBase<E4M3, __nv_bfloat16>(p, tol), workspace_(kWorkspace) {
    const Lt& L = lt();
    if (!L.error.empty()) throw std::runtime_error(L.error);
    if (m_ % 16 || n_ % 16 || k_ % 16)
      throw std::invalid_argument("cuBLASLt FP8 needs m, n and k multiples of 16 (got " + std::to_string(m_) + "x" +
                                  std::to_string(n_) + "x" + std::to_string(k_) + ")");
    check(L.create(&handle_), "create");
    check(L.desc_create(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F), "matmul desc");
    const cublasOperation_t opT = CUBLAS_OP_T, opN = CUBLAS_OP_N;
    check(L.desc_set(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &opT, sizeof opT), "TRANSA");
    check(L.desc_set(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &opN, sizeof opN), "TRANSB");
    const int8_t fast_accum = fast ? 1 : 0;
    check(L.desc_set(desc_, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast_accum, sizeof fast_accum), "FAST_ACCUM");
    check(L.layout_create(&a_layout_, CUDA_R_8F_E4M3, k_, m_, k_), "A layout");
    check(L.layout_create(&b_layout_, CUDA_R_8F_E4M3, k_, n_, k_), "B layout");
    check(L.layout_create(&d_layout_, CUDA_R_16BF, m_, n_, m_), "D layout");
    check(L.pref_create(&pref_), "preference");
    const size_t ws = kWorkspace;
    check(L.pref_set(pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws), "workspace preference");
    cublasLtMatmulHeuristicResult_t res{};
    int found = 0;
    check(L.heuristic(handle_, desc_, a_layout_, b_layout_, d_layout_, d_layout_, pref_, 1, &res, &found),
          "algorithm heuristic");
    if (found < 1) throw std::runtime_error("cuBLASLt has no FP8 algorithm for this problem on this GPU");
    algo_ = res.algo;
  }
  ~LtFp8Gemm() override {
    const Lt& L = lt();
    if (pref_) L.pref_destroy(pref_);
    for (auto* l : {a_layout_, b_layout_, d_layout_})
      if (l) L.layout_destroy(l);
    if (desc_) L.desc_destroy(desc_);
    if (handle_) L.destroy(handle_);
  }
  void randomize(std::uint64_t seed) override {
    seed_ = seed;
    fill_a_transposed<<<1024, 256>>>(a_.data(), m_, k_, seed);
    CUDA_CHECK_LAUNCH();
    gemm::fill_kernel<E4M3><<<1024, 256>>>(b_.data(), b_.size(), seed, 1);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  void launch(Stream s) override {
    // beta = 0: C (here D itself) is not read.
    check(lt().matmul(handle_, desc_, &alpha_, a_.data(), a_layout_, b_.data(), b_layout_, &beta_, c_.data(), d_layout_,
                      c_.data(), d_layout_, &algo_, workspace_.data(), kWorkspace, s),
          "matmul");
  }

 private:
  static constexpr size_t kWorkspace = 32u << 20;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_layout_ = nullptr, b_layout_ = nullptr, d_layout_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  gpu::DeviceBuffer<unsigned char> workspace_;
  float alpha_ = 1, beta_ = 0;
};

// The kind's model counts D = the input type, read and written; here C is not read and D is BF16
// (2 bytes per value, not FP8's 1).
KernelModel fp8_in_bf16_out(const KernelParams& p, KernelModel k) {
  const double mn = p.at("m") * p.at("n");
  k.read_bytes -= mn * 1.0;     // C not read (beta = 0)
  k.write_bytes = mn * 2.0;     // D in BF16
  k.traffic_bytes = k.read_bytes + k.write_bytes;
  return k;
}

KernelVariant lt_variant(bool fast) {
  KernelVariant v;
  v.kind = "gemm";
  v.implementation = fast ? "cublaslt-fast" : "cublaslt";
  v.unit = ComputeUnit::tensor_core;
  v.precision = Precision::fp8;
  v.description = std::string("cuBLASLt cublasLtMatmul E4M3 x E4M3 -> BF16, FP32 compute, TN, scales 1, beta = 0, ") +
                  (fast ? "FAST_ACCUM on (the running sum stays in the tensor core)"
                        : "FAST_ACCUM off (running sums promoted to FP32)") +
                  ", heuristic's first algorithm, 32 MiB workspace";
  // cuBLASLt's FP8 layouts need m, n and k multiples of 16: sizes snap to the nearest one.
  v.round = [](KernelParams p) {
    for (const char* d : {"m", "n", "k"}) p[d] = std::max(16.0, std::round(p.at(d) / 16) * 16);
    return p;
  };
  // Tolerances: inputs exact after the E4M3 conversion (the CPU reference converts the same way),
  // products exact; D rounded to BF16 (2^-8 of |ref|). The running sum: the FP8 wgmma keeps 13
  // fraction bits and truncates (numerics probe, H100). With promotion (default) a truncation
  // costs at most 2^-13 of a short partial sum before FP32 takes over: 1e-3 of sum |a b|, as BF16.
  // FAST_ACCUM keeps the 13-bit sum over all of k: each of the k/32 block additions truncates by
  // up to 2^-13 of its partial sum S_j; for inputs uniform in [-1, 1], sum_j E|S_j| over the k/32
  // additions is about (8/9) sqrt(k)/32 of sum |a b| (|S_j| ~ sqrt(32 j) sigma, sigma/E|ab| = 4/3),
  // so we allow 2^-13 (1 + sqrt(k)/8): about 4.5x that, if every truncation pointed the same way.
  v.create = [fast](const KernelParams& params, const RunContext&) -> std::unique_ptr<KernelInstance> {
    const gemm::Tolerance tol = fast ? gemm::Tolerance{0x1.0p-13 * (1 + std::sqrt(params.at("k")) / 8), 0x1.0p-8}
                                     : gemm::Tolerance{1e-3, 0x1.0p-8};
    return std::make_unique<LtFp8Gemm>(params, tol, fast);
  };
  // FP8 GEMMs run only where the tensor cores have FP8 (sm_89 and sm_90): the heuristic says no
  // elsewhere, and the instance's constructor reports it.
  v.adjust_model = fp8_in_bf16_out;
  v.unavailable = [] { return lt().error; };
  return v;
}

const Registrar gemm_fp8{lt_variant(false)};
const Registrar gemm_fp8_fast{lt_variant(true)};

}  // namespace
}  // namespace ceiling::kernels
