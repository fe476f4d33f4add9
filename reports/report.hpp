// Reports: descriptors + probe details + validation results -> a directory people can share
// (index.html with inline SVG, report.md, plots as SVG/PNG with their data and gnuplot scripts).
#pragma once
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/descriptor.hpp"
#include "model/validation.hpp"

namespace ceiling::reports {

inline constexpr const char* kReportSchema = "ceiling/report/1";
inline constexpr const char* kManifestName = "manifest.json";

// One GPU: its descriptor and, when calibrate wrote one beside it, its probe details.
struct GpuInput {
  std::filesystem::path descriptor_path;
  HardwareDescriptor hw;
  std::filesystem::path probes_path;    // empty when none
  std::optional<nlohmann::json> probes; // docs/FORMATS.md "Probe details"
};

// One validation results file (docs/FORMATS.md "Validation results"), read by validation::load_report.
struct ResultsInput {
  std::filesystem::path path;
  validation::ValidationReport report;
  std::string gpu_id;  // id of the GpuInput it belongs to; empty when none matched
};

struct ReportInput {
  std::vector<GpuInput> gpus;
  std::vector<ResultsInput> results;
  std::string command_line;  // recorded in the report
};

// Loads descriptors (strict, load_descriptor), the probes.json beside each one
// (probes_path_for: <dir>/<stem>.probes.json, schema kProbesSchema) and results files
// (validation::load_report); matches results to GPUs by descriptor id,
// descriptor file stem, then device name. A descriptor whose id is taken by an earlier one is
// renamed to its file stem (then stem-2, ...). Throws std::runtime_error naming the file on bad input.
ReportInput load_report_input(const std::vector<std::filesystem::path>& descriptors,
                              const std::vector<std::filesystem::path>& results);

struct WriteOptions {
  bool render_plots = true;         // false: scripts and data only (plots marked "not rendered")
  std::filesystem::path gnuplot;    // empty: "gnuplot" on PATH
  double gnuplot_timeout_s = 60;
};

struct PlotOutput {
  std::string name;     // file stem, e.g. "roofline-h200"
  std::string title;
  std::string gpu_id;   // empty for plots over all GPUs
  bool rendered = false;
  std::string missing_reason;  // why there is no SVG/PNG (or no data at all)
  int png_width = 0, png_height = 0;
  std::vector<std::string> files;  // relative to the report directory
};

struct ReportOutput {
  std::filesystem::path dir;
  std::vector<std::string> files;  // every file written, relative to dir, sorted
  std::vector<PlotOutput> plots;
  std::vector<std::string> warnings;
  double seconds = 0;
};

// Thrown when the output directory cannot be used (non-empty and not a previous report, ...).
class OutputDirError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Writes the report into `dir`. The directory must be absent, empty, or a previous ceiling
// report (it has a manifest.json of schema ceiling/report/1); files of a previous report are
// replaced, files a user added are kept, and a report file the user edited since is kept as
// <name>.edited-<date>. Everything is generated in a staging directory first, so a failure
// leaves `dir` as it was.
ReportOutput write_report(const ReportInput& in, const std::filesystem::path& dir,
                          const WriteOptions& opt = {});

// Checks that `dir` may receive a report; throws OutputDirError saying why not.
void check_output_dir(const std::filesystem::path& dir);

// ---- helpers, exposed for tests ----

// The manifest of a previous report in `dir` as write_report reads it (the fuzz target and the
// regression corpus use it): nullopt when there is none or it is not a ceiling report manifest;
// `files` holds only paths confined to `dir` (relative, no "." or "..", no symbolic link on the way).
struct ManifestEntries {
  std::map<std::string, std::string> files;  // relative path -> FNV-1a hash
  std::vector<std::string> ignored;          // entries refused, with why
};
std::optional<ManifestEntries> read_report_manifest(const std::filesystem::path& dir);

// Minimal XML well-formedness check (tag balance, attribute quoting, entities, one root).
// Returns false and sets *error ("line N: cause") when the text is not well-formed.
bool xml_well_formed(std::string_view text, std::string* error = nullptr);

// Width and height from a PNG's IHDR chunk; nullopt when the file is not a PNG.
struct PngSize { int width = 0, height = 0; };
std::optional<PngSize> png_size(const std::filesystem::path& file);

// gnuplot on PATH (or the given path) and whether it has the terminals we use.
struct GnuplotInfo {
  std::filesystem::path path;  // empty when not found
  bool svg = false;
  bool pngcairo = false;
  bool png = false;
  std::string version;
};
GnuplotInfo find_gnuplot(const std::filesystem::path& hint = {});

}  // namespace ceiling::reports
