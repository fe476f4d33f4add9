// The readers as the fuzz targets and the regression corpus see them (entries.hpp).
#include "entries.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <optional>
#include <stdexcept>

#include "model/descriptor.hpp"
#include "model/json_file.hpp"
#include "model/json_stream.hpp"
#include "model/kernel_kind.hpp"
#include "model/kernel_model.hpp"
#include "model/link.hpp"
#include "model/ncu_csv.hpp"
#include "model/profile.hpp"
#include "model/units.hpp"
#include "model/input_error.hpp"
#include "model/sparse_matrix.hpp"
#include "model/stencil_shape.hpp"
#include "model/validation.hpp"
#include "reports/detail.hpp"
#include "reports/report.hpp"

#ifndef CEILING_SOURCE_DIR
#error "CEILING_SOURCE_DIR (the repository root) is needed for the fixture descriptors"
#endif

namespace ceiling::fuzz {
namespace fs = std::filesystem;

namespace {

void spit(const fs::path& p, const std::uint8_t* data, std::size_t size) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) throw std::runtime_error("fuzz: cannot write " + p.string());
}

void copy_once(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  if (!fs::exists(to, ec)) fs::copy_file(from, to, fs::copy_options::overwrite_existing);
}

// A refusal people can act on: one line, names `where` (the file, or the field for the units
// parser), and no message of a library's insides (nlohmann's "[json.exception...]", a bare
// "stod", "basic_filebuf::underflow") unless the input itself holds that text.
thread_local std::string_view current_input;

// The message with each \xHH escape (a reader quoting a control byte of the input) blanked: an
// escape next to input text can spell a marker the input does not hold ("\x0b" + "ad_variant_access"
// reads "...bad_variant_access"; CI fuzz run of 2026-11-26, regressions/stencil_shape/).
std::string without_hex_escapes(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  const auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] == 'x' && hex(s[i + 2]) && hex(s[i + 3])) {
      out += ' ';
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string judge_error(const std::string& what, const std::string& where, const char* reader) {
  const std::string head = std::string(reader) + ": ";
  if (what.empty()) return head + "empty error message";
  if (what.find('\n') != std::string::npos) return head + "error of more than one line: " + what;
  const std::string plain = without_hex_escapes(what);
  for (const char* internal : {"[json.exception", "basic_filebuf", "basic_string", "vector::", "map::at", "stod", "stoi",
                               "stoul", "bad_alloc", "bad_optional_access", "bad_variant_access"})
    if (plain.find(internal) != std::string::npos && current_input.find(internal) == std::string_view::npos)
      return head + "library-internal error: " + what;
  if (!where.empty() && what.find(where) == std::string::npos)
    return head + "error does not name '" + where + "': " + what;
  return {};
}

bool finite_and_nonnegative(double v) { return std::isfinite(v) && v >= 0; }

const HardwareDescriptor& fixture_descriptor() {
  static const HardwareDescriptor hw = load_descriptor(fs::path(CEILING_SOURCE_DIR) / "hardware" / "h200.yaml");
  return hw;
}

// A model's numbers as predict prints them: every one finite (issue 17: never inf/nan as a result).
std::string judge_prediction(const KernelModel& k) {
  Prediction p;
  try {
    p = predict(fixture_descriptor(), k);
  } catch (const std::exception& e) {
    return judge_error(e.what(), "", "predict");
  }
  const double values[] = {p.intensity, p.t_compute_cuda_core, p.t_compute_tensor_core, p.t_memory, p.t_overlapped,
                           p.t_unoverlapped, p.alpha, p.speedup_kernel_bound, p.speedup_memory_bound_limit,
                           p.speedup_workload_limit, p.attainable_cuda_core, p.attainable_tensor_core};
  for (double v : values)
    if (!finite_and_nonnegative(v))
      return "predict: a kernel file that loads gives a non-finite or negative figure (" + std::to_string(v) +
             ") for " + k.description;
  return {};
}

std::string descriptor(const std::uint8_t* data, std::size_t size, const fs::path& scratch) {
  const fs::path file = scratch / "fuzz.yaml";
  spit(file, data, size);
  HardwareDescriptor hw;
  try {
    hw = load_descriptor(file);
  } catch (const std::exception& e) {
    return judge_error(e.what(), file.string(), "descriptor");
  }
  // What loads must save and load again (calibrate and every report re-write it).
  try {
    const std::string text = to_yaml(hw);
    (void)parse_descriptor(text, "round-trip");
  } catch (const std::exception& e) {
    return std::string("descriptor: a loaded descriptor does not load again once saved: ") + e.what();
  }
  try {
    (void)predict(hw, scale_model(1 << 20));
  } catch (const std::exception& e) {
    if (auto bad = judge_error(e.what(), "", "predict on a loaded descriptor"); !bad.empty()) return bad;
  }
  return {};
}

std::string kernel_file(const std::uint8_t* data, std::size_t size, const fs::path& scratch) {
  const fs::path file = scratch / "fuzz-kernel.yaml";
  spit(file, data, size);
  KernelModel k;
  try {
    k = load_kernel_file(file);
  } catch (const std::exception& e) {
    return judge_error(e.what(), file.string(), "kernel file");
  }
  return judge_prediction(k);
}

std::string results(const std::uint8_t* data, std::size_t size, const fs::path& scratch) {
  const fs::path desc = scratch / "fixture-gpu.yaml";
  copy_once(fs::path(CEILING_SOURCE_DIR) / "tests" / "data" / "report" / "fixture-gpu.yaml", desc);
  const fs::path file = scratch / "fuzz-validation.json";
  spit(file, data, size);
  reports::ReportInput in;
  try {
    in = reports::load_report_input({desc}, {file});
  } catch (const std::exception& e) {
    return judge_error(e.what(), file.string(), "results");
  }
  // What loads is reported: summaries, tables, plots and the text table.
  try {
    validation::ValidationReport r = in.results.at(0).report;
    validation::summarize(r);
    (void)validation::format_table(r);
    (void)validation::to_json(r).dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
    (void)reports::detail::build_tables(in);
    std::vector<std::string> warnings;
    for (const auto& p : reports::detail::build_plots(in, &warnings)) (void)reports::detail::plot_script(p, "png");
  } catch (const std::exception& e) {
    return std::string("results: a results file that loads fails in the report: ") + e.what();
  }
  return {};
}

// A gnuplot range of nan or inf means a plot of garbage (issue 17 item 8).
std::string judge_plot_script(const std::string& script, const std::string& name) {
  std::size_t at = 0;
  while ((at = script.find("range [", at)) != std::string::npos) {
    const std::string range = script.substr(at, script.find(']', at) - at);
    if (range.find("nan") != std::string::npos || range.find("inf") != std::string::npos)
      return "probes: plot " + name + " has '" + range + "]'";
    ++at;
  }
  return {};
}

std::string probes(const std::uint8_t* data, std::size_t size, const fs::path& scratch) {
  const fs::path desc = scratch / "gpu.yaml";
  copy_once(fs::path(CEILING_SOURCE_DIR) / "tests" / "data" / "report" / "fixture-gpu.yaml", desc);
  const fs::path file = scratch / "gpu.probes.json";
  // 1. The report's reader and every plot drawn from the details.
  spit(file, data, size);
  try {
    const reports::ReportInput in = reports::load_report_input({desc}, {});
    std::vector<std::string> warnings;
    for (const auto& p : reports::detail::build_plots(in, &warnings))
      if (auto bad = judge_plot_script(reports::detail::plot_script(p, "png"), p.name); !bad.empty()) return bad;
  } catch (const std::exception& e) {
    if (auto bad = judge_error(e.what(), file.string(), "probes (report)"); !bad.empty()) return bad;
  }
  // 2. calibrate's reader: a file it cannot merge into is set aside, never lost.
  ProbeDetailsForUpdate u;
  try {
    u = read_probe_details_for_update(file);
  } catch (const std::exception& e) {
    return judge_error(e.what(), file.string(), "probes (calibrate)");
  }
  std::error_code ec;
  if (!u.set_aside.empty()) {
    std::ifstream in(u.set_aside, std::ios::binary);
    std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    fs::remove(u.set_aside, ec);
    if (kept != std::string(reinterpret_cast<const char*>(data), size))
      return "probes (calibrate): the unreadable file was not kept as it was at " + u.set_aside.string();
    if (fs::exists(file, ec)) return "probes (calibrate): the unreadable file is still in place after set-aside";
    if (!u.content.is_object() || !u.content.empty()) return "probes (calibrate): set aside but content not empty";
  } else if (!u.content.is_object() || (u.content.contains("probes") && !u.content["probes"].is_object())) {
    return "probes (calibrate): accepted a file calibrate cannot merge into";
  }
  return {};
}

std::string manifest(const std::uint8_t* data, std::size_t size, const fs::path& scratch) {
  const fs::path dir = scratch / "report";
  fs::create_directories(dir / "plots");
  spit(dir / "manifest.json", data, size);
  std::optional<reports::ManifestEntries> m;
  try {
    m = reports::read_report_manifest(dir);
  } catch (const std::exception& e) {
    return std::string("manifest: the reader threw instead of refusing: ") + e.what();
  }
  if (m) {
    for (const auto& [rel, hash] : m->files) {
      const fs::path p(rel);
      if (p.empty() || p.is_absolute() || p.has_root_name() || p.has_root_directory())
        return "manifest: accepted a path that is not relative: '" + rel + "'";
      for (const auto& part : p)
        if (part == ".." || part == ".") return "manifest: accepted a path with '.' or '..': '" + rel + "'";
    }
    for (const auto& why : m->ignored)
      if (auto bad = judge_error(why, (dir / "manifest.json").string(), "manifest (ignored entry)"); !bad.empty())
        return bad;
  }
  try {
    reports::check_output_dir(dir);
  } catch (const reports::OutputDirError&) {
  } catch (const std::exception& e) {
    return std::string("manifest: check_output_dir threw something else than OutputDirError: ") + e.what();
  }
  return {};
}

std::string units(const std::uint8_t* data, std::size_t size, const fs::path&) {
  if (size == 0) return {};
  static const Dimension dims[] = {Dimension::dimensionless, Dimension::bytes, Dimension::bytes_per_second,
                                   Dimension::flop_per_second, Dimension::hertz, Dimension::seconds,
                                   Dimension::cycles, Dimension::bytes_per_cycle};
  const Dimension d = dims[data[0] % (sizeof dims / sizeof dims[0])];
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string field = "fuzzfield";
  try {
    const Quantity q = parse_quantity(text);
    if (!std::isfinite(q.value)) return "units: parse_quantity accepted a non-finite value: " + std::string(text);
    (void)format_quantity(q.value, q.dimension);
    (void)format_exact(q.value, q.dimension);
  } catch (const UnitError& e) {
    if (auto bad = judge_error(e.what(), "", "units (parse_quantity)"); !bad.empty()) return bad;
  }
  try {
    const double v = parse_as(text, d, field);
    if (!std::isfinite(v)) return "units: parse_as accepted a non-finite value: " + std::string(text);
    (void)format_quantity(v, d);
    (void)format_exact(v, d);
    (void)format_rounded(v, d, decimal_exponent(v) - 3, decimal_prefix_exponent(v, d));
  } catch (const UnitError& e) {
    if (auto bad = judge_error(e.what(), field, "units (parse_as)"); !bad.empty()) return bad;
  }
  // Kernel parameters as predict's options and kernel files read them.
  for (const KernelKind& kind : kernel_kind_table())
    for (const ParamSpec& spec : kind.params) {
      try {
        const double v = parse_param(spec, text, field);
        if (!std::isfinite(v)) return "units: parse_param accepted a non-finite value: " + std::string(text);
      } catch (const std::invalid_argument& e) {
        if (auto bad = judge_error(e.what(), field, "units (parse_param)"); !bad.empty()) return bad;
      } catch (const UnitError& e) {
        if (auto bad = judge_error(e.what(), field, "units (parse_param)"); !bad.empty()) return bad;
      }
    }
  return {};
}

// The document the streaming reader's tokens spell (first: the token just read).
nlohmann::json pulled(JsonPull& in, JsonPull::Tok first) {
  using Tok = JsonPull::Tok;
  switch (first) {
    case Tok::begin_object: {
      nlohmann::json o = nlohmann::json::object();
      for (Tok k; (k = in.next()) != Tok::end_object;) {
        if (k != Tok::key) throw std::logic_error("pull: a member without a key");
        const std::string key = in.text();
        o[key] = pulled(in, in.next());
      }
      return o;
    }
    case Tok::begin_array: {
      nlohmann::json a = nlohmann::json::array();
      for (Tok t; (t = in.next()) != Tok::end_array;) a.push_back(pulled(in, t));
      return a;
    }
    case Tok::string: return in.text();
    case Tok::number: return in.number();
    case Tok::boolean: return in.flag();
    case Tok::null: return nullptr;
    default: throw std::logic_error("pull: a value expected");
  }
}

// Numbers compared as doubles (the pull reader has no integer type).
bool same_json(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.is_number() && b.is_number()) return a.get<double>() == b.get<double>();
  if (a.type() != b.type()) return false;
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it)
      if (!b.contains(it.key()) || !same_json(it.value(), b.at(it.key()))) return false;
    return true;
  }
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!same_json(a[i], b[i])) return false;
    return true;
  }
  return a == b;
}

// The bounded JSON reader, and beside it the streaming reader (validation results) on the same
// file and limits: both accept the same files with the same values and refuse the same files,
// each refusal one line naming the file.
std::string json(const std::uint8_t* data, std::size_t size, const fs::path& scratch) {
  const fs::path file = scratch / "fuzz.json";
  spit(file, data, size);
  JsonLimits limits;
  limits.max_bytes = 1 << 20;
  limits.max_depth = 16;
  limits.max_string_bytes = 4096;
  std::optional<nlohmann::json> reference;
  try {
    reference = read_json_file(file, "fuzz input", limits);  // the file is read: the verdict to match
    (void)reference->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (reference->is_object()) (void)json_member(*reference, "schema", nlohmann::json::value_t::string, file);
  } catch (const JsonFileError& e) {
    if (auto bad = judge_error(e.what(), file.string(), "json"); !bad.empty()) return bad;
  } catch (const std::exception& e) {
    return std::string("json: not a JsonFileError: ") + e.what();
  }
  std::optional<nlohmann::json> streamed;
  std::string refusal;
  try {
    JsonPull in(file, "fuzz input", limits);
    nlohmann::json v = pulled(in, in.next());
    if (in.next() != JsonPull::Tok::end) return "json_stream: tokens after the top-level value";
    streamed = std::move(v);
  } catch (const JsonFileError& e) {
    refusal = e.what();
    if (auto bad = judge_error(refusal, file.string(), "json_stream"); !bad.empty()) return bad;
  } catch (const std::exception& e) {
    return std::string("json_stream: not a JsonFileError: ") + e.what();
  }
  // The one known difference: nlohmann ends the input at a NUL byte (anything after it is never
  // read); the streaming reader refuses bytes after the value, a NUL included.
  if (reference && !streamed && refusal.find("unexpected byte 0x00 after the top-level value") != std::string::npos)
    return {};
  if (reference.has_value() != streamed.has_value())
    return reference ? "json_stream: refuses a file nlohmann reads: " + refusal
                     : std::string("json_stream: accepts a file nlohmann refuses");
  if (reference && !same_json(*reference, *streamed)) return "json_stream: reads other values than nlohmann";
  return {};
}

// Matrix Market (SpMV inputs): a refusal is one line naming the file; a matrix that loads is a
// valid CSR with finite values, its header reads the same sizes, and it survives a write and a
// re-read unchanged (values printed with 17 digits). Small limits keep a claim of many entries cheap.
std::string matrix_market(const std::uint8_t* data, std::size_t size, const fs::path& scratch) {
  const fs::path file = scratch / "fuzz.mtx";
  spit(file, data, size);
  MatrixReadOptions options;
  options.max_nnz = 1 << 20;
  CsrMatrix a;
  try {
    a = read_matrix_market(file.string(), options);
  } catch (const InputFileError& e) {
    return judge_error(e.what(), file.string(), "matrix_market");
  } catch (const std::exception& e) {
    return std::string("matrix_market: not an InputFileError: ") + e.what();
  }
  try {
    check_csr(a);
  } catch (const std::exception& e) {
    return std::string("matrix_market: a loaded matrix is not valid CSR: ") + e.what();
  }
  for (double v : a.val)
    if (!std::isfinite(v)) return "matrix_market: a loaded matrix holds a non-finite value " + std::to_string(v);
  try {
    const MatrixMarketHeader h = read_matrix_market_header(file.string());
    if (h.rows != a.rows || h.cols != a.cols)
      return "matrix_market: the header reads " + std::to_string(h.rows) + "x" + std::to_string(h.cols) +
             ", the matrix " + std::to_string(a.rows) + "x" + std::to_string(a.cols);
  } catch (const std::exception& e) {
    return std::string("matrix_market: the header of a file that loads fails: ") + e.what();
  }
  const RowStats st = row_stats(a);
  if (!std::isfinite(st.mean) || !std::isfinite(st.cv)) return "matrix_market: non-finite row statistics";
  const fs::path again = scratch / "again.mtx";
  try {
    write_matrix_market(a, again.string());
    const CsrMatrix b = read_matrix_market(again.string(), options);
    if (b.rows != a.rows || b.cols != a.cols || b.row_ptr != a.row_ptr || b.col != a.col || b.val != a.val)
      return "matrix_market: a written and re-read matrix differs";
  } catch (const std::exception& e) {
    return std::string("matrix_market: a loaded matrix does not write and read back: ") + e.what();
  }
  return {};
}

// Stencil shapes (validate --shapes, predict --shape): a refusal is one line naming the file; a
// shape that loads passes check_stencil_shape, and one step of the CPU reference on a small domain
// (the light-cone path on a sample too) agrees with itself and stays finite for finite input.
std::string stencil_shape(const std::uint8_t* data, std::size_t size, const fs::path& scratch) {
  const fs::path file = scratch / "fuzz-shape.yaml";
  spit(file, data, size);
  StencilShape s;
  try {
    s = read_stencil_shape_yaml(file);
  } catch (const InputFileError& e) {
    return judge_error(e.what(), file.string(), "stencil_shape");
  } catch (const std::exception& e) {
    return std::string("stencil_shape: not an InputFileError: ") + e.what();
  }
  try {
    check_stencil_shape(s);
  } catch (const std::exception& e) {
    return std::string("stencil_shape: a loaded shape breaks the rules: ") + e.what();
  }
  if (s.name.empty() || s.radius() > kMaxStencilRadius || s.size() < 1 || s.size() > kMaxStencilPoints)
    return "stencil_shape: a loaded shape has no name, too wide a radius or a bad |S|";
  // The smallest domain with an interior point on each axis.
  StencilDomain d;
  d.dims = s.dims;
  d.nx = 2 * s.radius(0) + 3;
  d.ny = 2 * s.radius(1) + 3;
  d.nz = s.dims == 3 ? 2 * s.radius(2) + 3 : 1;
  try {
    check_stencil_domain(s, d);
    std::vector<double> u(static_cast<std::size_t>(d.points()));
    for (std::size_t i = 0; i < u.size(); ++i) u[i] = static_cast<double>(i % 7) / 7.0;
    const std::vector<double> whole = stencil_reference(s, d, u.data(), 2);
    std::vector<std::int64_t> idx;
    const std::int64_t n = static_cast<std::int64_t>(u.size());
    for (std::int64_t i = 0; i < n; i += std::max<std::int64_t>(1, n / 8)) idx.push_back(i);  // a sample: cones are dear
    idx.push_back(n / 2);
    const std::vector<double> part = stencil_reference_points(s, d, u.data(), 2, idx);
    for (std::size_t i = 0; i < idx.size(); ++i)
      if (part[i] != whole[static_cast<std::size_t>(idx[i])] && !(std::isnan(part[i]) && std::isnan(whole[static_cast<std::size_t>(idx[i])])))
        return "stencil_shape: the light-cone reference differs from the whole-grid one at index " + std::to_string(idx[i]);
  } catch (const std::exception& e) {
    return std::string("stencil_shape: a loaded shape fails on its smallest domain: ") + e.what();
  }
  try {
    (void)temporal_blocking_min_steps_for_shape(s, 10.0);
  } catch (const std::exception& e) {
    // |S| >= 1 and D = 8: t stays small for any finite balance.
    return std::string("stencil_shape: Eq. 14 fails for a loaded shape: ") + e.what();
  }
  return {};
}

}  // namespace

// Nsight Compute exports (`ceiling profile --from-ncu`): a refusal is one line naming the file; an
// export that reads and analyses gives finite, non-negative numbers everywhere, a JSON that dumps
// and a table that prints.
std::string ncu_csv(const std::uint8_t* data, std::size_t size, const fs::path& scratch) {
  const fs::path file = scratch / "fuzz-ncu.csv";
  spit(file, data, size);
  std::vector<std::string> metrics;
  for (const auto& m : profile_metrics()) metrics.push_back(m.name);
  NcuExport ex;
  try {
    ex = read_ncu_csv(file, metrics);
  } catch (const InputFileError& e) {
    return judge_error(e.what(), file.string(), "ncu_csv");
  } catch (const std::exception& e) {
    return std::string("ncu_csv: not an InputFileError: ") + e.what();
  }
  ProfileResult r;
  try {
    r = analyse_profile(ex, fixture_descriptor());
  } catch (const std::runtime_error& e) {
    return judge_error(e.what(), file.string(), "ncu_csv (analysis)");
  } catch (const std::exception& e) {
    return std::string("ncu_csv: the analysis fails unexpectedly: ") + e.what();
  }
  if (!finite_and_nonnegative(r.time_s)) return "ncu_csv: non-finite total time";
  for (const auto& k : r.kernels) {
    for (const double v : {k.counts.time_s, k.counts.work_flop(), k.bound_s, k.efficiency, k.time_share, k.clock_hz,
                           k.flop_per_tensor_instruction})
      if (!finite_and_nonnegative(v)) return "ncu_csv: a non-finite or negative number for '" + k.short_name + "'";
    for (const auto& [l, t] : k.counts.traffic)
      if (!finite_and_nonnegative(t.bytes())) return "ncu_csv: non-finite traffic";
    for (const auto& [l, v] : k.intensity)
      if (!finite_and_nonnegative(v)) return "ncu_csv: non-finite intensity";
    if (k.speedup && (!std::isfinite(k.speedup->lower) || !std::isfinite(k.speedup->upper) ||
                      k.speedup->lower > k.speedup->upper * (1 + 1e-12)))
      return "ncu_csv: a speedup interval that is not finite or not ordered";
  }
  try {
    (void)profile_to_json(r).dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
    (void)profile_table(r);
  } catch (const std::exception& e) {
    return std::string("ncu_csv: an analysed export does not print: ") + e.what();
  }
  return {};
}

// Node descriptors (calibrate --devices' node.yaml, read by report --fleet and predict --node): a
// refusal is one line naming the file; a node that loads writes back to the same text, prints its
// link tables, and every link level it names is finite or refused with a message.
std::string node_yaml(const std::uint8_t* data, std::size_t size, const fs::path& scratch) {
  const fs::path file = scratch / "fuzz-node.yaml";
  spit(file, data, size);
  NodeDescriptor n;
  try {
    n = load_node_descriptor(file);
  } catch (const InputFileError& e) {
    return judge_error(e.what(), file.string(), "node_yaml");
  } catch (const std::exception& e) {
    return std::string("node_yaml: not an InputFileError: ") + e.what();
  }
  try {
    const std::string text = to_yaml(n);
    if (to_yaml(parse_node_descriptor(text, "rewritten")) != text) return "node_yaml: writing what was read is not stable";
    (void)link_summary(n);
  } catch (const std::exception& e) {
    return std::string("node_yaml: a node that loaded does not write back: ") + e.what();
  }
  std::vector<std::string> specs;
  for (const auto& h : n.host_links) specs.push_back("host:" + std::to_string(h.device));
  for (const auto& q : n.pairs) specs.push_back("peer:" + std::to_string(q.from) + ":" + std::to_string(q.to));
  for (const auto& spec : specs) {
    try {
      const LinkLevel l = link_level(n, spec, 0.5);
      if (!(l.bandwidth > 0) || !std::isfinite(l.bandwidth) || !(l.bandwidth_max >= l.bandwidth) ||
          !std::isfinite(l.bandwidth_max) || !finite_and_nonnegative(l.latency_s))
        return "node_yaml: link level " + spec + " has a non-finite or inconsistent figure";
    } catch (const std::runtime_error& e) {
      if (std::string(e.what()).find(spec) == std::string::npos) return "node_yaml: refusal does not name " + spec + ": " + e.what();
    }
  }
  return {};
}

const std::vector<std::string>& target_names() {
  static const std::vector<std::string> names = {"descriptor", "kernel_file", "results", "probes",
                                                 "manifest",   "units",       "json",  "matrix_market",
                                                 "stencil_shape", "ncu_csv", "node_yaml"};
  return names;
}

std::string run_target(std::string_view target, const std::uint8_t* data, std::size_t size, const fs::path& scratch) {
  current_input = std::string_view(reinterpret_cast<const char*>(data), size);
  if (target == "descriptor") return descriptor(data, size, scratch);
  if (target == "kernel_file") return kernel_file(data, size, scratch);
  if (target == "results") return results(data, size, scratch);
  if (target == "probes") return probes(data, size, scratch);
  if (target == "manifest") return manifest(data, size, scratch);
  if (target == "units") return units(data, size, scratch);
  if (target == "json") return json(data, size, scratch);
  if (target == "matrix_market") return matrix_market(data, size, scratch);
  if (target == "stencil_shape") return stencil_shape(data, size, scratch);
  if (target == "node_yaml") return node_yaml(data, size, scratch);
  if (target == "ncu_csv") return ncu_csv(data, size, scratch);
  throw std::invalid_argument("fuzz: unknown target '" + std::string(target) + "'");
}

}  // namespace ceiling::fuzz
