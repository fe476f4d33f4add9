#include "memory_roof.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <set>
#include <sstream>
#include <stdexcept>

#include "stats.hpp"
#include "units.hpp"

namespace ceiling {

std::optional<double> pattern_read_share(std::string_view p) {
  static const std::map<std::string_view, double> shares{
      {"read", 1.0}, {"triad", 2.0 / 3.0}, {"copy", 0.5}, {"scale", 0.5}, {"write", 0.0}};
  const auto it = shares.find(p);
  if (it == shares.end()) return std::nullopt;
  return it->second;
}

EnvelopeFit fit_lower_envelope(const std::vector<double>& x, const std::vector<double>& t) {
  if (x.size() != t.size()) throw std::invalid_argument("fit_lower_envelope: bytes and seconds differ in length");
  std::vector<std::pair<double, double>> p;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!(x[i] > 0) || !(t[i] > 0) || !std::isfinite(x[i]) || !std::isfinite(t[i]))
      throw std::invalid_argument("fit_lower_envelope: every point needs positive, finite bytes and seconds");
    p.emplace_back(x[i], t[i]);
  }
  if (p.empty()) throw std::invalid_argument("fit_lower_envelope: no points");
  // A candidate line (a, b): T = a + b X. Valid when a >= 0, b >= 0 and no point lies below it
  // (relative tolerance for the two points it passes through).
  const auto cost = [&](double a, double b) {
    if (a < 0 || b < 0) return std::numeric_limits<double>::infinity();
    double sum = 0;
    for (const auto& [xi, ti] : p) {
      const double gap = (ti - (a + b * xi)) / ti;
      if (gap < -1e-9) return std::numeric_limits<double>::infinity();
      sum += std::max(0.0, gap);
    }
    return sum;
  };
  double best_a = 0, best_b = 0, best = std::numeric_limits<double>::infinity();
  const auto consider = [&](double a, double b) {
    const double c = cost(a, b);
    if (c < best) best = c, best_a = a, best_b = b;
  };
  // The optimum of this linear programme is a vertex: a line through two points, or one through
  // a point with a = 0 or b = 0.
  double min_t = p[0].second, min_ratio = p[0].second / p[0].first;
  for (const auto& [xi, ti] : p) min_t = std::min(min_t, ti), min_ratio = std::min(min_ratio, ti / xi);
  consider(min_t, 0);
  consider(0, min_ratio);
  for (size_t i = 0; i < p.size(); ++i)
    for (size_t j = i + 1; j < p.size(); ++j) {
      if (p[i].first == p[j].first) continue;
      const double b = (p[j].second - p[i].second) / (p[j].first - p[i].first);
      consider(p[i].second - b * p[i].first, b);
    }
  EnvelopeFit f;
  f.intercept_s = best_a;
  f.seconds_per_byte = best_b;
  for (const auto& [xi, ti] : p) f.relative_gap.push_back(std::max(0.0, (ti - (best_a + best_b * xi)) / ti));
  f.median_gap = median(f.relative_gap);
  f.max_gap = *std::max_element(f.relative_gap.begin(), f.relative_gap.end());
  return f;
}

std::string ramp_fit_note(const EnvelopeFit& f, const std::vector<double>& x, bool cold, int processes) {
  const auto [lo, hi] = x.empty() ? std::pair<double, double>{0, 0}
                                  : std::pair<double, double>{*std::min_element(x.begin(), x.end()),
                                                              *std::max_element(x.begin(), x.end())};
  char note[400];
  std::snprintf(note, sizeof note,
                "lower envelope T >= first_byte + X/BW of the least times over %zu sizes %.3g..%.3g MB%s (%s), "
                "BW %.4g TB/s; points above it by median %.1f%%, max %.1f%%",
                x.size(), lo / 1e6, hi / 1e6,
                processes > 1 ? (" in " + std::to_string(processes) + " processes").c_str() : "",
                cold ? "cold: L2 evicted, events around one launch" : "warm: back-to-back launches, per launch",
                f.bandwidth() / 1e12, 100 * f.median_gap, 100 * f.max_gap);
  return note;
}

int merge_ramp_runs(HardwareDescriptor& d, const std::vector<HardwareDescriptor>& others) {
  int changed = 0;
  for (auto& level_entry : d.memory) {
    const MemoryLevelKind level = level_entry.first;
    MemoryLevel& mem = level_entry.second;
    for (auto& table_entry : mem.ramp) {
      const std::string& pattern = table_entry.first;
      RampTable& table = table_entry.second;  // named, not a structured binding: the lambda below captures it
      if (!table.present()) continue;
      int runs = 1;
      bool took = false;
      for (const HardwareDescriptor& o : others) {
        const auto lv = o.memory.find(level);
        if (lv == o.memory.end()) continue;
        const auto ot = lv->second.ramp.find(pattern);
        if (ot == lv->second.ramp.end() || !ot->second.present()) continue;
        ++runs;
        for (auto& [bytes, seconds] : table.points)
          for (const auto& [ob, os] : ot->second.points)
            if (std::abs(ob - bytes) <= 1e-6 * bytes && os > 0 && os < seconds) seconds = os, took = true;
      }
      if (runs == 1) continue;
      const std::string processes = "least over " + std::to_string(runs) + " processes";
      const auto tag = table.note.find("; least over ");
      table.note = (tag == std::string::npos ? table.note : table.note.substr(0, tag)) + "; " + processes;
      std::vector<double> x, t;
      for (const auto& [bytes, seconds] : table.points) x.push_back(bytes), t.push_back(seconds);
      const EnvelopeFit f = fit_lower_envelope(x, t);
      const bool cold = table.timing == "cold";
      const std::string note = ramp_fit_note(f, x, cold, runs);
      const auto set = [&](Field& field, double value, const std::string& what) {
        MeasuredValue m = field.measured.value_or(MeasuredValue{});
        m.median = m.min = m.max = value;
        m.repeats = static_cast<int>(x.size());
        m.cv = 0;
        if (m.probe.empty()) m.probe = table.probe;
        if (m.date.empty()) m.date = table.date;
        if (!(m.sm_clock_hz > 0)) m.sm_clock_hz = table.sm_clock_hz;
        m.note = what;
        field.measured = m;
      };
      Field& fb = mem.first_byte.try_emplace(pattern, Field{Dimension::seconds}).first->second;
      set(fb, std::max(f.intercept_s, 1e-12), note + (f.intercept_s < 1e-12 ? "; through the origin" : ""));
      if (f.seconds_per_byte > 0) {
        auto& slopes = level == MemoryLevelKind::l2 ? mem.patterns : mem.ramp_bandwidth;
        Field& bw = slopes.try_emplace(pattern, Field{Dimension::bytes_per_second}).first->second;
        set(bw, f.bandwidth(),
            "slope of the " + std::string(to_string(level)) + " " + pattern + " ramp envelope (" + note + ")");
      }
      changed += took;
    }
  }
  return changed;
}

std::vector<std::pair<double, double>> lower_convex_hull(std::vector<std::pair<double, double>> p) {
  for (const auto& [x, t] : p)
    if (!(x > 0) || !(t > 0) || !std::isfinite(x) || !std::isfinite(t))
      throw std::invalid_argument("lower_convex_hull: every point needs positive, finite bytes and seconds");
  std::sort(p.begin(), p.end());
  // One point per X: the least time.
  std::vector<std::pair<double, double>> q;
  for (const auto& pt : p)
    if (q.empty() || q.back().first != pt.first) q.push_back(pt);
  if (q.size() < 2) throw std::invalid_argument("lower_convex_hull: needs points at 2 sizes or more");
  // Andrew's monotone chain, lower part: drop the middle of any turn that is not counter-clockwise.
  std::vector<std::pair<double, double>> h;
  for (const auto& pt : q) {
    while (h.size() >= 2) {
      const auto& a = h[h.size() - 2];
      const auto& b = h.back();
      const double cross = (b.first - a.first) * (pt.second - a.second) - (b.second - a.second) * (pt.first - a.first);
      if (cross > 0) break;
      h.pop_back();
    }
    h.push_back(pt);
  }
  return h;
}

double hull_time(const std::vector<std::pair<double, double>>& h, double x, double bandwidth_beyond) {
  if (h.size() < 2) throw std::invalid_argument("hull_time: a hull has 2 vertices or more");
  if (x >= h.back().first) {
    const double extra = x - h.back().first;
    return h.back().second + (extra > 0 && bandwidth_beyond > 0 ? extra / bandwidth_beyond : 0);
  }
  size_t i = 1;
  while (i + 1 < h.size() && h[i].first < x) ++i;  // edge (i-1, i) holds x, or the first edge below h[0]
  const auto& a = h[i - 1];
  const auto& b = h[i];
  return std::max(0.0, a.second + (x - a.first) * (b.second - a.second) / (b.first - a.first));
}

double MemoryRoof::ramp_time(double bytes) const {
  double t = 0;
  for (const auto& side : ramp) {
    double least = std::numeric_limits<double>::infinity();
    for (const auto& h : side.hulls) {
      // Beyond the last vertex: the sustained rate, or the last edge's where that is faster.
      double beyond = bandwidth_sustained > 0 ? bandwidth_sustained : bandwidth_max;
      if (h.size() >= 2) {
        const auto& a = h[h.size() - 2];
        const auto& b = h.back();
        if (b.second > a.second) beyond = std::max(beyond, (b.first - a.first) / (b.second - a.second));
      }
      least = std::min(least, hull_time(h, bytes, beyond));
    }
    if (std::isfinite(least)) t += side.weight * least;
  }
  return t;
}

namespace {

std::string share_text(double s) {
  std::ostringstream os;
  os.precision(4);
  os << s;
  return os.str();
}

// Patterns of one map grouped by read share: the best value at each share and which names gave it.
struct Group {
  double value = 0;      // median (or spec) — the paper-style roof
  double value_max = 0;  // measured maximum where measured — the tight roof
  std::string names;
  std::set<std::string> sources;
};

std::map<double, Group> by_share(const std::map<std::string, Field>& m, SourcePreference pref) {
  std::map<double, Group> out;
  for (const auto& [name, f] : m) {
    const auto share = pattern_read_share(name);
    const auto v = f.value(pref);
    if (!share || !v || !(*v > 0)) continue;
    const bool measured = f.source(pref) == "measured";
    const double vmax = measured && f.measured->max > *v ? f.measured->max : *v;
    Group& g = out[*share];
    if (*v > g.value) g.value = *v;
    if (vmax > g.value_max) g.value_max = vmax;
    g.names += (g.names.empty() ? "" : "/") + name;
    g.sources.insert(std::string(f.source(pref)));
  }
  return out;
}

// Linear in the read share between the two neighbouring shares; the nearest outside them.
struct Mixed {
  double value = 0, value_max = 0;
  std::string how;
  std::set<std::string> sources;
};
Mixed mix(const std::map<double, Group>& g, double r) {
  Mixed m;
  auto hi = g.lower_bound(r);
  if (hi != g.end() && hi->first == r) {
    m = {hi->second.value, hi->second.value_max, hi->second.names + " (read share " + share_text(r) + ")", hi->second.sources};
    return m;
  }
  if (hi == g.begin() || hi == g.end()) {
    const auto& n = hi == g.end() ? *std::prev(g.end()) : *hi;
    m = {n.second.value, n.second.value_max,
         n.second.names + " (nearest pattern, read share " + share_text(n.first) + ", kernel " + share_text(r) + ")",
         n.second.sources};
    return m;
  }
  const auto lo = std::prev(hi);
  const double w = (r - lo->first) / (hi->first - lo->first);
  m.value = (1 - w) * lo->second.value + w * hi->second.value;
  m.value_max = (1 - w) * lo->second.value_max + w * hi->second.value_max;
  m.how = lo->second.names + " (" + share_text(lo->first) + ") .. " + hi->second.names + " (" + share_text(hi->first) +
          ") at read share " + share_text(r);
  m.sources = lo->second.sources;
  m.sources.insert(hi->second.sources.begin(), hi->second.sources.end());
  return m;
}

}  // namespace

MemoryRoof memory_roof(const HardwareDescriptor& hw, MemoryLevelKind level, double read_bytes, double write_bytes,
                       SourcePreference pref) {
  MemoryRoof r;
  r.level = level;
  const std::string lvl = std::string(to_string(level));
  const auto it = hw.memory.find(level);
  if (it == hw.memory.end())
    throw std::runtime_error("memory." + lvl + " is missing in descriptor '" + hw.id + "'");
  const MemoryLevel& L = it->second;
  if (read_bytes >= 0 && write_bytes >= 0 && read_bytes + write_bytes > 0)
    r.read_share = read_bytes / (read_bytes + write_bytes);

  std::map<double, Group> patterns = by_share(L.patterns, pref);
  if (r.read_share >= 0 && !patterns.empty()) {
    const Mixed m = mix(patterns, r.read_share);
    r.bandwidth = m.value;
    r.bandwidth_max = m.value_max;
    r.bandwidth_sustained = m.value_max;
    r.how = m.how;
    r.source = m.sources.size() == 1 ? *m.sources.begin() : "mixed";
    r.provenance.push_back("memory." + lvl + ".patterns: " + r.how + " = " +
                           format_quantity(r.bandwidth, Dimension::bytes_per_second) + " (measured max " +
                           format_quantity(r.bandwidth_max, Dimension::bytes_per_second) + ")");
  } else {
    const auto v = L.bandwidth.value(pref);
    if (!v || !(*v > 0))
      throw std::runtime_error("memory." + lvl + ".bandwidth has no " + std::string(to_string(pref)) +
                               " value in descriptor '" + hw.id + "'");
    r.bandwidth = *v;
    r.bandwidth_max = L.bandwidth.source(pref) == "measured" ? std::max(*v, L.bandwidth.measured->max) : *v;
    r.how = r.read_share < 0 ? "memory." + lvl + ".bandwidth (the kernel's streams are unknown)"
                             : "memory." + lvl + ".bandwidth (no calibrated patterns at this level)";
    r.source = std::string(L.bandwidth.source(pref));
    const std::string from = r.source == "measured"
                                 ? "measured (probe " + L.bandwidth.measured->probe + ", " + L.bandwidth.measured->date + ")"
                                 : "spec (" + L.bandwidth.spec->reference + ")";
    r.provenance.push_back("memory." + lvl + ".bandwidth = " + format_quantity(r.bandwidth, Dimension::bytes_per_second) +
                           ": " + from + "; " + r.how);
  }
  // The envelope's slope where the level's patterns come from another probe: the tight roof is
  // the larger, so the bound stays under every ramp point.
  if (r.read_share >= 0) {
    const auto ramp = by_share(L.ramp_bandwidth, pref);
    if (!ramp.empty()) {
      const Mixed m = mix(ramp, r.read_share);
      // Both roofs: at 1-1.4x the L2, cold SCALE on an H100 ran 3.5-3.9% above the calibrated
      // scale pattern (written lines still in the L2 at kernel end); the ramp's slope saw it.
      if (m.value > r.bandwidth) {
        r.bandwidth = m.value;
        r.how += "; ramp slope " + format_quantity(m.value, Dimension::bytes_per_second) + " (above the patterns)";
      }
      if (m.value_max > r.bandwidth_max) {
        r.bandwidth_max = m.value_max;
        r.provenance.push_back("memory." + lvl + ".ramp_bandwidth: " + m.how + " = " +
                               format_quantity(m.value_max, Dimension::bytes_per_second) +
                               " (above the patterns' maximum)");
      }
    }
    // First-byte time by read share (2026-11-27, twelfth session). The fixed cost of a kernel that
    // only reads is a load's round trip after its last issue (it waits for every byte it asked for);
    // a kernel that stores retires them without one. The read pattern's intercept is the largest on
    // every calibrated board (write / scale / read: H200 GPU-6672a5f8 L2 1.52 / 1.54 / 2.16 us, DRAM
    // 3.09 / 3.16 / 3.99 us; H100 GPU-f7fe233e L2 1.58 / 1.85 / 2.29 us, DRAM 0.86 / 1.26 / 3.98 us;
    // write and scale swap places on some boards: H200 GPU-455b4e05 DRAM 2.94 / 2.86 / 4.02 us).
    // Up to read share 1/2 the bound takes the least intercept of the level's patterns: the SCALE
    // kernel (1/2) ran 0.2-0.3 us under its own pattern's ramp at 1-6 MB in the L2 (an
    // H100, 2026-11-23), and 0.2-0.3% under the scale intercept's line in one of six validating
    // processes (2026-11-27), so a pattern's intercept also holds its probe's own overhead. Above
    // 1/2 it rises linearly to the read pattern's intercept at 1: every read-only kernel measured
    // (GEMV CC and TC, the four SpMV variants; the 96 in-L2 points of the files shipped 2026-11-27
    // reach at most 95.6% of it by their least times) stays under it, where the least intercept
    // left GEMV in the L2 at 60-70% of a bound it came nowhere near.
    std::string which;
    double least = 0, read_only = -1;
    for (const auto& [name, f] : L.first_byte) {
      const auto v = f.value(pref);
      const auto share = pattern_read_share(name);
      if (!share || !v || !(*v >= 0)) continue;
      if (*share == 1.0 && (read_only < 0 || *v < read_only)) read_only = *v;
      if (!r.has_first_byte || *v < least) least = *v, which = name;
      r.has_first_byte = true;
    }
    if (r.has_first_byte) {
      r.first_byte_s = least;
      std::string how = "the least of the level's patterns: " + which;
      if (r.read_share > 0.5 && read_only > least) {
        const double w = (r.read_share - 0.5) / 0.5;
        r.first_byte_s = least + w * (read_only - least);
        how = "read share " + share_text(r.read_share) + ": from the least of the level's patterns (" + which + ", " +
              format_quantity(least, Dimension::seconds) + ") at 1/2 to read's (" +
              format_quantity(read_only, Dimension::seconds) + ") at 1";
      }
      r.provenance.push_back("memory." + lvl + ".first_byte = " + format_quantity(r.first_byte_s, Dimension::seconds) +
                             " (ramp envelope, " + how + ")");
    }
    // Ramp tables: the patterns at the two read shares around the kernel's (the nearest outside).
    // DRAM only: a cold single launch is a floor any kernel meets. The L2 ramp is timed warm, per
    // launch of a back-to-back series, and its least times move between runs by more than its
    // hull's slack: on an H200 (2026-11-26, GPU-c400963d) SCALE ran up to 11% under the hull at
    // 1.8-3.7 MB; timed exactly as validate times in-L2 kernels ("warm-validate", clock-sampled
    // repeats), four runs on one H100 (2026-11-27, GPU-6c0e52c7) gave 2.10-2.27 us at 800 KiB, and
    // SCALE medians beat single-run hulls by up to 8% (NOTES, eighth session). The L2 bound keeps
    // the line first_byte + Q/BW, fitted under every point with slack.
    std::map<double, std::vector<std::pair<std::string, const RampTable*>>> tables;
    if (level == MemoryLevelKind::dram)
      for (const auto& [name, t] : L.ramp)
        if (const auto sh = pattern_read_share(name); sh && t.points.size() >= 2) tables[*sh].emplace_back(name, &t);
    if (!tables.empty()) {
      const auto side = [&](double share, double weight) {
        MemoryRoof::RampSide s;
        s.weight = weight;
        for (const auto& [name, t] : tables.at(share)) {
          s.hulls.push_back(lower_convex_hull(t->points));
          std::ostringstream os;
          os << name << " (" << t->points.size() << " sizes " << format_quantity(t->points.front().first, Dimension::bytes)
             << " .. " << format_quantity(t->points.back().first, Dimension::bytes) << ")";
          r.ramp_how += (r.ramp_how.empty() ? "" : weight < 1 && s.hulls.size() == 1 ? " and " : " / ") + os.str();
        }
        return s;
      };
      auto hi = tables.lower_bound(r.read_share);
      if (hi != tables.end() && hi->first == r.read_share) {
        r.ramp.push_back(side(hi->first, 1));
      } else if (hi == tables.begin() || hi == tables.end()) {
        const double nearest = hi == tables.end() ? std::prev(tables.end())->first : hi->first;
        r.ramp.push_back(side(nearest, 1));
        r.ramp_how += " (nearest pattern)";
      } else {
        const auto lo = std::prev(hi);
        const double w = (r.read_share - lo->first) / (hi->first - lo->first);
        r.ramp.push_back(side(lo->first, 1 - w));
        r.ramp.push_back(side(hi->first, w));
        r.ramp_how += " at read share " + share_text(r.read_share);
      }
      r.provenance.push_back("memory." + lvl + ".ramp: lower convex hull of the least times, " + r.ramp_how +
                             "; past the largest size at " +
                             (r.bandwidth_sustained > 0 ? format_quantity(r.bandwidth_sustained, Dimension::bytes_per_second) +
                                                              " (the patterns' maximum, not the envelope's slope)"
                                                        : format_quantity(r.bandwidth_max, Dimension::bytes_per_second)) +
                             " or the hull's last edge where faster");
    }
  }
  return r;
}

}  // namespace ceiling
