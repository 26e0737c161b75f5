#include "vm/pinning.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "util/error.hpp"
#include "util/cpulist.hpp"

namespace smtlab::vm {
namespace {

struct HostCore {
  std::tuple<int, int, int> key;  // socket, die, core
  std::vector<int> cpus;          // the core's CPUs that are in the allowed set, sorted
};

std::vector<HostCore> cores_in(const std::vector<int>& set, const HostTopology& host) {
  std::map<std::tuple<int, int, int>, std::vector<int>> by_core;
  for (int id : set) {
    const HostCpu* c = host.find(id);
    by_core[{c->socket_id, c->die_id, c->core_id}].push_back(id);
  }
  std::vector<HostCore> out;
  for (auto& [key, cpus] : by_core) {
    std::sort(cpus.begin(), cpus.end());
    out.push_back({key, cpus});
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.cpus.front() < b.cpus.front(); });
  return out;
}

// Emulator threads: on host CPUs outside the experiment's set if there are any (unless confined
// to it), else on allowed CPUs no vCPU is pinned to, else alongside the VM's own vCPUs.
void place_emulators(PinPlan& plan, const std::vector<int>& set, const std::set<int>& used,
                     const HostTopology& host, bool has_set, bool confine) {
  std::vector<int> outside;
  if (has_set && !confine)
    for (int id : host.ids())
      if (!std::count(set.begin(), set.end(), id)) outside.push_back(id);
  std::vector<int> spare;
  for (int id : set)
    if (!used.count(id)) spare.push_back(id);
  std::string where;
  if (!outside.empty()) {
    where = format_cpulist(outside);
    plan.notes.push_back("emulator threads on host CPUs " + where + " (outside the experiment's set)");
  } else if (!spare.empty()) {
    where = format_cpulist(spare);
    plan.notes.push_back("emulator threads on spare host CPUs " + where);
  }
  for (auto& vm : plan.vms) {
    if (!where.empty()) {
      vm.emulator = where;
    } else {
      std::vector<int> own;
      for (auto& p : vm.vcpus) {
        auto cpus = parse_cpulist(p);
        own.insert(own.end(), cpus.begin(), cpus.end());
      }
      vm.emulator = format_cpulist(own);
    }
  }
  if (where.empty())
    plan.notes.push_back("no spare host CPU: each VM's emulator threads share its vCPUs' CPUs");
}

}  // namespace

std::string to_string(PinPolicy policy) {
  switch (policy) {
    case PinPolicy::none: return "none";
    case PinPolicy::vcpu: return "vcpu";
    case PinPolicy::core: return "core";
    case PinPolicy::shared: return "shared";
  }
  return "?";
}

PinPlan plan_pinning(const PinRequest& req, const HostTopology& host) {
  const auto& t = req.topology;
  if (req.vms < 1) throw Error("pinning: a topology needs at least one VM");
  if (t.sockets < 1 || t.dies < 1 || t.cores < 1 || t.threads < 1)
    throw Error("pinning: topology " + t.shape() + " has a zero or negative count");
  if (host.cpus.empty()) throw Error("pinning: the host topology lists no CPUs");
  bool has_set = !req.host_cpus.empty();
  std::vector<int> set = has_set ? req.host_cpus : host.ids();
  std::sort(set.begin(), set.end());
  set.erase(std::unique(set.begin(), set.end()), set.end());
  for (int id : set)
    if (!host.find(id))
      throw Error(fmt::format("host CPU {} is not an online CPU of this host (online: {})", id,
                              format_cpulist(host.ids())),
                  "list only online host CPUs in host_cpus, or leave it empty for all of them");

  const int per_vm = t.count();
  const int total = per_vm * req.vms;
  PinPlan plan;
  plan.vms.resize(req.vms);
  const std::string all = format_cpulist(set);

  if (req.policy == PinPolicy::core) {
    // Each virtual core on a host core of its own. Its threads go one to one on that core's
    // threads when it has as many; else they share them round-robin, so that on a host without
    // SMT the siblings of a virtual core time-share one host CPU, as hyperthreads share a core.
    auto cores = cores_in(set, host);
    int virtual_cores = req.vms * t.sockets * t.dies * t.cores;
    if (static_cast<int>(cores.size()) < virtual_cores)
      throw Error(fmt::format("pinning 'core' needs one host core per virtual core: {} VM(s) x {} "
                              "cores = {}, but the host CPUs {} hold {} core(s)",
                              req.vms, t.sockets * t.dies * t.cores, virtual_cores, all, cores.size()),
                  "use fewer VMs or cores, more host_cpus, or pinning: shared to overcommit");
    std::set<int> used;
    std::vector<std::string> shared_cores;  // "core 1 on host CPU 1", per virtual core that shares
    size_t next = 0;
    for (size_t vm_index = 0; vm_index < plan.vms.size(); ++vm_index) {
      auto& vm = plan.vms[vm_index];
      for (int v = 0; v < per_vm; v += t.threads) {
        const auto& hc = cores[next++];
        if (static_cast<int>(hc.cpus.size()) < t.threads)
          shared_cores.push_back(fmt::format("{}core {} on host CPU(s) {}",
                                             req.vms > 1 ? fmt::format("VM {} ", vm_index) : "",
                                             v / t.threads, format_cpulist(hc.cpus)));
        for (int th = 0; th < t.threads; ++th) {
          int cpu = hc.cpus[static_cast<size_t>(th) % hc.cpus.size()];
          vm.vcpus.push_back(std::to_string(cpu));
          used.insert(cpu);
        }
      }
    }
    if (!shared_cores.empty())
      plan.notes.push_back(fmt::format(
          "siblings share: host cores here have fewer threads than the guest's {} per core, so "
          "each virtual core's threads time-share one host core, as hyperthreads share a core ({})",
          t.threads, fmt::join(shared_cores, ", ")));
    place_emulators(plan, set, used, host, has_set, req.confine_emulators);
    return plan;
  }

  switch (req.policy) {
    case PinPolicy::none:
      if (has_set) {
        for (auto& vm : plan.vms) vm.vcpus.assign(per_vm, all);
        plan.notes.push_back("no pinning: vCPUs float over host CPUs " + all);
        if (req.confine_emulators) {
          for (auto& vm : plan.vms) vm.emulator = all;
          plan.notes.push_back("emulator threads confined to host CPUs " + all);
        }
      }
      return plan;
    case PinPolicy::vcpu: {
      if (total > static_cast<int>(set.size()))
        throw Error(fmt::format("pinning 'vcpu' needs one host CPU per vCPU: {} VM(s) x {} vCPUs "
                                "= {}, but the host CPUs {} are {}",
                                req.vms, per_vm, total, all, set.size()),
                    "use pinning: shared to overcommit, fewer VMs or vCPUs, or more host_cpus");
      std::set<int> used;
      size_t next = 0;
      for (auto& vm : plan.vms)
        for (int v = 0; v < per_vm; ++v) {
          vm.vcpus.push_back(std::to_string(set[next]));
          used.insert(set[next++]);
        }
      place_emulators(plan, set, used, host, has_set, req.confine_emulators);
      return plan;
    }
    case PinPolicy::shared: {
      for (auto& vm : plan.vms) vm.vcpus.assign(per_vm, all);
      if (total > static_cast<int>(set.size()))
        plan.notes.push_back(fmt::format("overcommit: {} vCPUs share {} host CPU(s) {}", total,
                                         set.size(), all));
      // Every allowed CPU runs vCPUs; emulators go outside the set when there is room.
      std::set<int> used(set.begin(), set.end());
      place_emulators(plan, set, used, host, has_set, req.confine_emulators);
      return plan;
    }
    case PinPolicy::core: break;  // handled above
  }
  return plan;
}

}  // namespace smtlab::vm
