// Finding and driving gnuplot: generated scripts run in the report's directory.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>

#include "detail.hpp"

namespace ceiling::reports {
namespace fs = std::filesystem;

namespace {

fs::path search_path(const std::string& exe) {
  const char* path = std::getenv("PATH");
  if (!path) return {};
  std::stringstream ss(path);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    fs::path p = fs::path(dir) / exe;
    if (::access(p.c_str(), X_OK) == 0 && fs::is_regular_file(p)) return p;
  }
  return {};
}

}  // namespace

detail::ProcessResult detail::run_process(const std::vector<std::string>& argv, const fs::path& cwd,
                                          double timeout_s) {
  ProcessResult r;
  fs::path out_file = fs::temp_directory_path() / ("ceiling-gnuplot-" + std::to_string(::getpid()) + ".log");
  pid_t pid = ::fork();
  if (pid < 0) {
    r.output = "fork failed";
    return r;
  }
  if (pid == 0) {
    // child: output to a log file, run in cwd
    int fd = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::close(fd);
    }
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(126);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  auto start = std::chrono::steady_clock::now();
  int status = 0;
  for (;;) {
    pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0) {
      r.output = "waitpid failed";
      return r;
    }
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (el > timeout_s) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      r.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!r.timed_out && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  r.output = detail::read_file(out_file);
  std::error_code ec;
  fs::remove(out_file, ec);
  return r;
}

GnuplotInfo find_gnuplot(const fs::path& hint) {
  GnuplotInfo g;
  if (!hint.empty()) {
    if (hint.has_parent_path()) {
      if (::access(hint.c_str(), X_OK) == 0) g.path = hint;
    } else {
      g.path = search_path(hint.string());
    }
  } else {
    g.path = search_path("gnuplot");
  }
  if (g.path.empty()) return g;
  auto v = detail::run_process({g.path.string(), "--version"}, {}, 10);
  if (v.exit_code != 0) {
    g.path.clear();
    return g;
  }
  g.version = v.output;
  while (!g.version.empty() && (g.version.back() == '\n' || g.version.back() == '\r')) g.version.pop_back();
  auto t = detail::run_process({g.path.string(), "-e", "set terminal"}, {}, 10);
  std::istringstream lines(t.output);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream ls(line);
    std::string first;
    ls >> first;
    if (first == "svg") g.svg = true;
    if (first == "pngcairo") g.pngcairo = true;
    if (first == "png") g.png = true;
  }
  return g;
}

}  // namespace ceiling::reports
