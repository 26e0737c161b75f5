// smtlab compare DIR... [--baseline NAME] [--rule NAME] [--format text|markdown|json|csv]
#include "cli/commands.hpp"
#include "cli/compare_options.hpp"

namespace smtlab::cli {

void add_compare_command(CLI::App& app) {
  auto dirs = std::make_shared<std::vector<std::string>>();
  auto flags = std::make_shared<CompareFlags>();
  auto* cmd = app.add_subcommand("compare", "Comparison tables of results directories (mmtests' format by default)");
  cmd->add_option("dirs", *dirs, "Results directories")->required()->check(CLI::ExistingDirectory);
  add_compare_flags(cmd, *flags, true);
  add_regression_flag(cmd, *flags);
  cmd->callback([dirs, flags] {
    exit_status() = print_comparison({dirs->begin(), dirs->end()}, *flags);
  });
}

}  // namespace smtlab::cli
