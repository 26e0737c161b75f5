// The README's main command: the smoke recipe, every cell, to the comparison table.
#include <catch2/catch.hpp>

#include <regex>
#include <set>
#include <sstream>

#include "cli_harness.hpp"
#include "checkout.hpp"

using namespace smtlab::test;

namespace {

// Whether a whole line of `text` matches `pattern`.
bool has_line(const std::string& text, const std::string& pattern) {
  const std::regex re(pattern);
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (std::regex_match(line, re)) return true;
  return false;
}

}  // namespace

TEST_CASE("smtlab run recipes/smoke.yaml: every cell ok, samples and monitors recorded, the table printed") {
  auto dir = scratch_dir("smoke") / "run";
  auto r = run_smtlab({"run", (smtlab::test::source_dir() / "recipes/smoke.yaml").string(), "-o", dir.string()});
  INFO(run_failure_summary(dir, r.err));
  CHECK(r.status == 0);
  auto manifest = read_json(dir / "manifest.json");
  CHECK((manifest["accel"] == "tcg" || manifest["accel"] == "kvm"));
  REQUIRE(manifest["cells"].size() == 9);
  for (const auto& c : manifest["cells"]) {
    INFO(c.dump());
    CHECK(c["status"] == "ok");
    CHECK(c["wall_s"].get<double>() > 0);
    auto cell = dir / "cells" / c["id"].get<std::string>();
    CHECK(std::filesystem::file_size(cell / "samples.jsonl") > 0);
    CHECK(std::filesystem::file_size(cell / "monitor.jsonl") > 0);
    // Who used the host CPUs while the benchmark ran: the guests' QEMU processes were counted.
    REQUIRE(c.contains("host_cpu"));
    CHECK(c["host_cpu"]["guests_pct"].get<double>() > 5);
    CHECK(c["host_cpu"]["busy_pct"].get<double>() >= c["host_cpu"]["guests_pct"].get<double>());
  }
  // smoke shares boots: each variant x topology's kernbench cell (job 0) and chat cell (job 1) ran
  // in one boot, recorded once in boot_groups; overcommit's one kernbench cell booted on its own.
  REQUIRE(manifest.contains("boot_groups"));
  CHECK(manifest["boot_groups"].size() == 4);
  for (const auto& [boot, g] : manifest["boot_groups"].items()) {
    INFO(boot << " " << g.dump());
    CHECK(g["ok"] == true);
    CHECK(g["cells"].size() == 2);
  }
  std::multiset<std::string> jobs;  // benchmark:job index, over every cell
  for (const auto& c : manifest["cells"]) {
    const std::string bench = c["definition"]["benchmark"]["kind"].get<std::string>();
    jobs.insert(bench + ":" + (c.contains("boot_group") && !c["boot_group"].is_null()
                                   ? std::to_string(c["boot_group"]["job"].get<int>())
                                   : std::string("own boot")));
  }
  CHECK(jobs == std::multiset<std::string>{"kernbench:0", "kernbench:0", "kernbench:0", "kernbench:0",
                                           "kernbench:own boot", "chat:1", "chat:1", "chat:1", "chat:1"});
  // While it runs, each measured iteration says its headline: kernbench's elapsed time, chat's
  // throughput.
  CHECK(has_line(r.err, R"(smtlab: cell [0-9]/9: -j2 iteration 1: elsp-2 [0-9]+\.[0-9]{2} s)"));
  CHECK(has_line(r.err, R"(smtlab: cell [0-9]/9: iteration 1: msgs/s [0-9]+\.[0-9]{2})"));
  // mmtests' format: two-line headers, then rows such as "Amean     elsp-2   ...".
  CHECK(r.out.find("Amean     elsp-2") != std::string::npos);
  CHECK(r.out.find("Amean     elsp-4") != std::string::npos);
  CHECK(r.out.find("Hmean     msgs/s") != std::string::npos);
  CHECK(r.out.find("significance:") != std::string::npos);
}
