// Probe "mma-numerics": the numeric behaviour of mma.sync (issue 13; Sun et al. §8). The GPU only
// runs dot products: each mma holds eight (rows 0-7 of A against columns 0-7 of B, C on the
// diagonal, every other element zero) and returns the diagonal of D. Everything else is on the
// CPU (probes/host/numerics.*): the constructed cases, the models they are checked against, the
// paper's error tables and the chained products. INT8/INT4 products are checked exact.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>

#include "host/numerics.hpp"
#include "mma_ops.cuh"
#include "numerics_record.hpp"
#include "probe_util.hpp"

namespace ceiling::probes::compute {
namespace {

using namespace mma_ops;
namespace nx = ceiling::numerics;

// Fragments of `groups` mma from element values: value(g, row, col) for A (M x K), B (K x N), C.
template <class Op, class Reg, class Pos, class Bits>
std::vector<Reg> pack(int groups, int regs, int per_reg, int bits_per, Pos pos, Bits bits) {
  std::vector<Reg> out(static_cast<size_t>(groups) * 32 * regs);
  for (int g = 0; g < groups; ++g)
    for (int lane = 0; lane < 32; ++lane)
      for (int r = 0; r < regs; ++r) {
        uint64_t word = 0;
        for (int j = 0; j < per_reg; ++j) {
          int x, y;
          pos(lane, r, j, x, y);
          word |= bits(g, x, y) << (j * bits_per);
        }
        std::memcpy(&out[(static_cast<size_t>(g) * 32 + lane) * regs + r], &word, sizeof(Reg));
      }
  return out;
}

// Runs the cases through Op: the device side of nx::DotDevice.
template <class Op>
std::vector<double> run_dot_cases(const nx::Format& in, const nx::Format& out, const std::vector<nx::DotCase>& cases) {
  using L = Layout<Op>;
  static_assert(Op::N == 8, "eight dot products per mma need N = 8");
  std::vector<double> res;
  res.reserve(cases.size());
  constexpr size_t kChunk = size_t{1} << 18;  // cases per launch (bounds host and device memory)
  for (size_t base = 0; base < cases.size(); base += kChunk) {
    const size_t n = std::min(kChunk, cases.size() - base);
    const int groups = static_cast<int>((n + 7) / 8);
    auto cs = [&](int g, int i) -> const nx::DotCase* {
      const size_t ci = static_cast<size_t>(g) * 8 + i;
      return (i < 8 && ci < n) ? &cases[base + ci] : nullptr;
    };
    const int in_bits = in.storage_bits;
    const auto ha = pack<Op, typename Op::AReg>(
        groups, Op::NA, L::e, in_bits, [](int lane, int r, int j, int& row, int& col) { L::a(lane, r, j, row, col); },
        [&](int g, int row, int col) -> uint64_t {
          const nx::DotCase* c = cs(g, row);
          return in.encode(c ? c->a[col] : 0.0);
        });
    const auto hb = pack<Op, typename Op::AReg>(
        groups, Op::NB, L::e, in_bits, [](int lane, int r, int j, int& k, int& col) { L::b(lane, r, j, k, col); },
        [&](int g, int k, int col) -> uint64_t {
          const nx::DotCase* c = cs(g, col);
          return in.encode(c ? c->b[k] : 0.0);
        });
    constexpr int per_c = Op::NV / Op::NC;  // 2 for packed f16 accumulators
    const auto hc = pack<Op, typename Op::CReg>(
        groups, Op::NC, per_c, out.storage_bits,
        [](int lane, int r, int j, int& row, int& col) { L::c(lane, r * per_c + j, row, col); },
        [&](int g, int row, int col) -> uint64_t {
          const nx::DotCase* c = (row == col) ? cs(g, row) : nullptr;
          return out.encode(c ? c->c : 0.0);
        });
    gpu::DeviceBuffer<typename Op::AReg> da(ha.size()), db(hb.size());
    gpu::DeviceBuffer<typename Op::CReg> dd(hc.size());
    CUDA_CHECK(cudaMemcpy(da.data(), ha.data(), da.bytes(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(db.data(), hb.data(), db.bytes(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dd.data(), hc.data(), dd.bytes(), cudaMemcpyHostToDevice));
    const int threads = 128, blocks = (groups * 32 + threads - 1) / threads;
    mma_groups_kernel<Op><<<blocks, threads>>>(da.data(), db.data(), dd.data(), groups, 0);
    CUDA_CHECK_LAUNCH();
    std::vector<typename Op::CReg> hd(hc.size());
    CUDA_CHECK(cudaMemcpy(hd.data(), dd.data(), dd.bytes(), cudaMemcpyDeviceToHost));
    std::vector<double> part(static_cast<size_t>(groups) * 8);
    for (int g = 0; g < groups; ++g)
      for (int lane = 0; lane < 32; ++lane)
        for (int v = 0; v < Op::NV; ++v) {
          int row, col;
          L::c(lane, v, row, col);
          if (row != col || row >= 8) continue;
          uint32_t word;
          std::memcpy(&word, &hd[(static_cast<size_t>(g) * 32 + lane) * Op::NC + v / per_c], 4);
          const uint64_t bits = per_c == 2 ? ((v % 2) ? (word >> 16) : (word & 0xFFFFu)) : word;
          part[static_cast<size_t>(g) * 8 + row] = out.decode(bits);
        }
    res.insert(res.end(), part.begin(), part.begin() + n);
  }
  return res;
}

// Integer mma: random inputs over the whole range, products checked against exact sums.
template <class Op>
std::string integer_check(int cases, std::mt19937_64& rng) {
  using L = Layout<Op>;
  const int bits = elem_bits(Op::a_elem);
  const int lo = -(1 << (bits - 1)), hi = (1 << (bits - 1)) - 1;
  const int groups = (cases + 7) / 8;
  std::uniform_int_distribution<int> val(lo, hi), cval(-(1 << 20), 1 << 20);
  std::vector<int> A(static_cast<size_t>(groups) * Op::M * Op::K), B(static_cast<size_t>(groups) * Op::K * Op::N),
      C(static_cast<size_t>(groups) * Op::M * Op::N);
  for (auto& x : A) x = val(rng);
  for (auto& x : B) x = val(rng);
  for (auto& x : C) x = cval(rng);
  const auto ha = pack<Op, typename Op::AReg>(
      groups, Op::NA, L::e, bits, [](int lane, int r, int j, int& row, int& col) { L::a(lane, r, j, row, col); },
      [&](int g, int row, int col) { return encode(Op::a_elem, A[(static_cast<size_t>(g) * Op::M + row) * Op::K + col]); });
  const auto hb = pack<Op, typename Op::AReg>(
      groups, Op::NB, L::e, bits, [](int lane, int r, int j, int& k, int& col) { L::b(lane, r, j, k, col); },
      [&](int g, int k, int col) { return encode(Op::a_elem, B[(static_cast<size_t>(g) * Op::K + k) * Op::N + col]); });
  const auto hc = pack<Op, typename Op::CReg>(
      groups, Op::NC, 1, 32, [](int lane, int r, int, int& row, int& col) { L::c(lane, r, row, col); },
      [&](int g, int row, int col) { return encode(Elem::s32, C[(static_cast<size_t>(g) * Op::M + row) * Op::N + col]); });
  gpu::DeviceBuffer<typename Op::AReg> da(ha.size()), db(hb.size());
  gpu::DeviceBuffer<typename Op::CReg> dd(hc.size());
  CUDA_CHECK(cudaMemcpy(da.data(), ha.data(), da.bytes(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(db.data(), hb.data(), db.bytes(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dd.data(), hc.data(), dd.bytes(), cudaMemcpyHostToDevice));
  mma_groups_kernel<Op><<<(groups * 32 + 127) / 128, 128>>>(da.data(), db.data(), dd.data(), groups, 0);
  CUDA_CHECK_LAUNCH();
  std::vector<typename Op::CReg> hd(hc.size());
  CUDA_CHECK(cudaMemcpy(hd.data(), dd.data(), dd.bytes(), cudaMemcpyDeviceToHost));
  long long bad = 0, total = 0;
  for (int g = 0; g < groups; ++g)
    for (int lane = 0; lane < 32; ++lane)
      for (int v = 0; v < Op::NV; ++v) {
        int row, col;
        L::c(lane, v, row, col);
        long long ref = C[(static_cast<size_t>(g) * Op::M + row) * Op::N + col];
        for (int k = 0; k < Op::K; ++k)
          ref += static_cast<long long>(A[(static_cast<size_t>(g) * Op::M + row) * Op::K + k]) *
                 B[(static_cast<size_t>(g) * Op::K + k) * Op::N + col];
        const int32_t got = static_cast<int32_t>(hd[(static_cast<size_t>(g) * 32 + lane) * Op::NC + v]);
        ++total;
        if (got != ref) ++bad;
      }
  if (bad) return std::to_string(bad) + " of " + std::to_string(total) + " sums differ from the exact ones";
  return "exact (" + std::to_string(total) + " sums of " + std::to_string(Op::K) + " products over the full range [" +
         std::to_string(lo) + ", " + std::to_string(hi) + "])";
}

struct NumericsEntry {
  TensorInstruction proto;
  nx::NumericShape shape;
  int min_cc = 80;
  bool chain = false;  // the paper's chained products run on this shape (N = K)
  nx::DotDevice run;
};

template <class Op>
NumericsEntry entry(const nx::Format& in, const nx::Format& out, int min_cc, bool chain) {
  NumericsEntry e;
  e.proto.api = "mma";
  e.proto.shape = Op::shape;
  e.proto.input = Op::input;
  e.proto.input_detail = elem_detail(Op::a_elem);
  e.proto.accumulate = Op::accumulate;
  e.shape = nx::NumericShape{e.proto.key(), Op::M, Op::N, Op::K, &in, &out};
  e.min_cc = min_cc;
  e.chain = chain;
  e.run = [&in, &out](const std::vector<nx::DotCase>& c) { return run_dot_cases<Op>(in, out, c); };
  return e;
}

std::vector<NumericsEntry> entries() {
  std::vector<NumericsEntry> v;
  v.push_back(entry<F16F32_m16n8k16>(nx::fp16(), nx::fp32(), 80, false));
  v.push_back(entry<F16F16_m16n8k16>(nx::fp16(), nx::fp16(), 80, false));
  v.push_back(entry<BF16_m16n8k16>(nx::bf16(), nx::fp32(), 80, false));
  v.push_back(entry<F16F32_m16n8k8>(nx::fp16(), nx::fp32(), 80, true));
  v.push_back(entry<F16F16_m16n8k8>(nx::fp16(), nx::fp16(), 80, false));
  v.push_back(entry<BF16_m16n8k8>(nx::bf16(), nx::fp32(), 80, true));
  v.push_back(entry<TF32_m16n8k8>(nx::tf32(), nx::fp32(), 80, true));
  v.push_back(entry<E4M3_m16n8k32>(nx::e4m3(), nx::fp32(), 89, false));
  v.push_back(entry<E5M2_m16n8k32>(nx::e5m2(), nx::fp32(), 89, false));
  return v;
}

ProbeOutput run_numerics(const ProbeContext& ctx) {
  ProbeOutput out;
  const int cc = 10 * ctx.cc_major + ctx.cc_minor;
  const int samples = ctx.quick ? 200 : 1000;
  const int chains = ctx.quick ? 100 : 1000, chain_len = ctx.quick ? 8 : 16;
  const std::string date = gpu::utc_now_iso8601();
  nlohmann::json jv = nlohmann::json::array(), jchains = nlohmann::json::array();
  auto es = entries();
  for (size_t idx = 0; idx < es.size(); ++idx) {
    NumericsEntry& e = es[idx];
    const std::string key = e.proto.key();
    if (ctx.progress) ctx.progress(static_cast<double>(idx) / (es.size() + 2), key);
    if (cc < e.min_cc) {
      jv.push_back({{"instruction", key}, {"skipped", "needs compute capability " + std::to_string(e.min_cc / 10) + "." +
                                                          std::to_string(e.min_cc % 10)}});
      continue;
    }
    // Verdicts from constructed cases; the same bits on every run (checked: twice).
    const auto cases = nx::constructed_cases(e.shape, 0x5EED);
    const auto r1 = e.run(cases), r2 = e.run(cases);
    // The paper's tables.
    const nx::ErrorPlan plan = nx::error_plan(e.shape, samples, 2024);
    const auto rows = nx::error_table(e.shape, plan, e.run(plan.cases));
    NumericsRecord rec = numerics_record(key, e.shape, cases, r1, r2, rows, samples, "mma-numerics", date);
    TensorInstruction ti = e.proto;
    ti.numerics = std::move(rec.behaviour);
    out.instructions.push_back(ti);
    jv.push_back(std::move(rec.details));
    if (e.chain) {
      for (const auto& p : nx::chain_errors(e.shape, e.run, chain_len, chains, 7))
        jchains.push_back({{"instruction", key}, {"input", e.shape.in->name}, {"length", p.length},
                           {"init", p.init_low ? "low" : "fp32"}, {"mean_rel_err", p.mean_rel_err},
                           {"chains", p.chains}, {"overflowed", p.overflowed}});
    }
  }
  // INT8 / INT4: exact sums over the full input range.
  std::mt19937_64 rng(99);
  auto integer = [&](auto op, const char* shape, Precision p) {
    using Op = decltype(op);
    TensorInstruction ti;
    ti.api = "mma";
    ti.shape = shape;
    ti.input = p;
    ti.accumulate = Precision::int32;
    NumericBehaviour nb;
    nb.verdicts["integer"] = integer_check<Op>(ctx.quick ? 8000 : 80000, rng);
    nb.verdicts["products"] = nb.verdicts["integer"].rfind("exact", 0) == 0 ? "exact" : "not exact";
    nb.summary = "integer products and sums: " + nb.verdicts["integer"];
    nb.probe = "mma-numerics";
    nb.date = date;
    ti.numerics = nb;
    out.instructions.push_back(ti);
    jv.push_back({{"instruction", ti.key()}, {"summary", nb.summary}});
  };
  if (ctx.progress) ctx.progress(static_cast<double>(es.size()) / (es.size() + 2), "integer");
  integer(S8_m16n8k32{}, "m16n8k32", Precision::int8);
  integer(S4_m16n8k64{}, "m16n8k64", Precision::int4);
  out.details["instructions"] = jv;
  out.details["chains"] = jchains;
  return out;
}

const Registrar reg{ProbeInfo{
    "mma-numerics", "compute",
    "mma.sync arithmetic: verdicts from constructed cases (rounding, alignment bits, blocks, subnormals), the "
    "paper's error tables and chained-product error growth; INT8/INT4 checked exact",
    {{"instruction", {"f16 f16|f32 m16n8k16", "f16/bf16/tf32 m16n8k8", "bf16 m16n8k16", "e4m3/e5m2 m16n8k32",
                      "s8 m16n8k32", "s4 m16n8k64"}}},
    {"tensor_instructions"},
    80, true, run_numerics, /*per_architecture=*/true}};

}  // namespace
}  // namespace ceiling::probes::compute
