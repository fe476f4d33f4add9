// `ceiling predict` end to end: the paper's worked examples through the CLI's JSON, and its errors.
#include <doctest/doctest.h>

#include "approx.hpp"

#include "cli_run.hpp"
#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace {

using Run = ceiling::test::CliRun;

Run predict(const std::string& args, bool with_stderr = false) {
  return ceiling::test::run_ceiling("predict " + args, with_stderr);
}

nlohmann::json predict_json(const std::string& args) {
  const Run r = predict(args + " --json");
  INFO("ceiling predict " << args << " --json\n" << r.out);
  REQUIRE(r.rc == 0);
  return nlohmann::json::parse(r.out);
}

std::string kernel_file(const std::string& name) {
  return std::string("'") + CEILING_SOURCE_DIR + "/tests/data/kernels/" + name + "'";
}

double round2(double x) { return std::round(x * 100) / 100; }

}  // namespace

TEST_CASE("cli predict: A100 GEMV, S < 1.05 (Eq. 24) and S < 1.33 (Eq. 23)") {
  const auto j = predict_json("--hw a100-80gb --kernel gemv --m 8192 --n 8192 --source spec");
  CHECK(j["source"] == "spec");
  CHECK(j["bound"] == "memory");
  CHECK(j["memory_level"] == "dram");
  CHECK(j["balance_flop_per_byte"]["cuda_core"].get<double>() == ceiling_test::Rel(9.7 / 1.94));
  CHECK(j["intensity_flop_per_byte"].get<double>() < 0.25);
  const auto& s = j["tensor_core_speedup"];
  CHECK(s["workload_limit"].get<double>() < 1.05);
  CHECK(s["workload_limit"].get<double>() == ceiling_test::Rel(1.05).epsilon(1e-3));
  CHECK(s["alpha"].get<double>() == ceiling_test::Rel(19.5 / 9.7));
  CHECK(s["memory_bound_limit"].get<double>() == ceiling_test::Rel(4.0 / 3).epsilon(0.01));
  CHECK(s["kernel_bound"].get<double>() < s["workload_limit"].get<double>());
  // alpha exactly 2 (19.4 / 9.7): the paper's 1.33.
  const auto j2 = predict_json("--hw a100-80gb --kernel gemv --m 8192 --n 8192 --source spec --peak-tensor-core '19.4 TFLOP/s'");
  CHECK(j2["tensor_core_speedup"]["alpha"].get<double>() == ceiling_test::Rel(2.0));
  CHECK(j2["tensor_core_speedup"]["memory_bound_limit"].get<double>() == ceiling_test::Rel(4.0 / 3));
  CHECK(round2(j2["tensor_core_speedup"]["memory_bound_limit"].get<double>()) == ceiling_test::Rel(1.33));
  CHECK(j2["source"] == "mixed");
}

TEST_CASE("cli predict: GH200 memory-bound limit rounds to 1.33") {
  const auto j = predict_json("--hw gh200 --kernel gemv --m 8192 --n 8192 --source spec");
  CHECK(round2(j["tensor_core_speedup"]["memory_bound_limit"].get<double>()) == ceiling_test::Rel(1.33));
  CHECK(j["balance_flop_per_byte"]["cuda_core"].get<double>() == ceiling_test::Rel(34.0 / 4.0));
}

TEST_CASE("cli predict: tensor-core SCALE at 1/8 of FP64 TC peak: 2.4 (A100), 8.37 (GH200) TFLOP/s") {
  const auto a = predict_json("--hw a100-80gb --kernel scale --n 1e9 --source spec");
  CHECK(a["tensor_core_effective_peak_flop_per_s"].get<double>() == ceiling_test::Rel(2.4375e12));
  CHECK(a["kernel"]["tensor_core_fraction"].get<double>() == 0.125);
  CHECK(a["intensity_flop_per_byte"].get<double>() == 0.0625);
  CHECK(a["bound"] == "memory");
  CHECK(a["tensor_core_speedup"]["kernel_bound"].get<double>() < 1);
  const auto g = predict_json("--hw gh200 --kernel scale --n 1e9 --source spec");
  CHECK(g["tensor_core_effective_peak_flop_per_s"].get<double>() == ceiling_test::Rel(8.375e12));
  CHECK(g["attainable_flop_per_s"]["cuda_core"].get<double>() == ceiling_test::Rel(4e12 / 16));
  CHECK(g["attainable_flop_per_s"]["tensor_core"].get<double>() == ceiling_test::Rel(4e12 / 16));
  CHECK(g["time_s"]["memory"].get<double>() == ceiling_test::Rel(16e9 / 4e12));
  CHECK(g["time_s"]["overlapped"].get<double>() == ceiling_test::Rel(16e9 / 4e12));
  CHECK(g["time_s"]["compute_tensor_core"].get<double>() == ceiling_test::Rel(1e9 / 8.375e12));
  CHECK(g["temporal_blocking_min_steps"].is_null());
}

TEST_CASE("cli predict: a stencil's tensor-core formulations, their useful share and the alpha it leaves") {
  // What-if peaks: P(CC) 10, P(TC) 20 TFLOP/s, 1 TB/s. 2d5pt at t = 3 (I = 1.875, B = 10).
  const std::string what_if = "--peak-cuda-core '10 TFLOP/s' --peak-tensor-core '20 TFLOP/s' --bandwidth '1 TB/s'";
  const auto j = predict_json("--hw gh200 --kernel stencil --shape 2d5pt --nx 9000 --ny 9000 --steps 3 " + what_if);
  const auto& f = j["stencil_shape"]["tensor_core_formulations"];
  REQUIRE(f.size() == 2);
  CHECK(f[0]["variant"] == "plain-mma");
  CHECK(f[0]["mma_per_block"] == 7);  // 3 column lines: the centre over dy in [-1, 1] 3 chunks, two single points 2 each
  CHECK(f[0]["useful_fraction"].get<double>() == ceiling_test::Rel(5.0 * 128 / (7 * 512)));
  CHECK(f[0]["alpha"].get<double>() == ceiling_test::Rel(2 * 5.0 * 128 / (7 * 512)));
  CHECK(f[1]["variant"] == "toeplitz-mma");
  CHECK(f[1]["mma_per_block"] == 9);  // 3 row lines x 3 chunks of the 12 padded columns
  CHECK(f[1]["alpha"].get<double>() == ceiling_test::Rel(2 * 5.0 * 128 / (9 * 512)));
  for (const auto& x : f) {
    // alpha < 1 on a memory-bound kernel: un-overlapped below 1, overlapped exactly 1.
    CHECK(x["speedup_bound_eq22"].get<double>() < 1);
    CHECK(x["speedup_upper_bound"].get<double>() == ceiling_test::Rel(1.0));
  }
  // A shape dense enough, on a machine whose tensor cores are 8x its CUDA cores, leaves alpha > 1 (2d49pt:
  // 28 mma per block, 43.75% useful -> alpha 3.5); one pass per step keeps plain-mma at I / t.
  const auto d = predict_json("--hw gh200 --kernel stencil --shape 2d49pt --nx 9000 --ny 9000 --steps 2 "
                              "--peak-cuda-core '10 TFLOP/s' --peak-tensor-core '80 TFLOP/s' --bandwidth '1 TB/s'");
  const auto& g = d["stencil_shape"]["tensor_core_formulations"];
  REQUIRE(g.size() == 2);
  CHECK(g[0]["alpha"].get<double>() == ceiling_test::Rel(3.5));
  const double i_pass = 49 * 2 / 16.0, b = 10;  // plain-mma: one pass at I = 6.125 < B
  CHECK(g[0]["speedup_bound_eq22"].get<double>() == ceiling_test::Rel(1 + (3.5 - 1) / (1 + 3.5 * b / i_pass)));
  CHECK(g[1]["speedup_bound_eq22"].get<double>() == ceiling_test::Rel(1 + (3.5 - 1) / (1 + 3.5 * b / (2 * i_pass))));
  // The text names them; other precisions have none.
  const Run t = predict("--hw gh200 --kernel stencil --shape 2d5pt --nx 9000 --ny 9000 --steps 3 " + what_if);
  CHECK(t.out.find("tensor-core formulations of this shape") != std::string::npos);
  CHECK(t.out.find("plain-mma") != std::string::npos);
  const auto fp32 = predict_json("--hw gh200 --kernel stencil --shape 2d5pt --nx 9000 --ny 9000 --precision fp32 " + what_if);
  CHECK(fp32["stencil_shape"]["tensor_core_formulations"].empty());
}

TEST_CASE("cli predict: 2d5pt at balance 9.99 needs 16 temporal steps (Eq. 14)") {
  const std::string what_if = "--peak-cuda-core '9.99 TFLOP/s' --bandwidth '1 TB/s'";
  const auto j = predict_json("--hw gh200 --kernel stencil --points 5 --dims 2 --nx 9000 --ny 9000 " + what_if);
  CHECK(j["intensity_flop_per_byte"].get<double>() == 0.625);
  CHECK(j["balance_flop_per_byte"]["cuda_core"].get<double>() == ceiling_test::Rel(9.99));
  CHECK(j["temporal_blocking_min_steps"] == 16);
  CHECK(j["temporal_blocking_threshold"].get<double>() == ceiling_test::Rel(15.984));
  CHECK(j["bound"] == "memory");
  const auto t16 = predict_json("--hw gh200 --kernel stencil --points 5 --dims 2 --nx 9000 --ny 9000 --steps 16 " +
                                what_if + " --peak-tensor-core '20 TFLOP/s'");
  CHECK(t16["bound"] == "compute");
  CHECK(t16["source"] == "override");
  // The same kernel from a kernel file (t = 3).
  const auto f = predict_json("--hw gh200 --kernel " + kernel_file("stencil-2d5pt.yaml") + " " + what_if);
  CHECK(f["intensity_flop_per_byte"].get<double>() == 1.875);
  CHECK(f["temporal_blocking_min_steps"] == 16);
}

TEST_CASE("cli predict: every kind answers with the contract's keys") {
  const char* runs[] = {
      "--kernel scale --n 4096",
      "--kernel gemv --m 4096 --n 4096",
      "--kernel spmv-csr --m 1e6 --n 1e6 --nnz 2e7 --index-bytes 8",
      "--kernel stencil --points 27 --dims 3 --nx 512 --ny 512 --nz 512 --steps 2",
      "--kernel gemm --m 8192 --n 8192 --k 8192",
      "--kernel custom --work '2 GFLOP' --traffic '8 GB'",
  };
  for (const char* args : runs) {
    CAPTURE(args);
    const auto j = predict_json(std::string("--hw gh200 ") + args);
    for (const char* key : {"intensity_flop_per_byte", "balance_flop_per_byte", "bound", "memory_level",
                            "attainable_flop_per_s", "tensor_core_effective_peak_flop_per_s", "time_s",
                            "tensor_core_speedup", "temporal_blocking_min_steps", "source"})
      CHECK_MESSAGE(j.contains(key), key);
    for (const char* key : {"cuda_core", "tensor_core"}) {
      CHECK(j["balance_flop_per_byte"][key].get<double>() > 0);
      CHECK(j["attainable_flop_per_s"][key].get<double>() > 0);
    }
    for (const char* key : {"compute_cuda_core", "compute_tensor_core", "memory", "overlapped", "unoverlapped"})
      CHECK(j["time_s"][key].get<double>() > 0);
    for (const char* key : {"alpha", "kernel_bound", "memory_bound_limit", "workload_limit"})
      CHECK(j["tensor_core_speedup"][key].get<double>() > 0);
    CHECK((j["bound"] == "memory" || j["bound"] == "compute"));
    CHECK((j["memory_level"] == "dram" || j["memory_level"] == "l2"));
  }
  const auto gemm = predict_json("--hw gh200 --kernel gemm --m 8192 --n 8192 --k 8192 --source spec");
  CHECK(gemm["bound"] == "compute");
  const auto custom = predict_json("--hw gh200 --kernel custom --work 2e9 --traffic 8e9");
  CHECK(custom["intensity_flop_per_byte"].get<double>() == 0.25);
}

TEST_CASE("cli predict: a small working set is bounded by the L2 when it has a bandwidth") {
  const auto j = predict_json("--hw gh200 --kernel scale --n 1e6");
  const std::string reason = j["memory_level_reason"];
  CHECK(reason.find("16 MB <= half of L2") != std::string::npos);
  const auto big = predict_json("--hw gh200 --kernel scale --n 1e9");
  CHECK(big["memory_level"] == "dram");
  CHECK(std::string(big["memory_level_reason"]).find("> half of L2") != std::string::npos);
}

TEST_CASE("cli predict: human output") {
  const Run r = predict("--hw gh200 --kernel scale --n 1e9 --source spec");
  REQUIRE(r.rc == 0);
  for (const char* text : {"SCALE n=1e9 fp64", "intensity I = W/Q", "0.0625 flop/B", "memory level", "half of L2",
                           "8.375 TFLOP/s (1/8 x 67 TFLOP/s)", "Eq. 22", "Eq. 23", "Eq. 24", "numbers from: spec",
                           "compute.tensor_core.fp64 = 67 TFLOP/s: spec"})
    CHECK_MESSAGE(r.out.find(text) != std::string::npos, text, "\n", r.out);
  const Run s = predict("--hw gh200 --kernel stencil --points 5 --dims 2 --nx 9000 --ny 9000 "
                        "--peak-cuda-core '9.99 TFLOP/s' --bandwidth '1 TB/s'");
  CHECK(s.out.find("t I >= B: t >= B/I = 15.98 -> t >= 16 (Eq. 14)") != std::string::npos);
}

TEST_CASE("cli predict: bad input exits non-zero with a clear message") {
  struct Case {
    const char* args;
    const char* says;
  };
  const Case cases[] = {
      {"--hw gh200 --kernel gemv --m 4096", "missing: --n"},
      {"--hw gh200 --kernel fft --n 1024", "unknown kind 'fft'"},
      {"--hw gh200 --kernel scale --n 1e9 --bandwidth '4.8 TB'", "--bandwidth: '4.8 TB'"},
      {"--hw gh200 --kernel scale --n 1e9 --peak-cuda-core '9 TB/s'", "--peak-cuda-core"},
      {"--hw gh200 --kernel scale --n 1.5", "--n: '1.5' is not a positive whole number"},
      {"--hw gh200 --kernel scale --n 1e9 --nnz 5", "--nnz does not apply to --kernel scale"},
      {"--hw gh200 --kernel custom --work '2 GFLOP/s' --traffic '8 GB'", "--work"},
      {"--hw gh200 --kernel stencil --points 5 --dims 4 --nx 10 --ny 10", "--dims"},
      {"--hw gh200 --kernel scale --n 1e9 --precision fp128", "--precision"},
      {"--hw gh200 --kernel scale --n 1e9 --source guess", "--source"},
      {"--hw no-such-gpu --kernel scale --n 1e9", "no-such-gpu"},
      {"--hw gh200 --kernel scale", "missing: --n"},
      {"--kernel scale --n 1e9", "--hw"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    const Run r = predict(c.args, true);
    CHECK(r.rc != 0);
    CHECK_MESSAGE(r.out.find(c.says) != std::string::npos, r.out);
  }
  // A broken kernel file: the error names the file and the line.
  const Run f = predict("--hw gh200 --kernel " + kernel_file("bad-unknown-key.yaml"), true);
  CHECK(f.rc != 0);
  CHECK(f.out.find("bad-unknown-key.yaml:4:") != std::string::npos);
  const Run g = predict("--hw gh200 --kernel " + kernel_file("stencil-2d5pt.yaml") + " --nx 5", true);
  CHECK(g.rc != 0);
  CHECK(g.out.find("--nx does not apply to a kernel file") != std::string::npos);
}

TEST_CASE("cli predict: every shipped descriptor predicts SCALE or names the missing field") {
  int seen = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(CEILING_SOURCE_DIR) + "/hardware")) {
    if (e.path().extension() != ".yaml") continue;
    ++seen;
    const std::string id = e.path().stem().string();
    CAPTURE(id);
    const Run r = predict("--hw " + id + " --kernel scale --n 1e9 --json", true);
    if (r.rc == 0) {
      // stderr may carry log lines; the JSON object starts at the first brace.
      const auto j = nlohmann::json::parse(r.out.substr(r.out.find('{')));
      CHECK(j["intensity_flop_per_byte"].get<double>() == 0.0625);
      CHECK(j["tensor_core_effective_peak_flop_per_s"].get<double>() ==
            ceiling_test::Rel(j["peak_flop_per_s"]["tensor_core"].get<double>() / 8));
    } else {
      CHECK_MESSAGE(r.out.find("is missing in " + id) != std::string::npos, r.out);
    }
  }
  CHECK(seen >= 2);
}
