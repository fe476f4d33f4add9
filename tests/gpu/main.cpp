// GPU tests: each probe and kernel on a tiny configuration with its own self-check.
// Without a usable GPU the whole binary reports "skipped" (exit 77, ctest SKIP_RETURN_CODE).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "gpu/gpu.hpp"

int main(int argc, char** argv) {
  if (ceiling::gpu::device_count() == 0) {
    std::printf("GPU tests skipped: %s\n", ceiling::gpu::no_gpu_reason().c_str());
    return 77;
  }
  doctest::Context ctx;
  ctx.applyCommandLine(argc, argv);
  return ctx.run();
}
