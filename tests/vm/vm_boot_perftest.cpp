// Boot latency of the lab itself: the Debian 6.12 cloud kernel + the test busybox initramfs
// (1x1x2x2, TCG Nehalem), started through the embedded libvirt driver vs plain
// qemu-system-x86_64 with the same kernel, initramfs and topology.
// Prints per run: ready (start -> "smtlab-test: done" on the console) and total (start ->
// QEMU process gone), then medians. Usage: vm_boot_perftest [RUNS=3]
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>
#include <vector>

#include "fixture.hpp"
#include "util/error.hpp"
#include "vm/connection.hpp"
#include "vm/console.hpp"
#include "scratch.hpp"
#include "vm/domain.hpp"

using namespace smtlab;
using namespace smtlab::vm;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
extern char** environ;

namespace {

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

bool console_done(const fs::path& log) {
  return read_console(log, 64 << 10).find("smtlab-test: done") != std::string::npos;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
    auto kernel = vm::test::debian_612_kernel();
    auto dir = vm::test::scratch_dir("perf");
    auto initrd = vm::test::make_initramfs(dir, vm::test::topology_init_script());
    auto conn = Connection::open();
    std::printf("%s\n", conn->describe().c_str());
    std::vector<double> lv_ready, lv_total, q_ready, q_total;
    for (int i = 0; i < runs; ++i) {
      // libvirt, embedded driver
      DomainSpec s;
      s.name = unique_domain_name("perf", i);
      s.topology = {1, 1, 2, 2};
      s.memory_mib = 384;
      s.accel = conn->info().accel;
      s.cpu_model = conn->info().guest_cpu_model;
      s.kernel = kernel;
      s.initrd = initrd;
      s.cmdline = "console=ttyS0 panic=-1 quiet";
      s.console_log = dir / "libvirt-console.log";
      auto t0 = Clock::now();
      double ready = -1;
      {
        auto dom = Domain::start(*conn, s);
        double created = since(t0);
        while (!dom.is_stopped() && since(t0) < 120) {
          if (ready < 0 && console_done(s.console_log)) ready = since(t0);
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        double stopped = since(t0);
        dom.destroy();
        std::printf("  libvirt: virDomainCreateXML returned at %.2f s, stop event at %.2f s, QEMU gone at %.2f s\n",
                    created, stopped, since(t0));
      }
      if (ready < 0 && console_done(s.console_log)) ready = since(t0);
      double total = since(t0);
      lv_ready.push_back(ready);
      lv_total.push_back(total);
      std::printf("libvirt-embedded run %d: ready %.2f s, total %.2f s  (guest: %s)\n", i, ready, total,
                  console_tail(read_console(s.console_log), 1).c_str());

      // plain QEMU
      auto qlog = dir / "qemu-console.log";
      fs::remove(qlog);
      std::vector<std::string> args = {
          "qemu-system-x86_64", "-machine", "q35", "-accel", "tcg", "-cpu", "Nehalem",
          "-smp", "4,sockets=1,dies=1,cores=2,threads=2", "-m", "384", "-kernel", kernel.string(),
          "-initrd", initrd.string(), "-append", "console=ttyS0 panic=-1 quiet", "-display", "none",
          "-nodefaults", "-no-user-config", "-no-reboot", "-serial", "file:" + qlog.string()};
      std::vector<char*> av;
      for (auto& a : args) av.push_back(a.data());
      av.push_back(nullptr);
      t0 = Clock::now();
      pid_t pid;
      if (posix_spawnp(&pid, "qemu-system-x86_64", nullptr, nullptr, av.data(), environ) != 0)
        throw Error("cannot run qemu-system-x86_64");
      ready = -1;
      int status = 0;
      while (waitpid(pid, &status, WNOHANG) == 0) {
        if (ready < 0 && console_done(qlog)) ready = since(t0);
        if (since(t0) > 120) kill(pid, SIGKILL);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      total = since(t0);
      q_ready.push_back(ready);
      q_total.push_back(total);
      std::printf("plain-qemu       run %d: ready %.2f s, total %.2f s  (guest: %s)\n", i, ready, total,
                  console_tail(read_console(qlog), 1).c_str());
    }
    std::printf("median libvirt-embedded: ready %.2f s, total %.2f s\n", median(lv_ready), median(lv_total));
    std::printf("median plain-qemu:       ready %.2f s, total %.2f s\n", median(q_ready), median(q_total));
    smtlab::test::finish_scratch(true);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vm_boot_perftest: %s\n", describe(e).c_str());
    return 1;
  }
}
