// ceiling: how fast can this kernel possibly run on this GPU, and would tensor cores help it?
#include <spdlog/spdlog.h>

#include <exception>
#include <iostream>

#include "common.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "ceiling: calibrate a GPU with microbenchmark probes, predict the roofline ceilings of a\n"
      "kernel (balance, intensity, time bounds, tensor-core speedup bounds), validate real\n"
      "kernels against them, and write reports.",
      "ceiling"};
  app.set_version_flag("--version", std::string("ceiling ") + CEILING_VERSION);
  app.require_subcommand(1);
  int verbosity = 0;
  app.add_flag("-v,--verbose", verbosity, "More log output on stderr (repeat for debug)");
  bool quiet = false;
  app.add_flag("-q,--quiet", quiet, "Only warnings and errors on stderr");
  app.footer(
      "Examples:\n"
      "  ceiling predict --hw gh200 --kernel scale --n 1e9\n"
      "  ceiling show --hw h200\n"
      "  ceiling run                 # calibrate + validate + report (GPU), or report shipped data\n"
      "Run 'ceiling <command> --help' for each command's options.");

  std::vector<ceiling::cli::Subcommand> subs;
  subs.push_back(ceiling::cli::add_predict(app));
  subs.push_back(ceiling::cli::add_show(app));
  subs.push_back(ceiling::cli::add_calibrate(app));
  subs.push_back(ceiling::cli::add_validate(app));
  subs.push_back(ceiling::cli::add_report(app));
  subs.push_back(ceiling::cli::add_run(app));
  subs.push_back(ceiling::cli::add_profile(app));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  ceiling::cli::setup_logging(quiet ? -1 : verbosity);
  try {
    for (auto& s : subs)
      if (s.app && s.app->parsed()) return s.run();
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
  return 2;
}
