#pragma once
// Parsers for the /proc files the monitors read (bounded reads; malformed lines are skipped).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace smtlab::bench {

// Reads a (pseudo-)file completely, at most max_bytes; nullopt when it cannot be opened.
std::optional<std::string> read_proc(const std::string& path, size_t max_bytes = 4 << 20);

struct CpuTimes {  // jiffies
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  uint64_t total() const { return user + nice + system + idle + iowait + irq + softirq + steal; }
  uint64_t busy() const { return total() - idle - iowait; }
};

struct ProcStat {
  CpuTimes all;
  std::map<int, CpuTimes> cpus;
  uint64_t ctxt = 0, intr = 0, procs_running = 0, procs_blocked = 0;
};
ProcStat parse_proc_stat(const std::string& text);

// "Key: 123 kB" (meminfo) and "key 123" (vmstat) files, as key -> number.
std::map<std::string, uint64_t> parse_key_values(const std::string& text);

// One IPv4 socket of /proc/net/tcp: ports, state and the bytes queued each way.
struct TcpSocket {
  unsigned local_port = 0, remote_port = 0;
  int state = 0;              // the kernel's TCP_* number (1 established, 10 listen, ...)
  uint64_t tx_queue = 0;      // sent, not yet acknowledged by the peer
  uint64_t rx_queue = 0;      // received, not yet read by the process
};
std::vector<TcpSocket> parse_tcp_table(const std::string& text);
const char* tcp_state_name(int state);  // "ESTABLISHED", "CLOSE_WAIT", ...; "?" for others

// What the threads of a process are doing, from <proc>/<pid>/task/*/{stat,wchan}, grouped:
// "7 threads: 4 S in sk_wait_data, 2 S in futex_wait_queue, 1 R". "gone" when it has no /proc entry.
std::string describe_threads(int pid, const std::string& proc = "/proc");

}  // namespace smtlab::bench
