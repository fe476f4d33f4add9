// Small checks used by the report writer and its tests: XML well-formedness, PNG size.
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "report.hpp"

namespace ceiling::reports {

namespace {

bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool is_name_char(char c) {
  return is_name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
}
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

class XmlChecker {
 public:
  explicit XmlChecker(std::string_view t) : t_(t) {}

  bool run(std::string* error) {
    bool ok = document();
    if (!ok && error) *error = "line " + std::to_string(line_at(pos_)) + ": " + err_;
    return ok;
  }

 private:
  std::string_view t_;
  size_t pos_ = 0;
  std::string err_;

  int line_at(size_t p) const {
    int line = 1;
    for (size_t i = 0; i < p && i < t_.size(); ++i)
      if (t_[i] == '\n') ++line;
    return line;
  }
  bool fail(std::string why) {
    err_ = std::move(why);
    return false;
  }
  bool starts(std::string_view s) const { return t_.substr(pos_, s.size()) == s; }
  void skip_space() {
    while (pos_ < t_.size() && is_space(t_[pos_])) ++pos_;
  }
  bool skip_past(std::string_view end, const char* what) {
    size_t e = t_.find(end, pos_);
    if (e == std::string_view::npos) return fail(std::string("unterminated ") + what);
    pos_ = e + end.size();
    return true;
  }
  bool name(std::string* out) {
    if (pos_ >= t_.size() || !is_name_start(t_[pos_])) return fail("expected a name");
    size_t s = pos_;
    while (pos_ < t_.size() && is_name_char(t_[pos_])) ++pos_;
    *out = std::string(t_.substr(s, pos_ - s));
    return true;
  }
  // Character data or attribute value: every '&' must start a known or numeric entity.
  bool text_until(char stop, bool in_attr) {
    while (pos_ < t_.size() && t_[pos_] != stop) {
      char c = t_[pos_];
      if (in_attr && c == '<') return fail("'<' inside an attribute value");
      if (c == '&') {
        size_t semi = t_.find(';', pos_);
        if (semi == std::string_view::npos || semi - pos_ > 12) return fail("bare '&'");
        std::string_view ent = t_.substr(pos_ + 1, semi - pos_ - 1);
        bool known = ent == "lt" || ent == "gt" || ent == "amp" || ent == "quot" || ent == "apos";
        bool numeric = ent.size() > 1 && ent[0] == '#';
        if (!known && !numeric) return fail("unknown entity '&" + std::string(ent) + ";'");
        pos_ = semi + 1;
        continue;
      }
      ++pos_;
    }
    return true;
  }
  bool misc() {  // comments, processing instructions, whitespace outside the root
    for (;;) {
      skip_space();
      if (starts("<!--")) {
        if (!skip_past("-->", "comment")) return false;
      } else if (starts("<?")) {
        if (!skip_past("?>", "processing instruction")) return false;
      } else {
        return true;
      }
    }
  }
  bool doctype() {
    if (!starts("<!DOCTYPE")) return true;
    int depth = 0;  // internal subset in [ ]
    for (; pos_ < t_.size(); ++pos_) {
      if (t_[pos_] == '[') ++depth;
      if (t_[pos_] == ']') --depth;
      if (t_[pos_] == '>' && depth == 0) {
        ++pos_;
        return true;
      }
    }
    return fail("unterminated DOCTYPE");
  }
  bool document() {
    if (!misc() || !doctype() || !misc()) return false;
    if (!starts("<")) return fail("no root element");
    if (!element()) return false;
    if (!misc()) return false;
    if (pos_ != t_.size()) return fail("content after the root element");
    return true;
  }
  bool element() {
    std::vector<std::string> stack;
    for (;;) {
      // at '<'
      ++pos_;
      std::string tag;
      if (!name(&tag)) return false;
      std::vector<std::string> attrs;
      for (;;) {
        bool had_space = pos_ < t_.size() && is_space(t_[pos_]);
        skip_space();
        if (pos_ >= t_.size()) return fail("unterminated tag <" + tag + ">");
        if (starts("/>") || starts(">")) break;
        if (!had_space) return fail("missing space before attribute in <" + tag + ">");
        std::string an;
        if (!name(&an)) return false;
        for (const auto& a : attrs)
          if (a == an) return fail("duplicate attribute '" + an + "' in <" + tag + ">");
        attrs.push_back(an);
        skip_space();
        if (pos_ >= t_.size() || t_[pos_] != '=') return fail("attribute '" + an + "' without value");
        ++pos_;
        skip_space();
        if (pos_ >= t_.size() || (t_[pos_] != '"' && t_[pos_] != '\''))
          return fail("unquoted value of attribute '" + an + "'");
        char q = t_[pos_++];
        if (!text_until(q, true)) return false;
        if (pos_ >= t_.size()) return fail("unterminated value of attribute '" + an + "'");
        ++pos_;
      }
      if (starts("/>")) {
        pos_ += 2;
      } else {
        ++pos_;
        stack.push_back(tag);
      }
      // content until the next start tag, or closing tags
      for (;;) {
        if (stack.empty()) return true;
        if (!text_until('<', false)) return false;
        if (pos_ >= t_.size()) return fail("unclosed element <" + stack.back() + ">");
        if (starts("<!--")) {
          if (!skip_past("-->", "comment")) return false;
        } else if (starts("<![CDATA[")) {
          if (!skip_past("]]>", "CDATA section")) return false;
        } else if (starts("<?")) {
          if (!skip_past("?>", "processing instruction")) return false;
        } else if (starts("</")) {
          pos_ += 2;
          std::string close;
          if (!name(&close)) return false;
          skip_space();
          if (pos_ >= t_.size() || t_[pos_] != '>') return fail("malformed closing tag </" + close);
          ++pos_;
          if (close != stack.back())
            return fail("</" + close + "> closes <" + stack.back() + ">");
          stack.pop_back();
        } else {
          break;  // a child start tag
        }
      }
    }
  }
};

}  // namespace

bool xml_well_formed(std::string_view text, std::string* error) {
  return XmlChecker(text).run(error);
}

std::optional<PngSize> png_size(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  unsigned char h[24];
  if (!in.read(reinterpret_cast<char*>(h), sizeof h)) return std::nullopt;
  static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  for (int i = 0; i < 8; ++i)
    if (h[i] != sig[i]) return std::nullopt;
  if (h[12] != 'I' || h[13] != 'H' || h[14] != 'D' || h[15] != 'R') return std::nullopt;
  auto be32 = [&](int o) {
    return static_cast<int>((uint32_t(h[o]) << 24) | (uint32_t(h[o + 1]) << 16) |
                            (uint32_t(h[o + 2]) << 8) | uint32_t(h[o + 3]));
  };
  return PngSize{be32(16), be32(20)};
}

}  // namespace ceiling::reports
