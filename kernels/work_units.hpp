// How evenly a persistent kernel's equal work units spread over the GPU (issue 12), in plain C++ so
// the CPU tests check it. A grid sized to the work (one unit per warp) puts whole blocks on SMs and
// whole warps on each SM's four schedulers; the kernel ends with the busiest scheduler, so at U
// units the makespan is the most units any scheduler holds, against the mean U / (4 SMs).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

namespace ceiling::kernels {

// Mean units per scheduler over the most any scheduler holds (1 = even): blocks of
// `warps_per_block` warps, one unit each, spread over `sms` SMs as evenly as whole blocks go.
inline double scheduler_balance(std::int64_t units, int warps_per_block, int sms) {
  if (units <= 0 || warps_per_block <= 0 || sms <= 0) return 1.0;
  const std::int64_t blocks = (units + warps_per_block - 1) / warps_per_block;
  const std::int64_t blocks_per_sm = (blocks + sms - 1) / sms;
  const std::int64_t warps_per_scheduler = (blocks_per_sm * warps_per_block + 3) / 4;
  return static_cast<double>(units) / (4.0 * sms) / static_cast<double>(warps_per_scheduler);
}

// The tensor-core intensity kernel's launch: 4 tiles of 16 rows per warp step in 8-warp blocks
// (more MMA chains in flight per warp), unless 2 tiles in 2-warp blocks balance the schedulers
// better by more than 5 points: in the L2 (H100, fp64, 102912 rows) 1608 units of 64 rows in
// 201 blocks leave 69 SMs two blocks and 63 one (balance 0.76), 3216 units of 32 rows in 1608
// blocks 0.87.
struct IntensityTcLaunch {
  int tiles = 4;
  int threads = 256;
};
inline IntensityTcLaunch intensity_tc_launch(std::int64_t rows, int sms) {
  const double four = scheduler_balance(rows / 64, 8, sms), two = scheduler_balance(rows / 32, 2, sms);
  return two > four + 0.05 ? IntensityTcLaunch{2, 64} : IntensityTcLaunch{4, 256};
}

// The same for a persistent grid of `blocks` blocks (each warp takes units w, w + warps, ... of
// the grid's `warps` warps, as a grid-stride loop does): blocks go to SMs in turn (block b is the
// (b / sms)-th block on SM b % sms) and an SM's warps to its schedulers in turn (warp slot k on
// scheduler k % 4, so 2-warp blocks fill all four); the makespan is the most units one scheduler
// holds. With one unit per warp in whole blocks it is scheduler_balance's figure.
inline double persistent_balance(std::int64_t units, int warps_per_block, std::int64_t blocks, int sms) {
  if (units <= 0 || warps_per_block <= 0 || blocks <= 0 || sms <= 0) return 1.0;
  const std::int64_t warps = blocks * warps_per_block, base = units / warps, extra = units % warps;
  std::vector<std::int64_t> held(static_cast<std::size_t>(sms) * 4, 0);
  for (std::int64_t w = 0; w < warps; ++w) {
    const std::int64_t block = w / warps_per_block, slot = block / sms * warps_per_block + w % warps_per_block;
    held[static_cast<std::size_t>(block % sms) * 4 + static_cast<std::size_t>(slot % 4)] += base + (w < extra ? 1 : 0);
  }
  const std::int64_t most = *std::max_element(held.begin(), held.end());
  return most > 0 ? static_cast<double>(units) / (4.0 * sms) / static_cast<double>(most) : 1.0;
}

// The CUDA-core immediate intensity kernel's group: `wide` row blocks per warp (ILP), or one where
// that balances the schedulers better by more than 5 points. In the L2 of an H100 (132 SMs) fp64
// at 3184 row blocks: 1592 groups of 2 in 398 blocks of 4 warps put a 4th block on 2 SMs (0.754),
// 3184 single row blocks 0.861; fp32 6368 row blocks in groups of 4: 0.754, single: 0.928. At 3152
// row blocks both give 0.995 and the groups stay. `grid_wide` / `grid_one`: the resident grids
// (blocks of `warps_per_block` warps) each launch would take.
inline int intensity_imm_group(std::int64_t row_blocks, int wide, std::int64_t grid_wide, std::int64_t grid_one,
                               int warps_per_block, int sms) {
  const double w = persistent_balance((row_blocks + wide - 1) / wide, warps_per_block, grid_wide, sms);
  const double one = persistent_balance(row_blocks, warps_per_block, grid_one, sms);
  return one > w + 0.05 ? 1 : wide;
}

}  // namespace ceiling::kernels
