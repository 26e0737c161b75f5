#pragma once
// Who used the host's CPUs while a benchmark ran: the guests (their QEMU processes), smtlab
// itself, something else, or the hypervisor under the host (steal). A benchmark measured while
// another process or a noisy neighbour took a share of the host is noted as disturbed.
// Local hosts only (it reads this machine's /proc).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace smtlab::run {

struct HostCpuSample {  // cumulative clock ticks (USER_HZ), summed over the sampled host CPUs
  uint64_t total = 0, busy = 0, steal = 0;
  uint64_t guests = 0;  // utime + stime of the QEMU processes
  uint64_t self = 0;    // utime + stime of this process
  std::string cpus;     // the sampled host CPUs as a list ("2-3"); empty: all of them
};

// Reads /proc/stat (the lines of `cpus` only, when given: guests confined to those CPUs while
// others run elsewhere), /proc/<pid>/stat of each QEMU pid (a pid that is gone counts 0) and
// /proc/self/stat; nullopt when /proc/stat cannot be read or lacks one of `cpus`.
std::optional<HostCpuSample> sample_host_cpu(const std::vector<int>& qemu_pids, const std::vector<int>& cpus = {});

// utime + stime of one /proc/<pid>/stat text (the command name may hold spaces and ')');
// nullopt when malformed.
std::optional<uint64_t> process_cpu_ticks(std::string_view proc_pid_stat);

struct HostCpuShare {  // percent of the sampled CPUs' capacity between two samples
  double busy_pct = 0, steal_pct = 0, guests_pct = 0, smtlab_pct = 0, other_pct = 0;
  std::string cpus;  // the samples' cpus: empty for the whole host
};
// nullopt when no time passed or the counters went backwards.
std::optional<HostCpuShare> host_cpu_share(const HostCpuSample& from, const HostCpuSample& to);

// Thresholds above which a measurement counts as disturbed by the host.
inline constexpr double kOtherDisturbedPct = 10;
inline constexpr double kStealDisturbedPct = 5;
// "host: other processes used 23 % of the host CPUs while the benchmark ran (...)", or nullopt;
// "of host CPUs 2-3" when the share is of some CPUs only.
std::optional<std::string> host_disturbance(const HostCpuShare& share);

// {busy_pct, steal_pct, guests_pct, smtlab_pct, other_pct} and "cpus" when not the whole host.
nlohmann::json to_json(const HostCpuShare& share);

}  // namespace smtlab::run
