#include <catch2/catch.hpp>

#include "protocol/job.hpp"
#include "util/error.hpp"

using namespace smtlab::protocol;

TEST_CASE("a job survives a JSON round trip") {
  Job job;
  job.cell = "3f2a9c01d4e5";
  job.vm = 1;
  job.vms = 2;
  job.kind = "kernbench";
  job.iterations = 3;
  KernbenchParams kp;
  kp.jobs = {2, 4};
  kp.files = 8;
  kp.warmup = false;
  job.params = to_json(kp);
  job.sysctls = {{"kernel.sched_autogroup_enabled", "0"}};
  job.sched_tunables = {{"base_slice_ns", "3000000"}};
  job.coresched = true;
  job.monitors.vmstat_interval_s = 0.5;
  job.monitors.schedstat = false;
  job.lockstep = true;
  job.noise = {3, 50};

  Job back = parse_job(to_json(job).dump());
  CHECK(to_json(back) == to_json(job));
  CHECK(back.cell == "3f2a9c01d4e5");
  CHECK(back.vm == 1);
  CHECK(back.coresched);
  CHECK(back.monitors.vmstat_interval_s == 0.5);
  CHECK(back.sysctls.at("kernel.sched_autogroup_enabled") == "0");
  auto p = kernbench_params(back);
  CHECK(p.jobs == std::vector<int>{2, 4});
  CHECK(p.files == 8);
  CHECK_FALSE(p.warmup);
  CHECK(p.tree == "synthetic");
}

TEST_CASE("job parsing ignores unknown keys and fills defaults") {
  Job j = parse_job(R"({"schema":1,"kind":"chat","future":{"x":1},"params":{"rooms":3}})");
  auto c = chat_params(j);
  CHECK(c.rooms == 3);
  CHECK(c.users == 20);
  CHECK(c.yield == "both");
  CHECK(j.iterations == 1);
}

TEST_CASE("job parsing names the offending key") {
  auto msg = [](const std::string& text) {
    try {
      parse_job(text);
    } catch (const smtlab::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(msg(R"({"kind":"chat","params":{"rooms":"two"}})"), Catch::Contains("params.rooms"));
  CHECK_THAT(msg(R"({"kind":"chat","params":{"yield":"sometimes"}})"), Catch::Contains("params.yield"));
  CHECK_THAT(msg(R"({"kind":"exec"})"), Catch::Contains("argv"));
  CHECK_THAT(msg(R"({"kind":"kernbench","schema":2})"), Catch::Contains("schema"));
  CHECK_THAT(msg(R"({"kind":"dance"})"), Catch::Contains("kind"));
  CHECK_THAT(msg("{not json"), Catch::Contains("not valid JSON"));
  CHECK_THAT(msg(R"({"kind":"kernbench","params":{"jobs":[0]}})"), Catch::Contains("params.jobs"));
}

TEST_CASE("an exec job carries its argv, iterations and the benchmark that names its samples") {
  Job job;
  job.kind = "exec";
  job.iterations = 2;
  job.argv = {"sh", "-c", "echo 'a b' \"$(x)\" <&>"};
  ExecParams e;
  e.benchmark = "build";
  job.params = to_json(e);
  Job back = parse_job(to_json(job).dump());
  CHECK(back.argv == job.argv);
  CHECK(back.iterations == 2);
  CHECK(exec_params(back).benchmark == "build");
  // `smtlab boot -- CMD` writes no params: the samples are named "exec".
  CHECK(exec_params(parse_job(R"({"schema":1,"kind":"exec","argv":["true"]})")).benchmark == "exec");
  CHECK_THROWS_WITH(parse_job(R"({"schema":1,"kind":"exec","argv":["true"],"params":{"benchmark":7}})"),
                    Catch::Contains("params.benchmark"));
  CHECK_THROWS_WITH(parse_job(R"({"schema":1,"kind":"exec","argv":["true"],"params":{"benchmark":""}})"),
                    Catch::Contains("params.benchmark"));
}
