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
