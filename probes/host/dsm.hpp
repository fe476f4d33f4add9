// The "dsm" probe's plain C++ side (issue 14; Luo et al. §III-C-3 and §IV-E, Figs. 8-9): the
// sweeps, the values the kernels write and the CPU references that check them before any time
// counts. Shared by probes/dsm_sm90a.cu and the CPU tests.
// - SM-to-SM latency: a random single-cycle permutation (Sattolo) of a chain in one block's shared
//   memory; the chase's end point after `steps` loads (chain_end).
// - Ring-based copy (RBC): block of rank R stores its register values into the shared memory of
//   rank (R + 1) % CS; thread t's register k starts at ring_init(block, t, k) and grows by one per
//   iteration, so the destination slot t + k * threads of rank R holds the last value of the
//   previous rank's thread t, register k (ring_expected).
// - Histogram with the bins spread over the cluster: bin b lives in rank b / (bins / CS) at
//   b % (bins / CS); the counts against a CPU histogram (cpu_histogram).
#pragma once
#include <cstdint>
#include <numeric>
#include <random>
#include <utility>
#include <vector>

namespace ceiling::probes::dsm {

// Sweeps (the paper's axes: cluster size, block size, ILP; Nbins). quick: a subset.
inline std::vector<int> ring_cluster_sizes(bool) { return {2, 4, 8, 16}; }
inline std::vector<int> ring_block_threads(bool quick) {
  return quick ? std::vector<int>{256, 1024} : std::vector<int>{128, 256, 512, 1024};
}
inline std::vector<int> ring_ilps(bool quick) { return quick ? std::vector<int>{1, 8} : std::vector<int>{1, 2, 4, 8}; }
inline std::vector<int> histogram_cluster_sizes(bool quick) {
  return quick ? std::vector<int>{1, 2, 4} : std::vector<int>{1, 2, 4, 8};
}
inline std::vector<int> histogram_block_threads(bool) { return {128, 512}; }
inline std::vector<int> histogram_bins(bool quick) {
  return quick ? std::vector<int>{1024, 4096} : std::vector<int>{256, 1024, 2048, 4096, 8192};
}

// ---- latency chain ----

// next[i]: the element after i; one cycle through all n elements (Sattolo's algorithm).
inline std::vector<uint32_t> random_cycle(uint32_t n, uint64_t seed) {
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937_64 rng(seed);
  for (uint32_t i = n - 1; i > 0; --i) {
    std::uniform_int_distribution<uint32_t> pick(0, i - 1);
    std::swap(order[i], order[pick(rng)]);
  }
  std::vector<uint32_t> next(n);
  for (uint32_t i = 0; i < n; ++i) next[order[i]] = order[(i + 1) % n];
  return next;
}

// The element reached from `start` after `steps` loads.
inline uint32_t chain_end(const std::vector<uint32_t>& next, uint32_t start, long long steps) {
  uint32_t x = start;
  for (long long s = 0; s < steps; ++s) x = next[x];
  return x;
}

// Length of the cycle through `start` (n for a single cycle).
inline uint32_t cycle_length(const std::vector<uint32_t>& next, uint32_t start) {
  uint32_t x = next[start], n = 1;
  while (x != start && n <= next.size()) x = next[x], ++n;
  return n;
}

// ---- ring-based copy ----

// Thread t's register k of block `block` (grid index) before the first iteration: a hash, so a
// value in the wrong slot or from the wrong block shows. Same on host and device.
#if defined(__CUDACC__)
__host__ __device__
#endif
inline constexpr uint32_t ring_init(uint32_t block, uint32_t t, uint32_t k) {
  uint32_t x = block * 0x9E3779B1u ^ (t * 0x85EBCA77u + 0x165667B1u) ^ (k * 0xC2B2AE3Du);
  x ^= x >> 15;
  x *= 0x2C1B3C6Du;
  x ^= x >> 12;
  return x;
}

// Rank of a 1-D grid's block in clusters of cs along x (what %cluster_ctarank gives there).
inline constexpr int cluster_rank(int block, int cs) { return block % cs; }
// The block (grid index) whose registers land in `block`'s shared memory: the previous rank.
inline constexpr int ring_source(int block, int cs) {
  const int base = block - block % cs;
  return base + (block % cs + cs - 1) % cs;
}

// Slot t + k * threads of `block`'s destination buffer after `iters` iterations (value + 1 per
// iteration, the last store is value + iters - 1; wraps like uint32).
inline constexpr uint32_t ring_expected(int block, int cs, uint32_t t, uint32_t k, uint32_t iters) {
  return ring_init(static_cast<uint32_t>(ring_source(block, cs)), t, k) + (iters - 1u);
}

// Every slot of every block: the first mismatch as (block, slot), or (-1, -1).
inline std::pair<long long, long long> ring_first_mismatch(const std::vector<uint32_t>& got, int blocks, int cs,
                                                           int threads, int ilp, uint32_t iters) {
  const long long per_block = static_cast<long long>(threads) * ilp;
  if (static_cast<long long>(got.size()) < per_block * blocks) return {0, 0};
  for (int b = 0; b < blocks; ++b)
    for (int k = 0; k < ilp; ++k)
      for (int t = 0; t < threads; ++t) {
        const long long slot = t + static_cast<long long>(k) * threads;
        if (got[static_cast<size_t>(b * per_block + slot)] !=
            ring_expected(b, cs, static_cast<uint32_t>(t), static_cast<uint32_t>(k), iters))
          return {b, slot};
      }
  return {-1, -1};
}

// Bytes the ring moves: every thread stores `ilp` 4-byte words per iteration to the next block.
inline constexpr double ring_bytes(long long blocks, int threads, int ilp, long long iters) {
  return static_cast<double>(blocks) * threads * ilp * 4.0 * static_cast<double>(iters);
}

// ---- histogram ----

// Where bin b lives: (rank, offset) with bins / cs bins per block.
inline constexpr std::pair<int, int> bin_home(int bin, int bins, int cs) {
  const int per_block = bins / cs;
  return {bin / per_block, bin % per_block};
}

inline std::vector<uint32_t> cpu_histogram(const std::vector<uint32_t>& input, int bins) {
  std::vector<uint32_t> h(static_cast<size_t>(bins), 0);
  for (uint32_t v : input) ++h[v % static_cast<uint32_t>(bins)];
  return h;
}

// A histogram of `bins` bins from one of a multiple of `bins` bins over the same input (bin = value
// % bins, and value % bins == (value % B) % bins when bins divides B): one CPU pass serves every
// bin count of the sweep. Empty when bins does not divide the larger histogram's size.
inline std::vector<uint32_t> fold_histogram(const std::vector<uint32_t>& wide, int bins) {
  if (bins < 1 || wide.size() % static_cast<size_t>(bins)) return {};
  std::vector<uint32_t> h(static_cast<size_t>(bins), 0);
  for (size_t i = 0; i < wide.size(); ++i) h[i % static_cast<size_t>(bins)] += wide[i];
  return h;
}

// The clusters' partial histograms (clusters x bins, one row per cluster) summed per bin.
inline std::vector<uint32_t> sum_partials(const std::vector<uint32_t>& partials, int clusters, int bins) {
  std::vector<uint32_t> h(static_cast<size_t>(bins), 0);
  for (int c = 0; c < clusters; ++c)
    for (int b = 0; b < bins; ++b) h[static_cast<size_t>(b)] += partials[static_cast<size_t>(c) * bins + b];
  return h;
}

// ---- bounds ----

// Upper bound of the ring's rate per SM used: every SM can issue at most one shared-memory store
// instruction of 32 lanes x 4 bytes per clock (128 B/clk/SM, the shared memory's own width), and
// a remote store is one of them. The GPU test holds measurements below it.
inline constexpr double kRingBytesPerClockPerSmBound = 128.0;

}  // namespace ceiling::probes::dsm
