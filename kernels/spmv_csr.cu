// SpMV y = A x in CSR on CUDA cores, our kernel (issue 10; GPGPU'25 §3.2):
// W = 2 nnz, Q = (nnz + m + n) D + (nnz + m + 1) Iidx (Eq. 10, spmv_csr_model).
// Rows binned by length (kernels/spmv_plan.hpp plan_csr): one 256-thread block per work item; runs
// of rows with V <= 16 are stream items (CSR-stream: the rows' entries read as one contiguous range,
// products in shared memory, the run's V lanes per row add them); the rest are row items:
// a row item gives each row V = 1..32 lanes (the power of two at or above an eighth of the item's
// mean row length, raised so its longest row takes at most 4 trips: thread, sub-warp or warp per
// row), 8 entries' loads in flight per lane, x gathered
// through the read-only path, V-lane shuffle sums; a row above the long-row threshold (8 x the mean
// row length, within [256, 1024]) gets whole blocks of up to 4096 nnz each (block per row, or
// several blocks adding partial sums). Irregular matrices (long rows holding >= 15% of the entries)
// take chunked stream items instead: every row up to 2048 entries packed into full items, each
// thread summing 8 consecutive products (stream_chunk_item). The work-item list (16 B per block,
// + 8 B of entry range) and the long-row records are the only bytes read besides Eq. 10's (not in Q;
// at most 0.33% of Q on the Table 2 suite, webbase-1M: the bound leaves them out, so it errs fast).
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "spmv_common.cuh"
#include "spmv_plan.hpp"

namespace ceiling::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 8;  // = CsrPlanOptions::elements_per_lane
constexpr int kChunkPitch = kThreads + 4;  // a chunked stream item's products: 8 rows of this pitch

template <bool Streaming, int V>
__device__ __forceinline__ void rows_item(const int* __restrict__ rp, const int* __restrict__ col,
                                          const double* __restrict__ val, const double* __restrict__ x,
                                          double* __restrict__ y, int a, int b) {
  const int lane = threadIdx.x % V;
  const int slot = threadIdx.x / V;
  constexpr int kPer = kThreads / V;
  for (int base = a; base < b; base += kPer) {
    const int r = base + slot;
    double s = 0.0;
    if (r < b) {
      const int beg = rp[r], end = rp[r + 1];
      // kUnroll entries per lane per trip, every load issued before the first FMA (predicated at
      // the row's end): the plan picks V so that most rows take one trip.
      for (int j = beg + lane; j < end; j += kUnroll * V) {
        int c[kUnroll];
        double v[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const bool in = j + u * V < end;
          c[u] = in ? load_stream<Streaming>(&col[j + u * V]) : -1;
          v[u] = in ? load_stream<Streaming>(&val[j + u * V]) : 0.0;
        }
        double xv[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) xv[u] = c[u] >= 0 ? __ldg(&x[c[u]]) : 0.0;
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) s = fma(v[u], xv[u], s);
      }
    }
    if constexpr (V > 1) {
#pragma unroll
      for (int off = V / 2; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
    }
    if (r < b && lane == 0) y[r] = s;
  }
}

static_assert(kThreads * kUnroll == CsrPlanOptions{}.stream_nnz && kThreads == CsrPlanOptions{}.block_threads,
              "stream items fit the kernel's shared products");

// A stream item's loads: thread t the entries e0 + t + u kThreads, u < kUnroll, consecutive lanes
// consecutive entries, all issued together; past e1 the column is -1 (no product) and the value 0.
template <bool Streaming>
__device__ __forceinline__ void load_item_entries(const int* __restrict__ col, const double* __restrict__ val, int e0,
                                                  int e1, int (&c)[kUnroll], double (&v)[kUnroll]) {
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const int e = e0 + static_cast<int>(threadIdx.x) + u * kThreads;
    const bool in = e < e1;
    c[u] = in ? load_stream<Streaming>(&col[e]) : -1;
    v[u] = in ? load_stream<Streaming>(&val[e]) : 0.0;
  }
}

// Stream item: rows [a, b), entries [e0, e1) (at most kThreads rows and kThreads x kUnroll entries; the
// range comes with the item, so the entry loads wait on no row_ptr load): every thread loads
// kUnroll entries of the contiguous range, consecutive lanes consecutive entries, and leaves the
// products in shared memory; then V lanes per row add a row's products (lane l every V-th from the
// row's l-th, then a V-lane shuffle sum), kThreads / V rows per pass. V = 1: thread t adds row a + t.
template <bool Streaming, int V>
__device__ __forceinline__ void stream_item(const int* __restrict__ rp, const int* __restrict__ col,
                                            const double* __restrict__ val, const double* __restrict__ x,
                                            double* __restrict__ y, double* __restrict__ prod, int a, int b, int e0, int e1) {
  constexpr int kPer = kThreads / V;
  const int lane = static_cast<int>(threadIdx.x) % V, slot = static_cast<int>(threadIdx.x) / V;
  const int r0 = a + slot;
  const int rb0 = r0 < b ? rp[r0] : 0, re0 = r0 < b ? rp[r0 + 1] : 0;  // the first pass's rows, in flight with the entries
  int c[kUnroll];
  double v[kUnroll];
  load_item_entries<Streaming>(col, val, e0, e1, c, v);
#pragma unroll
  for (int u = 0; u < kUnroll; ++u)
    if (c[u] >= 0) prod[threadIdx.x + u * kThreads] = v[u] * __ldg(&x[c[u]]);
  __syncthreads();
  for (int base = a; base < b; base += kPer) {  // the same trips in every thread: the shuffles see all lanes
    const int r = base + slot;
    const int rb = base == a ? rb0 : (r < b ? rp[r] : 0), re = base == a ? re0 : (r < b ? rp[r + 1] : 0);
    double s = 0.0;
    for (int e = rb + lane; e < re; e += V) s += prod[e - e0];
    if constexpr (V > 1) {
#pragma unroll
      for (int off = V / 2; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
    }
    if (r < b && lane == 0) y[r] = s;
  }
}

// Chunked stream item (kChunkStream): rows [a, b), entries [e0, e1) of any row lengths (each at most
// kThreads x kUnroll). The entries' products land in shared memory as in stream_item; then thread t
// sums products [8t, 8t + 8): a row that ends in the chunk and started in it is written by t; the
// part of a row that started in an earlier chunk goes to head[t]; a row that starts in t's chunk and
// ends past it is written by t after the barrier, adding head[] of the chunks it spans in order
// (deterministic). Every thread sums 8 products whatever the rows' lengths.
template <bool Streaming>
__device__ __forceinline__ void stream_chunk_item(const int* __restrict__ rp, const int* __restrict__ col,
                                                  const double* __restrict__ val, const double* __restrict__ x,
                                                  double* __restrict__ y, double* __restrict__ prod, int a, int b,
                                                  int e0, int e1) {
  __shared__ int ends[kThreads + 1];  // ends[i] = row_ptr[a + i] - e0, i = 0..b - a
  __shared__ double head[kThreads];
  const int t = static_cast<int>(threadIdx.x);
  const int nr = b - a, n = e1 - e0;
  int c[kUnroll];
  double v[kUnroll];
  load_item_entries<Streaming>(col, val, e0, e1, c, v);
  if (t < nr) ends[t] = rp[a + t] - e0;
  if (t == 0) ends[nr] = n;
  // Entry e's product at prod[(e % 8) kChunkPitch + e / 8]: thread t reads its chunk's k-th product at
  // k kChunkPitch + t (conflict-free), and the pitch 260 (= 4 mod 16 pairs of banks) keeps the stores
  // at two wavefronts too. (Stored at e, the reads at 8t + k met 16-way conflicts.)
#pragma unroll
  for (int u = 0; u < kUnroll; ++u)
    if (c[u] >= 0) prod[(t % kUnroll) * kChunkPitch + t / kUnroll + u * (kThreads / kUnroll)] = v[u] * __ldg(&x[c[u]]);
  __syncthreads();
  const int c0 = t * kUnroll, c1 = min(c0 + kUnroll, n);
  const int lo = t == 0 ? -1 : c0;  // thread 0 also closes the empty rows at entry 0
  int own = -1, own_end = 0;  // a row that starts here and ends past c1
  double own_s = 0.0;
  if (lo < n || (t == 0 && n == 0)) {
    // The first row whose end is past lo: first the row a uniform spread would put there (right
    // for the FEM matrices' even rows: two loads side by side), else a binary search.
    int i = nr > 0 ? min(nr - 1, static_cast<int>(static_cast<long long>(max(lo, 0)) * nr / max(n, 1))) : 0;
    if (nr > 0 && !(ends[i + 1] > lo && (i == 0 || ends[i] <= lo))) {
      int i0 = 0, i1 = nr;
      while (i0 < i1) {
        const int mid = (i0 + i1) / 2;
        if (ends[mid + 1] > lo) i1 = mid;
        else i0 = mid + 1;
      }
      i = i0;
    }
    double pk[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) pk[k] = c0 + k < c1 ? prod[k * kChunkPitch + t] : 0.0;
    int start = i < nr ? ends[i] : n, end = i < nr ? ends[i + 1] : n;  // row i's, in registers
    double s = 0.0;
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const int cc = c0 + k;
      if (cc < c1) {
        while (end <= cc) {  // row i ends before cc: close it
          if (start < c0) head[t] = s;
          else y[a + i] = s;
          s = 0.0;
          ++i;
          start = end;
          end = ends[i + 1];
        }
        s += pk[k];
      }
    }
    while (i < nr && end <= c1) {
      if (start < c0) head[t] = s;
      else y[a + i] = s;
      s = 0.0;
      ++i;
      start = end;
      end = i < nr ? ends[i + 1] : n;
    }
    if (i < nr && start < c1) {  // row i runs past the chunk
      if (start < c0) head[t] = s;
      else {
        own = i;
        own_s = s;
        own_end = end;
      }
    }
  }
  __syncthreads();
  if (own >= 0) {
    const int last = (own_end - 1) / kUnroll;
#pragma unroll 4
    for (int q = t + 1; q <= last; ++q) own_s += head[q];
    y[a + own] = own_s;
  }
}

// 6 blocks per SM (at most 40 registers; ptxas spills ~200 B): measured on an H200 over Table 2 with
// max_trips 4, geomean T(cuSPARSE)/T(ours) 0.966 (out of L2 0.924) against 0.967 (0.895) with the
// compiler's 56 registers (4 blocks per SM). 8 blocks per SM (32 registers, 600 B of spills): 0.58.
// Again with the chunked items and work ranges (H200 GPU-8590ff01, 2026-11-28; 6 blocks spill 160-268 B):
// 5 blocks per SM (48 registers, <= 32 B of spills) 0.975x out of L2 / 0.944x in L2, 4 blocks 0.910x / 0.950x;
// a second 6-block run within 0.2%. 7 blocks would get 32 registers and 556-696 B of spills (not run).
// Cold runs (Streaming: the matrix does not fit the L2) prefetch the work records of the block
// kPrefetchAhead places on into L2 (one prefetch per 128-byte line of items: every 8th block; its
// ranges: every 16th), so a block's first load, the one every other load waits on, is an L2 hit
// instead of a DRAM miss. In-L2 runs skip it (0.96x there: the records are L2 hits already).
constexpr unsigned kPrefetchAhead = 1024;

template <bool Streaming>
__global__ void __launch_bounds__(kThreads, 6)
    spmv_csr_binned(const int4* __restrict__ items, const int2* __restrict__ ranges, const int4* __restrict__ long_rows,
                    const int* __restrict__ rp, const int* __restrict__ col, const double* __restrict__ val,
                    const double* __restrict__ x, double* __restrict__ y, double* __restrict__ partial,
                    unsigned* __restrict__ counter) {
  if constexpr (Streaming) {
    const unsigned ahead = blockIdx.x + kPrefetchAhead;
    if (threadIdx.x == 0 && ahead < gridDim.x) {
      if (blockIdx.x % 8 == 0) asm volatile("prefetch.global.L2 [%0];" ::"l"(items + ahead));
      if (blockIdx.x % 16 == 0) asm volatile("prefetch.global.L2 [%0];" ::"l"(ranges + ahead));
    }
  }
  const int4 it = items[blockIdx.x];  // {a, b, lanes, long_index}
  const int2 er = ranges[blockIdx.x];  // entries [e0, e1)
  if (it.w >= 0) {
    double s = 0.0;
    for (int j = it.x + static_cast<int>(threadIdx.x); j < it.y; j += kThreads * kUnroll) {
      int c[kUnroll];
      double v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const bool in = j + u * kThreads < it.y;
        c[u] = in ? load_stream<Streaming>(&col[j + u * kThreads]) : 0;
        v[u] = in ? load_stream<Streaming>(&val[j + u * kThreads]) : 0.0;
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) s = fma(v[u], __ldg(&x[c[u]]), s);
    }
    s = block_sum<kThreads>(s);
    const int4 lr = long_rows[it.w];  // {row, first_slot, pieces, first_item}
    if (lr.z == 1) {
      if (threadIdx.x == 0) finish_piece(s, lr.x, lr.y, lr.z, static_cast<int>(blockIdx.x) - lr.w, partial, counter, it.w, y);
      return;
    }
    // Several pieces: the last block to arrive adds every piece's partial sum with all its threads
    // (thread t the slots t, t + 256, ..., then the block sum: a fixed order), not thread 0 alone
    // (FullChip's densest row has 565 pieces: a chain of 565 L2 loads in one thread). H200 GPU-75f404f5,
    // in one process against thread 0's sum, twice: FullChip 1.085x, dc2 1.055x, the rest within 1%.
    __shared__ unsigned arrived;
    if (threadIdx.x == 0) {  // finish_piece's arrival (spmv_common.cuh), its count kept for the whole block
      partial[lr.y + static_cast<int>(blockIdx.x) - lr.w] = s;
      __threadfence();
      arrived = atomicAdd(&counter[it.w], 1u);
    }
    __syncthreads();
    if (arrived != static_cast<unsigned>(lr.z - 1)) return;
    __threadfence();
    double t = 0.0;
    for (int q = static_cast<int>(threadIdx.x); q < lr.z; q += kThreads) t += __ldcg(&partial[lr.y + q]);
    t = block_sum<kThreads>(t);
    if (threadIdx.x == 0) {
      y[lr.x] = t;
      counter[it.w] = 0;  // ready for the next launch (kernel boundaries order it)
    }
    return;
  }
  __shared__ double prod[kUnroll * kChunkPitch];  // a stream item's products (one array for every V)
  switch (it.z) {
    case kChunkStream: stream_chunk_item<Streaming>(rp, col, val, x, y, prod, it.x, it.y, er.x, er.y); break;
    case -1: stream_item<Streaming, 1>(rp, col, val, x, y, prod, it.x, it.y, er.x, er.y); break;
    case -2: stream_item<Streaming, 2>(rp, col, val, x, y, prod, it.x, it.y, er.x, er.y); break;
    case -4: stream_item<Streaming, 4>(rp, col, val, x, y, prod, it.x, it.y, er.x, er.y); break;
    case -8: stream_item<Streaming, 8>(rp, col, val, x, y, prod, it.x, it.y, er.x, er.y); break;
    case -16: stream_item<Streaming, 16>(rp, col, val, x, y, prod, it.x, it.y, er.x, er.y); break;
    case -32: stream_item<Streaming, 32>(rp, col, val, x, y, prod, it.x, it.y, er.x, er.y); break;
    case 1: rows_item<Streaming, 1>(rp, col, val, x, y, it.x, it.y); break;
    case 2: rows_item<Streaming, 2>(rp, col, val, x, y, it.x, it.y); break;
    case 4: rows_item<Streaming, 4>(rp, col, val, x, y, it.x, it.y); break;
    case 8: rows_item<Streaming, 8>(rp, col, val, x, y, it.x, it.y); break;
    case 16: rows_item<Streaming, 16>(rp, col, val, x, y, it.x, it.y); break;
    default: rows_item<Streaming, 32>(rp, col, val, x, y, it.x, it.y); break;
  }
}

static_assert(sizeof(CsrWorkItem) == sizeof(int4) && sizeof(LongRow) == sizeof(int4) && sizeof(EntryRange) == sizeof(int2));

// launch_config (hidden parameter; the GPU test checks each): 0 the plan's choice, 1 the V-lane plan
// (stream items summed by V lanes per row, row items), 2 chunked stream items (CsrPlanOptions::chunks).
CsrPlanOptions options_for(const KernelParams& params) {
  CsrPlanOptions o;
  const auto pinned = params.find("launch_config");
  const int config = pinned == params.end() ? 0 : static_cast<int>(pinned->second);
  if (config < 0 || config > 2)
    throw std::invalid_argument("spmv-csr ours: no launch configuration " + std::to_string(config) +
                                " (0: the plan's choice, 1: lanes per row, 2: chunked stream items)");
  o.chunks = config;
  return o;
}

class CsrOursInstance final : public SpmvInstanceBase {
 public:
  CsrOursInstance(const KernelParams& params, const RunContext& ctx)
      : SpmvInstanceBase(params),
        plan_(plan_csr(*a_, options_for(params))),
        cold_(!ctx.in_l2),
        rp_(upload(a_->row_ptr)),
        col_(upload(a_->col)),
        val_(upload(a_->val)),
        items_(plan_.items.size()),
        ranges_(plan_.ranges.size()),
        long_rows_(plan_.long_rows.size()),
        partial_(static_cast<size_t>(std::max(plan_.partial_slots, 1))),
        counter_(std::max<size_t>(plan_.long_rows.size(), 1)) {
    CUDA_CHECK(cudaMemcpy(items_.data(), plan_.items.data(), items_.bytes(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(ranges_.data(), plan_.ranges.data(), ranges_.bytes(), cudaMemcpyHostToDevice));
    if (!plan_.long_rows.empty())
      CUDA_CHECK(cudaMemcpy(long_rows_.data(), plan_.long_rows.data(), long_rows_.bytes(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(counter_.data(), 0, counter_.bytes()));
  }
  std::string launch_text() const override { return plan_text(plan_); }
  void launch(Stream s) override {
    const auto grid = static_cast<unsigned>(plan_.items.size());
    const auto* items = reinterpret_cast<const int4*>(items_.data());
    const auto* lrs = reinterpret_cast<const int4*>(long_rows_.data());
    const auto* ranges = reinterpret_cast<const int2*>(ranges_.data());
    if (cold_)
      spmv_csr_binned<true><<<grid, kThreads, 0, s>>>(items, ranges, lrs, rp_.data(), col_.data(), val_.data(), x_.data(),
                                                       y_.data(), partial_.data(), counter_.data());
    else
      spmv_csr_binned<false><<<grid, kThreads, 0, s>>>(items, ranges, lrs, rp_.data(), col_.data(), val_.data(), x_.data(),
                                                        y_.data(), partial_.data(), counter_.data());
    CUDA_CHECK_LAUNCH();
  }

 private:
  CsrPlan plan_;
  bool cold_;
  gpu::DeviceBuffer<int> rp_, col_;
  gpu::DeviceBuffer<double> val_;
  gpu::DeviceBuffer<CsrWorkItem> items_;
  gpu::DeviceBuffer<EntryRange> ranges_;
  gpu::DeviceBuffer<LongRow> long_rows_;
  gpu::DeviceBuffer<double> partial_;
  gpu::DeviceBuffer<unsigned> counter_;
};

KernelVariant csr_ours() {
  KernelVariant v;
  v.kind = "spmv-csr";
  v.implementation = "ours";
  v.unit = ComputeUnit::cuda_core;
  v.precision = Precision::fp64;
  v.description = "CSR, runs of rows: up to 2048 entries read contiguously and summed per row from shared memory by the "
                  "run's lanes per row where they would be <= 16, else up to 32 lanes per row; block(s) per row above 8 x "
                  "mean nnz in [256, 1024]";
  v.create = [](const KernelParams& params, const RunContext& ctx) -> std::unique_ptr<KernelInstance> {
    return std::make_unique<CsrOursInstance>(params, ctx);
  };
  v.sass = {{"spmv_csr_binned", "DFMA", "DMMA"}};
  return v;
}

const Registrar spmv_csr_ours{csr_ours()};

}  // namespace
}  // namespace ceiling::kernels
