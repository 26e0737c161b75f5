#include "cli/run_end.hpp"

#include <iostream>

#include "cli/commands.hpp"
#include "plan/plan.hpp"
#include "results/results.hpp"
#include "util/error.hpp"
#include "util/process.hpp"

namespace smtlab::cli {

namespace fs = std::filesystem;

results::RunResults results_to_be(const recipe::Recipe& recipe, const run::RunOptions& options) {
  if (options.resume && fs::exists(options.output / "manifest.json")) return results::load_results(options.output);
  results::RunResults planned;
  planned.dir = options.output;
  for (const auto& cell : plan::make_plan(recipe, options.plan).cells) {
    results::CellResult c;  // what run_recipe writes into the manifest for the cell (status pending)
    c.id = cell.id;
    c.index = cell.index;
    c.variant = cell.variant.name;
    c.kernel = cell.kernel.name;
    c.topology = cell.topology.name;
    c.benchmark = cell.benchmark.name;
    c.kind = cell.benchmark.kind;
    c.vms = cell.topology.vms;
    planned.cells.push_back(std::move(c));
  }
  return planned;
}

int compare_after_run(const std::vector<fs::path>& dirs, const CompareFlags& flags) {
  std::string again = "smtlab compare";
  for (const auto& d : dirs) again += " " + shell_word(d.string());
  try {
    std::vector<results::RunResults> runs;
    for (const auto& d : dirs) runs.push_back(results::load_results(d));
    CompareFlags used = flags;
    try {
      check_baseline(runs, used);
    } catch (const UsageError& e) {
      std::cerr << "smtlab: warning: " << describe(e) << "\n"
                << "smtlab: warning: the tables below use the first column as the baseline; choose one with: " << again
                << " --baseline NAME\n";
      used.baseline.clear();
    }
    return print_comparison(runs, used);
  } catch (const std::exception& e) {
    // What was measured is on disk and can be compared later: the run's status stands, unless a
    // --fail-on-regression gate was asked for, which cannot pass a comparison it did not see.
    const bool gate = flags.fail_on_regression >= 0;
    std::cerr << "smtlab: " << (gate ? "error" : "warning") << ": no comparison: " << describe(e) << "\n"
              << "smtlab: the results are kept; print the tables with: " << again << "\n";
    return gate ? kError : kOk;
  }
}

std::string shell_word(const std::string& text) { return shell_quote({text}); }

int finish_run(const run::RunSummary& summary, const RunEnd& end, const CompareFlags& flags) {
  std::cerr << "smtlab: " << end.what << summary.cells << " cells: " << summary.ok << " ok, " << summary.failed
            << " failed" << (summary.skipped ? ", " + std::to_string(summary.skipped) + " already finished" : "")
            << " (" << summary.accel << ") in " << summary.dir.string() << "\n";
  if (summary.interrupted) {
    std::cerr << "smtlab: interrupted; finish with: " << end.again << " --resume\n";
    return kInterrupted;
  }
  if (summary.failed)
    std::cerr << "smtlab: run the failed cells again with: " << end.again << " --resume --retry-failed\n";
  const int compared = end.compare.empty() ? kOk : compare_after_run(end.compare, flags);
  return compared == kRegression ? kRegression : summary.failed ? kCellsFailed : compared;
}

}  // namespace smtlab::cli
