#pragma once
// The comparison options shared by `compare`, `report`, `run` and `reproduce`.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "report/options.hpp"
#include "results/loader.hpp"

namespace smtlab::cli {

struct CompareFlags {
  std::string baseline;
  std::string rule = "welch";
  std::string format = "text";
  std::string statistics = "Amean,Stddev";
  std::string by = "benchmark";
  bool user_sys = false;
  bool all_metrics = false;
  bool per_vm = false;
  double fail_on_regression = -1;  // < 0: off
  report::CompareOptions options() const;
};

// Adds --baseline, --rule, --stats, --by, --user-sys, --all-metrics, --per-vm (and --format when
// asked).
// Every value but --baseline's is checked while the command line is parsed (a bad one: status 2
// before the command starts); --baseline needs the columns, see check_baseline.
void add_compare_flags(CLI::App* cmd, CompareFlags& flags, bool with_format);
void add_regression_flag(CLI::App* cmd, CompareFlags& flags);

// Throws UsageError ("--baseline: ...", with the column names there are) when flags.baseline is
// set and names no column of some block of the tables of `runs` (what compare would refuse).
void check_baseline(const std::vector<results::RunResults>& runs, const CompareFlags& flags);

// Prints the comparison of `dirs` (or of `runs`, already loaded), writes the Markdown summary to
// $GITHUB_STEP_SUMMARY when set. Without --fail-on-regression returns kOk; with it, kRegression
// when a regression tripped it, else kCellsFailed when a column was not measured (each said on
// stderr: "smtlab: not measured: ..."), else kOk.
int print_comparison(const std::vector<std::filesystem::path>& dirs, const CompareFlags& flags);
int print_comparison(const std::vector<results::RunResults>& runs, const CompareFlags& flags);

}  // namespace smtlab::cli
