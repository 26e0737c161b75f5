#pragma once
// The comparison as numbers, before any formatting: blocks of columns (one cell each) and metric
// rows with every statistic and the significance test against the baseline column. All output
// formats (text, markdown, json, csv, html) render this.
#include <string>
#include <vector>

#include "report/options.hpp"
#include "results/loader.hpp"
#include "stats/significance.hpp"

namespace smtlab::report {

struct Column {
  std::string name;  // header text: "<variant>-<topology>" (or "<variant>"; "<run>/" prefixed on clashes)
  std::string variant, topology, run;
  const results::CellResult* cell = nullptr;  // null: the run has no such cell
  int vm = -1;  // CompareOptions::per_vm: the guest whose samples this column holds; -1: every guest's
  // The guests this column's samples come from: `vm`, or all.
  bool holds(const results::Sample& s) const { return vm < 0 || s.vm == vm; }
};

// Statistics of one column for one metric (warm-up samples excluded).
struct Value {
  size_t n = 0;
  double amean = 0, hmean = 0, stddev = 0, coeffvar = 0, min = 0, max = 0, bamean = 0;
  double ci95 = 0;  // half width of the 95 % confidence interval of the mean
  bool empty() const { return n == 0; }
};

struct MetricRow {
  std::string metric;
  std::string unit;
  bool higher_is_better = false;
  std::vector<Value> values;             // one per column
  std::vector<stats::TestResult> tests;  // one per column (the baseline's is not significant)
};

struct FailedCell {
  std::string column, id, status, error;
};

// A cell that ran to the end but whose measurement the run marked as disturbed (its manifest
// entry's "disturbances": the host's other processes or steal, RCU stalls, soft lockups, ...):
// its numbers are in the tables, and the reasons are shown under them.
struct DisturbedCell {
  std::string column, id;
  std::vector<std::string> reasons;  // at most kMaxDisturbanceReasons, each one line
};
inline constexpr size_t kMaxDisturbanceReasons = 5;

struct Block {
  std::string title;  // "kernbench", or "kernbench HT" when grouped by topology
  std::string benchmark, topology;
  std::vector<Column> columns;
  size_t baseline = 0;
  std::vector<MetricRow> metrics;
  std::vector<FailedCell> failed;  // cells of this block that did not end "ok"
  std::vector<DisturbedCell> disturbed;  // cells of this block that ended "ok" but were disturbed
};

struct Tables {
  stats::RuleOptions rule;
  std::vector<Block> blocks;
  std::vector<std::string> warnings;  // loading problems, unknown baseline fallbacks, ...
  // Of those, the runs that ran on other conditions than the first (condition_differences): the
  // CI summary shows them too.
  std::vector<std::string> conditions;
  // Shards of a sharded run that the run's directory does not hold (RunResults::absent_shards):
  // their cells have no column, and nothing of them was measured.
  struct AbsentShard {
    std::string run;  // RunResults::name()
    results::AbsentShard shard;
  };
  std::vector<AbsentShard> absent;
};

// Throws smtlab::Error when the baseline names no column of any block; a block that lacks it
// keeps its first column as baseline, with a warning.
Tables build_tables(const std::vector<results::RunResults>& runs, const CompareOptions& options);
// The tables point into `runs` (Column::cell): runs that die before them are refused at compile time.
Tables build_tables(std::vector<results::RunResults>&& runs, const CompareOptions& options) = delete;

// The row name of a statistic for a metric: "Amean" becomes "Hmean" for higher-is-better metrics.
std::string statistic_label(const std::string& statistic, bool higher_is_better);
// The value of a statistic ("Min", "Amean", "Stddev", "CoeffVar", "Max", "BAmean-95").
double statistic_value(const Value& v, const std::string& statistic, bool higher_is_better);
// Percent change against the baseline, signed so that positive is better (mmtests' convention;
// Stddev and CoeffVar always lower-is-better). 0 when equal; NaN when the baseline is 0 and the
// value is not, or either is NaN.
double percent_change(const std::string& statistic, double base, double value, bool higher_is_better);
// The percent shown next to a column's statistic: 0 for the baseline, NaN (n/a) when either value
// is missing or not a number.
double cell_percent(const Block& b, const MetricRow& m, size_t column, const std::string& statistic);

}  // namespace smtlab::report
