// The DFMA GEMM's work plan (kernels/gemm_stream_k.hpp): whole tiles for every whole wave, the
// remaining tiles shared out by k tile over one block per SM. Replayed here as the kernel walks it:
// every k tile of every tile of C is computed exactly once, a tile held whole by one block is
// written by it, a shared tile's partial sums land in distinct workspace slots, and the figures of
// the sizes validate runs on a 132-SM H200.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "kernels/gemm_stream_k.hpp"

using ceiling::kernels::gemm::plan_stream_k;
using ceiling::kernels::gemm::StreamKPlan;

namespace {

// The kernel's walk (gemm_cuda_core.cu): per block, (tile, first k tile, count) pieces; per shared
// tile, the blocks that leave a partial sum and their slots. Checks every invariant on the way.
void replay(const StreamKPlan& p, int sms, int min_units) {
  INFO("tiles " << p.tiles << " k tiles " << p.k_tiles << " SMs " << sms);
  std::vector<std::vector<int>> covered(static_cast<size_t>(p.tiles), std::vector<int>(static_cast<size_t>(p.k_tiles), 0));
  std::map<long long, std::vector<int>> contributors;  // shared tile -> blocks, in walk order
  std::set<long long> slots;
  CHECK(p.dp_tiles % sms == 0);
  CHECK(p.dp_tiles + p.sk_tiles == p.tiles);
  CHECK(p.blocks() == p.dp_tiles + p.sk_blocks);
  for (long long t = 0; t < p.dp_tiles; ++t)
    for (int kt = 0; kt < p.k_tiles; ++kt) ++covered[static_cast<size_t>(t)][static_cast<size_t>(kt)];
  if (p.sk_blocks == 0) {
    CHECK(p.sk_tiles == 0);
    CHECK(p.tiles % sms == 0);
  } else {
    CHECK(p.sk_units == p.sk_tiles * p.k_tiles);
    CHECK(p.sk_blocks <= sms);
    CHECK(p.unit_begin(0) == 0);
    CHECK(p.unit_begin(p.sk_blocks) == p.sk_units);
    for (int s = 0; s < p.sk_blocks; ++s) {
      const long long u0 = p.unit_begin(s), u1 = p.unit_begin(s + 1);
      CHECK(u1 > u0);
      if (p.sk_units >= static_cast<long long>(min_units) * p.sk_blocks) CHECK(u1 - u0 >= min_units);
      for (long long u = u0; u < u1; ++u) CHECK(p.block_of(u) == s);
      // The kernel's loop over its units, tile by tile.
      for (long long u = u0; u < u1;) {
        const long long t = u / p.k_tiles;
        const int kt0 = static_cast<int>(u % p.k_tiles);
        const int count = static_cast<int>(std::min<long long>(p.k_tiles - kt0, u1 - u));
        for (int kt = kt0; kt < kt0 + count; ++kt) ++covered[static_cast<size_t>(p.dp_tiles + t)][static_cast<size_t>(kt)];
        u += count;
        const int first = p.first_block(t), last = p.last_block(t);
        CHECK(first <= s);
        CHECK(s <= last);
        if (first == last) {
          CHECK(count == p.k_tiles);  // written whole only when held whole
          continue;
        }
        contributors[t].push_back(s);
        const long long slot = p.slot(s, t);
        CHECK(slot >= static_cast<long long>(s) * p.slots_per_block);
        CHECK(slot < static_cast<long long>(s + 1) * p.slots_per_block);
        CHECK(slots.insert(slot).second);  // no two partial sums share a slot
      }
    }
  }
  for (const auto& row : covered)
    for (int c : row) CHECK(c == 1);  // every k tile of every tile exactly once
  // A shared tile's contributors are exactly blocks first..last: the last to arrive adds them all.
  for (const auto& [t, blocks] : contributors) {
    std::vector<int> want;
    for (int s = p.first_block(t); s <= p.last_block(t); ++s) want.push_back(s);
    CHECK(blocks == want);
    CHECK(blocks.size() >= 2);
  }
}

}  // namespace

TEST_CASE("stream-K GEMM plan: every k tile of every tile once, shared tiles in distinct slots") {
  for (int sms : {132, 114, 108, 7, 1})
    for (long long tiles : {1LL, 4LL, 6LL, 64LL, 131LL, 132LL, 133LL, 255LL, 264LL, 380LL, 1024LL})
      for (int k_tiles : {1, 4, 8, 32, 48}) {
        const StreamKPlan p = plan_stream_k(tiles, k_tiles, sms);
        replay(p, sms, 4);
      }
}

TEST_CASE("stream-K GEMM plan: the validate sizes on 132 SMs") {
  // 8192^3 (32 k rows per tile): 4096 tiles = 31 waves + 4; the 4 tiles' 1024 k tiles over 132 blocks.
  const StreamKPlan p8 = plan_stream_k(4096, 256, 132);
  CHECK(p8.dp_tiles == 4092);
  CHECK(p8.sk_tiles == 4);
  CHECK(p8.sk_blocks == 132);
  CHECK(p8.slots_per_block == 1);  // 132 blocks = 33 per tile: no range crosses a tile edge
  CHECK(p8.last_block(0) - p8.first_block(0) + 1 == 33);  // 33 partial sums for one tile
  // 4096^3: 1024 tiles = 7 waves + 100.
  const StreamKPlan p4 = plan_stream_k(1024, 128, 132);
  CHECK(p4.dp_tiles == 924);
  CHECK(p4.sk_tiles == 100);
  // 2048^3: one wave + 124; 1024^3: less than a wave, all shared (it had split k in 2 over 128 blocks).
  CHECK(plan_stream_k(256, 64, 132).dp_tiles == 132);
  const StreamKPlan p1 = plan_stream_k(64, 32, 132);
  CHECK(p1.dp_tiles == 0);
  CHECK(p1.sk_blocks == 132);
  CHECK(p1.unit_begin(1) == 15);  // 2048 k tiles over 132 blocks: 15 or 16 each
  // Whole waves need no sharing.
  const StreamKPlan w = plan_stream_k(264, 64, 132);
  CHECK(w.dp_tiles == 264);
  CHECK(w.sk_blocks == 0);
  CHECK(w.blocks() == 264);
  // Few k tiles: fewer blocks, each at least min_units.
  const StreamKPlan small = plan_stream_k(4, 8, 132);
  CHECK(small.sk_blocks == 8);
}

TEST_CASE("stream-K GEMM plan refuses empty or negative shapes") {
  CHECK_THROWS_AS(plan_stream_k(0, 8, 132), std::invalid_argument);
  CHECK_THROWS_AS(plan_stream_k(4, 0, 132), std::invalid_argument);
  CHECK_THROWS_AS(plan_stream_k(4, 8, 0), std::invalid_argument);
  CHECK_THROWS_AS(plan_stream_k(4, 8, 132, 0), std::invalid_argument);
}
