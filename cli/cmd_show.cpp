// ceiling show: one descriptor for people (or --json for programs), every number with its source.
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common.hpp"
#include "model/descriptor.hpp"
#include "model/link.hpp"
#include "model/units.hpp"
#include "reports/power.hpp"

namespace ceiling::cli {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

struct ShowArgs {
  std::string hw;
  std::string source = "auto";
  bool json = false;
  bool list = false;
};

constexpr MemoryLevelKind kLevels[] = {MemoryLevelKind::dram, MemoryLevelKind::l2, MemoryLevelKind::l1,
                                       MemoryLevelKind::shared};
constexpr Precision kPrecisions[] = {Precision::fp64, Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16,
                                     Precision::fp8,  Precision::int8, Precision::int4, Precision::int32};

bool is_integer(Precision p) { return p == Precision::int8 || p == Precision::int4 || p == Precision::int32; }

// Compute rates of integer precisions print as OP/s, the rest as FLOP/s (same dimension).
// Peaks read best in T (as datasheets write them: "1979 TFLOP/s", not "1.979 PFLOP/s").
std::string rate_text(double v, Precision p) {
  std::string s = v >= 1e12 ? fmt::format("{:.6g} TFLOP/s", v / 1e12) : format_quantity(v, Dimension::flop_per_second, 6);
  if (is_integer(p))
    if (auto at = s.find("FLOP/s"); at != std::string::npos) s.replace(at, 6, "OP/s");
  return s;
}

// Six significant digits: enough to show a datasheet or paper value as written ("1861.5 GB/s").
std::string human(double v, Dimension d) { return format_quantity(v, d, 6); }

std::string percent(double x) { return fmt::format("{:.2g}%", 100 * x); }

std::string spec_source(const SpecValue& s) { return "spec " + s.reference; }

std::string measured_source(const MeasuredValue& m) {
  std::string s = "measured " + m.probe + " " + m.date;
  std::vector<std::string> details;
  if (m.repeats > 0) details.push_back("n=" + std::to_string(m.repeats));
  if (m.cv > 0) details.push_back("cv " + percent(m.cv));
  if (m.sm_clock_hz > 0) details.push_back("at " + format_quantity(m.sm_clock_hz, Dimension::hertz));
  if (m.flagged) details.push_back("FLAGGED");
  if (!m.note.empty()) details.push_back(m.note);
  if (!details.empty()) {
    s += " (";
    for (size_t i = 0; i < details.size(); ++i) s += (i ? ", " : "") + details[i];
    s += ")";
  }
  return s;
}

// "4.8 TB/s", and its source, under the chosen preference; the other source is mentioned too.
struct Shown {
  std::string value;   // "missing" when absent under the preference
  std::string source;  // empty when missing
};

Shown show_field(const Field& f, SourcePreference pref, const std::function<std::string(double)>& text) {
  const auto v = f.value(pref);
  if (!v) {
    // Say what exists under the other source, so "missing" is never mistaken for "zero".
    if (f.spec) return {"missing", "(spec " + text(f.spec->value) + " not used: --source " + std::string(to_string(pref)) + ")"};
    if (f.measured) return {"missing", "(measured " + text(f.measured->median) + " not used: --source " + std::string(to_string(pref)) + ")"};
    return {"missing", ""};
  }
  Shown s;
  s.value = text(*v);
  if (f.source(pref) == "measured") {
    s.source = measured_source(*f.measured);
    if (f.spec) s.source += "; spec " + text(f.spec->value) + " " + f.spec->reference;
  } else {
    s.source = spec_source(*f.spec);
    if (f.measured) s.source += "; measured " + text(f.measured->median) + " (not used)";
  }
  return s;
}

std::function<std::string(double)> plain(Dimension d) {
  return [d](double v) { return human(v, d); };
}

json spec_json(const SpecValue& s, const HardwareDescriptor& d) {
  json j{{"value", s.value}, {"ref", s.reference}};
  if (auto it = d.references.find(s.reference); it != d.references.end()) j["citation"] = it->second;
  return j;
}

json measured_json(const MeasuredValue& m) {
  json j{{"median", m.median}, {"min", m.min},   {"max", m.max},         {"repeats", m.repeats},
         {"cv", m.cv},         {"probe", m.probe}, {"date", m.date},     {"sm_clock_hz", m.sm_clock_hz},
         {"flagged", m.flagged}};
  if (!m.note.empty()) j["note"] = m.note;
  return j;
}

json field_json(const Field& f, SourcePreference pref, const HardwareDescriptor& d) {
  json j;
  const auto v = f.value(pref);
  j["value"] = v ? json(*v) : json(nullptr);
  j["dimension"] = std::string(to_string(f.dimension));
  j["text"] = v ? json(human(*v, f.dimension)) : json(nullptr);
  j["source"] = std::string(f.source(pref));
  j["spec"] = f.spec ? spec_json(*f.spec, d) : json(nullptr);
  j["measured"] = f.measured ? measured_json(*f.measured) : json(nullptr);
  return j;
}

struct View {
  const HardwareDescriptor& d;
  fs::path path;
  SourcePreference pref;
  std::optional<double> clock_hz() const { return d.sm_clock.value(pref); }
};

std::string latency_text(const View& v, double cycles) {
  std::string s = human(cycles, Dimension::cycles);
  if (auto hz = v.clock_hz()) s += " = " + format_quantity(cycles / *hz, Dimension::seconds);
  return s;
}

// Rows of "label  value  source", aligned.
struct Table {
  std::vector<std::vector<std::string>> rows;
  void add(std::vector<std::string> r) { rows.push_back(std::move(r)); }
  void print(std::ostream& out, const std::string& indent) const {
    std::vector<size_t> width;
    for (const auto& r : rows)
      for (size_t i = 0; i < r.size(); ++i) {
        if (width.size() <= i) width.push_back(0);
        width[i] = std::max(width[i], r[i].size());
      }
    for (const auto& r : rows) {
      std::string line = indent;
      for (size_t i = 0; i < r.size(); ++i) {
        line += r[i];
        if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 2, ' ');
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out << line << "\n";
    }
  }
};

// What mma-numerics found (or a paper's figures): one verdict line per instruction, then the
// paper's Tables 12-15 layout (mean |D - CPU FP32 result|; "vs D type": that result in D's type).
void print_numerics(std::ostream& out, const HardwareDescriptor& d) {
  bool any = false;
  for (const auto& ti : d.tensor_instructions) any = any || ti.numerics.has_value();
  if (!any) return;
  out << "\nNumeric behaviour of the tensor instructions (Sun et al. §8; docs/FORMATS.md \"numerics\")\n";
  Table e;
  e.add({"instruction", "experiment", "init low", "init fp32", "vs D type: low", "vs D type: fp32"});
  auto num = [](const std::map<std::string, std::map<std::string, double>>& t, const std::string& exp, const char* init) {
    auto i = t.find(exp);
    if (i == t.end()) return std::string("-");
    auto j = i->second.find(init);
    return j == i->second.end() ? std::string("-") : fmt::format("{:.3g}", j->second);
  };
  for (const auto& ti : d.tensor_instructions) {
    if (!ti.numerics) continue;
    const NumericBehaviour& nb = *ti.numerics;
    const std::string src = nb.reference.empty() ? nb.probe + " " + nb.date : nb.reference;
    out << "  " << ti.key() << ": " << (nb.summary.empty() ? "(no summary)" : nb.summary) << " [" << src << "]\n";
    if (!nb.note.empty()) out << "    note: " << nb.note << "\n";
    for (const char* exp : {"multiplication", "inner_product", "accumulation"})
      if (nb.errors.count(exp) || nb.errors_out.count(exp))
        e.add({ti.key(), exp, num(nb.errors, exp, "init_low"), num(nb.errors, exp, "init_fp32"),
               num(nb.errors_out, exp, "init_low"), num(nb.errors_out, exp, "init_fp32")});
  }
  out << "  Mean absolute error against the CPU's FP32 result (Tables 12-15):\n";
  e.print(out, "  ");
}


// The DRAM read bandwidth an async copy is held against (memory.dram.patterns.read, else the level's).
std::optional<double> dram_read(const View& v) {
  auto it = v.d.memory.find(MemoryLevelKind::dram);
  if (it == v.d.memory.end()) return std::nullopt;
  if (auto p = it->second.patterns.find("read"); p != it->second.patterns.end())
    if (auto x = p->second.value(v.pref)) return x;
  return it->second.bandwidth.value(v.pref);
}

// Probe async-copy (issue 14): global->shared bandwidth per method, and Luo et al. Tables XIII-XIV.
void print_async_copy(const View& v, std::ostream& out) {
  const auto& a = v.d.async_copy;
  const auto read = dram_read(v);
  if (!a.methods.empty()) {
    out << "\nAsync copies global->shared (probe async-copy: every SM busy, a DRAM-sized buffer, each byte copied once "
           "and summed in shared memory; share of the DRAM read bandwidth)\n";
    Table t;
    t.add({"method", "sass", "bandwidth", "of DRAM read", "best configuration", "sweep", "source"});
    for (const auto& m : a.methods) {
      const Shown s = show_field(m.bandwidth, v.pref, plain(Dimension::bytes_per_second));
      std::string share = "-";
      if (const auto x = m.bandwidth.value(v.pref); x && read && *read > 0) share = fmt::format("{:.1f}%", 100 * *x / *read);
      t.add({m.method, m.sass.empty() ? "-" : m.sass, s.value == "missing" ? "-" : s.value, share,
             m.config.empty() ? "-" : m.config, std::to_string(m.sweep.size()) + " configs", s.source});
    }
    t.print(out, "  ");
  }
  if (!a.matmul.empty()) {
    out << "\nTiled FP32 matmul, SyncShare vs AsyncPipe (two-stage cp.async), A width = B height = 2048 (Luo et al. "
           "Tables XIII-XIV): GFLOP/s by blocks per SM\n";
    Table t;
    std::vector<int> cols;
    for (const auto& r : a.matmul)
      for (int b : r.blocks_per_sm)
        if (std::find(cols.begin(), cols.end(), b) == cols.end()) cols.push_back(b);
    std::sort(cols.begin(), cols.end());
    std::vector<std::string> head{"variant", "block", "source"};
    for (int b : cols) head.push_back(std::to_string(b));
    head.push_back("gain");
    t.add(head);
    for (const auto& r : a.matmul)
      for (const auto* c : {r.spec ? &*r.spec : nullptr, r.measured ? &*r.measured : nullptr}) {
        if (!c) continue;
        const bool spec = c == (r.spec ? &*r.spec : nullptr);
        std::vector<std::string> row{r.variant, std::to_string(r.block) + "x" + std::to_string(r.block),
                                     spec ? "spec " + c->reference : "measured " + c->date.substr(0, 10)};
        for (int b : cols) {
          std::string cell = "-";
          for (std::size_t i = 0; i < r.blocks_per_sm.size() && i < c->values.size(); ++i)
            if (r.blocks_per_sm[i] == b) cell = fmt::format("{:.6g}", c->values[i] / 1e9);
          row.push_back(cell);
        }
        std::string gain = "-";
        if (r.variant == "async_pipe") {
          if (spec && c->gain_percent) gain = fmt::format("{:.3g}% (paper)", *c->gain_percent);
          else if (const auto g = async_pipe_gain_percent(a, r.block, !spec)) gain = fmt::format("{:.3g}%", *g);
        }
        row.push_back(gain);
        t.add(row);
      }
    t.print(out, "  ");
    out << "  gain: mean of AsyncPipe / SyncShare - 1 over the columns (the paper's Perf column where it gives one)\n";
  }
}

void print_human(const View& v, std::ostream& out) {
  const HardwareDescriptor& d = v.d;
  const Identity& id = d.identity;
  out << id.name << "  (id " << d.id << ", " << v.path.string() << ")\n";
  std::string line = "  " + std::to_string(id.sm_count) + " SMs";
  if (!id.compute_capability.empty()) line += ", compute capability " + id.compute_capability;
  if (!id.memory_type.empty()) line += ", " + id.memory_type;
  if (!id.cuda_version.empty()) line += ", CUDA " + id.cuda_version;
  if (!id.driver.empty()) line += ", driver " + id.driver;
  out << line << "\n";
  if (!id.uuid.empty()) out << "  uuid " << id.uuid << "\n";
  out << "  schema " << d.schema << (d.tool_version.empty() ? "" : ", written by ceiling " + d.tool_version)
      << "; values: " << to_string(v.pref)
      << (v.pref == SourcePreference::measured_else_spec ? " (measured where present, else spec)" : "") << "\n";

  out << "\nClocks\n";
  {
    Table t;
    for (const auto& [label, f] : {std::pair<const char*, const Field*>{"SM", &d.sm_clock}, {"memory", &d.memory_clock}}) {
      const Shown s = show_field(*f, v.pref, plain(Dimension::hertz));
      t.add({label, s.value, s.source});
    }
    t.print(out, "  ");
  }

  out << "\nFixed costs (the tight bound uses the measured minimum)\n";
  {
    Table t;
    for (const auto& [label, f] : {std::pair<const char*, const Field*>{"launch, single", &d.fixed_costs.launch_single},
                                   {"launch, back-to-back", &d.fixed_costs.launch_back_to_back}}) {
      Shown s = show_field(*f, v.pref, plain(Dimension::seconds));
      if (f->measured && f->measured->min > 0) s.value += " (min " + format_quantity(f->measured->min, Dimension::seconds) + ")";
      t.add({label, s.value, s.source});
    }
    t.print(out, "  ");
  }

  out << "\nMemory\n";
  for (MemoryLevelKind kind : kLevels) {
    auto it = d.memory.find(kind);
    const bool always = kind == MemoryLevelKind::dram || kind == MemoryLevelKind::l2;
    if (it == d.memory.end() && !always) continue;
    static const MemoryLevel kEmpty;
    const MemoryLevel& l = it == d.memory.end() ? kEmpty : it->second;
    out << "  " << to_string(kind) << "\n";
    Table t;
    auto row = [&](const std::string& label, const Field& f, const std::function<std::string(double)>& text) {
      const Shown s = show_field(f, v.pref, text);
      t.add({label, s.value, s.source});
    };
    row("capacity", l.capacity, plain(Dimension::bytes));
    row("bandwidth", l.bandwidth, plain(Dimension::bytes_per_second));
    if (l.bandwidth_per_sm.present() || kind == MemoryLevelKind::l1 || kind == MemoryLevelKind::shared) {
      row("bandwidth per SM", l.bandwidth_per_sm, [&](double bpc) {
        std::string s = human(bpc, Dimension::bytes_per_cycle);
        if (auto hz = v.clock_hz())  // derived for reading convenience: B/clk/SM x SMs x clock
          s += " (device " + format_quantity(bpc * d.identity.sm_count * *hz, Dimension::bytes_per_second) + ")";
        return s;
      });
    }
    row("latency", l.latency, [&](double c) { return latency_text(v, c); });
    for (const auto& [name, f] : l.patterns)
      if (f.present()) row("pattern " + name, f, plain(Dimension::bytes_per_second));
    for (const auto& [name, f] : l.first_byte)
      if (f.present()) row("first byte, " + name, f, plain(Dimension::seconds));
    for (const auto& [name, f] : l.ramp_bandwidth)
      if (f.present()) row("ramp slope, " + name, f, plain(Dimension::bytes_per_second));
    for (const auto& [name, r] : l.ramp) {
      if (!r.present()) continue;
      const auto& [x0, t0] = r.points.front();
      const auto& [x1, t1] = r.points.back();
      t.add({"ramp, " + name,
             std::to_string(r.points.size()) + " sizes: " + format_quantity(x0, Dimension::bytes) + " in " +
                 format_quantity(t0, Dimension::seconds) + " .. " + format_quantity(x1, Dimension::bytes) + " in " +
                 format_quantity(t1, Dimension::seconds),
             "measured " + r.probe + " " + r.date +
                 (kind == MemoryLevelKind::dram ? " (the tight bound's ramp(Q))" : " (data: the tight bound uses DRAM's)")});
    }
    for (const auto& [name, f] : l.extra) {
      if (!f.present()) continue;
      if (f.dimension == Dimension::watts && name == "power_read") {
        // Energy per byte read: board power over the level's read bandwidth (calibrate --power).
        const Field* bw = l.patterns.count("read") ? &l.patterns.at("read") : &l.bandwidth;
        const auto b = bw->value(v.pref);
        row(name, f, [b](double w) {
          return format_quantity(w, Dimension::watts) + (b && *b > 0 ? fmt::format(" = {:.3g} pJ/B read", 1e12 * w / *b) : "");
        });
        continue;
      }
      row(name, f, f.dimension == Dimension::cycles ? std::function<std::string(double)>([&](double c) { return latency_text(v, c); })
                                                    : plain(f.dimension));
    }
    t.print(out, "    ");
  }

  out << "\nCompute ceilings (alpha = tensor core / CUDA core)\n";
  {
    Table t;
    t.add({"precision", "cuda_core", "source", "tensor_core", "source", "alpha"});
    for (Precision p : kPrecisions) {
      const Field* cc = d.find_field("compute.cuda_core." + std::string(to_string(p)));
      const Field* tc = d.find_field("compute.tensor_core." + std::string(to_string(p)));
      if (!(cc && cc->present()) && !(tc && tc->present())) continue;
      const auto text = [p](double x) { return rate_text(x, p); };
      const Shown sc = cc ? show_field(*cc, v.pref, text) : Shown{"missing", ""};
      const Shown st = tc ? show_field(*tc, v.pref, text) : Shown{"missing", ""};
      const auto pc = d.peak(ComputeUnit::cuda_core, p, v.pref);
      const auto pt = d.peak(ComputeUnit::tensor_core, p, v.pref);
      t.add({std::string(to_string(p)), sc.value, sc.source, st.value, st.source,
             pc && pt ? fmt::format("{:.3g}", *pt / *pc) : "-"});
    }
    t.print(out, "  ");
  }
  // The CUDA-core rate a GEMM's register-blocked outer product can reach (two operands per FMA
  // from the register file) and the board power under the CUDA-core peak (calibrate --power).
  const auto any_of_map = [](const std::map<Precision, Field>& m) {
    return std::any_of(m.begin(), m.end(), [](const auto& kv) { return kv.second.present(); });
  };
  if (any_of_map(d.outer_product) || any_of_map(d.gemm_loop) || any_of_map(d.cuda_core_power)) {
    out << "\nCUDA cores: outer-product rate, the GEMM loop's (the GEMM kind's CUDA-core ceiling where measured) and "
           "power under the peak\n";
    Table t;
    t.add({"precision", "outer product", "of the peak", "GEMM loop", "of the peak", "power", "peak per W", "source"});
    for (Precision p : kPrecisions) {
      const auto op = d.outer_product.find(p);
      const auto gl = d.gemm_loop.find(p);
      const auto pw = d.cuda_core_power.find(p);
      const bool has_op = op != d.outer_product.end() && op->second.present();
      const bool has_gl = gl != d.gemm_loop.end() && gl->second.present();
      const bool has_pw = pw != d.cuda_core_power.end() && pw->second.present();
      if (!has_op && !has_gl && !has_pw) continue;
      const auto text = [p](double x) { return rate_text(x, p); };
      const Shown so = has_op ? show_field(op->second, v.pref, text) : Shown{"-", ""};
      const Shown sg = has_gl ? show_field(gl->second, v.pref, text) : Shown{"-", ""};
      const Shown sp = has_pw ? show_field(pw->second, v.pref, plain(Dimension::watts)) : Shown{"-", ""};
      const auto pc = d.peak(ComputeUnit::cuda_core, p, v.pref);
      const auto ov = has_op ? op->second.value(v.pref) : std::nullopt;
      const auto gv = has_gl ? gl->second.value(v.pref) : std::nullopt;
      const auto wv = has_pw ? pw->second.value(v.pref) : std::nullopt;
      t.add({std::string(to_string(p)), so.value, pc && ov ? fmt::format("{:.1f}%", 100 * *ov / *pc) : "-", sg.value,
             pc && gv ? fmt::format("{:.1f}%", 100 * *gv / *pc) : "-", sp.value,
             pc && wv ? rate_text(*pc / *wv, p) + "/W" : "-",
             !so.source.empty() ? so.source : !sg.source.empty() ? sg.source : sp.source});
    }
    t.print(out, "  ");
  }
  // The warp-level mma.sync rate: the tensor-core ceiling of kernels too narrow for wgmma.
  if (std::any_of(d.tensor_core_mma_sync.begin(), d.tensor_core_mma_sync.end(), [](const auto& kv) { return kv.second.present(); })) {
    out << "\nTensor cores through mma.sync (the ceiling of kernels whose matrices are narrower than wgmma's 64 rows "
           "x 64..256 columns: intensity)\n";
    Table t;
    t.add({"precision", "mma.sync", "of the tensor-core peak", "source"});
    for (Precision p : kPrecisions) {
      const auto ms = d.tensor_core_mma_sync.find(p);
      if (ms == d.tensor_core_mma_sync.end() || !ms->second.present()) continue;
      const auto text = [p](double x) { return rate_text(x, p); };
      const Shown sm = show_field(ms->second, v.pref, text);
      const auto pt = d.peak(ComputeUnit::tensor_core, p, v.pref);
      const auto mv = ms->second.value(v.pref);
      t.add({std::string(to_string(p)), sm.value, pt && mv ? fmt::format("{:.1f}%", 100 * *mv / *pt) : "-", sm.source});
    }
    t.print(out, "  ");
  }

  if (!d.tensor_instructions.empty()) {
    out << "\nTensor instructions (latency of one warp / warp group at ILP 1; throughput of the whole device)\n";
    Table t;
    t.add({"instruction", "sass", "latency", "throughput", "FMA/clk/SM", "warps x ILP", "source"});
    for (const auto& ti : d.tensor_instructions) {
      std::vector<std::string> sources;
      auto cell = [&](const Field& f, const std::function<std::string(double)>& text) {
        const Shown s = show_field(f, v.pref, text);
        if (!s.source.empty() && std::find(sources.begin(), sources.end(), s.source) == sources.end())
          sources.push_back(s.source);
        return s.value == "missing" ? std::string("-") : s.value;
      };
      const std::string lat = cell(ti.latency, [&](double c) { return latency_text(v, c); });
      const std::string thr = cell(ti.throughput, [&](double x) { return rate_text(x, ti.input); });
      const std::string fma = cell(ti.fma_per_clock_per_sm, plain(Dimension::dimensionless));
      std::string best = "-";
      if (ti.best_warps || ti.best_ilp)
        best = (ti.best_warps ? std::to_string(*ti.best_warps) : "?") + " x " + (ti.best_ilp ? std::to_string(*ti.best_ilp) : "?");
      std::string src;
      for (size_t i = 0; i < sources.size(); ++i) src += (i ? "; " : "") + sources[i];
      t.add({ti.key(), ti.sass.empty() ? "-" : ti.sass, lat, thr, fma, best, src});
    }
    t.print(out, "  ");
    print_numerics(out, d);
    // calibrate --power (Luo et al. Table XI): watts under each instruction and FLOP per joule, and for
    // Table XI's rows the paper's H800 PCIe figures (spec power: the shipped H800 and A100 carry them).
    Table pt;
    pt.add({"instruction", "power", "sustained (of the timed)", "work / power", "SM clock (NVML)", "Luo et al. H800: P, E",
            "source"});
    for (const auto& ti : d.tensor_instructions) {
      if (!ti.power.present()) continue;
      const auto watts = ti.power.value(v.pref);
      const auto timed = ti.throughput.value(v.pref);
      const auto sustained = ti.sustained.value(v.pref);
      const auto thr = sustained ? sustained : timed;  // the rate during the reading where it was kept
      const char* unit = is_integer(ti.input) ? "OP" : "FLOP";
      std::string paper = "-";
      for (const auto& r : reports::luo_table_xi())
        if (r.key() == ti.key()) paper = fmt::format("{} W, {:.2f} T{}/s per W", r.watts[1], r.per_watt[1], unit);
      std::string source = "-";
      if (ti.power.source(v.pref) == "measured")
        source = "measured " + ti.power.measured->probe + " " + ti.power.measured->date;
      else if (ti.power.source(v.pref) == "spec")
        source = spec_source(*ti.power.spec);
      pt.add({ti.key(), watts ? format_quantity(*watts, Dimension::watts) : "-",
              sustained ? fmt::format("{} ({:.1f}%)", rate_text(*sustained, ti.input),
                                      timed ? 100 * *sustained / *timed : 0.0)
                        : "-",
              watts && thr ? fmt::format("{:.3g} T{}/s per W", *thr / 1e12 / *watts, unit) : "-",
              ti.power.measured && ti.power.measured->sm_clock_hz > 0
                  ? format_quantity(ti.power.measured->sm_clock_hz, Dimension::hertz)
                  : "-",
              paper, source});
    }
    if (pt.rows.size() > 1) {
      out << "\nPower under tensor-core load (calibrate --power; NVML energy counter; Luo et al. Table XI)\n";
      pt.print(out, "  ");
    }
  }

  if (!d.dpx.empty()) {
    out << "\nDPX functions (latency: one thread's dependent chain; calls per clock per SM with every SM busy; per GPU: x SMs x SM clock)\n";
    Table t;
    t.add({"function", "sass", "latency", "calls/clk/SM", "per GPU", "source"});
    for (const auto& f : d.dpx) {
      std::vector<std::string> sources;
      auto cell = [&](const Field& x, const std::function<std::string(double)>& text) {
        const Shown s = show_field(x, v.pref, text);
        if (!s.source.empty() && std::find(sources.begin(), sources.end(), s.source) == sources.end())
          sources.push_back(s.source);
        return s.value == "missing" ? std::string("-") : s.value;
      };
      const std::string lat = cell(f.latency, [&](double c) { return latency_text(v, c); });
      const std::string per_sm = cell(f.throughput_per_sm, plain(Dimension::dimensionless));
      std::string per_gpu = "-";
      if (const auto x = f.throughput_per_sm.value(v.pref); x && v.clock_hz())
        per_gpu = fmt::format("{:.4g} Tcalls/s", *x * d.identity.sm_count * *v.clock_hz() / 1e12);
      std::string src;
      for (size_t i = 0; i < sources.size(); ++i) src += (i ? "; " : "") + sources[i];
      t.add({f.function, f.sass.empty() ? "-" : f.sass, lat, per_sm, per_gpu, src});
    }
    t.print(out, "  ");
    for (const auto& f : d.dpx)
      if (!f.by_blocks.empty()) {
        std::string line = "  " + f.function + " calls/clk/SM used by blocks:";
        for (const auto& [b, x] : f.by_blocks) line += fmt::format(" {}:{:.4g}", b, x);
        out << line << "\n";
      }
  }

  if (d.async_copy.present()) print_async_copy(v, out);

  if (d.dsm.present()) {
    const DistributedSharedMemory& x = d.dsm;
    out << "\nDistributed shared memory (probe dsm; Luo et al. Figs. 8-9)\n";
    Table t;
    auto row = [&](const std::string& label, const Field& f, const std::function<std::string(double)>& text) {
      if (!f.present()) return;
      const Shown s = show_field(f, v.pref, text);
      t.add({label, s.value, s.source});
    };
    const auto lat = [&](double c) { return latency_text(v, c); };
    row("SM-to-SM latency", x.latency, lat);
    row("local latency (same code)", x.local_latency, lat);
    row("ring copy, best", x.ring_bandwidth, plain(Dimension::bytes_per_second));
    row("ring copy, best per SM", x.ring_bandwidth_per_sm, plain(Dimension::bytes_per_cycle));
    for (const auto& c : x.ring_by_cluster_size) {
      std::string label = "ring copy, cluster " + std::to_string(c.cluster_size);
      if (c.block_threads > 0) label += fmt::format(" ({} threads, ILP {})", c.block_threads, c.ilp);
      row(label, c.bandwidth, plain(Dimension::bytes_per_second));
    }
    t.print(out, "  ");
    if (x.ring_cluster_size > 0)
      out << fmt::format("  best ring configuration: cluster size {}, {} threads, ILP {}\n", x.ring_cluster_size,
                         x.ring_block_threads, x.ring_ilp);
    if (x.ring.present()) {
      out << "  ring copy (cluster size / threads / ILP: bandwidth):";
      for (const auto& p : x.ring.points)
        out << fmt::format(" {}/{}/{}:{}", p.cluster_size, p.block_threads, p.ilp,
                           format_quantity(p.bytes_per_second, Dimension::bytes_per_second, 4));
      out << "\n";
    }
    if (x.histogram.present()) {
      out << "  histogram (cluster size / threads / bins: Gelem/s):";
      for (const auto& p : x.histogram.points)
        out << fmt::format(" {}/{}/{}:{:.4g}", p.cluster_size, p.block_threads, p.bins, p.elements_per_second / 1e9);
      out << "\n";
    }
  }

  if (!d.references.empty()) {
    out << "\nReferences\n";
    for (const auto& [k, c] : d.references) out << "  " << k << ": " << c << "\n";
  }
  if (!d.notes.empty()) {
    out << "\nNotes\n";
    for (const auto& n : d.notes) out << "  - " << n << "\n";
  }
}

json to_json(const View& v) {
  const HardwareDescriptor& d = v.d;
  json j;
  j["schema"] = d.schema;
  j["id"] = d.id;
  j["path"] = v.path.string();
  j["source"] = std::string(to_string(v.pref));
  if (!d.tool_version.empty()) j["tool_version"] = d.tool_version;
  const Identity& id = d.identity;
  j["identity"] = {{"name", id.name},         {"uuid", id.uuid},
                   {"sm_count", id.sm_count}, {"compute_capability", id.compute_capability},
                   {"driver", id.driver},     {"cuda_version", id.cuda_version},
                   {"memory_type", id.memory_type}};
  j["clocks"] = {{"sm", field_json(d.sm_clock, v.pref, d)}, {"memory", field_json(d.memory_clock, v.pref, d)}};
  j["fixed_costs"] = {{"launch_single", field_json(d.fixed_costs.launch_single, v.pref, d)},
                      {"launch_back_to_back", field_json(d.fixed_costs.launch_back_to_back, v.pref, d)}};
  json mem = json::object();
  for (const auto& [kind, l] : d.memory) {
    json lj;
    lj["capacity"] = field_json(l.capacity, v.pref, d);
    lj["bandwidth"] = field_json(l.bandwidth, v.pref, d);
    lj["bandwidth_per_sm"] = field_json(l.bandwidth_per_sm, v.pref, d);
    lj["latency"] = field_json(l.latency, v.pref, d);
    const auto lat = l.latency.value(v.pref);
    const auto hz = v.clock_hz();
    lj["latency_s"] = lat && hz ? json(*lat / *hz) : json(nullptr);
    lj["patterns"] = json::object();
    for (const auto& [name, f] : l.patterns)
      if (f.present()) lj["patterns"][name] = field_json(f, v.pref, d);
    lj["extra"] = json::object();
    for (const auto& [name, f] : l.extra)
      if (f.present()) lj["extra"][name] = field_json(f, v.pref, d);
    lj["first_byte"] = json::object();
    for (const auto& [name, f] : l.first_byte)
      if (f.present()) lj["first_byte"][name] = field_json(f, v.pref, d);
    lj["ramp_bandwidth"] = json::object();
    for (const auto& [name, f] : l.ramp_bandwidth)
      if (f.present()) lj["ramp_bandwidth"][name] = field_json(f, v.pref, d);
    lj["ramp"] = json::object();
    for (const auto& [name, r] : l.ramp) {
      if (!r.present()) continue;
      json pts = json::array();
      for (const auto& [x, t] : r.points) pts.push_back({{"bytes", x}, {"seconds", t}});
      lj["ramp"][name] = {{"points", pts}, {"probe", r.probe}, {"date", r.date}, {"sm_clock_hz", r.sm_clock_hz}, {"note", r.note}};
    }
    mem[std::string(to_string(kind))] = lj;
  }
  j["memory"] = mem;
  json comp = json::object();
  json alpha = json::object();
  for (const auto& [unit, m] : d.compute) {
    json uj = json::object();
    for (const auto& [p, f] : m)
      if (f.present()) uj[std::string(to_string(p))] = field_json(f, v.pref, d);
    comp[std::string(to_string(unit))] = uj;
  }
  for (const auto& [key, m] : {std::pair<const char*, const std::map<Precision, Field>*>{"cuda_core_outer_product", &d.outer_product},
                               {"cuda_core_gemm_loop", &d.gemm_loop},
                               {"cuda_core_power", &d.cuda_core_power},
                               {"tensor_core_mma_sync", &d.tensor_core_mma_sync}}) {
    json uj = json::object();
    for (const auto& [p, f] : *m)
      if (f.present()) uj[std::string(to_string(p))] = field_json(f, v.pref, d);
    if (!uj.empty()) comp[key] = uj;
  }
  for (Precision p : kPrecisions) {
    const auto pc = d.peak(ComputeUnit::cuda_core, p, v.pref);
    const auto pt = d.peak(ComputeUnit::tensor_core, p, v.pref);
    if (pc && pt) alpha[std::string(to_string(p))] = *pt / *pc;
  }
  j["compute"] = comp;
  j["alpha"] = alpha;
  json tis = json::array();
  for (const auto& ti : d.tensor_instructions) {
    json t{{"key", ti.key()},
           {"api", ti.api},
           {"shape", ti.shape},
           {"input", std::string(to_string(ti.input))},
           {"input_detail", ti.input_detail},
           {"accumulate", std::string(to_string(ti.accumulate))},
           {"sparse", ti.sparse},
           {"operand_a", ti.operand_a},
           {"sass", ti.sass},
           {"latency", field_json(ti.latency, v.pref, d)},
           {"throughput", field_json(ti.throughput, v.pref, d)},
           {"fma_per_clock_per_sm", field_json(ti.fma_per_clock_per_sm, v.pref, d)}};
    if (ti.power.present()) t["power"] = field_json(ti.power, v.pref, d);
    t["best_warps"] = ti.best_warps ? json(*ti.best_warps) : json(nullptr);
    t["best_ilp"] = ti.best_ilp ? json(*ti.best_ilp) : json(nullptr);
    if (ti.numerics) {
      const NumericBehaviour& nb = *ti.numerics;
      t["numerics"] = {{"verdicts", nb.verdicts}, {"summary", nb.summary}, {"errors", nb.errors},
                       {"errors_out", nb.errors_out}, {"cases", nb.cases}, {"models", nb.models},
                       {"samples", nb.samples}, {"probe", nb.probe}, {"date", nb.date},
                       {"ref", nb.reference}, {"note", nb.note}};
    } else {
      t["numerics"] = nullptr;
    }
    tis.push_back(t);
  }
  j["tensor_instructions"] = tis;
  json dpx = json::array();
  for (const auto& f : d.dpx) {
    json e{{"function", f.function},
           {"sass", f.sass},
           {"latency", field_json(f.latency, v.pref, d)},
           {"throughput_per_sm", field_json(f.throughput_per_sm, v.pref, d)}};
    const auto x = f.throughput_per_sm.value(v.pref);
    const auto hz = v.clock_hz();
    // calls per second of the whole GPU: per SM x SMs x SM clock
    e["throughput_per_s"] = x && hz ? json(*x * d.identity.sm_count * *hz) : json(nullptr);
    json bb = json::array();
    for (const auto& [b, y] : f.by_blocks) bb.push_back({{"blocks", b}, {"calls_per_clock_per_sm_used", y}});
    e["by_blocks"] = bb;
    dpx.push_back(e);
  }
  j["dpx"] = dpx;
  {
    const auto& a = d.async_copy;
    json methods = json::array();
    const auto read = dram_read(v);
    for (const auto& m : a.methods) {
      json e{{"method", m.method}, {"sass", m.sass}, {"bandwidth", field_json(m.bandwidth, v.pref, d)}, {"config", m.config}};
      const auto x = m.bandwidth.value(v.pref);
      e["fraction_of_dram_read"] = x && read && *read > 0 ? json(*x / *read) : json(nullptr);
      json sw = json::array();
      for (const auto& q : m.sweep)
        sw.push_back({{"threads", q.threads}, {"stages", q.stages}, {"tile_bytes", q.tile_bytes}, {"bytes_per_s", q.bytes_per_second}});
      e["sweep"] = sw;
      methods.push_back(e);
    }
    json rows = json::array();
    for (const auto& r : a.matmul) {
      json e{{"variant", r.variant}, {"block", r.block}, {"blocks_per_sm", r.blocks_per_sm}};
      if (r.spec) {
        json sj{{"flop_per_s", r.spec->values}, {"ref", r.spec->reference}};
        if (auto it = d.references.find(r.spec->reference); it != d.references.end()) sj["citation"] = it->second;
        sj["gain_percent"] = r.spec->gain_percent ? json(*r.spec->gain_percent) : json(nullptr);
        e["spec"] = sj;
      } else {
        e["spec"] = nullptr;
      }
      if (r.measured) {
        const auto& c = *r.measured;
        e["measured"] = {{"flop_per_s", c.values}, {"probe", c.probe}, {"date", c.date}, {"sm_clock_hz", c.sm_clock_hz},
                         {"repeats", c.repeats}, {"note", c.note}};
      } else {
        e["measured"] = nullptr;
      }
      if (r.variant == "async_pipe") {
        const auto gm = async_pipe_gain_percent(a, r.block, true), gs = async_pipe_gain_percent(a, r.block, false);
        e["gain_percent_measured"] = gm ? json(*gm) : json(nullptr);
        e["gain_percent_spec_columns"] = gs ? json(*gs) : json(nullptr);
      }
      rows.push_back(e);
    }
    j["async_copy"] = {{"methods", methods}, {"matmul", rows}};
  }
  if (d.dsm.present()) {
    const DistributedSharedMemory& x = d.dsm;
    json m{{"latency", field_json(x.latency, v.pref, d)},
           {"local_latency", field_json(x.local_latency, v.pref, d)},
           {"ring_bandwidth", field_json(x.ring_bandwidth, v.pref, d)},
           {"ring_bandwidth_per_sm", field_json(x.ring_bandwidth_per_sm, v.pref, d)}};
    m["ring_best"] = x.ring_cluster_size > 0 ? json{{"cluster_size", x.ring_cluster_size},
                                                    {"block_threads", x.ring_block_threads},
                                                    {"ilp", x.ring_ilp}}
                                             : json(nullptr);
    json by = json::array();
    for (const auto& c : x.ring_by_cluster_size)
      by.push_back({{"cluster_size", c.cluster_size}, {"block_threads", c.block_threads}, {"ilp", c.ilp},
                    {"bandwidth", field_json(c.bandwidth, v.pref, d)}});
    m["ring_by_cluster_size"] = by;
    json ring = json::array(), hist = json::array();
    for (const auto& p : x.ring.points) {
      // bytes per clock per SM used, at the SM clock measured with the curve
      const json per_sm = x.ring.sm_clock_hz > 0 ? json(p.bytes_per_second / (p.blocks * x.ring.sm_clock_hz)) : json(nullptr);
      ring.push_back({{"cluster_size", p.cluster_size}, {"block_threads", p.block_threads}, {"ilp", p.ilp},
                      {"blocks", p.blocks}, {"bytes_per_second", p.bytes_per_second}, {"bytes_per_clock_per_sm", per_sm}});
    }
    for (const auto& p : x.histogram.points)
      hist.push_back({{"cluster_size", p.cluster_size}, {"block_threads", p.block_threads}, {"bins", p.bins},
                      {"elements_per_second", p.elements_per_second}});
    m["ring"] = ring;
    m["histogram"] = hist;
    j["dsm"] = m;
  } else {
    j["dsm"] = nullptr;
  }
  j["references"] = d.references;
  j["notes"] = d.notes;
  return j;
}

int list_shipped(bool as_json) {
  const auto files = shipped_descriptors();
  json arr = json::array();
  Table t;
  t.add({"id", "name", "SMs", "DRAM bandwidth", "file"});
  int failures = 0;
  for (const auto& file : files) {
    try {
      const HardwareDescriptor d = load_descriptor(file);
      const auto bw = d.bandwidth(MemoryLevelKind::dram);
      arr.push_back({{"id", d.id},
                     {"name", d.identity.name},
                     {"sm_count", d.identity.sm_count},
                     {"dram_bandwidth_bytes_per_s", bw ? json(*bw) : json(nullptr)},
                     {"path", file.string()}});
      t.add({d.id, d.identity.name, std::to_string(d.identity.sm_count),
             bw ? human(*bw, Dimension::bytes_per_second) : "missing", file.string()});
    } catch (const DescriptorError& e) {
      ++failures;
      spdlog::error("{}", e.what());
      arr.push_back({{"id", file.stem().string()}, {"path", file.string()}, {"error", e.what()}});
    }
  }
  if (as_json) {
    std::cout << json{{"hardware_dir", hardware_dir().string()}, {"descriptors", arr}}.dump(2) << "\n";
  } else {
    std::cout << "Shipped descriptors in " << hardware_dir().string() << "\n";
    t.print(std::cout, "  ");
  }
  return failures ? 1 : 0;
}

int show_node(const NodeDescriptor& n, bool as_json) {
  if (as_json) {
    nlohmann::json gpus = nlohmann::json::array();
    for (const auto& g : n.gpus)
      gpus.push_back({{"device", g.device}, {"name", g.name}, {"uuid", g.uuid}, {"descriptor", g.descriptor},
                      {"status", g.status}, {"reason", g.reason}});
    std::cout << nlohmann::json{{"schema", n.schema}, {"node", n.node}, {"date", n.date}, {"status", n.status},
                                {"reason", n.reason}, {"gpus", gpus}, {"links", node_links_json(n)}}
                     .dump(2)
              << "\n";
    return 0;
  }
  std::cout << "node " << n.node << " (" << n.date << "): " << n.status << (n.reason.empty() ? "" : " (" + n.reason + ")") << "\n";
  for (const auto& g : n.gpus)
    std::cout << "  GPU " << g.device << " " << (g.name.empty() ? "?" : g.name) << " " << g.uuid << " " << g.status
              << (g.descriptor.empty() ? "" : " -> " + g.descriptor) << (g.reason.empty() ? "" : " (" + g.reason + ")") << "\n";
  std::cout << link_summary(n);
  return 0;
}

int run_show(const ShowArgs& a) {
  if (a.list) return list_shipped(a.json);
  if (a.hw.empty()) throw std::runtime_error("ceiling show needs --hw ID|FILE or --list");
  SourcePreference pref;
  try {
    pref = parse_source_preference(a.source);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(std::string("--source: ") + e.what());
  }
  const fs::path path = resolve_hardware(a.hw);
  // A node descriptor (calibrate --devices' node.yaml): its GPUs and link tables.
  if (std::error_code ec; fs::is_regular_file(path, ec)) {
    std::ifstream in(path);
    std::string head(4096, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<std::size_t>(in.gcount()));
    if (is_node_descriptor_text(head)) return show_node(load_node_descriptor(path), a.json);
  }
  const HardwareDescriptor d = load_descriptor(path);
  const View v{d, path, pref};
  if (a.json)
    std::cout << to_json(v).dump(2) << "\n";
  else
    print_human(v, std::cout);
  return 0;
}

}  // namespace

Subcommand add_show(CLI::App& root) {
  auto a = std::make_shared<ShowArgs>();
  Subcommand s;
  CLI::App* app = root.add_subcommand("show", "Show a hardware descriptor: every number with its source");
  auto* hw = app->add_option("--hw", a->hw,
                             "Hardware descriptor: a YAML file or a shipped id (see --list); a node.yaml of calibrate "
                             "--devices shows its GPUs and link tables");
  auto* list = app->add_flag("--list", a->list, "List the shipped descriptors");
  hw->excludes(list);
  app->add_option("--source", a->source, "auto | spec | measured (default auto: measured where present, else spec)")
      ->check(CLI::IsMember({"auto", "spec", "measured"}));
  app->add_flag("--json", a->json, "One JSON object on stdout");
  app->footer("Examples:\n  ceiling show --hw gh200\n  ceiling show --hw hardware/h200.yaml --source spec --json\n"
              "  ceiling show --list\n  ceiling show --hw node-descriptors/node.yaml   # a node's GPUs and links");
  s.app = app;
  s.run = [a] { return run_show(*a); };
  return s;
}

}  // namespace ceiling::cli
