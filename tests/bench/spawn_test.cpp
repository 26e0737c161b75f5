#include <catch2/catch.hpp>

#include "bench/spawn.hpp"
#include "util/error.hpp"

using namespace smtlab::bench;

TEST_CASE("spawn measures a child and its descendants with wait4") {
  std::vector<std::string> lines;
  SpawnOptions o;
  o.on_line = [&](int stream, std::string_view l) { lines.push_back(std::to_string(stream) + ":" + std::string(l)); };
  // A CPU-bound grandchild: its time must show up in user/sys.
  auto r = spawn({"sh", "-c", "echo out; echo err >&2; sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'"}, o);
  CHECK(r.ok());
  CHECK(r.elapsed_s > 0);
  CHECK(r.user_s + r.sys_s > 0.01);
  CHECK(std::find(lines.begin(), lines.end(), "1:out") != lines.end());
  CHECK(std::find(lines.begin(), lines.end(), "2:err") != lines.end());
}

TEST_CASE("spawn reports exit codes, missing programs and timeouts") {
  CHECK(spawn({"sh", "-c", "exit 3"}).exit_code == 3);
  CHECK_THROWS_AS(spawn({"/nonexistent/program"}), smtlab::Error);
  SpawnOptions o;
  o.timeout_s = 0.3;
  auto r = spawn({"sleep", "10"}, o);
  CHECK(r.timed_out);
  CHECK(r.elapsed_s < 5);
  try {
    spawn_checked({"sh", "-c", "echo boom; exit 2"});
    FAIL("no error");
  } catch (const smtlab::Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("status 2") && Catch::Contains("boom"));
  }
}
