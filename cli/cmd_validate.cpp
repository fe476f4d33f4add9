// ceiling validate — placeholder until its issue lands; it says so and fails.
#include <spdlog/spdlog.h>

#include "common.hpp"

namespace ceiling::cli {

Subcommand add_validate(CLI::App& root) {
  Subcommand s;
  s.app = root.add_subcommand("validate", "(not built yet)");
  s.run = [] {
    spdlog::error("'ceiling validate' is not implemented in this build");
    return 2;
  };
  return s;
}

}  // namespace ceiling::cli
