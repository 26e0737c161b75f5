// smtlab: the command-line entry point. Each subcommand lives in its own cmd_*.cpp.
#include <CLI/CLI.hpp>

#include <iostream>
#include <string>

#include "cli/commands.hpp"
#include "smtlab/version.hpp"
#include "util/error.hpp"

namespace smtlab::cli {
int& exit_status() {
  static int status = kOk;
  return status;
}
}  // namespace smtlab::cli

namespace {
// CLI11 answers `smtlab nosuch` (and `smtlab kernel nosuch`) with "A subcommand is required":
// name the word that is not a command and list the ones there are. Empty when the command words
// are fine (options and what follows the last command word are left to CLI11).
std::string unknown_command(CLI::App& app, int argc, char** argv) {
  CLI::App* current = &app;
  std::string path = "smtlab";
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    auto subs = current->get_subcommands([](CLI::App*) { return true; });
    if (word.empty() || word[0] == '-' || subs.empty()) return "";
    CLI::App* next = nullptr;
    std::string names;
    for (CLI::App* sub : subs) {
      if (sub->check_name(word)) next = sub;
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (next == nullptr)
      return "'" + word + "' is not a command of " + path + "; the commands are: " + names +
             " (see " + path + " --help)";
    path += " " + next->get_name();
    current = next;
  }
  return "";
}
}  // namespace

int main(int argc, char** argv) {
  using namespace smtlab::cli;
  CLI::App app{"smtlab: SMT and vCPU-overcommit experiments in emulated topologies, one command each"};
  app.set_version_flag("--version", std::string("smtlab ") + smtlab::kVersion);
  app.require_subcommand(1);
  app.footer("Start with: smtlab run recipes/smoke.yaml   (see README.md)");
  add_plan_command(app);
  add_doctor_command(app);
  add_kernel_command(app);
  add_image_command(app);
  add_cache_command(app);
  add_boot_command(app);
  add_run_command(app);
  add_compare_command(app);
  add_report_command(app);
  add_merge_command(app);
  add_reproduce_command(app);
  if (auto problem = unknown_command(app, argc, argv); !problem.empty()) {
    std::cerr << "smtlab: error: " << problem << "\n";
    return kUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : kUsage;
  } catch (const UsageError& e) {
    std::cerr << "smtlab: error: " << smtlab::describe(e) << "\n";
    return kUsage;
  } catch (const std::exception& e) {
    // Located errors (recipes) already read "FILE:LINE:COL: error: ...".
    std::string text = smtlab::describe(e);
    std::cerr << (text.find(": error: ") != std::string::npos ? "" : "smtlab: error: ") << text << "\n";
    return kError;
  }
  return exit_status();
}
