// The fleet view (issue 16): many descriptors of one GPU model side by side; per figure the
// distribution (median, robust spread, min/max), each GPU's deviation, and the outliers named with
// the figure and the size of the deviation. Pure C++: `ceiling report --fleet DIR` runs anywhere.
#pragma once
#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "descriptor.hpp"

namespace ceiling {

// One GPU of the fleet: its descriptor's measured figures by path, or why it could not be read.
struct FleetMember {
  std::string file;   // where it came from
  std::string id, uuid, model;  // the file's stem (else the descriptor id), identity.uuid, identity.name
  std::map<std::string, double> figures;  // path -> measured median (base units)
  std::string error;  // non-empty: the descriptor did not load, or the GPU failed (reported, not fatal)
  std::string node;   // the node descriptor (ceiling/node/1) that names this GPU, if any
  std::vector<std::string> problems;  // link paths that failed on this GPU (from its node descriptor)
};

// The figures of a descriptor that measure this GPU (measured medians only; spec values are the
// same for every GPU and say nothing about one): sm_clock, memory.<level>.{bandwidth,
// bandwidth_per_sm,latency,patterns.<p>}, compute.<unit>.<precision>, fixed_costs.*,
// tensor.<key>.{throughput,fma_per_clock_per_sm,latency}, and sm_clock.under_tensor_load (the
// lowest SM clock measured during a tensor-core throughput run: a clock that sags under load).
std::map<std::string, double> fleet_figures(const HardwareDescriptor& d);
// Whether a larger value of the figure is better (bandwidths, rates, clocks) or worse (latencies,
// launch costs).
bool fleet_higher_is_better(const std::string& path);

struct FleetStat {
  std::size_t n = 0;
  double median = 0, sigma = 0;  // sigma: 1.4826 x the median absolute deviation (robust)
  double min = 0, max = 0;
};

struct FleetOutlier {
  std::size_t member = 0;  // index into FleetReport::members
  std::string figure;
  double value = 0, median = 0;
  double deviation = 0;  // (value - median) / median
  double z = 0;          // (value - median) / sigma (robust); infinite when sigma is 0
  bool worse = true;     // on the bad side of the median for this figure
};

struct FleetGroup {
  std::string model;                       // identity.name
  std::vector<std::size_t> members;        // indices of the readable members of this model
  std::map<std::string, FleetStat> stats;  // per figure
  std::vector<FleetOutlier> outliers;      // worst first
};

struct FleetOptions {
  double z = 3;            // robust standard deviations from the median
  double min_deviation = 0.01;  // and at least this relative deviation (noise floors of the probes)
  bool worse_only = true;  // flag only the bad side (a GPU faster than its siblings is not a fault)
};

struct FleetReport {
  std::vector<FleetMember> members;
  std::vector<FleetGroup> groups;  // one per GPU model, largest first
  FleetOptions options;
  std::size_t unreadable() const;
};

// Loads every *.yaml under `dir` (recursively; `.probes.json` files are details, not descriptors)
// on `threads` threads (0: the hardware's count). A file that does not load becomes a member with
// its error; nothing else is lost. Throws std::runtime_error when `dir` is not a directory.
// Node descriptors (ceiling/node/1, written by calibrate --devices) join their GPUs' descriptors by
// UUID and add the link figures (add_node_figures); a GPU or a node that failed becomes a member
// with the node's name and the reason.
std::vector<FleetMember> load_fleet(const std::filesystem::path& dir, unsigned threads = 0);
FleetMember fleet_member(const HardwareDescriptor& d, const std::string& file);
struct NodeDescriptor;
// link.<path>.bandwidth / .latency of the GPU's host paths, and per pair path the slowest pair the
// GPU is part of (link.<path>.bandwidth_min, .latency_max): a degraded NVLink or PCIe link shows
// as an outlier. Failed paths go to `problems`.
void add_node_figures(FleetMember& m, const NodeDescriptor& n, int device);

FleetReport analyse_fleet(std::vector<FleetMember> members, const FleetOptions& opt = {});

// Text summary: per model the GPU count and the outliers; one line per outlier.
std::string fleet_summary(const FleetReport& r, std::size_t max_lines = 50);
// One row per GPU, sortable: file, id, uuid, model, outliers, worst figure, its deviation and z,
// then each figure's deviation from its model's median (%).
std::string fleet_csv(const FleetReport& r);
// Markdown: per model a table of every figure's distribution, then the outliers.
std::string fleet_markdown(const FleetReport& r);

}  // namespace ceiling
