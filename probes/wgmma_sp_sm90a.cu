// Probe "wgmma-sp" (sm_90a): structured-sparse warpgroup MMA, wgmma.mma_async.sp, SS form (the
// compressed A, M x K/2, and B from shared memory through matrix descriptors without swizzle, as
// in the dense probe "wgmma" of wgmma_probe_sm90a.cu) and RS form (the compressed A from 4
// registers per thread, in the A fragment layout of the dense instruction with K/2; B from shared
// memory), each with its dense twin (same A source) wgmma.mma_async of the
// same types and N timed back to back in the same run, so the sparse/dense ratio is measured, not
// taken from two calibrations. Per variant: products checked against a CPU reference (two uniform
// metadata patterns, then a per-row/per-chunk mixed pattern that exercises the per-thread metadata
// layout), completion latency (1 warpgroup, wait after each), throughput over 1..3 warpgroups per
// SM (one block per SM, all SMs), and a full-GPU event-timed run at the best point. FLOPs are
// dense-equivalent (2*M*N*K with K the logical K: 32 for f16 sparse), so 2x the dense rate reads 2x.
//
// PTX ISA sections this follows (PTX ISA 8.x, "Warpgroup MMA" chapter):
//  - "Asynchronous Warpgroup Level Multiply-and-Accumulate Operation using wgmma.mma_async.sp
//    instruction" and its "Sparse matrix storage": 2:4 for f16/bf16 (m64nNk32) and 8-bit types
//    (m64nNk64), 1:2 for tf32 (m64nNk16); a 4-bit nibble per chunk names the kept positions;
//    0b0000, 0b0101, 0b1010, 0b1111 are invalid. For tf32 a chunk is 2 elements and only 0b0100
//    (element 0 kept) and 0b1110 (element 1 kept) are meaningful: the nibble counts 16-bit halves.
//  - "Matrix fragments for sparse wgmma" (metadata figures) and "wgmma.mma_async.sp" (syntax:
//    d, a-desc, b-desc, sp-meta, sp-sel, scale-d, imm-scale-a, imm-scale-b[, imm-trans-a, imm-trans-b]).
//  - "Shared memory matrix layout" / "Matrix descriptor" (as the dense probe: no swizzle, K-major
//    8-row x 16-byte core matrices, LBO = bytes between core matrices along K, SBO = bytes between
//    8-row groups; the dense probe's H100/H200 runs passed with this, the documented, convention).
//
// Metadata register layout implemented (one 32-bit register per thread; warp w of the warpgroup
// owns rows 16w..16w+15 of A, as for the accumulators; lane = g*4 + q, g = lane/4, q = lane%4):
//  - f16/bf16 (K=32: 8 chunks of 4 per row) and tf32 (K=16: 8 chunks of 2): sparsity selector 0
//    means the thread pair T0,T1 of every group of four holds the group's metadata ("a thread-pair
//    within a group of four consecutive threads contributes the sparsity metadata; the selector
//    must be 0 (T0, T1) or 1 (T2, T3)"). Thread q%2 == h holds chunks 4h..4h+3 (the K half h):
//    bits [15:0] row 16w+g (chunk 4h+j at bits 4j+3..4j), bits [31:16] row 16w+g+8.
//  - 8-bit (K=64: 16 chunks of 4 per row): all four threads hold metadata (selector must be 0):
//    thread q holds row 16w+g+8*(q%2), chunks 8*(q/2)..8*(q/2)+7 at bits 4j+3..4j.
//  This is the per-warp layout of mma.sp m16n8k32 (16-bit) / m16n8k64 (8-bit) replicated over the
//  four warps, and agrees with CUTLASS's sm90 sparse GMMA metadata layouts (ELayout_64x32 for
//  16-bit, _64x16 for tf32, _64x64 for 8-bit: thread strides (k+16|k+8, 0 for T2/T3, row+1,
//  row+16 per warp), values (k, row+8)). Threads T2/T3 get copies of T0/T1 for the 16-bit and
//  tf32 types, so either selector would read the same bits. It is untested on hardware at the time
//  of writing: the "layout" check below says whether it holds; the timing loops do not depend on
//  it (they use a uniform word, every nibble 0b0100, as the mma probe's sparse loops do).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "host/sparse24.hpp"
#include "mma_wgmma_ops.cuh"
#include "mma_wgmma_sp_ops.cuh"
#include "probe_util.hpp"

namespace ceiling::probes::compute {
namespace {

// The rest before each counted run is ProbeContext::tc_rest_ms (default 50 ms). Shorter rests
// cost figures (H200, 2026-11-26, two runs each: 20 ms FP8 -1.0%, FP16 -0.5%; 10 ms FP8 -1.1%,
// FP16 -0.6% against 50 ms).

constexpr int kMaxWarpgroups = 3;  // 128 f32 accumulators (N=256) + operands per thread: 3 fit
constexpr int kUnroll = 4;         // wgmmas per commit group in the throughput loop
constexpr int kCoreLbo = 128;      // bytes between core matrices along K
constexpr int kARowBytes = 32;     // A's stored row: K/2 sparse (or K dense) elements, 32 bytes for every type
constexpr uint8_t kTimingNibble = 0x4;  // positions 0,1 (tf32: element 0) of every chunk

// The loop kernel's view of an instruction: sparse (metadata register used) or the dense twin;
// RS: A from 4 registers per thread (the compressed A in the sparse case), else from shared memory.
template <class S, bool RS = false>
struct SparseOp : S {
  static constexpr bool sparse = true, rs_form = RS;
  static constexpr int KA = S::K / 2;  // A columns stored: the compressed M x K/2
  static constexpr int b_row_bytes = S::K * elem_bits(S::a_elem) / 8;
  __device__ __forceinline__ static void mma(typename S::CReg (&d)[S::NC], uint64_t da, uint64_t db, uint32_t meta,
                                             const uint32_t (&a)[4]) {
    if constexpr (RS) S::rs(d, a, db, meta, 1); else S::ss(d, da, db, meta, 1);
  }
};
template <class W, bool RS = false>
struct DenseOp : W {
  static constexpr bool sparse = false, rs_form = RS;
  static constexpr int KA = W::K;
  static constexpr int b_row_bytes = W::K * elem_bits(W::a_elem) / 8;
  __device__ __forceinline__ static void mma(typename W::CReg (&d)[W::NC], uint64_t da, uint64_t db, uint32_t,
                                             const uint32_t (&a)[4]) {
    if constexpr (RS) W::rs(d, a, db, 1); else W::ss(d, da, db, 1);
  }
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL) || !defined(__CUDA_ARCH__)
__device__ __forceinline__ uint64_t sp_smem_desc(const void* p, uint32_t lbo, uint32_t sbo) {
  const uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(p));
  // Matrix descriptor: start>>4 [0,14), LBO>>4 [16,30), SBO>>4 [32,46), base offset 0, no swizzle.
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (static_cast<uint64_t>(lbo >> 4) << 16) |
         (static_cast<uint64_t>(sbo >> 4) << 32);
}
__device__ __forceinline__ uint32_t sp_combine(uint32_t x, uint32_t y) { return x ^ y; }
__device__ __forceinline__ float sp_combine(float x, float y) { return x + y; }
#endif

// a_img: A (compressed when sparse) as core matrices, 64 rows x 32 bytes; b_img: B^T likewise,
// N rows x b_row_bytes (64 bytes for sparse: the full logical K). meta: one word per thread of a
// warpgroup (every warpgroup uses the same). wait_each: latency mode (1 wgmma per commit group,
// waited for) else throughput mode (kUnroll wgmmas per group, one group kept in flight).
// dout: the accumulators of warpgroup 0 of block 0 (checks); sink: one value per thread.
template <class Op>
__global__ void __launch_bounds__(128 * kMaxWarpgroups, 1)
    wgmma_sp_loop_kernel(const uint4* a_img, const uint4* b_img, const uint32_t* meta, const uint32_t* a_frag,
                         int iters, int wait_each,
                         long long* clocks, typename Op::CReg* dout, typename Op::CReg* sink, int* not_sm90a) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(128) uint4 smem[];
  constexpr int a_vec = 64 * kARowBytes / 16, b_vec = Op::N * Op::b_row_bytes / 16;
  for (int i = threadIdx.x; i < a_vec + b_vec; i += blockDim.x) smem[i] = i < a_vec ? a_img[i] : b_img[i - a_vec];
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // generic stores -> async proxy
  __syncthreads();
  const uint64_t da = sp_smem_desc(smem, kCoreLbo, kARowBytes / 16 * kCoreLbo);
  const uint64_t db = sp_smem_desc(smem + a_vec, kCoreLbo, Op::b_row_bytes / 16 * kCoreLbo);
  const uint32_t e = meta[threadIdx.x % 128];
  uint32_t af[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) af[i] = a_frag[(threadIdx.x % 128) * 4 + i];
  typename Op::CReg acc[Op::NC];
#pragma unroll
  for (int r = 0; r < Op::NC; ++r) acc[r] = typename Op::CReg(0);
  __syncthreads();
  const long long t0 = clock64();
  if (wait_each) {
    for (int it = 0; it < iters; ++it) {
      asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
      Op::mma(acc, da, db, e, af);
      asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
      asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    }
  } else {
    for (int it = 0; it < iters; ++it) {
      asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) Op::mma(acc, da, db, e, af);
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
    for (int r = 0; r < Op::NC; ++r) dout[threadIdx.x * Op::NC + r] = acc[r];
  typename Op::CReg s = acc[0];
#pragma unroll
  for (int r = 1; r < Op::NC; ++r) s = sp_combine(s, acc[r]);
  sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
#else
  // Plain sm_90 / sm_80 pass: no wgmma. If the runtime ever picked this image, say so.
  if (threadIdx.x == 0 && blockIdx.x == 0) *not_sm90a = 1;
#endif
}

// ---- host side: sparsity geometry, images, metadata ------------------------------------------

// Elements per metadata chunk (4; tf32: 2, one kept) and the valid nibbles (probes/host/sparse24).
template <class Op>
constexpr int chunk_elems() { return Op::a_elem == Elem::tf32 ? 2 : 4; }

template <class Op>
std::vector<uint8_t> valid_patterns() {
  if constexpr (Op::a_elem == Elem::tf32) return numerics::valid_nibbles_32bit();  // element 0 / element 1 kept
  else return numerics::valid_nibbles();
}

// Byte offset of (row, byte column) in a no-swizzle K-major core-matrix image whose rows are
// row_bytes long (SBO = row_bytes/16 core matrices of 128 bytes).
inline size_t core_offset(int row, int byte_col, int row_bytes) {
  return static_cast<size_t>(row / 8) * (row_bytes / 16 * kCoreLbo) + (byte_col / 16) * kCoreLbo + (row % 8) * 16 +
         byte_col % 16;
}

// Metadata word of thread thr (0..127) of the warpgroup, nib(row, chunk) the nibble of a chunk
// (layout in the file header).
template <class Op>
uint32_t metadata_word(int thr, const std::function<uint8_t(int, int)>& nib) {
  constexpr int chunks_per_row = Op::K / chunk_elems<Op>();
  static_assert(chunks_per_row == 8 || chunks_per_row == 16, "metadata layout known for 8 or 16 chunks per row");
  const int w = thr / 32, lane = thr % 32, g = lane / 4, q = lane % 4;
  uint32_t word = 0;
  if constexpr (chunks_per_row == 8) {  // 16-bit types and tf32: T0/T1 (copied to T2/T3)
    const int h = q % 2;
    for (int j = 0; j < 4; ++j) {
      word |= static_cast<uint32_t>(nib(16 * w + g, 4 * h + j) & 15) << (4 * j);
      word |= static_cast<uint32_t>(nib(16 * w + g + 8, 4 * h + j) & 15) << (16 + 4 * j);
    }
  } else {  // 8-bit types: all four threads
    const int row = 16 * w + g + 8 * (q % 2), base = 8 * (q / 2);
    for (int j = 0; j < 8; ++j) word |= static_cast<uint32_t>(nib(row, base + j) & 15) << (4 * j);
  }
  return word;
}

// Accumulator value v of thread thr: row and column of D (as the dense probe).
inline void d_position(int thr, int v, int& row, int& col) {
  const int w = thr / 32, lane = thr % 32, g = lane / 4, tq = lane % 4;
  const int chunk = v / 4, q = v % 4;
  row = 16 * w + g + 8 * (q / 2);
  col = 8 * chunk + 2 * tq + q % 2;
}

struct SpRunner {
  TensorInstruction proto;  // sparse = Op::sparse
  double fma_per_wgmma = 0;  // dense-equivalent: 64 * N * logical K
  // Products against the CPU: per pattern {"pattern", "result"[, "error"]}; the first failure of
  // a gating pattern returns its message. layout_error: the per-thread (mixed) metadata check.
  std::function<std::optional<std::string>(std::mt19937_64&, nlohmann::json&, std::optional<std::string>&)> check;
  std::function<void(std::mt19937_64&)> load_random;  // small random A/B, timing metadata
  std::function<std::vector<double>(int wgs, int blocks, int iters, bool wait_each)> run_cycles;
  std::function<void(int wgs, int blocks, int iters, cudaStream_t)> launch;
  std::function<bool()> wrong_image;
};

template <class Op>
struct SpState {
  gpu::DeviceBuffer<uint4> a_img, b_img;
  gpu::DeviceBuffer<uint32_t> meta, a_frag;
  gpu::DeviceBuffer<long long> clocks;
  gpu::DeviceBuffer<typename Op::CReg> dout, sink;
  gpu::DeviceBuffer<int> flag;
  size_t smem = 0;
  // Host copies of the last loaded product: compressed A (64 x KA), B (K x N), nibbles (64 x chunks).
  std::vector<double> Ac, B;
  std::vector<uint8_t> nibbles;
};

template <class Op>
void upload(SpState<Op>& s, const std::vector<double>& Ac, const std::vector<double>& B,
            const std::vector<uint32_t>& meta) {
  const int bytes = elem_bits(Op::a_elem) / 8;
  std::vector<uint8_t> a_img(64 * kARowBytes, 0), b_img(static_cast<size_t>(Op::N) * Op::b_row_bytes, 0);
  for (int m = 0; m < 64; ++m)
    for (int j = 0; j < Op::KA; ++j) {
      const uint64_t bits = encode(Op::a_elem, Ac[m * Op::KA + j]);
      std::memcpy(&a_img[core_offset(m, j * bytes, kARowBytes)], &bits, bytes);
    }
  for (int n = 0; n < Op::N; ++n)
    for (int k = 0; k < Op::K; ++k) {
      const uint64_t bits = encode(Op::a_elem, B[k * Op::N + n]);
      std::memcpy(&b_img[core_offset(n, k * bytes, Op::b_row_bytes)], &bits, bytes);
    }
  // RS fragments: warp w holds rows 16w..16w+15 of the stored A (64 x KA) in the mma m16n8k* A
  // layout of the dense instruction with K = KA (as the dense wgmma probe's RS fragments).
  const int per32 = elem_bits(Op::a_elem) >= 32 ? 1 : 32 / elem_bits(Op::a_elem);
  std::vector<uint32_t> a_frag(128 * 4, 0);
  for (int thr = 0; thr < 128; ++thr) {
    const int w = thr / 32, lane = thr % 32, g = lane / 4, tq = lane % 4;
    for (int r = 0; r < 4; ++r) {
      uint32_t bits = 0;
      for (int j = 0; j < per32; ++j) {
        const int row = 16 * w + g + 8 * (r % 2), col = tq * per32 + j + 4 * per32 * (r / 2);
        bits |= static_cast<uint32_t>(encode(Op::a_elem, Ac[row * Op::KA + col])) << (j * elem_bits(Op::a_elem));
      }
      a_frag[thr * 4 + r] = bits;
    }
  }
  if (!s.a_img.size()) {
    s.a_frag = gpu::DeviceBuffer<uint32_t>(128 * 4);
    s.a_img = gpu::DeviceBuffer<uint4>(a_img.size() / 16);
    s.b_img = gpu::DeviceBuffer<uint4>(b_img.size() / 16);
    s.meta = gpu::DeviceBuffer<uint32_t>(128);
    s.dout = gpu::DeviceBuffer<typename Op::CReg>(128 * Op::NC);
    s.flag = gpu::DeviceBuffer<int>(1);
    CUDA_CHECK(cudaMemset(s.flag.data(), 0, sizeof(int)));
    int dev = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    s.smem = std::max(one_block_per_sm_smem(dev), a_img.size() + b_img.size());
    CUDA_CHECK(cudaFuncSetAttribute(wgmma_sp_loop_kernel<Op>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(s.smem)));
  }
  CUDA_CHECK(cudaMemcpy(s.a_img.data(), a_img.data(), a_img.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(s.b_img.data(), b_img.data(), b_img.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(s.meta.data(), meta.data(), s.meta.bytes(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(s.a_frag.data(), a_frag.data(), s.a_frag.bytes(), cudaMemcpyHostToDevice));
}

template <class Op>
SpRunner make_runner(const std::string& sass) {
  SpRunner r;
  r.proto.api = "wgmma";
  r.proto.shape = Op::shape;
  r.proto.input = Op::input;
  r.proto.input_detail = elem_detail(Op::a_elem);
  r.proto.accumulate = Op::accumulate;
  r.proto.sparse = Op::sparse;
  r.proto.operand_a = Op::rs_form ? "rs" : "ss";
  r.proto.sass = sass;
  r.fma_per_wgmma = 64.0 * Op::N * Op::K;
  auto st = std::make_shared<SpState<Op>>();
  constexpr int chunks = Op::K / chunk_elems<Op>();
  r.launch = [st](int wgs, int blocks, int iters, cudaStream_t stream) {
    auto& s = *st;
    if (s.clocks.size() < static_cast<size_t>(2 * blocks)) s.clocks = gpu::DeviceBuffer<long long>(2 * blocks);
    if (s.sink.size() < static_cast<size_t>(blocks) * 128 * kMaxWarpgroups)
      s.sink = gpu::DeviceBuffer<typename Op::CReg>(static_cast<size_t>(blocks) * 128 * kMaxWarpgroups);
    wgmma_sp_loop_kernel<Op><<<blocks, 128 * wgs, s.smem, stream>>>(s.a_img.data(), s.b_img.data(), s.meta.data(),
                                                                     s.a_frag.data(), iters, 0, s.clocks.data(), s.dout.data(),
                                                                     s.sink.data(), s.flag.data());
  };
  r.run_cycles = [st](int wgs, int blocks, int iters, bool wait_each) {
    auto& s = *st;
    if (s.clocks.size() < static_cast<size_t>(2 * blocks)) s.clocks = gpu::DeviceBuffer<long long>(2 * blocks);
    if (s.sink.size() < static_cast<size_t>(blocks) * 128 * kMaxWarpgroups)
      s.sink = gpu::DeviceBuffer<typename Op::CReg>(static_cast<size_t>(blocks) * 128 * kMaxWarpgroups);
    wgmma_sp_loop_kernel<Op><<<blocks, 128 * wgs, s.smem>>>(s.a_img.data(), s.b_img.data(), s.meta.data(),
                                                             s.a_frag.data(), iters,
                                                             wait_each ? 1 : 0, s.clocks.data(), s.dout.data(),
                                                             s.sink.data(), s.flag.data());
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<long long> c(2 * blocks);
    CUDA_CHECK(cudaMemcpy(c.data(), s.clocks.data(), c.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    return block_cycles(c, blocks);
  };
  r.wrong_image = [st] {
    int f = 0;
    if (st->flag.size()) CUDA_CHECK(cudaMemcpy(&f, st->flag.data(), sizeof f, cudaMemcpyDeviceToHost));
    return f != 0;
  };
  r.load_random = [st](std::mt19937_64& rng) {
    std::vector<double> Ac(64 * Op::KA), B(Op::K * Op::N);
    for (auto& x : Ac) x = draw_small(Op::a_elem, rng);
    for (auto& x : B) x = draw_small(Op::a_elem, rng);
    // Uniform word: every thread holds the same bits, so the timing does not hang on the layout.
    const uint32_t word = Op::sparse ? numerics::uniform_metadata(kTimingNibble) : 0u;
    upload<Op>(*st, Ac, B, std::vector<uint32_t>(128, word));
  };
  // One product (latency mode, 1 iteration, D = A*B) for one metadata assignment nib(row, chunk),
  // exact small integers; meta_of(thr) gives each thread's word. Returns the first mismatch.
  auto one_product = [st, run = r.run_cycles](std::mt19937_64& rng, const std::function<uint8_t(int, int)>& nib,
                                              const std::function<uint32_t(int)>& meta_of)
      -> std::optional<std::string> {
    auto& s = *st;
    std::vector<double> Ac(64 * Op::KA), B(Op::K * Op::N);
    for (auto& x : Ac) x = draw_exact(Op::a_elem, rng);
    for (auto& x : B) x = draw_exact(Op::a_elem, rng);
    std::vector<uint32_t> meta(128);
    for (int t = 0; t < 128; ++t) meta[t] = meta_of(t);
    upload<Op>(s, Ac, B, meta);
    // Dense A from the compressed rows and the nibbles (sparse24 for 2:4; tf32 by hand, 1:2).
    std::vector<double> A(64 * Op::K, 0.0);
    for (int m = 0; m < 64; ++m) {
      if constexpr (!Op::sparse) {
        for (int k = 0; k < Op::K; ++k) A[m * Op::K + k] = Ac[m * Op::KA + k];
      } else if constexpr (chunk_elems<Op>() == 4) {
        numerics::Compressed24 c;
        c.values.assign(Ac.begin() + m * Op::KA, Ac.begin() + (m + 1) * Op::KA);
        for (int ch = 0; ch < chunks; ++ch) c.nibbles.push_back(nib(m, ch));
        const std::vector<double> row = numerics::expand_24(c);
        std::copy(row.begin(), row.end(), A.begin() + m * Op::K);
      } else {  // tf32, 1:2: one value per chunk of 2
        std::vector<uint8_t> nibs;
        for (int ch = 0; ch < chunks; ++ch) nibs.push_back(nib(m, ch));
        const std::vector<double> row =
            numerics::expand_12(std::vector<double>(Ac.begin() + m * Op::KA, Ac.begin() + (m + 1) * Op::KA), nibs);
        std::copy(row.begin(), row.end(), A.begin() + m * Op::K);
      }
    }
    run(1, 1, 1, true);
    std::vector<typename Op::CReg> h(128 * Op::NC);
    CUDA_CHECK(cudaMemcpy(h.data(), s.dout.data(), s.dout.bytes(), cudaMemcpyDeviceToHost));
    int bad = 0;
    std::string first;
    for (int thr = 0; thr < 128; ++thr)
      for (int v = 0; v < Op::NV; ++v) {
        int row, col;
        d_position(thr, v, row, col);
        double ref = 0;
        for (int k = 0; k < Op::K; ++k) ref += A[row * Op::K + k] * B[k * Op::N + col];
        uint64_t raw = 0;
        std::memcpy(&raw, &h[thr * Op::NC + v], sizeof(typename Op::CReg));
        const double got = decode(Op::c_elem, raw);
        if (got != ref && !bad++)
          first = "D[" + std::to_string(row) + "][" + std::to_string(col) + "] = " + std::to_string(got) +
                  ", CPU reference " + std::to_string(ref);
      }
    if (bad) return std::to_string(bad) + " of " + std::to_string(128 * Op::NV) + " values differ; first " + first;
    return std::nullopt;
  };
  // Gating checks: the timing nibble 0x4 (positions 0,1; tf32 element 0) and 0xE (positions 2,3;
  // tf32 element 1) in every chunk and every thread's word (layout-independent: they prove the
  // operand order, compression, descriptors and the nibble meaning). Then the layout check: a
  // random valid nibble per (row, chunk) placed by metadata_word().
  r.check = [one_product](std::mt19937_64& rng, nlohmann::json& res,
                          std::optional<std::string>& layout_error) -> std::optional<std::string> {
    if constexpr (!Op::sparse) {
      auto err = one_product(rng, [](int, int) { return uint8_t{0}; }, [](int) { return 0u; });
      res.push_back({{"pattern", "dense"}, {"result", err ? "failed" : "passed"}});
      if (err) res.back()["error"] = *err;
      return err;
    } else {
      for (const uint8_t n : {uint8_t{0x4}, uint8_t{0xE}}) {
        auto err = one_product(rng, [n](int, int) { return n; },
                               [n](int) { return numerics::uniform_metadata(n); });
        char name[32];
        std::snprintf(name, sizeof name, "uniform 0x%X", n);
        res.push_back({{"pattern", name}, {"result", err ? "failed" : "passed"}});
        if (err) {
          res.back()["error"] = *err;
          return "metadata " + std::string(name) + ": " + *err;
        }
      }
      const auto valid = valid_patterns<Op>();
      std::vector<uint8_t> table(64 * chunks);
      for (auto& x : table) x = valid[rng() % valid.size()];
      auto nib = [&table](int row, int ch) { return table[row * chunks + ch]; };
      layout_error = one_product(rng, nib, [&nib](int t) { return metadata_word<Op>(t, nib); });
      res.push_back({{"pattern", "mixed per row and chunk (per-thread metadata layout)"},
                     {"result", layout_error ? "failed" : "passed"}});
      if (layout_error) res.back()["error"] = *layout_error;
      return std::nullopt;
    }
  };
  return r;
}

// A sparse variant and its dense twin (same types and N, dense K).
struct Pair {
  SpRunner sparse, dense;
};

std::vector<Pair> pairs(bool quick) {
  using namespace wgmma_ops;
  using namespace wgmma_sp_ops;
  std::vector<Pair> v;
  v.push_back({make_runner<SparseOp<WGSP_F16F32_N256>>("HGMMA.SP.64x256x32.F32"),
               make_runner<DenseOp<WG_F16F32_N256>>("HGMMA.64x256x16.F32")});
  v.push_back({make_runner<SparseOp<WGSP_BF16F32_N256>>("HGMMA.SP.64x256x32.F32.BF16"),
               make_runner<DenseOp<WG_BF16F32_N256>>("HGMMA.64x256x16.F32.BF16")});
  v.push_back({make_runner<SparseOp<WGSP_TF32F32_N256>>("HGMMA.SP.64x256x16.F32.TF32"),
               make_runner<DenseOp<WG_TF32F32_N256>>("HGMMA.64x256x8.F32.TF32")});
  v.push_back({make_runner<SparseOp<WGSP_E4M3F32_N256>>("QGMMA.SP.64x256x64.F32.E4M3.E4M3"),
               make_runner<DenseOp<WG_E4M3F32_N256>>("QGMMA.64x256x32.F32.E4M3.E4M3")});
  v.push_back({make_runner<SparseOp<WGSP_S8S32_N256>>("IGMMA.SP.64x256x64.S8.S8"),
               make_runner<DenseOp<WG_S8S32_N256>>("IGMMA.64x256x32.S8.S8")});
  // RS form (A from registers): the SS form reads A and B from shared memory for every wgmma and
  // is capped by 128 B/clk/SM of shared-memory bandwidth below 2x (see NOTES); RS reads only B.
  v.push_back({make_runner<SparseOp<WGSP_F16F32_N256, true>>("HGMMA.SP.64x256x32.F32 (A in registers)"),
               make_runner<DenseOp<WG_F16F32_N256, true>>("HGMMA.64x256x16.F32 (A in registers)")});
  if (!quick) {
    v.push_back({make_runner<SparseOp<WGSP_BF16F32_N256, true>>("HGMMA.SP.64x256x32.F32.BF16 (A in registers)"),
                 make_runner<DenseOp<WG_BF16F32_N256, true>>("HGMMA.64x256x16.F32.BF16 (A in registers)")});
    v.push_back({make_runner<SparseOp<WGSP_TF32F32_N256, true>>("HGMMA.SP.64x256x16.F32.TF32 (A in registers)"),
                 make_runner<DenseOp<WG_TF32F32_N256, true>>("HGMMA.64x256x8.F32.TF32 (A in registers)")});
    v.push_back({make_runner<SparseOp<WGSP_E4M3F32_N256, true>>("QGMMA.SP.64x256x64.F32.E4M3.E4M3 (A in registers)"),
                 make_runner<DenseOp<WG_E4M3F32_N256, true>>("QGMMA.64x256x32.F32.E4M3.E4M3 (A in registers)")});
    v.push_back({make_runner<SparseOp<WGSP_S8S32_N256, true>>("IGMMA.SP.64x256x64.S8.S8 (A in registers)"),
                 make_runner<DenseOp<WG_S8S32_N256, true>>("IGMMA.64x256x32.S8.S8 (A in registers)")});
    v.push_back({make_runner<SparseOp<WGSP_F16F32_N128, true>>("HGMMA.SP.64x128x32.F32 (A in registers)"),
                 make_runner<DenseOp<WG_F16F32_N128, true>>("HGMMA.64x128x16.F32 (A in registers)")});
    v.push_back({make_runner<SparseOp<WGSP_F16F32_N128>>("HGMMA.SP.64x128x32.F32"),
                 make_runner<DenseOp<WG_F16F32_N128>>("HGMMA.64x128x16.F32")});
    v.push_back({make_runner<SparseOp<WGSP_F16F32_N64>>("HGMMA.SP.64x64x32.F32"),
                 make_runner<DenseOp<WG_F16F32_N64>>("HGMMA.64x64x16.F32")});
  }
  return v;
}

constexpr double kTargetCycles = 200000;

// Sweep result and full-GPU figures of one runner.
struct Timed {
  int best_wg = 1, small_wg = 1;
  double best_fma_per_clk = 0;
  std::vector<std::pair<int, double>> pts;
  int iters = 0;
};

Timed sweep(SpRunner& r, const std::vector<int>& wgs_axis, int sm_count) {
  Timed t;
  for (int wg : wgs_axis) {
    int iters = 16;
    auto c = r.run_cycles(wg, sm_count, iters, false);
    iters = static_cast<int>(std::clamp(iters * kTargetCycles / std::max(median(c), 1.0), 16.0, double(1 << 20)));
    c = r.run_cycles(wg, sm_count, iters, false);
    const double f = r.fma_per_wgmma * kUnroll * iters * wg / median(c);
    t.pts.emplace_back(wg, f);
    if (f > t.best_fma_per_clk) t.best_fma_per_clk = f, t.best_wg = wg;
  }
  t.small_wg = t.best_wg;
  for (auto [wg, f] : t.pts)
    if (f >= 0.95 * t.best_fma_per_clk && wg < t.small_wg) t.small_wg = wg;
  const double cyc_per_iter = t.best_wg * kUnroll * r.fma_per_wgmma / t.best_fma_per_clk;
  t.iters = std::max(16, static_cast<int>(4e6 / cyc_per_iter));
  return t;
}

ProbeOutput run_wgmma_sp(const ProbeContext& ctx) {
  ProbeOutput out;
  if (ctx.cc_major != 9 || ctx.cc_minor != 0) {
    out.skipped = "wgmma.mma_async.sp needs an sm_90a device (compute capability 9.0); this one is " +
                  std::to_string(ctx.cc_major) + "." + std::to_string(ctx.cc_minor);
    return out;
  }
  const double clock_hz = gpu::measure_sm_clock_hz(ctx.device, 0.02);
  nlohmann::json grid = nlohmann::json::array(), checks = nlohmann::json::array(), svd = nlohmann::json::array();
  std::mt19937_64 rng(0x5EA5);
  auto ps = pairs(ctx.quick);
  const std::vector<int> wgs_axis = ctx.quick ? std::vector<int>{1, 2} : std::vector<int>{1, 2, 3};
  gpu::TimingOptions opt;  // one warm-up and five repeats (~14 ms) after the rest
  opt.warmup = 1;
  opt.repeats = 5;
  for (size_t idx = 0; idx < ps.size(); ++idx) {
    Pair& p = ps[idx];
    const std::string key = instruction_key(p.sparse.proto), dkey = instruction_key(p.dense.proto);
    if (ctx.progress) ctx.progress(static_cast<double>(idx) / ps.size(), key);
    // Checks: the sparse product (gating), its metadata layout (reported), the dense twin's.
    nlohmann::json sres = nlohmann::json::array(), dres = nlohmann::json::array();
    std::optional<std::string> layout_err, unused;
    const auto serr = p.sparse.check(rng, sres, layout_err);
    if (p.sparse.wrong_image()) {
      out.skipped = "the runtime selected the plain sm_90 image of the wgmma-sp kernels (no sm_90a code)";
      return out;
    }
    const auto derr = p.dense.check(rng, dres, unused);
    nlohmann::json cj{{"instruction", key}, {"check", serr ? "failed" : "passed"}, {"patterns", sres},
                      {"metadata_layout", layout_err ? "failed" : "passed"},
                      {"dense_twin", dkey}, {"dense_twin_check", derr ? "failed" : "passed"}, {"dense_patterns", dres}};
    if (serr) cj["error"] = *serr;
    checks.push_back(cj);
    if (serr) continue;  // no throughput for a product that is wrong
    // Latency of the sparse instruction: one warpgroup, wait for each wgmma; five repeats.
    TensorInstruction ti = p.sparse.proto;
    p.sparse.load_random(rng);
    const int lat_iters = 256;
    std::vector<double> lat;
    p.sparse.run_cycles(1, 1, 16, true);
    for (int k = 0; k < 5; ++k) lat.push_back(p.sparse.run_cycles(1, 1, lat_iters, true)[0] / lat_iters);
    const auto [lo, hi] = std::minmax_element(lat.begin(), lat.end());
    ti.latency.measured = probes::measured_from_samples(
        lat, "wgmma-sp", clock_hz, *hi - *lo > 1.0, "1 warpgroup, fence + wgmma.sp + commit + wait 0 per iteration");
    // Warpgroup sweeps, sparse then dense twin, random data.
    const Timed ts = sweep(p.sparse, wgs_axis, ctx.sm_count);
    for (auto [wg, f] : ts.pts)
      grid.push_back({{"instruction", key}, {"warpgroups", wg}, {"warps", 4 * wg}, {"wgmma_in_flight", kUnroll},
                      {"fma_per_clock_per_sm", f}, {"flop_per_s", 2.0 * f * ctx.sm_count * clock_hz}});
    std::optional<Timed> td;
    if (!derr) {
      p.dense.load_random(rng);
      td = sweep(p.dense, wgs_axis, ctx.sm_count);
      for (auto [wg, f] : td->pts)
        grid.push_back({{"instruction", dkey}, {"warpgroups", wg}, {"warps", 4 * wg}, {"wgmma_in_flight", kUnroll},
                        {"fma_per_clock_per_sm", f}, {"flop_per_s", 2.0 * f * ctx.sm_count * clock_hz}});
    }
    // Full GPU at each one's best point, back to back: dense twin, then sparse; each after a
    // 50 ms rest (the tensor cores' clock follows what ran just before; see the wgmma probe).
    struct Full {
      gpu::Timing t;
      double flop = 0, run_clock_hz = 0;
      std::vector<double> per_sm;
    };
    // One rest, then the dense twin and the sparse instruction alternately (launch by launch):
    // both run under the same clock, so the ratio is the tensor cores' and one rest serves both
    // (a rest before each took 1.3 s of the probe's 2.4 s on an H200).
    auto fma_of = [&](SpRunner& r, const Timed& tm) {
      return r.fma_per_wgmma * kUnroll * tm.iters * tm.best_wg * static_cast<double>(ctx.sm_count);
    };
    auto per_sm_of = [&](SpRunner& r, const Timed& tm, Full& f) {
      const auto c = r.run_cycles(tm.best_wg, ctx.sm_count, tm.iters, false);
      for (double x : c) f.per_sm.push_back(fma_of(r, tm) / ctx.sm_count / x);
      f.flop = 2.0 * fma_of(r, tm);
      f.run_clock_hz = median(c) / f.t.summary.median;
    };
    CUDA_CHECK(cudaDeviceSynchronize());
    std::this_thread::sleep_for(std::chrono::milliseconds(ctx.tc_rest_ms));
    std::optional<Full> fd;
    Full fs;
    if (td) {
      gpu::TimingOptions both = opt;  // warm-ups and repeats doubled: even, so a retry starts dense again
      both.warmup = 2 * opt.warmup;
      both.repeats = 2 * opt.repeats;
      both.max_cv = 1.0;  // the two run lengths differ; each half's own CV is checked below
      long turn = 0;
      const gpu::Timing t = gpu::time_kernel(
          [&](cudaStream_t st) {
            if (turn++ % 2 == 0) p.dense.launch(td->best_wg, ctx.sm_count, td->iters, st);
            else p.sparse.launch(ts.best_wg, ctx.sm_count, ts.iters, st);
          },
          both);
      fd.emplace();
      for (auto [f, parity] : {std::pair<Full*, int>{&*fd, 0}, std::pair<Full*, int>{&fs, 1}}) {
        f->t = t;
        f->t.seconds.clear();
        for (std::size_t i = parity; i < t.seconds.size(); i += 2) f->t.seconds.push_back(t.seconds[i]);
        f->t.summary = summarize(f->t.seconds);
        if (f->t.summary.cv > opt.max_cv && !f->t.flagged) {
          f->t.flagged = true;
          f->t.flag_reason = "noisy: CV " + std::to_string(f->t.summary.cv) + " > " + std::to_string(opt.max_cv);
        }
      }
      per_sm_of(p.dense, *td, *fd);
    } else {
      fs.t = gpu::time_kernel([&](cudaStream_t st) { p.sparse.launch(ts.best_wg, ctx.sm_count, ts.iters, st); }, opt);
    }
    per_sm_of(p.sparse, ts, fs);
    const std::string note = std::to_string(4 * ts.best_wg) + " warps (" + std::to_string(ts.best_wg) +
                             " warpgroups) per SM, random data, " + std::to_string(kUnroll) +
                             " wgmma.sp per commit group, dense-equivalent FLOPs (2*M*N*K of " +
                             p.sparse.proto.shape + ")";
    ti.throughput.measured = probes::measured_rate(fs.t, fs.flop, "wgmma-sp", note);
    ti.throughput.measured->sm_clock_hz = fs.run_clock_hz;
    ti.fma_per_clock_per_sm.measured =
        probes::measured_from_samples(fs.per_sm, "wgmma-sp", fs.run_clock_hz, fs.t.flagged, note + "; spread over SMs");
    ti.best_warps = 4 * ts.small_wg;
    ti.best_ilp = 1;
    // calibrate --power: each at its best point, back to back under the NVML energy counter.
    nlohmann::json spower, dpower;
    if (ctx.power) {
      auto power_of = [&](SpRunner& r, const Timed& tm) {
        const double flop = 2.0 * r.fma_per_wgmma * kUnroll * tm.iters * tm.best_wg * static_cast<double>(ctx.sm_count);
        return probes::measure_power(
            ctx, "wgmma-sp", [&](cudaStream_t st) { r.launch(tm.best_wg, ctx.sm_count, tm.iters, st); }, flop, "FLOP");
      };
      auto ps = power_of(p.sparse, ts);
      if (ps.value) ti.power.measured = ps.value;
      if (ps.value && ps.rate) ti.sustained.measured = ps.rate;
      spower = ps.details;
      if (td) dpower = power_of(p.dense, *td).details;
    }
    out.instructions.push_back(ti);
    nlohmann::json sj{{"sparse", key}, {"dense", dkey}, {"sparse_warps", 4 * ts.best_wg},
                      {"sparse_flop_per_s", ti.throughput.measured->median},
                      {"sparse_fma_per_clock_per_sm", ti.fma_per_clock_per_sm.measured->median},
                      {"sparse_sm_clock_hz", fs.run_clock_hz}};
    if (fd) {
      const double dflops = probes::measured_rate(fd->t, fd->flop, "wgmma-sp").median;
      const double dfma = median(fd->per_sm);
      sj["dense_warps"] = 4 * td->best_wg;
      sj["dense_flop_per_s"] = dflops;
      sj["dense_fma_per_clock_per_sm"] = dfma;
      sj["dense_sm_clock_hz"] = fd->run_clock_hz;
      sj["dense_flagged"] = fd->t.flagged;
      // Two ratios: of FLOP/s (what a user gets, clock included) and of FMA per clock per SM
      // (the tensor core's rate, independent of the clock each run held).
      sj["ratio_flop_per_s"] = dflops > 0 ? ti.throughput.measured->median / dflops : 0.0;
      sj["ratio_fma_per_clock"] = dfma > 0 ? ti.fma_per_clock_per_sm.measured->median / dfma : 0.0;
    } else {
      sj["dense_error"] = derr ? *derr : std::string("not timed");
    }
    if (ctx.power) sj["power"] = {{"sparse", spower}, {"dense", dpower}};
    svd.push_back(sj);
  }
  out.details["checks"] = checks;
  out.details["grid"] = grid;
  out.details["sparse_vs_dense"] = svd;
  out.details["sm_clock_hz_before"] = clock_hz;
  out.details["descriptor"] = {{"swizzle", "none"}, {"lbo_bytes", kCoreLbo},
                               {"sbo_bytes_a", kARowBytes / 16 * kCoreLbo},
                               {"sbo_bytes_b", "row bytes / 16 x 128 (512 for sparse B, 256 for dense)"}};
  out.details["metadata"] = {{"sparsity_selector", 0},
                             {"timing_word", "every nibble 0b0100 (positions 0,1; tf32 element 0), every thread"}};
  return out;
}

const Registrar reg{ProbeInfo{
    "wgmma-sp", "compute",
    "sparse wgmma.mma_async.sp (sm_90a, SS and RS) latency and throughput next to its dense twin timed back to back; "
    "CPU-checked products (two uniform metadata patterns and a per-thread layout check); dense-equivalent FLOPs",
    {{"instruction", {"f16 f32 m64nNk32 (N 64, 128, 256)", "bf16 m64n256k32", "tf32 m64n256k16", "e4m3 m64n256k64",
                      "s8 m64n256k64"}},
     {"operand_a", {"ss", "rs"}},
     {"warpgroups_per_sm", {"1", "2", "3"}}},
    {"tensor_instructions"},
    90, true, run_wgmma_sp, /*per_architecture=*/false, /*runs_sparse_tensor=*/true}};

}  // namespace
}  // namespace ceiling::probes::compute
