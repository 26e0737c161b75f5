// smtlab-guest: the guest agent, and the benchmarks for native runs (calibration on bare metal).
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <thread>

#include <CLI/CLI.hpp>

#include "bench/chat.hpp"
#include "bench/kernbench.hpp"
#include "bench/monitors.hpp"
#include "bench/topology.hpp"
#include "guest/agent.hpp"
#include "guest/boot_init.hpp"
#include "guest/pid1.hpp"
#include "smtlab/version.hpp"
#include "util/error.hpp"

using namespace smtlab;

namespace {

class PrintObserver : public bench::Observer {
 public:
  void sample(const bench::Sample& s) override {
    std::printf("%-10s %s %-8s %12.3f %s\n", s.benchmark.c_str(),
                s.warmup ? "warmup " : ("iter " + std::to_string(s.iteration) + " ").c_str(), s.metric.c_str(),
                s.value, s.unit.c_str());
    std::fflush(stdout);
  }
  void event(const std::string& name, const nlohmann::json& detail) override {
    std::fprintf(stderr, "smtlab-guest: %s %s\n", name.c_str(), detail.dump().c_str());
  }
};

}  // namespace

int main(int argc, char** argv) {
  // Started by the kernel as the initramfs's /init: boot, then become the agent (never returns).
  if (argc >= 1 && guest::is_boot_init(argv[0])) guest::run_boot_init();
  CLI::App app{"smtlab-guest " + std::string(kVersion) +
               ": the smtlab guest agent, and its benchmarks for native runs"};
  app.require_subcommand(1);

  guest::AgentOptions agent;
  auto* a = app.add_subcommand("agent", "run a job as the guest agent (PID 1 in a guest), streaming records");
  a->add_option("--job", agent.job_file, "the job (JSON)")->required();
  a->add_option("--results-port", agent.results_port,
                "virtio-serial port name, '-' for stdout, or an absolute file path")
      ->capture_default_str();
  a->add_option("--control-port", agent.control_port, "virtio-serial port for lockstep barriers")
      ->capture_default_str();
  a->add_option("--ports-sys", agent.ports_sys, "where virtio port names are listed")
      ->capture_default_str()
      ->group("");  // hidden: for tests
  a->add_option("--ports-dev", agent.ports_dev, "where virtio port devices are")->capture_default_str()->group("");

  bench::ChatOptions chat;
  std::string yield = "both";
  auto* c = app.add_subcommand("chat", "the chat benchmark (clean-room VolanoMark), natively");
  c->add_option("--rooms", chat.rooms, "chat rooms")->capture_default_str()->check(CLI::Range(1, 999));
  c->add_option("--users", chat.users, "users per room")->capture_default_str()->check(CLI::Range(2, 999));
  c->add_option("--count", chat.count, "messages each user sends")->capture_default_str()->check(CLI::PositiveNumber);
  c->add_option("--yield", yield, "sched_yield after each packet read / batch written")
      ->capture_default_str()
      ->check(CLI::IsMember({"both", "rx", "tx", "none"}));
  c->add_option("--port", chat.port, "TCP port on 127.0.0.1 (0: any free port)")->capture_default_str();
  c->add_option("--stack-kib", chat.stack_kib, "stack per connection thread")->capture_default_str();
  c->add_option("--timeout", chat.timeout_s, "refuse the run past this many seconds")->capture_default_str();
  c->add_option("--stall", chat.stall_s, "fail the run, saying where it stood, when nothing arrives for this many seconds")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  c->add_flag("--coresched", chat.coresched, "server and client share a new core-scheduling cookie");

  bench::KernbenchOptions kb;
  bool no_warmup = false;
  auto* k = app.add_subcommand("kernbench", "kernbench (mmtests semantics), natively");
  k->add_option("--jobs", kb.jobs, "make -jN for each N")->delimiter(',')->capture_default_str();
  k->add_option("--iterations", kb.iterations, "measured builds per job count")->capture_default_str();
  k->add_option("--tree", kb.tree, "synthetic or linux-source")
      ->capture_default_str()
      ->check(CLI::IsMember({"synthetic", "linux-source"}));
  k->add_option("--files", kb.files, "synthetic tree: translation units")->capture_default_str();
  k->add_option("--config", kb.config, "linux-source: configure target")->capture_default_str();
  k->add_option("--target", kb.target, "make target (default all / vmlinux)");
  k->add_option("--tarball", kb.tarball, "linux-source tarball (default /usr/src/linux-source-*.tar.xz)");
  k->add_option("--workdir", kb.workdir, "work directory (emptied first)")->capture_default_str();
  k->add_flag("--no-warmup", no_warmup, "skip the untimed warm-up build");
  k->add_flag("--keep", kb.keep_workdir, "keep the work directory afterwards");
  k->add_flag("--coresched", kb.coresched, "each timed make gets a new core-scheduling cookie");

  double interval = 1.0;
  int count = 5;
  auto* v = app.add_subcommand("vmstat", "the vmstat-equivalent sampler, natively");
  v->add_option("--interval", interval, "seconds between rows")->capture_default_str();
  v->add_option("--count", count, "rows")->capture_default_str();

  auto* t = app.add_subcommand("topology", "print the CPU topology report (JSON)");

  CLI11_PARSE(app, argc, argv);
  try {
    if (a->parsed()) return guest::run_agent(agent);
    if (c->parsed()) {
      chat.yield = bench::parse_yield_mode(yield);
      auto r = bench::run_chat(chat);
      std::fputs(bench::describe(r).c_str(), stdout);
      return 0;
    }
    if (k->parsed()) {
      kb.warmup = !no_warmup;
      PrintObserver obs;
      bench::run_kernbench(kb, obs);
      return 0;
    }
    if (v->parsed()) {
      std::printf("%8s %4s %4s %8s %10s %8s %10s %6s %6s %8s %8s %8s %8s %4s %4s %4s %4s %4s\n", "t", "r", "b",
                  "swpd", "free", "buff", "cache", "si", "so", "bi", "bo", "in", "cs", "us", "sy", "id", "wa", "st");
      std::fflush(stdout);
      int rows = 0;
      std::mutex m;
      std::condition_variable cv;
      bench::VmstatSampler sampler(interval, [&](double tt, const nlohmann::json& r) {
        std::printf("%8.1f %4.0f %4.0f %8.0f %10.0f %8.0f %10.0f %6.0f %6.0f %8.0f %8.0f %8.0f %8.0f %4.0f %4.0f %4.0f "
                    "%4.0f %4.0f\n",
                    tt, r["r"].get<double>(), r["b"].get<double>(), r["swpd"].get<double>(), r["free"].get<double>(),
                    r["buff"].get<double>(), r["cache"].get<double>(), r["si"].get<double>(), r["so"].get<double>(),
                    r["bi"].get<double>(), r["bo"].get<double>(), r["in"].get<double>(), r["cs"].get<double>(),
                    r["us"].get<double>(), r["sy"].get<double>(), r["id"].get<double>(), r["wa"].get<double>(),
                    r["st"].get<double>());
        std::fflush(stdout);
        std::lock_guard lock(m);
        ++rows;
        cv.notify_all();
      });
      sampler.start();
      {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return rows >= count; });
      }
      sampler.stop();
      return 0;
    }
    if (t->parsed()) {
      std::printf("%s\n", bench::topology_report().dump(2).c_str());
      return 0;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "smtlab-guest: error: %s\n", describe(e).c_str());
    return 1;
  }
  return 0;
}
