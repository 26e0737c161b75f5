// compare_runs: tables in the requested format, regressions for CI gates and the CI summary.
#include "report/compare.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/markdown.hpp"

namespace smtlab::report {

std::string Regression::describe() const {
  return fmt::format("{} {} {}: {} is {:.2f}% worse than {} ({:.2f} -> {:.2f})", block, statistic, metric, column,
                     -change_pct, baseline, base_value, value);
}

std::vector<Regression> find_regressions(const Tables& t, double threshold_pct) {
  std::vector<Regression> out;
  for (const Block& b : t.blocks)
    for (const auto& m : b.metrics) {
      const Value& base = m.values[b.baseline];
      if (base.empty()) continue;
      for (size_t i = 0; i < b.columns.size(); ++i) {
        if (i == b.baseline || m.values[i].empty() || !m.tests[i].significant) continue;
        double bv = statistic_value(base, "Amean", m.higher_is_better);
        double v = statistic_value(m.values[i], "Amean", m.higher_is_better);
        double pct = percent_change("Amean", bv, v, m.higher_is_better);
        if (std::isfinite(pct) && pct < 0 && -pct > threshold_pct)
          out.push_back({b.title, m.metric, statistic_label("Amean", m.higher_is_better), b.columns[i].name,
                         b.columns[b.baseline].name, pct, bv, v});
      }
    }
  return out;
}

std::string Unmeasured::describe() const {
  return block + " " + column + (id.empty() ? "" : " (cell " + id + ")") + ": " + why;
}

// An absent shard lists this many of its cells.
constexpr size_t kListedAbsentCells = 5;

std::vector<Unmeasured> find_unmeasured(const Tables& t) {
  std::vector<Unmeasured> out;
  for (const Block& b : t.blocks)
    for (size_t i = 0; i < b.columns.size(); ++i) {
      const Column& c = b.columns[i];
      if (!c.cell) continue;  // no such cell in that run: nothing was expected
      if (c.cell->status != "ok") {
        const std::string& error = c.cell->error;
        out.push_back({b.title, c.name, c.cell->id,
                       c.cell->status + (error.empty() ? "" : ": " + error.substr(0, error.find('\n')))});
        continue;
      }
      for (const MetricRow& m : b.metrics) {
        if (!m.values[i].empty()) continue;
        const bool others = std::any_of(m.values.begin(), m.values.end(), [](const Value& v) { return !v.empty(); });
        if (others) out.push_back({b.title, c.name, c.cell->id, "no samples for " + m.metric});
      }
    }
  for (const auto& a : t.absent) {
    std::string cells;
    for (size_t i = 0; i < a.shard.cells.size() && i < kListedAbsentCells; ++i) cells += (i ? ", " : "") + a.shard.cells[i];
    if (a.shard.cells.size() > kListedAbsentCells)
      cells += ", and " + std::to_string(a.shard.cells.size() - kListedAbsentCells) + " more";
    out.push_back({a.run, "shard " + a.shard.name(), "",
                   "not in this directory, so its cells (" + cells + ") were not measured; run that shard and " +
                       "`smtlab merge` it with this directory"});
  }
  return out;
}

CompareResult compare_runs(const std::vector<results::RunResults>& runs, const CompareOptions& options) {
  Tables t = build_tables(runs, options);
  CompareResult r;
  switch (options.format) {
    case Format::text: r.output = format_text(t, options); break;
    case Format::markdown: r.output = format_markdown(t, options); break;
    case Format::json: r.output = format_json(t, options); break;
    case Format::csv: r.output = format_csv(t, options); break;
  }
  r.regressions = find_regressions(t, options.regression_threshold_pct);
  r.unmeasured = find_unmeasured(t);
  for (const auto& b : t.blocks) {
    r.failed.insert(r.failed.end(), b.failed.begin(), b.failed.end());
    r.disturbed.insert(r.disturbed.end(), b.disturbed.begin(), b.disturbed.end());
  }
  r.warnings = t.warnings;
  // The CI summary: the rule, the mean rows, then what went wrong.
  std::string s = "## smtlab compare\n\n_" + md_escape(stats::describe(t.rule)) + "_\n";
  // A gate against a baseline measured elsewhere (another runner type, accelerator, guest gcc)
  // says so where the gate's reader looks.
  for (const auto& w : t.conditions) s += "\n> warning: " + md_escape(w) + "\n";
  for (const Block& b : t.blocks) {
    s += "\n### " + md_escape(b.title) + "\n\n";
    s += b.metrics.empty() ? std::string("(no measurements)\n") : md_table(b, {"Amean"}, true);
    const std::string problems = md_disturbed(b) + md_failed(b);
    s += problems.empty() ? "" : "\n" + problems;
  }
  if (r.regressions.empty() && r.unmeasured.empty()) {
    s += fmt::format("\nNo significant regression beyond {:.2f}% against the baseline.\n",
                     options.regression_threshold_pct);
  } else if (r.regressions.empty()) {
    // Not "no regression": what was not measured may hide one.
    s += fmt::format("\nNo significant regression beyond {:.2f}% among what was measured; what was not "
                     "(below) could hide one, so this comparison does not pass.\n",
                     options.regression_threshold_pct);
  } else {
    s += fmt::format("\n**{} significant regression(s) beyond {:.2f}%:**\n\n", r.regressions.size(),
                     options.regression_threshold_pct);
    for (const auto& g : r.regressions) s += "- " + md_escape(g.describe()) + "\n";
  }
  if (!r.unmeasured.empty()) {
    s += fmt::format("\n**{} column(s) not measured: no comparison can pass them:**\n\n", r.unmeasured.size());
    for (const auto& u : r.unmeasured) s += "- not measured: " + md_escape(u.describe()) + "\n";
  }
  r.markdown_summary = s;
  return r;
}

std::string compare(const std::vector<results::RunResults>& runs, const CompareOptions& options) {
  return compare_runs(runs, options).output;
}

}  // namespace smtlab::report
