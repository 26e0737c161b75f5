#include <catch2/catch.hpp>

#include <regex>

#include "fixtures.hpp"
#include "report/html.hpp"
#include "results/results.hpp"

using namespace smtlab;

namespace {
size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("the HTML report is one self-contained page with charts, topology and manifest") {
  auto dir = fixtures::kernbench_run();
  auto run = results::load_results(dir);
  run.manifest["image"] = {{"name", "bench"},
                           {"sha256", "0123456789ab" + std::string(52, 'f')},
                           {"installed", {{"gcc-12", "12.2.0-14"}, {"make", "4.3-4.1"}, {"gcc-12-base", "12.2.0-14"}}}};
  report::ReportOptions o;
  std::string html = report::render_html_report({run}, o);
  // The image each run's guests ran: its bytes and the guest's compiler (kernbench's times depend on it).
  CHECK(html.find("<th>image</th>") != std::string::npos);
  CHECK(html.find("<td>bench 0123456789ab, gcc-12 12.2.0-14</td>") != std::string::npos);
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("<title>smtlab: seed</title>") != std::string::npos);
  // Nothing fetched from anywhere: no scripts, stylesheets, images or URLs.
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("<link") == std::string::npos);
  CHECK(html.find("<img") == std::string::npos);
  CHECK(html.find("http://") == std::string::npos);
  CHECK(html.find("https://") == std::string::npos);
  // One bar chart (elsp by job count) + run queue + context switches.
  CHECK(count(html, "<svg") == 3);
  CHECK(count(html, "class=\"bar\"") == 3 * 4);  // 3 job counts x 4 columns
  CHECK(count(html, "class=\"ci\"") == 3 * 4);   // each with its 95 % CI whisker
  CHECK(count(html, "<polyline") == 2 * 4);      // r and cs, one line per column
  CHECK(html.find("kernbench: run queue (r), vm 0") != std::string::npos);
  CHECK(html.find("kernbench: elsp (mean, 95% CI; lower is better)") != std::string::npos);
  // The summary table and the rule.
  CHECK(html.find("significance: welch") != std::string::npos);
  CHECK(html.find("Amean elsp-8") != std::string::npos);
  CHECK(html.find("sig-worse") != std::string::npos);
  // Topology as each guest saw it, and the manifest.
  CHECK(html.find("<td class=\"label\">0: 0/0/0 [0-1]; 1: 0/0/0 [0-1]; 2: 0/0/1 [2-3]; 3: 0/0/1 [2-3]</td>") !=
        std::string::npos);
  CHECK(html.find("manifest.json</summary>") != std::string::npos);
  CHECK(html.find("0123abcd") != std::string::npos);

  CHECK(html.find("<b>Not measured</b>") == std::string::npos);  // every column measured every metric

  o.plots = false;
  std::string tables_only = report::render_html_report({run}, o);
  CHECK(count(tables_only, "<svg") == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("the HTML report escapes everything that comes from results") {
  std::vector<fixtures::CellSpec> specs(1);
  specs[0].variant = "<script>alert(1)</script>";
  specs[0].topology = "x\"onmouseover=\"y";
  auto dir = fixtures::temp_dir("escape");
  {
    auto m = fixtures::manifest(specs);
    m["recipe"]["name"] = "<b>bold</b>";
    auto w = results::ResultsWriter::create(dir, m);
    w.append_sample("cell0", fixtures::sample("elsp-<i>2", 1, 1));
    w.append_sample("cell0", fixtures::sample("elsp-<i>2", 2, 2));
    w.set_cell_status("cell0", "failed",
                      {{"error", "<img src=x onerror=alert(1)>"}, {"console_tail", "Kernel panic <tail>"}});
  }
  auto run = results::load_results(dir);
  std::string html = report::render_html_report({run}, {});
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("<img") == std::string::npos);
  CHECK(html.find("<b>bold") == std::string::npos);
  CHECK(html.find("<i>2") == std::string::npos);
  CHECK(html.find("\"onmouseover") == std::string::npos);
  CHECK(html.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  CHECK(html.find("&lt;img src=x onerror=alert(1)&gt;") != std::string::npos);
  CHECK(html.find("console tail</summary><pre>Kernel panic &lt;tail&gt;</pre>") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("the HTML report lists the cells measured while disturbed, escaped") {
  auto dir = fixtures::chat_run();  // rsdl's cell: a host disturbance
  auto run = results::load_results(dir);
  std::string html = report::render_html_report({run}, {});
  size_t at = html.find("<b>Cells measured while disturbed</b>");
  REQUIRE(at != std::string::npos);
  CHECK(html.find("<li><b>rsdl-8cpu</b> (cell cell1)<ul><li>host: other processes used 23 % of the host CPUs", at) !=
        std::string::npos);
  CHECK(html.find("<li><b>mainline-8cpu</b> (cell cell0)", at) == std::string::npos);
  std::filesystem::remove_all(dir);

  std::vector<fixtures::CellSpec> specs(1);
  specs[0].variant = "v";
  specs[0].topology = "t";
  specs[0].iterations = 1;
  dir = fixtures::temp_dir("disturbed-escape");
  {
    auto w = results::ResultsWriter::create(dir, fixtures::manifest(specs));
    w.append_sample("cell0", fixtures::sample("elsp-2", 1, 1));
    w.set_cell_status("cell0", "ok", {{"disturbances", {"rcu-stall: <script>x</script>"}}});
  }
  run = results::load_results(dir);
  html = report::render_html_report({run}, {});
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("<li>rcu-stall: &lt;script&gt;x&lt;/script&gt;</li>") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("the HTML report lists the columns a comparison cannot pass: an ok cell that lacks a metric") {
  std::vector<fixtures::CellSpec> specs(2);
  specs[0].variant = "base", specs[1].variant = "partial";
  for (auto& spec : specs) spec.topology = "HT";
  auto dir = fixtures::temp_dir("html-unmeasured");
  {
    auto w = results::ResultsWriter::create(dir, fixtures::manifest(specs));
    for (int it = 1; it <= 3; ++it) {
      w.append_sample("cell0", fixtures::sample("elsp-2", 100 + it, it));
      w.append_sample("cell0", fixtures::sample("elsp-4", 50 + it, it));
      w.append_sample("cell1", fixtures::sample("elsp-2", 100 + it, it));
    }
    for (const char* id : {"cell0", "cell1"}) w.set_cell_status(id, "ok");
  }
  auto run = results::load_results(dir);
  std::string html = report::render_html_report({run}, {});
  // Both cells ended ok, so the failed list is empty; partial still lacks elsp-4.
  CHECK(html.find("Cells that did not finish ok") == std::string::npos);
  CHECK(html.find("<b>Not measured</b>") != std::string::npos);
  CHECK(html.find("<li>kernbench partial-HT (cell cell1): no samples for elsp-4</li>") != std::string::npos);
  std::filesystem::remove_all(dir);
}
