#pragma once
// `smtlab compare`: the comparison tables of one or more results directories, in mmtests' text
// format (compare-format.md), Markdown, JSON or CSV, plus what a CI gate needs.
#include <string>
#include <vector>

#include "report/options.hpp"
#include "report/tables.hpp"
#include "results/loader.hpp"

namespace smtlab::report {

// A significant change for the worse against the baseline, on a mean row.
struct Regression {
  std::string block, metric, statistic;  // statistic: "Amean" or "Hmean"
  std::string column, baseline;
  double change_pct = 0;  // signed like the tables: negative = worse
  double base_value = 0, value = 0;
  std::string describe() const;  // "kernbench elsp-8: v-HT is 30.75% worse than v-noHT (84.72 -> 110.77)"
};

// A column a CI gate cannot pass because it was not measured: its cell exists but did not end
// "ok", or ended "ok" without a measured value for a metric that another column of its block has.
// (A column without a cell, a matrix exclude or a run that lacks the cell, is not one.) Also a shard
// of a sharded run that a directory lacks (its cells have no column): block is the run's name,
// column "shard K/N", id empty.
struct Unmeasured {
  std::string block, column, id;
  std::string why;  // "failed: <first line of the error>", "pending", "no samples for <metric>", or
                    // "not in this directory, so its cells (...) were not measured; ..."
  std::string describe() const;  // "kernbench v-HT (cell 3f2a9c01d4e5): no samples for elsp-8"
};

struct CompareResult {
  std::string output;  // the tables in the requested format
  // Significant regressions worse than options.regression_threshold_pct (CLI:
  // --fail-on-regression PCT -> a distinct exit code when not empty).
  std::vector<Regression> regressions;
  std::vector<FailedCell> failed;  // cells that did not end "ok" (also listed in `output`)
  std::vector<DisturbedCell> disturbed;  // cells measured while disturbed (also listed in `output`)
  // Columns that were not measured (CLI: with --fail-on-regression, status 4 unless a regression
  // gives 3): a gate must not pass what it could not compare.
  std::vector<Unmeasured> unmeasured;
  std::string markdown_summary;    // for $GITHUB_STEP_SUMMARY: rule, mean rows, regressions, failures,
                                   // what was not measured
  std::vector<std::string> warnings;  // corrupt lines skipped while loading, ...
};

// Throws smtlab::Error for an unknown baseline.
CompareResult compare_runs(const std::vector<results::RunResults>& runs, const CompareOptions& options);
// The tables only (compare_runs(...).output).
std::string compare(const std::vector<results::RunResults>& runs, const CompareOptions& options);

// Formats (used by compare_runs; exposed for tests and the HTML report).
std::string format_text(const Tables& tables, const CompareOptions& options);
std::string format_markdown(const Tables& tables, const CompareOptions& options);
std::string format_json(const Tables& tables, const CompareOptions& options);
std::string format_csv(const Tables& tables, const CompareOptions& options);
// The rows that CompareOptions::statistics selects, stat-major in mmtests' order.
std::vector<std::string> selected_statistics(const CompareOptions& options);
std::vector<Regression> find_regressions(const Tables& tables, double threshold_pct);
// Block by block, column by column: each failed cell, then each metric an ok cell lacks; then each
// run's absent shards.
std::vector<Unmeasured> find_unmeasured(const Tables& tables);

}  // namespace smtlab::report
