// The report writer: loads inputs, stages every file, renders plots with gnuplot, writes
// index.html / report.md / manifest.json, then moves the result into place without losing data.
#include "report.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "detail.hpp"

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

json parse_json_file(const fs::path& p, const char* what) {
  std::ifstream in(p);
  if (!in) throw std::runtime_error(p.string() + ": cannot open " + what);
  try {
    return json::parse(in);
  } catch (const json::parse_error& e) {
    throw std::runtime_error(p.string() + ": not valid JSON (" + e.what() + ")");
  }
}

void require_schema(const json& j, const fs::path& p, const char* schema) {
  std::string s = j.is_object() && j.contains("schema") && j["schema"].is_string() ? j["schema"].get<std::string>() : "";
  if (s != schema)
    throw std::runtime_error(p.string() + ": schema is '" + s + "', expected '" + schema + "' (docs/FORMATS.md)");
}

std::string gpu_for_results(const json& j, const fs::path& path, const std::vector<GpuInput>& gpus) {
  const json d = j.value("descriptor", json::object());
  std::string id = d.is_object() ? d.value("id", "") : "";
  for (const auto& g : gpus)
    if (!id.empty() && g.hw.id == id) return g.hw.id;
  std::string dpath = d.is_object() ? d.value("path", "") : "";
  for (const auto& g : gpus)
    if (!dpath.empty() && fs::path(dpath).stem() == g.descriptor_path.stem()) return g.hw.id;
  const json dev = j.value("device", json::object());
  std::string name = dev.is_object() ? dev.value("name", "") : "";
  for (const auto& g : gpus)
    if (!name.empty() && g.hw.identity.name == name) return g.hw.id;
  (void)path;
  return {};
}

// Inline SVG: drop the XML prolog, make ids unique per plot, let it scale with the page.
std::string inline_svg(const std::string& svg, const std::string& prefix, const std::string& title) {
  size_t start = svg.find("<svg");
  if (start == std::string::npos) return {};
  std::string s = svg.substr(start);
  auto replace_all = [&](const std::string& from, const std::string& to) {
    size_t pos = 0;
    while ((pos = s.find(from, pos)) != std::string::npos) {
      s.replace(pos, from.size(), to);
      pos += to.size();
    }
  };
  replace_all("id='", "id='" + prefix + "-");
  replace_all("id=\"", "id=\"" + prefix + "-");
  replace_all("href='#", "href='#" + prefix + "-");
  replace_all("href=\"#", "href=\"#" + prefix + "-");
  replace_all("url(#", "url(#" + prefix + "-");
  replace_all("<title>Gnuplot</title>", "<title>" + detail::html_escape(title) + "</title>");
  s.replace(0, 4, "<svg class=\"plot\" role=\"img\" aria-label=\"" + detail::html_escape(title) + "\"");
  return s;
}

const char* kCss = R"CSS(
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 0 auto; max-width: 1250px;
       padding: 1em 2em; color: #222; line-height: 1.4; }
h1 { margin-bottom: 0.2em; } h2 { border-bottom: 2px solid #ddd; padding-bottom: 0.2em; margin-top: 2em; }
.meta { color: #555; font-size: 0.9em; }
nav ul { columns: 2; font-size: 0.9em; }
figure { margin: 1.5em 0; border: 1px solid #e4e4e4; padding: 0.5em; }
figure svg.plot { width: 100%; height: auto; display: block; }
figcaption { font-size: 0.88em; color: #333; }
figcaption .files a { margin-right: 0.8em; }
.missing-plot { background: #fafafa; border: 1px dashed #bbb; padding: 2em; text-align: center; color: #666; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.5em; text-align: right; white-space: nowrap; }
th.label, th:first-child { text-align: left; }
th.group { text-align: center; background: #f0f0f0; }
td.spec { color: #333; } td.measured { color: #000; font-weight: 600; }
td.missing { color: #999; font-style: italic; } td.derived { color: #2a5d8f; }
td.text { text-align: center; }
sup { color: #888; font-size: 0.75em; margin-left: 0.15em; }
ol.notes { font-size: 0.78em; color: #555; margin-top: 0.2em; }
.caption { font-size: 0.9em; color: #444; }
.warn { background: #fff6e0; border-left: 4px solid #e0a800; padding: 0.5em 1em; }
code { background: #f4f4f4; padding: 0 0.2em; }
)CSS";

struct RenderedPlot {
  detail::PlotSpec spec;
  PlotOutput out;
  std::string svg;  // inline form, empty when not rendered
};

std::string files_links(const PlotOutput& p) {
  std::string o = "<span class=\"files\">";
  for (const auto& f : p.files)
    o += "<a href=\"" + detail::html_escape(f) + "\">" + detail::html_escape(f) + "</a>";
  return o + "</span>";
}

std::string figure_html(const RenderedPlot& r) {
  std::ostringstream o;
  o << "<figure id=\"" << detail::html_escape(r.out.name) << "\">\n";
  if (!r.svg.empty()) {
    o << r.svg << "\n";
  } else {
    o << "<div class=\"missing-plot\">Plot missing: " << detail::html_escape(r.out.missing_reason) << "</div>\n";
  }
  o << "<figcaption><b>" << detail::html_escape(r.out.title) << ".</b> " << detail::html_escape(r.spec.caption);
  if (!r.out.files.empty()) o << "<br>" << files_links(r.out);
  o << "</figcaption>\n</figure>\n";
  return o.str();
}

std::string figure_md(const RenderedPlot& r) {
  std::ostringstream o;
  o << "#### " << r.out.title << "\n\n";
  if (r.out.rendered)
    o << "![" << r.out.title << "](" << r.out.name << ".svg)\n\n";
  else
    o << "*Plot missing: " << r.out.missing_reason << "*\n\n";
  o << r.spec.caption << "\n\n";
  if (!r.out.files.empty()) {
    o << "Files:";
    for (const auto& f : r.out.files) o << " [" << f << "](" << f << ")";
    o << "\n\n";
  }
  return o.str();
}

int count_measured(const HardwareDescriptor& hw) {
  int n = 0;
  auto f = [&](const Field& x) { n += x.measured.has_value(); };
  f(hw.sm_clock);
  f(hw.memory_clock);
  for (const auto& [k, l] : hw.memory) {
    f(l.capacity), f(l.bandwidth), f(l.bandwidth_per_sm), f(l.latency);
    for (const auto& [_, x] : l.patterns) f(x);
    for (const auto& [_, x] : l.extra) f(x);
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
    for (const auto& e : r.json.value("results", json::array())) {
      ++results;
      std::string v = e.value("verdict", "");
      within += v == "within-bound";
      beats += v == "beats-bound";
      if (e.contains("efficiency") && e["efficiency"].is_number()) eff.push_back(e["efficiency"].get<double>());
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
  return o.str();
}

struct Manifest {
  std::map<std::string, std::string> files;  // relative path -> hash
};

std::optional<Manifest> read_manifest(const fs::path& dir) {
  fs::path p = dir / kManifestName;
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return std::nullopt;
  try {
    json j = json::parse(detail::read_file(p));
    if (!j.is_object() || j.value("schema", "") != kReportSchema) return std::nullopt;
    Manifest m;
    for (const auto& f : j.value("files", json::array())) m.files[f.value("path", "")] = f.value("fnv1a", "");
    return m;
  } catch (...) {
    return std::nullopt;
  }
}

bool dir_empty(const fs::path& dir) {
  std::error_code ec;
  return fs::directory_iterator(dir, ec) == fs::directory_iterator();
}

}  // namespace

ReportInput load_report_input(const std::vector<fs::path>& descriptors, const std::vector<fs::path>& results) {
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
    fs::path probes = p.parent_path() / (p.stem().string() + ".probes.json");
    std::error_code ec;
    if (fs::is_regular_file(probes, ec)) {
      json j = parse_json_file(probes, "probe details");
      require_schema(j, probes, "ceiling/probes/1");
      g.probes_path = probes;
      g.probes = std::move(j);
    }
    in.gpus.push_back(std::move(g));
  }
  for (const auto& p : results) {
    ResultsInput r;
    r.path = p;
    r.json = parse_json_file(p, "validation results");
    require_schema(r.json, p, "ceiling/validation/1");
    r.gpu_id = gpu_for_results(r.json, p, in.gpus);
    in.results.push_back(std::move(r));
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
  try {
    const std::string date = utc_now();
    // ---- tables ----
    auto tables = detail::build_tables(in);
    json tables_json = json::array();
    for (const auto& t : tables) {
      write(t.id + ".csv", detail::table_csv(t));
      json tj = detail::table_json(t);
      write(t.id + ".json", tj.dump(1) + "\n");
      tables_json.push_back(tj);
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
        write(spec.name + ".json", spec.data.dump(1) + "\n");
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
            r.svg = inline_svg(svg, spec.name, spec.title);
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
    // ---- inputs, copied so the report can be re-made and checked later ----
    json inputs = json::array();
    std::set<std::string> used;
    auto copy_input = [&](const fs::path& src, const std::string& kind) {
      std::string base = src.filename().string(), rel = "inputs/" + base;
      for (int k = 2; used.count(rel); ++k) rel = "inputs/" + std::to_string(k) + "-" + base;
      used.insert(rel);
      write(rel, detail::read_file(src));
      inputs.push_back({{"kind", kind}, {"source", fs::absolute(src).string()}, {"copy", rel}});
      return rel;
    };
    for (const auto& g : in.gpus) {
      copy_input(g.descriptor_path, "descriptor");
      if (!g.probes_path.empty()) copy_input(g.probes_path, "probes");
    }
    for (const auto& r : in.results) copy_input(r.path, "validation");
    for (const auto& r : in.results)
      if (r.gpu_id.empty())
        out.warnings.push_back(r.path.string() + ": no descriptor in this report matches its device; its tables are "
                               "shown, its points are not plotted");

    // ---- index.html ----
    auto by_prefix = [&](const std::string& prefix) {
      std::vector<const RenderedPlot*> v;
      for (const auto& p : plots)
        if (p.out.name.rfind(prefix, 0) == 0) v.push_back(&p);
      return v;
    };
    auto table_by_id = [&](const std::string& id) -> const detail::Table* {
      for (const auto& t : tables)
        if (t.id == id) return &t;
      return nullptr;
    };
    std::ostringstream h, md;
    h << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>ceiling report</title>\n<style>" << kCss << "</style>\n</head>\n<body>\n";
    h << "<h1>ceiling report</h1>\n<p class=\"meta\">Written " << date << " by ceiling " << CEILING_VERSION;
    if (!in.command_line.empty()) h << " (<code>" << detail::html_escape(in.command_line) << "</code>)";
    h << ". Plots: " << (no_render.empty() ? detail::html_escape(gp.version) : detail::html_escape(no_render)) << ".</p>\n";
    md << "# ceiling report\n\nWritten " << date << " by ceiling " << CEILING_VERSION;
    if (!in.command_line.empty()) md << " (`" << in.command_line << "`)";
    md << ".\n\n";
    h << "<h2 id=\"summary\">Summary</h2>\n<ul>\n";
    md << "## Summary\n\n";
    for (const auto& g : in.gpus) {
      h << "<li>" << detail::html_escape(gpu_summary(in, g)) << "</li>\n";
      md << "- " << gpu_summary(in, g) << "\n";
    }
    if (in.gpus.empty()) {
      h << "<li>No descriptors.</li>\n";
      md << "- No descriptors.\n";
    }
    h << "</ul>\n<p class=\"caption\">Spec values come from datasheets and papers (each with its reference); measured "
         "values from ceiling's probes (each with probe, date and spread). Missing numbers are shown as "
         "<i>\u2014 not measured</i> or <i>\u2014 no spec</i>, never filled in.</p>\n";
    md << "\nSpec values come from datasheets and papers; measured values from ceiling's probes. Missing numbers are "
          "shown as \"\u2014 not measured\" / \"\u2014 no spec\", never filled in.\n\n";
    if (!out.warnings.empty()) {
      h << "<div class=\"warn\"><b>Warnings</b><ul>\n";
      md << "**Warnings**\n\n";
      for (const auto& w : out.warnings) {
        h << "<li>" << detail::html_escape(w) << "</li>\n";
        md << "- " << w << "\n";
      }
      h << "</ul></div>\n";
      md << "\n";
    }
    struct Section {
      std::string id, title;
      std::vector<const RenderedPlot*> plots;
      std::vector<const detail::Table*> tables;
    };
    std::vector<Section> sections;
    sections.push_back({"rooflines", "Rooflines", by_prefix("roofline-"), {}});
    sections.push_back({"speedup", "Tensor-core speedup bound", by_prefix("speedup-bound"), {}});
    sections.push_back({"platform", "Platform", {},
                        {table_by_id("table-platform")}});
    {
      Section s{"memory", "Memory: latency and throughput per level", by_prefix("latency-"), {}};
      s.tables = {table_by_id("table-latency"), table_by_id("table-throughput")};
      sections.push_back(s);
    }
    {
      Section s{"tensor", "Tensor cores", by_prefix("mma-"), {table_by_id("table-mma")}};
      for (auto* p : by_prefix("wgmma-")) s.plots.push_back(p);
      sections.push_back(s);
    }
    {
      Section s{"validation", "Validation", {}, {}};
      for (const auto& t : tables)
        if (t.id.rfind("table-validation", 0) == 0) s.tables.push_back(&t);
      sections.push_back(s);
    }
    h << "<nav><ul>\n";
    for (const auto& s : sections) h << "<li><a href=\"#" << s.id << "\">" << detail::html_escape(s.title) << "</a></li>\n";
    h << "<li><a href=\"#inputs\">Inputs and files</a></li>\n</ul></nav>\n";
    for (const auto& s : sections) {
      h << "<h2 id=\"" << s.id << "\">" << detail::html_escape(s.title) << "</h2>\n";
      md << "## " << s.title << "\n\n";
      bool tables_first = s.id == "tensor";
      auto emit_tables = [&] {
        for (const auto* t : s.tables) {
          if (!t) continue;
          h << detail::table_html(*t);
          md << detail::table_markdown(*t);
          h << "<p class=\"caption\">Data: <a href=\"" << t->id << ".csv\">" << t->id << ".csv</a>, <a href=\"" << t->id
            << ".json\">" << t->id << ".json</a></p>\n";
        }
      };
      if (tables_first) emit_tables();
      for (const auto* p : s.plots) {
        h << figure_html(*p);
        md << figure_md(*p);
      }
      if (!tables_first) emit_tables();
      if (s.id == "validation" && s.tables.empty()) {
        h << "<p>No validation results in this report (run <code>ceiling validate</code> on a GPU, or pass "
             "<code>--results</code>).</p>\n";
        md << "No validation results in this report.\n\n";
      }
    }
    h << "<h2 id=\"inputs\">Inputs and files</h2>\n<ul>\n";
    md << "## Inputs\n\n";
    for (const auto& i : inputs) {
      h << "<li>" << detail::html_escape(i["kind"].get<std::string>()) << ": <a href=\""
        << detail::html_escape(i["copy"].get<std::string>()) << "\">" << detail::html_escape(i["copy"].get<std::string>())
        << "</a> (from <code>" << detail::html_escape(i["source"].get<std::string>()) << "</code>)</li>\n";
      md << "- " << i["kind"].get<std::string>() << ": [" << i["copy"].get<std::string>() << "]("
         << i["copy"].get<std::string>() << ") (from `" << i["source"].get<std::string>() << "`)\n";
    }
    h << "</ul>\n<p class=\"caption\">Every plot has its data (.csv, .json) and its gnuplot script (.gp) beside it: "
         "<code>gnuplot NAME.gp</code> in this directory re-draws NAME.svg and NAME.png.</p>\n</body>\n</html>\n";
    md << "\nEvery plot has its data (.csv, .json) and its gnuplot script (.gp) beside it: `gnuplot NAME.gp` in this "
          "directory re-draws NAME.svg and NAME.png.\n";
    write("index.html", h.str());
    write("report.md", md.str());

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
    rj["warnings"] = out.warnings;
    write("report.json", rj.dump(1) + "\n");

    // ---- manifest (marks the directory as a ceiling report; hashes detect user edits) ----
    json man;
    man["schema"] = kReportSchema;
    man["tool_version"] = CEILING_VERSION;
    man["date"] = date;
    man["files"] = json::array();
    for (const auto& f : files) man["files"].push_back({{"path", f}, {"fnv1a", fnv1a(detail::read_file(stage / f))}});
    detail::write_file(stage / kManifestName, man.dump(1) + "\n");
    files.insert(kManifestName);

    // ---- move into place ----
    std::error_code ec;
    if (!fs::exists(dir, ec)) {
      fs::rename(stage, dir);
    } else {
      auto old = read_manifest(dir);
      // A file we would write that is not ours from last time belongs to the user: stop before touching anything.
      for (const auto& f : files)
        if (fs::exists(dir / f, ec) && !(old && old->files.count(f)) && f != kManifestName)
          throw OutputDirError((dir / f).string() + " exists and was not written by the previous report; "
                               "refusing to overwrite it");
      const std::string stamp = utc_now("%Y%m%dT%H%M%SZ");
      if (old) {
        for (const auto& [f, hash] : old->files) {
          fs::path p = dir / f;
          if (!fs::is_regular_file(p, ec)) continue;
          if (fnv1a(detail::read_file(p)) != hash) {
            fs::path keep = p;
            keep += ".edited-" + stamp;
            fs::rename(p, keep);
            out.warnings.push_back(p.string() + " was edited after the previous report; kept as " + keep.string());
            spdlog::warn("{}", out.warnings.back());
          } else {
            fs::remove(p);
          }
        }
      }
      for (const auto& f : files) {
        fs::create_directories((dir / f).parent_path());
        fs::rename(stage / f, dir / f);
      }
      fs::remove_all(stage);
    }
  } catch (...) {
    std::error_code ec;
    fs::remove_all(stage, ec);
    throw;
  }
  out.files.assign(files.begin(), files.end());
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace ceiling::reports
