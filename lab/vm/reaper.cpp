#include "vm/reaper.hpp"

#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string_view>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace smtlab::vm {
namespace {

// Never destroyed: the detached thread may still use it while the process exits.
struct ReaperState {
  std::mutex mutex;
  std::condition_variable wake;
  std::set<int> pids;
  std::map<int, uint64_t> exited_ticks;  // reaped pid -> its CPU time
  bool started = false;
};

ReaperState& state() {
  static auto* s = new ReaperState;
  return *s;
}

uint64_t cpu_ticks(const rusage& usage) {
  static const long hz = sysconf(_SC_CLK_TCK);
  auto ticks = [](const timeval& t) {
    return static_cast<uint64_t>(t.tv_sec) * static_cast<uint64_t>(hz) +
           static_cast<uint64_t>(t.tv_usec) * static_cast<uint64_t>(hz) / 1'000'000;
  };
  return ticks(usage.ru_utime) + ticks(usage.ru_stime);
}

// The command name of a process ("qemu-system-x86", at most 15 characters), also of a zombie.
bool is_qemu(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  std::FILE* f = std::fopen(path, "re");
  if (!f) return false;
  char buf[128] = {};
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  const std::string_view text(buf, n);
  const auto open = text.find('(');
  return open != std::string_view::npos && text.substr(open + 1).rfind("qemu-system", 0) == 0;
}

// libvirt also starts QEMUs it never tells us about: the capability probes of a connection to a
// fresh embedded root (a QEMU asked over QMP what it supports, started daemonized, so adopted by
// us as well). libvirt waits up to 15 s for each to be gone. Reap every exited child that is a
// QEMU; it peeks first (WNOWAIT), so a child of util/process or libvirt's own is left to the
// code that waits for it.
void reap_exited_qemus(ReaperState& s) {
  for (int n = 0; n < 64; ++n) {
    siginfo_t info{};
    if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) return;
    const pid_t pid = info.si_pid;
    if (!is_qemu(pid)) return;
    rusage usage{};
    if (wait4(pid, nullptr, WNOHANG, &usage) != pid) return;
    if (s.pids.erase(pid)) s.exited_ticks[pid] = cpu_ticks(usage);
  }
}

void reap_loop() {
  auto& s = state();
  std::unique_lock lock(s.mutex);
  for (;;) {
    reap_exited_qemus(s);
    for (auto it = s.pids.begin(); it != s.pids.end();) {
      // Only the registered pid: waitpid(-1) would take exit statuses that util/process and
      // libvirt wait for themselves.
      rusage usage{};
      const pid_t r = wait4(*it, nullptr, WNOHANG, &usage);
      if (r == *it) s.exited_ticks[*it] = cpu_ticks(usage);
      const bool gone = r == *it || (r < 0 && errno == ECHILD);
      it = gone ? s.pids.erase(it) : std::next(it);
    }
    // Guests' QEMUs every 10 ms (a teardown waits for them); probes, which libvirt polls every
    // 200 ms, every 50 ms.
    s.wake.wait_for(lock, std::chrono::milliseconds(s.pids.empty() ? 50 : 10));
  }
}

}  // namespace

void become_qemu_reaper() {
  auto& s = state();
  std::lock_guard lock(s.mutex);
  if (s.started) return;
  // Without it (not permitted here), QEMUs go to PID 1 as before: reap_when_exited then sees
  // ECHILD and drops them.
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  std::thread(reap_loop).detach();
  s.started = true;
}

void reap_when_exited(int pid) {
  if (pid <= 0) return;
  auto& s = state();
  {
    std::lock_guard lock(s.mutex);
    if (!s.started) return;
    s.pids.insert(pid);
    s.exited_ticks.erase(pid);  // a reused pid: the old record is not this process's
  }
  s.wake.notify_one();
}

std::optional<uint64_t> exited_cpu_ticks(int pid) {
  auto& s = state();
  std::lock_guard lock(s.mutex);
  auto it = s.exited_ticks.find(pid);
  if (it == s.exited_ticks.end()) return std::nullopt;
  return it->second;
}

}  // namespace smtlab::vm
