// What `smtlab run` and `smtlab reproduce` return after the run (cli/run_end.cpp, built into this
// test from the command's sources): a regression over failed cells, the gate's columns that were
// not measured, and a comparison that cannot be made. No guests: the results are fixtures.
#include <catch2/catch.hpp>

#include <filesystem>
#include <iostream>
#include <sstream>

#include "../report/fixtures.hpp"
#include "cli/commands.hpp"
#include "cli/run_end.hpp"
#include "scratch.hpp"
#include "util/files.hpp"

namespace fs = std::filesystem;
using namespace smtlab::cli;

namespace {

// What finish_run wrote on stderr, and its status.
struct Ended {
  int status = -1;
  std::string err;
};

Ended finish(const smtlab::run::RunSummary& summary, const fs::path& compared, const CompareFlags& flags) {
  RunEnd end;
  end.again = "smtlab run r.yaml -o " + summary.dir.string();
  end.compare = {compared};
  std::ostringstream err;
  auto* old = std::cerr.rdbuf(err.rdbuf());
  std::ostringstream out;
  auto* old_out = std::cout.rdbuf(out.rdbuf());
  Ended e;
  e.status = finish_run(summary, end, flags);
  std::cerr.rdbuf(old);
  std::cout.rdbuf(old_out);
  e.err = err.str();
  return e;
}

smtlab::run::RunSummary summary_of(const fs::path& dir, int ok, int failed) {
  smtlab::run::RunSummary s;
  s.dir = dir;
  s.cells = ok + failed;
  s.ok = ok;
  s.failed = failed;
  s.accel = "tcg";
  return s;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("run's end: a regression (3) wins over failed cells (4), and the gate fails a column not measured") {
  // chat_run: rsdl is 80 % worse than mainline, and the cell "broken" failed.
  const auto dir = fixtures::chat_run();
  CompareFlags gate;
  gate.fail_on_regression = 5;
  auto tripped = finish(summary_of(dir, 2, 1), dir, gate);
  INFO(tripped.err);
  CHECK(tripped.status == kRegression);
  CHECK(contains(tripped.err, "smtlab: regression: chat Hmean msgs/s: rsdl-8cpu is 80.00% worse"));
  CHECK(contains(tripped.err, "smtlab: not measured: chat broken-8cpu (cell cell2): failed: kernel panic - not syncing\n"));
  // No regression beyond 500 %: the failed cell fails the gate, and the run, with 4.
  gate.fail_on_regression = 500;
  CHECK(finish(summary_of(dir, 2, 1), dir, gate).status == kCellsFailed);
  // This run's cells all ended ok (it resumed, say), but the directory it compares has a failed
  // one: the gate cannot pass it.
  CHECK(finish(summary_of(dir, 0, 0), dir, gate).status == kCellsFailed);
  // Without the gate: the run's own status.
  CHECK(finish(summary_of(dir, 0, 0), dir, CompareFlags{}).status == kOk);
  CHECK(finish(summary_of(dir, 2, 1), dir, CompareFlags{}).status == kCellsFailed);
  fs::remove_all(dir);
}

TEST_CASE("run's end: a comparison that cannot be made is a warning, unless --fail-on-regression asked for a gate") {
  // The run measured its cells; the directory compared after it has no readable manifest.
  const auto dir = smtlab::test::scratch_dir("run-end-measured");
  const auto unreadable = smtlab::test::scratch_dir("run-end-unreadable");
  smtlab::write_file_atomic(unreadable / "manifest.json", "{not json");
  auto ended = finish(summary_of(dir, 3, 0), unreadable, CompareFlags{});
  INFO(ended.err);
  CHECK(ended.status == kOk);
  CHECK(contains(ended.err, "smtlab: warning: no comparison: " + (unreadable / "manifest.json").string() +
                                " is not valid JSON"));
  CHECK(contains(ended.err, "smtlab: the results are kept; print the tables with: smtlab compare " +
                                unreadable.string()));
  CHECK(finish(summary_of(dir, 2, 1), unreadable, CompareFlags{}).status == kCellsFailed);
  CompareFlags gate;
  gate.fail_on_regression = 5;
  auto gated = finish(summary_of(dir, 3, 0), unreadable, gate);
  CHECK(gated.status == kError);
  CHECK(contains(gated.err, "smtlab: error: no comparison: "));
}
