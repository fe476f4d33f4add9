// Validation kernels on the GPU: every variant matches its CPU reference on fresh data, the check
// catches an unwritten output, timing works, and the tensor-core variants issue DMMA (SASS).
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "gpu/gpu.hpp"
#include "kernels/registry.hpp"
#include "kernels/runner.hpp"

using namespace ceiling;
using namespace ceiling::kernels;

TEST_SUITE_BEGIN("kernels");

TEST_CASE("every kernel variant matches its CPU reference on fresh random data") {
  REQUIRE(registry().size() >= 5);
  for (const auto& v : registry()) {
    for (double bytes : {1.0 * 1024 * 1024, 24.0 * 1024 * 1024}) {
      const ProblemSize s = v.size_for_bytes(bytes);
      auto inst = v.create(s);
      for (std::uint64_t seed : {11ull, 12345ull}) {
        const Verification r = verify_once(v, *inst, seed);
        INFO(v.name() << " m=" << s.m << " n=" << s.n << " seed " << seed << ": " << r.message);
        CHECK(r.ok);
        CHECK(r.unwritten == 0);
        CHECK(r.error <= r.tolerance);
      }
      const KernelModel k = v.model(s);
      CHECK(k.working_set_bytes >= 0.8 * bytes);
      CHECK(k.working_set_bytes <= 1.25 * bytes);
    }
  }
}

TEST_CASE("CUDA-core SCALE handles counts that are not a multiple of the vector width") {
  for (const auto& v : registry()) {
    if (v.kernel != "scale") continue;
    ProblemSize s;
    s.n = 1000003;
    if (v.unit == ComputeUnit::tensor_core) {
      CHECK_THROWS_AS(v.create(s), std::invalid_argument);  // tiles of 64 values only
      continue;
    }
    auto inst = v.create(s);
    const Verification r = verify_once(v, *inst, 99);
    INFO(v.name() << ": " << r.message);
    CHECK(r.ok);
  }
}

TEST_CASE("the check fails on an output the kernel did not write") {
  for (const auto& v : registry()) {
    const ProblemSize s = v.size_for_bytes(2.0 * 1024 * 1024);
    auto inst = v.create(s);
    inst->randomize(7);
    inst->poison_output();
    CUDA_CHECK(cudaDeviceSynchronize());
    const Verification r = inst->verify();  // no launch
    INFO(v.name() << ": " << r.message);
    CHECK_FALSE(r.ok);
    CHECK(r.unwritten == (v.kernel == "gemv" ? s.m : s.n));
  }
}

TEST_CASE("measure verifies, then times") {
  for (const auto& v : registry()) {
    MeasureOptions o;
    o.repeats = 5;
    o.flush_l2 = true;
    const Measurement m = measure(v, v.size_for_bytes(64.0 * 1024 * 1024), o);
    INFO(v.name());
    CHECK(m.check.ok);
    CHECK(m.timing.summary.count == 5);
    CHECK(m.timing.summary.median > 0);
    // Physically plausible: under 20 TB/s for a 64 MiB working set flushed from L2.
    CHECK(m.model.traffic_bytes / m.timing.summary.median < 20e12);
  }
}

TEST_CASE("tensor-core variants issue DMMA, CUDA-core variants do not (cuobjdump)") {
  if (std::system("command -v cuobjdump > /dev/null 2>&1") != 0) {
    MESSAGE("cuobjdump not on PATH: SASS check skipped (run kernels/check_sass.sh where it is)");
    return;
  }
  // Resolve our own path here: inside popen, /proc/self would be cuobjdump.
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string cmd = "cuobjdump --dump-sass '" + self + "' 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::map<std::string, int> dmma;  // kernel function -> DMMA count
  std::string current;
  char line[4096];
  while (std::fgets(line, sizeof line, p)) {
    std::string l(line);
    if (auto pos = l.find("Function : "); pos != std::string::npos) {
      current.clear();
      for (const char* k : {"scale_tensor_core_fp64", "scale_cuda_core", "gemv_tensor_core", "gemv_cuda_core"})
        if (l.find(k) != std::string::npos) current = k;
      if (!current.empty()) dmma[current] += 0;
    } else if (!current.empty() && l.find("DMMA") != std::string::npos) {
      ++dmma[current];
    }
  }
  pclose(p);
  for (const auto& [k, n] : dmma) MESSAGE(k << ": " << n << " DMMA");
  REQUIRE(dmma.count("scale_tensor_core_fp64"));
  REQUIRE(dmma.count("gemv_tensor_core"));
  CHECK(dmma["scale_tensor_core_fp64"] > 0);
  CHECK(dmma["gemv_tensor_core"] > 0);
  CHECK(dmma["scale_cuda_core"] == 0);
  CHECK(dmma["gemv_cuda_core"] == 0);
}

TEST_SUITE_END();
