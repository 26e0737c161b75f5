#include "report/vmstat.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace smtlab::report {

std::vector<VmstatSeries> vmstat_profile(const Block& block, int vm) {
  std::vector<VmstatSeries> out;
  for (const auto& col : block.columns) {
    if (!col.cell) continue;
    VmstatSeries s;
    s.column = col.name;
    std::vector<const results::MonitorRecord*> recs;
    for (const auto& m : col.cell->monitors)
      // Only the measured phase: set-up samples count their time from another origin.
      if (m.monitor == "vmstat" && m.vm == (col.vm >= 0 ? col.vm : vm) && std::isfinite(m.t) && m.phase == "measure")
        recs.push_back(&m);
    std::stable_sort(recs.begin(), recs.end(), [](auto* a, auto* b) { return a->t < b->t; });
    for (auto* r : recs) {
      s.t.push_back(r->t);
      s.rows.push_back(r->values);
    }
    if (!s.t.empty()) out.push_back(std::move(s));
  }
  return out;
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

}  // namespace

std::string format_vmstat(const Block& block, const std::vector<std::string>& fields, VmstatLayout layout) {
  auto series = vmstat_profile(block);
  if (series.empty()) return {};
  const bool per_vm = std::any_of(block.columns.begin(), block.columns.end(), [](const Column& c) { return c.vm >= 0; });
  std::string out = "vmstat " + block.title + (per_vm ? " (vm 0; a <column>/vmN: guest N)\n" : " (vm 0)\n");
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

}  // namespace smtlab::report
