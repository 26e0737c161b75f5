#include <catch2/catch.hpp>

#include <filesystem>

#include "results/results.hpp"
#include "run/guest_session.hpp"
#include "run/resume.hpp"
#include "scratch.hpp"
#include "util/error.hpp"
#include "util/files.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using smtlab::results::ResultsWriter;
using smtlab::run::check_resume_conditions;
using smtlab::run::choose_cells;

namespace {

// A run of three cells a, b, c.
ResultsWriter new_run(const fs::path& dir) {
  json m = {{"recipe", {{"name", "r"}, {"sha256", "abc"}}}, {"cells", json::array()}};
  for (const char* id : {"a", "b", "c"}) m["cells"].push_back({{"id", id}, {"variant", id}});
  return ResultsWriter::create(dir, m);
}

json sample(int iteration) {
  return {{"vm", 0}, {"benchmark", "kernbench"}, {"iteration", iteration}, {"metric", "elsp-2"}, {"value", 10.0 + iteration}};
}

}  // namespace

TEST_CASE("resume: finished cells are left as they are, failed ones run again with retry_failed, their attempt kept") {
  const fs::path dir = smtlab::test::scratch_path("resume-choice");
  {
    auto w = new_run(dir);
    w.set_cell_status("a", "ok");
    w.append_sample("a", sample(1));
    w.set_cell_status("b", "failed", {{"error", "boom"}});
    w.append_sample("b", sample(1));
  }
  {
    auto w = ResultsWriter::open(dir);
    auto choice = choose_cells(w, {"a", "b", "c"}, false);
    CHECK(choice.run == std::vector<size_t>{2});
    CHECK(choice.ok == 1);
    CHECK(choice.failed == 1);
    CHECK(w.cell_status("b") == "failed");
  }
  auto w = ResultsWriter::open(dir);
  auto choice = choose_cells(w, {"a", "b", "c"}, true);
  CHECK(choice.run == std::vector<size_t>{1, 2});
  CHECK(choice.ok == 1);
  CHECK(choice.failed == 0);
  CHECK(w.cell_status("b") == "pending");
  CHECK(fs::exists(dir / "attempts" / "b" / "1" / "samples.jsonl"));
  CHECK(fs::exists(dir / "cells" / "a" / "samples.jsonl"));
}

TEST_CASE("resume: a planned cell that is not in the run is an error naming the cell and the directory") {
  const fs::path dir = smtlab::test::scratch_path("resume-unknown");
  auto w = new_run(dir);
  try {
    choose_cells(w, {"a", "zz"}, false);
    FAIL("an unknown cell was accepted");
  } catch (const smtlab::Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("cell zz is not part of the run in " + dir.string()));
    CHECK_THAT(e.hint(), Catch::Contains("same recipe and cell filters"));
  }
}

TEST_CASE("resume: what a cell left running by a dead process wrote is kept under attempts/, and the cell runs afresh") {
  // The samples of cell b were flushed, then the process died (kill -9, out of memory, a full disk
  // while rewriting the manifest): b is still "running".
  const fs::path dir = smtlab::test::scratch_path("resume-running");
  {
    auto w = new_run(dir);
    w.set_cell_status("a", "ok");
    w.set_cell_status("b", "running", {{"started", "2026-01-01T00:00:00Z"}});
    w.append_sample("b", sample(1));
    w.append_sample("b", sample(2));
    w.append_event("b", {{"vm", 0}, {"type", "event"}, {"name", "iteration-start"}});
  }
  const std::string samples = smtlab::read_file(dir / "cells" / "b" / "samples.jsonl");
  auto w = ResultsWriter::open(dir);
  auto choice = choose_cells(w, {"a", "b", "c"}, false);
  CHECK(choice.run == std::vector<size_t>{1, 2});
  // Nothing measured is lost: the attempt, whole, under attempts/b/1, listed as interrupted.
  const fs::path kept = dir / "attempts" / "b" / "1";
  REQUIRE(fs::exists(kept / "samples.jsonl"));
  CHECK(smtlab::read_file(kept / "samples.jsonl") == samples);
  CHECK(fs::exists(kept / "events.jsonl"));
  const json entry = json::parse(smtlab::read_file(kept / "entry.json"));
  CHECK(entry["status"] == "interrupted");
  CHECK(entry["started"] == "2026-01-01T00:00:00Z");
  const json b = w.manifest()["cells"][1];
  REQUIRE(b["attempts"].size() == 1);
  CHECK(b["attempts"][0]["status"] == "interrupted");
  CHECK(b["attempts"][0]["dir"] == "attempts/b/1");
  CHECK_THAT(b["attempts"][0]["error"].get<std::string>(), Catch::Contains("the run stopped before this cell finished"));
  // ... and the cell starts clean: the new attempt does not append to the old one's files.
  CHECK(b["status"] == "pending");
  CHECK_FALSE(b.contains("started"));
  CHECK_FALSE(fs::exists(dir / "cells" / "b"));
  CHECK(smtlab::results::load_results(dir).cells[1].samples.empty());
  // A pending cell that wrote nothing has no attempt.
  CHECK_FALSE(fs::exists(dir / "attempts" / "c"));
  CHECK_FALSE(w.manifest()["cells"][2].contains("attempts"));
}

TEST_CASE("resume: a cell left running that wrote nothing runs again without an attempt") {
  const fs::path dir = smtlab::test::scratch_path("resume-empty");
  {
    auto w = new_run(dir);
    w.set_cell_status("a", "running", {{"started", "s"}});
    w.cell_dir("a");  // made, empty
  }
  auto w = ResultsWriter::open(dir);
  CHECK(choose_cells(w, {"a"}, false).run == std::vector<size_t>{0});
  CHECK(w.cell_status("a") == "pending");
  CHECK_FALSE(w.manifest()["cells"][0].contains("attempts"));
  CHECK_FALSE(fs::exists(dir / "attempts"));
}

TEST_CASE("a boot retried after one of its VMs said hello starts from clean files, the aborted attempt kept") {
  // Two VMs: in the first boot VM 0 says hello and measures two iterations while VM 1 never does
  // (boot timeout), so the cell is booted again; the second boot measures three.
  const fs::path dir = smtlab::test::scratch_path("boot-retry");
  auto w = new_run(dir);
  w.set_cell_status("a", "running", {{"started", "s1"}});
  smtlab::run::SessionConfig config;
  config.boot_retries = 1;
  config.keep_failed_boot = smtlab::run::keep_failed_boots(w, {"a", "b"});
  int boots = 0;
  auto once = [&] {
    ++boots;
    smtlab::run::SessionOutcome o;
    for (int vm = 0; vm < 2; ++vm) smtlab::write_file_atomic(w.console_log("a", vm), "boot " + std::to_string(boots) + "\n");
    w.append_event("a", {{"vm", 0}, {"type", "hello"}});
    const int iterations = boots == 1 ? 2 : 3;
    for (int i = 1; i <= iterations; ++i) w.append_sample("a", sample(i));
    if (boots == 1) {
      w.append_monitor("a", {{"vm", 0}, {"monitor", "vmstat"}, {"t", 1.0}, {"values", {{"r", 1}}}});
      o.error = "VM 1 did not start its agent within 240 s (boot timeout)";
      o.ready_s = {3.0, -1};
    } else {
      o.ok = true;
      o.ready_s = {3.0, 3.5};
    }
    return o;
  };
  const auto outcome = smtlab::run::with_boot_retries(config, once);
  CHECK(boots == 2);
  CHECK(outcome.ok);
  // The cell's files are the second boot's alone: no extra iterations, no first-boot monitor line.
  const auto loaded = smtlab::results::load_results(dir);
  CHECK(loaded.cells[0].samples.size() == 3);
  CHECK(loaded.cells[0].monitors.empty());
  CHECK(smtlab::read_file(dir / "cells" / "a" / "console-vm1.log") == "boot 2\n");
  // The aborted boot, whole, under attempts/a/1: what VM 0 measured is not lost.
  const fs::path kept = dir / "attempts" / "a" / "1";
  CHECK(smtlab::read_file(kept / "console-vm1.log") == "boot 1\n");
  CHECK(fs::exists(kept / "monitor.jsonl"));
  const json a = w.manifest()["cells"][0];
  CHECK(a["status"] == "running");  // the cell goes on; the runner records its end
  CHECK(a["started"] == "s1");
  REQUIRE(a["attempts"].size() == 1);
  CHECK(a["attempts"][0]["status"] == "failed");
  CHECK(a["attempts"][0]["dir"] == "attempts/a/1");
  CHECK_THAT(a["attempts"][0]["error"].get<std::string>(),
             Catch::StartsWith("boot attempt 1 failed before the agent was ready: VM 1 did not start its agent"));
  CHECK(json::parse(smtlab::read_file(kept / "entry.json"))["status"] == "failed");
  // Cell b of the same boot wrote nothing: it has no attempt.
  CHECK_FALSE(w.manifest()["cells"][1].contains("attempts"));
  CHECK_FALSE(fs::exists(dir / "attempts" / "b"));
  REQUIRE_FALSE(outcome.notes.empty());
  CHECK(outcome.notes[0] ==
        "boot attempt 1 failed before the agent was ready: VM 1 did not start its agent within 240 s (boot timeout) "
        "(kept in attempts/a/1); booted again");
}

TEST_CASE("resume: each resume is added to the manifest's resumed list once the cells are validated, an old single field kept") {
  const fs::path dir = smtlab::test::scratch_path("resume-record");
  {
    auto w = new_run(dir);
    w.set_cell_status("b", "failed", {{"error", "boom"}});
    w.append_sample("b", sample(1));
    // As smtlab wrote a resume before the list: one time, one record, overwritten by the next.
    w.update_manifest({{"resumed", "2026-01-01T00:00:00Z"}, {"resumed_with", {{"smtlab_version", "0.0.9"}}}});
  }
  auto w = ResultsWriter::open(dir);
  const json first = {{"smtlab_version", "0.1.0"}, {"accel", "tcg"}};
  // A resume with a cell the run does not have changes nothing: no record, no attempt moved.
  CHECK_THROWS_AS(choose_cells(w, {"b", "zz"}, true, &first), smtlab::Error);
  CHECK(w.manifest()["resumed"] == "2026-01-01T00:00:00Z");
  CHECK(w.cell_status("b") == "failed");
  CHECK(fs::exists(dir / "cells" / "b" / "samples.jsonl"));
  CHECK_FALSE(fs::exists(dir / "attempts"));
  CHECK(smtlab::results::load_results(dir).manifest["resumed"] == "2026-01-01T00:00:00Z");

  choose_cells(w, {"a", "b", "c"}, false, &first);
  const json second = {{"smtlab_version", "0.1.1"}, {"accel", "kvm"}};
  choose_cells(w, {"a", "b", "c"}, false, &second);
  const json m = smtlab::results::load_results(dir).manifest;  // as written to disk
  REQUIRE(m["resumed"].is_array());
  REQUIRE(m["resumed"].size() == 3);
  CHECK(m["resumed"][0] == json{{"at", "2026-01-01T00:00:00Z"}, {"with", {{"smtlab_version", "0.0.9"}}}});
  CHECK(m["resumed"][1]["with"] == first);
  CHECK(m["resumed"][2]["with"] == second);
  CHECK(m["resumed"][2]["at"].get<std::string>().size() == 20);  // 2026-01-01T00:00:00Z
  CHECK_FALSE(m.contains("resumed_with"));
  // A new run records no resume.
  const fs::path fresh = smtlab::test::scratch_path("resume-none");
  auto n = new_run(fresh);
  choose_cells(n, {"a"}, false);
  CHECK_FALSE(n.manifest().contains("resumed"));
}

TEST_CASE("resume: another accelerator, kernel or image is refused, naming what differs, before anything changes") {
  const fs::path dir = smtlab::test::scratch_path("resume-conditions");
  const json kernel = {{"version", "6.12.1"}, {"sha256", std::string(64, 'a')}};
  const json image = {{"name", "bench"}, {"digest", std::string(64, 'd')}};
  {
    json m = {{"recipe", {{"name", "r"}, {"sha256", "abc"}}},
              {"accel", "kvm"},
              {"kernels", {{"debian-6.12", kernel}}},
              {"image", image},
              {"cells", json::array({{{"id", "a"}}, {{"id", "b"}}})}};
    auto w = ResultsWriter::create(dir, m);
    w.set_cell_status("a", "ok");
    w.set_cell_status("b", "failed", {{"error", "boom"}});
    w.append_sample("b", sample(1));
  }
  auto w = ResultsWriter::open(dir);
  const json same = {{"accel", "kvm"}, {"kernels", {{"debian-6.12", kernel}}}, {"image", image}};
  auto refused = [&](json now) {
    try {
      choose_cells(w, {"a", "b"}, true, &now);
    } catch (const smtlab::Error& e) {
      CHECK_THAT(e.hint(), Catch::Contains("-o NEW_DIR") && Catch::Contains("where it started"));
      return std::string(e.what());
    }
    FAIL("the resume was not refused");
    return std::string();
  };
  SECTION("another accelerator") {
    json now = same;
    now["accel"] = "tcg";
    CHECK_THAT(refused(now), Catch::Contains("cannot resume " + dir.string()) &&
                                 Catch::Contains("accelerator (recorded kvm, now tcg)"));
  }
  SECTION("another kernel of the same name") {
    json now = same;
    now["kernels"]["debian-6.12"]["sha256"] = std::string(64, 'b');
    CHECK_THAT(refused(now), Catch::Contains("kernel 'debian-6.12' differs in sha256 (recorded aaaaaaaaaaaa, now "
                                             "bbbbbbbbbbbb)"));
  }
  SECTION("another image") {
    json now = same;
    now["image"]["digest"] = std::string(64, 'e');
    CHECK_THAT(refused(now), Catch::Contains("image differs in digest (recorded dddddddddddd, now eeeeeeeeeeee)"));
  }
  SECTION("an image of the same definition with other packages (rebuilt from a newer mirror)") {
    json now = same;
    now["image"]["installed"] = {{"gcc-12", "12.2.0-14+deb12u1"}, {"make", "4.3-4.1"}, {"bc", "1.07.1-3"}};
    // The run recorded no packages (an image cached before they were recorded): nothing to compare.
    CHECK_NOTHROW(check_resume_conditions(w.manifest(), now, dir));
    json recorded = w.manifest();
    recorded["image"]["installed"] = {{"gcc-12", "12.2.0-14"}, {"make", "4.3-4.1"}};
    recorded["image"]["sha256"] = std::string(64, '1');
    CHECK_THROWS_WITH(check_resume_conditions(recorded, now, dir),
                      Catch::Contains("image differs in installed packages (recorded bc absent, now bc 1.07.1-3; "
                                      "1 more package(s) differ)"));
    // Other bytes of the same packages (the image built again, on another machine): the same guest.
    now["image"]["installed"] = recorded["image"]["installed"];
    now["image"]["sha256"] = std::string(64, '2');
    CHECK_NOTHROW(check_resume_conditions(recorded, now, dir));
  }
  // Nothing changed: no resume recorded, the failed attempt not moved.
  CHECK_FALSE(w.manifest().contains("resumed"));
  CHECK(w.cell_status("b") == "failed");
  CHECK(fs::exists(dir / "cells" / "b" / "samples.jsonl"));
  CHECK_FALSE(fs::exists(dir / "attempts"));
  // The same conditions resume.
  auto choice = choose_cells(w, {"a", "b"}, true, &same);
  CHECK(choice.run == std::vector<size_t>{1});
  CHECK(w.manifest()["resumed"].size() == 1);
}

TEST_CASE("resume: a shard resumes as the shard it recorded, or is refused with the --shard to use") {
  const fs::path dir = "/results/r-shard";
  const json recorded = {{"accel", "tcg"}, {"shard", {{"index", 2}, {"count", 3}, {"plan_cells", {"a", "b", "c"}}}}};
  const json same = {{"shard", {{"index", 2}, {"count", 3}}}};
  CHECK_NOTHROW(check_resume_conditions(recorded, same, dir));
  // No shard in `now` (a caller that does not compare it), or none recorded (an unsharded run, or
  // one made before shards were recorded): nothing to compare.
  CHECK_NOTHROW(check_resume_conditions(recorded, {{"accel", "tcg"}}, dir));
  CHECK_NOTHROW(check_resume_conditions({{"accel", "tcg"}}, same, dir));
  // A recorded shard this smtlab cannot read (an edited manifest) is not compared, and no crash.
  CHECK_NOTHROW(check_resume_conditions({{"shard", {{"index", "two"}, {"count", 3}}}}, same, dir));
  auto refused = [&](const json& shard) {
    try {
      check_resume_conditions(recorded, {{"shard", shard}}, dir);
    } catch (const smtlab::Error& e) {
      CHECK_THAT(e.hint(), Catch::Contains("resume with --shard 2/3"));
      return std::string(e.what());
    }
    FAIL("the resume was not refused");
    return std::string();
  };
  CHECK_THAT(refused({{"index", 1}, {"count", 3}}),
             Catch::Contains("cannot resume /results/r-shard: it holds shard 2/3 of its plan, and this run is shard 1/3"));
  CHECK_THAT(refused({{"index", 2}, {"count", 4}}), Catch::Contains("this run is shard 2/4"));
  CHECK_THAT(refused(nullptr), Catch::Contains("it holds shard 2/3 of its plan, and this run is not sharded"));
}
