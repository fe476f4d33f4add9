// Links between a node's GPUs and its host (issue 16): what a copy engine and what a kernel get
// over PCIe/C2C (host <-> device, pinned and pageable) and between GPU pairs (NVLink/NVSwitch with
// peer access, through the host without), the node descriptor `ceiling/node/1` that holds them
// next to the GPUs' descriptors, and the probe's driver. Pure C++: the driver talks to a
// LinkBackend (CUDA in probes/link_probe.cu, a simulated topology here for the CPU tests).
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ceiling {

// Transfers the probe times. Host paths involve one GPU; pair paths move data from one GPU to another.
enum class LinkPath {
  h2d_pinned,      // cudaMemcpyAsync host (page-locked) -> device, copy engine
  d2h_pinned,      // device -> host (page-locked)
  h2d_pageable,    // cudaMemcpy from ordinary (malloc) host memory: staged by the driver
  d2h_pageable,
  host_sm_read,    // a kernel reading mapped page-locked host memory (zero copy): what a kernel sees
  peer_ce,         // cudaMemcpyPeerAsync with peer access enabled: NVLink/NVSwitch or PCIe P2P
  staged_ce,       // cudaMemcpyPeerAsync with peer access disabled: through the host
  peer_sm_read,    // a kernel on `to` reading `from`'s memory through peer access
};
inline constexpr LinkPath kHostPaths[] = {LinkPath::h2d_pinned, LinkPath::d2h_pinned, LinkPath::h2d_pageable,
                                          LinkPath::d2h_pageable, LinkPath::host_sm_read};
inline constexpr LinkPath kPairPaths[] = {LinkPath::peer_ce, LinkPath::staged_ce, LinkPath::peer_sm_read};
std::string_view to_string(LinkPath p);
std::optional<LinkPath> parse_link_path(std::string_view s);
bool is_host_path(LinkPath p);
// One line on what the path measures (help, docs, reports).
std::string_view link_path_meaning(LinkPath p);

// One path's figures: bandwidth = large bytes / time of one large transfer, latency = the time of
// one small transfer (API call to completion, as a program sees it). Medians of `repeats`, with the
// best seen (the ceiling a bound may use). `error` non-empty: the path failed, the rest are 0.
struct LinkFigure {
  double bandwidth = 0, bandwidth_max = 0;  // bytes/s
  double latency_s = 0, latency_min_s = 0;
  int repeats = 0;
  std::string error;
  bool measured() const { return error.empty() && bandwidth > 0; }
};

struct HostLink {
  int device = 0;
  std::vector<std::pair<LinkPath, LinkFigure>> figures;  // in kHostPaths order; a path absent = not run
  const LinkFigure* find(LinkPath p) const;
};

struct PairLink {
  int from = 0, to = 0;      // data moves from `from`'s memory to `to` (peer_sm_read: a kernel on `to` reads `from`)
  bool peer_access = false;  // cudaDeviceCanAccessPeer(to, from)
  std::vector<std::pair<LinkPath, LinkFigure>> figures;
  const LinkFigure* find(LinkPath p) const;
};

struct NodeGpu {
  int device = 0;
  std::string name, uuid;
  std::string descriptor;  // file name relative to the node descriptor; empty when calibration failed
  std::string status = "ok";  // "ok" | "failed"
  std::string reason;         // why it failed
};

inline constexpr const char* kNodeSchema = "ceiling/node/1";

// The node descriptor: the GPUs of one host (their descriptors by file and UUID) and the link matrix.
struct NodeDescriptor {
  std::string schema = kNodeSchema;
  std::string tool_version;
  std::string node;  // host name (or the Slurm task's name)
  std::string date;  // ISO 8601 UTC
  std::string status = "ok";  // "ok" | "partial" (some GPU or link failed) | "failed" (nothing measured)
  std::string reason;         // for "failed": why (no driver, no GPU, ...)
  std::uint64_t large_bytes = 0, small_bytes = 0;  // the link probe's transfer sizes (0: links not probed)
  std::vector<NodeGpu> gpus;
  std::vector<HostLink> host_links;
  std::vector<PairLink> pairs;
  const HostLink* host_link(int device) const;
  const PairLink* pair(int from, int to) const;
};

// Strict YAML: unknown keys, wrong types, impossible values -> InputFileError "file:line:col: key: cause".
NodeDescriptor parse_node_descriptor(const std::string& yaml_text, const std::string& name_for_errors);
NodeDescriptor load_node_descriptor(const std::filesystem::path& file);
std::string to_yaml(const NodeDescriptor& n);
void save_node_descriptor(const NodeDescriptor& n, const std::filesystem::path& file);
// Whether a YAML text declares `schema: ceiling/node/1` (cheap: fleet loading sorts files by it).
bool is_node_descriptor_text(std::string_view yaml_text);

// ---- the probe's driver ----
struct LinkGpuInfo {
  std::string name, uuid;
};

class LinkBackend {
 public:
  virtual ~LinkBackend() = default;
  virtual int device_count() = 0;
  virtual LinkGpuInfo device(int d) = 0;
  // Whether a kernel on `to` can map `from`'s memory (cudaDeviceCanAccessPeer(to, from)).
  virtual bool can_access_peer(int from, int to) = 0;
  // Seconds of each of `repeats` transfers of `bytes` over `path` after one transfer whose
  // output was verified. Host paths: a = the GPU, b = -1. Pair paths: a = from, b = to.
  // Throws std::runtime_error (a failed copy, a wrong byte) with the cause.
  virtual std::vector<double> time_transfers(LinkPath path, int a, int b, std::uint64_t bytes, int repeats) = 0;
};

struct LinkProbeOptions {
  std::uint64_t large_bytes = std::uint64_t{256} << 20;
  std::uint64_t small_bytes = 8;
  int repeats = 20;
  bool pairs = true;  // the GPU pairs (n(n-1) ordered pairs)
  std::function<void(const std::string&)> progress;  // one line per path measured
};

struct LinkMeasurements {
  std::uint64_t large_bytes = 0, small_bytes = 0;
  std::vector<HostLink> host_links;
  std::vector<PairLink> pairs;
  double seconds = 0;
};

// Measures every host path of every device in `devices` and every path of every ordered pair among
// them. A path that throws is recorded with its error; the others go on.
LinkMeasurements measure_links(LinkBackend& backend, const std::vector<int>& devices, const LinkProbeOptions& opt);
// The figure from the times: median/best of large (bandwidth) and small (latency) transfers.
LinkFigure link_figure(const std::vector<double>& large_s, const std::vector<double>& small_s,
                       std::uint64_t large_bytes);

// A simulated node for the CPU tests and the Slurm self-test (CEILING_SIMULATED_NODE):
//   schema: ceiling/simulated-node/1
//   gpus: [{name: NVIDIA H200, uuid: GPU-...}, ...]
//   paths: {h2d_pinned: {bandwidth: 55 GB/s, latency: 2 us}, ...}   # defaults for every GPU / pair
//   peer_groups: [[0, 1, 2, 3], [4, 5, 6, 7]]   # peer access inside a group (absent: all pairs)
//   degraded: [{gpu: 3, path: h2d_pinned, factor: 0.5}, {from: 1, to: 2, path: peer_ce, factor: 0.25}]
//   broken: [{from: 2, to: 3, path: peer_sm_read, error: "..."}]
// Times are latency + bytes/bandwidth with a deterministic +-0.2% jitter.
std::unique_ptr<LinkBackend> load_simulated_node(const std::filesystem::path& file);

// ---- the model's "link" level ----
// A kernel on one GPU whose reads (a share of them) come over a link: from a peer's memory
// (peer_sm_read, else peer_ce) or from the host's page-locked memory (host_sm_read, else h2d_pinned).
struct LinkLevel {
  std::string name;             // e.g. "peer 1->0 (peer_sm_read)"
  double bandwidth = 0;         // bytes/s, median
  double bandwidth_max = 0;     // bytes/s, best seen (the tight bound's)
  double latency_s = 0;         // least small-transfer time (the tight bound's first byte)
  double read_fraction = 1;     // share of the kernel's read bytes that cross the link
  std::string provenance;
};
// "peer:FROM:TO" (a kernel on TO reads FROM's memory) or "host:GPU" -> the level from `node`.
// Throws std::runtime_error naming what is missing (no such pair, no peer access, path failed).
LinkLevel link_level(const NodeDescriptor& node, const std::string& spec, double read_fraction);

}  // namespace ceiling

namespace ceiling {
// Text tables: per GPU the host paths (bandwidth, latency), then one matrix per pair path
// (rows: from, columns: to), like nvbandwidth's. Empty string when nothing was probed.
std::string link_summary(const NodeDescriptor& n);
}  // namespace ceiling
