// Shared bits of the command line: subcommand registration, hardware lookup, logging.
#pragma once
#include <CLI/CLI.hpp>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

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

// Where the shipped descriptors live: $CEILING_HARDWARE_DIR, then <binary>/../share/ceiling/hardware,
// <binary>/../hardware (bundle), then the source tree's hardware/.
std::filesystem::path hardware_dir();
// "--hw h200" or "--hw hardware/h200.yaml": a path if it exists, else a shipped id.
// Throws std::runtime_error listing the shipped ids when neither matches.
std::filesystem::path resolve_hardware(const std::string& name_or_path);
std::vector<std::filesystem::path> shipped_descriptors();  // sorted

// Logs go to stderr; verbosity from -v/-q on the root app.
void setup_logging(int verbosity);

}  // namespace ceiling::cli
