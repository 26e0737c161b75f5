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
  CHECK(c.stall_s == 60);
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
  CHECK_THAT(msg(R"({"kind":"chat","params":{"stall_s":0}})"), Catch::Contains("params.stall_s"));
  // The chat benchmark's own limits (lab/util/limits.hpp), not a job the guest would fail later.
  CHECK_THAT(msg(R"({"kind":"chat","params":{"rooms":1000}})"), Catch::Contains("params.rooms"));
  CHECK_THAT(msg(R"({"kind":"chat","params":{"users":1000}})"), Catch::Contains("params.users"));
  CHECK_THAT(msg(R"({"kind":"chat","params":{"users":1}})"), Catch::Contains("params.users"));
  CHECK(msg(R"({"kind":"chat","params":{"rooms":999,"users":999}})") == "no error");
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

namespace {

Job bench_job(const std::string& cell, const std::string& kind) {
  Job j;
  j.cell = cell;
  j.kind = kind;
  j.iterations = 2;
  if (kind == "exec") {
    j.argv = {"true"};
    j.params = to_json(ExecParams{"build"});
  }
  return j;
}

std::string error_of(const std::string& text) {
  try {
    parse_job_list(text);
  } catch (const smtlab::Error& e) {
    return e.what();
  }
  return "(parsed)";
}

}  // namespace

TEST_CASE("a job list survives a JSON round trip, in order, and a single job stays in the single format") {
  JobList list;
  list.is_list = true;
  list.jobs = {bench_job("aaaaaaaaaaaa", "chat"), bench_job("bbbbbbbbbbbb", "exec")};
  auto text = to_json(list).dump();
  JobList back = parse_job_list(text);
  REQUIRE(back.is_list);
  REQUIRE(back.jobs.size() == 2);
  CHECK(back.jobs[0].cell == "aaaaaaaaaaaa");
  CHECK(back.jobs[0].kind == "chat");
  CHECK(back.jobs[1].cell == "bbbbbbbbbbbb");
  CHECK(back.jobs[1].argv == std::vector<std::string>{"true"});
  CHECK(to_json(back) == to_json(list));

  // The single-job format (what every run without share_boot writes) reads as a list of one.
  JobList single;
  single.jobs = {bench_job("cccccccccccc", "hackbench")};
  CHECK(to_json(single) == to_json(single.jobs[0]));
  JobList one = parse_job_list(to_json(single).dump());
  CHECK_FALSE(one.is_list);
  REQUIRE(one.jobs.size() == 1);
  CHECK(one.jobs[0].cell == "cccccccccccc");
}

TEST_CASE("a job list is checked job by job and names the offending entry") {
  auto list = [](nlohmann::json jobs) { return nlohmann::json{{"schema", 1}, {"jobs", jobs}}.dump(); };
  auto chat = to_json(bench_job("aaaaaaaaaaaa", "chat"));
  auto other = to_json(bench_job("bbbbbbbbbbbb", "chat"));
  CHECK(error_of(list(nlohmann::json::array())) == "job.jobs: expected a list of 1 to 256 jobs, got 0 entries");
  CHECK(error_of(list(nlohmann::json::object())) == "job.jobs: expected a list of 1 to 256 jobs, got object");
  auto bad_kind = other;
  bad_kind["kind"] = "dance";
  CHECK(error_of(list({chat, bad_kind})) ==
        "job.jobs[1].kind: \"dance\" is not one of: chat, exec, hackbench, kernbench, noise");
  CHECK(error_of(list({chat, 5})) == "job.jobs[1]: a job must be a JSON object, got number");
  CHECK(error_of(list({chat, chat})) == "job.jobs[1].cell: cell \"aaaaaaaaaaaa\" is named twice");
  auto noise = other;
  noise["role"] = "noise";
  noise["kind"] = "noise";
  CHECK(error_of(list({chat, noise})).rfind("job.jobs[1].role: a job list holds benchmark jobs only", 0) == 0);
  auto no_cell = other;
  no_cell["cell"] = "";
  CHECK(error_of(list({no_cell})) == "job.jobs[0].cell: every job of a list names its cell");
  auto vm1 = other;
  vm1["vm"] = 1;
  CHECK(error_of(list({chat, vm1})).rfind("job.jobs[1].vm: every job of a list is for the same VM", 0) == 0);
  CHECK(error_of(nlohmann::json{{"schema", 2}, {"jobs", {chat}}}.dump()).rfind("job.schema: this agent understands schema 1", 0) == 0);
  nlohmann::json many = nlohmann::json::array();
  for (int i = 0; i < 257; ++i) {
    auto j = chat;
    j["cell"] = "c" + std::to_string(i);
    many.push_back(j);
  }
  CHECK(error_of(list(many)) == "job.jobs: expected a list of 1 to 256 jobs, got 257 entries");
}
