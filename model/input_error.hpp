// An error in an input file (descriptor, kernel file): "file:line:column: key: cause".
#pragma once
#include <stdexcept>
#include <string>

namespace ceiling {

class InputFileError : public std::runtime_error {
 public:
  InputFileError(std::string file, int line, int column, std::string key, std::string cause)
      : std::runtime_error(file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " +
                           (key.empty() ? std::string{} : key + ": ") + cause),
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
