#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "results/results.hpp"
#include "scratch.hpp"
#include "util/error.hpp"
#include "util/files.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace smtlab::results;

namespace {

fs::path temp_dir(const std::string& tag) {
  return smtlab::test::scratch_path("results-" + tag);
}

json manifest(const std::string& sha = "abc123") {
  json m = {{"smtlab_version", "0.1.0"},
            {"recipe", {{"file", "r.yaml"}, {"name", "r"}, {"sha256", sha}, {"text", "name: r\n"}}},
            {"host", {{"cpu", "test"}}},
            {"accel", "tcg"},
            {"cells", json::array()}};
  int i = 0;
  for (std::string v : {"base", "new"})
    m["cells"].push_back({{"id", "c" + std::to_string(i)}, {"index", i++}, {"variant", v}, {"kernel", "k"},
                          {"topology", "HT"}, {"benchmark", "kernbench"}, {"kind", "kernbench"}, {"vms", 1}});
  return m;
}

json sample(int it, double v, bool warmup = false) {
  return {{"vm", 0}, {"benchmark", "kernbench"}, {"iteration", it}, {"warmup", warmup}, {"metric", "elsp-2"},
          {"value", v}, {"unit", "s"}, {"better", "lower"}};
}

}  // namespace

TEST_CASE("a results directory written through ResultsWriter loads back") {
  fs::path dir = temp_dir("rw");
  {
    auto w = ResultsWriter::create(dir, manifest());
    CHECK(w.cell_status("c0") == "pending");
    w.set_cell_status("c0", "running", {{"started", "2026-01-01T00:00:00Z"}});
    w.append_sample("c0", sample(0, 9.0, true));
    w.append_sample("c0", sample(1, 10.0));
    w.append_sample("c0", sample(2, 11.0));
    w.append_monitor("c0", {{"vm", 0}, {"monitor", "vmstat"}, {"t", 1.0}, {"values", {{"r", 3}, {"cs", 1200}}}});
    w.append_event("c0", {{"vm", 0}, {"type", "event"}, {"name", "iteration-start"}});
    w.set_cell_status("c0", "ok", {{"wall_s", 12.5}, {"bench_s", 10.0}, {"guest_topology", json::array({{{"online", "0-1"}}})}});
    w.set_cell_status("c1", "failed", {{"error", "kernel panic"}});
    w.update_manifest({{"finished", "2026-01-01T01:00:00Z"}});
    CHECK_THROWS_AS(w.set_cell_status("nope", "ok"), smtlab::Error);
    CHECK_THROWS_AS(w.set_cell_status("c0", "done"), smtlab::Error);
    CHECK_THROWS_AS(w.append_sample("nope", sample(1, 1)), smtlab::Error);
    CHECK(fs::exists(w.cell_dir("c0") / "events.jsonl"));
    CHECK(w.console_log("c0", 1).filename() == "console-vm1.log");
  }
  RunResults r = load_results(dir);
  CHECK(r.manifest["schema"] == kSchemaVersion);
  CHECK(r.manifest["finished"] == "2026-01-01T01:00:00Z");
  REQUIRE(r.cells.size() == 2);
  const CellResult& c0 = r.cells[0];
  CHECK(c0.status == "ok");
  CHECK(c0.column() == "base-HT");
  CHECK(c0.wall_s == 12.5);
  CHECK(c0.bench_s == 10.0);
  CHECK(c0.guest_topology[0]["online"] == "0-1");
  REQUIRE(c0.samples.size() == 3);
  CHECK(c0.samples[0].warmup);
  CHECK(c0.samples[2].value == 11.0);
  REQUIRE(c0.monitors.size() == 1);
  CHECK(c0.monitors[0].values.at("cs") == 1200);
  CHECK(r.cells[1].status == "failed");
  CHECK(r.cells[1].error == "kernel panic");
  CHECK(r.skipped_lines == 0);
  fs::remove_all(dir);
}

TEST_CASE("create refuses an existing run, open resumes it, an unfinished attempt is kept aside and cleared from its cell") {
  fs::path dir = temp_dir("resume");
  {
    auto w = ResultsWriter::create(dir, manifest());
    w.set_cell_status("c0", "ok");
    w.set_cell_status("c1", "running", {{"started", "x"}, {"console_tail", "panic"}, {"error", "boom"},
                                        {"host_cpu", {{"guests_pct", 90.0}}}});
    w.append_sample("c1", sample(1, 5));
  }
  CHECK_THROWS_AS(ResultsWriter::create(dir, manifest()), smtlab::Error);
  auto w = ResultsWriter::open(dir);
  CHECK(w.cell_status("c0") == "ok");
  CHECK(w.cell_status("c1") == "running");
  CHECK(w.archive_unfinished("c1", {{"status", "interrupted"}}) == 1);
  CHECK(w.cell_status("c1") == "pending");
  CHECK_FALSE(w.manifest()["cells"][1].contains("started"));
  CHECK_FALSE(w.manifest()["cells"][1].contains("console_tail"));
  CHECK_FALSE(w.manifest()["cells"][1].contains("error"));
  CHECK_FALSE(w.manifest()["cells"][1].contains("host_cpu"));
  CHECK_FALSE(fs::exists(dir / "cells" / "c1"));
  CHECK(w.manifest()["cells"][1]["variant"] == "new");
  CHECK(load_results(dir).cells[1].samples.empty());
  // What it wrote is not lost.
  CHECK(fs::exists(dir / "attempts" / "c1" / "1" / "samples.jsonl"));
  CHECK(w.manifest()["cells"][1]["attempts"][0]["status"] == "interrupted");
  CHECK(w.manifest()["cells"][1]["attempts"][0]["started"] == "x");
  // A finished cell is never touched by it; a pending one without files neither.
  CHECK(w.archive_unfinished("c1", {{"status", "interrupted"}}) == 0);
  CHECK(w.manifest()["cells"][1]["attempts"].size() == 1);
  fs::remove_all(dir);
}

TEST_CASE("archive_attempt keeps a failed attempt's files and entry aside before the cell runs again") {
  fs::path dir = temp_dir("attempts");
  auto w = ResultsWriter::create(dir, manifest());
  w.append_sample("c1", sample(1, 5));
  std::ofstream(w.console_log("c1", 0)) << "Kernel panic - not syncing\n";
  w.set_cell_status("c1", "failed", {{"started", "s1"}, {"finished", "f1"}, {"error", "boom"}, {"console_tail", "panic"}});

  CHECK(w.archive_attempt("c1") == 1);
  // The attempt, whole, under attempts/c1/1: its files and its manifest entry.
  CHECK(smtlab::read_file(dir / "attempts" / "c1" / "1" / "console-vm0.log", 1000) == "Kernel panic - not syncing\n");
  CHECK(fs::exists(dir / "attempts" / "c1" / "1" / "samples.jsonl"));
  auto entry = json::parse(smtlab::read_file(dir / "attempts" / "c1" / "1" / "entry.json", 1 << 20));
  CHECK(entry["error"] == "boom");
  CHECK(entry["console_tail"] == "panic");
  // The cell is pending again, clean, and lists the attempt.
  json cell = w.manifest()["cells"][1];
  CHECK(cell["status"] == "pending");
  CHECK_FALSE(cell.contains("error"));
  CHECK_FALSE(fs::exists(dir / "cells" / "c1"));
  REQUIRE(cell["attempts"].size() == 1);
  CHECK(cell["attempts"][0] == json{{"attempt", 1}, {"dir", "attempts/c1/1"}, {"status", "failed"}, {"error", "boom"},
                                    {"started", "s1"}, {"finished", "f1"}});
  CHECK(load_results(dir).cells[1].samples.empty());

  // A second failure is attempt 2; the first stays. A directory the manifest does not list (a
  // crash between the move and the manifest) is never overwritten.
  w.set_cell_status("c1", "failed", {{"error", "again"}});
  fs::create_directories(dir / "attempts" / "c1" / "2");
  std::ofstream(dir / "attempts" / "c1" / "2" / "orphan") << "x";
  CHECK(w.archive_attempt("c1") == 3);
  CHECK(fs::exists(dir / "attempts" / "c1" / "2" / "orphan"));
  CHECK(fs::exists(dir / "attempts" / "c1" / "1" / "console-vm0.log"));
  cell = w.manifest()["cells"][1];
  REQUIRE(cell["attempts"].size() == 2);
  CHECK(cell["attempts"][1]["error"] == "again");
  CHECK(cell["attempts"][1]["dir"] == "attempts/c1/3");
  CHECK_THROWS_AS(w.archive_attempt("nope"), smtlab::Error);
  fs::remove_all(dir);
}

TEST_CASE("a cell that runs again starts from the plan's fields alone: the archived attempt's fields go with it") {
  fs::path dir = temp_dir("attempt-fields");
  auto w = ResultsWriter::create(dir, manifest());
  const json planned = w.manifest()["cells"][1];
  // What the runner records of one attempt of a cell (run/runner.cpp), ran alongside another boot.
  const json attempt = {{"started", "s1"},
                        {"finished", "f1"},
                        {"wall_s", 12.5},
                        {"bench_s", 10.0},
                        {"ready_s", {3.1}},
                        {"guest_topology", json::array({{{"online", "0"}}})},
                        {"kernel_cmdline", "console=ttyS0"},
                        {"notes", {"a note"}},
                        {"disturbances", {"ran alongside cell(s) c0 (other boots on other host CPUs: recipe parallel)"}},
                        {"ran_alongside", {"c0"}},
                        {"host_cpu", {{"guests_pct", 90.0}}},
                        {"error", "boom"},
                        {"console_tail", "panic"}};
  w.set_cell_status("c1", "failed", attempt);
  w.append_sample("c1", sample(1, 5));
  REQUIRE(w.archive_attempt("c1") == 1);
  json cell = w.manifest()["cells"][1];
  json expected = planned;
  expected["status"] = "pending";
  expected["attempts"] = cell["attempts"];
  CHECK(cell == expected);
  // The archived entry keeps every one of them.
  auto entry = json::parse(smtlab::read_file(dir / "attempts" / "c1" / "1" / "entry.json", 1 << 20));
  for (auto it = attempt.begin(); it != attempt.end(); ++it) CHECK(entry[it.key()] == it.value());
  // An unfinished attempt set aside by --resume is cleared the same way.
  w.set_cell_status("c1", "running", {{"started", "s2"}, {"ran_alongside", {"c0"}}});
  w.append_sample("c1", sample(1, 6));
  REQUIRE(w.archive_unfinished("c1", {{"status", "interrupted"}}) == 2);
  CHECK_FALSE(w.manifest()["cells"][1].contains("ran_alongside"));
  // A field set_cell_status does not know as an attempt's would stay behind: refused.
  try {
    w.set_cell_status("c1", "ok", {{"per_attempt_thing", 1}});
    FAIL("an unknown cell field was accepted");
  } catch (const smtlab::Error& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("per_attempt_thing") && Catch::Contains("c1"));
  }
  CHECK(w.cell_status("c1") == "pending");
  fs::remove_all(dir);
}

TEST_CASE("every interrupt is appended to the manifest's interrupted list, and an old single time becomes its first entry") {
  fs::path dir = temp_dir("interrupted");
  {
    auto w = ResultsWriter::create(dir, manifest());
    // As smtlab wrote an interrupt before the list: one time, overwritten by the next interrupt.
    w.update_manifest({{"interrupted", "2026-01-01T00:00:00Z"}});
  }
  // A results directory from before the list still loads.
  CHECK(load_results(dir).manifest["interrupted"] == "2026-01-01T00:00:00Z");
  {
    auto w = ResultsWriter::open(dir);
    w.record_interrupt("2026-01-02T00:00:00Z", {{"signal", 2}, {"cells", {"c0"}}});
    w.record_interrupt("2026-01-03T00:00:00Z", {{"signal", 15}, {"cells", {"c1"}}});
  }
  const json list = load_results(dir).manifest["interrupted"];  // as written to disk
  CHECK(list == json::array({{{"at", "2026-01-01T00:00:00Z"}},
                             {{"at", "2026-01-02T00:00:00Z"}, {"signal", 2}, {"cells", {"c0"}}},
                             {{"at", "2026-01-03T00:00:00Z"}, {"signal", 15}, {"cells", {"c1"}}}}));
  // A new run's first interrupt starts the list.
  fs::path fresh = temp_dir("interrupted-new");
  auto n = ResultsWriter::create(fresh, manifest());
  n.record_interrupt("2026-01-04T00:00:00Z");
  CHECK(n.manifest()["interrupted"] == json::array({{{"at", "2026-01-04T00:00:00Z"}}}));
  fs::remove_all(dir);
  fs::remove_all(fresh);
}

TEST_CASE("bad manifests and cell ids are refused with an error") {
  fs::path dir = temp_dir("bad");
  json m = manifest();
  m["cells"][0]["id"] = "../escape";
  CHECK_THROWS_AS(ResultsWriter::create(dir, m), smtlab::Error);
  m = manifest();
  m["cells"][1]["id"] = "c0";
  CHECK_THROWS_AS(ResultsWriter::create(dir, m), smtlab::Error);
  CHECK_THROWS_AS(load_results(dir / "missing"), smtlab::Error);
  fs::create_directories(dir);
  smtlab::write_file_atomic(dir / "manifest.json", "{not json");
  CHECK_THROWS_AS(load_results(dir), smtlab::Error);
  fs::remove_all(dir);
}

TEST_CASE("corrupt lines are skipped and counted, not fatal") {
  fs::path dir = temp_dir("corrupt");
  { auto w = ResultsWriter::create(dir, manifest()); w.append_sample("c0", sample(1, 10)); }
  {
    std::ofstream f(dir / "cells" / "c0" / "samples.jsonl", std::ios::app | std::ios::binary);
    f << "{\"metric\":\"elsp-2\",\"value\":\n";                       // truncated JSON
    f << "garbage\x01\xff\n";                                        // not JSON
    f << "[1,2,3]\n";                                                // not an object
    f << "{\"metric\":\"elsp-2\",\"value\":\"12\"}\n";               // value not a number
    f << "{\"metric\":\"elsp-2\",\"value\":1,\"better\":\"sideways\"}\n";  // bad direction
    f << "{\"metric\":\"" << std::string(70000, 'x') << "\",\"value\":1}\n";  // oversized line
    f << "\n";                                                       // empty lines are fine
    f << sample(2, 12).dump() << "\n";
    f << "{\"metric\":\"elsp-2\",\"value\":13";                      // truncated last line, no newline
  }
  {
    std::ofstream f(dir / "cells" / "c0" / "monitor.jsonl", std::ios::app | std::ios::binary);
    f << "{\"monitor\":\"vmstat\",\"vm\":0,\"t\":1,\"phase\":5,\"values\":{\"r\":1}}\n";  // phase not a string
    f << "{\"monitor\":\"vmstat\",\"vm\":0,\"t\":0.5,\"phase\":\"setup\",\"values\":{\"r\":2}}\n";
    f << "{\"monitor\":\"vmstat\",\"vm\":0,\"t\":2,\"values\":{\"r\":3}}\n";
  }
  RunResults r = load_results(dir);
  REQUIRE(r.cells.size() == 2);
  REQUIRE(r.cells[0].samples.size() == 2);
  CHECK(r.cells[0].samples[1].value == 12);
  REQUIRE(r.cells[0].monitors.size() == 2);
  CHECK(r.cells[0].monitors[0].phase == "setup");
  CHECK(r.cells[0].monitors[1].phase == "measure");  // no phase: measured
  CHECK(r.cells[0].skipped_lines == 8);
  CHECK(r.skipped_lines == 8);
  REQUIRE_FALSE(r.warnings.empty());
  REQUIRE(r.warnings.size() == 2);  // one per file
  CHECK(r.warnings[0].find("samples.jsonl: skipped 7") != std::string::npos);
  CHECK(r.warnings[1].find("monitor.jsonl: skipped 1") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("an ok cell without samples, with fewer than its iterations, or with a sample twice is warned about") {
  fs::path dir = temp_dir("incomplete");
  json m = manifest();
  for (auto& c : m["cells"]) c["iterations"] = 3;
  m["recipe"]["file"] = "/r/my recipe.yaml";
  m["cells"].push_back({{"id", "c2"}, {"index", 2}, {"variant", "third"}, {"topology", "HT"}, {"benchmark", "kernbench"},
                        {"kind", "kernbench"}, {"vms", 2}, {"iterations", 3}});
  m["cells"].push_back({{"id", "c3"}, {"index", 3}, {"variant", "fourth"}, {"topology", "HT"}, {"benchmark", "kernbench"},
                        {"kind", "kernbench"}, {"vms", 1}, {"iterations", 3}});
  // c4: three guests, two of them running the benchmark (its definition says so; c2's records no roles).
  m["cells"].push_back({{"id", "c4"}, {"index", 4}, {"variant", "fifth"}, {"topology", "HT"}, {"benchmark", "kernbench"},
                        {"kind", "kernbench"}, {"vms", 3}, {"iterations", 3},
                        {"definition", {{"topology", {{"roles", {"benchmark", "benchmark", "noise"}}}}}}});
  auto on_vm = [](json s, int vm, const std::string& metric) {
    s["vm"] = vm;
    s["metric"] = metric;
    return s;
  };
  {
    auto w = ResultsWriter::create(dir, m);
    // c0: ok, no samples.jsonl at all.
    w.set_cell_status("c0", "ok");
    // c1: ok, a warm-up only.
    w.append_sample("c1", sample(0, 9, true));
    w.set_cell_status("c1", "ok");
    // c2: ok, two guests; vm 0 measured elsp-2 three times (iteration 2 twice more, once with
    // another value), elsp-4 twice; vm 1 elsp-2 three times.
    for (int it : {1, 2, 2, 3, 2}) w.append_sample("c2", sample(it, it == 2 ? 20 : it));
    w.append_sample("c2", sample(2, 99));
    for (int it : {1, 2}) w.append_sample("c2", on_vm(sample(it, 4), 0, "elsp-4"));
    for (int it : {1, 2, 3}) w.append_sample("c2", on_vm(sample(it, 5), 1, "elsp-2"));
    w.set_cell_status("c2", "ok");
    // c3: failed after one iteration: its failure says what happened, no warning.
    w.append_sample("c3", sample(1, 1));
    w.set_cell_status("c3", "failed", {{"error", "kernel panic"}});
    // c4: ok, vm 0 measured every iteration; vm 1, a benchmark guest, sent nothing; vm 2 is noise.
    for (int it : {1, 2, 3}) w.append_sample("c4", sample(it, it));
    w.set_cell_status("c4", "ok");
  }
  RunResults r = load_results(dir);
  for (const auto& w : r.warnings) UNSCOPED_INFO(w);
  REQUIRE(r.warnings.size() == 5);
  const std::string again = " --iterations 3 -o NEW_DIR";
  CHECK(r.warnings[0] == "cell c0: " + (dir / "cells" / "c0" / "samples.jsonl").string() +
                             " is missing although the cell ended ok: it has no numbers; measure the cell again with: "
                             "smtlab run '/r/my recipe.yaml' --cells c0" + again);
  CHECK(r.warnings[1] == "cell c1: " + (dir / "cells" / "c1" / "samples.jsonl").string() +
                             " has no measured sample although the cell ended ok; measure the cell again with: "
                             "smtlab run '/r/my recipe.yaml' --cells c1" + again);
  const std::string c2 = "cell c2: " + (dir / "cells" / "c2" / "samples.jsonl").string();
  CHECK(r.warnings[2] == c2 + ": 3 measured sample(s) recorded twice (the first: vm 0, iteration 2, elsp-2); each "
                              "repeat is dropped and its first record kept");
  CHECK(r.warnings[3] == c2 + ": fewer measured samples than the cell's 3 iterations (elsp-4 of vm 0: 2); its "
                              "statistics use those there are; measure the cell again with: "
                              "smtlab run '/r/my recipe.yaml' --cells c2" + again);
  CHECK(r.warnings[4] == "cell c4: " + (dir / "cells" / "c4" / "samples.jsonl").string() +
                             ": no measured sample from vm 1 (benchmark role), although the cell ended ok; its "
                             "statistics use the other guests'; measure the cell again with: "
                             "smtlab run '/r/my recipe.yaml' --cells c4" + again);
  // The first record of each sample is kept, in order: n counts each iteration once.
  std::vector<double> elsp2_vm0;
  for (const auto& s : r.cells[2].samples)
    if (s.vm == 0 && s.metric == "elsp-2") elsp2_vm0.push_back(s.value);
  CHECK(elsp2_vm0 == std::vector<double>{1, 20, 3});
  CHECK(r.cells[2].samples.size() == 8);
  CHECK(r.cells[3].samples.size() == 1);
  fs::remove_all(dir);
}

TEST_CASE("merge joins shards of one recipe and reports overlaps and missing cells") {
  fs::path a = temp_dir("shard-a"), b = temp_dir("shard-b"), c = temp_dir("shard-c"), out = temp_dir("merged");
  json m = manifest();
  m["cells"].push_back({{"id", "c2"}, {"index", 2}, {"variant", "third"}, {"topology", "HT"}, {"benchmark", "kernbench"}});
  {
    auto w = ResultsWriter::create(a, m);
    w.set_cell_status("c0", "ok");
    w.append_sample("c0", sample(1, 10));
    w.set_cell_status("c1", "failed", {{"error", "timeout"}});
  }
  {
    auto w = ResultsWriter::create(b, m);
    w.set_cell_status("c1", "failed", {{"error", "first try"}});  // then --resume --retry-failed
    w.archive_attempt("c1");
    w.set_cell_status("c1", "ok");
    w.append_sample("c1", sample(1, 20));
  }
  { ResultsWriter::create(c, manifest("different")); }

  SECTION("different recipes are refused") {
    try {
      merge_results({a, c}, out);
      FAIL("merge of different recipes succeeded");
    } catch (const smtlab::Error& e) {
      CHECK(std::string(e.what()).find("different recipes") != std::string::npos);
    }
  }
  SECTION("same recipe") {
    MergeReport rep = merge_results({a, b}, out);
    CHECK(rep.cells == 3);
    REQUIRE(rep.overlapping.size() == 1);
    CHECK(rep.overlapping[0].rfind("c1 ", 0) == 0);
    CHECK(rep.missing == std::vector<std::string>{"c2"});
    RunResults r = load_results(out);
    REQUIRE(r.cells.size() == 3);
    CHECK(r.cells[0].status == "ok");
    CHECK(r.cells[0].samples.at(0).value == 10);
    CHECK(r.cells[1].status == "ok");  // the ok attempt wins over the failed one
    CHECK(r.cells[1].samples.at(0).value == 20);
    CHECK(r.cells[1].entry["attempts"][0]["error"] == "first try");  // and its files came along
    CHECK(fs::exists(out / "attempts" / "c1" / "1" / "entry.json"));
    CHECK(r.cells[2].status == "pending");
    CHECK(r.manifest["merged_from"].size() == 2);
    CHECK_THROWS_AS(merge_results({a, b}, out), smtlab::Error);  // output exists
  }
  for (auto& d : {a, b, c, out}) fs::remove_all(d);
}

TEST_CASE("loading is bounded: the part of a file beyond the limit is ignored with a warning") {
  fs::path dir = temp_dir("bounded");
  {
    auto w = ResultsWriter::create(dir, manifest());
    for (int i = 1; i <= 100; ++i) w.append_sample("c0", sample(i, i));
  }
  LoadLimits limits;
  size_t line = sample(1, 1).dump().size() + 1;
  limits.max_file_bytes = 10 * line;  // lines 1..9 fit; line 10 is two digits longer and is cut
  RunResults r = load_results(dir, limits);
  CHECK(r.cells[0].samples.size() == 9);
  CHECK(r.cells[0].skipped_lines == 1);  // the cut line
  bool warned = false;
  for (const auto& w : r.warnings) warned |= w.find("the rest is ignored") != std::string::npos;
  CHECK(warned);
  CHECK(load_results(dir).cells[0].samples.size() == 100);
  fs::remove_all(dir);
}

TEST_CASE("a shared boot's cell fields are cleared when an attempt is set aside, and merge keeps every shard's boot_groups") {
  fs::path a = temp_dir("boot-a"), b = temp_dir("boot-b"), out = temp_dir("boot-merged");
  json group = {{"id", "c0"}, {"cells", {"c0", "c1"}}, {"job", 0}};
  {
    auto w = ResultsWriter::create(a, manifest());
    w.set_cell_status("c0", "ok", {{"boot_group", group}, {"job_s", 3.5}, {"job_start_s", 4.0}, {"wall_s", 3.5}});
    json groups = json::object();
    groups["c0"] = {{"cells", {"c0"}}, {"wall_s", 9.0}};
    w.update_manifest({{"boot_groups", groups}});
    w.set_cell_status("c1", "running", {{"boot_group", group}});
    CHECK(w.archive_unfinished("c1", {{"status", "interrupted"}}) == 0);  // its job never ran: nothing to keep
    auto c1 = w.manifest()["cells"][1];
    CHECK(c1["status"] == "pending");
    CHECK_FALSE(c1.contains("boot_group"));
    CHECK_FALSE(c1.contains("attempts"));
    w.archive_attempt("c0");
    auto c0 = w.manifest()["cells"][0];
    CHECK_FALSE(c0.contains("boot_group"));
    CHECK_FALSE(c0.contains("job_s"));
    CHECK_FALSE(c0.contains("job_start_s"));
    w.set_cell_status("c0", "ok", {{"boot_group", group}});
  }
  {
    auto w = ResultsWriter::create(b, manifest());
    w.set_cell_status("c1", "ok", {{"boot_group", {{"id", "c1"}, {"cells", {"c1"}}, {"job", 0}}}});
    json groups = json::object();
    groups["c1"] = {{"cells", {"c1"}}, {"wall_s", 7.0}};
    groups["c0"] = {{"cells", {"x"}}};
    w.update_manifest({{"boot_groups", groups}});
  }
  merge_results({a, b}, out);
  auto m = load_results(out).manifest;
  REQUIRE(m["boot_groups"].size() == 2);
  CHECK(m["boot_groups"]["c0"]["wall_s"] == 9.0);  // a key two shards used: the first's
  CHECK(m["boot_groups"]["c1"]["wall_s"] == 7.0);
  for (auto& d : {a, b, out}) fs::remove_all(d);
}

TEST_CASE("a guest's invalid UTF-8 in a cell's entry is replaced, the manifest is still written") {
  fs::path dir = temp_dir("utf8");
  auto w = ResultsWriter::create(dir, manifest());
  // A soft-lockup line whose task name the kernel cut in the middle of a character.
  const std::string cut = "watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [bench-\xc3\xa4\xc3:123]";
  REQUIRE_NOTHROW(w.set_cell_status("c0", "running", {{"disturbances", {cut}}}));
  REQUIRE_NOTHROW(w.set_cell_status("c0", "ok"));
  RunResults r = load_results(dir);
  CHECK(r.cells[0].status == "ok");
  std::string d = r.cells[0].entry["disturbances"][0];
  CHECK(d.find("[bench-\xc3\xa4\xef\xbf\xbd:123]") != std::string::npos);  // the stray byte is U+FFFD
  fs::remove_all(dir);
}

TEST_CASE("one writer at a time: a results directory in use is refused, naming it and the pid that holds it") {
  fs::path dir = temp_dir("locked");
  const std::string busy = "results directory " + dir.string() + " is in use by another smtlab (pid " +
                           std::to_string(::getpid()) + ")";
  auto w = ResultsWriter::create(dir, manifest());
  auto refused = [&](const std::function<void()>& f) {
    try {
      f();
    } catch (const smtlab::Error& e) {
      INFO(e.what());
      CHECK_THAT(e.what(), Catch::Contains(busy));
      CHECK_THAT(e.hint(), Catch::Contains("--resume") && Catch::Contains("-o"));
      return true;
    }
    return false;
  };
  // `run --resume -o DIR` while DIR's run is live: from this process, and from another one.
  CHECK(refused([&] { ResultsWriter::open(dir); }));
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    try {
      ResultsWriter::open(dir);
    } catch (const smtlab::Error& e) {
      ::_exit(std::string(e.what()).find(busy) != std::string::npos ? 0 : 2);
    }
    ::_exit(1);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  // A moved writer keeps the lock; it is released when the writer goes.
  {
    auto moved = std::move(w);
    CHECK(refused([&] { ResultsWriter::open(dir); }));
  }
  auto again = ResultsWriter::open(dir);
  CHECK(again.cell_status("c0") == "pending");
  fs::remove_all(dir);
}

TEST_CASE("create takes the directory's lock before it writes: a create racing another is refused") {
  // Another process has taken the lock and not yet written its manifest.
  fs::path dir = temp_dir("create-race");
  fs::create_directories(dir);
  const int fd = ::open((dir / "lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);
  REQUIRE(::write(fd, "4242\n", 5) == 5);
  try {
    ResultsWriter::create(dir, manifest());
    FAIL("create wrote into a directory another writer holds");
  } catch (const smtlab::Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("is in use by another smtlab (pid 4242)"));
  }
  CHECK_FALSE(fs::exists(dir / "manifest.json"));
  ::close(fd);
  CHECK_NOTHROW(ResultsWriter::create(dir, manifest()));
  fs::remove_all(dir);
}

TEST_CASE("a new run refuses a directory that is not empty: stale cells/ or attempts/ are never appended to") {
  fs::path dir = temp_dir("stale");
  // Files of some earlier run whose manifest.json is gone.
  fs::create_directories(dir / "cells" / "c0");
  std::ofstream(dir / "cells" / "c0" / "samples.jsonl") << sample(1, 99).dump() << "\n";
  fs::create_directories(dir / "attempts" / "c1" / "1");
  try {
    ResultsWriter::create(dir, manifest());
    FAIL("a new run was created among stale files");
  } catch (const smtlab::Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("results directory " + dir.string() + " is not empty and holds no run") &&
                             Catch::Contains("attempts/, cells/"));
    CHECK_THAT(e.hint(), Catch::Contains("new or empty directory with -o") && Catch::Contains("--resume"));
  }
  CHECK_FALSE(fs::exists(dir / "manifest.json"));
  CHECK(smtlab::read_file(dir / "cells" / "c0" / "samples.jsonl") == sample(1, 99).dump() + "\n");
  CHECK_THROWS_AS(ResultsWriter::check_new_dir(dir), smtlab::Error);
  // A plain file is refused as well; an empty directory, or one with a lock file left, is fine.
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "notes.txt") << "mine\n";
  CHECK_THROWS_AS(ResultsWriter::create(dir, manifest()), smtlab::Error);
  fs::remove(dir / "notes.txt");
  std::ofstream(dir / "lock") << "123\n";
  { CHECK_NOTHROW(ResultsWriter::create(dir, manifest())); }
  // And one that holds a run says so.
  try {
    ResultsWriter::check_new_dir(dir);
    FAIL("a directory with a run was taken for new");
  } catch (const smtlab::Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("already holds a run"));
    CHECK_THAT(e.hint(), Catch::Contains("--resume"));
  }
  fs::remove_all(dir);
}

TEST_CASE("merge refuses shards that measured other kernels or another image, naming the field and the shards") {
  fs::path a = temp_dir("art-a"), b = temp_dir("art-b"), out = temp_dir("art-merged");
  const std::string sha_a(64, 'a'), sha_c(64, 'c');
  auto with_artifacts = [](json m, json kernels, json image) {
    m["kernels"] = std::move(kernels);
    m["image"] = std::move(image);
    return m;
  };
  const json k1 = {{"source", "debian"}, {"package", "linux-image-6.12.1-cloud"}, {"version", "6.12.1-1"}, {"sha256", sha_a}};
  const json image = {{"name", "bench"}, {"digest", sha_a}};
  auto merged = [&](const json& kernels_b, const json& image_b, const json& extra_b = json::object()) {
    for (auto& d : {a, b, out}) fs::remove_all(d);
    { ResultsWriter::create(a, with_artifacts(manifest(), {{"k1", k1}}, image)).set_cell_status("c0", "ok"); }
    json mb = with_artifacts(manifest(), kernels_b, image_b);
    mb.update(extra_b);
    { ResultsWriter::create(b, mb).set_cell_status("c1", "ok"); }
    return merge_results({a, b}, out);
  };
  auto refusal = [&](const json& kernels_b, const json& image_b) -> std::string {
    try {
      merged(kernels_b, image_b);
    } catch (const smtlab::Error& e) {
      CHECK_FALSE(fs::exists(out / "manifest.json"));
      return std::string(e.what()) + "\n" + e.hint();
    }
    FAIL("merged shards of different artifacts");
    return "";
  };

  SECTION("another kernel build under the same name") {
    json k = k1;
    k["sha256"] = sha_c;
    auto what = refusal({{"k1", k}}, image);
    CHECK(what.find("cannot merge " + b.string() + " with " + a.string() + ": kernel 'k1' differs in sha256 (" +
                    a.string() + ": aaaaaaaaaaaa, " + b.string() + ": cccccccccccc)") != std::string::npos);
    CHECK(what.find("smtlab compare " + a.string() + " " + b.string()) != std::string::npos);
  }
  SECTION("another Debian package version") {
    json k = k1;
    k["version"] = "6.12.2-1";
    CHECK(refusal({{"k1", k}}, image).find("kernel 'k1' differs in version (" + a.string() + ": 6.12.1-1, " +
                                           b.string() + ": 6.12.2-1)") != std::string::npos);
  }
  SECTION("another image") {
    json i = image;
    i["digest"] = sha_c;
    CHECK(refusal({{"k1", k1}}, i).find("image differs in digest") != std::string::npos);
  }
  SECTION("the same artifacts merge; each shard's kernels are kept, other versions noted") {
    const json k2 = {{"source", "debian"}, {"package", "linux-image-6.1"}, {"version", "6.1.0"}, {"sha256", sha_c}};
    auto rep = merged({{"k1", k1}, {"k2", k2}}, image, {{"smtlab_version", "0.2.0"}});
    auto m = load_results(out).manifest;
    CHECK(m["kernels"]["k1"] == k1);
    CHECK(m["kernels"]["k2"] == k2);  // only shard b used k2
    CHECK(m["merged_from"][1]["smtlab_version"] == "0.2.0");
    REQUIRE(rep.notes.size() == 1);
    CHECK(rep.notes[0] == b.string() + " ran another smtlab version than " + a.string());
  }
  for (auto& d : {a, b, out}) fs::remove_all(d);
}

TEST_CASE("merge keeps what the shard it does not use measured of an overlapping cell, as earlier attempts") {
  fs::path a = temp_dir("both-a"), b = temp_dir("both-b"), out = temp_dir("both-merged");
  {
    auto w = ResultsWriter::create(a, manifest());
    w.set_cell_status("c0", "ok");
    w.append_sample("c0", sample(1, 10));
    w.set_cell_status("c1", "failed", {{"error", "first"}});
    w.append_event("c1", {{"vm", 0}, {"type", "event"}, {"name", "first-try"}});
    w.archive_attempt("c1");
    w.set_cell_status("c1", "failed", {{"error", "second"}});
    w.append_event("c1", {{"vm", 0}, {"type", "event"}, {"name", "second-try"}});
  }
  {
    auto w = ResultsWriter::create(b, manifest());
    w.set_cell_status("c0", "ok");
    w.append_sample("c0", sample(1, 11));
    w.set_cell_status("c1", "ok");
    w.append_sample("c1", sample(1, 20));
  }
  MergeReport rep = merge_results({a, b}, out);
  REQUIRE(rep.overlapping.size() == 2);
  CHECK(rep.overlapping[0] == "c0 (in " + a.string() + " and " + b.string() + "; used " + a.string() + "; " +
                                  b.string() + "'s kept in " + (out / "attempts" / "c0" / "1").string() + "/)");
  CHECK(rep.overlapping[1].find("used " + b.string() + "; " + a.string() + "'s kept in " +
                                (out / "attempts" / "c1" / "1").string() + "/, " +
                                (out / "attempts" / "c1" / "2").string() + "/)") != std::string::npos);
  RunResults r = load_results(out);
  REQUIRE(r.cells.size() == 2);
  // The cells used: the first ok one of each.
  CHECK(r.cells[0].samples.at(0).value == 10);
  CHECK(r.cells[0].entry["shard"] == fs::absolute(a).string());
  CHECK(r.cells[1].status == "ok");
  CHECK(r.cells[1].samples.at(0).value == 20);
  // b's c0, with its samples and entry, as --retry-failed keeps an attempt.
  const auto& c0 = r.cells[0].entry["attempts"];
  REQUIRE(c0.size() == 1);
  CHECK(c0[0]["attempt"] == 1);
  CHECK(c0[0]["dir"] == "attempts/c0/1");
  CHECK(c0[0]["status"] == "ok");
  CHECK(c0[0]["shard"] == fs::absolute(b).string());
  CHECK(smtlab::read_file(out / "attempts" / "c0" / "1" / "samples.jsonl").find("\"value\":11") != std::string::npos);
  CHECK(json::parse(smtlab::read_file(out / "attempts" / "c0" / "1" / "entry.json"))["status"] == "ok");
  // a's c1: its earlier attempt, then its latest, oldest first.
  const auto& c1 = r.cells[1].entry["attempts"];
  REQUIRE(c1.size() == 2);
  CHECK(c1[0]["error"] == "first");
  CHECK(c1[0]["dir"] == "attempts/c1/1");
  CHECK(c1[1]["error"] == "second");
  CHECK(c1[1]["dir"] == "attempts/c1/2");
  CHECK(c1[1]["shard"] == fs::absolute(a).string());
  CHECK(smtlab::read_file(out / "attempts" / "c1" / "1" / "events.jsonl").find("first-try") != std::string::npos);
  CHECK(smtlab::read_file(out / "attempts" / "c1" / "2" / "events.jsonl").find("second-try") != std::string::npos);
  auto second = json::parse(smtlab::read_file(out / "attempts" / "c1" / "2" / "entry.json"));
  CHECK(second["error"] == "second");
  CHECK_FALSE(second.contains("attempts"));
  for (auto& d : {a, b, out}) fs::remove_all(d);
}

TEST_CASE("a new run's first manifest has invalid UTF-8 replaced too, as every later rewrite") {
  fs::path dir = temp_dir("utf8-create");
  json m = manifest();
  m["host"]["cpu_model"] = "Vendor CPU \xff\xfe @ 2.0GHz";  // what a host or libvirt reported
  REQUIRE_NOTHROW(ResultsWriter::create(dir, m));
  RunResults r = load_results(dir);
  CHECK(r.manifest["host"]["cpu_model"] == "Vendor CPU \xef\xbf\xbd\xef\xbf\xbd @ 2.0GHz");
  fs::remove_all(dir);
}

TEST_CASE("a batch of records lands in each cell's files in order, and one with an unknown cell writes nothing") {
  fs::path dir = temp_dir("batch");
  auto w = ResultsWriter::create(dir, manifest());
  RecordBatch batch;
  batch.sample("c0", sample(1, 10.0));
  batch.event("c0", {{"vm", 0}, {"type", "event"}, {"name", "iteration-start"}});
  batch.sample("c0", sample(2, 11.0));
  batch.monitor("c1", {{"vm", 0}, {"type", "monitor"}, {"monitor", "vmstat"}});
  batch.sample("c1", sample(1, 5.0));
  CHECK_FALSE(batch.empty());
  w.append(batch);
  CHECK(batch.empty());  // written: the next poll's batch starts empty
  w.append(batch);       // an empty batch writes nothing
  batch.sample("c0", sample(3, 12.0));
  w.append(batch);
  auto lines = [&](const std::string& cell, const char* file) {
    return smtlab::read_file(dir / "cells" / cell / file);
  };
  CHECK(lines("c0", "samples.jsonl") == sample(1, 10.0).dump() + "\n" + sample(2, 11.0).dump() + "\n" +
                                            sample(3, 12.0).dump() + "\n");
  CHECK(lines("c0", "events.jsonl") == json({{"vm", 0}, {"type", "event"}, {"name", "iteration-start"}}).dump() + "\n");
  CHECK(lines("c1", "monitor.jsonl") == json({{"vm", 0}, {"type", "monitor"}, {"monitor", "vmstat"}}).dump() + "\n");
  CHECK(lines("c1", "samples.jsonl") == sample(1, 5.0).dump() + "\n");

  batch.sample("c1", sample(2, 6.0));
  batch.sample("nope", sample(1, 1.0));
  CHECK_THROWS_AS(w.append(batch), smtlab::Error);
  CHECK(lines("c1", "samples.jsonl") == sample(1, 5.0).dump() + "\n");
  CHECK_FALSE(fs::exists(dir / "cells" / "nope"));
  CHECK_THROWS_AS(batch.event("c0", json::array()), smtlab::Error);  // a record is an object
}

namespace {

// A results directory of shard k of n of a plan of the cells `plan` (as `run --cells variant=base
// --iterations 2 --shard k/n` writes it), every cell of the shard ok.
fs::path shard_dir(const fs::path& dir, int k, int n, const std::vector<std::string>& plan) {
  json m = manifest();
  m["recipe"]["file"] = "/src/recipes/my recipe.yaml";
  m["cells"] = json::array();
  for (size_t p = static_cast<size_t>(k - 1); p < plan.size(); p += static_cast<size_t>(n))
    m["cells"].push_back({{"id", plan[p]}, {"index", p}, {"variant", "base"}, {"kernel", "k"}, {"topology", "t" + plan[p]},
                          {"benchmark", "kernbench"}, {"kind", "kernbench"}, {"vms", 1}});
  m["shard"] = {{"index", k}, {"count", n}, {"method", "position-mod-count"}, {"plan_cells", plan},
                {"filters", {"variant=base"}}, {"iterations", 2}};
  auto w = ResultsWriter::create(dir, m);
  for (const auto& c : m["cells"]) w.set_cell_status(c["id"], "ok");
  return dir;
}

}  // namespace

TEST_CASE("merge names a shard no directory holds, with its cells and the command that runs it") {
  const std::vector<std::string> plan = {"c0", "c1", "c2", "c3", "c4", "c5", "c6"};
  const fs::path root = smtlab::test::scratch_dir("shards");
  const fs::path s1 = shard_dir(root / "shard-1", 1, 3, plan), s3 = shard_dir(root / "shard-3", 3, 3, plan);

  MergeReport rep = merge_results({s1, s3}, root / "all");
  CHECK(rep.missing.empty());  // no directory lists shard 2's cells: only the shard record tells
  REQUIRE(rep.missing_shards.size() == 1);
  CHECK(rep.missing_shards[0].index == 2);
  CHECK(rep.missing_shards[0].count == 3);
  CHECK(rep.missing_shards[0].cells == std::vector<std::string>{"c1", "c4"});
  CHECK(rep.missing_shards[0].command == "smtlab run '/src/recipes/my recipe.yaml' --cells variant=base --iterations 2 "
                                         "--shard 2/3 -o " + (root / "shard-2").string());
  CHECK(rep.duplicate_shards.empty());
  // The merged directory says which shards it holds, so that merging it with the absent one completes it.
  json merged = load_results(root / "all").manifest;
  CHECK(merged["shard"]["indices"] == json::array({1, 3}));
  CHECK_FALSE(merged["shard"].contains("index"));
  const fs::path s2 = shard_dir(root / "shard-2", 2, 3, plan);
  rep = merge_results({root / "all", s2}, root / "complete");
  CHECK(rep.missing_shards.empty());
  CHECK(rep.missing.empty());
  CHECK(rep.cells == plan.size());
  CHECK(load_results(root / "complete").manifest["shard"]["indices"] == json::array({1, 2, 3}));

  // Two directories that claim one shard are named; the absent shard is still reported.
  const fs::path again = shard_dir(root / "rerun", 1, 3, plan);
  rep = merge_results({s1, again, s3}, root / "twice");
  REQUIRE(rep.duplicate_shards.size() == 1);
  CHECK(rep.duplicate_shards[0] == "shard 1/3 is in " + s1.string() + " and in " + again.string());
  CHECK(rep.overlapping.size() == 3);  // c0, c3, c6: its cells are overlaps too
  REQUIRE(rep.missing_shards.size() == 1);
  CHECK(rep.missing_shards[0].index == 2);
  // A directory that exists is never suggested (shard-2 holds a run now): the new one goes beside the first.
  CHECK(rep.missing_shards[0].command.substr(rep.missing_shards[0].command.rfind(" -o ")) ==
        " -o " + (root / "shard-2-of-3").string());

  // A shard whose cells another directory ran (an unsharded run of them) is not absent.
  json whole = manifest();
  whole["cells"] = json::array();
  for (const std::string id : {"c1", "c4"}) whole["cells"].push_back({{"id", id}, {"variant", "base"}});
  {
    auto w = ResultsWriter::create(root / "unsharded", whole);
    w.set_cell_status("c1", "ok");
    w.set_cell_status("c4", "failed", {{"error", "x"}});
  }
  rep = merge_results({s1, s3, root / "unsharded"}, root / "covered");
  CHECK(rep.missing_shards.empty());

  // Shards of different splits (another N): which are absent cannot be told, and that is said.
  const fs::path half = shard_dir(root / "half-1", 1, 2, plan);
  rep = merge_results({s1, half}, root / "mixed");
  CHECK(rep.missing_shards.empty());
  REQUIRE_FALSE(rep.notes.empty());
  CHECK(rep.notes.back().find("another split") != std::string::npos);
  CHECK_FALSE(load_results(root / "mixed").manifest.contains("shard"));

  // Directories without a shard record (older runs, --cells shares) merge as before.
  rep = merge_results({root / "unsharded"}, root / "old");
  CHECK(rep.missing_shards.empty());
  CHECK(rep.duplicate_shards.empty());
}

TEST_CASE("a command to paste names the recorded recipe file, or RECIPE where that path would not exist") {
  json m = manifest();
  CHECK(recorded_recipe_file(m) == "r.yaml");
  m["recipe"]["file"] = "/src/r\xEF\xBF\xBD.yaml";  // a path that was not UTF-8, as the manifest stores it
  CHECK(recorded_recipe_file(m) == "RECIPE");
  m["recipe"].erase("file");
  CHECK(recorded_recipe_file(m) == "RECIPE");
  m["recipe"]["file"] = 7;
  CHECK(recorded_recipe_file(m) == "RECIPE");

  // merge's command for an absent shard uses it.
  const std::vector<std::string> plan = {"c0", "c1"};
  const fs::path root = smtlab::test::scratch_dir("recipe-file");
  const fs::path s1 = shard_dir(root / "shard-1", 1, 2, plan);
  json sm = json::parse(smtlab::read_file(s1 / "manifest.json"));
  sm["recipe"]["file"] = "/src/r\xEF\xBF\xBD.yaml";
  smtlab::write_file_atomic(s1 / "manifest.json", sm.dump(2));
  MergeReport rep = merge_results({s1}, root / "all");
  REQUIRE(rep.missing_shards.size() == 1);
  CHECK(rep.missing_shards[0].command.rfind("smtlab run RECIPE --cells variant=base", 0) == 0);
}

TEST_CASE("a directory of a sharded run, or a merge of some of its shards, names the shards it lacks") {
  const std::vector<std::string> plan = {"c0", "c1", "c2", "c3", "c4", "c5", "c6"};
  const fs::path root = smtlab::test::scratch_dir("absent-shards");
  const fs::path s1 = shard_dir(root / "shard-1", 1, 3, plan), s3 = shard_dir(root / "shard-3", 3, 3, plan);

  RunResults one = load_results(s1);
  REQUIRE(one.absent_shards.size() == 2);
  CHECK(one.absent_shards[0].name() == "2/3");
  CHECK(one.absent_shards[0].cells == std::vector<std::string>{"c1", "c4"});
  CHECK(one.absent_shards[1].name() == "3/3");
  CHECK(one.absent_shards[1].cells == std::vector<std::string>{"c2", "c5"});

  merge_results({s1, s3}, root / "two");
  RunResults two = load_results(root / "two");
  REQUIRE(two.absent_shards.size() == 1);
  CHECK(two.absent_shards[0].name() == "2/3");
  CHECK(two.absent_shards[0].cells == std::vector<std::string>{"c1", "c4"});

  merge_results({root / "two", shard_dir(root / "shard-2", 2, 3, plan)}, root / "all");
  CHECK(load_results(root / "all").absent_shards.empty());

  // A count far beyond the plan's cells (a manifest from anywhere): shards past the plan hold nothing.
  {
    json m = json::parse(smtlab::read_file(s1 / "manifest.json"));
    m["shard"]["count"] = 1'000'000;
    const fs::path dir = root / "huge";
    ResultsWriter::create(dir, m);
    RunResults r = load_results(dir);
    // Shards 2..7 hold one cell each, c1..c6 (c3 and c6 are here); 8..1000000 hold none.
    REQUIRE(r.absent_shards.size() == 4);
    CHECK(r.absent_shards.back().name() == "6/1000000");
  }

  // A record this smtlab cannot read is said, not taken for a whole run in silence.
  for (const json& bad : {json{{"index", 4}, {"count", 3}, {"method", "position-mod-count"}, {"plan_cells", plan}},
                          json{{"index", 1}, {"count", 3}, {"method", "another"}, {"plan_cells", plan}},
                          json{{"index", 1}, {"count", 3}, {"method", "position-mod-count"}, {"plan_cells", {1, 2}}},
                          json{{"index", "1"}, {"count", 3}, {"method", "position-mod-count"}, {"plan_cells", plan}},
                          json("1/3")}) {
    json m = json::parse(smtlab::read_file(s1 / "manifest.json"));
    m["shard"] = bad;
    const fs::path dir = root / "bad";
    fs::remove_all(dir);
    ResultsWriter::create(dir, m);
    RunResults r = load_results(dir);
    INFO(bad.dump());
    CHECK(r.absent_shards.empty());
    REQUIRE_FALSE(r.warnings.empty());
    CHECK(r.warnings.back().find("its \"shard\" cannot be read, so whether shards of its run are absent cannot be told") !=
          std::string::npos);
  }
}
