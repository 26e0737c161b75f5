#pragma once
// A libvirt connection: by default the embedded QEMU driver (qemu:///embed, no daemon), or any
// URI given (qemu:///system, qemu+ssh://host/system). Knows which accelerator guests get and
// what the host's CPUs look like.
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "vm/domain_xml.hpp"
#include "vm/host_topology.hpp"

typedef struct _virConnect* virConnectPtr;
typedef struct _virDomain* virDomainPtr;

namespace smtlab::vm {

struct ConnectionInfo {
  std::string uri;                    // as opened
  bool embedded = false;              // qemu:///embed: QEMU runs as our child, dies with us
  std::filesystem::path embed_root;   // embedded only
  bool local = true;                  // XML paths are this machine's paths
  Accel accel = Accel::tcg;           // see choose_accel
  std::string accel_reason;           // why not KVM, when libvirt offers it ("" otherwise)
  std::string guest_cpu_model;        // "host-passthrough" (kvm) or the TCG model ("Nehalem")
  std::string hypervisor;             // "QEMU"
  std::string qemu_version;           // "7.2.22" (virConnectGetVersion)
  std::string libvirt_version;        // "9.0.0" (virConnectGetLibVersion)
  std::string hostname;
  std::string host_cpu_name;          // /proc/cpuinfo "model name" (local connections only)
  HostTopology host;                  // from the capabilities XML (cpu model/vendor inside)
};

// Under TCG this CPU model shows SMT siblings to both Debian 6.1 and 6.12 guests
// (qemu64 and max do not everywhere: see lab-facts.md).
inline constexpr const char* kDefaultTcgCpuModel = "Nehalem";

// Which accelerator guests get. `requested` is $SMTLAB_ACCEL: "" or "auto" (KVM when libvirt
// offers it and it is not PVM), "kvm" (KVM or an error), "tcg" (always TCG, e.g. to measure
// what a no-KVM runner measures). `pvm`: this host's /dev/kvm is PVM (module kvm_pvm, a
// nested hypervisor without VMX that boots only kernels built as PVM guests; a Debian kernel
// hangs there without a console line). Throws smtlab::Error for a bad value or an impossible "kvm".
struct AccelChoice {
  Accel accel = Accel::tcg;
  std::string reason;  // why TCG although libvirt offers KVM; "" otherwise
};
AccelChoice choose_accel(const std::string& requested, bool kvm_offered, bool pvm);

// True when the KVM of this machine is PVM (/sys/module/kvm_pvm exists).
bool host_kvm_is_pvm();

// choose_accel with $SMTLAB_ACCEL, and PVM looked up on this machine when `this_machine` (a
// remote host's KVM cannot be seen from here). What Connection::open and doctor both use.
AccelChoice choose_accel_from_env(bool kvm_offered, bool this_machine);

struct DomainWatch;  // lifecycle state of one domain, fed by libvirt events (domain.cpp)

class Connection {
 public:
  // "" (or "embed"): the embedded driver at process_embed_root(), guarded by the guardian.
  // "qemu:///embed?root=DIR": embedded at DIR (qemu.conf written, guardian started).
  // Anything else is passed to libvirt as given. Throws smtlab::Error with libvirt's message.
  static std::unique_ptr<Connection> open(const std::string& uri = "");
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  const ConnectionInfo& info() const { return info_; }
  virConnectPtr raw() const { return conn_; }

  // One-line summary: "qemu:///embed?root=/run/smtlab-0/0: QEMU 7.2.22, libvirt 9.0.0, tcg
  // (Nehalem), host 2 CPUs: 1 socket x 2 cores x 1 thread (no SMT)".
  std::string describe() const;

  // Used by Domain: lifecycle events for `name` go to the returned watch until unwatch().
  std::shared_ptr<DomainWatch> watch(const std::string& name);
  void unwatch(const std::string& name);

 private:
  Connection() = default;
  static int on_lifecycle(virConnectPtr, virDomainPtr, int event, int detail, void* self);

  virConnectPtr conn_ = nullptr;
  virConnectPtr secret_conn_ = nullptr;  // embedded only: see Connection::open
  int callback_id_ = -1;
  bool loop_acquired_ = false;
  ConnectionInfo info_;
  std::mutex watches_mutex_;
  std::map<std::string, std::shared_ptr<DomainWatch>> watches_;
};

// The URI without its query (qemu+ssh://root@host/system?keyfile=/root/.ssh/k&no_verify=1 ->
// qemu+ssh://root@host/system): what records keep, so that key files and transport options of
// this machine stay out of results directories.
std::string uri_for_records(const std::string& uri);

// libvirt's last error message ("" when none), for error texts.
std::string libvirt_error();

}  // namespace smtlab::vm
