// Shared bits of the command line: subcommand registration, hardware lookup, logging.
#pragma once
#include <CLI/CLI.hpp>
#include <spawn.h>

#include <filesystem>
#include <functional>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ceiling {
struct NodeDescriptor;
}  // namespace ceiling

namespace ceiling::cli {

// Each subcommand adds itself to the root app and returns the function that runs it
// (called only when that subcommand was given); the int is the process exit code.
using Runner = std::function<int()>;
struct Subcommand {
  CLI::App* app = nullptr;
  Runner run;
};

Subcommand add_predict(CLI::App& root);
Subcommand add_show(CLI::App& root);
Subcommand add_calibrate(CLI::App& root);
Subcommand add_validate(CLI::App& root);
Subcommand add_report(CLI::App& root);
Subcommand add_run(CLI::App& root);
Subcommand add_profile(CLI::App& root);

// In-process entry points, so `ceiling run` chains calibrate -> validate -> report without
// re-parsing arguments. Each cmd_<name>.cpp owns its options struct's meaning.
struct CalibrateOptions {
  int device = 0;
  std::string out;                  // descriptor to write/merge (default: hardware id of the GPU)
  std::string base;                 // descriptor to start from (spec values), optional
  std::vector<std::string> probes;  // empty = all
  bool quick = false;
  bool json = false;
  bool remeasure_architecture = false;  // run the per-architecture probes even where reusable
  bool power = false;                   // NVML board power under the probes that support it
  int tc_rest_ms = 50;                  // idle before each counted wgmma / wgmma-sp run
  // memory-ramp in this many processes in all, least time per size kept (0: 3, or 1 with --quick).
  int ramp_processes = 0;
  // --devices all|0,2,5: one calibration per GPU, all at once (one process each), descriptors in
  // out_dir named <id>-<uuid prefix>.yaml (issue 16).
  std::string devices;
  std::string out_dir;
  // The link probe after the GPUs' calibrations (model/link.hpp), written with the GPUs into
  // <out_dir>/node.yaml (ceiling/node/1).
  bool no_links = false, links_only = false;
  std::string link_bytes;  // empty: 256 MiB (64 MiB with --quick)
  int link_repeats = 0;    // 0: 20 (7 with --quick)
  std::string node_name;  // default: this host's name
};
int run_calibrate(const CalibrateOptions& opt);
int run_calibrate_devices(const CalibrateOptions& opt);

struct ValidateOptions {
  std::string hw;                    // descriptor path or shipped id
  std::vector<std::string> kernels;  // empty = all
  std::vector<std::string> sizes;    // empty = default sweep
  std::string out;                   // results JSON
  int device = 0;
  bool quick = false;
  bool json = false;
  // SpMV inputs: Matrix Market files and/or a generated suite ("table2"), its members (empty: all),
  // the generators' size factor and seed.
  std::vector<std::string> matrices;
  std::string suite;
  std::vector<std::string> names;
  double scale = 1.0;
  std::uint64_t matrix_seed = 1;
  // Stencil inputs: shapes (built-in names or YAML files; empty: the six built-ins), domains
  // ("NXxNY" or "NXxNYxNZ"; empty: Table 3's plus one in L2), fused steps (0: Table 3's per shape).
  std::vector<std::string> shapes;
  std::vector<std::string> domains;
  int steps = 0;
  bool steps_given = false;  // --steps 0 is an error, not the default
};
// Checks validate's stencil options and sets the stencil sweep (model/stencil_shape.hpp): every
// shape loaded, every domain parsed and fitting each shape of its dims, 1 <= steps <= 16, and
// stencil among --kernels when any is given. Throws std::runtime_error with a one-line cause.
void select_stencil_inputs(const ValidateOptions& opt);
int run_validate(const ValidateOptions& opt);

struct ReportOptions {
  std::vector<std::string> hw;       // descriptor paths or shipped ids; empty = all shipped
  std::vector<std::string> results;  // validation results JSON files
  std::vector<std::string> profiles; // `ceiling profile --out` JSON files (schema ceiling/profile/1)
  std::vector<std::string> peers;    // scripts/compare-peers output JSON files (schema ceiling/peers/1)
  std::string out;                   // output directory
  bool json = false;
  // --fleet DIR: the fleet view of every descriptor under DIR instead of the report (model/fleet.hpp).
  std::string fleet;
  double fleet_z = 3, fleet_min_deviation = 0.01;
  bool fleet_both_sides = false;
};
int run_report(const ReportOptions& opt);

// Where the shipped descriptors live: $CEILING_HARDWARE_DIR, then <binary>/../share/ceiling/hardware,
// <binary>/../hardware (bundle), then the source tree's hardware/.
std::filesystem::path hardware_dir();
// "--hw h200" or "--hw hardware/h200.yaml": a path if it exists, else a shipped id.
// Throws std::runtime_error listing the shipped ids when neither matches.
std::filesystem::path resolve_hardware(const std::string& name_or_path);
std::vector<std::filesystem::path> shipped_descriptors();  // sorted

// Whether a usable GPU is present; when not, *reason says why ("no CUDA driver", "built without
// CUDA", ...). Never throws. Implemented in cli/gpu_detect.cpp.
bool gpu_available(std::string* reason);

// A descriptor id from a device name: "NVIDIA H200" -> "h200", "NVIDIA H100 80GB HBM3" -> "h100-80gb-hbm3".
std::string id_from_name(std::string name);

// Starts argv[0] (a path) with `actions` (its stdout/stderr redirections) and this environment;
// throws std::runtime_error "<who>: cannot run <program>: <cause>". The caller waits for it.
pid_t spawn_process(const std::vector<std::string>& argv, const posix_spawn_file_actions_t& actions, const std::string& who);
// A waitpid status as a shell shows it: the exit code, or 128 + the signal.
int exit_code_of(int wait_status);

// Logs go to stderr; verbosity from -v/-q on the root app.
void setup_logging(int verbosity);

// A node descriptor's links (host paths per GPU, pairs) as JSON in base units (bytes/s, seconds):
// calibrate --devices --json and show --json of a node.yaml.
nlohmann::json node_links_json(const NodeDescriptor& n);

}  // namespace ceiling::cli
