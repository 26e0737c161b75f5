#pragma once
// Running guests: a Domain is one transient libvirt domain, started with AUTODESTROY (tied to
// the connection), destroyed on every path (destroy(), destructor), and only considered gone
// once its QEMU process has really exited. A DomainGroup starts several together and tears
// them all down together.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "vm/connection.hpp"
#include "vm/domain_xml.hpp"

namespace smtlab::vm {

enum class WaitResult { stopped, timeout, interrupted };
std::string to_string(WaitResult result);

struct StopInfo {
  bool stopped = false;        // no longer running
  // The guest itself ended: power-off, or a reboot (on_reboot=destroy; a panic with panic=-1
  // reboots too, so scan the console to tell a clean end from a panic).
  bool guest_initiated = false;
  bool crashed = false;        // libvirt saw a crash (or QEMU failed)
  bool destroyed = false;      // destroy() had to stop it
  bool connection_lost = false;  // the connection to a remote libvirtd died (AUTODESTROY ends the guest)
  std::vector<std::string> events;  // lifecycle events in order ("started/0", "shutdown/1", ...)
  std::string describe() const;     // "powered off", "destroyed", "crashed", "running", ...
};

class Domain {
 public:
  // Validates the spec, checks (for local connections) that kernel/initrd/disk exist, and
  // starts it. Throws smtlab::Error naming the domain and libvirt's reason.
  static Domain start(Connection& connection, const DomainSpec& spec);

  Domain(Domain&&) noexcept;
  Domain& operator=(Domain&&) noexcept;
  ~Domain();  // destroy(), errors swallowed

  const std::string& name() const;
  const DomainSpec& spec() const;
  const std::string& xml() const;  // what was given to libvirt
  int qemu_pid() const;            // -1 when unknown (remote connections)
  double uptime_s() const;         // since start()
  // QEMU's "info registers -a" for a running guest (at most 1 MiB): where each vCPU is, for a
  // guest that stopped making progress. Empty when stopped or when the monitor refuses.
  std::string vcpu_registers() const;

  // Until the guest stops (power-off, crash, destroy), `timeout` passes, or the process is
  // interrupted (vm::interrupted()). Does not destroy anything.
  WaitResult wait_stopped(std::chrono::milliseconds timeout);
  bool is_stopped() const;
  StopInfo stop_info() const;

  // Stops the guest if it runs, then waits until its QEMU process is gone (QEMU lingers a
  // moment after the stop event). Idempotent. Throws smtlab::Error only if QEMU will not die.
  void destroy();

 private:
  struct Impl;
  explicit Domain(std::unique_ptr<Impl> impl);
  static void open_streams(Connection& connection, Impl& impl);
  std::unique_ptr<Impl> impl_;
};

class DomainGroup {
 public:
  DomainGroup() = default;
  DomainGroup(DomainGroup&&) = default;
  DomainGroup& operator=(DomainGroup&&) = default;
  ~DomainGroup();  // destroy_all()

  // Starts every spec, all at once (one thread each: most of a start is libvirt waiting on
  // QEMU's monitor, and the guests of a cell should begin together). When one fails, destroys
  // the others and rethrows the first failure in spec order (the error names its domain).
  void start(Connection& connection, const std::vector<DomainSpec>& specs);

  size_t size() const { return domains_.size(); }
  Domain& operator[](size_t i) { return domains_.at(i); }
  std::vector<Domain>& domains() { return domains_; }

  // Until every domain stopped, `timeout` passes (measured from the call), or interrupted.
  WaitResult wait_all_stopped(std::chrono::milliseconds timeout);

  // Destroys every domain (all are attempted even when one fails; the first error is rethrown).
  void destroy_all();

 private:
  std::vector<Domain> domains_;
};

}  // namespace smtlab::vm
