// SpMV y = A x with cuSPARSE CSR (cusparseSpMV, CUSPARSE_SPMV_ALG_DEFAULT, FP64): GPGPU'25's
// CUDA-core baseline (§5.2). W and Q as our CSR (Eq. 10). The buffer, the descriptors and
// cusparseSpMV_preprocess are made when the instance is created, outside the timed region; only
// cusparseSpMV is timed. libcusparse is loaded at run time (dlopen), so ceiling runs on hosts
// with only the driver: there the variant says it cannot run instead of the binary failing to start
// (the bundle does not carry the 160 MB library).
#include <cusparse.h>
#include <dlfcn.h>

#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "spmv_common.cuh"

namespace ceiling::kernels {
namespace {

// The cuSPARSE entry points we use, resolved from the shared library once.
struct Cusparse {
  decltype(&::cusparseCreate) create = nullptr;
  decltype(&::cusparseDestroy) destroy = nullptr;
  decltype(&::cusparseSetStream) set_stream = nullptr;
  decltype(&::cusparseCreateCsr) create_csr = nullptr;
  decltype(&::cusparseDestroySpMat) destroy_sp = nullptr;
  decltype(&::cusparseCreateDnVec) create_dn = nullptr;
  decltype(&::cusparseDestroyDnVec) destroy_dn = nullptr;
  decltype(&::cusparseSpMV_bufferSize) buffer_size = nullptr;
  decltype(&::cusparseSpMV_preprocess) preprocess = nullptr;
  decltype(&::cusparseSpMV) spmv = nullptr;
  decltype(&::cusparseGetErrorString) error_string = nullptr;
  std::string error;  // why it could not be loaded
};

const Cusparse& cusparse() {
  static Cusparse lib;
  static std::once_flag once;
  std::call_once(once, [] {
    void* h = nullptr;
    std::string tried;
    for (const char* name : {"libcusparse.so." CEILING_CUSPARSE_SOVERSION, "libcusparse.so",
                             "/usr/local/cuda/lib64/libcusparse.so." CEILING_CUSPARSE_SOVERSION}) {
      h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (h) break;
      tried += std::string(tried.empty() ? "" : ", ") + name;
    }
    if (!h) {
      lib.error = "cuSPARSE not found (tried " + tried + "): install the CUDA toolkit's libcusparse or set LD_LIBRARY_PATH";
      return;
    }
    auto get = [&](auto& fn, const char* sym) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, sym));
      if (!fn && lib.error.empty()) lib.error = std::string("cuSPARSE lacks ") + sym;
    };
    get(lib.create, "cusparseCreate");
    get(lib.destroy, "cusparseDestroy");
    get(lib.set_stream, "cusparseSetStream");
    get(lib.create_csr, "cusparseCreateCsr");
    get(lib.destroy_sp, "cusparseDestroySpMat");
    get(lib.create_dn, "cusparseCreateDnVec");
    get(lib.destroy_dn, "cusparseDestroyDnVec");
    get(lib.buffer_size, "cusparseSpMV_bufferSize");
    get(lib.preprocess, "cusparseSpMV_preprocess");
    get(lib.spmv, "cusparseSpMV");
    get(lib.error_string, "cusparseGetErrorString");
  });
  return lib;
}

void check(cusparseStatus_t st, const char* what) {
  if (st != CUSPARSE_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuSPARSE ") + what + ": " +
                             (cusparse().error_string ? cusparse().error_string(st) : std::to_string(static_cast<int>(st))));
}

class CusparseInstance final : public SpmvInstanceBase {
 public:
  CusparseInstance(const KernelParams& params, const RunContext&)
      : SpmvInstanceBase(params), rp_(upload(a_->row_ptr)), col_(upload(a_->col)), val_(upload(a_->val)) {
    const Cusparse& cs = cusparse();
    if (!cs.error.empty()) throw std::runtime_error(cs.error);
    check(cs.create(&handle_), "create");
    check(cs.create_csr(&mat_, a_->rows, a_->cols, a_->nnz(), rp_.data(), col_.data(), val_.data(), CUSPARSE_INDEX_32I,
                        CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F),
          "create CSR");
    check(cs.create_dn(&xd_, a_->cols, x_.data(), CUDA_R_64F), "create x");
    check(cs.create_dn(&yd_, a_->rows, y_.data(), CUDA_R_64F), "create y");
    size_t bytes = 0;
    check(cs.buffer_size(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha_, mat_, xd_, &beta_, yd_, CUDA_R_64F,
                         CUSPARSE_SPMV_ALG_DEFAULT, &bytes),
          "buffer size");
    buffer_ = gpu::DeviceBuffer<char>(std::max<size_t>(bytes, 1));
    check(cs.preprocess(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha_, mat_, xd_, &beta_, yd_, CUDA_R_64F,
                        CUSPARSE_SPMV_ALG_DEFAULT, buffer_.data()),
          "preprocess");
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  ~CusparseInstance() override {
    const Cusparse& cs = cusparse();
    if (yd_) cs.destroy_dn(yd_);
    if (xd_) cs.destroy_dn(xd_);
    if (mat_) cs.destroy_sp(mat_);
    if (handle_) cs.destroy(handle_);
  }
  void launch(Stream s) override {
    const Cusparse& cs = cusparse();
    check(cs.set_stream(handle_, s), "set stream");
    // beta = 0: y is written, not read (the poisoned y must not leak NaN into the result).
    check(cs.spmv(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha_, mat_, xd_, &beta_, yd_, CUDA_R_64F,
                  CUSPARSE_SPMV_ALG_DEFAULT, buffer_.data()),
          "SpMV");
  }

 private:
  gpu::DeviceBuffer<int> rp_, col_;
  gpu::DeviceBuffer<double> val_;
  gpu::DeviceBuffer<char> buffer_;
  cusparseHandle_t handle_ = nullptr;
  cusparseSpMatDescr_t mat_ = nullptr;
  cusparseDnVecDescr_t xd_ = nullptr, yd_ = nullptr;
  double alpha_ = 1.0, beta_ = 0.0;
};

KernelVariant cusparse_variant() {
  KernelVariant v;
  v.kind = "spmv-csr";
  v.implementation = "cusparse";
  v.unit = ComputeUnit::cuda_core;
  v.precision = Precision::fp64;
  v.description = "cuSPARSE cusparseSpMV CSR (ALG_DEFAULT), buffer and preprocess outside the timed region";
  v.create = [](const KernelParams& params, const RunContext& ctx) -> std::unique_ptr<KernelInstance> {
    return std::make_unique<CusparseInstance>(params, ctx);
  };
  v.unavailable = [] { return cusparse().error; };
  return v;  // no SASS expectation: the kernels are cuSPARSE's
}

const Registrar spmv_cusparse{cusparse_variant()};

}  // namespace
}  // namespace ceiling::kernels
