#include "bench/spawn.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <thread>

#include "bench/coresched.hpp"
#include "util/error.hpp"

extern char** environ;

namespace smtlab::bench {

namespace {

struct ChildStatus {
  int stage;  // 1 = coresched failed, 2 = exec failed, 3 = cookie report
  int err;
  unsigned long long cookie;
};

void write_all(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t w = write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    c += w;
    n -= static_cast<size_t>(w);
  }
}

double seconds(const timeval& tv) { return tv.tv_sec + tv.tv_usec / 1e6; }

std::string command_name(const std::vector<std::string>& argv) {
  std::string s;
  for (auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s.size() > 200 ? s.substr(0, 200) + "..." : s;
}

}  // namespace

SpawnResult spawn(const std::vector<std::string>& argv, const SpawnOptions& options) {
  if (argv.empty()) throw Error("spawn: empty command");
  // Everything the child needs is prepared before fork (no allocation after it).
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  std::vector<std::string> env_store;
  for (char** e = environ; e && *e; ++e) {
    std::string s = *e;
    auto eq = s.find('=');
    if (eq != std::string::npos && options.env.count(s.substr(0, eq))) continue;
    env_store.push_back(s);
  }
  for (auto& [k, v] : options.env) env_store.push_back(k + "=" + v);
  std::vector<char*> cenv;
  for (auto& e : env_store) cenv.push_back(e.data());
  cenv.push_back(nullptr);

  int status_pipe[2], out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  if (pipe2(status_pipe, O_CLOEXEC) != 0) throw Error("spawn: pipe failed: " + std::string(strerror(errno)));
  if (options.capture && (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0))
    throw Error("spawn: pipe failed: " + std::string(strerror(errno)));
  int devnull = options.discard_output ? open("/dev/null", O_WRONLY | O_CLOEXEC) : -1;

  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid < 0) throw Error("spawn: fork failed: " + std::string(strerror(errno)));
  if (pid == 0) {
    setpgid(0, 0);
    if (options.capture) {
      dup2(out_pipe[1], 1);
      dup2(err_pipe[1], 2);
    } else if (devnull >= 0) {
      dup2(devnull, 1);
      dup2(devnull, 2);
    }
    if (!options.cwd.empty() && chdir(options.cwd.c_str()) != 0) {
      ChildStatus s{2, errno, 0};
      write_all(status_pipe[1], &s, sizeof s);
      _exit(127);
    }
    if (options.coresched) {
      ChildStatus s{1, coresched_create_self(), 0};
      if (s.err) {
        write_all(status_pipe[1], &s, sizeof s);
        _exit(127);
      }
      s.stage = 3;
      prctl(62 /*PR_SCHED_CORE*/, 0 /*GET*/, 0, 0 /*PIDTYPE_PID*/, &s.cookie);
      write_all(status_pipe[1], &s, sizeof s);
    }
    execvpe(cargv[0], cargv.data(), cenv.data());
    ChildStatus s{2, errno, 0};
    write_all(status_pipe[1], &s, sizeof s);
    _exit(127);
  }
  close(status_pipe[1]);
  if (devnull >= 0) close(devnull);
  if (options.capture) {
    close(out_pipe[1]);
    close(err_pipe[1]);
  }
  SpawnResult result;
  int start_error = 0, start_stage = 0;
  for (;;) {
    ChildStatus s{};
    ssize_t n = read(status_pipe[0], &s, sizeof s);
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(sizeof s)) break;
    if (s.stage == 3) result.cookie = s.cookie;
    else {
      start_stage = s.stage;
      start_error = s.err;
    }
  }
  close(status_pipe[0]);

  auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(options.timeout_s));
  auto remaining_ms = [&]() -> int {
    if (options.timeout_s <= 0) return -1;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    return left.count() < 0 ? 0 : static_cast<int>(std::min<long long>(left.count(), 1 << 30));
  };
  auto kill_group = [&] {
    result.timed_out = true;
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
  };

  if (options.capture) {
    std::string buf[2];
    auto emit = [&](int stream, std::string_view line) {
      if (options.on_line) options.on_line(stream, line);
    };
    pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    int open_count = 2;
    char chunk[8192];
    while (open_count > 0) {
      int r = poll(fds, 2, remaining_ms());
      if (r < 0 && errno == EINTR) continue;
      if (r == 0) {
        kill_group();
        break;
      }
      for (int i = 0; i < 2; ++i) {
        if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        ssize_t n = read(fds[i].fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          if (!buf[i].empty()) emit(i + 1, buf[i]);
          buf[i].clear();
          close(fds[i].fd);
          fds[i].fd = -1;
          --open_count;
          continue;
        }
        buf[i].append(chunk, static_cast<size_t>(n));
        size_t pos;
        while ((pos = buf[i].find('\n')) != std::string::npos || buf[i].size() >= 4096) {
          size_t take = pos == std::string::npos ? 4096 : pos;
          emit(i + 1, std::string_view(buf[i]).substr(0, take));
          buf[i].erase(0, pos == std::string::npos ? take : take + 1);
        }
      }
    }
    for (auto& f : fds)
      if (f.fd >= 0) close(f.fd);
  }

  int st = 0;
  rusage ru{};
  for (;;) {
    pid_t w = wait4(pid, &st, options.timeout_s > 0 ? WNOHANG : 0, &ru);
    if (w == pid) break;
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) throw Error("spawn: wait4 failed: " + std::string(strerror(errno)));
    if (remaining_ms() == 0 && !result.timed_out) kill_group();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  result.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.user_s = seconds(ru.ru_utime);
  result.sys_s = seconds(ru.ru_stime);
  result.vcsw = ru.ru_nvcsw;
  result.icsw = ru.ru_nivcsw;
  if (WIFEXITED(st)) result.exit_code = WEXITSTATUS(st);
  if (WIFSIGNALED(st)) result.signal = WTERMSIG(st);

  if (start_stage == 1)
    throw Error(coresched_error(start_error) + " (running " + command_name(argv) + ")",
                "use a kernel built with CONFIG_SCHED_CORE=y, or drop coresched from the variant");
  if (start_stage == 2)
    throw Error("cannot run " + command_name(argv) + ": " + strerror(start_error),
                start_error == ENOENT ? "is " + argv[0] + " installed in the guest image?" : "");
  return result;
}

SpawnResult spawn_checked(const std::vector<std::string>& argv, SpawnOptions options) {
  std::deque<std::string> tail;
  auto user = options.on_line;
  if (options.capture)
    options.on_line = [&](int stream, std::string_view line) {
      tail.emplace_back(line.substr(0, 300));
      if (tail.size() > 15) tail.pop_front();
      if (user) user(stream, line);
    };
  SpawnResult r = spawn(argv, options);
  if (!r.ok()) {
    std::string why = r.timed_out ? "timed out after " + std::to_string(options.timeout_s) + " s"
                      : r.signal  ? "was killed by signal " + std::to_string(r.signal)
                                  : "exited with status " + std::to_string(r.exit_code);
    std::string out;
    for (auto& l : tail) out += "\n    " + l;
    throw Error(command_name(argv) + " " + why + (out.empty() ? "" : "; last output:" + out));
  }
  return r;
}

}  // namespace smtlab::bench
