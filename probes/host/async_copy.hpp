// The "async-copy" probe's plain C++ (issue 14; Luo et al. §III-D2 and §IV-E, Tables XIII-XIV):
// the buffer's contents, the tiles each method copies, the CPU reference of every block's sum of
// the words it copied, the launch configurations swept, and the tiled matrix multiply's inputs and
// FP64 reference. Header only; the probe (probes/async_copy.cu) and the CPU tests share it, so
// the functions the kernels also call are marked __host__ __device__ under nvcc.
#pragma once
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#if defined(__CUDACC__)
#define CEILING_ASYNC_HD __host__ __device__
#else
#define CEILING_ASYNC_HD
#endif

namespace ceiling::probes::async_copy {

// Global -> shared copy methods: ld.global.v4 + st.shared (sync), cp.async.cg 16 B (LDGSTS,
// sm_80), cp.async.bulk 1D with an mbarrier (UBLKCP, sm_90), cp.async.bulk.tensor.2d with a
// CUtensorMap (UTMALDG, sm_90).
enum class Method { sync, cp_async, bulk, tensor_2d };
inline constexpr std::array<Method, 4> kMethods{Method::sync, Method::cp_async, Method::bulk, Method::tensor_2d};

// The descriptor's async_copy.methods[].method (model/descriptor.hpp kAsyncCopyMethods).
constexpr std::string_view name(Method m) {
  switch (m) {
    case Method::sync: return "sync";
    case Method::cp_async: return "cp_async";
    case Method::bulk: return "bulk";
    case Method::tensor_2d: return "tensor_2d";
  }
  return "?";
}

// 10 x major + minor.
constexpr int min_cc(Method m) { return m == Method::bulk || m == Method::tensor_2d ? 90 : 80; }

// What scripts/sass_check.sh should find in the method's kernel.
constexpr std::string_view expected_sass(Method m) {
  switch (m) {
    case Method::sync: return "LDG.E.128 + STS.128";
    case Method::cp_async: return "LDGSTS.E.BYPASS.128 + LDGDEPBAR/DEPBAR";
    case Method::bulk: return "UBLKCP + SYNCS";
    case Method::tensor_2d: return "UTMALDG.2D + SYNCS";
  }
  return "?";
}

// ---- the buffer: word i (4 bytes) holds word_value(i), a cheap integer hash ----
CEILING_ASYNC_HD inline uint32_t word_value(uint64_t i) {
  uint32_t x = static_cast<uint32_t>(i) * 0x9E3779B1u + static_cast<uint32_t>(i >> 32);
  x ^= x >> 15;
  x *= 0x85EBCA6Bu;
  x ^= x >> 13;
  return x;
}

// Granule: the unit of the CPU reference's prefix sums. Every tile and every row of a 2D box
// covers whole granules (1D tiles are >= 4 KiB, box rows 128-512 bytes).
inline constexpr std::size_t kGranuleBytes = 128;
inline constexpr std::size_t kGranuleWords = kGranuleBytes / 4;
// Row pitch of the 2D view of the buffer (tensor_2d): 8 KiB rows.
inline constexpr std::size_t kTensorRowBytes = 8192;

// prefix[g] = sum (mod 2^64) of the words of granules 0 .. g-1; bytes a multiple of kGranuleBytes.
// Computed on `threads` host threads (0: hardware concurrency).
inline std::vector<uint64_t> granule_prefix(std::size_t bytes, unsigned threads = 0) {
  if (bytes % kGranuleBytes) throw std::invalid_argument("granule_prefix: bytes must be a multiple of 128");
  const std::size_t n = bytes / kGranuleBytes;
  std::vector<uint64_t> p(n + 1, 0);
  if (!threads) threads = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, std::max<std::size_t>(1, n)));
  auto work = [&](std::size_t lo, std::size_t hi) {
    for (std::size_t g = lo; g < hi; ++g) {
      uint64_t s = 0;
      for (std::size_t w = 0; w < kGranuleWords; ++w) s += word_value(g * kGranuleWords + w);
      p[g + 1] = s;
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work, n * t / threads, n * (t + 1) / threads);
  work(0, n / threads);
  for (auto& th : pool) th.join();
  for (std::size_t g = 0; g < n; ++g) p[g + 1] += p[g];
  return p;
}

// One launch configuration of one method.
struct CopyConfig {
  Method method = Method::sync;
  int threads = 256;
  int stages = 1;        // buffers in flight per block (sync: 1)
  int tile_bytes = 16384;  // bytes per stage (tensor_2d: box_cols x box_rows x elem_bytes)
  int box_cols = 0, box_rows = 0, elem_bytes = 0;  // tensor_2d only

  std::string str() const {
    std::string s = std::to_string(threads) + " threads, " + std::to_string(stages) + " stage" + (stages > 1 ? "s" : "") +
                    " x " + std::to_string(tile_bytes / 1024) + " KiB";
    if (method == Method::tensor_2d)
      s += " (box " + std::to_string(box_cols) + "x" + std::to_string(box_rows) + " of " + std::to_string(elem_bytes) +
           "-byte elements)";
    return s;
  }
  std::size_t shared_bytes() const { return static_cast<std::size_t>(stages) * tile_bytes; }
  bool operator==(const CopyConfig&) const = default;
};

// The tiles a buffer of `bytes` holds for `c` (1D: bytes / tile; 2D: bands x boxes per row).
inline std::size_t tile_count(const CopyConfig& c, std::size_t bytes) {
  if (c.method != Method::tensor_2d) return bytes / static_cast<std::size_t>(c.tile_bytes);
  const std::size_t rows = bytes / kTensorRowBytes;
  const std::size_t box_row_bytes = static_cast<std::size_t>(c.box_cols) * c.elem_bytes;
  return (rows / c.box_rows) * (kTensorRowBytes / box_row_bytes);
}

// Sum of the words tile t holds (what a kernel's block adds up after copying it).
inline uint64_t tile_sum(const CopyConfig& c, std::size_t t, const std::vector<uint64_t>& prefix) {
  const auto range = [&](std::size_t off, std::size_t len) {
    return prefix[(off + len) / kGranuleBytes] - prefix[off / kGranuleBytes];
  };
  if (c.method != Method::tensor_2d) return range(t * static_cast<std::size_t>(c.tile_bytes), c.tile_bytes);
  const std::size_t box_row_bytes = static_cast<std::size_t>(c.box_cols) * c.elem_bytes;
  const std::size_t per_row = kTensorRowBytes / box_row_bytes;
  const std::size_t band = t / per_row, col = t % per_row;
  uint64_t s = 0;
  for (int r = 0; r < c.box_rows; ++r)
    s += range((band * c.box_rows + r) * kTensorRowBytes + col * box_row_bytes, box_row_bytes);
  return s;
}

// Block b copies tiles b, b + grid, b + 2 grid, ...: the sum each block must report.
// Each tile's sum (tile t is copied by block t % grid, so a block's sum folds these).
inline std::vector<uint64_t> expected_tile_sums(const CopyConfig& c, std::size_t bytes, const std::vector<uint64_t>& prefix) {
  if ((prefix.size() - 1) * kGranuleBytes < bytes) throw std::invalid_argument("expected_tile_sums: prefix too short");
  const std::size_t n = tile_count(c, bytes);
  std::vector<uint64_t> out(n, 0);
  if (c.method != Method::tensor_2d) {
    for (std::size_t t = 0; t < n; ++t) out[t] = tile_sum(c, t, prefix);
    return out;
  }
  // 2D: row by row in address order (the prefix array is read once, in order: a 1 GiB buffer's
  // 8 M box rows take milliseconds, not the seconds of tile_sum's strided reads per tile).
  const std::size_t box_row_bytes = static_cast<std::size_t>(c.box_cols) * c.elem_bytes;
  const std::size_t per_row = kTensorRowBytes / box_row_bytes, granules = box_row_bytes / kGranuleBytes;
  const std::size_t rows = n / per_row * static_cast<std::size_t>(c.box_rows);
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t first_tile = r / static_cast<std::size_t>(c.box_rows) * per_row;
    std::size_t gi = r * (kTensorRowBytes / kGranuleBytes);
    for (std::size_t col = 0; col < per_row; ++col, gi += granules) out[first_tile + col] += prefix[gi + granules] - prefix[gi];
  }
  return out;
}

// Block b's expected sum: the tiles t with t % grid == b.
inline std::vector<uint64_t> fold_tile_sums(const std::vector<uint64_t>& tiles, int grid) {
  if (grid < 1) throw std::invalid_argument("fold_tile_sums: grid must be >= 1");
  std::vector<uint64_t> out(static_cast<std::size_t>(grid), 0);
  for (std::size_t t = 0; t < tiles.size(); ++t) out[t % static_cast<std::size_t>(grid)] += tiles[t];
  return out;
}

inline std::vector<uint64_t> expected_block_sums(const CopyConfig& c, std::size_t bytes, int grid,
                                                 const std::vector<uint64_t>& prefix) {
  if (grid < 1) throw std::invalid_argument("expected_block_sums: grid must be >= 1");
  if ((prefix.size() - 1) * kGranuleBytes < bytes) throw std::invalid_argument("expected_block_sums: prefix too short");
  return fold_tile_sums(expected_tile_sums(c, bytes, prefix), grid);
}

// Bytes each launch copies (whole tiles only).
inline double bytes_copied(const CopyConfig& c, std::size_t bytes) {
  return static_cast<double>(tile_count(c, bytes)) * c.tile_bytes;
}

// The sweep: modest, as the issue asks (threads 128/256/512, 1-4 stages, 4-32 KiB tiles), within
// `max_shared` bytes of shared memory per block: 11 + 36 + 48 + 48 configurations on an H100 (the
// threads only matter to the bulk/tensor consumers). quick: 2 + 3 + 3 + 2.
inline std::vector<CopyConfig> default_configs(Method m, bool quick, std::size_t max_shared) {
  std::vector<CopyConfig> v;
  const auto add = [&](CopyConfig c) {
    c.method = m;
    if (c.shared_bytes() <= max_shared) v.push_back(c);
  };
  switch (m) {
    case Method::sync:
      for (int t : quick ? std::vector<int>{256} : std::vector<int>{128, 256, 512})
        for (int kib : quick ? std::vector<int>{8, 16} : std::vector<int>{4, 8, 16, 32}) add({m, t, 1, kib * 1024});
      break;
    case Method::cp_async:
      for (int t : quick ? std::vector<int>{256} : std::vector<int>{128, 256, 512})
        for (int s : quick ? std::vector<int>{1, 2, 4} : std::vector<int>{1, 2, 3, 4})
          for (int kib : quick ? std::vector<int>{8} : std::vector<int>{4, 8, 16}) add({m, t, s, kib * 1024});
      break;
    case Method::bulk:
      for (int t : quick ? std::vector<int>{256} : std::vector<int>{128, 256, 512})
        for (int s : quick ? std::vector<int>{1, 2, 4} : std::vector<int>{1, 2, 3, 4})
          for (int kib : quick ? std::vector<int>{16} : std::vector<int>{4, 8, 16, 32}) add({m, t, s, kib * 1024});
      break;
    case Method::tensor_2d: {
      struct Box { int cols, rows, elem; };
      const std::vector<Box> boxes = quick ? std::vector<Box>{{64, 64, 4}}
                                           : std::vector<Box>{{64, 64, 4}, {128, 64, 4}, {64, 64, 2}, {128, 64, 2}};
      for (int t : quick ? std::vector<int>{256} : std::vector<int>{128, 256, 512})
        for (int s : quick ? std::vector<int>{2, 4} : std::vector<int>{1, 2, 3, 4})
          for (const Box& b : boxes) add({m, t, s, b.cols * b.rows * b.elem, b.cols, b.rows, b.elem});
      break;
    }
  }
  return v;
}

// ---- the tiled matrix multiply of Tables XIII-XIV (the CUDA sample globalToShmemAsyncCopy) ----
// SyncShare: each thread loads one element of the A and B tiles into shared memory, __syncthreads,
// block x block multiply-adds; AsyncPipe: the same with a two-stage cp.async pipeline (the next
// tiles are copied while this pair is multiplied). One thread per element of C.
enum class MatmulVariant { sync_share, async_pipe };
constexpr std::string_view name(MatmulVariant v) { return v == MatmulVariant::sync_share ? "sync_share" : "async_pipe"; }
inline constexpr std::array<int, 3> kMatmulBlocks{8, 16, 32};
inline constexpr std::array<int, 6> kMatmulBlocksPerSm{1, 2, 4, 8, 16, 32};  // the tables' columns
inline constexpr int kMatmulInner = 2048;  // width of A = height of B, as in the paper

// Small integers: every product and every partial sum (|sum| <= 2048 x 6) is exact in FP32, so the
// GPU's result equals the FP64 reference whatever the order of the additions.
CEILING_ASYNC_HD inline float matmul_a(uint64_t i) { return static_cast<float>(static_cast<int>((i * 7 + 3) % 5) - 2); }
CEILING_ASYNC_HD inline float matmul_b(uint64_t i) { return static_cast<float>(static_cast<int>((i * 11 + 1) % 7) - 3); }

// The matrices for `blocks_per_sm` blocks of block x block threads per SM: the grid is
// sms x blocks_per_sm blocks, so B is inner x (block x sms) and A is (block x blocks_per_sm) x inner.
struct MatmulShape {
  int block = 8, sms = 1, blocks_per_sm = 1, inner = kMatmulInner;
  int height_a() const { return block * blocks_per_sm; }
  int width_b() const { return block * sms; }
  double flop() const { return 2.0 * height_a() * static_cast<double>(inner) * width_b(); }
};

// C[row][col] in FP64 from the inputs above (A row-major height_a x inner, B row-major inner x width_b).
inline double matmul_reference(const MatmulShape& s, int row, int col) {
  double acc = 0;
  for (int k = 0; k < s.inner; ++k)
    acc += static_cast<double>(matmul_a(static_cast<uint64_t>(row) * s.inner + k)) *
           static_cast<double>(matmul_b(static_cast<uint64_t>(k) * s.width_b() + col));
  return acc;
}

// The entries checked: one per block (its thread (b*7 % block, b*3 % block)) and the four corners.
inline std::vector<std::pair<int, int>> matmul_check_points(const MatmulShape& s) {
  std::vector<std::pair<int, int>> v;
  const int gx = s.sms, gy = s.blocks_per_sm;
  for (int by = 0; by < gy; ++by)
    for (int bx = 0; bx < gx; ++bx) {
      const int b = by * gx + bx;
      v.push_back({by * s.block + (b * 3) % s.block, bx * s.block + (b * 7) % s.block});
    }
  v.push_back({0, 0});
  v.push_back({0, s.width_b() - 1});
  v.push_back({s.height_a() - 1, 0});
  v.push_back({s.height_a() - 1, s.width_b() - 1});
  return v;
}

}  // namespace ceiling::probes::async_copy
