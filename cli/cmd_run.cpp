// ceiling run — placeholder until its issue lands; it says so and fails.
#include <spdlog/spdlog.h>

#include "common.hpp"

namespace ceiling::cli {

Subcommand add_run(CLI::App& root) {
  Subcommand s;
  s.app = root.add_subcommand("run", "(not built yet)");
  s.run = [] {
    spdlog::error("'ceiling run' is not implemented in this build");
    return 2;
  };
  return s;
}

}  // namespace ceiling::cli
