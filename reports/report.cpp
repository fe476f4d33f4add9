// The report writer: loads inputs, stages every file, renders plots with gnuplot, builds the
// Document (document.hpp) and has it rendered to index.html / report.md, writes report.json and
// manifest.json, then moves the result into place without losing data.
#include "report.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <cstdint>
#include <cstring>
#include <exception>
#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "detail.hpp"
#include "document.hpp"
#include "model/files.hpp"
#include "model/input_error.hpp"
#include "model/json_file.hpp"

namespace ceiling::reports {
namespace fs = std::filesystem;
using nlohmann::json;

namespace detail {

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return {};
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char b[20];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(h));
  return b;
}

std::string fnv1a_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return {};
  uint64_t h = 1469598103934665603ull;
  std::vector<char> buf(std::size_t{1} << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto n = static_cast<std::size_t>(in.gcount());
    for (std::size_t i = 0; i < n; ++i) {
      h ^= static_cast<unsigned char>(buf[i]);
      h *= 1099511628211ull;
    }
  }
  char b[20];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(h));
  return b;
}

std::string word_hash_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return {};
  uint64_t h = 1469598103934665603ull;
  std::vector<char> buf(std::size_t{1} << 20);  // a multiple of 8: words never straddle reads
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto n = static_cast<std::size_t>(in.gcount());
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t w;
      std::memcpy(&w, buf.data() + i, 8);
      h ^= w;
      h *= 1099511628211ull;
    }
    for (; i < n; ++i) {
      h ^= static_cast<unsigned char>(buf[i]);
      h *= 1099511628211ull;
    }
  }
  char b[40];
  std::snprintf(b, sizeof b, "%s%016llx", kWordHashPrefix, static_cast<unsigned long long>(h));
  return b;
}

std::string same_hash_as(const fs::path& p, const std::string& recorded) {
  return recorded.rfind(kWordHashPrefix, 0) == 0 ? word_hash_file(p) : fnv1a_file(p);
}

void write_file(const fs::path& p, const std::string& content) {
  if (p.has_parent_path()) fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot write " + p.string());
  out << content;
  if (!out) throw std::runtime_error("error writing " + p.string());
}

}  // namespace detail

namespace {

std::string utc_now(const char* fmt = "%Y-%m-%dT%H:%M:%SZ") {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[64];
  std::strftime(b, sizeof b, fmt, &tm);
  return b;
}


// Every JSON the report reads goes through the one bounded reader (model/json_file.hpp).
json parse_json_file(const fs::path& p, const char* what, const JsonLimits& limits = {}) {
  return read_json_file(p, what, limits);
}

// JSON text of anything the report writes: bytes that are not UTF-8 (a file name, say) become
// U+FFFD instead of failing the whole report with type_error.316.
std::string dump(const json& j, int indent = 1) { return j.dump(indent, ' ', false, json::error_handler_t::replace); }

// Validation results, streamed (validation::load_report); every error names the file.
validation::ValidationReport load_results(const fs::path& p) { return validation::load_report(p); }

void require_schema(const json& j, const fs::path& p, const char* schema) {
  std::string s = j.is_object() && j.contains("schema") && j["schema"].is_string() ? j["schema"].get<std::string>() : "";
  if (s != schema)
    throw std::runtime_error(one_line(p.string() + ": schema is '" + s + "', expected '" + schema + "' (docs/FORMATS.md)"));
}

std::string gpu_for_results(const validation::ValidationReport& r, const std::vector<GpuInput>& gpus) {
  for (const auto& g : gpus)
    if (!r.descriptor_id.empty() && g.hw.id == r.descriptor_id) return g.hw.id;
  for (const auto& g : gpus)
    if (!r.descriptor_path.empty() && fs::path(r.descriptor_path).stem() == g.descriptor_path.stem()) return g.hw.id;
  for (const auto& g : gpus)
    if (!r.device.name.empty() && g.hw.identity.name == r.device.name) return g.hw.id;
  return {};
}

// A profile belongs to the descriptor it was analysed against: by id, else by file stem.
std::string gpu_for_profile(const ProfileInput& p, const std::vector<GpuInput>& gpus) {
  for (const auto& g : gpus)
    if (g.hw.id == p.hardware_id) return g.hw.id;
  for (const auto& g : gpus)
    if (g.descriptor_path.stem() == p.hardware_id) return g.hw.id;
  return {};
}

struct RenderedPlot {
  detail::PlotSpec spec;
  PlotOutput out;
  std::string svg;  // the SVG gnuplot wrote, empty when not rendered
};

int count_measured(const HardwareDescriptor& hw) {
  int n = 0;
  auto f = [&](const Field& x) { n += x.measured.has_value(); };
  f(hw.sm_clock);
  f(hw.memory_clock);
  for (const auto& [k, l] : hw.memory) {
    f(l.capacity), f(l.bandwidth), f(l.bandwidth_per_sm), f(l.latency);
    for (const auto& [_, x] : l.patterns) f(x);
    for (const auto& [_, x] : l.extra) f(x);
    for (const auto& [_, x] : l.first_byte) f(x);
    for (const auto& [_, x] : l.ramp_bandwidth) f(x);
  }
  for (const auto& [u, m] : hw.compute)
    for (const auto& [p, x] : m) f(x);
  for (const auto& ti : hw.tensor_instructions) f(ti.latency), f(ti.throughput), f(ti.fma_per_clock_per_sm);
  return n;
}

std::string gpu_summary(const ReportInput& in, const GpuInput& g) {
  std::ostringstream o;
  int measured = count_measured(g.hw);
  o << g.hw.identity.name << " (" << g.hw.id << "): ";
  if (measured == 0)
    o << "spec only, nothing measured";
  else
    o << measured << " measured values";
  o << (g.probes ? ", probe details present" : ", no probe details");
  int results = 0, within = 0, beats = 0;
  std::vector<double> eff;
  for (const auto& r : in.results) {
    if (r.gpu_id != g.hw.id) continue;
    for (const auto& e : r.report.results) {
      ++results;
      within += e.verdict == "within-bound";
      beats += e.verdict == "beats-bound";
      eff.push_back(e.efficiency);
    }
  }
  if (results == 0) {
    o << ", no validation results";
  } else {
    o << ", " << results << " kernel results: " << within << " within bound, " << beats << " beating it";
    if (!eff.empty()) {
      std::sort(eff.begin(), eff.end());
      double med = eff.size() % 2 ? eff[eff.size() / 2] : 0.5 * (eff[eff.size() / 2 - 1] + eff[eff.size() / 2]);
      o << ", median efficiency " << detail::short_num(med * 100, 3) << "%";
    }
  }
  for (const auto& p : in.profiles)
    if (p.gpu_id == g.hw.id)
      o << ", profile " << p.path.filename().string() << ": " << p.kernels.size() << " kernels, "
        << format_quantity(p.time_s, Dimension::seconds, 3) << " of GPU time";
  return o.str();
}

Figure figure_of(const RenderedPlot& r) {
  Figure f;
  f.id = r.out.name;
  f.title = r.out.title;
  f.caption = r.spec.caption;
  f.svg = r.svg;
  if (r.out.rendered) f.image = r.out.name + ".svg";
  f.missing_reason = r.out.missing_reason;
  f.files = r.out.files;
  return f;
}

TableBlock table_block(const detail::Table& t) { return {t, {t.id + ".csv", t.id + ".json"}}; }

// The report's content, in reading order; the renderers decide how it looks.
Document build_document(const ReportInput& in, const std::vector<detail::Table>& tables,
                        const std::vector<RenderedPlot>& plots, const json& inputs, const std::string& date,
                        const std::string& plotting, const std::vector<std::string>& warnings) {
  Document d;
  d.title = "ceiling report";
  Inline meta{Span::plain("Written " + date + " by ceiling " + CEILING_VERSION)};
  if (!in.command_line.empty()) {
    meta.push_back(Span::plain(" ("));
    meta.push_back(Span::code(in.command_line));
    meta.push_back(Span::plain(")"));
  }
  meta.push_back(Span::plain(". Plots: " + plotting + "."));
  d.meta.push_back(std::move(meta));
  for (const auto& g : in.gpus) d.summary.push_back({Span::plain(gpu_summary(in, g))});
  if (in.gpus.empty()) d.summary.push_back({Span::plain("No descriptors.")});
  d.summary_note = {Span::plain("Spec values come from datasheets and papers (each with its reference); measured "
                                "values from ceiling's probes (each with probe, date and spread). Missing numbers "
                                "are shown as "),
                    Span::emphasis(detail::mark_missing_measured()), Span::plain(" or "),
                    Span::emphasis(detail::mark_missing_spec()), Span::plain(", never filled in.")};
  d.warnings = warnings;

  auto plots_named = [&](Section& s, const std::string& prefix) {
    for (const auto& p : plots)
      if (p.out.name.rfind(prefix, 0) == 0) s.blocks.push_back(figure_of(p));
  };
  auto table_with_id = [&](Section& s, const std::string& id) {
    for (const auto& t : tables)
      if (t.id == id) s.blocks.push_back(table_block(t));
  };
  {
    Section s{"rooflines", "Rooflines", {}};
    plots_named(s, "roofline-");
    d.sections.push_back(std::move(s));
  }
  {
    Section s{"speedup", "Tensor-core speedup bound", {}};
    plots_named(s, "speedup-bound");
    d.sections.push_back(std::move(s));
  }
  {
    Section s{"platform", "Platform", {}};
    table_with_id(s, "table-platform");
    d.sections.push_back(std::move(s));
  }
  if (!in.peers.empty()) {
    // Issue 15: our figures beside the public suites', measured one after the other on one GPU.
    Section s{"peers", "Beside the public suites (one run on the same GPU)", {}};
    table_with_id(s, "table-peers");
    plots_named(s, "peers-");
    d.sections.push_back(std::move(s));
  }
  {
    Section s{"memory", "Memory: latency and throughput per level", {}};
    plots_named(s, "latency-");
    plots_named(s, "ramp-");
    table_with_id(s, "table-latency");
    table_with_id(s, "table-throughput");
    table_with_id(s, "table-shared-access");
    plots_named(s, "bank-conflicts-");
    d.sections.push_back(std::move(s));
  }
  const bool power_rows = std::any_of(tables.begin(), tables.end(), [](const auto& t) {
    return (t.id == "table-power" || t.id == "table-power-other") && !t.rows.empty();
  });
  {
    Section s{"tensor", "Tensor cores", {}};
    table_with_id(s, "table-mma");
    table_with_id(s, "table-numerics");
    table_with_id(s, "table-numerics-errors");
    plots_named(s, "chain-");
    plots_named(s, "sparse-");
    plots_named(s, "mma-");
    plots_named(s, "wgmma-");
    if (!power_rows)  // where Table XI's figures would be, and how to get ours
      s.blocks.push_back(Paragraph{{Span::plain("Power under tensor-core load (Luo et al. Table XI): no GPU of this report "
                                                "has it measured; "),
                                    Span::code("ceiling calibrate --power"), Span::plain(" measures it.")},
                                   true});
    d.sections.push_back(std::move(s));
  }
  if (power_rows) {
    // calibrate --power (issue 14): Table XI's rows beside the paper's, then every other instruction read.
    Section s{"power", "Tensor-core power and energy efficiency (Luo et al. Table XI)", {}};
    table_with_id(s, "table-power");
    for (const auto& t : tables)
      if (t.id == "table-power-other" && !t.rows.empty()) s.blocks.push_back(table_block(t));
    plots_named(s, "power-");
    d.sections.push_back(std::move(s));
  }
  if (std::any_of(tables.begin(), tables.end(), [](const auto& t) { return t.id == "table-dpx" && !t.rows.empty(); })) {
    // Only with DPX figures (issue 14): older descriptors have none, and their absence is not news.
    Section s{"other-instructions", "Other instructions: DPX", {}};
    table_with_id(s, "table-dpx");
    plots_named(s, "dpx-");
    d.sections.push_back(std::move(s));
  }
  if (std::any_of(tables.begin(), tables.end(), [](const auto& t) {
        return (t.id == "table-async-copy" || t.id == "table-async-matmul") && !t.rows.empty();
      })) {
    // Only with async-copy figures (issue 14): a measured sweep or the paper's Tables XIII-XIV.
    Section s{"async-copies", "Asynchronous copies: cp.async and TMA", {}};
    for (const auto& t : tables)  // a table without rows (only the paper's matmul rows, no sweep) is left out
      if ((t.id == "table-async-copy" || t.id == "table-async-matmul") && !t.rows.empty()) s.blocks.push_back(table_block(t));
    plots_named(s, "async-copy-");
    d.sections.push_back(std::move(s));
  }
  if (std::any_of(tables.begin(), tables.end(), [](const auto& t) { return t.id == "table-dsm" && !t.rows.empty(); })) {
    // Only with DSM figures (issue 14), like the DPX section.
    Section s{"distributed-shared-memory", "Distributed shared memory", {}};
    table_with_id(s, "table-dsm");
    plots_named(s, "dsm-");
    d.sections.push_back(std::move(s));
  }
  {
    Section s{"validation", "Validation", {}};
    for (const auto& t : tables)
      if (t.id.rfind("table-validation", 0) == 0) s.blocks.push_back(table_block(t));
    plots_named(s, "inputs-");
    if (s.blocks.empty())
      s.blocks.push_back(Note{{Span::plain("No validation results in this report (run "),
                               Span::code("ceiling validate"), Span::plain(" on a GPU, or pass "),
                               Span::code("--results"), Span::plain(").")}});
    d.sections.push_back(std::move(s));
  }
  for (std::size_t i = 0; i < in.profiles.size(); ++i) {
    const ProfileInput& p = in.profiles[i];
    Section s{"profile-" + std::to_string(i + 1), "Profiled kernels (" + p.path.filename().string() + ")", {}};
    const std::string marks = detail::profile_mark(in, i, 0) + " to " +
                              detail::profile_mark(in, i, std::min(p.kernels.size(), detail::kProfileMarks) - 1);
    Inline intro{Span::plain(std::to_string(p.kernels.size()) + " kernels of " +
                             format_quantity(p.time_s, Dimension::seconds, 3) + " of GPU time, analysed by "),
                 Span::code("ceiling profile"),
                 Span::plain(" against " + p.gpu_id + ". Their points are on the roofline of " + p.gpu_id +
                             " (x = I dram, y = achieved flop/s) and on the tensor-core speedup-bound plot (x = I/B, "
                             "y = the upper end of the Eq. 22 range)")};
    if (!p.kernels.empty()) intro.push_back(Span::plain(", the largest " + marks + " by letter."));
    else intro.push_back(Span::plain("."));
    s.blocks.push_back(Paragraph{std::move(intro), false});
    for (const auto& t : tables)
      if (t.id == detail::profile_table_id(in, i)) s.blocks.push_back(table_block(t));
    if (!p.notes.empty()) {
      List l;
      for (const auto& n : p.notes) l.items.push_back({Span::plain("ceiling profile: " + n)});
      s.blocks.push_back(std::move(l));
    }
    d.sections.push_back(std::move(s));
  }
  {
    Section s{"inputs", "Inputs and files", {}};
    List l;
    for (const auto& i : inputs) {
      const std::string copy = i["copy"].get<std::string>();
      l.items.push_back({Span::plain(i["kind"].get<std::string>() + ": "), Span::link(copy, copy),
                         Span::plain(" (from "), Span::code(i["source"].get<std::string>()), Span::plain(")")});
    }
    s.blocks.push_back(std::move(l));
    s.blocks.push_back(Paragraph{{Span::plain("Every plot has its data (.csv, .json) and its gnuplot script (.gp) "
                                              "beside it: "),
                                  Span::code("gnuplot NAME.gp"),
                                  Span::plain(" in this directory re-draws NAME.svg and NAME.png.")},
                                 true});
    d.sections.push_back(std::move(s));
  }
  return d;
}

struct Manifest {
  std::map<std::string, std::string> files;  // relative path -> hash, every one inside the report
  std::vector<std::string> ignored;          // entries that are not, with why ("manifest.json: ...")
};

// Why a manifest path may not be touched, or "" when it names a place inside `dir`: relative,
// no "." or ".." parts, no symbolic link on the way (a report folder is shared; its manifest is
// just a file anyone can edit).
std::string confinement_problem(const fs::path& dir, const std::string& rel) {
  if (rel.empty()) return "an empty path";
  if (rel.find('\0') != std::string::npos) return "a NUL byte in the path";
  const fs::path p(rel);
  if (p.is_absolute() || p.has_root_name() || p.has_root_directory()) return "an absolute path";
  fs::path at = dir;
  for (const auto& part : p) {
    const std::string s = part.string();
    if (s.empty() || s == "." || s == "..") return "a path with '" + s + "' in it";
    at /= part;
    std::error_code ec;
    const auto st = fs::symlink_status(at, ec);
    if (fs::is_symlink(st)) return "a path through the symbolic link " + at.string();
  }
  return {};
}

std::optional<Manifest> read_manifest(const fs::path& dir) {
  fs::path p = dir / kManifestName;
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(p, ec))) return std::nullopt;
  try {
    JsonLimits limits;
    limits.max_bytes = std::uintmax_t{16} << 20;
    json j = parse_json_file(p, "report manifest", limits);
    if (!j.is_object() || j.value("schema", "") != kReportSchema) return std::nullopt;
    Manifest m;
    const auto files = j.find("files");
    if (files == j.end() || !files->is_array()) return m;
    for (size_t i = 0; i < files->size(); ++i) {
      const json& f = (*files)[i];
      const std::string where = p.string() + ": files[" + std::to_string(i) + "]";
      // "hash" (word-wise FNV-1a, since 2026-11-25) or, from older reports, "fnv1a" (bytewise).
      const bool word = f.is_object() && f.contains("hash") && f["hash"].is_string();
      if (!f.is_object() || !f.contains("path") || !f["path"].is_string() ||
          (!word && (!f.contains("fnv1a") || !f["fnv1a"].is_string()))) {
        m.ignored.push_back(where + " ignored: expected {path, hash} texts");
        continue;
      }
      const std::string rel = f["path"].get<std::string>();
      if (const std::string why = confinement_problem(dir, rel); !why.empty()) {
        m.ignored.push_back(where + " '" + rel + "' ignored: " + why + ", outside the report; not touched");
        continue;
      }
      m.files[fs::path(rel).lexically_normal().generic_string()] =
          word ? std::string(detail::kWordHashPrefix) + f["hash"].get<std::string>() : f["fnv1a"].get<std::string>();
    }
    return m;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Moves files and undoes every move, newest first, when a later step fails: the report
// directory ends as it was or as the new report, never a mix.
class MoveJournal {
 public:
  void move(const fs::path& from, const fs::path& to) {
    if (to.has_parent_path()) fs::create_directories(to.parent_path());
    fs::rename(from, to);
    done_.push_back({from, to});
  }
  void undo() noexcept {
    for (auto it = done_.rbegin(); it != done_.rend(); ++it) {
      std::error_code ec;
      fs::create_directories(it->first.parent_path(), ec);
      fs::rename(it->second, it->first, ec);
      if (ec) spdlog::error("report: cannot move {} back to {}: {}", it->second.string(), it->first.string(), ec.message());
    }
    done_.clear();
  }

 private:
  std::vector<std::pair<fs::path, fs::path>> done_;
};

bool dir_empty(const fs::path& dir) {
  std::error_code ec;
  return fs::directory_iterator(dir, ec) == fs::directory_iterator();
}

}  // namespace

std::optional<ManifestEntries> read_report_manifest(const fs::path& dir) {
  auto m = read_manifest(dir);
  if (!m) return std::nullopt;
  return ManifestEntries{std::move(m->files), std::move(m->ignored)};
}

ReportInput load_report_input(const std::vector<fs::path>& descriptors, const std::vector<fs::path>& results,
                              const std::vector<fs::path>& profiles, const std::vector<fs::path>& peers) {
  ReportInput in;
  for (const auto& p : descriptors) {
    GpuInput g;
    g.descriptor_path = p;
    g.hw = load_descriptor(p);
    if (g.hw.id.empty()) g.hw.id = p.stem().string();
    // Two descriptors of one GPU (e.g. two calibrations): file names tell them apart in the report.
    auto taken = [&](const std::string& id) {
      return std::any_of(in.gpus.begin(), in.gpus.end(), [&](const GpuInput& o) { return o.hw.id == id; });
    };
    if (taken(g.hw.id)) {
      std::string id = p.stem().string();
      for (int k = 2; taken(id); ++k) id = p.stem().string() + "-" + std::to_string(k);
      spdlog::warn("report: {} has the id '{}' of another descriptor; it is '{}' in this report", p.string(), g.hw.id, id);
      g.hw.id = id;
    }
    const fs::path probes = probes_path_for(p);
    std::error_code ec;
    if (fs::is_regular_file(probes, ec)) {
      json j = parse_json_file(probes, "probe details");
      require_schema(j, probes, kProbesSchema);
      g.probes_path = probes;
      g.probes = std::move(j);
    }
    in.gpus.push_back(std::move(g));
  }
  for (const auto& p : results) {
    ResultsInput r;
    r.path = p;
    const auto t0 = std::chrono::steady_clock::now();
    r.report = load_results(p);  // throws naming the file
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (took > 2)  // a long file: say what took the time
      spdlog::info("{}: {} results and {} speedups read in {:.1f} s", p.string(), r.report.results.size(),
                   r.report.speedups.size(), took);
    r.gpu_id = gpu_for_results(r.report, in.gpus);
    in.results.push_back(std::move(r));
  }
  for (const auto& p : profiles) {
    ProfileInput prof = load_profile(p);  // throws naming the file
    prof.gpu_id = gpu_for_profile(prof, in.gpus);
    if (prof.gpu_id.empty()) {
      std::string given;
      for (const auto& g : in.gpus)
        given += (given.empty() ? "" : ", ") + g.hw.id + " (" + g.descriptor_path.filename().string() + ")";
      throw JsonFileError(p, "hardware.id",
                          "'" + prof.hardware_id + "' matches no descriptor of this report (given: " +
                              (given.empty() ? std::string("none") : given) + "); add --hw " + prof.hardware_id +
                              " or the descriptor it was profiled against");
    }
    in.profiles.push_back(std::move(prof));
  }
  for (const auto& p : peers) {
    PeersInput pi = load_peers(p);  // throws naming the file
    pi.gpu_id = gpu_for_peers(pi, in.gpus);
    if (pi.gpu_id.empty()) {
      std::string given;
      for (const auto& g : in.gpus)
        given += (given.empty() ? "" : ", ") + g.hw.id + " (" + g.hw.identity.name + ")";
      throw JsonFileError(p, "descriptor",
                          "'" + pi.descriptor_id + "' (" + pi.gpu_name + ") matches no descriptor of this report (given: " +
                              (given.empty() ? std::string("none") : given) + "); add --hw " +
                              (pi.descriptor_id.empty() ? std::string("<its descriptor>") : pi.descriptor_id));
    }
    in.peers.push_back(std::move(pi));
  }
  return in;
}

void check_output_dir(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return;
  if (!fs::is_directory(dir, ec))
    throw OutputDirError(dir.string() + " exists and is not a directory; choose another --out");
  if (dir_empty(dir)) return;
  if (!read_manifest(dir))
    throw OutputDirError(dir.string() + " is not empty and is not a previous ceiling report (no " + kManifestName +
                         " of schema " + kReportSchema + "); refusing to write into it, choose a new or empty directory");
}

ReportOutput write_report(const ReportInput& in, const fs::path& dir_in, const WriteOptions& opt) {
  auto t0 = std::chrono::steady_clock::now();
  const fs::path dir = fs::absolute(dir_in).lexically_normal();
  check_output_dir(dir);
  const fs::path parent = dir.has_filename() ? dir.parent_path() : dir.parent_path().parent_path();
  fs::create_directories(parent);
  const std::string name = dir.has_filename() ? dir.filename().string() : dir.parent_path().filename().string();
  const fs::path stage = parent / ("." + name + ".ceiling-staging-" + std::to_string(::getpid()));
  fs::remove_all(stage);
  fs::create_directories(stage);
  ReportOutput out;
  out.dir = dir;
  std::set<std::string> files;
  auto write = [&](const std::string& rel, const std::string& content) {
    detail::write_file(stage / rel, content);
    files.insert(rel);
  };
  // The inputs' copies, made on a thread while the tables and plots are made (declared out here:
  // an error anywhere joins the thread before these go).
  std::vector<std::pair<fs::path, fs::path>> copies;  // source, copy in the staging directory
  std::exception_ptr copy_error;
  std::thread copier;
  try {
    const std::string date = utc_now();
    // ---- inputs, copied so the report can be re-made and checked later: named here, copied on
    // a thread of their own (a results file may be gigabytes; not through memory) ----
    json inputs = json::array();
    {
      std::set<std::string> used;
      auto copy_input = [&](const fs::path& src, const std::string& kind) {
        std::string base = src.filename().string(), rel = "inputs/" + base;
        for (int k = 2; used.count(rel); ++k) rel = "inputs/" + std::to_string(k) + "-" + base;
        used.insert(rel);
        copies.emplace_back(src, stage / rel);
        files.insert(rel);
        inputs.push_back({{"kind", kind}, {"source", fs::absolute(src).string()}, {"copy", rel}});
      };
      for (const auto& g : in.gpus) {
        copy_input(g.descriptor_path, "descriptor");
        if (!g.probes_path.empty()) copy_input(g.probes_path, "probes");
      }
      for (const auto& r : in.results) copy_input(r.path, "validation");
      for (const auto& p : in.profiles) copy_input(p.path, "profile");
      for (const auto& p : in.peers) copy_input(p.path, "peers");
      fs::create_directories(stage / "inputs");
    }
    copier = std::thread([&copies, &copy_error] {
      try {
        for (const auto& [src, dst] : copies) fs::copy_file(src, dst);
      } catch (...) {
        copy_error = std::current_exception();
      }
    });
    // ---- tables ----
    auto tables = detail::build_tables(in);
    json tables_json = json::array();
    for (const auto& t : tables) {
      detail::write_table_files(t, stage);  // row by row: a long table is never whole in memory
      files.insert(t.id + ".csv");
      files.insert(t.id + ".json");
      tables_json.push_back(detail::table_json(t, /*shown_only=*/true));
    }
    // ---- plots ----
    GnuplotInfo gp;
    if (opt.render_plots) gp = find_gnuplot(opt.gnuplot);
    std::string png_term = gp.pngcairo ? "pngcairo" : "png";
    std::string no_render;
    if (!opt.render_plots)
      no_render = "not rendered (plots disabled)";
    else if (gp.path.empty())
      no_render = "not rendered: gnuplot not found on PATH (install gnuplot-nox; the data and script are here)";
    else if (!gp.svg || (!gp.pngcairo && !gp.png))
      no_render = "not rendered: gnuplot at " + gp.path.string() + " lacks the svg or png terminal";
    if (!no_render.empty() && opt.render_plots) {
      out.warnings.push_back(no_render);
      spdlog::warn("{}", no_render);
    }
    std::vector<RenderedPlot> plots;
    for (auto& spec : detail::build_plots(in, &out.warnings)) {
      RenderedPlot r;
      r.out.name = spec.name;
      r.out.title = spec.title;
      r.out.gpu_id = spec.gpu_id;
      if (!spec.missing_reason.empty()) {
        r.out.missing_reason = spec.missing_reason;
      } else {
        write(spec.name + ".csv", spec.csv);
        write(spec.name + ".json", dump(spec.data) + "\n");
        write(spec.name + ".gp", detail::plot_script(spec, png_term));
        r.out.files = {spec.name + ".svg", spec.name + ".png", spec.name + ".csv", spec.name + ".json", spec.name + ".gp"};
        if (!no_render.empty()) {
          r.out.missing_reason = no_render;
          r.out.files.erase(r.out.files.begin(), r.out.files.begin() + 2);
        } else {
          auto res = detail::run_process({gp.path.string(), spec.name + ".gp"}, stage, opt.gnuplot_timeout_s);
          std::string svg = detail::read_file(stage / (spec.name + ".svg"));
          auto png = png_size(stage / (spec.name + ".png"));
          std::string why;
          if (res.timed_out) why = "gnuplot timed out";
          else if (res.exit_code != 0) why = "gnuplot failed (exit " + std::to_string(res.exit_code) + "): " + res.output.substr(0, 400);
          else if (svg.empty()) why = "gnuplot wrote no SVG";
          else if (std::string err; !xml_well_formed(svg, &err)) why = "gnuplot's SVG is not well-formed: " + err;
          else if (!png) why = "gnuplot wrote no PNG";
          if (why.empty()) {
            r.out.rendered = true;
            r.out.png_width = png->width;
            r.out.png_height = png->height;
            r.svg = std::move(svg);
            files.insert(spec.name + ".svg");
            files.insert(spec.name + ".png");
          } else {
            for (const char* ext : {".svg", ".png"}) fs::remove(stage / (spec.name + ext));
            r.out.missing_reason = "not rendered: " + why;
            r.out.files.erase(r.out.files.begin(), r.out.files.begin() + 2);
            out.warnings.push_back(spec.name + ": " + why);
            spdlog::warn("{}: {}", spec.name, why);
          }
        }
      }
      r.spec = std::move(spec);
      plots.push_back(std::move(r));
    }
    for (const auto& r : in.results)
      if (r.gpu_id.empty())
        out.warnings.push_back(r.path.string() + ": no descriptor in this report matches its device; its tables are "
                               "shown, its points are not plotted");

    // ---- index.html and report.md: one document, two renderers ----
    std::string plotting = no_render.empty() ? gp.version : no_render;
    const Document doc = build_document(in, tables, plots, inputs, date, plotting, out.warnings);
    write("index.html", render_html(doc));
    write("report.md", render_markdown(doc));

    // ---- report.json: everything a program needs ----
    json rj;
    rj["schema"] = kReportSchema;
    rj["tool_version"] = CEILING_VERSION;
    rj["date"] = date;
    rj["command_line"] = in.command_line;
    rj["gnuplot"] = gp.path.empty() ? json(nullptr) : json(gp.version);
    rj["gpus"] = json::array();
    for (const auto& g : in.gpus)
      rj["gpus"].push_back({{"id", g.hw.id}, {"name", g.hw.identity.name}, {"descriptor", g.descriptor_path.string()},
                            {"probes", g.probes_path.empty() ? json(nullptr) : json(g.probes_path.string())},
                            {"measured_values", count_measured(g.hw)}});
    rj["plots"] = json::array();
    for (const auto& p : plots) {
      json pj{{"name", p.out.name}, {"title", p.out.title}, {"rendered", p.out.rendered}, {"files", p.out.files}};
      if (!p.out.gpu_id.empty()) pj["gpu"] = p.out.gpu_id;
      if (!p.out.missing_reason.empty()) pj["missing_reason"] = p.out.missing_reason;
      if (p.out.rendered) pj["png_size"] = {p.out.png_width, p.out.png_height};
      pj["expected_png_size"] = {p.spec.width, p.spec.height};
      rj["plots"].push_back(pj);
      out.plots.push_back(p.out);
    }
    rj["tables"] = tables_json;
    rj["inputs"] = inputs;
    rj["warnings"] = doc.warnings;
    rj["sections"] = sections_json(doc);
    write("report.json", dump(rj) + "\n");

    copier.join();
    if (copy_error) std::rethrow_exception(copy_error);
    // ---- manifest (marks the directory as a ceiling report; hashes detect user edits) ----
    json man;
    man["schema"] = kReportSchema;
    man["tool_version"] = CEILING_VERSION;
    man["date"] = date;
    man["files"] = json::array();
    // Gigabytes of tables and inputs with a million rows: hashed on two threads, the largest first.
    std::vector<std::string> order(files.begin(), files.end());
    std::map<std::string, std::uintmax_t> sizes;
    for (const auto& f : order) sizes[f] = fs::file_size(stage / f);
    std::stable_sort(order.begin(), order.end(), [&](const auto& a, const auto& b) { return sizes[a] > sizes[b]; });
    std::map<std::string, std::string> hashes;
    for (const auto& f : order) hashes[f];  // every node exists before the threads write
    std::atomic<std::size_t> next{0};
    const auto hash_some = [&] {
      for (std::size_t i; (i = next++) < order.size();) hashes.at(order[i]) = detail::word_hash_file(stage / order[i]);
    };
    std::thread helper(hash_some);
    hash_some();
    helper.join();
    for (const auto& f : files)
      man["files"].push_back({{"path", f}, {"hash", hashes.at(f).substr(std::strlen(detail::kWordHashPrefix))}});
    detail::write_file(stage / kManifestName, dump(man) + "\n");
    files.insert(kManifestName);

    // ---- move into place ----
    std::error_code ec;
    if (!fs::exists(dir, ec)) {
      fs::rename(stage, dir);
    } else {
      auto old = read_manifest(dir);
      if (old)
        for (const auto& why : old->ignored) {
          out.warnings.push_back(why);
          spdlog::warn("{}", why);
        }
      const auto ours = [&](const std::string& f) { return f == kManifestName || (old && old->files.count(f)); };
      // Check every target before moving anything: each directory on the way is a real directory
      // (or absent), and a file we would replace is a regular file of the previous report. A file
      // we would write that is not ours from last time belongs to the user.
      for (const auto& f : files) {
        fs::path at = dir;
        const fs::path rel(f);
        for (auto part = rel.begin(); part != rel.end(); ++part) {
          at /= *part;
          const auto st = fs::symlink_status(at, ec);
          if (!fs::exists(st)) break;
          const bool last = std::next(part) == rel.end();
          if (!last && (fs::is_symlink(st) || !fs::is_directory(st)))
            throw OutputDirError(at.string() + " is not a directory, and the report writes " + f +
                                 " there; nothing was changed");
          if (last && !ours(f))
            throw OutputDirError(at.string() + " exists and was not written by the previous report; "
                                 "refusing to overwrite it; nothing was changed");
          if (last && !fs::is_regular_file(st))
            throw OutputDirError(at.string() + " is not a regular file, and the report writes " + f +
                                 " there; nothing was changed");
        }
      }
      // Old files go aside (or, edited by a user, to <name>.edited-<date>), new ones into place;
      // any failure moves everything back.
      const std::string stamp = utc_now("%Y%m%dT%H%M%SZ");
      const fs::path aside = parent / ("." + name + ".ceiling-previous-" + std::to_string(::getpid()));
      fs::remove_all(aside);
      MoveJournal journal;
      std::vector<std::string> edited;
      try {
        std::map<std::string, std::string> previous = old ? old->files : std::map<std::string, std::string>{};
        previous.emplace(kManifestName, "");  // replaced, never kept as edited
        for (const auto& [f, hash] : previous) {
          const fs::path p = dir / f;
          if (!fs::is_regular_file(fs::symlink_status(p, ec))) continue;
          if (f != kManifestName && detail::same_hash_as(p, hash) != hash) {
            fs::path keep = p;
            keep += ".edited-" + stamp;
            journal.move(p, keep);
            edited.push_back(p.string() + " was edited after the previous report; kept as " + keep.string());
          } else {
            journal.move(p, aside / f);
          }
        }
        for (const auto& f : files) journal.move(stage / f, dir / f);
      } catch (...) {
        journal.undo();
        fs::remove_all(aside, ec);
        throw;
      }
      for (const auto& w : edited) {
        out.warnings.push_back(w);
        spdlog::warn("{}", w);
      }
      fs::remove_all(aside, ec);
      fs::remove_all(stage, ec);
    }
  } catch (...) {
    if (copier.joinable()) copier.join();
    std::error_code ec;
    fs::remove_all(stage, ec);
    throw;
  }
  out.files.assign(files.begin(), files.end());
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace ceiling::reports
