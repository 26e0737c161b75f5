// The command line itself: every command and subcommand answers --help, --version names the
// release, a mistyped command is named with the ones there are, and a command line that cannot
// work is refused (status 2) before anything runs. No guests.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli_harness.hpp"
#include "smtlab/version.hpp"
#include "util/files.hpp"

namespace fs = std::filesystem;
using smtlab::test::run_smtlab;
using smtlab::test::scratch_dir;
using smtlab::test::test_recipe;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A directory that already holds a run: `smtlab run` (and reproduce) refuse it right after
// planning, before connecting to libvirt or preparing any artifact. A check made before the run
// shows as its own status-2 message; a check that comes too late shows as this refusal (status 1),
// and nothing boots either way.
fs::path held_dir() {
  auto dir = scratch_dir("held");
  smtlab::write_file_atomic(dir / "manifest.json", "{\"cells\": []}\n");
  return dir;
}

// A results directory of tests/cli/recipes/tiny.yaml's cells selected by `plan_args`, as
// `smtlab run` writes its manifest (every cell ok, no samples): for compare and reproduce. With
// `sha256`, the manifest says it was made from another recipe: --resume then refuses it before
// connecting to libvirt.
fs::path fake_results(const std::string& name, const std::vector<std::string>& plan_args, const std::string& sha256 = "") {
  std::vector<std::string> args = {"plan", test_recipe("tiny.yaml"), "--json"};
  args.insert(args.end(), plan_args.begin(), plan_args.end());
  auto plan = run_smtlab(args);
  REQUIRE(plan.status == 0);
  auto p = nlohmann::json::parse(plan.out);
  nlohmann::json m = {{"schema", 1},
                      {"recipe", {{"file", test_recipe("tiny.yaml")}, {"name", "tiny"}, {"sha256", sha256.empty() ? p["recipe_sha256"] : nlohmann::json(sha256)}}},
                      {"cells", nlohmann::json::array()}};
  for (const auto& c : p["cells"])
    m["cells"].push_back({{"id", c["id"]}, {"index", c["index"]}, {"variant", c["variant"]}, {"kernel", c["kernel"]},
                          {"topology", c["topology"]}, {"benchmark", c["benchmark"]}, {"kind", c["kind"]},
                          {"iterations", c["iterations"]}, {"status", "ok"}});
  auto dir = scratch_dir("fake") / name;
  fs::create_directories(dir);
  smtlab::write_file_atomic(dir / "manifest.json", m.dump(2) + "\n");
  return dir;
}

// A results directory of kernbench cells on topology HT, one per variant: its status ("failed"
// with `error`), and its elsp-2 values, one per iteration (none: no samples.jsonl).
struct GateCell {
  std::string variant, status;
  std::vector<double> elsp2;
  std::string error;
};
fs::path gate_results(const std::string& name, const std::vector<GateCell>& cells) {
  nlohmann::json m = {{"schema", 1}, {"recipe", {{"file", "gate.yaml"}, {"name", "gate"}}}, {"cells", nlohmann::json::array()}};
  auto dir = scratch_dir("gate") / name;
  for (size_t i = 0; i < cells.size(); ++i) {
    const auto& c = cells[i];
    const std::string id = "c" + std::to_string(i);
    m["cells"].push_back({{"id", id}, {"index", i}, {"variant", c.variant}, {"kernel", "k"}, {"topology", "HT"},
                          {"benchmark", "kernbench"}, {"kind", "kernbench"}, {"iterations", c.elsp2.size()},
                          {"status", c.status}, {"error", c.error}});
    std::string samples;
    for (size_t it = 0; it < c.elsp2.size(); ++it)
      samples += nlohmann::json({{"vm", 0}, {"iteration", it + 1}, {"metric", "elsp-2"}, {"value", c.elsp2[it]}}).dump() + "\n";
    fs::create_directories(dir / "cells" / id);
    if (!samples.empty()) smtlab::write_file_atomic(dir / "cells" / id / "samples.jsonl", samples);
  }
  smtlab::write_file_atomic(dir / "manifest.json", m.dump(2) + "\n");
  return dir;
}

// The names under "Subcommands:" in a CLI11 help text.
std::vector<std::string> subcommands_in(const std::string& help) {
  std::vector<std::string> names;
  std::istringstream in(help);
  std::string line;
  bool listing = false;
  static const std::regex entry(R"(^  ([a-z][a-z0-9-]*)\s{2,}\S.*$)");
  while (std::getline(in, line)) {
    if (line == "Subcommands:") { listing = true; continue; }
    if (!listing) continue;
    std::smatch m;
    if (std::regex_match(line, m, entry)) names.push_back(m[1]);
    else if (!line.empty()) break;
  }
  return names;
}
}  // namespace

TEST_CASE("smtlab --version prints the project's version") {
  auto r = run_smtlab({"--version"});
  CHECK(r.status == 0);
  CHECK(r.out == std::string("smtlab ") + smtlab::kVersion + "\n");
}

TEST_CASE("every command and subcommand answers --help with its usage") {
  auto top = run_smtlab({"--help"});
  REQUIRE(top.status == 0);
  auto commands = subcommands_in(top.out);
  // What the README and the workflow rely on.
  for (const char* needed : {"plan", "doctor", "kernel", "image", "cache", "boot", "run", "compare",
                             "report", "merge", "reproduce"})
    CHECK(std::find(commands.begin(), commands.end(), needed) != commands.end());
  for (const auto& command : commands) {
    INFO("smtlab " << command << " --help");
    auto r = run_smtlab({command, "--help"});
    CHECK(r.status == 0);
    CHECK(r.out.find("Usage: ") != std::string::npos);
    CHECK(r.out.find(command) != std::string::npos);
    for (const auto& sub : subcommands_in(r.out)) {
      INFO("smtlab " << command << " " << sub << " --help");
      auto s = run_smtlab({command, sub, "--help"});
      CHECK(s.status == 0);
      CHECK(s.out.find("Usage: ") != std::string::npos);
    }
  }
}

TEST_CASE("a word that is not a command is named, with the commands there are, status 2") {
  auto r = run_smtlab({"rnu", "recipes/smoke.yaml"});
  CHECK(r.status == 2);
  CHECK(r.err.find("'rnu' is not a command of smtlab") != std::string::npos);
  CHECK(r.err.find("run") != std::string::npos);
  auto nested = run_smtlab({"kernel", "biuld"});
  CHECK(nested.status == 2);
  CHECK(nested.err.find("'biuld' is not a command of smtlab kernel; the commands are: build") !=
        std::string::npos);
  auto none = run_smtlab({});
  CHECK(none.status == 2);
  CHECK(none.err.find("A subcommand is required") != std::string::npos);
}

TEST_CASE("run: a bad comparison flag is refused with status 2 before any cell runs") {
  const auto held = held_dir();
  const auto manifest = smtlab::read_file(held / "manifest.json");
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--rule", "welsh"}, "--rule: unknown significance rule 'welsh': use welch (default)"},
      {{"--stats", "Amean,Sdev"}, "--stats: unknown statistic 'Sdev'"},
      {{"--by", "variant"}, "--by: variant not in {benchmark,topology}"},
      {{"--fail-on-regression", "2000"}, "--fail-on-regression: Value 2000 not in range"},
      {{"--shard", "3/2"}, "--shard: 3/2 is not K/N with 1 <= K <= N (for example 1/4)"},
      // The columns of the plan: "<variant>-<topology>" of the one benchmark (or a variant name).
      {{"--baseline", "nosuch"}, "--baseline: baseline 'nosuch' is not a column of any table"},
      {{"--baseline", "eevdf-smt", "--cells", "variant=cfs"}, "hint: name one of: cfs-smt"},
      {{"--resume"}, "--resume needs the results directory of the run to finish"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"run", test_recipe("tiny.yaml")};
    if (c.args.front() != "--resume") args.insert(args.end(), {"-o", held.string()});
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = run_smtlab(args);
    INFO(c.args.front() << " " << (c.args.size() > 1 ? c.args[1] : "") << ": " << r.err);
    CHECK(r.status == 2);
    CHECK(contains(r.err, c.says));
    CHECK_FALSE(contains(r.err, "already holds a run"));  // refused before run_recipe
  }
  // A baseline that is a column, or a variant of every block, is not refused: the run goes on
  // (here to refusing the directory).
  for (const char* baseline : {"cfs", "eevdf-nosmt"}) {
    auto r = run_smtlab({"run", test_recipe("tiny.yaml"), "-o", held.string(), "--baseline", baseline});
    INFO(baseline << ": " << r.err);
    CHECK(r.status == 1);
    CHECK(contains(r.err, "already holds a run"));
  }
  // Resuming, the baseline is checked against the cells of the run being finished.
  auto fake = fake_results("resumed", {"--cells", "variant=cfs"}, std::string(64, 'a'));
  auto resumed = run_smtlab({"run", test_recipe("tiny.yaml"), "-o", fake.string(), "--resume", "--baseline", "eevdf"});
  INFO(resumed.err);
  CHECK(resumed.status == 2);
  CHECK(contains(resumed.err, "hint: name one of: cfs-smt"));
  CHECK_FALSE(contains(resumed.err, "was made from another recipe"));
  CHECK(smtlab::read_file(held / "manifest.json") == manifest);
}

TEST_CASE("run --resume of a shard's directory with another --shard, or none, is refused before anything runs") {
  auto dir = fake_results("shard", {"--cells", "variant=cfs"});
  auto m = nlohmann::json::parse(smtlab::read_file(dir / "manifest.json"));
  m["shard"] = {{"index", 1}, {"count", 2}, {"method", "position-mod-count"}};
  const std::string manifest = m.dump(2) + "\n";
  smtlab::write_file_atomic(dir / "manifest.json", manifest);
  for (const auto& [flags, says] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--shard", "2/2"}, "this run is shard 2/2"}, {{}, "this run is not sharded"}}) {
    std::vector<std::string> args = {"run", test_recipe("tiny.yaml"), "-o", dir.string(), "--resume"};
    args.insert(args.end(), flags.begin(), flags.end());
    auto r = run_smtlab(args);
    INFO(r.err);
    CHECK(r.status == 1);
    CHECK(contains(r.err, "cannot resume " + dir.string() + ": it holds shard 1/2 of its plan, and " + says));
    CHECK(contains(r.err, "hint: resume with --shard 1/2"));
    CHECK_FALSE(contains(r.err, "libvirt"));  // refused before connecting
  }
  CHECK(smtlab::read_file(dir / "manifest.json") == manifest);  // nothing recorded
}

TEST_CASE("compare and report: a bad --rule, --stats or --baseline is a usage error, status 2") {
  auto dir = fake_results("compared", {"--cells", "variant=eevdf"}).string();
  auto ok = run_smtlab({"compare", dir, "--baseline", "eevdf-nosmt", "--rule", "mmtests-2019", "--stats", "all"});
  INFO(ok.err);
  CHECK(ok.status == 0);
  CHECK(contains(ok.out, "chat"));  // no samples: "(no measurements)"
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--rule", "welsh"}, "--rule: unknown significance rule 'welsh'"},
      {{"--stats", "Amean,Sdev"}, "--stats: unknown statistic 'Sdev'"},
      {{"--stats", ","}, "--stats: no statistic selected"},
      {{"--format", "html"}, "--format: html not in"},
      {{"--baseline", "cfs-smt"}, "--baseline: baseline 'cfs-smt' is not a column of any table"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"compare", dir};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = run_smtlab(args);
    INFO(c.args[0] << " " << c.args[1] << ": " << r.err);
    CHECK(r.status == 2);
    CHECK(contains(r.err, c.says));
    CHECK(r.out.empty());
  }
  auto html = scratch_dir("report") / "r.html";
  auto report = run_smtlab({"report", dir, "-o", html.string(), "--baseline", "cfs-smt"});
  CHECK(report.status == 2);
  CHECK(contains(report.err, "hint: name one of: eevdf-nosmt, eevdf-overcommit, eevdf-smt"));
  CHECK_FALSE(fs::exists(html));
}

TEST_CASE("reproduce: the original's cells with their iterations, into a directory next to the original") {
  // A run made with --iterations 1: its cells' ids are those of one iteration, and the
  // reproduction plans them (here it is refused only for its directory, after planning).
  const auto orig = fake_results("orig", {"--cells", "variant=eevdf", "--cells", "topology=nosmt", "--iterations", "1"});
  const auto held = held_dir();
  auto r = run_smtlab({"reproduce", orig.string(), "-o", held.string()});
  INFO(r.err);
  CHECK(r.status == 1);
  CHECK(contains(r.err, "already holds a run"));
  CHECK_FALSE(contains(r.err, "matches filter"));

  // The default directory is <dir>-reproduced-<UTC time> next to the original, with or without a
  // trailing slash; --baseline's refusal names the columns, which carry the runs' names.
  for (const std::string& arg : {orig.string(), orig.string() + "/", orig.string() + "//", orig.string() + "/."}) {
    auto b = run_smtlab({"reproduce", arg, "--baseline", "nosuch"});
    INFO(arg << ": " << b.err);
    CHECK(b.status == 2);
    CHECK(std::regex_search(b.err, std::regex("hint: name one of: orig-reproduced-[0-9]{8}-[0-9]{6}/eevdf-nosmt, orig/eevdf-nosmt\n")));
  }
  // Never inside the original.
  for (const auto& out : {orig / "again", orig}) {
    auto inside = run_smtlab({"reproduce", orig.string() + "/", "-o", out.string()});
    INFO(inside.err);
    CHECK(inside.status == 2);
    CHECK(contains(inside.err, "is inside the original results " + orig.string()));
  }
  std::vector<std::string> entries;
  for (const auto& e : fs::directory_iterator(orig)) entries.push_back(e.path().filename().string());
  CHECK(entries == std::vector<std::string>{"manifest.json"});
  auto resume = run_smtlab({"reproduce", orig.string(), "--resume"});
  CHECK(resume.status == 2);
  CHECK(contains(resume.err, "--resume needs the directory of the reproduction to finish"));

  // A cell the recipe does not plan any more is named, with what to do.
  auto manifest = nlohmann::json::parse(smtlab::read_file(orig / "manifest.json"));
  manifest["cells"][0]["id"] = "0123456789ab";
  const auto changed = scratch_dir("changed");
  smtlab::write_file_atomic(changed / "manifest.json", manifest.dump(2));
  auto gone = run_smtlab({"reproduce", changed.string(), "-o", (changed.parent_path() / "gone").string()});
  CHECK(gone.status == 1);
  CHECK(contains(gone.err, "cell(s) 0123456789ab of " + changed.string() + " are not cells of " + test_recipe("tiny.yaml")));
  CHECK_FALSE(fs::exists(changed.parent_path() / "gone"));
}

TEST_CASE("compare --fail-on-regression does not pass a column that was not measured: status 4, 3 for a regression") {
  const std::vector<double> base = {100, 101, 102}, same = {100.5, 101.5, 101}, worse = {150, 151, 152};
  const std::string panic = "kernel panic - not syncing\nconsole tail";
  struct Case {
    std::string name;
    std::vector<GateCell> cells;
    int gated, ungated;       // status with --fail-on-regression 5, and without
    std::vector<std::string> says;  // on stderr, with the flag
  };
  const std::vector<Case> cases = {
      {"measured", {{"base", "ok", base, ""}, {"new", "ok", same, ""}}, 0, 0, {}},
      {"new-failed", {{"base", "ok", base, ""}, {"new", "failed", {}, panic}}, 4, 0,
       {"smtlab: not measured: kernbench new-HT (cell c1): failed: kernel panic - not syncing\n"}},
      {"baseline-failed", {{"base", "failed", {}, panic}, {"new", "ok", worse, ""}}, 4, 0,
       {"smtlab: not measured: kernbench base-HT (cell c0): failed: kernel panic - not syncing\n"}},
      {"ok-without-samples", {{"base", "ok", base, ""}, {"new", "ok", {}, ""}}, 4, 0,
       {"smtlab: not measured: kernbench new-HT (cell c1): no samples for elsp-2\n"}},
      {"regression-and-failed", {{"base", "ok", base, ""}, {"new", "ok", worse, ""}, {"other", "failed", {}, panic}}, 3, 0,
       {"smtlab: regression: kernbench Amean elsp-2: new-HT is 49.50% worse than base-HT",
        "smtlab: not measured: kernbench other-HT (cell c2): failed: kernel panic"}},
  };
  const auto summary = scratch_dir("gate-summary") / "summary.md";
  for (const auto& c : cases) {
    const auto dir = gate_results(c.name, c.cells).string();
    ::setenv("GITHUB_STEP_SUMMARY", summary.c_str(), 1);
    auto gated = run_smtlab({"compare", dir, "--fail-on-regression", "5"});
    ::unsetenv("GITHUB_STEP_SUMMARY");
    INFO(c.name << ": " << gated.err);
    CHECK(gated.status == c.gated);
    for (const auto& line : c.says) CHECK(contains(gated.err, line));
    const std::string md = smtlab::read_file(summary);
    CHECK(contains(md, "not measured: kernbench") == (c.name != "measured"));
    fs::remove(summary);
    auto ungated = run_smtlab({"compare", dir});
    CHECK(ungated.status == c.ungated);
    CHECK_FALSE(contains(ungated.err, "not measured"));
  }
}
