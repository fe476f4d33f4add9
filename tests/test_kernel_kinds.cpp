// The kind table and the variant registry are the only places that know kernel names: a kind and
// a variant that exist only in this test binary go through predict (library), kernel files and
// the validate sweep without any other edit. No GPU: the variant's instance and the measurement
// are CPU fakes; the sweep logic is the one `ceiling validate` runs.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "scratch.hpp"
#include "kernels/gemv_shapes.hpp"
#include "kernels/registry.hpp"
#include "kernels/sweep.hpp"
#include "kernels/verify.hpp"
#include "model/descriptor.hpp"
#include "model/kernel_kind.hpp"
#include "model/kernel_model.hpp"
#include "model/roofline.hpp"
#include "model/validation.hpp"

using namespace ceiling;
namespace fs = std::filesystem;

namespace {

constexpr double kL2 = 50.0 * 1024 * 1024;

// STREAM triad a = b + q c: W = 2n, Q = 3nD (two streams read, one written).
const KernelKindRegistrar triad_kind{[] {
  KernelKind k;
  k.name = "triad-test";
  k.summary = "a = b + q c (test-only kind)";
  k.params = {{"n", ParamType::count, true, std::nullopt, "elements", 1, 0, {}},
              {"unroll", ParamType::integer, false, 4.0, "elements per thread (default 4)", 1, 16, {}}};
  k.model = [](const KernelParams& p, Precision pr) {
    const double n = p.at("n"), D = bytes_per_value(pr);
    if (p.at("unroll") == 3) throw KernelParamError("unroll", "triad-test: unroll 3 is not a power of two");
    KernelModel m;
    m.description = "triad-test n=" + std::to_string(static_cast<long long>(n));
    m.precision = pr;
    m.work_flop = 2 * n;
    m.read_bytes = 2 * n * D;
    m.write_bytes = n * D;
    m.traffic_bytes = m.read_bytes + m.write_bytes;
    m.working_set_bytes = m.traffic_bytes;
    m.tensor_core_fraction = 1.0 / 8;
    return m;
  };
  k.params_for_bytes = [](double bytes, Precision pr) { return KernelParams{{"n", std::floor(bytes / (3 * bytes_per_value(pr)))}}; };
  k.params_for_count = [](double c) { return KernelParams{{"n", c}}; };
  k.order = 15;
  return k;
}()};

// A CPU stand-in for a device instance: "launching" computes the output, so the check runs.
class FakeTriad final : public kernels::KernelInstance {
 public:
  explicit FakeTriad(long long n) : a_(static_cast<size_t>(n)) {}
  void randomize(std::uint64_t seed) override { seed_ = seed; }
  void poison_output() override { std::fill(a_.begin(), a_.end(), std::nan("")); }
  void launch(kernels::Stream) override {
    for (size_t i = 0; i < a_.size(); ++i) a_[i] = ref(static_cast<long long>(i));
  }
  kernels::Verification verify() override {
    return kernels::check_elementwise(a_, [&](long long i) { return ref(i); }, 1e-15, "b + q c");
  }
  long long output_elements() const override { return static_cast<long long>(a_.size()); }

 private:
  double ref(long long i) const { return 1.0 + static_cast<double>((static_cast<std::uint64_t>(i) ^ seed_) % 7); }
  std::vector<double> a_;
  std::uint64_t seed_ = 0;
};

int created = 0;
kernels::KernelVariant triad_variant(ComputeUnit unit) {
  kernels::KernelVariant v;
  v.kind = "triad-test";
  v.unit = unit;
  v.precision = Precision::fp64;
  v.description = unit == ComputeUnit::tensor_core ? "fake tensor-core triad" : "fake CUDA-core triad";
  v.tensor_core_fraction = 1.0 / 8;
  // Tensor-core tiles of 256 values; the CUDA-core variant takes any n (the sweep still shares sizes).
  if (unit == ComputeUnit::tensor_core)
    v.round = [](KernelParams p) {
      p["n"] = std::max(256.0, std::floor(p.at("n") / 256) * 256);
      return p;
    };
  v.create = [](const KernelParams& p, const kernels::RunContext&) -> std::unique_ptr<kernels::KernelInstance> {
    ++created;
    return std::make_unique<FakeTriad>(static_cast<long long>(p.at("n")));
  };
  v.sass = {{"triad_test", "DFMA", ""}};
  return v;
}
const kernels::Registrar triad_cc{triad_variant(ComputeUnit::cuda_core)};
const kernels::Registrar triad_tc{triad_variant(ComputeUnit::tensor_core)};

HardwareDescriptor synthetic_descriptor() {
  HardwareDescriptor hw;
  hw.id = "synthetic";
  hw.identity.name = "Synthetic GPU";
  auto& dram = hw.memory[MemoryLevelKind::dram];
  dram.bandwidth.dimension = Dimension::bytes_per_second;
  dram.bandwidth.spec = SpecValue{4.0e12, "test"};
  Field triad{Dimension::bytes_per_second};
  triad.measured = MeasuredValue{3.6e12, 3.5e12, 3.7e12, 20, 0.01, "dram-bandwidth", "2026-11-23T00:00:00Z", 1.98e9, false, ""};
  dram.patterns["triad"] = triad;
  auto& l2 = hw.memory[MemoryLevelKind::l2];
  l2.bandwidth.dimension = Dimension::bytes_per_second;
  l2.bandwidth.spec = SpecValue{10.0e12, "test"};
  l2.capacity.dimension = Dimension::bytes;
  l2.capacity.spec = SpecValue{kL2, "test"};
  Field cc{Dimension::flop_per_second};
  cc.spec = SpecValue{34.0e12, "test"};
  Field tc{Dimension::flop_per_second};
  tc.spec = SpecValue{67.0e12, "test"};
  hw.compute[ComputeUnit::cuda_core][Precision::fp64] = cc;
  hw.compute[ComputeUnit::tensor_core][Precision::fp64] = tc;
  return hw;
}

using ceiling::test::message_of;

}  // namespace

TEST_CASE("a kind registered in the test binary is in the table, in its order") {
  const KernelKind& k = kernel_kind("triad-test");
  CHECK(k.params.size() == 2);
  std::vector<std::string> names;
  for (const auto& x : kernel_kind_table()) names.push_back(x.name);
  CHECK(std::find(names.begin(), names.end(), "triad-test") != names.end());
  CHECK(kernel_kind_names().find("triad-test") != std::string::npos);
  CHECK_THROWS_AS(register_kernel_kind(k), std::logic_error);  // a name is registered once
  CHECK(message_of([] { kernel_kind("fft"); }).find("unknown kind 'fft' (one of scale, gemv") != std::string::npos);
  CHECK(param_option("index_bytes") == "--index-bytes");
}

TEST_CASE("predict (library) accepts the test-only kind: W, Q, streams, defaults, errors") {
  const KernelModel m = make_kernel_model(kernel_kind("triad-test"), {{"n", 1e9}}, Precision::fp64);
  CHECK(m.kind == "triad-test");
  CHECK(m.intensity() == ceiling_test::Rel(2.0 / 24));
  CHECK(m.read_bytes == 16e9);
  CHECK(m.write_bytes == 8e9);
  const Prediction p = predict(synthetic_descriptor(), m);
  CHECK(p.memory_level == "dram");
  // The roof of its streams (2:1 read:write = the calibrated triad, 3.6 TB/s), not the level's 4.0.
  CHECK(p.t_memory == ceiling_test::Rel(24e9 / 3.6e12));
  CHECK(p.alpha == ceiling_test::Rel(67.0 / 8 / 34.0));
  // Missing, unknown and rejected parameters name the parameter.
  try {
    make_kernel_model(kernel_kind("triad-test"), {}, Precision::fp64);
    FAIL("no error");
  } catch (const KernelParamError& e) {
    CHECK(e.param() == "n");
  }
  try {
    make_kernel_model(kernel_kind("triad-test"), {{"n", 10}, {"m", 3}}, Precision::fp64);
    FAIL("no error");
  } catch (const KernelParamError& e) {
    CHECK(e.param() == "m");
    CHECK(std::string(e.what()).find("it takes n, unroll") != std::string::npos);
  }
  try {
    make_kernel_model(kernel_kind("triad-test"), {{"n", 10}, {"unroll", 3}}, Precision::fp64);
    FAIL("no error");
  } catch (const KernelParamError& e) {
    CHECK(e.param() == "unroll");
  }
}

TEST_CASE("kernel files accept the test-only kind, with line-accurate errors") {
  const fs::path dir = test::scratch_dir("kinds", "files");
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return dir / name;
  };
  const KernelModel k = load_kernel_file(write("ok.yaml", "kind: triad-test\nn: 4096\nunroll: 8\n"));
  CHECK(k.kind == "triad-test");
  CHECK(k.work_flop == 2 * 4096);
  try {
    load_kernel_file(write("bad.yaml", "kind: triad-test\nn: 4096\nunroll: 17\n"));
    FAIL("no error");
  } catch (const KernelFileError& e) {
    CHECK(e.line() == 3);
    CHECK(e.key() == "unroll");
    CHECK(std::string(e.what()).find("1..16") != std::string::npos);
    CHECK(std::string(e.what()).find("unroll: unroll:") == std::string::npos);  // the key once
  }
  try {
    load_kernel_file(write("unknown.yaml", "kind: triad-test\nn: 4096\nm: 2\n"));
    FAIL("no error");
  } catch (const KernelFileError& e) {
    CHECK(e.line() == 3);
    CHECK(std::string(e.what()).find("allowed: n, unroll") != std::string::npos);
  }
  try {
    load_kernel_file(write("rejected.yaml", "kind: triad-test\nn: 64\nunroll: 3\n"));
    FAIL("no error");
  } catch (const KernelFileError& e) {
    CHECK(e.line() == 3);  // the model's own rejection points at the parameter
    CHECK(e.key() == "unroll");
  }
  fs::remove_all(dir);
}

TEST_CASE("the validate sweep runs the test-only variants without other edits") {
  const HardwareDescriptor hw = synthetic_descriptor();
  const auto variants = kernels::select_variants({"triad-test"});
  REQUIRE(variants.size() == 2);
  CHECK(variants[0]->unit == ComputeUnit::cuda_core);
  CHECK(message_of([] { kernels::select_variants({"fft"}); }).find("unknown kernel 'fft'") != std::string::npos);

  kernels::Sweep sweep;
  for (const char* s : {"3MiB", "3MiB", "3150000B", "300MiB", "1000"}) sweep.sizes.push_back(kernels::parse_size_request(s));
  sweep.l2_bytes = kernels::sweep_l2_bytes(hw);
  CHECK(sweep.l2_bytes == kL2);
  std::vector<std::string> progress;
  sweep.on_result = [&](size_t done, size_t total, const validation::KernelResult& r) {
    progress.push_back(std::to_string(done) + "/" + std::to_string(total) + " " + r.variant);
  };
  std::vector<kernels::MeasureRequest> seen;
  created = 0;
  // The fake measurement: the instance checks itself, then "runs" at 80% of the bound's bandwidth.
  const kernels::Measurer fake = [&](const kernels::MeasureRequest& req) {
    seen.push_back(req);
    auto inst = req.variant->create(req.params, req.context);
    inst->randomize(req.seed);
    inst->poison_output();
    inst->launch(nullptr);
    const kernels::Verification v = inst->verify();
    REQUIRE(v.ok);
    const double bw = req.context.in_l2 ? 10.0e12 : 4.0e12;
    kernels::MeasureResult r;
    r.time = {req.model.traffic_bytes / (0.8 * bw), 0, 0, 0.001, 20, 1};
    r.time.min = r.time.max = r.time.median;
    r.verify_error = v.error;
    r.how = req.context.in_l2 ? "warm" : "cold";
    return r;
  };
  const validation::ValidationReport rep = kernels::run_validation(hw, variants, sweep, fake);
  // 3MiB twice and 3145000 B round to one size: three sizes per variant.
  REQUIRE(rep.results.size() == 6);
  CHECK(created == 6);
  CHECK(progress.front() == "1/6 cuda_core");
  CHECK(progress.back() == "6/6 tensor_core");
  std::set<double> ns;
  for (const auto& r : rep.results) {
    CAPTURE(r.variant);
    CHECK(r.kernel == "triad-test");
    REQUIRE(r.size.size() == 1);  // the kind's parameters are the results' size fields
    ns.insert(r.size.at("n"));
    CHECK(std::fmod(r.size.at("n"), 256) == 0);  // the tensor-core rounding applies to both
    CHECK(r.memory_level == (fits_in_l2(r.working_set_bytes, kL2) ? "l2" : "dram"));
    CHECK(r.l2_flushed == (r.memory_level == "dram"));
    // The fake took 1.25x the level's bound; out of L2 the bound is the triad pattern's (3.6 of 4.0).
    CHECK(r.efficiency == ceiling_test::Rel(r.memory_level == "dram" ? 0.8 * 4.0 / 3.6 : 0.8));
    CHECK(r.verdict == "within-bound");
    CHECK(r.read_bytes == 2 * r.write_bytes);
    if (r.memory_level == "dram") {  // the calibrated pattern of the streams, 2:1 read:write
      CHECK(r.dram_pattern == "triad");
      CHECK(r.dram_pattern_bytes_per_s == 3.6e12);
    }
  }
  CHECK(ns.size() == 3);
  CHECK(ns.count(768));  // the count 1000, rounded down to the tensor-core tile of 256
  for (const auto& req : seen) CHECK(req.context.l2_bytes == kL2);
  // CUDA-core and tensor-core results pair into speedups at every size.
  CHECK(rep.speedups.size() == 3);
  for (const auto& s : rep.speedups) CHECK(s.measured == ceiling_test::Rel(1.0));
  CHECK(rep.l2_split_bytes == kL2);
  const std::string table = validation::format_table(rep);
  CHECK(table.find("triad-test") != std::string::npos);
  CHECK(table.find("n=768") != std::string::npos);
  // The results file round-trips the new fields.
  const validation::ValidationReport back = validation::from_json(validation::to_json(rep));
  CHECK(back.results.at(0).read_bytes == rep.results.at(0).read_bytes);
  CHECK(back.l2_split_bytes == kL2);
}

TEST_CASE("every built-in kind that can be swept lands near the asked working set") {
  for (const auto& k : kernel_kind_table()) {
    if (!k.params_for_bytes) continue;
    for (double bytes : {1e6, 64e6, 2e9}) {
      CAPTURE(k.name);
      CAPTURE(bytes);
      const KernelModel m = make_kernel_model(k, k.params_for_bytes(bytes, Precision::fp64), Precision::fp64);
      CHECK(m.working_set_bytes == ceiling_test::Rel(bytes).epsilon(0.02));
      CHECK(m.read_bytes + m.write_bytes == ceiling_test::Rel(m.traffic_bytes));
    }
  }
  CHECK(dram_pattern_for_streams(8, 8) == "scale");
  CHECK(dram_pattern_for_streams(1e9, 1e3) == "read");
  CHECK(dram_pattern_for_streams(0, 5) == "write");
  CHECK(dram_pattern_for_streams(0, 0).empty());
  CHECK(kernel_size_text("gemv", {{"m", 4096}, {"n", 2048}}) == "4096x2048");
  CHECK(kernel_size_text("scale", {{"n", 1048576}}) == "n=1048576");
  CHECK(kernel_size_text("no-such-kind", {{"a", 1}, {"b", 2}}) == "a=1 b=2");
}

TEST_CASE("no kernel-name string comparisons outside the kind table and the variants") {
  // `x == "gemv"`, `"scale" != y`, `kind == "stencil"` ...: a kind's behaviour belongs in its entry.
  std::string names;
  for (const auto& k : kernel_kind_table()) names += (names.empty() ? "" : "|") + std::regex_replace(k.name, std::regex("-"), "\\-");
  const std::regex compare("(==|!=)\\s*\"(" + names + ")\"|\"(" + names + ")\"\\s*(==|!=)");
  const fs::path root = CEILING_SOURCE_DIR;
  const std::set<std::string> allowed{"model/kernel_kind.cpp"};
  std::vector<std::string> hits;
  for (const char* dir : {"model", "cli", "reports", "kernels", "probes", "gpu"}) {
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      const std::string ext = e.path().extension().string();
      if (ext != ".cpp" && ext != ".hpp" && ext != ".cu" && ext != ".cuh") continue;
      const std::string rel = fs::relative(e.path(), root).string();
      if (allowed.count(rel)) continue;
      std::ifstream in(e.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n)
        if (std::regex_search(line, compare)) hits.push_back(rel + ":" + std::to_string(n) + ": " + line);
    }
  }
  for (const auto& h : hits) MESSAGE(h);
  CHECK(hits.empty());
}

TEST_CASE("gemm: square sweep 1024..16384 (quick 3 sizes), sizes by count and by working set, its size text") {
  const KernelKind& k = kernel_kind("gemm");
  REQUIRE(k.sweep_points);
  const auto full = k.sweep_points(60e6, Precision::fp64, false), quick = k.sweep_points(60e6, Precision::bf16, true);
  REQUIRE(full.size() == 5);
  CHECK(full.front().at("m") == 1024);
  CHECK(full.back().at("k") == 16384);
  CHECK(quick.size() == 3);
  for (const auto& p : full) CHECK((p.at("m") == p.at("n") && p.at("n") == p.at("k")));
  CHECK(k.params_for_count(4096) == KernelParams{{"m", 4096}, {"n", 4096}, {"k", 4096}});
  CHECK(kernel_size_text("gemm", {{"m", 4096}, {"n", 2048}, {"k", 512}}) == "4096x2048x512");
  const KernelModel m = make_kernel_model(k, k.params_for_count(8192), Precision::bf16);
  CHECK(m.work_flop == 2.0 * 8192 * 8192 * 8192);
  CHECK(m.traffic_bytes == (3.0 + 1.0) * 8192 * 8192 * 2);  // A, B; C read and written
}

TEST_CASE("opt-in kinds (gemm) run only when named") {
  CHECK(kernel_kind("gemm").opt_in);
  CHECK_FALSE(kernel_kind("scale").opt_in);
  for (const auto* v : ceiling::kernels::select_variants({})) CHECK_FALSE(kernel_kind(v->kind).opt_in);
}

// The GEMV launch shapes are bit fields in one int (kernels/gemv_shapes.hpp); a flag that lands in
// another field makes two shapes run the same kernel (the 16-warp shapes did until 2026-11-26).
TEST_CASE("GEMV launch shapes decode to distinct kernels") {
  namespace gs = ceiling::kernels::gemv_shapes;
  for (const bool cold : {false, true}) {
    const std::vector<int> tc = gs::tensor_core(cold);
    std::set<std::tuple<bool, int, int, bool, bool>> decoded;
    for (const int c : tc) {
      const bool rows_kernel = c & gs::kTcRowKernel;
      const bool streaming = c & gs::kTcStreaming;
      if (!cold) CHECK_FALSE(streaming);
      if (rows_kernel) {
        const int rows = c & 15;
        CHECK((rows == 2 || rows == 4 || rows == 8));
        CHECK((c & ~(15 | gs::kTcRowKernel | gs::kTcRowPrefetch | gs::kTcStreaming | gs::kTcRowSplit2 | gs::kTcRowSplit4)) == 0);
        // Warps per row (third field): 1, or 2 / 4 in the L2 only, never both flags, never streaming.
        const int split = (c & gs::kTcRowSplit2 ? 2 : 1) * (c & gs::kTcRowSplit4 ? 4 : 1);
        CHECK((split == 1 || split == 2 || split == 4));
        if (split > 1) {
          CHECK_FALSE(cold);
          CHECK_FALSE(streaming);
        }
        decoded.insert({true, rows, split, bool(c & gs::kTcRowPrefetch), streaming});
      } else {
        const int loads = c & 15, warps = (c >> 4) & 31;
        CHECK((loads == 4 || loads == 8));
        CHECK((warps == 4 || warps == 8 || warps == 16));
        CHECK((c & ~(15 | 31 << 4 | gs::kTcStreaming)) == 0);
        decoded.insert({false, loads, warps, false, streaming});
      }
      CHECK(gs::known(true, c));
    }
    CHECK(decoded.size() == tc.size());
    // 5 eight-row shapes + 6 row shapes, each also streaming out of L2; in the L2 10 split-row shapes
    // (at most 16 warps per block: no 8 rows x 4 warps).
    CHECK(tc.size() == (cold ? 22u : 21u));
  }
  CHECK(gs::all(true).size() == 32u);  // 22 cold + the 10 split-row shapes
  CHECK_FALSE(gs::known(true, 8 | gs::kTcRowKernel | gs::kTcRowSplit4));
  CHECK(gs::known(true, 4 | gs::kTcRowKernel | gs::kTcRowSplit4 | gs::kTcRowPrefetch));
  CHECK(gs::known(true, 2 | gs::kTcRowKernel | gs::kTcRowSplit4));
  CHECK_FALSE(gs::known(true, 2 | gs::kTcRowKernel | gs::kTcRowSplit4 | gs::kTcStreaming));
  CHECK_FALSE(gs::known(true, 2 | gs::kTcRowKernel | gs::kTcRowSplit2 | gs::kTcRowSplit4));
  CHECK_FALSE(gs::known(true, 3 | gs::kTcRowKernel));
  // The results' description names the shape: one text per shape.
  for (const bool tc : {false, true}) {
    std::set<std::string> texts;
    for (const int c : gs::all(tc)) texts.insert(gs::text(tc, c));
    CHECK(texts.size() == gs::all(tc).size());
  }
  CHECK(gs::text(false, 4 | gs::kCcPrefetch) == "4 rows per block, a warp per row, next chunk prefetched");
  CHECK(gs::text(true, 4 | gs::kTcRowKernel | gs::kTcRowSplit2) == "m8n8k4 by rows: 4 rows per block, 2 warps per row");
  CHECK(gs::text(true, 8 | 16 << 4 | gs::kTcStreaming) ==
        "m8n8k4 by 8-row blocks: 16 warps per block, 8 double2 loads per lane per step, streaming loads of A");
}
