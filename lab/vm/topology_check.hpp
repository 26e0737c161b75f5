#pragma once
// Does what the guest reports match the topology we asked for? Pure: the guest's view in (as
// its agent read it from sysfs), the differences out, each a sentence a user can act on.
#include <optional>
#include <string>
#include <vector>

#include "vm/domain_xml.hpp"

namespace smtlab::vm {

struct GuestCpu {  // one online CPU as the guest sees it
  int cpu = 0;
  int core_id = 0;
  int package_id = 0;
  int die_id = 0;
  std::string siblings;  // thread_siblings_list, e.g. "0-1"
};

struct GuestTopology {
  std::string online;             // /sys/devices/system/cpu/online, e.g. "0-3"
  std::optional<int> smt_active;  // /sys/devices/system/cpu/smt/active (absent: nullopt)
  std::vector<GuestCpu> cpus;     // online CPUs only (offline ones have no topology files)
};

// `nosmt`: the kernel command line had nosmt (secondary threads offline, SMT inactive).
// Empty result: the guest matches. Malformed guest data is reported as a difference, never
// thrown. Bounded for a hostile report: the first 8 per-CPU differences are spelled out, the
// rest counted ("... and N more CPU difference(s)"), and the work is linear in what it reports.
std::vector<std::string> check_guest_topology(const VcpuTopology& expected, bool nosmt,
                                              const GuestTopology& seen);

}  // namespace smtlab::vm
