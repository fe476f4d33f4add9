// Internals of the report writer shared between its source files (not a public contract).
#pragma once
#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <unordered_map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report.hpp"

namespace ceiling::reports::detail {

struct ProcessResult {
  int exit_code = -1;
  bool timed_out = false;
  std::string output;  // stdout and stderr together
};
// fork/exec with a working directory and a time limit; never throws.
ProcessResult run_process(const std::vector<std::string>& argv, const std::filesystem::path& cwd,
                          double timeout_s);

std::string fnv1a(const std::string& s);  // FNV-1a 64 in hex: the manifest's hash of a file
std::string fnv1a_file(const std::filesystem::path& p);  // the same, read in chunks ("" when unreadable)
// The manifest's hash since 2026-11-25 ("hash"): FNV-1a over 64-bit little-endian words (8x
// faster; gigabyte tables), the tail bytewise; returned with kWordHashPrefix. A manifest entry of
// an older report ("fnv1a") is checked with fnv1a_file: same_hash_as picks by the recorded text.
inline constexpr const char* kWordHashPrefix = "w:";
std::string word_hash_file(const std::filesystem::path& p);
std::string same_hash_as(const std::filesystem::path& p, const std::string& recorded);
std::string read_file(const std::filesystem::path& p);  // "" when unreadable
void write_file(const std::filesystem::path& p, const std::string& content);  // throws

std::string html_escape(std::string_view s);  // document.cpp, for the renderers
std::string md_escape(std::string_view s);    // for GFM table cells
std::string csv_field(std::string_view s);     // RFC 4180 quoting when needed
std::string gp_string(std::string_view s);     // a gnuplot single-quoted string literal
std::string exact(double v);                   // %.17g: round-trips
std::string short_num(double v, int sig = 4);  // %.{sig}g

std::string mark_missing_measured();  // "— not measured"
std::string mark_missing_spec();      // "— no spec"

// Footnotes of one table: each distinct provenance text gets a number.
struct Notes {
  std::vector<std::string> items;
  int add(const std::string& text);  // 1-based; the same text gets the same number
 private:
  std::unordered_map<std::string, int> index_;  // text -> number (a million rows' notes stay linear)
};

struct Cell {
  std::string text;              // what a reader sees (unit included)
  std::optional<double> value;   // base unit, exact; nullopt for text or missing
  std::string source;            // "spec" | "measured" | "derived" | "missing" | "text" | "label"
  int note = 0;                  // footnote number, 0 = none
  int span = 1;                  // HTML colspan
  std::string gpu;               // descriptor id the number belongs to
  std::string field;             // descriptor path ("memory.dram.bandwidth", "tensor:<key>.latency")
  std::string dimension;         // to_string(Dimension) of value
};

struct Table {
  std::string id;       // file stem of its CSV/JSON: "table-platform"
  std::string title;    // "Platform (GPGPU'25 Table 1)"
  std::string caption;
  int caption_note = 0;
  std::vector<std::pair<std::string, int>> groups;  // first header row: label, span (may be empty)
  std::vector<std::string> columns;                 // second header row
  std::vector<std::vector<Cell>> rows;  // every row, or the first kShownRows of a long table
  Notes notes;                          // of `rows`
  // A long table (a results file of many rows): `rows` holds the first kShownRows (what the HTML,
  // Markdown and report.json show; the caption says so), total_rows counts them all, and
  // make_row(i, row, notes) makes row i for the CSV and JSON files, which are written row by row.
  std::size_t total_rows = 0;  // 0: rows is the whole table
  std::function<void(std::size_t, std::vector<Cell>&, Notes&)> make_row;
  std::size_t row_count() const { return make_row ? total_rows : rows.size(); }
};
// Rows a long table shows in the document (its files hold every row).
inline constexpr std::size_t kShownRows = 1000;

std::vector<Table> build_tables(const ReportInput& in);

// Profiled kernels (ReportInput::profiles): the plots mark the first kProfileMarks rows of each
// profile's table (kernels by time share) with a letter, "A".."H" ("1A", "2A", ... with several files).
inline constexpr std::size_t kProfileMarks = 8;
std::string profile_mark(const ReportInput& in, std::size_t profile, std::size_t rank);  // "" past kProfileMarks
// What the report calls each kernel of a profile: its short name, with the template arguments of
// its full name where two kernels share a short name (as `ceiling profile` prints them).
std::vector<std::string> profile_kernel_labels(const ProfileInput& p);
std::string profile_table_id(const ReportInput& in, std::size_t profile);  // "table-profile-<gpu>[-<n>]"
// HTML and Markdown of a table: document.cpp (the renderers), nowhere else.
std::string table_csv(const Table& t);  // every row (a long table's made on the way)
// The table as JSON: every row; with shown_only, a long table's shown rows and "rows_total".
nlohmann::json table_json(const Table& t, bool shown_only = false);
// <dir>/<id>.csv and <dir>/<id>.json written row by row (a long table never exists whole in memory).
void write_table_files(const Table& t, const std::filesystem::path& dir);

// One plot: the data and the gnuplot commands that draw it (terminal/output set by the caller).
struct PlotSpec {
  std::string name;      // file stem
  std::string title;
  std::string gpu_id;
  std::string caption;   // what the reader sees and how to read it
  std::string datablocks;  // gnuplot "$name << EOD" blocks, defined once
  std::string body;        // plot commands, run once per terminal
  std::string csv;         // the data behind the plot
  nlohmann::json data;     // the same, as JSON
  int width = 1000, height = 700;
  std::string missing_reason;  // non-empty: no data to plot (no files but a mention)
};

std::vector<PlotSpec> build_plots(const ReportInput& in, std::vector<std::string>* warnings);
// The full .gp text: writes <name>.svg and <name>.png (png_terminal: "pngcairo" or "png").
std::string plot_script(const PlotSpec& p, const std::string& png_terminal);

// Tensor-core power (power.cpp; Luo et al. Table XI): "table-power" (Table XI's rows, ours per GPU beside
// the paper's), "table-power-other" (every other instruction with a reading) and "power-<id>" (E per
// Table XI row, ours beside the paper's H800, A100 and RTX 4090).
Table power_table(const ReportInput& in);
Table power_other_table(const ReportInput& in);
PlotSpec power_plot(const GpuInput& g);

// The one-run comparison with the public suites (peers.cpp; docs/PEERS.md): "table-peers" (every
// peers file's rows) and "peers-<id>" (ours / best peer per rate figure, one plot per file).
Table peers_table(const ReportInput& in);
PlotSpec peers_plot(const PeersInput& p);

// Provenance text of a field's spec / measured value (expands reference keys of the descriptor).
std::string spec_note(const HardwareDescriptor& hw, const SpecValue& s);
std::string measured_note(const HardwareDescriptor& hw, const MeasuredValue& m, Dimension d);

}  // namespace ceiling::reports::detail
