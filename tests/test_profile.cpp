// `ceiling profile` (issue 19): the ncu raw-page CSV reader, the analysis against a descriptor, and
// the command, on exports recorded on an H100 (tests/data/profile/, captured with Nsight Compute
// 2025.3 on an H100 80GB HBM3, driver 580.159.04) and a stand-in ncu for the failures.
#include <doctest/doctest.h>

#include "approx.hpp"
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli_run.hpp"
#include "model/descriptor.hpp"
#include "model/ncu_csv.hpp"
#include "model/profile.hpp"
#include "scratch.hpp"

namespace {
namespace fs = std::filesystem;
using namespace ceiling;

const fs::path kData = fs::path(CEILING_TEST_DATA_DIR) / "profile";

using ceiling::test::slurp;

std::vector<std::string> metric_names() {
  std::vector<std::string> v;
  for (const auto& m : profile_metrics()) v.push_back(m.name);
  return v;
}

HardwareDescriptor h100() { return load_descriptor(fs::path(CEILING_SOURCE_DIR) / "hardware" / "h100-sxm.yaml"); }

ProfileResult analyse(const std::string& fixture, bool per_launch = false) {
  const NcuExport ex = read_ncu_csv(kData / fixture, metric_names());
  ProfileOptions o;
  o.per_launch = per_launch;
  return analyse_profile(ex, h100(), o);
}

const ProfileKernel& kernel(const ProfileResult& r, const std::string& name_part) {
  for (const auto& k : r.kernels)
    if (k.name.find(name_part) != std::string::npos) return k;
  FAIL("no kernel named like " << name_part);
  return r.kernels.front();
}

// The message of what `f` throws ("(no error)" when it does not).
template <class F>
std::string error_of(F&& f) {
  return ceiling::test::message_of(std::function<void()>(std::forward<F>(f)));
}

const char* kHeader =
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid "
    "Size\",\"Device\",\"CC\",\"dram__bytes_read.sum\",\"gpu__time_duration.sum\"\n";
const char* kUnits = "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"Kbyte\",\"usecond\"\n";

}  // namespace

TEST_CASE("ncu csv: numbers as ncu prints them, and nothing else") {
  CHECK(parse_ncu_number("1,980,000") == 1980000.0);
  CHECK(parse_ncu_number("12,851,283.20") == ceiling_test::Rel(12851283.2));
  CHECK(parse_ncu_number("0") == 0.0);
  CHECK(parse_ncu_number("3.5e+05") == 350000.0);
  CHECK(parse_ncu_number("-2") == -2.0);
  CHECK_FALSE(parse_ncu_number(""));
  CHECK_FALSE(parse_ncu_number("n/a"));
  CHECK_FALSE(parse_ncu_number("1,23"));      // not a group of three
  CHECK_FALSE(parse_ncu_number("1,2345"));
  CHECK_FALSE(parse_ncu_number(",123"));
  CHECK_FALSE(parse_ncu_number("12 MB"));
  CHECK_FALSE(parse_ncu_number("inf"));
  CHECK_FALSE(parse_ncu_number("(256, 1, 1)"));
}

TEST_CASE("ncu csv: units convert to base units, unknown ones are refused") {
  CHECK(ncu_unit_factor("byte") == 1.0);
  CHECK(ncu_unit_factor("Kbyte") == 1e3);
  CHECK(ncu_unit_factor("Gbyte") == 1e9);
  CHECK(ncu_unit_factor("ns") == 1e-9);
  CHECK(ncu_unit_factor("usecond") == 1e-6);
  CHECK(ncu_unit_factor("msecond") == 1e-3);
  CHECK(ncu_unit_factor("hz") == 1.0);
  CHECK(ncu_unit_factor("Ghz") == 1e9);
  CHECK(ncu_unit_factor("inst") == 1.0);
  CHECK(ncu_unit_factor("Minst") == 1e6);
  CHECK(ncu_unit_factor("sector") == 1.0);
  CHECK(ncu_unit_factor("") == 1.0);
  CHECK_FALSE(ncu_unit_factor("furlong"));
  CHECK_FALSE(ncu_unit_factor("Xbyte"));
}

TEST_CASE("ncu csv: a recorded export reads: launches, names, units, skipped lines") {
  const NcuExport ex = read_ncu_csv(kData / "h100-scale.csv", metric_names());
  REQUIRE(ex.launches.size() == 4);
  CHECK(ex.skipped_lines == 3);  // ==PROF== connected/disconnected, ==WARNING==
  REQUIRE(ex.device_names.size() == 1);
  CHECK(ex.device_names[0] == "NVIDIA H100 80GB HBM3");
  REQUIRE(ex.sm_count);
  CHECK(*ex.sm_count == 132);
  const NcuLaunch& l = ex.launches[0];
  CHECK(l.kernel.find("scale_cuda_core<double, 1>") != std::string::npos);
  CHECK(l.grid == "(524288, 1, 1)");
  CHECK(l.block == "(256, 1, 1)");
  CHECK(l.get("gpu__time_duration.sum").value() == ceiling_test::Rel(1414.5e-6).epsilon(1e-3));  // ns -> s
  CHECK(l.get("dram__bytes_read.sum").value() > 2.1e9);
  CHECK_FALSE(l.get("not_a_metric.sum"));
}

TEST_CASE("ncu csv: a scaled unit row is applied (Kbyte, usecond)") {
  const std::string text = std::string("==PROF== Connected\n") + kHeader + kUnits +
                           "\"0\",\"1\",\"app\",\"h\",\"k1\",\"1\",\"7\",\"(1, 1, 1)\",\"(2, 1, 1)\",\"0\",\"9.0\",\"1,500\",\"2.50\"\n";
  const NcuExport ex = parse_ncu_csv(text, "t.csv", {"dram__bytes_read.sum", "gpu__time_duration.sum"});
  REQUIRE(ex.launches.size() == 1);
  CHECK(ex.launches[0].get("dram__bytes_read.sum").value() == ceiling_test::Rel(1.5e6));
  CHECK(ex.launches[0].get("gpu__time_duration.sum").value() == ceiling_test::Rel(2.5e-6));
  CHECK(ex.launches[0].line == 4);
}

TEST_CASE("ncu csv: bad exports name the file, the line and the cause") {
  const std::vector<std::string> keep{"dram__bytes_read.sum", "gpu__time_duration.sum"};
  const auto err = [&](const std::string& text) { return error_of([&] { parse_ncu_csv(text, "x.csv", keep); }); };
  const std::string row = "\"0\",\"1\",\"app\",\"h\",\"k1\",\"1\",\"7\",\"(1, 1, 1)\",\"(2, 1, 1)\",\"0\",\"9.0\",";
  // Too few fields.
  CHECK(err(std::string(kHeader) + kUnits + "\"0\",\"1\"\n").find("x.csv:3:1: record has 2 fields, the header 13") !=
        std::string::npos);
  // An unclosed quote.
  CHECK(err(std::string(kHeader) + kUnits + row + "\"12,\"3\n").find("x.csv:3:") != std::string::npos);
  // Not a number in a metric the analysis needs: the column is named.
  const std::string bad = err(std::string(kHeader) + kUnits + row + "\"lots\",\"3\"\n");
  CHECK(bad.find("x.csv:3:") != std::string::npos);
  CHECK(bad.find("dram__bytes_read.sum: 'lots' is not a number") != std::string::npos);
  // An unknown unit of a needed metric.
  std::string units = kUnits;
  units.replace(units.find("Kbyte"), 5, "furlong");
  CHECK(err(std::string(kHeader) + units + row + "\"1\",\"3\"\n").find("x.csv:2:") != std::string::npos);
  // Not an ncu export at all; the details page; an empty file; only ncu's messages.
  CHECK(err("a,b,c\n1,2,3\n").find("no ncu raw-page header") != std::string::npos);
  CHECK(err("\"name\",\"value\"\n").find("expected the ncu raw-page header") != std::string::npos);
  CHECK(err("\"ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n")
            .find("details-page export") != std::string::npos);
  CHECK(err("").find("x.csv:1:1: no ncu raw-page header") != std::string::npos);
  CHECK(err("==PROF== Connected\n==WARNING== No kernels were profiled.\n").find("ncu said: ==WARNING== No kernels") !=
        std::string::npos);
  // A column named twice.
  CHECK(err("\"ID\",\"Kernel Name\",\"x\",\"x\"\n").find("column named twice") != std::string::npos);
  // Missing file.
  CHECK(error_of([] { read_ncu_csv("/nonexistent/x.csv"); }).find("cannot open") != std::string::npos);
}

TEST_CASE("profile: kernel names shortened as people read them") {
  CHECK(kernel_short_name("void <unnamed>::scale_cuda_core<double, 1>(const T1 *, T1 *, T1, long long)") ==
        "scale_cuda_core");
  CHECK(kernel_short_name("void unnamed>::scale_cuda_core<double, 1>(const T1 *, T1 *, T1, long long)") ==
        "scale_cuda_core");
  CHECK(kernel_short_name("unnamed>::gemv_tensor_core(const double *, const double *, double *, long long)") ==
        "gemv_tensor_core");
  CHECK(kernel_short_name("void cusparse::csrmv_v3_kernel<std::integral_constant<bool, 0>, int, int, double>(T5)") ==
        "csrmv_v3_kernel");
  CHECK(kernel_short_name("std::enable_if<!T7, void>::type internal::kernel<int, int, double, 0>(T13)") == "kernel");
  CHECK(kernel_short_name("nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT") == "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT");
}

TEST_CASE("profile: SCALE's counters give its declared W and Q (H100 export, 4 GiB, out of L2)") {
  const ProfileResult r = analyse("h100-scale.csv", true);
  const double n = 268435456;  // --sizes 4GiB: n = 4 GiB / 16 B
  const ProfileKernel& cc = kernel(r, "scale_cuda_core");
  REQUIRE(cc.launches == 2);
  for (const auto& l : cc.per_launch) {
    CHECK(l.counts.work_flop() == n);                                   // W = n exactly (one DMUL per value)
    CHECK(l.counts.traffic.at(MemoryLevelKind::l2).bytes() == 16 * n);  // Q = 2nD exactly at L2
    const double dram = l.counts.traffic.at(MemoryLevelKind::dram).bytes();
    CHECK(std::abs(dram / (16 * n) - 1) < 0.03);  // within 3% at DRAM (dirty lines left in the L2)
    CHECK(l.verdict == "within-bound");
    CHECK(l.bounded_by == "dram");
  }
  CHECK(cc.unit == "cuda_core");
  CHECK(cc.precision == Precision::fp64);
  const ProfileKernel& tc = kernel(r, "scale_tensor_core_fp64");
  CHECK(tc.unit == "tensor_core");
  // DMMA m8n8k4: 512 flops per instruction; B (qI) uses 1/16 of them for W = n (a multiply counted
  // as 1 flop, executed as an FMA of 2).
  CHECK(tc.flop_per_tensor_instruction == 512);
  CHECK(tc.counts.tensor_flop() == 2 * 16 * n);
  REQUIRE(tc.speedup);
  CHECK(tc.speedup->direction == "CUDA cores would lose");
  REQUIRE(cc.speedup);
  CHECK(cc.speedup->direction == "tensor cores could give");
  CHECK(cc.speedup->regime == "memory-bound");
  CHECK(cc.speedup->upper >= 1.0);
  CHECK(cc.speedup->upper < 1.01);
}

TEST_CASE("profile: GEMV's counters: Q within 3% at DRAM, W = 2mn plus the reduction's adds") {
  const ProfileResult r = analyse("h100-gemv.csv", true);
  const double m = 11584, n = 11584;
  const double declared_q = (m * n + m + n) * 8;
  for (const auto& k : r.kernels) {
    for (const auto& l : k.per_launch) {
      CHECK(std::abs(l.counts.traffic.at(MemoryLevelKind::dram).bytes() / declared_q - 1) < 0.03);
      CHECK(l.verdict == "within-bound");
    }
    if (k.short_name == "gemv_tensor_core") {
      CHECK(k.counts.tensor_flop() == 2 * 8 * 2 * m * n);  // 2 launches, 1/8 of each DMMA used
      CHECK(k.flop_per_tensor_instruction == ceiling_test::Rel(512).epsilon(0.001));
    }
  }
  // This export predates the tail fix (kernels/gemv.cu): 192 padded FMAs and 385 adds per row.
  const ProfileKernel& cc = kernel(r, "gemv_cuda_core<2>");
  CHECK(cc.counts.cuda_core_flop.at(Precision::fp64) == 2 * (2 * m * n + m * (2 * 192 + 385)));
}

TEST_CASE("profile: a PyTorch program (H100 export): every kernel within its bound, sorted by time") {
  const ProfileResult r = analyse("h100-torch.csv");
  CHECK(r.launches == 37);
  REQUIRE(r.kernels.size() >= 10);
  for (std::size_t i = 1; i < r.kernels.size(); ++i) CHECK(r.kernels[i - 1].counts.time_s >= r.kernels[i].counts.time_s);
  double share = 0;
  for (const auto& k : r.kernels) {
    CHECK_MESSAGE(k.verdict == "within-bound", k.short_name);
    CHECK(k.efficiency > 0);
    CHECK(k.efficiency <= 1);
    share += k.time_share;
  }
  CHECK(share == ceiling_test::Rel(1.0));
  // torch.mm in FP64 (cuBLAS, DMMA): 2 x 4096^3 flops per launch, bounded by the FP64 tensor-core peak.
  const ProfileKernel& mm = kernel(r, "sm90_xmma_gemm_f64f64_f64f64_f64_nn_n_tilesize128x64x16");
  CHECK(mm.counts.tensor_flop() == 2 * (2.0 * 4096 * 4096 * 4096));
  CHECK(mm.bounded_by == "tensor_core.fp64");
  // torch.mm in BF16 (nvjet, HGMMA): 2 x 8192^3 plus the tile padding (320-row tiles: 8320 rows).
  const ProfileKernel& bf = kernel(r, "nvjet_sm90_tst_320x128");
  CHECK(bf.counts.tensor_flop() == ceiling_test::Rel(2 * (2.0 * 8320 * 8192 * 8192)).epsilon(1e-9));
  CHECK(bf.precision == Precision::bf16);
  CHECK(bf.bounded_by == "tensor_core.bf16");
  // torch.mul in FP64: one DMUL per value, Q = 16 B per value.
  const ProfileKernel& mul = kernel(r, "MulFunctor<double>");
  CHECK(mul.counts.work_flop() == 2 * double(1 << 26));
  CHECK(mul.counts.traffic.at(MemoryLevelKind::l2).bytes() == 2 * 16 * double(1 << 26));
  CHECK(mul.bounded_by == "dram");
}

TEST_CASE("profile: an export without ceiling's metrics is refused with the list and the command") {
  // The default ncu set (no --metrics): no DRAM bytes, no flop counts.
  std::string text = slurp(kData / "h100-scale.csv");
  const auto drop = [&](const std::string& metric) {
    // Rename the column so the export lacks it (keeps the field count).
    const auto p = text.find("\"" + metric + "\"");
    REQUIRE(p != std::string::npos);
    text.replace(p + 1, metric.size(), "x" + metric);
  };
  drop("dram__bytes_read.sum");
  drop("smsp__sass_thread_inst_executed_op_dmul_pred_on.sum");
  const NcuExport ex = parse_ncu_csv(text, "default-set.csv", metric_names());
  const std::string e = error_of([&] { analyse_profile(ex, h100()); });
  CHECK(e.find("default-set.csv: the export lacks 2 metric(s)") != std::string::npos);
  CHECK(e.find("dram__bytes_read.sum") != std::string::npos);
  CHECK(e.find("smsp__sass_thread_inst_executed_op_dmul_pred_on.sum") != std::string::npos);
  CHECK(e.find("ceiling profile --print-metrics") != std::string::npos);
  // Optional metrics missing: a note, and the analysis goes on.
  std::string opt = slurp(kData / "h100-scale.csv");
  const auto p = opt.find("\"lts__t_sectors_srcunit_tex_op_read.sum\"");
  REQUIRE(p != std::string::npos);
  opt.replace(p + 1, 4, "xxxx");
  const ProfileResult r = analyse_profile(parse_ncu_csv(opt, "o.csv", metric_names()), h100());
  bool noted = false;
  for (const auto& n : r.notes)
    noted |= n.find("the export lacks") != std::string::npos &&
             n.find("lts__t_sectors_srcunit_tex_op_read.sum") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("profile: a launch faster than physics is flagged beats-bound, not hidden") {
  std::string text = slurp(kData / "h100-scale.csv");
  // The first launch's time (1,414,496 ns for 4.3 GB) cut to 1 us: far below Q/BW.
  const NcuExport ex0 = parse_ncu_csv(text, "s.csv", metric_names());
  const auto line = ex0.launches[0].line;
  std::istringstream in(text);
  std::string out, l;
  for (int i = 1; std::getline(in, l); ++i) {
    if (i == line) {
      const auto t = ex0.launches[0].get("gpu__time_duration.sum").value();
      std::ostringstream old;
      old.setf(std::ios::fixed);
      old.precision(0);
      old << t * 1e9;
      std::string s = old.str();
      std::string grouped;
      for (std::size_t k = 0; k < s.size(); ++k) {
        if (k && (s.size() - k) % 3 == 0) grouped += ',';
        grouped += s[k];
      }
      // .avg, .max, .min and .sum of gpu__time_duration all hold it: replace each.
      int replaced = 0;
      for (std::size_t p; (p = l.find("\"" + grouped + "\"")) != std::string::npos; ++replaced)
        l.replace(p, grouped.size() + 2, "\"1,000\"");
      REQUIRE(replaced >= 1);
    }
    out += l + "\n";
  }
  const ProfileResult r = analyse_profile(parse_ncu_csv(out, "s.csv", metric_names()), h100());
  const ProfileKernel& k = kernel(r, "scale_cuda_core");
  CHECK(k.launches_beating == 1);
  CHECK(profile_table(r).find("ran faster than the bound") != std::string::npos);
}

TEST_CASE("profile: 1000 launches analysed, aggregated per kernel") {
  // A 1000-launch export from the recorded rows (the target: analysed in under 2 s; the time is a
  // benchmark, scripts and NOTES, not this test).
  const std::string text = slurp(kData / "h100-torch.csv");
  std::istringstream in(text);
  std::string head, units, l;
  std::vector<std::string> rows;
  while (std::getline(in, l)) {
    if (l.empty() || l[0] != '"') continue;
    if (head.empty()) head = l;
    else if (units.empty()) units = l;
    else rows.push_back(l);
  }
  REQUIRE(rows.size() == 37);
  std::string big = head + "\n" + units + "\n";
  for (int i = 0; i < 1000; ++i) big += rows[static_cast<std::size_t>(i) % rows.size()] + "\n";
  const ProfileResult r = analyse_profile(parse_ncu_csv(big, "big.csv", metric_names()), h100());
  CHECK(r.launches == 1000);
  int total = 0;
  for (const auto& k : r.kernels) total += k.launches;
  CHECK(total == 1000);
  CHECK(r.kernels.size() == analyse("h100-torch.csv").kernels.size());
}

TEST_CASE("profile: the JSON carries every kernel's numbers") {
  const ProfileResult r = analyse("h100-gemv.csv", true);
  const nlohmann::json j = profile_to_json(r);
  CHECK(j["schema"] == "ceiling/profile/1");
  CHECK(j["hardware"]["id"] == "h100-sxm");
  REQUIRE(j["kernels"].size() == r.kernels.size());
  const auto& k = j["kernels"][0];
  for (const char* key : {"name", "short_name", "launches", "time_s", "time_share", "unit", "precision", "counts",
                          "intensity", "achieved_flop_per_s", "bound_s", "bounded_by", "efficiency", "verdict", "speedup",
                          "per_launch"})
    CHECK_MESSAGE(k.contains(key), key);
  CHECK(k["per_launch"][0]["terms"].size() >= 2);
}

// ---- the command ----

TEST_CASE("ceiling profile --from-ncu: the table sorted by time share, --json, --print-metrics") {
  using ceiling::test::run_ceiling;
  const std::string csv = (kData / "h100-torch.csv").string();
  const auto t = run_ceiling("profile --hw h100-sxm --from-ncu '" + csv + "'");
  CHECK(t.rc == 0);
  CHECK(t.out.find("ceiling profile: 37 launches of 15 kernels") != std::string::npos);
  // The largest share first: the FP64 GEMM.
  const auto first = t.out.find('\n', t.out.find("tensor cores (Eq. 22)"));
  CHECK(t.out.substr(first + 1, 120).find("sm90_xmma_gemm_f64") != std::string::npos);
  const auto j = run_ceiling("profile --hw h100-sxm --json --from-ncu '" + csv + "'");
  REQUIRE(j.rc == 0);
  const auto doc = nlohmann::json::parse(j.out);
  CHECK(doc["kernels"].size() == 15);
  const auto m = run_ceiling("profile --print-metrics");
  CHECK(m.rc == 0);
  CHECK(m.out.find("gpu__time_duration.sum,dram__bytes_read.sum") == 0);
}

TEST_CASE("ceiling profile: bad usage gives one line and a non-zero exit") {
  using ceiling::test::run_ceiling;
  const std::string csv = (kData / "h100-scale.csv").string();
  auto r = run_ceiling("profile", true);
  CHECK(r.rc != 0);
  CHECK(r.out.find("give the application after --") != std::string::npos);
  r = run_ceiling("profile --hw h100-sxm --from-ncu '" + csv + "' -- ./app", true);
  CHECK(r.out.find("not both") != std::string::npos);
  r = run_ceiling("profile --hw h100-sxm --from-ncu '" + csv + "' --kernel-regex x", true);
  CHECK(r.out.find("the export is already made") != std::string::npos);
  r = run_ceiling("profile --hw nosuchgpu --from-ncu '" + csv + "'", true);
  CHECK(r.rc != 0);
  // The shipped h100-sxm descriptor carries the driver's name: found without --hw.
  r = run_ceiling("profile --from-ncu '" + csv + "'", true);
  CHECK(r.rc == 0);
  CHECK(r.out.find("h100-sxm") != std::string::npos);
  {  // A GPU no shipped descriptor names: the same export under another device name.
    const fs::path other = fs::temp_directory_path() / ("ceiling-profile-z100-" + std::to_string(::getpid()) + ".csv");
    std::ifstream in(csv);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    for (size_t at; (at = text.find("NVIDIA H100 80GB HBM3")) != std::string::npos;)
      text.replace(at, std::string("NVIDIA H100 80GB HBM3").size(), "NVIDIA Z100 80GB");
    std::ofstream(other) << text;
    r = run_ceiling("profile --from-ncu '" + other.string() + "'", true);
    fs::remove(other);
    CHECK(r.rc != 0);
    CHECK(r.out.find("no shipped descriptor describes 'NVIDIA Z100 80GB': give --hw") != std::string::npos);
  }
  r = run_ceiling("profile --hw h100-sxm --from-ncu /nonexistent.csv", true);
  CHECK(r.out.find("/nonexistent.csv: cannot open") != std::string::npos);
  r = run_ceiling("profile --hw h100-sxm --ncu /nonexistent/ncu -- ./app", true);
  CHECK(r.out.find("--ncu /nonexistent/ncu is not an executable file") != std::string::npos);
}

TEST_CASE("ceiling profile -- APP: runs ncu with ceiling's metrics and filters, ncu's failures become one line") {
  using ceiling::test::run_ceiling;
  const fs::path dir = ceiling::test::scratch_dir("profile", "run");
  const std::string fake = (kData / "fake-ncu.sh").string();
  const std::string args_file = (dir / "args.txt").string();
  const std::string out_json = (dir / "p.json").string();
  const std::string kept = (dir / "kept.csv").string();
  const std::string base = "profile --hw h100-sxm --ncu '" + fake + "' ";
  setenv("FAKE_NCU_EXPORT", (kData / "h100-scale.csv").c_str(), 1);
  setenv("FAKE_NCU_ARGS", args_file.c_str(), 1);
  setenv("FAKE_NCU_MODE", "ok", 1);
  auto r = run_ceiling(base + "--kernel-regex 'scale_' --launch-skip 3 --launch-count 2 --filter-mode per-launch-config --cache-control none "
                              "--out '" + out_json + "' --csv-out '" + kept + "' -- ./my_app --size 4",
                       true);
  CHECK(r.rc == 0);
  CHECK(r.out.find("output of the application") != std::string::npos);  // the app's output passes through (stderr)
  CHECK(r.out.find("4 launches of 2 kernels") != std::string::npos);
  const std::string args = slurp(args_file);
  for (const char* a : {"--csv\n", "--page\nraw\n", "--print-units\nbase\n", "--clock-control\nnone\n",
                        "--kernel-name\nregex:scale_\n", "--launch-skip\n3\n", "--launch-count\n2\n",
                        "--filter-mode\nper-launch-config\n", "--cache-control\nnone\n", "./my_app\n--size\n4\n"})
    CHECK_MESSAGE(args.find(a) != std::string::npos, a);
  CHECK(args.find(profile_metric_list()) != std::string::npos);
  CHECK(nlohmann::json::parse(slurp(out_json))["kernels"].size() == 2);
  CHECK(slurp(kept) == slurp(kData / "h100-scale.csv"));

  const auto fails = [&](const char* mode, const std::string& extra, const std::string& expect) {
    setenv("FAKE_NCU_MODE", mode, 1);
    const auto x = run_ceiling(base + extra + " -- ./my_app", true);
    CHECK_MESSAGE(x.rc != 0, mode);
    CHECK_MESSAGE(x.out.find(expect) != std::string::npos, mode << ": " << x.out);
  };
  fails("perm", "", "(ERR_NVGPUCTRPERM): run as root");
  fails("nokernel", "", "the application launched no CUDA kernel (./my_app)");
  fails("nokernel", "--kernel-regex nosuch",
        "no kernel launch matched the filter (--kernel-regex 'nosuch'); the application launched: scale_cuda_core, "
        "gemv_tensor_core");
  fails("appfail", "", "the application failed (./my_app exited with code 3");
  fails("noexport", "", "ncu failed (exit 9): ==ERROR== Failed to prepare kernel for profiling");
  fails("crash", "", "ncu was killed by signal 11");
  unsetenv("FAKE_NCU_MODE");
  unsetenv("FAKE_NCU_ARGS");
  unsetenv("FAKE_NCU_EXPORT");
  fs::remove_all(dir);
}

TEST_CASE("profile: H200 export with the FP category counts: tensor instructions are not 'other' work") {
  const NcuExport ex = read_ncu_csv(kData / "h200-torch.csv", metric_names());
  const ProfileResult r =
      analyse_profile(ex, load_descriptor(fs::path(CEILING_SOURCE_DIR) / "hardware" / "h200.yaml"));
  CHECK(r.launches == 55);
  bool missing_note = false, conversion_note = false;
  for (const auto& n : r.notes) {
    missing_note |= n.find("the export lacks") != std::string::npos;
    conversion_note |= n.find("'vectorized_elementwise_kernel': 6.71e+07 fp64 thread instructions that are not "
                              "add/mul/fma") != std::string::npos;
  }
  CHECK_FALSE(missing_note);  // recorded with the whole metric set
  CHECK(conversion_note);     // the BF16 -> FP64 copy: FP64 instructions, no flops
  for (const auto& k : r.kernels) {
    CHECK_MESSAGE(k.verdict == "within-bound", k.short_name);
    // ncu counts each DMMA as 32 FP64 thread instructions: subtracted, they are W through the tensor path.
    if (k.name.find("sm90_xmma_gemm_f64f64_f64f64_f64_nn_n_tilesize128x64x16") != std::string::npos) {
      CHECK(k.counts.tensor_instructions.at("dmma") > 0);
      CHECK(k.counts.other_fp_instructions.count(Precision::fp64) == 0);
    }
  }
}
