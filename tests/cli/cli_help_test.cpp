// The command line itself: every command and subcommand answers --help, --version names the
// release, and a mistyped command is named with the ones there are. No guests.
#include <catch2/catch.hpp>

#include <algorithm>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli_harness.hpp"
#include "smtlab/version.hpp"

using smtlab::test::run_smtlab;

namespace {
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
