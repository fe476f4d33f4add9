// SpMV on the CPU side (issue 10): the CUDA-core work-item plan and the tensor-core group plan
// cover every entry once (computing y from the plan equals the CSR reference), pick the lanes and
// the long-row pieces they promise, and the tensor-core variant's Q counts its padding and
// metadata (Eq. 9). The validate sweep runs SpMV variants that exist only in this binary over
// registered matrices: one point per matrix, its name as the label, three implementations, two
// CUDA-core baselines paired with the tensor-core one, a geomean per baseline.
#include <doctest/doctest.h>

#include "approx.hpp"

#include <cmath>
#include <memory>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "kernels/registry.hpp"
#include "kernels/spmv_plan.hpp"
#include "kernels/sweep.hpp"
#include "kernels/verify.hpp"
#include "model/descriptor.hpp"
#include "model/kernel_kind.hpp"
#include "model/sparse_matrix.hpp"
#include "model/validation.hpp"
#include "scratch.hpp"

#include <nlohmann/json.hpp>

using namespace ceiling;

namespace {

// Rows of the given lengths, columns spread deterministically, values != 0.
CsrMatrix matrix_with_rows(const std::vector<int>& lengths, int cols, const std::string& name = "hand") {
  CsrMatrix a;
  a.name = name;
  a.rows = static_cast<std::int32_t>(lengths.size());
  a.cols = cols;
  a.row_ptr.push_back(0);
  std::uint64_t z = 12345;
  for (size_t r = 0; r < lengths.size(); ++r) {
    const int len = std::min(lengths[r], cols);
    // len distinct sorted columns: a random start and a stride that fits.
    z = z * 6364136223846793005ull + 1442695040888963407ull;
    const int stride = std::max(1, cols / std::max(len, 1));
    const int start = static_cast<int>((z >> 33) % static_cast<std::uint64_t>(std::max(1, cols - (len - 1) * stride)));
    for (int k = 0; k < len; ++k) {
      a.col.push_back(start + k * stride);
      a.val.push_back(0.5 + static_cast<double>((z >> (k % 40)) & 1023) / 1024.0);
    }
    a.row_ptr.push_back(static_cast<std::int32_t>(a.col.size()));
  }
  return a;
}

std::vector<double> x_for(const CsrMatrix& a) {
  std::vector<double> x(static_cast<size_t>(a.cols));
  for (size_t j = 0; j < x.size(); ++j) x[j] = std::sin(0.37 * static_cast<double>(j)) + 1.5;
  return x;
}

double max_rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]) / std::max(1e-300, std::fabs(b[i])));
  return m;
}

// Short, medium, long and very long rows, and empty ones.
CsrMatrix mixed() {
  std::vector<int> lengths;
  for (int r = 0; r < 3000; ++r) lengths.push_back(r % 7 == 0 ? 0 : 1 + r % 5);   // short, some empty
  for (int r = 0; r < 300; ++r) lengths.push_back(20 + r % 40);                    // medium
  lengths.push_back(5000);                                                         // long, 2 pieces of 4096
  for (int r = 0; r < 50; ++r) lengths.push_back(200 + r);                         // near the TC long threshold
  lengths.push_back(20000);                                                        // very long
  lengths.push_back(1025);                                                         // just long (CC), 1 piece
  return matrix_with_rows(lengths, 30000, "mixed");
}

}  // namespace

TEST_CASE("the CUDA-core plan covers every row once, lanes by the run's mean, long rows in pieces") {
  const CsrMatrix a = mixed();
  check_csr(a);
  kernels::CsrPlanOptions rows_only;  // row items only: the lanes rules below (stream items: next test)
  rows_only.stream_max_lanes = 0;
  rows_only.chunks = 1;  // the V plan (chunked stream items: their own test)
  const kernels::CsrPlan p = kernels::plan_csr(a, rows_only);
  const auto x = x_for(a);
  std::vector<double> ref(static_cast<size_t>(a.rows)), got(static_cast<size_t>(a.rows), std::nan(""));
  spmv_reference(a, x.data(), ref.data());
  kernels::spmv_by_csr_plan(a, p, x.data(), got.data());
  CHECK(max_rel_diff(got, ref) < 1e-13);
  // Every row in exactly one item; row items contiguous and in order.
  std::vector<int> covered(static_cast<size_t>(a.rows), 0);
  for (const auto& it : p.items) {
    if (it.long_index >= 0) continue;
    CHECK(it.a < it.b);
    CHECK((it.lanes >= 1 && it.lanes <= 32 && (it.lanes & (it.lanes - 1)) == 0));
    CHECK(it.b - it.a <= 256 / it.lanes);  // rows fit the block's one pass
    for (int r = it.a; r < it.b; ++r) ++covered[static_cast<size_t>(r)];
  }
  for (const auto& lr : p.long_rows) ++covered[static_cast<size_t>(lr.row)];
  CHECK(std::all_of(covered.begin(), covered.end(), [](int c) { return c == 1; }));
  // The long-row threshold is 8 x the mean row length in [256, 1024]: 256 here (mean ~17), so the
  // rows of 200-249 stay in runs and 5000 -> 2 pieces of 4096, 20000 -> 5, 1025 -> 1 (no partial slots).
  CHECK(p.long_row == 256);
  kernels::CsrPlanOptions fixed = rows_only;
  fixed.long_row = 100;
  CHECK(kernels::plan_csr(a, fixed).long_rows.size() == 53);  // the 50 rows of 200-249 too
  CHECK(kernels::plan_csr(matrix_with_rows(std::vector<int>(100, 60), 5000)).long_row == 480);
  CHECK(kernels::plan_csr(matrix_with_rows(std::vector<int>(100, 200), 5000)).long_row == 1024);
  REQUIRE(p.long_rows.size() == 3);
  CHECK(p.long_rows[0].pieces == 2);
  CHECK(p.long_rows[1].pieces == 5);
  CHECK(p.long_rows[2].pieces == 1);
  CHECK(p.partial_slots == 7);
  for (const auto& lr : p.long_rows)
    for (int q = 0; q < lr.pieces; ++q) CHECK(p.items[static_cast<size_t>(lr.first_item + q)].long_index >= 0);
  // Lanes per row = the power of two at or above mean / 8: short rows (mean ~2.6) a thread each,
  // the medium ones (20-60) 4 or 8 (but for the few in the runs that straddle the short rows),
  // the 50 rows of 200-249 a warp; the histogram counts every non-long row once.
  CHECK(p.lane_histogram[0] > 2500);
  CHECK(p.lane_histogram[2] + p.lane_histogram[3] >= 250);
  for (const auto& it : p.items) {  // V = the power of two at or above max(run's mean / 8, longest / 32)
    if (it.long_index >= 0) continue;
    const double mean = static_cast<double>(a.row_ptr[static_cast<size_t>(it.b)] - a.row_ptr[static_cast<size_t>(it.a)]) / (it.b - it.a);
    int longest = 0;
    for (int r = it.a; r < it.b; ++r)
      longest = std::max(longest, a.row_ptr[static_cast<size_t>(r) + 1] - a.row_ptr[static_cast<size_t>(r)]);
    int v = 1;
    while (v < 32 && (v < mean / 8 || v < longest / 32.0)) v *= 2;
    CHECK(v == it.lanes);
  }
  kernels::CsrPlanOptions uncapped = rows_only;  // max_trips 0: the mean alone picks V
  uncapped.max_trips = 0;
  for (const auto& it : kernels::plan_csr(a, uncapped).items) {
    if (it.long_index >= 0) continue;
    const double mean = static_cast<double>(a.row_ptr[static_cast<size_t>(it.b)] - a.row_ptr[static_cast<size_t>(it.a)]) / (it.b - it.a);
    int v = 1;
    while (v < 32 && v < mean / 8) v *= 2;
    CHECK(v == it.lanes);
  }
  CHECK(std::accumulate(std::begin(p.lane_histogram), std::end(p.lane_histogram), std::int64_t{0}) == a.rows - 3);
  CHECK(p.lane_histogram[5] == 50);
  CHECK(p.metadata_bytes() == ceiling_test::Rel(24.0 * static_cast<double>(p.items.size()) + 16.0 * static_cast<double>(p.long_rows.size())));

  // max_trips: V also fits the run's longest row in that many trips of 8 x V entries.
  kernels::CsrPlanOptions capped = rows_only;
  capped.max_trips = 2;
  const kernels::CsrPlan c = kernels::plan_csr(a, capped);
  std::vector<double> got2(static_cast<size_t>(a.rows), std::nan(""));
  kernels::spmv_by_csr_plan(a, c, x.data(), got2.data());
  CHECK(max_rel_diff(got2, ref) < 1e-13);
  for (const auto& it : c.items) {
    if (it.long_index >= 0) continue;
    int longest = 0;
    for (int r = it.a; r < it.b; ++r)
      longest = std::max(longest, a.row_ptr[static_cast<size_t>(r) + 1] - a.row_ptr[static_cast<size_t>(r)]);
    CHECK((longest <= 2 * 8 * it.lanes || it.lanes == 32));
    CHECK(it.b - it.a <= 256 / it.lanes);
  }
  capped.max_trips = -1;
  CHECK_THROWS_AS(kernels::plan_csr(a, capped), std::invalid_argument);
}

TEST_CASE("the CUDA-core plan's stream items: runs with V <= 16, <= 2048 entries and <= 256 rows each") {
  const CsrMatrix a = mixed();
  const auto x = x_for(a);
  std::vector<double> ref(static_cast<size_t>(a.rows));
  spmv_reference(a, x.data(), ref.data());
  kernels::CsrPlanOptions rows_only;
  rows_only.stream_max_lanes = 0;
  rows_only.chunks = 1;
  const kernels::CsrPlan vector_plan = kernels::plan_csr(a, rows_only);
  for (int max_lanes : {1, 4, 16, 32}) {
    kernels::CsrPlanOptions o;
    o.stream_max_lanes = max_lanes;
    o.chunks = 1;
    const kernels::CsrPlan p = kernels::plan_csr(a, o);
    INFO("stream_max_lanes " << max_lanes);
    std::vector<double> got(static_cast<size_t>(a.rows), std::nan(""));
    kernels::spmv_by_csr_plan(a, p, x.data(), got.data());
    CHECK(max_rel_diff(got, ref) < 1e-13);
    // Every row once; a stream item's rows and entries fit the block; the rows the row-only plan
    // gives V <= max_lanes are exactly the stream rows; long rows are unchanged.
    std::vector<int> covered(static_cast<size_t>(a.rows), 0), streamed(static_cast<size_t>(a.rows), 0);
    for (const auto& it : p.items) {
      if (it.long_index >= 0) continue;
      CHECK(it.a < it.b);
      if (kernels::is_stream_item(it.lanes)) {
        const int v = kernels::stream_lanes(it.lanes);  // the run's lanes per row, which add the products
        CHECK((v >= 1 && v <= max_lanes && (v & (v - 1)) == 0));
        CHECK((it.b - it.a) * v <= o.block_threads);  // one pass of V lanes per row
        CHECK(it.b - it.a <= o.block_threads);
        CHECK(a.row_ptr[static_cast<size_t>(it.b)] - a.row_ptr[static_cast<size_t>(it.a)] <= o.stream_nnz);
        for (int r = it.a; r < it.b; ++r) streamed[static_cast<size_t>(r)] = 1;
      } else {
        CHECK(it.lanes > max_lanes);
      }
      for (int r = it.a; r < it.b; ++r) ++covered[static_cast<size_t>(r)];
    }
    for (const auto& lr : p.long_rows) ++covered[static_cast<size_t>(lr.row)];
    CHECK(std::all_of(covered.begin(), covered.end(), [](int c) { return c == 1; }));
    std::int64_t expect_streamed = 0;
    for (const auto& it : vector_plan.items)
      if (it.long_index < 0 && it.lanes <= max_lanes) {
        expect_streamed += it.b - it.a;
        for (int r = it.a; r < it.b; ++r) CHECK(streamed[static_cast<size_t>(r)] == 1);
      }
    CHECK(p.stream_rows == expect_streamed);
    CHECK(p.long_rows.size() == vector_plan.long_rows.size());
    CHECK(std::accumulate(std::begin(p.lane_histogram), std::end(p.lane_histogram), p.stream_rows) == a.rows - 3);
  }
  // The V plan streams the short (V = 1) and medium (V = 4, 8) runs of mixed() but not the warp runs.
  kernels::CsrPlanOptions v_plan;
  v_plan.chunks = 1;
  const kernels::CsrPlan d = kernels::plan_csr(a, v_plan);
  CHECK(!d.chunked);
  // One entry range per item: a run's [row_ptr[a], row_ptr[b]), a long item's own [a, b); the
  // pieces of a row tile it, so the ranges tile [0, nnz) in item order.
  REQUIRE(d.ranges.size() == d.items.size());
  std::int32_t next = 0;
  for (size_t i = 0; i < d.items.size(); ++i) {
    const auto& it = d.items[i];
    const auto& er = d.ranges[i];
    CHECK(er.begin == next);
    if (it.long_index >= 0) {
      CHECK((er.begin == it.a && er.end == it.b));
    } else {
      CHECK((er.begin == a.row_ptr[static_cast<size_t>(it.a)] && er.end == a.row_ptr[static_cast<size_t>(it.b)]));
    }
    next = er.end;
  }
  CHECK(next == a.nnz());
  // The CPU walk sums a stream item from its range as the kernel does: a range one entry short
  // leaves a row's entry outside it and is refused, a missing range list too.
  kernels::CsrPlan shifted = d;
  for (size_t i = 0; i < shifted.items.size(); ++i)
    if (shifted.items[i].long_index < 0 && kernels::is_stream_item(shifted.items[i].lanes) &&
        shifted.ranges[i].end > shifted.ranges[i].begin) {
      ++shifted.ranges[i].begin;
      break;
    }
  std::vector<double> y(static_cast<size_t>(a.rows));
  CHECK_THROWS_AS(kernels::spmv_by_csr_plan(a, shifted, x.data(), y.data()), std::logic_error);
  shifted.ranges.clear();
  CHECK_THROWS_AS(kernels::spmv_by_csr_plan(a, shifted, x.data(), y.data()), std::invalid_argument);
  CHECK(d.stream_rows > 3000);
  CHECK(d.lane_histogram[5] == 50);
  kernels::CsrPlanOptions bad;
  bad.stream_nnz = 100;  // below block_threads
  CHECK_THROWS_AS(kernels::plan_csr(a, bad), std::invalid_argument);
  bad = {};
  bad.stream_max_lanes = -1;
  CHECK_THROWS_AS(kernels::plan_csr(a, bad), std::invalid_argument);
}

TEST_CASE("chunked stream items: full items of any row up to 2048 entries, summed as the kernel's threads do") {
  kernels::CsrPlanOptions chunked;
  chunked.chunks = 2;
  // Empty rows first, a row of exactly 2048 (it fills an item), one of 2049 (long: one piece), a run
  // of 300 empty rows (an item of 256 rows and no entries), rows that end on chunk edges (8, 16), a
  // row of 1500 after short ones (it spans ~190 chunks of another item), empty rows last.
  std::vector<int> lengths{0, 0, 0, 2048, 0, 2049};
  for (int r = 0; r < 300; ++r) lengths.push_back(0);
  for (int l : {1, 0, 17, 8, 8, 16, 8}) lengths.push_back(l);
  for (int r = 0; r < 40; ++r) lengths.push_back(1 + r % 3);
  lengths.push_back(1500);
  for (int r = 0; r < 700; ++r) lengths.push_back(r % 9);
  for (int r = 0; r < 5; ++r) lengths.push_back(0);
  for (const CsrMatrix& a : {matrix_with_rows(lengths, 5000, "edges"), mixed()}) {
    INFO(a.name);
    const kernels::CsrPlan p = kernels::plan_csr(a, chunked);
    CHECK(p.chunked);
    CHECK(p.long_row == 2048);
    const auto len = [&](std::int32_t r) { return a.row_ptr[static_cast<size_t>(r) + 1] - a.row_ptr[static_cast<size_t>(r)]; };
    std::vector<int> covered(static_cast<size_t>(a.rows), 0);
    for (size_t i = 0; i < p.items.size(); ++i) {
      const auto& it = p.items[i];
      if (it.long_index >= 0) continue;
      CHECK(it.lanes == kernels::kChunkStream);
      CHECK(kernels::is_stream_item(it.lanes));
      const std::int32_t nnz = p.ranges[i].end - p.ranges[i].begin;
      CHECK((it.b - it.a >= 1 && it.b - it.a <= 256));
      CHECK(nnz <= 2048);
      // Full: the next row would pass 256 rows or 2048 entries, or is long, or there is none.
      if (it.b < a.rows) CHECK((it.b - it.a == 256 || nnz + len(it.b) > 2048 || len(it.b) > 2048));
      for (int r = it.a; r < it.b; ++r) {
        CHECK(len(r) <= 2048);
        ++covered[static_cast<size_t>(r)];
      }
    }
    for (const auto& lr : p.long_rows) {
      CHECK(len(lr.row) > 2048);
      ++covered[static_cast<size_t>(lr.row)];
    }
    CHECK(std::all_of(covered.begin(), covered.end(), [](int c) { return c == 1; }));
    CHECK(p.stream_rows == a.rows - static_cast<std::int64_t>(p.long_rows.size()));
    const auto x = x_for(a);
    std::vector<double> ref(static_cast<size_t>(a.rows)), got(static_cast<size_t>(a.rows), std::nan(""));
    spmv_reference(a, x.data(), ref.data());
    kernels::spmv_by_csr_plan(a, p, x.data(), got.data());  // the kernel's chunk sums: heads unset are NaN
    CHECK(max_rel_diff(got, ref) < 1e-13);
    CHECK(std::none_of(got.begin(), got.end(), [](double v) { return std::isnan(v); }));
  }
  // The edge matrix's items: rows [0, 5) (2048 entries: the empty row 4 still fits), the 2049 row
  // long, then 256 of the 300 empty rows: an item without entries.
  const CsrMatrix e = matrix_with_rows(lengths, 5000, "edges");
  const kernels::CsrPlan pe = kernels::plan_csr(e, chunked);
  REQUIRE(pe.items.size() >= 4);
  CHECK((pe.items[0].a == 0 && pe.items[0].b == 5));
  CHECK((pe.ranges[0].begin == 0 && pe.ranges[0].end == 2048));
  CHECK(pe.items[1].long_index >= 0);
  CHECK((pe.items[2].a == 6 && pe.items[2].b == 262));
  CHECK(pe.ranges[2].begin == pe.ranges[2].end);

  // The plan's choice (chunks 0): chunked where the V plan's long rows hold >= 15% of the entries.
  const CsrMatrix even = matrix_with_rows(std::vector<int>(3000, 30), 5000, "even");
  CHECK(!kernels::plan_csr(even).chunked);
  std::vector<int> spiky(3000, 5);
  for (int r = 0; r < 3000; r += 300) spiky[static_cast<size_t>(r)] = 400;  // 4000 of 18950 in rows > 256
  const CsrMatrix sp = matrix_with_rows(spiky, 5000, "spiky");
  const kernels::CsrPlan vs = [&] { kernels::CsrPlanOptions o; o.chunks = 1; return kernels::plan_csr(sp, o); }();
  CHECK(vs.long_share() == ceiling_test::Rel(4000.0 / static_cast<double>(sp.nnz())));
  CHECK(kernels::plan_csr(sp).chunked);
  kernels::CsrPlanOptions high;
  high.chunk_long_share = 0.5;
  CHECK(!kernels::plan_csr(sp, high).chunked);
  kernels::CsrPlanOptions bad;
  bad.chunks = 3;
  CHECK_THROWS_AS(kernels::plan_csr(sp, bad), std::invalid_argument);
  bad = {};
  bad.chunk_long_share = std::nan("");
  CHECK_THROWS_AS(kernels::plan_csr(sp, bad), std::invalid_argument);
  bad = {};
  bad.long_row = 4096;  // above stream_nnz: a chunked item could not hold such a row
  CHECK_THROWS_AS(kernels::plan_csr(sp, bad), std::invalid_argument);
  bad.chunks = 1;  // the V plan takes it
  CHECK(kernels::plan_csr(sp, bad).long_row == 4096);
}

TEST_CASE("the tensor-core plan packs sorted 8-row groups, pads to 4 columns and counts what it reads") {
  const CsrMatrix a = mixed();
  const kernels::TcPlan p = kernels::plan_tensor_core(a);
  const auto x = x_for(a);
  std::vector<double> ref(static_cast<size_t>(a.rows)), got(static_cast<size_t>(a.rows), std::nan(""));
  spmv_reference(a, x.data(), ref.data());
  kernels::spmv_by_tc_plan(a, p, x.data(), got.data());
  CHECK(max_rel_diff(got, ref) < 1e-13);
  CHECK(p.padded_entries == static_cast<std::int64_t>(p.val.size()));
  CHECK(p.padded_entries % 32 == 0);
  CHECK(p.padded_entries >= a.nnz());
  // The entries' values are all there once (padding is zeros).
  CHECK(std::accumulate(p.val.begin(), p.val.end(), 0.0) ==
        ceiling_test::Rel(std::accumulate(a.val.begin(), a.val.end(), 0.0)).epsilon(1e-12));
  std::set<std::int32_t> rows;
  for (const auto r : p.rows)
    if (r >= 0) CHECK(rows.insert(r).second);  // each normal row once
  // Rows above 256 nnz are long: 5000, 20000 and 1025 (groups of 8 slices of 256 -> 2048 per group).
  REQUIRE(p.long_rows.size() == 3);
  CHECK(p.long_rows[0].pieces == 3);
  CHECK(p.long_rows[1].pieces == 10);
  CHECK(p.long_rows[2].pieces == 1);
  CHECK(rows.size() + 3 == static_cast<size_t>(a.rows));
  // Long groups first; inside a window the normal groups are sorted longest first.
  CHECK(p.groups.front().long_index >= 0);
  int prev = 1 << 30;
  bool sorted = true;
  for (const auto& g : p.groups) {
    if (g.long_index >= 0) continue;
    sorted &= g.steps <= prev;
    prev = g.steps;
  }
  CHECK(sorted);  // the matrix is one window (3353 rows < 8192)
  // Eq. 9: Q = (nnz + m + n) 8 + index_count 4 + padded zeros 8, index_count = padded columns +
  // 8 ids per normal group + 4 per group record + 3 per long row.
  size_t normal = 0;
  for (const auto& g : p.groups) normal += g.long_index < 0;
  CHECK(p.index_count() == ceiling_test::Rel(static_cast<double>(p.padded_entries + 8 * normal + 4 * p.groups.size() + 9)));
  const KernelModel tc = kernels::tensor_core_spmv_model(a, p);
  const KernelModel cc = spmv_csr_model(a.rows, a.cols, static_cast<double>(a.nnz()), 4);
  CHECK(tc.kind == "spmv-csr");
  CHECK(tc.work_flop == cc.work_flop);
  CHECK(tc.traffic_bytes == ceiling_test::Rel((static_cast<double>(a.nnz()) + a.rows + a.cols) * 8 + 4 * p.index_count() +
                                            8 * static_cast<double>(p.padded_entries - a.nnz())));
  CHECK(tc.traffic_bytes > cc.traffic_bytes);  // padding is never free
}

TEST_CASE("a matrix of rows of exactly 4 (or 8) entries packs without padding") {
  const CsrMatrix a = matrix_with_rows(std::vector<int>(64, 4), 500);
  const kernels::TcPlan p = kernels::plan_tensor_core(a);
  CHECK(p.padded_entries == a.nnz());
  CHECK(p.packed_zero_count() == 0);
  const CsrMatrix b = matrix_with_rows(std::vector<int>(64, 1), 500);  // 1 per row: 3 zeros per entry
  CHECK(kernels::plan_tensor_core(b).packed_zero_count() == 3.0 * static_cast<double>(b.nnz()));
}

// ---- the sweep with test-only SpMV variants -----------------------------------------------------

namespace {

class FakeSpmv final : public kernels::KernelInstance {
 public:
  explicit FakeSpmv(const KernelParams& p) : a_(registered_matrix(static_cast<int>(p.at("matrix_id")))) {}
  void randomize(std::uint64_t seed) override { seed_ = seed; }
  void poison_output() override { y_.assign(static_cast<size_t>(a_->rows), std::nan("")); }
  void launch(kernels::Stream) override {
    x_ = x_for(*a_);
    spmv_reference(*a_, x_.data(), y_.data());
  }
  kernels::Verification verify() override {
    std::vector<double> ref(static_cast<size_t>(a_->rows));
    spmv_reference(*a_, x_.data(), ref.data());
    return kernels::check_normwise(y_, [&](long long i) { return static_cast<long double>(ref[static_cast<size_t>(i)]); },
                                   1e-12);
  }
  long long output_elements() const override { return a_->rows; }

 private:
  std::shared_ptr<const CsrMatrix> a_;
  std::vector<double> x_, y_;
  std::uint64_t seed_ = 0;
};

kernels::KernelVariant fake_spmv(ComputeUnit unit, const std::string& impl) {
  kernels::KernelVariant v;
  v.kind = "spmv-csr";
  v.implementation = impl;
  v.unit = unit;
  v.precision = Precision::fp64;
  v.description = "fake " + impl;
  if (unit == ComputeUnit::tensor_core) {
    v.tensor_core_fraction = 1.0 / 8;
    v.adjust_model = [](const KernelParams& p, KernelModel) {
      const auto a = registered_matrix(static_cast<int>(p.at("matrix_id")));
      return kernels::tensor_core_spmv_model(*a, kernels::plan_tensor_core(*a));
    };
  }
  v.create = [](const KernelParams& p, const kernels::RunContext&) -> std::unique_ptr<kernels::KernelInstance> {
    return std::make_unique<FakeSpmv>(p);
  };
  return v;
}

const kernels::Registrar fake_ours{fake_spmv(ComputeUnit::cuda_core, "test-ours")};
const kernels::Registrar fake_vendor{fake_spmv(ComputeUnit::cuda_core, "test-vendor")};
const kernels::Registrar fake_tc{fake_spmv(ComputeUnit::tensor_core, "test-tc")};

HardwareDescriptor spmv_descriptor() {
  HardwareDescriptor hw;
  hw.id = "synthetic-spmv";
  hw.identity.name = "Synthetic GPU";
  auto& dram = hw.memory[MemoryLevelKind::dram];
  dram.bandwidth.dimension = Dimension::bytes_per_second;
  dram.bandwidth.spec = SpecValue{4.0e12, "test"};
  auto& l2 = hw.memory[MemoryLevelKind::l2];
  l2.bandwidth.dimension = Dimension::bytes_per_second;
  l2.bandwidth.spec = SpecValue{10.0e12, "test"};
  l2.capacity.dimension = Dimension::bytes;
  l2.capacity.spec = SpecValue{1.0e6, "test"};  // 1 MB: the small matrix fits half, the larger does not
  Field cc{Dimension::flop_per_second};
  cc.spec = SpecValue{34.0e12, "test"};
  Field tc{Dimension::flop_per_second};
  tc.spec = SpecValue{67.0e12, "test"};
  hw.compute[ComputeUnit::cuda_core][Precision::fp64] = cc;
  hw.compute[ComputeUnit::tensor_core][Precision::fp64] = tc;
  return hw;
}

}  // namespace

TEST_CASE("validate --kernels spmv: one point per registered matrix, three implementations, paired per baseline") {
  clear_registered_matrices();
  register_matrix(std::make_shared<CsrMatrix>(matrix_with_rows(std::vector<int>(2000, 3), 2000, "small")));
  register_matrix(std::make_shared<CsrMatrix>(mixed()));
  const auto variants = kernels::select_variants({"spmv"});  // "spmv" selects the spmv-csr kind
  std::set<std::string> impls;
  for (const auto* v : variants) {
    CHECK(v->kind == "spmv-csr");
    impls.insert(v->implementation);
  }
  CHECK(impls.count("test-ours"));
  CHECK(impls.count("test-vendor"));
  CHECK(impls.count("test-tc"));
  std::vector<const kernels::KernelVariant*> mine;
  for (const auto* v : variants)
    if (v->implementation.rfind("test-", 0) == 0) mine.push_back(v);
  REQUIRE(mine.size() == 3);
  CHECK(mine[2]->name() == "spmv-csr.fp64.tensor_core.test-tc");
  CHECK(mine[2]->model({{"m", 2000}, {"n", 2000}, {"nnz", 6000}, {"matrix_id", 0}}).tensor_core_fraction == 1.0 / 8);

  // KIND:IMPL and KIND:UNIT narrow the selection.
  const auto ours_only = kernels::select_variants({"spmv:test-ours"});
  REQUIRE(ours_only.size() == 1);
  CHECK(ours_only[0]->implementation == "test-ours");
  const auto two = kernels::select_variants({"spmv-csr:test-ours", "spmv:test-tc"});
  REQUIRE(two.size() == 2);
  CHECK(two[1]->unit == ComputeUnit::tensor_core);
  for (const auto* v : kernels::select_variants({"spmv:tensor_core"})) CHECK(v->unit == ComputeUnit::tensor_core);
  const std::string err = test::message_of([] { kernels::select_variants({"spmv:nope"}); });
  CHECK(err.find("unknown kernel 'spmv:nope'") != std::string::npos);
  CHECK(err.find("spmv-csr:test-ours") != std::string::npos);

  const HardwareDescriptor hw = spmv_descriptor();
  kernels::Sweep sweep;
  sweep.l2_bytes = kernels::sweep_l2_bytes(hw);
  sweep.sizes.push_back(kernels::parse_size_request("64MiB"));  // ignored: SpMV is sized by its matrices
  const kernels::Measurer fake = [&](const kernels::MeasureRequest& req) {
    auto inst = req.variant->create(req.params, req.context);
    inst->randomize(req.seed);
    inst->poison_output();
    inst->launch(nullptr);
    const kernels::Verification v = inst->verify();
    REQUIRE(v.ok);
    // ours at 80% of the DRAM spec, the vendor at 70%, tensor cores at 75% of their own (larger) Q.
    const double share = req.variant->implementation == "test-ours" ? 0.8 : req.variant->implementation == "test-vendor" ? 0.7 : 0.75;
    kernels::MeasureResult r;
    const double t = req.model.traffic_bytes / (share * (req.context.in_l2 ? 10.0e12 : 4.0e12));
    r.time = {t, t, t, 0.001, 20, 1};
    return r;
  };
  const validation::ValidationReport rep = kernels::run_validation(hw, mine, sweep, fake);
  REQUIRE(rep.results.size() == 6);
  for (const auto& r : rep.results) {
    CAPTURE(r.implementation);
    CHECK((r.label == "small" || r.label == "mixed"));
    CHECK(r.size.count("matrix_id"));
    CHECK(r.kernel == "spmv-csr");
    if (r.variant == "tensor_core") CHECK(r.traffic_bytes > spmv_csr_model(r.size.at("m"), r.size.at("n"), r.size.at("nnz")).traffic_bytes);
  }
  // Two CUDA-core baselines per matrix, each paired with the tensor-core result.
  REQUIRE(rep.speedups.size() == 4);
  for (const auto& s : rep.speedups) {
    CHECK(s.tensor_core_implementation == "test-tc");
    CHECK((s.cuda_core_implementation == "test-ours" || s.cuda_core_implementation == "test-vendor"));
    CHECK(!s.label.empty());
    CHECK(s.alpha == ceiling_test::Rel(67.0 / 8 / 34.0));  // the tensor-core fraction 1/8 survives the variant's own Q
  }
  std::set<std::string> baselines;
  for (const auto& g : rep.geomeans) baselines.insert(g.cuda_core_implementation);
  CHECK(baselines == std::set<std::string>{"test-ours", "test-vendor"});
  const std::string table = validation::format_table(rep);
  CHECK(table.find("CC:test-vendor") != std::string::npos);
  CHECK(table.find("mixed") != std::string::npos);
  // The results file keeps the implementation and the label.
  const validation::ValidationReport back = validation::from_json(nlohmann::json::parse(validation::to_json(rep).dump()));
  REQUIRE(back.results.size() == 6);
  CHECK(back.results[0].implementation == rep.results[0].implementation);
  CHECK(back.results[0].label == rep.results[0].label);
  CHECK(back.speedups[0].cuda_core_implementation == rep.speedups[0].cuda_core_implementation);
  CHECK(back.geomeans[0].cuda_core_implementation == rep.geomeans[0].cuda_core_implementation);
  clear_registered_matrices();
}

TEST_CASE("a plan's launch text names its blocks by kind (the results' description)") {
  const CsrMatrix a = mixed();
  kernels::CsrPlanOptions v_plan;
  v_plan.chunks = 1;
  const kernels::CsrPlan p = kernels::plan_csr(a, v_plan);
  const std::string t = kernels::plan_text(p);
  INFO(t);
  // 5000 -> 2 pieces, 20000 -> 5, 1025 -> 1: 3 long rows in 8 blocks above the 256 threshold.
  CHECK(t.find("3 long rows (> 256 nnz) in 8 blocks") != std::string::npos);
  CHECK(t.find("chunked") == std::string::npos);
  // Chunked (mixed()'s choice: its rows above 256 hold 46% of the entries): 1025 joins a stream item,
  // 5000 -> 2 pieces, 20000 -> 5 above the 2048 threshold.
  const kernels::CsrPlan c = kernels::plan_csr(a);
  CHECK(c.chunked);
  CHECK(kernels::plan_text(c).find(" chunked stream items (" + std::to_string(a.rows - 2) + " rows), 0 row items, 2 long rows (> 2048 nnz) in 7 blocks") !=
        std::string::npos);
  CHECK(t.rfind(std::to_string(p.items.size()) + " blocks: ", 0) == 0);
  CHECK(t.find(std::to_string(p.stream_rows) + " rows)") != std::string::npos);
  CHECK(p.stream_rows > 0);
  // Row items only: the lanes histogram is spelled out, 1 lane singular.
  kernels::CsrPlanOptions rows_only;
  rows_only.stream_max_lanes = 0;
  rows_only.chunks = 1;
  const kernels::CsrPlan r = kernels::plan_csr(matrix_with_rows(std::vector<int>(512, 1), 100, "ones"), rows_only);
  CHECK(kernels::plan_text(r) == "2 blocks: 0 stream items (0 rows), 2 row items (512 rows at 1 lane), 0 long rows (> 256 nnz) in 0 blocks");

  // Packed: 8 rows of 1..8 entries are one group 8 columns wide (a multiple of 4): 64 entries for 36.
  std::vector<int> eight;
  for (int l = 1; l <= 8; ++l) eight.push_back(l);
  const kernels::TcPlan tc = kernels::plan_tensor_core(matrix_with_rows(eight, 100, "eight"));
  CHECK(kernels::plan_text(tc) == "1 group of 8 rows or slices (0 of 0 long rows), 64 packed entries for 36 nnz (43.8% padding), a warp per group");
}
