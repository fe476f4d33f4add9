// `ceiling show` end to end: identity, ceilings, alpha and sources through the JSON and the text.
#include <doctest/doctest.h>

#include "approx.hpp"

#include "cli_run.hpp"
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/descriptor.hpp"

namespace {

using ShowRun = ceiling::test::CliRun;

ShowRun show(const std::string& args, bool with_stderr = false) {
  return ceiling::test::run_ceiling("show " + args, with_stderr);
}

nlohmann::json show_json(const std::string& args) {
  const ShowRun r = show(args + " --json");
  INFO("ceiling show " << args << " --json\n" << r.out);
  REQUIRE(r.rc == 0);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("show: gh200 from the paper's Table 1, with alpha and sources") {
  const auto j = show_json("--hw gh200");
  CHECK(j["id"] == "gh200");
  CHECK(j["identity"]["name"] == "NVIDIA GH200");
  CHECK(j["identity"]["sm_count"] == 132);
  CHECK(j["memory"]["dram"]["bandwidth"]["value"].get<double>() == 4.00e12);
  CHECK(j["memory"]["dram"]["bandwidth"]["source"] == "spec");
  CHECK(j["memory"]["dram"]["bandwidth"]["spec"]["ref"] == "zhang-gpgpu25");
  CHECK(j["memory"]["dram"]["bandwidth"]["spec"]["citation"].get<std::string>().find("GPGPU") != std::string::npos);
  CHECK(j["memory"]["dram"]["capacity"]["source"] == "missing");
  CHECK(j["memory"]["dram"]["capacity"]["value"].is_null());
  CHECK(j["compute"]["cuda_core"]["fp64"]["value"].get<double>() == 34.0e12);
  CHECK(j["compute"]["tensor_core"]["fp64"]["value"].get<double>() == 67.0e12);
  CHECK(j["alpha"]["fp64"].get<double>() == ceiling_test::Rel(67.0 / 34.0));
  CHECK(j["alpha"].size() == 1);  // only where both units have a peak
}

TEST_CASE("show: human output names every number's source, cycles get ns from the clock") {
  const ShowRun r = show("--hw h800-pcie");
  REQUIRE(r.rc == 0);
  CHECK(r.out.find("NVIDIA H800 PCIe") != std::string::npos);
  CHECK(r.out.find("1.755 GHz  spec luo-hopper-t3") != std::string::npos);
  // 478.8 cycles at 1755 MHz = 272.8 ns
  CHECK(r.out.find("478.8 cycles = 272.8 ns") != std::string::npos);
  CHECK(r.out.find("wgmma.m64n256k16.fp16.fp32.rs") != std::string::npos);
  CHECK(r.out.find("HGMMA.64x256x16.F32") != std::string::npos);
  CHECK(r.out.find("luo-hopper-t3: ") != std::string::npos);
  const auto j = show_json("--hw h800-pcie");
  CHECK(j["memory"]["dram"]["latency_s"].get<double>() == ceiling_test::Rel(478.8 / 1755e6));
  CHECK(j["tensor_instructions"].size() == 28);
}

TEST_CASE("show: measured values win under auto, spec under --source spec, and say so") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("ceiling-show-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  ceiling::HardwareDescriptor d = ceiling::load_descriptor(fs::path(CEILING_SOURCE_DIR) / "hardware" / "h200.yaml");
  // Start from the datasheet figures alone (the shipped file is calibrated): one measurement added.
  const auto spec_only = [](ceiling::Field& f) { f.measured.reset(); };
  spec_only(d.sm_clock);
  spec_only(d.memory_clock);
  for (auto& [kind, level] : d.memory) {
    for (ceiling::Field* f : {&level.capacity, &level.bandwidth, &level.bandwidth_per_sm, &level.latency}) spec_only(*f);
    for (auto& [name, f] : level.patterns) spec_only(f);
    for (auto& [name, f] : level.extra) spec_only(f);
  }
  for (auto& [unit, per_precision] : d.compute)
    for (auto& [precision, f] : per_precision) spec_only(f);
  d.tensor_instructions.clear();
  ceiling::MeasuredValue m{4.3e12, 4.2e12, 4.35e12, 20, 0.004, "dram-bandwidth", "2026-11-21T11:00:00Z", 1.98e9,
                           false, "copy"};
  d.set_measured("memory.dram.bandwidth", m);
  const fs::path file = dir / "h200-measured.yaml";
  ceiling::save_descriptor(d, file);

  const auto a = show_json("--hw '" + file.string() + "'");
  CHECK(a["memory"]["dram"]["bandwidth"]["value"].get<double>() == 4.3e12);
  CHECK(a["memory"]["dram"]["bandwidth"]["source"] == "measured");
  CHECK(a["memory"]["dram"]["bandwidth"]["measured"]["probe"] == "dram-bandwidth");
  CHECK(a["memory"]["dram"]["bandwidth"]["spec"]["value"].get<double>() == 4.8e12);
  const auto s = show_json("--hw '" + file.string() + "' --source spec");
  CHECK(s["memory"]["dram"]["bandwidth"]["value"].get<double>() == 4.8e12);
  CHECK(s["source"] == "spec");
  const auto only = show_json("--hw '" + file.string() + "' --source measured");
  CHECK(only["compute"]["tensor_core"]["fp64"]["source"] == "missing");
  CHECK(only["alpha"].empty());

  const ShowRun text = show("--hw '" + file.string() + "'");
  REQUIRE(text.rc == 0);
  CHECK(text.out.find("4.3 TB/s") != std::string::npos);
  CHECK(text.out.find("measured dram-bandwidth 2026-11-21T11:00:00Z (n=20") != std::string::npos);
  CHECK(text.out.find("spec 4.8 TB/s nvidia-h200-datasheet") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("show: the shipped h200's GEMM-loop rate beside the outer product's, text and JSON") {
  const ShowRun r = show("--hw h200");
  REQUIRE(r.rc == 0);
  const auto at = r.out.find("CUDA cores: outer-product rate, the GEMM loop's");
  REQUIRE(at != std::string::npos);
  const auto row = r.out.find("\n  fp64 ", at);
  REQUIRE(row != std::string::npos);
  const std::string line = r.out.substr(row + 1, r.out.find('\n', row + 1) - row - 1);
  INFO(line);
  CHECK(line.find("29.839 TFLOP/s") != std::string::npos);  // register-only outer product
  CHECK(line.find("28.281 TFLOP/s") != std::string::npos);  // the GEMM loop
  CHECK(line.find("85.0%") != std::string::npos);           // of the DFMA peak, 33.28 TFLOP/s
  const auto j = show_json("--hw h200");
  CHECK(j["compute"]["cuda_core_gemm_loop"]["fp64"]["value"].get<double>() == ceiling_test::Rel(28.281e12).epsilon(1e-4));
  CHECK(j["compute"]["cuda_core_gemm_loop"]["fp64"]["measured"]["probe"] == "gemm-loop");
  CHECK(j["compute"]["cuda_core_outer_product"]["fp64"]["value"].get<double>() == ceiling_test::Rel(29.839e12).epsilon(1e-4));
}

TEST_CASE("show: --list lists every shipped descriptor") {
  const auto j = show_json("--list");
  std::vector<std::string> ids;
  for (const auto& e : j["descriptors"]) {
    CHECK_FALSE(e.contains("error"));
    ids.push_back(e["id"]);
  }
  for (const char* id : {"a100-80gb", "gh200", "h100-sxm", "h200", "h800-pcie"}) {
    CAPTURE(id);
    CHECK(std::find(ids.begin(), ids.end(), id) != ids.end());
  }
}

TEST_CASE("show: errors exit 1 with file:line, unknown ids list the shipped ones") {
  const std::string broken = std::string(CEILING_TEST_DATA_DIR) + "/broken/wrong_dimension.yaml";
  const ShowRun r = show("--hw '" + broken + "'", true);
  CHECK(r.rc == 1);
  CHECK(r.out.find(broken + ":8:") != std::string::npos);
  CHECK(r.out.find("memory.dram.bandwidth.spec.value") != std::string::npos);
  const ShowRun u = show("--hw no-such-gpu", true);
  CHECK(u.rc == 1);
  CHECK(u.out.find("gh200") != std::string::npos);
  CHECK(show("").rc != 0);
  CHECK(show("--hw gh200 --source best").rc != 0);
}
