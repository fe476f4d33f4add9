// Run-time GPU detection for `ceiling run`; a build without CUDA has no GPU by construction.
#include "common.hpp"

#ifdef CEILING_HAVE_CUDA
#include <exception>

#include "gpu/gpu.hpp"
#endif

namespace ceiling::cli {

bool gpu_available(std::string* reason) {
#ifdef CEILING_HAVE_CUDA
  try {
    if (gpu::device_count() > 0) return true;
    if (reason) *reason = gpu::no_gpu_reason();
  } catch (const std::exception& e) {
    if (reason) *reason = e.what();
  }
  if (reason && reason->empty()) *reason = "no CUDA device";
  return false;
#else
  if (reason) *reason = "built without CUDA";
  return false;
#endif
}

}  // namespace ceiling::cli
