#include "report/vmstat.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace smtlab::report {

namespace {

// The guest a column's profile comes from: its own (per-VM columns), else the cell's first guest
// with the benchmark role (a noise guest runs no sampler; vm 0 when the roles are not recorded).
int profiled_vm(const Column& col) {
  if (col.vm >= 0) return col.vm;
  const auto& roles = col.cell->roles;
  const auto first = std::find(roles.begin(), roles.end(), "benchmark");
  return first == roles.end() ? 0 : static_cast<int>(first - roles.begin());
}

// The measured-phase vmstat records of the column's guest, in time order.
std::vector<const results::MonitorRecord*> measured_rows(const Column& col, int vm) {
  std::vector<const results::MonitorRecord*> recs;
  for (const auto& m : col.cell->monitors)
    // Only the measured phase: set-up samples count their time from another origin.
    if (m.monitor == "vmstat" && m.vm == vm && std::isfinite(m.t) && m.phase == "measure") recs.push_back(&m);
  std::stable_sort(recs.begin(), recs.end(), [](auto* a, auto* b) { return a->t < b->t; });
  return recs;
}

std::string seconds(double s) { return fmt::format("{:.{}f}", s, s < 10 ? 2 : 1); }

}  // namespace

std::vector<VmstatSeries> vmstat_profile(const Block& block) {
  std::vector<VmstatSeries> out;
  for (const auto& col : block.columns) {
    if (!col.cell) continue;
    VmstatSeries s;
    s.column = col.name;
    s.vm = profiled_vm(col);
    for (auto* r : measured_rows(col, s.vm)) {
      s.t.push_back(r->t);
      s.rows.push_back(r->values);
    }
    if (!s.t.empty()) out.push_back(std::move(s));
  }
  return out;
}

std::vector<VmstatGap> vmstat_gaps(const Block& block) {
  std::vector<VmstatGap> out;
  for (const auto& col : block.columns) {
    if (!col.cell || col.cell->status != "ok" || !(col.cell->vmstat_interval_s > 0)) continue;
    const int vm = profiled_vm(col);
    if (!measured_rows(col, vm).empty()) continue;
    VmstatGap gap{col.name, col.cell->id, vm, col.cell->vms, col.cell->bench_s, col.cell->vmstat_interval_s};
    for (const auto& m : col.cell->monitors) gap.setup_rows += m.monitor == "vmstat" && m.vm == vm ? 1 : 0;
    out.push_back(std::move(gap));
  }
  return out;
}

std::string VmstatGap::describe() const {
  std::string out = "no vmstat row for " + column + " (cell " + cell + ", vm " + std::to_string(vm) + "): ";
  // A few rows over what the benchmark ran, and never below what a recipe accepts.
  const double span = bench_s >= 0 ? std::min(bench_s, interval_s) : interval_s;
  const std::string more_often = "sample more often (recipe: monitors: vmstat: {interval: " +
                                 fmt::format("{:.1f}", std::max(0.1, std::floor(span / 4 * 10) / 10)) +
                                 "}) or measure longer";
  if (bench_s >= 0 && bench_s < interval_s)
    return out + "its benchmark ran " + seconds(bench_s) + " s, less than one " + seconds(interval_s) +
           " s sampling interval; for a run-queue profile, " + more_often;
  if (setup_rows > 0)
    return out + "its " + std::to_string(setup_rows) +
           " row(s) all came before the first measured iteration (set-up, warm-up), and the measured iterations "
           "ended within one " + seconds(interval_s) + " s sampling interval; for a run-queue profile, " + more_often;
  // bench_s spans the cell's guests, which start at different times: one guest's own iterations
  // can end within an interval of a longer span.
  return out + "the guest sent none with a " + seconds(interval_s) + " s sampling interval" +
         (bench_s >= 0 ? " while the cell's benchmark ran " + seconds(bench_s) + " s" +
                             (vms > 1 ? " (first iteration of its " + std::to_string(vms) + " guests to the last end)"
                                      : std::string())
                       : std::string()) +
         "; a guest whose iterations end within one interval has none: " + more_often +
         "; if they ran longer, its console and events.jsonl in the cell's directory may say why";
}

namespace {

std::string num(double v) {
  if (!std::isfinite(v)) return "-";
  if (std::fabs(v - std::round(v)) < 1e-9 || std::fabs(v) >= 1000) return fmt::format("{:.0f}", v);
  return fmt::format("{:.1f}", v);
}

std::string cell(const std::map<std::string, double>& row, const std::string& field) {
  auto it = row.find(field);
  return it == row.end() ? "-" : num(it->second);
}

// Width of each field for one series: max of the header and every value.
std::vector<size_t> widths(const VmstatSeries& s, const std::vector<std::string>& fields) {
  std::vector<size_t> w;
  for (const auto& f : fields) {
    size_t m = f.size();
    for (const auto& row : s.rows) m = std::max(m, cell(row, f).size());
    w.push_back(m);
  }
  return w;
}

std::string rstrip(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// The vmstat table of the series (header line included).
std::string format_series(const Block& block, const std::vector<VmstatSeries>& series,
                          const std::vector<std::string>& fields, VmstatLayout layout) {
  // Which guest each series shows: a per-guest column its own; a pooled one (its cell's guests'
  // samples together) vm 0, unless its roles put a noise guest first.
  const auto with_cell = [](const Column& c) { return c.cell != nullptr; };
  const bool per_vm = std::any_of(block.columns.begin(), block.columns.end(), [](const Column& c) { return c.vm >= 0; });
  const bool pooled = std::any_of(block.columns.begin(), block.columns.end(),
                                  [&](const Column& c) { return with_cell(c) && c.vm < 0; });
  const bool pooled_vm0 = std::all_of(block.columns.begin(), block.columns.end(),
                                      [&](const Column& c) { return !with_cell(c) || c.vm >= 0 || profiled_vm(c) == 0; });
  std::string guests = pooled ? (pooled_vm0 ? "vm 0" : "each cell's first benchmark guest") : "";
  if (per_vm) guests += (guests.empty() ? "" : "; ") + std::string("a <column>/vmN: guest N");
  std::string out = "vmstat " + block.title + " (" + guests + ")\n";
  const size_t tw = 7;  // "Time(s)"
  if (layout == VmstatLayout::stacked) {
    for (const auto& s : series) {
      auto w = widths(s, fields);
      out += s.column + "\n";
      std::string h = fmt::format("{:>{}}", "Time(s)", tw);
      for (size_t i = 0; i < fields.size(); ++i) h += fmt::format(" {:>{}}", fields[i], w[i]);
      out += rstrip(h) + "\n";
      for (size_t k = 0; k < s.t.size(); ++k) {
        std::string line = fmt::format("{:>{}}", num(s.t[k]), tw);
        for (size_t i = 0; i < fields.size(); ++i) line += fmt::format(" {:>{}}", cell(s.rows[k], fields[i]), w[i]);
        out += line + "\n";
      }
      out += "\n";
    }
    return out;
  }
  // Side by side: rows aligned by sample index; the time shown is the first series' that has one.
  std::vector<std::vector<size_t>> w;
  std::vector<size_t> group_width;
  for (const auto& s : series) {
    w.push_back(widths(s, fields));
    size_t g = 0;
    for (size_t x : w.back()) g += x + 1;
    group_width.push_back(std::max(g, s.column.size() + 1));
  }
  std::string names = fmt::format("{:>{}}", "", tw), header = fmt::format("{:>{}}", "Time(s)", tw);
  for (size_t c = 0; c < series.size(); ++c) {
    names += " |" + fmt::format(" {:<{}}", series[c].column, group_width[c] - 1);
    std::string h;
    for (size_t i = 0; i < fields.size(); ++i) h += fmt::format(" {:>{}}", fields[i], w[c][i]);
    header += " |" + fmt::format("{:<{}}", h, group_width[c]);
  }
  out += rstrip(names) + "\n" + rstrip(header) + "\n";
  size_t rows = 0;
  for (const auto& s : series) rows = std::max(rows, s.t.size());
  for (size_t k = 0; k < rows; ++k) {
    double t = NAN;
    for (const auto& s : series)
      if (k < s.t.size()) {
        t = s.t[k];
        break;
      }
    std::string line = fmt::format("{:>{}}", num(t), tw);
    for (size_t c = 0; c < series.size(); ++c) {
      std::string g;
      for (size_t i = 0; i < fields.size(); ++i)
        g += fmt::format(" {:>{}}", k < series[c].t.size() ? cell(series[c].rows[k], fields[i]) : "", w[c][i]);
      line += " |" + fmt::format("{:<{}}", g, group_width[c]);
    }
    out += rstrip(line) + "\n";
  }
  return out;
}

}  // namespace

std::string format_vmstat(const Block& block, const std::vector<std::string>& fields, VmstatLayout layout) {
  const auto series = vmstat_profile(block);
  std::string out = series.empty() ? std::string() : format_series(block, series, fields, layout);
  for (const auto& gap : vmstat_gaps(block)) out += gap.describe() + "\n";
  return out;
}

}  // namespace smtlab::report
