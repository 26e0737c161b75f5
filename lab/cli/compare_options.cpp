#include "cli/compare_options.hpp"

#include <cstdlib>
#include <fstream>
#include <iostream>

#include "cli/commands.hpp"
#include "report/compare.hpp"
#include "report/tables.hpp"
#include "results/results.hpp"
#include "stats/significance.hpp"
#include "util/error.hpp"

namespace smtlab::cli {

namespace {

// A CLI11 check by one of the functions that turn the option's text into what compare uses: the
// value it refuses is refused while the command line is parsed (status 2, nothing run), with its
// message and hint: "--rule: unknown significance rule 'welsh': use welch (default), ...".
template <class Parse>
CLI::Validator parsed_by(Parse parse) {
  return CLI::Validator(
      [parse](std::string& value) -> std::string {
        try {
          parse(value);
          return {};
        } catch (const Error& e) {
          return std::string(e.what()) + (e.hint().empty() ? "" : ": " + e.hint());
        }
      },
      "");
}

}  // namespace

report::CompareOptions CompareFlags::options() const {
  report::CompareOptions o;
  o.baseline = baseline;
  o.rule.rule = stats::parse_rule(rule);
  o.format = report::parse_format(format);
  o.statistics = report::parse_statistics(statistics);
  o.grouping = report::parse_grouping(by);
  o.kernbench_user_sys = user_sys;
  o.all_metrics = all_metrics;
  o.per_vm = per_vm;
  o.regression_threshold_pct = fail_on_regression > 0 ? fail_on_regression : 0;
  return o;
}

void add_compare_flags(CLI::App* cmd, CompareFlags& f, bool with_format) {
  cmd->add_option("--baseline", f.baseline, "Baseline column (or variant); default: the first column");
  cmd->add_option("--rule", f.rule,
                  "Significance rule: welch (Welch t-test, alpha 0.05, min effect 1%), "
                  "mmtests-2019 (the seed tables' t-test, p < 0.10), mmtests-2024 (1.96 x stddev sum)")
      ->check(parsed_by(stats::parse_rule))
      ->capture_default_str();
  cmd->add_option("--stats", f.statistics, "Rows: Min,Amean,Stddev,CoeffVar,Max,BAmean-95 or all")
      ->check(parsed_by(report::parse_statistics))
      ->capture_default_str();
  cmd->add_option("--by", f.by, "One block per benchmark (columns variant-topology) or per topology")
      ->check(CLI::IsMember({"benchmark", "topology"}))
      ->capture_default_str();
  cmd->add_flag("--user-sys", f.user_sys, "kernbench: also user-N and syst-N rows");
  cmd->add_flag("--all-metrics", f.all_metrics, "Every metric the guests reported");
  cmd->add_flag("--per-vm", f.per_vm,
                "A column per guest of a cell whose guests all ran the benchmark (<column>/vm<N>), not pooled");
  if (with_format)
    cmd->add_option("--format", f.format, "text (mmtests), markdown, json or csv")
        ->check(CLI::IsMember({"text", "markdown", "md", "json", "csv"}))
        ->capture_default_str();
}

void add_regression_flag(CLI::App* cmd, CompareFlags& f) {
  cmd->add_option("--fail-on-regression", f.fail_on_regression,
                  "Exit with status 3 when a mean is significantly worse than the baseline by more than PCT percent")
      ->check(CLI::Range(0.0, 1000.0));
}

void check_baseline(const std::vector<results::RunResults>& runs, const CompareFlags& flags) {
  if (flags.baseline.empty()) return;
  try {
    report::build_tables(runs, flags.options());  // the columns compare would have
  } catch (const Error& e) {
    throw UsageError("--baseline: " + std::string(e.what()), e.hint());
  }
}

int print_comparison(const std::vector<std::filesystem::path>& dirs, const CompareFlags& flags) {
  std::vector<results::RunResults> runs;
  for (const auto& d : dirs) runs.push_back(results::load_results(d));
  return print_comparison(runs, flags);
}

int print_comparison(const std::vector<results::RunResults>& runs, const CompareFlags& flags) {
  auto result = report::compare_runs(runs, flags.options());
  for (const auto& w : result.warnings) std::cerr << "smtlab: warning: " << w << "\n";
  for (const auto& d : result.disturbed)
    std::cerr << "smtlab: warning: " << d.column << " (cell " << d.id << ") was measured while disturbed: "
              << d.reasons.front() << (d.reasons.size() > 1 ? " (more in the output)" : "") << "\n";
  std::cout << result.output;
  std::cout.flush();
  if (const char* summary = std::getenv("GITHUB_STEP_SUMMARY"); summary && *summary) {
    std::ofstream out(summary, std::ios::app);
    out << result.markdown_summary << "\n";
  }
  if (flags.fail_on_regression < 0) return kOk;
  // The gate: a regression trips it (3); otherwise a column it could not compare fails it (4).
  for (const auto& r : result.regressions) std::cerr << "smtlab: regression: " << r.describe() << "\n";
  for (const auto& u : result.unmeasured) std::cerr << "smtlab: not measured: " << u.describe() << "\n";
  if (!result.regressions.empty()) return kRegression;
  return result.unmeasured.empty() ? kOk : kCellsFailed;
}

}  // namespace smtlab::cli
