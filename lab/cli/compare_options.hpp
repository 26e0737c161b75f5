#pragma once
// The comparison options shared by `compare`, `report`, `run` and `reproduce`.
#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "report/options.hpp"

namespace smtlab::cli {

struct CompareFlags {
  std::string baseline;
  std::string rule = "welch";
  std::string format = "text";
  std::string statistics = "Amean,Stddev";
  std::string by = "benchmark";
  bool user_sys = false;
  bool all_metrics = false;
  double fail_on_regression = -1;  // < 0: off
  report::CompareOptions options() const;
};

// Adds --baseline, --rule, --stats, --by, --user-sys, --all-metrics (and --format when asked).
void add_compare_flags(CLI::App* cmd, CompareFlags& flags, bool with_format);
void add_regression_flag(CLI::App* cmd, CompareFlags& flags);

// Prints the comparison of `dirs`, writes the Markdown summary to $GITHUB_STEP_SUMMARY when set,
// and returns kRegression when --fail-on-regression tripped (else kOk).
int print_comparison(const std::vector<std::filesystem::path>& dirs, const CompareFlags& flags);

}  // namespace smtlab::cli
