// The fleet view (issue 16). See fleet.hpp.
#include "fleet.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "files.hpp"
#include "link.hpp"
#include "units.hpp"

namespace ceiling {
namespace {

void put(std::map<std::string, double>& out, const std::string& path, const Field& f) {
  if (f.measured && std::isfinite(f.measured->median) && f.measured->median > 0) out[path] = f.measured->median;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  const std::size_t m = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(m), v.end());
  const double hi = v[m];
  if (v.size() % 2) return hi;
  return 0.5 * (hi + *std::max_element(v.begin(), v.begin() + static_cast<long>(m)));
}

Dimension fleet_dimension(const std::string& path) {
  const auto has = [&](const char* s) { return path.find(s) != std::string::npos; };
  if (path.rfind("sm_clock", 0) == 0) return Dimension::hertz;
  if (path.rfind("fixed_costs", 0) == 0) return Dimension::seconds;
  if (path.rfind("link.", 0) == 0) return has("latency") ? Dimension::seconds : Dimension::bytes_per_second;
  if (has("fma_per_clock")) return Dimension::dimensionless;
  if (has("latency")) return Dimension::cycles;
  if (has("bandwidth_per_sm")) return Dimension::bytes_per_cycle;
  if (has("capacity")) return Dimension::bytes;
  if (path.rfind("compute.", 0) == 0 || has(".throughput")) return Dimension::flop_per_second;
  return Dimension::bytes_per_second;
}

std::string show(double v, const std::string& path) { return format_quantity(v, fleet_dimension(path), 4); }

std::string pct(double f, int digits = 1) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(digits);
  os << (f >= 0 ? "+" : "") << f * 100 << "%";
  return os.str();
}

std::string z_text(double z) {
  if (!std::isfinite(z)) return z > 0 ? "+inf" : "-inf";
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(1);
  os << z;
  return os.str();
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (const char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

std::map<std::string, double> fleet_figures(const HardwareDescriptor& d) {
  std::map<std::string, double> out;
  put(out, "sm_clock", d.sm_clock);
  for (const auto& [lvl, m] : d.memory) {
    const std::string base = "memory." + std::string(to_string(lvl));
    put(out, base + ".bandwidth", m.bandwidth);
    put(out, base + ".bandwidth_per_sm", m.bandwidth_per_sm);
    put(out, base + ".latency", m.latency);
    put(out, base + ".capacity", m.capacity);
    for (const auto& [p, f] : m.patterns) put(out, base + ".patterns." + p, f);
  }
  for (const auto& [unit, byp] : d.compute)
    for (const auto& [p, f] : byp) put(out, "compute." + std::string(to_string(unit)) + "." + std::string(to_string(p)), f);
  put(out, "fixed_costs.launch_single", d.fixed_costs.launch_single);
  put(out, "fixed_costs.launch_back_to_back", d.fixed_costs.launch_back_to_back);
  std::vector<double> tc_clocks;
  for (const auto& ti : d.tensor_instructions) {
    const std::string base = "tensor." + ti.key();
    put(out, base + ".throughput", ti.throughput);
    put(out, base + ".fma_per_clock_per_sm", ti.fma_per_clock_per_sm);
    put(out, base + ".latency", ti.latency);
    if (ti.api == "wgmma" && ti.throughput.measured && ti.throughput.measured->sm_clock_hz > 0)
      tc_clocks.push_back(ti.throughput.measured->sm_clock_hz);
  }
  if (!tc_clocks.empty()) out["sm_clock.under_tensor_load"] = median_of(tc_clocks);
  return out;
}

bool fleet_higher_is_better(const std::string& path) {
  return path.find("latency") == std::string::npos && path.rfind("fixed_costs", 0) != 0;
}

std::size_t FleetReport::unreadable() const {
  return static_cast<std::size_t>(std::count_if(members.begin(), members.end(), [](const FleetMember& m) { return !m.error.empty(); }));
}

FleetMember fleet_member(const HardwareDescriptor& d, const std::string& file) {
  FleetMember m;
  m.file = file;
  // The file's stem names the GPU (calibrate --devices writes <id>-<UUID prefix>.yaml; the id inside
  // is the shipped descriptor's the run started from); the descriptor id where there is no file.
  m.id = file.empty() ? d.id : std::filesystem::path(file).stem().string();
  m.uuid = d.identity.uuid;
  m.model = d.identity.name;
  m.figures = fleet_figures(d);
  return m;
}

void add_node_figures(FleetMember& m, const NodeDescriptor& n, int device) {
  m.node = n.node;
  if (const HostLink* h = n.host_link(device))
    for (const auto& [p, f] : h->figures) {
      const std::string base = "link." + std::string(to_string(p));
      if (f.measured()) {
        m.figures[base + ".bandwidth"] = f.bandwidth;
        m.figures[base + ".latency"] = f.latency_s;
      } else if (!f.error.empty()) {
        m.problems.push_back(std::string(to_string(p)) + ": " + f.error);
      }
    }
  for (const auto& q : n.pairs) {
    if (q.from != device && q.to != device) continue;
    for (const auto& [p, f] : q.figures) {
      const std::string base = "link." + std::string(to_string(p));
      if (f.measured()) {
        const auto bw = m.figures.find(base + ".bandwidth_min");
        if (bw == m.figures.end() || f.bandwidth < bw->second) m.figures[base + ".bandwidth_min"] = f.bandwidth;
        const auto lat = m.figures.find(base + ".latency_max");
        if (lat == m.figures.end() || f.latency_s > lat->second) m.figures[base + ".latency_max"] = f.latency_s;
      } else if (!f.error.empty()) {
        m.problems.push_back(std::to_string(q.from) + "->" + std::to_string(q.to) + " " + std::string(to_string(p)) + ": " + f.error);
      }
    }
  }
}

std::vector<FleetMember> load_fleet(const std::filesystem::path& dir, unsigned threads) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw std::runtime_error(dir.string() + ": not a directory (--fleet takes a directory of descriptors)");
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const auto ext = it->path().extension().string();
    if (it->is_regular_file(ec) && (ext == ".yaml" || ext == ".yml")) files.push_back(it->path());
  }
  if (ec) throw std::runtime_error(dir.string() + ": cannot list (" + ec.message() + ")");
  std::sort(files.begin(), files.end());
  std::vector<FleetMember> members(files.size());
  std::vector<std::optional<NodeDescriptor>> nodes(files.size());
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = std::min<unsigned>(threads, static_cast<unsigned>(std::max<std::size_t>(1, files.size())));
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i; (i = next++) < files.size();) {
      try {
        const std::string text = read_input_file(files[i], kMaxYamlInputBytes, "descriptor");
        if (is_node_descriptor_text(text))
          nodes[i] = parse_node_descriptor(text, files[i].string());
        else
          members[i] = fleet_member(parse_descriptor(text, files[i].string()), files[i].string());
      } catch (const std::exception& e) {
        members[i].file = files[i].string();
        members[i].error = e.what();
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  // Node descriptors: their GPUs' descriptors by UUID get the links; failures become members.
  // A node's GPU joins the descriptor file it names (beside node.yaml); by UUID where it names none
  // (--links-only) - the same GPU calibrated twice under one directory keeps its own node's links.
  std::vector<FleetMember> out;
  std::map<std::string, std::size_t> by_uuid, by_file;
  std::set<std::string> files_loaded;
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (nodes[i]) continue;
    if (!members[i].uuid.empty() && members[i].error.empty()) by_uuid.emplace(members[i].uuid, out.size());
    if (members[i].error.empty()) by_file.emplace(files[i].lexically_normal().string(), out.size());
    files_loaded.insert(files[i].lexically_normal().string());
    out.push_back(std::move(members[i]));
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (!nodes[i]) continue;
    const NodeDescriptor& n = *nodes[i];
    const std::string file = files[i].string();
    if (n.gpus.empty()) {
      FleetMember m;
      m.file = file;
      m.id = n.node;
      m.node = n.node;
      m.error = "node " + n.node + ": " + (n.status == "failed" ? "failed: " + n.reason : "no GPU listed") + " (" + file + ")";
      out.push_back(std::move(m));
      continue;
    }
    for (const auto& g : n.gpus) {
      const fs::path desc = g.descriptor.empty() ? fs::path() : (files[i].parent_path() / g.descriptor).lexically_normal();
      std::optional<std::size_t> match;
      if (!g.descriptor.empty()) {
        if (const auto f = by_file.find(desc.string()); f != by_file.end()) match = f->second;
      } else if (!g.uuid.empty()) {
        // Links only: the GPU's descriptor by UUID, unless another node already claimed it.
        if (const auto u = by_uuid.find(g.uuid); u != by_uuid.end() && out[u->second].node.empty()) match = u->second;
      }
      if (g.status == "failed" || !match) {
        if (g.status != "failed" && !g.descriptor.empty() && files_loaded.count(desc.string()))
          continue;  // its descriptor is there but unreadable: already a member with that error
        FleetMember m;
        m.file = file;
        m.id = n.node + "/gpu" + std::to_string(g.device);
        m.uuid = g.uuid;
        m.model = g.name;
        m.node = n.node;
        if (g.status == "failed") {
          m.error = "node " + n.node + " device " + std::to_string(g.device) + " failed: " + g.reason;
        } else if (!g.descriptor.empty()) {
          m.error = "node " + n.node + " device " + std::to_string(g.device) + ": its descriptor " + desc.string() + " is missing";
        } else {
          // Links only (calibrate --devices --links-only): the GPU joins with its link figures.
          add_node_figures(m, n, g.device);
          if (m.figures.empty()) m.error = "node " + n.node + " device " + std::to_string(g.device) + ": no descriptor and no link figure";
          if (!g.uuid.empty() && m.error.empty()) by_uuid.emplace(g.uuid, out.size());
        }
        out.push_back(std::move(m));
        continue;
      }
      add_node_figures(out[*match], n, g.device);
    }
  }
  return out;
}

FleetReport analyse_fleet(std::vector<FleetMember> members, const FleetOptions& opt) {
  FleetReport r;
  r.members = std::move(members);
  r.options = opt;
  std::map<std::string, std::vector<std::size_t>> by_model;
  for (std::size_t i = 0; i < r.members.size(); ++i)
    if (r.members[i].error.empty()) by_model[r.members[i].model].push_back(i);
  for (auto& [model, idx] : by_model) {
    FleetGroup g;
    g.model = model;
    g.members = idx;
    std::map<std::string, std::vector<double>> values;
    for (const std::size_t i : idx)
      for (const auto& [f, v] : r.members[i].figures) values[f].push_back(v);
    for (auto& [f, v] : values) {
      FleetStat s;
      s.n = v.size();
      s.median = median_of(v);
      std::vector<double> dev;
      dev.reserve(v.size());
      for (const double x : v) dev.push_back(std::abs(x - s.median));
      s.sigma = 1.4826 * median_of(dev);
      s.min = *std::min_element(v.begin(), v.end());
      s.max = *std::max_element(v.begin(), v.end());
      g.stats[f] = s;
    }
    // Outliers need siblings: three GPUs of a model at least.
    if (idx.size() >= 3) {
      for (const std::size_t i : idx) {
        for (const auto& [f, v] : r.members[i].figures) {
          const FleetStat& s = g.stats.at(f);
          if (s.n < 3 || !(s.median > 0)) continue;
          FleetOutlier o;
          o.member = i;
          o.figure = f;
          o.value = v;
          o.median = s.median;
          o.deviation = (v - s.median) / s.median;
          o.z = s.sigma > 0 ? (v - s.median) / s.sigma
                            : (v == s.median ? 0.0 : std::copysign(std::numeric_limits<double>::infinity(), v - s.median));
          o.worse = fleet_higher_is_better(f) ? v < s.median : v > s.median;
          if (std::abs(o.z) > opt.z && std::abs(o.deviation) >= opt.min_deviation && (!opt.worse_only || o.worse))
            g.outliers.push_back(o);
        }
      }
      std::sort(g.outliers.begin(), g.outliers.end(), [](const FleetOutlier& a, const FleetOutlier& b) {
        if (std::abs(a.deviation) != std::abs(b.deviation)) return std::abs(a.deviation) > std::abs(b.deviation);
        return a.member < b.member;
      });
    }
    r.groups.push_back(std::move(g));
  }
  std::stable_sort(r.groups.begin(), r.groups.end(),
                   [](const FleetGroup& a, const FleetGroup& b) { return a.members.size() > b.members.size(); });
  return r;
}

std::string fleet_summary(const FleetReport& r, std::size_t max_lines) {
  std::ostringstream os;
  std::size_t outliers = 0;
  for (const auto& g : r.groups) outliers += g.outliers.size();
  os << "fleet: " << r.members.size() << " descriptor(s), " << r.groups.size() << " GPU model(s), " << outliers
     << " outlier(s) (|robust z| > " << r.options.z << " and >= " << r.options.min_deviation * 100 << "% from the median"
     << (r.options.worse_only ? ", on the bad side" : "") << ")";
  if (r.unreadable()) os << ", " << r.unreadable() << " unreadable or failed";
  os << "\n";
  std::size_t lines = 0;
  for (const auto& g : r.groups) {
    std::set<std::size_t> gpus;
    for (const auto& o : g.outliers) gpus.insert(o.member);
    os << "  " << g.model << ": " << g.members.size() << " GPU(s), " << gpus.size() << " with outliers"
       << (g.members.size() < 3 ? " (fewer than 3: no outliers judged)" : "") << "\n";
    for (const auto& o : g.outliers) {
      if (lines++ == max_lines) {
        os << "    ... (--json or fleet.csv list all)\n";
        break;
      }
      const FleetMember& m = r.members[o.member];
      os << "    " << (m.id.empty() ? m.file : m.id) << (m.uuid.empty() ? "" : " (" + m.uuid + ")") << ": " << o.figure
         << " " << show(o.value, o.figure) << ", " << pct(o.deviation) << " vs median " << show(o.median, o.figure)
         << " (z " << z_text(o.z) << ")\n";
    }
  }
  for (const auto& m : r.members)
    if (!m.error.empty()) os << "  not analysed: " << m.error << "\n";
  for (const auto& m : r.members)
    for (const auto& p : m.problems) os << "  link failed on " << (m.id.empty() ? m.file : m.id) << ": " << p << "\n";
  return os.str();
}

std::string fleet_csv(const FleetReport& r) {
  std::set<std::string> figures;
  for (const auto& g : r.groups)
    for (const auto& [f, s] : g.stats) figures.insert(f);
  std::ostringstream os;
  os << "file,id,uuid,model,node,outliers,worst_figure,worst_deviation_pct,worst_z,error,link_problems";
  for (const auto& f : figures) os << "," << csv_cell(f + " (% vs median)");
  os << "\n";
  std::map<std::size_t, const FleetGroup*> group_of;
  std::map<std::size_t, std::vector<const FleetOutlier*>> out_of;
  for (const auto& g : r.groups) {
    for (const std::size_t i : g.members) group_of[i] = &g;
    for (const auto& o : g.outliers) out_of[o.member].push_back(&o);
  }
  for (std::size_t i = 0; i < r.members.size(); ++i) {
    const FleetMember& m = r.members[i];
    const auto& outs = out_of[i];
    const FleetOutlier* worst = outs.empty() ? nullptr : outs.front();
    std::string problems;
    for (const auto& p : m.problems) problems += (problems.empty() ? "" : "; ") + p;
    os << csv_cell(m.file) << "," << csv_cell(m.id) << "," << csv_cell(m.uuid) << "," << csv_cell(m.model) << ","
       << csv_cell(m.node) << "," << outs.size() << "," << (worst ? csv_cell(worst->figure) : "") << ","
       << (worst ? std::to_string(worst->deviation * 100) : "") << "," << (worst ? z_text(worst->z) : "") << ","
       << csv_cell(m.error) << "," << csv_cell(problems);
    const FleetGroup* g = group_of.count(i) ? group_of[i] : nullptr;
    for (const auto& f : figures) {
      os << ",";
      const auto v = m.figures.find(f);
      if (!g || v == m.figures.end()) continue;
      const auto s = g->stats.find(f);
      if (s != g->stats.end() && s->second.median > 0) os << (v->second - s->second.median) / s->second.median * 100;
    }
    os << "\n";
  }
  return os.str();
}

std::string fleet_markdown(const FleetReport& r) {
  std::ostringstream os;
  const std::string summary = fleet_summary(r, 0);
  os << "# Fleet report\n\n" << summary.substr(0, summary.find('\n')) << ".\n\n";
  os << "Robust spread: 1.4826 x the median absolute deviation. An outlier is a GPU more than " << r.options.z
     << " of those from its model's median and at least " << r.options.min_deviation * 100
     << "% away, on the figure's bad side (low bandwidth, rate or clock; high latency). `fleet.csv` has one row per "
        "GPU with every figure's deviation, to sort.\n";
  for (const auto& g : r.groups) {
    os << "\n## " << g.model << " (" << g.members.size() << " GPUs)\n\n";
    if (!g.outliers.empty()) {
      os << "| GPU | node | uuid | figure | value | median | deviation | robust z |\n|---|---|---|---|---:|---:|---:|---:|\n";
      for (const auto& o : g.outliers) {
        const FleetMember& m = r.members[o.member];
        os << "| " << (m.id.empty() ? m.file : m.id) << " | " << m.node << " | " << m.uuid << " | " << o.figure << " | "
           << show(o.value, o.figure) << " | " << show(o.median, o.figure) << " | " << pct(o.deviation) << " | "
           << z_text(o.z) << " |\n";
      }
      os << "\n";
    } else {
      os << "No outliers.\n\n";
    }
    os << "| figure | GPUs | median | spread (robust) | min | max |\n|---|---:|---:|---:|---:|---:|\n";
    for (const auto& [f, s] : g.stats)
      os << "| " << f << " | " << s.n << " | " << show(s.median, f) << " | "
         << (s.median > 0 ? pct(s.sigma / s.median, 2).substr(1) : "-") << " | " << show(s.min, f) << " | "
         << show(s.max, f) << " |\n";
  }
  if (r.unreadable()) {
    os << "\n## Unreadable descriptors, failed GPUs and nodes\n\n";
    for (const auto& m : r.members)
      if (!m.error.empty()) os << "- " << m.error << "\n";
  }
  bool link_problems = false;
  for (const auto& m : r.members) link_problems = link_problems || !m.problems.empty();
  if (link_problems) {
    os << "\n## Failed link paths\n\n";
    for (const auto& m : r.members)
      for (const auto& p : m.problems) os << "- " << (m.id.empty() ? m.file : m.id) << " (node " << m.node << "): " << p << "\n";
  }
  return os.str();
}

}  // namespace ceiling
