// smtlab: the command-line entry point. Each subcommand lives in its own cmd_*.cpp.
#include <CLI/CLI.hpp>

#include <iostream>

#include "smtlab/version.hpp"
#include "util/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{"smtlab: SMT and vCPU-overcommit experiments in emulated topologies"};
  app.set_version_flag("--version", std::string("smtlab ") + smtlab::kVersion);
  app.require_subcommand(1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::cerr << "smtlab: error: " << smtlab::describe(e) << "\n";
    return 1;
  }
  return 0;
}
