// Internals of the report writer shared between its source files (not a public contract).
#pragma once
#include <nlohmann/json.hpp>

#include <filesystem>
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
  int add(const std::string& text);  // 1-based
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
  std::vector<std::vector<Cell>> rows;
  Notes notes;
};

std::vector<Table> build_tables(const ReportInput& in);
// HTML and Markdown of a table: document.cpp (the renderers), nowhere else.
std::string table_csv(const Table& t);
nlohmann::json table_json(const Table& t);

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

// Provenance text of a field's spec / measured value (expands reference keys of the descriptor).
std::string spec_note(const HardwareDescriptor& hw, const SpecValue& s);
std::string measured_note(const HardwareDescriptor& hw, const MeasuredValue& m, Dimension d);

}  // namespace ceiling::reports::detail
