#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "bench/coresched.hpp"
#include "bench/settings.hpp"
#include "util/error.hpp"
#include "scratch.hpp"

using namespace smtlab::bench;
namespace fs = std::filesystem;

TEST_CASE("a sysctl is written, read back and reported, and a missing one names the kernel") {
  auto root = smtlab::test::scratch_dir("sys");
  fs::create_directories(root / "kernel");
  std::ofstream(root / "kernel" / "sched_autogroup_enabled") << "1\n";
  auto r = apply_sysctl("kernel.sched_autogroup_enabled", "0", root);
  CHECK(r.kind == "sysctl");
  CHECK(r.requested == "0");
  CHECK(r.value == "0");
  try {
    apply_sysctl("kernel.no_such_knob", "1", root);
    FAIL("no error");
  } catch (const smtlab::Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("kernel.no_such_knob") && Catch::Contains(kernel_release()));
  }
  CHECK_THROWS_AS(apply_sysctl("../../etc/passwd", "x", root), smtlab::Error);
}

TEST_CASE("a missing sched tunable lists the ones the kernel has") {
  auto root = smtlab::test::scratch_dir("debugfs");
  fs::create_directories(root / "sched");
  std::ofstream(root / "sched" / "min_granularity_ns") << "750000\n";
  auto r = apply_sched_tunable("min_granularity_ns", "3000000", root);
  CHECK(r.kind == "sched");
  CHECK(r.value == "3000000");
  try {
    apply_sched_tunable("base_slice_ns", "3000000", root);
    FAIL("no error");
  } catch (const smtlab::Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("base_slice_ns") && Catch::Contains("does not exist on kernel"));
    CHECK_THAT(e.hint(), Catch::Contains("min_granularity_ns"));
  }
}

TEST_CASE("core scheduling: a cookie where the kernel has it, else an error naming the kernel") {
  unsigned long long cookie = 0;
  std::string error;
  try {
    cookie = coresched_probe();
  } catch (const smtlab::Error& e) {
    error = e.what();
  }
  if (error.empty())
    CHECK(cookie != 0);
  else
    CHECK_THAT(error, Catch::Contains("core scheduling") && Catch::Contains(kernel_release()));
}
