#include "guest/pid1.hpp"

#include <fcntl.h>
#include <linux/random.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace smtlab::guest {

bool is_pid1() { return getpid() == 1; }

namespace {
bool exists(const char* p) {
  struct stat st {};
  return stat(p, &st) == 0;
}
void try_mount(std::string& problems, const char* src, const char* dir, const char* type, bool needed) {
  if (!needed) return;
  if (auto problem = mount_on(src, dir, type); !problem.empty()) problems += problem + "\n";
}
}  // namespace

std::string mount_on(const char* source, const char* target, const char* type, unsigned long flags, const char* data) {
  mkdir(target, 0755);
  if (mount(source, target, type, flags, data) != 0 && errno != EBUSY)
    return std::string("cannot mount ") + type + " on " + target + ": " + strerror(errno);
  return "";
}

std::string mount_basics() {
  std::string problems;
  try_mount(problems, "proc", "/proc", "proc", !exists("/proc/self"));
  try_mount(problems, "sysfs", "/sys", "sysfs", !exists("/sys/class"));
  try_mount(problems, "devtmpfs", "/dev", "devtmpfs", !exists("/dev/null"));
  try_mount(problems, "tmpfs", "/tmp", "tmpfs", true);
  if (auto lo = ensure_loopback_up(); !lo.empty()) problems += lo + "\n";
  // Started without a console (no /dev/console in the initramfs), fds 0-2 are closed: fill them so
  // that the results port never lands on 1 or 2, where progress lines go.
  for (int fd = 0; fd <= 2; ++fd)
    if (fcntl(fd, F_GETFD) < 0) {
      int c = open("/dev/console", O_RDWR | O_NOCTTY);
      if (c < 0) c = open("/dev/null", O_RDWR);
      if (c >= 0 && c != fd) {
        dup2(c, fd);
        close(c);
      }
    }
  return problems;
}

std::string credit_random_seed() {
  const char* path = "/random-seed";
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return "";
  constexpr std::size_t kSeed = 32;
  alignas(rand_pool_info) unsigned char buffer[sizeof(rand_pool_info) + kSeed] = {};
  auto* info = reinterpret_cast<rand_pool_info*>(buffer);
  unsigned char* bytes = buffer + sizeof(rand_pool_info);
  ssize_t n = read(fd, bytes, kSeed);
  close(fd);
  unlink(path);
  if (n != static_cast<ssize_t>(kSeed)) return std::string("random seed ") + path + ": short read";
  info->entropy_count = 8 * static_cast<int>(kSeed);
  info->buf_size = static_cast<int>(kSeed);
  int rnd = open("/dev/urandom", O_WRONLY | O_CLOEXEC);
  if (rnd < 0) return std::string("cannot open /dev/urandom: ") + strerror(errno);
  int rc = ioctl(rnd, RNDADDENTROPY, info);
  int err = errno;
  close(rnd);
  explicit_bzero(buffer, sizeof buffer);
  if (rc != 0) return std::string("RNDADDENTROPY failed: ") + strerror(err);
  return "";
}

std::string ensure_loopback_up() {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::string("cannot check the loopback interface: ") + strerror(errno);
  ifreq ifr {};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  std::string problem;
  if (ioctl(fd, SIOCGIFFLAGS, &ifr) != 0) {
    problem = std::string("cannot read the flags of interface lo: ") + strerror(errno);
  } else if (!(ifr.ifr_flags & IFF_UP)) {
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP | IFF_RUNNING);
    if (ioctl(fd, SIOCSIFFLAGS, &ifr) != 0)
      problem = std::string("cannot bring the loopback interface lo up: ") + strerror(errno);
  }
  close(fd);
  return problem;
}

void power_off(int exit_code) {
  if (!is_pid1()) std::exit(exit_code);
  sync();
  reboot(RB_POWER_OFF);
  for (;;) pause();  // PID 1 must never exit (kernel panic)
}

void progress(const std::string& message) {
  std::string line = "smtlab-guest: " + message + "\n";
  (void)!write(2, line.data(), line.size());
}

}  // namespace smtlab::guest
