// ceiling calibrate: parse the options, run the calibration session of the probes library
// (probes/calibration.hpp), print its summary and map its errors to exit codes.
#include <fcntl.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common.hpp"
#include "model/descriptor.hpp"
#include "model/units.hpp"

#include "model/files.hpp"
#include "model/link.hpp"
#ifdef CEILING_HAVE_CUDA
#include "gpu/gpu.hpp"
#include "probes/link_probe.hpp"
#include "probes/calibration.hpp"
#include "probes/registry.hpp"
#endif

namespace ceiling::cli {
using nlohmann::json;

namespace {

#ifdef CEILING_HAVE_CUDA
std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

int print_list(bool as_json) {
  // In the order a full calibration runs them.
  std::vector<probes::ProbeInfo> all;
  for (const auto* p : probes::choose_probes({}, false)) all.push_back(*p);
  if (as_json) {
    json arr = json::array();
    for (const auto& p : all) {
      json axes = json::object();
      for (const auto& [k, v] : p.axes) axes[k] = v;
      arr.push_back({{"name", p.name},
                     {"group", p.group},
                     {"description", p.description},
                     {"axes", axes},
                     {"fills", p.fills},
                     {"min_cc", std::to_string(p.min_cc / 10) + "." + std::to_string(p.min_cc % 10)},
                     {"in_quick", p.in_quick},
                     {"per_architecture", p.per_architecture},
                     {"runs_sparse_tensor", p.runs_sparse_tensor}});
    }
    std::cout << json{{"probes", arr}}.dump(2) << "\n";
    return 0;
  }
  for (const auto& p : all) {
    std::cout << p.name << "  [" << p.group << "]  min cc " << p.min_cc / 10 << "." << p.min_cc % 10
              << (p.in_quick ? "" : "  (not in --quick)")
              << (p.per_architecture ? "  (per architecture: reused from a descriptor of the same compute capability)" : "")
              << (p.runs_sparse_tensor ? "  (runs sparse tensor instructions: runs last)" : "")
              << "\n    " << p.description << "\n";
    for (const auto& [k, v] : p.axes) std::cout << "    axis " << k << ": " << join(v) << "\n";
    std::cout << "    fills: " << join(p.fills) << "\n";
  }
  if (all.empty()) std::cout << "(no probes registered)\n";
  return 0;
}

std::string describe(const std::string& path, const MeasuredValue& m, const HardwareDescriptor& d) {
  const Field* f = d.find_field(path);
  const Dimension dim = f ? f->dimension : Dimension::dimensionless;
  char cv[32];
  std::snprintf(cv, sizeof cv, "%.2f%%", 100 * m.cv);
  return format_quantity(m.median, dim) + "  (cv " + cv + ", n=" + std::to_string(m.repeats) +
         (m.flagged ? ", FLAGGED" : "") + ")";
}

// "[2/7] dram-bandwidth: running", progress at most every 0.5 s (every step with -vv) with the
// seconds since the probe started, "done in 1.2 s" (stderr).
probes::CalibrationProgress progress_printer() {
  auto last_print = std::make_shared<std::chrono::steady_clock::time_point>();
  auto started = std::make_shared<std::chrono::steady_clock::time_point>();
  return [last_print, started](const probes::CalibrationEvent& e) {
    using Kind = probes::CalibrationEvent::Kind;
    const std::string tag = "[" + std::to_string(e.index) + "/" + std::to_string(e.count) + "] " + e.probe;
    const auto now = std::chrono::steady_clock::now();
    const bool every_step = spdlog::should_log(spdlog::level::debug);
    switch (e.kind) {
      case Kind::running:
        *last_print = now;
        *started = now;
        std::fprintf(stderr, "%s: running\n", tag.c_str());
        break;
      case Kind::progress:
        if (!every_step && now - *last_print < std::chrono::milliseconds(500) && e.fraction < 1.0) return;
        *last_print = now;
        std::fprintf(stderr, "%s: %3.0f%% %s (%.2f s)\n", tag.c_str(), 100 * e.fraction, e.label.c_str(),
                     std::chrono::duration<double>(now - *started).count());
        break;
      case Kind::done:
        std::fprintf(stderr, "%s: done in %.1f s\n", tag.c_str(), e.seconds);
        break;
    }
  };
}

void print_summary(const probes::CalibrationResult& r, bool as_json) {
  if (as_json) {
    json summary = json::array();
    for (const auto& p : r.probes) {
      json sum = {{"name", p.name}, {"status", std::string(to_string(p.status))}, {"seconds", p.seconds},
                  {"fields", json::array()}};
      if (p.status != probes::ProbeStatus::ok) sum["reason"] = p.reason;
      for (const auto& fm : p.fields)
        sum["fields"].push_back({{"path", fm.path}, {"median", fm.value.median}, {"cv", fm.value.cv},
                                 {"flagged", fm.value.flagged}});
      summary.push_back(sum);
    }
    std::cout << json{{"descriptor", r.descriptor_path.string()},
                      {"probes_json", r.probes_path.string()},
                      {"device", {{"name", r.device_name}, {"uuid", r.device_uuid},
                                  {"compute_capability", r.compute_capability}}},
                      {"seconds", r.seconds},
                      {"probes", summary}}
                     .dump(2)
              << "\n";
    return;
  }
  std::cout << "calibrated " << r.device_name << " in " << std::lround(r.seconds * 10) / 10.0 << " s -> "
            << r.descriptor_path.string() << " (+ " << r.probes_path.filename().string() << ")\n";
  for (const auto& p : r.probes) {
    std::cout << "  " << p.name << ": " << to_string(p.status);
    if (p.status != probes::ProbeStatus::ok) std::cout << " (" << p.reason << ")";
    std::cout << "\n";
    for (const auto& fm : p.fields) {
      const Field* fld = r.descriptor.find_field(fm.path);
      if (fld && fld->measured)
        std::cout << "    " << fm.path << " = " << describe(fm.path, *fld->measured, r.descriptor) << "\n";
    }
  }
}

pid_t spawn_to_files(const std::vector<std::string>& argv, const std::filesystem::path& out,
                     const std::filesystem::path& err);
std::string last_error_line(const std::filesystem::path& log);

// `EXE calibrate --device D --probes PROBE --out DIR/run-N.yaml --ramp-processes 1 [--quick]`, its
// output to DIR/run-N.log; the descriptor it wrote, or the reason it failed.
HardwareDescriptor calibrate_in_child(const CalibrateOptions& opt, const std::filesystem::path& dir,
                                      const std::string& probe, int run) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find this program (/proc/self/exe)");
  fs::create_directories(dir);
  const fs::path desc = dir / ("run-" + std::to_string(run) + ".yaml");
  const fs::path log = dir / ("run-" + std::to_string(run) + ".log");
  std::vector<std::string> argv = {exe.string(), "calibrate", "--device", std::to_string(opt.device), "--probes",
                                   probe, "--out", desc.string(), "--ramp-processes", "1"};
  if (opt.quick) argv.push_back("--quick");
  const pid_t pid = spawn_to_files(argv, log, log);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
  if (const int code = exit_code_of(status); code != 0)
    throw std::runtime_error("exit " + std::to_string(code) + ": " + last_error_line(log) + " (log " + log.string() + ")");
  return load_descriptor(desc);
}
#endif

}  // namespace

int run_calibrate(const CalibrateOptions& opt) {
#ifndef CEILING_HAVE_CUDA
  (void)opt;
  spdlog::error("calibrate: this build has no CUDA support (no CUDA compiler was found at build time); "
                "nothing can be measured");
  return 2;
#else
  probes::CalibrationOptions o;
  o.device = opt.device;
  o.probes = opt.probes;
  o.quick = opt.quick;
  o.out = opt.out;
  o.base = opt.base;
  o.resolve_base = [](const std::string& name) { return resolve_hardware(name); };
  o.candidates = shipped_descriptors();
  o.id_from_name = [](const std::string& name) { return id_from_name(name); };
  o.remeasure_architecture = opt.remeasure_architecture;
  o.power = opt.power;
  o.tc_rest_ms = opt.tc_rest_ms;
  o.ramp_processes = opt.ramp_processes > 0 ? opt.ramp_processes : opt.quick ? 1 : 3;
  const std::filesystem::path child_dir =
      std::filesystem::temp_directory_path() / ("ceiling-calibrate-" + std::to_string(getpid()));
  o.run_probe_in_child = [&opt, &child_dir](const std::string& probe, int run) {
    return calibrate_in_child(opt, child_dir, probe, run);
  };
  struct RemoveDir {
    std::filesystem::path dir;
    ~RemoveDir() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } remove_children{child_dir};
  probes::CalibrationResult r;
  try {
    r = probes::run_calibration(o, progress_printer());
  } catch (const probes::NoGpuError& e) {
    spdlog::error("{}", e.what());
    return 2;
  }
  print_summary(r, opt.json);
  if (r.ran() == 0) {
    spdlog::error("calibrate: no probe could run on {}", r.device_name);
    return 1;
  }
  return 0;
#endif
}

namespace {
namespace fs = std::filesystem;

// The child runs `EXE calibrate --device N --out FILE --json ...`, stdout and stderr to files.
pid_t spawn_to_files(const std::vector<std::string>& argv, const fs::path& out, const fs::path& err) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  try {
    const pid_t pid = spawn_process(argv, fa, "calibrate --devices");
    posix_spawn_file_actions_destroy(&fa);
    return pid;
  } catch (...) {
    posix_spawn_file_actions_destroy(&fa);
    throw;
  }
}

std::string last_error_line(const fs::path& log) {
  std::ifstream in(log);
  std::string line, last, err;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
    if (line.find("[error]") != std::string::npos || line.find("rror") != std::string::npos) err = line;
  }
  return err.empty() ? last : err;
}

// "all" (needs the GPU count) or "0,2,5": distinct non-negative ordinals.
std::vector<int> parse_devices(const std::string& text, int count, const std::string& no_gpu) {
  std::vector<int> out;
  if (text == "all") {
    if (count <= 0) throw std::runtime_error("calibrate --devices all: no GPU here (" + no_gpu + ")");
    for (int d = 0; d < count; ++d) out.push_back(d);
    return out;
  }
  std::stringstream ss(text);
  std::set<int> seen;
  for (std::string item; std::getline(ss, item, ',');) {
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || errno || v < 0 || v > 1023)
      throw std::runtime_error("calibrate --devices: '" + item + "' is not a device ordinal (use all or e.g. 0,2,5)");
    if (!seen.insert(static_cast<int>(v)).second)
      throw std::runtime_error("calibrate --devices: device " + item + " named twice");
    if (count > 0 && v >= count)
      throw std::runtime_error("calibrate --devices: device " + item + " does not exist (this host has " +
                               std::to_string(count) + " GPU(s): 0.." + std::to_string(count - 1) + ")");
    out.push_back(static_cast<int>(v));
  }
  if (out.empty()) throw std::runtime_error("calibrate --devices: no device given (use all or e.g. 0,2,5)");
  return out;
}

}  // namespace

namespace {

std::string utc_now_text() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return b;
}

std::string this_host_name() {
  char b[256] = {0};
  if (::gethostname(b, sizeof b - 1) != 0 || !b[0]) return "localhost";
  return b;
}

// $CEILING_SIMULATED_NODE: a simulated topology (model/link.hpp) stands in for the GPUs' count,
// names, UUIDs and links (the CPU tests and the Slurm self-test; the per-GPU children come from
// $CEILING_CALIBRATE_EXE there).
std::unique_ptr<LinkBackend> simulated_node() {
  const char* e = std::getenv("CEILING_SIMULATED_NODE");
  if (!e || !*e) return nullptr;
  spdlog::warn("calibrate --devices: simulated node from {} (CEILING_SIMULATED_NODE): nothing is measured", e);
  return load_simulated_node(e);
}

// --link-bytes: whole 8-byte words, 4 KiB .. 16 GiB.
std::uint64_t link_bytes_option(const std::string& text) {
  const double v = parse_as(text, Dimension::bytes, "--link-bytes");
  if (!(v >= 4096 && v <= 0x1p34) || std::fmod(v, 8) != 0)
    throw std::runtime_error("--link-bytes: " + text + " must be a multiple of 8 bytes in [4 KiB, 16 GiB]");
  return static_cast<std::uint64_t>(v);
}

}  // namespace

int run_calibrate_devices(const CalibrateOptions& opt) {
  if (!opt.out.empty())
    throw std::runtime_error("calibrate --devices writes one descriptor per GPU into --out-dir; --out names one file");
  if (opt.no_links && opt.links_only) throw std::runtime_error("calibrate: --no-links and --links-only exclude each other");
  LinkProbeOptions lo;  // what the user gave, else the defaults (smaller with --quick)
  lo.large_bytes = !opt.link_bytes.empty() ? link_bytes_option(opt.link_bytes)
                                           : std::uint64_t{opt.quick ? 64u : 256u} << 20;
  lo.repeats = opt.link_repeats > 0 ? opt.link_repeats : opt.quick ? 7 : 20;
  lo.progress = [](const std::string& line) { spdlog::info("{}", line); };
  std::unique_ptr<LinkBackend> links = simulated_node();
  int count = 0;
  std::string no_gpu = "built without CUDA";
  if (links) {
    count = links->device_count();
    no_gpu.clear();
  } else {
#ifdef CEILING_HAVE_CUDA
    count = gpu::device_count();
    no_gpu = count > 0 ? "" : gpu::no_gpu_reason();
#endif
  }
  const fs::path dir = opt.out_dir.empty() ? fs::path("descriptors") : fs::path(opt.out_dir);
  fs::create_directories(dir);
  const fs::path node_file = dir / "node.yaml";
  NodeDescriptor node;
  node.tool_version = CEILING_VERSION;
  node.node = opt.node_name.empty() ? this_host_name() : opt.node_name;
  node.date = utc_now_text();
  std::vector<int> devices;
  try {
    devices = parse_devices(opt.devices, count, no_gpu);
  } catch (const std::runtime_error& e) {
    if (count > 0) throw;  // a wrong --devices, not a node without GPUs
    // A node without a usable GPU: its node descriptor says so, for the fleet report (exit 2).
    node.status = "failed";
    node.reason = e.what();
    save_node_descriptor(node, node_file);
    spdlog::error("{}", e.what());
    if (opt.json)
      std::cout << json{{"devices", json::array()}, {"node", node_file.string()}, {"status", "failed"}, {"reason", node.reason}}.dump(2) << "\n";
    else
      std::cout << "node " << node.node << ": failed (" << node.reason << ") -> " << node_file.string() << "\n";
    return 2;
  }
  // The binary to run per GPU: this one ($CEILING_CALIBRATE_EXE replaces it in the CPU tests).
  std::string exe;
  if (const char* e = std::getenv("CEILING_CALIBRATE_EXE"); e && *e) {
    exe = e;
  } else {
    std::error_code ec;
    exe = fs::read_symlink("/proc/self/exe", ec).string();
    if (ec) throw std::runtime_error("calibrate --devices: cannot find this program (/proc/self/exe)");
  }
  struct Child {
    int device = 0;
    std::string name, uuid, file_stem;
    pid_t pid = 0;
    int status = -1;
    double seconds = 0;
  };
  std::vector<Child> kids;
  for (const int d : devices) {
    Child c;
    c.device = d;
    c.file_stem = "gpu" + std::to_string(d);
    if (d < count) {
      if (links) {
        const LinkGpuInfo info = links->device(d);
        c.name = info.name;
        c.uuid = info.uuid;
      } else {
#ifdef CEILING_HAVE_CUDA
        const gpu::DeviceInfo info = gpu::query_device(d);
        c.name = info.name;
        c.uuid = info.uuid;
#endif
      }
      // The id carries the UUID: h200-238c0f96 for GPU-238c0f96-....
      std::string u = c.uuid.rfind("GPU-", 0) == 0 ? c.uuid.substr(4) : c.uuid;
      u = u.substr(0, std::min<std::size_t>(8, u.size()));
      if (!u.empty() && !c.name.empty()) c.file_stem = id_from_name(c.name) + "-" + u;
    }
    kids.push_back(c);
  }
  const auto t0 = std::chrono::steady_clock::now();
  if (!opt.links_only) {
    for (auto& c : kids) {
      std::vector<std::string> argv{exe, "calibrate", "--device", std::to_string(c.device), "--out",
                                    (dir / (c.file_stem + ".yaml")).string(), "--json"};
      if (!opt.base.empty()) argv.insert(argv.end(), {"--base", opt.base});
      if (!opt.probes.empty()) {
        std::string list;
        for (const auto& p : opt.probes) list += (list.empty() ? "" : ",") + p;
        argv.insert(argv.end(), {"--probes", list});
      }
      if (opt.quick) argv.push_back("--quick");
      if (opt.remeasure_architecture) argv.push_back("--remeasure-architecture");
      if (opt.power) argv.push_back("--power");
      if (opt.tc_rest_ms != 50) argv.insert(argv.end(), {"--tc-rest-ms", std::to_string(opt.tc_rest_ms)});
      if (opt.ramp_processes > 0) argv.insert(argv.end(), {"--ramp-processes", std::to_string(opt.ramp_processes)});
      c.pid = spawn_to_files(argv, dir / (c.file_stem + ".calibrate.json"), dir / (c.file_stem + ".calibrate.log"));
      spdlog::info("calibrate --devices: device {} ({}) started -> {}", c.device, c.name.empty() ? "?" : c.name,
                   (dir / (c.file_stem + ".yaml")).string());
    }
    std::size_t done = 0;
    while (done < kids.size()) {
      int status = 0;
      const pid_t pid = ::waitpid(-1, &status, 0);
      if (pid < 0) {
        if (errno == EINTR) continue;
        break;
      }
      for (auto& c : kids)
        if (c.pid == pid) {
          c.status = exit_code_of(status);
          c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          ++done;
          spdlog::info("calibrate --devices: device {} finished ({}, {:.1f} s)", c.device,
                       c.status == 0 ? "ok" : "exit " + std::to_string(c.status), c.seconds);
        }
    }
    // Name and UUID from each child's summary where this process could not ask the GPU.
    for (auto& c : kids) {
      if (!c.name.empty() && !c.uuid.empty()) continue;
      std::ifstream in(dir / (c.file_stem + ".calibrate.json"));
      const json cj = json::parse(in, nullptr, false);
      if (cj.is_object() && cj.contains("device") && cj["device"].is_object()) {
        if (cj["device"].contains("name") && cj["device"]["name"].is_string()) c.name = cj["device"]["name"];
        if (cj["device"].contains("uuid") && cj["device"]["uuid"].is_string()) c.uuid = cj["device"]["uuid"];
      }
    }
  } else {
    for (auto& c : kids) c.status = 0;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  json summary = json::array();
  int failed = 0;
  for (const auto& c : kids) {
    const fs::path desc = dir / (c.file_stem + ".yaml");
    NodeGpu g;
    g.device = c.device;
    g.name = c.name;
    g.uuid = c.uuid;
    json j{{"device", c.device}, {"name", c.name}, {"uuid", c.uuid}, {"seconds", c.seconds}};
    if (!opt.links_only) j["log"] = (dir / (c.file_stem + ".calibrate.log")).string();
    if (c.status == 0) {
      j["status"] = "ok";
      if (!opt.links_only) {
        j["descriptor"] = desc.string();
        g.descriptor = desc.filename().string();
      }
    } else {
      ++failed;
      j["status"] = "failed";
      j["exit"] = c.status;
      j["reason"] = last_error_line(dir / (c.file_stem + ".calibrate.log"));
      g.status = "failed";
      g.reason = j["reason"].get<std::string>();
      if (g.reason.empty()) g.reason = "exit " + std::to_string(c.status);
    }
    node.gpus.push_back(g);
    summary.push_back(j);
  }
  // The links, after the calibrations (nothing else runs on the GPUs then).
  int link_failures = 0;
  double link_seconds = 0;
  if (!opt.no_links) {
#ifdef CEILING_HAVE_CUDA
    if (!links && count > 0) links = probes::make_cuda_link_backend();
#endif
    if (links) {
      const LinkMeasurements m = measure_links(*links, devices, lo);
      node.large_bytes = m.large_bytes;
      node.small_bytes = m.small_bytes;
      node.host_links = m.host_links;
      node.pairs = m.pairs;
      link_seconds = m.seconds;
      for (const auto& h : m.host_links)
        for (const auto& [p, f] : h.figures) link_failures += !f.error.empty();
      for (const auto& q : m.pairs)
        for (const auto& [p, f] : q.figures) link_failures += !f.error.empty();
    } else {
      spdlog::warn("calibrate --devices: links not probed ({})", no_gpu.empty() ? "no GPU" : no_gpu);
    }
  }
  if (failed == static_cast<int>(kids.size()) && node.host_links.empty()) {
    node.status = "failed";
    node.reason = "every GPU failed (" + std::to_string(failed) + " of " + std::to_string(kids.size()) + ")";
  } else if (failed || link_failures) {
    node.status = "partial";
    node.reason = std::to_string(failed) + " GPU(s) and " + std::to_string(link_failures) + " link path(s) failed";
  }
  save_node_descriptor(node, node_file);
  if (opt.json) {
    std::cout << json{{"devices", summary}, {"wall_s", wall}, {"out_dir", dir.string()}, {"node", node_file.string()},
                      {"node_status", node.status}, {"link_failures", link_failures}, {"links_s", link_seconds},
                      {"links", node_links_json(node)}}
                     .dump(2)
              << "\n";
  } else {
    if (!opt.links_only)
      std::cout << "calibrated " << (kids.size() - static_cast<std::size_t>(failed)) << " of " << kids.size()
                << " GPU(s) at once in " << std::lround(wall * 10) / 10.0 << " s -> " << dir.string() << "\n";
    for (const auto& j : summary)
      std::cout << "  device " << j["device"].get<int>() << " "
                << (j["name"].get<std::string>().empty() ? "?" : j["name"].get<std::string>()) << " "
                << (j["uuid"].get<std::string>().empty() ? "" : j["uuid"].get<std::string>() + " ") << j["status"].get<std::string>()
                << (j["status"] == "ok" ? (j.contains("descriptor") ? " -> " + j["descriptor"].get<std::string>() : "")
                                        : " (exit " + std::to_string(j["exit"].get<int>()) + ": " +
                                              j["reason"].get<std::string>() + "; log " + j["log"].get<std::string>() + ")")
                << "\n";
    std::cout << link_summary(node);
    std::cout << "node " << node.node << ": " << node.status << (node.reason.empty() ? "" : " (" + node.reason + ")")
              << " -> " << node_file.string() << "\n";
    std::cout << "next: ceiling report --fleet " << dir.string() << " --out fleet/\n";
  }
  return node.status == "ok" ? 0 : 1;
}

Subcommand add_calibrate(CLI::App& root) {
  auto opt = std::make_shared<CalibrateOptions>();
  auto list = std::make_shared<bool>(false);
  Subcommand s;
  s.app = root.add_subcommand("calibrate", "Measure this GPU with the probes and write a hardware descriptor");
  s.app->add_option("--device", opt->device, "CUDA device ordinal")->capture_default_str();
  s.app->add_option("--out", opt->out,
                    "Descriptor to write (merged into when it exists; resumes an interrupted run). "
                    "Default: <id>.yaml, id of the shipped descriptor of this GPU or from its name");
  s.app->add_option("--base", opt->base, "Descriptor (file or shipped id) whose spec values to start from");
  s.app->add_option("--probes", opt->probes, "Only these probes (comma-separated; see --list)")->delimiter(',');
  s.app->add_flag("--quick", opt->quick, "Smaller sweeps and fewer repeats");
  s.app->add_flag("--remeasure-architecture", opt->remeasure_architecture,
                  "Also run the probes whose results are properties of the architecture (mma-numerics, "
                  "wgmma-numerics: the tensor cores' arithmetic). Without it they are reused from the starting "
                  "descriptor or a shipped descriptor of the same compute capability, which the summary names; "
                  "naming one in --probes runs it too");
  s.app->add_flag("--power", opt->power,
                  "Board power through NVML (libnvidia-ml.so.1, loaded at run time) under the probes that support "
                  "it: mma and wgmma-sp (watts and TFLOP/W per instruction, dense and sparse), dram-bandwidth and "
                  "l2-bandwidth (watts and pJ per byte). Each best configuration runs again for >= 0.5 s and at least "
                  "10 updates of the energy counter; adds about 30 s");
  s.app->add_option("--tc-rest-ms", opt->tc_rest_ms,
                    "Idle (ms) before each counted wgmma / wgmma-sp run, 0-60000 (default 50). The tensor cores' "
                    "clock follows what ran before (shorter rests lower the figures; see docs/PEERS.md): a "
                    "benchmark started as its own process rests for "
                    "hundreds of ms before its one run; each rest adds to the run time about 40 times this value")
      ->check(CLI::Range(0, 60000));
  s.app->add_option("--ramp-processes", opt->ramp_processes,
                    "Run memory-ramp in this many processes in all, 1-16 (default 3; 1 with --quick) and keep the "
                    "least time at each size: warm L2 times move by 2-8% between processes on one board, so one "
                    "process's least time is no bound for the next (each extra run adds about 2 s)")
      ->check(CLI::Range(1, 16));
  s.app->add_option("--devices", opt->devices,
                    "Calibrate several GPUs at once, one process each: all, or ordinals like 0,2,5. Each GPU's "
                    "descriptor goes to --out-dir as <id>-<UUID prefix>.yaml, with its log; a GPU that fails is "
                    "reported and the others are kept (exit 1)");
  s.app->add_option("--out-dir", opt->out_dir, "With --devices: the directory of the descriptors and node.yaml (default descriptors/)");
  s.app->add_flag("--no-links", opt->no_links, "With --devices: skip the link probe (host<->GPU, GPU<->GPU)");
  s.app->add_flag("--links-only", opt->links_only,
                  "With --devices: only the link probe (no per-GPU calibration); node.yaml lists the GPUs without descriptors");
  s.app->add_option("--link-bytes", opt->link_bytes, "With --devices: bytes of one bandwidth transfer (default 256 MiB, 64 MiB with --quick)");
  s.app->add_option("--link-repeats", opt->link_repeats, "With --devices: timed transfers per path and size, 1-1000 (default 20, 7 with --quick)")
      ->check(CLI::Range(1, 1000));
  s.app->add_option("--node-name", opt->node_name, "With --devices: the node's name in node.yaml (default: this host's name)");
  s.app->add_flag("--list", *list, "List the registered probes and exit (no GPU needed)");
  s.app->add_flag("--json", opt->json, "Machine-readable summary on stdout");
  s.app->footer(
      "Examples:\n"
      "  ceiling calibrate --quick                      # memory + compute probes, short\n"
      "  ceiling calibrate --probes dram-bandwidth,pchase-latency --out my-h200.yaml\n"
      "  ceiling calibrate --list\n"
      "  ceiling calibrate --devices all --base h200 --out-dir node-descriptors/   # every GPU of this node, then its links\n"
      "  ceiling calibrate --devices all --links-only --out-dir links/    # host<->GPU and GPU<->GPU only (node.yaml)\n"
      "  ceiling report --fleet node-descriptors/ --out fleet/");
  s.run = [opt, list] {
    if (*list) {
#ifdef CEILING_HAVE_CUDA
      return print_list(opt->json);
#else
      std::cout << (opt->json ? "{\"probes\": []}\n" : "(this build has no CUDA support: no probes)\n");
      return 0;
#endif
    }
    if (!opt->devices.empty()) return run_calibrate_devices(*opt);
    if (!opt->out_dir.empty()) throw std::runtime_error("calibrate: --out-dir goes with --devices");
    if (opt->no_links || opt->links_only || !opt->node_name.empty() || !opt->link_bytes.empty() || opt->link_repeats != 0)
      throw std::runtime_error("calibrate: --no-links, --links-only, --link-bytes, --link-repeats and --node-name go with --devices");
    return run_calibrate(*opt);
  };
  return s;
}

}  // namespace ceiling::cli
