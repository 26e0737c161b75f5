#include "vm/reaper.hpp"

#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
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

void reap_loop() {
  auto& s = state();
  std::unique_lock lock(s.mutex);
  for (;;) {
    s.wake.wait(lock, [&] { return !s.pids.empty(); });
    for (auto it = s.pids.begin(); it != s.pids.end();) {
      // Only the registered pid: waitpid(-1) would take exit statuses that util/process and
      // libvirt wait for themselves.
      rusage usage{};
      const pid_t r = wait4(*it, nullptr, WNOHANG, &usage);
      if (r == *it) {
        static const long hz = sysconf(_SC_CLK_TCK);
        auto ticks = [](const timeval& t) {
          return static_cast<uint64_t>(t.tv_sec) * static_cast<uint64_t>(hz) +
                 static_cast<uint64_t>(t.tv_usec) * static_cast<uint64_t>(hz) / 1'000'000;
        };
        s.exited_ticks[*it] = ticks(usage.ru_utime) + ticks(usage.ru_stime);
      }
      const bool gone = r == *it || (r < 0 && errno == ECHILD);
      it = gone ? s.pids.erase(it) : std::next(it);
    }
    s.wake.wait_for(lock, std::chrono::milliseconds(10));
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
