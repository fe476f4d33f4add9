// Tables in the style of the source papers, several GPUs side by side, spec next to measured.
#include <algorithm>
#include <functional>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <fstream>
#include <sstream>

#include "detail.hpp"

namespace ceiling::reports::detail {

using nlohmann::json;

std::string mark_missing_measured() { return "\u2014 not measured"; }
std::string mark_missing_spec() { return "\u2014 no spec"; }

int Notes::add(const std::string& text) {
  if (index_.size() != items.size()) {  // items were set directly: index them first
    index_.clear();
    for (size_t i = 0; i < items.size(); ++i) index_.emplace(items[i], static_cast<int>(i) + 1);
  }
  const auto [it, added] = index_.emplace(text, static_cast<int>(items.size()) + 1);
  if (added) items.push_back(text);
  return it->second;
}

std::string exact(double v) {
  char b[40];
  const auto r = std::to_chars(b, b + sizeof b, v);  // the shortest text that reads back as v
  return std::string(b, r.ptr);
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

// ---- numeric behaviour (issue 13; Sun et al. §8, Tables 12-15) ----

// The GPUs for which `has` holds, then the reference descriptors (papers' figures) for which it
// holds and that are not among the GPUs.
template <class Pred>
std::vector<const GpuInput*> columns_with(const ReportInput& in, Pred has) {
  std::vector<const GpuInput*> cols;
  for (const auto& g : in.gpus)
    if (has(g)) cols.push_back(&g);
  for (const auto& r : in.references)
    if (has(r) && std::none_of(in.gpus.begin(), in.gpus.end(), [&](const GpuInput& g) { return g.hw.id == r.hw.id; }))
      cols.push_back(&r);
  return cols;
}

std::vector<const GpuInput*> numerics_columns(const ReportInput& in) {
  return columns_with(in, [](const GpuInput& g) {
    return std::any_of(g.hw.tensor_instructions.begin(), g.hw.tensor_instructions.end(),
                       [](const TensorInstruction& t) { return t.numerics.has_value(); });
  });
}

std::vector<std::string> numerics_keys(const std::vector<const GpuInput*>& cols) {
  std::vector<std::string> keys;
  for (const auto* g : cols)
    for (const auto& ti : g->hw.tensor_instructions)
      if (ti.numerics && std::find(keys.begin(), keys.end(), ti.key()) == keys.end()) keys.push_back(ti.key());
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::string numerics_source(const HardwareDescriptor& hw, const NumericBehaviour& nb) {
  std::string s;
  if (!nb.reference.empty()) {
    s = hw.id + ": " + nb.reference;
    if (auto it = hw.references.find(nb.reference); it != hw.references.end()) s += ": " + it->second;
  } else {
    s = hw.id + " measured: probe " + nb.probe + ", " + nb.date;
    if (nb.cases) s += ", " + std::to_string(nb.cases) + " constructed cases, " + std::to_string(nb.models) + " models fit";
    if (nb.samples) s += ", " + std::to_string(nb.samples) + " draws per error cell";
  }
  if (!nb.note.empty()) s += "; " + nb.note;
  return s;
}

Table numerics_table(const ReportInput& in) {
  Table t;
  t.id = "table-numerics";
  t.title = "Tensor-core arithmetic: what the constructed cases show (Sun et al. §8, Fasi et al.)";
  t.caption = "Per instruction: products exact or not, products per block, bits kept below the running sum's last "
              "bit (negative: fewer than its format), the rounding of each block's sum, where C is added, and "
              "subnormals of A/B, C and D. Every model of the family that reproduces every returned bit is kept; "
              "a parameter they disagree on is undetermined.";
  const auto cols = numerics_columns(in);
  t.groups.push_back({"", 1});
  t.columns.push_back("instruction");
  for (const auto* g : cols) {
    t.groups.push_back({g->hw.identity.name + " (" + g->hw.id + ")", 1});
    t.columns.push_back("verdicts");
  }
  for (const auto& key : numerics_keys(cols)) {
    std::vector<Cell> row{label(key)};
    for (const auto* g : cols) {
      const auto* ti = find_instruction(g->hw, key);
      if (!ti || !ti->numerics) {
        row.push_back(text_cell("", 1));
        continue;
      }
      const NumericBehaviour& nb = *ti->numerics;
      std::string text;
      for (const auto& k : kNumericVerdictKeys)
        if (auto it = nb.verdicts.find(k); it != nb.verdicts.end()) text += (text.empty() ? "" : "; ") + k + " " + it->second;
      if (text.empty()) text = nb.summary;
      Cell c = text_cell(text, 1);
      c.gpu = g->hw.id;
      c.field = "numerics:" + key;
      c.note = t.notes.add(numerics_source(g->hw, nb));
      row.push_back(c);
    }
    t.rows.push_back(std::move(row));
  }
  if (t.rows.empty()) t.caption += " No descriptor has numeric verdicts (calibrate runs the mma-numerics probe).";
  return t;
}

Table numerics_errors_table(const ReportInput& in) {
  Table t;
  t.id = "table-numerics-errors";
  t.title = "Tensor-core numeric errors (Sun et al. Tables 12-15 layout)";
  t.caption = "Mean |D - the CPU's FP32 result| over N(0,1) draws: inputs drawn in the low precision (low) or in "
              "FP32 and converted (fp32). For an FP16 D also against that result rounded to FP16 (Table 14's right "
              "half). Multiplication: one product, C = 0; inner product: K products, C = 0; accumulation: one "
              "product plus C.";
  const auto cols = numerics_columns(in);
  t.groups.push_back({"", 1});
  t.columns.push_back("instruction, operation");
  for (const auto* g : cols) {
    t.groups.push_back({g->hw.identity.name + " (" + g->hw.id + ")", 4});
    for (const char* c : {"low", "fp32", "low, vs D type", "fp32, vs D type"}) t.columns.push_back(c);
  }
  for (const auto& key : numerics_keys(cols))
    for (const char* exp : {"multiplication", "inner_product", "accumulation"}) {
      std::vector<Cell> row{label(key + ", " + exp)};
      bool any = false;
      for (const auto* g : cols) {
        const auto* ti = find_instruction(g->hw, key);
        const NumericBehaviour* nb = ti && ti->numerics ? &*ti->numerics : nullptr;
        const int note = nb ? t.notes.add(numerics_source(g->hw, *nb)) : 0;
        for (bool out_type : {false, true})
          for (const char* init : {"init_low", "init_fp32"}) {
            Cell c;
            c.gpu = g->hw.id;
            c.field = "numerics:" + key + "." + (out_type ? "errors_out." : "errors.") + exp + "." + init;
            c.dimension = "dimensionless";
            std::optional<double> v;
            if (nb) {
              const auto& table = out_type ? nb->errors_out : nb->errors;
              if (auto e = table.find(exp); e != table.end())
                if (auto x = e->second.find(init); x != e->second.end()) v = x->second;
            }
            if (v) {
              c.value = *v;
              c.text = *v == 0 ? "0" : short_num(*v, 3);
              c.source = nb->reference.empty() ? "measured" : "spec";
              c.note = note;
              any = true;
            } else {
              c.text = "\u2014";
              c.source = "missing";
            }
            row.push_back(c);
          }
      }
      if (any) t.rows.push_back(std::move(row));
    }
  if (t.rows.empty()) t.caption += " No descriptor has numeric error figures.";
  return t;
}

// ---- shared memory to registers (issue 13; Sun et al. Tables 9-10, extended) ----

Table shared_access_table(const ReportInput& in) {
  Table t;
  t.id = "table-shared-access";
  t.title = "Shared memory to registers: ld.shared under bank conflicts, ldmatrix, stmatrix (Sun et al. Tables 9-10)";
  t.caption = "Completion latency of one warp's dependent loads (cycles) under N-way bank conflicts (64-bit: 2-way, "
              "128-bit: 4-way are the conflict-free accesses of 256 and 512 bytes per warp), and bytes per clock per "
              "SM of independent loads from every SM (probe shared-access).";
  const auto cols = columns_with(in, [](const GpuInput& g) {
    auto l = g.hw.memory.find(MemoryLevelKind::shared);
    return l != g.hw.memory.end() && !l->second.extra.empty();
  });
  t.groups.push_back({"", 1});
  t.columns.push_back("");
  for (const auto* g : cols) {
    t.groups.push_back({g->hw.identity.name + " (" + g->hw.id + ")", 2});
    t.columns.push_back("spec");
    t.columns.push_back("measured");
  }
  std::vector<std::string> names;
  for (int n : {1, 2, 4, 8, 16, 32}) names.push_back("ld_u32_latency_" + std::to_string(n) + "way");
  for (int n : {2, 4, 8, 16, 32}) names.push_back("ld_u64_latency_" + std::to_string(n) + "way");
  for (int n : {4, 8, 16, 32}) names.push_back("ld_u128_latency_" + std::to_string(n) + "way");
  for (int n : {1, 2, 4, 8, 32}) names.push_back("ld_u32_bytes_per_clk_" + std::to_string(n) + "way");
  for (const char* n : {"ld_u64_bytes_per_clk", "ld_u128_bytes_per_clk", "ldmatrix_x1_latency", "ldmatrix_x2_latency",
                        "ldmatrix_x4_latency", "ldmatrix_x4_trans_latency", "wmma_load_a_latency",
                        "ld_shared_fragment_latency", "ldmatrix_x1_bytes_per_clk",
                        "ldmatrix_x2_bytes_per_clk", "ldmatrix_x4_bytes_per_clk", "stmatrix_x4_bytes_per_clk"})
    names.push_back(n);
  for (const auto& name : names) {
    const std::string path = "memory.shared.extra." + name;
    bool any = false;
    std::vector<Cell> row{label(name)};
    for (const auto* g : cols) {
      const Field* f = g->hw.find_field(path);
      any = any || (f && f->present());
      field_cells(t, row, *g, f, path, name.find("bytes_per_clk") != std::string::npos ? Dimension::bytes_per_cycle : Dimension::cycles);
    }
    if (any) t.rows.push_back(std::move(row));
  }
  if (t.rows.empty()) t.caption += " No descriptor has these figures (calibrate runs the shared-access probe).";
  return t;
}

// ---- DPX functions (issue 14; Luo et al. §IV-E, Figs. 6-7) ----

Table dpx_table(const ReportInput& in) {
  Table t;
  t.id = "table-dpx";
  t.title = "DPX functions: latency and throughput (Luo et al. Figs. 6-7)";
  t.caption = "Latency: one thread's dependent chain, cycles per call. Throughput: calls per clock per SM with one "
              "block of 1024 threads on every SM, 8 independent chains per thread (probe dpx); per GPU: that x the SMs "
              "x the SM clock (measured else spec). Hardware on sm_90, emulated before it.";
  const auto cols = columns_with(in, [](const GpuInput& g) { return !g.hw.dpx.empty(); });
  t.groups.push_back({"", 1});
  t.columns.push_back("");
  for (const auto* g : cols) {
    t.groups.push_back({g->hw.identity.name + " (" + g->hw.id + ")", 5});
    for (const char* c : {"latency spec", "latency measured", "calls/clk/SM spec", "calls/clk/SM measured", "per GPU"})
      t.columns.push_back(c);
  }
  std::vector<std::string> names;
  for (const auto* g : cols)
    for (const auto& f : g->hw.dpx)
      if (std::find(names.begin(), names.end(), f.function) == names.end()) names.push_back(f.function);
  // The CUDA math API's order (max3/min3, add-max/min, relu, bmax), not the order of discovery.
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    const auto at = [](const std::string& n) { return std::find(kDpxFunctionNames.begin(), kDpxFunctionNames.end(), n); };
    return at(a) < at(b);
  });
  for (const auto& name : names) {
    std::vector<Cell> row{label(name)};
    for (const auto* g : cols) {
      const DpxFunction* f = nullptr;
      for (const auto& x : g->hw.dpx)
        if (x.function == name) f = &x;
      const std::string path = "dpx:" + name;
      field_cells(t, row, *g, f ? &f->latency : nullptr, path + ".latency", Dimension::cycles);
      field_cells(t, row, *g, f ? &f->throughput_per_sm : nullptr, path + ".throughput_per_sm", Dimension::dimensionless);
      Cell gpu;
      gpu.gpu = g->hw.id;
      gpu.field = path + ".throughput_per_s";
      const auto per_sm = f ? f->throughput_per_sm.value() : std::nullopt;
      const auto hz = g->hw.sm_clock.value();
      if (per_sm && hz) {
        gpu.value = *per_sm * g->hw.identity.sm_count * *hz;
        gpu.text = short_num(*gpu.value / 1e12, 4) + " Tcalls/s";
        gpu.source = "derived";
      } else {
        gpu.text = mark_missing_measured();
        gpu.source = "missing";
      }
      row.push_back(gpu);
    }
    t.rows.push_back(std::move(row));
  }
  if (t.rows.empty()) t.caption += " No descriptor has these figures (calibrate runs the dpx probe).";
  return t;
}

// ---- async copies (issue 14; Luo et al. §IV-E, Tables XIII-XIV) ----

// The DRAM read bandwidth a copy is held against: memory.dram.patterns.read, else the level's.
std::optional<double> dram_read_bandwidth(const HardwareDescriptor& hw) {
  auto it = hw.memory.find(MemoryLevelKind::dram);
  if (it == hw.memory.end()) return std::nullopt;
  if (auto p = it->second.patterns.find("read"); p != it->second.patterns.end())
    if (auto x = p->second.value()) return x;
  return it->second.bandwidth.value();
}

Table async_copy_table(const ReportInput& in) {
  Table t;
  t.id = "table-async-copy";
  t.title = "Global to shared memory copies: best bandwidth per method (issue 14)";
  t.caption = "Every SM busy on a buffer sized as dram-bandwidth sizes its arrays (>= 8x L2), each byte copied once into "
              "shared memory and summed there (checked against the CPU). sync: ld.global.cg 16 B + st.shared; cp_async: "
              "cp.async.cg 16 B (LDGSTS), 1-4 stages; bulk: cp.async.bulk 1D + mbarrier (TMA, sm_90); tensor_2d: "
              "cp.async.bulk.tensor.2d through a CUtensorMap (TMA, sm_90). Share: of the DRAM read bandwidth "
              "(memory.dram.patterns.read, measured else spec); the issue's target for TMA is 90%.";
  const auto cols = columns_with(in, [](const GpuInput& g) { return !g.hw.async_copy.methods.empty(); });
  t.groups.push_back({"", 1});
  t.columns.push_back("method");
  for (const auto* g : cols) {
    t.groups.push_back({g->hw.identity.name + " (" + g->hw.id + ")", 3});
    for (const char* c : {"bandwidth", "of DRAM read", "best configuration"}) t.columns.push_back(c);
  }
  for (const auto& name : kAsyncCopyMethods) {
    if (std::none_of(cols.begin(), cols.end(), [&](const GpuInput* g) { return g->hw.async_copy.method(name); })) continue;
    std::vector<Cell> row{label(name)};
    for (const auto* g : cols) {
      const AsyncCopyMethod* m = g->hw.async_copy.method(name);
      const std::string path = "async_copy:" + name + ".bandwidth";
      Cell bw;
      bw.gpu = g->hw.id;
      bw.field = path;
      bw.dimension = std::string(to_string(Dimension::bytes_per_second));
      const auto v = m ? m->bandwidth.value() : std::nullopt;
      if (v) {
        bw.value = *v;
        bw.text = format_quantity(*v, Dimension::bytes_per_second);
        if (m->bandwidth.source() == "measured") {
          bw.source = "measured";
          if (m->bandwidth.measured->flagged) bw.text += " (flagged)";
          bw.note = t.notes.add(measured_note(g->hw, *m->bandwidth.measured, Dimension::bytes_per_second));
        } else {
          bw.source = "spec";
          bw.note = t.notes.add(spec_note(g->hw, *m->bandwidth.spec));
        }
      } else {
        bw.text = mark_missing_measured();
        bw.source = "missing";
      }
      row.push_back(bw);
      Cell share;
      share.gpu = g->hw.id;
      share.field = "async_copy:" + name + ".fraction_of_dram_read";
      const double bw_value = v.value_or(0), read = dram_read_bandwidth(g->hw).value_or(0);
      if (bw_value > 0 && read > 0) {
        share.value = bw_value / read;
        share.text = short_num(100 * bw_value / read, 3) + "%";
        share.source = "derived";
      } else {
        share.text = "\u2014";
        share.source = "missing";
      }
      row.push_back(share);
      row.push_back(text_cell(m ? m->config : std::string(), 1));
    }
    t.rows.push_back(std::move(row));
  }
  if (t.rows.empty()) t.caption += " No descriptor has these figures (calibrate runs the async-copy probe).";
  return t;
}

// Tables XIII-XIV: one row per GPU, source, block and variant; the paper's rows beside ours.
Table async_matmul_table(const ReportInput& in) {
  Table t;
  t.id = "table-async-matmul";
  t.title = "Tiled FP32 matmul, SyncShare vs AsyncPipe: GFLOP/s by blocks per SM (Luo et al. Tables XIII-XIV)";
  t.caption = "The CUDA sample globalToShmemAsyncCopy's shape: one thread per C entry, block x block tiles of A and B in "
              "shared memory, A's width = B's height = 2048, grid = SMs x blocks per SM. SyncShare loads the tiles "
              "synchronously; AsyncPipe copies the next pair with cp.async (two stages) while multiplying this one. Gain: "
              "mean of AsyncPipe / SyncShare - 1 over the columns; the paper's own Perf column is shown for its rows "
              "(its definition is not stated and differs from this mean for some rows).";
  const auto cols = columns_with(in, [](const GpuInput& g) { return !g.hw.async_copy.matmul.empty(); });
  std::vector<int> per_sm;
  for (const auto* g : cols)
    for (const auto& r : g->hw.async_copy.matmul)
      for (int b : r.blocks_per_sm)
        if (std::find(per_sm.begin(), per_sm.end(), b) == per_sm.end()) per_sm.push_back(b);
  std::sort(per_sm.begin(), per_sm.end());
  t.groups.push_back({"", 4});
  for (const char* c : {"block", "GPU", "source", "variant"}) t.columns.push_back(c);
  t.groups.push_back({"blocks per SM", static_cast<int>(per_sm.size())});
  for (int b : per_sm) t.columns.push_back(std::to_string(b));
  t.groups.push_back({"", 1});
  t.columns.push_back("gain");
  std::vector<int> blocks;
  for (const auto* g : cols)
    for (const auto& r : g->hw.async_copy.matmul)
      if (std::find(blocks.begin(), blocks.end(), r.block) == blocks.end()) blocks.push_back(r.block);
  std::sort(blocks.begin(), blocks.end());
  for (int block : blocks)
    for (const auto* g : cols)
      for (const bool measured : {true, false})
        for (const char* variant : {"sync_share", "async_pipe"}) {
          const AsyncMatmulRow* r = g->hw.async_copy.row(variant, block);
          if (!r) continue;
          const auto& c = measured ? r->measured : r->spec;
          if (!c) continue;
          int note = 0;
          if (measured) {
            std::string n = g->hw.id + " measured: probe " + c->probe + ", " + c->date;
            if (c->repeats) n += ", median of " + std::to_string(c->repeats);
            if (c->sm_clock_hz > 0) n += ", SM clock " + short_num(c->sm_clock_hz / 1e6, 4) + " MHz";
            if (!c->note.empty()) n += "; " + c->note;
            note = t.notes.add(n);
          } else {
            note = t.notes.add(spec_note(g->hw, SpecValue{0, c->reference}));
          }
          std::vector<Cell> row{label(std::to_string(block) + "x" + std::to_string(block)),
                                label(g->hw.identity.name + " (" + g->hw.id + ")"), label(measured ? "measured" : "paper"),
                                label(variant == std::string("sync_share") ? "SyncShare" : "AsyncPipe")};
          for (int b : per_sm) {
            Cell x;
            x.gpu = g->hw.id;
            x.field = std::string("async_copy:matmul.") + variant + "." + std::to_string(block) + ".blocks_per_sm_" +
                      std::to_string(b);
            x.dimension = std::string(to_string(Dimension::flop_per_second));
            x.text = "\u2014";
            x.source = "missing";
            for (std::size_t i = 0; i < r->blocks_per_sm.size() && i < c->values.size(); ++i)
              if (r->blocks_per_sm[i] == b) {
                x.value = c->values[i];
                x.text = short_num(c->values[i] / 1e9, 6);
                x.source = measured ? "measured" : "spec";
                x.note = note;
              }
            row.push_back(x);
          }
          Cell gain;
          gain.gpu = g->hw.id;
          gain.field = "async_copy:matmul.gain_percent." + std::to_string(block);
          gain.text = "";
          gain.source = "text";
          if (variant == std::string("async_pipe")) {
            const auto ours = async_pipe_gain_percent(g->hw.async_copy, block, measured);
            if (ours) {
              gain.value = *ours;
              gain.text = short_num(*ours, 3) + "%";
              gain.source = "derived";
            }
            if (!measured && c->gain_percent) gain.text += " (paper: " + short_num(*c->gain_percent, 3) + "%)";
          }
          row.push_back(gain);
          t.rows.push_back(std::move(row));
        }
  if (t.rows.empty()) t.caption += " No descriptor has these figures (calibrate runs the async-copy probe).";
  return t;
}

// ---- distributed shared memory (issue 14; Luo et al. §IV-E, Figs. 8-9) ----

Table dsm_table(const ReportInput& in) {
  Table t;
  t.id = "table-dsm";
  t.title = "Distributed shared memory: SM-to-SM latency and ring-based copy (Luo et al. §IV-E, Fig. 8)";
  t.caption = "Latency: one thread's dependent ld.shared::cluster chain through the shared memory of the other block of a "
              "2-block cluster (on another SM), cycles per load; local: the same code on the block's own shared memory. "
              "Ring copy: one block per SM, every block stores its registers into the shared memory of the next rank of "
              "its cluster; bytes per second over the GPU, per SM: bytes per clock per SM used (probe dsm). The paper's "
              "figures are for the H800 PCIe (114 SMs).";
  const auto cols = columns_with(in, [](const GpuInput& g) { return g.hw.dsm.present(); });
  t.groups.push_back({"", 1});
  t.columns.push_back("");
  for (const auto* g : cols) {
    t.groups.push_back({g->hw.identity.name + " (" + g->hw.id + ")", 2});
    t.columns.push_back("spec");
    t.columns.push_back("measured");
  }
  if (cols.empty()) {
    t.caption += " No descriptor has these figures (calibrate runs the dsm probe).";
    return t;
  }
  const auto add_row = [&](const std::string& name, const std::string& path, Dimension dim,
                           const std::function<const Field*(const DistributedSharedMemory&)>& get) {
    std::vector<Cell> row{label(name)};
    for (const auto* g : cols) field_cells(t, row, *g, get(g->hw.dsm), path, dim);
    t.rows.push_back(std::move(row));
  };
  add_row("SM-to-SM latency (cycles)", "dsm.latency", Dimension::cycles, [](const auto& x) { return &x.latency; });
  add_row("local shared-memory latency, same code (cycles)", "dsm.local_latency", Dimension::cycles,
          [](const auto& x) { return &x.local_latency; });
  add_row("ring copy, best configuration", "dsm.ring_bandwidth", Dimension::bytes_per_second,
          [](const auto& x) { return &x.ring_bandwidth; });
  add_row("ring copy, best, per SM used", "dsm.ring_bandwidth_per_sm", Dimension::bytes_per_cycle,
          [](const auto& x) { return &x.ring_bandwidth_per_sm; });
  std::vector<int> sizes;
  for (const auto* g : cols)
    for (const auto& c : g->hw.dsm.ring_by_cluster_size)
      if (std::find(sizes.begin(), sizes.end(), c.cluster_size) == sizes.end()) sizes.push_back(c.cluster_size);
  std::sort(sizes.begin(), sizes.end());
  for (int cs : sizes)
    add_row("ring copy, best at cluster size " + std::to_string(cs), "dsm.ring_by_cluster_size." + std::to_string(cs),
            Dimension::bytes_per_second, [cs](const DistributedSharedMemory& x) -> const Field* {
              for (const auto& c : x.ring_by_cluster_size)
                if (c.cluster_size == cs) return &c.bandwidth;
              return nullptr;
            });
  // The configuration behind the measured best (text; the paper names only the cluster size).
  std::vector<Cell> row{label("best ring configuration (cluster size, threads, ILP)")};
  for (const auto* g : cols) {
    const auto& x = g->hw.dsm;
    Cell c = text_cell(x.ring_cluster_size > 0 ? "CS " + std::to_string(x.ring_cluster_size) + ", " +
                                                     std::to_string(x.ring_block_threads) + " threads, ILP " +
                                                     std::to_string(x.ring_ilp)
                                               : "",
                       2);
    c.gpu = g->hw.id;
    c.field = "dsm.ring_best";
    row.push_back(c);
  }
  t.rows.push_back(std::move(row));
  return t;
}

// ---- validation results ----

Cell num_cell(double v, Dimension d, int note, bool quantity = true) {
  Cell c;
  c.value = v;
  c.text = quantity ? format_quantity(v, d) : short_num(v, 4);
  c.source = "measured";
  c.note = note;
  c.dimension = std::string(to_string(d));
  return c;
}

Cell derived_cell(double v, int note) {
  Cell c;
  c.value = v;
  c.text = short_num(v, 4);
  c.source = "derived";
  c.note = note;
  return c;
}

// "m=4096 n=4096": the size's own parameter names, as the results file gives them.
std::string size_text(const std::map<std::string, double>& size) {
  if (size.empty()) return "\u2014";
  std::string out;
  for (const auto& [k, v] : size) out += (out.empty() ? "" : " ") + k + "=" + short_num(v, 4);
  return out;
}

std::string unit_short(const std::string& variant) {
  return variant == "tensor_core" ? "TC" : variant == "cuda_core" ? "CC" : variant;
}

std::string results_name(const ResultsInput& r) {
  const std::string& dev = r.report.device.name;
  return (r.gpu_id.empty() ? r.path.stem().string() : r.gpu_id) + (dev.empty() ? "" : " (" + dev + ")");
}

// The rows of a table over a list: all of them, or for a long list (more than kShownRows) the
// first kShownRows, with make_row for the files and the caption saying where the rest are.
template <class Entry, class MakeRow>
void fill_rows(Table& t, const std::vector<Entry>& list, const MakeRow& make) {
  const std::size_t shown = std::min(list.size(), kShownRows);
  t.rows.resize(shown);
  for (std::size_t i = 0; i < shown; ++i) make(list[i], t.rows[i], t.notes);
  if (list.size() > kShownRows) {
    t.total_rows = list.size();
    t.make_row = [&list, make](std::size_t i, std::vector<Cell>& row, Notes& notes) { make(list[i], row, notes); };
    t.caption += " Shown: the first " + std::to_string(shown) + " of " + std::to_string(list.size()) +
                 " rows; every row is in " + t.id + ".csv and " + t.id + ".json.";
  }
}

void results_tables(const ReportInput& in, std::vector<Table>& out) {
  int idx = 0;
  for (const auto& r : in.results) {
    ++idx;
    const validation::ValidationReport& v = r.report;
    std::string who = results_name(r);
    std::string stem = "table-validation-" + (r.gpu_id.empty() ? std::to_string(idx) : r.gpu_id);
    if (in.results.size() > 1 && !r.gpu_id.empty()) {
      int same = 0;
      for (const auto& o : in.results) same += o.gpu_id == r.gpu_id;
      if (same > 1) stem += "-" + std::to_string(idx);
    }
    std::string prov = "results " + r.path.filename().string() + ", " + v.date + ", ceiling " + v.tool_version;
    if (v.sm_clock_hz > 0) prov += ", SM clock " + short_num(v.sm_clock_hz / 1e6, 4) + " MHz";
    if (!v.command_line.empty()) prov += ", command: " + v.command_line;

    Table t;
    t.id = stem;
    t.title = "Validation: " + who;
    t.caption = "Measured time against the model's lower bound (efficiency = bound / measured; "
                "\"beats-bound\" would be a defect in a kernel, the model or the units).";
    t.caption_note = t.notes.add(prov);
    t.columns = {"kernel", "variant", "prec.", "size", "level", "working set", "I (flop/B)", "time (median)",
                 "time cv", "achieved BW", "achieved flop/s", "bound time", "efficiency", "verdict", "tight bound",
                 "tight eff."};
    t.caption += " The tight bound (issue 12) adds the measured launch, first-byte and ramp terms to the paper's "
                 "asymptotic one; a tight efficiency above 100% beyond the measurement margin is a beat, whose note "
                 "names the term that fails.";
    // The caption's note is the provenance of every number: not repeated per cell (a million rows).
    const int n = 0;
    // Results written before validate recorded why a result beats its tight bound: the reason from
    // this report's descriptor of the GPU (the one validate ran against when they were shipped together).
    const HardwareDescriptor* hw = nullptr;
    for (const auto& g : in.gpus)
      if (!r.gpu_id.empty() && g.hw.id == r.gpu_id) hw = &g.hw;
    const auto result_row = [n, hw](const validation::KernelResult& e, std::vector<Cell>& row, Notes& notes) {
      row.clear();
      row.push_back(label(e.kernel));
      row.push_back(text_cell(unit_short(e.variant) + (e.implementation.empty() ? "" : " " + e.implementation), 1));
      row.push_back(text_cell(e.precision, 1));
      row.push_back(text_cell(e.label.empty() ? size_text(e.size) : e.label, 1));
      row.push_back(text_cell(e.memory_level, 1));
      row.push_back(num_cell(e.working_set_bytes, Dimension::bytes, n));
      row.push_back(num_cell(e.intensity, Dimension::dimensionless, n, false));
      row.push_back(num_cell(e.time_s.median, Dimension::seconds, n));
      Cell cvc = num_cell(e.time_s.cv * 100, Dimension::dimensionless, n, false);
      cvc.text += "%";
      row.push_back(cvc);
      row.push_back(num_cell(e.achieved_bytes_per_s, Dimension::bytes_per_second, n));
      row.push_back(num_cell(e.achieved_flop_per_s, Dimension::flop_per_second, n));
      Cell bt = num_cell(e.bound_time_s, Dimension::seconds, n);
      bt.source = "derived";
      row.push_back(bt);
      Cell ec = derived_cell(e.efficiency * 100, n);
      ec.text = short_num(e.efficiency * 100, 3) + "%";
      row.push_back(ec);
      Cell vc = text_cell(e.verdict + (e.flagged ? " (flagged)" : ""), 1);
      const std::string who_row = e.kernel + " " + e.variant;
      if (e.flagged && !e.flag_reason.empty()) vc.note = notes.add(who_row + " flagged: " + e.flag_reason);
      if (!e.verdict_reason.empty() && !vc.note) vc.note = notes.add(who_row + ": " + e.verdict_reason);
      row.push_back(vc);
      if (e.tight_bound_time_s > 0) {  // results files before issue 12 carry none
        Cell tb = num_cell(e.tight_bound_time_s, Dimension::seconds, n);
        tb.source = "derived";
        row.push_back(tb);
        Cell te = derived_cell(e.tight_efficiency * 100, n);
        te.text = short_num(e.tight_efficiency * 100, 3) + "%" + (e.tight_verdict == "beats-bound" ? " (beats)" : "");
        if (e.tight_verdict == "beats-bound")
          te.note = notes.add(who_row + " beats the tight bound: " +
                              (!e.tight_reason.empty() ? e.tight_reason
                               : hw ? validation::tight_beats_reason(*hw, e) + " (reason derived by the report from descriptor '" + hw->id + "')"
                                    : std::string("no reason recorded (results written before validate recorded one)")));
        row.push_back(te);
      } else {
        row.push_back(text_cell("", 1));
        row.push_back(text_cell("", 1));
      }
    };
    fill_rows(t, v.results, result_row);
    if (t.row_count() == 0) t.caption += " The file holds no kernel results.";
    out.push_back(std::move(t));

    Table s;
    s.id = stem + "-speedups";
    s.title = "Tensor-core speedup vs bound: " + who;
    s.caption = "Measured T(CC)/T(TC) against the bound of Eq. 22 and the memory-bound limit of Eq. 23.";
    s.caption_note = s.notes.add(prov);
    s.columns = {"kernel", "prec.", "size", "working set", "level", "measured CC/TC", "bound Eq. 22", "limit Eq. 23",
                 "verdict"};
    const int sn = 0;  // as above: the caption's note covers every number
    const auto speedup_row = [sn](const validation::SpeedupResult& e, std::vector<Cell>& row, Notes&) {
      row.clear();
      row.push_back(label(e.kernel + (e.cuda_core_implementation.empty() ? "" : " vs " + e.cuda_core_implementation)));
      row.push_back(text_cell(e.precision, 1));
      row.push_back(text_cell(e.label.empty() ? size_text(e.size) : e.label, 1));
      row.push_back(num_cell(e.working_set_bytes, Dimension::bytes, sn));
      row.push_back(text_cell(e.memory_level, 1));
      row.push_back(num_cell(e.measured, Dimension::dimensionless, sn, false));
      row.push_back(derived_cell(e.bound_eq22, sn));
      row.push_back(derived_cell(e.limit_eq23, sn));
      row.push_back(text_cell(e.verdict, 1));
    };
    fill_rows(s, v.speedups, speedup_row);
    if (s.row_count() > 0) out.push_back(std::move(s));

    Table g;
    g.id = stem + "-geomeans";
    g.title = "Geometric means of the speedups: " + who;
    g.caption = "Geometric means per kernel, inside and outside the L2 (the paper splits at half the L2): the "
                "tensor-core speedup T(CC)/T(TC), and its inverse, the CUDA cores' speedup over tensor cores "
                "(GPGPU'25 Figure 6).";
    g.caption_note = g.notes.add(prov);
    g.columns = {"kernel", "prec.", "side", "T(CC)/T(TC) geomean", "CC speedup over TC", "count"};
    for (const auto& e : v.geomeans) {
      std::vector<Cell> row;
      row.push_back(label(e.kernel + (e.cuda_core_implementation.empty() ? "" : " vs " + e.cuda_core_implementation)));
      row.push_back(text_cell(e.precision, 1));
      row.push_back(text_cell(e.side, 1));
      row.push_back(num_cell(e.cc_over_tc, Dimension::dimensionless, g.caption_note, false));
      // 1 / cc_over_tc by definition (validation.hpp); load_report fills it for older files.
      Cell ic = num_cell(e.cc_speedup, Dimension::dimensionless, g.caption_note, false);
      ic.source = "derived";
      row.push_back(ic);
      row.push_back(text_cell(std::to_string(e.count), 1));
      g.rows.push_back(std::move(row));
    }
    if (!g.rows.empty()) out.push_back(std::move(g));

    Table f;
    f.id = stem + "-overlap";
    f.title = "Overlap fits: " + who;
    f.caption = "phi of T = max(Tmem,Tcmp) + (1-phi) min(Tmem,Tcmp) + Tother fitted to the measurements (ours).";
    f.caption_note = f.notes.add(prov);
    f.columns = {"kernel", "variant", "prec.", "phi", "r\u00b2", "points"};
    for (const auto& e : v.overlap_fits) {
      std::vector<Cell> row;
      row.push_back(label(e.kernel));
      row.push_back(text_cell(e.variant, 1));
      row.push_back(text_cell(e.precision, 1));
      row.push_back(derived_cell(e.phi, f.caption_note));
      row.push_back(derived_cell(e.r2, f.caption_note));
      row.push_back(text_cell(std::to_string(e.points), 1));
      f.rows.push_back(std::move(row));
    }
    if (!f.rows.empty()) out.push_back(std::move(f));
  }
}

// ---- profiled kernels (ceiling profile) ----

std::string percent(double fraction) { return short_num(fraction * 100, 3) + "%"; }

// "tensor cores could give at most 1.25x (memory-bound)", "CUDA cores would lose 1.58x to 2x".
std::string profile_speedup_text(const ProfiledKernel& k) {
  if (!k.speedup) return "\u2014" + (k.speedup_missing.empty() ? std::string() : " (" + k.speedup_missing + ")");
  const ProfiledSpeedup& s = *k.speedup;
  if (s.direction == "tensor cores could give")
    return "tensor cores could give at most " + short_num(s.upper, 3) + "x" + (s.regime.empty() ? "" : " (" + s.regime + ")");
  return "CUDA cores would lose " + short_num(s.lower, 3) + "x to " + short_num(s.upper, 3) + "x" +
         (s.regime.empty() ? "" : " (" + s.regime + ")");
}

void profile_tables(const ReportInput& in, std::vector<Table>& out) {
  for (std::size_t pi = 0; pi < in.profiles.size(); ++pi) {
    const ProfileInput& p = in.profiles[pi];
    Table t;
    t.id = profile_table_id(in, pi);
    t.title = "Profiled kernels (" + p.path.filename().string() + ")";
    t.caption = "Kernels profiled with Nsight Compute and analysed by ceiling profile against " + p.gpu_id + ", by share of " +
                format_quantity(p.time_s, Dimension::seconds) + " of GPU time. W: CUDA-core and tensor-core flops; "
                "I dram = W / Q dram; bound = the largest of the memory levels' and units' times (bounded by), "
                "efficiency = bound / time. Eq. 22 gives the range of T(CC)/T(TC) for the other unit. The plots mark "
                "the first " + std::to_string(kProfileMarks) + " rows with the letter of the last column.";
    std::string prov = "profile " + p.path.filename().string() + " (ceiling " +
                       (p.tool_version.empty() ? std::string("version unknown") : p.tool_version) + ")";
    if (!p.export_file.empty()) prov += ", from the ncu export " + p.export_file;
    prov += ", bounds from " + p.hardware_id + (p.hardware_name.empty() ? "" : " (" + p.hardware_name + ")");
    t.caption_note = t.notes.add(prov);
    t.columns = {"kernel", "launches", "time", "share", "unit", "W", "Q dram", "I dram (flop/B)", "bounded by",
                 "bound", "efficiency", "verdict", "speedup (Eq. 22)", "plot mark"};
    std::vector<std::string> labels = profile_kernel_labels(p), marks;
    for (std::size_t i = 0; i < p.kernels.size(); ++i) marks.push_back(profile_mark(in, pi, i));
    const auto row_of = [&p, labels, marks](const ProfiledKernel& k, std::vector<Cell>& row, Notes& notes) {
      const std::size_t i = static_cast<std::size_t>(&k - p.kernels.data());
      row.clear();
      Cell name = label(labels[i]);
      if (k.name != labels[i]) name.note = notes.add(labels[i] + ": " + k.name);
      row.push_back(name);
      row.push_back(text_cell(std::to_string(k.launches), 1));
      row.push_back(num_cell(k.time_s, Dimension::seconds, 0));
      Cell share = derived_cell(k.time_share * 100, 0);  // percent, as the validation table's efficiency
      share.text = percent(k.time_share);
      row.push_back(share);
      row.push_back(text_cell(k.unit == "none" ? "none"
                                               : unit_short(k.unit) + (k.precision.empty() ? "" : " " + k.precision), 1));
      Cell w = num_cell(k.work_flop, Dimension::dimensionless, 0, false);
      w.text = format_quantity(k.work_flop, Dimension::flop_per_second, 3);
      if (w.text.size() > 2 && w.text.ends_with("/s")) w.text.resize(w.text.size() - 2);  // "275 GFLOP"
      w.dimension.clear();
      row.push_back(w);
      if (k.dram_bytes) row.push_back(num_cell(*k.dram_bytes, Dimension::bytes, 0));
      else row.push_back(text_cell("", 1));
      if (const auto it = k.intensity.find("dram"); it != k.intensity.end())
        row.push_back(derived_cell(it->second, 0));
      else
        row.push_back(text_cell("", 1));
      row.push_back(text_cell(k.bounded_by, 1));
      Cell bound = num_cell(k.bound_s, Dimension::seconds, 0);
      bound.source = "derived";
      row.push_back(bound);
      Cell eff = derived_cell(k.efficiency * 100, 0);
      eff.text = percent(k.efficiency);
      row.push_back(eff);
      row.push_back(text_cell(k.verdict, 1));
      Cell sp = text_cell(profile_speedup_text(k), 1);
      if (k.speedup && !k.speedup->note.empty()) sp.note = notes.add(labels[i] + ": " + k.speedup->note);
      row.push_back(sp);
      row.push_back(text_cell(marks[i], 1));
    };
    fill_rows(t, p.kernels, row_of);
    if (t.row_count() == 0) t.caption += " The file holds no kernels.";
    out.push_back(std::move(t));
  }
}

}  // namespace

std::vector<Table> build_tables(const ReportInput& in) {
  std::vector<Table> out;
  out.push_back(platform_table(in));
  out.push_back(latency_table(in));
  out.push_back(throughput_table(in));
  out.push_back(mma_table(in));
  out.push_back(numerics_table(in));
  out.push_back(numerics_errors_table(in));
  out.push_back(power_table(in));
  out.push_back(power_other_table(in));
  out.push_back(shared_access_table(in));
  out.push_back(dpx_table(in));
  out.push_back(async_copy_table(in));
  out.push_back(async_matmul_table(in));
  out.push_back(dsm_table(in));
  if (!in.peers.empty()) out.push_back(peers_table(in));
  results_tables(in, out);
  profile_tables(in, out);
  return out;
}

// ---- data files ----

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string o = "\"";
  for (char c : s) o += (c == '"') ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

namespace {

// One CSV line per cell of `row` (long form: one number per line, so a program can read it back
// without parsing the layout).
// csv_field's quoting, written straight to the stream.
void put_csv(std::string& o, std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) {
    o.append(s);
    return;
  }
  o += '"';
  for (char c : s) {
    if (c == '"') o += '"';
    o += c;
  }
  o += '"';
}

void csv_row(std::ostream& out, const Table& t, const std::vector<Cell>& row, const Notes& notes) {
  static thread_local std::string o;
  o.clear();
  const std::string_view row_label = row.empty() ? std::string_view() : std::string_view(row[0].text);
  size_t col = 0;
  char num[40];
  for (const auto& c : row) {
    put_csv(o, row_label);
    o += ',';
    put_csv(o, col < t.columns.size() ? std::string_view(t.columns[col]) : std::string_view());
    o += ',';
    put_csv(o, c.gpu);
    o += ',';
    put_csv(o, c.field);
    o += ',';
    o += c.source;
    o += ',';
    if (c.value) o.append(num, std::to_chars(num, num + sizeof num, *c.value).ptr);
    o += ',';
    o += c.dimension;
    o += ',';
    put_csv(o, c.text);
    o += ',';
    if (c.note) put_csv(o, notes.items[static_cast<size_t>(c.note - 1)]);
    o += '\n';
    col += c.span;
  }
  out.write(o.data(), static_cast<std::streamsize>(o.size()));
}

json row_json(const std::vector<Cell>& row) {
  json r = json::array();
  for (const auto& c : row) {
    json cj{{"text", c.text}, {"source", c.source}};
    if (c.value) cj["value"] = *c.value;
    if (c.note) cj["note"] = c.note;
    if (c.span > 1) cj["span"] = c.span;
    if (!c.gpu.empty()) cj["gpu"] = c.gpu;
    if (!c.field.empty()) cj["field"] = c.field;
    if (!c.dimension.empty()) cj["dimension"] = c.dimension;
    r.push_back(std::move(cj));
  }
  return r;
}

// A JSON string: plain text as it is, anything else through nlohmann (escapes; bytes that are not
// UTF-8 become U+FFFD).
void put_json_string(std::string& o, std::string_view s) {
  bool plain = true;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x80 || c == '"' || c == '\\') {
      plain = false;
      break;
    }
  }
  if (plain) {
    o += '"';
    o.append(s);
    o += '"';
  } else {
    o += json(std::string(s)).dump(-1, ' ', false, json::error_handler_t::replace);
  }
}

// row_json(row).dump() without the document: the same members in the same (sorted) order.
void put_row_json(std::string& o, const std::vector<Cell>& row) {
  char num[40];
  o += '[';
  bool first = true;
  for (const auto& c : row) {
    o += first ? "{" : ",{";
    first = false;
    bool member = false;
    const auto key = [&](const char* k) {
      o += member ? ",\"" : "\"";
      member = true;
      o += k;
      o += "\":";
    };
    if (!c.dimension.empty()) key("dimension"), put_json_string(o, c.dimension);
    if (!c.field.empty()) key("field"), put_json_string(o, c.field);
    if (!c.gpu.empty()) key("gpu"), put_json_string(o, c.gpu);
    if (c.note) key("note"), o += std::to_string(c.note);
    key("source"), put_json_string(o, c.source);
    if (c.span > 1) key("span"), o += std::to_string(c.span);
    key("text"), put_json_string(o, c.text);
    if (c.value) {
      key("value");
      if (std::isfinite(*c.value)) o.append(num, std::to_chars(num, num + sizeof num, *c.value).ptr);
      else o += "null";
    }
    o += '}';
  }
  o += ']';
}

json table_head(const Table& t) {
  json j;
  j["id"] = t.id;
  j["title"] = t.title;
  j["caption"] = t.caption;
  j["columns"] = t.columns;
  json groups = json::array();
  for (const auto& [g, span] : t.groups) groups.push_back({{"label", g}, {"span", span}});
  j["groups"] = groups;
  return j;
}

std::string dump1(const json& j) { return j.dump(1, ' ', false, json::error_handler_t::replace); }

// Every row of t in order, each with the notes it refers to: a long table's rows are made one at a
// time (notes numbered afresh from the caption's: the files' own numbering).
// Returns the notes the rows refer to.
template <class Each>
std::vector<std::string> each_row(const Table& t, Each&& each) {
  if (!t.make_row) {
    for (const auto& row : t.rows) each(row, t.notes);
    return t.notes.items;
  }
  Notes notes;
  for (int i = 0; i < t.caption_note; ++i) notes.add(t.notes.items[static_cast<size_t>(i)]);
  std::vector<Cell> row;
  for (std::size_t i = 0; i < t.total_rows; ++i) {
    t.make_row(i, row, notes);
    each(row, notes);
  }
  return std::move(notes.items);
}

}  // namespace

std::string table_csv(const Table& t) {
  std::ostringstream o;
  o << "row,column,gpu,field,source,value,dimension,text,note\n";
  each_row(t, [&](const std::vector<Cell>& row, const Notes& notes) { csv_row(o, t, row, notes); });
  return o.str();
}

json table_json(const Table& t, bool shown_only) {
  json j = table_head(t);
  json rows = json::array();
  if (shown_only && t.make_row) {
    for (const auto& row : t.rows) rows.push_back(row_json(row));
    j["rows"] = std::move(rows);
    j["notes"] = t.notes.items;
    j["rows_total"] = t.total_rows;
    j["rows_in"] = {t.id + ".csv", t.id + ".json"};
    return j;
  }
  std::vector<std::string> notes =
      each_row(t, [&](const std::vector<Cell>& row, const Notes&) { rows.push_back(row_json(row)); });
  j["rows"] = std::move(rows);
  j["notes"] = std::move(notes);
  return j;
}

void write_table_files(const Table& t, const std::filesystem::path& dir) {
  const auto open = [](const std::filesystem::path& p) {
    std::ofstream o(p, std::ios::binary | std::ios::trunc);
    if (!o) throw std::runtime_error("cannot write " + p.string());
    return o;
  };
  std::ofstream csv = open(dir / (t.id + ".csv"));
  std::ofstream js = open(dir / (t.id + ".json"));
  csv << "row,column,gpu,field,source,value,dimension,text,note\n";
  // The JSON as table_json writes it, rows streamed: the head's members, "rows", then "notes".
  const std::string head = dump1(table_head(t));  // "{\n \"caption\": ...\n}"
  js << head.substr(0, head.size() - 2) << ",\n \"rows\": [";
  bool first = true;
  std::string line;
  const std::vector<std::string> notes = each_row(t, [&](const std::vector<Cell>& row, const Notes& n) {
    csv_row(csv, t, row, n);
    line.assign(first ? "\n  " : ",\n  ");
    put_row_json(line, row);
    js.write(line.data(), static_cast<std::streamsize>(line.size()));
    first = false;
  });
  js << (first ? "]" : "\n ]") << ",\n \"notes\": " << json(notes).dump(-1, ' ', false, json::error_handler_t::replace)
     << "\n}\n";
  if (!csv || !js) throw std::runtime_error("error writing " + t.id + ".csv/.json in " + dir.string());
}

}  // namespace ceiling::reports::detail
