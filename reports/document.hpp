// The report as a document: what it says, in sections of blocks, apart from how it is written.
// write_report builds one Document; render_html and render_markdown are the only places that
// produce HTML or Markdown text, so index.html and report.md carry the same sections in the
// same order.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "detail.hpp"

namespace ceiling::reports {

// A run of text with one style; an Inline is a line of them.
struct Span {
  enum class Kind { text, code, link, emphasis, strong };
  Kind kind = Kind::text;
  std::string text;
  std::string href;  // links only: a path relative to the report directory or "#id"

  static Span plain(std::string t) { return {Kind::text, std::move(t), {}}; }
  static Span code(std::string t) { return {Kind::code, std::move(t), {}}; }
  static Span link(std::string t, std::string href) { return {Kind::link, std::move(t), std::move(href)}; }
  static Span emphasis(std::string t) { return {Kind::emphasis, std::move(t), {}}; }
  static Span strong(std::string t) { return {Kind::strong, std::move(t), {}}; }
};
using Inline = std::vector<Span>;

struct Paragraph {
  Inline text;
  bool caption = false;  // small print under a table, list or section
};

struct List {
  std::vector<Inline> items;
};

struct TableBlock {
  detail::Table table;
  std::vector<std::string> data_files;  // its CSV/JSON beside the report, relative paths
};

// A rendered plot, or the reason there is none.
struct Figure {
  std::string id;       // the plot's file stem: anchor and prefix of the inline SVG's ids
  std::string title;
  std::string caption;  // how to read it
  std::string svg;      // the SVG document gnuplot wrote; empty when not rendered
  std::string image;    // the image file Markdown shows (relative path); empty when not rendered
  std::string missing_reason;
  std::vector<std::string> files;  // data, script and images beside the report
};

// A remark that stands out from the text, e.g. why a section is empty.
struct Note {
  Inline text;
};

using Block = std::variant<Paragraph, List, TableBlock, Figure, Note>;

struct Section {
  std::string id;     // HTML anchor
  std::string title;
  std::vector<Block> blocks;
};

struct Document {
  std::string title;
  std::vector<Inline> meta;     // lines under the title: date, tool, command, plotting
  std::vector<Inline> summary;  // one item per GPU
  Inline summary_note;          // read-me under the summary
  std::vector<std::string> warnings;
  std::vector<Section> sections;  // after the summary, in reading order
};

// The summary's heading: the first section of every rendering.
inline constexpr const char* kSummaryId = "summary";
inline constexpr const char* kSummaryTitle = "Summary";

// (id, title) of every section as rendered, the summary first.
std::vector<std::pair<std::string, std::string>> section_headings(const Document& d);

// A self-contained, well-formed HTML page (inline CSS and SVG, no scripts).
std::string render_html(const Document& d);
// GitHub-flavoured Markdown; plots are linked as image files.
std::string render_markdown(const Document& d);
// [{"id": ..., "title": ...}] of section_headings, for report.json.
nlohmann::json sections_json(const Document& d);

}  // namespace ceiling::reports
