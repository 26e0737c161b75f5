#pragma once
// What `smtlab compare` and `smtlab report` can be asked for.
#include <optional>
#include <string>
#include <vector>

#include "stats/significance.hpp"

namespace smtlab::report {

enum class Format { text, markdown, json, csv };
enum class Grouping {
  by_benchmark,  // one block per benchmark; columns "<variant>-<topology>" in plan order (default)
  by_topology,   // one block per benchmark and topology; columns = variants
};
enum class VmstatLayout { side_by_side, stacked };

struct CompareOptions {
  Format format = Format::text;
  Grouping grouping = Grouping::by_benchmark;
  std::string baseline;  // a column name (or a variant name); empty: the first column
  stats::RuleOptions rule;  // default: Welch, alpha 0.05, min effect 1 %
  // Rows, in this order of names: "Min", "Amean" (Hmean for higher-is-better metrics), "Stddev",
  // "CoeffVar", "Max", "BAmean-95". Printed stat-major in mmtests' order whatever the order here.
  std::vector<std::string> statistics = {"Amean", "Stddev"};
  bool kernbench_user_sys = false;  // also user-N and syst-N rows
  bool all_metrics = false;         // every metric the guests reported (vcsw-N, cs/msg, ...)
  // A cell whose guests all ran the benchmark (roles [benchmark, benchmark]): one column per guest
  // that sent measured samples ("<column>/vm<N>", its own vmstat profile too) instead of their
  // samples pooled in one column. Shows whether the guests shared the host fairly.
  bool per_vm = false;
  bool duration = true;             // the Duration table per block
  bool vmstat = true;               // the vmstat profile per block (text/markdown)
  VmstatLayout vmstat_layout = VmstatLayout::side_by_side;
  std::vector<std::string> vmstat_columns = {"r", "b", "swpd", "free", "buff", "cache", "si", "so", "bi",
                                             "bo", "in", "cs", "us", "sy", "id", "wa", "st"};
  // Significant differences worse than this (percent, against the baseline, mean rows only) are
  // listed in CompareResult::regressions. 0: every significant regression.
  double regression_threshold_pct = 0;
};

// Every statistic compare knows, in mmtests' row order.
const std::vector<std::string>& all_statistics();
// "text" | "markdown" | "md" | "json" | "csv"; throws smtlab::Error otherwise.
Format parse_format(const std::string& name);
// "benchmark" | "topology"; throws smtlab::Error otherwise.
Grouping parse_grouping(const std::string& name);
// Comma-separated statistic names (case-insensitive; "all" for all); throws on unknown names.
std::vector<std::string> parse_statistics(const std::string& list);

struct ReportOptions {
  CompareOptions compare;  // grouping, baseline, rule, statistics for the tables
  std::string title;       // empty: "smtlab: <recipe name>"
  bool plots = true;       // false: tables only (no SVG charts)
  bool manifest = true;    // include each run's manifest.json (and recipe text)
};

}  // namespace smtlab::report
