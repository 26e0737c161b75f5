#pragma once
// Core scheduling (prctl PR_SCHED_CORE): one cookie per benchmark so that only its own tasks
// share a core's siblings. Kernels without CONFIG_SCHED_CORE fail the prctl with EINVAL.
#include <string>
#include <sys/types.h>

namespace smtlab::bench {

// Creates a new cookie for the calling process (all its threads; inherited by children it
// forks afterwards). Returns 0 or the errno. Safe between fork and exec (no allocation).
int coresched_create_self();
// Copies the cookie of task `pid` to the calling thread (inherited by later threads/children).
int coresched_share_from(pid_t pid);  // 0 or errno
// The cookie of task `pid` (0 = self); throws smtlab::Error on failure.
unsigned long long coresched_cookie(pid_t pid = 0);

// A user-facing message for errno `err` from the calls above ("kernel 6.1.0-28-cloud-amd64 has
// no core scheduling ...").
std::string coresched_error(int err);

// Forks a probe that creates a cookie and reads it back: returns the (non-zero) cookie or throws
// smtlab::Error with coresched_error(). Leaves the caller's own cookie untouched.
unsigned long long coresched_probe();

// uname -r.
std::string kernel_release();

}  // namespace smtlab::bench
