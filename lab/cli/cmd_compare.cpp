// smtlab compare DIR... [--baseline NAME] [--rule NAME] [--format text|markdown|json|csv]
#include "cli/commands.hpp"
#include "cli/compare_options.hpp"
#include "results/results.hpp"

namespace smtlab::cli {

void add_compare_command(CLI::App& app) {
  auto dirs = std::make_shared<std::vector<std::string>>();
  auto flags = std::make_shared<CompareFlags>();
  auto* cmd = app.add_subcommand("compare", "Comparison tables of results directories (mmtests' format by default)");
  cmd->add_option("dirs", *dirs, "Results directories")->required()->check(CLI::ExistingDirectory);
  add_compare_flags(cmd, *flags, true);
  add_regression_flag(cmd, *flags);
  cmd->callback([dirs, flags] {
    std::vector<results::RunResults> runs;
    for (const auto& d : *dirs) runs.push_back(results::load_results(d));
    check_baseline(runs, *flags);  // a --baseline that names no column is a usage error (2)
    exit_status() = print_comparison(runs, *flags);
  });
}

}  // namespace smtlab::cli
