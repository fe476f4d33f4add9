// Hostile and careless input on the CPU-only readers and writers (issue 17): report manifests that
// point outside the report, crafted JSON, YAML alias bombs, wrapping integers, absurd magnitudes,
// errors without a file name, and the atomic write helper. Big inputs are generated here.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "cli_run.hpp"
#include "scratch.hpp"
#include "model/descriptor.hpp"
#include "model/files.hpp"
#include "model/json_file.hpp"
#include "model/kernel_model.hpp"
#include "model/units.hpp"
#include "reports/detail.hpp"
#include "reports/report.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace ceiling;
using namespace ceiling::reports;

namespace {

using test::slurp;
using detail::fnv1a;  // the hash the report writer puts in its manifest
fs::path scratch(const std::string& tag) { return test::scratch_dir("hostile", tag); }

const fs::path kReportData = fs::path(CEILING_TEST_DATA_DIR) / "report";

void spit(const fs::path& p, const std::string& s) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << s;
}

// Every regular file under `dir` with its content (the state of a report directory).
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && !e.is_symlink()) out[fs::relative(e.path(), dir).string()] = slurp(e.path());
  return out;
}

WriteOptions no_plots() {
  WriteOptions o;
  o.render_plots = false;
  return o;
}

ReportInput spec_only_input() { return load_report_input({kReportData / "spec-only.yaml"}, {}); }

std::string spec_only_text() { return slurp(kReportData / "spec-only.yaml"); }

// spec-only.yaml with `from` replaced by `to` (must occur).
std::string spec_only_with(const std::string& from, const std::string& to) {
  std::string t = spec_only_text();
  const size_t at = t.find(from);
  REQUIRE(at != std::string::npos);
  return t.replace(at, from.size(), to);
}

// The message of the exception `f` throws ("" when it throws none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

std::string descriptor_error(const std::string& text, const std::string& name = "hostile.yaml") {
  return error_of([&] { parse_descriptor(text, name); });
}

// A descriptor with one measured value (to reach repeats, cv, date).
std::string measured_with(const std::string& key, const std::string& value) {
  std::map<std::string, std::string> m{{"median", "\"1.9 TB/s\""}, {"repeats", "5"}, {"cv", "0.01"},
                                       {"probe", "dram-bandwidth"}, {"date", "2026-11-21T12:00:00Z"}};
  m[key] = value;
  std::string measured = "      measured:\n";
  for (const auto& [k, v] : m) measured += "        " + k + ": " + v + "\n";
  return spec_only_with("      spec: {value: \"1.94 TB/s\", ref: paper}\n",
                        "      spec: {value: \"1.94 TB/s\", ref: paper}\n" + measured);
}

}  // namespace

// ---- 1. report manifests ------------------------------------------------------------------------

TEST_CASE("report: manifest entries outside the report directory are ignored, never touched") {
  const fs::path root = scratch("manifest");
  const fs::path dir = root / "report";
  write_report(spec_only_input(), dir, no_plots());

  // Files outside the report that a crafted manifest names with their right hashes (deleted
  // today) or wrong ones (renamed to .edited-* today).
  const fs::path outside = root / "victim.txt";
  spit(outside, "keep me\n");
  const fs::path absolute = root / "absolute-victim.txt";
  spit(absolute, "keep me too\n");
  const fs::path elsewhere = scratch("manifest-elsewhere");
  spit(elsewhere / "x.txt", "and me\n");
  fs::create_directory_symlink(elsewhere, dir / "escape");  // a link inside the report pointing out of it

  json man = json::parse(slurp(dir / kManifestName));
  man["files"].push_back({{"path", "../victim.txt"}, {"fnv1a", fnv1a("keep me\n")}});
  man["files"].push_back({{"path", absolute.string()}, {"fnv1a", "0000000000000000"}});
  man["files"].push_back({{"path", "escape/x.txt"}, {"fnv1a", fnv1a("and me\n")}});
  man["files"].push_back({{"path", "inputs/../../victim.txt"}, {"fnv1a", fnv1a("keep me\n")}});
  spit(dir / kManifestName, man.dump(1));

  ReportOutput out;
  REQUIRE_NOTHROW(out = write_report(spec_only_input(), dir, no_plots()));
  CHECK(slurp(outside) == "keep me\n");
  CHECK(slurp(absolute) == "keep me too\n");
  CHECK(slurp(elsewhere / "x.txt") == "and me\n");
  for (const auto& e : fs::directory_iterator(root)) CHECK(e.path().filename().string().find(".edited-") == std::string::npos);
  for (const auto& e : fs::directory_iterator(elsewhere)) CHECK(e.path().filename() == "x.txt");
  int ignored = 0;
  for (const auto& w : out.warnings) ignored += w.find("ignored") != std::string::npos;
  CHECK(ignored >= 4);
  CHECK(fs::is_regular_file(dir / "index.html"));
  fs::remove_all(root);
  fs::remove_all(elsewhere);
}

TEST_CASE("report: re-writing a report whose inputs/ became a file changes nothing and says why") {
  const fs::path root = scratch("half");
  const fs::path dir = root / "report";
  write_report(spec_only_input(), dir, no_plots());
  fs::remove_all(dir / "inputs");
  spit(dir / "inputs", "a user's file where the inputs directory was\n");
  // The user edited index.html too: it would be set aside; nothing may move when the write fails.
  spit(dir / "index.html", slurp(dir / "index.html") + "<!-- edited -->");
  const auto before = snapshot(dir);
  const std::string err = error_of([&] { write_report(spec_only_input(), dir, no_plots()); });
  CHECK(err.find("inputs") != std::string::npos);
  CHECK(snapshot(dir) == before);
  for (const auto& e : fs::directory_iterator(root)) CHECK(e.path().filename() == "report");  // no staging left
  fs::remove_all(root);
}

TEST_CASE("report: a failure while moving files into place restores the previous report") {
  const fs::path root = scratch("restore");
  const fs::path dir = root / "report";
  write_report(spec_only_input(), dir, no_plots());
  const auto before = snapshot(dir);
  // A directory where the new report.md goes: the move of that one file fails after others moved.
  fs::remove(dir / "report.md");
  fs::create_directories(dir / "report.md" / "sub");
  auto expected = before;
  expected.erase("report.md");
  CHECK_THROWS(write_report(spec_only_input(), dir, no_plots()));
  CHECK(snapshot(dir) == expected);
  fs::remove_all(root);
}

// ---- 2. JSON ---------------------------------------------------------------------------------------

TEST_CASE("json: read_json_file limits nesting, size and strings, and names the file") {
  const fs::path root = scratch("json");
  const fs::path deep = root / "deep.json";
  spit(deep, std::string(100000, '[') + std::string(100000, ']'));
  std::string err = error_of([&] { read_json_file(deep, "test data"); });
  CHECK(err.rfind(deep.string() + ": ", 0) == 0);
  CHECK(err.find("nested deeper than 64") != std::string::npos);

  const fs::path ok = root / "ok.json";
  spit(ok, std::string(64, '[') + std::string(64, ']'));
  CHECK_NOTHROW(read_json_file(ok, "test data"));
  spit(ok, std::string(65, '[') + std::string(65, ']'));
  CHECK_THROWS_AS(read_json_file(ok, "test data"), JsonFileError);

  const fs::path big = root / "big.json";
  spit(big, "[" + std::string(2000, ' ') + "]");
  JsonLimits small;
  small.max_bytes = 1000;
  err = error_of([&] { read_json_file(big, "test data", small); });
  CHECK(err.rfind(big.string() + ": ", 0) == 0);
  CHECK(err.find("too large") != std::string::npos);

  const fs::path str = root / "string.json";
  spit(str, "{\"k\": \"" + std::string(3000, 'x') + "\"}");
  JsonLimits short_strings;
  short_strings.max_string_bytes = 1000;
  err = error_of([&] { read_json_file(str, "test data", short_strings); });
  CHECK(err.find("string longer than") != std::string::npos);

  err = error_of([&] { read_json_file(root, "test data"); });
  CHECK(err == root.string() + ": not a regular file (a directory)");
  err = error_of([&] { read_json_file(root / "absent.json", "test data"); });
  CHECK(err.rfind((root / "absent.json").string() + ": cannot open test data", 0) == 0);

  spit(ok, "{\"a\": [1, 2,]}");
  err = error_of([&] { read_json_file(ok, "test data"); });
  CHECK(err.rfind(ok.string() + ": not valid JSON", 0) == 0);

  const json j = json::parse(R"({"a": 5, "b": {"c": "x"}})");
  err = error_of([&] { json_member(j, "a", json::value_t::object, ok, "top"); });
  CHECK(err == ok.string() + ": top.a: expected an object, got number");
  err = error_of([&] { json_member(j, "z", json::value_t::array, ok); });
  CHECK(err == ok.string() + ": z: is missing");
  CHECK(json_member(j, "b", json::value_t::object, ok).contains("c"));
  fs::remove_all(root);
}

TEST_CASE("report loader: results with 100,000 nested arrays are refused with the file name, no crash") {
  const fs::path root = scratch("deep-results");
  json r = json::parse(slurp(kReportData / "fixture-gpu-validation.json"));
  std::string text = r.dump();
  const std::string key = "\"results\":[";
  const size_t at = text.find(key);
  REQUIRE(at != std::string::npos);
  text.insert(at + key.size(), std::string(100000, '[') + std::string(100000, ']') + ",");
  const fs::path p = root / "deep-validation.json";
  spit(p, text);
  const std::string err = error_of([&] { load_report_input({kReportData / "spec-only.yaml"}, {p}); });
  CHECK(err.rfind(p.string() + ": ", 0) == 0);
  // The streaming reader refuses the first row by its type, before it is nested any deeper.
  CHECK(err.find("results[0]: expected an object, found an array") != std::string::npos);
  // Under a key the reader skips, the depth limit holds while skipping.
  std::string skipped = r.dump();
  skipped.insert(1, "\"extra\":" + std::string(100000, '[') + std::string(100000, ']') + ",");
  spit(p, skipped);
  const std::string deep = error_of([&] { load_report_input({kReportData / "spec-only.yaml"}, {p}); });
  CHECK(deep.rfind(p.string() + ": ", 0) == 0);
  CHECK(deep.find("nested deeper than 64 levels") != std::string::npos);
  fs::remove_all(root);
}

TEST_CASE("report loader: probe details with 100,000 nested arrays are refused, no crash in the plots") {
  const fs::path root = scratch("deep-probes");
  fs::copy_file(kReportData / "fixture-gpu.yaml", root / "gpu.yaml");
  spit(root / "gpu.probes.json", R"({"schema": "ceiling/probes/1", "probes": {"mma": {"details": {"grid": [)"
                                 R"({"warps": 1, "ilp": 1, "flop_per_s": 1e12, "x": )" +
                                     std::string(100000, '[') + std::string(100000, ']') + "}]}}}}");
  const std::string err = error_of([&] {
    const ReportInput in = load_report_input({root / "gpu.yaml"}, {});
    std::vector<std::string> warnings;
    detail::build_plots(in, &warnings);  // today: a stack overflow copying the grid entry
  });
  CHECK(err == (root / "gpu.probes.json").string() + ": nested deeper than 64 levels");
  fs::remove_all(root);
}

TEST_CASE("report loader: results of the wrong type and a directory name the file") {
  const fs::path root = scratch("results-type");
  json r = json::parse(slurp(kReportData / "fixture-gpu-validation.json"));
  r["speedups"] = 5;
  const fs::path p = root / "typed-validation.json";
  spit(p, r.dump());
  std::string err = error_of([&] { load_report_input({kReportData / "spec-only.yaml"}, {p}); });
  CHECK(err.rfind(p.string() + ": ", 0) == 0);
  err = error_of([&] { load_report_input({kReportData / "spec-only.yaml"}, {root}); });
  CHECK(err.rfind(root.string() + ": ", 0) == 0);
  CHECK(err.find("underflow") == std::string::npos);
  fs::remove_all(root);
}

TEST_CASE("report plots: probe details of the wrong shape are skipped with a warning, never UB") {
  const fs::path root = scratch("probes-shape");
  fs::copy_file(kReportData / "fixture-gpu.yaml", root / "gpu.yaml");
  const std::vector<std::string> shapes = {
      R"({"schema": "ceiling/probes/1"})",
      R"({"schema": "ceiling/probes/1", "probes": 5})",
      R"({"schema": "ceiling/probes/1", "probes": {"pchase-latency": 5, "mma": "x", "wgmma": [1]}})",
      R"({"schema": "ceiling/probes/1", "probes": {"pchase-latency": {"details": "x"}, "mma": {"details": 3}}})",
      R"({"schema": "ceiling/probes/1", "probes": {"pchase-latency": {"details": {"sweep": 7, "knees": "k"}},
          "mma": {"details": {"grid": {"a": 1}}}, "wgmma": {"skipped": 4, "details": null}}})",
      R"({"schema": "ceiling/probes/1", "probes": {"pchase-latency": {"date": 5, "details": {"sweep":
          [1, "a", {"footprint_bytes": "x"}, {"mode": 3, "footprint_bytes": 4096, "latency_cycles": 30}],
          "knees": [{"bytes": "1"}, 4]}}, "mma": {"details": {"grid": [{"warps": 1, "ilp": 1e300,
          "flop_per_s": 1e12, "instruction": 7}]}}}})",
  };
  for (const auto& s : shapes) {
    INFO(s);
    spit(root / "gpu.probes.json", s);
    ReportInput in;
    REQUIRE_NOTHROW(in = load_report_input({root / "gpu.yaml"}, {}));
    std::vector<std::string> warnings;
    std::vector<detail::PlotSpec> plots;
    REQUIRE_NOTHROW(plots = detail::build_plots(in, &warnings));
    CHECK(!plots.empty());
    int about_probes = 0;
    for (const auto& w : warnings) about_probes += w.find("gpu.probes.json") != std::string::npos;
    CHECK(about_probes > 0);
  }
  fs::remove_all(root);
}

// ---- 3. YAML size and aliases -------------------------------------------------------------------

TEST_CASE("descriptor and kernel file: YAML aliases are refused with file:line:col") {
  std::string text = spec_only_text() + "notes:\n  - &big \"" + std::string(1000, 'x') + "\"\n";
  for (int i = 0; i < 100; ++i) text += "  - *big\n";
  const std::string err = descriptor_error(text, "bomb.yaml");
  CHECK(err.rfind("bomb.yaml:26:5: ", 0) == 0);
  CHECK(err.find("alias") != std::string::npos);

  const fs::path root = scratch("alias");
  spit(root / "k.yaml", "kind: &k scale\nprecision: fp64\nn: 1000\ndescription: *k\n");
  const std::string kerr = error_of([&] { load_kernel_file(root / "k.yaml"); });
  CHECK(kerr.rfind((root / "k.yaml").string() + ":4:14: ", 0) == 0);
  CHECK(kerr.find("alias") != std::string::npos);
  fs::remove_all(root);
}

TEST_CASE("descriptor and kernel file: files over 4 MiB are refused before parsing") {
  const fs::path root = scratch("size");
  std::string text = spec_only_text();
  while (text.size() <= (4u << 20)) text += "# " + std::string(1000, 'p') + "\n";
  spit(root / "big.yaml", text);
  std::string err = error_of([&] { load_descriptor(root / "big.yaml"); });
  CHECK(err.rfind((root / "big.yaml").string() + ":", 0) == 0);
  CHECK(err.find("larger than 4 MiB") != std::string::npos);
  spit(root / "k.yaml", "kind: scale\nn: 1000\n" + text.substr(text.find("# ")));
  err = error_of([&] { load_kernel_file(root / "k.yaml"); });
  CHECK(err.find("larger than 4 MiB") != std::string::npos);
  err = error_of([&] { load_descriptor(root); });
  CHECK(err.find("not a regular file") != std::string::npos);
  fs::remove_all(root);
}

// ---- 4. integers ------------------------------------------------------------------------------------

TEST_CASE("descriptor: integers out of range are errors, never wrapped") {
  for (const char* v : {"2147483648", "4294967297", "99999999999999999999", "1e3", "12.0", "0x80"}) {
    INFO(v);
    const std::string err = descriptor_error(spec_only_with("sm_count: 108", std::string("sm_count: ") + v));
    CHECK(err.rfind("hostile.yaml:6:13: identity.sm_count: ", 0) == 0);
  }
  CHECK(descriptor_error(spec_only_with("sm_count: 108", "sm_count: 2147483648")).find("at most") != std::string::npos);
  CHECK(descriptor_error(spec_only_with("sm_count: 108", "sm_count: 132")).empty());

  std::string err = descriptor_error(measured_with("repeats", "4294967297"));
  CHECK(err.find("memory.dram.bandwidth.measured.repeats: ") != std::string::npos);
  CHECK(err.find("at most") != std::string::npos);
  CHECK(descriptor_error(measured_with("repeats", "20")).empty());

  const std::string ti = "tensor_instructions:\n  - {api: mma, shape: m8n8k4, input: fp64, accumulate: fp64, best_warps: W}\n";
  auto with_warps = [&](const std::string& w) {
    std::string t = ti;
    t.replace(t.find('W'), 1, w);
    return spec_only_text() + t;
  };
  err = descriptor_error(with_warps("4294967297"));
  CHECK(err.find("tensor_instructions[0].best_warps: ") != std::string::npos);
  CHECK(err.find("at most") != std::string::npos);
  CHECK(!descriptor_error(with_warps("2147483649")).empty());
  CHECK(descriptor_error(with_warps("8")).empty());
}

// ---- 5. magnitudes ------------------------------------------------------------------------------------

TEST_CASE("descriptor: magnitudes outside plausible physical ranges are errors") {
  struct Case {
    std::string from, to, key;
  };
  const std::vector<Case> cases = {
      {"\"1.94 TB/s\"", "\"1e-300 B/s\"", "memory.dram.bandwidth.spec.value"},
      {"\"1.94 TB/s\"", "\"1e18 B/s\"", "memory.dram.bandwidth.spec.value"},
      {"\"40 MiB\"", "\"1e-300 B\"", "memory.l2.capacity.spec.value"},
      {"\"40 MiB\"", "\"1e30 B\"", "memory.l2.capacity.spec.value"},
      {"\"9.7 TFLOP/s\"", "\"1e-300 FLOP/s\"", "compute.cuda_core.fp64.spec.value"},
      {"\"19.5 TFLOP/s\"", "\"1e40 FLOP/s\"", "compute.tensor_core.fp64.spec.value"},
  };
  for (const auto& c : cases) {
    INFO(c.to);
    const std::string err = descriptor_error(spec_only_with(c.from, c.to));
    CHECK(err.find(c.key + ": ") != std::string::npos);
    CHECK(err.find("outside the plausible range") != std::string::npos);
  }
  auto with_top = [&](const std::string& yaml) { return spec_only_with("memory:\n", yaml + "memory:\n"); };
  CHECK(descriptor_error(with_top("sm_clock:\n  spec: {value: \"1e20 Hz\", ref: paper}\n")).find("sm_clock.spec.value: ") != std::string::npos);
  CHECK(descriptor_error(with_top("sm_clock:\n  spec: {value: \"1 Hz\", ref: paper}\n")).find("plausible") != std::string::npos);
  CHECK(descriptor_error(with_top("sm_clock:\n  spec: {value: \"1980 MHz\", ref: paper}\n")).empty());
  auto with_level = [&](const std::string& yaml) {
    return spec_only_with("  l2:\n", "  l1:\n" + yaml + "  l2:\n");
  };
  CHECK(descriptor_error(with_level("    latency:\n      spec: {value: \"1e12 cycles\", ref: paper}\n")).find("memory.l1.latency.spec.value: ") != std::string::npos);
  CHECK(descriptor_error(with_level("    latency:\n      spec: {value: \"0.001 cycles\", ref: paper}\n")).find("plausible") != std::string::npos);
  CHECK(descriptor_error(with_level("    latency:\n      spec: {value: \"33 cycles\", ref: paper}\n")).empty());
  CHECK(descriptor_error(with_level("    bandwidth_per_sm:\n      spec: {value: \"1e9 B/clk\", ref: paper}\n")).find("plausible") != std::string::npos);
  CHECK(descriptor_error(with_level("    bandwidth_per_sm:\n      spec: {value: \"128 B/clk\", ref: paper}\n")).empty());

  CHECK(descriptor_error(measured_with("cv", "1e300")).find("measured.cv: ") != std::string::npos);
  CHECK(descriptor_error(measured_with("cv", "10.5")).find("plausible") != std::string::npos);
  CHECK(descriptor_error(measured_with("cv", "0")).empty());
  CHECK(descriptor_error(measured_with("median", "\"1e-300 B/s\"")).find("measured.median: ") != std::string::npos);
  CHECK(descriptor_error(measured_with("sm_clock", "\"1e15 Hz\"")).find("measured.sm_clock: ") != std::string::npos);
  CHECK(descriptor_error(measured_with("repeats", "0")).find("at least 1") != std::string::npos);

  for (const char* bad : {"2026-13-45T99:99:99Z", "2026-02-30", "2026-11-21T24:00:00Z", "2026-11-21T12:60:00Z",
                          "2026-00-10", "2025-02-29", "2026-11-21T12:00:00+15:00"}) {
    INFO(bad);
    const std::string err = descriptor_error(measured_with("date", bad));
    CHECK(err.find("measured.date: ") != std::string::npos);
  }
  for (const char* good : {"2026-11-21", "2024-02-29T23:59:60Z", "2026-11-21T12:00:00.5+05:30", "2026-11-21 08:00"}) {
    INFO(good);
    CHECK(descriptor_error(measured_with("date", good)).empty());
  }
  const std::string ti = "tensor_instructions:\n  - {api: mma, shape: m8n8k4, input: fp64, accumulate: fp64, "
                         "fma_per_clock_per_sm: {spec: {value: \"V\", ref: paper}}}\n";
  auto with_fma = [&](const std::string& v) {
    std::string t = ti;
    t.replace(t.find('V'), 1, v);
    return spec_only_text() + t;
  };
  CHECK(descriptor_error(with_fma("1e-300")).find("fma_per_clock_per_sm.spec.value: ") != std::string::npos);
  CHECK(descriptor_error(with_fma("256")).empty());
}

// ---- 6. errors with context ---------------------------------------------------------------------

TEST_CASE("units: 1e-320 gives an error with the key, never a bare stod") {
  CHECK_NOTHROW(format_quantity(1e-320, Dimension::bytes_per_second));
  CHECK_NOTHROW(format_quantity(4.9e-324, Dimension::flop_per_second));
  const std::string err = descriptor_error(spec_only_with("\"1.94 TB/s\"", "\"1e-320 B/s\""));
  CHECK(err.rfind("hostile.yaml:", 0) == 0);
  CHECK(err.find("memory.dram.bandwidth.spec.value: ") != std::string::npos);
  CHECK(err.find("stod") == std::string::npos);
}

TEST_CASE("descriptor: text that is not UTF-8 is refused at load with file:line:col") {
  const std::string err = descriptor_error(spec_only_with("\"Spec Only GPU\"", "\"Spec \xff\xfe GPU\""));
  CHECK(err.rfind("hostile.yaml:5:15: ", 0) == 0);
  CHECK(err.find("UTF-8") != std::string::npos);
  CHECK(descriptor_error(spec_only_with("\"Spec Only GPU\"", "\"Spec \xc2\xb5 GPU\"")).empty());  // µ is fine
}

TEST_CASE("report and predict --json: a file name that is not UTF-8 does not break the JSON") {
  const fs::path root = scratch("utf8");
  const fs::path hw = root / "gpu-\xff.yaml";
  fs::copy_file(kReportData / "spec-only.yaml", hw);
  ReportOutput out;
  REQUIRE_NOTHROW(out = write_report(load_report_input({hw}, {}), root / "report", no_plots()));
  CHECK(json::parse(slurp(root / "report" / "report.json")).is_object());
  const auto r = test::run_ceiling("predict --hw '" + hw.string() + "' --kernel scale --n 1000000 --json");
  CHECK(r.rc == 0);
  CHECK(json::accept(r.out));
  fs::remove_all(root);
}

// ---- 7. atomic writes ------------------------------------------------------------------------------

TEST_CASE("write_file_atomically keeps the file's permission bits") {
  const fs::path root = scratch("mode");
  const fs::path f = root / "d.yaml";
  spit(f, "old\n");
  ::chmod(f.c_str(), 0640);
  write_file_atomically(f, "new\n");
  CHECK(slurp(f) == "new\n");
  CHECK((fs::status(f).permissions() & fs::perms::mask) ==
        (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));
  ::chmod(f.c_str(), 0600);
  write_file_atomically(f, "newer\n");
  CHECK((fs::status(f).permissions() & fs::perms::mask) == (fs::perms::owner_read | fs::perms::owner_write));
  fs::remove_all(root);
}

TEST_CASE("write_file_atomically writes through a symlink to its target") {
  const fs::path root = scratch("link");
  fs::create_directories(root / "real");
  spit(root / "real" / "d.yaml", "old\n");
  fs::create_symlink("real/d.yaml", root / "d.yaml");
  write_file_atomically(root / "d.yaml", "new\n");
  CHECK(fs::is_symlink(root / "d.yaml"));
  CHECK(slurp(root / "real" / "d.yaml") == "new\n");
  // A dangling link: the file is created where it points.
  fs::create_symlink("real/new.yaml", root / "n.yaml");
  write_file_atomically(root / "n.yaml", "created\n");
  CHECK(fs::is_symlink(root / "n.yaml"));
  CHECK(slurp(root / "real" / "new.yaml") == "created\n");
  // No temporaries left beside either.
  for (const auto& e : fs::recursive_directory_iterator(root))
    CHECK(e.path().filename().string().find(".tmp") == std::string::npos);
  fs::remove_all(root);
}

TEST_CASE("write_file_atomically: concurrent writers of one file never collide on a temporary") {
  const fs::path root = scratch("race");
  const fs::path f = root / "p.json";
  std::atomic<int> failures{0};
  auto writer = [&](char c) {
    for (int i = 0; i < 200; ++i) try {
        write_file_atomically(f, std::string(4096, c));
      } catch (const std::exception&) {
        ++failures;
      }
  };
  std::thread a(writer, 'a'), b(writer, 'b');
  a.join();
  b.join();
  CHECK(failures.load() == 0);
  const std::string s = slurp(f);
  CHECK((s == std::string(4096, 'a') || s == std::string(4096, 'b')));
  fs::remove_all(root);
}
