// An error in an input file (descriptor, kernel file): "file:line:column: key: cause".
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>

namespace ceiling {

// An error message on one line: input text quoted in a message may hold newlines or other control
// characters (a YAML escape, a unit); they are written as \n, \t, \xNN (docs/RELIABILITY.md).
inline std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

class InputFileError : public std::runtime_error {
 public:
  InputFileError(std::string file, int line, int column, std::string key, std::string cause)
      : std::runtime_error(one_line(file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " +
                                    (key.empty() ? std::string{} : key + ": ") + cause)),
        file_(std::move(file)),
        key_(std::move(key)),
        cause_(std::move(cause)),
        line_(line),
        column_(column) {}
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  int column() const { return column_; }
  const std::string& key() const { return key_; }
  const std::string& cause() const { return cause_; }

 private:
  std::string file_, key_, cause_;
  int line_, column_;
};

}  // namespace ceiling
