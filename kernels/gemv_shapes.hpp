// The GEMV variants' launch shapes (kernels/gemv.cu): one list for the tuners, for the check of a
// pinned `launch_config`, and for the GPU test that verifies every shape a tuner may pick.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

namespace ceiling::kernels::gemv_shapes {

// CUDA cores: rows per block (2, 4, 8) | kCcStreaming (ld.global.cs loads of A) | kCcPrefetch (the
// next chunk of the row loaded before this chunk's FMAs).
constexpr int kCcStreaming = 16, kCcPrefetch = 32;
constexpr int kCcRows[] = {2, 4, 8};
// Tensor cores: double2 loads per lane per step (4, 8) | warps per 8-row block (4, 8, 16) << 4 |
// kTcStreaming. (Until 2026-11-26 the flag was 256 = 16 << 4: the 16-warp shapes were launched as
// the default 4-load, 8-warp kernel with streaming loads; the pinned-shape check found it.)
constexpr int kTcStreaming = 512;  // above the warps field (16 << 4 = 256)
constexpr int kTcShapes[] = {4 | 8 << 4, 8 | 8 << 4, 4 | 16 << 4, 8 | 16 << 4, 8 | 4 << 4};
// Tensor cores, a warp per row (gemv_tensor_core_rows): rows per block (2, 4, 8) | kTcRowKernel |
// kTcRowPrefetch (the next chunk loaded before this chunk's DMMAs) | kTcStreaming; in the L2 also
// 2 or 4 warps per row (kTcRowSplit2, kTcRowSplit4: a warp's DMMA issue rate bounds small rows).
constexpr int kTcRowKernel = 1024, kTcRowPrefetch = 2048, kTcRowSplit2 = 4096, kTcRowSplit4 = 8192;
// Split rows take at most 16 warps per block: 8 rows x 4 warps (1024 threads) leave 64 registers a
// thread, and ptxas spilled 84-616 bytes there (2026-11-27).
constexpr int kMaxSplitWarps = 16;
// Warps per row of a row-kernel configuration (1, 2 or 4).
constexpr int tc_row_warps(int config) { return config & kTcRowSplit4 ? 4 : config & kTcRowSplit2 ? 2 : 1; }
constexpr int kTcDefault = 4 | 8 << 4;  // untuned
constexpr int kCcDefault = 8;

// The configurations a tuner times: streaming loads only out of L2 (cold).
inline std::vector<int> cuda_core(bool cold) {
  std::vector<int> out;
  for (int prefetch : {0, kCcPrefetch})
    for (int streaming : {0, kCcStreaming}) {
      if (streaming && !cold) continue;
      for (int rows : kCcRows) out.push_back(rows | streaming | prefetch);
    }
  return out;
}
inline std::vector<int> tensor_core(bool cold) {
  std::vector<int> out(std::begin(kTcShapes), std::end(kTcShapes));
  if (cold)
    for (int s : kTcShapes) out.push_back(s | kTcStreaming);
  for (int prefetch : {0, kTcRowPrefetch})
    for (int streaming : {0, kTcStreaming}) {
      if (streaming && !cold) continue;
      for (int rows : kCcRows) out.push_back(rows | kTcRowKernel | prefetch | streaming);
    }
  if (!cold)
    for (int split : {kTcRowSplit2, kTcRowSplit4})
      for (int prefetch : {0, kTcRowPrefetch})
        for (int rows : kCcRows)
          if (rows * tc_row_warps(split) <= kMaxSplitWarps) out.push_back(rows | kTcRowKernel | prefetch | split);
  return out;
}
// Every configuration either tuner may time (the warm and the cold lists).
inline std::vector<int> all(bool tensor_core_unit) {
  std::vector<int> out = tensor_core_unit ? tensor_core(true) : cuda_core(true);
  for (int c : tensor_core_unit ? tensor_core(false) : cuda_core(false))
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  return out;
}
inline bool known(bool tensor_core_unit, int config) {
  const std::vector<int> every = all(tensor_core_unit);
  return std::find(every.begin(), every.end(), config) != every.end();
}

// One line for the results' description: what a configuration launches.
inline std::string text(bool tensor_core_unit, int config) {
  const auto flags = [&](bool prefetch, bool streaming) {
    return std::string(prefetch ? ", next chunk prefetched" : "") + (streaming ? ", streaming loads of A" : "");
  };
  if (!tensor_core_unit)
    return std::to_string(config & 15) + " rows per block, a warp per row" +
           flags(config & kCcPrefetch, config & kCcStreaming);
  if (config & kTcRowKernel) {
    const int split = tc_row_warps(config);
    return "m8n8k4 by rows: " + std::to_string(config & 15) + " rows per block, " +
           (split == 1 ? std::string("a warp per row") : std::to_string(split) + " warps per row") +
           flags(config & kTcRowPrefetch, config & kTcStreaming);
  }
  return "m8n8k4 by 8-row blocks: " + std::to_string((config >> 4) & 31) + " warps per block, " +
         std::to_string(config & 15) + " double2 loads per lane per step" + flags(false, config & kTcStreaming);
}

}  // namespace ceiling::kernels::gemv_shapes
