// Probe "wgmma" (sm_90a): warpgroup-level wgmma.mma_async. B (and A in SS mode) come from shared
// memory through matrix descriptors (no swizzle, K-major core matrices of 8 rows x 16 bytes);
// in RS mode A comes from 4 registers per thread. Per variant: a product checked against a CPU
// reference, completion latency (1 warpgroup, wait after each wgmma), throughput over 1..3
// warpgroups per SM (one block per SM), and a full-GPU run with zero and with random data
// (Hopper paper §IV-C, Tables VIII and X).
#include <algorithm>
#include <functional>
#include <memory>
#include <optional>

#include <chrono>
#include <thread>

#include "host/numerics.hpp"
#include "mma_wgmma_ops.cuh"
#include "numerics_record.hpp"
#include "probe_util.hpp"

namespace ceiling::probes::compute {
namespace {

// The rest before each counted run is ProbeContext::tc_rest_ms (default 50 ms). Shorter rests
// cost figures (H200, 2026-11-26, two runs each: 20 ms FP8 -1.0%, FP16 -0.5%; 10 ms FP8 -1.1%,
// FP16 -0.6% against 50 ms).

using namespace wgmma_ops;

constexpr int kMaxWarpgroups = 3;   // 128 accumulator registers (N=256, f32) + operands: 3 fit
constexpr int kUnroll = 4;          // wgmmas per commit group in the throughput loop
constexpr int kCoreLbo = 128;       // bytes between core matrices along K
constexpr int kCoreSbo = 256;       // bytes between 8-row groups along M/N (2 core matrices of K)
constexpr int kRowBytes = 32;       // every variant's K spans 32 bytes (k16 x 2 B, k8 x 4 B, k32 x 1 B)

// Device helpers exist only in the sm_90a pass (the plain sm_90 pass compiles the kernel empty).
#if defined(__CUDA_ARCH_FEAT_SM90_ALL) || !defined(__CUDA_ARCH__)
__device__ __forceinline__ uint64_t smem_desc(const void* p, uint32_t lbo, uint32_t sbo) {
  const uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(p));
  // Matrix descriptor (PTX ISA "Shared memory matrix layout"): start>>4 [0,14), LBO>>4 [16,30),
  // SBO>>4 [32,46), base offset 0, swizzle mode 0 (none) [62,64).
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (static_cast<uint64_t>(lbo >> 4) << 16) |
         (static_cast<uint64_t>(sbo >> 4) << 32);
}

__device__ __forceinline__ uint32_t combine_w(uint32_t x, uint32_t y) { return x ^ y; }
__device__ __forceinline__ float combine_w(float x, float y) { return x + y; }
#endif

// a_img: A as core matrices (64 x 32 bytes), b_img: B^T likewise (N x 32 bytes); a_frag: RS A
// registers of one warpgroup (128 threads x 4). wait_each: latency mode (1 wgmma per group,
// wait for it) else throughput mode (kUnroll wgmmas per group, one group kept in flight).
// dout: the accumulators of warpgroup 0 of block 0 (checks); sink: one value per thread.
template <class W, bool RS>
__global__ void __launch_bounds__(128 * kMaxWarpgroups, 1)
    wgmma_loop_kernel(const uint4* a_img, const uint4* b_img, const uint32_t* a_frag, int iters,
                      int wait_each, uint32_t lbo, uint32_t sbo, long long* clocks,
                      typename W::CReg* dout, typename W::CReg* sink, int* not_sm90a) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(128) uint4 smem[];
  constexpr int a_vec = 64 * kRowBytes / 16, b_vec = W::N * kRowBytes / 16;
  for (int i = threadIdx.x; i < a_vec + b_vec; i += blockDim.x)
    smem[i] = i < a_vec ? a_img[i] : b_img[i - a_vec];
  // Generic-proxy stores must be visible to the async proxy (the tensor cores) before use.
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  const uint64_t da = smem_desc(smem, lbo, sbo), db = smem_desc(smem + a_vec, lbo, sbo);
  const int t = threadIdx.x % 128;
  uint32_t a[4];
#pragma unroll
  for (int r = 0; r < 4; ++r) a[r] = a_frag[t * 4 + r];
  typename W::CReg acc[W::NC];
#pragma unroll
  for (int r = 0; r < W::NC; ++r) acc[r] = typename W::CReg(0);
  __syncthreads();
  const long long t0 = clock64();
  if (wait_each) {
    for (int it = 0; it < iters; ++it) {
      asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
      if constexpr (RS) W::rs(acc, a, db, 1); else W::ss(acc, da, db, 1);
      asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
      asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    }
  } else {
    for (int it = 0; it < iters; ++it) {
      asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if constexpr (RS) W::rs(acc, a, db, 1); else W::ss(acc, da, db, 1);
      }
      asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
      asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  }
  __syncthreads();
  const long long t1 = clock64();
  if (threadIdx.x == 0) {
    clocks[2 * blockIdx.x] = t0;
    clocks[2 * blockIdx.x + 1] = t1;
  }
  if (blockIdx.x == 0 && threadIdx.x < 128)
#pragma unroll
    for (int r = 0; r < W::NC; ++r) dout[threadIdx.x * W::NC + r] = acc[r];
  typename W::CReg s = acc[0];
#pragma unroll
  for (int r = 1; r < W::NC; ++r) s = combine_w(s, acc[r]);
  sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
#else
  // Plain sm_90 pass: no wgmma. If the runtime ever picked this image, say so instead of timing.
  if (threadIdx.x == 0 && blockIdx.x == 0) *not_sm90a = 1;
#endif
}

template <class W>
struct Images {
  std::vector<uint8_t> a_img, b_img;   // core-matrix layouts
  std::vector<uint32_t> a_frag;        // RS fragments, 128 threads x 4
};

constexpr int elems_per_32bit(Elem e) { return elem_bits(e) >= 32 ? 1 : 32 / elem_bits(e); }

// Byte offset of (row, byte column) in the no-swizzle K-major core-matrix image.
inline size_t core_offset(int row, int byte_col) {
  return static_cast<size_t>(row / 8) * kCoreSbo + (byte_col / 16) * kCoreLbo + (row % 8) * 16 + byte_col % 16;
}

template <class W>
Images<W> make_images(const std::vector<double>& A, const std::vector<double>& B) {  // A[m*K+k], B[k*N+n]
  Images<W> im;
  const int bytes = elem_bits(W::a_elem) / 8;
  im.a_img.assign(64 * kRowBytes, 0);
  im.b_img.assign(W::N * kRowBytes, 0);
  auto put = [&](std::vector<uint8_t>& img, int row, int k, double v) {
    const uint64_t bits = encode(W::a_elem, v);
    std::memcpy(&img[core_offset(row, k * bytes)], &bits, bytes);
  };
  for (int m = 0; m < 64; ++m)
    for (int k = 0; k < W::K; ++k) put(im.a_img, m, k, A[m * W::K + k]);
  for (int n = 0; n < W::N; ++n)
    for (int k = 0; k < W::K; ++k) put(im.b_img, n, k, B[k * W::N + n]);
  // RS fragment: warp w holds rows 16w..16w+15 in the mma m16n8k* A layout.
  const int e = elems_per_32bit(W::a_elem);
  im.a_frag.assign(128 * 4, 0);
  for (int thr = 0; thr < 128; ++thr) {
    const int w = thr / 32, lane = thr % 32, g = lane / 4, tq = lane % 4;
    for (int r = 0; r < 4; ++r) {
      uint32_t bits = 0;
      for (int j = 0; j < e; ++j) {
        const int row = 16 * w + g + 8 * (r % 2), col = tq * e + j + 4 * e * (r / 2);
        bits |= static_cast<uint32_t>(encode(W::a_elem, A[row * W::K + col])) << (j * elem_bits(W::a_elem));
      }
      im.a_frag[thr * 4 + r] = bits;
    }
  }
  return im;
}

// Accumulator value v of thread thr: row and column of D (m64nN: warp w owns rows 16w..16w+15).
inline void d_position(int thr, int v, int& row, int& col) {
  const int w = thr / 32, lane = thr % 32, g = lane / 4, tq = lane % 4;
  const int chunk = v / 4, q = v % 4;
  row = 16 * w + g + 8 * (q / 2);
  col = 8 * chunk + 2 * tq + q % 2;
}

struct WgmmaRunner {
  TensorInstruction proto;
  double fma_per_wgmma = 0;
  // Loads operand images (random exact values for checks, random small or zeros for timing).
  std::function<void(int kind, std::mt19937_64&)> load;  // kind 0: exact, 1: small random, 2: zero
  std::function<std::optional<std::string>()> check;     // after load(0): compare with CPU
  std::function<std::vector<double>(int wgs, int blocks, int iters, bool wait_each)> run_cycles;
  std::function<void(int wgs, int blocks, int iters, cudaStream_t)> launch;
  std::function<bool()> wrong_image;  // the plain sm_90 image ran
  std::function<std::string()> descriptor;  // LBO/SBO as used after the check
};

template <class W, bool RS>
struct WgState {
  std::vector<double> A, B;
  gpu::DeviceBuffer<uint4> a_img, b_img;
  gpu::DeviceBuffer<uint32_t> a_frag;
  gpu::DeviceBuffer<long long> clocks;
  gpu::DeviceBuffer<typename W::CReg> dout, sink;
  gpu::DeviceBuffer<int> flag;
  size_t smem = 0;
  uint32_t lbo = kCoreLbo, sbo = kCoreSbo;
};

template <class W, bool RS>
WgmmaRunner make_wg(const std::string& sass) {
  WgmmaRunner r;
  r.proto.api = "wgmma";
  r.proto.shape = W::shape;
  r.proto.input = W::input;
  r.proto.input_detail = elem_detail(W::a_elem);
  r.proto.accumulate = W::accumulate;
  r.proto.operand_a = RS ? "rs" : "ss";
  r.proto.sass = sass;
  r.fma_per_wgmma = 64.0 * W::N * W::K;
  auto st = std::make_shared<WgState<W, RS>>();
  r.load = [st](int kind, std::mt19937_64& rng) {
    auto& s = *st;
    s.A.assign(64 * W::K, 0.0);
    s.B.assign(W::K * W::N, 0.0);
    // kind 0: exact values (the check), 1: random, 2: zero, 3: random A and zero B.
    if (kind != 2) {
      for (auto& x : s.A) x = kind == 0 ? draw_exact(W::a_elem, rng) : draw_small(W::a_elem, rng);
      if (kind != 3)
        for (auto& x : s.B) x = kind == 0 ? draw_exact(W::a_elem, rng) : draw_small(W::a_elem, rng);
    }
    const Images<W> im = make_images<W>(s.A, s.B);
    if (!s.a_img.size()) {
      s.a_img = gpu::DeviceBuffer<uint4>(im.a_img.size() / 16);
      s.b_img = gpu::DeviceBuffer<uint4>(im.b_img.size() / 16);
      s.a_frag = gpu::DeviceBuffer<uint32_t>(im.a_frag.size());
      s.dout = gpu::DeviceBuffer<typename W::CReg>(128 * W::NC);
      s.flag = gpu::DeviceBuffer<int>(1);
      CUDA_CHECK(cudaMemset(s.flag.data(), 0, sizeof(int)));
      int dev = 0;
      CUDA_CHECK(cudaGetDevice(&dev));
      s.smem = std::max(one_block_per_sm_smem(dev), static_cast<size_t>((64 + W::N) * kRowBytes));
      CUDA_CHECK(cudaFuncSetAttribute(wgmma_loop_kernel<W, RS>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(s.smem)));
    }
    CUDA_CHECK(cudaMemcpy(s.a_img.data(), im.a_img.data(), im.a_img.size(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(s.b_img.data(), im.b_img.data(), im.b_img.size(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(s.a_frag.data(), im.a_frag.data(), s.a_frag.bytes(), cudaMemcpyHostToDevice));
  };
  r.launch = [st](int wgs, int blocks, int iters, cudaStream_t stream) {
    auto& s = *st;
    if (s.clocks.size() < static_cast<size_t>(2 * blocks)) s.clocks = gpu::DeviceBuffer<long long>(2 * blocks);
    if (s.sink.size() < static_cast<size_t>(blocks) * 128 * kMaxWarpgroups)
      s.sink = gpu::DeviceBuffer<typename W::CReg>(static_cast<size_t>(blocks) * 128 * kMaxWarpgroups);
    wgmma_loop_kernel<W, RS><<<blocks, 128 * wgs, s.smem, stream>>>(
        s.a_img.data(), s.b_img.data(), s.a_frag.data(), iters, 0, s.lbo, s.sbo,
        s.clocks.data(), s.dout.data(), s.sink.data(), s.flag.data());
  };
  r.run_cycles = [st](int wgs, int blocks, int iters, bool wait_each) {
    auto& s = *st;
    if (s.clocks.size() < static_cast<size_t>(2 * blocks)) s.clocks = gpu::DeviceBuffer<long long>(2 * blocks);
    if (s.sink.size() < static_cast<size_t>(blocks) * 128 * kMaxWarpgroups)
      s.sink = gpu::DeviceBuffer<typename W::CReg>(static_cast<size_t>(blocks) * 128 * kMaxWarpgroups);
    wgmma_loop_kernel<W, RS><<<blocks, 128 * wgs, s.smem>>>(
        s.a_img.data(), s.b_img.data(), s.a_frag.data(), iters, wait_each ? 1 : 0, s.lbo, s.sbo,
        s.clocks.data(), s.dout.data(), s.sink.data(), s.flag.data());
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<long long> c(2 * blocks);
    CUDA_CHECK(cudaMemcpy(c.data(), s.clocks.data(), c.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    return block_cycles(c, blocks);
  };
  r.descriptor = [st] {
    return "lbo " + std::to_string(st->lbo) + " B, sbo " + std::to_string(st->sbo) + " B";
  };
  r.wrong_image = [st] {
    int f = 0;
    CUDA_CHECK(cudaMemcpy(&f, st->flag.data(), sizeof f, cudaMemcpyDeviceToHost));
    return f != 0;
  };
  // One wgmma (latency mode, 1 iteration, D = A*B) against the CPU; exact with small integers.
  // If it fails with the documented LBO/SBO roles, the swapped roles are tried, so the report
  // can say which descriptor convention the hardware followed.
  r.check = [st, run = r.run_cycles]() -> std::optional<std::string> {
    auto& s = *st;
    auto compare = [&]() -> std::optional<std::string> {
      run(1, 1, 1, true);
      std::vector<typename W::CReg> h(128 * W::NC);
      CUDA_CHECK(cudaMemcpy(h.data(), s.dout.data(), s.dout.bytes(), cudaMemcpyDeviceToHost));
      int bad = 0;
      std::string first;
      for (int thr = 0; thr < 128; ++thr)
        for (int v = 0; v < W::NV; ++v) {
          int row, col;
          d_position(thr, v, row, col);
          double ref = 0;
          for (int k = 0; k < W::K; ++k) ref += s.A[row * W::K + k] * s.B[k * W::N + col];
          uint64_t raw = 0;
          if constexpr (W::NV == W::NC) {
            std::memcpy(&raw, &h[thr * W::NC + v], 4);
          } else {
            uint32_t w;
            std::memcpy(&w, &h[thr * W::NC + v / 2], 4);
            raw = (v % 2) ? (w >> 16) : (w & 0xFFFFu);
          }
          const double got = decode(W::c_elem, raw);
          if (got != ref && !bad++)
            first = "D[" + std::to_string(row) + "][" + std::to_string(col) + "] = " + std::to_string(got) +
                    ", CPU reference " + std::to_string(ref);
        }
      if (bad) return std::to_string(bad) + " of " + std::to_string(128 * W::NV) + " values differ; first " + first;
      return std::nullopt;
    };
    auto err = compare();
    if (err) {
      std::swap(s.lbo, s.sbo);
      if (!compare()) return std::nullopt;  // the swapped convention works: keep it
      std::swap(s.lbo, s.sbo);
    }
    return err;
  };
  return r;
}

std::vector<WgmmaRunner> wg_runners(bool quick) {
  std::vector<WgmmaRunner> v;
  v.push_back(make_wg<WG_F16F32_N256, false>("HGMMA.64x256x16.F32"));
  v.push_back(make_wg<WG_F16F32_N256, true>("HGMMA.64x256x16.F32"));
  v.push_back(make_wg<WG_F16F16_N256, false>("HGMMA.64x256x16.F16"));
  v.push_back(make_wg<WG_F16F16_N256, true>("HGMMA.64x256x16.F16"));
  v.push_back(make_wg<WG_BF16F32_N256, false>("HGMMA.64x256x16.F32.BF16"));
  v.push_back(make_wg<WG_BF16F32_N256, true>("HGMMA.64x256x16.F32.BF16"));
  v.push_back(make_wg<WG_TF32F32_N256, false>("HGMMA.64x256x8.F32.TF32"));
  v.push_back(make_wg<WG_TF32F32_N256, true>("HGMMA.64x256x8.F32.TF32"));
  v.push_back(make_wg<WG_E4M3F32_N256, false>("QGMMA.64x256x32.F32.E4M3.E4M3"));
  v.push_back(make_wg<WG_E4M3F32_N256, true>("QGMMA.64x256x32.F32.E4M3.E4M3"));
  v.push_back(make_wg<WG_E5M2F32_N256, false>("QGMMA.64x256x32.F32.E5M2.E5M2"));
  v.push_back(make_wg<WG_E5M2F32_N256, true>("QGMMA.64x256x32.F32.E5M2.E5M2"));
  v.push_back(make_wg<WG_S8S32_N256, false>("IGMMA.64x256x32.S8.S8"));
  v.push_back(make_wg<WG_S8S32_N256, true>("IGMMA.64x256x32.S8.S8"));
  if (!quick) {
    v.push_back(make_wg<WG_F16F16_N128, false>("HGMMA.64x128x16.F16"));
    v.push_back(make_wg<WG_F16F16_N128, true>("HGMMA.64x128x16.F16"));
    v.push_back(make_wg<WG_F16F32_N128, false>("HGMMA.64x128x16.F32"));
    v.push_back(make_wg<WG_F16F32_N128, true>("HGMMA.64x128x16.F32"));
    v.push_back(make_wg<WG_F16F32_N64, false>("HGMMA.64x64x16.F32"));
    v.push_back(make_wg<WG_F16F32_N64, true>("HGMMA.64x64x16.F32"));
    v.push_back(make_wg<WG_F16F32_N32, false>("HGMMA.64x32x16.F32"));
    v.push_back(make_wg<WG_F16F32_N32, true>("HGMMA.64x32x16.F32"));
    v.push_back(make_wg<WG_F16F32_N16, false>("HGMMA.64x16x16.F32"));
    v.push_back(make_wg<WG_F16F32_N16, true>("HGMMA.64x16x16.F32"));
    v.push_back(make_wg<WG_F16F32_N8, false>("HGMMA.64x8x16.F32"));
    v.push_back(make_wg<WG_F16F32_N8, true>("HGMMA.64x8x16.F32"));
  }
  return v;
}

constexpr double kTargetCycles = 200000;

ProbeOutput run_wgmma(const ProbeContext& ctx) {
  ProbeOutput out;
  if (ctx.cc_major != 9 || ctx.cc_minor != 0) {
    out.skipped = "wgmma needs an sm_90a device (compute capability 9.0); this one is " +
                  std::to_string(ctx.cc_major) + "." + std::to_string(ctx.cc_minor);
    return out;
  }
  const double clock_hz = gpu::measure_sm_clock_hz(ctx.device, 0.02);
  nlohmann::json grid = nlohmann::json::array(), checks = nlohmann::json::array(), data = nlohmann::json::array();
  nlohmann::json power_rows = nlohmann::json::array();
  struct PowerLater {
    size_t runner, instruction;
    int best_wg, iters;
    double flop;
  };
  std::vector<PowerLater> later;  // calibrate --power: read after every timed run
  std::map<Precision, std::pair<double, TensorInstruction>> best_per_precision;
  std::mt19937_64 rng(0xBEEF);
  auto rs = wg_runners(ctx.quick);
  const std::vector<int> wgs_axis = ctx.quick ? std::vector<int>{1, 2} : std::vector<int>{1, 2, 3};
  for (size_t idx = 0; idx < rs.size(); ++idx) {
    WgmmaRunner& r = rs[idx];
    TensorInstruction ti = r.proto;
    const std::string key = instruction_key(ti);
    if (ctx.progress) ctx.progress(static_cast<double>(idx) / rs.size(), key);
    r.load(0, rng);
    auto err = r.check();
    if (r.wrong_image()) {
      out.skipped = "the runtime selected the plain sm_90 image of the wgmma kernels (no sm_90a code)";
      return out;
    }
    if (err) {
      checks.push_back({{"instruction", key}, {"check", "failed"}, {"error", *err}});
      continue;
    }
    checks.push_back({{"instruction", key}, {"check", "passed"}, {"descriptor", r.descriptor()}});
    // Latency: one warpgroup, wait for each wgmma; five repeats.
    r.load(1, rng);
    std::vector<double> lat;
    const int lat_iters = 256;
    r.run_cycles(1, 1, 16, true);
    for (int k = 0; k < 5; ++k) lat.push_back(r.run_cycles(1, 1, lat_iters, true)[0] / lat_iters);
    const auto [lo, hi] = std::minmax_element(lat.begin(), lat.end());
    ti.latency.measured = probes::measured_from_samples(
        lat, "wgmma", clock_hz, *hi - *lo > 1.0, "1 warpgroup, fence + wgmma + commit + wait 0 per iteration");
    // Warpgroups per SM sweep (one block per SM), random data.
    double best = 0;
    int best_wg = 1;
    std::vector<std::pair<int, double>> pts;
    for (int wg : wgs_axis) {
      int iters = 16;
      auto c = r.run_cycles(wg, ctx.sm_count, iters, false);
      iters = static_cast<int>(std::clamp(iters * kTargetCycles / std::max(median(c), 1.0), 16.0, double(1 << 20)));
      c = r.run_cycles(wg, ctx.sm_count, iters, false);
      const double f = r.fma_per_wgmma * kUnroll * iters * wg / median(c);
      pts.emplace_back(wg, f);
      grid.push_back({{"instruction", key}, {"warps", 4 * wg}, {"ilp", 1}, {"wgmma_in_flight", kUnroll},
                      {"fma_per_clock_per_sm", f}, {"flop_per_s", 2.0 * f * ctx.sm_count * clock_hz}});
      if (f > best) best = f, best_wg = wg;
    }
    int small_wg = best_wg;
    for (auto [wg, f] : pts)
      if (f >= 0.95 * best && wg < small_wg) small_wg = wg;
    ti.best_warps = 4 * small_wg;
    ti.best_ilp = 1;
    // Full GPU at the best point: random data (the counted figure), then zero data. The tensor
    // cores' flop/s follows the SM clock the power limit allows, and that clock follows what ran
    // just before (2026-11-25, H200: the same instruction 6% apart between two back-to-back runs):
    // the counted run starts after a 50 ms rest, as a user's GEMM starts after other work.
    const double cyc_per_iter = best_wg * kUnroll * r.fma_per_wgmma / best;
    const int iters = std::max(16, static_cast<int>(4e6 / cyc_per_iter));
    const double fma_total = r.fma_per_wgmma * kUnroll * iters * best_wg * static_cast<double>(ctx.sm_count);
    gpu::TimingOptions opt;  // one warm-up and five repeats (~14 ms) after the rest
    opt.warmup = 1;
    opt.repeats = 5;
    // Zero data and random A with zero B are details (what a benchmark with such data sees):
    // three repeats.
    gpu::TimingOptions detail_opt = opt;
    detail_opt.warmup = 1;
    detail_opt.repeats = 3;
    nlohmann::json dj{{"instruction", key}, {"warps", 4 * best_wg}};
    // N = 256 also with random A and zero B (details only): what a benchmark that fills only A sees.
    const bool n256 = key.find("n256") != std::string::npos;
    for (int kind : {1, 2, 3}) {
      if (kind == 3 && !n256) continue;
      r.load(kind, rng);
      if (kind == 1) {
        CUDA_CHECK(cudaDeviceSynchronize());
        std::this_thread::sleep_for(std::chrono::milliseconds(ctx.tc_rest_ms));
      }
      const gpu::Timing t = gpu::time_kernel([&](cudaStream_t s) { r.launch(best_wg, ctx.sm_count, iters, s); },
                                             kind == 1 ? opt : detail_opt);
      const auto c = r.run_cycles(best_wg, ctx.sm_count, iters, false);
      std::vector<double> per_sm;
      for (double x : c) per_sm.push_back(fma_total / ctx.sm_count / x);
      const std::string what = kind == 2 ? "zero" : (kind == 3 ? "random_a_zero_b" : "random");
      // SM clock during the run from clock64 cycles over event time; the post-run sample reads
      // high because the clock recovers as soon as the tensor cores go idle.
      const double run_clock_hz = median(c) / t.summary.median;
      // Each timed launch's rate in order: how the clock (and so the rate) falls over the window.
      nlohmann::json per_launch = nlohmann::json::array();
      for (double x : t.seconds) per_launch.push_back(2.0 * fma_total / x);
      dj[what] = {{"flop_per_s", 2.0 * fma_total / t.summary.median}, {"sm_clock_hz", run_clock_hz},
                  {"sm_clock_hz_after_run", t.sm_clock_hz}, {"fma_per_clock_per_sm", median(per_sm)},
                  {"flop_per_s_per_launch", per_launch}, {"flagged", t.flagged}};
      if (kind == 1) {
        const std::string note = std::to_string(4 * best_wg) + " warps (" + std::to_string(best_wg) +
                                 " warpgroups) per SM, random data, " + std::to_string(kUnroll) +
                                 " wgmma per commit group";
        ti.throughput.measured = probes::measured_rate(t, 2.0 * fma_total, "wgmma", note);
        ti.throughput.measured->sm_clock_hz = run_clock_hz;
        ti.fma_per_clock_per_sm.measured =
            probes::measured_from_samples(per_sm, "wgmma", run_clock_hz, t.flagged, note + "; spread over SMs");
      }
    }
    if (ctx.power) later.push_back({idx, out.instructions.size(), best_wg, iters, 2.0 * fma_total});
    data.push_back(dj);
    out.instructions.push_back(ti);
    auto& bp = best_per_precision[ti.input];
    if (ti.throughput.measured->median > bp.first) bp = {ti.throughput.measured->median, ti};
  }
  // calibrate --power, after every timed run, so no timed run follows a reading at the power limit
  // (the clock a run gets follows what ran before it) and the timed figures do not depend on --power
  // (H200, FP16 ceiling: 932.0 interleaved, 935.9 after; other boards 932-954 without --power): random
  // data again, back to back under the NVML energy counter; the rate during it is the sustained figure
  // predict states beside the ceiling (issue 14).
  for (const PowerLater& pl : later) {
    WgmmaRunner& r = rs[pl.runner];
    TensorInstruction& ti = out.instructions[pl.instruction];
    const std::string key = instruction_key(ti);
    if (ctx.progress) ctx.progress(static_cast<double>(pl.runner) / rs.size(), key + " (power)");
    r.load(1, rng);
    auto pw = probes::measure_power(
        ctx, "wgmma", [&](cudaStream_t s) { r.launch(pl.best_wg, ctx.sm_count, pl.iters, s); }, pl.flop, "FLOP");
    if (pw.value) ti.power.measured = pw.value;
    if (pw.value && pw.rate) ti.sustained.measured = pw.rate;
    pw.details["instruction"] = key;
    power_rows.push_back(pw.details);
  }
  for (auto& [p, v] : best_per_precision) {
    MeasuredValue m = *v.second.throughput.measured;
    m.note = "best wgmma: " + instruction_key(v.second) + "; " + m.note;
    out.fields.push_back({std::string("compute.tensor_core.") + precision_name(p), Dimension::flop_per_second, m});
  }
  out.details["grid"] = grid;
  out.details["checks"] = checks;
  out.details["zero_vs_random"] = data;
  if (ctx.power) out.details["power"] = power_rows;
  out.details["sm_clock_hz_before"] = clock_hz;
  out.details["descriptor"] = {{"swizzle", "none"}, {"lbo_bytes", kCoreLbo}, {"sbo_bytes", kCoreSbo}};
  return out;
}

const Registrar reg{ProbeInfo{
    "wgmma", "compute",
    "wgmma (sm_90a) latency and throughput, SS and RS, zero vs random data; CPU-checked products",
    {{"instruction", {"f16 f32|f16 m64nNk16 (N 8..256)", "bf16 m64n256k16", "tf32 m64n256k8",
                      "e4m3/e5m2 m64n256k32", "s8 m64n256k32"}},
     {"operand_a", {"ss", "rs"}},
     {"warpgroups_per_sm", {"1", "2", "3"}}},
    {"compute.tensor_core.fp16", "compute.tensor_core.bf16", "compute.tensor_core.tf32",
     "compute.tensor_core.fp8", "compute.tensor_core.int8", "tensor_instructions"},
    90, true, run_wgmma}};

// ---- wgmma numerics (issue 13): the FP8 tensor-core path of Hopper, and FP16/BF16/TF32 ----------
// One wgmma (SS, C loaded into the accumulators, D = A*B + C) per group of up to 64 dot products:
// row i of A against column i of B, C on the diagonal. The analysis is probes/host/numerics.

template <class W>
__global__ void __launch_bounds__(128) wgmma_cases_kernel(const uint4* a_imgs, const uint4* b_imgs,
                                                          const typename W::CReg* c_in, typename W::CReg* d_out,
                                                          uint32_t lbo, uint32_t sbo, int* not_sm90a) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(128) uint4 smem[];
  constexpr int a_vec = 64 * kRowBytes / 16, b_vec = W::N * kRowBytes / 16;
  const uint4* ai = a_imgs + static_cast<size_t>(blockIdx.x) * a_vec;
  const uint4* bi = b_imgs + static_cast<size_t>(blockIdx.x) * b_vec;
  for (int i = threadIdx.x; i < a_vec + b_vec; i += blockDim.x) smem[i] = i < a_vec ? ai[i] : bi[i - a_vec];
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  const uint64_t da = smem_desc(smem, lbo, sbo), db = smem_desc(smem + a_vec, lbo, sbo);
  const size_t base = (static_cast<size_t>(blockIdx.x) * 128 + threadIdx.x) * W::NC;
  typename W::CReg acc[W::NC];
#pragma unroll
  for (int r = 0; r < W::NC; ++r) acc[r] = c_in[base + r];
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  W::ss(acc, da, db, 1);
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
#pragma unroll
  for (int r = 0; r < W::NC; ++r) d_out[base + r] = acc[r];
#else
  if (threadIdx.x == 0 && blockIdx.x == 0) *not_sm90a = 1;
#endif
}

// The numerics device for W (FP32 accumulators): dot products of K, up to 64 per wgmma.
template <class W>
std::vector<double> run_wg_dot_cases(const std::vector<numerics::DotCase>& cases, uint32_t lbo, uint32_t sbo) {
  static_assert(W::NV == W::NC, "FP32 accumulators only");
  constexpr int G = W::N < 64 ? W::N : 64;
  const size_t n = cases.size();
  const int groups = static_cast<int>((n + G - 1) / G);
  constexpr size_t a_bytes = 64 * kRowBytes, b_bytes = W::N * kRowBytes;
  std::vector<uint8_t> a_all(groups * a_bytes), b_all(groups * b_bytes);
  std::vector<typename W::CReg> c_all(static_cast<size_t>(groups) * 128 * W::NC);
  for (int g = 0; g < groups; ++g) {
    std::vector<double> A(64 * W::K, 0.0), B(W::K * W::N, 0.0);
    auto cs = [&](int i) -> const numerics::DotCase* {
      const size_t ci = static_cast<size_t>(g) * G + i;
      return (i < G && ci < n) ? &cases[ci] : nullptr;
    };
    for (int i = 0; i < G; ++i)
      if (const auto* c = cs(i))
        for (int k = 0; k < W::K; ++k) A[i * W::K + k] = c->a[k], B[k * W::N + i] = c->b[k];
    const Images<W> im = make_images<W>(A, B);
    std::memcpy(&a_all[g * a_bytes], im.a_img.data(), a_bytes);
    std::memcpy(&b_all[g * b_bytes], im.b_img.data(), b_bytes);
    for (int thr = 0; thr < 128; ++thr)
      for (int v = 0; v < W::NV; ++v) {
        int row, col;
        d_position(thr, v, row, col);
        const auto* c = row == col ? cs(row) : nullptr;
        const uint64_t bits = encode(W::c_elem, c ? c->c : 0.0);
        std::memcpy(&c_all[(static_cast<size_t>(g) * 128 + thr) * W::NC + v], &bits, sizeof(typename W::CReg));
      }
  }
  gpu::DeviceBuffer<uint4> da(a_all.size() / 16), db(b_all.size() / 16);
  gpu::DeviceBuffer<typename W::CReg> dc(c_all.size()), dd(c_all.size());
  gpu::DeviceBuffer<int> flag(1);
  CUDA_CHECK(cudaMemset(flag.data(), 0, sizeof(int)));
  CUDA_CHECK(cudaMemcpy(da.data(), a_all.data(), a_all.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(db.data(), b_all.data(), b_all.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dc.data(), c_all.data(), dc.bytes(), cudaMemcpyHostToDevice));
  wgmma_cases_kernel<W><<<groups, 128, a_bytes + b_bytes>>>(da.data(), db.data(), dc.data(), dd.data(), lbo, sbo,
                                                            flag.data());
  CUDA_CHECK_LAUNCH();
  int wrong = 0;
  CUDA_CHECK(cudaMemcpy(&wrong, flag.data(), sizeof wrong, cudaMemcpyDeviceToHost));
  if (wrong) throw std::runtime_error("wgmma-numerics: the plain sm_90 image ran (no wgmma)");
  std::vector<typename W::CReg> h(c_all.size());
  CUDA_CHECK(cudaMemcpy(h.data(), dd.data(), dd.bytes(), cudaMemcpyDeviceToHost));
  std::vector<double> res(n);
  for (int g = 0; g < groups; ++g)
    for (int thr = 0; thr < 128; ++thr)
      for (int v = 0; v < W::NV; ++v) {
        int row, col;
        d_position(thr, v, row, col);
        const size_t ci = static_cast<size_t>(g) * G + row;
        if (row != col || row >= G || ci >= n) continue;
        uint64_t raw = 0;
        std::memcpy(&raw, &h[(static_cast<size_t>(g) * 128 + thr) * W::NC + v], sizeof(typename W::CReg));
        res[ci] = decode(W::c_elem, raw);
      }
  return res;
}

struct WgNumerics {
  TensorInstruction proto;
  numerics::NumericShape shape;
  std::function<std::vector<double>(const std::vector<numerics::DotCase>&, uint32_t, uint32_t)> run;
};

template <class W>
WgNumerics wg_numerics(const numerics::Format& in) {
  WgNumerics e;
  e.proto.api = "wgmma";
  e.proto.shape = W::shape;
  e.proto.input = W::input;
  e.proto.input_detail = elem_detail(W::a_elem);
  e.proto.accumulate = W::accumulate;
  e.proto.operand_a = "ss";
  e.shape = numerics::NumericShape{e.proto.key(), 64, W::N, W::K, &in, &numerics::fp32()};
  e.run = [](const std::vector<numerics::DotCase>& c, uint32_t lbo, uint32_t sbo) { return run_wg_dot_cases<W>(c, lbo, sbo); };
  return e;
}

ProbeOutput run_wgmma_numerics(const ProbeContext& ctx) {
  ProbeOutput out;
  if (ctx.cc_major != 9 || ctx.cc_minor != 0) {
    out.skipped = "wgmma needs an sm_90a device (compute capability 9.0); this one is " + std::to_string(ctx.cc_major) +
                  "." + std::to_string(ctx.cc_minor);
    return out;
  }
  const int samples = ctx.quick ? 200 : 1000;
  const std::string date = gpu::utc_now_iso8601();
  std::vector<WgNumerics> es;
  es.push_back(wg_numerics<WG_E4M3F32_N256>(numerics::e4m3()));
  es.push_back(wg_numerics<WG_E5M2F32_N256>(numerics::e5m2()));
  es.push_back(wg_numerics<WG_F16F32_N64>(numerics::fp16()));
  es.push_back(wg_numerics<WG_BF16F32_N256>(numerics::bf16()));
  es.push_back(wg_numerics<WG_TF32F32_N256>(numerics::tf32()));
  nlohmann::json jv = nlohmann::json::array();
  for (size_t idx = 0; idx < es.size(); ++idx) {
    auto& e = es[idx];
    const std::string key = e.proto.key();
    if (ctx.progress) ctx.progress(static_cast<double>(idx) / es.size(), key);
    // The descriptor convention (LBO/SBO roles) from exact small-integer products, as the wgmma probe does.
    std::mt19937_64 rng(77);
    std::vector<numerics::DotCase> exact(64);
    for (auto& c : exact) {
      c.a.resize(e.shape.K);
      c.b.resize(e.shape.K);
      for (int k = 0; k < e.shape.K; ++k) c.a[k] = draw_exact(Elem::s8, rng), c.b[k] = draw_exact(Elem::s8, rng);
      c.c = draw_exact(Elem::s8, rng);
    }
    auto exact_ok = [&](uint32_t lbo, uint32_t sbo) {
      const auto r = e.run(exact, lbo, sbo);
      for (size_t i = 0; i < exact.size(); ++i) {
        double ref = exact[i].c;
        for (int k = 0; k < e.shape.K; ++k) ref += exact[i].a[k] * exact[i].b[k];
        if (r[i] != ref) return false;
      }
      return true;
    };
    uint32_t lbo = kCoreLbo, sbo = kCoreSbo;
    if (!exact_ok(lbo, sbo)) {
      std::swap(lbo, sbo);
      if (!exact_ok(lbo, sbo)) {
        jv.push_back({{"instruction", key}, {"check", "failed: small-integer products are not exact with either descriptor convention"}});
        continue;
      }
    }
    auto dev = [&](const std::vector<numerics::DotCase>& c) { return e.run(c, lbo, sbo); };
    const auto cases = numerics::constructed_cases(e.shape, 0x5EED);
    const auto r1 = dev(cases), r2 = dev(cases);
    const numerics::ErrorPlan plan = numerics::error_plan(e.shape, samples, 2024);
    const auto rows = numerics::error_table(e.shape, plan, dev(plan.cases));
    NumericsRecord rec = numerics_record(key, e.shape, cases, r1, r2, rows, samples, "wgmma-numerics", date,
                                         "; SS operands, lbo " + std::to_string(lbo) + " B, sbo " + std::to_string(sbo) + " B");
    TensorInstruction ti = e.proto;
    ti.numerics = std::move(rec.behaviour);
    out.instructions.push_back(ti);
    jv.push_back(std::move(rec.details));
  }
  out.details["instructions"] = jv;
  return out;
}

const Registrar reg_numerics{ProbeInfo{
    "wgmma-numerics", "compute",
    "wgmma (sm_90a) arithmetic: FP8 E4M3/E5M2, FP16, BF16, TF32 with FP32 accumulators, from constructed cases and the "
    "paper's error tables (the FP8 accumulator width shows here)",
    {{"instruction", {"e4m3/e5m2 m64n256k32", "f16 m64n64k16", "bf16 m64n256k16", "tf32 m64n256k8"}}},
    {"tensor_instructions"},
    90, true, run_wgmma_numerics, /*per_architecture=*/true}};

}  // namespace
}  // namespace ceiling::probes::compute
