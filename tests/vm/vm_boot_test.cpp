// Boots real kernels through the embedded libvirt driver (TCG here). Each test must end with
// no qemu-system process left under our embedded root.
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include "fixture.hpp"
#include "util/cpulist.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "vm/connection.hpp"
#include "vm/console.hpp"
#include "vm/domain.hpp"
#include "vm/vcpu_state.hpp"
#include "vm/embed_root.hpp"
#include "vm/pinning.hpp"
#include "vm/topology_check.hpp"
#include "checkout.hpp"

using namespace smtlab;
using namespace smtlab::vm;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

extern char** environ;

namespace {

Connection& connection() {
  static auto conn = Connection::open();
  return *conn;
}

DomainSpec guest(const fs::path& dir, const std::string& tag, VcpuTopology topo,
                 const fs::path& initrd) {
  auto& c = connection();
  DomainSpec s;
  s.name = unique_domain_name(tag, 0);
  s.topology = topo;
  s.memory_mib = 384;
  s.accel = c.info().accel;
  s.cpu_model = c.info().guest_cpu_model;
  s.kernel = vm::test::debian_612_kernel();
  s.initrd = initrd;
  s.cmdline = "console=ttyS0 panic=-1 quiet";
  s.console_log = dir / "console.log";
  s.results_channel = dir / "results";
  return s;
}

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line) != std::string::npos;
}

// Under TCG with several vCPUs, a Debian kernel's runtime text patching now and then executes a
// stale translation of a patched site (an int3 oops during boot, about 1 boot in 100: a QEMU TCG
// race, not the kernel's or the lab's). `smtlab run` boots such a cell again (boot_retries); these
// direct boots do the same, once, and only for that signature: any other failure still fails.
template <typename Boot>
void boot_retrying_tcg_race(const std::vector<fs::path>& consoles, Boot boot) {
  boot();
  for (const auto& log : consoles) {
    const auto console = read_console(log);
    const auto oops = int3_oops(scan_console(console));
    if (!oops || has_line(console, "smtlab-test: done")) continue;
    WARN(log.string() << ": " << *oops << " (the TCG text-patching race); booting again");
    for (const auto& l : consoles) fs::rename(l, l.string() + ".attempt-1");
    boot();
    return;
  }
}

// Runs the helper with stdout on a pipe; returns its pid and the first line it printed.
std::pair<pid_t, std::string> spawn_helper(const std::string& mode, const fs::path& kernel,
                                           const fs::path& initrd, const fs::path& dir) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  std::string exe = (smtlab::test::binary_dir() / "bin/vm_kill_helper").string();
  std::vector<std::string> args = {exe, mode, kernel.string(), initrd.string(), dir.string()};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  REQUIRE(posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  std::string line;
  auto deadline = std::chrono::steady_clock::now() + 40s;
  char ch;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    if (read(fds[0], &ch, 1) != 1) break;
    if (ch == '\n') break;
    line += ch;
  }
  close(fds[0]);
  return {pid, line};
}

}  // namespace

TEST_CASE("the embedded connection reports versions, accelerator and host CPUs", "[vm]") {
  auto& c = connection();
  const auto& info = c.info();
  CHECK(info.embedded);
  CHECK(info.hypervisor == "QEMU");
  CHECK(info.qemu_version.rfind("7.", 0) == 0);
  CHECK(info.libvirt_version.rfind("9.", 0) == 0);
  const char* env = getenv("SMTLAB_ACCEL");
  bool kvm_usable = access("/dev/kvm", R_OK | W_OK) == 0 && !host_kvm_is_pvm() &&
                    (env == nullptr || std::string(env) != "tcg");
  CHECK((info.accel == Accel::kvm) == kvm_usable);
  CHECK(info.accel_reason.empty() == (info.accel == Accel::kvm || access("/dev/kvm", R_OK | W_OK) != 0));
  if (!kvm_usable) CHECK(info.guest_cpu_model == "Nehalem");
  CHECK(static_cast<long>(info.host.cpus.size()) == sysconf(_SC_NPROCESSORS_ONLN));
  INFO(c.describe());
  CHECK(info.embed_root.string().size() < 60);
}

TEST_CASE("a 1x1x2x2 guest sees two sibling pairs and SMT active, and reports on its port", "[vm]") {
  auto dir = vm::test::scratch_dir("smt");
  auto initrd = vm::test::make_initramfs(dir, vm::test::topology_init_script());
  auto spec = guest(dir, "smt", {1, 1, 2, 2}, initrd);
  spec.qemu_log = dir / "qemu.log";
  // A console left by an earlier boot (a re-run cell) must not leak into this one.
  write_file_atomic(spec.console_log, "Kernel panic - not syncing: from an earlier boot\n");
  auto started = std::chrono::steady_clock::now();
  boot_retrying_tcg_race({spec.console_log}, [&] {
    auto dom = Domain::start(connection(), spec);
    CHECK(dom.qemu_pid() > 0);
    REQUIRE(dom.wait_stopped(60s) == WaitResult::stopped);
    dom.destroy();
    auto info = dom.stop_info();
    INFO(fmt::format("events: {}", fmt::join(info.events, ", ")));
    CHECK(info.guest_initiated);
    CHECK_FALSE(info.crashed);
    CHECK(process_gone(dom.qemu_pid()));
  });
  auto elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  WARN("boot to power-off and gone: " << elapsed << " s");
  auto console = read_console(spec.console_log);
  INFO(console_tail(console, 40));
  CHECK(has_line(console, "smtlab-test: kernel 6.12."));
  CHECK(has_line(console, "smtlab-test: online 0-3"));
  CHECK(has_line(console, "smtlab-test: smt 1"));
  CHECK(has_line(console, "smtlab-test: cpu0 core 0 package 0 siblings 0-1"));
  CHECK(has_line(console, "smtlab-test: cpu1 core 0 package 0 siblings 0-1"));
  CHECK(has_line(console, "smtlab-test: cpu2 core 1 package 0 siblings 2-3"));
  CHECK(has_line(console, "smtlab-test: cpu3 core 1 package 0 siblings 2-3"));
  CHECK(has_line(console, "smtlab-test: done"));
  CHECK_FALSE(is_fatal(scan_console(console)));
  CHECK(check_guest_topology(spec.topology, false, vm::test::parse_test_topology(console)).empty());
  // The same report checked against a different request must not match.
  CHECK_FALSE(check_guest_topology({1, 1, 4, 1}, false, vm::test::parse_test_topology(console)).empty());
  auto results = read_file(spec.results_channel);
  CHECK(results.rfind("results-line 6.12.", 0) == 0);
  CHECK(vm::test::pgrep_qemu_under(connection().info().embed_root) == 0);
  // QEMU's own log (the command line that ran) came with the results and left the embedded root,
  // which would otherwise keep one file per guest ever started.
  auto qemu_log = read_file(spec.qemu_log);
  CHECK(qemu_log.find("qemu-system-x86_64") != std::string::npos);
  CHECK(qemu_log.find("-name guest=" + spec.name + ",") != std::string::npos);
  CHECK(qemu_log.find("-smp 4,sockets=1,dies=1,cores=2,threads=2") != std::string::npos);
  CHECK_FALSE(fs::exists(connection().info().embed_root / "log" / "qemu" / (spec.name + ".log")));
}

TEST_CASE("a Debian 6.1 guest also sees SMT siblings with the TCG CPU model", "[vm]") {
  auto dir = vm::test::scratch_dir("smt61");
  auto initrd = vm::test::make_initramfs(dir, vm::test::topology_init_script());
  auto spec = guest(dir, "smt61", {1, 1, 2, 2}, initrd);
  spec.kernel = vm::test::debian_cloud_kernel("6.1");
  spec.results_channel.clear();  // virtio_console is a module in 6.1-cloud; console only
  boot_retrying_tcg_race({spec.console_log}, [&] {
    auto dom = Domain::start(connection(), spec);
    REQUIRE(dom.wait_stopped(60s) == WaitResult::stopped);
    dom.destroy();
  });
  auto console = read_console(spec.console_log);
  INFO(console_tail(console, 30));
  CHECK(has_line(console, "smtlab-test: kernel 6.1.0-"));
  CHECK(has_line(console, "smtlab-test: smt 1"));
  CHECK(check_guest_topology(spec.topology, false, vm::test::parse_test_topology(console)).empty());
  CHECK(vm::test::pgrep_qemu_under(connection().info().embed_root) == 0);
}

TEST_CASE("nosmt on the command line: secondary threads offline, SMT inactive", "[vm]") {
  auto dir = vm::test::scratch_dir("nosmt");
  auto initrd = vm::test::make_initramfs(dir, vm::test::topology_init_script());
  auto spec = guest(dir, "nosmt", {1, 1, 2, 2}, initrd);
  spec.cmdline += " nosmt";
  boot_retrying_tcg_race({spec.console_log}, [&] {
    auto dom = Domain::start(connection(), spec);
    REQUIRE(dom.wait_stopped(60s) == WaitResult::stopped);
    dom.destroy();
  });
  auto console = read_console(spec.console_log);
  INFO(console_tail(console, 30));
  CHECK(has_line(console, "smtlab-test: smt 0"));
  CHECK(has_line(console, "smtlab-test: online 0,2"));
  auto seen = vm::test::parse_test_topology(console);
  CHECK(seen.cpus.size() == 2);
  CHECK(check_guest_topology(spec.topology, true, seen).empty());
  CHECK_FALSE(check_guest_topology(spec.topology, false, seen).empty());
  CHECK(vm::test::pgrep_qemu_under(connection().info().embed_root) == 0);
}

TEST_CASE("two VMs with 4 vCPUs each share the host CPUs and boot at the same time", "[vm]") {
  auto& c = connection();
  PinRequest req;
  req.vms = 2;
  req.topology = {1, 1, 2, 2};
  req.policy = PinPolicy::shared;
  auto plan = plan_pinning(req, c.info().host);
  auto dir = vm::test::scratch_dir("shared");
  auto initrd = vm::test::make_initramfs(dir, vm::test::topology_init_script());
  std::vector<DomainSpec> specs;
  for (int i = 0; i < 2; ++i) {
    fs::create_directories(dir / std::to_string(i));
    auto s = guest(dir / std::to_string(i), "shared", req.topology, initrd);
    s.name = unique_domain_name("shared", i);
    s.vcpu_pins = plan.vms[i].vcpus;
    s.emulator_pin = plan.vms[i].emulator;
    specs.push_back(s);
  }
  CHECK(specs[0].vcpu_pins[3] == format_cpulist(c.info().host.ids()));
  boot_retrying_tcg_race({specs[0].console_log, specs[1].console_log}, [&] {
    DomainGroup group;
    group.start(c, specs);
    REQUIRE(group.size() == 2);
    // Started together, not one after the other (a start alone takes libvirt 0.3-0.5 s here).
    CHECK(std::abs(group[0].uptime_s() - group[1].uptime_s()) < 0.2);
    // Both run at once: neither has stopped right after the second one started.
    CHECK_FALSE(group[0].is_stopped());
    CHECK_FALSE(group[1].is_stopped());
    REQUIRE(group.wait_all_stopped(80s) == WaitResult::stopped);
    group.destroy_all();
  });
  for (int i = 0; i < 2; ++i) {
    auto console = read_console(specs[i].console_log);
    INFO("vm " << i << ":\n" << console_tail(console, 30));
    CHECK(has_line(console, "smtlab-test: online 0-3"));
    CHECK(has_line(console, "smtlab-test: smt 1"));
    CHECK(has_line(console, "smtlab-test: done"));
    CHECK(read_file(specs[i].results_channel).rfind("results-line 6.12.", 0) == 0);
  }
  CHECK(vm::test::pgrep_qemu_under(c.info().embed_root) == 0);
}

TEST_CASE("a guest whose init cannot run is reported as a kernel panic with the panic line", "[vm]") {
  auto dir = vm::test::scratch_dir("panic");
  auto initrd = vm::test::make_initramfs(dir, "");  // no /init
  auto spec = guest(dir, "panic", {1, 1, 1, 1}, initrd);
  spec.cmdline = "console=ttyS0 panic=-1 init=/nonexistent";
  {
    auto dom = Domain::start(connection(), spec);
    REQUIRE(dom.wait_stopped(60s) == WaitResult::stopped);
    dom.destroy();
    INFO(fmt::format("events: {}", fmt::join(dom.stop_info().events, ", ")));
    CHECK(dom.stop_info().stopped);
  }
  auto console = read_console(spec.console_log);
  auto findings = scan_console(console);
  INFO(console_tail(console, 20));
  REQUIRE(is_fatal(findings));
  auto problem = first_problem(findings);
  CHECK(problem.find("Kernel panic - not syncing") != std::string::npos);
  CHECK(vm::test::pgrep_qemu_under(connection().info().embed_root) == 0);
}

TEST_CASE("a kernel QEMU cannot load fails the start with QEMU's reason, and QEMU's log is kept", "[vm]") {
  auto dir = vm::test::scratch_dir("badkernel");
  write_file_atomic(dir / "not-a-kernel", std::string(4096, 'x'));
  auto spec = guest(dir, "badkernel", {1, 1, 1, 1}, "");
  spec.kernel = dir / "not-a-kernel";
  spec.qemu_log = dir / "qemu.log";
  try {
    Domain::start(connection(), spec);
    FAIL("QEMU started a guest from a file that is no kernel");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("cannot start domain " + spec.name) != std::string::npos);
  }
  auto qemu_log = read_file(spec.qemu_log);
  INFO(qemu_log);
  CHECK(qemu_log.find("-name guest=" + spec.name + ",") != std::string::npos);
  CHECK(qemu_log.find("invalid kernel header") != std::string::npos);  // QEMU's own complaint
  CHECK_FALSE(fs::exists(connection().info().embed_root / "log" / "qemu" / (spec.name + ".log")));
  CHECK(vm::test::pgrep_qemu_under(connection().info().embed_root) == 0);
}

TEST_CASE("RAII: a running guest is destroyed when its Domain or DomainGroup goes away", "[vm]") {
  auto dir = vm::test::scratch_dir("raii");
  auto initrd = vm::test::make_initramfs(dir, "#!/bin/sh\n/bin/busybox sleep 600\n");
  auto root = connection().info().embed_root;
  int pid = -1;
  {
    // Pinned the "wrong way round" so that the check cannot pass by accident.
    auto spec = guest(dir, "raii", {1, 1, 1, 2}, initrd);
    int last = static_cast<int>(connection().info().host.cpus.size()) - 1;
    spec.vcpu_pins = {std::to_string(last), "0"};
    spec.emulator_pin = "0";
    spec.thread_sched = ThreadSched::batch;
    auto dom = Domain::start(connection(), spec);
    pid = dom.qemu_pid();
    REQUIRE(pid > 0);
    CHECK(dom.wait_stopped(1s) == WaitResult::timeout);
    CHECK_FALSE(dom.is_stopped());
    // The vCPU threads ("CPU n/TCG") really run where the plan said (no cgroups needed), and
    // with the scheduling policy the spec asked for.
    std::map<std::string, std::string> allowed;
    std::map<std::string, int> policy;
    for (auto& task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
      auto comm = read_file(task.path() / "comm");
      const int tid = std::stoi(task.path().filename().string());
      auto status = read_file(task.path() / "status");
      auto at = status.find("Cpus_allowed_list:");
      if (at == std::string::npos) continue;
      auto value = status.substr(at + 18, status.find('\n', at) - at - 18);
      value.erase(0, value.find_first_not_of(" \t"));
      comm.erase(comm.find_last_not_of("\n") + 1);
      allowed[comm] = value;
      policy[comm] = sched_getscheduler(tid);
    }
    INFO("threads: " << allowed.size());
    if (allowed.count("CPU 0/TCG")) {
      CHECK(allowed["CPU 0/TCG"] == std::to_string(last));
      CHECK(allowed["CPU 1/TCG"] == "0");
    } else {
      CHECK(allowed["CPU 0/KVM"] == std::to_string(last));
      CHECK(allowed["CPU 1/KVM"] == "0");
    }
    CHECK(allowed["qemu-system-x86"] == "0");
    const std::string accel = allowed.count("CPU 0/TCG") ? "TCG" : "KVM";
    CHECK(policy["CPU 0/" + accel] == SCHED_BATCH);
    CHECK(policy["CPU 1/" + accel] == SCHED_BATCH);
    CHECK(sched_getscheduler(pid) == SCHED_BATCH);  // the emulator's main thread
    // Where each vCPU is, from QEMU (what a boot or cell timeout records; a vCPU the kernel has
    // not started yet is in real mode, EIP= rather than RIP=).
    const std::string registers = dom.vcpu_registers();
    INFO(registers);
    auto vcpus = parse_vcpu_registers(registers);
    REQUIRE(vcpus.size() == 2);
    CHECK(vcpus[0].cpu == 0);
    CHECK(vcpus[1].cpu == 1);
    CHECK(vcpus[0].rip != 0);
    dom.destroy();
    CHECK(dom.vcpu_registers().empty());
  }
  CHECK(process_gone(pid));
  CHECK(vm::test::pgrep_qemu_under(root) == 0);

  // The second spec cannot start: the first, already running, is torn down and the error
  // names the failing domain.
  auto ok = guest(dir, "raii", {1, 1, 1, 1}, initrd);
  auto bad = guest(dir, "raii", {1, 1, 1, 1}, initrd);
  bad.name = unique_domain_name("raii", 1);
  bad.kernel = dir / "no-such-vmlinuz";
  DomainGroup group;
  CHECK_THROWS_WITH(group.start(connection(), {ok, bad}),
                    Catch::Contains(bad.name) && Catch::Contains("does not exist"));
  CHECK(group.size() == 0);
  CHECK(vm::test::pgrep_qemu_under(root) == 0);
}

TEST_CASE("kill -9 of the process that started a guest leaves no QEMU 5 s later", "[vm]") {
  auto dir = vm::test::scratch_dir("kill");
  auto initrd = vm::test::make_initramfs(dir, "#!/bin/sh\n/bin/busybox sleep 600\n");
  auto [pid, line] = spawn_helper("wait", vm::test::debian_612_kernel(), initrd, dir);
  INFO("helper said: " << line);
  REQUIRE(line.rfind("started ", 0) == 0);
  auto rest = line.substr(8);
  fs::path root = rest.substr(0, rest.find(' '));
  int qemu = std::stoi(rest.substr(rest.find(' ') + 1));
  REQUIRE(qemu > 0);
  CHECK_FALSE(process_gone(qemu));
  CHECK(vm::test::pgrep_qemu_under(root) == 1);
  REQUIRE(kill(pid, SIGKILL) == 0);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFSIGNALED(status));
  std::this_thread::sleep_for(5s);
  CHECK(process_gone(qemu));
  CHECK(vm::test::pgrep_qemu_under(root) == 0);
}

TEST_CASE("SIGINT makes the process tear its guest down and exit", "[vm]") {
  auto dir = vm::test::scratch_dir("sigint");
  auto initrd = vm::test::make_initramfs(dir, "#!/bin/sh\n/bin/busybox sleep 600\n");
  auto [pid, line] = spawn_helper("sigint", vm::test::debian_612_kernel(), initrd, dir);
  INFO("helper said: " << line);
  REQUIRE(line.rfind("started ", 0) == 0);
  auto rest = line.substr(8);
  fs::path root = rest.substr(0, rest.find(' '));
  int qemu = std::stoi(rest.substr(rest.find(' ') + 1));
  REQUIRE(kill(pid, SIGINT) == 0);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  // Torn down by the process itself (not the guardian): gone as soon as it exited.
  CHECK(process_gone(qemu));
  CHECK(vm::test::pgrep_qemu_under(root) == 0);
}
