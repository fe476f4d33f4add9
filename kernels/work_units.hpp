// How evenly a persistent kernel's equal work units spread over the GPU (issue 12), in plain C++ so
// the CPU tests check it. A grid sized to the work (one unit per warp) puts whole blocks on SMs and
// whole warps on each SM's four schedulers; the kernel ends with the busiest scheduler, so at U
// units the makespan is the most units any scheduler holds, against the mean U / (4 SMs).
#pragma once
#include <cstdint>

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

}  // namespace ceiling::kernels
