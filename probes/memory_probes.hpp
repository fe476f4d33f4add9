// Memory probes (P-chase latency, footprint/TLB sweeps, DRAM/L2/L1/shared bandwidth): the
// measurement building blocks, exposed so GPU tests can run them on tiny configurations.
// Every function verifies what its kernels read or wrote and throws std::runtime_error if not.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "../gpu/gpu.hpp"
#include "../gpu/power.hpp"

namespace ceiling::probes::mem {

// ---- pointer chase ----
enum class ChaseMode { ca, cg, shared, tlb };  // tlb: ld.cg, one element per `stride` (a page)
std::string to_string(ChaseMode);

// Who brings a cg ring into the L2 before the chase: the chasing SM (every thread of its block
// reads each element once) or all SMs (a grid-wide read; data shared by every SM).
// cg warm-up: this_sm reads every element once in address order; ring_order reads them in the
// ring's own order (positions 0..n-1), so the chase that follows from position 0 meets the
// least recently used element first: what a cyclic chase sees in steady state (every element a
// miss once the ring exceeds what the chasing SM's L2 holds); all_sms: every SM reads the ring.
enum class WarmScope { this_sm, ring_order, all_sms };

struct ChaseSpec {
  ChaseMode mode = ChaseMode::cg;
  std::size_t footprint_bytes = 1 << 20;  // elements = footprint / stride
  std::size_t stride_bytes = 32;          // >= 32: every element in its own sector
  long long steps = 4096;                 // timed dependent loads (rounded up to a multiple of 8)
  long long warm_steps = -1;              // -1: one full lap (ca, shared, tlb) or a grid-wide read (cg)
  bool cold = false;                      // flush L2 first, no warm-up (DRAM latency)
  std::uint32_t seed = 1;
  WarmScope warm = WarmScope::this_sm;    // cg only
  std::uint32_t lines_per_page = 0;       // tlb only: lines of each page the laps visit; 0: enough for >= 4096 elements (<= 512)
};

struct ChaseSample {
  double cycles_per_load = 0;
  double sm_clock_hz = 0;  // clock64 over %globaltimer during the timed loop
  std::size_t elements = 0;
};

// Owns a device buffer and runs chases in it (one random single-cycle ring per spec).
class PointerChase {
 public:
  explicit PointerChase(std::size_t capacity_bytes);
  std::size_t capacity() const { return buffer_.bytes(); }
  ChaseSample run(const ChaseSpec& spec);

 private:
  gpu::DeviceBuffer<unsigned char> buffer_;
  gpu::DeviceBuffer<long long> out_;
};

// Host copy of the ring order (for tests): element visited at position k of the ring.
std::uint32_t ring_element(std::uint64_t k, std::uint32_t n, std::uint32_t seed);

// ---- bandwidth ----
enum class StreamPattern { read, write, copy, scale, triad };
std::string to_string(StreamPattern);
int arrays_touched(StreamPattern);  // bytes moved per element = 16 * arrays_touched

struct LaunchConfig {
  int blocks_per_sm = 1;
  int threads = 256;
  int unroll = 1;  // independent 16-byte accesses per thread in flight: 1, 2, 4 or 8; stream
                   // kernels also 0: one access per thread, no loop (a grid over the array)
  // Stream kernels: 0 = ld/st .cs (evict-first), 1 = ld.nc with an L2 256-byte prefetch hint and
  // plain stores, 2 = plain ld.nc / st, 3 = plain ld / st.
  int flavor = 0;
  // L2 kernel: 0 = each block re-reads its own slice, 1 = every block strides over the whole
  // buffer (lines shared by all SMs), 2 = many short blocks, one contiguous chunk each.
  // Stream kernels: 0 = a thread's accesses blockDim apart, 1 = each warp's accesses side by side
  // (unroll 2-8, flavors 2-3; the warm ramp's extra candidates).
  // L2 flavors: 0 = ld.cg, 1 = ld.nc.L1::no_allocate.
  int layout = 0;
  std::string str() const;     // stream kernels
  std::string l2_str() const;  // L2 kernel
};

struct BandwidthResult {
  LaunchConfig config;
  double bytes_per_run = 0;
  gpu::Timing timing;
  std::vector<LaunchConfig> tried;
};

// DRAM stream over arrays of `elements` 16-byte items; searches `candidates` (few repeats each),
// then times the best with `opt` and verifies its output (poisoned first) or checksum.
// With `power` (calibrate --power): the verified best configuration runs again back to back under
// the NVML energy counter into *power_out.
BandwidthResult stream_bandwidth(StreamPattern p, std::size_t elements, const std::vector<LaunchConfig>& candidates,
                                 const gpu::TimingOptions& opt, int search_repeats = 5,
                                 gpu::PowerMeter* power = nullptr, gpu::PowerReading* power_out = nullptr);

// All SMs re-reading a buffer of `buffer_bytes` with ld.cg, `passes` times per launch; each block
// re-reads its own slice (so each line lives in the L2 partition next to the SM reading it).
// final_passes > 0: the search's launches take `passes`, the timed best one `final_passes` (a
// longer launch: less of its time is the launch's ramp and tail).
BandwidthResult l2_bandwidth(std::size_t buffer_bytes, int passes, const std::vector<LaunchConfig>& candidates,
                             const gpu::TimingOptions& opt, int search_repeats = 5,
                             gpu::PowerMeter* power = nullptr, gpu::PowerReading* power_out = nullptr,
                             int final_passes = 0);

// Per-SM bytes per clock: one 1024-thread block per SM re-reading `window_bytes` through L1
// (ld.ca) or shared memory, `iterations` times; cycles from clock64 inside each block.
struct PerSmBandwidth {
  std::vector<double> bytes_per_clock;  // one per repeat: median over SMs
  std::vector<double> sm_clock_hz;      // one per repeat
};
PerSmBandwidth l1_bandwidth_per_sm(int iterations, int repeats);
PerSmBandwidth shared_bandwidth_per_sm(int iterations, int repeats);

std::vector<LaunchConfig> default_stream_candidates(bool quick);

// ---- ramp (issue 12): the least time to move a working set, timed as validate times kernels ----
enum class RampTiming {
  cold,  // L2 evicted clean before each repeat, CUDA events around one launch (validate's DRAM sizes)
  warm,  // back-to-back launches per timed region, per launch (validate's in-L2 sizes)
};
struct RampPoint {
  double working_set_bytes = 0;  // bytes touched = bytes moved (each array once)
  double min_s = 0;              // least repeat of the fastest configuration
  double median_s = 0;           // its median
  double cv = 0;
  int launches = 1;              // per timed region (warm)
  LaunchConfig config;
  int configs_tried = 0;
};
// For each element count (16-byte items per array), every candidate is timed briefly, the fastest
// by median is timed with `repeats`, and its output is checked (poisoned first) before it counts.
std::vector<RampPoint> stream_ramp(StreamPattern p, const std::vector<std::size_t>& elements, RampTiming timing,
                                   const std::vector<LaunchConfig>& candidates, int repeats, int search_repeats = 3);
std::vector<LaunchConfig> ramp_candidates(RampTiming timing, bool quick);

}  // namespace ceiling::probes::mem
