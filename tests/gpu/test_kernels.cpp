// Validation kernels on the GPU: every variant matches its CPU reference on fresh data, the check
// catches an unwritten output, timing works, and each variant compiles to the SASS it declares.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <string>

#include "gpu/gpu.hpp"
#include "kernels/registry.hpp"
#include "kernels/runner.hpp"
#include "model/roofline.hpp"

using namespace ceiling;
using namespace ceiling::kernels;

TEST_SUITE_BEGIN("kernels");

namespace {

// The parameters the sweep would run for a working set: the kind's, rounded by the variant.
KernelParams params_for(const KernelVariant& v, double bytes) {
  KernelParams p = kernel_kind(v.kind).params_for_bytes(bytes, v.precision);
  return v.round ? v.round(p) : p;
}

RunContext context_for(const KernelVariant& v, const KernelParams& p) {
  RunContext ctx;
  int dev = 0, l2 = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  ctx.l2_bytes = l2;
  ctx.in_l2 = fits_in_l2(v.model(p).working_set_bytes, ctx.l2_bytes);
  return ctx;
}

}  // namespace

TEST_CASE("every kernel variant matches its CPU reference on fresh random data") {
  REQUIRE(registry().size() >= 5);
  for (const auto& v : registry()) {
    for (double bytes : {1.0 * 1024 * 1024, 24.0 * 1024 * 1024}) {
      const KernelParams p = params_for(v, bytes);
      auto inst = v.create(p, context_for(v, p));
      for (std::uint64_t seed : {11ull, 12345ull}) {
        const Verification r = verify_once(*inst, seed);
        INFO(v.name() << " " << kernel_size_text(v.kind, p) << " seed " << seed << ": " << r.message);
        CHECK(r.ok);
        CHECK(r.unwritten == 0);
        CHECK(r.error <= r.tolerance);
      }
      const KernelModel k = v.model(p);
      CHECK(k.working_set_bytes >= 0.8 * bytes);
      CHECK(k.working_set_bytes <= 1.25 * bytes);
    }
  }
}

TEST_CASE("CUDA-core SCALE handles counts that are not a multiple of the vector width") {
  for (const auto& v : registry()) {
    if (v.kind != "scale") continue;
    const KernelParams p{{"n", 1000003}};
    if (v.unit == ComputeUnit::tensor_core) {
      CHECK_THROWS_AS(v.create(p, context_for(v, p)), std::invalid_argument);  // tiles of 64 values only
      continue;
    }
    auto inst = v.create(p, context_for(v, p));
    const Verification r = verify_once(*inst, 99);
    INFO(v.name() << ": " << r.message);
    CHECK(r.ok);
  }
}

TEST_CASE("the check fails on an output the kernel did not write") {
  for (const auto& v : registry()) {
    const KernelParams p = params_for(v, 2.0 * 1024 * 1024);
    auto inst = v.create(p, context_for(v, p));
    inst->randomize(7);
    inst->poison_output();
    CUDA_CHECK(cudaDeviceSynchronize());
    const Verification r = inst->verify();  // no launch
    INFO(v.name() << ": " << r.message);
    CHECK_FALSE(r.ok);
    CHECK(r.unwritten == inst->output_elements());
    CHECK(r.unwritten > 0);
  }
}

TEST_CASE("measure verifies, then times") {
  for (const auto& v : registry()) {
    MeasureOptions o;
    o.repeats = 5;
    o.flush_l2 = true;
    const KernelParams p = params_for(v, 64.0 * 1024 * 1024);
    const Measurement m = measure(v, p, context_for(v, p), o);
    INFO(v.name());
    CHECK(m.check.ok);
    CHECK(m.timing.summary.count == 5);
    CHECK(m.timing.summary.median > 0);
    // Physically plausible: under 20 TB/s for a 64 MiB working set flushed from L2.
    CHECK(m.model.traffic_bytes / m.timing.summary.median < 20e12);
  }
}

TEST_CASE("every variant compiles to the SASS it declares (cuobjdump)") {
  if (std::system("command -v cuobjdump > /dev/null 2>&1") != 0) {
    MESSAGE("cuobjdump not on PATH: SASS check skipped (run scripts/sass_check.sh where it is)");
    return;
  }
  // Demangled names ("scale_cuda_core<double, true>") are what the expectations name.
  std::string demangle;
  for (const char* d : {"c++filt", "cu++filt", "/usr/local/cuda/bin/cu++filt"})
    if (std::system((std::string("command -v ") + d + " > /dev/null 2>&1").c_str()) == 0) {
      demangle = d;
      break;
    }
  if (demangle.empty()) {
    MESSAGE("no c++filt/cu++filt: SASS check skipped");
    return;
  }
  // Resolve our own path here: inside popen, /proc/self would be cuobjdump.
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string cmd = "cuobjdump --dump-sass '" + self + "' 2>/dev/null | " + demangle;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::map<std::string, std::string> sass;  // function line -> its instructions
  std::string current;
  char line[4096];
  while (std::fgets(line, sizeof line, p)) {
    std::string l(line);
    if (l.find("Function : ") != std::string::npos) current = l;
    else if (!current.empty()) sass[current] += l;
  }
  pclose(p);
  const auto matches = [](const std::string& fn, const std::string& pattern) { return fn.find(pattern) != std::string::npos; };
  for (const auto& v : registry())
    for (const auto& e : v.sass) {
      int found = 0;
      for (const auto& [fn, body] : sass) {
        if (!matches(fn, e.function)) continue;
        ++found;
        INFO(v.name() << " " << fn);
        if (!e.require.empty()) CHECK(std::regex_search(body, std::regex(e.require, std::regex::extended)));
        if (!e.forbid.empty()) CHECK_FALSE(std::regex_search(body, std::regex(e.forbid, std::regex::extended)));
      }
      INFO(v.name() << ": functions matching " << e.function);
      CHECK(found > 0);
    }
}

TEST_SUITE_END();
