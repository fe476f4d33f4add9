// `ceiling calibrate` paths that need no GPU: the probe list, and argument errors.
#include <doctest/doctest.h>

#include "cli_run.hpp"
#include <sys/wait.h>

#include <array>
#include <cstdio>
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
  const Run text = calibrate("--list");
  CHECK(text.rc == 0);
  CHECK(!text.out.empty());
}

TEST_CASE("calibrate rejects an unknown probe name, GPU or not") {
  const Run r = calibrate("--probes no-such-probe --out /tmp/ceiling-test-never-written.yaml", true);
  INFO(r.out);
  CHECK(r.rc != 0);
  const bool named = r.out.find("no-such-probe") != std::string::npos;
  const bool no_cuda_build = r.out.find("no CUDA support") != std::string::npos;
  CHECK((named || no_cuda_build));
}
