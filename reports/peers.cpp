// The one-run comparison with the public suites (issue 15; scripts/compare-peers.py, docs/PEERS.md)
// in the report: the file's rows as a table and, per GPU, ours / best peer per figure as bars.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>

#include "detail.hpp"
#include "json_members.hpp"
#include "model/json_file.hpp"
#include "report.hpp"

namespace ceiling::reports {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using detail::Members;

// Present, and a finite number or null (compare-peers writes null where it has no figure).
std::optional<double> finite_or_null(const Members& m, const char* key) {
  const auto v = m.number_or_null(key);
  if (v && !std::isfinite(*v)) m.bad(key, "is not finite");
  return v;
}
// Absent or null: nullopt (files written before the member existed).
std::optional<double> optional_number(const Members& m, const char* key) {
  return m.optional(key) ? finite_or_null(m, key) : std::nullopt;
}

PeerRow read_row(const json& j, const fs::path& file, const std::string& where) {
  if (!j.is_object()) throw JsonFileError(file, where, std::string("expected an object, got ") + j.type_name());
  const Members m{j, file, where};
  PeerRow r;
  r.figure = m.text("figure");
  r.label = m.text("label");
  r.unit = m.text("unit");
  r.verdict = m.text("verdict");
  r.note = m.optional_text("note");
  r.ours_how = m.optional_text("ours_how");
  r.ours = finite_or_null(m, "ours");
  r.ours_spread = optional_number(m, "ours_spread");
  r.ours_spread_per_clock = optional_number(m, "ours_spread_per_clock");
  r.ratio = finite_or_null(m, "ratio");
  if (r.ratio && !(*r.ratio > 0)) m.bad("ratio", "must be > 0");
  r.best_peer = m.optional_text("best_peer");
  if (const auto it = j.find("ours_runs"); it != j.end() && it->is_array()) r.runs = it->size();
  const json& peers = m.arr("peers");
  for (std::size_t i = 0; i < peers.size(); ++i) {
    const std::string at = m.path("peers") + "[" + std::to_string(i) + "]";
    if (!peers[i].is_object()) throw JsonFileError(file, at, std::string("expected an object, got ") + peers[i].type_name());
    const Members p{peers[i], file, at};
    const auto v = finite_or_null(p, "value");
    if (!v) p.bad("value", "is null");
    r.peers.push_back({p.text("peer"), *v});
  }
  if (!r.best_peer.empty() && !r.best_peer_value())
    m.bad("best_peer", "'" + r.best_peer + "' is not one of the row's peers");
  return r;
}

bool is_latency(const PeerRow& r) { return r.unit == "cycles"; }

std::string pct(double f) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f%%", f * 100);  // as compare-peers prints it
  return b;
}

}  // namespace

PeersInput load_peers(const fs::path& file) {
  const json j = read_json_file(file, "peers comparison");
  if (!j.is_object()) throw JsonFileError(file, "", std::string("expected an object, got ") + j.type_name());
  const Members top{j, file, ""};
  const std::string schema = j.contains("schema") && j["schema"].is_string() ? j["schema"].get<std::string>() : "";
  if (schema != kPeersSchema)
    throw JsonFileError(file, "schema",
                        "is '" + schema + "', expected '" + kPeersSchema +
                            "' (a file written by scripts/compare-peers.sh or compare-peers.py; docs/PEERS.md)");
  PeersInput p;
  p.path = file;
  p.gpu_name = top.text("gpu");
  p.descriptor_id = top.optional_text("descriptor");
  const json& rows = top.arr("rows");
  for (std::size_t i = 0; i < rows.size(); ++i) p.rows.push_back(read_row(rows[i], file, "rows[" + std::to_string(i) + "]"));
  return p;
}

std::string gpu_for_peers(const PeersInput& p, const std::vector<GpuInput>& gpus) {
  for (const auto& g : gpus)
    if (!p.descriptor_id.empty() && g.hw.id == p.descriptor_id) return g.hw.id;
  for (const auto& g : gpus)
    if (g.hw.identity.name == p.gpu_name) return g.hw.id;
  return {};
}

namespace detail {

Table peers_table(const ReportInput& in) {
  Table t;
  t.id = "table-peers";
  t.title = "Ours and the public suites, figure by figure (scripts/compare-peers.sh, docs/PEERS.md)";
  t.caption = "Our calibration and gpu-benches, BabelStream, mixbench, DissectingTensorCores, the Hopper benchmark "
              "suite and PyTorch run one after the other on one GPU (scripts/compare-peers.sh). Ours: the median of "
              "our calibrations, their spread ((max - min) / median), and for a flop/s figure the spread per SM "
              "clock (the clock's share of it). Rates: ours / best peer >= 1 means ours measured at least the best "
              "peer's figure; latencies: within 2% or which side is lower.";
  t.columns = {"GPU", "figure", "ours", "spread over runs", "spread per SM clock", "best peer", "ours / best peer",
               "verdict"};
  for (const auto& p : in.peers) {
    const int file_note = t.notes.add("from " + p.path.filename().string() + " (" + p.gpu_name + ")");
    for (const auto& r : p.rows) {
      std::vector<Cell> row;
      const auto text = [&](const std::string& s, const std::string& source = "text") {
        Cell c;
        c.text = s;
        c.source = source;
        c.gpu = p.gpu_id;
        c.field = "peers:" + r.figure;
        return c;
      };
      Cell gpu = text(p.gpu_id, "label");
      gpu.note = file_note;
      row.push_back(gpu);
      row.push_back(text(r.label, "label"));
      Cell ours = text(r.ours ? short_num(*r.ours, 4) + " " + r.unit : mark_missing_measured(), r.ours ? "measured" : "missing");
      ours.value = r.ours;
      if (!r.ours_how.empty()) ours.note = t.notes.add("ours: " + r.ours_how);
      row.push_back(ours);
      Cell spread = text(r.ours_spread && r.runs > 1 ? pct(*r.ours_spread) + " over " + std::to_string(r.runs) : "—",
                         r.ours_spread && r.runs > 1 ? "derived" : "text");
      if (r.ours_spread && r.runs > 1) spread.value = *r.ours_spread;
      row.push_back(spread);
      Cell per_clock = text(r.ours_spread_per_clock ? pct(*r.ours_spread_per_clock) : "—",
                            r.ours_spread_per_clock ? "derived" : "text");
      per_clock.value = r.ours_spread_per_clock;
      row.push_back(per_clock);
      const auto best = r.best_peer_value();
      Cell peer = text(best ? r.best_peer + " " + short_num(*best, 4) + " " + r.unit : "—", best ? "measured" : "text");
      peer.value = best;
      if (!r.note.empty()) peer.note = t.notes.add(r.label + ": " + r.note);
      row.push_back(peer);
      Cell ratio = text(r.ratio ? short_num(*r.ratio, 4) : "—", r.ratio ? "derived" : "text");
      ratio.value = r.ratio;
      row.push_back(ratio);
      row.push_back(text(r.verdict));
      t.rows.push_back(std::move(row));
    }
  }
  return t;
}

PlotSpec peers_plot(const PeersInput& p) {
  PlotSpec s;
  s.name = "peers-" + (p.gpu_id.empty() ? std::string("gpu") : p.gpu_id);
  s.gpu_id = p.gpu_id;
  s.title = "Ours / best peer, one run: " + p.gpu_name + " (" + p.gpu_id + ")";
  std::ostringstream db, csv;
  csv << "figure,unit,ours,best_peer,best_peer_value,ratio\n";
  json data;
  data["gpu"] = p.gpu_id;
  data["file"] = p.path.filename().string();
  data["bars"] = json::array();
  db << "$peers << EOD\n";
  int k = 0;
  double lo = 1, hi = 1;
  for (const auto& r : p.rows) {
    const auto best = r.best_peer_value();
    if (is_latency(r) || !r.ratio || !best || !r.ours) continue;  // rates only: higher is better
    std::string label = r.label;
    std::replace(label.begin(), label.end(), '"', '\'');
    const long color = *r.ratio >= 1 ? 0x2e7d32 : 0xef6c00;  // green at or above 1, orange below
    db << k << " \"" << label << "\" " << exact(*r.ratio) << " " << color << "\n";
    csv << csv_field(r.label) << "," << csv_field(r.unit) << "," << exact(*r.ours) << "," << csv_field(r.best_peer) << ","
        << exact(*best) << "," << exact(*r.ratio) << "\n";
    data["bars"].push_back({{"figure", r.figure}, {"label", r.label}, {"unit", r.unit}, {"ours", *r.ours},
                            {"best_peer", r.best_peer}, {"best_peer_value", *best}, {"ratio", *r.ratio}});
    lo = std::min(lo, *r.ratio);
    hi = std::max(hi, *r.ratio);
    ++k;
  }
  db << "EOD\n";
  if (!k) {
    s.missing_reason = "no rate figure with a peer's in " + p.path.filename().string();
    return s;
  }
  const double ymin = std::max(0.0, std::floor((lo - 0.05) * 20) / 20), ymax = std::ceil((hi + 0.05) * 20) / 20;
  std::ostringstream body;
  body << "  set title " << gp_string(s.title) << "\n"
       << "  set ylabel 'ours / best peer'\n"
       << "  set yrange [" << exact(ymin) << ":" << exact(ymax) << "]\n"
       << "  set xrange [-0.6:" << k - 0.4 << "]\n"
       << "  set style fill solid 0.8 border -1\n"
       << "  set boxwidth 0.7\n"
       << "  set xtics rotate by -40 font ',9' nomirror\n"
       << "  set rmargin 9\n"
       << "  set bmargin 8\n"
       << "  set grid ytics lc rgb '#dddddd'\n"
       << "  set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb '#444444'\n"
       << "  unset key\n"
       << "  plot $peers using 1:3:(0.7):4:xtic(2) with boxes lc rgb variable\n";
  s.width = 1000;
  s.height = 520;
  s.datablocks = db.str();
  s.body = body.str();
  s.csv = csv.str();
  s.data = data;
  s.caption = "Our figure over the best peer's, measured one after the other on this GPU (" + p.path.filename().string() +
              "): green at or above 1 (ours measured at least the best peer's), orange below. Rates only; the latencies "
              "are in the table. Why a peer leads where it does: docs/PEERS.md.";
  return s;
}

}  // namespace detail
}  // namespace ceiling::reports
