// Tables in the style of the source papers, several GPUs side by side, spec next to measured.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

#include "detail.hpp"

namespace ceiling::reports::detail {

using nlohmann::json;

std::string mark_missing_measured() { return "\u2014 not measured"; }
std::string mark_missing_spec() { return "\u2014 no spec"; }

int Notes::add(const std::string& text) {
  for (size_t i = 0; i < items.size(); ++i)
    if (items[i] == text) return static_cast<int>(i) + 1;
  items.push_back(text);
  return static_cast<int>(items.size());
}

std::string exact(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

std::string short_num(double v, int sig) {
  char b[40];
  std::snprintf(b, sizeof b, "%.*g", sig, v);
  return b;
}

std::string spec_note(const HardwareDescriptor& hw, const SpecValue& s) {
  std::string ref = s.reference.empty() ? "no reference given" : s.reference;
  if (auto it = hw.references.find(s.reference); it != hw.references.end())
    ref = s.reference + ": " + it->second;
  return hw.id + " spec: " + ref;
}

std::string measured_note(const HardwareDescriptor& hw, const MeasuredValue& m, Dimension d) {
  std::ostringstream o;
  o << hw.id << " measured: probe " << (m.probe.empty() ? "?" : m.probe) << ", "
    << (m.date.empty() ? "date unknown" : m.date);
  if (m.repeats > 0) o << ", median of " << m.repeats;
  if (m.max > 0) o << " (min " << format_quantity(m.min, d) << ", max " << format_quantity(m.max, d) << ")";
  if (m.cv > 0) o << ", cv " << short_num(m.cv * 100, 2) << "%";
  if (m.sm_clock_hz > 0) o << ", SM clock " << short_num(m.sm_clock_hz / 1e6, 4) << " MHz";
  if (m.flagged) o << ", FLAGGED (throttled or noisy)";
  if (!m.note.empty()) o << "; " << m.note;
  return o.str();
}

namespace {

Cell label(std::string text) {
  Cell c;
  c.text = std::move(text);
  c.source = "label";
  return c;
}

Cell text_cell(std::string text, int span) {
  Cell c;
  c.text = text.empty() ? "\u2014" : std::move(text);
  c.source = "text";
  c.span = span;
  return c;
}

// The two cells (spec, measured) of one descriptor field.
void field_cells(Table& t, std::vector<Cell>& row, const GpuInput& g, const Field* f, const std::string& path,
                 Dimension dim) {
  Cell spec, meas;
  spec.gpu = meas.gpu = g.hw.id;
  spec.field = meas.field = path;
  spec.dimension = meas.dimension = std::string(to_string(dim));
  if (f && f->spec) {
    spec.value = f->spec->value;
    spec.text = format_quantity(f->spec->value, dim);
    spec.source = "spec";
    spec.note = t.notes.add(spec_note(g.hw, *f->spec));
  } else {
    spec.text = mark_missing_spec();
    spec.source = "missing";
  }
  if (f && f->measured) {
    meas.value = f->measured->median;
    meas.text = format_quantity(f->measured->median, dim);
    if (f->measured->flagged) meas.text += " (flagged)";
    meas.source = "measured";
    meas.note = t.notes.add(measured_note(g.hw, *f->measured, dim));
  } else {
    meas.text = mark_missing_measured();
    meas.source = "missing";
  }
  row.push_back(spec);
  row.push_back(meas);
}

void side_by_side_header(Table& t, const ReportInput& in, int per_gpu, const std::vector<std::string>& cols) {
  t.groups.push_back({"", 1});
  t.columns.push_back("");
  for (const auto& g : in.gpus) {
    t.groups.push_back({g.hw.identity.name + " (" + g.hw.id + ")", per_gpu});
    for (const auto& c : cols) t.columns.push_back(c);
  }
}

bool any_present(const ReportInput& in, const std::string& path) {
  for (const auto& g : in.gpus)
    if (const Field* f = g.hw.find_field(path); f && f->present()) return true;
  return false;
}

void field_row(Table& t, const ReportInput& in, const std::string& row_label, const std::string& path, Dimension dim,
               bool always) {
  if (!always && !any_present(in, path)) return;
  std::vector<Cell> row{label(row_label)};
  for (const auto& g : in.gpus) field_cells(t, row, g, g.hw.find_field(path), path, dim);
  t.rows.push_back(std::move(row));
}

// Derived ratio a/b per source: spec from both spec values, measured from both measured values.
void ratio_row(Table& t, const ReportInput& in, const std::string& row_label, const std::string& a_path,
               const std::string& b_path, const std::string& unit, const std::string& what) {
  if (!any_present(in, a_path) || !any_present(in, b_path)) return;
  std::vector<Cell> row{label(row_label)};
  for (const auto& g : in.gpus) {
    const Field* a = g.hw.find_field(a_path);
    const Field* b = g.hw.find_field(b_path);
    for (int measured = 0; measured < 2; ++measured) {
      Cell c;
      c.gpu = g.hw.id;
      c.field = "derived:" + a_path + "/" + b_path;
      std::optional<double> av, bv;
      if (a && b) {
        if (measured && a->measured && b->measured) {
          av = a->measured->median;
          bv = b->measured->median;
        }
        if (!measured && a->spec && b->spec) {
          av = a->spec->value;
          bv = b->spec->value;
        }
      }
      if (av && bv && *bv > 0) {
        c.value = *av / *bv;
        c.text = short_num(*c.value, 4) + unit;
        c.source = "derived";
        c.note = t.notes.add(std::string("derived: ") + what + ", both " + (measured ? "measured" : "spec") +
                             " values of the same descriptor");
      } else {
        c.text = measured ? mark_missing_measured() : mark_missing_spec();
        c.source = "missing";
      }
      row.push_back(c);
    }
  }
  t.rows.push_back(std::move(row));
}

std::string level_name(MemoryLevelKind k) {
  switch (k) {
    case MemoryLevelKind::dram: return "DRAM";
    case MemoryLevelKind::l2: return "L2";
    case MemoryLevelKind::l1: return "L1";
    case MemoryLevelKind::shared: return "Shared";
  }
  return "?";
}

std::string unit_name(ComputeUnit u) { return u == ComputeUnit::cuda_core ? "CUDA core" : "tensor core"; }

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

const std::vector<MemoryLevelKind> kLevels{MemoryLevelKind::l1, MemoryLevelKind::shared, MemoryLevelKind::l2,
                                           MemoryLevelKind::dram};

Table platform_table(const ReportInput& in) {
  Table t;
  t.id = "table-platform";
  t.title = "Platform (GPGPU'25 Table 1 style)";
  t.caption = "Identity, clocks, capacities, bandwidth and peak compute. Spec next to measured; "
              "every number carries a footnote with its reference or probe and date.";
  side_by_side_header(t, in, 2, {"spec", "measured"});
  auto text_row = [&](const std::string& name, auto get) {
    std::vector<Cell> row{label(name)};
    for (const auto& g : in.gpus) row.push_back(text_cell(get(g), 2));
    t.rows.push_back(std::move(row));
  };
  text_row("GPU", [](const GpuInput& g) { return g.hw.identity.name; });
  text_row("Compute capability", [](const GpuInput& g) { return g.hw.identity.compute_capability; });
  text_row("SMs", [](const GpuInput& g) {
    return g.hw.identity.sm_count > 0 ? std::to_string(g.hw.identity.sm_count) : std::string();
  });
  text_row("Memory", [](const GpuInput& g) { return g.hw.identity.memory_type; });
  text_row("CUDA version", [](const GpuInput& g) { return g.hw.identity.cuda_version; });
  text_row("Driver", [](const GpuInput& g) { return g.hw.identity.driver; });
  text_row("Descriptor", [](const GpuInput& g) {
    return g.descriptor_path.filename().string() +
           (g.hw.tool_version.empty() ? std::string() : " (ceiling " + g.hw.tool_version + ")");
  });
  field_row(t, in, "SM clock", "sm_clock", Dimension::hertz, true);
  field_row(t, in, "Memory clock", "memory_clock", Dimension::hertz, false);
  for (auto k : kLevels) {
    std::string key = std::string(to_string(k));
    field_row(t, in, level_name(k) + " capacity", "memory." + key + ".capacity", Dimension::bytes,
              k == MemoryLevelKind::l2 || k == MemoryLevelKind::dram);
    std::set<std::string> extras;
    for (const auto& g : in.gpus)
      if (auto it = g.hw.memory.find(k); it != g.hw.memory.end())
        for (const auto& [name, f] : it->second.extra) extras.insert(name);
    for (const auto& name : extras) {
      Dimension dim = Dimension::bytes;
      for (const auto& g : in.gpus)
        if (const Field* f = g.hw.find_field("memory." + key + ".extra." + name)) dim = f->dimension;
      field_row(t, in, level_name(k) + " " + name, "memory." + key + ".extra." + name, dim, false);
    }
  }
  field_row(t, in, "DRAM bandwidth", "memory.dram.bandwidth", Dimension::bytes_per_second, true);
  std::set<std::pair<ComputeUnit, Precision>> peaks;
  for (const auto& g : in.gpus)
    for (const auto& [u, m] : g.hw.compute)
      for (const auto& [p, f] : m) peaks.insert({u, p});
  for (auto [u, p] : peaks)
    field_row(t, in, upper(std::string(to_string(p))) + " peak, " + unit_name(u),
              "compute." + std::string(to_string(u)) + "." + std::string(to_string(p)), Dimension::flop_per_second,
              true);
  ratio_row(t, in, "\u03b1 FP64 = P(TC)/P(CC)", "compute.tensor_core.fp64", "compute.cuda_core.fp64", "",
            "FP64 tensor-core peak / FP64 CUDA-core peak");
  ratio_row(t, in, "B FP64 CUDA core / DRAM", "compute.cuda_core.fp64", "memory.dram.bandwidth", " flop/B",
            "machine balance, FP64 CUDA-core peak / DRAM bandwidth (Eq. 1)");
  return t;
}

Table latency_table(const ReportInput& in) {
  Table t;
  t.id = "table-latency";
  t.title = "Latency per memory level (Hopper paper Table IV style)";
  t.caption = "Load-to-use latency of one dependent chain (pointer chase), in SM clock cycles.";
  side_by_side_header(t, in, 2, {"spec", "measured"});
  for (auto k : kLevels)
    field_row(t, in, level_name(k) + (k == MemoryLevelKind::dram ? " (global)" : ""),
              "memory." + std::string(to_string(k)) + ".latency", Dimension::cycles, true);
  return t;
}

Table throughput_table(const ReportInput& in) {
  Table t;
  t.id = "table-throughput";
  t.title = "Throughput per memory level (Hopper paper Table V style)";
  t.caption = "Per-SM bytes per clock for L1 and shared memory, whole-device bandwidth for L2 and DRAM, "
              "and the DRAM access patterns.";
  side_by_side_header(t, in, 2, {"spec", "measured"});
  field_row(t, in, "L1 (per SM)", "memory.l1.bandwidth_per_sm", Dimension::bytes_per_cycle, true);
  field_row(t, in, "L1 (device)", "memory.l1.bandwidth", Dimension::bytes_per_second, false);
  field_row(t, in, "Shared (per SM)", "memory.shared.bandwidth_per_sm", Dimension::bytes_per_cycle, true);
  field_row(t, in, "Shared (device)", "memory.shared.bandwidth", Dimension::bytes_per_second, false);
  field_row(t, in, "L2 (per SM)", "memory.l2.bandwidth_per_sm", Dimension::bytes_per_cycle, false);
  field_row(t, in, "L2 (device)", "memory.l2.bandwidth", Dimension::bytes_per_second, true);
  field_row(t, in, "DRAM (device)", "memory.dram.bandwidth", Dimension::bytes_per_second, true);
  std::set<std::string> patterns;
  for (const auto& g : in.gpus)
    for (const auto& [k, lvl] : g.hw.memory)
      for (const auto& [name, f] : lvl.patterns) patterns.insert(std::string(to_string(k)) + "." + name);
  for (const auto& p : patterns) {
    auto dot = p.find('.');
    std::string lvl = p.substr(0, dot), name = p.substr(dot + 1);
    field_row(t, in, level_name(parse_memory_level(lvl)) + " " + name,
              "memory." + lvl + ".patterns." + name, Dimension::bytes_per_second, false);
  }
  ratio_row(t, in, "L2 vs DRAM", "memory.l2.bandwidth", "memory.dram.bandwidth", "\u00d7",
            "L2 bandwidth / DRAM bandwidth");
  return t;
}

const TensorInstruction* find_instruction(const HardwareDescriptor& hw, const std::string& key) {
  for (const auto& ti : hw.tensor_instructions)
    if (ti.key() == key) return &ti;
  return nullptr;
}

Table mma_table(const ReportInput& in) {
  Table t;
  t.id = "table-mma";
  t.title = "Tensor-core instructions: latency and throughput (Hopper paper Table VII style)";
  t.caption = "Completion latency at ILP 1 and one warp (cycles); saturated whole-device throughput. "
              "Instruction key: api.shape.A/B type.C/D type; the SASS it became in brackets.";
  side_by_side_header(t, in, 4, {"LAT spec", "LAT measured", "throughput spec", "throughput measured"});
  std::vector<std::string> keys;
  for (const auto& g : in.gpus)
    for (const auto& ti : g.hw.tensor_instructions)
      if (std::find(keys.begin(), keys.end(), ti.key()) == keys.end()) keys.push_back(ti.key());
  std::sort(keys.begin(), keys.end());
  for (const auto& key : keys) {
    std::set<std::string> sass;
    for (const auto& g : in.gpus)
      if (const auto* ti = find_instruction(g.hw, key); ti && !ti->sass.empty()) sass.insert(ti->sass);
    std::string name = key;
    if (!sass.empty()) {
      name += " [";
      bool first = true;
      for (const auto& s : sass) name += (first ? "" : ", ") + s, first = false;
      name += "]";
    }
    std::vector<Cell> row{label(name)};
    for (const auto& g : in.gpus) {
      const auto* ti = find_instruction(g.hw, key);
      field_cells(t, row, g, ti ? &ti->latency : nullptr, "tensor:" + key + ".latency", Dimension::cycles);
      field_cells(t, row, g, ti ? &ti->throughput : nullptr, "tensor:" + key + ".throughput",
                  Dimension::flop_per_second);
    }
    t.rows.push_back(std::move(row));
  }
  if (keys.empty()) t.caption += " No descriptor lists a tensor-core instruction.";
  return t;
}

// ---- validation results ----

std::optional<double> num(const json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}
std::string str(const json& j, const char* key) {
  if (!j.is_object()) return {};
  auto it = j.find(key);
  if (it == j.end()) return {};
  if (it->is_string()) return it->get<std::string>();
  if (it->is_null()) return {};
  return it->dump();
}

Cell num_cell(std::optional<double> v, Dimension d, int note, bool quantity = true) {
  Cell c;
  if (!v) {
    c.text = mark_missing_measured();
    c.source = "missing";
    return c;
  }
  c.value = *v;
  c.text = quantity ? format_quantity(*v, d) : short_num(*v, 4);
  c.source = "measured";
  c.note = note;
  c.dimension = std::string(to_string(d));
  return c;
}

Cell bound_cell(std::optional<double> v, int note) {
  Cell c;
  if (!v) {
    c.text = "\u2014";
    c.source = "missing";
    return c;
  }
  c.value = *v;
  c.text = short_num(*v, 4);
  c.source = "derived";
  c.note = note;
  return c;
}

std::string size_text(const json& s) {
  if (!s.is_object()) return s.is_null() ? "\u2014" : s.dump();
  std::string out;
  for (auto it = s.begin(); it != s.end(); ++it) {
    out += (out.empty() ? "" : " ");
    out += it.key() + "=" + (it->is_number() ? short_num(it->get<double>(), 4) : it->dump());
  }
  return out;
}

std::string results_name(const ResultsInput& r) {
  std::string dev = str(r.json.value("device", json::object()), "name");
  return (r.gpu_id.empty() ? r.path.stem().string() : r.gpu_id) + (dev.empty() ? "" : " (" + dev + ")");
}

void results_tables(const ReportInput& in, std::vector<Table>& out) {
  int idx = 0;
  for (const auto& r : in.results) {
    ++idx;
    const json& j = r.json;
    std::string who = results_name(r);
    std::string stem = "table-validation-" + (r.gpu_id.empty() ? std::to_string(idx) : r.gpu_id);
    if (in.results.size() > 1 && !r.gpu_id.empty()) {
      int same = 0;
      for (const auto& o : in.results) same += o.gpu_id == r.gpu_id;
      if (same > 1) stem += "-" + std::to_string(idx);
    }
    std::string prov = "results " + r.path.filename().string() + ", " + str(j, "date") + ", ceiling " +
                       str(j, "tool_version");
    if (auto clk = num(j, "sm_clock_hz")) prov += ", SM clock " + short_num(*clk / 1e6, 4) + " MHz";
    std::string cmd = str(j, "command_line");
    if (!cmd.empty()) prov += ", command: " + cmd;

    Table t;
    t.id = stem;
    t.title = "Validation: " + who;
    t.caption = "Measured time against the model's lower bound (efficiency = bound / measured; "
                "\"beats-bound\" would be a defect in a kernel, the model or the units).";
    t.caption_note = t.notes.add(prov);
    t.columns = {"kernel", "variant", "prec.", "size", "level", "working set", "I (flop/B)", "time (median)",
                 "time cv", "achieved BW", "achieved flop/s", "bound time", "efficiency", "verdict"};
    int n = t.caption_note;
    for (const auto& e : j.value("results", json::array())) {
      std::vector<Cell> row;
      row.push_back(label(str(e, "kernel")));
      row.push_back(text_cell(str(e, "variant") == "tensor_core" ? "TC" : str(e, "variant") == "cuda_core" ? "CC" : str(e, "variant"), 1));
      row.push_back(text_cell(str(e, "precision"), 1));
      row.push_back(text_cell(size_text(e.value("size", json())), 1));
      row.push_back(text_cell(str(e, "memory_level"), 1));
      row.push_back(num_cell(num(e, "working_set_bytes"), Dimension::bytes, n));
      row.push_back(num_cell(num(e, "intensity"), Dimension::dimensionless, n, false));
      const json ts = e.value("time_s", json::object());
      row.push_back(num_cell(num(ts, "median"), Dimension::seconds, n));
      auto cv = num(ts, "cv");
      Cell cvc = num_cell(cv ? std::optional<double>(*cv * 100) : std::nullopt, Dimension::dimensionless, n, false);
      if (cv) cvc.text += "%";
      row.push_back(cvc);
      row.push_back(num_cell(num(e, "achieved_bytes_per_s"), Dimension::bytes_per_second, n));
      row.push_back(num_cell(num(e, "achieved_flop_per_s"), Dimension::flop_per_second, n));
      Cell bt = num_cell(num(e, "bound_time_s"), Dimension::seconds, n);
      if (bt.source == "measured") bt.source = "derived";
      row.push_back(bt);
      auto eff = num(e, "efficiency");
      Cell ec = bound_cell(eff ? std::optional<double>(*eff * 100) : std::nullopt, n);
      if (eff) ec.text = short_num(*eff * 100, 3) + "%";
      row.push_back(ec);
      Cell v = text_cell(str(e, "verdict") + (e.value("flagged", false) ? " (flagged)" : ""), 1);
      if (e.value("flagged", false) && !str(e, "flag_reason").empty())
        v.note = t.notes.add(str(e, "kernel") + " " + str(e, "variant") + " flagged: " + str(e, "flag_reason"));
      std::string reason = str(e, "verdict_reason");
      if (!reason.empty() && !v.note) v.note = t.notes.add(str(e, "kernel") + " " + str(e, "variant") + ": " + reason);
      row.push_back(v);
      t.rows.push_back(std::move(row));
    }
    if (t.rows.empty()) t.caption += " The file holds no kernel results.";
    out.push_back(std::move(t));

    Table s;
    s.id = stem + "-speedups";
    s.title = "Tensor-core speedup vs bound: " + who;
    s.caption = "Measured T(CC)/T(TC) against the bound of Eq. 22 and the memory-bound limit of Eq. 23.";
    s.caption_note = s.notes.add(prov);
    s.columns = {"kernel", "prec.", "size", "working set", "level", "measured CC/TC", "bound Eq. 22", "limit Eq. 23",
                 "verdict"};
    for (const auto& e : j.value("speedups", json::array())) {
      std::vector<Cell> row;
      row.push_back(label(str(e, "kernel")));
      row.push_back(text_cell(str(e, "precision"), 1));
      row.push_back(text_cell(size_text(e.value("size", json())), 1));
      row.push_back(num_cell(num(e, "working_set_bytes"), Dimension::bytes, s.caption_note));
      row.push_back(text_cell(str(e, "memory_level"), 1));
      row.push_back(num_cell(num(e, "measured"), Dimension::dimensionless, s.caption_note, false));
      row.push_back(bound_cell(num(e, "bound_eq22"), s.caption_note));
      row.push_back(bound_cell(num(e, "limit_eq23"), s.caption_note));
      row.push_back(text_cell(str(e, "verdict"), 1));
      s.rows.push_back(std::move(row));
    }
    if (!s.rows.empty()) out.push_back(std::move(s));

    Table g;
    g.id = stem + "-geomeans";
    g.title = "Geometric means of the speedups: " + who;
    g.caption = "Geometric means per kernel, inside and outside the L2 (the paper splits at half the L2): the "
                "tensor-core speedup T(CC)/T(TC), and its inverse, the CUDA cores' speedup over tensor cores "
                "(GPGPU'25 Figure 6).";
    g.caption_note = g.notes.add(prov);
    g.columns = {"kernel", "prec.", "side", "T(CC)/T(TC) geomean", "CC speedup over TC", "count"};
    for (const auto& e : j.value("geomeans", json::array())) {
      std::vector<Cell> row;
      row.push_back(label(str(e, "kernel")));
      row.push_back(text_cell(str(e, "precision"), 1));
      row.push_back(text_cell(str(e, "side"), 1));
      auto cc_over_tc = num(e, "cc_over_tc");
      row.push_back(num_cell(cc_over_tc, Dimension::dimensionless, g.caption_note, false));
      // Older files lack the inverse; it is 1 / cc_over_tc by definition (validation.hpp).
      auto inv = num(e, "cc_speedup_over_tc");
      if (!inv && cc_over_tc && *cc_over_tc > 0) inv = 1.0 / *cc_over_tc;
      Cell ic = num_cell(inv, Dimension::dimensionless, g.caption_note, false);
      if (ic.source == "measured") ic.source = "derived";
      row.push_back(ic);
      row.push_back(text_cell(str(e, "count"), 1));
      g.rows.push_back(std::move(row));
    }
    if (!g.rows.empty()) out.push_back(std::move(g));

    Table f;
    f.id = stem + "-overlap";
    f.title = "Overlap fits: " + who;
    f.caption = "phi of T = max(Tmem,Tcmp) + (1-phi) min(Tmem,Tcmp) + Tother fitted to the measurements (ours).";
    f.caption_note = f.notes.add(prov);
    f.columns = {"kernel", "variant", "prec.", "phi", "r\u00b2", "points"};
    for (const auto& e : j.value("overlap_fits", json::array())) {
      std::vector<Cell> row;
      row.push_back(label(str(e, "kernel")));
      row.push_back(text_cell(str(e, "variant"), 1));
      row.push_back(text_cell(str(e, "precision"), 1));
      row.push_back(bound_cell(num(e, "phi"), f.caption_note));
      row.push_back(bound_cell(num(e, "r2"), f.caption_note));
      row.push_back(text_cell(str(e, "points"), 1));
      f.rows.push_back(std::move(row));
    }
    if (!f.rows.empty()) out.push_back(std::move(f));
  }
}

}  // namespace

std::vector<Table> build_tables(const ReportInput& in) {
  std::vector<Table> out;
  out.push_back(platform_table(in));
  out.push_back(latency_table(in));
  out.push_back(throughput_table(in));
  out.push_back(mma_table(in));
  results_tables(in, out);
  return out;
}

// ---- renderers ----

std::string html_escape(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string md_escape(std::string_view s) {
  std::string o;
  for (char c : s) {
    if (c == '|') o += "\\|";
    else if (c == '\n') o += ' ';
    else o += c;
  }
  return o;
}

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string o = "\"";
  for (char c : s) o += (c == '"') ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

std::string table_html(const Table& t) {
  std::ostringstream o;
  o << "<section class=\"table\" id=\"" << html_escape(t.id) << "\">\n<h3>" << html_escape(t.title) << "</h3>\n";
  o << "<p class=\"caption\">" << html_escape(t.caption);
  if (t.caption_note) o << " <sup>" << t.caption_note << "</sup>";
  o << "</p>\n<div class=\"scroll\"><table>\n<thead>\n";
  if (!t.groups.empty()) {
    o << "<tr>";
    for (const auto& [g, span] : t.groups)
      o << "<th" << (span > 1 ? " colspan=\"" + std::to_string(span) + "\"" : "") << " class=\"group\">"
        << html_escape(g) << "</th>";
    o << "</tr>\n";
  }
  o << "<tr>";
  for (const auto& c : t.columns) o << "<th>" << html_escape(c) << "</th>";
  o << "</tr>\n</thead>\n<tbody>\n";
  for (const auto& row : t.rows) {
    o << "<tr>";
    for (const auto& c : row) {
      const char* tag = c.source == "label" ? "th" : "td";
      o << "<" << tag << " class=\"" << c.source << "\"" << (c.span > 1 ? " colspan=\"" + std::to_string(c.span) + "\"" : "")
        << ">" << html_escape(c.text);
      if (c.note) o << "<sup>" << c.note << "</sup>";
      o << "</" << tag << ">";
    }
    o << "</tr>\n";
  }
  o << "</tbody>\n</table></div>\n";
  if (!t.notes.items.empty()) {
    o << "<ol class=\"notes\">\n";
    for (const auto& n : t.notes.items) o << "<li>" << html_escape(n) << "</li>\n";
    o << "</ol>\n";
  }
  o << "</section>\n";
  return o.str();
}

std::string table_markdown(const Table& t) {
  std::ostringstream o;
  o << "### " << t.title << "\n\n" << t.caption;
  if (t.caption_note) o << " [" << t.caption_note << "]";
  o << "\n\n";
  // GFM has no colspan: group names are folded into the column names.
  std::vector<std::string> cols;
  size_t ci = 0;
  for (const auto& [g, span] : t.groups)
    for (int k = 0; k < span && ci < t.columns.size(); ++k, ++ci)
      cols.push_back(g.empty() ? t.columns[ci] : g + " " + t.columns[ci]);
  for (; ci < t.columns.size(); ++ci) cols.push_back(t.columns[ci]);
  o << "|";
  for (const auto& c : cols) o << " " << md_escape(c) << " |";
  o << "\n|";
  for (size_t i = 0; i < cols.size(); ++i) o << (i == 0 ? "---|" : "---:|");
  o << "\n";
  for (const auto& row : t.rows) {
    o << "|";
    for (const auto& c : row) {
      std::string text = md_escape(c.text) + (c.note ? " [" + std::to_string(c.note) + "]" : "");
      if (c.source == "label") text = "**" + text + "**";
      o << " " << text << " |";
      for (int k = 1; k < c.span; ++k) o << " |";
    }
    o << "\n";
  }
  o << "\n";
  for (size_t i = 0; i < t.notes.items.size(); ++i) o << "[" << (i + 1) << "] " << t.notes.items[i] << "  \n";
  o << "\n";
  return o.str();
}

std::string table_csv(const Table& t) {
  // Long form, one number per line, so a program can read it back without parsing the layout.
  std::ostringstream o;
  o << "row,column,gpu,field,source,value,dimension,text,note\n";
  for (const auto& row : t.rows) {
    std::string row_label = row.empty() ? "" : row[0].text;
    size_t col = 0;
    for (const auto& c : row) {
      std::string cname = col < t.columns.size() ? t.columns[col] : "";
      o << csv_field(row_label) << "," << csv_field(cname) << "," << csv_field(c.gpu) << "," << csv_field(c.field)
        << "," << c.source << "," << (c.value ? exact(*c.value) : "") << "," << c.dimension << ","
        << csv_field(c.text) << "," << csv_field(c.note ? t.notes.items[c.note - 1] : "") << "\n";
      col += c.span;
    }
  }
  return o.str();
}

json table_json(const Table& t) {
  json j;
  j["id"] = t.id;
  j["title"] = t.title;
  j["caption"] = t.caption;
  j["columns"] = t.columns;
  json groups = json::array();
  for (const auto& [g, span] : t.groups) groups.push_back({{"label", g}, {"span", span}});
  j["groups"] = groups;
  json rows = json::array();
  for (const auto& row : t.rows) {
    json r = json::array();
    for (const auto& c : row) {
      json cj{{"text", c.text}, {"source", c.source}};
      if (c.value) cj["value"] = *c.value;
      if (c.note) cj["note"] = c.note;
      if (c.span > 1) cj["span"] = c.span;
      if (!c.gpu.empty()) cj["gpu"] = c.gpu;
      if (!c.field.empty()) cj["field"] = c.field;
      if (!c.dimension.empty()) cj["dimension"] = c.dimension;
      r.push_back(cj);
    }
    rows.push_back(r);
  }
  j["rows"] = rows;
  j["notes"] = t.notes.items;
  return j;
}

}  // namespace ceiling::reports::detail
