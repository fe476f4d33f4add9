// Probe "async-copy": global -> shared copies and the tiled matrix multiply of Luo et al. (issue
// 14; "Benchmarking and Dissecting the Nvidia Hopper GPU Architecture" §III-D2, §IV-E, Tables
// XIII-XIV). Plain C++ side (buffer contents, tiles, CPU references, sweep): probes/host/async_copy.hpp.
// 1. Bandwidth: a buffer sized as dram-bandwidth sizes it (>= 8x L2, >= 1 GiB; quick 512 MiB, so
//    >= 4x L2 on every GPU we know) is copied tile by tile into shared memory by persistent blocks
//    (as many per SM as fit; block b takes tiles b, b + grid, ...), each tile summed there, one
//    64-bit sum per block. Methods: ld.global.cg 16 B + st.shared (sync, one buffer), cp.async.cg
//    16 B with 1-4 stages (commit_group / wait_group), cp.async.bulk 1D with one mbarrier per stage
//    and one producer thread, cp.async.bulk.tensor.2d through a CUtensorMap (the same buffer seen
//    as 8 KiB rows; boxes 64x64 / 128x64 of 4- or 2-byte elements), same producer. Bulk and tensor
//    need sm_90: below cc 9.0 they are skipped with a reason (their kernels trap on sm_80 code).
//    Every configuration's block sums are checked against the CPU's before it is timed; the bytes
//    of a run over its median time give GB/s; the best configuration of each method is timed again
//    with more repeats and becomes async_copy.methods[].bandwidth. The buffer is far larger than
//    the L2 and read in address order, so no repeat finds its start in the L2 (as dram-bandwidth).
// 2. Tables XIII-XIV: SyncShare and AsyncPipe (two-stage cp.async, double buffer) matrix
//    multiplies, blocks of 8x8, 16x16, 32x32 threads, A's width = B's height = 2048, grid = SMs x
//    blocks per SM (1-32), FP32 GFLOP/s = 2 hA wA wB / time. Inputs are small integers, so sampled
//    entries (one per block and the corners) must equal the FP64 reference exactly.
// The cuTensorMapEncodeTiled entry point comes from cudaGetDriverEntryPointByVersion: no
// link-time libcuda dependency.
#include <cuda.h>  // CUtensorMap and its enums (types only)
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "gpu/cp_async.cuh"
#include "host/async_copy.hpp"
#include "probe_util.hpp"
#include "registry.hpp"

namespace ceiling::probes {
namespace {

namespace ac = async_copy;
using ac::Method;
using ull = unsigned long long;

constexpr double MiB = 1024.0 * 1024.0;

// ---- device helpers ----

using gpu::cp_async16;  // gpu/cp_async.cuh, shared with kernels/gemm_cuda_core.cu
using gpu::cp_async4;
using gpu::cp_async_commit;
using gpu::cp_async_wait;
using gpu::smem_addr;
using gpu::mbar_init;  // mbarriers: gpu/cp_async.cuh
using gpu::mbar_init_fence;
using gpu::mbar_wait_parity;

// Sum of a tile's words in shared memory (every thread a share; the block's total in the caller).
__device__ __forceinline__ ull sum_tile(const uint4* tile, int vecs) {
  ull acc = 0;
  for (int i = threadIdx.x; i < vecs; i += blockDim.x) {
    const uint4 v = tile[i];
    acc += static_cast<ull>(v.x) + v.y + v.z + v.w;
  }
  return acc;
}

// The block's total into sums[blockIdx.x].
__device__ __forceinline__ void store_block_sum(ull acc, ull* sums) {
  __shared__ ull warp_sums[32];
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  __syncthreads();
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    ull s = 0;
    for (unsigned w = 0; w < (blockDim.x + 31) / 32; ++w) s += warp_sums[w];
    sums[blockIdx.x] = s;
  }
}

__device__ __forceinline__ size_t my_tile_count(size_t ntiles) {
  const size_t first = blockIdx.x, step = gridDim.x;
  return first < ntiles ? (ntiles - first + step - 1) / step : 0;
}

__global__ void init_words(uint32_t* w, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    w[i] = ac::word_value(i);
}

// Synchronous: U 16-byte ld.global.cg per thread into registers, then st.shared, __syncthreads,
// sum. One tile buffer: the copy and the sum of a block alternate (other blocks overlap them).
template <int U>
__global__ void sync_copy_kernel(const uint4* __restrict__ src, size_t ntiles, int tile_vecs, ull* sums) {
  extern __shared__ __align__(1024) unsigned char smem[];
  uint4* buf = reinterpret_cast<uint4*>(smem);
  ull acc = 0;
  for (size_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
    const uint4* g = src + t * tile_vecs;
    uint4 r[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int i = threadIdx.x + u * blockDim.x;
      if (i < tile_vecs) r[u] = __ldcg(g + i);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int i = threadIdx.x + u * blockDim.x;
      if (i < tile_vecs) buf[i] = r[u];
    }
    __syncthreads();
    acc += sum_tile(buf, tile_vecs);
    __syncthreads();
  }
  store_block_sum(acc, sums);
}

// cp.async.cg 16 B (LDGSTS), S stages: tile k + S - 1 is issued before tile k is waited for.
template <int S>
__global__ void cp_async_copy_kernel(const uint4* __restrict__ src, size_t ntiles, int tile_vecs, ull* sums) {
  extern __shared__ __align__(1024) unsigned char smem[];
  uint4* buf = reinterpret_cast<uint4*>(smem);
  const size_t mine = my_tile_count(ntiles);
  ull acc = 0;
  auto issue = [&](size_t k) {
    if (k < mine) {
      const uint4* g = src + (blockIdx.x + k * gridDim.x) * tile_vecs;
      uint4* s = buf + (k % S) * tile_vecs;
      for (int i = threadIdx.x; i < tile_vecs; i += blockDim.x) cp_async16(s + i, g + i);
    }
    cp_async_commit();  // an empty group past the end keeps wait_group's count right
  };
  for (int k = 0; k < S - 1; ++k) issue(k);
  for (size_t k = 0; k < mine; ++k) {
    issue(k + S - 1);
    cp_async_wait<S - 1>();  // this thread's copies of tile k have landed
    __syncthreads();         // and everyone else's
    acc += sum_tile(buf + (k % S) * tile_vecs, tile_vecs);
    __syncthreads();         // tile k's buffer may be refilled
  }
  store_block_sum(acc, sums);
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define CEILING_ASYNC_SM90 1
#endif

#ifdef CEILING_ASYNC_SM90
__device__ __forceinline__ void mbar_expect_tx(uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void bulk_copy(void* dst, const void* src, unsigned bytes, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(smem_addr(dst)),
      "l"(src), "r"(bytes), "r"(smem_addr(bar))
      : "memory");
}
__device__ __forceinline__ void tensor_copy_2d(void* dst, const CUtensorMap* map, int c0, int c1, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_addr(bar))
      : "memory");
}
#endif

// cp.async.bulk 1D (TMA, sm_90): thread 0 keeps S tiles in flight, one mbarrier per stage; every
// thread waits for the stage's phase, sums, and after a __syncthreads thread 0 refills the buffer.
template <int S>
__global__ void bulk_copy_kernel(const unsigned char* __restrict__ src, size_t ntiles, int tile_bytes, ull* sums) {
#ifdef CEILING_ASYNC_SM90
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ __align__(8) uint64_t full[S];
  const size_t mine = my_tile_count(ntiles);
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) mbar_init(&full[s], 1);
    mbar_init_fence();
  }
  __syncthreads();
  auto issue = [&](size_t k) {  // thread 0 only
    if (k >= mine) return;
    const int s = static_cast<int>(k % S);
    mbar_expect_tx(&full[s], static_cast<unsigned>(tile_bytes));
    bulk_copy(smem + static_cast<size_t>(s) * tile_bytes, src + (blockIdx.x + k * gridDim.x) * static_cast<size_t>(tile_bytes),
              static_cast<unsigned>(tile_bytes), &full[s]);
  };
  if (threadIdx.x == 0)
    for (int k = 0; k < S; ++k) issue(k);
  ull acc = 0;
  for (size_t k = 0; k < mine; ++k) {
    const int s = static_cast<int>(k % S);
    mbar_wait_parity(&full[s], static_cast<unsigned>((k / S) & 1));
    acc += sum_tile(reinterpret_cast<const uint4*>(smem + static_cast<size_t>(s) * tile_bytes), tile_bytes / 16);
    __syncthreads();
    if (threadIdx.x == 0) issue(k + S);
  }
  store_block_sum(acc, sums);
#else
  __trap();  // sm_90 only; the host skips this method below cc 9.0
#endif
}

// cp.async.bulk.tensor.2d (TMA, sm_90): as bulk_copy_kernel, one box per tile; tile t is box
// (t % per_row) of band t / per_row.
template <int S>
__global__ void tensor_copy_kernel(const __grid_constant__ CUtensorMap map, size_t ntiles, int per_row, int box_cols,
                                   int box_rows, int tile_bytes, ull* sums) {
#ifdef CEILING_ASYNC_SM90
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ __align__(8) uint64_t full[S];
  const size_t mine = my_tile_count(ntiles);
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) mbar_init(&full[s], 1);
    mbar_init_fence();
  }
  __syncthreads();
  auto issue = [&](size_t k) {
    if (k >= mine) return;
    const int s = static_cast<int>(k % S);
    const size_t t = blockIdx.x + k * gridDim.x;
    const int col = static_cast<int>(t % per_row), band = static_cast<int>(t / per_row);
    mbar_expect_tx(&full[s], static_cast<unsigned>(tile_bytes));
    tensor_copy_2d(smem + static_cast<size_t>(s) * tile_bytes, &map, col * box_cols, band * box_rows, &full[s]);
  };
  if (threadIdx.x == 0)
    for (int k = 0; k < S; ++k) issue(k);
  ull acc = 0;
  for (size_t k = 0; k < mine; ++k) {
    const int s = static_cast<int>(k % S);
    mbar_wait_parity(&full[s], static_cast<unsigned>((k / S) & 1));
    acc += sum_tile(reinterpret_cast<const uint4*>(smem + static_cast<size_t>(s) * tile_bytes), tile_bytes / 16);
    __syncthreads();
    if (threadIdx.x == 0) issue(k + S);
  }
  store_block_sum(acc, sums);
#else
  __trap();
#endif
}

// ---- Tables XIII-XIV: the CUDA sample's MatrixMulNaive (SyncShare) and a two-stage cp.async pipeline (AsyncPipe) ----

template <int BS>
__global__ void matmul_sync_share_kernel(float* __restrict__ C, const float* __restrict__ A, const float* __restrict__ B,
                                         int wA, int wB) {
  __shared__ float As[BS][BS];
  __shared__ float Bs[BS][BS];
  const int bx = blockIdx.x, by = blockIdx.y, tx = threadIdx.x, ty = threadIdx.y;
  const size_t a_begin = static_cast<size_t>(wA) * BS * by, a_end = a_begin + wA - 1;
  const size_t b_begin = static_cast<size_t>(BS) * bx, b_step = static_cast<size_t>(BS) * wB;
  float c = 0;
  for (size_t a = a_begin, b = b_begin; a <= a_end; a += BS, b += b_step) {
    As[ty][tx] = A[a + static_cast<size_t>(wA) * ty + tx];
    Bs[ty][tx] = B[b + static_cast<size_t>(wB) * ty + tx];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BS; ++k) c += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  C[static_cast<size_t>(wB) * BS * by + BS * bx + static_cast<size_t>(wB) * ty + tx] = c;
}

template <int BS>
__global__ void matmul_async_pipe_kernel(float* __restrict__ C, const float* __restrict__ A, const float* __restrict__ B,
                                         int wA, int wB) {
  __shared__ __align__(16) float As[2][BS][BS];
  __shared__ __align__(16) float Bs[2][BS][BS];
  const int bx = blockIdx.x, by = blockIdx.y, tx = threadIdx.x, ty = threadIdx.y;
  const size_t a_begin = static_cast<size_t>(wA) * BS * by;
  const size_t b_begin = static_cast<size_t>(BS) * bx, b_step = static_cast<size_t>(BS) * wB;
  const int tiles = wA / BS;
  auto issue = [&](int i) {
    if (i < tiles) {
      const int s = i & 1;
      cp_async4(&As[s][ty][tx], A + a_begin + static_cast<size_t>(i) * BS + static_cast<size_t>(wA) * ty + tx);
      cp_async4(&Bs[s][ty][tx], B + b_begin + static_cast<size_t>(i) * b_step + static_cast<size_t>(wB) * ty + tx);
    }
    cp_async_commit();
  };
  float c = 0;
  issue(0);
  for (int i = 0; i < tiles; ++i) {
    issue(i + 1);        // the next pair of tiles flies while this one is multiplied
    cp_async_wait<1>();  // this thread's copies of pair i have landed
    __syncthreads();
    const int s = i & 1;
#pragma unroll
    for (int k = 0; k < BS; ++k) c += As[s][ty][k] * Bs[s][k][tx];
    __syncthreads();
  }
  C[static_cast<size_t>(wB) * BS * by + BS * bx + static_cast<size_t>(wB) * ty + tx] = c;
}

__global__ void init_matmul(float* A, size_t na, float* B, size_t nb) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < na + nb;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    if (i < na) A[i] = ac::matmul_a(i);
    else B[i - na] = ac::matmul_b(i - na);
  }
}

// ---- host ----

std::size_t pow2_at_least(double v) {
  std::size_t p = 1;
  while (static_cast<double>(p) < v) p <<= 1;
  return p;
}

double round_significant(double v, int digits) {
  char b[40];
  std::snprintf(b, sizeof b, "%.*g", digits, v);
  return std::strtod(b, nullptr);
}

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                 const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                 CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// cuTensorMapEncodeTiled from the driver, found at run time; nullptr (and why) when it is not there.
EncodeTiled encode_tiled(std::string& why) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  const cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q);
  if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || !fn) {
    why = std::string("cuTensorMapEncodeTiled not found in the driver (") + cudaGetErrorName(e) + ")";
    return nullptr;
  }
  return reinterpret_cast<EncodeTiled>(fn);
}

struct Launch {
  int grid = 0;
  int blocks_per_sm = 0;
  std::function<void(cudaStream_t)> run;
  std::string error;  // why this configuration cannot run (the tensor map was refused); grid 0 then
};

template <class Kernel>
int fit(Kernel k, int threads, std::size_t smem) {
  CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  int n = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k, threads, smem));
  return n;
}

struct CopySession {
  explicit CopySession(const ProbeContext& c) : pc(c) {}
  const ProbeContext& pc;
  std::size_t bytes = 0;
  gpu::DeviceBuffer<uint32_t> buf;
  gpu::DeviceBuffer<ull> sums;
  std::vector<uint64_t> prefix;
  EncodeTiled encode = nullptr;
  // The CPU's block sums by (tile layout, grid): configurations that differ only in threads or
  // stages often share them, and a 2D layout's take tens of milliseconds.
  // Per-tile sums by tile shape (the same for every grid; folded per grid in check_copy).
  std::map<std::tuple<bool, int, int, int, int>, std::vector<uint64_t>> expected;
};

template <int S, class F>
void with_stages(int stages, F&& f) {
  if constexpr (S <= 4) {
    if (stages == S) f(std::integral_constant<int, S>{});
    else with_stages<S + 1>(stages, std::forward<F>(f));
  } else {
    throw std::invalid_argument("async-copy: stages must be 1-4");
  }
}

// The launch of one configuration; grid 0 when it does not fit.
Launch make_launch(CopySession& s, const ac::CopyConfig& c) {
  Launch l;
  const std::size_t ntiles = ac::tile_count(c, s.bytes);
  const std::size_t smem = c.shared_bytes();
  const int tile_vecs = c.tile_bytes / 16;
  ull* sums = s.sums.data();
  const auto finish = [&](int per_sm) {
    l.blocks_per_sm = per_sm;
    l.grid = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(per_sm) * s.pc.sm_count, ntiles));
  };
  switch (c.method) {
    case Method::sync: {
      const int u = (tile_vecs + c.threads - 1) / c.threads;
      const auto go = [&](auto kernel) {
        finish(fit(kernel, c.threads, smem));
        const int grid = l.grid;
        const uint4* src = reinterpret_cast<const uint4*>(s.buf.data());
        l.run = [=](cudaStream_t st) { kernel<<<grid, c.threads, smem, st>>>(src, ntiles, tile_vecs, sums); };
      };
      if (u <= 1) go(sync_copy_kernel<1>);
      else if (u <= 2) go(sync_copy_kernel<2>);
      else if (u <= 4) go(sync_copy_kernel<4>);
      else if (u <= 8) go(sync_copy_kernel<8>);
      else if (u <= 16) go(sync_copy_kernel<16>);
      else throw std::invalid_argument("async-copy: sync tile too large for its threads: " + c.str());
      break;
    }
    case Method::cp_async:
      with_stages<1>(c.stages, [&](auto S) {
        auto kernel = cp_async_copy_kernel<decltype(S)::value>;
        finish(fit(kernel, c.threads, smem));
        const int grid = l.grid;
        const uint4* src = reinterpret_cast<const uint4*>(s.buf.data());
        l.run = [=](cudaStream_t st) { kernel<<<grid, c.threads, smem, st>>>(src, ntiles, tile_vecs, sums); };
      });
      break;
    case Method::bulk:
      with_stages<1>(c.stages, [&](auto S) {
        auto kernel = bulk_copy_kernel<decltype(S)::value>;
        finish(fit(kernel, c.threads, smem));
        const int grid = l.grid, tile = c.tile_bytes;
        const unsigned char* src = reinterpret_cast<const unsigned char*>(s.buf.data());
        l.run = [=](cudaStream_t st) { kernel<<<grid, c.threads, smem, st>>>(src, ntiles, tile, sums); };
      });
      break;
    case Method::tensor_2d: {
      CUtensorMap map{};
      const cuuint64_t row_elems = ac::kTensorRowBytes / c.elem_bytes;
      const cuuint64_t dims[2] = {row_elems, s.bytes / ac::kTensorRowBytes};
      const cuuint64_t strides[1] = {ac::kTensorRowBytes};
      const cuuint32_t box[2] = {static_cast<cuuint32_t>(c.box_cols), static_cast<cuuint32_t>(c.box_rows)};
      const cuuint32_t estrides[2] = {1, 1};
      const CUresult r = s.encode(&map, c.elem_bytes == 4 ? CU_TENSOR_MAP_DATA_TYPE_UINT32 : CU_TENSOR_MAP_DATA_TYPE_UINT16, 2,
                                  s.buf.data(), dims, strides, box, estrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                  CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
      if (r != CUDA_SUCCESS) {  // this box only: the other configurations still run
        l.error = "cuTensorMapEncodeTiled refused the box (CUresult " + std::to_string(static_cast<int>(r)) + ")";
        return l;
      }
      const int per_row = static_cast<int>(ac::kTensorRowBytes / (static_cast<std::size_t>(c.box_cols) * c.elem_bytes));
      with_stages<1>(c.stages, [&](auto S) {
        auto kernel = tensor_copy_kernel<decltype(S)::value>;
        finish(fit(kernel, c.threads, smem));
        const int grid = l.grid, tile = c.tile_bytes, bc = c.box_cols, br = c.box_rows;
        l.run = [=](cudaStream_t st) { kernel<<<grid, c.threads, smem, st>>>(map, ntiles, per_row, bc, br, tile, sums); };
      });
      break;
    }
  }
  return l;
}

// "" when every block's sum equals the CPU's, else the first difference.
std::string check_copy(CopySession& s, const ac::CopyConfig& c, const Launch& l) {
  CUDA_CHECK(cudaMemset(s.sums.data(), 0xff, static_cast<std::size_t>(l.grid) * sizeof(ull)));
  l.run(nullptr);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<ull> got(static_cast<std::size_t>(l.grid));
  CUDA_CHECK(cudaMemcpy(got.data(), s.sums.data(), got.size() * sizeof(ull), cudaMemcpyDeviceToHost));
  const bool two_d = c.method == Method::tensor_2d;
  const auto key = std::make_tuple(two_d, c.tile_bytes, c.box_cols, c.box_rows, c.elem_bytes);
  auto it = s.expected.find(key);
  if (it == s.expected.end()) it = s.expected.emplace(key, ac::expected_tile_sums(c, s.bytes, s.prefix)).first;
  const std::vector<uint64_t> want = ac::fold_tile_sums(it->second, l.grid);
  for (std::size_t b = 0; b < got.size(); ++b)
    if (got[b] != want[b])
      return "block " + std::to_string(b) + " of " + std::to_string(got.size()) + " summed " + std::to_string(got[b]) +
             ", the CPU reference " + std::to_string(want[b]);
  return {};
}

struct MethodResult {
  AsyncCopyMethod method;
  nlohmann::json rows = nlohmann::json::array();
  std::string skipped;
};

MethodResult run_method(CopySession& s, Method m, const gpu::TimingOptions& search, const gpu::TimingOptions& final_opt,
                        double clock_hz) {
  MethodResult r;
  r.method.method = std::string(ac::name(m));
  r.method.sass = std::string(ac::expected_sass(m));
  const int cc = 10 * s.pc.cc_major + s.pc.cc_minor;
  if (cc < ac::min_cc(m)) {
    r.skipped = "needs compute capability " + std::to_string(ac::min_cc(m) / 10) + "." + std::to_string(ac::min_cc(m) % 10);
    return r;
  }
  if (m == Method::tensor_2d && !s.encode) {
    std::string why;
    s.encode = encode_tiled(why);
    if (!s.encode) {
      r.skipped = why;
      return r;
    }
  }
  int per_block_optin = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&per_block_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, s.pc.device));
  // Static shared memory (block sums, mbarriers) and the 1 KiB the driver reserves stay free.
  const std::size_t max_dyn = static_cast<std::size_t>(per_block_optin) - 1024;
  double best = -1;
  ac::CopyConfig best_cfg;
  Launch best_launch;
  for (const auto& c : ac::default_configs(m, s.pc.quick, max_dyn)) {
    if (m == Method::sync && c.tile_bytes / 16 < c.threads) continue;  // a thread without a vector
    nlohmann::json row{{"config", c.str()}, {"threads", c.threads}, {"stages", c.stages}, {"tile_bytes", c.tile_bytes}};
    Launch l = make_launch(s, c);
    if (l.grid < 1) {
      row["check"] = l.error.empty() ? "does not fit on an SM" : l.error;
      r.rows.push_back(row);
      continue;
    }
    row["blocks_per_sm"] = l.blocks_per_sm;
    row["grid"] = l.grid;
    // One configuration the runtime refuses (a launch error) is recorded and passed over; the
    // others still run (a sticky error would fail the next CUDA call and end the probe).
    std::string error;
    gpu::Timing t;
    try {
      error = check_copy(s, c, l);
      if (error.empty()) t = gpu::time_kernel(l.run, search);
    } catch (const std::exception& e) {
      error = std::string("launch failed: ") + e.what();
      cudaGetLastError();
    }
    row["check"] = error.empty() ? "passed" : error;
    if (!error.empty()) {
      r.rows.push_back(row);
      continue;
    }
    const double bytes = ac::bytes_copied(c, s.bytes);
    const double bw = bytes / t.summary.median;
    row["bytes_per_s"] = bw;
    row["time_s"] = t.summary.median;
    row["sm_clock_hz"] = t.sm_clock_hz;
    r.rows.push_back(row);
    r.method.sweep.push_back({c.threads, c.stages, static_cast<double>(c.tile_bytes), round_significant(bw, 4)});
    if (bw > best) {
      best = bw;
      best_cfg = c;
      best_launch = l;
    }
  }
  if (best < 0) {
    r.skipped = "no configuration matched the CPU reference or fitted (details: async_copy rows[].check)";
    r.method.sweep.clear();
    return r;
  }
  // A fresh launch of the best configuration: fit() set the kernel's dynamic shared-memory limit to
  // the last configuration tried with that kernel, which may be smaller than the best one's (the H100
  // runs failed here with cudaErrorInvalidValue).
  const Launch again = make_launch(s, best_cfg);
  const gpu::Timing t = gpu::time_kernel(again.run, final_opt);
  const double bytes = ac::bytes_copied(best_cfg, s.bytes);
  const std::string note = std::string(ac::name(m)) + " global->shared of " + std::to_string(static_cast<long long>(s.bytes / MiB)) +
                           " MiB, " + best_cfg.str() + ", " + std::to_string(best_launch.blocks_per_sm) +
                           " blocks/SM (best of " + std::to_string(r.method.sweep.size()) + ")";
  r.method.bandwidth.measured = measured_rate(t, bytes, "async-copy", note);
  if (!(r.method.bandwidth.measured->sm_clock_hz > 0)) r.method.bandwidth.measured->sm_clock_hz = clock_hz;
  r.method.config = best_cfg.str();
  return r;
}

// One (variant, block) row of Tables XIII-XIV over the blocks-per-SM columns.
template <int BS>
AsyncMatmulRow run_matmul_row(const ProbeContext& pc, ac::MatmulVariant v, const gpu::TimingOptions& opt,
                              nlohmann::json& rows, std::string& error) {
  AsyncMatmulRow row;
  row.variant = std::string(ac::name(v));
  row.block = BS;
  CurveSource meas;
  std::vector<double> clocks;
  for (int per_sm : ac::kMatmulBlocksPerSm) {
    ac::MatmulShape shape{BS, pc.sm_count, per_sm, ac::kMatmulInner};
    const std::size_t na = static_cast<std::size_t>(shape.height_a()) * shape.inner;
    const std::size_t nb = static_cast<std::size_t>(shape.inner) * shape.width_b();
    const std::size_t nc = static_cast<std::size_t>(shape.height_a()) * shape.width_b();
    gpu::DeviceBuffer<float> A(na), B(nb), C(nc);
    init_matmul<<<4 * pc.sm_count, 256>>>(A.data(), na, B.data(), nb);
    CUDA_CHECK_LAUNCH();
    const dim3 grid(shape.sms, shape.blocks_per_sm), block(BS, BS);
    auto kernel = v == ac::MatmulVariant::sync_share ? matmul_sync_share_kernel<BS> : matmul_async_pipe_kernel<BS>;
    const auto launch = [&](cudaStream_t st) {
      kernel<<<grid, block, 0, st>>>(C.data(), A.data(), B.data(), shape.inner, shape.width_b());
    };
    CUDA_CHECK(cudaMemset(C.data(), 0xff, C.bytes()));  // NaN: every entry must be written
    launch(nullptr);
    CUDA_CHECK_LAUNCH();
    std::vector<float> h(nc);
    CUDA_CHECK(cudaMemcpy(h.data(), C.data(), C.bytes(), cudaMemcpyDeviceToHost));
    for (const auto& [r, c] : ac::matmul_check_points(shape)) {
      const double want = ac::matmul_reference(shape, r, c);
      const float got = h[static_cast<std::size_t>(r) * shape.width_b() + c];
      if (static_cast<double>(got) != want && error.empty())
        error = row.variant + " block " + std::to_string(BS) + ", " + std::to_string(per_sm) + " blocks/SM: C[" +
                std::to_string(r) + "][" + std::to_string(c) + "] = " + std::to_string(got) + ", the FP64 reference " +
                std::to_string(want);
    }
    if (!error.empty()) return row;
    const gpu::Timing t = gpu::time_kernel(launch, opt);
    const double rate = shape.flop() / t.summary.median;
    meas.values.push_back(round_significant(rate, 5));
    clocks.push_back(t.sm_clock_hz);
    row.blocks_per_sm.push_back(per_sm);
    rows.push_back({{"variant", row.variant}, {"block", BS}, {"blocks_per_sm", per_sm}, {"height_a", shape.height_a()},
                    {"width_a", shape.inner}, {"width_b", shape.width_b()}, {"flop_per_s", rate},
                    {"time_s", t.summary.median}, {"cv", t.summary.cv}, {"sm_clock_hz", t.sm_clock_hz}, {"flagged", t.flagged}});
  }
  meas.probe = "async-copy";
  meas.date = gpu::utc_now_iso8601();
  meas.sm_clock_hz = median(clocks);
  meas.repeats = opt.repeats;
  meas.note = "FP32, grid = " + std::to_string(pc.sm_count) + " SMs x blocks per SM, A " + std::to_string(BS) +
              "*blocks_per_sm x 2048, B 2048 x " + std::to_string(BS * pc.sm_count) + ", median of the repeats";
  row.measured = meas;
  return row;
}

ProbeOutput run_async_copy(const ProbeContext& pc) {
  CUDA_CHECK(cudaSetDevice(pc.device));
  ProbeOutput out;
  const double clock_hz = gpu::measure_sm_clock_hz(pc.device, 0.02);
  const double l2 = static_cast<double>(pc.l2_bytes > 0 ? pc.l2_bytes : 50 << 20);
  const auto report = [&](double f, const std::string& what) {
    if (pc.progress) pc.progress(f, what);
  };

  // 1. Bandwidth. The buffer as dram-bandwidth sizes its arrays, so the two compare.
  CopySession s{pc};
  s.bytes = pow2_at_least(std::max(8 * l2, (pc.quick ? 512 : 1024) * MiB));
  s.buf = gpu::DeviceBuffer<uint32_t>(s.bytes / 4);
  s.sums = gpu::DeviceBuffer<ull>(static_cast<std::size_t>(pc.sm_count) * 64);
  init_words<<<4 * pc.sm_count, 256>>>(s.buf.data(), s.bytes / 4);
  CUDA_CHECK_LAUNCH();
  s.prefix = ac::granule_prefix(s.bytes);
  CUDA_CHECK(cudaDeviceSynchronize());
  gpu::TimingOptions search;
  search.warmup = 1;
  search.repeats = pc.quick ? 3 : 5;
  search.max_retries = 0;
  search.clock_samples = 1;  // the clock of each row's last repeat (details only)
  gpu::TimingOptions final_opt;
  final_opt.warmup = 1;
  final_opt.repeats = pc.quick ? 5 : 15;
  AsyncCopy result;
  nlohmann::json methods = nlohmann::json::array();
  int k = 0;
  for (Method m : ac::kMethods) {
    report(0.6 * k++ / ac::kMethods.size(), "async copy " + std::string(ac::name(m)));
    MethodResult r = run_method(s, m, search, final_opt, clock_hz);
    nlohmann::json j{{"method", r.method.method}, {"expected_sass", r.method.sass}, {"rows", r.rows}};
    if (!r.skipped.empty()) j["skipped"] = r.skipped;
    if (r.method.bandwidth.measured) {
      j["bytes_per_s"] = r.method.bandwidth.measured->median;
      j["config"] = r.method.config;
      result.methods.push_back(r.method);
    }
    methods.push_back(j);
  }
  s.buf = gpu::DeviceBuffer<uint32_t>();
  s.prefix.clear();
  s.expected.clear();

  // 2. Tables XIII-XIV.
  gpu::TimingOptions mopt;
  mopt.warmup = 1;
  mopt.repeats = pc.quick ? 3 : 7;
  mopt.max_retries = pc.quick ? 0 : 1;
  nlohmann::json mrows = nlohmann::json::array();
  std::string error;
  k = 0;
  for (auto v : {ac::MatmulVariant::sync_share, ac::MatmulVariant::async_pipe}) {
    for (int bs : ac::kMatmulBlocks) {
      report(0.6 + 0.4 * k++ / 6, "tiled matmul " + std::string(ac::name(v)) + " " + std::to_string(bs) + "x" + std::to_string(bs));
      AsyncMatmulRow row = bs == 8    ? run_matmul_row<8>(pc, v, mopt, mrows, error)
                           : bs == 16 ? run_matmul_row<16>(pc, v, mopt, mrows, error)
                                      : run_matmul_row<32>(pc, v, mopt, mrows, error);
      if (!error.empty()) break;
      result.matmul.push_back(std::move(row));
    }
    if (!error.empty()) break;
  }
  if (!error.empty()) result.matmul.clear();  // a wrong product measured something else

  out.details["buffer_bytes"] = s.bytes;
  out.details["methods"] = methods;
  out.details["matmul"] = mrows;
  out.details["matmul_check"] = error.empty() ? "passed" : error;
  out.details["sm_clock_hz"] = clock_hz;
  if (result.present()) out.async_copy = result;
  else out.skipped = "no copy method and no matmul matched its CPU reference (details: methods[].rows[].check, matmul_check)";
  report(1.0, "done");
  return out;
}

const Registrar reg{ProbeInfo{
    "async-copy", "memory",
    "Global->shared bandwidth of ld+st.shared, cp.async (1-4 stages), cp.async.bulk and cp.async.bulk.tensor.2d "
    "(TMA, cc 9.0) over a DRAM-sized buffer, and Luo et al.'s SyncShare/AsyncPipe tiled matmul (Tables XIII-XIV); "
    "checked against CPU references",
    {{"method", {"sync", "cp_async", "bulk", "tensor_2d"}},
     {"threads", {"128", "256", "512"}},
     {"stages", {"1", "2", "3", "4"}},
     {"tile", {"4 KiB", "8 KiB", "16 KiB", "32 KiB", "box 64x64/128x64 of 4 or 2 bytes"}},
     {"matmul_block", {"8", "16", "32"}},
     {"blocks_per_sm", {"1", "2", "4", "8", "16", "32"}}},
    {"async_copy"},
    80, true, run_async_copy}};

}  // namespace
}  // namespace ceiling::probes
