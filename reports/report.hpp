// Reports: descriptors + probe details + validation results -> a directory people can share
// (index.html with inline SVG, report.md, plots as SVG/PNG with their data and gnuplot scripts).
#pragma once
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
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

// The Eq. 22 range of one profiled kernel (docs/FORMATS.md "Profile"): S = T(CC)/T(TC) in [lower, upper].
struct ProfiledSpeedup {
  std::string direction;  // "tensor cores could give" | "CUDA cores would lose"
  std::string level;      // memory level whose roof gives B ("" when the file has none)
  std::string regime;     // "memory-bound" | "compute-bound" | "alpha<=1"
  std::string note;
  double alpha = 0, balance = 0, intensity = 0, i_over_b = 0, lower = 0, upper = 0;
};

// One kernel of a `ceiling profile` file, as the report shows it.
struct ProfiledKernel {
  std::string name, short_name;
  int launches = 0;
  double time_s = 0, time_share = 0;
  std::string unit;       // "cuda_core" | "tensor_core" | "none"
  std::string precision;  // "" when the file has null (no flops counted)
  std::map<std::string, double> intensity;   // W/Q per level ("dram", "l2", ...), levels with traffic
  double work_flop = 0;                      // counts.work_flop
  std::optional<double> dram_bytes;          // counts.traffic.dram.bytes, when counted
  std::optional<double> achieved_flop_per_s; // null in the file (no time): nullopt
  double bound_s = 0, efficiency = 0;
  std::string bounded_by, verdict;
  std::optional<ProfiledSpeedup> speedup;
  std::string speedup_missing;  // why there is none
};

// One `ceiling profile` output file (schema ceiling/profile/1), kernels by time share, largest first.
struct ProfileInput {
  std::filesystem::path path;
  std::string hardware_id, hardware_name, tool_version, export_file;
  double time_s = 0;
  std::vector<ProfiledKernel> kernels;
  std::vector<std::string> notes;
  std::string gpu_id;  // id of the GpuInput whose descriptor is hardware.id
};

// One `scripts/compare-peers.py` file (schema ceiling/peers/1, docs/PEERS.md): our calibration and
// the public suites run one after the other on one GPU, one row per figure both measure.
inline constexpr const char* kPeersSchema = "ceiling/peers/1";
struct PeerRow {
  std::string figure, label, unit, verdict, note, ours_how;
  std::optional<double> ours, ours_spread, ours_spread_per_clock, ratio;
  std::size_t runs = 0;  // our calibrations behind `ours`
  std::string best_peer;
  std::vector<std::pair<std::string, double>> peers;  // every peer's figure, in the file's order
  std::optional<double> best_peer_value() const {
    for (const auto& [n, v] : peers)
      if (n == best_peer) return v;
    return std::nullopt;
  }
};
struct PeersInput {
  std::filesystem::path path;
  std::string gpu_name, descriptor_id;
  std::vector<PeerRow> rows;
  std::string gpu_id;  // id of the GpuInput it belongs to
};
// Reads a peers file: wrong schema, a missing member or one of the wrong type throws JsonFileError
// "file: key: cause" (invalid JSON: "file: not valid JSON (parse error at line N, column M: ...)").
PeersInput load_peers(const std::filesystem::path& file);
// The descriptor a peers file belongs to: the id that is its `descriptor`, else the one whose device
// name is its `gpu`; "" when none of `gpus` is.
std::string gpu_for_peers(const PeersInput& p, const std::vector<GpuInput>& gpus);

struct ReportInput {
  std::vector<GpuInput> gpus;
  // Descriptors shown only for the papers' figures they carry (the numeric tables' A100 column of
  // Sun et al.), when they are not among `gpus`.
  std::vector<GpuInput> references;
  std::vector<ResultsInput> results;
  std::vector<ProfileInput> profiles;
  std::vector<PeersInput> peers;
  std::string command_line;  // recorded in the report
};

// Loads descriptors (strict, load_descriptor), the probes.json beside each one
// (probes_path_for: <dir>/<stem>.probes.json, schema kProbesSchema) and results files
// (validation::load_report); matches results to GPUs by descriptor id,
// descriptor file stem, then device name. A descriptor whose id is taken by an earlier one is
// renamed to its file stem (then stem-2, ...). Profiles (load_profile) go to the descriptor whose id
// (else file stem) is their hardware.id; one that matches none is an error naming the id and the
// descriptors given. Throws std::runtime_error naming the file on bad input.
// Peers files (load_peers) go to the descriptor whose id is their `descriptor`, else whose device
// name is their `gpu`; one that matches none is an error naming both and the descriptors given.
ReportInput load_report_input(const std::vector<std::filesystem::path>& descriptors,
                              const std::vector<std::filesystem::path>& results,
                              const std::vector<std::filesystem::path>& profiles = {},
                              const std::vector<std::filesystem::path>& peers = {});

// Reads a `ceiling profile --out` file (schema ceiling/profile/1) through read_json_file: wrong
// schema, a missing member or one of the wrong type throws JsonFileError "file: key: cause" (invalid
// JSON: "file: not valid JSON (parse error at line N, column M: ...)").
ProfileInput load_profile(const std::filesystem::path& file);

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
