#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>

#include "fixtures.hpp"
#include "report/compare.hpp"
#include "report/html.hpp"
#include "report/vmstat.hpp"
#include "util/error.hpp"

using namespace smtlab;
using nlohmann::json;


TEST_CASE("chat: Hmean with higher-is-better sign, latency rows, failed cells listed, vmstat, durations") {
  auto dir = fixtures::chat_run();
  auto run = results::load_results(dir);
  report::CompareOptions o;  // default: Welch
  report::CompareResult r = report::compare_runs({run}, o);
  const std::string& text = r.output;
  INFO(text);
  CHECK(text.rfind("significance: welch", 0) == 0);
  // Stat-major rows; Hmean for msgs/s, Amean for latency; op width = longest metric name.
  CHECK(text.find("\nHmean     msgs/s            50000.00 (   0.00%)    10000.00 * -80.00%*           -\n") !=
        std::string::npos);
  CHECK(text.find("Amean     latency-p50-us      102.00 (   0.00%)      302.00 *-196.08%*") != std::string::npos);
  CHECK(text.find("Stddev    latency-p99-us        1.00 (   0.00%)        1.00 (   0.00%)") != std::string::npos);
  CHECK(text.find("cs/msg") == std::string::npos);  // not a default chat row
  CHECK(text.find("Hmean     msgs/s") < text.find("Amean     latency-p50-us"));
  CHECK(text.find("Amean     latency-p99-us") < text.find("Stddev    msgs/s"));
  // Headers split at the first '-'.
  CHECK(text.find("               mainline                   rsdl                 broken\n") != std::string::npos);
  CHECK(text.find("                   8cpu                   8cpu                   8cpu\n") != std::string::npos);
  // The failed cell is listed with the first line of its error.
  CHECK(text.find("failed: broken-8cpu (cell cell2): kernel panic - not syncing\n") != std::string::npos);
  REQUIRE(r.failed.size() == 1);
  CHECK(r.failed[0].id == "cell2");
  // The disturbed cell's numbers stay in the table; the disturbance is said under it (first line).
  CHECK(text.find("disturbed: rsdl-8cpu (cell cell1): host: other processes used 23 % of the host CPUs while the "
                  "benchmark ran (the guests 70 %, smtlab 1 %)\n") != std::string::npos);
  CHECK(text.find("second line") == std::string::npos);
  CHECK(text.find("disturbed: mainline") == std::string::npos);
  REQUIRE(r.disturbed.size() == 1);
  CHECK(r.disturbed[0].id == "cell1");
  CHECK(r.markdown_summary.find("- disturbed: `rsdl-8cpu` (cell cell1): host: other processes used 23 %") !=
        std::string::npos);
  // Duration table.
  CHECK(text.find("Duration Bench        120.00      121.00           -") != std::string::npos);
  CHECK(text.find("Duration Elapsed      150.50      151.50           -") != std::string::npos);
  // vmstat profile side by side.
  CHECK(text.find("vmstat chat (vm 0)") != std::string::npos);
  CHECK(text.find("| mainline-8cpu") != std::string::npos);
  CHECK(text.find("| rsdl-8cpu") != std::string::npos);
  CHECK(text.find("     20 | 402 0    0 1600000") != std::string::npos);
  CHECK(text.find("1100002") != std::string::npos);
  CHECK(text.find("310003") != std::string::npos);
  // CI gate: msgs/s and both latencies are significant regressions; none is beyond 300 %.
  REQUIRE(r.regressions.size() == 3);
  CHECK(r.regressions[0].metric == "msgs/s");
  CHECK(r.regressions[0].column == "rsdl-8cpu");
  CHECK(r.regressions[0].change_pct == Approx(-80.0));
  CHECK(r.regressions[0].describe() == "chat Hmean msgs/s: rsdl-8cpu is 80.00% worse than mainline-8cpu (50000.00 -> 10000.00)");
  o.regression_threshold_pct = 150;
  CHECK(report::compare_runs({run}, o).regressions.size() == 1);  // latency-p50 (-196 %)
  o.regression_threshold_pct = 300;
  CHECK(report::compare_runs({run}, o).regressions.empty());
  CHECK(r.markdown_summary.find("## smtlab compare") != std::string::npos);
  CHECK(r.markdown_summary.find("**3 significant regression(s) beyond 0.00%:**") != std::string::npos);
  CHECK(r.markdown_summary.find("failed: `broken-8cpu`") != std::string::npos);
  CHECK(r.markdown_summary.find("Stddev") == std::string::npos);  // mean rows only

  SECTION("stacked vmstat as in seed 004") {
    report::CompareOptions s;
    s.vmstat_layout = report::VmstatLayout::stacked;
    s.vmstat_columns = {"r", "cs", "id"};
    std::string t = report::compare({run}, s);
    CHECK(t.find("rsdl-8cpu\nTime(s) r     cs id\n     10 5 310001  6\n") != std::string::npos);
  }
  SECTION("a baseline by name") {
    report::CompareOptions s;
    s.baseline = "rsdl-8cpu";
    s.duration = s.vmstat = false;
    std::string t = report::compare({run}, s);
    CHECK(t.find("Hmean     msgs/s            50000.00 * 400.00%*    10000.00 (   0.00%)") != std::string::npos);
    s.baseline = "nope";
    CHECK_THROWS_AS(report::compare({run}, s), smtlab::Error);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("markdown, json and csv carry the same numbers") {
  auto dir = fixtures::chat_run();
  auto run = results::load_results(dir);
  report::CompareOptions o;
  o.format = report::Format::markdown;
  std::string md = report::compare({run}, o);
  CHECK(md.find("### chat") != std::string::npos);
  CHECK(md.find("| | mainline-8cpu (baseline) | rsdl-8cpu | broken-8cpu |") != std::string::npos);
  CHECK(md.find("| Hmean msgs/s | 50000.00 (+0.00%) | **10000.00 (-80.00%)** | - |") != std::string::npos);
  CHECK(md.find("significance: welch") != std::string::npos);
  CHECK(md.find("- disturbed: `rsdl-8cpu` (cell cell1): host:") != std::string::npos);

  o.format = report::Format::json;
  json j = json::parse(report::compare({run}, o));
  CHECK(j["significance"]["rule"] == "welch");
  const json& b = j["blocks"].at(0);
  CHECK(b["baseline"] == "mainline-8cpu");
  CHECK(b["failed"].at(0)["cell"] == "cell2");
  REQUIRE(b["disturbed"].size() == 1);
  CHECK(b["disturbed"][0]["column"] == "rsdl-8cpu");
  CHECK(b["disturbed"][0]["reasons"].size() == 1);
  const json& msgs = b["metrics"].at(0);
  CHECK(msgs["metric"] == "msgs/s");
  CHECK(msgs["better"] == "higher");
  CHECK(msgs["columns"][1]["Hmean"].get<double>() == Approx(10000.0));
  CHECK(msgs["columns"][1]["n"] == 3);
  CHECK(msgs["columns"][1]["test"]["significant"] == true);
  CHECK(msgs["columns"][2]["n"] == 0);
  const json& p50 = b["metrics"].at(1);
  CHECK(p50["metric"] == "latency-p50-us");
  CHECK(p50["columns"][1]["test"]["ci"][0].get<double>() > 150);  // CI of the difference excludes 0
  CHECK(b["vmstat"].size() == 2);

  o.format = report::Format::csv;
  std::string csv = report::compare({run}, o);
  CHECK(csv.rfind("block,statistic,metric,unit,better,column,variant,topology,n,value,pct_change,significant,", 0) == 0);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 2 * 3 * 3);  // Amean+Stddev x 3 metrics x 3 columns
  size_t at = csv.find("chat,Hmean,msgs/s,msgs/s,higher,rsdl-8cpu,rsdl,8cpu,3,");
  REQUIRE(at != std::string::npos);
  std::string line = csv.substr(at, csv.find('\n', at) - at);
  CHECK(line.find(",yes,") != std::string::npos);
  CHECK(line.find(",-80") != std::string::npos);
  CHECK(line.substr(line.size() - 4) == ",yes");  // disturbed
  at = csv.find("chat,Hmean,msgs/s,msgs/s,higher,mainline-8cpu,");
  REQUIRE(at != std::string::npos);
  CHECK(csv.substr(csv.find('\n', at) - 3, 3) == ",no");
  std::filesystem::remove_all(dir);
}

TEST_CASE("grouping by topology, optional rows, several runs and corrupt lines") {
  std::vector<fixtures::CellSpec> specs;
  for (std::string topo : {"HT", "noHT"})
    for (std::string v : {"a", "b"}) {
      fixtures::CellSpec s;
      s.variant = v;
      s.topology = topo;
      specs.push_back(s);
    }
  auto dir = fixtures::temp_dir("topo");
  {
    auto w = results::ResultsWriter::create(dir, fixtures::manifest(specs));
    for (int c = 0; c < 4; ++c) {
      std::string id = "cell" + std::to_string(c);
      auto values = fixtures::five(100 + 10 * c, 1);
      for (int it = 0; it < 5; ++it) {
        w.append_sample(id, fixtures::sample("elsp-2", values[it], it + 1));
        w.append_sample(id, fixtures::sample("user-2", 2 * values[it], it + 1));
      }
      w.set_cell_status(id, "ok");
    }
  }
  {
    std::ofstream f(dir / "cells" / "cell3" / "samples.jsonl", std::ios::app);
    f << "{broken\n";
  }
  auto run = results::load_results(dir);
  report::CompareOptions o;
  o.grouping = report::Grouping::by_topology;
  o.baseline = "b";
  o.statistics = report::parse_statistics("max,min,amean");
  o.kernbench_user_sys = true;
  o.rule.rule = stats::Rule::mmtests_2024;
  std::string t = report::compare({run}, o);
  INFO(t);
  CHECK(t.find("\nkernbench HT\n") != std::string::npos);
  CHECK(t.find("\nkernbench noHT\n") != std::string::npos);
  // mmtests' order: Min, then Amean, then Max; user before elsp.
  CHECK(t.find("Min       user-2") < t.find("Min       elsp-2"));
  CHECK(t.find("Min       elsp-2") < t.find("Amean     user-2"));
  CHECK(t.find("Amean     elsp-2") < t.find("Max       user-2"));
  // Baseline b: a (100) vs b (110), lower is better: +9.09 %, and significant (10 > 1.96 x 2).
  CHECK(t.find("Amean     elsp-2      100.00 *   9.09%*      110.00 (   0.00%)") != std::string::npos);
  CHECK(t.find("warning: ") != std::string::npos);
  CHECK(t.find("skipped 1 corrupt") != std::string::npos);
  CHECK_THROWS_AS(report::parse_statistics("median"), smtlab::Error);
  CHECK(report::parse_statistics("all").size() == 6);

  // Two runs of the same recipe: columns are told apart by the run's name.
  o = {};
  o.format = report::Format::json;
  json j = json::parse(report::compare({run, run}, o));
  CHECK(j["blocks"][0]["columns"].size() == 8);
  CHECK(j["blocks"][0]["columns"][0]["name"] == run.name() + "/a-HT");
  std::filesystem::remove_all(dir);
}

TEST_CASE("hackbench rows are time-G in group order, and unknown kinds show every metric") {
  std::vector<fixtures::CellSpec> specs(2);
  specs[0].variant = "a";
  specs[1].variant = "b";
  for (auto& s : specs) s.topology = "T", s.benchmark = "hb", s.kind = "hackbench", s.iterations = 3;
  fixtures::CellSpec other;
  other.iterations = 2;
  other.variant = "a";
  other.topology = "T";
  other.benchmark = "custom";
  other.kind = "exec";
  specs.push_back(other);
  other.variant = "b";  // never run (an interrupted run): listed, not dropped
  specs.push_back(other);
  auto dir = fixtures::temp_dir("hackbench");
  {
    auto w = results::ResultsWriter::create(dir, fixtures::manifest(specs));
    for (int c = 0; c < 2; ++c) {
      std::string id = "cell" + std::to_string(c);
      for (int it = 1; it <= 3; ++it) {
        w.append_sample(id, fixtures::sample("time-16", 9.0 + c + 0.1 * it, it));
        w.append_sample(id, fixtures::sample("time-2", 2.0 + c + 0.1 * it, it));
        w.append_sample(id, fixtures::sample("ignored", 1, it));
      }
      w.set_cell_status(id, "ok");
    }
    w.append_sample("cell2", fixtures::sample("anything", 5, 1, false, "higher", "ops"));
    w.append_sample("cell2", fixtures::sample("anything", 7, 2, false, "higher", "ops"));
    w.set_cell_status("cell2", "ok");
  }
  auto run = results::load_results(dir);
  report::CompareOptions o;
  o.duration = o.vmstat = false;
  o.statistics = {"Amean"};
  std::string t = report::compare({run}, o);
  INFO(t);
  CHECK(t.find("\nhb\n") != std::string::npos);
  CHECK(t.find("Amean     time-2         2.20 (   0.00%)        3.20 * -45.45%*\n"
               "Amean     time-16        9.20 (   0.00%)       10.20 * -10.87%*\n") != std::string::npos);
  CHECK(t.find("ignored") == std::string::npos);
  CHECK(t.find("Hmean     anything        5.83 (   0.00%)           -\n") != std::string::npos);
  CHECK(t.find("not run: b-T (cell cell3) status pending\n") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("command benchmarks show elapsed-s, user-s and sys-s only with all metrics") {
  std::vector<fixtures::CellSpec> specs(2);
  specs[0].variant = "a";
  specs[1].variant = "b";
  for (auto& s : specs) s.topology = "T", s.benchmark = "build", s.kind = "command", s.iterations = 3;
  auto dir = fixtures::temp_dir("command");
  {
    auto w = results::ResultsWriter::create(dir, fixtures::manifest(specs));
    for (int c = 0; c < 2; ++c) {
      std::string id = "cell" + std::to_string(c);
      for (int it = 1; it <= 3; ++it) {
        w.append_sample(id, fixtures::sample("elapsed-s", 10.0 + c + 0.1 * it, it));
        w.append_sample(id, fixtures::sample("user-s", 5.0, it));
        w.append_sample(id, fixtures::sample("sys-s", 1.0, it));
      }
      w.set_cell_status(id, "ok");
    }
  }
  auto run = results::load_results(dir);
  report::CompareOptions o;
  o.duration = o.vmstat = false;
  o.statistics = {"Amean"};
  std::string t = report::compare({run}, o);
  INFO(t);
  CHECK(t.find("Amean     elapsed-s") != std::string::npos);
  CHECK(t.find("user-s") == std::string::npos);
  CHECK(t.find("sys-s") == std::string::npos);
  o.all_metrics = true;
  std::string all = report::compare({run}, o);
  CHECK(all.find("Amean     user-s") != std::string::npos);
  CHECK(all.find("Amean     sys-s") != std::string::npos);
}

TEST_CASE("a cell's disturbances are read defensively: strings only, first lines, at most five") {
  std::vector<fixtures::CellSpec> specs(2);
  specs[0].variant = "a";
  specs[1].variant = "b";
  for (auto& s : specs) s.topology = "T", s.iterations = 3;
  auto dir = fixtures::temp_dir("disturbed");
  {
    auto w = results::ResultsWriter::create(dir, fixtures::manifest(specs));
    for (int c = 0; c < 2; ++c) {
      std::string id = "cell" + std::to_string(c);
      for (int it = 1; it <= 3; ++it) w.append_sample(id, fixtures::sample("elsp-2", 10.0 + c + 0.1 * it, it));
    }
    json many = json::array({42, "rcu-stall: one\nwith a second line", std::string(1000, 'x')});
    for (int k = 0; k < 5; ++k) many.push_back("soft-lockup: " + std::to_string(k));
    w.set_cell_status("cell0", "ok", {{"disturbances", json::array()}});
    w.set_cell_status("cell1", "ok", {{"disturbances", many}});
  }
  auto run = results::load_results(dir);
  report::CompareOptions o;
  auto r = report::compare_runs({run}, o);
  INFO(r.output);
  REQUIRE(r.disturbed.size() == 1);  // an empty list is no disturbance
  const auto& d = r.disturbed[0];
  CHECK(d.column == "b-T");
  REQUIRE(d.reasons.size() == report::kMaxDisturbanceReasons);
  CHECK(d.reasons[0] == "rcu-stall: one");
  CHECK(d.reasons[1] == std::string(300, 'x') + "...");
  CHECK(d.reasons[4] == "soft-lockup: 2 (and 2 more)");  // 7 strings, the number is skipped
  CHECK(r.output.find("disturbed: b-T (cell cell1): soft-lockup: 2 (and 2 more)\n") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("edge cases: one iteration, a zero rate, long names, a baseline some blocks lack, equal values") {
  // kernbench: a (3 iterations), b (1 iteration), a long-named variant; chat: a and the long one.
  const std::string longname = "core-sched-stall-fix-v2";  // wider than the 12-column Duration table
  std::vector<fixtures::CellSpec> specs(5);
  specs[0].variant = "a", specs[1].variant = "b", specs[2].variant = longname;
  for (auto& s : specs) s.topology = "HT", s.bench_s = 10, s.wall_s = 12, s.iterations = 3;
  specs[1].iterations = 1;
  specs[3].variant = "a", specs[4].variant = longname;
  for (int i : {3, 4}) specs[i].benchmark = specs[i].kind = "chat";
  auto dir = fixtures::temp_dir("edges");
  {
    auto w = results::ResultsWriter::create(dir, fixtures::manifest(specs));
    for (int it = 1; it <= 3; ++it) {
      w.append_sample("cell0", fixtures::sample("elsp-2", 100, it));  // identical: stddev 0
      w.append_sample("cell2", fixtures::sample("elsp-2", 100, it));
      w.append_sample("cell3", fixtures::sample("msgs/s", 1000 + it, it, false, "higher", "msgs/s"));
      w.append_sample("cell4", fixtures::sample("msgs/s", it == 1 ? 0 : 500, it, false, "higher", "msgs/s"));
    }
    w.append_sample("cell1", fixtures::sample("elsp-2", 100.5, 1));
    for (int c = 0; c < 5; ++c) w.set_cell_status("cell" + std::to_string(c), "ok", {{"bench_s", 10}, {"wall_s", 12}});
  }
  auto run = results::load_results(dir);
  report::CompareOptions o;
  o.rule.rule = stats::Rule::mmtests_2024;
  o.statistics = report::parse_statistics("amean,stddev,coeffvar");
  o.regression_threshold_pct = 5;
  o.duration = true;
  o.baseline = "b";  // a kernbench column only
  auto r = report::compare_runs({run}, o);
  const std::string& t = r.output;
  INFO(t);
  // One iteration has no spread: n/a, in its 12 columns, and no star (rule B needs a spread).
  CHECK(t.find("Stddev    elsp-2        0.00 (    n/a%)         n/a (    n/a%)        0.00 (    n/a%)\n") !=
        std::string::npos);
  CHECK(t.find("Amean     elsp-2      100.00 (   0.50%)      100.50 (   0.00%)      100.00 (   0.50%)\n") !=
        std::string::npos);
  // chat lacks column b: its baseline stays its first column, with a warning, not an error.
  CHECK(t.find("warning: baseline 'b' is not a column of chat; its baseline is a-HT") != std::string::npos);
  // A run that delivered nothing: Hmean 0, -100 %, a regression for the CI gate.
  CHECK(t.find("Hmean     msgs/s     1002.00 (   0.00%)        0.00 *-100.00%*\n") != std::string::npos);
  REQUIRE(r.regressions.size() == 1);
  CHECK(r.regressions[0].column == longname + "-HT");
  // Names wider than a column widen it: headers never run together.
  size_t headers = 0;
  for (size_t at = t.find(" sched-stall-fix-v2-HT"); at != std::string::npos; at = t.find(" sched-stall-fix-v2-HT", at + 1))
    ++headers;
  CHECK(headers == 4);  // both tables and both Duration tables
  // 16 columns of label, then 22 per column (the longest name part, 21, and a space).
  CHECK(t.find("Duration Bench" + std::string(19, ' ') + "10.00" + std::string(17, ' ') + "10.00" +
               std::string(17, ' ') + "10.00\n") != std::string::npos);
  CHECK(t.find("-0.00%") == std::string::npos);
  // Equal values are 0 %, never -0.00 %: the same run twice, grouped by topology.
  o = {};
  o.baseline = "a";
  o.grouping = report::Grouping::by_topology;
  CHECK(report::compare({run, run}, o).find("-0.00%") == std::string::npos);
  o.baseline = "nosuch";
  CHECK_THROWS_WITH(report::compare({run}, o), Catch::Contains("'nosuch' is not a column of any table"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("per_vm: a column per guest of a cell whose guests all ran the benchmark, each with its own vmstat") {
  // "pair": two guests both measured, vm 0 twice as fast as vm 1; "one": a single guest.
  std::vector<fixtures::CellSpec> specs(2);
  specs[0].variant = "one", specs[1].variant = "pair";
  for (auto& s : specs) s.topology = "VMx2";
  auto dir = fixtures::temp_dir("per-vm");
  {
    auto w = results::ResultsWriter::create(dir, fixtures::manifest(specs));
    const auto a = fixtures::five(100, 1), b = fixtures::five(200, 2);
    for (int it = 1; it <= 5; ++it) {
      w.append_sample("cell0", fixtures::sample("elsp-2", a[it - 1], it));
      w.append_sample("cell1", fixtures::sample("elsp-2", a[it - 1], it));
      auto other = fixtures::sample("elsp-2", b[it - 1], it);
      other["vm"] = 1;
      w.append_sample("cell1", other);
      auto warm = fixtures::sample("elsp-2", 999, 0, true);
      warm["vm"] = 2;  // a guest with only a warm-up sample has no column
      w.append_sample("cell1", warm);
      w.append_monitor("cell1", fixtures::vmstat(10.0 * it, 1, 100));
      w.append_monitor("cell1", fixtures::vmstat(10.0 * it, 7, 700, 1));
    }
    w.set_cell_status("cell0", "ok");
    w.set_cell_status("cell1", "ok", {{"disturbances", {"host load 3.0"}}});
  }
  const std::vector<results::RunResults> runs{results::load_results(dir)};
  report::CompareOptions o;
  auto pooled = report::build_tables(runs, o);
  REQUIRE(pooled.blocks.size() == 1);
  REQUIRE(pooled.blocks[0].columns.size() == 2);
  CHECK(pooled.blocks[0].metrics[0].values[1].n == 10);
  CHECK(pooled.blocks[0].metrics[0].values[1].amean == Approx(150));

  o.per_vm = true;
  auto t = report::build_tables(runs, o);
  const auto& b = t.blocks[0];
  std::vector<std::string> names;
  for (const auto& c : b.columns) names.push_back(c.name);
  CHECK(names == std::vector<std::string>{"one-VMx2", "pair-VMx2/vm0", "pair-VMx2/vm1"});
  REQUIRE(b.metrics.size() == 1);
  const auto& elsp = b.metrics[0];
  CHECK(elsp.values[1].n == 5);
  CHECK(elsp.values[1].amean == Approx(100));
  CHECK(elsp.values[2].n == 5);
  CHECK(elsp.values[2].amean == Approx(200));
  CHECK(elsp.values[2].stddev == Approx(2));
  CHECK(elsp.tests[2].significant);
  REQUIRE(b.disturbed.size() == 1);  // one cell, said once, under its own name
  CHECK(b.disturbed[0].column == "pair-VMx2");
  // Each guest's own run queue.
  auto series = report::vmstat_profile(b);
  REQUIRE(series.size() == 2);
  CHECK(series[0].column == "pair-VMx2/vm0");
  CHECK(series[0].rows[0].at("r") == 1);
  CHECK(series[1].column == "pair-VMx2/vm1");
  CHECK(series[1].rows[0].at("r") == 7);
  // The profile's header says which guest a pooled column shows and what a per-guest column is.
  CHECK(report::format_vmstat(b, {"r"}, report::VmstatLayout::stacked)
            .starts_with("vmstat " + b.title + " (vm 0; a <column>/vmN: guest N)\npair-VMx2/vm0\n"));
  // A baseline named by variant is the first guest's column.
  o.baseline = "pair";
  CHECK(report::build_tables(runs, o).blocks[0].baseline == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a gate on a directory that lacks shards of its run does not pass: the absent shards are not measured") {
  // Shard 1/2 of a plan of four cells: base and new measured, the other shard's two cells absent.
  std::vector<fixtures::CellSpec> specs(2);
  specs[0].variant = "base", specs[1].variant = "new";
  for (auto& s : specs) s.topology = "HT";
  nlohmann::json m = fixtures::manifest(specs);
  m["shard"] = {{"index", 1}, {"count", 2}, {"method", "position-mod-count"},
                {"plan_cells", {"cell0", "other0", "cell1", "other1"}}};
  auto dir = fixtures::temp_dir("absent-shard");
  {
    auto w = results::ResultsWriter::create(dir, m);
    for (int it = 1; it <= 5; ++it) {
      w.append_sample("cell0", fixtures::sample("elsp-2", 100, it));
      w.append_sample("cell1", fixtures::sample("elsp-2", 100, it));
    }
    for (const char* id : {"cell0", "cell1"}) w.set_cell_status(id, "ok");
  }
  report::CompareOptions o;
  o.regression_threshold_pct = 1;
  auto r = report::compare_runs({results::load_results(dir)}, o);
  CHECK(r.regressions.empty());
  REQUIRE(r.unmeasured.size() == 1);
  const std::string name = dir.filename().string();
  CHECK(r.unmeasured[0].describe() == name + " shard 2/2: not in this directory, so its cells (other0, other1) were "
                                              "not measured; run that shard and `smtlab merge` it with this directory");
  CHECK(r.markdown_summary.find("could hide one, so this comparison does not pass") != std::string::npos);
  CHECK(r.markdown_summary.find("- not measured: " + name + " shard 2/2: not in this directory") != std::string::npos);
  CHECK(std::any_of(r.warnings.begin(), r.warnings.end(), [&](const std::string& w) {
    return w == name + ": shard 2/2 of its run is not in this directory (2 cell(s) not measured); run it and `smtlab "
                       "merge` it with this one to compare the whole plan";
  }));

  // A merge that holds every shard of its run passes.
  m["shard"].erase("index");
  m["shard"]["indices"] = {1, 2};
  m["shard"]["plan_cells"] = {"cell0", "cell1"};
  std::filesystem::remove_all(dir);
  {
    auto w = results::ResultsWriter::create(dir, m);
    for (int it = 1; it <= 5; ++it) {
      w.append_sample("cell0", fixtures::sample("elsp-2", 100, it));
      w.append_sample("cell1", fixtures::sample("elsp-2", 100, it));
    }
    for (const char* id : {"cell0", "cell1"}) w.set_cell_status(id, "ok");
  }
  auto whole = report::compare_runs({results::load_results(dir)}, o);
  CHECK(whole.unmeasured.empty());
  CHECK(whole.markdown_summary.find("No significant regression beyond 1.00% against the baseline.") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("the gate's columns that were not measured: a failed cell (baseline or not), an ok cell without a metric") {
  // kernbench: base failed (it is the baseline), new measured elsp-2 and elsp-4, partial measured
  // elsp-2 only, pending never ran. chat: base only (the others are excluded there).
  std::vector<fixtures::CellSpec> specs(5);
  specs[0].variant = "base", specs[1].variant = "new", specs[2].variant = "partial", specs[3].variant = "pending";
  specs[4].variant = "base", specs[4].benchmark = specs[4].kind = "chat";
  for (auto& s : specs) s.topology = "HT";
  auto dir = fixtures::temp_dir("unmeasured");
  {
    auto w = results::ResultsWriter::create(dir, fixtures::manifest(specs));
    for (int it = 1; it <= 5; ++it) {
      w.append_sample("cell0", fixtures::sample("elsp-2", 100, it));  // written before the cell failed
      w.append_sample("cell1", fixtures::sample("elsp-2", 100 + it, it));
      w.append_sample("cell1", fixtures::sample("elsp-4", 50 + it, it));
      w.append_sample("cell2", fixtures::sample("elsp-2", 100 + it, it));
      w.append_sample("cell4", fixtures::sample("msgs/s", 1000 + it, it, false, "higher", "msgs/s"));
    }
    w.set_cell_status("cell0", "failed", {{"error", "boot timed out after 240 s\nconsole tail"}});
    for (const char* id : {"cell1", "cell2", "cell4"}) w.set_cell_status(id, "ok");
  }
  auto run = results::load_results(dir);
  report::CompareOptions o;
  o.regression_threshold_pct = 1;
  auto r = report::compare_runs({run}, o);
  INFO(r.output);
  // The failed baseline gives no regression to find, and must not pass for that.
  CHECK(r.regressions.empty());
  std::vector<std::string> described;
  for (const auto& u : r.unmeasured) described.push_back(u.describe());
  CHECK(described == std::vector<std::string>{
                         "kernbench base-HT (cell cell0): failed: boot timed out after 240 s",
                         "kernbench partial-HT (cell cell2): no samples for elsp-4",
                         "kernbench pending-HT (cell cell3): pending",
                     });
  // chat has no column but base: nothing is missing there.
  CHECK(r.markdown_summary.find("**3 column(s) not measured: no comparison can pass them:**") != std::string::npos);
  // Without a regression, the summary must not read as a pass.
  CHECK(r.markdown_summary.find("No significant regression beyond 1.00% against the baseline") == std::string::npos);
  CHECK(r.markdown_summary.find("No significant regression beyond 1.00% among what was measured; what was not "
                                "(below) could hide one, so this comparison does not pass.") != std::string::npos);
  CHECK(r.markdown_summary.find("- not measured: kernbench partial-HT (cell cell2): no samples for elsp-4\n") !=
        std::string::npos);

  // Every column measured every metric: nothing to say.
  o.baseline = "new";
  auto measured = results::load_results(dir);
  measured.cells.erase(measured.cells.begin() + 2, measured.cells.begin() + 4);  // partial, pending
  measured.cells.erase(measured.cells.begin());                                  // base (kernbench)
  auto fine = report::compare_runs({measured}, o);
  CHECK(fine.unmeasured.empty());
  CHECK(fine.markdown_summary.find("not measured") == std::string::npos);
  CHECK(fine.markdown_summary.find("No significant regression beyond 1.00% against the baseline.") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("directories compared side by side that ran on other conditions are named, with what differs") {
  auto dir = fixtures::kernbench_run();
  auto a = results::load_results(dir), b = a;
  a.dir = "/results/monday";
  b.dir = "/results/friday";
  for (auto* run : {&a, &b}) {
    run->manifest["accel"] = "tcg";
    run->manifest["kernels"] = {{"k", {{"version", "6.12.1"}, {"sha256", std::string(64, 'a')}}}};
    run->manifest["image"] = {{"name", "bench"},
                              {"digest", std::string(64, 'd')},
                              {"installed", {{"gcc-12", "12.2.0-14"}, {"make", "4.3-4.1"}, {"procps", "2:4.0.2-3"}}}};
  }
  report::CompareOptions o;
  auto conditions = [&](const results::RunResults& other) {
    std::vector<std::string> out;
    for (const auto& w : report::compare_runs({a, other}, o).warnings)
      if (w.find("ran on other conditions") != std::string::npos) out.push_back(w);
    return out;
  };
  CHECK(conditions(b).empty());  // the same conditions: nothing to say

  b.manifest["accel"] = "kvm";
  b.manifest["versions"]["qemu"] = "8.2";
  b.manifest["kernels"]["k"]["sha256"] = std::string(64, 'b');
  b.manifest["image"]["installed"]["gcc-12"] = "12.2.0-14+deb12u1";
  b.manifest["image"]["installed"].erase("make");
  b.manifest["image"]["installed"]["bc"] = "1.07.1-3";
  CHECK(conditions(b) == std::vector<std::string>{
                             "friday: ran on other conditions than monday: accel kvm (monday: tcg); QEMU 8.2 (monday: 7.2); "
                             "kernel 'k' sha256 bbbbbbbbbbbb (monday: aaaaaaaaaaaa); guest packages bc absent -> 1.07.1-3, "
                             "gcc-12 12.2.0-14 -> 12.2.0-14+deb12u1, make 4.3-4.1 -> absent; its columns differ from "
                             "monday's by more than their variants"});
  // The CI summary says it too, above the tables.
  const std::string summary = report::compare_runs({a, b}, o).markdown_summary;
  CHECK(summary.find("> warning: friday: ran on other conditions than monday: accel kvm") < summary.find("### "));
  // Fields a manifest does not record (older runs) are not compared.
  b = a;
  b.dir = "/results/friday";
  b.manifest.erase("accel");
  b.manifest["image"].erase("installed");
  b.manifest["versions"].erase("qemu");
  CHECK(conditions(b).empty());
  std::filesystem::remove_all(dir);
}

TEST_CASE("vmstat: a cell that asked its guest for rows and has none is named, with why and what gives a profile") {
  // rows: sampled; short: a benchmark shorter than one interval; warm: rows only before the first
  // measured iteration; noisefirst: roles [noise, benchmark], its benchmark guest's rows; off: no
  // sampler asked for; old: a manifest from before vmstat_interval_s; silent: two guests, no row.
  const std::vector<std::string> names = {"rows", "short", "warm", "noisefirst", "off", "old", "silent"};
  std::vector<fixtures::CellSpec> specs(names.size());
  for (size_t i = 0; i < names.size(); ++i) specs[i].variant = names[i], specs[i].topology = "T";
  auto m = fixtures::manifest(specs);
  const double interval[] = {1, 1, 10, 1, 0};
  for (size_t i = 0; i < 5; ++i) m["cells"][i]["vmstat_interval_s"] = interval[i];
  m["cells"][3]["definition"] = {{"topology", {{"roles", {"noise", "benchmark"}}}}};
  m["cells"][6]["vmstat_interval_s"] = 1;
  m["cells"][6]["vms"] = 2;
  auto dir = fixtures::temp_dir("vmstat-gaps");
  {
    auto w = results::ResultsWriter::create(dir, m);
    const auto v = fixtures::five(100, 1);
    for (size_t c = 0; c < names.size(); ++c) {
      const std::string id = "cell" + std::to_string(c);
      for (int it = 1; it <= 5; ++it) w.append_sample(id, fixtures::sample("elsp-2", v[it - 1], it));
      w.set_cell_status(id, "ok", {{"bench_s", c == 1 ? 0.8 : 30.0}});
    }
    w.append_monitor("cell0", fixtures::vmstat(1, 2, 100));
    for (double t : {-3.0, -1.0}) {  // the warm-up's rows
      auto setup = fixtures::vmstat(t, 2, 100);
      setup["phase"] = "setup";
      w.append_monitor("cell2", setup);
    }
    w.append_monitor("cell3", fixtures::vmstat(1, 9, 900, 1));
  }
  const std::vector<results::RunResults> runs{results::load_results(dir)};
  const auto& run = runs[0];
  report::CompareOptions o;
  const auto t = report::build_tables(runs, o);
  REQUIRE(t.blocks.size() == 1);
  const auto& b = t.blocks[0];

  const auto series = report::vmstat_profile(b);
  REQUIRE(series.size() == 2);
  CHECK(series[0].column == "rows-T");
  CHECK(series[1].column == "noisefirst-T");
  CHECK(series[1].vm == 1);
  CHECK(series[1].rows[0].at("r") == 9);

  const auto gaps = report::vmstat_gaps(b);
  REQUIRE(gaps.size() == 3);
  CHECK(gaps[0].column == "short-T");
  CHECK(gaps[0].describe() ==
        "no vmstat row for short-T (cell cell1, vm 0): its benchmark ran 0.80 s, less than one 1.00 s sampling "
        "interval; for a run-queue profile, sample more often (recipe: monitors: vmstat: {interval: 0.2}) or "
        "measure longer");
  CHECK(gaps[1].column == "warm-T");
  CHECK(gaps[1].setup_rows == 2);
  CHECK_THAT(gaps[1].describe(), Catch::StartsWith("no vmstat row for warm-T (cell cell2, vm 0): its 2 row(s) all "
                                                   "came before the first measured iteration"));
  CHECK_THAT(gaps[1].describe(), Catch::EndsWith("within one 10.0 s sampling interval; for a run-queue profile, "
                                                 "sample more often (recipe: monitors: vmstat: {interval: 2.5}) or "
                                                 "measure longer"));
  // A span over two guests does not tell how long each one's iterations ran.
  CHECK(gaps[2].column == "silent-T");
  CHECK_THAT(gaps[2].describe(),
             Catch::StartsWith("no vmstat row for silent-T (cell cell6, vm 0): the guest sent none with a 1.00 s "
                               "sampling interval while the cell's benchmark ran 30.0 s (first iteration of its 2 "
                               "guests to the last end); a guest whose iterations end within one interval has none: "
                               "sample more often (recipe: monitors: vmstat: {interval: 0.2})"));

  // The text tables say both under the profile, whose header names the guest it shows.
  const std::string text = report::compare({run}, o);
  INFO(text);
  CHECK(text.find("vmstat kernbench (each cell's first benchmark guest)\n") != std::string::npos);
  CHECK(text.find("\n" + gaps[0].describe() + "\n") != std::string::npos);
  CHECK(text.find("\n" + gaps[1].describe() + "\n") != std::string::npos);
  CHECK(text.find("no vmstat row for off-T") == std::string::npos);
  CHECK(text.find("no vmstat row for old-T") == std::string::npos);
  // JSON: each gap with its column, cell, guest and interval.
  o.format = report::Format::json;
  const auto j = json::parse(report::compare({run}, o))["blocks"][0];
  REQUIRE(j["vmstat_gaps"].size() == 3);
  CHECK(j["vmstat_gaps"][1]["column"] == "warm-T");
  CHECK(j["vmstat_gaps"][1]["interval_s"] == 10.0);
  // The HTML report says them under the plots.
  const std::string html = report::render_html_report(runs, {});
  CHECK(html.find("<p class=\"note\">no vmstat row for short-T (cell cell1, vm 0): its benchmark ran 0.80 s") !=
        std::string::npos);
  std::filesystem::remove_all(dir);
}
