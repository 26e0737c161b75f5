#include <catch2/catch.hpp>

#include <filesystem>

#include "results/results.hpp"
#include "run/resume.hpp"
#include "scratch.hpp"
#include "util/error.hpp"
#include "util/files.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using smtlab::results::ResultsWriter;
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
