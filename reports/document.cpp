// The renderers: a Document as HTML and as Markdown. The only HTML and Markdown text of the
// report is written here.
#include "document.hpp"

#include <sstream>

namespace ceiling::reports {

namespace detail {

std::string html_escape(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string md_escape(std::string_view s) {
  std::string o;
  for (char c : s) {
    if (c == '|') o += "\\|";
    else if (c == '\n') o += ' ';
    else o += c;
  }
  return o;
}

}  // namespace detail

namespace {

using detail::html_escape;
using detail::md_escape;

template <class... F>
struct Overload : F... {
  using F::operator()...;
};
template <class... F>
Overload(F...) -> Overload<F...>;

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
.note { background: #f4f4f4; border-left: 4px solid #bbb; padding: 0.5em 1em; }
.warn { background: #fff6e0; border-left: 4px solid #e0a800; padding: 0.5em 1em; }
code { background: #f4f4f4; padding: 0 0.2em; }
)CSS";

// ---- HTML ----

std::string inline_html(const Inline& line) {
  std::string o;
  for (const auto& s : line) {
    switch (s.kind) {
      case Span::Kind::text: o += html_escape(s.text); break;
      case Span::Kind::code: o += "<code>" + html_escape(s.text) + "</code>"; break;
      case Span::Kind::link: o += "<a href=\"" + html_escape(s.href) + "\">" + html_escape(s.text) + "</a>"; break;
      case Span::Kind::emphasis: o += "<i>" + html_escape(s.text) + "</i>"; break;
      case Span::Kind::strong: o += "<b>" + html_escape(s.text) + "</b>"; break;
    }
  }
  return o;
}

std::string list_html(const std::vector<Inline>& items) {
  std::string o = "<ul>\n";
  for (const auto& i : items) o += "<li>" + inline_html(i) + "</li>\n";
  return o + "</ul>\n";
}

std::string table_html(const detail::Table& t) {
  std::ostringstream o;
  o << "<section class=\"table\" id=\"" << html_escape(t.id) << "\">\n<h3>" << html_escape(t.title) << "</h3>\n";
  o << "<p class=\"caption\">" << html_escape(t.caption);
  if (t.caption_note) o << " <sup>" << t.caption_note << "</sup>";
  o << "</p>\n<div class=\"scroll\"><table>\n<thead>\n";
  if (!t.groups.empty()) {
    o << "<tr>";
    for (const auto& [g, span] : t.groups)
      o << "<th" << (span > 1 ? " colspan=\"" + std::to_string(span) + "\"" : "") << " class=\"group\">"
        << html_escape(g) << "</th>";
    o << "</tr>\n";
  }
  o << "<tr>";
  for (const auto& c : t.columns) o << "<th>" << html_escape(c) << "</th>";
  o << "</tr>\n</thead>\n<tbody>\n";
  for (const auto& row : t.rows) {
    o << "<tr>";
    for (const auto& c : row) {
      const char* tag = c.source == "label" ? "th" : "td";
      o << "<" << tag << " class=\"" << html_escape(c.source) << "\""
        << (c.span > 1 ? " colspan=\"" + std::to_string(c.span) + "\"" : "") << ">" << html_escape(c.text);
      if (c.note) o << "<sup>" << c.note << "</sup>";
      o << "</" << tag << ">";
    }
    o << "</tr>\n";
  }
  o << "</tbody>\n</table></div>\n";
  if (!t.notes.items.empty()) {
    o << "<ol class=\"notes\">\n";
    for (const auto& n : t.notes.items) o << "<li>" << html_escape(n) << "</li>\n";
    o << "</ol>\n";
  }
  o << "</section>\n";
  return o.str();
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
  replace_all("<title>Gnuplot</title>", "<title>" + html_escape(title) + "</title>");
  s.replace(0, 4, "<svg class=\"plot\" role=\"img\" aria-label=\"" + html_escape(title) + "\"");
  return s;
}

std::string figure_html(const Figure& f) {
  std::ostringstream o;
  o << "<figure id=\"" << html_escape(f.id) << "\">\n";
  std::string svg = f.svg.empty() ? std::string() : inline_svg(f.svg, f.id, f.title);
  if (!svg.empty()) {
    o << svg << "\n";
  } else {
    std::string why = !f.missing_reason.empty() ? f.missing_reason
                      : f.svg.empty()           ? std::string("no image")
                                                : std::string("the SVG has no <svg> element");
    o << "<div class=\"missing-plot\">Plot missing: " << html_escape(why) << "</div>\n";
  }
  o << "<figcaption><b>" << html_escape(f.title) << ".</b> " << html_escape(f.caption);
  if (!f.files.empty()) {
    o << "<br/><span class=\"files\">";
    for (const auto& file : f.files) o << "<a href=\"" << html_escape(file) << "\">" << html_escape(file) << "</a>";
    o << "</span>";
  }
  o << "</figcaption>\n</figure>\n";
  return o.str();
}

std::string data_files_inline_html(const std::vector<std::string>& files) {
  Inline line{Span::plain("Data: ")};
  for (size_t i = 0; i < files.size(); ++i) {
    if (i) line.push_back(Span::plain(", "));
    line.push_back(Span::link(files[i], files[i]));
  }
  return inline_html(line);
}

std::string block_html(const Block& b) {
  return std::visit(
      Overload{
          [](const Paragraph& p) {
            return std::string(p.caption ? "<p class=\"caption\">" : "<p>") + inline_html(p.text) + "</p>\n";
          },
          [](const List& l) { return list_html(l.items); },
          [](const TableBlock& t) {
            std::string o = table_html(t.table);
            if (!t.data_files.empty()) o += "<p class=\"caption\">" + data_files_inline_html(t.data_files) + "</p>\n";
            return o;
          },
          [](const Figure& f) { return figure_html(f); },
          [](const Note& n) { return "<p class=\"note\">" + inline_html(n.text) + "</p>\n"; },
      },
      b);
}

// ---- Markdown ----

std::string md_href(const std::string& href) {
  return href.find_first_of(" ()<>") == std::string::npos ? href : "<" + href + ">";
}

std::string md_code(const std::string& text) {
  std::string fence = text.find('`') == std::string::npos ? "`" : "``";
  std::string pad = fence.size() > 1 ? " " : "";
  return fence + pad + text + pad + fence;
}

std::string inline_md(const Inline& line) {
  std::string o;
  for (const auto& s : line) {
    switch (s.kind) {
      case Span::Kind::text: o += s.text; break;
      case Span::Kind::code: o += md_code(s.text); break;
      case Span::Kind::link: o += "[" + s.text + "](" + md_href(s.href) + ")"; break;
      case Span::Kind::emphasis: o += "*" + s.text + "*"; break;
      case Span::Kind::strong: o += "**" + s.text + "**"; break;
    }
  }
  return o;
}

std::string list_md(const std::vector<Inline>& items) {
  std::string o;
  for (const auto& i : items) o += "- " + inline_md(i) + "\n";
  return o + "\n";
}

std::string table_markdown(const detail::Table& t) {
  std::ostringstream o;
  o << "### " << t.title << "\n\n" << t.caption;
  if (t.caption_note) o << " [" << t.caption_note << "]";
  o << "\n\n";
  // GFM has no colspan: group names are folded into the column names.
  std::vector<std::string> cols;
  size_t ci = 0;
  for (const auto& [g, span] : t.groups)
    for (int k = 0; k < span && ci < t.columns.size(); ++k, ++ci)
      cols.push_back(g.empty() ? t.columns[ci] : g + " " + t.columns[ci]);
  for (; ci < t.columns.size(); ++ci) cols.push_back(t.columns[ci]);
  o << "|";
  for (const auto& c : cols) o << " " << md_escape(c) << " |";
  o << "\n|";
  for (size_t i = 0; i < cols.size(); ++i) o << (i == 0 ? "---|" : "---:|");
  o << "\n";
  for (const auto& row : t.rows) {
    o << "|";
    for (const auto& c : row) {
      std::string text = md_escape(c.text) + (c.note ? " [" + std::to_string(c.note) + "]" : "");
      if (c.source == "label") text = "**" + text + "**";
      o << " " << text << " |";
      for (int k = 1; k < c.span; ++k) o << " |";
    }
    o << "\n";
  }
  o << "\n";
  for (size_t i = 0; i < t.notes.items.size(); ++i) o << "[" << (i + 1) << "] " << t.notes.items[i] << "  \n";
  o << "\n";
  return o.str();
}

std::string figure_md(const Figure& f) {
  std::ostringstream o;
  o << "#### " << f.title << "\n\n";
  if (!f.image.empty())
    o << "![" << f.title << "](" << md_href(f.image) << ")\n\n";
  else
    o << "*Plot missing: " << (f.missing_reason.empty() ? std::string("no image") : f.missing_reason) << "*\n\n";
  o << f.caption << "\n\n";
  if (!f.files.empty()) {
    o << "Files:";
    for (const auto& file : f.files) o << " [" << file << "](" << md_href(file) << ")";
    o << "\n\n";
  }
  return o.str();
}

std::string block_md(const Block& b) {
  return std::visit(
      Overload{
          [](const Paragraph& p) { return inline_md(p.text) + "\n\n"; },
          [](const List& l) { return list_md(l.items); },
          [](const TableBlock& t) {
            std::string o = table_markdown(t.table);
            if (!t.data_files.empty()) {
              o += "Data:";
              for (size_t i = 0; i < t.data_files.size(); ++i)
                o += std::string(i ? ", " : " ") + "[" + t.data_files[i] + "](" + md_href(t.data_files[i]) + ")";
              o += "\n\n";
            }
            return o;
          },
          [](const Figure& f) { return figure_md(f); },
          [](const Note& n) { return "> " + inline_md(n.text) + "\n\n"; },
      },
      b);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> section_headings(const Document& d) {
  std::vector<std::pair<std::string, std::string>> out{{kSummaryId, kSummaryTitle}};
  for (const auto& s : d.sections) out.push_back({s.id, s.title});
  return out;
}

std::string render_html(const Document& d) {
  std::ostringstream h;
  h << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
    << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
    << "<title>" << html_escape(d.title) << "</title>\n<style>" << kCss << "</style>\n</head>\n<body>\n";
  h << "<h1>" << html_escape(d.title) << "</h1>\n";
  for (const auto& m : d.meta) h << "<p class=\"meta\">" << inline_html(m) << "</p>\n";
  h << "<h2 id=\"" << kSummaryId << "\">" << kSummaryTitle << "</h2>\n" << list_html(d.summary);
  if (!d.summary_note.empty()) h << "<p class=\"caption\">" << inline_html(d.summary_note) << "</p>\n";
  if (!d.warnings.empty()) {
    h << "<div class=\"warn\"><b>Warnings</b><ul>\n";
    for (const auto& w : d.warnings) h << "<li>" << html_escape(w) << "</li>\n";
    h << "</ul></div>\n";
  }
  if (!d.sections.empty()) {
    h << "<nav><ul>\n";
    for (const auto& s : d.sections)
      h << "<li><a href=\"#" << html_escape(s.id) << "\">" << html_escape(s.title) << "</a></li>\n";
    h << "</ul></nav>\n";
  }
  for (const auto& s : d.sections) {
    h << "<h2 id=\"" << html_escape(s.id) << "\">" << html_escape(s.title) << "</h2>\n";
    for (const auto& b : s.blocks) h << block_html(b);
  }
  h << "</body>\n</html>\n";
  return h.str();
}

std::string render_markdown(const Document& d) {
  std::ostringstream md;
  md << "# " << d.title << "\n\n";
  for (const auto& m : d.meta) md << inline_md(m) << "\n\n";
  md << "## " << kSummaryTitle << "\n\n" << list_md(d.summary);
  if (!d.summary_note.empty()) md << inline_md(d.summary_note) << "\n\n";
  if (!d.warnings.empty()) {
    md << "**Warnings**\n\n";
    for (const auto& w : d.warnings) md << "- " << w << "\n";
    md << "\n";
  }
  for (const auto& s : d.sections) {
    md << "## " << s.title << "\n\n";
    for (const auto& b : s.blocks) md << block_md(b);
  }
  return md.str();
}

nlohmann::json sections_json(const Document& d) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& [id, title] : section_headings(d)) a.push_back({{"id", id}, {"title", title}});
  return a;
}

}  // namespace ceiling::reports
