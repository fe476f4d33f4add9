// The intensity kind (issue 12): W, Q, I and the tensor-core fraction per precision and k, its
// parameter errors (library and kernel files), its validate sweep across the ridge (k at one
// working set in and one out of the L2), CUDA-core/tensor-core pairing and the overlap fit near the
// ridge. No GPU: the variants here are CPU fakes registered for the real kind; the sweep and the
// fit are the ones `ceiling validate` runs.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "kernels/registry.hpp"
#include "kernels/sweep.hpp"
#include "kernels/verify.hpp"
#include "kernels/work_units.hpp"
#include "model/descriptor.hpp"
#include "model/kernel_kind.hpp"
#include "model/kernel_model.hpp"
#include "model/roofline.hpp"
#include "model/validation.hpp"
#include "scratch.hpp"

using namespace ceiling;
namespace fs = std::filesystem;

namespace {

constexpr double kL2 = 60.0 * 1024 * 1024;
constexpr double kPhi = 0.4;  // the overlap the fake measurement obeys

KernelModel intensity(double n, double k, Precision p) {
  return make_kernel_model(kernel_kind("intensity"), {{"n", n}, {"k", k}}, p);
}

std::string param_rejected(double n, double k, Precision p) {
  try {
    intensity(n, k, p);
  } catch (const KernelParamError& e) {
    return e.param();
  }
  return "(accepted)";
}

// H200-like spec numbers: DRAM 4.8 TB/s, L2 11.5 TB/s, fp64 34/67, fp32 67, fp16 134/990 TFLOP/s.
HardwareDescriptor synthetic_descriptor() {
  HardwareDescriptor hw;
  hw.id = "synthetic-intensity";
  hw.identity.name = "Synthetic GPU";
  auto& dram = hw.memory[MemoryLevelKind::dram];
  dram.bandwidth.dimension = Dimension::bytes_per_second;
  dram.bandwidth.spec = SpecValue{4.8e12, "test"};
  auto& l2 = hw.memory[MemoryLevelKind::l2];
  l2.bandwidth.dimension = Dimension::bytes_per_second;
  l2.bandwidth.spec = SpecValue{11.5e12, "test"};
  l2.capacity.dimension = Dimension::bytes;
  l2.capacity.spec = SpecValue{kL2, "test"};
  const auto peak = [&](ComputeUnit u, Precision p, double v) {
    Field f{Dimension::flop_per_second};
    f.spec = SpecValue{v, "test"};
    hw.compute[u][p] = f;
  };
  peak(ComputeUnit::cuda_core, Precision::fp64, 34e12);
  peak(ComputeUnit::tensor_core, Precision::fp64, 67e12);
  peak(ComputeUnit::cuda_core, Precision::fp32, 67e12);
  peak(ComputeUnit::cuda_core, Precision::fp16, 134e12);
  peak(ComputeUnit::tensor_core, Precision::fp16, 990e12);
  return hw;
}

// A CPU stand-in for a device instance: y = x * (sum of k/w-scaled ones) per row, checked.
class FakeIntensity final : public kernels::KernelInstance {
 public:
  FakeIntensity(long long n, double k) : y_(static_cast<size_t>(n)), k_(k) {}
  void randomize(std::uint64_t seed) override { seed_ = seed; }
  void poison_output() override { std::fill(y_.begin(), y_.end(), std::nan("")); }
  void launch(kernels::Stream) override {
    for (size_t i = 0; i < y_.size(); ++i) y_[i] = ref(static_cast<long long>(i));
  }
  kernels::Verification verify() override {
    return kernels::check_normwise(y_, [&](long long i) { return static_cast<long double>(ref(i)); }, 1e-15);
  }
  long long output_elements() const override { return static_cast<long long>(y_.size()); }

 private:
  double ref(long long i) const { return k_ * (1.0 + static_cast<double>((static_cast<std::uint64_t>(i) ^ seed_) % 5)); }
  std::vector<double> y_;
  double k_;
  std::uint64_t seed_ = 0;
};

std::map<std::string, int> created;
kernels::KernelVariant fake_variant(ComputeUnit unit, Precision p) {
  kernels::KernelVariant v;
  v.kind = "intensity";
  v.unit = unit;
  v.precision = p;
  v.description = "fake " + std::string(to_string(unit)) + " intensity";
  v.tensor_core_fraction = 0;  // the kind's k/w
  v.round = [p](KernelParams params) {  // 64 rows, as the real variants
    const double u = 64.0 * intensity_row_width(p);
    params["n"] = std::max(u, std::floor(params.at("n") / u) * u);
    return params;
  };
  v.create = [](const KernelParams& params, const kernels::RunContext&) -> std::unique_ptr<kernels::KernelInstance> {
    ++created[kernel_size_text("intensity", params)];
    return std::make_unique<FakeIntensity>(static_cast<long long>(params.at("n")), params.at("k"));
  };
  return v;
}
// fp64 and fp16 on both units; fp32 on CUDA cores only (no tensor-core partner).
const kernels::Registrar fake_fp64_cc{fake_variant(ComputeUnit::cuda_core, Precision::fp64)};
const kernels::Registrar fake_fp64_tc{fake_variant(ComputeUnit::tensor_core, Precision::fp64)};
const kernels::Registrar fake_fp32_cc{fake_variant(ComputeUnit::cuda_core, Precision::fp32)};
const kernels::Registrar fake_fp16_cc{fake_variant(ComputeUnit::cuda_core, Precision::fp16)};
const kernels::Registrar fake_fp16_tc{fake_variant(ComputeUnit::tensor_core, Precision::fp16)};

// Times that obey T = max + (1 - phi) min + Tother exactly, Tm and Tc from the model's own bound,
// Tother per level (launch-like, larger for cold DRAM runs).
kernels::Measurer fake_measurer(const HardwareDescriptor& hw) {
  return [&hw](const kernels::MeasureRequest& req) {
    auto inst = req.variant->create(req.params, req.context);
    inst->randomize(req.seed);
    inst->poison_output();
    inst->launch(nullptr);
    const kernels::Verification v = inst->verify();
    REQUIRE(v.ok);
    const validation::TimeBound b =
        validation::time_bound(hw, req.model, req.variant->unit, req.context.in_l2 ? "l2" : "dram");
    const double t_other = req.context.in_l2 ? 1.5e-6 : 4e-6;
    kernels::MeasureResult r;
    r.time.median = partial_overlap_time_s(b.t_memory, b.t_compute, kPhi, t_other);
    r.time.min = r.time.max = r.time.median;
    r.time.cv = 0.001;
    r.time.repeats = 20;
    r.time.launches = req.context.in_l2 ? 16 : 1;
    r.verify_error = v.error;
    return r;
  };
}

using ceiling::test::message_of;

}  // namespace

TEST_SUITE_BEGIN("intensity");

TEST_CASE("intensity: W = 2kn, Q = 2nD, I = k/D, streams and the tensor-core fraction per precision and k") {
  const double n = 1 << 20;
  struct Case {
    Precision p;
    double k, intensity, fraction;
  };
  for (const Case& c : {Case{Precision::fp64, 1, 1.0 / 8, 1.0 / 8}, Case{Precision::fp64, 2, 2.0 / 8, 2.0 / 8},
                        Case{Precision::fp64, 4, 0.5, 0.5}, Case{Precision::fp64, 8, 1, 1},
                        Case{Precision::fp64, 256, 32, 1}, Case{Precision::fp64, 24, 3, 1},
                        Case{Precision::fp32, 1, 0.25, 1.0 / 8}, Case{Precision::fp32, 256, 64, 1},
                        Case{Precision::fp16, 1, 0.5, 1.0 / 16}, Case{Precision::fp16, 8, 4, 0.5},
                        Case{Precision::fp16, 16, 8, 1}, Case{Precision::fp16, 512, 256, 1}}) {
    CAPTURE(to_string(c.p));
    CAPTURE(c.k);
    const double D = bytes_per_value(c.p);
    const KernelModel m = intensity(n, c.k, c.p);
    CHECK(m.kind == "intensity");
    CHECK(m.work_flop == 2 * c.k * n);
    CHECK(m.traffic_bytes == 2 * n * D);
    CHECK(m.read_bytes == n * D);
    CHECK(m.write_bytes == n * D);
    CHECK(m.working_set_bytes == 2 * n * D);
    CHECK(m.intensity() == ceiling_test::Rel(c.intensity));
    CHECK(m.tensor_core_fraction == ceiling_test::Rel(c.fraction));
    CHECK(kernel_size_text("intensity", {{"n", n}, {"k", c.k}}) == "n=1048576 k=" + std::to_string(static_cast<int>(c.k)));
  }
  CHECK(intensity_row_width(Precision::fp64) == 8);
  CHECK(intensity_row_width(Precision::fp32) == 8);
  CHECK(intensity_row_width(Precision::fp16) == 16);
  CHECK(intensity_row_width(Precision::bf16) == 16);
  CHECK(intensity_row_width(Precision::int8) == 32);
  // k defaults to 8.
  const KernelModel d = make_kernel_model(kernel_kind("intensity"), {{"n", 4096}}, Precision::fp64);
  CHECK(d.work_flop == 2 * 8 * 4096);

  // predict: memory-bound at k = 8 in DRAM (I = 1 < B = 34/4.8), compute-bound at k = 256 (I = 32).
  const HardwareDescriptor hw = synthetic_descriptor();
  const Prediction lo = predict(hw, intensity(1e9, 8, Precision::fp64));
  CHECK(lo.memory_level == "dram");
  CHECK(lo.memory_bound);
  CHECK(lo.alpha == ceiling_test::Rel(67.0 / 34));
  const Prediction hi = predict(hw, intensity(1e9, 256, Precision::fp64));
  CHECK_FALSE(hi.memory_bound);
  CHECK(hi.t_compute_cuda_core == ceiling_test::Rel(2 * 256 * 1e9 / 34e12));
  CHECK(hi.t_compute_tensor_core == ceiling_test::Rel(2 * 256 * 1e9 / 67e12));
  // k = 1 on tensor cores uses 1/8 of the FP64 peak: alpha < 1, as for SCALE.
  CHECK(predict(hw, intensity(1e9, 1, Precision::fp64)).alpha == ceiling_test::Rel(67.0 / 8 / 34));
}

TEST_CASE("intensity: parameter errors name the parameter, in the library and in kernel files") {
  CHECK(param_rejected(4096, 3, Precision::fp64) == "k");     // neither a power of two below 8 nor a multiple of 8
  CHECK(param_rejected(4096, 12, Precision::fp64) == "k");
  CHECK(param_rejected(4096, 8, Precision::fp16) == "(accepted)");  // a power of two below 16
  CHECK(param_rejected(4096, 24, Precision::fp16) == "k");
  CHECK(param_rejected(4096, 32, Precision::fp16) == "(accepted)");
  CHECK(param_rejected(1004, 8, Precision::fp64) == "n");     // not whole rows of 8
  CHECK(param_rejected(1000, 8, Precision::fp16) == "n");     // 1000 is rows of 8, not of 16
  CHECK(param_rejected(1008, 8, Precision::fp16) == "(accepted)");
  CHECK(message_of([] { intensity(4096, 3, Precision::fp64); }).find("multiple of 8") != std::string::npos);
  CHECK(message_of([] { intensity(1000, 8, Precision::fp16); }).find("row width 16") != std::string::npos);
  CHECK(param_rejected(4096, 0, Precision::fp64) != "(accepted)");

  const fs::path dir = test::scratch_dir("intensity", "files");
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return dir / name;
  };
  const KernelModel ok = load_kernel_file(write("ok.yaml", "kind: intensity\nprecision: fp16\nn: 1048576\nk: 64\n"));
  CHECK(ok.intensity() == ceiling_test::Rel(32.0));
  CHECK(ok.precision == Precision::fp16);
  try {
    load_kernel_file(write("k.yaml", "kind: intensity\nprecision: fp64\nn: 4096\nk: 3\n"));
    FAIL("no error");
  } catch (const KernelFileError& e) {
    CHECK(e.line() == 4);
    CHECK(e.key() == "k");
    CHECK(std::string(e.what()).find("k.yaml:4:") != std::string::npos);
  }
  try {
    load_kernel_file(write("n.yaml", "kind: intensity\nn: 1004\nk: 16\n"));
    FAIL("no error");
  } catch (const KernelFileError& e) {
    CHECK(e.line() == 2);
    CHECK(e.key() == "n");
    CHECK(std::string(e.what()).find("row width 8") != std::string::npos);
  }
  try {
    load_kernel_file(write("range.yaml", "kind: intensity\nn: 4096\nk: 0\n"));
    FAIL("no error");
  } catch (const KernelFileError& e) {
    CHECK(e.line() == 3);
    CHECK(e.key() == "k");
  }
  fs::remove_all(dir);
}

TEST_CASE("intensity: the sweep points cross the CUDA-core and tensor-core ridges in and out of the L2") {
  const KernelKind& kind = kernel_kind("intensity");
  REQUIRE(kind.sweep_points);
  const HardwareDescriptor hw = synthetic_descriptor();
  for (Precision p : {Precision::fp64, Precision::fp32, Precision::fp16}) {
    CAPTURE(to_string(p));
    const auto full = kind.sweep_points(kL2, p, false);
    const auto quick = kind.sweep_points(kL2, p, true);
    const double k_max = p == Precision::fp16 ? 4096 : 1024;
    const size_t per_level = p == Precision::fp16 ? 13 : 11;  // k = 1, 2, .., k_max
    CHECK(full.size() == 2 * per_level);
    CHECK(quick.size() == 14);  // k = 1, 4, 16, 32, 64, 128, 256
    std::set<double> ks, in_l2, out_l2;
    for (const auto& pt : full) {
      const KernelModel m = make_kernel_model(kind, pt, p);
      ks.insert(pt.at("k"));
      (fits_in_l2(m.working_set_bytes, kL2) ? in_l2 : out_l2).insert(m.working_set_bytes);
      CHECK(std::fmod(pt.at("n"), intensity_row_width(p)) == 0);
    }
    CHECK(ks.size() == per_level);
    CHECK(*ks.begin() == 1);
    CHECK(*ks.rbegin() == k_max);
    REQUIRE(in_l2.size() == 1);
    REQUIRE(out_l2.size() == 1);
    CHECK(*in_l2.begin() == ceiling_test::Rel(kL2 / 4).epsilon(0.01));
    CHECK(*out_l2.begin() == ceiling_test::Rel(4 * kL2).epsilon(0.01));
    // From far below to at least 4x the ridge of each unit that runs it, for the level the working
    // set sits in, at H200-like (4.8 TB/s) and H100-like (3.35 TB/s) DRAM bandwidth.
    for (const double bw : {11.5e12, 4.8e12, 3.35e12}) {
      const double D = bytes_per_value(p);
      CAPTURE(bw);
      for (ComputeUnit u : {ComputeUnit::cuda_core, ComputeUnit::tensor_core}) {
        const auto peak = hw.peak(u, p);
        if (!peak) continue;  // no fp32 tensor-core variant
        const double B = machine_balance(*peak, bw);
        CAPTURE(to_string(u));
        CHECK(1.0 / D < B / 4);
        CHECK(k_max / D >= 4 * B);
      }
    }
    for (const auto& pt : quick) CHECK(std::set<double>{1, 4, 16, 32, 64, 128, 256}.count(pt.at("k")) == 1);
  }
}

TEST_CASE("intensity: validate sweeps k, pairs CC with TC (none for fp32) and fits phi near the ridge") {
  const HardwareDescriptor hw = synthetic_descriptor();
  const auto variants = kernels::select_variants({"intensity"});
  REQUIRE(variants.size() == 5);
  kernels::Sweep sweep;
  sweep.l2_bytes = kernels::sweep_l2_bytes(hw);
  created.clear();
  const validation::ValidationReport rep = kernels::run_validation(hw, variants, sweep, fake_measurer(hw));
  // Per variant 2 working sets x 11 k (1 .. 1024), fp16 x 13 (1 .. 4096): fp64 x2, fp32, fp16 x2.
  REQUIRE(rep.results.size() == 2 * 22 + 22 + 2 * 26);
  std::set<std::string> seen;
  for (const auto& r : rep.results) {
    CAPTURE(r.precision + " " + r.variant);
    REQUIRE(r.size.count("k"));
    CHECK(std::fmod(r.size.at("n"), 64.0 * intensity_row_width(parse_precision(r.precision))) == 0);
    CHECK(r.intensity == ceiling_test::Rel(r.size.at("k") / bytes_per_value(parse_precision(r.precision))));
    CHECK(r.verdict == "within-bound");
    seen.insert(r.precision + " " + r.memory_level);
  }
  CHECK(seen.size() == 6);  // three precisions, each in and out of the L2
  // Speedups pair every (precision, n, k) of fp64 and fp16; fp32 has no tensor-core partner.
  CHECK(rep.speedups.size() == 22 + 26);
  for (const auto& s : rep.speedups) {
    CHECK(s.precision != "fp32");
    CHECK(s.kernel == "intensity");
    CHECK(s.size.count("k"));
    CHECK(s.verdict == "within-bound");
  }
  // phi: per (variant, precision, level) from the results near the ridge, back to the truth.
  int near_fits = 0;
  for (const auto& f : rep.overlap_fits) {
    CAPTURE(f.variant + " " + f.precision + " " + f.memory_level + ": " + f.selection);
    CHECK(f.kernel == "intensity");
    if (f.memory_level.empty()) continue;  // a group without 3 near-ridge points per level
    ++near_fits;
    CHECK(f.selection.find("near the ridge") != std::string::npos);
    CHECK(f.points >= 3);
    CHECK(f.points < f.points_total);
    CHECK(f.phi == ceiling_test::Rel(kPhi).epsilon(1e-6));
    CHECK(f.phi_stderr < 1e-6);
    CHECK(f.residual_rms < 1e-9);
    CHECK(f.t_other_s == ceiling_test::Rel(f.memory_level == "l2" ? 1.5e-6 : 4e-6).epsilon(1e-4));
  }
  CHECK(near_fits >= 6);
  // --sizes: the working-set sweep at k's default 8.
  kernels::Sweep sized = sweep;
  sized.sizes = {kernels::parse_size_request("24MiB"), kernels::parse_size_request("1000000")};
  const validation::ValidationReport by_size =
      kernels::run_validation(hw, kernels::select_variants({"intensity"}), sized, fake_measurer(hw));
  REQUIRE(by_size.results.size() == 5 * 2);
  for (const auto& r : by_size.results) CHECK(r.size.at("k") == 8);
  CHECK(by_size.speedups.size() == 2 * 2);
  const std::string table = validation::format_table(rep);
  CHECK(table.find("n=983040 k=256") != std::string::npos);  // fp64 at L2/4
  // The results file keeps the fit's uncertainty and selection.
  const validation::ValidationReport back = validation::from_json(validation::to_json(rep));
  REQUIRE(back.overlap_fits.size() == rep.overlap_fits.size());
  for (size_t i = 0; i < back.overlap_fits.size(); ++i) {
    CHECK(back.overlap_fits[i].memory_level == rep.overlap_fits[i].memory_level);
    CHECK(back.overlap_fits[i].selection == rep.overlap_fits[i].selection);
    CHECK(back.overlap_fits[i].points_total == rep.overlap_fits[i].points_total);
  }
}

TEST_CASE("overlap fit near the ridge: far points do not move phi, noise gives it an uncertainty") {
  using validation::KernelResult;
  // One level, Tm fixed, k doubling: Tm/Tc from 64 down to 1/4. Near-ridge points obey phi = 0.6;
  // the far, memory-bound ones run 30% over the roof (an efficiency shortfall, not overlap).
  const double tm = 100e-6, t_other = 3e-6, phi = 0.6;
  std::vector<KernelResult> rs;
  for (int e = 0; e <= 8; ++e) {
    KernelResult r;
    r.kernel = "intensity";
    r.variant = "cuda_core";
    r.precision = "fp64";
    r.memory_level = "dram";
    r.size = {{"n", 1e7}, {"k", std::exp2(e)}};
    r.t_memory_s = tm;
    r.t_compute_s = tm * std::exp2(e) / 64;
    const bool near = r.t_memory_s <= 4 * r.t_compute_s && r.t_compute_s <= 4 * r.t_memory_s;
    r.time_s.median = near ? partial_overlap_time_s(r.t_memory_s, r.t_compute_s, phi, t_other) : 1.3 * tm;
    rs.push_back(r);
  }
  auto fits = validation::overlap_fits(rs);
  REQUIRE(fits.size() == 1);
  CHECK(fits[0].memory_level == "dram");
  CHECK(fits[0].points == 5);  // k = 16 .. 256: Tm/Tc = 4, 2, 1, 1/2, 1/4
  CHECK(fits[0].points_total == 9);
  CHECK(fits[0].phi == ceiling_test::Rel(phi).epsilon(1e-9));
  CHECK(fits[0].t_other_s == ceiling_test::Rel(t_other).epsilon(1e-6));
  // Over every point the shortfall would pull phi away: the selection matters.
  std::vector<validation::OverlapPoint> all;
  for (const auto& r : rs) all.push_back({r.time_s.median, r.t_memory_s, r.t_compute_s});
  CHECK(std::fabs(validation::fit_overlap(all).phi_raw - phi) > 0.05);

  // +-2% noise: phi within a few standard errors of the truth, a non-zero uncertainty and residual.
  std::vector<KernelResult> noisy = rs;
  const double wiggle[] = {1.02, 0.98, 1.01, 0.99, 1.02, 0.985, 1.0, 1.015, 0.98};
  for (size_t i = 0; i < noisy.size(); ++i) noisy[i].time_s.median *= wiggle[i];
  fits = validation::overlap_fits(noisy);
  REQUIRE(fits.size() == 1);
  CHECK(fits[0].phi_stderr > 0);
  CHECK(fits[0].phi_stderr < 0.5);
  CHECK(std::fabs(fits[0].phi_raw - phi) < 4 * fits[0].phi_stderr);
  CHECK(fits[0].residual_rms > 0.001);
  CHECK(fits[0].residual_rms < 0.03);

  // No three points near the ridge (SCALE-like): every point, and it says phi is poorly identified.
  std::vector<KernelResult> far(rs.begin(), rs.begin() + 4);
  fits = validation::overlap_fits(far);
  REQUIRE(fits.size() == 1);
  CHECK(fits[0].memory_level.empty());
  CHECK(fits[0].points == 4);
  CHECK(fits[0].selection.find("poorly identified") != std::string::npos);
}

TEST_CASE("intensity through the CLI: predict takes --n and --k, errors name the option") {
  const test::CliRun ok = test::run_ceiling("predict --hw h200 --kernel intensity --n 1e8 --k 64 --json");
  CHECK(ok.rc == 0);
  CHECK(ok.out.find("\"intensity\"") != std::string::npos);
  const test::CliRun bad = test::run_ceiling("predict --hw h200 --kernel intensity --n 1e8 --k 3", true);
  CHECK(bad.rc != 0);
  CHECK(bad.out.find("multiple of 8") != std::string::npos);
}

TEST_SUITE_END();

TEST_CASE("work units over the schedulers: the tensor-core intensity launch picks 2 tiles in 2-warp blocks where the rows are few") {
  using kernels::IntensityTcLaunch, kernels::intensity_tc_launch, kernels::scheduler_balance;
  // 132 SMs, 528 schedulers. 1608 units in 201 blocks of 8 warps: 69 SMs hold 2 blocks (4 warps per
  // scheduler), the mean is 3.045.
  CHECK(scheduler_balance(1608, 8, 132) == ceiling_test::Rel(1608.0 / 528 / 4));
  CHECK(scheduler_balance(3216, 2, 132) == ceiling_test::Rel(3216.0 / 528 / 7));
  CHECK(scheduler_balance(528, 4, 132) == ceiling_test::Rel(1.0));  // one unit per scheduler
  CHECK(scheduler_balance(0, 8, 132) == 1.0);
  CHECK(scheduler_balance(10, 0, 132) == 1.0);
  // In the L2 (fp64, 823296 values = 102912 rows; fp16 205824 rows): the finer launch.
  const IntensityTcLaunch small = intensity_tc_launch(102912, 132);
  CHECK(small.tiles == 2);
  CHECK(small.threads == 64);
  CHECK(intensity_tc_launch(205824, 132).tiles == 2);
  // Out of the L2 (tens of millions of rows): 4 tiles, 8 warps; the balance is near 1 either way.
  const IntensityTcLaunch big = intensity_tc_launch(16LL << 20, 132);
  CHECK(big.tiles == 4);
  CHECK(big.threads == 256);
  CHECK(scheduler_balance((16LL << 20) / 64, 8, 132) > 0.99);
}

TEST_CASE("work units over the schedulers: persistent grids, and the CUDA-core immediate kernel's single row blocks where groups quantize") {
  using kernels::intensity_imm_group, kernels::persistent_balance, kernels::scheduler_balance;
  // One unit per warp, a grid sized to the work: the same figure as scheduler_balance (blocks go
  // to SMs in turn, so the SMs that take an extra block are the first ones).
  CHECK(persistent_balance(1592, 4, 398, 132) == ceiling_test::Rel(scheduler_balance(1592, 4, 132)));
  CHECK(persistent_balance(1592, 4, 398, 132) == ceiling_test::Rel(1592.0 / 528 / 4));  // 2 SMs hold a 4th block
  // Blocks of 2 warps fill all four schedulers (an SM's warp slots in turn), as the tensor-core
  // launch's 2-warp blocks do: 1608 blocks leave 24 SMs 13 (26 warps: 7 on the busiest scheduler).
  CHECK(persistent_balance(3216, 2, 1608, 132) == ceiling_test::Rel(scheduler_balance(3216, 2, 132)));
  CHECK(persistent_balance(3216, 2, 1608, 132) == ceiling_test::Rel(3216.0 / 528 / 7));
  CHECK(persistent_balance(1608, 8, 201, 132) == ceiling_test::Rel(scheduler_balance(1608, 8, 132)));
  // A resident grid smaller than the work: 3184 units over 528 blocks (2112 warps); the first 1072
  // warps (blocks 0-267) take 2. SM 0 holds blocks 0, 132, 264 (2 units a warp) and 396 (1): 7 per
  // scheduler against a mean of 6.03.
  CHECK(persistent_balance(3184, 4, 528, 132) == ceiling_test::Rel(3184.0 / 528 / 7));
  CHECK(persistent_balance(3184, 4, 796, 132) == ceiling_test::Rel(3184.0 / 528 / 7));  // one unit a warp: 4 SMs take a 7th block
  CHECK(persistent_balance(528 * 5, 4, 132, 132) == ceiling_test::Rel(1.0));  // 5 units per warp, even
  CHECK(persistent_balance(0, 4, 10, 132) == 1.0);
  CHECK(persistent_balance(10, 4, 0, 132) == 1.0);
  // The H100's in-L2 fp64 size of one run (815104 values, 3184 row blocks): groups of 2 give 0.754,
  // single row blocks 0.861, whatever the resident grids (2 to 16 blocks of 4 warps per SM).
  for (int per_sm : {2, 4, 8, 16}) {
    const long long wide = std::min<long long>(398, per_sm * 132LL), one = std::min<long long>(796, per_sm * 132LL);
    CHECK(persistent_balance(1592, 4, wide, 132) == ceiling_test::Rel(0.754).epsilon(0.002));
    CHECK(persistent_balance(3184, 4, one, 132) == ceiling_test::Rel(0.861).epsilon(0.002));
    CHECK(intensity_imm_group(3184, 2, wide, one, 4, 132) == 1);
    // fp32: 6368 row blocks in groups of 4 (0.754) or single (0.928).
    CHECK(intensity_imm_group(6368, 4, std::min<long long>(398, per_sm * 132LL), std::min<long long>(1592, per_sm * 132LL), 4, 132) == 1);
  }
  // Another board's split (806912 values, 3152 row blocks): 1576 groups balance as well as single
  // blocks (0.995), so the groups (more FMA chains per warp) stay.
  CHECK(persistent_balance(1576, 4, 394, 132) == ceiling_test::Rel(0.995).epsilon(0.002));
  CHECK(intensity_imm_group(3152, 2, 394, 788, 4, 132) == 2);
  CHECK(intensity_imm_group(6304, 4, 394, 1576, 4, 132) == 4);
  // Out of the L2 (millions of row blocks): near 1 either way; the groups stay.
  CHECK(intensity_imm_group(1LL << 20, 2, 264, 264, 4, 132) == 2);
}
