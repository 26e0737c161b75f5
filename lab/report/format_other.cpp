// Markdown, JSON and CSV renderings of the comparison tables.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/compare.hpp"
#include "report/markdown.hpp"
#include "report/vmstat.hpp"

namespace smtlab::report {

using nlohmann::json;

std::string md_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|' || c == '*' || c == '_' || c == '`' || c == '<' || c == '>' || c == '[' || c == ']' || c == '\\')
      out += '\\';
    if (c == '\n' || c == '\r') c = ' ';
    out += c;
  }
  return out;
}

namespace {
std::string signed_pct(double pct) {
  if (!std::isfinite(pct)) return "n/a";
  return fmt::format("{:+.2f}%", pct);
}
}  // namespace

std::string md_table(const Block& b, const std::vector<std::string>& stats_rows, bool mean_only) {
  std::string out = "| |";
  std::string sep = "|---|";
  for (size_t i = 0; i < b.columns.size(); ++i) {
    out += " " + md_escape(b.columns[i].name) + (i == b.baseline ? " (baseline)" : "") + " |";
    sep += "---:|";
  }
  out += "\n" + sep + "\n";
  for (const auto& stat : stats_rows) {
    if (mean_only && stat != "Amean") continue;
    for (const auto& m : b.metrics) {
      out += "| " + statistic_label(stat, m.higher_is_better) + " " + md_escape(m.metric) + " |";
      for (size_t i = 0; i < b.columns.size(); ++i) {
        const Value& v = m.values[i];
        if (v.empty()) {
          out += " - |";
          continue;
        }
        double x = statistic_value(v, stat, m.higher_is_better);
        double pct = cell_percent(b, m, i, stat);
        bool star = stat == "Amean" && i != b.baseline && m.tests[i].significant;
        std::string text = std::isfinite(x) ? fmt::format("{:.2f} ({})", x, signed_pct(pct)) : "n/a";
        out += " " + (star ? "**" + text + "**" : text) + " |";
      }
      out += "\n";
    }
  }
  return out;
}

std::string md_failed(const Block& b) {
  std::string out;
  for (const auto& f : b.failed)
    out += "- " + std::string(f.status == "failed" ? "failed" : "not run") + ": `" + f.column + "` (cell " + f.id +
           ")" + (f.error.empty() ? "" : ": " + md_escape(f.error.substr(0, f.error.find('\n')))) + "\n";
  return out;
}

std::string md_disturbed(const Block& b) {
  std::string out;
  for (const auto& d : b.disturbed)
    for (const auto& reason : d.reasons)
      out += "- disturbed: `" + d.column + "` (cell " + d.id + "): " + md_escape(reason) + "\n";
  return out;
}

namespace {
json num(double v) { return std::isfinite(v) ? json(v) : json(); }
}  // namespace

std::string format_markdown(const Tables& t, const CompareOptions& options) {
  std::string out = "_" + md_escape(stats::describe(t.rule)) + "; bold = significant; positive % = better_\n";
  auto stats_rows = selected_statistics(options);
  for (const Block& b : t.blocks) {
    out += "\n### " + md_escape(b.title) + "\n\n";
    if (b.metrics.empty()) out += "(no measurements)\n";
    else out += md_table(b, stats_rows, false);
    if (options.duration) {
      out += "\n| Duration (s) |";
      std::string sep = "|---|", bench = "| bench |", wall = "| cell wall |";
      for (const auto& c : b.columns) {
        out += " " + md_escape(c.name) + " |";
        sep += "---:|";
        bench += c.cell && c.cell->bench_s >= 0 ? fmt::format(" {:.2f} |", c.cell->bench_s) : std::string(" - |");
        wall += c.cell && c.cell->wall_s >= 0 ? fmt::format(" {:.2f} |", c.cell->wall_s) : std::string(" - |");
      }
      out += "\n" + sep + "\n" + bench + "\n" + wall + "\n";
    }
    if (options.vmstat) {
      std::string v = format_vmstat(b, options.vmstat_columns, options.vmstat_layout);
      if (!v.empty()) out += "\n```text\n" + v + "```\n";
    }
    std::string f = md_disturbed(b) + md_failed(b);
    if (!f.empty()) out += "\n" + f;
  }
  for (const auto& w : t.warnings) out += "\n> warning: " + md_escape(w) + "\n";
  return out;
}

std::string format_json(const Tables& t, const CompareOptions& options) {
  json out;
  out["significance"] = {{"rule", stats::rule_name(t.rule.rule)},
                         {"description", stats::describe(t.rule)},
                         {"alpha", t.rule.rule == stats::Rule::mmtests_2019 ? 0.10 : t.rule.alpha},
                         {"min_effect_pct", t.rule.min_effect_pct}};
  out["blocks"] = json::array();
  for (const Block& b : t.blocks) {
    json jb = {{"title", b.title}, {"benchmark", b.benchmark}, {"topology", b.topology},
               {"baseline", b.columns.empty() ? "" : b.columns[b.baseline].name}};
    jb["columns"] = json::array();
    for (const auto& c : b.columns)
      jb["columns"].push_back({{"name", c.name}, {"variant", c.variant}, {"topology", c.topology}, {"run", c.run},
                               {"cell", c.cell ? c.cell->id : ""}, {"status", c.cell ? c.cell->status : "missing"},
                               {"bench_s", c.cell ? num(c.cell->bench_s >= 0 ? c.cell->bench_s : NAN) : json()},
                               {"wall_s", c.cell ? num(c.cell->wall_s >= 0 ? c.cell->wall_s : NAN) : json()},
                               {"vm", c.vm >= 0 ? json(c.vm) : json()}});
    jb["metrics"] = json::array();
    for (const auto& m : b.metrics) {
      json jm = {{"metric", m.metric}, {"unit", m.unit}, {"better", m.higher_is_better ? "higher" : "lower"}};
      jm["columns"] = json::array();
      for (size_t i = 0; i < b.columns.size(); ++i) {
        const Value& v = m.values[i];
        json jv = {{"column", b.columns[i].name}, {"n", v.n}};
        if (!v.empty()) {
          for (const auto& s : all_statistics()) {
            double x = statistic_value(v, s, m.higher_is_better);
            jv[statistic_label(s, m.higher_is_better)] = num(x);
            if (!m.values[b.baseline].empty())
              jv["pct_" + statistic_label(s, m.higher_is_better)] = num(cell_percent(b, m, i, s));
          }
          if (m.higher_is_better) jv["Amean"] = num(v.amean);
          jv["ci95"] = num(v.ci95);
          const auto& r = m.tests[i];
          if (i != b.baseline && r.testable)
            jv["test"] = {{"significant", r.significant}, {"difference", num(r.difference)}, {"t", num(r.t)},
                          {"df", num(r.df)},           {"p", num(r.p)},
                          {"ci", {num(r.ci_low), num(r.ci_high)}}};
        }
        jm["columns"].push_back(std::move(jv));
      }
      jb["metrics"].push_back(std::move(jm));
    }
    jb["failed"] = json::array();
    for (const auto& f : b.failed)
      jb["failed"].push_back({{"column", f.column}, {"cell", f.id}, {"status", f.status}, {"error", f.error}});
    jb["disturbed"] = json::array();
    for (const auto& d : b.disturbed)
      jb["disturbed"].push_back({{"column", d.column}, {"cell", d.id}, {"reasons", d.reasons}});
    json profile = json::array();
    for (const auto& s : vmstat_profile(b)) {
      json js = {{"column", s.column}, {"t", s.t}, {"rows", s.rows}};
      profile.push_back(std::move(js));
    }
    if (options.vmstat) {
      jb["vmstat"] = std::move(profile);
      json gaps = json::array();
      for (const auto& g : vmstat_gaps(b))
        gaps.push_back({{"column", g.column}, {"cell", g.cell}, {"vm", g.vm}, {"interval_s", g.interval_s},
                        {"why", g.describe()}});
      jb["vmstat_gaps"] = std::move(gaps);
    }
    out["blocks"].push_back(std::move(jb));
  }
  out["warnings"] = t.warnings;
  return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string format_csv(const Tables& t, const CompareOptions& options) {
  auto q = [](const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
  };
  auto n = [](double v) { return std::isfinite(v) ? fmt::format("{}", v) : std::string(); };
  std::string out =
      "block,statistic,metric,unit,better,column,variant,topology,n,value,pct_change,significant,p,ci_low,ci_high,disturbed\n";
  for (const Block& b : t.blocks)
    for (const auto& stat : selected_statistics(options))
      for (const auto& m : b.metrics) {
        for (size_t i = 0; i < b.columns.size(); ++i) {
          const Value& v = m.values[i];
          const auto& c = b.columns[i];
          double x = v.empty() ? NAN : statistic_value(v, stat, m.higher_is_better);
          double pct = cell_percent(b, m, i, stat);
          bool mean_row = stat == "Amean";
          const auto& r = m.tests[i];
          const bool disturbed = std::any_of(b.disturbed.begin(), b.disturbed.end(),
                                             [&](const DisturbedCell& d) { return d.column == c.name; });
          out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", q(b.title),
                             statistic_label(stat, m.higher_is_better), q(m.metric), q(m.unit),
                             m.higher_is_better ? "higher" : "lower", q(c.name), q(c.variant), q(c.topology), v.n,
                             n(x), n(pct), mean_row && i != b.baseline && r.significant ? "yes" : "no",
                             mean_row && r.testable ? n(r.p) : "", mean_row && r.testable ? n(r.ci_low) : "",
                             mean_row && r.testable ? n(r.ci_high) : "", disturbed ? "yes" : "no");
        }
      }
  return out;
}

}  // namespace smtlab::report
