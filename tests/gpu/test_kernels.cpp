// Validation kernels on the GPU: every variant matches its CPU reference on fresh data, the check
// catches an unwritten output, timing works, and each variant compiles to the SASS it declares.
#include <doctest/doctest.h>

#include <array>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <regex>
#include <string>

#include "gpu/gpu.hpp"
#include "kernels/gemv_shapes.hpp"
#include "kernels/registry.hpp"
#include "kernels/runner.hpp"
#include "model/roofline.hpp"
#include "model/sparse_matrix.hpp"
#include "kernels/stencil_plan.hpp"
#include "model/stencil_shape.hpp"

using namespace ceiling;
using namespace ceiling::kernels;

TEST_SUITE_BEGIN("kernels");

namespace {

// A matrix of about `nnz` entries with every row class the SpMV plans know: empty rows, 1-5,
// 20-60, 200-260 (near the tensor-core long threshold), 1025, 5000 and 20000 entries (pieces).
std::shared_ptr<CsrMatrix> mixed_matrix(std::int64_t nnz, std::uint64_t seed) {
  auto a = std::make_shared<CsrMatrix>();
  a->name = "mixed-" + std::to_string(nnz);
  const std::int32_t cols = static_cast<std::int32_t>(std::max<std::int64_t>(30000, nnz / 8));
  a->cols = cols;
  a->row_ptr.push_back(0);
  std::uint64_t z = seed;
  const auto next = [&z] { z = z * 6364136223846793005ull + 1442695040888963407ull; return z >> 33; };
  std::vector<int> special{1025, 5000, 20000};
  while (static_cast<std::int64_t>(a->col.size()) < nnz) {
    const auto k = next() % 1000;
    int len = k < 100 ? 0 : k < 800 ? 1 + static_cast<int>(k % 5) : k < 990 ? 20 + static_cast<int>(k % 41)
                                                                          : 200 + static_cast<int>(k % 61);
    if (!special.empty() && next() % 200 == 0) {
      len = special.back();
      special.pop_back();
    }
    const int stride = std::max(1, cols / std::max(len, 1));
    const auto start = static_cast<std::int32_t>(next() % static_cast<std::uint64_t>(std::max(1, cols - (len - 1) * stride)));
    for (int e = 0; e < len; ++e) {
      a->col.push_back(start + e * stride);
      a->val.push_back(0.5 + static_cast<double>(next() % 1024) / 1024.0);
    }
    a->row_ptr.push_back(static_cast<std::int32_t>(a->col.size()));
  }
  a->rows = static_cast<std::int32_t>(a->row_ptr.size() - 1);
  check_csr(*a);
  return a;
}

// The parameters the sweep would run for a working set: the kind's, rounded by the variant; a
// kind sized by its inputs (SpMV) gets a registered matrix of about that size.
KernelParams params_for(const KernelVariant& v, double bytes) {
  const KernelKind& kind = kernel_kind(v.kind);
  if (v.kind == "stencil") {  // sized by its shape and domain: 2d9pt, two fused steps, a square of ~bytes
    clear_registered_stencil_shapes();
    const int id = register_stencil_shape(*find_builtin_stencil_shape("2d9pt"));
    const StencilDomain d = stencil_domain_for_bytes(2, bytes);
    return {{"points", 9}, {"dims", 2}, {"nx", static_cast<double>(d.nx)}, {"ny", static_cast<double>(d.ny)},
            {"steps", 2}, {"shape_id", id}};
  }
  if (!kind.params_for_bytes) {
    REQUIRE(kind.sweep_points);
    clear_registered_matrices();
    register_matrix(mixed_matrix(static_cast<std::int64_t>(bytes / 12), 7));
    return kind.sweep_points(bytes, v.precision, false).at(0);
  }
  KernelParams p = kind.params_for_bytes(bytes, v.precision);
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
    if (v.unavailable && !v.unavailable().empty()) continue;  // e.g. no libcusparse on this host
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
      const KernelKind& kind = kernel_kind(v.kind);
      if (!kind.params_for_bytes) continue;  // sized by its matrix (mixed_matrix approximates)
      // The kind sizes the working set; a variant's round() then snaps to the sizes it runs (the
      // DFMA GEMM to multiples of 128, so 1 MiB becomes 256^3 there) and is a fixed point.
      const KernelModel k = v.model(kind.params_for_bytes(bytes, v.precision));
      CHECK(k.working_set_bytes >= 0.8 * bytes);
      CHECK(k.working_set_bytes <= 1.25 * bytes);
      if (v.round) CHECK(v.round(p) == p);
    }
  }
}

// The chunked stream items' edges, repeated: empty rows first, a row of exactly 2048 entries, one of
// 2049, 300 empty rows (an item without entries), rows ending on 8-entry chunk edges, a row of 1500
// spanning ~190 chunks, rows of 0-8.
std::shared_ptr<CsrMatrix> chunk_edges_matrix(int repeats) {
  std::vector<int> lengths;
  for (int k = 0; k < repeats; ++k) {
    for (int l : {0, 0, 0, 2048, 0, 2049}) lengths.push_back(l);
    for (int r = 0; r < 300; ++r) lengths.push_back(0);
    for (int l : {1, 0, 17, 8, 8, 16, 8}) lengths.push_back(l);
    for (int r = 0; r < 40; ++r) lengths.push_back(1 + r % 3);
    lengths.push_back(1500);
    for (int r = 0; r < 700; ++r) lengths.push_back(r % 9);
  }
  auto a = std::make_shared<CsrMatrix>();
  a->name = "chunk-edges-" + std::to_string(repeats);
  a->cols = 40000;
  a->row_ptr.push_back(0);
  std::uint64_t z = 77;
  for (int len : lengths) {
    z = z * 6364136223846793005ull + 1442695040888963407ull;
    const int stride = a->cols / std::max(len, 1);
    const auto start = static_cast<std::int32_t>((z >> 33) % static_cast<std::uint64_t>(std::max(1, a->cols - (len - 1) * stride)));
    for (int e = 0; e < len; ++e) {
      a->col.push_back(start + e * stride);
      a->val.push_back(0.5 + static_cast<double>((z >> (e % 40)) & 1023) / 1024.0);
    }
    a->row_ptr.push_back(static_cast<std::int32_t>(a->col.size()));
  }
  a->rows = static_cast<std::int32_t>(a->row_ptr.size() - 1);
  check_csr(*a);
  return a;
}

TEST_CASE("SpMV variants: every row class, repeated launches (long-row counters reset), cold and warm") {
  for (int m = 0; m < 3; ++m) {
    clear_registered_matrices();
    const auto a = m < 2 ? mixed_matrix(m == 0 ? 200000LL : 3000000LL, 99) : chunk_edges_matrix(40);
    register_matrix(a);
    for (const auto& v : registry()) {
      if (v.unavailable && !v.unavailable().empty()) continue;  // e.g. no libcusparse on this host
      const KernelKind& kind = kernel_kind(v.kind);
      if (kind.params_for_bytes || !kind.matrix_inputs) continue;  // the SpMV kinds (stencils have an input label too)
      // Our CSR kernel: the plan's choice (0), then each plan pinned (1: lanes per row, 2: chunked).
      const std::vector<int> configs = v.implementation == "ours" ? std::vector<int>{0, 1, 2} : std::vector<int>{0};
      for (int config : configs) {
        KernelParams p = kind.sweep_points(0, v.precision, false).at(0);
        if (config != 0) p["launch_config"] = config;
        for (bool in_l2 : {true, false}) {
          RunContext ctx;
          ctx.l2_bytes = 50e6;
          ctx.in_l2 = in_l2;
          auto inst = v.create(p, ctx);
          inst->randomize(5);
          inst->poison_output();
          for (int i = 0; i < 3; ++i) inst->launch(nullptr);  // a counter left non-zero would lose a row
          CUDA_CHECK(cudaDeviceSynchronize());
          const Verification r = inst->verify();
          INFO(v.name() << " " << a->name << " launch_config " << config << (in_l2 ? " warm" : " cold") << ": " << r.message);
          CHECK(r.ok);
          CHECK(r.unwritten == 0);
          CHECK(r.error <= 1e-12);
        }
      }
    }
  }
  clear_registered_matrices();
}

TEST_CASE("stencil variants: every built-in shape, 1 to 4 fused steps, odd 2-D and 3-D domains, cold and warm") {
  clear_registered_stencil_shapes();
  for (const auto& shape : builtin_stencil_shapes()) {
    const int id = register_stencil_shape(shape);
    std::vector<StencilDomain> domains;
    if (shape.dims == 2) domains = {parse_stencil_domain("67x45"), parse_stencil_domain("203x131"),
                                    parse_stencil_domain("3001x2999")};  // the last: sampled check
    else domains = {parse_stencil_domain("37x29x23"), parse_stencil_domain("70x9x41")};
    for (const auto& d : domains)
      for (int steps = 1; steps <= 4; ++steps) {
        if (d.nx > 1000 && steps > 1) continue;
        KernelParams p{{"points", shape.size()}, {"dims", shape.dims}, {"nx", static_cast<double>(d.nx)},
                       {"ny", static_cast<double>(d.ny)}, {"steps", steps}, {"shape_id", id}};
        if (shape.dims == 3) p["nz"] = static_cast<double>(d.nz);
        for (const auto& v : registry()) {
          if (v.kind != "stencil") continue;
          RunContext ctx;
          ctx.l2_bytes = 50e6;
          ctx.in_l2 = steps % 2 == 0;
          auto inst = v.create(p, ctx);
          inst->randomize(1000 + steps);
          inst->poison_output();
          for (int i = 0; i < 2; ++i) inst->launch(nullptr);  // a second launch must compute the same
          CUDA_CHECK(cudaDeviceSynchronize());
          const Verification r = inst->verify();
          INFO(v.name() << " " << shape.name << " " << d.text() << " t=" << steps << ": " << r.message);
          CHECK(r.ok);
          CHECK(r.unwritten == 0);
          CHECK(r.error <= 1e-12);
        }
        // The plain variant's kernels pinned (launch_config 1: a point per thread, 2: columns, which
        // only 2-D radius-1 shapes and full boxes have, 3: rows / planes), and the streaming variant's (1: the
        // ring kernel, 2: the rows kernel (2-D) or the planes kernel (3-D radius 1, up to 3 steps)); the
        // choice above is by shape and size.
        if (d.nx > 1000) continue;
        for (const auto& v : registry()) {
          if (v.kind != "stencil" || (v.implementation != "plain" && v.implementation != "streaming")) continue;
          const bool plain = v.implementation == "plain";
          for (int config : {1, 2, 3}) {
            if (config == 3 && !plain) continue;
            // plain 2: columns; plain 3 and streaming 2: the rows / planes kernel at 1 / `steps` steps.
            const bool second = plain ? (config == 2 ? shape.name != "2d13pt" && shape.name != "3d7pt"
                                                     : stencil_register_refusal(shape, 1).empty())
                                      : stencil_register_refusal(shape, steps).empty();
            KernelParams q = p;
            q["launch_config"] = config;
            RunContext ctx;
            ctx.l2_bytes = 50e6;
            ctx.in_l2 = steps % 2 == 0;
            if (config >= 2 && !second) {
              CHECK_THROWS_AS(v.create(q, ctx), std::invalid_argument);
              continue;
            }
            auto inst = v.create(q, ctx);
            inst->randomize(2000 + steps);
            inst->poison_output();
            for (int i = 0; i < 2; ++i) inst->launch(nullptr);
            CUDA_CHECK(cudaDeviceSynchronize());
            const Verification r = inst->verify();
            INFO(v.implementation << " launch_config " << config << " " << shape.name << " " << d.text() << " t=" << steps << ": " << r.message);
            CHECK(r.ok);
            CHECK(r.unwritten == 0);
            CHECK(r.error <= 1e-12);
          }
        }
      }
  }
  clear_registered_stencil_shapes();
}

TEST_CASE("intensity variants: every k of the sweep (one row per thread below 16, several above), row counts that leave a warp partly idle") {
  int checked = 0;
  for (const auto& v : registry()) {
    if (v.kind != "intensity") continue;
    const double w = v.precision == Precision::fp16 ? 16 : 8;  // values per row
    // 37 x 64 rows: 74 blocks of 32 rows, 4 per warp on the wide path, so the last warp has 2;
    // 4096 x 64 rows: every warp full. The second size is large enough to stream (not in L2).
    const int k_max = v.precision == Precision::fp16 ? 4096 : 1024;  // the sweep's (kernel_kind.cpp)
    // Tensor cores also at 1608 x 64 rows (fp64 in the L2 on 132 SMs), where the launch takes 2 tiles
    // per warp step in 2-warp blocks (kernels/work_units.hpp; the other sizes take 4 in 8-warp blocks).
    // CUDA cores also at 1592 x 64 rows (3184 row blocks), where the immediate kernel's single row
    // blocks balance better than its groups on 132 SMs.
    std::vector<double> sizes = {37.0, 4096.0 * 16};
    sizes.insert(sizes.begin() + 1, v.unit == ComputeUnit::tensor_core ? 1608.0 : 1592.0);
    for (double rows64 : sizes)
      for (int k = 1; k <= k_max; k *= 2) {
        // CUDA cores at k >= 16: the tuned choice (0) and each kernel it picks from, pinned
        // (1 staged up to k = 256, 2 immediates, 3 immediates by single row blocks in the L2).
        const KernelParams at = {{"n", rows64 * 64 * w}, {"k", static_cast<double>(k)}};
        const bool in_l2 = context_for(v, at).in_l2;
        std::vector<int> configs = {0};
        if (v.unit == ComputeUnit::cuda_core && k >= 16) {
          configs = k <= 256 ? std::vector<int>{0, 1, 2} : std::vector<int>{0, 2};
          if (in_l2) configs.push_back(3);
          else {  // streaming: no single-row-block launch
            KernelParams three = at;
            three["launch_config"] = 3;
            CHECK_THROWS_AS(v.create(three, context_for(v, three)), std::invalid_argument);
          }
        }
        for (int config : configs) {
          KernelParams p = {{"n", rows64 * 64 * w}, {"k", static_cast<double>(k)}};
          if (config != 0) p["launch_config"] = config;
          auto inst = v.create(p, context_for(v, p));
          const Verification r = verify_once(*inst, 777 + k);
          INFO(v.name() << " " << kernel_size_text(v.kind, p) << " launch_config " << config << ": " << r.message);
          CHECK(r.ok);
          CHECK(r.unwritten == 0);
          // Back-to-back launches as timed: the FP64 split kernel's ticket counter must be back at 0
          // after each launch, or the next one skips groups (left poisoned).
          inst->poison_output();
          for (int i = 0; i < 3; ++i) inst->launch(nullptr);
          CUDA_CHECK(cudaDeviceSynchronize());
          const Verification again = inst->verify();
          INFO("after 3 back-to-back launches: " << again.message);
          CHECK(again.ok);
          CHECK(again.unwritten == 0);
          ++checked;
        }
      }
    // A configuration the instance cannot run is refused, not run as another one.
    const KernelParams bad = {{"n", 64 * w * 64}, {"k", 8.0}, {"launch_config", v.unit == ComputeUnit::cuda_core ? 2.0 : 1.0}};
    CHECK_THROWS_AS(v.create(bad, context_for(v, bad)), std::invalid_argument);
    if (v.unit == ComputeUnit::cuda_core) {  // no staged kernel above k = 256
      const KernelParams big = {{"n", 64 * w * 64}, {"k", 512.0}, {"launch_config", 1.0}};
      CHECK_THROWS_AS(v.create(big, context_for(v, big)), std::invalid_argument);
    }
  }
  // Streaming size: fp64 and fp32 CUDA cores 11 k + 5 x 2 pinned (k = 16 .. 256) + 2 x 1 (512, 1024),
  // fp16 13 k + 10 + 4; the two in-L2 sizes one more pinned per k >= 16 (fp64/fp32 7, fp16 9);
  // fp64 tensor cores 11, fp16 13 (three sizes).
  CHECK(checked == 2 * (23 + 2 * 30) + (27 + 2 * 36) + 3 * (11 + 13));
}

TEST_CASE("GEMV: every launch shape the tuners pick from matches the CPU reference") {
  // kernels/gemv_shapes.hpp, streaming loads included. Sizes leave the last column step of a warp
  // partial (576 = 9 steps of 64 over 16 warps, 1088 = 34 steps of 32; a warp per row: 64^2 and the
  // last chunk of 576^2 and 1088^2 are one of 8 loads per lane).
  // Every shape of both lists (gemv_shapes::all): the in-L2 tensor-core list adds 2 or 4 warps per row.
  const std::map<ComputeUnit, std::vector<int>> shapes = {{ComputeUnit::cuda_core, gemv_shapes::all(false)},
                                                          {ComputeUnit::tensor_core, gemv_shapes::all(true)}};
  int checked = 0;
  for (const auto& v : registry()) {
    if (v.kind != "gemv") continue;
    for (double n : {64.0, 576.0, 1088.0})
      for (int shape : shapes.at(v.unit)) {
        const KernelParams p = {{"m", n}, {"n", n}, {"launch_config", static_cast<double>(shape)}};
        auto inst = v.create(p, context_for(v, p));
        const Verification r = verify_once(*inst, 4242 + shape);
        INFO(v.name() << " " << n << "^2 shape " << shape << ": " << r.message);
        CHECK(r.ok);
        CHECK(inst->launch_text() == gemv_shapes::text(v.unit == ComputeUnit::tensor_core, shape));
        CHECK(r.unwritten == 0);
        ++checked;
      }
    // A pinned shape no tuner offers is refused, not run as another one.
    const KernelParams bad = {{"m", 64.0}, {"n", 64.0}, {"launch_config", 3.0}};
    CHECK_THROWS_AS(v.create(bad, context_for(v, bad)), std::invalid_argument);
  }
  // CUDA cores 12 shapes; tensor cores 5 + 6 (a warp per row), each streaming too, + 10 split rows
  // (no 8 rows x 4 warps).
  CHECK(checked == 3 * (12 + 32));
}

TEST_CASE("DFMA GEMM: both shared-memory pipelines match the CPU reference, stream-K tiles included") {
  // launch_config 1: 3 stages of 32 k rows (sm_90's shared memory), 2: 4 stages of 16 (sm_80's).
  // On 132 SMs (kernels/gemm_stream_k.hpp): 256^3: 4 tiles of C shared by 8 or 16 blocks (4 k tiles
  // each); 384 x 256 x 1536: 6 tiles over 72 or 132 blocks (12 or 22 partial sums per tile);
  // 1920 x 2176 x 256: 255 tiles, one whole wave, then 123 shared (7-8 or 14-15 k tiles per block);
  // 2560 x 2432 x 256: 380 tiles, two whole waves, 116 shared; 1536 x 1408 x 128: one whole wave.
  // Twice each: the second launch finds the arrival counters the first left.
  int checked = 0;
  for (const auto& v : registry()) {
    if (v.kind != "gemm" || v.unit != ComputeUnit::cuda_core) continue;
    for (const auto& size : std::vector<std::array<double, 3>>{
             {256, 256, 256}, {384, 256, 1536}, {1920, 2176, 256}, {2560, 2432, 256}, {1536, 1408, 128}})
      for (int pipeline : {1, 2}) {
        const KernelParams p = {{"m", size[0]}, {"n", size[1]}, {"k", size[2]}, {"launch_config", 1.0 * pipeline}};
        auto inst = v.create(p, context_for(v, p));
        for (int round = 0; round < 2; ++round) {
          const Verification r = verify_once(*inst, 777 + pipeline + 10 * round);
          INFO(v.name() << " " << kernel_size_text(v.kind, p) << " pipeline " << pipeline << " round " << round << " ("
                        << inst->launch_text() << "): " << r.message);
          CHECK(r.ok);
          CHECK(r.unwritten == 0);
          CHECK(r.error <= r.tolerance);
          ++checked;
        }
      }
    const KernelParams bad = {{"m", 256.0}, {"n", 256.0}, {"k", 256.0}, {"launch_config", 3.0}};
    CHECK_THROWS_AS(v.create(bad, context_for(v, bad)), std::invalid_argument);
  }
  CHECK(checked == 20);
}

TEST_CASE("CUDA-core SCALE handles counts that are not a multiple of the vector width") {
  for (const auto& v : registry()) {
    if (v.unavailable && !v.unavailable().empty()) continue;  // e.g. no libcusparse on this host
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
    if (v.unavailable && !v.unavailable().empty()) continue;  // e.g. no libcusparse on this host
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
    if (v.unavailable && !v.unavailable().empty()) continue;  // e.g. no libcusparse on this host
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
    // The tuned (or planned) launch shape rides along for the results' description.
    if (v.kind == "gemv" || v.kind == "intensity" || v.kind == "stencil" || (v.kind == "spmv-csr" && v.implementation != "cusparse"))
      CHECK_FALSE(m.launch_text.empty());
    if (v.kind == "scale") CHECK(m.launch_text.empty());
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
