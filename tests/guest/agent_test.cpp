#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <thread>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "guest/results_port.hpp"
#include "protocol/job.hpp"
#include "protocol/record_stream.hpp"
#include "util/files.hpp"
#include "util/process.hpp"
#include "checkout.hpp"
#include "scratch.hpp"

using namespace smtlab;
using namespace smtlab::protocol;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kGuest = (smtlab::test::binary_dir() / "bin/smtlab-guest").string();

// The same directory for the same name within the process (scratch.hpp's root, removed when it
// passes): a test finds the job file of run_agent's last job there.
fs::path scratch(const std::string& name) {
  auto d = smtlab::test::scratch_root() / name;
  fs::create_directories(d);
  return d;
}

struct Run {
  int exit_code;
  std::vector<Record> records;
  std::vector<Problem> problems;
  std::string err;
  std::vector<const Record*> of(const std::string& type) const {
    std::vector<const Record*> out;
    for (auto& r : records)
      if (r.type == type) out.push_back(&r);
    return out;
  }
};

Run parse(int exit_code, const std::string& bytes, std::string err = {}) {
  RecordStream s;
  Run run{exit_code, {}, {}, std::move(err)};
  auto p = s.feed(bytes);
  auto f = s.finish();
  run.records = p.records;
  run.problems = p.problems;
  run.problems.insert(run.problems.end(), f.problems.begin(), f.problems.end());
  return run;
}

// Runs the agent natively (not PID 1): records on stdout. `path_first` is put in front of PATH.
Run run_agent(const json& job, const fs::path& path_first = {}, int timeout_s = 60) {
  auto dir = scratch("job");
  auto file = dir / "job.json";
  std::ofstream(file) << job.dump();
  ProcessOptions o;
  o.timeout = std::chrono::seconds(timeout_s);
  if (!path_first.empty()) o.env["PATH"] = path_first.string() + ":" + std::getenv("PATH");
  auto r = run_process({kGuest, "agent", "--job", file.string()}, o);
  return parse(r.exit_code, r.out, r.err);
}

// The text of a /proc file, or "" when the process is gone.
// The processes forked by the agent started with `job_file` (its chat server and client share
// its command line): those naming the file whose parent names it too.
std::vector<int> agent_children(const fs::path& job_file) {
  std::map<int, int> parent;  // pid -> ppid, for processes naming the file
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = smtlab::read_file_head(e.path() / "cmdline", 1 << 20);
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(kGuest + " agent --job " + job_file.string()) != 0) continue;
    std::istringstream status(smtlab::read_file_head(e.path() / "status", 1 << 20));
    for (std::string line; std::getline(status, line);)
      if (line.rfind("PPid:", 0) == 0) parent[std::stoi(name)] = std::stoi(line.substr(5));
  }
  std::vector<int> children;
  for (const auto& [pid, ppid] : parent)
    if (parent.count(ppid)) children.push_back(pid);
  return children;
}

// Whether the process is a TCP server: two or more TCP sockets, all on one local port (a client's
// connections each have a port of their own).
bool serves_tcp(int pid) {
  const fs::path proc = "/proc/" + std::to_string(pid);
  std::set<std::string> sockets;
  std::error_code ec;
  for (const auto& fd : fs::directory_iterator(proc / "fd", ec)) sockets.insert(fs::read_symlink(fd.path(), ec).string());
  std::set<std::string> local_ports;
  int found = 0;
  for (const char* table : {"net/tcp", "net/tcp6"}) {
    std::istringstream in(smtlab::read_file_head(proc / table, 1 << 20));
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::istringstream row(line);
      std::string field[10];
      for (auto& f : field) row >> f;
      if (!sockets.count("socket:[" + field[9] + "]")) continue;
      ++found;
      local_ports.insert(field[1].substr(field[1].find(':') + 1));
    }
  }
  return found >= 2 && local_ports.size() == 1;
}

void check_stream_shape(const Run& run, bool ok) {
  for (auto& p : run.problems) INFO(p.str());
  CHECK(run.problems.empty());
  REQUIRE(run.records.size() >= 3);
  CHECK(run.records.front().type == "hello");
  CHECK(run.records.front().seq == 0);
  CHECK(run.records.front().body["pid1"] == false);
  CHECK(run.records.front().body.contains("kernel"));
  CHECK(run.records[1].type == "topology");
  CHECK(run.records.back().type == "end");
  CHECK(run.records.back().body["status"] == (ok ? "ok" : "failed"));
  for (size_t i = 0; i < run.records.size(); ++i) CHECK(run.records[i].seq == i);
}

}  // namespace

TEST_CASE("agent runs an exec job natively and streams a valid record stream") {
  json job = {{"schema", 1},
              {"cell", "testcell"},
              {"kind", "exec"},
              {"argv", {"sh", "-c", "echo hello; echo warn >&2; echo bye"}},
              {"monitors", {{"vmstat_interval_s", 0}}}};
  Run run = run_agent(job);
  INFO(run.err);
  CHECK(run.exit_code == 0);
  check_stream_shape(run, true);
  CHECK(run.records.front().body["cell"] == "testcell");
  std::vector<std::string> out;
  for (auto* r : run.of("output")) out.push_back(r->body["stream"].get<std::string>() + ":" + r->body["line"].get<std::string>());
  CHECK(out.size() == 3);
  CHECK(std::find(out.begin(), out.end(), "stdout:hello") != out.end());
  CHECK(std::find(out.begin(), out.end(), "stderr:warn") != out.end());
  CHECK(std::find(out.begin(), out.end(), "stdout:bye") != out.end());
  bool busy = false;
  for (auto* r : run.of("monitor")) busy = busy || r->body["monitor"] == "cpu_busy";
  CHECK(busy);
}

TEST_CASE("a 2-iteration command job runs argv twice, timed, with samples named by the benchmark") {
  auto dir = scratch("command");
  auto count = dir / "count";
  json job = {{"schema", 1},
              {"cell", "cmdcell"},
              {"kind", "exec"},
              {"iterations", 2},
              {"params", {{"benchmark", "build"}}},
              {"argv", {"sh", "-c", "echo x >> '" + count.string() + "'; sleep 0.2"}},
              {"monitors", {{"vmstat_interval_s", 0}}}};
  Run run = run_agent(job);
  INFO(run.err);
  CHECK(run.exit_code == 0);
  check_stream_shape(run, true);
  CHECK(smtlab::read_file(count) == "x\nx\n");
  std::vector<std::string> events;
  for (auto* r : run.of("event")) {
    const auto& d = r->body["detail"];
    events.push_back(r->body["name"].get<std::string>() + ":" + d["benchmark"].get<std::string>() + ":" +
                     d["iteration"].dump());
  }
  CHECK(events == std::vector<std::string>{"iteration-start:build:1", "iteration-end:build:1",
                                           "iteration-start:build:2", "iteration-end:build:2"});
  std::map<std::string, int> metrics;
  for (auto* r : run.of("sample")) {
    const auto& b = r->body;
    CHECK(b["benchmark"] == "build");
    CHECK(b["unit"] == "s");
    CHECK(b["better"] == "lower");
    CHECK(b["warmup"] == false);
    metrics[b["metric"].get<std::string>() + "@" + b["iteration"].dump()]++;
    if (b["metric"] == "elapsed-s") CHECK(b["value"].get<double>() >= 0.2);
  }
  CHECK(metrics == std::map<std::string, int>{{"elapsed-s@1", 1}, {"elapsed-s@2", 1}, {"user-s@1", 1},
                                              {"user-s@2", 1}, {"sys-s@1", 1}, {"sys-s@2", 1}});
}

TEST_CASE("a command job stops at the first failing iteration: error record, end(failed), no sample of it") {
  auto dir = scratch("command-fail");
  auto count = dir / "count";
  json job = {{"schema", 1},
              {"kind", "exec"},
              {"iterations", 3},
              {"params", {{"benchmark", "flaky"}}},
              {"argv", {"sh", "-c", "echo x >> '" + count.string() + "'; test $(wc -l < '" + count.string() + "') -lt 2"}},
              {"monitors", {{"vmstat_interval_s", 0}}}};
  Run run = run_agent(job);
  CHECK(run.exit_code == 1);
  check_stream_shape(run, false);
  CHECK(smtlab::read_file(count) == "x\nx\n");
  REQUIRE(run.of("error").size() == 1);
  CHECK_THAT(run.of("error")[0]->body["message"].get<std::string>(),
             Catch::Contains("exited with status 1") && Catch::Contains("iteration 2 of 3"));
  std::set<int> sampled;
  for (auto* r : run.of("sample")) sampled.insert(r->body["iteration"].get<int>());
  CHECK(sampled == std::set<int>{1});
}

TEST_CASE("agent runs a small chat job with warm-up, samples and vmstat monitors") {
  ChatParams p;
  p.rooms = 2;
  p.users = 3;
  p.count = 30;
  p.port = 0;
  p.discard = 1;
  json job = {{"schema", 1},        {"kind", "chat"},
              {"iterations", 2},    {"params", to_json(p)},
              {"monitors", {{"vmstat_interval_s", 0.05}, {"schedstat", true}, {"cpu_busy", true}}}};
  Run run = run_agent(job);
  INFO(run.err);
  CHECK(run.exit_code == 0);
  check_stream_shape(run, true);
  std::map<int, std::map<std::string, double>> by_iteration;
  for (auto* r : run.of("sample")) {
    CHECK(r->body["benchmark"] == "chat");
    by_iteration[r->body["iteration"].get<int>()][r->body["metric"].get<std::string>()] = r->body["value"].get<double>();
    CHECK(r->body["warmup"] == (r->body["iteration"] == 0));
  }
  REQUIRE(by_iteration.size() == 3);  // warm-up (0), 1, 2
  for (auto& [it, m] : by_iteration) {
    INFO("iteration " << it);
    CHECK(m.at("msgs/s") > 0);
    CHECK(m.at("elapsed-s") > 0);
    CHECK(m.count("latency-p50-us"));
    CHECK(m.count("latency-p99-us"));
    CHECK(m.count("cs/msg"));
  }
  int ends = 0;
  for (auto* r : run.of("event"))
    if (r->body["name"] == "iteration-end") {
      ++ends;
      CHECK(r->body["detail"]["received"] == r->body["detail"]["sent"].get<int>() * 2);
      CHECK(r->body["detail"]["connection_threads"] == 4 * 2 * 3);
    }
  CHECK(ends == 3);
}

TEST_CASE("a chat whose server freezes ends the agent's job with an error record that says it stalled") {
  ChatParams p;
  p.rooms = 1;
  p.users = 3;
  p.count = 10000000;  // far longer than the test
  p.port = 0;
  p.discard = 0;
  p.stall_s = 2;
  json job = {{"schema", 1}, {"kind", "chat"}, {"iterations", 1}, {"params", to_json(p)},
              {"monitors", {{"vmstat_interval_s", 0}}}};
  Run run{};
  std::thread agent([&] { run = run_agent(job, {}, 120); });
  // The agent's chat server: the child whose connections share one local port. Frozen once found.
  int server = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (server == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (int child : agent_children(scratch("job") / "job.json"))
      if (serves_tcp(child)) server = child;
  }
  if (server > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // well into the chatting
    kill(server, SIGSTOP);
  }
  agent.join();
  INFO(run.err);
  REQUIRE(server > 0);
  CHECK(run.exit_code != 0);
  check_stream_shape(run, false);
  REQUIRE(run.of("error").size() == 1);
  const json& error = run.of("error")[0]->body;
  CHECK_THAT(error["message"].get<std::string>(), Catch::Contains("the run stalled while users were chatting"));
  CHECK(error["stalled"] == true);
  CHECK(error["fatal"] == true);
  CHECK(kill(server, 0) != 0);  // the frozen server was killed and reaped
}

TEST_CASE("agent runs a tiny kernbench job") {
  json job = {{"schema", 1},
              {"kind", "kernbench"},
              {"iterations", 1},
              {"params", {{"jobs", {2}}, {"warmup", false}, {"files", 1}}},
              {"monitors", {{"vmstat_interval_s", 0.2}}}};
  Run run = run_agent(job);
  INFO(run.err);
  CHECK(run.exit_code == 0);
  check_stream_shape(run, true);
  std::map<std::string, double> m;
  for (auto* r : run.of("sample")) m[r->body["metric"].get<std::string>()] = r->body["value"].get<double>();
  CHECK(m.at("elsp-2") > 0);
  CHECK(m.at("user-2") > 0);
  CHECK(m.at("syst-2") > 0);
  CHECK(m.count("vcsw-2"));
  CHECK(m.count("icsw-2"));
}

// A stand-in for a tool the guest image carries: a shell script that logs its arguments.
fs::path fake_tool(const std::string& name, const std::string& body) {
  auto dir = scratch("bin");
  auto p = dir / name;
  std::ofstream(p) << "#!/bin/sh\necho \"$@\" >> " << (dir / (name + ".args")).string() << "\n" << body << "\n";
  fs::permissions(p, fs::perms::owner_all);
  return dir;
}

TEST_CASE("agent runs hackbench per group count and parses its Time line") {
  auto bin = fake_tool("hackbench", "echo 'Running in process mode'; echo 'Time: 0.250'");
  Run run = run_agent({{"schema", 1},
                       {"kind", "hackbench"},
                       {"iterations", 2},
                       {"params", {{"groups", {1, 4}}, {"loops", 50}, {"threads", true}}},
                       {"monitors", {{"vmstat_interval_s", 0}}}},
                      bin);
  check_stream_shape(run, true);
  std::vector<std::string> metrics;
  for (auto* r : run.of("sample")) {
    metrics.push_back(r->body["metric"].get<std::string>() + "/" + std::to_string(r->body["iteration"].get<int>()));
    CHECK(r->body["value"] == 0.25);
  }
  CHECK(metrics == std::vector<std::string>{"time-1/1", "time-1/2", "time-4/1", "time-4/2"});
  auto args = read_file(bin / "hackbench.args");
  CHECK_THAT(args, Catch::Contains("-g 4 -l 50 -f 20 -T"));
}

TEST_CASE("a noise job starts stress-ng and keeps running (no end record)") {
  auto bin = fake_tool("stress-ng", "exec sleep 3");
  Run run = run_agent({{"schema", 1},
                       {"role", "noise"},
                       {"kind", "noise"},
                       {"noise", {{"workers", 3}, {"load", 40}}},
                       {"monitors", {{"vmstat_interval_s", 0.2}}}},
                      bin, 2);
  bool started = false;
  for (auto* r : run.of("event")) started = started || r->body["name"] == "noise-started";
  CHECK(started);
  CHECK(run.of("end").empty());
  CHECK(run.of("monitor").size() >= 3);  // schedstat start + vmstat rows while it runs
  CHECK_THAT(read_file(bin / "stress-ng.args"), Catch::Contains("--cpu 3 --cpu-load 40"));
}

TEST_CASE("a noise job whose stress-ng exits and cannot be started again ends with an error record and end(failed)") {
  // The noise VM's cell must not go on as if measured under noise: the host sees this end.
  auto bin = fake_tool("stress-ng", "rm -f \"$0\"; exit 0");
  Run run = run_agent({{"schema", 1}, {"role", "noise"}, {"kind", "noise"}, {"noise", {{"workers", 1}, {"load", 100}}}},
                      bin, 30);
  CHECK(run.exit_code == 1);
  check_stream_shape(run, false);
  REQUIRE(run.of("error").size() == 1);
  CHECK_THAT(run.of("error")[0]->body["message"].get<std::string>(),
             Catch::Contains("the noise stopped") && Catch::Contains("could not be started again"));
}

TEST_CASE("agent failures end the stream with error and end(failed)") {
  SECTION("a command that fails") {
    Run run = run_agent({{"schema", 1}, {"kind", "exec"}, {"argv", {"sh", "-c", "exit 3"}}});
    CHECK(run.exit_code == 3);
    check_stream_shape(run, false);
    CHECK(run.records.back().body["exit_code"] == 3);
    CHECK(run.of("error").size() == 1);
  }
  SECTION("a program that does not exist") {
    Run run = run_agent({{"schema", 1}, {"kind", "exec"}, {"argv", {"/no/such/program"}}});
    CHECK(run.exit_code != 0);
    check_stream_shape(run, false);
    REQUIRE(run.of("error").size() == 1);
    CHECK_THAT(run.of("error")[0]->body["message"].get<std::string>(), Catch::Contains("/no/such/program"));
  }
  SECTION("a missing sched tunable or sysctl is a fatal, named error") {
    Run run = run_agent({{"schema", 1},
                         {"kind", "exec"},
                         {"argv", {"true"}},
                         {"sysctls", {{"kernel.smtlab_no_such_knob", "1"}}}});
    check_stream_shape(run, false);
    REQUIRE(run.of("error").size() == 1);
    CHECK_THAT(run.of("error")[0]->body["message"].get<std::string>(),
               Catch::Contains("kernel.smtlab_no_such_knob") && Catch::Contains("does not exist on kernel"));
    CHECK(run.of("output").empty());  // the job did not run
  }
  SECTION("a job file that is not a job") {
    auto dir = scratch("bad");
    std::ofstream(dir / "job.json") << "{\"kind\": 42";
    auto r = run_process({kGuest, "agent", "--job", (dir / "job.json").string()});
    Run run = parse(r.exit_code, r.out);
    CHECK(run.exit_code == 2);
    CHECK(run.problems.empty());
    REQUIRE(run.records.size() == 3);  // hello, error, end
    CHECK(run.records[1].type == "error");
    CHECK(run.records[2].body["status"] == "failed");
  }
}

TEST_CASE("as PID 1 (in PID and network namespaces) the agent brings up lo, runs chat and powers off") {
  if (geteuid() != 0 || !find_program("unshare")) {
    WARN("needs root and unshare: skipped");
    return;
  }
  // Job and records live outside /tmp: the agent mounts its own tmpfs there (and a checkout, so
  // its build directory, may itself be under /tmp).
  fs::path base = smtlab::test::binary_dir();
  if (base.string().rfind("/tmp/", 0) == 0) base = "/var/tmp";
  auto dir = base / ("smtlab-pid1-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "job.json") << json({{"schema", 1},
                                            {"kind", "chat"},
                                            {"params", {{"rooms", 1}, {"users", 2}, {"count", 5}, {"discard", 0}}},
                                            {"monitors", {{"vmstat_interval_s", 0}}}})
                                         .dump();
  auto records = dir / "records.jsonl";
  ProcessOptions o;
  o.timeout = std::chrono::seconds(30);
  // A new network namespace too: its loopback starts down, as in a freshly booted guest.
  auto r = run_process({"unshare", "--pid", "--fork", "--mount", "--mount-proc", "--net", kGuest, "agent", "--job",
                        (dir / "job.json").string(), "--results-port", records.string()},
                       o);
  INFO(r.err);
  CHECK_FALSE(r.timed_out);
  Run run = parse(0, read_file(records));
  fs::remove_all(dir);
  for (auto& p : run.problems) INFO(p.str());
  CHECK(run.problems.empty());
  REQUIRE(run.records.size() >= 3);
  CHECK(run.records.front().body["pid1"] == true);
  CHECK(run.records.back().type == "end");
  CHECK(run.records.back().body["status"] == "ok");
  CHECK(run.of("sample").size() == 6);  // the chat ran over the loopback the agent brought up
  CHECK(run.of("error").empty());
}

TEST_CASE("lockstep: the agent waits at each barrier for go on the control port, records go to the named port") {
  auto sys = scratch("lsys"), dev = scratch("ldev");
  fs::create_directories(sys / "vport1p1");
  fs::create_directories(sys / "vport1p2");
  std::ofstream(sys / "vport1p1" / "name") << "org.smtlab.results.0\n";
  std::ofstream(sys / "vport1p2" / "name") << "org.smtlab.control.0\n";
  std::ofstream(dev / "vport1p1") << "";  // the results "device": a plain file here
  REQUIRE(mkfifo((dev / "vport1p2").c_str(), 0600) == 0);
  auto job = scratch("ljob") / "job.json";
  std::ofstream(job) << json({{"schema", 1}, {"kind", "exec"}, {"argv", {"echo", "in step"}}, {"lockstep", true},
                              {"monitors", {{"vmstat_interval_s", 0}}}})
                            .dump();
  // The host side: a stale line first, then the go for the only barrier.
  std::thread host([&] {
    std::ofstream control(dev / "vport1p2");
    control << "go something-else\ngo exec-1\n" << std::flush;
  });
  ProcessOptions o;
  o.timeout = std::chrono::seconds(20);
  auto r = run_process({kGuest, "agent", "--job", job.string(), "--ports-sys", sys.string(), "--ports-dev",
                        dev.string()},
                       o);
  host.join();
  INFO(r.err);
  CHECK(r.ok());
  CHECK(r.out.empty());  // records went to the port, not stdout
  Run run = parse(r.exit_code, read_file(dev / "vport1p1"));
  check_stream_shape(run, true);
  std::vector<std::string> barrier_states;
  for (auto* e : run.of("event"))
    if (e->body["name"] == "barrier")
      barrier_states.push_back(e->body["detail"]["barrier"].get<std::string>() + ":" +
                               e->body["detail"]["state"].get<std::string>());
  CHECK(barrier_states == std::vector<std::string>{"exec-1:waiting", "exec-1:go"});
  CHECK(run.of("error").empty());
}

TEST_CASE("virtio ports are found by name") {
  auto sys = scratch("sys"), dev = scratch("dev");
  fs::create_directories(sys / "vport0p1");
  fs::create_directories(sys / "vport0p2");
  std::ofstream(sys / "vport0p1" / "name") << "org.smtlab.control.0\n";
  std::ofstream(sys / "vport0p2" / "name") << "org.smtlab.results.0\n";
  std::ofstream(dev / "vport0p2") << "";
  CHECK(guest::find_virtio_port("org.smtlab.results.0", 0, sys, dev) == (dev / "vport0p2").string());
  CHECK_FALSE(guest::find_virtio_port("org.smtlab.control.0", 0, sys, dev).has_value());  // no device node
  CHECK_FALSE(guest::find_virtio_port("other", 0, sys, dev).has_value());
}

TEST_CASE("a job list runs its jobs in order in one agent, every record names its cell, a failed job fails only itself") {
  auto exec = [](const std::string& cell, const std::string& name, const std::string& script) {
    return json{{"schema", 1},
                {"cell", cell},
                {"kind", "exec"},
                {"params", {{"benchmark", name}}},
                {"argv", {"sh", "-c", script}},
                {"monitors", {{"vmstat_interval_s", 0}}}};
  };
  json list = {{"schema", 1},
               {"jobs", {exec("aaaaaaaaaaaa", "first", "echo one"), exec("bbbbbbbbbbbb", "second", "exit 3"),
                         exec("cccccccccccc", "third", "echo three")}}};
  auto dir = scratch("list");
  auto file = dir / "job.json";
  std::ofstream(file) << list.dump();
  ProcessOptions o;
  o.timeout = std::chrono::seconds(60);
  auto r = run_process({kGuest, "agent", "--job", file.string()}, o);
  INFO(r.err);
  CHECK(r.exit_code == 3);
  RecordStream s;
  s.set_expected_ends(3);
  auto p = s.feed(r.out);
  auto f = s.finish();
  for (const auto& pr : p.problems) INFO(pr.str());
  CHECK(p.problems.empty());
  CHECK(f.problems.empty());
  CHECK(s.ended());
  REQUIRE(p.records.size() > 3);
  const auto& hello = p.records.front();
  CHECK(hello.type == "hello");
  CHECK(hello.body["cells"] == json::array({"aaaaaaaaaaaa", "bbbbbbbbbbbb", "cccccccccccc"}));

  // After hello, every record carries its cell and job index, in list order.
  std::vector<std::string> ends, between, outputs, sample_cells;
  int last_job = 0;
  for (size_t i = 1; i < p.records.size(); ++i) {
    const auto& rec = p.records[i];
    INFO(rec.body.dump());
    REQUIRE(rec.body.contains("cell"));
    REQUIRE(rec.body.contains("job"));
    int job = rec.body["job"].get<int>();
    CHECK(job >= last_job);
    last_job = job;
    CHECK(rec.body["cell"] == hello.body["cells"][job]);
    std::string cell = rec.body["cell"].get<std::string>();
    if (rec.type == "end") ends.push_back(cell + ":" + rec.body["status"].get<std::string>());
    if (rec.type == "event" && rec.body["name"] == "between-jobs") {
      between.push_back(cell);
      // Natively (not PID 1) the agent neither syncs nor waits for the machine and says so; in a
      // guest it syncs and waits for quiet vCPUs (cli_vm_test's share_boot test checks that).
      CHECK(rec.body["detail"]["sync"] == false);
      CHECK(rec.body["detail"]["caches"] == "kept");
      CHECK(rec.body["detail"]["settle"].get<std::string>().rfind("skipped (not PID 1", 0) == 0);
    }
    if (rec.type == "output") outputs.push_back(cell + ":" + rec.body["line"].get<std::string>());
    if (rec.type == "sample") sample_cells.push_back(cell + ":" + rec.body["benchmark"].get<std::string>());
  }
  CHECK(ends == std::vector<std::string>{"aaaaaaaaaaaa:ok", "bbbbbbbbbbbb:failed", "cccccccccccc:ok"});
  CHECK(between == std::vector<std::string>{"bbbbbbbbbbbb", "cccccccccccc"});
  CHECK(outputs == std::vector<std::string>{"aaaaaaaaaaaa:one", "cccccccccccc:three"});
  std::set<std::string> samples(sample_cells.begin(), sample_cells.end());
  CHECK(samples == std::set<std::string>{"aaaaaaaaaaaa:first", "cccccccccccc:third"});
}
