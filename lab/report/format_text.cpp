// mmtests' text format (compare-format.md): two-line headers, `%12.2f (%7.2f%%)`, stars on
// significant mean rows, a Duration table, the vmstat profile, and the cells that did not run.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/compare.hpp"
#include "report/vmstat.hpp"

namespace smtlab::report {

std::vector<std::string> selected_statistics(const CompareOptions& options) {
  std::vector<std::string> out;
  for (const auto& s : all_statistics())
    if (std::find(options.statistics.begin(), options.statistics.end(), s) != options.statistics.end())
      out.push_back(s);
  return out;
}

namespace {

constexpr size_t kCellWidth = 23;  // "%12.2f (%7.2f%%)"
constexpr size_t kStatWidth = 10;  // "Amean     "

std::pair<std::string, std::string> split_name(const std::string& name) {
  size_t dash = name.find('-');
  if (dash == std::string::npos) return {"", name};
  return {name.substr(0, dash), name.substr(dash + 1)};
}

std::string rstrip(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

std::string pct_text(double pct) {
  if (!std::isfinite(pct)) return fmt::format("{:>7}", "n/a");
  return fmt::format("{:7.2f}", pct);
}

// "%12.2f", or n/a in the same 12 columns (a NaN must not shift the row).
std::string value_text(double v) {
  return std::isfinite(v) ? fmt::format("{:12.2f}", v) : fmt::format("{:>12}", "n/a");
}

// mmtests' fixed column width, widened for a block whose names do not fit (a space between any
// two headers).
size_t column_width(const Block& b, size_t fixed) {
  size_t w = fixed;
  for (const auto& c : b.columns) {
    auto [top, bottom] = split_name(c.name);
    w = std::max({w, top.size() + 1, bottom.size() + 1});
  }
  return w;
}

std::string headers(const Block& b, size_t label_width, size_t width) {
  std::string l1(label_width, ' '), l2(label_width, ' ');
  for (const auto& c : b.columns) {
    auto [top, bottom] = split_name(c.name);
    l1 += fmt::format("{:>{}}", top, width);
    l2 += fmt::format("{:>{}}", bottom, width);
  }
  std::string out;
  if (!rstrip(l1).empty()) out += rstrip(l1) + "\n";
  return out + rstrip(l2) + "\n";
}

std::string failed_lines(const Block& b) {
  std::string out;
  for (const auto& f : b.failed) {
    std::string error = f.error.substr(0, f.error.find('\n'));
    out += fmt::format("{} {} (cell {}){}{}\n", f.status == "failed" ? "failed:" : "not run:", f.column, f.id,
                       f.status == "failed" || f.status.empty() ? "" : " status " + f.status,
                       error.empty() ? "" : ": " + error);
  }
  return out;
}

std::string disturbed_lines(const Block& b) {
  std::string out;
  for (const auto& d : b.disturbed)
    for (const auto& reason : d.reasons) out += fmt::format("disturbed: {} (cell {}): {}\n", d.column, d.id, reason);
  return out;
}

}  // namespace

std::string format_text(const Tables& t, const CompareOptions& options) {
  std::string out = stats::describe(t.rule) + "\n";
  auto stats_rows = selected_statistics(options);
  for (const Block& b : t.blocks) {
    out += "\n" + b.title + "\n";
    size_t op_width = 0;
    for (const auto& m : b.metrics) op_width = std::max(op_width, m.metric.size());
    size_t label_width = kStatWidth + op_width;
    if (b.metrics.empty()) {
      out += "(no measurements)\n";
    } else {
      const size_t width = column_width(b, kCellWidth);
      const std::string pad(width - kCellWidth, ' ');
      out += headers(b, label_width, width);
      for (const auto& stat : stats_rows) {
        for (const auto& m : b.metrics) {
          std::string label = statistic_label(stat, m.higher_is_better);
          std::string line = fmt::format("{:<{}}{:<{}}", label, kStatWidth, m.metric, op_width);
          for (size_t i = 0; i < b.columns.size(); ++i) {
            const Value& v = m.values[i];
            if (v.empty()) {
              line += pad + fmt::format("{:>12}{:11}", "-", "");
              continue;
            }
            double x = statistic_value(v, stat, m.higher_is_better);
            double pct = cell_percent(b, m, i, stat);
            bool star = stat == "Amean" && i != b.baseline && m.tests[i].significant;
            line += pad + (star ? fmt::format("{} *{}%*", value_text(x), pct_text(pct))
                                : fmt::format("{} ({}%)", value_text(x), pct_text(pct)));
          }
          out += rstrip(line) + "\n";
        }
      }
    }
    if (options.duration) {
      bool any = false;
      for (const auto& c : b.columns) any |= c.cell && (c.cell->bench_s >= 0 || c.cell->wall_s >= 0);
      if (any) {
        const size_t lw = 16, width = column_width(b, 12);
        out += "\n" + headers(b, lw, width);
        for (int row = 0; row < 2; ++row) {
          std::string line = fmt::format("{:<{}}", row == 0 ? "Duration Bench" : "Duration Elapsed", lw);
          for (const auto& c : b.columns) {
            double v = !c.cell ? -1 : row == 0 ? c.cell->bench_s : c.cell->wall_s;
            line += v >= 0 ? fmt::format("{:>{}.2f}", v, width) : fmt::format("{:>{}}", "-", width);
          }
          out += line + "\n";
        }
      }
    }
    if (options.vmstat) {
      std::string v = format_vmstat(b, options.vmstat_columns, options.vmstat_layout);
      if (!v.empty()) out += "\n" + v;
    }
    std::string f = disturbed_lines(b) + failed_lines(b);
    if (!f.empty()) out += "\n" + f;
  }
  if (!t.warnings.empty()) {
    out += "\n";
    for (const auto& w : t.warnings) out += "warning: " + w + "\n";
  }
  return out;
}

}  // namespace smtlab::report
