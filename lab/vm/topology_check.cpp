#include "vm/topology_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "util/cpulist.hpp"
#include "util/error.hpp"
#include "util/utf8.hpp"

namespace smtlab::vm {
namespace {

// A guest string quoted in a difference (which goes into the results manifest and onto the
// terminal): valid UTF-8 of at most 64 bytes, cut between characters, control characters '?'.
std::string guest_text(std::string_view text) {
  std::string out = utf8_clean(text, 64);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return out;
}

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

  std::set<int> reported;
  std::set<int> packages;
  std::map<std::tuple<int, int, int>, std::set<int>> by_core;
  for (const auto& c : seen.cpus) {
    reported.insert(c.cpu);
    packages.insert(c.package_id);
    by_core[{c.package_id, c.die_id, c.core_id}].insert(c.cpu);
    std::vector<int> sib;
    try {
      sib = parse_cpulist(c.siblings);
    } catch (const Error&) {
      diff.push_back(fmt::format("CPU {}: malformed siblings list '{}'", c.cpu, guest_text(c.siblings)));
      continue;
    }
    std::vector<int> online_sib;
    for (int s : sib)
      if (std::count(online.begin(), online.end(), s)) online_sib.push_back(s);
    int want_sib = smt_wanted ? want.threads : 1;
    if (static_cast<int>(online_sib.size()) != want_sib)
      diff.push_back(fmt::format("CPU {} has siblings {}, expected {} thread(s) per core", c.cpu,
                                 guest_text(c.siblings), want_sib));
  }
  for (int cpu : online)
    if (!reported.count(cpu)) diff.push_back(fmt::format("online CPU {} has no topology report", cpu));
  if (static_cast<int>(packages.size()) != want.sockets)
    diff.push_back(fmt::format("the guest sees {} package(s), expected {}", packages.size(), want.sockets));
  if (static_cast<int>(by_core.size()) != cores)
    diff.push_back(fmt::format("the guest sees {} core(s), expected {}", by_core.size(), cores));
  return diff;
}

}  // namespace smtlab::vm
