// How the DFMA GEMM (kernels/gemm_cuda_core.cu) shares its tiles of C among blocks: whole tiles one
// block each ("data-parallel") for every whole wave, then "stream-K" (Osama et al., PPoPP'23; the
// hybrid DP + SK of CUTLASS) for the remaining tiles: their k tiles, in tile order, dealt out evenly
// to one block per SM, so no SM idles through a last, partial wave. A stream-K block that holds a
// whole tile writes it to C; a tile shared by several blocks is written by the last of them to
// finish, which adds the partial sums of all, in block order (a fixed order: the result does not
// depend on which finished last). Plain C++ for the CPU tests; CEILING_HOST_DEVICE for the kernel.
//
// Why (H200, 2026-11-28, scratch benchmark, GEMM kernel alone): tiles / SMs was 1.94 at 2048^3,
// 7.76 at 4096^3, 31.03 at 8192^3, so the last wave ran 94%, 76% and 3% full (about 3% of the time
// each); at 1024^3 the 64 tiles split k in 2 over 128 blocks (4 SMs idle) and zeroed C and added
// with atomics first (memset 7 us, atomics 7 us of 112 us).
#pragma once
#include <algorithm>
#include <stdexcept>
#include <string>

#include "host_device.hpp"

namespace ceiling::kernels::gemm {

struct StreamKPlan {
  long long tiles = 0;      // tiles of C
  int k_tiles = 0;          // k tiles per tile of C
  long long dp_tiles = 0;   // the first tiles, one block each, every k tile
  long long sk_tiles = 0;   // the rest, shared out by k tile
  int sk_blocks = 0;        // blocks sharing them (0: none)
  long long sk_units = 0;   // sk_tiles * k_tiles
  int slots_per_block = 0;  // most shared tiles one stream-K block leaves a partial sum of (workspace stride)

  CEILING_HOST_DEVICE long long blocks() const { return dp_tiles + sk_blocks; }
  // Stream-K block s takes units [unit_begin(s), unit_begin(s + 1)) (unit u: k tile u % k_tiles of
  // stream-K tile u / k_tiles).
  CEILING_HOST_DEVICE long long unit_begin(int s) const { return s * sk_units / sk_blocks; }
  // The block whose range holds unit u: the largest s with unit_begin(s) <= u.
  CEILING_HOST_DEVICE int block_of(long long u) const {
    return static_cast<int>(((u + 1) * sk_blocks - 1) / sk_units);
  }
  CEILING_HOST_DEVICE int first_block(long long t) const { return block_of(t * k_tiles); }
  CEILING_HOST_DEVICE int last_block(long long t) const { return block_of((t + 1) * k_tiles - 1); }
  // Workspace slot of block s's partial sum of stream-K tile t.
  CEILING_HOST_DEVICE long long slot(int s, long long t) const {
    return static_cast<long long>(s) * slots_per_block + (t - unit_begin(s) / k_tiles);
  }
};

// sms: blocks resident at once (one per SM); min_units: fewest k tiles a stream-K block takes (its
// pipeline's fill is paid once per block).
inline StreamKPlan plan_stream_k(long long tiles, int k_tiles, int sms, int min_units = 4) {
  if (tiles < 1 || k_tiles < 1 || sms < 1 || min_units < 1)
    throw std::invalid_argument("stream-K plan: tiles " + std::to_string(tiles) + ", k tiles " + std::to_string(k_tiles) +
                                ", SMs " + std::to_string(sms) + ", min units " + std::to_string(min_units) +
                                ": each must be at least 1");
  StreamKPlan p;
  p.tiles = tiles;
  p.k_tiles = k_tiles;
  const long long full = tiles / sms, rem = tiles % sms;
  if (rem == 0) {  // whole waves: nothing to balance
    p.dp_tiles = tiles;
    return p;
  }
  // Every whole wave data-parallel, only the remainder shared. (Keeping one whole wave with the
  // remainder, as CUTLASS's hybrid may, measured slower on the H200: 8192^3 45.0-45.4 ms against
  // 42.7, 4096^3 5.44 against 5.28, 2048^3 the same; GPU-4be4a349, 2026-11-28.)
  p.dp_tiles = full * sms;
  p.sk_tiles = tiles - p.dp_tiles;
  p.sk_units = p.sk_tiles * k_tiles;
  p.sk_blocks = static_cast<int>(std::min<long long>(sms, std::max<long long>(1, p.sk_units / min_units)));
  for (int s = 0; s < p.sk_blocks; ++s) {
    const long long first = p.unit_begin(s) / k_tiles, last = (p.unit_begin(s + 1) - 1) / k_tiles;
    p.slots_per_block = std::max(p.slots_per_block, static_cast<int>(last - first + 1));
  }
  return p;
}

}  // namespace ceiling::kernels::gemm
