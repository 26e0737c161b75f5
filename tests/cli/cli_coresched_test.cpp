// The core-scheduling kernel of kernels/coresched-6.12.yaml end to end: built from Debian's
// linux-source-6.12 with its patch queue (a cache hit once built; about ten minutes on 2 cores
// when cold), booted, and asked for core-scheduling cookies by the chat benchmark; a Debian kernel
// without CONFIG_SCHED_CORE given the same variant fails with a message that says so.
#include <catch2/catch.hpp>

#include <fstream>
#include <regex>

#include "cli_harness.hpp"
#include "checkout.hpp"

using namespace smtlab::test;
using namespace std::chrono_literals;

namespace {

const nlohmann::json* cell_of(const nlohmann::json& manifest, const std::string& variant) {
  for (const auto& c : manifest["cells"])
    if (c.value("variant", "") == variant) return &c;
  return nullptr;
}

std::vector<nlohmann::json> iteration_ends(const std::filesystem::path& events) {
  std::vector<nlohmann::json> out;
  std::ifstream in(events);
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object() && j.value("type", "") == "event" && j.value("name", "") == "iteration-end") out.push_back(j);
  }
  return out;
}

}  // namespace

TEST_CASE("coresched-6.12: built with its patch, it boots and reports the variant the patch exposes") {
  auto built = run_smtlab({"kernel", "build", (smtlab::test::source_dir() / "kernels/coresched-6.12.yaml").string()}, 2400s);
  INFO(built.out << built.err);
  REQUIRE(built.status == 0);
  CHECK(std::regex_search(built.out + built.err, std::regex(R"(kernel coresched-6\.12: 6\.12\.\d+-smtlab-coresched )")));

  auto r = run_smtlab({"boot", test_recipe("coresched.yaml"), "--cell", "variant=csc", "--", "cat", "/proc/smtlab_variant",
                       "/sys/devices/system/cpu/smt/active"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out == "variant=coresched-6.12\nsched_core=1\n1\n");
  CHECK(r.err.find("2 CPUs online, sibling groups [ 0-1 ], SMT active") != std::string::npos);
}

TEST_CASE("coresched per benchmark: chat server and client share one non-zero cookie, and a kernel without it fails the cell") {
  auto dir = scratch_dir("coresched") / "run";
  auto r = run_smtlab({"run", test_recipe("coresched.yaml"), "-o", dir.string()}, 2400s);
  INFO(run_failure_summary(dir, r.err));
  CHECK(r.status == 4);  // the stock cell fails, by design
  auto manifest = read_json(dir / "manifest.json");
  const auto* csc = cell_of(manifest, "csc");
  const auto* stock = cell_of(manifest, "stock");
  REQUIRE(csc);
  REQUIRE(stock);
  REQUIRE((*csc)["status"] == "ok");
  auto ends = iteration_ends(dir / "cells" / (*csc)["id"].get<std::string>() / "events.jsonl");
  REQUIRE_FALSE(ends.empty());
  for (const auto& e : ends) {
    INFO(e.dump());
    const auto& d = e["detail"];
    CHECK(d["server_cookie"].get<unsigned long long>() != 0);
    CHECK(d["server_cookie"] == d["client_cookie"]);
  }
  CHECK((*stock)["status"] == "failed");
  CHECK((*stock)["error"].get<std::string>().find("built without CONFIG_SCHED_CORE") != std::string::npos);
}
