// Links, the node descriptor and the link probe's driver (issue 16). See link.hpp.
#include "link.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "descriptor.hpp"
#include "files.hpp"
#include "input_error.hpp"
#include "stats.hpp"
#include "units.hpp"

namespace ceiling {

std::string_view to_string(LinkPath p) {
  switch (p) {
    case LinkPath::h2d_pinned: return "h2d_pinned";
    case LinkPath::d2h_pinned: return "d2h_pinned";
    case LinkPath::h2d_pageable: return "h2d_pageable";
    case LinkPath::d2h_pageable: return "d2h_pageable";
    case LinkPath::host_sm_read: return "host_sm_read";
    case LinkPath::peer_ce: return "peer_ce";
    case LinkPath::staged_ce: return "staged_ce";
    case LinkPath::peer_sm_read: return "peer_sm_read";
  }
  return "?";
}

std::optional<LinkPath> parse_link_path(std::string_view s) {
  for (const LinkPath p : kHostPaths)
    if (to_string(p) == s) return p;
  for (const LinkPath p : kPairPaths)
    if (to_string(p) == s) return p;
  return std::nullopt;
}

bool is_host_path(LinkPath p) {
  return std::find(std::begin(kHostPaths), std::end(kHostPaths), p) != std::end(kHostPaths);
}

std::string_view link_path_meaning(LinkPath p) {
  switch (p) {
    case LinkPath::h2d_pinned: return "copy engine, page-locked host memory to the GPU";
    case LinkPath::d2h_pinned: return "copy engine, the GPU to page-locked host memory";
    case LinkPath::h2d_pageable: return "cudaMemcpy from ordinary host memory (the driver stages it)";
    case LinkPath::d2h_pageable: return "cudaMemcpy to ordinary host memory";
    case LinkPath::host_sm_read: return "a kernel reading mapped page-locked host memory (zero copy)";
    case LinkPath::peer_ce: return "copy engine between GPUs with peer access (NVLink/NVSwitch or PCIe P2P)";
    case LinkPath::staged_ce: return "copy between GPUs with peer access disabled (through the host)";
    case LinkPath::peer_sm_read: return "a kernel on the receiving GPU reading the other GPU's memory";
  }
  return "?";
}

namespace {
const LinkFigure* find_in(const std::vector<std::pair<LinkPath, LinkFigure>>& v, LinkPath p) {
  for (const auto& [q, f] : v)
    if (q == p) return &f;
  return nullptr;
}
}  // namespace

const LinkFigure* HostLink::find(LinkPath p) const { return find_in(figures, p); }
const LinkFigure* PairLink::find(LinkPath p) const { return find_in(figures, p); }

const HostLink* NodeDescriptor::host_link(int device) const {
  for (const auto& h : host_links)
    if (h.device == device) return &h;
  return nullptr;
}

const PairLink* NodeDescriptor::pair(int from, int to) const {
  for (const auto& p : pairs)
    if (p.from == from && p.to == to) return &p;
  return nullptr;
}

// ---------------------------------------------------------------------------------------------
// YAML
namespace {

constexpr int kMaxDevices = 1024;

struct NodeLoader {
  std::string file;

  [[noreturn]] void fail(const YAML::Mark& m, const std::string& key, const std::string& cause) const {
    const bool known = !m.is_null();
    throw InputFileError(file, known ? m.line + 1 : 0, known ? m.column + 1 : 0, key, cause);
  }

  // A mapping with only the allowed keys (empty `allowed`: any), duplicates refused.
  std::map<std::string, YAML::Node> mapping(const YAML::Node& n, const YAML::Mark& where, const std::string& path,
                                            const std::set<std::string>& allowed) const {
    if (!n.IsMap()) fail(n.IsDefined() && !n.IsNull() ? n.Mark() : where, path, "expected a mapping");
    std::map<std::string, YAML::Node> out;
    for (const auto& kv : n) {
      if (!kv.first.IsScalar()) fail(kv.first.Mark(), path, "keys are plain words");
      const std::string k = kv.first.Scalar();
      const std::string p = path.empty() ? k : path + "." + k;
      if (!allowed.empty() && !allowed.count(k)) {
        std::string list;
        for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        fail(kv.first.Mark(), p, "unknown key (expected one of " + list + ")");
      }
      if (!out.emplace(k, kv.second).second) fail(kv.first.Mark(), p, "given twice");
    }
    return out;
  }

  const YAML::Node& require(const std::map<std::string, YAML::Node>& m, const std::string& key, const YAML::Mark& where,
                            const std::string& path) const {
    const auto it = m.find(key);
    if (it == m.end()) fail(where, path.empty() ? key : path + "." + key, "missing");
    return it->second;
  }

  std::string scalar(const YAML::Node& n, const std::string& path) const {
    if (!n.IsScalar()) fail(n.Mark(), path, "expected a single value");
    return n.Scalar();
  }

  std::string text(const YAML::Node& n, const std::string& path, bool allow_empty = false) const {
    std::string s = scalar(n, path);
    if (s.size() > 4096) fail(n.Mark(), path, "longer than 4096 characters");
    if (!allow_empty && s.empty()) fail(n.Mark(), path, "empty");
    return s;
  }

  int integer(const YAML::Node& n, const std::string& path, int lo, int hi) const {
    const std::string s = scalar(n, path);
    std::size_t used = 0;
    long v = 0;
    try {
      v = std::stol(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != s.size() || v < lo || v > hi)
      fail(n.Mark(), path, "expected a whole number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got '" + s + "'");
    return static_cast<int>(v);
  }

  bool boolean(const YAML::Node& n, const std::string& path) const {
    const std::string s = scalar(n, path);
    if (s == "true") return true;
    if (s == "false") return false;
    fail(n.Mark(), path, "expected true or false, got '" + s + "'");
  }

  double quantity(const YAML::Node& n, const std::string& path, Dimension d, double lo, double hi) const {
    const std::string s = scalar(n, path);
    double v = 0;
    try {
      v = parse_as(s, d, path);
    } catch (const std::exception& e) {
      fail(n.Mark(), path, e.what());
    }
    if (!(v >= lo && v <= hi))
      fail(n.Mark(), path, "'" + s + "' lies outside [" + format_quantity(lo, d) + ", " + format_quantity(hi, d) + "]");
    return v;
  }
};

constexpr double kMinBandwidth = 1e3, kMaxBandwidth = 1e16;  // 1 kB/s .. 10 PB/s
constexpr double kMinTime = 1e-10, kMaxTime = 1e4;

LinkFigure read_figure(const NodeLoader& L, const YAML::Node& n, const YAML::Mark& where, const std::string& path) {
  const auto m = L.mapping(n, where, path, {"bandwidth", "bandwidth_max", "latency", "latency_min", "repeats", "error"});
  LinkFigure f;
  if (const auto it = m.find("error"); it != m.end()) {
    f.error = L.text(it->second, path + ".error");
    if (m.size() > 1) L.fail(it->second.Mark(), path, "a failed path has only its error");
    return f;
  }
  f.bandwidth = L.quantity(L.require(m, "bandwidth", where, path), path + ".bandwidth", Dimension::bytes_per_second,
                           kMinBandwidth, kMaxBandwidth);
  f.bandwidth_max = f.bandwidth;
  if (const auto it = m.find("bandwidth_max"); it != m.end()) {
    f.bandwidth_max = L.quantity(it->second, path + ".bandwidth_max", Dimension::bytes_per_second, kMinBandwidth, kMaxBandwidth);
    if (f.bandwidth_max < f.bandwidth) L.fail(it->second.Mark(), path + ".bandwidth_max", "smaller than the median bandwidth");
  }
  f.latency_s = L.quantity(L.require(m, "latency", where, path), path + ".latency", Dimension::seconds, kMinTime, kMaxTime);
  f.latency_min_s = f.latency_s;
  if (const auto it = m.find("latency_min"); it != m.end()) {
    f.latency_min_s = L.quantity(it->second, path + ".latency_min", Dimension::seconds, kMinTime, kMaxTime);
    if (f.latency_min_s > f.latency_s) L.fail(it->second.Mark(), path + ".latency_min", "larger than the median latency");
  }
  if (const auto it = m.find("repeats"); it != m.end()) f.repeats = L.integer(it->second, path + ".repeats", 1, 1000000);
  return f;
}

std::vector<std::pair<LinkPath, LinkFigure>> read_figures(const NodeLoader& L, const std::map<std::string, YAML::Node>& m,
                                                          const std::string& path, bool host) {
  std::vector<std::pair<LinkPath, LinkFigure>> out;
  for (const LinkPath p : host ? std::vector<LinkPath>(std::begin(kHostPaths), std::end(kHostPaths))
                               : std::vector<LinkPath>(std::begin(kPairPaths), std::end(kPairPaths))) {
    const auto it = m.find(std::string(to_string(p)));
    if (it == m.end()) continue;
    out.emplace_back(p, read_figure(L, it->second, it->second.Mark(), path + "." + std::string(to_string(p))));
  }
  return out;
}

std::set<std::string> path_keys(bool host, std::set<std::string> extra) {
  if (host) {
    for (const LinkPath p : kHostPaths) extra.insert(std::string(to_string(p)));
  } else {
    for (const LinkPath p : kPairPaths) extra.insert(std::string(to_string(p)));
  }
  return extra;
}

}  // namespace

bool is_node_descriptor_text(std::string_view t) {
  // The schema line, at the top level (no indentation), before any other content that could nest it.
  std::size_t pos = 0;
  while (pos < t.size()) {
    std::size_t end = t.find('\n', pos);
    if (end == std::string_view::npos) end = t.size();
    std::string_view line = t.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.rfind("schema:", 0) == 0) {
      std::string_view v = line.substr(7);
      while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
      while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
      if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) v = v.substr(1, v.size() - 2);
      return v == kNodeSchema;
    }
    pos = end + 1;
  }
  return false;
}

NodeDescriptor parse_node_descriptor(const std::string& yaml_text, const std::string& name_for_errors) {
  const NodeLoader L{name_for_errors};
  if (yaml_text.size() > kMaxYamlInputBytes)
    L.fail(YAML::Mark::null_mark(), "", "larger than " + std::to_string(kMaxYamlInputBytes >> 20) + " MiB, the limit for a node descriptor");
  check_yaml_input(yaml_text, name_for_errors);
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    L.fail(e.mark, "", "not valid YAML: " + e.msg);
  }
  const YAML::Mark top;
  if (!root.IsMap()) L.fail(root.IsDefined() && !root.IsNull() ? root.Mark() : top, "", "a node descriptor is a YAML mapping");
  const auto m = L.mapping(root, top, "",
                           {"schema", "tool_version", "node", "date", "status", "reason", "link_probe", "gpus", "host_links", "pairs"});
  NodeDescriptor n;
  {
    const YAML::Node& s = L.require(m, "schema", top, "");
    n.schema = L.text(s, "schema");
    if (n.schema != kNodeSchema) L.fail(s.Mark(), "schema", "expected " + std::string(kNodeSchema) + ", got '" + n.schema + "'");
  }
  if (const auto it = m.find("tool_version"); it != m.end()) n.tool_version = L.text(it->second, "tool_version");
  n.node = L.text(L.require(m, "node", top, ""), "node");
  {
    const YAML::Node& d = L.require(m, "date", top, "");
    n.date = L.text(d, "date");
    if (const std::string why = iso_date_problem(n.date); !why.empty()) L.fail(d.Mark(), "date", why + ", got '" + n.date + "'");
  }
  {
    const YAML::Node& s = L.require(m, "status", top, "");
    n.status = L.text(s, "status");
    if (n.status != "ok" && n.status != "partial" && n.status != "failed")
      L.fail(s.Mark(), "status", "expected ok, partial or failed, got '" + n.status + "'");
  }
  if (const auto it = m.find("reason"); it != m.end()) n.reason = L.text(it->second, "reason");
  if (n.status == "failed" && n.reason.empty()) L.fail(m.at("status").Mark(), "reason", "a failed node says why (reason)");
  if (const auto it = m.find("link_probe"); it != m.end()) {
    const auto lp = L.mapping(it->second, it->second.Mark(), "link_probe", {"large", "small"});
    n.large_bytes = static_cast<std::uint64_t>(
        L.quantity(L.require(lp, "large", it->second.Mark(), "link_probe"), "link_probe.large", Dimension::bytes, 1, 0x1p40));
    n.small_bytes = static_cast<std::uint64_t>(
        L.quantity(L.require(lp, "small", it->second.Mark(), "link_probe"), "link_probe.small", Dimension::bytes, 1, 0x1p40));
  }
  std::set<int> devices;
  std::set<std::string> uuids;
  if (const auto it = m.find("gpus"); it != m.end() && !it->second.IsNull()) {
    if (!it->second.IsSequence()) L.fail(it->second.Mark(), "gpus", "expected a list");
    for (std::size_t i = 0; i < it->second.size(); ++i) {
      const YAML::Node& g = it->second[i];
      const std::string p = "gpus[" + std::to_string(i) + "]";
      const auto gm = L.mapping(g, g.Mark(), p, {"device", "name", "uuid", "descriptor", "status", "reason"});
      NodeGpu gpu;
      gpu.device = L.integer(L.require(gm, "device", g.Mark(), p), p + ".device", 0, kMaxDevices - 1);
      if (!devices.insert(gpu.device).second) L.fail(gm.at("device").Mark(), p + ".device", "device " + std::to_string(gpu.device) + " listed twice");
      if (const auto x = gm.find("name"); x != gm.end()) gpu.name = L.text(x->second, p + ".name", true);
      if (const auto x = gm.find("uuid"); x != gm.end()) {
        gpu.uuid = L.text(x->second, p + ".uuid", true);
        if (!gpu.uuid.empty() && !uuids.insert(gpu.uuid).second) L.fail(x->second.Mark(), p + ".uuid", "UUID listed twice");
      }
      gpu.status = L.text(L.require(gm, "status", g.Mark(), p), p + ".status");
      if (gpu.status != "ok" && gpu.status != "failed")
        L.fail(gm.at("status").Mark(), p + ".status", "expected ok or failed, got '" + gpu.status + "'");
      if (const auto x = gm.find("reason"); x != gm.end()) gpu.reason = L.text(x->second, p + ".reason");
      if (const auto x = gm.find("descriptor"); x != gm.end()) {
        gpu.descriptor = L.text(x->second, p + ".descriptor");
        const std::filesystem::path dp(gpu.descriptor);
        if (dp.is_absolute() || gpu.descriptor.find("..") != std::string::npos || dp.has_parent_path())
          L.fail(x->second.Mark(), p + ".descriptor", "a file name beside the node descriptor, got '" + gpu.descriptor + "'");
      }
      if (gpu.status == "failed" && gpu.reason.empty()) L.fail(g.Mark(), p + ".reason", "a failed GPU says why (reason)");
      n.gpus.push_back(std::move(gpu));
    }
  }
  const auto known_device = [&](const YAML::Node& node, int d, const std::string& path) {
    if (!devices.count(d)) L.fail(node.Mark(), path, "device " + std::to_string(d) + " is not in gpus");
  };
  if (const auto it = m.find("host_links"); it != m.end() && !it->second.IsNull()) {
    if (!it->second.IsSequence()) L.fail(it->second.Mark(), "host_links", "expected a list");
    std::set<int> seen;
    for (std::size_t i = 0; i < it->second.size(); ++i) {
      const YAML::Node& h = it->second[i];
      const std::string p = "host_links[" + std::to_string(i) + "]";
      const auto hm = L.mapping(h, h.Mark(), p, path_keys(true, {"device"}));
      HostLink hl;
      hl.device = L.integer(L.require(hm, "device", h.Mark(), p), p + ".device", 0, kMaxDevices - 1);
      known_device(hm.at("device"), hl.device, p + ".device");
      if (!seen.insert(hl.device).second) L.fail(hm.at("device").Mark(), p + ".device", "device listed twice");
      hl.figures = read_figures(L, hm, p, true);
      n.host_links.push_back(std::move(hl));
    }
  }
  if (const auto it = m.find("pairs"); it != m.end() && !it->second.IsNull()) {
    if (!it->second.IsSequence()) L.fail(it->second.Mark(), "pairs", "expected a list");
    std::set<std::pair<int, int>> seen;
    for (std::size_t i = 0; i < it->second.size(); ++i) {
      const YAML::Node& q = it->second[i];
      const std::string p = "pairs[" + std::to_string(i) + "]";
      const auto qm = L.mapping(q, q.Mark(), p, path_keys(false, {"from", "to", "peer_access"}));
      PairLink pl;
      pl.from = L.integer(L.require(qm, "from", q.Mark(), p), p + ".from", 0, kMaxDevices - 1);
      pl.to = L.integer(L.require(qm, "to", q.Mark(), p), p + ".to", 0, kMaxDevices - 1);
      known_device(qm.at("from"), pl.from, p + ".from");
      known_device(qm.at("to"), pl.to, p + ".to");
      if (pl.from == pl.to) L.fail(qm.at("to").Mark(), p + ".to", "a pair joins two different GPUs");
      if (!seen.insert({pl.from, pl.to}).second) L.fail(q.Mark(), p, "pair listed twice");
      pl.peer_access = L.boolean(L.require(qm, "peer_access", q.Mark(), p), p + ".peer_access");
      pl.figures = read_figures(L, qm, p, false);
      for (const LinkPath lp : {LinkPath::peer_ce, LinkPath::peer_sm_read}) {
        const LinkFigure* f = pl.find(lp);
        if (!pl.peer_access && f && f->measured())
          L.fail(qm.at(std::string(to_string(lp))).Mark(), p + "." + std::string(to_string(lp)),
                 "measured although peer_access is false");
      }
      n.pairs.push_back(std::move(pl));
    }
  }
  return n;
}

NodeDescriptor load_node_descriptor(const std::filesystem::path& file) {
  return parse_node_descriptor(read_input_file(file, kMaxYamlInputBytes, "node descriptor"), file.string());
}

namespace {
// A text as the reader takes it back: one line (control characters escaped) and at most 4096
// characters (escaping can quadruple a text that was within the limit).
std::string clip(const std::string& s) {
  std::string t = one_line(s);
  if (t.size() > 4096) t = t.substr(0, 4093) + "...";
  return t;
}

void emit_figure(YAML::Emitter& out, LinkPath p, const LinkFigure& f) {
  out << YAML::Key << std::string(to_string(p)) << YAML::Value << YAML::BeginMap;
  if (!f.error.empty()) {
    out << YAML::Key << "error" << YAML::Value << YAML::DoubleQuoted << clip(f.error);
  } else {
    out << YAML::Key << "bandwidth" << YAML::Value << format_quantity(f.bandwidth, Dimension::bytes_per_second, 5);
    out << YAML::Key << "bandwidth_max" << YAML::Value
        << format_quantity(std::max(f.bandwidth, f.bandwidth_max), Dimension::bytes_per_second, 5);
    out << YAML::Key << "latency" << YAML::Value << format_quantity(f.latency_s, Dimension::seconds, 4);
    out << YAML::Key << "latency_min" << YAML::Value
        << format_quantity(f.latency_min_s > 0 ? std::min(f.latency_min_s, f.latency_s) : f.latency_s, Dimension::seconds, 4);
    if (f.repeats > 0) out << YAML::Key << "repeats" << YAML::Value << f.repeats;
  }
  out << YAML::EndMap;
}
}  // namespace

std::string to_yaml(const NodeDescriptor& n) {
  YAML::Emitter out;
  out.SetIndent(2);
  out << YAML::BeginMap;
  out << YAML::Key << "schema" << YAML::Value << n.schema;
  if (!n.tool_version.empty()) out << YAML::Key << "tool_version" << YAML::Value << YAML::DoubleQuoted << clip(n.tool_version);
  out << YAML::Key << "node" << YAML::Value << YAML::DoubleQuoted << clip(n.node);
  out << YAML::Key << "date" << YAML::Value << YAML::DoubleQuoted << n.date;
  out << YAML::Key << "status" << YAML::Value << n.status;
  if (!n.reason.empty()) out << YAML::Key << "reason" << YAML::Value << YAML::DoubleQuoted << clip(n.reason);
  if (n.large_bytes > 0) {
    out << YAML::Key << "link_probe" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "large" << YAML::Value << format_exact(static_cast<double>(n.large_bytes), Dimension::bytes);
    out << YAML::Key << "small" << YAML::Value << format_exact(static_cast<double>(n.small_bytes), Dimension::bytes);
    out << YAML::EndMap;
  }
  out << YAML::Key << "gpus" << YAML::Value << YAML::BeginSeq;
  for (const auto& g : n.gpus) {
    out << YAML::BeginMap;
    out << YAML::Key << "device" << YAML::Value << g.device;
    out << YAML::Key << "name" << YAML::Value << YAML::DoubleQuoted << clip(g.name);
    out << YAML::Key << "uuid" << YAML::Value << YAML::DoubleQuoted << clip(g.uuid);
    if (!g.descriptor.empty()) out << YAML::Key << "descriptor" << YAML::Value << YAML::DoubleQuoted << clip(g.descriptor);
    out << YAML::Key << "status" << YAML::Value << g.status;
    if (!g.reason.empty()) out << YAML::Key << "reason" << YAML::Value << YAML::DoubleQuoted << clip(g.reason);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  if (!n.host_links.empty()) {
    out << YAML::Key << "host_links" << YAML::Value << YAML::BeginSeq;
    for (const auto& h : n.host_links) {
      out << YAML::BeginMap << YAML::Key << "device" << YAML::Value << h.device;
      for (const auto& [p, f] : h.figures) emit_figure(out, p, f);
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  if (!n.pairs.empty()) {
    out << YAML::Key << "pairs" << YAML::Value << YAML::BeginSeq;
    for (const auto& q : n.pairs) {
      out << YAML::BeginMap << YAML::Key << "from" << YAML::Value << q.from << YAML::Key << "to" << YAML::Value << q.to;
      out << YAML::Key << "peer_access" << YAML::Value << (q.peer_access ? "true" : "false");
      for (const auto& [p, f] : q.figures) emit_figure(out, p, f);
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
  return std::string("# ceiling node descriptor: the GPUs of one host and the links between them (docs/FORMATS.md)\n") +
         out.c_str() + "\n";
}

void save_node_descriptor(const NodeDescriptor& n, const std::filesystem::path& file) {
  write_file_atomically(file, to_yaml(n));
}

// ---------------------------------------------------------------------------------------------
// The driver

LinkFigure link_figure(const std::vector<double>& large_s, const std::vector<double>& small_s, std::uint64_t large_bytes) {
  LinkFigure f;
  if (large_s.empty() || small_s.empty()) throw std::runtime_error("no transfer was timed");
  for (const double t : large_s)
    if (!(t > 0) || !std::isfinite(t)) throw std::runtime_error("a transfer time is not positive");
  for (const double t : small_s)
    if (!(t > 0) || !std::isfinite(t)) throw std::runtime_error("a transfer time is not positive");
  const double large_med = median(large_s);
  const double large_min = *std::min_element(large_s.begin(), large_s.end());
  f.bandwidth = static_cast<double>(large_bytes) / large_med;
  f.bandwidth_max = static_cast<double>(large_bytes) / large_min;
  f.latency_s = median(small_s);
  f.latency_min_s = *std::min_element(small_s.begin(), small_s.end());
  f.repeats = static_cast<int>(std::min(large_s.size(), small_s.size()));
  return f;
}

namespace {
LinkFigure measure_path(LinkBackend& b, LinkPath p, int a, int c, const LinkProbeOptions& opt) {
  try {
    const auto large = b.time_transfers(p, a, c, opt.large_bytes, opt.repeats);
    const auto small = b.time_transfers(p, a, c, opt.small_bytes, opt.repeats);
    return link_figure(large, small, opt.large_bytes);
  } catch (const std::exception& e) {
    LinkFigure f;
    f.error = e.what();
    if (f.error.empty()) f.error = "failed";
    return f;
  }
}

std::string figure_line(const LinkFigure& f) {
  if (!f.error.empty()) return "FAILED: " + f.error;
  return format_quantity(f.bandwidth, Dimension::bytes_per_second, 4) + ", " + format_quantity(f.latency_s, Dimension::seconds, 3);
}
}  // namespace

LinkMeasurements measure_links(LinkBackend& b, const std::vector<int>& devices, const LinkProbeOptions& opt) {
  if (opt.large_bytes < 1 || opt.small_bytes < 1 || opt.repeats < 1)
    throw std::invalid_argument("link probe: sizes and repeats must be positive");
  const auto t0 = std::chrono::steady_clock::now();
  LinkMeasurements r;
  r.large_bytes = opt.large_bytes;
  r.small_bytes = opt.small_bytes;
  const auto say = [&](const std::string& s) {
    if (opt.progress) opt.progress(s);
  };
  for (const int d : devices) {
    HostLink h;
    h.device = d;
    for (const LinkPath p : kHostPaths) {
      h.figures.emplace_back(p, measure_path(b, p, d, -1, opt));
      say("link gpu " + std::to_string(d) + " " + std::string(to_string(p)) + ": " + figure_line(h.figures.back().second));
    }
    r.host_links.push_back(std::move(h));
  }
  if (opt.pairs) {
    for (const int from : devices)
      for (const int to : devices) {
        if (from == to) continue;
        PairLink q;
        q.from = from;
        q.to = to;
        try {
          q.peer_access = b.can_access_peer(from, to);
        } catch (const std::exception& e) {
          q.peer_access = false;
          LinkFigure f;
          f.error = std::string("peer access query failed: ") + e.what();
          q.figures.emplace_back(LinkPath::peer_ce, f);
        }
        for (const LinkPath p : kPairPaths) {
          if (!q.peer_access && p != LinkPath::staged_ce) continue;  // needs peer access
          q.figures.emplace_back(p, measure_path(b, p, from, to, opt));
          say("link " + std::to_string(from) + "->" + std::to_string(to) + " " + std::string(to_string(p)) + ": " +
              figure_line(q.figures.back().second));
        }
        r.pairs.push_back(std::move(q));
      }
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

// ---------------------------------------------------------------------------------------------
// Simulated node
namespace {

struct SimPath {
  double bandwidth = 0, latency = 0;
};

class SimulatedNode final : public LinkBackend {
 public:
  std::vector<LinkGpuInfo> gpus;
  std::map<LinkPath, SimPath> paths;
  std::vector<std::vector<int>> peer_groups;  // empty: all pairs
  std::map<std::tuple<int, int, LinkPath>, double> factor;       // (gpu or from, to or -1, path)
  std::map<std::tuple<int, int, LinkPath>, std::string> broken;

  int device_count() override { return static_cast<int>(gpus.size()); }
  LinkGpuInfo device(int d) override {
    check(d);
    return gpus[static_cast<std::size_t>(d)];
  }
  bool can_access_peer(int from, int to) override {
    check(from);
    check(to);
    if (from == to) return false;
    if (peer_groups.empty()) return true;
    for (const auto& g : peer_groups)
      if (std::count(g.begin(), g.end(), from) && std::count(g.begin(), g.end(), to)) return true;
    return false;
  }
  std::vector<double> time_transfers(LinkPath p, int a, int c, std::uint64_t bytes, int repeats) override {
    check(a);
    if (!is_host_path(p)) check(c);
    if (!is_host_path(p) && (p == LinkPath::peer_ce || p == LinkPath::peer_sm_read) && !can_access_peer(a, c))
      throw std::runtime_error("cudaErrorPeerAccessUnsupported: peer access is not supported between these two devices");
    const auto key = std::make_tuple(a, is_host_path(p) ? -1 : c, p);
    if (const auto it = broken.find(key); it != broken.end()) throw std::runtime_error(it->second);
    const auto it = paths.find(p);
    if (it == paths.end()) throw std::runtime_error("the simulated node has no figures for " + std::string(to_string(p)));
    double bw = it->second.bandwidth;
    if (const auto f = factor.find(key); f != factor.end()) bw *= f->second;
    std::vector<double> t;
    for (int i = 0; i < repeats; ++i) {
      // Deterministic jitter in [-0.2%, +0.2%] from the call's coordinates.
      const std::uint64_t h = (static_cast<std::uint64_t>(a + 7) * 1000003u) ^ (static_cast<std::uint64_t>(c + 11) * 7919u) ^
                              (static_cast<std::uint64_t>(p) * 104729u) ^ (static_cast<std::uint64_t>(i) * 2654435761u) ^ bytes;
      const double j = 1.0 + 0.002 * ((static_cast<double>((h * 0x9E3779B97F4A7C15ull) >> 11) / 0x1p53) * 2 - 1);
      t.push_back((it->second.latency + static_cast<double>(bytes) / bw) * j);
    }
    return t;
  }

 private:
  void check(int d) const {
    if (d < 0 || d >= static_cast<int>(gpus.size()))
      throw std::runtime_error("device " + std::to_string(d) + " does not exist on the simulated node");
  }
};

}  // namespace

std::unique_ptr<LinkBackend> load_simulated_node(const std::filesystem::path& file) {
  const std::string text = read_input_file(file, kMaxYamlInputBytes, "simulated node");
  check_yaml_input(text, file.string());
  const NodeLoader L{file.string()};
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    L.fail(e.mark, "", "not valid YAML: " + e.msg);
  }
  const YAML::Mark top;
  const auto m = L.mapping(root, top, "", {"schema", "gpus", "paths", "peer_groups", "degraded", "broken"});
  const YAML::Node& s = L.require(m, "schema", top, "");
  if (L.text(s, "schema") != "ceiling/simulated-node/1") L.fail(s.Mark(), "schema", "expected ceiling/simulated-node/1");
  auto sim = std::make_unique<SimulatedNode>();
  const YAML::Node& gpus = L.require(m, "gpus", top, "");
  if (!gpus.IsSequence() || gpus.size() == 0) L.fail(gpus.Mark(), "gpus", "expected a non-empty list");
  if (gpus.size() > static_cast<std::size_t>(kMaxDevices)) L.fail(gpus.Mark(), "gpus", "more than 1024 GPUs");
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const std::string p = "gpus[" + std::to_string(i) + "]";
    const auto g = L.mapping(gpus[i], gpus[i].Mark(), p, {"name", "uuid"});
    sim->gpus.push_back({L.text(L.require(g, "name", gpus[i].Mark(), p), p + ".name"),
                         L.text(L.require(g, "uuid", gpus[i].Mark(), p), p + ".uuid")});
  }
  const int n = static_cast<int>(sim->gpus.size());
  const auto path_of = [&](const YAML::Node& node, const std::string& p) {
    const std::string v = L.text(node, p);
    const auto lp = parse_link_path(v);
    if (!lp) L.fail(node.Mark(), p, "unknown path '" + v + "'");
    return *lp;
  };
  const YAML::Node& paths = L.require(m, "paths", top, "");
  for (const auto& [k, v] : L.mapping(paths, paths.Mark(), "paths", path_keys(true, path_keys(false, {})))) {
    const std::string p = "paths." + k;
    const auto pm = L.mapping(v, v.Mark(), p, {"bandwidth", "latency"});
    sim->paths[*parse_link_path(k)] = {
        L.quantity(L.require(pm, "bandwidth", v.Mark(), p), p + ".bandwidth", Dimension::bytes_per_second, kMinBandwidth, kMaxBandwidth),
        L.quantity(L.require(pm, "latency", v.Mark(), p), p + ".latency", Dimension::seconds, kMinTime, kMaxTime)};
  }
  if (const auto it = m.find("peer_groups"); it != m.end()) {
    if (!it->second.IsSequence()) L.fail(it->second.Mark(), "peer_groups", "expected a list of lists of devices");
    for (std::size_t i = 0; i < it->second.size(); ++i) {
      const YAML::Node& g = it->second[i];
      if (!g.IsSequence()) L.fail(g.Mark(), "peer_groups", "expected a list of devices");
      std::vector<int> group;
      for (std::size_t j = 0; j < g.size(); ++j) group.push_back(L.integer(g[j], "peer_groups", 0, n - 1));
      sim->peer_groups.push_back(group);
    }
  }
  const auto key_of = [&](const std::map<std::string, YAML::Node>& e, const YAML::Node& node, const std::string& p) {
    const LinkPath lp = path_of(L.require(e, "path", node.Mark(), p), p + ".path");
    if (is_host_path(lp)) return std::make_tuple(L.integer(L.require(e, "gpu", node.Mark(), p), p + ".gpu", 0, n - 1), -1, lp);
    return std::make_tuple(L.integer(L.require(e, "from", node.Mark(), p), p + ".from", 0, n - 1),
                           L.integer(L.require(e, "to", node.Mark(), p), p + ".to", 0, n - 1), lp);
  };
  if (const auto it = m.find("degraded"); it != m.end()) {
    if (!it->second.IsSequence()) L.fail(it->second.Mark(), "degraded", "expected a list");
    for (std::size_t i = 0; i < it->second.size(); ++i) {
      const std::string p = "degraded[" + std::to_string(i) + "]";
      const auto e = L.mapping(it->second[i], it->second[i].Mark(), p, {"gpu", "from", "to", "path", "factor"});
      const auto key = key_of(e, it->second[i], p);
      const YAML::Node& f = L.require(e, "factor", it->second[i].Mark(), p);
      sim->factor[key] = L.quantity(f, p + ".factor", Dimension::dimensionless, 1e-6, 1e6);
    }
  }
  if (const auto it = m.find("broken"); it != m.end()) {
    if (!it->second.IsSequence()) L.fail(it->second.Mark(), "broken", "expected a list");
    for (std::size_t i = 0; i < it->second.size(); ++i) {
      const std::string p = "broken[" + std::to_string(i) + "]";
      const auto e = L.mapping(it->second[i], it->second[i].Mark(), p, {"gpu", "from", "to", "path", "error"});
      sim->broken[key_of(e, it->second[i], p)] = L.text(L.require(e, "error", it->second[i].Mark(), p), p + ".error");
    }
  }
  return sim;
}

// ---------------------------------------------------------------------------------------------
// The model's link level

LinkLevel link_level(const NodeDescriptor& node, const std::string& spec, double read_fraction) {
  if (!(read_fraction > 0 && read_fraction <= 1))
    throw std::runtime_error("--link-fraction must lie in (0, 1], got " + std::to_string(read_fraction));
  const auto parse_int = [&](const std::string& s) {
    std::size_t used = 0;
    int v = -1;
    try {
      v = std::stoi(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != s.size() || v < 0)
      throw std::runtime_error("--link '" + spec + "': '" + s + "' is not a device ordinal (use peer:FROM:TO or host:GPU)");
    return v;
  };
  std::vector<std::string> parts;
  {
    std::stringstream ss(spec);
    for (std::string p; std::getline(ss, p, ':');) parts.push_back(p);
  }
  LinkLevel l;
  l.read_fraction = read_fraction;
  const LinkFigure* f = nullptr;
  LinkPath used = LinkPath::peer_sm_read;
  const std::string where = " in node descriptor of " + node.node;
  if (parts.size() == 3 && parts[0] == "peer") {
    const int from = parse_int(parts[1]), to = parse_int(parts[2]);
    const PairLink* q = node.pair(from, to);
    if (!q) throw std::runtime_error("--link " + spec + ": no pair " + parts[1] + "->" + parts[2] + where);
    if (!q->peer_access)
      throw std::runtime_error("--link " + spec + ": GPU " + parts[2] + " cannot access GPU " + parts[1] +
                               "'s memory (peer_access false" + where + "); a kernel cannot read it directly");
    for (const LinkPath p : {LinkPath::peer_sm_read, LinkPath::peer_ce}) {
      const LinkFigure* c = q->find(p);
      if (c && c->measured()) {
        f = c;
        used = p;
        break;
      }
    }
    if (!f) throw std::runtime_error("--link " + spec + ": neither peer_sm_read nor peer_ce was measured for " + parts[1] + "->" + parts[2] + where);
    l.name = "peer " + parts[1] + "->" + parts[2];
  } else if (parts.size() == 2 && parts[0] == "host") {
    const int g = parse_int(parts[1]);
    const HostLink* h = node.host_link(g);
    if (!h) throw std::runtime_error("--link " + spec + ": no host link for GPU " + parts[1] + where);
    for (const LinkPath p : {LinkPath::host_sm_read, LinkPath::h2d_pinned}) {
      const LinkFigure* c = h->find(p);
      if (c && c->measured()) {
        f = c;
        used = p;
        break;
      }
    }
    if (!f) throw std::runtime_error("--link " + spec + ": neither host_sm_read nor h2d_pinned was measured for GPU " + parts[1] + where);
    l.name = "host->" + parts[1];
  } else {
    throw std::runtime_error("--link '" + spec + "': expected peer:FROM:TO (a kernel on TO reads FROM's memory) or host:GPU");
  }
  l.name += " (" + std::string(to_string(used)) + ")";
  l.bandwidth = f->bandwidth;
  l.bandwidth_max = std::max(f->bandwidth, f->bandwidth_max);
  l.latency_s = f->latency_min_s > 0 ? f->latency_min_s : f->latency_s;
  l.provenance = "link " + l.name + ": " + format_quantity(l.bandwidth, Dimension::bytes_per_second) + " median, " +
                 format_quantity(l.bandwidth_max, Dimension::bytes_per_second) + " best, latency " +
                 format_quantity(l.latency_s, Dimension::seconds) + " (node " + node.node + ", " + node.date + ")";
  return l;
}

}  // namespace ceiling

namespace ceiling {

std::string link_summary(const NodeDescriptor& n) {
  if (n.host_links.empty() && n.pairs.empty()) return "";
  std::ostringstream os;
  const auto cell = [](const LinkFigure* f, bool latency) -> std::string {
    if (!f) return "-";
    if (!f->error.empty()) return "FAILED";
    return latency ? format_quantity(f->latency_s, Dimension::seconds, 3) : format_quantity(f->bandwidth, Dimension::bytes_per_second, 4);
  };
  const auto pad = [](std::string s, std::size_t w) {
    if (s.size() < w) s.append(w - s.size(), ' ');
    return s;
  };
  os << "links (" << format_quantity(static_cast<double>(n.large_bytes), Dimension::bytes, 4)
     << " transfers for bandwidth, " << format_quantity(static_cast<double>(n.small_bytes), Dimension::bytes, 4)
     << " for latency; medians):\n";
  if (!n.host_links.empty()) {
    os << "  " << pad("GPU", 5);
    for (const LinkPath p : kHostPaths) os << pad(std::string(to_string(p)), 24);
    os << "\n";
    for (const auto& h : n.host_links) {
      os << "  " << pad(std::to_string(h.device), 5);
      for (const LinkPath p : kHostPaths) {
        const LinkFigure* f = h.find(p);
        os << pad(cell(f, false) + (f && f->measured() ? " " + cell(f, true) : ""), 24);
      }
      os << "\n";
    }
    for (const auto& h : n.host_links)
      for (const auto& [p, f] : h.figures)
        if (!f.error.empty()) os << "  GPU " << h.device << " " << to_string(p) << " failed: " << f.error << "\n";
  }
  if (!n.pairs.empty()) {
    std::vector<int> devs;
    for (const auto& g : n.gpus) devs.push_back(g.device);
    for (const LinkPath p : kPairPaths) {
      bool any = false;
      for (const auto& q : n.pairs) any = any || q.find(p);
      if (!any) continue;
      os << "  " << to_string(p) << " bandwidth (row: from, column: to; '-': no peer access):\n  " << pad("", 6);
      for (const int d : devs) os << pad(std::to_string(d), 12);
      os << "\n";
      for (const int from : devs) {
        os << "  " << pad(std::to_string(from), 6);
        for (const int to : devs) {
          const PairLink* q = n.pair(from, to);
          os << pad(from == to ? "." : cell(q ? q->find(p) : nullptr, false), 12);
        }
        os << "\n";
      }
    }
    for (const auto& q : n.pairs)
      for (const auto& [p, f] : q.figures)
        if (!f.error.empty()) os << "  " << q.from << "->" << q.to << " " << to_string(p) << " failed: " << f.error << "\n";
  }
  return os.str();
}

}  // namespace ceiling
