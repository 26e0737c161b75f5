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

struct CompareResult {
  std::string output;  // the tables in the requested format
  // Significant regressions worse than options.regression_threshold_pct (CLI:
  // --fail-on-regression PCT -> a distinct exit code when not empty).
  std::vector<Regression> regressions;
  std::vector<FailedCell> failed;  // cells that did not end "ok" (also listed in `output`)
  std::vector<DisturbedCell> disturbed;  // cells measured while disturbed (also listed in `output`)
  std::string markdown_summary;    // for $GITHUB_STEP_SUMMARY: rule, mean rows, regressions, failures
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

}  // namespace smtlab::report
