#include <catch2/catch.hpp>

#include <filesystem>
#include <map>

#include "bench/hackbench.hpp"
#include "bench/kernbench.hpp"
#include "util/process.hpp"
#include "scratch.hpp"

using namespace smtlab::bench;

namespace {
struct Collect : Observer {
  std::vector<Sample> samples;
  std::vector<std::string> events, barriers;
  void sample(const Sample& s) override { samples.push_back(s); }
  void event(const std::string& name, const nlohmann::json&) override { events.push_back(name); }
  void before_iteration(const std::string& b) override { barriers.push_back(b); }
};
}  // namespace

TEST_CASE("kernbench on a tiny synthetic tree measures every job count and iteration") {
  KernbenchOptions o;
  o.jobs = {1, 2};
  o.iterations = 1;
  o.warmup = false;
  o.files = 2;
  o.keep_workdir = true;
  o.workdir = smtlab::test::scratch_path("kernbench");
  Collect c;
  run_kernbench(o, c);
  std::map<std::string, double> v;
  for (auto& s : c.samples) {
    CHECK_FALSE(s.warmup);
    CHECK(s.iteration == 1);
    v[s.metric] = s.value;
  }
  for (int n : {1, 2}) {
    auto j = std::to_string(n);
    INFO("jobs " << n);
    CHECK(v.at("elsp-" + j) > 0);
    CHECK(v.at("user-" + j) > 0);  // gcc ran as a descendant of make: wait4 saw it
    CHECK(v.at("syst-" + j) > 0);
    CHECK(v.count("vcsw-" + j));
    CHECK(v.count("icsw-" + j));
    CHECK(v.at("elsp-" + j) < 120);
  }
  CHECK(c.samples.size() == 10);
  CHECK(c.barriers == std::vector<std::string>{"kernbench-j1-1", "kernbench-j2-1"});
  // The build really produced the program.
  CHECK(std::filesystem::exists(o.workdir + "/tree/prog"));
}

TEST_CASE("the synthetic tree is a few hundred lines per unit and builds with its Makefile") {
  auto dir = smtlab::test::scratch_path("synthetic");
  write_synthetic_tree(dir, 3);
  CHECK(std::filesystem::exists(dir / "Makefile"));
  CHECK(std::filesystem::file_size(dir / "unit2.c") > 5000);
  auto r = smtlab::run_process({"make", "-s", "-C", dir.string(), "-n", "all"});
  CHECK(r.ok());
  CHECK(r.out.find("unit2.c") != std::string::npos);
}

TEST_CASE("hackbench: argv and Time parsing") {
  HackbenchOptions o;
  o.loops = 50;
  o.threads = true;
  o.pipes = true;
  CHECK(hackbench_argv(o, 4) ==
        std::vector<std::string>{"hackbench", "-g", "4", "-l", "50", "-f", "20", "-T", "-p"});
  CHECK(parse_hackbench_time("Running in threaded mode with 4 groups using 40 file descriptors each\n"
                             "Each sender will pass 50 messages of 100 bytes\nTime: 0.123\n") == Approx(0.123));
  CHECK_FALSE(parse_hackbench_time("Time: \n").has_value());
  CHECK_FALSE(parse_hackbench_time("").has_value());
}

TEST_CASE("hackbench runs when rt-tests is installed") {
  if (!smtlab::find_program("hackbench")) {
    WARN("hackbench (rt-tests) not installed here: skipping the run");
    return;
  }
  HackbenchOptions o;
  o.groups = {1};
  o.loops = 10;
  o.iterations = 1;
  Collect c;
  run_hackbench(o, c);
  REQUIRE(c.samples.size() == 1);
  CHECK(c.samples[0].metric == "time-1");
  CHECK(c.samples[0].value >= 0);
}
