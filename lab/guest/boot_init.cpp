#include "guest/boot_init.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "bench/procfs.hpp"
#include "guest/agent.hpp"
#include "guest/cmdline.hpp"
#include "guest/pid1.hpp"
#include "util/error.hpp"

namespace smtlab::guest {
namespace {

constexpr const char* kNewRoot = "/newroot";
constexpr double kRootWaitS = 10.0;
constexpr std::size_t kJobLimit = 1 << 20;  // the agent refuses larger jobs anyway

std::string errno_text() { return std::strerror(errno); }

double boottime_s() {
  timespec ts{};
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

[[noreturn]] void fail(const std::string& what) {
  const std::string line = "smtlab-init: error: " + what + "\n";
  (void)!write(2, line.data(), line.size());
  sync();
  reboot(RB_POWER_OFF);
  for (;;) pause();  // PID 1 must not exit
}

void mount_or_fail(const char* source, const char* target, const char* type, unsigned long flags = 0,
                   const char* data = nullptr) {
  if (auto problem = mount_on(source, target, type, flags, data); !problem.empty()) fail(problem);
}

void load_module(const std::string& name) {
  const std::string path = "/lib/modules/" + name + ".ko";
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot open " + path + ": " + errno_text());
  long rc = syscall(SYS_finit_module, fd, "", 0);
  int err = errno;
  close(fd);
  if (rc != 0 && err != EEXIST) fail("cannot load module " + name + ": " + std::strerror(err));
}

void wait_for_block_device(const std::string& device) {
  const double deadline = boottime_s() + kRootWaitS;
  for (;;) {
    struct stat st{};
    if (stat(device.c_str(), &st) == 0) {
      if (!S_ISBLK(st.st_mode)) fail("root " + device + " is not a block device");
      return;
    }
    if (boottime_s() > deadline)
      fail("root device " + device + " did not appear within " + std::to_string(static_cast<int>(kRootWaitS)) + " s");
    timespec pause{0, 5'000'000};
    nanosleep(&pause, nullptr);
  }
}

void copy_small_file(const char* from, const std::string& to, mode_t mode) {
  auto text = bench::read_proc(from, kJobLimit + 1);
  if (!text) fail(std::string("cannot read ") + from + ": " + errno_text());
  int fd = open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) fail("cannot create " + to + ": " + errno_text());
  std::size_t done = 0;
  while (done < text->size()) {
    ssize_t n = write(fd, text->data() + done, text->size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("cannot write " + to + ": " + errno_text());
    done += static_cast<std::size_t>(n);
  }
  close(fd);
}

// Empties the initramfs (as switch_root does, so its pages go back to the guest), staying on its
// file system: the new root mounted inside it is left alone. Best effort.
void remove_tree(int dir, dev_t device) {
  int listing = dup(dir);
  DIR* d = listing < 0 ? nullptr : fdopendir(listing);
  if (!d) {
    if (listing >= 0) close(listing);
    return;
  }
  while (dirent* e = readdir(d)) {
    if (!std::strcmp(e->d_name, ".") || !std::strcmp(e->d_name, "..")) continue;
    struct stat st{};
    if (fstatat(dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_dev != device) continue;
    if (S_ISDIR(st.st_mode)) {
      int sub = openat(dir, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub < 0) continue;
      remove_tree(sub, device);
      close(sub);
      unlinkat(dir, e->d_name, AT_REMOVEDIR);
    } else {
      unlinkat(dir, e->d_name, 0);
    }
  }
  closedir(d);
}

// Moves /dev, /proc and /sys under the new root, empties the initramfs and makes the new root "/".
void switch_to_new_root() {
  for (const char* fs : {"/dev", "/proc", "/sys"}) {
    const std::string target = std::string(kNewRoot) + fs;
    struct stat st{};
    if (stat(target.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      if (mount(fs, target.c_str(), nullptr, MS_MOVE, nullptr) != 0)
        fail(std::string("cannot move ") + fs + " to " + target + ": " + errno_text());
    } else {
      umount2(fs, MNT_DETACH);
    }
  }
  struct stat root{};
  int top = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (top >= 0 && fstat(top, &root) == 0) remove_tree(top, root.st_dev);
  if (top >= 0) close(top);
  if (chdir(kNewRoot) != 0) fail(std::string("cannot enter ") + kNewRoot + ": " + errno_text());
  if (mount(".", "/", nullptr, MS_MOVE, nullptr) != 0) fail("cannot move the root disk to /: " + errno_text());
  if (chroot(".") != 0 || chdir("/") != 0) fail("cannot change root to the root disk: " + errno_text());
}

}  // namespace

std::optional<std::string> root_from_cmdline(std::string_view cmdline) {
  const auto roots = cmdline_values(cmdline, "smtlab.root");
  if (roots.empty() || roots.back().empty()) return std::nullopt;  // the last word counts, as in the kernel
  return roots.back();
}

std::vector<std::string> parse_module_list(std::string_view text) {
  std::vector<std::string> names;
  std::size_t line_no = 0, i = 0;
  while (i < text.size()) {
    std::size_t end = text.find('\n', i);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(i, end - i);
    ++line_no;
    i = end + 1;
    if (line.empty()) continue;
    const bool valid = line.size() <= 64 && line.find_first_not_of(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == std::string_view::npos;
    if (!valid) throw Error("module list line " + std::to_string(line_no) + " is not a module name");
    names.emplace_back(line);
  }
  return names;
}

bool is_boot_init(const char* argv0) { return argv0 && std::strcmp(argv0, "/init") == 0 && is_pid1(); }

void run_boot_init() {
  const double start = boottime_s();
  mount_or_fail("proc", "/proc", "proc");
  mount_or_fail("sysfs", "/sys", "sysfs");
  mount_or_fail("devtmpfs", "/dev", "devtmpfs");
  // The host's seed, as early as possible: the kernel's RNG is not ready until it is credited.
  if (auto seed = credit_random_seed(); !seed.empty()) progress("warning: " + seed);

  // Always in the initramfs smtlab builds, empty when the kernel has everything built in.
  auto list = bench::read_proc(kModuleListPath, 64 << 10);
  if (!list) fail(std::string("cannot read ") + kModuleListPath + ": " + errno_text());
  std::vector<std::string> modules;
  try {
    modules = parse_module_list(*list);
  } catch (const std::exception& e) {
    fail(std::string(kModuleListPath) + ": " + e.what());
  }
  for (const auto& m : modules) load_module(m);
  const double loaded = boottime_s();

  auto cmdline = bench::read_proc("/proc/cmdline", 64 << 10);
  if (!cmdline) fail("cannot read /proc/cmdline: " + errno_text());
  const auto root = root_from_cmdline(*cmdline);
  if (!root) fail("no smtlab.root= on the kernel command line");

  if ((*root)[0] != '/') fail("smtlab.root=" + *root + " is not a device path (/dev/...)");
  wait_for_block_device(*root);
  const double appeared = boottime_s();
  mount_or_fail(root->c_str(), kNewRoot, "ext4");
  const double mounted = boottime_s();
  const std::string run = std::string(kNewRoot) + "/run";
  mkdir(run.c_str(), 0755);
  mount_or_fail("tmpfs", run.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755");
  const std::string run_smtlab = run + "/smtlab";
  if (mkdir(run_smtlab.c_str(), 0755) != 0 && errno != EEXIST) fail("cannot create /run/smtlab: " + errno_text());
  copy_small_file("/job.json", run_smtlab + "/job.json", 0644);
  switch_to_new_root();
  char line[160];
  std::snprintf(line, sizeof line,
                "boot init: %zu modules %.3f s, %s after %.3f s, mounted %.3f s, switched %.3f s (uptime %.2f s)",
                modules.size(), loaded - start, root->c_str(), appeared - loaded, mounted - appeared,
                boottime_s() - mounted, boottime_s());
  progress(line);
  AgentOptions agent;
  agent.job_file = "/run/smtlab/job.json";
  power_off(run_agent(agent));  // run_agent powers off itself as PID 1; this is a backstop
}

}  // namespace smtlab::guest
