// The L2 bandwidth probe's buffer words and their sum in closed form (host-only, CPU-tested in
// tests/test_l2_checksum.cpp). Word i is the low 32 bits of (i * K) >> 7, K = 2654435761; the sum
// over i < n checks every pass of the probe's kernels. A loop over the words took ~0.2 s of CPU
// per calibration (the capacity sweep reaches 4 x L2); the closed form is a few divisions.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define CEILING_L2CHECK_HD __host__ __device__
#else
#define CEILING_L2CHECK_HD
#endif

namespace ceiling::probes::l2check {

inline constexpr std::uint64_t kMultiplier = 2654435761ULL;

// The word the probe's init kernel writes at index i (the one definition, GPU and CPU).
CEILING_L2CHECK_HD inline std::uint32_t word(std::size_t i) { return static_cast<std::uint32_t>(i * kMultiplier >> 7); }

// sum_{i=0}^{n-1} floor((a*i + b) / m), exact (the classic floor-sum recursion, 128-bit).
inline unsigned __int128 floor_sum(unsigned __int128 n, unsigned __int128 m, unsigned __int128 a, unsigned __int128 b) {
  unsigned __int128 s = 0;
  while (n > 0) {
    if (a >= m) {
      s += n * (n - 1) / 2 * (a / m);
      a %= m;
    }
    if (b >= m) {
      s += n * (b / m);
      b %= m;
    }
    const unsigned __int128 y_max = a * n + b;
    if (y_max < m) break;
    n = y_max / m;
    b = y_max % m;
    const unsigned __int128 t = m;
    m = a;
    a = t;
  }
  return s;
}

// sum_{i<n} word(i) mod 2^64, for n * K < 2^64 (no wrap in i * K; n < 6.9e9): then word(i) =
// floor(iK / 2^7) - 2^32 floor(iK / 2^39), two floor sums.
inline std::uint64_t word_sum(std::size_t n) {
  const unsigned __int128 lo = floor_sum(n, 128, kMultiplier, 0);
  const unsigned __int128 hi = floor_sum(n, static_cast<unsigned __int128>(1) << 39, kMultiplier, 0);
  return static_cast<std::uint64_t>(lo - (hi << 32));
}

}  // namespace ceiling::probes::l2check
