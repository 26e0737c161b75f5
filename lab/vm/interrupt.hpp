#pragma once
// SIGINT / SIGTERM / SIGHUP turned into a flag that waiters check, so that teardown runs.
// A second signal escalates: the process exits at once (the guardian then kills its guests).
#include "util/error.hpp"

namespace smtlab::vm {

// Installs the handlers (idempotent). Call early in main().
void install_interrupt_handlers();

// True once a handled signal arrived (or request_interrupt() was called).
bool interrupted();
int interrupt_signal();  // the signal number, 0 when none (or requested programmatically)

// A file descriptor that becomes readable once interrupted (for poll()-based waiters).
int interrupt_fd();

// Marks the process as interrupted (tests; or a caller deciding to stop everything).
void request_interrupt();

// Thrown by waits that stopped because of an interrupt.
class Interrupted : public Error {
 public:
  explicit Interrupted(int signal);
  int signal() const { return signal_; }

 private:
  int signal_;
};

// Throws Interrupted when interrupted() is true.
void throw_if_interrupted();

}  // namespace smtlab::vm
