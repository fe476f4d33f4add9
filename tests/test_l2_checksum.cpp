// The L2 probe's checksum in closed form equals the loop over its words.
#include <doctest/doctest.h>

#include <cstdint>
#include <initializer_list>

#include "probes/host/l2_checksum.hpp"

namespace l2check = ceiling::probes::l2check;

TEST_CASE("l2 checksum: the closed form equals the loop (the words' low 32 bits wrap from i = 208 on)") {
  std::uint64_t loop = 0;
  std::size_t i = 0;
  for (std::size_t n : {0ul, 1ul, 2ul, 127ul, 1000ul, 65536ul, 1ul << 20, 3ul << 20, 7864320ul}) {
    for (; i < n; ++i) loop += l2check::word(i);
    CAPTURE(n);
    CHECK(l2check::word_sum(n) == loop);
  }
  // The floor sum itself on a small case by hand.
  CHECK(l2check::floor_sum(10, 3, 2, 1) == 30);  // floor((2i+1)/3), i < 10: 0+1+1+2+3+3+4+5+5+6
}
