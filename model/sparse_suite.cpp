// The 21 matrices of GPGPU'25 Table 2 (from DASP, SC'23) and generators that mimic them
// (model/sparse_matrix.hpp): the same rows and exactly the same nnz at scale 1, and the structure of
// each original's family, so that row-length statistics (RowStats) differ between families as the
// originals' do. The originals' longest rows are taken from the SuiteSparse collection's statistics
// (rounded, from memory of the published figures) but for scircuit, which gets the dense rows the
// issue asks of every circuit; everything else is a family model, not a copy.
//
// Generation: row lengths first (a family's weights scaled to hit nnz exactly, in O(rows)), then
// each row's distinct sorted columns from the family's pattern (blocks in a band, lattice
// neighbours, host-local links, ...), topped up without quadratic duplicate checks. A splitmix64
// stream seeded by (seed, matrix, row) makes the arrays the same on every platform and library.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <exception>
#include <initializer_list>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "sparse_matrix.hpp"

namespace ceiling {

const std::vector<SuiteMatrix>& table2_suite() {
  // GPGPU'25 Table 2, ranked by nnz; all square.
  static const std::vector<SuiteMatrix> table{
      {"D1", "dc2", 116835, 766396, "circuit"},
      {"D2", "scircuit", 170998, 958936, "circuit"},
      {"D3", "mac_econ_fwd500", 206500, 1273389, "economics"},
      {"D4", "conf5_4x8x-10", 49152, 1916928, "qcd"},
      {"D5", "mc2depi", 525825, 2100225, "stencil"},
      {"D6", "rma10", 46835, 2374001, "fem-banded"},
      {"D7", "cop20k_A", 121192, 2624331, "fem-irregular"},
      {"D8", "webbase-1M", 1000005, 3105536, "web-graph"},
      {"D9", "ASIC_680k", 682862, 3871773, "circuit"},
      {"D10", "cant", 62451, 4007383, "fem-banded"},
      {"D11", "pdb1HYS", 36417, 4344765, "fem-banded"},
      {"D12", "consph", 83334, 6010480, "fem-banded"},
      {"D13", "shipsec1", 140874, 7813404, "fem-banded"},
      {"D14", "mip1", 66463, 10352819, "optimization"},
      {"D15", "pwtk", 217918, 11634424, "fem-banded"},
      {"D16", "Si41Ge41H72", 185639, 15011265, "quantum-chemistry"},
      {"D17", "in-2004", 1382908, 16917053, "web-graph"},
      {"D18", "Ga41As41H72", 268096, 18488476, "quantum-chemistry"},
      {"D19", "eu-2005", 862664, 19235140, "web-graph"},
      {"D20", "FullChip", 2987012, 26621990, "circuit"},
      {"D21", "circuit5M", 5558326, 59524291, "circuit"},
  };
  return table;
}

namespace {

std::string lower(const std::string& s) {
  std::string out = s;
  for (char& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

std::size_t table2_index(const std::string& name_or_code) {
  const auto& t = table2_suite();
  for (std::size_t i = 0; i < t.size(); ++i)
    if (t[i].name == name_or_code || t[i].code == name_or_code) return i;
  for (std::size_t i = 0; i < t.size(); ++i)  // "d10", "CANT"
    if (lower(t[i].name) == lower(name_or_code) || lower(t[i].code) == lower(name_or_code)) return i;
  std::string names;
  for (const auto& m : t) names += (names.empty() ? "" : ", ") + m.name;
  throw std::invalid_argument("unknown matrix '" + name_or_code + "' in table2 (one of " + names + "; or a code D1..D21)");
}

enum class Family { circuit, economics, qcd, stencil, fem, optimization, quantum_chemistry, web_graph };

// What a generator needs beyond Table 2, per matrix (same order as table2_suite()).
struct Shape {
  Family family;
  int block;         // fem, qcd: unknowns per mesh node = the side of the dense blocks
  double spread;     // fem: sd/mean of a node's row length; economics, quantum chemistry, optimization:
                     // sigma of the log-normal row lengths; web graph: Pareto exponent; circuit: share of tail rows
  double skip;       // fem: chance to pass over a nearer neighbour node (irregular meshes)
  double max_row;    // the original's longest row (SuiteSparse statistics, rounded)
  int heavy;         // circuit, optimization: rows far longer than the mean besides the longest one (at scale 1)
  double empty;      // share of empty rows
};

const Shape kShapes[] = {
    {Family::circuit, 1, 0.10, 0, 114190, 6, 0},             // dc2: one row spans 98% of the columns
    {Family::circuit, 1, 0.10, 0, 60000, 3, 0},              // scircuit: short rows, a few supply nets
    {Family::economics, 1, 0.6, 0, 44, 0, 0},                // mac_econ_fwd500
    {Family::qcd, 3, 0, 0, 39, 0, 0},                        // conf5_4x8x-10: 39 in every row
    {Family::stencil, 1, 0, 0, 4, 0, 0},                     // mc2depi: 2-D Markov chain, <= 4 per row
    {Family::fem, 3, 0.35, 0.15, 145, 0, 0},                 // rma10
    {Family::fem, 1, 0.38, 0.35, 81, 0, 0},                  // cop20k_A
    {Family::web_graph, 1, 1.5, 0, 4700, 0, 0.02},           // webbase-1M
    {Family::circuit, 1, 0.05, 0, 395259, 10, 0},            // ASIC_680k
    {Family::fem, 3, 0.12, 0.10, 78, 0, 0},                  // cant
    {Family::fem, 3, 0.25, 0.15, 204, 0, 0},                 // pdb1HYS
    {Family::fem, 3, 0.10, 0.10, 81, 0, 0},                  // consph
    {Family::fem, 6, 0.20, 0.15, 102, 0, 0},                 // shipsec1
    {Family::optimization, 1, 0.5, 0, 66395, 40, 0},         // mip1: dense rows almost as wide as the matrix
    {Family::fem, 6, 0.20, 0.15, 180, 0, 0},                 // pwtk
    {Family::quantum_chemistry, 1, 0.55, 0, 662, 0, 0},      // Si41Ge41H72
    {Family::web_graph, 1, 1.3, 0, 7753, 0, 0.05},           // in-2004
    {Family::quantum_chemistry, 1, 0.55, 0, 702, 0, 0},      // Ga41As41H72
    {Family::web_graph, 1, 1.2, 0, 6985, 0, 0.03},           // eu-2005
    {Family::circuit, 1, 0.25, 0, 2312481, 20, 0},           // FullChip
    {Family::circuit, 1, 0.30, 0, 1290501, 20, 0},           // circuit5M
};
static_assert(sizeof(kShapes) / sizeof(kShapes[0]) == 21);

// splitmix64: a fixed stream on every platform (std:: distributions differ between libraries).
struct Rng {
  std::uint64_t state;
  explicit Rng(std::uint64_t seed) : state(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  std::int64_t below(std::int64_t n) {                                       // [0, n), n >= 1
    return static_cast<std::int64_t>((static_cast<unsigned __int128>(next()) * static_cast<std::uint64_t>(n)) >> 64);
  }
  double normal() {  // Box-Muller
    const double u = 1.0 - uniform(), v = uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
  }
  std::int64_t geometric(double mean) { return static_cast<std::int64_t>(-mean * std::log(1.0 - uniform())); }
};

std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  Rng r(a ^ (b * 0xD1B54A32D192ED03ull + 0x8CB92BA72F3D8DD7ull));
  r.next();
  return r.next();
}

// Scales the body rows' weights so that their lengths (multiples of `step`, in [lo, cap]) sum to
// exactly `target`: the largest factor whose rounded sum stays at or below it, then +step / +1 on
// rows in a scattered order. `body` lists the rows to fit; the others keep their lengths.
void fit_lengths(std::vector<std::int64_t>& len, const std::vector<std::int64_t>& body, const std::vector<double>& w,
                 std::int64_t target, std::int64_t lo, std::int64_t cap, std::int64_t step, std::int64_t cols, Rng& g) {
  const auto n = static_cast<std::int64_t>(body.size());
  if (n == 0) {
    if (target != 0) throw std::logic_error("generate_table2: no rows left to hold " + std::to_string(target) + " entries");
    return;
  }
  step = std::max<std::int64_t>(1, step);
  if (target < n * lo) lo = 0;
  if (target > n * cap) cap = cols;
  const auto length = [&](double weight, double f) {
    const double steps = std::min(weight * f / static_cast<double>(step), 1e18);  // weights are >= 0
    return std::clamp<std::int64_t>(step * static_cast<std::int64_t>(steps + 0.5), lo, cap);
  };
  const auto total = [&](double f) {
    std::int64_t s = 0;
    for (const std::int64_t r : body) s += length(w[static_cast<std::size_t>(r)], f);
    return s;
  };
  double weight_sum = 0;
  for (const std::int64_t r : body) weight_sum += w[static_cast<std::size_t>(r)];
  double f_lo = 0, f_hi = weight_sum > 0 ? static_cast<double>(target) / weight_sum : 1.0;
  for (int i = 0; i < 200 && total(f_hi) < target; ++i) f_hi *= 2;
  for (int i = 0; i < 24; ++i) {  // then at most a few rows per 10^7 entries are left to the +1 pass
    const double mid = 0.5 * (f_lo + f_hi);
    (total(mid) <= target ? f_lo : f_hi) = mid;
  }
  std::int64_t missing = target;
  for (const std::int64_t r : body) {
    len[static_cast<std::size_t>(r)] = length(w[static_cast<std::size_t>(r)], f_lo);
    missing -= len[static_cast<std::size_t>(r)];
  }
  // The rest, a step (then one) at a time on rows visited in a scattered order.
  std::int64_t stride = 1;
  for (const std::int64_t p : {1000003LL, 999983LL, 104729LL, 7919LL, 101LL})
    if (std::gcd(p % n, n) == 1 && p % n != 0) {
      stride = p % n;
      break;
    }
  std::int64_t at = g.below(n);
  while (missing > 0) {
    bool progress = false;
    const std::int64_t add = missing >= step ? step : 1;
    for (std::int64_t i = 0; i < n && missing >= add; ++i, at = (at + stride) % n) {
      std::int64_t& l = len[static_cast<std::size_t>(body[static_cast<std::size_t>(at)])];
      if (l + add <= cap) {
        l += add;
        missing -= add;
        progress = true;
      }
    }
    if (!progress) {
      if (cap >= cols && add == 1) throw std::logic_error("generate_table2: cannot place " + std::to_string(missing) + " entries");
      cap = cols;
    }
  }
}

// Neighbours of a node in a 3-D mesh numbered along its length (a beam, a shell, a hull: a cross
// section of c x c nodes), as node-index offsets, nearest first, each offset once: a narrow band.
std::vector<std::int64_t> mesh_offsets(std::int64_t nodes) {
  const auto c = std::max<std::int64_t>(2, std::llround(std::cbrt(static_cast<double>(nodes) / 16)));
  struct O {
    std::int64_t d2, off;
  };
  std::vector<O> all;
  constexpr int R = 3;
  for (int dz = -R; dz <= R; ++dz)
    for (int dy = -R; dy <= R; ++dy)
      for (int dx = -R; dx <= R; ++dx) all.push_back({dx * dx + dy * dy + dz * dz, dz + dy * c + dx * c * c});
  std::stable_sort(all.begin(), all.end(), [](const O& a, const O& b) { return a.d2 < b.d2; });
  std::vector<std::int64_t> out;
  for (const O& o : all)
    if (std::find(out.begin(), out.end(), o.off) == out.end()) out.push_back(o.off);
  return out;
}

constexpr std::int64_t kLongRow = 128;  // rows at least this long are built from sorted strata

// One generated matrix under construction: lengths, then rows.
class Generator {
 public:
  Generator(const SuiteMatrix& m, const Shape& sh, std::int64_t rows, std::int64_t nnz, std::uint64_t base)
      : m_(m), sh_(sh), rows_(rows), cols_(rows), nnz_(nnz), base_(base) {}

  CsrMatrix run() {
    lengths();
    CsrMatrix a;
    a.rows = static_cast<std::int32_t>(rows_);
    a.cols = static_cast<std::int32_t>(cols_);
    a.row_ptr.resize(static_cast<std::size_t>(rows_) + 1);
    a.row_ptr[0] = 0;
    for (std::size_t r = 0; r < static_cast<std::size_t>(rows_); ++r)
      a.row_ptr[r + 1] = a.row_ptr[r] + static_cast<std::int32_t>(len_[r]);
    a.col.resize(static_cast<std::size_t>(nnz_));
    a.val.resize(static_cast<std::size_t>(nnz_));
    if (sh_.family == Family::fem) offsets_ = mesh_offsets(nodes());
    // Rows in parallel, in ranges of about equal entries; each row has its own stream, so the
    // arrays do not depend on the number of threads.
    const auto threads = static_cast<std::int64_t>(
        nnz_ < (std::int64_t{1} << 20) ? 1 : std::clamp(std::thread::hardware_concurrency(), 1u, 16u));
    std::vector<std::int64_t> first_row{0};
    for (std::int64_t t = 1; t < threads; ++t) {
      const auto want = static_cast<std::int32_t>(nnz_ * t / threads);
      first_row.push_back(std::lower_bound(a.row_ptr.begin(), a.row_ptr.end(), want) - a.row_ptr.begin());
    }
    first_row.push_back(rows_);
    const auto fill = [&](std::int64_t begin, std::int64_t end) {
      Scratch s;
      for (std::int64_t r = begin; r < end; ++r) {
        const std::int64_t n = len_[static_cast<std::size_t>(r)];
        if (n == 0) continue;
        Rng g(mix(base_, static_cast<std::uint64_t>(r)));
        columns(s, r, n, g);
        const auto at = static_cast<std::size_t>(a.row_ptr[static_cast<std::size_t>(r)]);
        for (std::size_t k = 0; k < s.cand.size(); ++k) {
          a.col[at + k] = static_cast<std::int32_t>(s.cand[k]);
          a.val[at + k] = 0.5 + g.uniform();  // positive: element-wise relative errors stay well conditioned
        }
      }
    };
    std::vector<std::thread> pool;
    std::vector<std::exception_ptr> errors(static_cast<std::size_t>(threads));
    for (std::int64_t t = 1; t < threads; ++t)
      pool.emplace_back([&, t] {
        try {
          fill(first_row[static_cast<std::size_t>(t)], first_row[static_cast<std::size_t>(t) + 1]);
        } catch (...) {
          errors[static_cast<std::size_t>(t)] = std::current_exception();
        }
      });
    try {
      fill(first_row[0], first_row[1]);
    } catch (...) {
      errors[0] = std::current_exception();
    }
    for (auto& th : pool) th.join();
    for (const auto& e : errors)
      if (e) std::rethrow_exception(e);
    return a;
  }

 private:
  std::int64_t nodes() const { return (rows_ + sh_.block - 1) / sh_.block; }
  double rows_scale() const { return static_cast<double>(rows_) / static_cast<double>(m_.rows); }

  // Row lengths: fixed rows (empty, heavy) first, then the body's family weights fitted to the rest.
  void lengths() {
    Rng g(mix(base_, 0x6c656e67746873ull));  // "lengths"
    len_.assign(static_cast<std::size_t>(rows_), -1);
    std::vector<double> w(static_cast<std::size_t>(rows_), 1.0);
    const double mean = static_cast<double>(nnz_) / static_cast<double>(rows_);
    std::int64_t lo = 1, step = 1;
    std::int64_t cap = std::min<std::int64_t>(cols_, static_cast<std::int64_t>(sh_.max_row));
    switch (sh_.family) {
      case Family::fem: {
        step = sh_.block;
        lo = std::min<std::int64_t>(sh_.block, cap);
        for (std::int64_t v = 0; v < nodes(); ++v) {
          const double node_weight = std::max(0.3, 1.0 + sh_.spread * g.normal());
          for (std::int64_t r = v * sh_.block; r < std::min(rows_, (v + 1) * sh_.block); ++r) w[static_cast<std::size_t>(r)] = node_weight;
        }
        break;
      }
      case Family::qcd:
        step = sh_.block;
        cap = cols_;
        break;
      case Family::stencil: {
        const std::int64_t grid = stencil_grid();
        for (std::int64_t r = 0; r < rows_; ++r) w[static_cast<std::size_t>(r)] = static_cast<double>(stencil_count(r, grid));
        break;
      }
      case Family::economics:
      case Family::quantum_chemistry:
        for (auto& x : w) x = std::exp(sh_.spread * g.normal());
        break;
      case Family::web_graph:  // the longest row grows slower than the graph
        cap = std::min<std::int64_t>(cols_, std::llround(sh_.max_row * std::sqrt(std::min(1.0, rows_scale()))));
        for (auto& x : w) x = std::pow(1.0 - g.uniform(), -1.0 / sh_.spread);  // Pareto: many rows of 1-3, a few of thousands
        break;
      case Family::circuit:
      case Family::optimization:
        if (sh_.family == Family::circuit) {
          for (auto& x : w)  // short rows (2-6 terminals), a thin Pareto tail
            x = g.uniform() < sh_.spread ? 4.0 * std::pow(1.0 - g.uniform(), -1.0 / 1.2) : 1.0 + 4.0 * g.uniform() * g.uniform();
        } else {
          for (auto& x : w) x = std::exp(sh_.spread * g.normal());
        }
        if (sh_.heavy > 0) {
          cap = std::min<std::int64_t>(cols_, sh_.family == Family::circuit ? 1000 : static_cast<std::int64_t>(8 * mean) + 8);
          heavy_rows(g, mean);
        }
        break;
    }
    if (sh_.empty > 0 && rows_ >= 100)
      for (std::int64_t r = 0; r < rows_; ++r)
        if (len_[static_cast<std::size_t>(r)] < 0 && g.uniform() < sh_.empty) len_[static_cast<std::size_t>(r)] = 0;
    std::int64_t fixed = 0;
    std::vector<std::int64_t> body;
    body.reserve(static_cast<std::size_t>(rows_));
    for (std::int64_t r = 0; r < rows_; ++r) {
      if (len_[static_cast<std::size_t>(r)] < 0) {
        body.push_back(r);
      } else {
        fixed += len_[static_cast<std::size_t>(r)];
      }
    }
    // Tiny scales: fixed rows grow to full width if the body cannot hold the rest.
    for (std::int64_t r = 0; r < rows_ && nnz_ - fixed > static_cast<std::int64_t>(body.size()) * cols_; ++r) {
      std::int64_t& l = len_[static_cast<std::size_t>(r)];
      if (l < 0) continue;
      const std::int64_t add = std::min(cols_ - l, nnz_ - fixed - static_cast<std::int64_t>(body.size()) * cols_);
      l += add;
      fixed += add;
    }
    fit_lengths(len_, body, w, nnz_ - fixed, lo, std::max<std::int64_t>(cap, 1), step, cols_, g);
  }

  // The longest row (the original's share of the columns) and `heavy` more between 50x the mean and
  // it, at most 30% of the entries; their indices double as dense columns (supply nets are nodes too).
  void heavy_rows(Rng& g, double mean) {
    const double frac = sh_.max_row / static_cast<double>(m_.rows);
    std::vector<std::int64_t> lengths{std::clamp<std::int64_t>(std::llround(frac * static_cast<double>(cols_)), 1, cols_)};
    const auto more = std::llround(sh_.heavy * rows_scale());
    const double floor_len = std::min(static_cast<double>(lengths[0]), 50 * mean);
    for (std::int64_t i = 0; i < more; ++i) {
      const double u = g.uniform();
      lengths.push_back(std::llround(std::max(floor_len, static_cast<double>(lengths[0]) * u * u * u)));
    }
    // At most half the entries in heavy rows: the others shrink first, then the longest.
    const double budget = 0.5 * static_cast<double>(nnz_);
    const double others = std::accumulate(lengths.begin() + 1, lengths.end(), 0.0);
    if (static_cast<double>(lengths[0]) + others > budget) {
      const double room = std::max(0.0, budget - static_cast<double>(lengths[0]));
      for (auto l = lengths.begin() + 1; l != lengths.end(); ++l)
        *l = std::max<std::int64_t>(1, static_cast<std::int64_t>(static_cast<double>(*l) * room / std::max(others, 1.0)));
      lengths[0] = std::max<std::int64_t>(1, std::min(lengths[0], static_cast<std::int64_t>(budget)));
    }
    for (const std::int64_t l : lengths) {
      std::int64_t r = g.below(rows_);
      for (int tries = 0; len_[static_cast<std::size_t>(r)] >= 0 && tries < 64; ++tries) r = g.below(rows_);
      if (len_[static_cast<std::size_t>(r)] >= 0) break;
      len_[static_cast<std::size_t>(r)] = l;
      const double share = std::min(1.0, static_cast<double>(l) / static_cast<double>(rows_));
      if (hubs_.size() < 8 && share >= 0.01) hubs_.push_back({r, share});
    }
  }

  std::int64_t stencil_grid() const { return std::max<std::int64_t>(2, std::llround(std::sqrt(static_cast<double>(rows_)))); }
  // mc2depi's pattern: a 2-D grid, each state linked to itself, its right neighbour and the rows above and below.
  std::int64_t stencil_count(std::int64_t r, std::int64_t grid) const {
    return 1 + (r >= grid) + (r + grid < rows_) + ((r + 1) % grid != 0 && r + 1 < rows_);
  }

  // Per-thread working space of the row phase.
  struct Scratch {
    std::vector<std::int64_t> cand, nodes, free;
  };

  void push(Scratch& s, std::int64_t c) const {
    if (c >= 0 && c < cols_) s.cand.push_back(c);
  }

  // s.cand <- n distinct sorted columns of row r.
  void columns(Scratch& s, std::int64_t r, std::int64_t n, Rng& g) const {
    s.cand.clear();
    const bool hub_family = sh_.family == Family::circuit || sh_.family == Family::optimization;
    if (hub_family && (n * 16 > cols_ || n > 4096)) {  // a dense row (supply net): one column from each of n equal strata
      for (std::int64_t k = 0; k < n; ++k) {
        const std::int64_t b = k * cols_ / n, e = (k + 1) * cols_ / n;
        s.cand.push_back(b + g.below(e - b));
      }
      return;
    }
    const auto room = [&] { return static_cast<std::int64_t>(s.cand.size()) < n; };
    switch (sh_.family) {
      case Family::fem: {  // dense b x b blocks: the node's neighbours in mesh order, nearest first
        const std::int64_t b = sh_.block, v = r / b, blocks = (n + b - 1) / b;
        Rng ng(mix(base_ ^ 0x6e6f6465ull, static_cast<std::uint64_t>(v)));  // per node: its rows share the blocks
        s.nodes.assign(1, v);
        for (std::size_t i = 1; i < offsets_.size() && static_cast<std::int64_t>(s.nodes.size()) < blocks; ++i) {
          if (ng.uniform() < sh_.skip) continue;
          const std::int64_t u = v + offsets_[i];
          if (u >= 0 && u < nodes()) s.nodes.push_back(u);
        }
        std::sort(s.nodes.begin(), s.nodes.end());
        for (const std::int64_t u : s.nodes)
          for (std::int64_t j = 0; j < b; ++j) push(s, u * b + j);
        break;
      }
      case Family::qcd: {  // 4-D periodic lattice: self and 12 neighbours, 3x3 colour blocks
        const std::int64_t b = sh_.block, v = r / b, nn = nodes();
        const auto l = std::max<std::int64_t>(2, std::llround(std::pow(static_cast<double>(nn), 0.25)));  // lattice side
        const std::int64_t offs[] = {0, 1, -1, l, -l, l * l, -l * l, l * l * l, -l * l * l, 2, -2, 2 * l, -2 * l};
        s.nodes.clear();
        for (const std::int64_t o : offs) {
          const std::int64_t u = ((v + o) % nn + nn) % nn;
          if (std::find(s.nodes.begin(), s.nodes.end(), u) == s.nodes.end()) s.nodes.push_back(u);
        }
        std::sort(s.nodes.begin(), s.nodes.end());
        for (const std::int64_t u : s.nodes)
          for (std::int64_t j = 0; j < b; ++j) push(s, u * b + j);
        break;
      }
      case Family::stencil: {
        const std::int64_t grid = stencil_grid();
        if (r >= grid) push(s, r - grid);
        push(s, r);
        if ((r + 1) % grid != 0) push(s, r + 1);
        push(s, r + grid);
        break;
      }
      case Family::economics: {  // the diagonal, near neighbours, the same sector, anywhere
        const std::int64_t sector = std::max<std::int64_t>(16, cols_ / 500);
        push(s, r);
        while (room()) {
          const double u = g.uniform();
          if (u < 0.45) {
            push(s, r + (g.uniform() < 0.5 ? -1 : 1) * (1 + g.below(20)));
          } else if (u < 0.8) {
            push(s, r / sector * sector + g.below(sector));
          } else {
            push(s, g.below(cols_));
          }
        }
        break;
      }
      case Family::quantum_chemistry: {  // short runs, most near the diagonal, the rest scattered far
        const double near = std::max(16.0, 0.01 * static_cast<double>(cols_));
        push(s, r);
        while (room()) {
          const std::int64_t run = 1 + g.below(std::min<std::int64_t>(8, n));
          const std::int64_t start = g.uniform() < 0.6 ? r + std::llround(near * g.normal()) : g.below(cols_);
          for (std::int64_t k = 0; k < run && room(); ++k) push(s, start + k);
        }
        break;
      }
      case Family::web_graph: {  // links within the host (near), to popular pages (low ids), anywhere
        const double reach = std::max(4.0, static_cast<double>(n));
        if (n >= kLongRow) {  // the same mix from sorted strata: no sort of a long row
          const auto near = std::llround(0.55 * static_cast<double>(n)), popular = std::llround(0.2 * static_cast<double>(n));
          strata(s, near, r - n, r + n + 1, g);
          const std::size_t s1 = s.cand.size();
          for (std::int64_t i = 0; i < popular; ++i) {
            const double u = (static_cast<double>(i) + g.uniform()) / static_cast<double>(popular);
            push(s, static_cast<std::int64_t>(static_cast<double>(cols_) * u * u * u * u));
          }
          const std::size_t s2 = s.cand.size();
          strata(s, n - near - popular, 0, cols_, g);
          merge_runs(s, {s1, s2});
          break;
        }
        while (room()) {
          const double u = g.uniform();
          if (u < 0.55) {
            push(s, r + (g.uniform() < 0.5 ? -1 : 1) * (1 + g.geometric(reach)));
          } else if (u < 0.75) {
            const double p = g.uniform();
            push(s, static_cast<std::int64_t>(static_cast<double>(cols_) * p * p * p * p));
          } else {
            push(s, g.below(cols_));
          }
        }
        break;
      }
      case Family::circuit: {  // the diagonal, the supply nets, near devices (85%), far nets (15%)
        constexpr double kNear = 0.85;
        const double reach = std::max(20.0, static_cast<double>(n));
        push(s, r);
        for (const Hub& h : hubs_)
          if (room() && g.uniform() < h.share) push(s, h.row);
        if (n >= kLongRow) {  // the same mix from sorted strata: no sort of a long row
          std::sort(s.cand.begin(), s.cand.end());
          const std::size_t s1 = s.cand.size();
          const std::int64_t rest = n - static_cast<std::int64_t>(s1);
          const auto near = std::llround(kNear * static_cast<double>(rest));
          strata(s, near, r - n, r + n + 1, g);
          const std::size_t s2 = s.cand.size();
          strata(s, rest - near, 0, cols_, g);
          merge_runs(s, {s1, s2});
          break;
        }
        while (room()) {
          if (g.uniform() < kNear) {
            push(s, r + (g.uniform() < 0.5 ? -1 : 1) * (1 + g.geometric(reach)));
          } else {
            push(s, g.below(cols_));
          }
        }
        break;
      }
      case Family::optimization: {  // dense runs in a band and in the diagonal block, some anywhere; dense columns
        const double band = std::max(32.0, 0.02 * static_cast<double>(cols_));
        for (const Hub& h : hubs_)
          if (room() && g.uniform() < h.share) push(s, h.row);
        while (room()) {
          const std::int64_t run = 8 + g.below(33);
          const double u = g.uniform();
          const std::int64_t start = u < 0.7    ? r + std::llround(band * g.normal())
                                     : u < 0.85 ? r / 64 * 64 + g.below(64)
                                                : g.below(cols_);
          for (std::int64_t k = 0; k < run && room(); ++k) push(s, start + k);
        }
        break;
      }
    }
    finish(s, r, n, g);
  }

  // Appends k sorted columns of [lo, hi) (clipped to the matrix), one from each of k equal strata,
  // or all of them when k covers the range.
  void strata(Scratch& s, std::int64_t k, std::int64_t lo, std::int64_t hi, Rng& g) const {
    lo = std::max<std::int64_t>(lo, 0);
    hi = std::min(hi, cols_);
    if (hi <= lo || k <= 0) return;
    const std::int64_t span = hi - lo;
    if (k >= span) {
      for (std::int64_t c = lo; c < hi; ++c) s.cand.push_back(c);
      return;
    }
    for (std::int64_t i = 0; i < k; ++i) {
      const std::int64_t b = lo + i * span / k, e = lo + (i + 1) * span / k;
      s.cand.push_back(b + g.below(e - b));
    }
  }

  // s.cand holds sorted runs that start at 0 and at each of `starts`: merge them in place.
  static void merge_runs(Scratch& s, std::initializer_list<std::size_t> starts) {
    std::size_t done = 0;
    for (auto it = starts.begin(); it != starts.end(); ++it) {
      const std::size_t next = it + 1 == starts.end() ? s.cand.size() : *(it + 1);
      done = std::max(done, *it);
      std::inplace_merge(s.cand.begin(), s.cand.begin() + static_cast<std::ptrdiff_t>(done),
                         s.cand.begin() + static_cast<std::ptrdiff_t>(next));
      done = next;
    }
  }

  // Sorted, distinct, exactly n: the farther end trimmed, or topped up near the row (or anywhere).
  void finish(Scratch& s, std::int64_t r, std::int64_t n, Rng& g) const {
    if (!std::is_sorted(s.cand.begin(), s.cand.end())) std::sort(s.cand.begin(), s.cand.end());
    s.cand.erase(std::unique(s.cand.begin(), s.cand.end()), s.cand.end());
    if (static_cast<std::int64_t>(s.cand.size()) > n) {
      std::size_t b = 0, e = s.cand.size();
      while (static_cast<std::int64_t>(e - b) > n) {
        if (r - s.cand[b] > s.cand[e - 1] - r) {
          ++b;
        } else {
          --e;
        }
      }
      s.cand.erase(s.cand.begin() + static_cast<std::ptrdiff_t>(e), s.cand.end());
      s.cand.erase(s.cand.begin(), s.cand.begin() + static_cast<std::ptrdiff_t>(b));
      return;
    }
    std::int64_t missing = n - static_cast<std::int64_t>(s.cand.size());
    if (missing == 0) return;
    if (n * 4 > cols_) {  // nearly full: pick the rest from the free columns
      s.free.clear();
      std::size_t k = 0;
      for (std::int64_t c = 0; c < cols_; ++c) {
        if (k < s.cand.size() && s.cand[k] == c) {
          ++k;
        } else {
          s.free.push_back(c);
        }
      }
      for (std::int64_t i = 0; i < missing; ++i) {
        const auto j = static_cast<std::size_t>(i + g.below(static_cast<std::int64_t>(s.free.size()) - i));
        std::swap(s.free[static_cast<std::size_t>(i)], s.free[j]);
        s.cand.push_back(s.free[static_cast<std::size_t>(i)]);
      }
      std::sort(s.cand.begin(), s.cand.end());
      return;
    }
    // Top up in batches near the row, twice as far each round: no duplicate check per column.
    for (std::int64_t reach = std::max<std::int64_t>(8, n); missing > 0; reach *= 2) {
      const auto sorted = static_cast<std::ptrdiff_t>(s.cand.size());
      for (std::int64_t i = 0; i < missing; ++i) {
        const std::int64_t c = reach >= cols_ ? g.below(cols_) : r - reach + g.below(2 * reach + 1);
        s.cand.push_back(std::clamp<std::int64_t>(c, 0, cols_ - 1));
      }
      std::sort(s.cand.begin() + sorted, s.cand.end());
      std::inplace_merge(s.cand.begin(), s.cand.begin() + sorted, s.cand.end());
      s.cand.erase(std::unique(s.cand.begin(), s.cand.end()), s.cand.end());
      missing = n - static_cast<std::int64_t>(s.cand.size());
    }
  }

  struct Hub {
    std::int64_t row;
    double share;  // of the rows that hold its column
  };

  const SuiteMatrix& m_;
  const Shape& sh_;
  std::int64_t rows_, cols_, nnz_;
  std::uint64_t base_;
  std::vector<std::int64_t> len_, offsets_;
  std::vector<Hub> hubs_;
};

}  // namespace

const SuiteMatrix& table2_matrix(const std::string& name_or_code) { return table2_suite()[table2_index(name_or_code)]; }

CsrMatrix generate_table2(const std::string& name_or_code, double scale, std::uint64_t seed) {
  const std::size_t index = table2_index(name_or_code);
  const SuiteMatrix& m = table2_suite()[index];
  if (!std::isfinite(scale) || scale <= 0 || scale > 1)
    throw std::invalid_argument("generate_table2: scale must be in (0, 1] (1: Table 2's size), got " + std::to_string(scale));
  const double rows_wanted = std::round(static_cast<double>(m.rows) * scale);
  const double nnz_wanted = std::round(static_cast<double>(m.nnz) * scale);
  const auto rows = std::max<std::int64_t>(1, static_cast<std::int64_t>(rows_wanted));
  const auto nnz = static_cast<std::int64_t>(std::clamp(nnz_wanted, 1.0, static_cast<double>(rows) * static_cast<double>(rows)));
  std::uint64_t name_hash = 1469598103934665603ull;  // FNV-1a: each matrix its own stream
  for (const char c : m.name) name_hash = (name_hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  CsrMatrix a = Generator(m, kShapes[index], rows, nnz, mix(seed, name_hash)).run();
  a.name = m.name;
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, scale).ptr;
  a.source = "generated: table2 " + m.name + ", scale " + std::string(text, end) + ", seed " + std::to_string(seed);
  return a;
}

}  // namespace ceiling
