// Tensor-core power beside Luo et al. Table XI (issue 14): the paper's figures, our readings and
// their E, the report's two tables and the E plot.
#include "power.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <tuple>

#include "detail.hpp"

namespace ceiling::reports {

using nlohmann::json;

std::string PaperPowerRow::key() const {
  TensorInstruction ti;
  ti.api = "mma";
  ti.shape = shape;
  ti.input = input;
  ti.accumulate = accumulate;
  ti.sparse = sparse;
  return ti.key();
}

const std::array<PaperPowerGpu, 3>& paper_power_gpus() {
  static const std::array<PaperPowerGpu, 3> g{{{"A100 PCIe", "a100-80gb"}, {"H800 PCIe", "h800-pcie"}, {"RTX 4090", ""}}};
  return g;
}

const std::vector<PaperPowerRow>& luo_table_xi() {
  using P = Precision;
  // Table XI as printed: {A100, H800, RTX 4090} P (W) and E (TFLOPS/W). E is Table VII's throughput of
  // the same instruction / P (tests/test_power_table.cpp reproduces all 24 within 0.005).
  static const std::vector<PaperPowerRow> rows{
      {P::fp16, P::fp16, false, "m16n8k16", {173.4, 188.6, 189.1}, {1.79, 2.62, 1.89}},
      {P::fp16, P::fp16, true, "m16n8k32", {198.8, 187.2, 214.0}, {3.13, 3.86, 3.33}},
      {P::fp16, P::fp32, false, "m16n8k16", {188.5, 196.7, 154.1}, {1.61, 2.49, 1.16}},
      {P::fp16, P::fp32, true, "m16n8k32", {216.1, 194.9, 165.9}, {2.79, 3.70, 2.15}},
      {P::tf32, P::fp32, false, "m16n8k8", {214.7, 254.9, 174.3}, {0.71, 0.97, 0.51}},
      {P::tf32, P::fp32, true, "m16n8k16", {235.7, 232.5, 187.9}, {1.28, 1.56, 0.95}},
      {P::int8, P::int32, false, "m16n8k32", {178.4, 165.3, 201.4}, {3.41, 5.92, 3.53}},
      {P::int8, P::int32, true, "m16n8k64", {193.9, 163.3, 219.8}, {6.24, 8.79, 6.47}},
  };
  return rows;
}

namespace {

std::optional<double> num(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}
std::string str(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// One power reading as a probe's details (probes.json) keep it.
struct DetailsReading {
  std::string key, probe;
  double watts = 0, rate = 0, per_watt = 0, sm_clock_hz = 0;
};

// Every reading in g's probes.json: probes.<p>.details.power[] (by "instruction") and
// probes.<p>.details.sparse_vs_dense[].power.{dense,sparse} (by the entry's "dense"/"sparse" key).
std::vector<DetailsReading> details_readings(const GpuInput& g) {
  std::vector<DetailsReading> out;
  if (!g.probes || !g.probes->is_object()) return out;
  const auto probes = g.probes->find("probes");
  if (probes == g.probes->end() || !probes->is_object()) return out;
  for (const auto& item : probes->items()) {
    // Named copies: a lambda may not capture a structured binding before C++20's clang 16.
    const std::string name = item.key();
    const json& e = item.value();
    if (!e.is_object()) continue;
    if (const auto s = e.find("skipped"); s != e.end() && !s->is_null()) continue;
    const auto d = e.find("details");
    if (d == e.end() || !d->is_object()) continue;
    const auto add = [&](const std::string& key, const json& p) {
      if (key.empty() || !p.is_object()) return;
      const auto w = num(p, "watts");
      if (!w || *w <= 0) return;
      if (std::any_of(out.begin(), out.end(), [&](const DetailsReading& x) { return x.key == key && x.probe == name; }))
        return;  // the first of a repeated instruction
      DetailsReading x{key, name, *w, num(p, "rate_during").value_or(0), num(p, "work_per_joule").value_or(0),
                       num(p, "sm_clock_hz").value_or(0)};
      if (x.per_watt <= 0 && x.rate > 0) x.per_watt = x.rate / x.watts;
      if (x.rate <= 0 && x.per_watt > 0) x.rate = x.per_watt * x.watts;
      out.push_back(std::move(x));
    };
    if (const auto p = d->find("power"); p != d->end() && p->is_array())
      for (const auto& x : *p)
        if (x.is_object()) add(str(x, "instruction"), x);
    if (const auto s = d->find("sparse_vs_dense"); s != d->end() && s->is_array())
      for (const auto& x : *s) {
        if (!x.is_object()) continue;
        const auto pw = x.find("power");
        if (pw == x.end() || !pw->is_object()) continue;
        for (const char* which : {"dense", "sparse"})
          if (const auto q = pw->find(which); q != pw->end()) add(str(x, which), *q);
      }
  }
  return out;
}

// The A/B type of a key ("wgmma.m64n256k32.fp8_e4m3.fp32.ss" -> fp8); fp16 when it names none.
Precision input_of_key(const std::string& key) {
  std::vector<std::string> parts;
  std::stringstream ss(key);
  for (std::string s; std::getline(ss, s, '.');) parts.push_back(s);
  if (parts.size() < 3) return Precision::fp16;
  try {
    return parse_precision(parts[2].substr(0, parts[2].find('_')));
  } catch (const std::exception&) {
    return Precision::fp16;
  }
}

}  // namespace

std::vector<PowerReading> power_readings(const GpuInput& g) {
  const std::vector<DetailsReading> details = details_readings(g);
  std::vector<PowerReading> out;
  std::set<std::string> keys;
  for (const auto& ti : g.hw.tensor_instructions) {
    if (!ti.power.measured || !(ti.power.measured->median > 0)) continue;
    const MeasuredValue& m = *ti.power.measured;
    PowerReading r;
    r.key = ti.key();
    r.input = ti.input;
    r.watts = m.median;
    r.sm_clock_hz = m.sm_clock_hz;
    r.probe = m.probe;
    r.measured = &m;
    // The probe's details of this very reading: the same probe, watts within 1% (the descriptor rounds them).
    const auto d = std::find_if(details.begin(), details.end(), [&](const DetailsReading& x) {
      return x.key == r.key && x.probe == m.probe && x.per_watt > 0 && std::abs(x.watts / m.median - 1) <= 0.01;
    });
    if (d != details.end()) {
      r.rate = d->rate;
      r.per_watt = d->per_watt;
      r.source = EfficiencySource::probe_details;
    } else if (ti.sustained.measured && ti.sustained.measured->median > 0) {
      r.rate = ti.sustained.measured->median;  // the same reading's rate, kept in the descriptor
      r.per_watt = r.rate / r.watts;
      r.source = EfficiencySource::sustained_over_power;
    } else if (ti.throughput.measured && ti.throughput.measured->median > 0) {
      r.rate = ti.throughput.measured->median;
      r.per_watt = r.rate / r.watts;
      r.source = EfficiencySource::throughput_over_power;
    }
    keys.insert(r.key);
    out.push_back(std::move(r));
  }
  for (const auto& d : details) {
    if (!keys.insert(d.key).second) continue;  // the descriptor has this instruction's power
    PowerReading r;
    r.key = d.key;
    r.input = input_of_key(d.key);
    r.watts = d.watts;
    r.sm_clock_hz = d.sm_clock_hz;
    r.probe = d.probe;
    if (d.per_watt > 0) {
      r.rate = d.rate;
      r.per_watt = d.per_watt;
      r.source = EfficiencySource::probe_details;
    }
    out.push_back(std::move(r));
  }
  return out;
}

namespace detail {

namespace {

std::string type_name(Precision p) {
  std::string s(to_string(p));
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

Cell label_cell(std::string text) {
  Cell c;
  c.text = std::move(text);
  c.source = "label";
  return c;
}

Cell missing_cell(const std::string& gpu, const std::string& field) {
  Cell c;
  c.text = mark_missing_measured();
  c.source = "missing";
  c.gpu = gpu;
  c.field = field;
  return c;
}

std::string probes_file(const GpuInput& g) {
  return g.probes_path.empty() ? g.hw.id + ".probes.json" : g.probes_path.filename().string();
}

// The three cells of one reading: P, E, SM clock.
void reading_cells(Table& t, std::vector<Cell>& row, const GpuInput& g, const PowerReading* r, const std::string& key) {
  const std::string field = "tensor:" + key + ".power";
  if (!r) {
    row.push_back(missing_cell(g.hw.id, field));
    row.push_back(missing_cell(g.hw.id, field + ".per_watt"));
    row.push_back(missing_cell(g.hw.id, field + ".sm_clock"));
    return;
  }
  Cell p;
  p.gpu = g.hw.id;
  p.field = field;
  p.dimension = std::string(to_string(Dimension::watts));
  p.value = r->watts;
  p.text = format_quantity(r->watts, Dimension::watts);
  p.source = "measured";
  if (r->measured) {
    if (r->measured->flagged) p.text += " (flagged)";
    p.note = t.notes.add(measured_note(g.hw, *r->measured, Dimension::watts));
  } else {
    p.note = t.notes.add(g.hw.id + " measured: probe " + r->probe + ", in " + probes_file(g) +
                         " only (the probe read it beside the instruction it measures; the descriptor keeps no power "
                         "for this instruction)");
  }
  row.push_back(p);
  Cell e;
  e.gpu = g.hw.id;
  e.field = field + ".per_watt";
  if (r->per_watt) {
    e.value = *r->per_watt / 1e12;
    e.text = short_num(*r->per_watt / 1e12, 3);
    e.source = "derived";
    e.note = t.notes.add(
        r->source == EfficiencySource::probe_details
            ? g.hw.id + " E: the probe's work rate during the power reading (launches x work / the reading's run time) / P, "
                        "from " + probes_file(g)
            : r->source == EfficiencySource::sustained_over_power
                ? g.hw.id + " E: the instruction's sustained rate (the work rate during the same power reading, kept in "
                            "the descriptor) / P"
                : g.hw.id + " E: throughput.measured / P (no probe details of this reading: the throughput probe's short run, "
                            "not the rate during the reading, and no clock correction)");
  } else {
    e.text = "\u2014";
    e.source = "missing";
  }
  row.push_back(e);
  Cell c;
  c.gpu = g.hw.id;
  c.field = field + ".sm_clock";
  if (r->sm_clock_hz > 0) {
    c.value = r->sm_clock_hz;
    c.dimension = std::string(to_string(Dimension::hertz));
    c.text = format_quantity(r->sm_clock_hz, Dimension::hertz, 3);
    c.source = "measured";
  } else {
    c.text = "\u2014";
    c.source = "missing";
  }
  row.push_back(c);
}

// The paper's two cells (P, E) of one GPU for one Table XI row.
void paper_cells(Table& t, std::vector<Cell>& row, const PaperPowerRow& pr, std::size_t gpu) {
  const PaperPowerGpu& g = paper_power_gpus()[gpu];
  const int note = t.notes.add(std::string(kTableXiCitation) + ", " + g.name + " column, as printed" +
                               (g.id.empty() ? std::string() : " (P also in hardware/" + g.id + ".yaml as power spec)"));
  const std::string field = "paper:luo-t11." + g.name + "." + pr.key();
  Cell p;
  p.value = pr.watts[gpu];
  p.text = format_quantity(pr.watts[gpu], Dimension::watts);
  p.source = "spec";
  p.dimension = std::string(to_string(Dimension::watts));
  p.field = field + ".power";
  p.note = note;
  row.push_back(p);
  Cell e;
  e.value = pr.per_watt[gpu];
  char b[16];
  std::snprintf(b, sizeof b, "%.2f", pr.per_watt[gpu]);
  e.text = b;
  e.source = "spec";
  e.field = field + ".per_watt";
  e.note = note;
  row.push_back(e);
}

const PowerReading* find_reading(const std::vector<PowerReading>& rs, const std::string& key) {
  for (const auto& r : rs)
    if (r.key == key) return &r;
  return nullptr;
}

bool is_table_xi_key(const std::string& key) {
  const auto& rows = luo_table_xi();
  return std::any_of(rows.begin(), rows.end(), [&](const PaperPowerRow& r) { return r.key() == key; });
}

const char* kHowToMeasure = "ceiling calibrate --power";

// Reading order of the other table: mma before wgmma, then A/B type, C/D type, operand source, dense
// before sparse, and shapes by m, n, k as numbers (m16n8k8 before m16n8k16).
struct KeyOrder {
  std::string api, input, accumulate, operand_a;
  bool sparse = false;
  std::array<int, 3> mnk{};
  bool operator<(const KeyOrder& o) const {
    return std::tie(api, input, accumulate, operand_a, sparse, mnk) <
           std::tie(o.api, o.input, o.accumulate, o.operand_a, o.sparse, o.mnk);
  }
};
KeyOrder key_order(const std::string& key) {
  std::vector<std::string> parts;
  std::stringstream ss(key);
  for (std::string x; std::getline(ss, x, '.');) parts.push_back(x);
  KeyOrder o;
  if (parts.size() < 4) {
    o.api = key;
    return o;
  }
  o.api = parts[0];
  o.input = parts[2];
  o.accumulate = parts[3];
  o.sparse = parts.back() == "sp";
  if (parts.size() > 4 && parts[4] != "sp") o.operand_a = parts[4];
  const std::string& shape = parts[1];
  for (std::size_t i = 0, d = 0; i < shape.size() && d < 3; ++i)
    if (shape[i] == "mnk"[d]) {
      o.mnk[d++] = std::atoi(shape.c_str() + i + 1);
    }
  return o;
}

}  // namespace

Table power_table(const ReportInput& in) {
  Table t;
  t.id = "table-power";
  t.title = "Tensor-core power and energy efficiency at the largest mma shapes (Luo et al. Table XI)";
  t.caption =
      "P: board power while the largest mma.sync shape of each type runs saturated (dense m16n8k16 FP16, m16n8k8 TF32, "
      "m16n8k32 INT8; 2:4 sparse m16n8k32, m16n8k16, m16n8k64: the instruction's k, twice Table VII's compressed k). "
      "E: work per joule in TFLOP/s per W (TOP/s per W for INT8), as the paper prints it. Ours: calibrate --power, "
      "NVML's energy counter over at least 10 of its updates; E is the probe's rate during that reading / P from "
      "probes.json where it has the reading, else throughput.measured / P (the footnote says which). No clock ratio "
      "is applied: the SM clock shown is NVML's under the load, a different reading from the clock64-measured clock "
      "of throughput.measured (on the shipped H200, FP16 m16n8k16: NVML 1.98 GHz, clock64 1.81 GHz, while the rate "
      "during the reading is the short run's within 0.2%). The paper's E is its Table VII throughput / P "
      "(reproduced within 0.005 for all 24 values); its cards are PCIe boards (A100 PCIe, H800 PCIe with a 350 W "
      "limit) and an RTX 4090. Our operands are random; the paper says neither what its mma operands held nor how "
      "P was read (its §IV-C puts wgmma's lower throughput with random operands down to the 350 W limit).";
  std::vector<std::pair<const GpuInput*, std::vector<PowerReading>>> cols;
  for (const auto& g : in.gpus) {
    auto rs = power_readings(g);
    if (std::any_of(rs.begin(), rs.end(), [](const PowerReading& r) { return is_table_xi_key(r.key); }))
      cols.emplace_back(&g, std::move(rs));
  }
  t.groups.push_back({"", 4});
  for (const char* c : {"A/B", "C/D", "T", "instruction"}) t.columns.push_back(c);
  for (const auto& [g, rs] : cols) {
    t.groups.push_back({g->hw.identity.name + " (" + g->hw.id + ")", 3});
    for (const char* c : {"P", "E", "SM clock"}) t.columns.push_back(c);
  }
  for (const auto& pg : paper_power_gpus()) {
    t.groups.push_back({"Luo et al. " + pg.name, 2});
    for (const char* c : {"P", "E"}) t.columns.push_back(c);
  }
  for (const auto& pr : luo_table_xi()) {
    const std::string key = pr.key();
    if (std::none_of(cols.begin(), cols.end(), [&](const auto& c) { return find_reading(c.second, key) != nullptr; }))
      continue;  // nobody measured it: the paper's figures alone are in Table XI
    std::vector<Cell> row{label_cell(type_name(pr.input)), label_cell(type_name(pr.accumulate)),
                          label_cell(pr.sparse ? "S" : "D"), label_cell(key)};
    for (const auto& [g, rs] : cols) reading_cells(t, row, *g, find_reading(rs, key), key);
    for (std::size_t i = 0; i < paper_power_gpus().size(); ++i) paper_cells(t, row, pr, i);
    t.rows.push_back(std::move(row));
  }
  if (t.rows.empty())
    t.caption += std::string(" No GPU of this report has power measured under these instructions; ") + kHowToMeasure +
                 " measures it (the paper's figures are in hardware/h800-pcie.yaml and a100-80gb.yaml as power spec).";
  else if (t.rows.size() < luo_table_xi().size())
    t.caption += std::string(" Rows none of these GPUs measured are left out; ") + kHowToMeasure + " measures them.";
  return t;
}

Table power_other_table(const ReportInput& in) {
  Table t;
  t.id = "table-power-other";
  t.title = "Tensor-core power under the other instructions measured (wgmma, FP64, BF16, FP8, INT4, smaller shapes)";
  t.caption = "As table-power (P, E, NVML's SM clock under the load) for every other instruction calibrate --power read; "
              "the paper has no such figures (Table XI covers the largest mma shapes only). Dense wgmma readings come "
              "from the wgmma-sp probe's details (read beside their sparse partner; the descriptor keeps no power for "
              "them). E in TFLOP/s per W, TOP/s per W for INT8 and INT4.";
  std::vector<std::pair<const GpuInput*, std::vector<PowerReading>>> cols;
  std::vector<std::string> keys;
  for (const auto& g : in.gpus) {
    auto rs = power_readings(g);
    bool any = false;
    for (const auto& r : rs)
      if (!is_table_xi_key(r.key)) {
        any = true;
        if (std::find(keys.begin(), keys.end(), r.key) == keys.end()) keys.push_back(r.key);
      }
    if (any) cols.emplace_back(&g, std::move(rs));
  }
  std::stable_sort(keys.begin(), keys.end(),
                   [](const std::string& a, const std::string& b) { return key_order(a) < key_order(b); });
  t.groups.push_back({"", 1});
  t.columns.push_back("instruction");
  for (const auto& [g, rs] : cols) {
    t.groups.push_back({g->hw.identity.name + " (" + g->hw.id + ")", 3});
    for (const char* c : {"P", "E", "SM clock"}) t.columns.push_back(c);
  }
  for (const auto& key : keys) {
    std::vector<Cell> row{label_cell(key)};
    for (const auto& [g, rs] : cols) reading_cells(t, row, *g, find_reading(rs, key), key);
    t.rows.push_back(std::move(row));
  }
  if (t.rows.empty()) t.caption += std::string(" None measured; ") + kHowToMeasure + " measures them.";
  return t;
}

PlotSpec power_plot(const GpuInput& g) {
  PlotSpec p;
  p.name = "power-" + g.hw.id;
  p.gpu_id = g.hw.id;
  p.title = "Tensor-core energy efficiency beside Luo et al. Table XI: " + g.hw.identity.name + " (" + g.hw.id + ")";
  const auto rs = power_readings(g);
  std::ostringstream db, csv;
  csv << "instruction,row,ours_per_watt,ours_watts,h800_per_watt,a100_per_watt,rtx4090_per_watt\n";
  json data;
  data["gpu"] = g.hw.id;
  data["unit"] = "TFLOP/s per W (TOP/s per W for INT8)";
  data["rows"] = json::array();
  db << "$power << EOD\n";
  int n = 0;
  for (const auto& pr : luo_table_xi()) {
    const PowerReading* r = find_reading(rs, pr.key());
    if (!r || !r->per_watt) continue;
    const double ours = *r->per_watt / 1e12;
    const std::string row = type_name(pr.input) + "/" + type_name(pr.accumulate) + (pr.sparse ? " S" : " D");
    db << '"' << row << "\" " << exact(ours) << " " << exact(pr.per_watt[1]) << " " << exact(pr.per_watt[0]) << " "
       << exact(pr.per_watt[2]) << "\n";
    csv << pr.key() << "," << csv_field(row) << "," << exact(ours) << "," << exact(r->watts) << ","
        << exact(pr.per_watt[1]) << "," << exact(pr.per_watt[0]) << "," << exact(pr.per_watt[2]) << "\n";
    data["rows"].push_back({{"instruction", pr.key()},
                            {"row", row},
                            {"ours_per_watt", ours},
                            {"ours_watts", r->watts},
                            {"paper_per_watt", {{"A100 PCIe", pr.per_watt[0]}, {"H800 PCIe", pr.per_watt[1]}, {"RTX 4090", pr.per_watt[2]}}}});
    ++n;
  }
  db << "EOD\n";
  if (n == 0) {
    p.missing_reason = "not measured (no power reading of a Table XI instruction; ceiling calibrate --power)";
    return p;
  }
  std::ostringstream body;
  body << "  set title " << gp_string(p.title) << "\n"
       << "  set style data histograms\n"
       << "  set style histogram clustered gap 1\n"
       << "  set style fill solid 0.85 border -1\n"
       << "  set boxwidth 0.9\n"
       << "  set xtics font ',9'\n"
       << "  set ylabel 'TFLOP/s per W (TOP/s per W for INT8)'\n"
       << "  set yrange [0:*]\n"
       << "  set grid ytics lc rgb '#dddddd'\n"
       << "  set key top left box opaque font ',9'\n"
       << "  plot $power using 2:xtic(1) lc rgb '#1f77b4' title " << gp_string(g.hw.id + " (ours)") << ", \\\n"
       << "       $power using 3 lc rgb '#d62728' title 'H800 PCIe (Luo et al.)', \\\n"
       << "       $power using 4 lc rgb '#2ca02c' title 'A100 PCIe (Luo et al.)', \\\n"
       << "       $power using 5 lc rgb '#9467bd' title 'RTX 4090 (Luo et al.)'\n";
  p.width = 900;
  p.height = 480;
  p.datablocks = db.str();
  p.body = body.str();
  p.csv = csv.str();
  p.data = std::move(data);
  p.caption = "E = work per joule (TFLOP/s per W; TOP/s per W for INT8) of the largest mma shape of each type, dense (D) "
              "and 2:4 sparse (S): ours (calibrate --power; table-power says how E was found per row) beside Luo et "
              "al.'s Table XI figures for their H800 PCIe, A100 PCIe and RTX 4090. Rows this GPU has no reading of "
              "are left out.";
  return p;
}

}  // namespace detail

}  // namespace ceiling::reports
