// The fleet view (issue 16): synthetic fleets made from the shipped descriptors with bounded noise
// and planted faults; every planted fault is found, nothing else is flagged, and an unreadable file
// costs only itself.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <chrono>
#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "model/descriptor.hpp"
#include "model/fleet.hpp"
#include "scratch.hpp"

namespace {
namespace fs = std::filesystem;
using namespace ceiling;

HardwareDescriptor shipped(const char* id) {
  return load_descriptor(fs::path(CEILING_SOURCE_DIR) / "hardware" / (std::string(id) + ".yaml"));
}

void scale(Field& f, double k) {
  if (!f.measured) return;
  f.measured->median *= k;
  f.measured->min *= k;
  f.measured->max *= k;
}

// Every measured figure moved by bounded noise (uniform, +-0.4%: below the 1% floor, as the probes'
// run-to-run spread is on one GPU).
void jitter(HardwareDescriptor& d, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-0.004, 0.004);
  scale(d.sm_clock, 1 + u(rng));
  for (auto& [lvl, m] : d.memory) {
    for (Field* f : {&m.bandwidth, &m.bandwidth_per_sm, &m.latency}) scale(*f, 1 + u(rng));
    for (auto& [p, f] : m.patterns) scale(f, 1 + u(rng));
  }
  for (auto& [unit, byp] : d.compute)
    for (auto& [p, f] : byp) scale(f, 1 + u(rng));
  for (auto& ti : d.tensor_instructions) {
    scale(ti.throughput, 1 + u(rng));
    if (ti.throughput.measured) ti.throughput.measured->sm_clock_hz *= 1 + u(rng);
  }
}

struct Planted {
  std::string id, figure;
};

// n GPUs: h200-node<i> (and every 10th an H100), faults planted on some.
std::vector<Planted> make_fleet(const fs::path& dir, int n) {
  const HardwareDescriptor h200 = shipped("h200"), h100 = shipped("h100-sxm");
  std::mt19937_64 rng(7);
  std::vector<Planted> planted;
  for (int i = 0; i < n; ++i) {
    HardwareDescriptor d = i % 10 == 9 ? h100 : h200;
    d.id = (i % 10 == 9 ? "h100-node" : "h200-node") + std::to_string(i);
    d.identity.uuid = "GPU-fleet-" + std::to_string(i);
    jitter(d, rng);
    if (i % 97 == 5) {  // slow HBM: every DRAM pattern 7% low
      for (auto& [p, f] : d.memory.at(MemoryLevelKind::dram).patterns) scale(f, 0.93);
      scale(d.memory.at(MemoryLevelKind::dram).bandwidth, 0.93);
      planted.push_back({d.id, "memory.dram.patterns.read"});
    }
    if (i % 131 == 17) {  // the SM clock sags 10% under tensor-core load
      for (auto& ti : d.tensor_instructions)
        if (ti.throughput.measured && ti.api == "wgmma") {
          ti.throughput.measured->sm_clock_hz *= 0.90;
          scale(ti.throughput, 0.90);
        }
      planted.push_back({d.id, "sm_clock.under_tensor_load"});
    }
    if (i % 211 == 33) {  // L2 latency 12% high
      scale(d.memory.at(MemoryLevelKind::l2).latency, 1.12);
      planted.push_back({d.id, "memory.l2.latency"});
    }
    save_descriptor(d, dir / (d.id + ".yaml"));
  }
  return planted;
}

}  // namespace

TEST_CASE("fleet: robust statistics and the outlier rule on a small fleet") {
  std::vector<FleetMember> m(5);
  const double v[] = {100, 101, 99, 100.5, 80};
  for (int i = 0; i < 5; ++i) {
    m[static_cast<std::size_t>(i)].id = "g" + std::to_string(i);
    m[static_cast<std::size_t>(i)].model = "X";
    m[static_cast<std::size_t>(i)].figures["memory.dram.bandwidth"] = v[i] * 1e10;
    m[static_cast<std::size_t>(i)].figures["memory.l2.latency"] = i == 2 ? 400 : 300;
  }
  const FleetReport r = analyse_fleet(m);
  REQUIRE(r.groups.size() == 1);
  const FleetStat& s = r.groups[0].stats.at("memory.dram.bandwidth");
  CHECK(s.median == ceiling_test::Rel(100e10));
  CHECK(s.sigma == ceiling_test::Rel(1.4826 * 1e10));  // MAD = 1
  CHECK(s.min == 80e10);
  CHECK(s.max == 101e10);
  REQUIRE(r.groups[0].outliers.size() == 2);
  // Sorted by size of deviation: the latency (+33%) before the bandwidth (-20%).
  CHECK(r.groups[0].outliers[0].figure == "memory.l2.latency");
  CHECK(r.members[r.groups[0].outliers[0].member].id == "g2");
  CHECK(std::isinf(r.groups[0].outliers[0].z));  // every other GPU equal: no spread
  CHECK(r.groups[0].outliers[1].figure == "memory.dram.bandwidth");
  CHECK(r.groups[0].outliers[1].deviation == ceiling_test::Rel(-0.2));
  // A faster GPU is not a fault unless asked.
  m[0].figures["memory.dram.bandwidth"] = 130e10;
  CHECK(analyse_fleet(m).groups[0].outliers.size() == 2);
  FleetOptions both;
  both.worse_only = false;
  CHECK(analyse_fleet(m, both).groups[0].outliers.size() == 3);
  // Two GPUs of a model: nothing is judged.
  m.resize(2);
  CHECK(analyse_fleet(m).groups[0].outliers.empty());
}

TEST_CASE("fleet: the figures of a descriptor, and which way is bad") {
  const auto f = fleet_figures(shipped("h200"));
  for (const char* k : {"memory.dram.patterns.read", "memory.l2.latency", "compute.cuda_core.fp64",
                        "sm_clock.under_tensor_load", "tensor.wgmma.m64n256k16.fp16.fp32.ss.throughput"})
    CHECK_MESSAGE(f.count(k), k);
  CHECK(f.count("memory.dram.bandwidth"));
  CHECK(fleet_higher_is_better("memory.dram.patterns.read"));
  CHECK_FALSE(fleet_higher_is_better("memory.l2.latency"));
  CHECK_FALSE(fleet_higher_is_better("fixed_costs.launch_single"));
  // Spec-only descriptors measure nothing.
  CHECK(fleet_figures(shipped("gh200")).empty());
}

TEST_CASE("fleet: 1000 synthetic GPUs, every planted fault found, no false one, an unreadable file is reported") {
  // 1000 GPUs (the scale); 250 under the sanitizers (the same checks, 8x slower code).
#if defined(__SANITIZE_ADDRESS__)
  int gpus = 250;
#else
  int gpus = 1000;
#endif
  if (const char* n = std::getenv("CEILING_FLEET_GPUS"); n && std::atoi(n) >= 100) gpus = std::atoi(n);  // to try other sizes
  // CEILING_FLEET_KEEP=DIR keeps the generated fleet there (scripts/fleet-bench.sh times the command on it).
  const char* keep = std::getenv("CEILING_FLEET_KEEP");
  const fs::path dir = keep && *keep ? fs::path(keep) : ceiling::test::scratch_dir("fleet", "1000");
  if (keep && *keep) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  const auto planted = make_fleet(dir, gpus);
  REQUIRE(planted.size() >= (gpus >= 1000 ? 15u : 3u));
  {
    std::ofstream bad(dir / "broken.yaml");
    bad << "schema: ceiling/hardware/1\nidentity: [\n";
  }
  const auto t0 = std::chrono::steady_clock::now();
  const FleetReport r = analyse_fleet(load_fleet(dir));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("fleet of " << gpus + 1 << " descriptors loaded and analysed in " << s << " s");
  CHECK(r.members.size() == static_cast<std::size_t>(gpus + 1));
  CHECK(r.unreadable() == 1);
  REQUIRE(r.groups.size() == 2);
  CHECK(r.groups[0].members.size() == static_cast<std::size_t>(gpus - gpus / 10));  // H200 first: the larger group
  CHECK(r.groups[1].members.size() == static_cast<std::size_t>(gpus / 10));
  // Each planted fault: its figure (and, for the slow HBM, the other DRAM patterns) flagged on its GPU.
  std::set<std::pair<std::string, std::string>> found;
  std::set<std::string> flagged_gpus;
  for (const auto& g : r.groups)
    for (const auto& o : g.outliers) {
      found.insert({r.members[o.member].id, o.figure});
      flagged_gpus.insert(r.members[o.member].id);
      CHECK(o.worse);
    }
  std::set<std::string> planted_gpus;
  for (const auto& p : planted) {
    CHECK_MESSAGE(found.count({p.id, p.figure}), p.id << " " << p.figure);
    planted_gpus.insert(p.id);
  }
  CHECK(flagged_gpus == planted_gpus);  // no GPU flagged that has no fault
  // Every flagged figure is one a fault moves.
  for (const auto& [id, fig] : found) {
    const bool dram = fig.rfind("memory.dram.", 0) == 0, clock = fig == "sm_clock.under_tensor_load",
               tc = fig.rfind("tensor.wgmma", 0) == 0 || fig.rfind("compute.tensor_core", 0) == 0,
               l2 = fig == "memory.l2.latency";
    CHECK_MESSAGE((dram || clock || tc || l2), id << " " << fig);
  }
  // The text, the CSV and the Markdown name them.
  // The text lists the outliers by size of deviation, 50 lines by default: the full listing names every
  // planted GPU; the default one says where the rest are when it stops. (Until 2026-11-27 this asked the
  // 50-line text for planted[0], whose 7% DRAM deviation sorts after the 10% wgmma ones: true at 1000
  // GPUs, not at 250 under the sanitizers. The case had never run in CI: its name had a ';'.)
  const std::string summary = fleet_summary(r);
  CHECK(summary.find("fleet: " + std::to_string(gpus + 1) + " descriptor(s), 2 GPU model(s)") == 0);
  CHECK(summary.find("1 unreadable") != std::string::npos);
  std::size_t outliers = 0;
  for (const auto& g : r.groups) outliers += g.outliers.size();
  if (outliers > 50) CHECK(summary.find("... (--json or fleet.csv list all)") != std::string::npos);
  const std::string full = fleet_summary(r, outliers);
  CHECK(full.find("... (--json") == std::string::npos);
  for (const auto& p : planted) CHECK_MESSAGE(full.find("    " + p.id + " (") != std::string::npos, p.id);
  const std::string csv = fleet_csv(r);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == gpus + 2);
  CHECK(fleet_markdown(r).find("| figure | GPUs | median |") != std::string::npos);
  // The command: files written, exit 3 for the unreadable one.
  const fs::path out = ceiling::test::scratch_dir("fleet", "out", false);
  const auto run = ceiling::test::run_ceiling("report --fleet '" + dir.string() + "' --out '" + out.string() + "'", true);
  CHECK(run.rc == 3);
  CHECK(run.out.find(" outlier(s) (|robust z| > ") != std::string::npos);
  {
    std::ifstream in(out / "fleet.csv");
    const std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(written.find("sm_clock.under_tensor_load") != std::string::npos);
    // Each planted GPU's row (file,id,uuid,model,node,outliers,...) counts at least one outlier.
    for (const auto& p : planted) {
      const auto at = written.find("," + p.id + ",");
      REQUIRE_MESSAGE(at != std::string::npos, p.id);
      std::string row = written.substr(written.rfind('\n', at) + 1);
      row = row.substr(0, row.find('\n'));
      std::vector<std::string> cells;
      for (std::size_t b = 0, e; b <= row.size(); b = e + 1) {
        e = row.find(',', b);
        if (e == std::string::npos) e = row.size();
        cells.push_back(row.substr(b, e - b));
      }
      REQUIRE(cells.size() > 5);
      CHECK_MESSAGE(std::atoi(cells[5].c_str()) >= 1, p.id << ": " << row.substr(0, 200));
    }
  }
  CHECK(fs::exists(out / "fleet.md"));
  CHECK(fs::exists(out / "fleet.csv"));
  CHECK(fs::exists(out / "fleet.json"));
  const auto misuse = ceiling::test::run_ceiling("report --fleet '" + dir.string() + "' --hw h200 --out '" + out.string() + "'", true);
  CHECK(misuse.rc != 0);
  CHECK(misuse.out.find("belong to the GPU report") != std::string::npos);
  if (!(keep && *keep)) fs::remove_all(dir);
  fs::remove_all(out);
}
