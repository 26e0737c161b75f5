#include "util/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "util/error.hpp"

extern char** environ;

namespace smtlab {
namespace {

std::string tail_lines(const std::string& text, size_t lines) {
  size_t pos = text.size();
  while (pos > 0 && (text[pos - 1] == '\n')) --pos;
  size_t end = pos;
  for (size_t n = 0; pos > 0; --pos) {
    if (text[pos - 1] == '\n' && ++n == lines) break;
  }
  return text.substr(pos, end - pos);
}

}  // namespace

std::optional<std::filesystem::path> find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    if (access(name.c_str(), X_OK) == 0) return std::filesystem::path(name);
    return std::nullopt;
  }
  std::string path = getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin";
  path += ":/usr/sbin:/sbin:/usr/local/sbin";
  std::stringstream ss(path);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    auto candidate = std::filesystem::path(dir) / name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

std::string shell_quote(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& arg : argv) {
    if (!out.empty()) out += ' ';
    bool plain = !arg.empty() && arg.find_first_not_of(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == std::string::npos;
    if (plain) {
      out += arg;
    } else {
      out += '\'';
      for (char c : arg) {
        if (c == '\'') out += "'\\''";
        else out += c;
      }
      out += '\'';
    }
  }
  return out;
}

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options) {
  if (argv.empty()) throw Error("internal: run_process called with an empty command");
  auto program = find_program(argv[0]);
  if (!program) {
    throw Error("'" + argv[0] + "' is not installed (not found in PATH)",
                "run ./smtlab, which installs the Debian packages smtlab needs");
  }
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1}, in_pipe[2] = {-1, -1};
  if ((options.capture_stdout && pipe2(out_pipe, O_CLOEXEC) != 0) ||
      (options.capture_stderr && pipe2(err_pipe, O_CLOEXEC) != 0) || pipe2(in_pipe, O_CLOEXEC) != 0)
    throw Error(std::string("pipe: ") + std::strerror(errno));

  std::vector<std::string> env_storage;
  for (char** e = environ; *e; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (eq != std::string::npos && options.env.count(entry.substr(0, eq))) continue;
    env_storage.push_back(entry);
  }
  for (const auto& [k, v] : options.env) env_storage.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : env_storage) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);
  std::string prog = program->string();

  pid_t pid = fork();
  if (pid < 0) throw Error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    dup2(in_pipe[0], 0);
    if (options.capture_stdout) dup2(out_pipe[1], 1);
    if (options.capture_stderr) dup2(err_pipe[1], 2);
    if (!options.cwd.empty() && chdir(options.cwd.c_str()) != 0) _exit(126);
    signal(SIGPIPE, SIG_DFL);
    execve(prog.c_str(), args.data(), envp.data());
    _exit(127);
  }
  setpgid(pid, pid);
  close(in_pipe[0]);
  if (options.capture_stdout) close(out_pipe[1]);
  if (options.capture_stderr) close(err_pipe[1]);

  ProcessResult result;
  // Feed stdin (small inputs only; larger ones belong in files).
  if (!options.stdin_data.empty()) {
    signal(SIGPIPE, SIG_IGN);
    size_t off = 0;
    while (off < options.stdin_data.size()) {
      ssize_t n = write(in_pipe[1], options.stdin_data.data() + off, options.stdin_data.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
  }
  close(in_pipe[1]);

  auto deadline = options.timeout ? std::chrono::steady_clock::now() + *options.timeout
                                  : std::chrono::steady_clock::time_point::max();
  int open_fds = (options.capture_stdout ? 1 : 0) + (options.capture_stderr ? 1 : 0);
  char buf[65536];
  while (open_fds > 0) {
    pollfd fds[2];
    int nfds = 0;
    if (out_pipe[0] >= 0 && options.capture_stdout) fds[nfds++] = {out_pipe[0], POLLIN, 0};
    if (err_pipe[0] >= 0 && options.capture_stderr) fds[nfds++] = {err_pipe[0], POLLIN, 0};
    int wait_ms = -1;
    if (options.timeout) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        result.timed_out = true;
        kill(-pid, SIGKILL);
        break;
      }
      wait_ms = static_cast<int>(std::min<long long>(left.count(), 1000));
    }
    int r = poll(fds, nfds, wait_ms);
    if (r < 0 && errno == EINTR) continue;
    for (int i = 0; i < nfds; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      std::string& sink = fds[i].fd == out_pipe[0] ? result.out : result.err;
      if (n <= 0) {
        close(fds[i].fd);
        (fds[i].fd == out_pipe[0] ? out_pipe[0] : err_pipe[0]) = -1;
        --open_fds;
      } else if (sink.size() < options.max_capture) {
        sink.append(buf, std::min(static_cast<size_t>(n), options.max_capture - sink.size()));
      }
    }
  }
  if (out_pipe[0] >= 0) close(out_pipe[0]);
  if (err_pipe[0] >= 0) close(err_pipe[0]);

  int status = 0;
  for (;;) {
    pid_t w = waitpid(pid, &status, options.timeout ? WNOHANG : 0);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    if (w == 0) {
      if (std::chrono::steady_clock::now() >= deadline) {
        result.timed_out = true;
        kill(-pid, SIGKILL);
      }
      usleep(20000);
    }
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  if (result.exit_code == 127 && result.err.empty()) result.err = "could not execute " + prog;
  return result;
}

ProcessResult run_checked(const std::vector<std::string>& argv, const ProcessOptions& options) {
  auto result = run_process(argv, options);
  if (result.ok()) return result;
  std::string why = result.timed_out ? "timed out"
                    : result.signal  ? "was killed by signal " + std::to_string(result.signal)
                                     : "exited with status " + std::to_string(result.exit_code);
  std::string msg = "command " + why + ": " + shell_quote(argv);
  auto tail = tail_lines(result.err.empty() ? result.out : result.err, 12);
  if (!tail.empty()) msg += "\n" + tail;
  throw Error(msg);
}

}  // namespace smtlab
