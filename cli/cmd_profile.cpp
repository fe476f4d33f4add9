// ceiling profile: a user's kernels under Nsight Compute, held against a descriptor (issue 19).
// Runs `ncu` with ceiling's metric set (or reads an existing raw-page CSV export), then prints the
// analysis of model/profile.hpp: per kernel W, Q per level, I, the bound and what bounds it,
// efficiency, verdict and the tensor-core speedup bound.
#include <fcntl.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "common.hpp"
#include "model/descriptor.hpp"
#include "model/files.hpp"
#include "model/ncu_csv.hpp"
#include "model/profile.hpp"

namespace ceiling::cli {
namespace {
namespace fs = std::filesystem;

struct ProfileArgs {
  std::string hw, from_ncu, out, csv_out, ncu, kernel_regex, filter_mode, cache_control;
  int launch_skip = -1, launch_count = -1;
  std::vector<std::string> ncu_args, app;
  bool per_launch = false, json = false, print_metrics = false;
  std::size_t rows = 40;
};

// The ncu to run: --ncu, $CEILING_NCU, ncu on PATH, /usr/local/cuda/bin/ncu.
std::optional<fs::path> find_ncu(const std::string& given) {
  std::error_code ec;
  const auto runnable = [&](const fs::path& p) { return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0; };
  if (!given.empty()) return runnable(given) ? std::optional<fs::path>(given) : std::nullopt;
  if (const char* env = std::getenv("CEILING_NCU"); env && *env) return runnable(env) ? std::optional<fs::path>(env) : std::nullopt;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    for (std::string dir; std::getline(ss, dir, ':');)
      if (!dir.empty() && runnable(fs::path(dir) / "ncu")) return fs::path(dir) / "ncu";
  }
  for (const char* p : {"/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/ncu"})
    if (runnable(p)) return fs::path(p);
  return std::nullopt;
}

std::string quote(const std::string& s) {
  if (!s.empty() && s.find_first_of(" \t\"'\\$`|&;<>()*?[]{}!") == std::string::npos) return s;
  std::string q = "'";
  for (const char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs argv with its stdout and stderr sent to our stderr (stdout stays the JSON's); keeps the
// last 256 KiB of what it printed for the diagnosis. Returns the exit status (128 + signal).
int run_child(const std::vector<std::string>& argv, std::string& tail) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("profile: pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  posix_spawn_file_actions_addclose(&fa, fds[1]);
  pid_t pid = 0;
  try {
    pid = spawn_process(argv, fa, "profile");
  } catch (...) {
    posix_spawn_file_actions_destroy(&fa);
    ::close(fds[0]);
    ::close(fds[1]);
    throw;
  }
  posix_spawn_file_actions_destroy(&fa);
  ::close(fds[1]);
  char buf[65536];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    std::cerr.write(buf, n);
    tail.append(buf, static_cast<std::size_t>(n));
    if (tail.size() > (512u << 10)) tail.erase(0, tail.size() - (256u << 10));
  }
  std::cerr.flush();
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return exit_code_of(status);
}

std::string read_text(const fs::path& p, std::size_t limit = 4u << 20) {
  std::ifstream in(p, std::ios::binary);
  std::string s;
  if (!in) return s;
  s.resize(limit);
  in.read(s.data(), static_cast<std::streamsize>(limit));
  s.resize(static_cast<std::size_t>(in.gcount()));
  return s;
}

// What went wrong in an ncu run, as one line with what to do; empty when nothing did.
std::string diagnose(const std::string& out, int rc, const ProfileArgs& a, const std::string& app) {
  if (out.find("ERR_NVGPUCTRPERM") != std::string::npos)
    return "ncu may not read the GPU's performance counters (ERR_NVGPUCTRPERM): run as root, or have an "
           "administrator set the driver option NVreg_RestrictProfilingToAdminUsers=0 "
           "(https://developer.nvidia.com/ERR_NVGPUCTRPERM)";
  static const std::regex app_rc(R"(==ERROR== The application returned an error code \((-?\d+)\))");
  std::smatch m;
  if (std::regex_search(out, m, app_rc))
    return "the application failed (" + app + " exited with code " + m[1].str() +
           "; its output is above): ceiling profile analyses a run that succeeds";
  if (out.find("No kernels were profiled") != std::string::npos) {
    std::string avail;
    const auto p = out.find("Available Kernels:");
    if (p != std::string::npos) {
      std::stringstream ss(out.substr(p));
      std::string line;
      std::getline(ss, line);
      int n = 0;
      while (std::getline(ss, line) && n < 12) {
        static const std::regex item(R"(^\s*\d+\.\s+(\S.*)$)");
        std::smatch mm;
        if (!std::regex_match(line, mm, item)) break;
        avail += (n++ ? ", " : "") + mm[1].str();
      }
    }
    if (!a.kernel_regex.empty() || a.launch_skip >= 0)
      return "no kernel launch matched the filter (--kernel-regex '" + a.kernel_regex + "'" +
             (a.launch_skip >= 0 ? ", --launch-skip " + std::to_string(a.launch_skip) : std::string{}) + ")" +
             (avail.empty() ? std::string{} : "; the application launched: " + avail);
    return "the application launched no CUDA kernel (" + app + ")";
  }
  if (rc != 0) {
    std::string first;
    std::stringstream ss(out);
    for (std::string line; std::getline(ss, line);)
      if (line.rfind("==ERROR==", 0) == 0) {
        first = line;
        break;
      }
    return (rc > 128 ? "ncu was killed by signal " + std::to_string(rc - 128) : "ncu failed (exit " + std::to_string(rc) + ")") +
           (first.empty() ? std::string{} : ": " + first);
  }
  return {};
}

// The descriptor for an export: --hw, else the shipped one whose identity names the export's GPU.
fs::path pick_hardware(const ProfileArgs& a, const NcuExport& ex) {
  if (!a.hw.empty()) return resolve_hardware(a.hw);
  std::string ids;
  for (const auto& p : shipped_descriptors()) {
    ids += (ids.empty() ? "" : ", ") + p.stem().string();
    try {
      const auto d = load_descriptor(p);
      for (const auto& name : ex.device_names)
        if (name == d.identity.name || id_from_name(name) == d.id) return p;
    } catch (const std::exception&) {
    }
  }
  throw std::runtime_error("profile: no shipped descriptor describes " +
                           (ex.device_names.empty() ? std::string("the export's GPU (its name is not in the export)")
                                                    : "'" + ex.device_names.front() + "'") +
                           ": give --hw (shipped: " + ids + ") or calibrate this GPU with `ceiling calibrate`");
}

int run_profile(const ProfileArgs& a) {
  if (a.print_metrics) {
    std::cout << profile_metric_list() << "\n";
    return 0;
  }
  if (a.from_ncu.empty() == a.app.empty())
    throw std::runtime_error(a.app.empty() ? "profile: give the application after -- (ceiling profile -- ./app args) "
                                             "or an export with --from-ncu FILE.csv"
                                           : "profile: give an application or --from-ncu, not both");
  if (!a.from_ncu.empty() && (!a.kernel_regex.empty() || a.launch_skip >= 0 || a.launch_count >= 0 || !a.ncu_args.empty() ||
                               !a.filter_mode.empty() || !a.cache_control.empty()))
    throw std::runtime_error("profile: --kernel-regex, --launch-skip, --launch-count, --filter-mode and --ncu-arg choose what ncu "
                             "profiles; with --from-ncu the export is already made");
  if (!a.csv_out.empty() && !a.from_ncu.empty())
    throw std::runtime_error("profile: --csv-out keeps the export of a run; --from-ncu reads one");
  if (!a.hw.empty()) (void)resolve_hardware(a.hw);  // a bad --hw fails before a long run

  std::vector<std::string> metric_names;
  for (const auto& m : profile_metrics()) metric_names.push_back(m.name);
  NcuExport ex;
  std::vector<std::string> ncu_command;
  if (!a.from_ncu.empty()) {
    ex = read_ncu_csv(a.from_ncu, metric_names);
  } else {
    const auto ncu = find_ncu(a.ncu);
    if (!ncu)
      throw std::runtime_error(a.ncu.empty()
                                   ? "profile: ncu (Nsight Compute) not found on PATH, in $CEILING_NCU or in "
                                     "/usr/local/cuda/bin: install Nsight Compute, pass --ncu PATH, or profile elsewhere "
                                     "and analyse the export here with --from-ncu FILE.csv"
                                   : "profile: --ncu " + a.ncu + " is not an executable file");
    char tmpl[] = "/tmp/ceiling-profile-XXXXXX";
    if (!::mkdtemp(tmpl)) throw std::runtime_error(std::string("profile: mkdtemp: ") + std::strerror(errno));
    const fs::path dir = tmpl;
    const fs::path csv = dir / "export.csv";
    struct Cleanup {
      fs::path d;
      ~Cleanup() {
        std::error_code ec;
        fs::remove_all(d, ec);
      }
    } cleanup{dir};
    ncu_command = {ncu->string(), "--csv", "--page", "raw", "--print-units", "base", "--clock-control", "none",
                   "--metrics", profile_metric_list()};
    if (!a.kernel_regex.empty()) {
      ncu_command.push_back("--kernel-name");
      ncu_command.push_back("regex:" + a.kernel_regex);
    }
    if (a.launch_skip >= 0) {
      ncu_command.push_back("--launch-skip");
      ncu_command.push_back(std::to_string(a.launch_skip));
    }
    if (a.launch_count >= 0) {
      ncu_command.push_back("--launch-count");
      ncu_command.push_back(std::to_string(a.launch_count));
    }
    if (!a.cache_control.empty()) {
      ncu_command.push_back("--cache-control");
      ncu_command.push_back(a.cache_control);
    }
    if (!a.filter_mode.empty()) {
      ncu_command.push_back("--filter-mode");
      ncu_command.push_back(a.filter_mode);
    }
    for (const auto& x : a.ncu_args) ncu_command.push_back(x);
    ncu_command.push_back("--log-file");
    ncu_command.push_back(csv.string());
    for (const auto& x : a.app) ncu_command.push_back(x);
    std::string shown;
    for (const auto& x : ncu_command) shown += (shown.empty() ? "" : " ") + quote(x);
    spdlog::info("profile: running {} under ncu ({} metrics, --clock-control none; -v shows the command)",
                 quote(a.app.front()), profile_metrics().size());
    spdlog::debug("profile: {}", shown);
    std::string tail;
    const int rc = run_child(ncu_command, tail);
    const std::string log = read_text(csv);
    const std::string why = diagnose(tail + "\n" + log, rc, a, quote(a.app.front()));
    if (!why.empty()) throw std::runtime_error("profile: " + why);
    std::error_code ec;
    if (!fs::exists(csv, ec))
      throw std::runtime_error("profile: ncu wrote no export (exit " + std::to_string(rc) + "); its output is above");
    if (!a.csv_out.empty()) {
      write_file_atomically(a.csv_out, read_text(csv, std::size_t(8) << 30));
      spdlog::info("profile: export kept in {}", a.csv_out);
    }
    ex = read_ncu_csv(csv, metric_names);
    ex.file = a.csv_out.empty() ? "ncu run" : a.csv_out;
  }
  const fs::path hw_path = pick_hardware(a, ex);
  const HardwareDescriptor hw = load_descriptor(hw_path);
  ProfileOptions po;
  po.per_launch = a.per_launch;
  ProfileResult r = analyse_profile(ex, hw, po);
  r.ncu_command = ncu_command;
  const nlohmann::json j = profile_to_json(r);
  if (!a.out.empty()) {
    write_file_atomically(a.out, j.dump(1) + "\n");
    spdlog::info("profile: wrote {}", a.out);
  }
  if (a.json)
    std::cout << j.dump(1) << "\n";
  else
    std::cout << profile_table(r, a.rows);
  return 0;
}

}  // namespace

Subcommand add_profile(CLI::App& root) {
  auto a = std::make_shared<ProfileArgs>();
  CLI::App* sub = root.add_subcommand(
      "profile",
      "Your own kernels against the model: run an application under Nsight Compute (ncu) with ceiling's metric set, or "
      "read an existing `ncu --csv --page raw` export, and hold every kernel against the descriptor's ceilings: W "
      "from the instruction counts, Q per memory level, the bound and what bounds it, efficiency, and the Eq. 22 "
      "bound on what tensor cores could give (or what CUDA cores would lose)");
  sub->add_option("--hw", a->hw,
                  "Hardware descriptor: a YAML file or a shipped id (default: the shipped one naming the export's GPU)");
  sub->add_option("--from-ncu", a->from_ncu,
                  "Analyse this raw-page CSV export (ncu --csv --page raw --metrics $(ceiling profile --print-metrics)) "
                  "instead of running ncu; works without a GPU");
  sub->add_option("--kernel-regex", a->kernel_regex, "Profile only kernels whose name matches (ncu --kernel-name regex:R)");
  sub->add_option("--launch-skip", a->launch_skip, "Skip this many matching launches first (ncu --launch-skip)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--launch-count", a->launch_count, "Profile at most this many launches (ncu --launch-count)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--filter-mode", a->filter_mode,
                  "How --launch-skip/--launch-count apply (ncu --filter-mode): global, per-gpu, or per-launch-config "
                  "(N launches of each kernel and launch configuration)")
      ->check(CLI::IsMember({"global", "per-gpu", "per-launch-config"}));
  sub->add_option("--cache-control", a->cache_control,
                  "ncu --cache-control: all (ncu's default: caches flushed before each launch, every launch cold) or "
                  "none (warm: what the application left in the L2 stays)")
      ->check(CLI::IsMember({"all", "none"}));
  sub->add_option("--ncu", a->ncu, "The ncu to run (default: $CEILING_NCU, PATH, /usr/local/cuda/bin/ncu)");
  sub->add_option("--ncu-arg", a->ncu_args, "One more argument for ncu, e.g. --ncu-arg=--target-processes=all (repeatable)")
      ->allow_extra_args(false);
  sub->add_option("--csv-out", a->csv_out, "Keep ncu's export here, to analyse again with --from-ncu");
  sub->add_option("--out", a->out, "Write the analysis as JSON (ceiling/profile/1) to this file, for `ceiling report --profile`");
  sub->add_flag("--per-launch", a->per_launch, "List every launch with its terms in the JSON (default: per kernel)");
  sub->add_option("--rows", a->rows, "Kernels shown in the table (default 40; --json has all)")->check(CLI::PositiveNumber);
  sub->add_flag("--json", a->json, "Print the analysis JSON on stdout instead of the table");
  sub->add_flag("--print-metrics", a->print_metrics, "Print the metric list for ncu --metrics and exit");
  sub->add_option("app", a->app, "The application and its arguments, after --");
  sub->footer(
      "How it runs ncu:\n"
      "  ncu --csv --page raw --print-units base --clock-control none --metrics <ceiling's set> [filters] APP\n"
      "  --clock-control none: the kernels run at the clocks they would get without the profiler; ncu still\n"
      "  flushes the caches before each launch (cold caches) and serializes the launches.\n"
      "The bound per launch: max over DRAM, L2, L1 and shared of max(Q/BW, latency + Q_read/BW) and over the units\n"
      "of W/P, BW the measured maximum for the launch's read:write mix. ncu's time excludes the launch, so the\n"
      "tight bound's launch term is not added. A kernel faster than its bound is flagged with '!'.\n\n"
      "Examples:\n"
      "  ceiling profile --hw h200 -- ./my_app --size 4096\n"
      "  ceiling profile --hw h200 --kernel-regex 'gemm|gemv' --launch-count 20 -- python3 train.py\n"
      "  ceiling profile --hw h100-sxm --out prof.json --csv-out prof.csv -- python3 scripts/profile-torch-example.py\n"
      "  ceiling profile --hw h100-sxm --from-ncu prof.csv            # no GPU needed\n"
      "  ncu --csv --page raw --metrics $(ceiling profile --print-metrics) --log-file x.csv ./my_app\n"
      "  ceiling report --hw h100-sxm --profile prof.json --out report/");
  return {sub, [a] { return run_profile(*a); }};
}

}  // namespace ceiling::cli
