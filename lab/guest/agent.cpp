#include "guest/agent.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

#include "bench/chat.hpp"
#include "bench/coresched.hpp"
#include "bench/hackbench.hpp"
#include "bench/kernbench.hpp"
#include "bench/monitors.hpp"
#include "bench/noise.hpp"
#include "bench/procfs.hpp"
#include "bench/settings.hpp"
#include "bench/settle.hpp"
#include "bench/spawn.hpp"
#include "bench/topology.hpp"
#include "guest/cmdline.hpp"
#include "guest/pid1.hpp"
#include "guest/results_port.hpp"
#include "smtlab/version.hpp"
#include "util/error.hpp"

namespace smtlab::guest {

using nlohmann::json;
using protocol::Job;
using protocol::RecordWriter;

namespace {

// State shared between the PID 1 supervisor and its worker (MAP_SHARED memory).
struct Shared {
  std::atomic<uint64_t> seq{0};
  std::atomic<int> ended{0};
};

std::string read_job_file(const std::string& path) {
  auto text = bench::read_proc(path, 1 << 20);
  if (!text) throw Error("cannot read " + path + ": " + std::strerror(errno));
  if (text->size() >= (1u << 20)) throw Error(path + " is larger than 1 MiB");
  return *text;
}

double uptime_s() {
  auto t = bench::read_proc("/proc/uptime", 256);
  return t ? std::atof(t->c_str()) : 0.0;
}

json sample_json(const bench::Sample& s) {
  return {{"benchmark", s.benchmark}, {"iteration", s.iteration}, {"warmup", s.warmup}, {"metric", s.metric},
          {"value", s.value},         {"unit", s.unit},           {"better", s.better}};
}

// Reads "go <name>" lines from the control port (lockstep runs).
class ControlPort {
 public:
  explicit ControlPort(const AgentOptions& o) : name_(o.control_port), sys_(o.ports_sys), dev_(o.ports_dev) {}
  ~ControlPort() {
    if (fd_ >= 0) close(fd_);
  }
  // Waits for "go <barrier>"; false when there is no control port.
  bool wait_go(const std::string& barrier) {
    if (fd_ < 0 && !tried_) {
      tried_ = true;
      if (auto dev = find_virtio_port(name_, 2.0, sys_, dev_)) fd_ = open(dev->c_str(), O_RDONLY | O_CLOEXEC);
    }
    if (fd_ < 0) return false;
    const std::string want = "go " + barrier;
    for (;;) {
      auto nl = buffer_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line == want) return true;
        continue;  // a stale or foreign line
      }
      char buf[512];
      ssize_t n = read(fd_, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return false;
      if (n == 0) {  // no host connected yet
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      if (buffer_.size() < 65536) buffer_.append(buf, static_cast<size_t>(n));
    }
  }

 private:
  std::string name_, sys_, dev_;
  int fd_ = -1;
  bool tried_ = false;
  std::string buffer_;
};

class RecordObserver : public bench::Observer {
 public:
  RecordObserver(RecordWriter& out, const Job& job, const AgentOptions& options, bench::VmstatSampler* sampler)
      : out_(out), job_(job), control_(options), sampler_(sampler) {}

  void sample(const bench::Sample& s) override { out_.write("sample", sample_json(s)); }
  void event(const std::string& name, const json& detail) override {
    out_.event(name, detail);
    progress(name + " " + detail.dump());
  }
  void before_iteration(const std::string& barrier) override {
    if (!measuring_) {
      measuring_ = true;
      if (sampler_) sampler_->set_origin(std::chrono::steady_clock::now());
    }
    if (!job_.lockstep) return;
    out_.event("barrier", {{"barrier", barrier}, {"state", "waiting"}});
    if (control_.wait_go(barrier)) {
      out_.event("barrier", {{"barrier", barrier}, {"state", "go"}});
    } else if (!warned_) {
      warned_ = true;
      out_.error("lockstep requested but the control port " + std::string(protocol::kControlPortName) +
                     " is missing or unreadable; running without barriers",
                 false);
    }
  }
  bool measuring() const { return measuring_; }

 private:
  RecordWriter& out_;
  const Job& job_;
  ControlPort control_;
  bench::VmstatSampler* sampler_;
  std::atomic<bool> measuring_{false};
  bool warned_ = false;
};

// Applies the variant's settings; every failure becomes an error record. Returns false when any
// failed (the job must not run: its results would be mislabeled).
bool apply_settings(const Job& job, RecordWriter& out) {
  bool ok = true;
  auto report = [&](const bench::SettingResult& r) {
    out.write("setting", {{"kind", r.kind}, {"key", r.key}, {"requested", r.requested}, {"value", r.value}});
    progress("setting " + r.kind + " " + r.key + " = " + r.value);
  };
  for (auto& [k, v] : job.sysctls) try {
      report(bench::apply_sysctl(k, v));
    } catch (const std::exception& e) {
      out.error(describe(e), true);
      ok = false;
    }
  for (auto& [k, v] : job.sched_tunables) try {
      report(bench::apply_sched_tunable(k, v));
    } catch (const std::exception& e) {
      out.error(describe(e), true);
      ok = false;
    }
  if (job.coresched) try {
      unsigned long long cookie = bench::coresched_probe();
      char hex[32];
      std::snprintf(hex, sizeof hex, "0x%llx", cookie);
      out.write("setting", {{"kind", "coresched"}, {"key", "cookie"}, {"requested", "per-benchmark"}, {"value", hex}});
    } catch (const std::exception& e) {
      out.error(describe(e), true);
      ok = false;
    }
  return ok;
}

bool has_fault(const std::vector<std::string>& faults, std::string_view fault) {
  return std::find(faults.begin(), faults.end(), fault) != faults.end();
}

void run_chat_job(const Job& job, RecordObserver& obs, const std::vector<std::string>& faults) {
  auto p = protocol::chat_params(job);
  bench::ChatOptions o;
  o.rooms = p.rooms;
  o.users = p.users;
  o.count = p.count;
  o.yield = bench::parse_yield_mode(p.yield);
  o.port = p.port;
  o.stall_s = p.stall_s;
  o.coresched = job.coresched;
  if (has_fault(faults, kFaultChatStopServer)) {
    obs.event("fault", {{"fault", kFaultChatStopServer}, {"benchmark", "chat"}});
    o.on_started = [](int server_pid, int) { kill(server_pid, SIGSTOP); };
  }
  const int total = p.discard + job.iterations;
  for (int run = 1; run <= total; ++run) {
    const bool warmup = run <= p.discard;
    const int iteration = warmup ? 0 : run - p.discard;
    if (!warmup) obs.before_iteration("chat-" + std::to_string(iteration));
    obs.event(warmup ? "warmup" : "iteration-start", {{"benchmark", "chat"}, {"iteration", iteration}});
    bench::ChatResult r = bench::run_chat(o);
    json detail = {{"benchmark", "chat"},      {"iteration", iteration},        {"warmup", warmup},
                   {"rooms", r.rooms},         {"users", r.users},              {"count", r.count},
                   {"yield", r.yield},         {"sent", r.sent},                {"received", r.received},
                   {"elapsed_s", r.elapsed_s}, {"msgs_per_s", r.msgs_per_s},    {"context_switches", r.context_switches},
                   {"connection_threads", r.connection_threads},
                   {"server_threads", r.server_threads}, {"client_threads", r.client_threads}};
    if (job.coresched) {
      detail["server_cookie"] = r.server_cookie;
      detail["client_cookie"] = r.client_cookie;
    }
    obs.event("iteration-end", detail);
    auto s = [&](const char* metric, double v, const char* unit, const char* better) {
      obs.sample({"chat", iteration, warmup, metric, v, unit, better});
    };
    s("msgs/s", r.msgs_per_s, "msgs/s", "higher");
    s("latency-p50-us", r.latency_p50_us, "us", "lower");
    s("latency-p90-us", r.latency_p90_us, "us", "lower");
    s("latency-p99-us", r.latency_p99_us, "us", "lower");
    s("cs/msg", r.cs_per_msg, "count", "lower");
    s("elapsed-s", r.elapsed_s, "s", "lower");
  }
}

// Runs argv once per iteration (1 for `smtlab boot -- CMD`), timed: its output streams as output
// records, each iteration gives elapsed/user/sys samples named by the benchmark. The first failing
// iteration stops the job with an error record.
int run_exec_job(const Job& job, RecordWriter& out, RecordObserver& obs) {
  const std::string name = protocol::exec_params(job).benchmark;
  bench::SpawnOptions so;
  so.coresched = job.coresched;
  so.on_line = [&](int stream, std::string_view line) {
    out.write("output", {{"stream", stream == 1 ? "stdout" : "stderr"}, {"line", std::string(line.substr(0, 8192))}});
  };
  const int iterations = std::max(1, job.iterations);
  for (int i = 1; i <= iterations; ++i) {
    obs.before_iteration(name + "-" + std::to_string(i));
    obs.event("iteration-start", {{"benchmark", name}, {"iteration", i}, {"argv", job.argv}});
    auto r = bench::spawn(job.argv, so);
    json detail = {{"benchmark", name},          {"iteration", i},        {"exit_code", r.exit_code},
                   {"signal", r.signal},         {"elapsed_s", r.elapsed_s}, {"user_s", r.user_s},
                   {"sys_s", r.sys_s}};
    if (job.coresched) detail["cookie"] = r.cookie;
    obs.event("iteration-end", detail);
    if (!r.ok()) {
      out.error(job.argv[0] + (r.signal ? " was killed by signal " + std::to_string(r.signal)
                                        : " exited with status " + std::to_string(r.exit_code)) +
                    (iterations > 1 ? " (iteration " + std::to_string(i) + " of " + std::to_string(iterations) + ")"
                                    : std::string()),
                true);
      return r.exit_code > 0 ? r.exit_code : 128 + r.signal;
    }
    obs.sample({name, i, false, "elapsed-s", r.elapsed_s, "s", "lower"});
    obs.sample({name, i, false, "user-s", r.user_s, "s", "lower"});
    obs.sample({name, i, false, "sys-s", r.sys_s, "s", "lower"});
  }
  return 0;
}

// A noise job runs until the guest is destroyed. It ends only when its noise is gone (stress-ng
// exited and could not be started again: an error) or the noise-ends fault stops it (returns 0):
// either way the host then fails the cell, which was no longer measured under its noise.
int run_noise_job(const Job& job, RecordObserver& obs, const std::vector<std::string>& faults) {
  bench::Noise noise(job.noise.workers, job.noise.load);
  noise.start();
  obs.event("noise-started", {{"workers", job.noise.workers}, {"load", job.noise.load}});
  const bool ends = has_fault(faults, kFaultNoiseEnds);
  if (ends) obs.event("fault", {{"fault", kFaultNoiseEnds}, {"after_s", kNoiseEndsAfterS}});
  const auto end_at = std::chrono::steady_clock::now() + std::chrono::seconds(kNoiseEndsAfterS);
  for (;;) {
    if (const auto why = noise.failure(); !why.empty()) throw Error("the noise stopped: " + why);
    if (ends && std::chrono::steady_clock::now() >= end_at) {
      noise.stop();
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

// Between two jobs of a list (PID 1): the previous job's processes (orphans reparented to us)
// get 5 s to exit, then are killed; all are reaped before the next job starts.
void reap_leftovers(RecordWriter& out) {
  auto reap_all = [] {
    int st;
    for (;;) {
      pid_t p = waitpid(-1, &st, WNOHANG);
      if (p > 0) continue;
      return p < 0 && errno == ECHILD;  // true: no child left
    }
  };
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!reap_all()) {
    if (std::chrono::steady_clock::now() > deadline) {
      out.event("leftovers-killed", {{"after_s", 5}});
      progress("killing processes the previous job left behind");
      kill(-1, SIGKILL);  // every process but PID 1 (this one); kernel threads are not affected
      while (waitpid(-1, nullptr, 0) > 0 || errno == EINTR) {
      }
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Before the next job of a list: dirty data written back, then a wait until every vCPU is quiet,
// so that the job does not start into work the previous one left behind (an event says so, or
// why not). Caches are kept: under TCG, dropping them after kernbench made the next chat run
// stall on one vCPU for seconds, 3-5x slower (BENCHMARKS.md, "chat after kernbench in one boot").
// Only as PID 1, in a guest: run natively, the machine is not the agent's.
void between_jobs(RecordWriter& out, bool pid1) {
  json detail = {{"sync", pid1}, {"caches", "kept"}};
  if (!pid1) {
    detail["settle"] = "skipped (not PID 1: a native run does not wait for the machine)";
    out.event("between-jobs", detail);
    progress("between jobs: not PID 1, nothing to do");
    return;
  }
  ::sync();
  const bench::SettleOptions settle_options;
  const auto settle = bench::wait_until_quiet(settle_options);
  json busiest = json::array();
  for (double pct : settle.busiest_cpu_pct) busiest.push_back(std::round(pct * 10) / 10);
  detail["settle"] = {{"settled", settle.settled},
                      {"waited_s", settle.waited_s},
                      {"busy_below_pct", settle_options.busy_below_pct},
                      {"window_s", std::chrono::duration<double>(settle_options.window).count()},
                      {"busiest_cpu_pct", busiest}};
  out.event("between-jobs", detail);
  char line[160];
  if (settle.settled)
    std::snprintf(line, sizeof line, "between jobs: synced, quiet after %.2f s", settle.waited_s);
  else
    std::snprintf(line, sizeof line, "between jobs: synced, not quiet after %.1f s (a vCPU stayed above %.0f %% busy)",
                  settle.waited_s, settle_options.busy_below_pct);
  progress(line);
}

}  // namespace

int run_job(const Job& job, RecordWriter& out, const AgentOptions& options) {
  int exit_code = 1;
  try {
    out.write("topology", bench::topology_report());
    if (!apply_settings(job, out)) {
      out.end(false, 1);
      return 1;
    }
    std::unique_ptr<bench::VmstatSampler> sampler;
    std::unique_ptr<RecordObserver> obs;
    if (job.monitors.vmstat_interval_s > 0)
      sampler = std::make_unique<bench::VmstatSampler>(job.monitors.vmstat_interval_s, [&](double t, const json& v) {
        out.write("monitor", {{"monitor", "vmstat"},
                              {"t", t},
                              {"phase", obs && obs->measuring() ? "measure" : "setup"},
                              {"values", v}});
      });
    obs = std::make_unique<RecordObserver>(out, job, options, sampler.get());
    auto schedstat = [&](const char* phase) {
      json snap = bench::schedstat_snapshot();
      json rec = {{"monitor", "schedstat"}, {"phase", phase}, {"available", !snap.is_null()}};
      if (!snap.is_null()) rec["values"] = snap;
      out.write("monitor", rec);
    };
    if (job.monitors.schedstat) schedstat("start");
    bench::CpuBusy busy;
    busy.begin();
    if (sampler) sampler->start();

    std::string kind = job.role == "noise" ? "noise" : job.kind;
    progress("running " + kind + " (cell " + job.cell + ", vm " + std::to_string(job.vm) + ")");
    try {
      if (kind == "kernbench") {
        auto p = protocol::kernbench_params(job);
        bench::KernbenchOptions o;
        o.jobs = p.jobs;
        o.iterations = job.iterations;
        o.warmup = p.warmup;
        o.tree = p.tree;
        o.files = p.files;
        o.config = p.config;
        o.target = p.target;
        o.coresched = job.coresched;
        o.workdir = "/tmp/smtlab-kernbench-" + std::to_string(getpid());
        bench::run_kernbench(o, *obs);
        exit_code = 0;
      } else if (kind == "chat") {
        if (auto lo = ensure_loopback_up(); !lo.empty())
          throw Error("chat runs over 127.0.0.1 but " + lo, "bring up lo in the guest (ip link set lo up)");
        run_chat_job(job, *obs, options.faults);
        exit_code = 0;
      } else if (kind == "hackbench") {
        auto p = protocol::hackbench_params(job);
        bench::HackbenchOptions o;
        o.groups = p.groups;
        o.loops = p.loops;
        o.fds = p.fds;
        o.threads = p.threads;
        o.pipes = p.pipes;
        o.iterations = job.iterations;
        o.coresched = job.coresched;
        bench::run_hackbench(o, *obs);
        exit_code = 0;
      } else if (kind == "exec") {
        exit_code = run_exec_job(job, out, *obs);
      } else if (kind == "noise") {
        exit_code = run_noise_job(job, *obs, options.faults);
      } else {
        throw Error("unknown job kind \"" + kind + "\"");
      }
    } catch (const std::exception& e) {
      out.error(describe(e), true, dynamic_cast<const bench::StalledError*>(&e) != nullptr);
      progress("error: " + describe(e));
      exit_code = 1;
    }
    if (sampler) sampler->stop();
    if (job.monitors.schedstat) schedstat("end");
    if (job.monitors.cpu_busy) out.write("monitor", {{"monitor", "cpu_busy"}, {"values", busy.end()}});
  } catch (const std::exception& e) {
    out.error(describe(e), true);
    progress("error: " + describe(e));
    exit_code = 1;
  }
  out.end(exit_code == 0, exit_code);
  progress(exit_code == 0 ? "done" : "failed (exit code " + std::to_string(exit_code) + ")");
  return exit_code;
}

int run_agent(const AgentOptions& given) {
  AgentOptions options = given;
  const bool pid1 = is_pid1();
  // The kernel starts init with almost no environment: give children a usual PATH.
  if (!std::getenv("PATH")) setenv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", 1);
  if (pid1) {
    std::string problems = mount_basics();
    if (!problems.empty()) progress("warning: " + problems);
  }
  // Where the records go.
  int fd = -1;
  std::string where;
  if (options.results_port == "-") {
    fd = 1;
    where = "stdout";
  } else if (!options.results_port.empty() && options.results_port[0] == '/') {
    fd = open(options.results_port.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    where = options.results_port;
  } else if (auto dev = find_virtio_port(options.results_port, pid1 ? 10.0 : 0.0, options.ports_sys, options.ports_dev)) {
    fd = open(dev->c_str(), O_WRONLY | O_CLOEXEC);
    where = *dev + " (" + options.results_port + ")";
  } else if (!pid1) {
    fd = 1;
    where = "stdout (no port " + options.results_port + ")";
  }
  if (fd < 0) {
    progress("error: cannot open the results port " + options.results_port + " (" + where +
             "); nothing can be reported, powering off");
    power_off(1);
  }
  progress("agent " + std::string(kVersion) + ", records to " + where);

  // The sequence counter lives in shared memory so that the PID 1 supervisor can continue the
  // stream (error + end) if its worker dies.
  void* mem = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  Shared* shared = mem == MAP_FAILED ? new Shared : new (mem) Shared;
  RecordWriter out(protocol::fd_sink(fd), &shared->seq);

  protocol::JobList list;
  std::string job_error;
  try {
    list = protocol::parse_job_list(read_job_file(options.job_file));
  } catch (const std::exception& e) {
    job_error = "cannot use the job " + options.job_file + ": " + describe(e);
  }
  if (pid1 && job_error.empty()) try {
      auto cmdline = bench::read_proc("/proc/cmdline", 64 << 10);
      if (!cmdline) throw Error(std::string("cannot read /proc/cmdline: ") + std::strerror(errno));
      for (auto& f : faults_from_cmdline(*cmdline)) options.faults.push_back(std::move(f));
    } catch (const std::exception& e) {
      job_error = describe(e);
    }
  json hello = {{"agent", kVersion}, {"kernel", bench::kernel_release()}, {"uptime_s", uptime_s()}, {"pid1", pid1}};
  if (!options.faults.empty()) {
    hello["faults"] = options.faults;
    progress("injecting faults: " + json(options.faults).dump());
  }
  if (job_error.empty()) {
    const Job& first = list.jobs.front();
    hello["cell"] = first.cell;
    hello["vm"] = first.vm;
    hello["kind"] = first.kind;
    hello["role"] = first.role;
    if (list.is_list) {
      json cells = json::array();
      for (const auto& j : list.jobs) cells.push_back(j.cell);
      hello["cells"] = cells;
    }
  }
  out.write("hello", hello);
  if (!job_error.empty()) {
    out.error(job_error, true);
    out.end(false, 2);
    progress("error: " + job_error);
    power_off(2);
  }

  const size_t n = list.jobs.size();
  // A job list: every record of job i says which cell it belongs to; between two jobs the
  // previous one's processes are gone, dirty data is written back and the vCPUs are quiet.
  auto start_job = [&](size_t i) {
    if (!list.is_list) return;
    out.set_context({{"cell", list.jobs[i].cell}, {"job", i}});
    if (i > 0) between_jobs(out, pid1);
    out.event("job-start", {{"job", i}, {"jobs", n}, {"cell", list.jobs[i].cell}});
  };
  int worst = 0;
  if (!pid1) {
    for (size_t i = 0; i < n; ++i) {
      start_job(i);
      int rc = run_job(list.jobs[i], out, options);
      if (rc != 0 && worst == 0) worst = rc;
    }
    return worst;
  }
  // PID 1: each job runs in a worker; this process reaps every child (orphans included) until the
  // worker is gone, finishes the job's stream if the worker could not, then (a job list) waits
  // for the job's leftover processes before the next job, and finally powers off.
  for (size_t i = 0; i < n; ++i) {
    start_job(i);
    shared->ended = 0;
    pid_t worker = fork();
    if (worker == 0) {
      int rc = run_job(list.jobs[i], out, options);
      shared->ended = 1;
      _exit(rc);
    }
    if (worker < 0) {
      out.error(std::string("cannot fork the agent worker: ") + strerror(errno), true);
      out.end(false, 1);
      if (worst == 0) worst = 1;
      continue;
    }
    int status = 0;
    for (;;) {
      int st;
      pid_t p = wait(&st);
      if (p == worker) {
        status = st;
        break;
      }
      if (p < 0 && errno == ECHILD) break;
    }
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    if (!shared->ended) {
      out.error("the agent worker died" +
                    (WIFSIGNALED(status) ? " (signal " + std::to_string(WTERMSIG(status)) + ")" : std::string()),
                true);
      out.end(false, rc ? rc : 1);
    }
    if (rc != 0 && worst == 0) worst = rc;
    if (i + 1 < n) reap_leftovers(out);
  }
  power_off(worst);
}

}  // namespace smtlab::guest
