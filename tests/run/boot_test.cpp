// What `smtlab boot` prints of a guest's records: guest data, never an exception.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "run/boot.hpp"

using namespace smtlab::run;
using nlohmann::json;

TEST_CASE("smtlab boot describes a topology record whatever its siblings hold", "[boot]") {
  json cpu0 = {{"cpu", 0}, {"core_id", 0}, {"package_id", 0}, {"die_id", 0}, {"siblings", "0-1"}};
  json cpu1 = cpu0;
  cpu1["cpu"] = 1;
  json rec = {{"seq", 1}, {"type", "topology"}, {"online", "0-1"}, {"smt_active", 1}, {"cpus", {cpu0, cpu1}}};
  CHECK(describe_topology(rec) == "guest topology: 2 CPUs online, sibling groups [ 0-1 ], SMT active");
  // The agent sends null siblings (and ids) when thread_siblings_list cannot be read: this used
  // to throw json's type_error.302 out of the boot (and the boot's logs went with it).
  rec["cpus"][1]["siblings"] = nullptr;
  rec["cpus"][1]["core_id"] = nullptr;
  rec["smt_active"] = nullptr;
  std::string line;
  REQUIRE_NOTHROW(line = describe_topology(rec));
  CHECK(line == "guest topology: 2 CPUs online, sibling groups [ 0-1  ? ], SMT unknown");
  CHECK_NOTHROW(describe_topology(json{{"cpus", {json::array(), 7, nullptr}}}));
  CHECK(describe_topology(json::object()) == "guest topology: 0 CPUs online, sibling groups [], SMT unknown");
  // Thousands of distinct sibling lists: the first 16 are named.
  json many = json::array();
  for (int i = 0; i < 4000; ++i) many.push_back({{"cpu", i}, {"siblings", std::to_string(i)}});
  line = describe_topology(json{{"cpus", many}, {"smt_active", 0}});
  CHECK(line.size() < 200);
  CHECK_THAT(line, Catch::StartsWith("guest topology: 4000 CPUs online, sibling groups [ 0  1  2 "));
  CHECK_THAT(line, Catch::EndsWith(" 15  ... ], SMT inactive"));
}
