// ceiling report — placeholder until its issue lands; it says so and fails.
#include <spdlog/spdlog.h>

#include "common.hpp"

namespace ceiling::cli {

Subcommand add_report(CLI::App& root) {
  Subcommand s;
  s.app = root.add_subcommand("report", "(not built yet)");
  s.run = [] {
    spdlog::error("'ceiling report' is not implemented in this build");
    return 2;
  };
  return s;
}

}  // namespace ceiling::cli
