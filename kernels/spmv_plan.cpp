#include "spmv_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <stdexcept>
#include <string>

namespace ceiling::kernels {

namespace {
int lanes_for_mean(double mean) {
  int v = 1;
  while (v < 32 && v < mean) v *= 2;
  return v;
}
int log2_of(int v) {
  int l = 0;
  while ((1 << l) < v) ++l;
  return l;
}
}  // namespace

double CsrPlan::metadata_bytes() const {
  return static_cast<double>(items.size() * sizeof(CsrWorkItem) + ranges.size() * sizeof(EntryRange) +
                             long_rows.size() * sizeof(LongRow));
}

namespace {
CsrPlan plan_csr_items(const CsrMatrix& a, const CsrPlanOptions& o, bool chunked) {
  CsrPlan p;
  p.chunked = chunked;
  const double mean = a.rows > 0 ? static_cast<double>(a.nnz()) / a.rows : 0.0;
  p.long_row = o.long_row > 0 ? o.long_row
               : chunked ? o.stream_nnz
                         : static_cast<int>(std::clamp(8.0 * mean, 256.0, 1024.0));
  const auto len = [&](std::int32_t r) { return a.row_ptr[static_cast<size_t>(r) + 1] - a.row_ptr[static_cast<size_t>(r)]; };
  std::int32_t r = 0;
  while (r < a.rows) {
    if (chunked && len(r) <= p.long_row) {
      const std::int32_t s0 = r;
      std::int64_t e = 0;
      while (r < a.rows && len(r) <= p.long_row && r - s0 < o.block_threads && e + len(r) <= o.stream_nnz) e += len(r++);
      p.items.push_back({s0, r, kChunkStream, -1});
      p.stream_rows += r - s0;
      continue;
    }
    if (len(r) > p.long_row) {
      LongRow lr;
      lr.row = r;
      lr.first_slot = p.partial_slots;
      lr.first_item = static_cast<std::int32_t>(p.items.size());
      const std::int32_t begin = a.row_ptr[static_cast<size_t>(r)], end = a.row_ptr[static_cast<size_t>(r) + 1];
      for (std::int32_t s = begin; s < end; s += o.piece) {
        p.items.push_back({s, std::min(end, s + o.piece), 0, static_cast<std::int32_t>(p.long_rows.size())});
        ++lr.pieces;
      }
      if (lr.pieces > 1) p.partial_slots += lr.pieces;
      p.long_rows.push_back(lr);
      ++r;
      continue;
    }
    // A run of rows: grow while the rows fit the block's iterations at the running mean's V.
    const std::int32_t first = r;
    std::int64_t nnz = 0;
    std::int32_t longest = 0;
    int lanes = 1;
    while (r < a.rows && len(r) <= p.long_row) {
      const std::int64_t rows_now = r - first + 1;
      int v = lanes_for_mean(static_cast<double>(nnz + len(r)) / static_cast<double>(rows_now) / o.elements_per_lane);
      if (o.max_trips > 0)
        v = std::max(v, lanes_for_mean(static_cast<double>(std::max(longest, len(r))) /
                                       static_cast<double>(o.elements_per_lane * o.max_trips)));
      const std::int64_t cap = static_cast<std::int64_t>(o.iterations) * (o.block_threads / v);
      if (rows_now > cap) break;
      nnz += len(r);
      longest = std::max(longest, len(r));
      lanes = v;
      ++r;
    }
    if (lanes <= o.stream_max_lanes && longest <= o.stream_nnz) {
      // Stream items: consecutive rows while the entries fit stream_nnz and the rows block_threads.
      std::int32_t s0 = first;
      while (s0 < r) {
        std::int32_t s1 = s0;
        std::int64_t e = 0;
        while (s1 < r && s1 - s0 < o.block_threads && e + len(s1) <= o.stream_nnz) e += len(s1++);
        // The run's V, halved until the item's rows fit one pass of the block (a second pass reads
        // row_ptr again: an L2 round trip; conf5_4x8x-10, 52 rows of 39 at V = 8, was 10% slower).
        int v = lanes;
        while (v > 1 && (s1 - s0) * v > o.block_threads) v /= 2;
        p.items.push_back({s0, s1, -v, -1});
        s0 = s1;
      }
      p.stream_rows += r - first;
      continue;
    }
    p.items.push_back({first, r, lanes, -1});
    p.lane_histogram[log2_of(lanes)] += r - first;
  }
  p.ranges.reserve(p.items.size());
  for (const auto& it : p.items)
    p.ranges.push_back(it.long_index >= 0 ? EntryRange{it.a, it.b}
                                          : EntryRange{a.row_ptr[static_cast<size_t>(it.a)], a.row_ptr[static_cast<size_t>(it.b)]});
  return p;
}
}  // namespace

double CsrPlan::long_share() const {
  std::int64_t in_long = 0, all = 0;  // the ranges tile the entries, so `all` is nnz
  for (size_t i = 0; i < items.size(); ++i) {
    all += ranges[i].end - ranges[i].begin;
    if (items[i].long_index >= 0) in_long += ranges[i].end - ranges[i].begin;
  }
  return all > 0 ? static_cast<double>(in_long) / static_cast<double>(all) : 0.0;
}

CsrPlan plan_csr(const CsrMatrix& a, const CsrPlanOptions& o) {
  if (o.block_threads < 32 || o.block_threads % 32 || o.long_row < 0 || o.piece < o.block_threads || o.iterations < 1 ||
      o.max_trips < 0 || o.elements_per_lane < 1 || o.stream_max_lanes < 0 || o.stream_nnz < o.block_threads ||
      o.chunks < 0 || o.chunks > 2 || !(o.chunk_long_share >= 0))
    throw std::invalid_argument("plan_csr: bad options");
  if (o.chunks != 1 && o.long_row > o.stream_nnz)
    throw std::invalid_argument("plan_csr: chunked stream items need a long-row threshold of at most stream_nnz");
  if (o.chunks == 2) return plan_csr_items(a, o, true);
  CsrPlan p = plan_csr_items(a, o, false);
  if (o.chunks == 0 && p.long_share() >= o.chunk_long_share) return plan_csr_items(a, o, true);
  return p;
}

std::string plan_text(const CsrPlan& p) {
  std::int64_t stream = 0, rows = 0, long_blocks = 0;
  for (const auto& it : p.items) {
    if (it.long_index >= 0) ++long_blocks;
    else if (is_stream_item(it.lanes)) ++stream;
    else ++rows;
  }
  std::string t = std::to_string(p.items.size()) + " blocks: " + std::to_string(stream) + (p.chunked ? " chunked" : "") + " stream items (" +
                  std::to_string(p.stream_rows) + " rows), " + std::to_string(rows) + " row items";
  std::string lanes;
  for (int b = 0; b < 6; ++b)
    if (p.lane_histogram[b] > 0)
      lanes += (lanes.empty() ? "" : ", ") + std::to_string(p.lane_histogram[b]) + " rows at " + std::to_string(1 << b) +
               (b == 0 ? " lane" : " lanes");
  if (!lanes.empty()) t += " (" + lanes + ")";
  t += ", " + std::to_string(p.long_rows.size()) + " long rows (> " + std::to_string(p.long_row) + " nnz) in " +
       std::to_string(long_blocks) + " blocks";
  return t;
}

std::string plan_text(const TcPlan& p) {
  std::int64_t long_groups = 0;
  for (const auto& g : p.groups) long_groups += g.long_index >= 0;
  const double pad = p.padded_entries > 0 ? 100.0 * static_cast<double>(p.padded_entries - p.nnz) / static_cast<double>(p.padded_entries) : 0.0;
  char share[32];
  std::snprintf(share, sizeof share, "%.1f", pad);
  return std::to_string(p.groups.size()) + (p.groups.size() == 1 ? " group" : " groups") + " of 8 rows or slices (" + std::to_string(long_groups) + " of " +
         std::to_string(p.long_rows.size()) + " long rows), " + std::to_string(p.padded_entries) + " packed entries for " +
         std::to_string(p.nnz) + " nnz (" + share + "% padding), a warp per group";
}

double TcPlan::index_count() const {
  // columns of every padded entry + 8 row ids per normal group + 4 ints per group record
  // + 3 ints per long row record.
  std::int64_t normal = 0;
  for (const auto& g : groups) normal += g.long_index < 0;
  return static_cast<double>(padded_entries) + 8.0 * static_cast<double>(normal) + 4.0 * static_cast<double>(groups.size()) +
         3.0 * static_cast<double>(long_rows.size());
}

TcPlan plan_tensor_core(const CsrMatrix& a, const TcPlanOptions& o) {
  if (o.long_row < 4 || o.slice < 4 || o.slice % 4 || o.window < 8)
    throw std::invalid_argument("plan_tensor_core: bad options");
  TcPlan p;
  p.nnz = a.nnz();
  const auto rp = [&](std::int32_t r) { return a.row_ptr[static_cast<size_t>(r)]; };
  const auto len = [&](std::int32_t r) { return rp(r + 1) - rp(r); };
  // Appends one step-major group: slot g covers entries [begin[g], end[g]) (empty: begin = end).
  auto append = [&](const std::int32_t* begin, const std::int32_t* end, const std::int32_t* pad_col, TcGroup g) {
    std::int32_t longest = 0;
    for (int s = 0; s < 8; ++s) longest = std::max(longest, end[s] - begin[s]);
    g.steps = (longest + 3) / 4;
    const std::int64_t at = static_cast<std::int64_t>(p.val.size());
    if (at / 32 > INT32_MAX - g.steps) throw std::length_error("tensor-core SpMV plan: more than 2^31 steps");
    g.step_begin = static_cast<std::int32_t>(at / 32);
    p.val.resize(static_cast<size_t>(at + 32LL * g.steps), 0.0);
    p.col.resize(p.val.size(), 0);
    for (int s = 0; s < 8; ++s)
      for (std::int32_t k = 0; k < 4 * g.steps; ++k) {
        const size_t slot = static_cast<size_t>(at + 32LL * (k / 4) + 4 * s + k % 4);
        const std::int32_t e = begin[s] + k;
        if (e < end[s]) {
          p.val[slot] = a.val[static_cast<size_t>(e)];
          p.col[slot] = a.col[static_cast<size_t>(e)];
        } else {
          p.col[slot] = pad_col[s];
        }
      }
    p.groups.push_back(g);
  };
  std::vector<std::int32_t> normal;
  normal.reserve(static_cast<size_t>(a.rows));
  // Long rows first: 8 slices of `slice` entries per group.
  for (std::int32_t r = 0; r < a.rows; ++r) {
    if (len(r) <= o.long_row) {
      normal.push_back(r);
      continue;
    }
    LongRow lr;
    lr.row = r;
    lr.first_slot = p.partial_slots;
    lr.first_item = static_cast<std::int32_t>(p.groups.size());
    const std::int32_t chunk = 8 * o.slice;
    for (std::int32_t c = rp(r); c < rp(r + 1); c += chunk) {
      const std::int32_t c_end = std::min(rp(r + 1), c + chunk);
      const std::int32_t per = ((c_end - c + 7) / 8 + 3) / 4 * 4;  // slice length, multiple of 4
      std::int32_t b[8], e[8], pad[8];
      for (int s = 0; s < 8; ++s) {
        b[s] = std::min(c_end, c + s * per);
        e[s] = std::min(c_end, b[s] + per);
        pad[s] = a.col[static_cast<size_t>(c_end - 1)];
      }
      TcGroup g;
      g.long_index = static_cast<std::int32_t>(p.long_rows.size());
      g.rows_at = -1;
      append(b, e, pad, g);
      ++lr.pieces;
    }
    if (lr.pieces > 1) p.partial_slots += lr.pieces;
    p.long_rows.push_back(lr);
  }
  // Normal rows: sorted by length (descending, stable) inside windows of consecutive rows.
  for (size_t w = 0; w < normal.size(); w += static_cast<size_t>(o.window)) {
    const auto first = normal.begin() + static_cast<std::ptrdiff_t>(w);
    const auto last = normal.begin() + static_cast<std::ptrdiff_t>(std::min(normal.size(), w + static_cast<size_t>(o.window)));
    std::stable_sort(first, last, [&](std::int32_t x, std::int32_t y) { return len(x) > len(y); });
    for (auto it = first; it < last; it += 8) {
      std::int32_t b[8], e[8], pad[8];
      TcGroup g;
      g.rows_at = static_cast<std::int32_t>(p.rows.size());
      for (int s = 0; s < 8; ++s) {
        if (it + s < last) {
          const std::int32_t r = *(it + s);
          p.rows.push_back(r);
          b[s] = rp(r);
          e[s] = rp(r + 1);
          pad[s] = e[s] > b[s] ? a.col[static_cast<size_t>(e[s] - 1)] : 0;
        } else {
          p.rows.push_back(-1);
          b[s] = e[s] = 0;
          pad[s] = 0;
        }
      }
      append(b, e, pad, g);
    }
  }
  p.padded_entries = static_cast<std::int64_t>(p.val.size());
  return p;
}

KernelModel tensor_core_spmv_model(const CsrMatrix& a, const TcPlan& plan, Precision p) {
  KernelModel k = spmv_generic_model(a.rows, a.cols, static_cast<double>(a.nnz()), plan.index_count(), 4,
                                     plan.packed_zero_count(), 8, p);
  k.kind = "spmv-csr";
  k.description = "SpMV tensor-core groups " + std::to_string(a.rows) + "x" + std::to_string(a.cols) +
                  " nnz=" + std::to_string(a.nnz()) + " padded=" + std::to_string(plan.padded_entries);
  return k;
}

namespace {
// A chunked stream item as kernels/spmv_csr.cu stream_chunk_item sums it, its 256 threads run one
// after the other in each phase: thread t sums products [8t, 8t + 8), writes the rows that start and
// end there, leaves the part of a row that started earlier in head[t]; after the barrier, the thread
// where a row starts that ends past its chunk adds the later chunks' heads.
void chunk_sum(const CsrMatrix& a, const CsrWorkItem& it, const EntryRange& er, const double* x, double* y) {
  constexpr int kThreads = 256, kPer = 8;
  const int nr = it.b - it.a, n = er.end - er.begin;
  if (nr < 1 || nr > kThreads || n < 0 || n > kThreads * kPer)
    throw std::logic_error("spmv_by_csr_plan: a chunked stream item larger than its block");
  std::vector<int> ends(static_cast<size_t>(nr) + 1);
  for (int i = 0; i <= nr; ++i) ends[static_cast<size_t>(i)] = a.row_ptr[static_cast<size_t>(it.a + i)] - er.begin;
  if (ends[0] != 0 || ends[static_cast<size_t>(nr)] != n)
    throw std::logic_error("spmv_by_csr_plan: a chunked stream item's range is not its rows' entries");
  std::vector<double> prod(static_cast<size_t>(n)), head(kThreads, std::nan(""));
  for (int e = 0; e < n; ++e)
    prod[static_cast<size_t>(e)] = a.val[static_cast<size_t>(er.begin + e)] * x[a.col[static_cast<size_t>(er.begin + e)]];
  const auto end_of = [&](int i) { return ends[static_cast<size_t>(i) + 1]; };
  std::vector<int> own(kThreads, -1), own_end(kThreads, 0);
  std::vector<double> own_s(kThreads, 0.0);
  for (int t = 0; t < kThreads; ++t) {
    const int c0 = t * kPer, c1 = std::min(c0 + kPer, n), lo = t == 0 ? -1 : c0;
    if (!(lo < n || (t == 0 && n == 0))) continue;
    int i = 0;
    while (i < nr && end_of(i) <= lo) ++i;  // the first row whose end is past lo
    double s = 0.0;
    const auto close = [&] {
      if (ends[static_cast<size_t>(i)] < c0) head[static_cast<size_t>(t)] = s;
      else y[it.a + i] = s;
      s = 0.0;
      ++i;
    };
    for (int cc = c0; cc < c1; ++cc) {
      while (end_of(i) <= cc) close();
      s += prod[static_cast<size_t>(cc)];
    }
    while (i < nr && end_of(i) <= c1) close();
    if (i < nr && ends[static_cast<size_t>(i)] < c1) {
      if (ends[static_cast<size_t>(i)] < c0) head[static_cast<size_t>(t)] = s;
      else {
        own[static_cast<size_t>(t)] = i;
        own_s[static_cast<size_t>(t)] = s;
        own_end[static_cast<size_t>(t)] = end_of(i);
      }
    }
  }
  for (int t = 0; t < kThreads; ++t) {
    if (own[static_cast<size_t>(t)] < 0) continue;
    double s = own_s[static_cast<size_t>(t)];
    for (int q = t + 1; q <= (own_end[static_cast<size_t>(t)] - 1) / kPer; ++q) s += head[static_cast<size_t>(q)];
    y[it.a + own[static_cast<size_t>(t)]] = s;
  }
}
}  // namespace

void spmv_by_csr_plan(const CsrMatrix& a, const CsrPlan& plan, const double* x, double* y) {
  if (plan.ranges.size() != plan.items.size()) throw std::invalid_argument("spmv_by_csr_plan: one range per item");
  std::vector<double> partial(static_cast<size_t>(plan.partial_slots), 0.0);
  std::vector<int> seen(plan.long_rows.size(), 0);
  for (size_t i = 0; i < plan.items.size(); ++i) {
    const CsrWorkItem& it = plan.items[i];
    const EntryRange& er = plan.ranges[i];
    if (it.long_index < 0 && it.lanes == kChunkStream) {
      chunk_sum(a, it, er, x, y);
      continue;
    }
    if (it.long_index < 0 && is_stream_item(it.lanes)) {
      // As the kernel: the products of entries [er.begin, er.end), then each row's share of them.
      std::vector<double> prod;
      for (std::int32_t e = er.begin; e < er.end; ++e)
        prod.push_back(a.val[static_cast<size_t>(e)] * x[a.col[static_cast<size_t>(e)]]);
      for (std::int32_t r = it.a; r < it.b; ++r) {
        double s = 0;
        for (std::int32_t e = a.row_ptr[static_cast<size_t>(r)]; e < a.row_ptr[static_cast<size_t>(r) + 1]; ++e) {
          const std::int64_t k = static_cast<std::int64_t>(e) - er.begin;
          if (k < 0 || k >= static_cast<std::int64_t>(prod.size()))
            throw std::logic_error("spmv_by_csr_plan: a stream item's range misses an entry of its rows");
          s += prod[static_cast<size_t>(k)];
        }
        y[r] = s;
      }
      continue;
    }
    if (it.long_index < 0) {
      for (std::int32_t r = it.a; r < it.b; ++r) {
        double s = 0;
        for (std::int32_t e = a.row_ptr[static_cast<size_t>(r)]; e < a.row_ptr[static_cast<size_t>(r) + 1]; ++e)
          s += a.val[static_cast<size_t>(e)] * x[a.col[static_cast<size_t>(e)]];
        y[r] = s;
      }
      continue;
    }
    const LongRow& lr = plan.long_rows[static_cast<size_t>(it.long_index)];
    double s = 0;
    for (std::int32_t e = er.begin; e < er.end; ++e) s += a.val[static_cast<size_t>(e)] * x[a.col[static_cast<size_t>(e)]];
    if (lr.pieces == 1) {
      y[lr.row] = s;
      continue;
    }
    partial[static_cast<size_t>(lr.first_slot + seen[static_cast<size_t>(it.long_index)]++)] = s;
    if (seen[static_cast<size_t>(it.long_index)] == lr.pieces) {
      double t = 0;
      for (int q = 0; q < lr.pieces; ++q) t += partial[static_cast<size_t>(lr.first_slot + q)];
      y[lr.row] = t;
    }
  }
}

void spmv_by_tc_plan(const CsrMatrix& a, const TcPlan& plan, const double* x, double* y) {
  std::vector<double> partial(static_cast<size_t>(plan.partial_slots), 0.0);
  std::vector<int> seen(plan.long_rows.size(), 0);
  for (const auto& g : plan.groups) {
    double d[8] = {};
    for (std::int32_t s = 0; s < g.steps; ++s)
      for (int r = 0; r < 8; ++r)
        for (int t = 0; t < 4; ++t) {
          const size_t e = static_cast<size_t>(32LL * (g.step_begin + s) + 4 * r + t);
          d[r] += plan.val[e] * x[plan.col[e]];
        }
    if (g.long_index < 0) {
      for (int r = 0; r < 8; ++r)
        if (plan.rows[static_cast<size_t>(g.rows_at + r)] >= 0) y[plan.rows[static_cast<size_t>(g.rows_at + r)]] = d[r];
      continue;
    }
    const LongRow& lr = plan.long_rows[static_cast<size_t>(g.long_index)];
    const double s = std::accumulate(d, d + 8, 0.0);
    if (lr.pieces == 1) {
      y[lr.row] = s;
      continue;
    }
    partial[static_cast<size_t>(lr.first_slot + seen[static_cast<size_t>(g.long_index)]++)] = s;
    if (seen[static_cast<size_t>(g.long_index)] == lr.pieces) {
      double t = 0;
      for (int q = 0; q < lr.pieces; ++q) t += partial[static_cast<size_t>(lr.first_slot + q)];
      y[lr.row] = t;
    }
  }
  (void)a;
}

}  // namespace ceiling::kernels
