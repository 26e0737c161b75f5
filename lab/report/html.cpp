#include "report/html.hpp"

#include <cmath>
#include <map>
#include <regex>

#include <fmt/format.h>

#include "report/compare.hpp"
#include "report/svg.hpp"
#include "report/tables.hpp"
#include "report/vmstat.hpp"
#include "smtlab/version.hpp"
#include "util/packages.hpp"

namespace smtlab::report {

using nlohmann::json;
using svg::escape;

namespace {

const char* kStyle = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:1.5em;margin-bottom:4px} h2{margin-top:36px;border-bottom:2px solid #ccc;padding-bottom:4px}
h3{margin-top:22px;font-size:1.05em}
table{border-collapse:collapse;margin:8px 0;font-size:13px}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:right;white-space:nowrap}
th{background:#f2f2f2} td.label{text-align:left;font-family:monospace}
td.sig-better{background:#d8f0d8;font-weight:bold} td.sig-worse{background:#f6d5d5;font-weight:bold}
td.base{background:#f7f7f7} .pct{color:#555;font-size:11px}
.meta td,.meta th{text-align:left} .failed{background:#fde8e8;border:1px solid #e0a0a0;padding:8px 12px}
.legend span{display:inline-block;margin-right:14px;font-size:13px}
.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px}
.charts{display:flex;flex-wrap:wrap;gap:12px}
svg.chart{border:1px solid #ddd;background:#fff} svg .title{font-size:14px;font-weight:bold}
svg .tick{font-size:11px;fill:#444} svg .axis{font-size:12px;fill:#222}
pre{background:#f6f6f6;padding:8px;overflow-x:auto;font-size:12px;max-height:480px}
.note{color:#555;font-size:13px} table.topo td.label{white-space:normal;min-width:320px}
)";

std::string fmt2(double v) { return std::isfinite(v) ? fmt::format("{:.2f}", v) : std::string("n/a"); }

std::string legend(const Block& b) {
  std::string s = "<div class=\"legend\">";
  for (size_t i = 0; i < b.columns.size(); ++i)
    s += fmt::format("<span><i style=\"background:{}\"></i>{}{}</span>", svg::colour(i), escape(b.columns[i].name),
                     i == b.baseline ? " (baseline)" : "");
  return s + "</div>\n";
}

std::string summary_table(const Block& b, const CompareOptions& o) {
  std::string s = "<table class=\"summary\"><tr><th></th>";
  for (size_t i = 0; i < b.columns.size(); ++i)
    s += "<th>" + escape(b.columns[i].name) + (i == b.baseline ? "<br><span class=\"pct\">baseline</span>" : "") +
         "</th>";
  s += "</tr>\n";
  for (const auto& stat : selected_statistics(o))
    for (const auto& m : b.metrics) {
      s += "<tr><td class=\"label\">" + escape(statistic_label(stat, m.higher_is_better) + " " + m.metric) + "</td>";
      for (size_t i = 0; i < b.columns.size(); ++i) {
        const Value& v = m.values[i];
        if (v.empty()) {
          s += "<td>-</td>";
          continue;
        }
        double x = statistic_value(v, stat, m.higher_is_better);
        double pct = cell_percent(b, m, i, stat);
        bool sig = stat == "Amean" && i != b.baseline && m.tests[i].significant;
        std::string cls = i == b.baseline ? "base" : !sig || !std::isfinite(pct) ? "" : pct >= 0 ? "sig-better" : "sig-worse";
        std::string tip;
        if (stat == "Amean" && m.tests[i].testable)
          tip = fmt::format(" title=\"p={:.4g}, difference {:.3g} [{:.3g}, {:.3g}]\"", m.tests[i].p,
                            m.tests[i].difference, m.tests[i].ci_low, m.tests[i].ci_high);
        s += fmt::format("<td class=\"{}\"{}>{} <span class=\"pct\">({}{})</span></td>", cls, tip, fmt2(x),
                         std::isfinite(pct) ? fmt::format("{:+.2f}", pct) : "n/a", std::isfinite(pct) ? "%" : "");
      }
      s += "</tr>\n";
    }
  return s + "</table>\n";
}

// Charts group metrics: "elsp-2", "elsp-4" -> chart "elsp" with groups 2, 4; "latency-p50-us" ->
// chart "latency" with group "p50-us"; anything else is a chart of its own.
std::pair<std::string, std::string> chart_key(const std::string& metric) {
  static const std::regex numbered(R"(^(.*)-([0-9]+)$)");
  std::smatch m;
  if (std::regex_match(metric, m, numbered)) return {m[1], m[2]};
  if (metric.rfind("latency-", 0) == 0) return {"latency", metric.substr(8)};
  return {metric, metric};
}

std::string bar_charts(const Block& b) {
  std::vector<std::string> keys;
  std::map<std::string, std::vector<const MetricRow*>> by_key;
  for (const auto& m : b.metrics) {
    auto key = chart_key(m.metric).first;
    if (!by_key.count(key)) keys.push_back(key);
    by_key[key].push_back(&m);
  }
  std::string s;
  for (const auto& key : keys) {
    std::vector<svg::BarGroup> groups;
    std::string unit;
    bool higher = false;
    for (const MetricRow* m : by_key[key]) {
      svg::BarGroup g;
      g.label = chart_key(m->metric).second;
      unit = m->unit;
      higher = m->higher_is_better;
      for (size_t i = 0; i < b.columns.size(); ++i) {
        const Value& v = m->values[i];
        if (v.empty()) continue;
        g.bars.push_back({i, b.columns[i].name, v.amean, v.ci95, v.n});
      }
      groups.push_back(std::move(g));
    }
    std::string title = b.title + ": " + key + " (mean, 95% CI; " + (higher ? "higher" : "lower") + " is better)";
    s += svg::bar_chart(title, unit.empty() || unit == key ? key : key + " (" + unit + ")", groups);
  }
  return s;
}

std::string vmstat_charts(const Block& b) {
  auto series = vmstat_profile(b);
  if (series.empty()) return {};
  std::map<std::string, size_t> colour_of;
  for (size_t i = 0; i < b.columns.size(); ++i) colour_of.emplace(b.columns[i].name, i);
  std::string s;
  for (auto [field, title] : {std::pair{"r", "run queue (r)"}, std::pair{"cs", "context switches per second (cs)"}}) {
    std::vector<svg::Line> lines;
    for (const auto& ser : series) {
      svg::Line l;
      l.series = colour_of[ser.column];
      l.name = ser.column;
      for (size_t k = 0; k < ser.t.size(); ++k) {
        auto it = ser.rows[k].find(field);
        if (it != ser.rows[k].end()) l.points.emplace_back(ser.t[k], it->second);
      }
      lines.push_back(std::move(l));
    }
    s += svg::line_chart(b.title + ": " + title + ", vm 0", "time (s)", field, lines);
  }
  return s;
}

std::string duration_table(const Block& b) {
  std::string s = "<table><tr><th>duration (s)</th>";
  for (const auto& c : b.columns) s += "<th>" + escape(c.name) + "</th>";
  s += "</tr>";
  for (int row = 0; row < 2; ++row) {
    s += std::string("<tr><td class=\"label\">") + (row == 0 ? "benchmark" : "cell wall") + "</td>";
    for (const auto& c : b.columns) {
      double v = !c.cell ? -1 : row == 0 ? c.cell->bench_s : c.cell->wall_s;
      s += "<td>" + (v >= 0 ? fmt2(v) : std::string("-")) + "</td>";
    }
    s += "</tr>";
  }
  return s + "</table>\n";
}

std::string jstr(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return "";
  const json& v = j[key];
  if (v.is_string()) return v.get<std::string>().substr(0, 256);
  if (v.is_number() || v.is_boolean()) return v.dump();
  return "";
}

std::string topology_section(const std::vector<results::RunResults>& runs) {
  std::string s = "<h2>Topology each guest saw</h2>\n<table class=\"meta topo\"><tr><th>run</th><th>cell</th><th>variant"
                  "</th><th>topology</th><th>status</th><th>vm</th><th>online</th><th>smt active</th><th>cpus "
                  "(cpu: package/die/core, siblings)</th></tr>\n";
  size_t rows = 0;
  for (const auto& run : runs)
    for (const auto& cell : run.cells) {
      std::vector<json> vms;
      if (cell.guest_topology.is_array())
        for (const auto& g : cell.guest_topology) vms.push_back(g);
      if (vms.empty()) vms.push_back(json());
      for (const auto& g : vms) {
        if (++rows > 2000) break;
        std::string cpus;
        if (g.is_object() && g.contains("cpus") && g["cpus"].is_array()) {
          size_t k = 0;
          for (const auto& c : g["cpus"]) {
            if (++k > 256) {
              cpus += " ...";
              break;
            }
            cpus += fmt::format("{}{}: {}/{}/{} [{}]", cpus.empty() ? "" : "; ", jstr(c, "cpu"), jstr(c, "package_id"),
                                jstr(c, "die_id"), jstr(c, "core_id"), jstr(c, "siblings"));
          }
        }
        std::string smt = jstr(g, "smt_active");
        s += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                         "<td class=\"label\">{}</td></tr>\n",
                         escape(run.name()), escape(cell.id), escape(cell.variant), escape(cell.topology),
                         escape(cell.status), escape(jstr(g, "vm")), escape(g.is_null() ? "not reported" : jstr(g, "online")),
                         escape(smt.empty() ? "-" : smt), escape(cpus));
      }
    }
  return s + "</table>\n";
}

}  // namespace

std::string render_html_report(const std::vector<results::RunResults>& runs, const ReportOptions& options) {
  CompareOptions co = options.compare;
  Tables t = build_tables(runs, co);
  std::string title = options.title;
  if (title.empty()) {
    title = "smtlab";
    if (!runs.empty()) title += ": " + jstr(runs[0].manifest.value("recipe", json::object()), "name");
  }
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" + escape(title) +
                  "</title>\n<style>" + kStyle + "</style></head>\n<body>\n<h1>" + escape(title) + "</h1>\n";
  h += "<p class=\"note\">" + escape(stats::describe(t.rule)) +
       ". Percentages are against the baseline column, positive = better; significant differences on mean rows "
       "are highlighted (green better, red worse). Generated by smtlab " +
       escape(kVersion) + ".</p>\n";
  h += "<table class=\"meta\"><tr><th>run</th><th>recipe</th><th>sha256</th><th>accel</th><th>host</th><th>qemu</th>"
       "<th>libvirt</th><th>image</th><th>started</th><th>finished</th></tr>\n";
  for (const auto& run : runs) {
    const json& m = run.manifest;
    json recipe = m.value("recipe", json::object()), host = m.value("host", json::object()),
         versions = m.value("versions", json::object());
    std::string host_text;
    if (host.is_object())
      for (auto it = host.begin(); it != host.end(); ++it)
        if (it->is_string() || it->is_number())
          host_text += (host_text.empty() ? "" : ", ") + it.key() + " " + (it->is_string() ? it->get<std::string>() : it->dump());
    // The image: its name, the first digits of its bytes' sha256, and the guest's compiler (what
    // kernbench's times depend on) when the image recorded its packages.
    const json image = m.value("image", json::object());
    std::string image_text = jstr(image, "name");
    if (const std::string sha = jstr(image, "sha256"); !sha.empty()) image_text += " " + sha.substr(0, 12);
    if (image.is_object() && image.contains("installed") && image["installed"].is_object())
      for (const auto& [package, version] : image["installed"].items())
        if (is_gcc_package(package) && version.is_string())
          image_text += ", " + package + " " + version.get<std::string>();
    h += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                     "<td>{}</td><td>{}</td></tr>\n",
                     escape(run.name()), escape(jstr(recipe, "name")), escape(jstr(recipe, "sha256").substr(0, 16)),
                     escape(jstr(m, "accel")), escape(host_text.substr(0, 300)), escape(jstr(versions, "qemu")),
                     escape(jstr(versions, "libvirt")), escape(image_text.substr(0, 300)), escape(jstr(m, "started")),
                     escape(jstr(m, "finished")));
  }
  h += "</table>\n";

  std::string failed;
  for (const auto& b : t.blocks)
    for (size_t i = 0; i < b.columns.size(); ++i) {
      const results::CellResult* cell = b.columns[i].cell;
      if (!cell || cell->status == "ok") continue;
      std::string tail;
      if (cell->entry.contains("console_tail") && cell->entry["console_tail"].is_string())
        tail = cell->entry["console_tail"].get<std::string>().substr(0, 8000);
      failed += "<li><b>" + escape(b.columns[i].name) + "</b> (cell " + escape(cell->id) + ", " + escape(cell->status) +
                ")" + (cell->error.empty() ? "" : "<pre>" + escape(cell->error.substr(0, 4000)) + "</pre>") +
                (tail.empty() ? "" : "<details><summary>console tail</summary><pre>" + escape(tail) + "</pre></details>") +
                "</li>\n";
    }
  if (!failed.empty()) h += "<div class=\"failed\"><b>Cells that did not finish ok</b><ul>" + failed + "</ul></div>\n";
  // What compare --fail-on-regression refuses to pass: the failed cells above, and ok cells that
  // lack a metric another column of their table has.
  if (const auto unmeasured = find_unmeasured(t); !unmeasured.empty()) {
    h += "<div class=\"failed\"><b>Not measured</b> (a comparison cannot pass these columns)<ul>";
    for (const auto& u : unmeasured) h += "<li>" + escape(u.describe()) + "</li>";
    h += "</ul></div>\n";
  }
  std::string disturbed;
  for (const auto& b : t.blocks)
    for (const auto& d : b.disturbed) {
      disturbed += "<li><b>" + escape(d.column) + "</b> (cell " + escape(d.id) + ")<ul>";
      for (const auto& reason : d.reasons) disturbed += "<li>" + escape(reason) + "</li>";
      disturbed += "</ul></li>\n";
    }
  if (!disturbed.empty())
    h += "<div class=\"failed\"><b>Cells measured while disturbed</b> (their figures are in the tables; "
         "compare them with care)<ul>" + disturbed + "</ul></div>\n";
  if (!t.warnings.empty()) {
    h += "<div class=\"failed\"><b>Warnings</b> (what loading the results found, and runs side by side that ran on other conditions)<ul>";
    for (const auto& w : t.warnings) h += "<li>" + escape(w) + "</li>";
    h += "</ul></div>\n";
  }

  for (const auto& b : t.blocks) {
    h += "<h2>" + escape(b.title) + "</h2>\n";
    if (b.metrics.empty()) {
      h += "<p>(no measurements)</p>\n";
    } else {
      h += summary_table(b, co);
    }
    if (options.plots) {
      h += legend(b);
      h += "<div class=\"charts\">\n" + bar_charts(b) + vmstat_charts(b) + "</div>\n";
      for (const auto& gap : vmstat_gaps(b)) h += "<p class=\"note\">" + escape(gap.describe()) + "</p>\n";
    }
    h += "<h3>Duration</h3>\n" + duration_table(b);
    std::string v = format_vmstat(b, co.vmstat_columns, VmstatLayout::stacked);
    if (!v.empty()) h += "<details><summary>vmstat records</summary><pre>" + escape(v) + "</pre></details>\n";
  }
  h += topology_section(runs);
  if (options.manifest) {
    h += "<h2>Manifest</h2>\n";
    for (const auto& run : runs) {
      json m = run.manifest;
      std::string recipe_text;
      if (m.contains("recipe") && m["recipe"].is_object() && m["recipe"].contains("text") && m["recipe"]["text"].is_string()) {
        recipe_text = m["recipe"]["text"].get<std::string>();
        m["recipe"]["text"] = "(shown above)";
      }
      h += "<h3>" + escape(run.name()) + "</h3>\n";
      if (!recipe_text.empty()) h += "<p class=\"note\">recipe</p><pre>" + escape(recipe_text.substr(0, 200000)) + "</pre>\n";
      h += "<details><summary>manifest.json</summary><pre>" +
           escape(m.dump(2, ' ', false, json::error_handler_t::replace).substr(0, 2000000)) + "</pre></details>\n";
    }
  }
  return h + "</body></html>\n";
}

}  // namespace smtlab::report
