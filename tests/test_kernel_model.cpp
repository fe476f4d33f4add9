// Kernel models (GPGPU'25 §3), kernel files, and predict() on hand-built descriptors.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <cmath>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>

#include "model/kernel_model.hpp"
#include "model/roofline.hpp"
#include "model/units.hpp"

using namespace ceiling;

namespace {

std::filesystem::path kernel_file(const std::string& name) {
  return std::filesystem::path(CEILING_TEST_DATA_DIR) / "kernels" / name;
}

Field spec(Dimension d, double v, const std::string& ref = "Zhang et al. GPGPU'25, Table 1") {
  Field f{d};
  f.spec = SpecValue{v, ref};
  return f;
}

// The paper's Table 1, with the L2 sizes; no L2 bandwidth unless a test adds one.
HardwareDescriptor table1(const std::string& id, double bw, double cc, double tc, double l2_bytes) {
  HardwareDescriptor hw;
  hw.id = id;
  hw.identity.name = id;
  hw.identity.sm_count = 100;
  hw.memory[MemoryLevelKind::dram].bandwidth = spec(Dimension::bytes_per_second, bw);
  hw.memory[MemoryLevelKind::l2].capacity = spec(Dimension::bytes, l2_bytes);
  hw.compute[ComputeUnit::cuda_core][Precision::fp64] = spec(Dimension::flop_per_second, cc);
  hw.compute[ComputeUnit::tensor_core][Precision::fp64] = spec(Dimension::flop_per_second, tc);
  return hw;
}
HardwareDescriptor a100() { return table1("a100-80gb", 1.94e12, 9.7e12, 19.5e12, 40.0 * (1 << 20)); }
HardwareDescriptor gh200() { return table1("gh200", 4.00e12, 34.0e12, 67.0e12, 50.0 * (1 << 20)); }

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

}  // namespace

TEST_CASE("SCALE: W = n, Q = 2nD, I = 1/16 in fp64, tensor cores at 1/8") {
  const KernelModel k = scale_model(1e9);
  CHECK(k.kind == "scale");
  CHECK(k.work_flop == 1e9);
  CHECK(k.traffic_bytes == 16e9);
  CHECK(k.intensity() == 1.0 / 16);
  CHECK(k.working_set_bytes == 16e9);
  CHECK(k.tensor_core_fraction == 1.0 / 8);
  const KernelModel k32 = scale_model(1000, Precision::fp32);
  CHECK(k32.traffic_bytes == 8000);
  CHECK(k32.intensity() == 1.0 / 8);
  CHECK(scale_model(1000, Precision::fp16).tensor_core_fraction == 1.0 / 16);
  CHECK_THROWS_AS(scale_model(0), std::invalid_argument);
}

TEST_CASE("GEMV: W = 2mn, Q = (mn+m+n)D, I ~ 1/4 (Eq. 7)") {
  const KernelModel k = gemv_model(4096, 2048);
  CHECK(k.work_flop == 2.0 * 4096 * 2048);
  CHECK(k.traffic_bytes == (4096.0 * 2048 + 4096 + 2048) * 8);
  CHECK(k.working_set_bytes == k.traffic_bytes);
  CHECK(k.intensity() < 0.25);
  CHECK(gemv_model(1e5, 1e5).intensity() == ceiling_test::Rel(0.25).epsilon(1e-4));
  CHECK(k.tensor_core_fraction == 1.0);
  CHECK_THROWS_AS(gemv_model(10, -1), std::invalid_argument);
}

TEST_CASE("SpMV CSR: Q = (nnz+m+n)D + (nnz+m+1)Iidx, I ~ 2/(D+Iidx) = 1/6 (Eq. 10)") {
  const KernelModel k = spmv_csr_model(1000, 2000, 30000, 4);
  CHECK(k.work_flop == 60000);
  CHECK(k.traffic_bytes == (30000.0 + 1000 + 2000) * 8 + (30000.0 + 1000 + 1) * 4);
  CHECK(k.intensity() == ceiling_test::Rel(60000.0 / 388004));
  // Many non-zeros per row: the approximation of Eq. 10.
  CHECK(spmv_csr_model(1e6, 1e6, 1e9, 4).intensity() == ceiling_test::Rel(1.0 / 6).epsilon(1e-2));
  CHECK(spmv_csr_model(1e6, 1e6, 1e9, 8).intensity() == ceiling_test::Rel(1.0 / 8).epsilon(1e-2));
  CHECK(spmv_csr_model(1e6, 1e6, 1e9, 4).intensity() < gemv_model(1e6, 1e6).intensity());
  CHECK_THROWS_AS(spmv_csr_model(10, 10, 101, 4), std::invalid_argument);  // nnz > mn
  CHECK_THROWS_AS(spmv_csr_model(10, 10, 50, 0), std::invalid_argument);
}

TEST_CASE("generic SpMV (Eq. 9) reduces to CSR with its index count") {
  const double m = 1000, n = 2000, nnz = 30000;
  const KernelModel csr = spmv_csr_model(m, n, nnz, 4);
  const KernelModel gen = spmv_generic_model(m, n, nnz, nnz + m + 1, 4, 0, 0);
  CHECK(gen.kind == "spmv");
  CHECK(gen.traffic_bytes == csr.traffic_bytes);
  CHECK(gen.work_flop == csr.work_flop);
  // Packed values (beta Z) add their bytes.
  CHECK(spmv_generic_model(m, n, nnz, 0, 4, 500, 16).traffic_bytes == (nnz + m + n) * 8 + 500 * 16);
}

TEST_CASE("stencil: W = 2|S|t, Q = 2D per point, I = |S|t/D (Eq. 12-13)") {
  const KernelModel k = stencil_model(5, 2, 100, 200, 0, 1);
  CHECK(k.work_flop == 2.0 * 5 * 100 * 200);
  CHECK(k.traffic_bytes == 2.0 * 8 * 100 * 200);
  CHECK(k.intensity() == 5.0 / 8);  // 2d5pt
  CHECK(k.intensity_one_step == 5.0 / 8);
  const KernelModel t3 = stencil_model(5, 2, 100, 200, 0, 3);
  CHECK(t3.intensity() == 15.0 / 8);
  CHECK(t3.temporal_steps == 3);
  CHECK(t3.intensity_one_step == 5.0 / 8);
  CHECK(t3.traffic_bytes == k.traffic_bytes);
  const KernelModel k3 = stencil_model(27, 3, 64, 64, 64, 1);
  CHECK(k3.intensity() == 27.0 / 8);
  CHECK(k3.working_set_bytes == 2.0 * 8 * 64 * 64 * 64);
  CHECK_THROWS_AS(stencil_model(5, 4, 10, 10, 10, 1), std::invalid_argument);
  CHECK_THROWS_AS(stencil_model(7, 3, 10, 10, 0, 1), std::invalid_argument);  // 3-D needs nz
  CHECK_THROWS_AS(stencil_model(5, 2, 10, 10, 7, 1), std::invalid_argument);  // 2-D takes none
  CHECK_THROWS_AS(stencil_model(5, 2, 10, 10, 0, 0), std::invalid_argument);
}

TEST_CASE("GEMM and custom") {
  const KernelModel g = gemm_model(64, 32, 16);
  CHECK(g.work_flop == 2.0 * 64 * 32 * 16);
  CHECK(g.traffic_bytes == (64.0 * 16 + 16 * 32 + 2 * 64 * 32) * 8);
  CHECK(g.working_set_bytes == (64.0 * 16 + 16 * 32 + 64 * 32) * 8);
  const KernelModel c = custom_model(2e9, 8e9, Precision::fp32);
  CHECK(c.intensity() == 0.25);
  CHECK(c.precision == Precision::fp32);
  CHECK(c.working_set_bytes == 8e9);
  CHECK_THROWS_AS(custom_model(0, 1), std::invalid_argument);
}

TEST_CASE("work, traffic and size texts") {
  CHECK(parse_work_flop("2 GFLOP") == 2e9);
  CHECK(parse_work_flop("1.5 TOP") == 1.5e12);
  CHECK(parse_work_flop("2e9") == 2e9);
  CHECK_THROWS_AS(parse_work_flop("2 GFLOP/s"), UnitError);
  CHECK_THROWS_AS(parse_work_flop("2 GB"), UnitError);
  CHECK_THROWS_AS(parse_work_flop("-3"), UnitError);
  CHECK(message_of([] { parse_work_flop("2 GFLOP/s", "--work"); }).find("--work") != std::string::npos);
  CHECK(parse_traffic_bytes("8 GB") == 8e9);
  CHECK(parse_traffic_bytes("1 GiB") == 1073741824.0);
  CHECK(parse_traffic_bytes("4096") == 4096);
  CHECK_THROWS_AS(parse_traffic_bytes("8 GB/s"), UnitError);
  CHECK(message_of([] { parse_traffic_bytes("8 TFLOP/s", "--traffic"); }).find("--traffic") != std::string::npos);
  CHECK(parse_size("1e9", "--n") == 1e9);
  CHECK(parse_size("4096", "--n") == 4096);
  CHECK_THROWS_AS(parse_size("1.5", "--n"), std::invalid_argument);
  CHECK_THROWS_AS(parse_size("0", "--n"), std::invalid_argument);
  CHECK_THROWS_AS(parse_size("4 KiB", "--n"), std::invalid_argument);
  CHECK(message_of([] { parse_size("x", "--nnz"); }).find("--nnz") != std::string::npos);
}

TEST_CASE("kernel files load") {
  const KernelModel c = load_kernel_file(kernel_file("custom-ok.yaml"));
  CHECK(c.kind == "custom");
  CHECK(c.work_flop == 2e9);
  CHECK(c.traffic_bytes == 8e9);
  CHECK(c.working_set_bytes == 64.0 * (1 << 20));
  CHECK(c.description == "my fused kernel");
  const KernelModel s = load_kernel_file(kernel_file("stencil-2d5pt.yaml"));
  CHECK(s.kind == "stencil");
  CHECK(s.temporal_steps == 3);
  CHECK(s.intensity() == 15.0 / 8);
  CHECK(s.work_flop == 2.0 * 5 * 3 * 9000 * 9000);
  const KernelModel sp = load_kernel_file(kernel_file("spmv-csr.yaml"));
  CHECK(sp.traffic_bytes == spmv_csr_model(1e6, 1e6, 2e7, 8).traffic_bytes);
  const KernelModel h = load_kernel_file(kernel_file("scale-tc.yaml"));
  CHECK(h.precision == Precision::fp16);
  CHECK(h.traffic_bytes == 4e9);
  CHECK(h.tensor_core_fraction == 0.5);
}

TEST_CASE("broken kernel files name the file, line and key") {
  struct Case {
    const char* file;
    int line;
    const char* key;
    const char* says;
  };
  const Case cases[] = {
      {"bad-unknown-key.yaml", 4, "nnz", "unknown key"},
      {"bad-missing-size.yaml", 2, "n", "missing"},
      {"bad-work-rate.yaml", 2, "work", "rate"},
      {"bad-traffic-unit.yaml", 3, "traffic", "expected bytes"},
      {"bad-kind.yaml", 3, "kind", "unknown kind 'fft'"},
      {"bad-size.yaml", 2, "n", "whole number"},
      {"bad-dims.yaml", 3, "dims", "2 or 3"},
      {"bad-syntax.yaml", 3, "", "YAML syntax"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.file);
    try {
      load_kernel_file(kernel_file(c.file));
      FAIL("no error");
    } catch (const KernelFileError& e) {
      CHECK(e.line() == c.line);
      CHECK(e.key() == c.key);
      const std::string what = e.what();
      CHECK(what.find(c.says) != std::string::npos);
      CHECK(what.find(std::string(c.file) + ":" + std::to_string(c.line) + ":") != std::string::npos);
    }
  }
  CHECK_THROWS_AS(load_kernel_file(kernel_file("does-not-exist.yaml")), KernelFileError);
}

TEST_CASE("predict: A100 GEMV workload limit < 1.05, memory-bound limit 1.33") {
  const Prediction p = predict(a100(), gemv_model(8192, 8192));
  CHECK(p.memory_level == "dram");
  CHECK(p.memory_level_reason.find("> half of L2 (20 MiB)") != std::string::npos);
  CHECK(p.balance_cuda_core == ceiling_test::Rel(5.0));
  CHECK(p.balance_tensor_core == ceiling_test::Rel(19.5 / 1.94));
  CHECK(p.memory_bound);
  CHECK(p.alpha == ceiling_test::Rel(19.5 / 9.7));
  CHECK(p.speedup_workload_limit < 1.05);
  CHECK(p.speedup_workload_limit == ceiling_test::Rel(1.05).epsilon(1e-3));
  CHECK(p.speedup_memory_bound_limit == ceiling_test::Rel(1.3356).epsilon(1e-4));
  CHECK(p.speedup_kernel_bound < p.speedup_workload_limit);
  CHECK(p.speedup_kernel_bound < p.speedup_memory_bound_limit);
  // Eq. 21 is exact when Tothers = 0: the un-overlapped speedup equals the Eq. 22 bound.
  CHECK(p.speedup_exact_unoverlapped == ceiling_test::Rel(p.speedup_kernel_bound));
  CHECK(p.t_memory / p.t_compute_cuda_core == ceiling_test::Rel(p.balance_cuda_core / p.intensity));
  CHECK(p.t_overlapped == p.t_memory);
  CHECK(p.t_unoverlapped == ceiling_test::Rel(p.t_memory + p.t_compute_cuda_core));
  CHECK(p.attainable_cuda_core == ceiling_test::Rel(1.94e12 * p.intensity));
  CHECK(p.source == "spec");
  CHECK_FALSE(p.temporal_blocking_min_steps.has_value());
}

TEST_CASE("predict: tensor-core SCALE uses 1/8 of FP64 TC peak: 2.4 (A100), 8.37 (GH200) TFLOP/s") {
  const Prediction a = predict(a100(), scale_model(1e9));
  CHECK(a.tensor_core_effective_peak == ceiling_test::Rel(2.4375e12));
  CHECK(a.peak_tensor_core == 19.5e12);
  CHECK(a.alpha == ceiling_test::Rel(2.4375 / 9.7));
  CHECK(a.tensor_core_effective_peak < a.peak_cuda_core);  // "lower than CUDA core performance"
  CHECK(a.speedup_kernel_bound < 1);
  const Prediction g = predict(gh200(), scale_model(1e9));
  CHECK(g.tensor_core_effective_peak == ceiling_test::Rel(8.375e12));
  CHECK(std::floor(g.tensor_core_effective_peak / 1e10) / 100 == ceiling_test::Rel(8.37));
  CHECK(g.intensity == 1.0 / 16);
  CHECK(g.memory_level == "dram");
  // Memory-bound either way: both units reach BW * I.
  CHECK(g.attainable_cuda_core == ceiling_test::Rel(4e12 / 16));
  CHECK(g.attainable_tensor_core == ceiling_test::Rel(4e12 / 16));
  CHECK(g.t_memory == ceiling_test::Rel(16e9 / 4e12));
  CHECK(g.t_compute_tensor_core == ceiling_test::Rel(1e9 / 8.375e12));
}

TEST_CASE("predict: the memory level that bounds the working set") {
  HardwareDescriptor hw = gh200();
  // 1e6 elements: 16 MB <= 25 MiB, but without an L2 bandwidth DRAM is used and we say why.
  Prediction p = predict(hw, scale_model(1e6));
  CHECK(p.memory_level == "dram");
  CHECK(p.memory_level_reason.find("no L2 bandwidth") != std::string::npos);
  hw.memory[MemoryLevelKind::l2].bandwidth = spec(Dimension::bytes_per_second, 10e12, "test");
  p = predict(hw, scale_model(1e6));
  CHECK(p.memory_level == "l2");
  CHECK(p.memory_level_reason == "working set 16 MB <= half of L2 (25 MiB)");
  CHECK(p.bandwidth == 10e12);
  CHECK(p.balance_cuda_core == ceiling_test::Rel(3.4));
  // Exactly half the L2 still fits; one byte more does not.
  KernelModel k = custom_model(1e6, 1e6);
  k.working_set_bytes = 25.0 * (1 << 20);
  CHECK(predict(hw, k).memory_level == "l2");
  k.working_set_bytes += 1;
  CHECK(predict(hw, k).memory_level == "dram");
  hw.memory.erase(MemoryLevelKind::l2);
  p = predict(hw, scale_model(1e6));
  CHECK(p.memory_level == "dram");
  CHECK(p.memory_level_reason.find("no L2 capacity") != std::string::npos);
}

TEST_CASE("predict: a missing number names the descriptor field") {
  HardwareDescriptor hw = a100();
  hw.id = "h800-pcie";
  hw.compute[ComputeUnit::tensor_core].erase(Precision::fp64);
  CHECK(message_of([&] { predict(hw, scale_model(1e9)); }) == "compute.tensor_core.fp64 is missing in h800-pcie");
  // An override stands in for the missing number.
  PredictOptions o;
  o.peak_tensor_core_override = 50e12;
  CHECK(predict(hw, scale_model(1e9), o).peak_tensor_core == 50e12);
  CHECK(message_of([&] { predict(a100(), scale_model(1e9, Precision::fp32)); }) ==
        "compute.cuda_core.fp32 is missing in a100-80gb");
  HardwareDescriptor nobw = a100();
  nobw.memory.erase(MemoryLevelKind::dram);
  CHECK(message_of([&] { predict(nobw, scale_model(1e9)); }) == "memory.dram.bandwidth is missing in a100-80gb");
}

TEST_CASE("predict: sources and overrides") {
  HardwareDescriptor hw = gh200();
  MeasuredValue m;
  m.median = 3.7e12;
  m.probe = "dram-bandwidth";
  m.repeats = 20;
  hw.memory[MemoryLevelKind::dram].bandwidth.measured = m;
  Prediction p = predict(hw, scale_model(1e9));  // measured where present, else spec
  CHECK(p.bandwidth == 3.7e12);
  CHECK(p.source == "mixed");
  bool saw_probe = false;
  for (const auto& line : p.provenance) saw_probe |= line.find("measured (probe dram-bandwidth") != std::string::npos;
  CHECK(saw_probe);
  PredictOptions o;
  o.source = SourcePreference::spec;
  p = predict(hw, scale_model(1e9), o);
  CHECK(p.bandwidth == 4e12);
  CHECK(p.source == "spec");
  o.source = SourcePreference::measured;
  CHECK(message_of([&] { predict(hw, scale_model(1e9), o); }).find("compute.cuda_core.fp64 has no measured value") !=
        std::string::npos);
  o = {};
  o.bandwidth_override = 1e12;
  o.peak_cuda_core_override = 9.99e12;
  o.peak_tensor_core_override = 20e12;
  p = predict(hw, scale_model(1e9), o);
  CHECK(p.source == "override");
  CHECK(p.balance_cuda_core == ceiling_test::Rel(9.99));
  o.bandwidth_override = -1;
  CHECK_THROWS_AS(predict(hw, scale_model(1e9), o), std::invalid_argument);
}

TEST_CASE("predict: 2d5pt at balance 9.99 needs 16 temporal steps (Eq. 14)") {
  PredictOptions o;
  o.peak_cuda_core_override = 9.99e12;
  o.bandwidth_override = 1e12;
  const Prediction p = predict(gh200(), stencil_model(5, 2, 9000, 9000, 0, 1), o);
  CHECK(p.intensity == 0.625);
  CHECK(p.balance_cuda_core == ceiling_test::Rel(9.99));
  REQUIRE(p.temporal_blocking_min_steps.has_value());
  CHECK(*p.temporal_blocking_min_steps == 16);
  CHECK(*p.temporal_blocking_threshold == ceiling_test::Rel(15.984));
  // With t = 16 the stencil is compute-bound, with t = 15 still memory-bound.
  CHECK_FALSE(predict(gh200(), stencil_model(5, 2, 9000, 9000, 0, 16), o).memory_bound);
  CHECK(predict(gh200(), stencil_model(5, 2, 9000, 9000, 0, 15), o).memory_bound);
  // The threshold is the same whatever t the kernel already has.
  CHECK(*predict(gh200(), stencil_model(5, 2, 9000, 9000, 0, 3), o).temporal_blocking_min_steps == 16);
}

TEST_CASE("predict: TF32 kernels compare against FP32 CUDA cores") {
  HardwareDescriptor hw = gh200();
  hw.compute[ComputeUnit::cuda_core][Precision::fp32] = spec(Dimension::flop_per_second, 67e12);
  hw.compute[ComputeUnit::tensor_core][Precision::tf32] = spec(Dimension::flop_per_second, 494e12);
  const Prediction p = predict(hw, gemm_model(8192, 8192, 8192, Precision::tf32));
  CHECK(p.peak_cuda_core == 67e12);
  CHECK(p.peak_tensor_core == 494e12);
  CHECK_FALSE(p.memory_bound);
  CHECK(p.speedup_exact_unoverlapped > 1);
}

TEST_CASE("predict: FP8 kernels compare against FP16 CUDA cores (no FP8 arithmetic there), and say so") {
  HardwareDescriptor hw = gh200();
  hw.compute[ComputeUnit::cuda_core][Precision::fp16] = spec(Dimension::flop_per_second, 134e12);
  hw.compute[ComputeUnit::tensor_core][Precision::fp8] = spec(Dimension::flop_per_second, 1979e12);
  hw.compute[ComputeUnit::cuda_core].erase(Precision::fp8);
  const Prediction p = predict(hw, gemm_model(8192, 8192, 8192, Precision::fp8));
  CHECK(p.peak_cuda_core == 134e12);
  CHECK(p.peak_tensor_core == 1979e12);
  CHECK(p.t_compute_tensor_core == ceiling_test::Rel(2.0 * 8192 * 8192 * 8192 / 1979e12));
  CHECK_FALSE(p.memory_bound);
  bool said = false;
  for (const auto& line : p.provenance) said |= line.find("CUDA cores have no fp8") != std::string::npos;
  CHECK(said);
  // A descriptor that does have an FP8 CUDA-core figure (a what-if) is taken as it is.
  hw.compute[ComputeUnit::cuda_core][Precision::fp8] = spec(Dimension::flop_per_second, 1e12);
  CHECK(predict(hw, gemm_model(8192, 8192, 8192, Precision::fp8)).peak_cuda_core == 1e12);
}

TEST_CASE("speedup semantics per regime: alpha <= 1, memory-bound, compute-bound (issue 12)") {
  // SCALE on A100 tensor cores: alpha = 0.25; Eq. 22 < 1 is a lower bound, the top is the overlapped 1.
  const Prediction s = predict(a100(), scale_model(1e9));
  CHECK(s.speedup_regime == "alpha<=1");
  CHECK(s.speedup_overlapped == 1.0);
  CHECK(s.speedup_upper_bound == 1.0);
  CHECK(s.speedup_lower_bound == ceiling_test::Rel(s.speedup_kernel_bound));
  CHECK(s.speedup_note.find("cannot speed this kernel up") != std::string::npos);
  CHECK(s.balance_tensor_core_effective == ceiling_test::Rel(2.4375e12 / 1.94e12));
  CHECK(s.balance_tensor_core == ceiling_test::Rel(19.5 / 1.94));
  // GEMV on A100: memory-bound, alpha ~ 2: overlapped S = 1, Eq. 22 is the top and below Eq. 23.
  const Prediction g = predict(a100(), gemv_model(8192, 8192));
  CHECK(g.speedup_regime == "memory-bound");
  CHECK(g.speedup_overlapped == 1.0);
  CHECK(g.speedup_upper_bound == ceiling_test::Rel(g.speedup_kernel_bound));
  CHECK(g.speedup_upper_bound < g.speedup_memory_bound_limit);
  // GEMM 4096^3 FP64 on A100: compute-bound; the overlapped min(alpha, I/B) = 2.010 exceeds Eq. 22 = 1.972.
  const Prediction m = predict(a100(), gemm_model(4096, 4096, 4096));
  CHECK(m.speedup_regime == "compute-bound");
  CHECK(m.speedup_kernel_bound == ceiling_test::Rel(1.972).epsilon(1e-3));
  CHECK(m.speedup_overlapped == ceiling_test::Rel(19.5 / 9.7));
  CHECK(m.speedup_upper_bound == ceiling_test::Rel(19.5 / 9.7));
  CHECK(m.speedup_upper_bound > m.speedup_kernel_bound);
  CHECK(m.speedup_note.find("do not bound this one") != std::string::npos);
  // 2d49pt (I = 49/8 > B = 5): compute-bound, where Eq. 23 < Eq. 22 and neither is the top.
  const Prediction st = predict(a100(), stencil_model(49, 2, 4096, 4096, 0, 1));
  CHECK(st.speedup_regime == "compute-bound");
  CHECK(st.speedup_memory_bound_limit < st.speedup_kernel_bound);
  CHECK(st.speedup_upper_bound == ceiling_test::Rel(std::max(st.speedup_overlapped, st.speedup_kernel_bound)));
}

TEST_CASE("predict: GEMM's CUDA-core ceiling is the outer-product rate where the descriptor has it (issue 14)") {
  HardwareDescriptor hw = gh200();
  const KernelModel g = gemm_model(8192, 8192, 8192);
  CHECK(g.outer_product);
  CHECK_FALSE(scale_model(1e9).outer_product);
  CHECK_FALSE(gemv_model(4096, 4096).outer_product);
  // Without the figure: the pipe peak, as before.
  const Prediction before = predict(hw, g);
  CHECK(before.peak_cuda_core == 34.0e12);
  MeasuredValue m;
  m.median = 29.9e12;
  m.min = 29.8e12;
  m.max = 30.0e12;
  m.repeats = 7;
  m.probe = "cuda-core";
  m.date = "2026-11-26T01:00:00Z";
  hw.set_measured("compute.cuda_core_outer_product.fp64", m);
  const Prediction p = predict(hw, g);
  CHECK(p.peak_cuda_core == 29.9e12);
  CHECK(p.peak_tensor_core == 67.0e12);
  CHECK(p.t_compute_cuda_core == ceiling_test::Rel(2.0 * 8192.0 * 8192 * 8192 / 29.9e12));
  CHECK(p.alpha == ceiling_test::Rel(67.0 / 29.9));
  // Compute-bound: the top of the speedup is alpha against the outer-product rate.
  CHECK(p.speedup_upper_bound == ceiling_test::Rel(67.0 / 29.9));
  bool said = false, path = false;
  for (const auto& line : p.provenance) {
    said |= line.find("outer-product rate") != std::string::npos;
    path |= line.rfind("compute.cuda_core_outer_product.fp64 = ", 0) == 0;
  }
  CHECK(said);
  CHECK(path);
  // Other kinds keep the pipe peak; a spec-only preference does not take a measured-only figure.
  CHECK(predict(hw, scale_model(1e9)).peak_cuda_core == 34.0e12);
  PredictOptions spec_only;
  spec_only.source = SourcePreference::spec;
  CHECK(predict(hw, g, spec_only).peak_cuda_core == 34.0e12);
  // A what-if CUDA-core peak overrides both.
  PredictOptions what_if;
  what_if.peak_cuda_core_override = 20e12;
  CHECK(predict(hw, g, what_if).peak_cuda_core == 20e12);
}

TEST_CASE("predict: GEMM's CUDA-core ceiling is the GEMM loop's rate where measured, before the outer product's") {
  HardwareDescriptor hw = gh200();
  const KernelModel g = gemm_model(8192, 8192, 8192);
  MeasuredValue op;
  op.median = 29.9e12;
  op.min = 29.8e12;
  op.max = 30.0e12;
  op.repeats = 7;
  op.probe = "cuda-core";
  op.date = "2026-11-26T01:00:00Z";
  hw.set_measured("compute.cuda_core_outer_product.fp64", op);
  MeasuredValue gl = op;
  gl.median = 28.4e12;
  gl.min = 28.3e12;
  gl.max = 28.5e12;
  gl.probe = "gemm-loop";
  hw.set_measured("compute.cuda_core_gemm_loop.fp64", gl);
  const Prediction p = predict(hw, g);
  CHECK(p.peak_cuda_core == 28.4e12);
  CHECK(p.t_compute_cuda_core == ceiling_test::Rel(2.0 * 8192.0 * 8192 * 8192 / 28.4e12));
  CHECK(p.alpha == ceiling_test::Rel(67.0 / 28.4));
  CHECK(p.speedup_upper_bound == ceiling_test::Rel(67.0 / 28.4));
  bool said = false, path = false, outer_path = false;
  for (const auto& line : p.provenance) {
    said |= line.find("GEMM loop's rate") != std::string::npos;
    path |= line.rfind("compute.cuda_core_gemm_loop.fp64 = ", 0) == 0;
    outer_path |= line.rfind("compute.cuda_core_outer_product.fp64 = ", 0) == 0;
  }
  CHECK(said);
  CHECK(path);
  CHECK_FALSE(outer_path);
  // Only the GEMM kind; without the GEMM-loop figure the outer product's again.
  CHECK(predict(hw, scale_model(1e9)).peak_cuda_core == 34.0e12);
  HardwareDescriptor no_loop = hw;
  no_loop.gemm_loop.clear();
  CHECK(predict(no_loop, g).peak_cuda_core == 29.9e12);
  // A spec-only preference takes neither measured figure; a what-if peak overrides both.
  PredictOptions spec_only;
  spec_only.source = SourcePreference::spec;
  CHECK(predict(hw, g, spec_only).peak_cuda_core == 34.0e12);
  PredictOptions what_if;
  what_if.peak_cuda_core_override = 20e12;
  CHECK(predict(hw, g, what_if).peak_cuda_core == 20e12);
}

TEST_CASE("predict: the intensity kind's tensor-core ceiling is the mma.sync rate where the descriptor has it (issue 12)") {
  HardwareDescriptor hw = gh200();
  const KernelModel k = intensity_model(16.0 * 1024 * 1024, 1024, Precision::fp64);
  CHECK(k.mma_sync_ceiling);
  CHECK_FALSE(gemm_model(4096, 4096, 4096).mma_sync_ceiling);
  // Without the figure: compute.tensor_core.fp64, as before. (On Hopper the two differ for fp16, where
  // wgmma is the best instruction; the plumbing is the same for every precision.)
  const Prediction before = predict(hw, k);
  const double tc = before.peak_tensor_core;
  REQUIRE(tc > 0);
  MeasuredValue m;
  m.median = 0.7 * tc;
  m.min = 0.69 * tc;
  m.max = 0.71 * tc;
  m.repeats = 5;
  m.probe = "mma";
  m.date = "2026-11-26T21:00:00Z";
  hw.set_measured("compute.tensor_core_mma_sync.fp64", m);
  const Prediction p = predict(hw, k);
  CHECK(p.peak_tensor_core == ceiling_test::Rel(0.7 * tc));
  CHECK(p.peak_cuda_core == before.peak_cuda_core);
  CHECK(p.t_compute_tensor_core == ceiling_test::Rel(before.t_compute_tensor_core / 0.7));
  CHECK(p.alpha == ceiling_test::Rel(before.alpha * 0.7));
  bool said = false, path = false;
  for (const auto& line : p.provenance) {
    said |= line.find("mma.sync rate") != std::string::npos;
    path |= line.rfind("compute.tensor_core_mma_sync.fp64 = ", 0) == 0;
  }
  CHECK(said);
  CHECK(path);
  // GEMM keeps the best instruction (wgmma tiles fit it); a what-if tensor-core peak overrides both.
  CHECK(predict(hw, gemm_model(4096, 4096, 4096)).peak_tensor_core == ceiling_test::Rel(tc));
  PredictOptions what_if;
  what_if.peak_tensor_core_override = 100e12;
  CHECK(predict(hw, k, what_if).peak_tensor_core == 100e12);
}

TEST_CASE("predict: the sustained rate under the power limit is stated beside a measured tensor-core ceiling (issue 14)") {
  HardwareDescriptor hw = gh200();
  MeasuredValue ceiling;
  ceiling.median = 950e12;
  ceiling.repeats = 10;
  ceiling.probe = "wgmma";
  ceiling.date = "2026-11-26T01:00:00Z";
  ceiling.sm_clock_hz = 1.74e9;
  hw.set_measured("compute.tensor_core.fp16", ceiling);
  hw.compute[ComputeUnit::cuda_core][Precision::fp16] = spec(Dimension::flop_per_second, 134e12);
  TensorInstruction ti;
  ti.api = "wgmma";
  ti.shape = "m64n256k16";
  ti.input = Precision::fp16;
  ti.accumulate = Precision::fp32;
  ti.throughput = Field{Dimension::flop_per_second};
  ti.throughput.measured = ceiling;
  hw.tensor_instructions.push_back(ti);
  const auto note = [&] {
    std::string found;
    for (const auto& line : predict(hw, gemm_model(8192, 8192, 8192, Precision::fp16)).provenance)
      if (line.rfind("sustained: ", 0) == 0) found = line;
    return found;
  };
  CHECK(note().empty());  // no power reading yet
  MeasuredValue watts;
  watts.median = 684;
  watts.repeats = 14;
  watts.probe = "wgmma";
  watts.date = "2026-11-26T01:00:00Z";
  watts.sm_clock_hz = 1.695e9;
  MeasuredValue rate = watts;
  rate.median = rate.min = rate.max = 855e12;  // 90% of the ceiling
  hw.tensor_instructions.back().power = Field{Dimension::watts};
  hw.tensor_instructions.back().power.measured = watts;
  hw.tensor_instructions.back().sustained = Field{Dimension::flop_per_second};
  hw.tensor_instructions.back().sustained.measured = rate;
  const std::string line = note();
  CAPTURE(line);
  CHECK(line.find("wgmma.m64n256k16.fp16.fp32") != std::string::npos);
  CHECK(line.find("= 90% of the ceiling") != std::string::npos);
  CHECK(line.find("855 TFLOP/s") != std::string::npos);
  CHECK(line.find("684 W") != std::string::npos);
  // The ceiling itself is not lowered (a short kernel runs at the timed clock).
  CHECK(predict(hw, gemm_model(8192, 8192, 8192, Precision::fp16)).peak_tensor_core == 950e12);
  // A sustained rate within 1% of the ceiling says nothing; another instruction's reading neither.
  hw.tensor_instructions.back().sustained.measured->median = 945e12;
  CHECK(note().empty());
  hw.tensor_instructions.back().sustained.measured->median = 855e12;
  hw.tensor_instructions.back().throughput.measured->median = 940e12;
  CHECK(note().empty());
}
