#pragma once
// What `smtlab run` and `smtlab reproduce` share around run::run_recipe: checking the comparison
// flags against the cells before anything runs, and what is said and returned after the run.
#include <filesystem>
#include <string>
#include <vector>

#include "cli/compare_options.hpp"
#include "recipe/recipe.hpp"
#include "results/loader.hpp"
#include "run/runner.hpp"

namespace smtlab::cli {

// The results directory `options` will fill, as compare will read it, before the run: the cells
// of a resumed run's manifest, else the plan's cells (all pending) under options.output (which
// must be set: default_results_dir when the user gave none). Only the cells matter; it is for
// check_baseline.
results::RunResults results_to_be(const recipe::Recipe& recipe, const run::RunOptions& options);

// The comparison printed at the end of a run: a comparison that fails does not hide what was
// measured. A --baseline that names no column is warned about and the tables use the first column;
// any other error is printed with the command that prints the tables later, as a warning (kOk:
// the run's own status stands) or, with --fail-on-regression, as an error (kError: the gate saw
// nothing). Otherwise returns what print_comparison returns (kOk, kRegression, kCellsFailed).
int compare_after_run(const std::vector<std::filesystem::path>& dirs, const CompareFlags& flags);

// `text` as one shell word: unchanged when it is plain, else in single quotes (util::shell_quote).
std::string shell_word(const std::string& text);

struct RunEnd {
  std::string what;   // "" (run) or "reproduction: ", after "smtlab: " on the summary line
  std::string again;  // the command that runs the same cells into the same directory; the hints
                      // append " --resume" (interrupted) or " --resume --retry-failed" (failed cells)
  std::vector<std::filesystem::path> compare;  // the directories to compare; empty: no comparison
};

// After run_recipe: the summary line, the hint to finish an interrupted run or to retry its
// failed cells, the comparison (not after an interrupt), and the exit status: kInterrupted, else
// kRegression when --fail-on-regression tripped, else kCellsFailed when a cell failed (or, with
// --fail-on-regression, a compared column was not measured), else kError when the comparison
// could not be made with --fail-on-regression, else kOk.
int finish_run(const run::RunSummary& summary, const RunEnd& end, const CompareFlags& flags);

}  // namespace smtlab::cli
