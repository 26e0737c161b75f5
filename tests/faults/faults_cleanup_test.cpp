// Runs after the whole fault suite (ctest FIXTURES_CLEANUP): no qemu-system process of the suite's
// recipes' cells (domain names smtlab-<cell id>-vm<k>-...) or naming its directories is left.
#include <catch2/catch.hpp>

#include "../cli/cli_harness.hpp"
#include "faults_common.hpp"
#include "checkout.hpp"

using namespace smtlab::test;

TEST_CASE("after the fault suite no QEMU process of its runs is left") {
  CHECK(qemu_processes(scratch_prefix()).empty());
  std::vector<std::string> ids;
  for (const auto& entry : std::filesystem::directory_iterator(smtlab::test::source_dir() / "tests/faults/recipes")) {
    auto plan = run_smtlab({"plan", entry.path().string(), "--json"}, std::chrono::seconds(60));
    INFO(entry.path().filename().string() << ": " << plan.err);
    REQUIRE(plan.status == 0);
    auto cells = nlohmann::json::parse(plan.out)["cells"];
    for (const auto& c : cells) ids.push_back(c["id"].get<std::string>());
  }
  CHECK(ids.size() >= 6);
  for (const auto& id : ids) {
    INFO("cell " << id);
    CHECK(qemu_processes("smtlab-" + id + "-vm").empty());
  }
}
