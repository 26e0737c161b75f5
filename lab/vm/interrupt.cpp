#include "vm/interrupt.hpp"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

namespace smtlab::vm {
namespace {

std::atomic<int> g_signal{0};
std::atomic<bool> g_interrupted{false};
int g_pipe[2] = {-1, -1};
std::once_flag g_pipe_once;

void make_pipe() {
  std::call_once(g_pipe_once, [] {
    if (pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) g_pipe[0] = g_pipe[1] = -1;
  });
}

void on_signal(int sig) {
  if (g_interrupted.exchange(true)) {
    // Second signal: leave now. The guardian process kills the guests we leave behind.
    static const char msg[] = "\nsmtlab: second interrupt, exiting without teardown\n";
    ssize_t ignored = write(2, msg, sizeof msg - 1);
    (void)ignored;
    _exit(128 + sig);
  }
  g_signal = sig;
  if (g_pipe[1] >= 0) {
    char c = 1;
    ssize_t ignored = write(g_pipe[1], &c, 1);
    (void)ignored;
  }
}

}  // namespace

Interrupted::Interrupted(int signal)
    : Error(signal ? std::string("interrupted by ") + strsignal(signal) : "interrupted",
            "press Ctrl-C again to exit at once without waiting for teardown"),
      signal_(signal) {}

void install_interrupt_handlers() {
  make_pipe();
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

bool interrupted() { return g_interrupted.load(); }
int interrupt_signal() { return g_signal.load(); }

int interrupt_fd() {
  make_pipe();
  return g_pipe[0];
}

void request_interrupt() {
  make_pipe();
  if (!g_interrupted.exchange(true) && g_pipe[1] >= 0) {
    char c = 1;
    ssize_t ignored = write(g_pipe[1], &c, 1);
    (void)ignored;
  }
}

void throw_if_interrupted() {
  if (interrupted()) throw Interrupted(interrupt_signal());
}

}  // namespace smtlab::vm
