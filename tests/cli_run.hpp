// Runs the built `ceiling` binary (CEILING_BINARY) for CLI tests: exit code and output.
#pragma once
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace ceiling::test {

struct CliRun {
  int rc = -1;
  std::string out;
};

// `ceiling <args>`; stderr joins stdout only when asked (error messages), else it is dropped.
inline CliRun run_ceiling(const std::string& args, bool with_stderr = false) {
  const std::string cmd = std::string("'") + CEILING_BINARY + "' " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  CliRun r;
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(pipe);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace ceiling::test
