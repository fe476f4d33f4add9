// The streaming JSON reader (json_stream.hpp).
#include "json_stream.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <system_error>

namespace ceiling {
namespace fs = std::filesystem;

namespace {
constexpr std::size_t kChunk = std::size_t{1} << 20;
constexpr std::size_t kMaxNumberChars = 1024;

std::string show_byte(int c) {
  if (c < 0) return "end of input";
  if (c >= 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
  char b[16];
  std::snprintf(b, sizeof b, "byte 0x%02x", c & 0xff);
  return b;
}

void append_utf8(std::string& out, unsigned cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

// JSON number grammar: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
bool number_grammar(std::string_view s) {
  std::size_t i = 0, n = s.size();
  auto digits = [&] {
    std::size_t b = i;
    while (i < n && s[i] >= '0' && s[i] <= '9') ++i;
    return i > b;
  };
  if (i < n && s[i] == '-') ++i;
  if (i >= n) return false;
  if (s[i] == '0') ++i;
  else if (!digits()) return false;
  if (i < n && s[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == n;
}
}  // namespace

JsonPull::JsonPull(const fs::path& file, const char* what, const JsonLimits& limits) : file_(file), limits_(limits) {
  std::error_code ec;
  const auto st = fs::status(file, ec);
  if (ec || !fs::exists(st))
    throw JsonFileError(file, "", std::string("cannot open ") + what + " (" + (ec ? ec.message() : "no such file") + ")");
  if (fs::is_directory(st)) throw JsonFileError(file, "", "not a regular file (a directory)");
  if (!fs::is_regular_file(st)) throw JsonFileError(file, "", "not a regular file");
  const auto size = fs::file_size(file, ec);
  if (ec) throw JsonFileError(file, "", std::string("cannot read ") + what + " (" + ec.message() + ")");
  if (size > limits.max_bytes)
    throw JsonFileError(file, "", "too large: " + std::to_string(size) + " bytes, the limit for " + what + " is " +
                                      std::to_string(limits.max_bytes));
  size_ = size;
  fp_ = std::fopen(file.c_str(), "rb");
  if (!fp_) throw JsonFileError(file, "", std::string("cannot open ") + what + " (" + std::strerror(errno) + ")");
  buf_.resize(kChunk);
  base_ = p_ = end_ = buf_.data();
}

JsonPull::JsonPull(FromText, std::string_view text, std::string name, const JsonLimits& limits)
    : file_(std::move(name)), limits_(limits) {
  p_ = text.data();
  end_ = text.data() + text.size();
  base_ = p_;
  size_ = text.size();
}

JsonPull::~JsonPull() {
  if (fp_) std::fclose(fp_);
}

bool JsonPull::fill() {
  if (!fp_) return false;
  offset_ += static_cast<std::uint64_t>(end_ - base_);
  const std::size_t n = std::fread(buf_.data(), 1, buf_.size(), fp_);
  if (n == 0) {
    if (std::ferror(fp_)) throw JsonFileError(file_, "", std::string("cannot read (") + std::strerror(errno) + ")");
    base_ = p_ = end_ = buf_.data();
    return false;
  }
  base_ = p_ = buf_.data();
  end_ = p_ + n;
  return true;
}

std::uint64_t JsonPull::here() const { return offset_ + static_cast<std::uint64_t>(p_ - base_); }

std::string JsonPull::position() const {
  return "line " + std::to_string(tok_line_) + ", column " + std::to_string(tok_offset_ - tok_line_start_ + 1);
}

void JsonPull::syntax(const std::string& cause) const {
  const std::uint64_t at = here();
  throw JsonFileError(file_, "",
                      "not valid JSON (" + cause + " at line " + std::to_string(line_) + ", column " +
                          std::to_string(at - line_start_ + 1) + ")");
}

void JsonPull::fail(const std::string& key, const std::string& cause) const { throw JsonFileError(file_, key, cause); }

const char* JsonPull::tok_word(Tok t) {
  switch (t) {
    case Tok::begin_object: return "an object";
    case Tok::begin_array: return "an array";
    case Tok::string: return "a string";
    case Tok::number: return "a number";
    case Tok::boolean: return "true or false";
    case Tok::null: return "null";
    case Tok::key: return "a key";
    default: return "the end of a container";
  }
}

int JsonPull::peek_ws() {
  for (;;) {
    while (p_ < end_) {
      const char c = *p_;
      if (c == ' ' || c == '\t' || c == '\r') {
        ++p_;
      } else if (c == '\n') {
        ++p_;
        ++line_;
        line_start_ = here();
      } else {
        return static_cast<unsigned char>(c);
      }
    }
    if (!fill()) return -1;
  }
}

unsigned JsonPull::read_hex4() {
  unsigned v = 0;
  for (int k = 0; k < 4; ++k) {
    if (p_ == end_ && !fill()) syntax("unterminated string");
    const char c = *p_;
    unsigned d;
    if (c >= '0' && c <= '9') d = static_cast<unsigned>(c - '0');
    else if (c >= 'a' && c <= 'f') d = static_cast<unsigned>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') d = static_cast<unsigned>(c - 'A' + 10);
    else syntax("\\u must be followed by 4 hex digits, got " + show_byte(static_cast<unsigned char>(c)));
    ++p_;
    v = v * 16 + d;
  }
  return v;
}

void JsonPull::read_string() {
  text_.clear();
  auto next_byte = [this]() -> int {
    if (p_ == end_ && !fill()) return -1;
    return static_cast<unsigned char>(*p_++);
  };
  for (;;) {
    // Fast path: a run of plain ASCII in the buffer.
    const char* s = p_;
    while (p_ < end_) {
      const auto u = static_cast<unsigned char>(*p_);
      if (u < 0x20 || u == '"' || u == '\\' || u >= 0x80) break;
      ++p_;
    }
    text_.append(s, static_cast<std::size_t>(p_ - s));
    if (text_.size() > limits_.max_string_bytes)
      throw JsonFileError(file_, "", "a string longer than " + std::to_string(limits_.max_string_bytes) + " bytes");
    if (p_ == end_) {  // the run reached the end of the buffer: more, and scan on
      if (!fill()) syntax("unterminated string");
      continue;
    }
    const int c = static_cast<unsigned char>(*p_++);  // '"', '\\', a control byte or a UTF-8 lead byte
    if (c == '"') return;
    if (c == '\\') {
      const int e = next_byte();
      switch (e) {
        case '"': text_ += '"'; break;
        case '\\': text_ += '\\'; break;
        case '/': text_ += '/'; break;
        case 'b': text_ += '\b'; break;
        case 'f': text_ += '\f'; break;
        case 'n': text_ += '\n'; break;
        case 'r': text_ += '\r'; break;
        case 't': text_ += '\t'; break;
        case 'u': {
          unsigned cp = read_hex4();
          if (cp >= 0xdc00 && cp <= 0xdfff) syntax("a lone low surrogate \\u" + std::to_string(cp) + " in a string");
          if (cp >= 0xd800 && cp <= 0xdbff) {
            if (next_byte() != '\\' || next_byte() != 'u') syntax("a high surrogate not followed by \\u and a low one");
            const unsigned lo = read_hex4();
            if (lo < 0xdc00 || lo > 0xdfff) syntax("a high surrogate not followed by a low one");
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          }
          append_utf8(text_, cp);
          break;
        }
        default: syntax("invalid escape \\" + (e < 0 ? std::string("at end of input") : show_byte(e)) + " in a string");
      }
      continue;
    }
    if (c < 0x20) syntax("control character " + show_byte(c) + " in a string (escape it)");
    // UTF-8: a lead byte and its continuation bytes; no overlong forms, no surrogates, <= U+10FFFF.
    int len;
    unsigned cp;
    if (c >= 0xc2 && c <= 0xdf) len = 2, cp = static_cast<unsigned>(c & 0x1f);
    else if (c >= 0xe0 && c <= 0xef) len = 3, cp = static_cast<unsigned>(c & 0x0f);
    else if (c >= 0xf0 && c <= 0xf4) len = 4, cp = static_cast<unsigned>(c & 0x07);
    else syntax("invalid UTF-8 (" + show_byte(c) + ") in a string");
    text_ += static_cast<char>(c);
    for (int k = 1; k < len; ++k) {
      const int b = next_byte();
      if (b < 0 || (b & 0xc0) != 0x80) syntax("invalid UTF-8 (a truncated sequence) in a string");
      cp = (cp << 6) | static_cast<unsigned>(b & 0x3f);
      text_ += static_cast<char>(b);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
      syntax("invalid UTF-8 (an overlong form, a surrogate or past U+10FFFF) in a string");
  }
}

void JsonPull::read_number() {
  text_.clear();
  for (;;) {
    const char* s = p_;
    while (p_ < end_) {
      const char c = *p_;
      if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') ++p_;
      else break;
    }
    text_.append(s, static_cast<std::size_t>(p_ - s));
    if (text_.size() > kMaxNumberChars) syntax("a number longer than " + std::to_string(kMaxNumberChars) + " characters");
    if (p_ < end_ || !fill()) break;
  }
  if (!number_grammar(text_)) syntax("invalid number '" + text_ + "'");
  const char* b = text_.data();
  const char* e = b + text_.size();
  const auto r = std::from_chars(b, e, number_);
  if (r.ec == std::errc::result_out_of_range) {
    // Past a double: an error (a value must mean what it says); below the smallest: strtod's
    // nearest (0 or a subnormal), as every JSON reader does.
    const double v = std::strtod(text_.c_str(), nullptr);
    if (std::isinf(v)) syntax("number overflow parsing '" + text_ + "'");
    number_ = v;
  } else if (r.ec != std::errc{} || r.ptr != e) {
    syntax("invalid number '" + text_ + "'");
  }
}

void JsonPull::read_literal(const char* word) {
  for (const char* w = word; *w; ++w) {
    if (p_ == end_ && !fill()) syntax(std::string("unexpected end of input in '") + word + "'");
    if (*p_ != *w) syntax(std::string("invalid literal (expected '") + word + "')");
    ++p_;
  }
}

JsonPull::Tok JsonPull::next() {
  if (!started_) {
    // A UTF-8 byte order mark before the value is skipped, as nlohmann's reader does.
    started_ = true;
    if (peek_ws() == 0xef) {
      read_literal("\xef\xbb\xbf");
    }
  }
  for (;;) {
    const int c = peek_ws();
    tok_offset_ = here();
    tok_line_ = line_;
    tok_line_start_ = line_start_;
    switch (state_) {
      case State::done:
        if (c < 0) return Tok::end;
        syntax("unexpected " + show_byte(c) + " after the top-level value");
      case State::after_value:
        if (stack_.empty()) {
          state_ = State::done;
          continue;
        }
        if (c == ',') {
          ++p_;
          state_ = stack_.back() ? State::key : State::value;
          continue;
        }
        if (stack_.back() && c == '}') {
          ++p_;
          stack_.pop_back();
          return Tok::end_object;
        }
        if (!stack_.back() && c == ']') {
          ++p_;
          stack_.pop_back();
          return Tok::end_array;
        }
        syntax(std::string("expected ',' or '") + (stack_.back() ? "}" : "]") + "', got " + show_byte(c));
      case State::first_key_or_end:
        if (c == '}') {
          ++p_;
          stack_.pop_back();
          state_ = State::after_value;
          return Tok::end_object;
        }
        [[fallthrough]];
      case State::key:
        if (c != '"') syntax("expected a key (a string), got " + show_byte(c));
        ++p_;
        read_string();
        if (peek_ws() != ':') syntax("expected ':' after a key");
        ++p_;
        state_ = State::value;
        return Tok::key;
      case State::first_value_or_end:
        if (c == ']') {
          ++p_;
          stack_.pop_back();
          state_ = State::after_value;
          return Tok::end_array;
        }
        [[fallthrough]];
      case State::value:
        if (c == '{' || c == '[') {
          if (static_cast<int>(stack_.size()) >= limits_.max_depth)
            throw JsonFileError(file_, "", "nested deeper than " + std::to_string(limits_.max_depth) + " levels");
          ++p_;
          stack_.push_back(c == '{');
          state_ = c == '{' ? State::first_key_or_end : State::first_value_or_end;
          return c == '{' ? Tok::begin_object : Tok::begin_array;
        }
        state_ = State::after_value;
        if (c == '"') {
          ++p_;
          read_string();
          return Tok::string;
        }
        if (c == '-' || (c >= '0' && c <= '9')) {
          read_number();
          return Tok::number;
        }
        if (c == 't' || c == 'f') {
          read_literal(c == 't' ? "true" : "false");
          flag_ = c == 't';
          return Tok::boolean;
        }
        if (c == 'n') {
          read_literal("null");
          return Tok::null;
        }
        syntax(c < 0 ? std::string("unexpected end of input") : "unexpected " + show_byte(c));
    }
  }
}

void JsonPull::skip(Tok first) {
  if (first != Tok::begin_object && first != Tok::begin_array) return;
  const std::size_t target = stack_.size() - 1;
  while (stack_.size() > target) next();
}

}  // namespace ceiling
