#pragma once
// What `smtlab doctor` asks of the vm module: can this host run guests, and how.
#include <string>
#include <vector>

namespace smtlab::vm {

struct HostCheck {
  std::string name;    // "qemu-system-x86_64", "kvm", "libvirt-qemu user", ...
  bool ok = false;     // false: guests cannot run until fixed
  bool warning = false;  // ok, but slower or degraded (e.g. no KVM: TCG)
  std::string detail;  // what was found
  std::string hint;    // what to do (when not ok or warning)
};

// Cheap checks that open no connection: QEMU binary, KVM device, libvirt QEMU driver module,
// the user/group the embedded driver needs as root, the runtime directory.
std::vector<HostCheck> host_checks();

}  // namespace smtlab::vm
