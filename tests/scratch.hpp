// Test helpers shared by the CPU tests: a fresh scratch directory per call, a whole file as text.
#pragma once
#include <unistd.h>

#include <exception>
#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>
#include <string>

namespace ceiling::test {

// The message of the exception `f` throws, or "(no error)".
inline std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

// <tmp>/ceiling-test-<suite>-<pid>-<tag>-<n>, removed first; created when `create`.
inline std::filesystem::path scratch_dir(const std::string& suite, const std::string& tag, bool create = true) {
  static int n = 0;
  const std::filesystem::path p = std::filesystem::temp_directory_path() /
                                  ("ceiling-test-" + suite + "-" + std::to_string(::getpid()) + "-" + tag + "-" +
                                   std::to_string(n++));
  std::filesystem::remove_all(p);
  if (create) std::filesystem::create_directories(p);
  return p;
}

// The file's bytes; "" when it cannot be read.
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace ceiling::test
