// ceiling calibrate — placeholder until its issue lands; it says so and fails.
#include <spdlog/spdlog.h>

#include "common.hpp"

namespace ceiling::cli {

Subcommand add_calibrate(CLI::App& root) {
  Subcommand s;
  s.app = root.add_subcommand("calibrate", "(not built yet)");
  s.run = [] {
    spdlog::error("'ceiling calibrate' is not implemented in this build");
    return 2;
  };
  return s;
}

}  // namespace ceiling::cli
