#include "vm/topology_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "util/cpulist.hpp"
#include "util/error.hpp"
#include "util/utf8.hpp"

namespace smtlab::vm {
namespace {

constexpr size_t kMaxCpuDifferences = 8;

// A guest string quoted in a difference (which goes into the results manifest and onto the
// terminal).
std::string guest_text(std::string_view text) { return printable_line(text, 64); }

}  // namespace

std::vector<std::string> check_guest_topology(const VcpuTopology& want, bool nosmt,
                                              const GuestTopology& seen) {
  std::vector<std::string> diff;
  const int cores = want.sockets * want.dies * want.cores;
  const bool smt_wanted = want.threads > 1 && !nosmt;
  const int online_wanted = nosmt ? cores : want.count();

  std::vector<int> online;
  try {
    online = parse_cpulist(seen.online);
  } catch (const Error&) {
    diff.push_back("the guest's online CPU list '" + guest_text(seen.online) + "' is malformed");
    return diff;
  }
  if (static_cast<int>(online.size()) != online_wanted)
    diff.push_back(fmt::format("the guest has {} online CPUs ({}), expected {}{}", online.size(),
                               guest_text(seen.online), online_wanted,
                               nosmt ? " (one per core with nosmt)" : ""));

  int smt_expected = smt_wanted ? 1 : 0;
  if (!seen.smt_active) {
    if (smt_wanted) diff.push_back("the guest reports no SMT state (no smt/active), expected SMT active");
  } else if (*seen.smt_active != smt_expected) {
    diff.push_back(fmt::format("the guest reports SMT {}, expected {}",
                               *seen.smt_active ? "active" : "inactive",
                               smt_expected ? "active" : "inactive"));
  }

  // Per-CPU differences: a hostile or broken guest can report thousands, so only the first
  // kMaxCpuDifferences are spelled out (the rest counted); each check is O(1) per sibling.
  std::vector<bool> is_online(kMaxCpus, false);
  for (int cpu : online) is_online[static_cast<size_t>(cpu)] = true;
  size_t cpu_differences = 0;
  auto cpu_difference = [&](auto&& make) {
    if (cpu_differences++ < kMaxCpuDifferences) diff.push_back(make());
  };
  std::set<int> reported;
  std::set<int> packages;
  std::set<std::tuple<int, int, int>> cores_seen;
  const int want_sib = smt_wanted ? want.threads : 1;
  for (const auto& c : seen.cpus) {
    reported.insert(c.cpu);
    packages.insert(c.package_id);
    cores_seen.insert({c.package_id, c.die_id, c.core_id});
    std::vector<int> sib;
    try {
      sib = parse_cpulist(c.siblings);
    } catch (const Error&) {
      cpu_difference(
          [&] { return fmt::format("CPU {}: malformed siblings list '{}'", c.cpu, guest_text(c.siblings)); });
      continue;
    }
    const auto online_sib =
        std::count_if(sib.begin(), sib.end(), [&](int s) { return is_online[static_cast<size_t>(s)]; });
    if (online_sib != want_sib)
      cpu_difference([&] {
        return fmt::format("CPU {} has siblings {}, expected {} thread(s) per core", c.cpu, guest_text(c.siblings), want_sib);
      });
  }
  for (int cpu : online)
    if (!reported.count(cpu))
      cpu_difference([&] { return fmt::format("online CPU {} has no topology report", cpu); });
  if (cpu_differences > kMaxCpuDifferences)
    diff.push_back(fmt::format("... and {} more CPU difference(s)", cpu_differences - kMaxCpuDifferences));
  if (static_cast<int>(packages.size()) != want.sockets)
    diff.push_back(fmt::format("the guest sees {} package(s), expected {}", packages.size(), want.sockets));
  if (static_cast<int>(cores_seen.size()) != cores)
    diff.push_back(fmt::format("the guest sees {} core(s), expected {}", cores_seen.size(), cores));
  return diff;
}

}  // namespace smtlab::vm
