// Links (issue 16): the probe's driver on simulated topologies (NVSwitch, two PCIe switches), the
// node descriptor (strict YAML, round trip), calibrate --devices writing node.yaml (simulated node,
// no GPU), the fleet joining node links and failures, and the model's link level (predict --link).
#include <doctest/doctest.h>

#include "approx.hpp"
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_run.hpp"
#include "model/descriptor.hpp"
#include "model/fleet.hpp"
#include "model/input_error.hpp"
#include "model/kernel_model.hpp"
#include "model/link.hpp"
#include "scratch.hpp"

namespace fs = std::filesystem;
using namespace ceiling;
using ceiling::test::run_ceiling;

namespace {

fs::path links_data(const char* name) { return fs::path(CEILING_TEST_DATA_DIR) / "links" / name; }

// What the simulated node gives for a path: latency + bytes / bandwidth, within its 0.2% jitter.
double expected_bandwidth(double bw, double latency, double bytes) { return bytes / (latency + bytes / bw); }

std::string error_of(const std::string& yaml) {
  try {
    parse_node_descriptor(yaml, "n.yaml");
  } catch (const InputFileError& e) {
    return e.what();
  }
  return "";
}

const char* kNode = R"(schema: ceiling/node/1
node: "n1"
date: "2026-11-25T08:00:00Z"
status: ok
link_probe: {large: 256 MiB, small: 8 B}
gpus:
  - {device: 0, name: NVIDIA H200, uuid: GPU-a, descriptor: a.yaml, status: ok}
  - {device: 1, name: NVIDIA H200, uuid: GPU-b, descriptor: b.yaml, status: ok}
host_links:
  - device: 0
    h2d_pinned: {bandwidth: 55 GB/s, bandwidth_max: 56 GB/s, latency: 4 us, latency_min: 3.5 us, repeats: 20}
pairs:
  - from: 1
    to: 0
    peer_access: true
    peer_sm_read: {bandwidth: 360 GB/s, latency: 4 us}
    peer_ce: {bandwidth: 380 GB/s, latency: 3 us}
)";

}  // namespace

TEST_CASE("links: the driver on a simulated NVSwitch node measures every path, keeps a broken one's error") {
  auto sim = load_simulated_node(links_data("nvswitch-4.yaml"));
  REQUIRE(sim->device_count() == 4);
  LinkProbeOptions o;
  o.large_bytes = std::uint64_t{64} << 20;
  o.repeats = 5;
  int lines = 0;
  o.progress = [&](const std::string&) { ++lines; };
  const LinkMeasurements m = measure_links(*sim, {0, 1, 2, 3}, o);
  REQUIRE(m.host_links.size() == 4);
  REQUIRE(m.pairs.size() == 12);  // ordered pairs
  CHECK(lines == 4 * 5 + 12 * 3);
  const double big = 64.0 * (1 << 20);
  for (const auto& h : m.host_links) {
    REQUIRE(h.figures.size() == 5);
    const LinkFigure* f = h.find(LinkPath::h2d_pinned);
    REQUIRE(f);
    const double want = expected_bandwidth(h.device == 2 ? 27.5e9 : 55e9, 2.5e-6, big);  // GPU 2: half-width link
    CHECK(f->bandwidth == ceiling_test::Rel(want).epsilon(0.003));
    CHECK(f->latency_s == ceiling_test::Rel(2.5e-6 + 8 / (h.device == 2 ? 27.5e9 : 55e9)).epsilon(0.003));
    CHECK(f->bandwidth_max >= f->bandwidth);
    CHECK(f->latency_min_s <= f->latency_s);
    CHECK(f->repeats == 5);
  }
  for (const auto& q : m.pairs) {
    CHECK(q.peer_access);
    REQUIRE(q.figures.size() == 3);
    const LinkFigure* ce = q.find(LinkPath::peer_ce);
    REQUIRE(ce);
    const double bw = (q.from == 1 && q.to == 3) ? 95e9 : 380e9;  // 1->3 degraded to a quarter
    CHECK(ce->bandwidth == ceiling_test::Rel(expected_bandwidth(bw, 3e-6, big)).epsilon(0.003));
    const LinkFigure* sm = q.find(LinkPath::peer_sm_read);
    REQUIRE(sm);
    if (q.from == 3 && q.to == 0) {
      CHECK(sm->error.find("cudaErrorIllegalAddress") != std::string::npos);
      CHECK_FALSE(sm->measured());
    } else {
      CHECK(sm->measured());
    }
  }
  // A subset of devices: only their paths and pairs.
  const LinkMeasurements two = measure_links(*sim, {1, 3}, o);
  CHECK(two.host_links.size() == 2);
  REQUIRE(two.pairs.size() == 2);
  CHECK(two.pairs[0].from == 1);
  CHECK(two.pairs[0].to == 3);
  // No pairs when asked.
  o.pairs = false;
  CHECK(measure_links(*sim, {0, 1, 2, 3}, o).pairs.empty());
  o.repeats = 0;
  CHECK_THROWS_AS(measure_links(*sim, {0}, o), std::invalid_argument);
}

TEST_CASE("links: two PCIe switches - peer paths only inside a switch, through the host across") {
  auto sim = load_simulated_node(links_data("pcie-2x2.yaml"));
  LinkProbeOptions o;
  o.large_bytes = std::uint64_t{16} << 20;
  o.repeats = 3;
  const LinkMeasurements m = measure_links(*sim, {0, 1, 2, 3}, o);
  REQUIRE(m.pairs.size() == 12);
  for (const auto& q : m.pairs) {
    const bool same_switch = (q.from < 2) == (q.to < 2);
    CHECK(q.peer_access == same_switch);
    CHECK(q.find(LinkPath::staged_ce));
    CHECK(bool(q.find(LinkPath::peer_ce)) == same_switch);
    CHECK(bool(q.find(LinkPath::peer_sm_read)) == same_switch);
    CHECK(q.find(LinkPath::staged_ce)->measured());
  }
  // The model refuses a peer read the GPUs cannot do.
  NodeDescriptor n;
  n.node = "pcie";
  n.date = "2026-11-25";
  for (int d = 0; d < 4; ++d) n.gpus.push_back({d, "NVIDIA H100 PCIe", "GPU-" + std::to_string(d), "", "ok", ""});
  n.host_links = m.host_links;
  n.pairs = m.pairs;
  CHECK_THROWS_WITH_AS(link_level(n, "peer:0:2", 1), doctest::Contains("cannot access GPU 0's memory"), std::runtime_error);
  const LinkLevel l = link_level(n, "peer:0:1", 1);
  CHECK(l.name == "peer 0->1 (peer_sm_read)");
  CHECK(l.bandwidth == ceiling_test::Rel(expected_bandwidth(23e9, 5e-6, 16.0 * (1 << 20))).epsilon(0.003));
  CHECK(link_level(n, "host:3", 0.5).name == "host->3 (host_sm_read)");
  CHECK_THROWS_WITH_AS(link_level(n, "peer:0", 1), doctest::Contains("expected peer:FROM:TO"), std::runtime_error);
  CHECK_THROWS_WITH_AS(link_level(n, "host:x", 1), doctest::Contains("'x' is not a device ordinal"), std::runtime_error);
  CHECK_THROWS_WITH_AS(link_level(n, "host:7", 1), doctest::Contains("no host link for GPU 7"), std::runtime_error);
  CHECK_THROWS_WITH_AS(link_level(n, "host:1", 0), doctest::Contains("--link-fraction"), std::runtime_error);
}

TEST_CASE("links: node descriptor round trip keeps every figure") {
  auto sim = load_simulated_node(links_data("nvswitch-4.yaml"));
  LinkProbeOptions o;
  o.large_bytes = std::uint64_t{32} << 20;
  o.repeats = 4;
  const LinkMeasurements m = measure_links(*sim, {0, 1, 2, 3}, o);
  NodeDescriptor n;
  n.node = "gpu-node-017";
  n.date = "2026-11-25T09:00:00Z";
  n.tool_version = "0.1.0";
  n.status = "partial";
  n.reason = "1 link path(s) failed";
  n.large_bytes = m.large_bytes;
  n.small_bytes = m.small_bytes;
  for (int d = 0; d < 4; ++d) n.gpus.push_back({d, "NVIDIA H200", "GPU-" + std::to_string(d), "h200-" + std::to_string(d) + ".yaml", "ok", ""});
  n.gpus[1].status = "failed";
  n.gpus[1].descriptor.clear();
  n.gpus[1].reason = "cudaErrorNoDevice: no CUDA-capable device \"is\" detected\nsecond line";
  n.host_links = m.host_links;
  n.pairs = m.pairs;
  const std::string text = to_yaml(n);
  CHECK(is_node_descriptor_text(text));
  const NodeDescriptor back = parse_node_descriptor(text, "round.yaml");
  CHECK(back.node == n.node);
  CHECK(back.status == "partial");
  CHECK(back.large_bytes == n.large_bytes);
  CHECK(back.small_bytes == 8);
  REQUIRE(back.gpus.size() == 4);
  CHECK(back.gpus[1].reason == "cudaErrorNoDevice: no CUDA-capable device \"is\" detected\\nsecond line");  // one line
  CHECK(back.gpus[2].descriptor == "h200-2.yaml");
  REQUIRE(back.host_links.size() == 4);
  REQUIRE(back.pairs.size() == 12);
  for (std::size_t i = 0; i < n.pairs.size(); ++i) {
    CHECK(back.pairs[i].from == n.pairs[i].from);
    CHECK(back.pairs[i].peer_access == n.pairs[i].peer_access);
    REQUIRE(back.pairs[i].figures.size() == n.pairs[i].figures.size());
    for (std::size_t k = 0; k < n.pairs[i].figures.size(); ++k) {
      const LinkFigure& a = n.pairs[i].figures[k].second;
      const LinkFigure& b = back.pairs[i].figures[k].second;
      CHECK(back.pairs[i].figures[k].first == n.pairs[i].figures[k].first);
      CHECK(a.error == b.error);
      CHECK(b.bandwidth == ceiling_test::Rel(a.bandwidth).epsilon(1e-4));  // 5 significant digits
      CHECK(b.latency_s == ceiling_test::Rel(a.latency_s).epsilon(1e-3));
    }
  }
  CHECK(to_yaml(back) == text);  // stable: writing what was read changes nothing
  CHECK_FALSE(is_node_descriptor_text("schema: ceiling/hardware/1\n"));
  CHECK(is_node_descriptor_text("# c\nschema: \"ceiling/node/1\"\r\n"));
  CHECK_FALSE(is_node_descriptor_text("x:\n  schema: ceiling/node/1\n"));
}

TEST_CASE("links: node descriptor errors name file:line and the key") {
  CHECK(parse_node_descriptor(kNode, "n.yaml").pair(1, 0)->find(LinkPath::peer_ce)->bandwidth == 380e9);
  const auto with = [](const std::string& from, const std::string& to) {
    std::string s = kNode;
    const auto at = s.find(from);
    REQUIRE(at != std::string::npos);
    return s.replace(at, from.size(), to);
  };
  CHECK(error_of(with("schema: ceiling/node/1", "schema: ceiling/node/2")).find("n.yaml:1:9: schema: expected ceiling/node/1") == 0);
  CHECK(error_of(with("status: ok\nlink", "status: fine\nlink")).find("n.yaml:4:9: status: expected ok, partial or failed") == 0);
  CHECK(error_of(with("status: ok\nlink", "status: failed\nlink")).find("reason: a failed node says why") != std::string::npos);
  CHECK(error_of(with("date: \"2026-11-25T08:00:00Z\"", "date: yesterday")).find("n.yaml:3:7: date: expected an ISO 8601 date") == 0);
  CHECK(error_of(with("date: \"2026-11-25T08:00:00Z\"", "date: 2026-02-30")).find("date: day 30 is not in 01-28") != std::string::npos);
  CHECK(error_of(with("    to: 0\n", "    to: 1\n")).find("pairs[0].to: a pair joins two different GPUs") != std::string::npos);
  CHECK(error_of(with("    to: 0\n", "    to: 5\n")).find("n.yaml:14:9: pairs[0].to: device 5 is not in gpus") == 0);
  CHECK(error_of(with("peer_access: true", "peer_access: false")).find("measured although peer_access is false") != std::string::npos);
  CHECK(error_of(with("peer_access: true", "peer_access: yes")).find("expected true or false") != std::string::npos);
  CHECK(error_of(with("bandwidth: 360 GB/s", "bandwidth: 360 GHz")).find("n.yaml:16:31: pairs[0].peer_sm_read.bandwidth") == 0);
  CHECK(error_of(with("bandwidth: 360 GB/s", "bandwidth: 1e30 B/s")).find("lies outside") != std::string::npos);
  CHECK(error_of(with("bandwidth_max: 56 GB/s", "bandwidth_max: 50 GB/s")).find("smaller than the median bandwidth") != std::string::npos);
  CHECK(error_of(with("latency_min: 3.5 us", "latency_min: 5 us")).find("larger than the median latency") != std::string::npos);
  CHECK(error_of(with("repeats: 20", "repeats: 2.5")).find("expected a whole number") != std::string::npos);
  CHECK(error_of(with("h2d_pinned:", "h2d_pinnned:")).find("n.yaml:11:5: host_links[0].h2d_pinnned: unknown key") == 0);
  CHECK(error_of(with("uuid: GPU-b", "uuid: GPU-a")).find("UUID listed twice") != std::string::npos);
  CHECK(error_of(with("device: 1, name", "device: 0, name")).find("device 0 listed twice") != std::string::npos);
  CHECK(error_of(with("descriptor: b.yaml", "descriptor: ../b.yaml")).find("a file name beside the node descriptor") != std::string::npos);
  CHECK(error_of(with("descriptor: b.yaml, status: ok", "status: failed")).find("gpus[1].reason: a failed GPU says why") != std::string::npos);
  CHECK(error_of(with("    peer_ce: {bandwidth: 380 GB/s, latency: 3 us}", "    peer_ce: {error: x, latency: 3 us}"))
            .find("a failed path has only its error") != std::string::npos);
  CHECK(error_of(with("node: \"n1\"\n", "node: \"n1\"\nnode: \"n2\"\n")).find("n.yaml:3:1: node: given twice") == 0);
  CHECK(error_of("- a\n- b\n").find("n.yaml:1:1: a node descriptor is a YAML mapping") == 0);
  CHECK(error_of(std::string("schema: ceiling/node/1\nnode: &a x\nreason: *a\n")).find("alias") != std::string::npos);
}

TEST_CASE("links: calibrate --devices all on a simulated node writes node.yaml, the fleet finds the planted faults") {
  const fs::path dir = ceiling::test::scratch_dir("links", "node", false);
  setenv("CEILING_CALIBRATE_EXE", (fs::path(CEILING_TEST_DATA_DIR) / "devices" / "fake-calibrate.sh").c_str(), 1);
  setenv("CEILING_SIMULATED_NODE", links_data("nvswitch-4.yaml").c_str(), 1);
  const auto r = run_ceiling("calibrate --devices all --node-name rack3-node17 --link-bytes '64 MiB' --link-repeats 5 --json --out-dir '" +
                             dir.string() + "'");
  const auto t = run_ceiling("calibrate --devices all --link-bytes '64 MiB' --link-repeats 3 --out-dir '" +
                             (dir / "text").string() + "'");
  unsetenv("CEILING_CALIBRATE_EXE");
  unsetenv("CEILING_SIMULATED_NODE");
  CHECK(r.rc == 1);  // fake device 1 fails and link 3->0 peer_sm_read is broken: partial
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["node_status"] == "partial");
  CHECK(j["link_failures"] == 1);
  REQUIRE(j["links"]["host"].size() == 4);
  CHECK(j["links"]["host"][2]["h2d_pinned"]["bandwidth"].get<double>() ==
        ceiling_test::Rel(expected_bandwidth(27.5e9, 2.5e-6, 64.0 * (1 << 20))).epsilon(0.003));
  CHECK(j["links"]["pairs"].size() == 12);
  const NodeDescriptor n = load_node_descriptor(dir / "node.yaml");
  CHECK(n.node == "rack3-node17");
  CHECK(n.status == "partial");
  CHECK(n.large_bytes == std::uint64_t{64} << 20);
  REQUIRE(n.gpus.size() == 4);
  CHECK(n.gpus[0].descriptor == "h200-fake0000.yaml");
  CHECK(n.gpus[1].status == "failed");
  CHECK(n.gpus[1].reason.find("cudaErrorNoDevice") != std::string::npos);
  CHECK(n.gpus[3].uuid == "GPU-fake0003-0000-0000-0000-000000000000");
  CHECK(n.pair(3, 0)->find(LinkPath::peer_sm_read)->error.find("cudaErrorIllegalAddress") != std::string::npos);
  // The text summary shows the host table and the pair matrices.
  CHECK(t.out.find("peer_ce bandwidth (row: from, column: to") != std::string::npos);
  CHECK(t.out.find("3->0 peer_sm_read failed: cudaErrorIllegalAddress") != std::string::npos);
  CHECK(t.out.find(": partial (1 GPU(s) and 1 link path(s) failed)") != std::string::npos);

  // The fleet: three H200s with links; GPU 2's host link at half width and GPU 3's slow pair are
  // the outliers; the failed GPU and the broken path are reported; nothing else is flagged.
  fs::remove_all(dir / "text");
  const fs::path out = ceiling::test::scratch_dir("links", "fleet", false);
  const auto f = run_ceiling("report --fleet '" + dir.string() + "' --out '" + out.string() + "' --json");
  CHECK(f.rc == 3);  // a GPU failed
  const auto fj = nlohmann::json::parse(f.out);
  REQUIRE(fj["groups"].size() == 1);
  CHECK(fj["groups"][0]["gpus"] == 3);
  std::set<std::pair<std::string, std::string>> flagged;
  for (const auto& o : fj["groups"][0]["outliers"]) flagged.insert({o["id"].get<std::string>(), o["figure"].get<std::string>()});
  const std::set<std::pair<std::string, std::string>> planted{{"h200-fake0002", "link.h2d_pinned.bandwidth"},
                                                             {"h200-fake0002", "link.d2h_pinned.bandwidth"},
                                                             {"h200-fake0003", "link.peer_ce.bandwidth_min"}};
  CHECK(flagged == planted);
  bool failed_gpu = false, problem = false;
  for (const auto& m : fj["members"]) {
    if (m["error"].get<std::string>().find("node rack3-node17 device 1 failed") != std::string::npos) failed_gpu = true;
    for (const auto& p : m["link_problems"]) problem = problem || p.get<std::string>() == "3->0 peer_sm_read: cudaErrorIllegalAddress: an illegal memory access was encountered";
    if (m["id"] == "h200-fake0002") CHECK(m["node"] == "rack3-node17");
  }
  CHECK(failed_gpu);
  CHECK(problem);
  const std::string md = ceiling::test::slurp(out / "fleet.md");
  CHECK(md.find("## Failed link paths") != std::string::npos);
  CHECK(md.find("| h200-fake0002 | rack3-node17 |") != std::string::npos);
  CHECK(ceiling::test::slurp(out / "fleet.csv").find("link.h2d_pinned.bandwidth (% vs median)") != std::string::npos);
  fs::remove_all(dir);
  fs::remove_all(out);
}

TEST_CASE("links: --links-only lists the GPUs without descriptors, the fleet still compares their links") {
  const fs::path dir = ceiling::test::scratch_dir("links", "only", false);
  setenv("CEILING_SIMULATED_NODE", links_data("nvswitch-4.yaml").c_str(), 1);
  setenv("CEILING_CALIBRATE_EXE", "/nonexistent/never-run", 1);  // no child may start
  const auto r = run_ceiling("calibrate --devices 0,2,3 --links-only --link-bytes '8 MiB' --link-repeats 3 --out-dir '" + dir.string() + "'");
  unsetenv("CEILING_SIMULATED_NODE");
  unsetenv("CEILING_CALIBRATE_EXE");
  CHECK(r.rc == 1);  // 3->0 peer_sm_read is broken
  const NodeDescriptor n = load_node_descriptor(dir / "node.yaml");
  REQUIRE(n.gpus.size() == 3);
  for (const auto& g : n.gpus) {
    CHECK(g.status == "ok");
    CHECK(g.descriptor.empty());
  }
  CHECK(n.pairs.size() == 6);
  const std::vector<FleetMember> members = load_fleet(dir);
  REQUIRE(members.size() == 3);
  for (const auto& m : members) {
    CHECK(m.error.empty());
    CHECK(m.figures.count("link.h2d_pinned.bandwidth"));
    CHECK(m.model == "NVIDIA H200");
  }
  fs::remove_all(dir);
}

TEST_CASE("links: a node without a GPU says so in node.yaml (exit 2), the fleet reports the node") {
  const fs::path dir = ceiling::test::scratch_dir("links", "nogpu", false);
  unsetenv("CEILING_SIMULATED_NODE");
  const auto r = run_ceiling("calibrate --devices all --node-name cpu-only-1 --out-dir '" + dir.string() + "'", true);
  CHECK(r.rc == 2);
  CHECK(r.out.find("node cpu-only-1: failed (calibrate --devices all: no GPU here") != std::string::npos);
  const NodeDescriptor n = load_node_descriptor(dir / "node.yaml");
  CHECK(n.status == "failed");
  CHECK(n.gpus.empty());
  CHECK(n.reason.find("no GPU here") != std::string::npos);
  const fs::path out = ceiling::test::scratch_dir("links", "nogpu-fleet", false);
  const auto f = run_ceiling("report --fleet '" + dir.string() + "' --out '" + out.string() + "'");
  CHECK(f.rc == 3);
  CHECK(f.out.find("not analysed: node cpu-only-1: failed: calibrate --devices all: no GPU here") != std::string::npos);
  // Bad link options are refused before anything runs.
  CHECK(run_ceiling("calibrate --devices all --link-bytes '12 B' --out-dir '" + dir.string() + "'", true).out.find("multiple of 8 bytes") !=
        std::string::npos);
  CHECK(run_ceiling("calibrate --devices all --no-links --links-only --out-dir x", true).out.find("exclude each other") != std::string::npos);
  CHECK(run_ceiling("calibrate --no-links", true).out.find("go with --devices") != std::string::npos);
  CHECK(run_ceiling("calibrate --link-repeats 5", true).out.find("go with --devices") != std::string::npos);
  const auto zero = run_ceiling("calibrate --devices all --link-repeats 0 --out-dir x", true);
  CHECK(zero.rc != 0);
  CHECK(zero.out.find("--link-repeats") != std::string::npos);
  fs::remove_all(dir);
  fs::remove_all(out);
}

TEST_CASE("links: the model's link level - a kernel reading a peer's memory is bound by the link") {
  const NodeDescriptor n = parse_node_descriptor(kNode, "n.yaml");
  const HardwareDescriptor hw = load_descriptor(fs::path(CEILING_SOURCE_DIR) / "hardware" / "h200.yaml");
  const KernelModel k = scale_model(1e9);  // reads 8 GB, writes 8 GB
  PredictOptions local;
  const Prediction p0 = predict(hw, k, local);
  PredictOptions over = local;
  over.link = link_level(n, "peer:1:0", 1.0);
  CHECK(over.link->name == "peer 1->0 (peer_sm_read)");
  CHECK(over.link->latency_s == ceiling_test::Rel(4e-6));
  const Prediction p1 = predict(hw, k, over);
  CHECK(p1.memory_level == "link");
  // T_memory = max(8 GB local writes / BW_dram, 8 GB reads / 360 GB/s) = 8e9 / 360e9.
  CHECK(p1.t_memory == ceiling_test::Rel(8e9 / 360e9).epsilon(1e-9));
  CHECK(p1.bandwidth == ceiling_test::Rel(16e9 / (8e9 / 360e9)).epsilon(1e-9));
  CHECK(p1.t_memory > 5 * p0.t_memory);  // 360 GB/s against the H200's ~4.3 TB/s
  CHECK(p1.tight.first_byte_from == "link latency");
  CHECK(p1.tight.time_s == ceiling_test::Rel(4e-6 + 8e9 / 360e9).epsilon(1e-6));  // bandwidth_max = median here
  // A small share over the link: the local level still bounds; the link only adds its share.
  over.link = link_level(n, "peer:1:0", 0.01);
  const Prediction p2 = predict(hw, k, over);
  CHECK(p2.memory_level == "dram");
  CHECK(p2.memory_level_reason.find("the link does not bound it") != std::string::npos);
  CHECK(p2.t_memory == ceiling_test::Rel(std::max((16e9 - 0.08e9) / p0.bandwidth, 0.08e9 / 360e9)).epsilon(1e-9));
  // Host memory: host_sm_read absent, so the copy engine's h2d_pinned figure is used.
  over.link = link_level(n, "host:0", 1.0);
  CHECK(over.link->name == "host->0 (h2d_pinned)");
  CHECK(over.link->bandwidth_max == 56e9);
  CHECK(over.link->latency_s == ceiling_test::Rel(3.5e-6));
  // Through the CLI.
  const fs::path dir = ceiling::test::scratch_dir("links", "predict", true);
  const fs::path node = dir / "node.yaml";
  {
    std::ofstream(node) << kNode;
  }
  auto r = run_ceiling("predict --hw h200 --kernel scale --n 1e9 --node '" + node.string() + "' --link peer:1:0 --json");
  REQUIRE(r.rc == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["memory_level"] == "link");
  CHECK(j["link"]["name"] == "peer 1->0 (peer_sm_read)");
  r = run_ceiling("predict --hw h200 --kernel scale --n 1e9 --link peer:1:0", true);
  CHECK(r.rc != 0);
  CHECK(r.out.find("--node and --link go together") != std::string::npos);
  r = run_ceiling("predict --hw h200 --kernel scale --n 1e9 --node '" + node.string() + "' --link peer:0:1", true);
  CHECK(r.out.find("no pair 0->1") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("links: the same GPUs calibrated twice under one fleet directory keep their own node's links") {
  const fs::path dir = ceiling::test::scratch_dir("links", "twice", false);
  setenv("CEILING_CALIBRATE_EXE", (fs::path(CEILING_TEST_DATA_DIR) / "devices" / "fake-calibrate.sh").c_str(), 1);
  setenv("CEILING_SIMULATED_NODE", links_data("nvswitch-4.yaml").c_str(), 1);
  for (const char* name : {"first", "second"})
    CHECK(run_ceiling(std::string("calibrate --devices all --node-name ") + name + " --link-bytes '8 MiB' --link-repeats 3 --out-dir '" +
                      (dir / name).string() + "'")
              .rc == 1);
  unsetenv("CEILING_CALIBRATE_EXE");
  unsetenv("CEILING_SIMULATED_NODE");
  const std::vector<FleetMember> members = load_fleet(dir);
  REQUIRE(members.size() == 8);  // 3 descriptors and 1 failed GPU per node
  int ok = 0;
  for (const auto& m : members) {
    if (!m.error.empty()) continue;
    ++ok;
    INFO(m.file);
    CHECK(m.file.find("/" + m.node + "/") != std::string::npos);  // its own node.yaml's links
    CHECK(m.figures.count("link.h2d_pinned.bandwidth"));
  }
  CHECK(ok == 6);
  fs::remove_all(dir);
}

TEST_CASE("links: ceiling show --hw node.yaml prints the GPUs and the link tables") {
  const fs::path dir = ceiling::test::scratch_dir("links", "show", true);
  const fs::path node = dir / "node.yaml";
  {
    std::ofstream(node) << kNode;
  }
  auto r = run_ceiling("show --hw '" + node.string() + "'");
  CHECK(r.rc == 0);
  CHECK(r.out.find("node n1 (2026-11-25T08:00:00Z): ok") != std::string::npos);
  CHECK(r.out.find("GPU 1 NVIDIA H200 GPU-b ok -> b.yaml") != std::string::npos);
  CHECK(r.out.find("peer_sm_read bandwidth (row: from, column: to") != std::string::npos);
  r = run_ceiling("show --hw '" + node.string() + "' --json");
  REQUIRE(r.rc == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["links"]["host"][0]["h2d_pinned"]["bandwidth"] == 55e9);
  CHECK(j["links"]["pairs"][0]["peer_ce"]["latency"] == ceiling_test::Rel(3e-6));
  CHECK(j["gpus"].size() == 2);
  // A broken node descriptor names its line, as a hardware descriptor does.
  {
    std::ofstream(node) << "schema: ceiling/node/1\nnode: x\ndate: \"2026-11-25\"\nstatus: maybe\n";
  }
  r = run_ceiling("show --hw '" + node.string() + "'", true);
  CHECK(r.rc != 0);
  CHECK(r.out.find("node.yaml:4:9: status: expected ok, partial or failed") != std::string::npos);
  fs::remove_all(dir);
}
