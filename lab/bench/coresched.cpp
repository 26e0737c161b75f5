#include "bench/coresched.hpp"

#include <sys/prctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/error.hpp"

#ifndef PR_SCHED_CORE
#define PR_SCHED_CORE 62
#endif
#ifndef PR_SCHED_CORE_GET
#define PR_SCHED_CORE_GET 0
#define PR_SCHED_CORE_CREATE 1
#define PR_SCHED_CORE_SHARE_TO 2
#define PR_SCHED_CORE_SHARE_FROM 3
#endif

namespace smtlab::bench {

namespace {
constexpr unsigned long kPidtypePid = 0;   // enum pid_type: PIDTYPE_PID
constexpr unsigned long kPidtypeTgid = 1;  // PIDTYPE_TGID
}  // namespace

std::string kernel_release() {
  struct utsname u {};
  if (uname(&u) != 0) return "unknown";
  return u.release;
}

int coresched_create_self() {
  if (prctl(PR_SCHED_CORE, PR_SCHED_CORE_CREATE, 0, kPidtypeTgid, 0) != 0) return errno;
  return 0;
}

int coresched_share_from(pid_t pid) {
  if (prctl(PR_SCHED_CORE, PR_SCHED_CORE_SHARE_FROM, pid, kPidtypePid, 0) != 0) return errno;
  return 0;
}

unsigned long long coresched_cookie(pid_t pid) {
  unsigned long long cookie = 0;
  if (prctl(PR_SCHED_CORE, PR_SCHED_CORE_GET, pid, kPidtypePid, &cookie) != 0)
    throw Error(coresched_error(errno));
  return cookie;
}

std::string coresched_error(int err) {
  std::string k = kernel_release();
  if (err == EINVAL)
    return "core scheduling is not available on kernel " + k +
           ": prctl(PR_SCHED_CORE) failed with EINVAL (the kernel is built without CONFIG_SCHED_CORE)";
  if (err == ENODEV)
    return "core scheduling is not available on kernel " + k +
           ": prctl(PR_SCHED_CORE) failed with ENODEV (no SMT: the CPUs have no siblings, or SMT is off)";
  if (err == EPERM)
    return "core scheduling on kernel " + k + ": prctl(PR_SCHED_CORE) was refused (EPERM: needs ptrace rights)";
  return "core scheduling on kernel " + k + ": prctl(PR_SCHED_CORE) failed: " + std::strerror(err);
}

unsigned long long coresched_probe() {
  int fds[2];
  if (pipe(fds) != 0) throw Error("coresched probe: pipe failed");
  pid_t pid = fork();
  if (pid < 0) throw Error("coresched probe: fork failed");
  if (pid == 0) {
    close(fds[0]);
    struct { int err; unsigned long long cookie; } msg{0, 0};
    msg.err = coresched_create_self();
    if (msg.err == 0 &&
        prctl(PR_SCHED_CORE, PR_SCHED_CORE_GET, 0, kPidtypePid, &msg.cookie) != 0)
      msg.err = errno;
    (void)!write(fds[1], &msg, sizeof msg);
    _exit(0);
  }
  close(fds[1]);
  struct { int err; unsigned long long cookie; } msg{EIO, 0};
  ssize_t n;
  do n = read(fds[0], &msg, sizeof msg); while (n < 0 && errno == EINTR);
  close(fds[0]);
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  if (n != static_cast<ssize_t>(sizeof msg)) throw Error("coresched probe: the probe process died");
  if (msg.err) throw Error(coresched_error(msg.err),
                           "use a kernel built with CONFIG_SCHED_CORE=y (and SMT siblings), or drop coresched from the variant");
  if (msg.cookie == 0) throw Error("core scheduling on kernel " + kernel_release() + ": the new cookie reads back as 0");
  return msg.cookie;
}

}  // namespace smtlab::bench
