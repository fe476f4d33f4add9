// Issue 14, distributed shared memory: the dsm probe's CPU references (probes/host/dsm.hpp), the
// descriptor's `dsm` key (strict, exact round trip, calibrate's merge), the shipped H800 figures,
// `show` and the report's table and plot.
#include <doctest/doctest.h>

#include "approx.hpp"
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>

#include "cli_run.hpp"
#include "model/descriptor.hpp"
#include "probes/host/dsm.hpp"
#include "reports/report.hpp"
#include "scratch.hpp"

using namespace ceiling;
namespace fs = std::filesystem;
namespace dsm = ceiling::probes::dsm;
using nlohmann::json;

namespace {

const fs::path kHardware = fs::path(CEILING_SOURCE_DIR) / "hardware";
const fs::path kReportData = fs::path(CEILING_TEST_DATA_DIR) / "report";

MeasuredValue measured(double v, double lo, double hi, const std::string& note = "for the test") {
  MeasuredValue m;
  m.median = v;
  m.min = lo;
  m.max = hi;
  m.repeats = 5;
  m.probe = "dsm";
  m.date = "2026-11-26T10:00:00Z";
  m.sm_clock_hz = 1.755e9;
  m.note = note;
  return m;
}

// A probe-like result: latencies, the best ring figure and its configuration, curves.
DistributedSharedMemory measured_dsm() {
  DistributedSharedMemory m;
  m.latency.measured = measured(196.5, 196, 197);
  m.local_latency.measured = measured(33.5, 33, 34);  // exact at the step its spread allows (0.1)
  m.ring_bandwidth.measured = measured(3.1e12, 3.05e12, 3.15e12, "best ring configuration");
  m.ring_bandwidth_per_sm.measured = measured(13.4, 13.2, 13.6);
  m.ring_cluster_size = 2;
  m.ring_block_threads = 1024;
  m.ring_ilp = 8;
  DsmRingByClusterSize c2;
  c2.cluster_size = 2;
  c2.block_threads = 1024;
  c2.ilp = 8;
  c2.bandwidth.measured = measured(3.1e12, 3.05e12, 3.15e12);
  DsmRingByClusterSize c4 = c2;
  c4.cluster_size = 4;
  c4.ilp = 4;
  c4.bandwidth.measured = measured(2.5e12, 2.45e12, 2.55e12);
  m.ring_by_cluster_size = {c2, c4};
  m.ring.points = {{2, 128, 1, 132, 0.75e12}, {2, 1024, 8, 132, 3.1e12}, {4, 1024, 4, 132, 2.5e12}, {16, 1024, 8, 112, 1.25e12}};
  m.ring.probe = "dsm";
  m.ring.date = "2026-11-26T10:00:00Z";
  m.ring.sm_clock_hz = 1.755e9;
  m.ring.note = "ring for the test";
  m.histogram.points = {{1, 128, 1024, 1.5e11}, {2, 128, 1024, 1.75e11}, {1, 512, 4096, 9.5e10}};
  m.histogram.probe = "dsm";
  m.histogram.date = "2026-11-26T10:00:00Z";
  m.histogram.note = "histogram for the test";
  return m;
}

std::string load_edited(const std::string& text, const std::string& from, const std::string& to) {
  std::string s = text;
  const auto at = s.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  s.replace(at, from.size(), to);
  try {
    parse_descriptor(s, "bad.yaml");
  } catch (const DescriptorError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("dsm reference: the latency chain is one cycle and its end is the CPU replay") {
  const std::vector<uint32_t> next = dsm::random_cycle(4096, 7);
  CHECK(dsm::cycle_length(next, 0) == 4096);  // Sattolo: a single cycle through every element
  CHECK(dsm::cycle_length(next, 1234) == 4096);
  std::set<uint32_t> seen(next.begin(), next.end());
  CHECK(seen.size() == 4096);  // a permutation
  for (uint32_t i = 0; i < 4096; ++i) CHECK(next[i] != i);
  CHECK(dsm::chain_end(next, 0, 4096) == 0);  // a whole lap comes back
  CHECK(dsm::chain_end(next, 0, 4096 * 3 + 5) == dsm::chain_end(next, 0, 5));
  CHECK(dsm::chain_end(next, 0, 1) == next[0]);
  CHECK(dsm::random_cycle(4096, 8) != next);  // fresh per seed
  // A broken chain (two cycles) is told apart.
  std::vector<uint32_t> two{1, 0, 3, 2};
  CHECK(dsm::cycle_length(two, 0) == 2);
}

TEST_CASE("dsm reference: ring-based copy lands the previous rank's registers, every slot checked") {
  // The ring of a cluster: rank R receives from R - 1 (mod CS), in the same cluster only.
  CHECK(dsm::ring_source(0, 2) == 1);
  CHECK(dsm::ring_source(1, 2) == 0);
  CHECK(dsm::ring_source(4, 4) == 7);  // first block of the second cluster of 4
  CHECK(dsm::ring_source(6, 4) == 5);
  CHECK(dsm::ring_source(17, 16) == 16);
  CHECK(dsm::ring_source(16, 16) == 31);
  CHECK(dsm::cluster_rank(13, 4) == 1);
  for (int cs : {2, 4, 8, 16})
    for (int b = 0; b < 4 * cs; ++b) {
      CHECK(dsm::ring_source(b, cs) / cs == b / cs);
      CHECK(dsm::ring_source(b, cs) != b);
    }
  // Init values differ between blocks, threads and registers (a misplaced word shows).
  std::set<uint32_t> inits;
  for (uint32_t b = 0; b < 8; ++b)
    for (uint32_t t = 0; t < 64; ++t)
      for (uint32_t k = 0; k < 8; ++k) inits.insert(dsm::ring_init(b, t, k));
  CHECK(inits.size() == 8 * 64 * 8);

  // A simulated ring on the CPU (what the kernel does) passes; any slip fails.
  const int cs = 4, blocks = 8, threads = 32, ilp = 2;
  const uint32_t iters = 37;
  std::vector<uint32_t> buf(static_cast<size_t>(blocks) * threads * ilp, 0xA5A5A5A5u);
  for (int b = 0; b < blocks; ++b) {
    const int dst = b - b % cs + (b % cs + 1) % cs;
    for (int t = 0; t < threads; ++t)
      for (int k = 0; k < ilp; ++k) {
        uint32_t v = dsm::ring_init(static_cast<uint32_t>(b), static_cast<uint32_t>(t), static_cast<uint32_t>(k));
        for (uint32_t i = 0; i < iters; ++i) buf[static_cast<size_t>(dst * threads * ilp + t + k * threads)] = v++;
      }
  }
  CHECK(dsm::ring_first_mismatch(buf, blocks, cs, threads, ilp, iters) == std::pair<long long, long long>{-1, -1});
  CHECK(dsm::ring_first_mismatch(buf, blocks, cs, threads, ilp, iters + 1).first == 0);  // one store fewer shows
  CHECK(dsm::ring_first_mismatch(buf, blocks, 2, threads, ilp, iters).first >= 0);        // another cluster size shows
  auto poisoned = buf;
  poisoned[static_cast<size_t>(5 * threads * ilp + 3 + threads)] = 0xA5A5A5A5u;  // block 5, thread 3, register 1
  CHECK(dsm::ring_first_mismatch(poisoned, blocks, cs, threads, ilp, iters) ==
        std::pair<long long, long long>{5, 3 + threads});
  CHECK(dsm::ring_first_mismatch(std::vector<uint32_t>(3), blocks, cs, threads, ilp, iters).first == 0);  // too short
  CHECK(dsm::ring_bytes(132, 1024, 8, 128) == ceiling_test::Rel(132.0 * 1024 * 8 * 4 * 128));
}

TEST_CASE("dsm reference: histogram bins spread over the cluster and the CPU histogram") {
  CHECK(dsm::bin_home(0, 1024, 4) == std::pair<int, int>{0, 0});
  CHECK(dsm::bin_home(255, 1024, 4) == std::pair<int, int>{0, 255});
  CHECK(dsm::bin_home(256, 1024, 4) == std::pair<int, int>{1, 0});
  CHECK(dsm::bin_home(1023, 1024, 4) == std::pair<int, int>{3, 255});
  CHECK(dsm::bin_home(1023, 1024, 1) == std::pair<int, int>{0, 1023});
  std::mt19937_64 rng(14);
  std::vector<uint32_t> input(100000);
  for (auto& v : input) v = static_cast<uint32_t>(rng() >> 32);
  const int bins = 2048;
  const auto h = dsm::cpu_histogram(input, bins);
  long long total = 0;
  for (uint32_t c : h) total += c;
  CHECK(total == 100000);
  CHECK(h[input[0] % bins] >= 1);
  // Per-cluster partials (as the kernel writes them: each bin by its home block) sum to it.
  const int clusters = 3, cs = 4;
  std::vector<uint32_t> partials(static_cast<size_t>(clusters) * bins, 0);
  for (size_t i = 0; i < input.size(); ++i) {
    const int b = static_cast<int>(input[i] % bins);
    const auto [rank, off] = dsm::bin_home(b, bins, cs);
    partials[(i % clusters) * bins + static_cast<size_t>(rank * (bins / cs) + off)]++;
  }
  CHECK(dsm::sum_partials(partials, clusters, bins) == h);
  partials[bins + 7]++;  // one count too many shows
  CHECK(dsm::sum_partials(partials, clusters, bins) != h);
  // One CPU pass at the largest bin count serves the smaller ones (the probe's sweep).
  for (int small : {256, 1024, 2048}) CHECK(dsm::fold_histogram(dsm::cpu_histogram(input, 8192), small) == dsm::cpu_histogram(input, small));
  CHECK(dsm::fold_histogram(h, 3).empty());  // 3 does not divide 2048: no fold
  // Sweeps: every histogram configuration divides its bins; quick is a subset of the full sweep.
  for (bool quick : {false, true})
    for (int b : dsm::histogram_bins(quick))
      for (int c : dsm::histogram_cluster_sizes(quick)) {
        CHECK(b % c == 0);
        CHECK((b & (b - 1)) == 0);  // the kernel takes value % bins and the home block by mask and shift
        CHECK((c & (c - 1)) == 0);
      }
  for (int c : dsm::ring_cluster_sizes(true)) {
    const auto full = dsm::ring_cluster_sizes(false);
    CHECK(std::find(full.begin(), full.end(), c) != full.end());
  }
}

TEST_CASE("descriptor: dsm loads strictly, keeps its provenance and round-trips exactly") {
  HardwareDescriptor hw = load_descriptor(kReportData / "fixture-gpu.yaml");
  DistributedSharedMemory m = measured_dsm();
  m.latency.spec = SpecValue{180, "a paper's figure, for the test"};
  hw.upsert_dsm(m);
  const std::string text = to_yaml(hw);
  CHECK(text.find("\ndsm:") != std::string::npos);
  CHECK(text.find("ring_best: {cluster_size: 2, block_threads: 1024, ilp: 8}") != std::string::npos);
  CHECK(text.find("{cluster_size: 16, block_threads: 1024, ilp: 8, blocks: 112, bandwidth: \"1.25 TB/s\"}") !=
        std::string::npos);
  const HardwareDescriptor back = parse_descriptor(text, "dsm.yaml");
  CHECK(back.dsm.latency == hw.dsm.latency);
  CHECK(back.dsm.local_latency == hw.dsm.local_latency);
  CHECK(back.dsm.ring_bandwidth == hw.dsm.ring_bandwidth);
  CHECK(back.dsm.ring_bandwidth_per_sm == hw.dsm.ring_bandwidth_per_sm);
  CHECK(back.dsm.ring_by_cluster_size == hw.dsm.ring_by_cluster_size);
  CHECK(back.dsm.ring == hw.dsm.ring);
  CHECK(back.dsm.histogram == hw.dsm.histogram);
  CHECK(back.dsm == hw.dsm);
  CHECK(back.dsm.latency.spec->value == 180);
  CHECK(back.dsm.latency.measured->probe == "dsm");
  CHECK(back.dsm.ring.points.at(3).blocks == 112);
  CHECK(back.dsm.histogram.points.at(1).elements_per_second == 1.75e11);
  CHECK(back.dsm.ring_by_cluster_size.at(1).ilp == 4);
  CHECK(back == hw);
  CHECK(to_yaml(back) == text);
  // A descriptor without dsm writes no key and compares unequal to one with it.
  HardwareDescriptor plain = load_descriptor(kReportData / "fixture-gpu.yaml");
  CHECK(to_yaml(plain).find("\ndsm:") == std::string::npos);
  CHECK_FALSE(plain == hw);

  // Strict: unknown keys, wrong units, bad configurations; file:line each.
  const std::string key = load_edited(text, "local_latency:", "locl_latency:");
  CHECK(key.find("bad.yaml:") == 0);
  CHECK(key.find("unknown key") != std::string::npos);
  CHECK(key.find("dsm.locl_latency") != std::string::npos);
  const auto line_of = [&](const std::string& needle) {
    return 1 + std::count(text.begin(), text.begin() + static_cast<long>(text.find(needle)), '\n');
  };
  CHECK(key.find("bad.yaml:" + std::to_string(line_of("local_latency:")) + ":") == 0);
  CHECK(load_edited(text, "bandwidth: \"1.25 TB/s\"", "bandwidth: \"1.25 cycles\"").find("dsm.ring.points[3].bandwidth") !=
        std::string::npos);
  CHECK(load_edited(text, "blocks: 112", "blocks: 113").find("not a multiple of the cluster size") != std::string::npos);
  CHECK(load_edited(text, "blocks: 112", "blocks: 112, smid: 3").find("unknown key") != std::string::npos);
  CHECK(load_edited(text, "{cluster_size: 4, block_threads: 1024, ilp: 4", "{cluster_size: 2, block_threads: 1024, ilp: 8")
            .find("duplicate") != std::string::npos);
  CHECK(load_edited(text, "cluster_size: 16, block_threads", "cluster_size: 65, block_threads").find("must be at most 64") !=
        std::string::npos);
  CHECK(load_edited(text, "bins: 4096", "bins: 4095").find("accepted") != std::string::npos);  // CS 1 divides any count
  CHECK(load_edited(text, "{cluster_size: 2, block_threads: 128, bins: 1024", "{cluster_size: 2, block_threads: 128, bins: 1023")
            .find("not a multiple of the cluster size") != std::string::npos);
  CHECK(load_edited(text, "elements_per_second: \"1.5e+11\"", "elements_per_second: \"-1\"").find("must be positive") !=
        std::string::npos);
  CHECK(load_edited(text, "ring_best: {cluster_size: 2", "ring_best: {cluster_size: 0").find("must be at least 1") !=
        std::string::npos);
  CHECK(load_edited(text, "\ndsm:\n", "\ndsmm:\n").find("unknown key") != std::string::npos);
  // ring_by_cluster_size: sizes grow; block_threads/ilp only beside a measured bandwidth.
  HardwareDescriptor two = hw;
  std::swap(two.dsm.ring_by_cluster_size[0], two.dsm.ring_by_cluster_size[1]);
  try {
    parse_descriptor(to_yaml(two), "order.yaml");
    FAIL("cluster sizes out of order were accepted");
  } catch (const DescriptorError& e) {
    CHECK(std::string(e.what()).find("cluster sizes must grow") != std::string::npos);
  }
  // An empty dsm mapping says what it needs.
  HardwareDescriptor spec_only = load_descriptor(kReportData / "fixture-gpu.yaml");
  spec_only.dsm.latency.spec = SpecValue{180, "a paper's figure, for the test"};
  const std::string st = to_yaml(spec_only);
  CHECK(parse_descriptor(st, "s.yaml").dsm.latency.spec->value == 180);
  const std::string empty = load_edited(st, "  latency:\n    spec: {value: \"180 cycles\", ref: \"a paper's figure, for the test\"}\n", "  {}\n");
  CHECK(empty.find("needs at least one of latency") != std::string::npos);
}

TEST_CASE("descriptor: calibrate's DSM merge keeps a paper's spec values beside new measurements") {
  HardwareDescriptor hw = load_descriptor(kHardware / "h800-pcie.yaml");
  REQUIRE(hw.dsm.ring_by_cluster_size.size() == 2);
  hw.upsert_dsm(measured_dsm());
  CHECK(hw.dsm.latency.spec->value == 180);
  CHECK(hw.dsm.latency.measured->median == 196.5);
  CHECK(hw.dsm.ring_bandwidth.spec->value == 3.27e12);
  CHECK(hw.dsm.ring_bandwidth.measured->median == 3.1e12);
  CHECK(hw.dsm.ring_cluster_size == 2);
  REQUIRE(hw.dsm.ring_by_cluster_size.size() == 2);  // merged by cluster size, not appended
  CHECK(hw.dsm.ring_by_cluster_size[1].cluster_size == 4);
  CHECK(hw.dsm.ring_by_cluster_size[1].bandwidth.spec->value == 2.65e12);
  CHECK(hw.dsm.ring_by_cluster_size[1].bandwidth.measured->median == 2.5e12);
  CHECK(hw.dsm.ring_by_cluster_size[1].ilp == 4);
  CHECK(hw.dsm.ring.points.size() == 4);
  // A later run with only a ring curve keeps the latencies and replaces the curve.
  DistributedSharedMemory later;
  later.ring = measured_dsm().ring;
  later.ring.points.resize(1);
  DsmRingByClusterSize c8;
  c8.cluster_size = 8;
  c8.block_threads = 512;
  c8.ilp = 2;
  c8.bandwidth.measured = measured(2e12, 1.9e12, 2.1e12);
  later.ring_by_cluster_size = {c8};
  hw.upsert_dsm(later);
  CHECK(hw.dsm.latency.measured->median == 196.5);
  CHECK(hw.dsm.ring.points.size() == 1);
  REQUIRE(hw.dsm.ring_by_cluster_size.size() == 3);
  CHECK(hw.dsm.ring_by_cluster_size[2].cluster_size == 8);  // kept in order
  CHECK(parse_descriptor(to_yaml(hw), "merged.yaml") == hw);
}

TEST_CASE("shipped H800 descriptor: the paper's DSM figures (Luo et al. §IV-E text) with their reference") {
  const HardwareDescriptor h800 = load_descriptor(kHardware / "h800-pcie.yaml");
  REQUIRE(h800.dsm.latency.spec.has_value());
  CHECK(h800.dsm.latency.spec->value == 180);
  CHECK(h800.dsm.latency.spec->reference == "luo-hopper-dsm");
  CHECK(h800.references.count("luo-hopper-dsm") == 1);
  CHECK(h800.references.at("luo-hopper-dsm").find("Fig. 8") != std::string::npos);
  CHECK(h800.dsm.ring_bandwidth.spec->value == 3.27e12);
  CHECK(h800.dsm.ring_by_cluster_size.at(0).cluster_size == 2);
  CHECK(h800.dsm.ring_by_cluster_size.at(0).bandwidth.spec->value == 3.27e12);
  CHECK(h800.dsm.ring_by_cluster_size.at(1).cluster_size == 4);
  CHECK(h800.dsm.ring_by_cluster_size.at(1).bandwidth.spec->value == 2.65e12);
  CHECK(h800.dsm.local_latency.spec->value == h800.memory.at(MemoryLevelKind::shared).latency.spec->value);  // Table IV
  // The paper's 32%: 180 cycles against its L2 latency.
  const double l2 = h800.memory.at(MemoryLevelKind::l2).latency.spec->value;
  CHECK(1 - 180 / l2 == ceiling_test::Rel(0.32).epsilon(0.02));
  // No measured DSM figure and no curve is shipped: those come from the probe.
  CHECK_FALSE(h800.dsm.latency.measured.has_value());
  CHECK_FALSE(h800.dsm.ring.present());
  CHECK_FALSE(h800.dsm.histogram.present());
}

TEST_CASE("show: a DSM group in the text and in --json") {
  const fs::path dir = test::scratch_dir("dsm", "show");
  HardwareDescriptor hw = load_descriptor(kReportData / "fixture-gpu.yaml");
  hw.upsert_dsm(measured_dsm());
  const fs::path file = dir / "dsm-gpu.yaml";
  save_descriptor(hw, file);
  const auto j = test::run_ceiling("show --hw '" + file.string() + "' --json");
  REQUIRE(j.rc == 0);
  const json doc = json::parse(j.out);
  REQUIRE(doc["dsm"].is_object());
  CHECK(doc["dsm"]["latency"]["value"].get<double>() == 196.5);
  CHECK(doc["dsm"]["latency"]["source"] == "measured");
  CHECK(doc["dsm"]["ring_bandwidth"]["measured"]["probe"] == "dsm");
  CHECK(doc["dsm"]["ring_best"]["ilp"] == 8);
  CHECK(doc["dsm"]["ring_by_cluster_size"][1]["cluster_size"] == 4);
  CHECK(doc["dsm"]["ring"][3]["blocks"] == 112);
  CHECK(doc["dsm"]["ring"][3]["bytes_per_clock_per_sm"].get<double>() == ceiling_test::Rel(1.25e12 / (112 * 1.755e9)));
  CHECK(doc["dsm"]["histogram"][2]["bins"] == 4096);
  const auto t = test::run_ceiling("show --hw '" + file.string() + "'");
  REQUIRE(t.rc == 0);
  CHECK(t.out.find("Distributed shared memory") != std::string::npos);
  CHECK(t.out.find("SM-to-SM latency") != std::string::npos);
  CHECK(t.out.find("best ring configuration: cluster size 2, 1024 threads, ILP 8") != std::string::npos);
  CHECK(t.out.find("16/1024/8:") != std::string::npos);
  // The shipped H800 shows the paper's figures; a descriptor without any shows no group.
  const auto h800 = test::run_ceiling("show --hw h800-pcie --json");
  REQUIRE(h800.rc == 0);
  CHECK(json::parse(h800.out)["dsm"]["latency"]["source"] == "spec");
  const auto none = test::run_ceiling("show --hw '" + (kReportData / "fixture-gpu.yaml").string() + "' --json");
  REQUIRE(none.rc == 0);
  CHECK(json::parse(none.out)["dsm"].is_null());
  CHECK(test::run_ceiling("show --hw '" + (kReportData / "fixture-gpu.yaml").string() + "'").out.find("Distributed shared memory") ==
        std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("report: the DSM table beside the paper's H800 column, its section and the plot") {
  const fs::path dir = test::scratch_dir("dsm", "report");
  const fs::path in_dir = dir / "in", out_dir = dir / "out";
  fs::create_directories(in_dir);
  HardwareDescriptor hw = load_descriptor(kReportData / "fixture-gpu.yaml");
  hw.upsert_dsm(measured_dsm());
  save_descriptor(hw, in_dir / "fixture-gpu.yaml");
  std::ofstream(in_dir / "fixture-gpu.probes.json") << std::ifstream(kReportData / "fixture-gpu.probes.json").rdbuf();

  reports::ReportInput in = reports::load_report_input({in_dir / "fixture-gpu.yaml"}, {});
  reports::GpuInput paper;
  paper.descriptor_path = kHardware / "h800-pcie.yaml";
  paper.hw = load_descriptor(paper.descriptor_path);  // the shipped figures, as `ceiling report` adds them
  in.references.push_back(paper);
  reports::WriteOptions opt;
  opt.render_plots = false;
  const reports::ReportOutput out = reports::write_report(in, out_dir, opt);

  const json table = json::parse(std::ifstream(out_dir / "table-dsm.json"));
  bool ours = false, theirs = false, cs4 = false, cs16_missing = true, best = false, paper_has_no_measure = false;
  for (const auto& row : table["rows"])
    for (const auto& c : row) {
      const std::string f = c.value("field", "");
      if (f == "dsm.latency" && c["gpu"] == "fixture-gpu" && c["source"] == "measured") ours = c["value"].get<double>() == 196.5;
      if (f == "dsm.latency" && c["gpu"] == "h800-pcie" && c["source"] == "spec") theirs = c["value"].get<double>() == 180;
      if (f == "dsm.latency" && c["gpu"] == "h800-pcie" && c["source"] == "missing") paper_has_no_measure = true;
      if (f == "dsm.ring_by_cluster_size.4" && c["gpu"] == "h800-pcie" && c["source"] == "spec")
        cs4 = c["value"].get<double>() == 2.65e12;
      if (f.rfind("dsm.ring_by_cluster_size.16", 0) == 0) cs16_missing = false;  // no GPU has a cluster-16 best
      if (f == "dsm.ring_best" && c["gpu"] == "fixture-gpu") best = c["text"] == "CS 2, 1024 threads, ILP 8";
    }
  CHECK(ours);
  CHECK(theirs);
  CHECK(paper_has_no_measure);  // the paper's column has spec only; nothing filled in
  CHECK(cs4);
  CHECK(cs16_missing);
  CHECK(best);
  const json rj = json::parse(std::ifstream(out_dir / "report.json"));
  bool section = false;
  for (const auto& s : rj["sections"]) section = section || s["id"] == "distributed-shared-memory";
  CHECK(section);
  bool plotted = false;
  for (const auto& pl : out.plots) plotted = plotted || pl.name == "dsm-fixture-gpu";
  CHECK(plotted);
  const std::string csv = test::slurp(out_dir / "dsm-fixture-gpu.csv");
  CHECK(csv.find("ring,16,1024,8,1.25e+12") != std::string::npos);
  CHECK(csv.find("histogram,2,128,1024,1.75e+11") != std::string::npos);
  fs::remove_all(dir);
}
