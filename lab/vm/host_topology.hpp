#pragma once
// The host's CPUs as libvirt reports them (capabilities XML): which CPU sits on which socket,
// die and core, and which CPUs are SMT siblings.
#include <string>
#include <string_view>
#include <vector>

namespace smtlab::vm {

struct HostCpu {
  int id = 0;
  int socket_id = 0;
  int die_id = 0;
  int core_id = 0;
  std::vector<int> siblings;  // includes `id`; one entry when the core has no SMT
};

struct HostTopology {
  std::vector<HostCpu> cpus;  // online CPUs, sorted by id
  std::string arch;           // "x86_64"
  std::string cpu_model;      // libvirt's name for the host CPU ("Skylake-Client", "kvm64")
  std::string cpu_vendor;     // "Intel", "AMD"

  const HostCpu* find(int id) const;
  std::vector<int> ids() const;
  int threads_per_core() const;  // the largest sibling group (1: no SMT)
  bool smt() const { return threads_per_core() > 1; }
  int cores() const;    // distinct (socket, die, core)
  int sockets() const;  // distinct sockets
  std::string describe() const;  // "2 CPUs: 1 socket x 2 cores x 1 thread (no SMT)"

  // Synthetic, regular host: CPU ids numbered socket-major, then core, then thread.
  // (Linux often numbers siblings apart, e.g. 0/4; pass siblings_apart=true for that.)
  static HostTopology uniform(int sockets, int cores_per_socket, int threads_per_core,
                              bool siblings_apart = false);
};

// Parses virConnectGetCapabilities() XML. Throws smtlab::Error when no CPU topology is present.
HostTopology parse_host_capabilities(std::string_view xml);

}  // namespace smtlab::vm
