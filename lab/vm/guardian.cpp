#include "vm/guardian.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <string>

#include "util/error.hpp"

namespace smtlab::vm {
namespace {

std::mutex g_mutex;
int g_pid = -1;
std::string g_root;

// --- everything below runs in the forked child: raw system calls only ---------------------

char g_needle[4096];
size_t g_needle_len = 0;
char g_cmdline[64 << 10];

bool contains(const char* hay, size_t n, const char* needle, size_t m) {
  if (m == 0 || n < m) return false;
  for (size_t i = 0; i + m <= n; ++i)
    if (hay[i] == needle[0] && memcmp(hay + i, needle, m) == 0) return true;
  return false;
}

// Kills matching QEMUs; returns how many were still alive (not zombies).
int sweep() {
  int alive = 0;
  int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return 0;
  alignas(8) char buf[8192];
  while (true) {
    long n = syscall(SYS_getdents64, dir, buf, sizeof buf);
    if (n <= 0) break;
    for (long off = 0; off < n;) {
      struct linux_dirent64 {
        unsigned long long d_ino;
        long long d_off;
        unsigned short d_reclen;
        unsigned char d_type;
        char d_name[];
      };
      auto* d = reinterpret_cast<linux_dirent64*>(buf + off);
      off += d->d_reclen;
      int pid = 0;
      const char* p = d->d_name;
      if (*p < '1' || *p > '9') continue;
      for (; *p >= '0' && *p <= '9'; ++p) pid = pid * 10 + (*p - '0');
      if (*p != '\0') continue;
      char path[64] = "/proc/";
      size_t len = 6;
      for (const char* q = d->d_name; *q && len < 40; ++q) path[len++] = *q;
      memcpy(path + len, "/cmdline", 9);
      int fd = open(path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      size_t got = 0;
      while (got < sizeof g_cmdline) {
        ssize_t r = read(fd, g_cmdline + got, sizeof g_cmdline - got);
        if (r <= 0) break;
        got += static_cast<size_t>(r);
      }
      close(fd);
      if (got == 0) continue;
      size_t argv0 = strnlen(g_cmdline, got);
      if (!contains(g_cmdline, argv0, "qemu-system", 11)) continue;
      if (!contains(g_cmdline, got, g_needle, g_needle_len)) continue;
      // Zombies are dead already.
      memcpy(path + len, "/stat", 6);
      fd = open(path, O_RDONLY | O_CLOEXEC);
      char st[512];
      ssize_t sn = fd >= 0 ? read(fd, st, sizeof st) : -1;
      if (fd >= 0) close(fd);
      bool zombie = false;
      for (ssize_t i = sn - 1; i > 0; --i)
        if (st[i] == ')') {
          zombie = i + 2 < sn && (st[i + 2] == 'Z' || st[i + 2] == 'X');
          break;
        }
      if (zombie) continue;
      ++alive;
      kill(pid, SIGKILL);
    }
  }
  close(dir);
  return alive;
}

[[noreturn]] void guardian_child(int read_fd) {
  setsid();
  prctl(PR_SET_NAME, "smtlab-guard", 0, 0, 0);  // ps shows it; its cmdline is still smtlab's
  if (chdir("/") != 0) {
  }
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT}) sigaction(sig, &ign, nullptr);
  int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd >= 0) {
    dup2(null_fd, 0);
    dup2(null_fd, 1);
  }
  // Keep only stdin/stdout/stderr and the pipe: no lock files, sockets or libvirt descriptors.
  if (read_fd > 3) syscall(SYS_close_range, 3u, static_cast<unsigned>(read_fd - 1), 0u);
  syscall(SYS_close_range, static_cast<unsigned>(read_fd + 1), ~0u, 0u);
  char c;
  while (true) {
    ssize_t r = read(read_fd, &c, 1);
    if (r == 0) break;
    if (r < 0 && errno != EINTR) break;
  }
  // Our parent is gone (or closed the pipe on purpose). Kill its guests, for up to ~10 s.
  int killed_rounds = 0;
  for (int round = 0; round < 100; ++round) {
    if (sweep() == 0) break;
    ++killed_rounds;
    struct timespec ts {0, 100 * 1000 * 1000};
    nanosleep(&ts, nullptr);
  }
  if (killed_rounds > 0) {
    static const char msg[] = "smtlab-guardian: smtlab died; killed the QEMU processes it left\n";
    ssize_t ignored = write(2, msg, sizeof msg - 1);
    (void)ignored;
  }
  _exit(0);
}

}  // namespace

void start_guardian(const std::filesystem::path& root) {
  std::lock_guard lock(g_mutex);
  if (g_pid > 0) {
    if (g_root == root.string()) return;
    throw Error("internal: a guardian already watches " + g_root + ", not " + root.string());
  }
  std::string needle = root.string();
  if (needle.empty() || needle.size() + 2 > sizeof g_needle)
    throw Error("internal: guardian root path is empty or too long");
  if (needle.back() != '/') needle += '/';
  memcpy(g_needle, needle.data(), needle.size());
  g_needle_len = needle.size();
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    throw Error(std::string("cannot create the guardian's pipe: ") + strerror(errno));
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    throw Error(std::string("cannot fork the guardian: ") + strerror(errno));
  }
  if (pid == 0) {
    close(fds[1]);
    guardian_child(fds[0]);
  }
  close(fds[0]);
  // fds[1] stays open (close-on-exec) until this process exits; that EOF wakes the guardian.
  g_pid = pid;
  g_root = root.string();
}

int guardian_pid() {
  std::lock_guard lock(g_mutex);
  return g_pid;
}

}  // namespace smtlab::vm
