// Probe "shared-access": data movement from shared memory to the registers the tensor cores read
// (issue 13; Sun et al. §7, Tables 9-10, extended). Figures go to memory.shared.extra.*:
// - ld.shared 32/64/128-bit completion latency under 1..32-way bank conflicts (one warp, a chain of
//   dependent loads, clock64), and bytes/clk/SM of independent loads (all SMs, 32 warps, ILP 4);
// - ldmatrix .x1/.x2/.x4 (and .trans) latency (dependent chain) and bytes/clk/SM;
// - stmatrix .x4 bytes/clk/SM on sm_90.
// Every kernel's result is checked first: the chains end where the CPU says, ldmatrix/stmatrix
// fragments hold the elements the PTX ISA layout names.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <cuda_fp16.h>
#include <mma.h>

#include "probe_util.hpp"
#include "registry.hpp"

namespace ceiling::probes {
namespace {

constexpr int kSteps = 8;  // distinct blocks a chain cycles through

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

template <int W>
struct Lds;
template <>
struct Lds<1> {
  __device__ __forceinline__ static uint32_t load(uint32_t a, uint32_t& side) {
    uint32_t v;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(a));
    side ^= 0;
    return v;
  }
};
template <>
struct Lds<2> {
  __device__ __forceinline__ static uint32_t load(uint32_t a, uint32_t& side) {
    uint32_t x, y;
    asm volatile("ld.shared.v2.u32 {%0,%1}, [%2];" : "=r"(x), "=r"(y) : "r"(a));
    side ^= y;
    return x;
  }
};
template <>
struct Lds<4> {
  __device__ __forceinline__ static uint32_t load(uint32_t a, uint32_t& side) {
    uint32_t x, y, z, w;
    asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(x), "=r"(y), "=r"(z), "=r"(w) : "r"(a));
    side ^= y ^ z ^ w;
    return x;
  }
};

// Word index of lane `lane`'s element at chain step `s` for W-word elements and an N-way bank
// conflict: 32/N lanes share a 32-word row (distinct banks), N rows per step (the same banks).
__host__ __device__ inline uint32_t conflict_word(int lane, int s, int n_way, int w) {
  const int per_row = 32 / n_way;
  return static_cast<uint32_t>(s * 32 * n_way + (lane / per_row) * 32 + (lane % per_row) * w);
}

// One warp: lane's pointer chase; cycles per load in cycles[0], the end index per lane in out.
template <int W>
__global__ void lds_chase_kernel(const uint32_t* init, int words, int n_way, int iters, long long* cycles,
                                 uint32_t* out) {
  extern __shared__ uint32_t sh[];
  for (int i = threadIdx.x; i < words; i += blockDim.x) sh[i] = init[i];
  __syncthreads();
  const int lane = threadIdx.x;
  const uint32_t base = smem_addr(sh);
  uint32_t p = conflict_word(lane, 0, n_way, W), side = 0;
  __syncwarp();
  const long long t0 = clock64();
#pragma unroll 4
  for (int i = 0; i < iters; ++i) p = Lds<W>::load(base + 4 * p, side);
  const long long t1 = clock64();
  out[lane] = p ^ (side & 0x80000000u & (p >> 31));  // side kept alive, p unchanged (indices < 2^31)
  if (lane == 0) cycles[0] = t1 - t0;
}

// Independent loads: every warp U chains-free loads per round at the conflict pattern, blocks of
// `threads`, per-block clocks.
template <int W, int U>
__global__ void lds_tput_kernel(int words, int n_way, int iters, long long* clocks, uint32_t* sink) {
  extern __shared__ uint32_t sh[];
  for (int i = threadIdx.x; i < words; i += blockDim.x) sh[i] = i;
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const uint32_t base = smem_addr(sh);
  // Word i holds i: each load returns its own index, which addresses the next load. The chain
  // keeps ptxas from merging loads of one address across the unrolled loop (an asm volatile
  // ld.shared is still a plain load to ptxas; the first version measured 3.7x the 128 B/clk
  // that 32 banks allow), and U chains per warp x 32 warps keep far more loads in flight than
  // the latency needs.
  uint32_t p[U];
#pragma unroll
  for (int u = 0; u < U; ++u) p[u] = conflict_word(lane, (warp + u) % kSteps, n_way, W);
  uint32_t side = 0;
  __syncthreads();
  const long long t0 = clock64();
  for (int i = 0; i < iters; ++i)
#pragma unroll
    for (int u = 0; u < U; ++u) p[u] = Lds<W>::load(base + 4 * p[u], side);
  __syncthreads();
  const long long t1 = clock64();
  if (threadIdx.x == 0) clocks[2 * blockIdx.x] = t0, clocks[2 * blockIdx.x + 1] = t1;
  uint32_t acc = side;
#pragma unroll
  for (int u = 0; u < U; ++u) acc ^= p[u];
  sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// ldmatrix: lane l gives the row address of row l%8 of matrix (l/8)%X of a 512-byte tile.
template <int X, bool Trans>
__device__ __forceinline__ uint32_t ldmatrix(uint32_t addr, uint32_t& side) {
  uint32_t r0 = 0, r1 = 0, r2 = 0, r3 = 0;
  if constexpr (X == 1 && !Trans) asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r0) : "r"(addr));
  if constexpr (X == 1 && Trans) asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r0) : "r"(addr));
  if constexpr (X == 2 && !Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(addr));
  if constexpr (X == 2 && Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(addr));
  if constexpr (X == 4 && !Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
  if constexpr (X == 4 && Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
  side ^= r1 ^ r2 ^ r3;
  return r0;
}

__host__ __device__ inline uint32_t ldm_row_offset(int lane, int x) { return (lane % 8) * 16 + ((lane / 8) % x) * 128; }

// Layout check: tile of 4 matrices 8x8 b16, element (m, r, c) = m*64 + r*8 + c; every lane's regs.
template <int X, bool Trans>
__global__ void ldmatrix_layout_kernel(uint32_t* out) {
  __shared__ __align__(16) uint16_t tile[256];
  for (int i = threadIdx.x; i < 256; i += 32) tile[i] = static_cast<uint16_t>(i);
  __syncwarp();
  const int lane = threadIdx.x;
  const uint32_t a = smem_addr(tile) + ldm_row_offset(lane, X);
  uint32_t r[4] = {0, 0, 0, 0};
  if constexpr (X == 4 && !Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
  if constexpr (X == 4 && Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
  for (int j = 0; j < 4; ++j) out[lane * 4 + j] = r[j];
}

// Dependent chain: every 32-bit word of tile s holds (t | t << 16), t the byte offset of tile s+1.
template <int X, bool Trans>
__global__ void ldmatrix_chase_kernel(const uint32_t* init, int words, int iters, long long* cycles, uint32_t* out) {
  extern __shared__ uint32_t sh[];
  for (int i = threadIdx.x; i < words; i += blockDim.x) sh[i] = init[i];
  __syncthreads();
  const int lane = threadIdx.x;
  const uint32_t base = smem_addr(sh), off = ldm_row_offset(lane, X);
  uint32_t t = 0, side = 0;
  __syncwarp();
  const long long t0 = clock64();
#pragma unroll 4
  for (int i = 0; i < iters; ++i) t = ldmatrix<X, Trans>(base + t + off, side) & 0xFFFFu;
  const long long t1 = clock64();
  out[lane] = t | (side & 0x80000000u & (t << 15));
  if (lane == 0) cycles[0] = t1 - t0;
}

// One m16n8k16 A fragment (a 16 x 16 f16 tile, 512 bytes) into a warp's registers, three ways
// (Sun et al. §7: wmma.load vs ldmatrix vs ld.shared). Dependent chain as in ldmatrix_chase_kernel:
// every 16-bit element of tile s holds the byte offset of tile s+1.
//   Mode 0: wmma::load_matrix_sync (row-major, ldm 16): whatever the compiler makes of it.
//   Mode 1: four ld.shared.u32 per lane at the lane's fragment words (rows g, g+8; columns 2t and
//           2t+8 of a row-major tile): the hand-written load, 2-way bank conflicts by layout.
// (ldmatrix.x4 of the same 512 bytes is ldmatrix_x4_latency.)
template <int Mode>
__global__ void fragment_chase_kernel(const uint32_t* init, int words, int iters, long long* cycles, uint32_t* out) {
  extern __shared__ __align__(128) uint32_t sh[];
  for (int i = threadIdx.x; i < words; i += blockDim.x) sh[i] = init[i];
  __syncthreads();
  const int lane = threadIdx.x;
  const uint32_t base = smem_addr(sh);
  const uint32_t g = lane / 4, q = lane % 4;
  uint32_t t = 0, side = 0;
  __syncwarp();
  const long long t0 = clock64();
#pragma unroll 4
  for (int i = 0; i < iters; ++i) {
    if constexpr (Mode == 0) {
      nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, __half, nvcuda::wmma::row_major> f;
      nvcuda::wmma::load_matrix_sync(f, reinterpret_cast<const __half*>(reinterpret_cast<const char*>(sh) + t), 16);
      side ^= __half_as_ushort(f.x[f.num_elements - 1]);
      t = __half_as_ushort(f.x[0]);
    } else {
      uint32_t w0, w1, w2, w3;
      const uint32_t a = base + t + g * 32 + q * 4;
      asm volatile("ld.shared.u32 %0, [%1];" : "=r"(w0) : "r"(a));
      asm volatile("ld.shared.u32 %0, [%1];" : "=r"(w1) : "r"(a + 8 * 32));
      asm volatile("ld.shared.u32 %0, [%1];" : "=r"(w2) : "r"(a + 16));
      asm volatile("ld.shared.u32 %0, [%1];" : "=r"(w3) : "r"(a + 8 * 32 + 16));
      side ^= w1 ^ w2 ^ w3;
      t = w0 & 0xFFFFu;
    }
  }
  const long long t1 = clock64();
  out[lane] = t | (side & 0x80000000u & (t << 15));
  if (lane == 0) cycles[0] = t1 - t0;
}

template <int X, int U>
__global__ void ldmatrix_tput_kernel(int iters, long long* clocks, uint32_t* sink) {
  extern __shared__ uint32_t sh[];
  const int words = kSteps * 128;
  // Every 16-bit element of tile s holds s's byte offset: each ldmatrix returns the offset of the
  // tile it read, which addresses the next one (a chain per (warp, u), as in lds_tput_kernel).
  for (int i = threadIdx.x; i < words; i += blockDim.x) {
    const uint32_t t = static_cast<uint32_t>(i / 128) * 512;
    sh[i] = t | (t << 16);
  }
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const uint32_t base = smem_addr(sh) + ldm_row_offset(lane, X);
  uint32_t t[U];
#pragma unroll
  for (int u = 0; u < U; ++u) t[u] = ((warp + u) % kSteps) * 512;
  uint32_t side = 0;
  __syncthreads();
  const long long t0 = clock64();
  for (int i = 0; i < iters; ++i)
#pragma unroll
    for (int u = 0; u < U; ++u) t[u] = ldmatrix<X, false>(base + t[u], side) & 0xFFFFu;
  __syncthreads();
  const long long t1 = clock64();
  if (threadIdx.x == 0) clocks[2 * blockIdx.x] = t0, clocks[2 * blockIdx.x + 1] = t1;
  uint32_t acc = side;
#pragma unroll
  for (int u = 0; u < U; ++u) acc ^= t[u];
  sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// stmatrix .x4 (sm_90): lane's four registers to the four matrices; layout check and throughput.
// Every warp stores to its own U tiles (blockDim/32 * U * 512 bytes of dynamic shared memory).
template <int U>
__global__ void stmatrix_kernel(int iters, long long* clocks, uint32_t* sink, uint32_t* layout_out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ uint32_t sh[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const uint32_t base = smem_addr(sh);
  uint32_t a[U];
#pragma unroll
  for (int u = 0; u < U; ++u) a[u] = base + (warp * U + u) * 512 + ldm_row_offset(lane, 4);  // own tiles: no races
  if (layout_out) {  // a separate launch: one store of known values into tile 0, read back
    if (blockIdx.x == 0 && warp == 0) {
      const uint32_t v0 = (lane * 4) | ((lane * 4 + 1) << 16), v1 = (lane * 4 + 2) | ((lane * 4 + 3) << 16);
      asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1,%2,%3,%4};" ::"r"(base + ldm_row_offset(lane, 4)),
                   "r"(v0), "r"(v1), "r"(v0 + 0x00800080u), "r"(v1 + 0x00800080u)
                   : "memory");
      __syncwarp();
      for (int i = lane; i < 128; i += 32) layout_out[i] = sh[i];
    }
    return;
  }
  uint32_t r0 = lane * 4, r1 = lane * 4 + 1, r2 = lane * 4 + 2, r3 = lane * 4 + 3;
  __syncthreads();
  const long long t0 = clock64();
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < U; ++u)
      asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1,%2,%3,%4};" ::"r"(a[u]), "r"(r0), "r"(r1), "r"(r2),
                   "r"(r3)
                   : "memory");
    r0 += 0x00010001u;  // new values each round
  }
  __syncthreads();
  const long long t1 = clock64();
  if (threadIdx.x == 0) clocks[2 * blockIdx.x] = t0, clocks[2 * blockIdx.x + 1] = t1;
  sink[blockIdx.x * blockDim.x + threadIdx.x] = sh[threadIdx.x];
#endif
}

// Dynamic shared memory that leaves room for one block per SM only (per-block clocks are then
// per-SM clocks), at least `need` bytes; sets the kernel's limit.
template <class Kernel>
size_t one_block_smem(Kernel kernel, size_t need) {
  int dev = 0, per_sm = 0, per_block = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  const size_t bytes = std::max(need, std::min(static_cast<size_t>(per_sm) / 2 + 1024, static_cast<size_t>(per_block)));
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  return bytes;
}

double median_cycles(const std::vector<long long>& clk, int blocks) {
  std::vector<double> c(blocks);
  for (int b = 0; b < blocks; ++b) c[b] = static_cast<double>(clk[2 * b + 1] - clk[2 * b]);
  std::nth_element(c.begin(), c.begin() + blocks / 2, c.end());
  return c[blocks / 2];
}

struct Ctx {
  const ProbeContext& pc;
  double clock_hz = 0;
  std::string date;
  ProbeOutput& out;
  nlohmann::json& rows;
  int repeats = 5;
};

void add(Ctx& c, const std::string& name, Dimension d, const std::vector<double>& samples, const std::string& note) {
  const auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());
  const bool noisy = d == Dimension::cycles ? (*hi - *lo > 1.0) : (*hi > 1.02 * *lo);
  c.out.fields.push_back({"memory.shared.extra." + name, d, measured_from_samples(samples, "shared-access", c.clock_hz, noisy, note)});
  c.rows.push_back({{"name", name}, {"median", c.out.fields.back().value.median}, {"min", *lo}, {"max", *hi}, {"note", note}});
}

template <int W>
std::vector<double> lds_latency(int n_way, int iters, int repeats, std::string& error) {
  const int words = kSteps * 32 * n_way;
  std::vector<uint32_t> init(words, 0);
  for (int s = 0; s < kSteps; ++s)
    for (int lane = 0; lane < 32; ++lane)
      init[conflict_word(lane, s, n_way, W)] = conflict_word(lane, (s + 1) % kSteps, n_way, W);
  gpu::DeviceBuffer<uint32_t> d_init(words), d_out(32);
  gpu::DeviceBuffer<long long> d_cyc(1);
  CUDA_CHECK(cudaMemcpy(d_init.data(), init.data(), words * 4, cudaMemcpyHostToDevice));
  std::vector<double> v;
  for (int r = 0; r <= repeats; ++r) {
    lds_chase_kernel<W><<<1, 32, words * 4>>>(d_init.data(), words, n_way, iters, d_cyc.data(), d_out.data());
    CUDA_CHECK_LAUNCH();
    long long cyc = 0;
    std::vector<uint32_t> out(32);
    CUDA_CHECK(cudaMemcpy(&cyc, d_cyc.data(), sizeof cyc, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(out.data(), d_out.data(), 32 * 4, cudaMemcpyDeviceToHost));
    for (int lane = 0; lane < 32 && error.empty(); ++lane)
      if (out[lane] != conflict_word(lane, iters % kSteps, n_way, W))
        error = "ld.shared chase ended at word " + std::to_string(out[lane]) + " for lane " + std::to_string(lane) +
                ", expected " + std::to_string(conflict_word(lane, iters % kSteps, n_way, W));
    if (r) v.push_back(static_cast<double>(cyc) / iters);  // the first run warms up
  }
  return v;
}

template <int W>
std::vector<double> lds_throughput(const ProbeContext& pc, int n_way, int repeats) {
  constexpr int U = 4;
  const int threads = 1024, blocks = pc.sm_count, iters = 256;
  const int words = kSteps * 32 * n_way;
  const size_t smem = one_block_smem(lds_tput_kernel<W, U>, static_cast<size_t>(words) * 4);
  gpu::DeviceBuffer<long long> clk(2 * blocks);
  gpu::DeviceBuffer<uint32_t> sink(static_cast<size_t>(blocks) * threads);
  std::vector<double> v;
  for (int r = 0; r <= repeats; ++r) {
    lds_tput_kernel<W, U><<<blocks, threads, smem>>>(words, n_way, iters, clk.data(), sink.data());
    CUDA_CHECK_LAUNCH();
    std::vector<long long> c(2 * blocks);
    CUDA_CHECK(cudaMemcpy(c.data(), clk.data(), c.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    const double bytes = static_cast<double>(threads) * U * iters * 4 * W;
    if (r) v.push_back(bytes / median_cycles(c, blocks));
  }
  return v;
}

template <int X, bool Trans>
std::vector<double> ldmatrix_latency(int iters, int repeats, std::string& error) {
  const int words = kSteps * 128;  // 512-byte tiles
  std::vector<uint32_t> init(words);
  for (int s = 0; s < kSteps; ++s) {
    const uint32_t next = ((s + 1) % kSteps) * 512;
    for (int i = 0; i < 128; ++i) init[s * 128 + i] = next | (next << 16);
  }
  gpu::DeviceBuffer<uint32_t> d_init(words), d_out(32);
  gpu::DeviceBuffer<long long> d_cyc(1);
  CUDA_CHECK(cudaMemcpy(d_init.data(), init.data(), words * 4, cudaMemcpyHostToDevice));
  std::vector<double> v;
  for (int r = 0; r <= repeats; ++r) {
    ldmatrix_chase_kernel<X, Trans><<<1, 32, words * 4>>>(d_init.data(), words, iters, d_cyc.data(), d_out.data());
    CUDA_CHECK_LAUNCH();
    long long cyc = 0;
    std::vector<uint32_t> out(32);
    CUDA_CHECK(cudaMemcpy(&cyc, d_cyc.data(), sizeof cyc, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(out.data(), d_out.data(), 32 * 4, cudaMemcpyDeviceToHost));
    const uint32_t want = static_cast<uint32_t>((iters % kSteps) * 512);
    for (int lane = 0; lane < 32 && error.empty(); ++lane)
      if (out[lane] != want)
        error = "ldmatrix chase ended at byte " + std::to_string(out[lane]) + " for lane " + std::to_string(lane) +
                ", expected " + std::to_string(want);
    if (r) v.push_back(static_cast<double>(cyc) / iters);
  }
  return v;
}

template <int Mode>
std::vector<double> fragment_latency(int iters, int repeats, std::string& error) {
  const int words = kSteps * 128;  // 512-byte tiles
  std::vector<uint32_t> init(words);
  for (int s = 0; s < kSteps; ++s) {
    const uint32_t next = ((s + 1) % kSteps) * 512;
    for (int i = 0; i < 128; ++i) init[s * 128 + i] = next | (next << 16);
  }
  gpu::DeviceBuffer<uint32_t> d_init(words), d_out(32);
  gpu::DeviceBuffer<long long> d_cyc(1);
  CUDA_CHECK(cudaMemcpy(d_init.data(), init.data(), words * 4, cudaMemcpyHostToDevice));
  std::vector<double> v;
  for (int r = 0; r <= repeats; ++r) {
    fragment_chase_kernel<Mode><<<1, 32, words * 4>>>(d_init.data(), words, iters, d_cyc.data(), d_out.data());
    CUDA_CHECK_LAUNCH();
    long long cyc = 0;
    std::vector<uint32_t> out(32);
    CUDA_CHECK(cudaMemcpy(&cyc, d_cyc.data(), sizeof cyc, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(out.data(), d_out.data(), 32 * 4, cudaMemcpyDeviceToHost));
    const uint32_t want = static_cast<uint32_t>((iters % kSteps) * 512);
    for (int lane = 0; lane < 32 && error.empty(); ++lane)
      if (out[lane] != want)
        error = std::string(Mode == 0 ? "wmma.load" : "ld.shared fragment") + " chase ended at byte " +
                std::to_string(out[lane]) + " for lane " + std::to_string(lane) + ", expected " + std::to_string(want);
    if (r) v.push_back(static_cast<double>(cyc) / iters);
  }
  return v;
}

template <int X>
std::vector<double> ldmatrix_throughput(const ProbeContext& pc, int repeats) {
  constexpr int U = 4;
  const int threads = 1024, blocks = pc.sm_count, iters = 256;
  const size_t smem = one_block_smem(ldmatrix_tput_kernel<X, U>, kSteps * 512);
  gpu::DeviceBuffer<long long> clk(2 * blocks);
  gpu::DeviceBuffer<uint32_t> sink(static_cast<size_t>(blocks) * threads);
  std::vector<double> v;
  for (int r = 0; r <= repeats; ++r) {
    ldmatrix_tput_kernel<X, U><<<blocks, threads, smem>>>(iters, clk.data(), sink.data());
    CUDA_CHECK_LAUNCH();
    std::vector<long long> c(2 * blocks);
    CUDA_CHECK(cudaMemcpy(c.data(), clk.data(), c.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    if (r) v.push_back(static_cast<double>(threads / 32) * U * iters * 128 * X / median_cycles(c, blocks));
  }
  return v;
}

// The PTX ISA layout: non-transposed, lane l's register j holds matrix j's (row l/4, cols 2(l%4),
// 2(l%4)+1); transposed, (rows 2(l%4), 2(l%4)+1 of column l/4), low half first.
template <bool Trans>
std::string check_ldmatrix_layout() {
  gpu::DeviceBuffer<uint32_t> d(128);
  ldmatrix_layout_kernel<4, Trans><<<1, 32>>>(d.data());
  CUDA_CHECK_LAUNCH();
  std::vector<uint32_t> h(128);
  CUDA_CHECK(cudaMemcpy(h.data(), d.data(), 128 * 4, cudaMemcpyDeviceToHost));
  for (int lane = 0; lane < 32; ++lane)
    for (int j = 0; j < 4; ++j) {
      const int g = lane / 4, t = lane % 4;
      uint32_t lo, hi;
      if (!Trans) lo = j * 64 + g * 8 + 2 * t, hi = lo + 1;
      else lo = j * 64 + (2 * t) * 8 + g, hi = j * 64 + (2 * t + 1) * 8 + g;
      const uint32_t want = lo | (hi << 16);
      if (h[lane * 4 + j] != want)
        return std::string("ldmatrix.x4") + (Trans ? ".trans" : "") + ": lane " + std::to_string(lane) + " reg " +
               std::to_string(j) + " holds " + std::to_string(h[lane * 4 + j]) + ", the PTX layout says " + std::to_string(want);
    }
  return {};
}

ProbeOutput run_shared_access(const ProbeContext& pc) {
  ProbeOutput out;
  nlohmann::json rows = nlohmann::json::array(), checks = nlohmann::json::array();
  Ctx c{pc, gpu::measure_sm_clock_hz(pc.device, 0.02), gpu::utc_now_iso8601(), out, rows, pc.quick ? 3 : 7};
  const int iters = pc.quick ? 2048 : 8192;
  std::string error;
  auto progress = [&](double f, const std::string& what) {
    if (pc.progress) pc.progress(f, what);
  };
  // Layout checks before any time counts.
  for (const std::string& e : {check_ldmatrix_layout<false>(), check_ldmatrix_layout<true>()})
    if (!e.empty()) error = e;
  checks.push_back({{"check", "ldmatrix.x4 layout (plain and .trans)"}, {"result", error.empty() ? "passed" : error}});
  if (!error.empty()) {
    out.skipped = "a kernel returned wrong data: " + error;
    out.details["checks"] = checks;
    return out;
  }
  progress(0.05, "ld.shared latency");
  const char* chase_note = "one warp, dependent loads, clock64 per load";
  for (int n : {1, 2, 4, 8, 16, 32}) {
    add(c, "ld_u32_latency_" + std::to_string(n) + "way", Dimension::cycles, lds_latency<1>(n, iters, c.repeats, error),
        std::string(chase_note) + ", " + std::to_string(n) + "-way bank conflict");
    if (n >= 2)
      add(c, "ld_u64_latency_" + std::to_string(n) + "way", Dimension::cycles, lds_latency<2>(n, iters, c.repeats, error),
          std::string(chase_note) + ", 64-bit, " + std::to_string(n) + "-way (2-way is conflict-free: 256 B per warp)");
    if (n >= 4)
      add(c, "ld_u128_latency_" + std::to_string(n) + "way", Dimension::cycles, lds_latency<4>(n, iters, c.repeats, error),
          std::string(chase_note) + ", 128-bit, " + std::to_string(n) + "-way (4-way is conflict-free: 512 B per warp)");
  }
  progress(0.35, "ld.shared throughput");
  const char* tput_note = "all SMs, 32 warps of one block per SM, 4 independent loads in flight per warp, per-SM clock64";
  for (int n : {1, 2, 4, 8, 32})
    add(c, "ld_u32_bytes_per_clk_" + std::to_string(n) + "way", Dimension::bytes_per_cycle, lds_throughput<1>(pc, n, c.repeats),
        std::string(tput_note) + ", " + std::to_string(n) + "-way");
  add(c, "ld_u64_bytes_per_clk", Dimension::bytes_per_cycle, lds_throughput<2>(pc, 2, c.repeats), std::string(tput_note) + ", 64-bit, consecutive");
  add(c, "ld_u128_bytes_per_clk", Dimension::bytes_per_cycle, lds_throughput<4>(pc, 4, c.repeats), std::string(tput_note) + ", 128-bit, consecutive");
  progress(0.6, "ldmatrix");
  const char* ldm_note = "one warp, dependent ldmatrix (the loaded value is the next tile), clock64 per instruction";
  add(c, "ldmatrix_x1_latency", Dimension::cycles, ldmatrix_latency<1, false>(iters, c.repeats, error), ldm_note);
  add(c, "ldmatrix_x2_latency", Dimension::cycles, ldmatrix_latency<2, false>(iters, c.repeats, error), ldm_note);
  add(c, "ldmatrix_x4_latency", Dimension::cycles, ldmatrix_latency<4, false>(iters, c.repeats, error), ldm_note);
  add(c, "ldmatrix_x4_trans_latency", Dimension::cycles, ldmatrix_latency<4, true>(iters, c.repeats, error), ldm_note);
  const char* frag_note = "one warp, one 16x16 f16 A fragment (512 B) per step, dependent chain, clock64 per fragment";
  add(c, "wmma_load_a_latency", Dimension::cycles, fragment_latency<0>(iters, c.repeats, error),
      std::string(frag_note) + ": wmma::load_matrix_sync, row-major");
  add(c, "ld_shared_fragment_latency", Dimension::cycles, fragment_latency<1>(iters, c.repeats, error),
      std::string(frag_note) + ": 4 x ld.shared.u32 per lane (ldmatrix_x4_latency is the same tile by ldmatrix)");
  add(c, "ldmatrix_x1_bytes_per_clk", Dimension::bytes_per_cycle, ldmatrix_throughput<1>(pc, c.repeats), tput_note);
  add(c, "ldmatrix_x2_bytes_per_clk", Dimension::bytes_per_cycle, ldmatrix_throughput<2>(pc, c.repeats), tput_note);
  add(c, "ldmatrix_x4_bytes_per_clk", Dimension::bytes_per_cycle, ldmatrix_throughput<4>(pc, c.repeats), tput_note);
  if (10 * pc.cc_major + pc.cc_minor >= 90) {
    progress(0.85, "stmatrix");
    constexpr int U = 4;
    const int threads = 1024, blocks = pc.sm_count, st_iters = 256;
    gpu::DeviceBuffer<long long> clk(2 * blocks);
    gpu::DeviceBuffer<uint32_t> sink(static_cast<size_t>(blocks) * threads), layout(128);
    const size_t smem = one_block_smem(stmatrix_kernel<U>, static_cast<size_t>(threads / 32) * U * 512);
    std::vector<double> v;
    std::string st_error;
    for (int r = 0; r <= c.repeats + 1; ++r) {
      // Launch 0 checks the layout, launch 1 warms up, the others count.
      stmatrix_kernel<U><<<r == 0 ? 1 : blocks, threads, smem>>>(st_iters, clk.data(), sink.data(), r == 0 ? layout.data() : nullptr);
      CUDA_CHECK_LAUNCH();
      std::vector<long long> cl(2 * blocks);
      CUDA_CHECK(cudaMemcpy(cl.data(), clk.data(), cl.size() * sizeof(long long), cudaMemcpyDeviceToHost));
      if (r >= 2) v.push_back(static_cast<double>(threads / 32) * U * st_iters * 512 / median_cycles(cl, blocks));
      if (r == 0) {
        // The inverse of ldmatrix's layout: matrix j's (row l/4, cols 2(l%4), +1) from lane l's register j.
        std::vector<uint32_t> h(128);
        CUDA_CHECK(cudaMemcpy(h.data(), layout.data(), 128 * 4, cudaMemcpyDeviceToHost));
        for (int lane = 0; lane < 32 && st_error.empty(); ++lane)
          for (int j = 0; j < 4 && st_error.empty(); ++j) {
            const uint32_t v0 = (lane * 4) | ((lane * 4 + 1) << 16), v1 = (lane * 4 + 2) | ((lane * 4 + 3) << 16);
            const uint32_t want = j == 0 ? v0 : j == 1 ? v1 : j == 2 ? v0 + 0x00800080u : v1 + 0x00800080u;
            const int word = j * 32 + (lane / 4) * 4 + lane % 4;  // matrix j, row lane/4, 32-bit column lane%4
            if (h[word] != want)
              st_error = "stmatrix.x4: matrix " + std::to_string(j) + " word " + std::to_string(word) + " holds " +
                         std::to_string(h[word]) + ", expected " + std::to_string(want);
          }
      }
    }
    checks.push_back({{"check", "stmatrix.x4 layout"}, {"result", st_error.empty() ? "passed" : st_error}});
    if (st_error.empty())
      add(c, "stmatrix_x4_bytes_per_clk", Dimension::bytes_per_cycle, v, tput_note);
  }
  if (!error.empty()) {
    // A chain that ends in the wrong place measured something else: no figure counts.
    out.fields.clear();
    out.skipped = "a chain returned wrong data: " + error;
  }
  checks.push_back({{"check", "chains end where the CPU says"}, {"result", error.empty() ? "passed" : error}});
  out.details["checks"] = checks;
  out.details["figures"] = rows;
  out.details["sm_clock_hz"] = c.clock_hz;
  return out;
}

const Registrar reg{ProbeInfo{
    "shared-access", "memory",
    "ld.shared 32/64/128-bit latency and bytes/clk/SM under 1..32-way bank conflicts; ldmatrix .x1/.x2/.x4(.trans) "
    "latency and bytes/clk/SM; stmatrix .x4 (sm_90); layouts checked",
    {{"width", {"32", "64", "128 bit"}}, {"conflict", {"1", "2", "4", "8", "16", "32-way"}}, {"ldmatrix", {"x1", "x2", "x4", "x4.trans"}}},
    {"memory.shared.extra"},
    80, true, run_shared_access}};

}  // namespace
}  // namespace ceiling::probes
