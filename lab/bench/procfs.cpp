#include "bench/procfs.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <sstream>

namespace smtlab::bench {

std::optional<std::string> read_proc(const std::string& path, size_t max_bytes) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buf[16384];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(std::min<size_t>(n, max_bytes - std::min(max_bytes, out.size()))));
    if (out.size() >= max_bytes) break;
  }
  close(fd);
  return out;
}

ProcStat parse_proc_stat(const std::string& text) {
  ProcStat s;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string key;
    ls >> key;
    if (key.rfind("cpu", 0) == 0) {
      CpuTimes t;
      ls >> t.user >> t.nice >> t.system >> t.idle >> t.iowait >> t.irq >> t.softirq >> t.steal;
      if (key == "cpu") s.all = t;
      else {
        try {
          s.cpus[std::stoi(key.substr(3))] = t;
        } catch (...) {
        }
      }
    } else if (key == "ctxt") ls >> s.ctxt;
    else if (key == "intr") ls >> s.intr;
    else if (key == "procs_running") ls >> s.procs_running;
    else if (key == "procs_blocked") ls >> s.procs_blocked;
  }
  return s;
}

std::map<std::string, uint64_t> parse_key_values(const std::string& text) {
  std::map<std::string, uint64_t> m;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string key;
    uint64_t v;
    if (!(ls >> key >> v)) continue;
    if (!key.empty() && key.back() == ':') key.pop_back();
    m[key] = v;
  }
  return m;
}

}  // namespace smtlab::bench
