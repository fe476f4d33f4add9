// Host-side plans of the SpMV variants (issue 10), plain C++ so the CPU tests check them and the
// tensor-core variant's model counts its own bytes (Eq. 9) from the same plan its kernel runs.
//
// CUDA-core CSR ("ours"): the rows are cut into work items, one thread block (256 threads) each.
//  - a stream item is a run of consecutive rows whose V would be <= stream_max_lanes, cut to at
//    most stream_nnz entries and block_threads rows (below);
//  - a row item is a run of consecutive rows whose mean length picks V lanes per row (1..32, the
//    power of two at or above the mean), so short rows get a thread or a few lanes and medium rows
//    a warp, and the y writes and row_ptr reads stay contiguous;
//  - a row longer than `long_row` nnz gets block items of at most `piece` nnz each; when a row has
//    several, each writes a partial sum and the last block to finish (an atomic counter) adds them
//    in order and writes y.
// Tensor-core ("dasp-like", in the spirit of DASP, SC'23): rows up to `tc_long_row` nnz are sorted
// by length (descending) inside windows of `tc_window` rows and packed 8 at a time into dense
// groups padded to a multiple of 4 columns; a warp multiplies a group with FP64 mma.m8n8k4, A = the
// 8 rows' values, B = x gathered at their columns, and reads the 8 dot products off D's diagonal.
// A longer row is cut into groups of 8 slices of the same row whose diagonal is summed (several
// groups per row: partial sums, last warp adds). Padding (zero values) and metadata are bytes the
// kernel reads, so they enter its Q.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/kernel_model.hpp"
#include "model/sparse_matrix.hpp"

namespace ceiling::kernels {

struct CsrWorkItem {
  std::int32_t a = 0, b = 0;  // row item: rows [a, b); long item: nnz [a, b) of row `row`
  std::int32_t lanes = 0;     // row item: lanes per row (1..32); stream item: -V (stream_lanes); long item: 0
  std::int32_t long_index = -1;  // long item: index into CsrPlan::long_rows
};
// A stream item (rows [a, b), at most `stream_nnz` entries and `block_threads` rows): the block loads
// the rows' entries as one contiguous range (consecutive lanes, consecutive entries), keeps the
// products in shared memory and V lanes per row add them (CSR-stream, Greathouse & Daga; V = the
// run's lanes per row, 1..stream_max_lanes, halved until the rows fit one pass: (b - a) V <=
// block_threads; stored as lanes = -V). With one thread per row (V = 1 for
// every run, until 2026-11-27) a row of the FEM matrices (50-70 entries) was a chain of as many
// dependent shared-memory loads while the block's other warps sat idle.
constexpr bool is_stream_item(std::int32_t lanes) { return lanes < 0; }
constexpr int stream_lanes(std::int32_t lanes) { return -lanes; }
constexpr std::int32_t kStreamItem = -1;  // a stream item summed by one thread per row
// A chunked stream item (CsrPlanOptions::chunks): rows [a, b) of any length up to the long-row
// threshold, their products summed by thread t over products [8t, 8t + 8) (a segmented sum: a row
// that starts in the chunk and ends past it adds the later chunks' partial sums, in order), so the
// sum takes as long for one row of 2000 entries as for 256 rows of 8.
constexpr std::int32_t kChunkStream = -64;
// Entries [begin, end) of a work item, one per item next to `items` (8 B each): a stream item starts
// its col/val loads from it without first reading row_ptr[a] and row_ptr[b] (a dependent load, cold
// from DRAM). With the work records prefetched into L2 ahead of their blocks (cold runs) this made
// the 16 out-of-L2 Table 2 matrices 1.044x faster (geomean, H200 GPU-f85db422; circuit5M, FullChip
// 1.12-1.13x); the ranges alone 0.993x, the prefetch alone 1.008x (NOTES "SpMV work records and
// chunked stream items").
struct EntryRange {
  std::int32_t begin = 0, end = 0;
};
struct LongRow {
  std::int32_t row = 0;
  std::int32_t first_slot = 0;  // partial-sum slots [first_slot, first_slot + pieces)
  std::int32_t pieces = 0;      // work items (CC) or groups (TC) of the row
  std::int32_t first_item = 0;  // its first work item (CC) or group (TC); they are consecutive
};
struct CsrPlanOptions {
  int block_threads = 256;
  // V = the power of two at or above mean / elements_per_lane (1..32): each lane keeps up to this
  // many entries' loads in flight. Measured on an H200 over the Table 2 suite (geomean of
  // cuSPARSE time / ours): 1 per lane 0.69 out of L2 (16-19% of the DRAM bound on the circuits
  // and web graphs), 4 per lane 0.95, 8 per lane 0.99. Binning the rows of irregular matrices by
  // length class (a row-id list, 4 B per row) instead of runs of consecutive rows was slower on
  // 10 of the 12 matrices with row-length cv > 1 and was dropped.
  int elements_per_lane = 8;
  // Rows above this get block items; 0: chosen per matrix, 8 x the mean row length within
  // [256, 1024]. Measured on an H200: 256 for every matrix made webbase-1M 1.8x and in-2004 1.13x
  // faster than 1024 but mip1 (mean 156) 1.34x slower.
  int long_row = 0;
  int piece = 4096;      // nnz per block item of a long row
  // Row-item rows = iterations x block_threads / V. One pass: each pass is a chain of dependent
  // loads (row_ptr, then col/val, then x), so passes in one block add latencies (measured on an
  // H100: 4 passes made an in-L2 mc2depi 5.0 us against 3.1 us for the tensor-core groups).
  int iterations = 1;
  // At most this many trips (of elements_per_lane x V entries) for the longest row of a row item:
  // V = max(the mean's V, the V that fits the longest row in max_trips); 0: no cap. A trip is a
  // dependent load chain, so one long row among short ones held its whole block: on an H200 over
  // Table 2 (generators with the originals' densest rows), geomean T(cuSPARSE)/T(ours) 0.877 with
  // no cap, 0.926 with 2, 0.967 with 4 (webbase-1M 0.48 -> 0.74).
  int max_trips = 4;
  // Runs whose V is at most this become stream items (0: none): with V = 1 or 2 a warp's loads of
  // col and val touch 16-32 rows' ranges and its x gathers 16-32 rows' columns; a stream item reads
  // both as consecutive entries (cuSPARSE's csrmv_v3 splits by nnz the same way).
  // Measured on an H100 over Table 2 (geomean T(cuSPARSE)/T(ours), out of L2 / all 21): 0 (none)
  // 0.928 / 0.937, <= 1: 0.942 / 0.974, <= 2: 0.967 / 0.996, <= 4: 0.997 / 1.022, <= 8: 1.055 /
  // 1.079, <= 16: 1.068 / 1.085, <= 32 (every run): 1.061 / 1.081 (mip1, mean 156, slower).
  int stream_max_lanes = 16;
  int stream_nnz = 2048;  // entries per stream item (block_threads x elements_per_lane)
  // Chunked stream items (kChunkStream): every row up to the long-row threshold (then stream_nnz
  // unless long_row is set) in items filled to block_threads rows or stream_nnz entries; no row
  // items, no V. 0: when the rows above the V plan's long-row threshold hold at least
  // chunk_long_share of the entries; 1: never; 2: always. On the irregular matrices the V plan gives
  // each row of 256-2048 entries a block of its own and cuts its stream items at every such row
  // (circuit5M: 108236 blocks, stream items 22% full). Every matrix chunked against the V plan, H200
  // GPU-305768b9 (GPU-2703ff26): circuit5M 1.30 (1.33), FullChip 1.16 (1.19), in-2004 1.12, eu-2005
  // 1.07 (1.08), scircuit 1.26 (1.28), ASIC_680k 1.01 (1.02), dc2 1.04 (1.12): long share 0.21-0.58;
  // the other 14 0.72-1.00 (mip1 0.91-1.00, webbase-1M 0.92-0.96: share 0.07 / 0.05; the even FEM
  // rows 0.82-0.93 and the in-L2 conf5_4x8x-10, rma10 0.72-0.76, where V lanes per row sum a row
  // without a search and smaller items fill more SMs). NOTES "SpMV work records and chunked stream items".
  int chunks = 0;
  double chunk_long_share = 0.15;
};
struct CsrPlan {
  std::vector<CsrWorkItem> items;
  std::vector<EntryRange> ranges;  // per item; a long item's is its own [a, b)
  int long_row = 0;  // the threshold used
  std::vector<LongRow> long_rows;
  std::int32_t partial_slots = 0;
  std::int64_t lane_histogram[6] = {};  // rows per V = 1, 2, 4, 8, 16, 32 (row items)
  std::int64_t stream_rows = 0;         // rows in stream items
  bool chunked = false;                 // stream items are kChunkStream (CsrPlanOptions::chunks)
  double metadata_bytes() const;         // items, their ranges, long rows: read by the kernel besides the CSR
  double long_share() const;  // share of the entries in long-row items
};
CsrPlan plan_csr(const CsrMatrix& a, const CsrPlanOptions& o = {});

struct TcGroup {
  std::int32_t step_begin = 0;  // first step: entries [32 step_begin, 32 (step_begin + steps))
  std::int32_t steps = 0;       // k-steps of 4 columns (one mma each)
  std::int32_t rows_at = 0;     // normal group: its 8 row ids at TcPlan::rows[rows_at .. +8) (-1: none)
  std::int32_t long_index = -1; // long group: index into TcPlan::long_rows
};
struct TcPlanOptions {
  int long_row = 256;   // longer rows are cut into groups of 8 slices
  int slice = 256;      // entries per slice of a long row (multiple of 4)
  int window = 8192;    // rows sorted by length inside windows of this many rows
};
struct TcPlan {
  std::vector<TcGroup> groups;          // long groups first (the longest work starts first)
  std::vector<std::int32_t> rows;       // 8 per normal group, -1 = padding row
  std::vector<double> val;              // 32 per step, laid out [step][row g][column t] (lane 4g+t)
  std::vector<std::int32_t> col;        // same layout; padding: value 0, column of the row's last entry
  std::vector<LongRow> long_rows;
  std::int32_t partial_slots = 0;
  std::int64_t nnz = 0, padded_entries = 0;  // padded_entries = val.size()
  // Eq. 9's counts: indices read (columns of every padded entry, row ids, group records) and
  // packed zeros (padding values), each as the kernel reads them.
  double index_count() const;
  double packed_zero_count() const { return static_cast<double>(padded_entries - nnz); }
};
TcPlan plan_tensor_core(const CsrMatrix& a, const TcPlanOptions& o = {});

// The tensor-core variant's model: Eq. 9 with the plan's index and padding counts (4-byte indices,
// 8-byte padded values), everything else as the CSR kind's model.
KernelModel tensor_core_spmv_model(const CsrMatrix& a, const TcPlan& plan, Precision p = Precision::fp64);

// What a plan launches, for the results' description (KernelInstance::launch_text): the CUDA-core
// plan's blocks by kind (stream items and their rows, row items' rows by lanes per row, long rows
// and their blocks); the packed plan's 8-row groups, long-row groups and padding share.
std::string plan_text(const CsrPlan& p);
std::string plan_text(const TcPlan& p);

// y = A x computed from a plan on the CPU, in plan order (tests: the plan covers every entry once).
void spmv_by_csr_plan(const CsrMatrix& a, const CsrPlan& plan, const double* x, double* y);
void spmv_by_tc_plan(const CsrMatrix& a, const TcPlan& plan, const double* x, double* y);

}  // namespace ceiling::kernels
