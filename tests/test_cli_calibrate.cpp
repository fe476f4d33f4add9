// `ceiling calibrate`: the probe list, argument errors, and no GPU (exit 2) or a short real run.
#include <doctest/doctest.h>

#include "cli_run.hpp"
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace {

using Run = ceiling::test::CliRun;

Run calibrate(const std::string& args, bool with_stderr = false) {
  return ceiling::test::run_ceiling("calibrate " + args, with_stderr);
}

}  // namespace

TEST_CASE("calibrate --list works without a GPU and names what each probe fills") {
  const Run r = calibrate("--list --json");
  INFO(r.out);
  REQUIRE(r.rc == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j.contains("probes"));
  bool found = false;
  for (const auto& p : j["probes"]) {
    CHECK(p.contains("fills"));
    CHECK(p.contains("min_cc"));
    if (p["name"] == "pchase-latency") {
      found = true;
      CHECK(p["group"] == "memory");
      CHECK(p["fills"].size() >= 4);
    }
  }
  // A build without CUDA has no probes at all; with CUDA the memory probes are registered.
  CHECK((found || j["probes"].empty()));
  // Listed in the order a full calibration runs them: a probe that runs sparse tensor instructions
  // (they lower the clock of later tensor-core runs in the process) after every probe that does not.
  bool seen_sparse = false;
  std::vector<std::string> sparse_names, order;
  for (const auto& p : j["probes"]) {
    REQUIRE(p.contains("runs_sparse_tensor"));
    order.push_back(p["name"]);
    if (p["runs_sparse_tensor"].get<bool>()) {
      seen_sparse = true;
      sparse_names.push_back(p["name"]);
    } else {
      INFO(p["name"].get<std::string>() << " listed after a probe that runs sparse tensor instructions");
      CHECK(!seen_sparse);
    }
  }
  if (!j["probes"].empty()) {
    CHECK(std::find(sparse_names.begin(), sparse_names.end(), "mma") != sparse_names.end());
    CHECK(std::find(sparse_names.begin(), sparse_names.end(), "wgmma-sp") != sparse_names.end());
    const auto w = std::find(order.begin(), order.end(), "wgmma");
    const auto m = std::find(order.begin(), order.end(), "mma");
    CHECK(w < m);
  }
  const Run text = calibrate("--list");
  CHECK(text.rc == 0);
  CHECK(!text.out.empty());
}

TEST_CASE("calibrate --probes: a sparse probe before wgmma is warned about, GPU or not") {
  // The list is checked before any GPU work, so the warning shows on a machine without one too.
  const std::string out = "--out /tmp/ceiling-test-never-written-" + std::to_string(::getpid()) + ".yaml";
  const Run before = calibrate("--probes mma,wgmma " + out, true);
  INFO(before.out);
  if (before.out.find("no CUDA support") != std::string::npos) return;  // a build without CUDA has no probes
  CHECK(before.out.find("mma runs before wgmma: it runs sparse tensor instructions") != std::string::npos);
  const Run sp = calibrate("--probes wgmma-sp,cuda-core,wgmma " + out, true);
  CHECK(sp.out.find("wgmma-sp runs before wgmma") != std::string::npos);
  // After wgmma, or before probes whose figures do not follow the tensor-core clock: no warning.
  for (const char* list : {"wgmma,mma", "mma,cuda-core", "mma,wgmma-numerics", "mma,wgmma-sp"}) {
    const Run r = calibrate(std::string("--probes ") + list + " " + out, true);
    INFO(list << ": " << r.out);
    CHECK(r.out.find("sparse tensor instructions") == std::string::npos);
  }
}

TEST_CASE("calibrate rejects an unknown probe name, GPU or not") {
  const Run r = calibrate("--probes no-such-probe --out /tmp/ceiling-test-never-written.yaml", true);
  INFO(r.out);
  CHECK(r.rc != 0);
  const bool named = r.out.find("no-such-probe") != std::string::npos;
  const bool no_cuda_build = r.out.find("no CUDA support") != std::string::npos;
  CHECK((named || no_cuda_build));
}

TEST_CASE("calibrate --ramp-processes: 1 to 16, refused otherwise before any GPU work, and taught by --help") {
  for (const char* bad : {"0", "17", "-1", "two"}) {
    const Run r = calibrate(std::string("--ramp-processes ") + bad + " --out /tmp/ceiling-test-never-written.yaml", true);
    INFO(bad << ": " << r.out);
    CHECK(r.rc != 0);
    CHECK(r.out.find("--ramp-processes") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists("/tmp/ceiling-test-never-written.yaml"));
  }
  const Run h = calibrate("--help");
  CHECK(h.rc == 0);
  CHECK(h.out.find("--ramp-processes") != std::string::npos);
  CHECK(h.out.find("least time at each size") != std::string::npos);
}

TEST_CASE("calibrate without a GPU exits 2 and says why, with one it writes the descriptor and probe details") {
  const std::string dir = "/tmp/ceiling-test-calibrate-" + std::to_string(::getpid());
  const Run r = calibrate("--probes sm-clock --json --out " + dir + "/gpu.yaml", true);
  INFO(r.out);
  if (r.out.find("no CUDA support") != std::string::npos || r.out.find("nothing measured") != std::string::npos) {
    CHECK(r.rc == 2);
  } else {
    REQUIRE(r.rc == 0);
    const auto j = nlohmann::json::parse(r.out.substr(r.out.find("{\n")));
    CHECK(j["descriptor"] == dir + "/gpu.yaml");
    CHECK(j["probes_json"] == dir + "/gpu.probes.json");
    CHECK(j["probes"][0]["name"] == "sm-clock");
    CHECK(j["probes"][0]["status"] == "ok");
    CHECK(j["probes"][0]["fields"][0]["path"] == "sm_clock");
  }
  std::filesystem::remove_all(dir);
}
