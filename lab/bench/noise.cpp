#include "bench/noise.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include "util/error.hpp"

namespace smtlab::bench {

Noise::Noise(int workers, int load_pct, std::string program)
    : workers_(workers), load_(load_pct), program_(std::move(program)) {}

Noise::~Noise() { stop(); }

pid_t Noise::launch() {
  std::vector<std::string> args = {program_, "--cpu", std::to_string(workers_), "--cpu-load", std::to_string(load_),
                                   "--quiet"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int errp[2];
  if (pipe2(errp, O_CLOEXEC) != 0) throw Error("noise: pipe failed");
  pid_t pid = fork();
  if (pid < 0) throw Error("noise: fork failed: " + std::string(strerror(errno)));
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // a natively killed agent takes its noise along
    int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) {
      dup2(devnull, 0);
      dup2(devnull, 1);
    }
    execvp(argv[0], argv.data());
    int e = errno;
    (void)!write(errp[1], &e, sizeof e);
    _exit(127);
  }
  close(errp[1]);
  int e = 0;
  ssize_t n;
  do n = read(errp[0], &e, sizeof e); while (n < 0 && errno == EINTR);
  close(errp[0]);
  if (n == sizeof e) {
    waitpid(pid, nullptr, 0);
    throw Error("noise: cannot run " + program_ + ": " + strerror(e), "install stress-ng in the guest image");
  }
  return pid;
}

void Noise::start() {
  stop_ = false;
  pid_ = launch();
  thread_ = std::thread([this] { loop(); });
}

void Noise::loop() {
  while (!stop_) {
    int st;
    pid_t p = pid_;
    if (waitpid(p, &st, 0) < 0 && errno == EINTR) continue;
    if (stop_) break;
    ++restarts_;
    std::this_thread::sleep_for(std::chrono::seconds(1));  // do not spin on a failing stress-ng
    try {
      pid_ = launch();
    } catch (const std::exception& e) {
      std::lock_guard lock(failure_mutex_);
      failure_ = program_ + " exited and could not be started again: " + describe(e);
      return;
    }
  }
}

std::string Noise::failure() const {
  std::lock_guard lock(failure_mutex_);
  return failure_;
}

void Noise::stop() {
  stop_ = true;
  pid_t p = pid_;
  if (p > 0) {
    kill(-p, SIGKILL);
    kill(p, SIGKILL);
  }
  if (thread_.joinable()) thread_.join();
  pid_ = -1;
}

}  // namespace smtlab::bench
