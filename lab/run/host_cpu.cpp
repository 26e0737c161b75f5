#include "run/host_cpu.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "bench/procfs.hpp"
#include "util/cpulist.hpp"
#include "vm/reaper.hpp"

namespace smtlab::run {
namespace {

std::optional<uint64_t> ticks_of(const std::string& path) {
  auto text = bench::read_proc(path, 4096);
  if (!text) return std::nullopt;
  return process_cpu_ticks(*text);
}

double pct(uint64_t part, uint64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0;
}

double round1(double v) { return std::round(v * 10) / 10; }

}  // namespace

std::optional<uint64_t> process_cpu_ticks(std::string_view text) {
  // "pid (comm) state ppid ... utime stime ...": utime and stime are fields 14 and 15, i.e. the
  // 12th and 13th after the last ')'.
  auto close = text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view rest = text.substr(close + 1);
  uint64_t fields[2] = {0, 0};
  int index = 0;  // of the field after ')'
  size_t at = 0;
  while (at < rest.size() && index < 13) {
    while (at < rest.size() && rest[at] == ' ') ++at;
    size_t end = rest.find(' ', at);
    if (end == std::string_view::npos) end = rest.size();
    if (end == at) break;
    ++index;
    if (index == 12 || index == 13) {
      auto field = rest.substr(at, end - at);
      uint64_t v = 0;
      auto [p, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
      if (ec != std::errc() || p != field.data() + field.size()) return std::nullopt;
      fields[index - 12] = v;
    }
    at = end;
  }
  if (index < 13) return std::nullopt;
  return fields[0] + fields[1];
}

std::optional<HostCpuSample> sample_host_cpu(const std::vector<int>& qemu_pids, const std::vector<int>& cpus) {
  auto stat = bench::read_proc("/proc/stat", 1 << 20);
  if (!stat) return std::nullopt;
  auto parsed = bench::parse_proc_stat(*stat);
  bench::CpuTimes all = parsed.all;
  if (!cpus.empty()) {
    all = {};
    for (int id : cpus) {
      auto it = parsed.cpus.find(id);
      if (it == parsed.cpus.end()) return std::nullopt;
      const auto& c = it->second;
      all.user += c.user, all.nice += c.nice, all.system += c.system, all.idle += c.idle;
      all.iowait += c.iowait, all.irq += c.irq, all.softirq += c.softirq, all.steal += c.steal;
    }
  }
  if (all.total() == 0) return std::nullopt;
  HostCpuSample s;
  if (!cpus.empty()) s.cpus = format_cpulist(cpus);
  s.total = all.total();
  s.busy = all.busy() - all.steal;  // steal is time this host did not get, not time it used
  s.steal = all.steal;
  for (int pid : qemu_pids) {
    if (pid <= 0) continue;
    // A QEMU that already exited (its guest powered off before its last record was read) is
    // accounted by what the reaper recorded; its /proc entry is gone or another process's.
    auto ticks = vm::exited_cpu_ticks(pid);
    if (!ticks) ticks = ticks_of("/proc/" + std::to_string(pid) + "/stat");
    s.guests += ticks.value_or(0);
  }
  s.self = ticks_of("/proc/self/stat").value_or(0);
  return s;
}

std::optional<HostCpuShare> host_cpu_share(const HostCpuSample& a, const HostCpuSample& b) {
  if (b.total <= a.total || b.busy < a.busy || b.steal < a.steal || b.guests < a.guests || b.self < a.self ||
      a.cpus != b.cpus)
    return std::nullopt;
  const uint64_t total = b.total - a.total;
  HostCpuShare s;
  s.cpus = a.cpus;
  s.busy_pct = pct(b.busy - a.busy, total);
  s.steal_pct = pct(b.steal - a.steal, total);
  s.guests_pct = std::min(pct(b.guests - a.guests, total), s.busy_pct);
  s.smtlab_pct = std::min(pct(b.self - a.self, total), s.busy_pct - s.guests_pct);
  s.other_pct = std::max(0.0, s.busy_pct - s.guests_pct - s.smtlab_pct);
  return s;
}

std::optional<std::string> host_disturbance(const HostCpuShare& s) {
  std::string what;
  if (s.other_pct >= kOtherDisturbedPct)
    what = fmt::format("other processes used {:.0f} % of {}", s.other_pct,
                       s.cpus.empty() ? std::string("the host CPUs") : "host CPUs " + s.cpus);
  if (s.steal_pct >= kStealDisturbedPct)
    what += fmt::format("{}the hypervisor under this host took {:.0f} % of its CPU time (steal)",
                        what.empty() ? "" : " and ", s.steal_pct);
  if (what.empty()) return std::nullopt;
  return fmt::format("host: {} while the benchmark ran (the guests {:.0f} %, smtlab {:.0f} %)", what,
                     s.guests_pct, s.smtlab_pct);
}

nlohmann::json to_json(const HostCpuShare& s) {
  nlohmann::json j = {{"busy_pct", round1(s.busy_pct)},     {"steal_pct", round1(s.steal_pct)},
                      {"guests_pct", round1(s.guests_pct)}, {"smtlab_pct", round1(s.smtlab_pct)},
                      {"other_pct", round1(s.other_pct)}};
  if (!s.cpus.empty()) j["cpus"] = s.cpus;
  return j;
}

}  // namespace smtlab::run
