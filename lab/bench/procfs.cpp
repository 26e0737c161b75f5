#include "bench/procfs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
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

std::vector<TcpSocket> parse_tcp_table(const std::string& text) {
  // "  sl  local_address rem_address   st tx_queue rx_queue ...": hex "0100007F:1F40", hex state,
  // hex "tx:rx". The header line and anything malformed are skipped.
  std::vector<TcpSocket> out;
  std::istringstream in(text);
  std::string line;
  auto port_of = [](const std::string& addr, unsigned& port) {
    auto colon = addr.find(':');
    if (colon == std::string::npos || colon + 1 >= addr.size()) return false;
    try {
      size_t used = 0;
      unsigned long v = std::stoul(addr.substr(colon + 1), &used, 16);
      if (used != addr.size() - colon - 1 || v > 65535) return false;
      port = static_cast<unsigned>(v);
      return true;
    } catch (...) {
      return false;
    }
  };
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string slot, local, remote, state, queues;
    if (!(ls >> slot >> local >> remote >> state >> queues) || slot.empty() || slot.back() != ':') continue;
    TcpSocket s;
    auto colon = queues.find(':');
    if (!port_of(local, s.local_port) || !port_of(remote, s.remote_port) || colon == std::string::npos) continue;
    try {
      s.state = std::stoi(state, nullptr, 16);
      s.tx_queue = std::stoull(queues.substr(0, colon), nullptr, 16);
      s.rx_queue = std::stoull(queues.substr(colon + 1), nullptr, 16);
    } catch (...) {
      continue;
    }
    out.push_back(s);
  }
  return out;
}

const char* tcp_state_name(int state) {
  static const char* const names[] = {"?",         "ESTABLISHED", "SYN_SENT",   "SYN_RECV", "FIN_WAIT1", "FIN_WAIT2",
                                      "TIME_WAIT", "CLOSE",       "CLOSE_WAIT", "LAST_ACK", "LISTEN",    "CLOSING"};
  return state >= 1 && state <= 11 ? names[state] : names[0];
}

std::string describe_threads(int pid, const std::string& proc) {
  const std::string dir = proc + "/" + std::to_string(pid) + "/task";
  DIR* d = opendir(dir.c_str());
  if (!d) return "gone";
  std::map<std::string, int> groups;  // "S in sk_wait_data" -> count
  int threads = 0;
  while (auto* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const std::string task = dir + "/" + e->d_name;
    // The state is the first field after the parenthesised command (which may hold spaces).
    auto stat = read_proc(task + "/stat", 4096).value_or("");
    auto close_paren = stat.rfind(')');
    if (close_paren == std::string::npos || close_paren + 2 >= stat.size()) continue;
    std::string what(1, stat[close_paren + 2]);
    auto wchan = read_proc(task + "/wchan", 256).value_or("");
    if (!wchan.empty() && wchan != "0") {
      // Symbol names only: anything else (a future format) is left out rather than echoed.
      bool plain = wchan.size() <= 64;
      for (char ch : wchan) plain = plain && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.');
      if (plain) what += " in " + wchan;
    }
    ++groups[what];
    ++threads;
  }
  closedir(d);
  std::vector<std::pair<int, std::string>> sorted;
  for (auto& [what, n] : groups) sorted.emplace_back(-n, what);
  std::sort(sorted.begin(), sorted.end());
  std::string out = std::to_string(threads) + (threads == 1 ? " thread" : " threads");
  for (size_t i = 0; i < sorted.size(); ++i)
    out += (i == 0 ? ": " : ", ") + std::to_string(-sorted[i].first) + " " + sorted[i].second;
  return out;
}

}  // namespace smtlab::bench
