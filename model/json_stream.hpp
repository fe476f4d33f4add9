// A streaming JSON reader (pull tokens) for files too large to hold as a document: validation
// results of a million rows. nlohmann's parser (our reader for every other JSON file) reads
// 40-65 MB/s here even without building a document (SAX), 15-25 s for a million rows before any
// work; this one reads a file in 1 MiB chunks at several hundred MB/s and never holds it whole.
// Strict RFC 8259: UTF-8 checked, escapes decoded (surrogate pairs), numbers by the grammar and
// parsed with std::from_chars, one top-level value. The limits of json_file.hpp (depth, string
// length) hold while reading. Errors are JsonFileError "file: not valid JSON (cause at line L,
// column C)" and, for a reader's own checks, fail(): "file: key: cause".
#pragma once
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "json_file.hpp"

namespace ceiling {

class JsonPull {
 public:
  enum class Tok { begin_object, end_object, begin_array, end_array, key, string, number, boolean, null, end };

  // Reads `file` (what: "validation results", ...); limits.max_bytes caps the file size.
  JsonPull(const std::filesystem::path& file, const char* what, const JsonLimits& limits);
  // Reads `text` (kept by reference); `name` stands for the file in errors.
  struct FromText {};
  JsonPull(FromText, std::string_view text, std::string name, const JsonLimits& limits);
  ~JsonPull();
  JsonPull(const JsonPull&) = delete;
  JsonPull& operator=(const JsonPull&) = delete;

  // The next token. key and string: text(); number: number(); boolean: flag(). After the
  // top-level value: end (anything but white space after it is an error).
  Tok next();
  const std::string& text() const { return text_; }
  double number() const { return number_; }
  bool flag() const { return flag_; }
  // Skips the rest of a value whose first token `first` was just read (a container: to its end).
  void skip(Tok first);
  // Bytes of the input (the file's size when it was opened).
  std::uint64_t size_hint() const { return size_; }
  // Containers open around the next token (0 at top level).
  int depth() const { return static_cast<int>(stack_.size()); }

  const std::filesystem::path& file() const { return file_; }
  std::string position() const;  // "line L, column C" of the last token
  // "file: key: cause" (key may be empty).
  [[noreturn]] void fail(const std::string& key, const std::string& cause) const;

  static const char* tok_word(Tok t);  // "an object", "a string", ...

 private:
  [[noreturn]] void syntax(const std::string& cause) const;
  bool fill();  // more bytes into the buffer; false at end of input
  int peek_ws();  // skips white space; the next byte or -1 at end
  void read_string();
  void read_number();
  void read_literal(const char* word);
  unsigned read_hex4();
  std::uint64_t here() const;  // offset of p_ in the input

  std::filesystem::path file_;
  JsonLimits limits_;
  std::FILE* fp_ = nullptr;
  std::vector<char> buf_;
  const char* p_ = nullptr;
  const char* end_ = nullptr;
  const char* base_ = nullptr;   // where the buffer's bytes start
  std::uint64_t offset_ = 0;     // input offset of base_
  std::uint64_t line_ = 1;
  std::uint64_t line_start_ = 0;  // file offset where the current line starts
  std::uint64_t tok_offset_ = 0, tok_line_ = 1, tok_line_start_ = 0;
  std::string text_;
  double number_ = 0;
  bool flag_ = false;
  bool started_ = false;
  std::uint64_t size_ = 0;
  // Containers: true = object. state: what the next token may be.
  std::vector<bool> stack_;
  enum class State { value, first_value_or_end, first_key_or_end, key, after_value, done } state_ = State::value;
};

}  // namespace ceiling
