#pragma once
// Where each vCPU (and each VM's emulator threads) may run on the host. Pure: topology in,
// per-VM cpusets out; impossible requests throw smtlab::Error saying why and what to change.
#include <string>
#include <vector>

#include "vm/domain_xml.hpp"
#include "vm/host_topology.hpp"

namespace smtlab::vm {

enum class PinPolicy {
  none,    // no pins (vCPUs float over host_cpus when given, else everywhere)
  vcpu,    // one host CPU per vCPU, across all VMs; error when too few
  core,    // sibling-aware: the threads of a virtual core on the threads of one host core
           // (sharing them when it has fewer: on a host without SMT, one host CPU per virtual core)
           // (sharing them when the host core has fewer: one host CPU without SMT)
  shared,  // every VM's vCPUs float over the same host CPUs (overcommit allowed)
};
std::string to_string(PinPolicy policy);

struct PinRequest {
  int vms = 1;
  VcpuTopology topology;       // per VM
  std::vector<int> host_cpus;  // empty: every online host CPU
  PinPolicy policy = PinPolicy::none;
  // Keep the emulator threads inside host_cpus (on spare CPUs of the set, else with the vCPUs)
  // instead of outside it: when other guests run on the other host CPUs (recipe parallel).
  bool confine_emulators = false;
};

struct VmPinning {
  std::vector<std::string> vcpus;  // empty (no pins) or one cpuset per vCPU, for DomainSpec::vcpu_pins
  std::string emulator;            // "" = unpinned, for DomainSpec::emulator_pin
};

struct PinPlan {
  std::vector<VmPinning> vms;           // one per VM
  std::vector<std::string> notes;       // what was decided and why (fallbacks, shared emulators)
};

PinPlan plan_pinning(const PinRequest& request, const HostTopology& host);

}  // namespace smtlab::vm
