// calibrate --devices (issue 16): one process per GPU, all at once; a GPU that fails is reported
// with its reason and the others are kept. The GPU is replaced by a stand-in child
// (tests/data/devices/fake-calibrate.sh via CEILING_CALIBRATE_EXE); the real run is on a GPU host.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_run.hpp"
#include "model/descriptor.hpp"
#include "model/link.hpp"
#include "scratch.hpp"

namespace fs = std::filesystem;
using ceiling::test::run_ceiling;

TEST_CASE("calibrate --devices: bad lists are refused before anything runs") {
  auto r = run_ceiling("calibrate --devices 0,x --out-dir /tmp/never", true);
  CHECK(r.rc != 0);
  CHECK(r.out.find("'x' is not a device ordinal") != std::string::npos);
  r = run_ceiling("calibrate --devices 1,1 --out-dir /tmp/never", true);
  CHECK(r.out.find("device 1 named twice") != std::string::npos);
  r = run_ceiling("calibrate --devices 0 --out one.yaml", true);
  CHECK(r.out.find("--out names one file") != std::string::npos);
  r = run_ceiling("calibrate --out-dir x", true);
  CHECK(r.out.find("--out-dir goes with --devices") != std::string::npos);
}

TEST_CASE("calibrate --devices: every GPU at once, one failure reported, the others kept, then the fleet") {
  const fs::path dir = ceiling::test::scratch_dir("devices", "run", false);
  const fs::path args = ceiling::test::scratch_dir("devices", "args", true) / "argv.txt";
  setenv("CEILING_CALIBRATE_EXE", (fs::path(CEILING_TEST_DATA_DIR) / "devices" / "fake-calibrate.sh").c_str(), 1);
  setenv("FAKE_CALIBRATE_ARGS", args.c_str(), 1);
  const auto r = run_ceiling("calibrate --devices 0,1,2 --base h200 --quick --probes dram-bandwidth --json --out-dir '" +
                             dir.string() + "'");
  unsetenv("CEILING_CALIBRATE_EXE");
  unsetenv("FAKE_CALIBRATE_ARGS");
  CHECK(r.rc == 1);  // one GPU failed
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["devices"].size() == 3);
  CHECK(j["devices"][0]["status"] == "ok");
  CHECK(j["devices"][1]["status"] == "failed");
  CHECK(j["devices"][1]["reason"].get<std::string>().find("cudaErrorNoDevice") != std::string::npos);
  CHECK(j["devices"][2]["status"] == "ok");
  CHECK(j["devices"][2]["uuid"] == "GPU-fake0002-0000-0000-0000-000000000000");
  CHECK(fs::exists(dir / "gpu0.yaml"));
  CHECK(fs::exists(dir / "gpu2.yaml"));
  CHECK(fs::exists(dir / "gpu1.calibrate.log"));
  // Each child got the options: its device, its file, the base, the probes, --quick.
  // One file per child (PREFIX.<device>.<pid>): read the one of device d.
  const auto args_of = [&](int d) {
    const std::string prefix = args.filename().string() + "." + std::to_string(d) + ".";
    std::string text;
    int files = 0;
    for (const auto& e : fs::directory_iterator(args.parent_path()))
      if (e.path().filename().string().rfind(prefix, 0) == 0) text += ceiling::test::slurp(e.path()), ++files;
    CHECK_MESSAGE(files == 1, "device " << d << ": " << files << " argv files");
    return text;
  };
  for (int d : {0, 1, 2}) {
    const std::string argv = args_of(d);
    for (const std::string a : {"--device\n" + std::to_string(d) + "\n", std::string("--base\nh200\n"),
                                std::string("--probes\ndram-bandwidth\n"), std::string("--quick\n"),
                                std::string("--json\n")})
      CHECK_MESSAGE(argv.find(a) != std::string::npos, "device " << d << " lacks " << a);
  }
  const std::string argv = args_of(2);
  CHECK(argv.find((dir / "gpu2.yaml").string()) != std::string::npos);
  // The descriptors carry their UUIDs; the fleet view reads them (2 GPUs: no outliers judged).
  CHECK(ceiling::load_descriptor(dir / "gpu2.yaml").identity.uuid == "GPU-fake0002-0000-0000-0000-000000000000");
  const fs::path out = ceiling::test::scratch_dir("devices", "fleet", false);
  const auto f = run_ceiling("report --fleet '" + dir.string() + "' --out '" + out.string() + "'");
  // node.yaml names the failed GPU: the fleet reports it (exit 3) and keeps the other two.
  CHECK(f.rc == 3);
  CHECK(f.out.find("NVIDIA H200: 2 GPU(s), 0 with outliers (fewer than 3: no outliers judged)") != std::string::npos);
  CHECK(f.out.find("device 1 failed: [error] calibrate: device 1: cudaErrorNoDevice") != std::string::npos);
  // Without a GPU or a simulated node there are no links; node.yaml lists the GPUs.
  const ceiling::NodeDescriptor node = ceiling::load_node_descriptor(dir / "node.yaml");
  CHECK(node.status == "partial");
  CHECK(node.gpus.size() == 3);
  CHECK(node.host_links.empty());
  fs::remove_all(dir);
  fs::remove_all(out);
  fs::remove_all(args.parent_path());
}
