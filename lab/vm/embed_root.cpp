#include "vm/embed_root.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include "util/error.hpp"
#include "util/files.hpp"
#include "util/log.hpp"

namespace smtlab::vm {
namespace fs = std::filesystem;
namespace {

// libvirt.log is rotated beyond this size when a process takes the slot (tidy_slot).
constexpr std::uintmax_t kLibvirtLogCap = 1 << 20;

fs::path private_dir(const fs::path& dir) {
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw Error("cannot create " + dir.string() + ": " + strerror(errno));
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
    throw Error(dir.string() + " is not a directory owned by this user",
                "remove it, or set SMTLAB_RUN_DIR to a private directory");
  chmod(dir.c_str(), 0700);
  return dir;
}

fs::path choose_base() {
  if (const char* env = getenv("SMTLAB_RUN_DIR"); env && *env) return private_dir(env);
  std::string uid = std::to_string(geteuid());
  if (access("/run", W_OK) == 0) return private_dir("/run/smtlab-" + uid);
  if (const char* xdg = getenv("XDG_RUNTIME_DIR"); xdg && *xdg && std::string(xdg).size() < 40)
    return private_dir(fs::path(xdg) / "smtlab");
  return private_dir("/tmp/smtlab-" + uid);
}

}  // namespace

bool process_gone(int pid) {
  std::string stat = read_file_head("/proc/" + std::to_string(pid) + "/stat", 512);
  if (stat.empty()) return true;
  auto paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() &&
         (stat[paren + 2] == 'Z' || stat[paren + 2] == 'X');
}

namespace {

// True when `pid` sees the same file system as we do (same mount namespace and root directory),
// so that the root path in its command line is the same directory as ours. A process in another
// container (or a chroot) whose own /run holds a same-named root is someone else's guest.
bool shares_our_filesystem(const fs::path& proc) {
  std::error_code ec1, ec2;
  auto ns = fs::read_symlink(proc / "ns" / "mnt", ec1);
  auto our_ns = fs::read_symlink("/proc/self/ns/mnt", ec2);
  if (ec1 || ec2 || ns != our_ns) return false;
  struct stat theirs {}, ours {};
  if (stat((proc / "root").c_str(), &theirs) != 0 || stat("/proc/self/root", &ours) != 0) return false;
  return theirs.st_dev == ours.st_dev && theirs.st_ino == ours.st_ino;
}

}  // namespace

std::vector<int> qemu_processes_under(const fs::path& root) {
  std::vector<int> out;
  std::string needle = root.string();
  if (needle.empty()) return out;
  if (needle.back() != '/') needle += '/';
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = read_file_head(entry.path() / "cmdline", 256 << 10);
    if (cmdline.empty()) continue;
    std::string argv0 = cmdline.substr(0, cmdline.find('\0'));
    if (argv0.find("qemu-system") == std::string::npos) continue;
    if (cmdline.find(needle) == std::string::npos) continue;
    if (!shares_our_filesystem(entry.path())) continue;
    int pid = std::stoi(name);
    if (!process_gone(pid)) out.push_back(pid);
  }
  return out;
}

void tidy_slot(const fs::path& root) {
  std::error_code ec;
  // A guest's QEMU log moves into its results when the guest is gone (vm::Domain); what is left
  // belongs to owners that died, and would pile up, one file per guest.
  fs::remove_all(root / "log" / "qemu", ec);
  // libvirt removes a domain's private directory when the domain stops; not when its owner died.
  for (const auto& d : fs::directory_iterator(root / "lib" / "qemu", ec)) {
    if (d.path().filename().string().rfind("domain-", 0) != 0) continue;
    std::error_code dec;
    fs::remove_all(d.path(), dec);
  }
  // libvirt's own log (warnings and errors, a few KiB per process): one generation kept.
  const auto log = root / "libvirt.log";
  if (fs::exists(log, ec) && fs::file_size(log, ec) > kLibvirtLogCap) fs::rename(log, root / "libvirt.log.old", ec);
}

int reap_stale(const fs::path& root) {
  int killed = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (true) {
    auto pids = qemu_processes_under(root);
    if (pids.empty()) break;
    for (int pid : pids)
      if (kill(pid, SIGKILL) == 0) ++killed;
    if (std::chrono::steady_clock::now() > deadline)
      throw Error("could not kill the QEMU processes left under " + root.string(),
                  "kill them by hand (pgrep -af qemu-system)");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // Status files of domains whose QEMU is gone: the driver would try to reconnect to them.
  std::error_code ec;
  fs::remove_all(root / "run", ec);
  return killed;
}

void write_embed_qemu_conf(const fs::path& root) {
  if (!fs::exists(root)) private_dir(root);
  private_dir(root / "etc");
  std::string conf =
      "# Written by smtlab for libvirt's embedded QEMU driver.\n"
      "stdio_handler = \"file\"\n"
      "# No cgroups: QEMU's threads are scheduled like any host process (as with plain QEMU),\n"
      "# not as one group competing with the rest of the host; pins still apply (affinity),\n"
      "# and a killed run leaves no cgroup directories behind.\n"
      "cgroup_controllers = [ ]\n";
  if (geteuid() == 0)
    conf +=
        "user = \"root\"\n"
        "group = \"root\"\n"
        "dynamic_ownership = 0\n"
        "security_driver = \"none\"\n";
  auto file = root / "etc" / "qemu.conf";
  if (read_file_head(file, 4096) != conf) write_file_atomic(file, conf);
}

const fs::path& process_embed_root() {
  static std::mutex mutex;
  static fs::path root;
  std::lock_guard lock(mutex);
  if (!root.empty()) return root;
  fs::path base = choose_base();
  for (int slot = 0; slot < 64; ++slot) {
    fs::path candidate = base / std::to_string(slot);
    fs::path lock_file = base / (std::to_string(slot) + ".lock");
    int fd = open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) throw Error("cannot create " + lock_file.string() + ": " + strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      close(fd);
      continue;
    }
    // Ours for the life of the process (fd deliberately kept open).
    private_dir(candidate);
    int reaped = reap_stale(candidate);
    if (reaped > 0)
      note("killed " + std::to_string(reaped) + " QEMU process(es) left by an earlier run in " +
           candidate.string());
    tidy_slot(candidate);
    write_embed_qemu_conf(candidate);
    root = candidate;
    return root;
  }
  throw Error("all 64 embedded-driver slots under " + base.string() + " are in use",
              "too many smtlab processes at once; wait for some to finish");
}

}  // namespace smtlab::vm
