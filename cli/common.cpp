#include "common.hpp"

#include <nlohmann/json.hpp>

#include "model/link.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

extern "C" char** environ;

namespace ceiling::cli {
namespace fs = std::filesystem;

pid_t spawn_process(const std::vector<std::string>& argv, const posix_spawn_file_actions_t& actions, const std::string& who) {
  if (argv.empty()) throw std::runtime_error(who + ": nothing to run");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  if (rc != 0) throw std::runtime_error(who + ": cannot run " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

static fs::path executable_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path{} : exe.parent_path();
}

fs::path hardware_dir() {
  if (const char* env = std::getenv("CEILING_HARDWARE_DIR"); env && *env) return env;
  const fs::path bin = executable_dir();
  for (const fs::path& candidate :
       {bin / ".." / "share" / "ceiling" / "hardware", bin / ".." / "hardware"}) {
    std::error_code ec;
    if (!bin.empty() && fs::is_directory(candidate, ec)) return fs::weakly_canonical(candidate);
  }
  return CEILING_SOURCE_HARDWARE_DIR;
}

std::vector<fs::path> shipped_descriptors() {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(hardware_dir(), ec))
    if (e.path().extension() == ".yaml") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

fs::path resolve_hardware(const std::string& name_or_path) {
  std::error_code ec;
  if (fs::is_regular_file(name_or_path, ec)) return name_or_path;
  const fs::path shipped = hardware_dir() / (name_or_path + ".yaml");
  if (fs::is_regular_file(shipped, ec)) return shipped;
  std::string ids;
  for (const auto& p : shipped_descriptors()) ids += (ids.empty() ? "" : ", ") + p.stem().string();
  throw std::runtime_error("no descriptor file '" + name_or_path + "' and no shipped descriptor of that id (shipped: " +
                           ids + ", in " + hardware_dir().string() + ")");
}

std::string id_from_name(std::string name) {
  if (name.rfind("NVIDIA ", 0) == 0) name = name.substr(7);
  std::string id;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      id += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!id.empty() && id.back() != '-')
      id += '-';
  }
  while (!id.empty() && id.back() == '-') id.pop_back();
  return id.empty() ? "gpu" : id;
}

void setup_logging(int verbosity) {
  auto logger = spdlog::stderr_color_mt("ceiling");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%^[%l]%$ %v");
  if (verbosity < 0)
    spdlog::set_level(spdlog::level::warn);
  else if (verbosity == 0)
    spdlog::set_level(spdlog::level::info);
  else if (verbosity == 1)
    spdlog::set_level(spdlog::level::debug);
  else
    spdlog::set_level(spdlog::level::trace);
}

// The node's links as JSON (base units: bytes/s, seconds) for scripts.
nlohmann::json node_links_json(const NodeDescriptor& n) {
  const auto fig = [](const LinkFigure& f) {
    if (!f.error.empty()) return nlohmann::json{{"error", f.error}};
    return nlohmann::json{{"bandwidth", f.bandwidth}, {"bandwidth_max", f.bandwidth_max}, {"latency", f.latency_s},
                {"latency_min", f.latency_min_s}, {"repeats", f.repeats}};
  };
  nlohmann::json j{{"large_bytes", n.large_bytes}, {"small_bytes", n.small_bytes}, {"host", nlohmann::json::array()}, {"pairs", nlohmann::json::array()}};
  for (const auto& h : n.host_links) {
    nlohmann::json hj{{"device", h.device}};
    for (const auto& [p, f] : h.figures) hj[std::string(to_string(p))] = fig(f);
    j["host"].push_back(hj);
  }
  for (const auto& q : n.pairs) {
    nlohmann::json qj{{"from", q.from}, {"to", q.to}, {"peer_access", q.peer_access}};
    for (const auto& [p, f] : q.figures) qj[std::string(to_string(p))] = fig(f);
    j["pairs"].push_back(qj);
  }
  return j;
}


}  // namespace ceiling::cli
