// ceiling run: the main job. With a GPU: calibrate -> validate -> report into a dated directory.
// Without one: a report over the shipped descriptors and results, saying so.
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <iostream>
#include <memory>

#include "common.hpp"
#include "model/descriptor.hpp"

#ifdef CEILING_HAVE_CUDA
#include "gpu/gpu.hpp"
#endif

namespace ceiling::cli {
namespace fs = std::filesystem;

namespace {

struct RunOptions {
  std::string out;
  bool quick = false;
  int device = 0;
  bool json = false;
};

// ceiling-report-2026-11-21T1200, with -2, -3... when that exists already.
fs::path dated_dir() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[64];
  std::strftime(b, sizeof b, "ceiling-report-%Y-%m-%dT%H%M", &tm);
  fs::path p = b;
  std::error_code ec;
  for (int k = 2; fs::exists(p, ec); ++k) p = std::string(b) + "-" + std::to_string(k);
  return p;
}

[[maybe_unused]] double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

#ifdef CEILING_HAVE_CUDA
int run_on_gpu(const RunOptions& opt, const fs::path& out) {
  const auto t0 = std::chrono::steady_clock::now();
  const gpu::DeviceInfo dev = gpu::query_device(opt.device);
  // Start from the shipped descriptor of this GPU when there is one (its spec values and references).
  std::string base, id = id_from_name(dev.name);
  for (const auto& p : shipped_descriptors()) {
    try {
      if (load_descriptor(p).identity.name == dev.name) {
        base = p.string();
        id = p.stem().string();
        break;
      }
    } catch (const std::exception& e) {
      spdlog::warn("run: skipping shipped descriptor {}: {}", p.string(), e.what());
    }
  }
  // Measurements go to <out>-data first (the report directory must be new), then move into the report.
  const fs::path work = fs::path(out.string() + "-data");
  fs::create_directories(work);
  const fs::path descriptor = work / (id + ".yaml");
  const fs::path results = work / (id + "-validation.json");
  spdlog::info("run: GPU {}: {} ({} SMs, cc {}), descriptor id '{}'{}", opt.device, dev.name, dev.sm_count,
               dev.compute_capability(), id, base.empty() ? " (no shipped descriptor: spec values will be missing)" : "");

  spdlog::info("run: [1/3] calibrate{} -> {}", opt.quick ? " (quick)" : "", descriptor.string());
  // The calibration runs in a process of its own: once its sparse tensor-core probes (mma, wgmma-sp)
  // have run, every tensor-core kernel later in the same process gets a lower SM clock (H200,
  // 2026-11-26: 1-3%; a new process does not), and validate's tensor-core kernels would be timed in
  // that state against ceilings measured before it.
  const int calibrate_rc = [&] {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) throw std::runtime_error("run: cannot find this program (/proc/self/exe) to calibrate in a child process");
    std::vector<std::string> argv{exe.string()};
    // This process's log level (ceiling -q / -v / -vv), which the child's must match.
    const auto level = spdlog::get_level();
    if (level >= spdlog::level::warn) argv.push_back("-q");
    else if (level == spdlog::level::debug) argv.push_back("-v");
    else if (level < spdlog::level::debug) argv.push_back("-vv");
    argv.insert(argv.end(), {"calibrate", "--device", std::to_string(opt.device), "--out", descriptor.string()});
    if (!base.empty()) argv.insert(argv.end(), {"--base", base});
    if (opt.quick) argv.push_back("--quick");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    // run --json: stdout carries only the report's JSON; calibrate's summary goes to stderr.
    if (opt.json) posix_spawn_file_actions_adddup2(&fa, 2, 1);
    pid_t pid = 0;
    try {
      pid = spawn_process(argv, fa, "run");
    } catch (...) {
      posix_spawn_file_actions_destroy(&fa);
      throw;
    }
    posix_spawn_file_actions_destroy(&fa);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0)
      if (errno != EINTR) throw std::runtime_error(std::string("run: waiting for calibrate: ") + std::strerror(errno));
    return exit_code_of(status);
  }();
  if (int rc = calibrate_rc; rc != 0) {
    spdlog::error("run: calibrate failed (exit {}); measurements so far are in {}", rc, work.string());
    return rc;
  }
  spdlog::info("run: calibrate done at {:.0f} s", since(t0));

  spdlog::info("run: [2/3] validate{} -> {}", opt.quick ? " (quick)" : "", results.string());
  ValidateOptions v;
  v.hw = descriptor.string();
  v.out = results.string();
  v.device = opt.device;
  v.quick = opt.quick;
  // run --json: validate's tables go to stderr, as calibrate's summary does.
  std::streambuf* const cout_buf = opt.json ? std::cout.rdbuf(std::cerr.rdbuf()) : nullptr;
  int vrc = 0;
  try {
    vrc = run_validate(v);
  } catch (...) {
    if (cout_buf) std::cout.rdbuf(cout_buf);
    throw;
  }
  if (cout_buf) std::cout.rdbuf(cout_buf);
  std::error_code ec;
  const bool have_results = vrc == 0 && fs::is_regular_file(results, ec);
  if (!have_results) spdlog::warn("run: validate failed (exit {}); the report will have no validation results", vrc);
  else spdlog::info("run: validate done at {:.0f} s", since(t0));

  spdlog::info("run: [3/3] report -> {}", out.string());
  ReportOptions r;
  r.hw = {descriptor.string()};
  if (have_results) r.results = {results.string()};
  r.out = out.string();
  r.json = opt.json;
  const int rrc = run_report(r);
  if (rrc != 0) {
    spdlog::error("run: report failed; the measurements are in {}", work.string());
    return rrc;
  }
  // Keep the raw measurements with the report they belong to.
  fs::rename(work, out / "run-data", ec);
  if (ec) spdlog::warn("run: measurements stay in {} ({})", work.string(), ec.message());
  spdlog::info("run: done in {:.0f} s", since(t0));
  return vrc == 0 ? 0 : 3;
}
#endif

}  // namespace

Subcommand add_run(CLI::App& root) {
  auto opt = std::make_shared<RunOptions>();
  Subcommand s;
  s.app = root.add_subcommand(
      "run", "The whole job: with a GPU, calibrate -> validate -> report into a dated directory; without one, a "
             "report of the shipped descriptors and results");
  s.app->add_option("--out", opt->out, "Report directory (default: ./ceiling-report-<UTC date and time>)");
  s.app->add_flag("--quick", opt->quick, "Fewer probe configurations and kernel sizes (minutes instead of ~10)");
  s.app->add_option("--device", opt->device, "CUDA device ordinal")->check(CLI::NonNegativeNumber);
  s.app->add_flag("--json", opt->json, "Print the report's JSON summary on stdout (calibrate's and validate's text then goes to stderr)");
  s.run = [opt]() -> int {
    const fs::path out = opt->out.empty() ? dated_dir() : fs::path(opt->out);
    std::string reason;
    int rc = 0;
    if (!gpu_available(&reason)) {
      spdlog::warn("no GPU found ({}): reporting the shipped descriptors and results", reason);
      ReportOptions r;
      r.out = out.string();
      r.json = opt->json;
      rc = run_report(r);
    } else {
#ifdef CEILING_HAVE_CUDA
      rc = run_on_gpu(*opt, out);
#endif
    }
    if (!opt->json) std::cout << "ceiling run: report in " << fs::absolute(out).lexically_normal().string() << "/index.html\n";
    return rc;
  };
  return s;
}

}  // namespace ceiling::cli
