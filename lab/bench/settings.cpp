#include "bench/settings.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>

#include "bench/coresched.hpp"
#include "bench/procfs.hpp"
#include "util/error.hpp"

namespace smtlab::bench {

namespace {

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\n");
  auto e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

void check_key(const std::string& kind, const std::string& key) {
  bool ok = !key.empty() && key.size() < 200;
  for (char c : key) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || c == '/');
  if (key.find("..") != std::string::npos || key[0] == '/' || key[0] == '.') ok = false;
  if (!ok) throw Error(kind + " key \"" + key + "\" is not a valid name", "use names like kernel.sched_autogroup_enabled");
}

bool exists(const std::string& p) {
  struct stat st {};
  return stat(p.c_str(), &st) == 0;
}

SettingResult write_and_read(const std::string& kind, const std::string& key, const std::string& value,
                             const std::string& path) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    throw Error(kind + " " + key + ": cannot open " + path + " for writing on kernel " + kernel_release() + ": " +
                strerror(errno));
  std::string data = value + "\n";
  ssize_t n = write(fd, data.data(), data.size());
  int e = errno;
  close(fd);
  if (n != static_cast<ssize_t>(data.size()))
    throw Error(kind + " " + key + " = \"" + value + "\": the kernel (" + kernel_release() + ") refused it: " +
                (n < 0 ? strerror(e) : "short write"));
  auto back = read_proc(path, 4096);
  if (!back) throw Error(kind + " " + key + ": cannot read back " + path);
  return {kind, key, value, trim(*back), path};
}

std::string list_dir(const std::string& dir) {
  std::string out;
  if (DIR* d = opendir(dir.c_str())) {
    while (auto* e = readdir(d))
      if (e->d_name[0] != '.' && e->d_type != DT_DIR) out += (out.empty() ? "" : ", ") + std::string(e->d_name);
    closedir(d);
  }
  return out;
}

}  // namespace

SettingResult apply_sysctl(const std::string& key, const std::string& value, const std::string& proc_sys) {
  check_key("sysctl", key);
  std::string rel = key;
  for (char& c : rel)
    if (c == '.') c = '/';
  std::string path = proc_sys + "/" + rel;
  if (!exists(path))
    throw Error("sysctl " + key + " does not exist on kernel " + kernel_release() + " (no " + path + ")",
                "check the name, or whether this kernel has the feature; drop it from the variant otherwise");
  return write_and_read("sysctl", key, value, path);
}

std::string ensure_debugfs() {
  if (exists("/sys/kernel/debug/sched")) return "";
  if (mount("debugfs", "/sys/kernel/debug", "debugfs", 0, nullptr) != 0 && errno != EBUSY)
    return std::string("cannot mount debugfs at /sys/kernel/debug: ") + strerror(errno);
  return "";
}

SettingResult apply_sched_tunable(const std::string& key, const std::string& value, const std::string& debugfs) {
  check_key("sched tunable", key);
  std::string why;
  if (debugfs == "/sys/kernel/debug") why = ensure_debugfs();
  std::string dir = debugfs + "/sched";
  std::string path = dir + "/" + key;
  if (!exists(path)) {
    std::string have = list_dir(dir);
    throw Error("sched tunable " + key + " does not exist on kernel " + kernel_release() + " (no " + path + ")" +
                    (why.empty() ? "" : "; " + why),
                have.empty() ? "the kernel needs CONFIG_SCHED_DEBUG and CONFIG_DEBUG_FS for /sys/kernel/debug/sched"
                             : "this kernel has: " + have);
  }
  return write_and_read("sched", key, value, path);
}

}  // namespace smtlab::bench
