// ceiling predict — placeholder until its issue lands; it says so and fails.
#include <spdlog/spdlog.h>

#include "common.hpp"

namespace ceiling::cli {

Subcommand add_predict(CLI::App& root) {
  Subcommand s;
  s.app = root.add_subcommand("predict", "(not built yet)");
  s.run = [] {
    spdlog::error("'ceiling predict' is not implemented in this build");
    return 2;
  };
  return s;
}

}  // namespace ceiling::cli
