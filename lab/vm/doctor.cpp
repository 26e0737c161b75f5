#include "vm/doctor.hpp"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <filesystem>

#include "util/error.hpp"
#include "util/process.hpp"
#include "vm/connection.hpp"

namespace smtlab::vm {

std::vector<HostCheck> host_checks() {
  std::vector<HostCheck> out;
  {
    HostCheck c;
    c.name = "qemu-system-x86_64";
    auto p = find_program("qemu-system-x86_64");
    c.ok = p.has_value();
    c.detail = p ? p->string() : "not found";
    c.hint = "apt-get install qemu-system-x86 (./smtlab does this)";
    out.push_back(c);
  }
  {
    HostCheck c;
    c.name = "libvirt QEMU driver";
    const char* candidates[] = {
        "/usr/lib/x86_64-linux-gnu/libvirt/connection-driver/libvirt_driver_qemu.so",
        "/usr/lib64/libvirt/connection-driver/libvirt_driver_qemu.so",
        "/usr/lib/libvirt/connection-driver/libvirt_driver_qemu.so"};
    for (auto* f : candidates)
      if (std::filesystem::exists(f)) {
        c.ok = true;
        c.detail = f;
      }
    if (!c.ok) c.detail = "libvirt_driver_qemu.so not found";
    c.hint = "apt-get install libvirt-daemon-driver-qemu (./smtlab does this)";
    out.push_back(c);
  }
  {
    HostCheck c;
    c.name = "kvm";
    c.ok = true;
    if (access("/dev/kvm", R_OK | W_OK) == 0) {
      try {
        auto choice = choose_accel_from_env(true, true);
        c.detail = choice.accel == Accel::kvm
                       ? "/dev/kvm usable: guests run under KVM (host-passthrough)"
                       : "/dev/kvm usable, but guests run under TCG: " + choice.reason;
        c.warning = choice.accel != Accel::kvm;
      } catch (const Error& e) {
        c.ok = false;
        c.detail = e.what();
        c.hint = e.hint();
      }
    } else {
      c.warning = true;
      c.detail = std::filesystem::exists("/dev/kvm")
                     ? "/dev/kvm exists but is not usable by this user: guests run under TCG"
                     : "no /dev/kvm: guests run under TCG (software emulation, ~8x slower)";
      c.hint = std::filesystem::exists("/dev/kvm")
                   ? "add yourself to group kvm (or, on CI, a udev rule giving /dev/kvm mode 0666)"
                   : "use a host with hardware virtualization for realistic timings";
    }
    out.push_back(c);
  }
  if (geteuid() == 0) {
    HostCheck c;
    c.name = "libvirt-qemu user and group";
    c.ok = getpwnam("libvirt-qemu") && getgrnam("libvirt-qemu");
    c.detail = c.ok ? "present (the embedded driver looks them up when run as root)"
                    : "missing: the embedded driver refuses to start as root without them";
    c.hint =
        "install libvirt-daemon-system, or: groupadd --system libvirt-qemu && useradd --system "
        "--gid libvirt-qemu --no-create-home --shell /usr/sbin/nologin libvirt-qemu";
    out.push_back(c);
  }
  return out;
}

}  // namespace smtlab::vm
