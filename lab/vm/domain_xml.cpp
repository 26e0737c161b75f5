#include "vm/domain_xml.hpp"

#include <fmt/format.h>

#include <random>

#include "util/error.hpp"
#include "util/limits.hpp"

namespace smtlab::vm {
namespace {

bool is_cpuset_text(std::string_view s) {
  if (s.empty()) return false;
  return s.find_first_not_of("0123456789,-^") == std::string_view::npos;
}

void require_absolute(const std::filesystem::path& p, const char* field, bool required) {
  if (p.empty()) {
    if (required) throw Error(std::string("domain spec: ") + field + " is required");
    return;
  }
  if (!p.is_absolute())
    throw Error(std::string("domain spec: ") + field + " must be an absolute path, got '" +
                    p.string() + "'",
                "libvirt resolves paths on its own host, not relative to smtlab's directory");
}

std::string esc(const std::filesystem::path& p) { return xml_escape(p.string()); }

// The guest's few devices sit on the root bus itself (q35: integrated endpoints on pcie.0; pc:
// slots of pci.0). Left to itself libvirt gives each device on q35 a PCIe root port of its own,
// plus a spare: bridges the guest kernel enumerates and sets up (hotplug, PME, AER) in every boot.
std::string root_bus_address(int slot) {
  return fmt::format("<address type='pci' domain='0x0000' bus='0x00' slot='0x{:02x}' function='0x0'/>", slot);
}

}  // namespace

std::string to_string(Accel accel) { return accel == Accel::kvm ? "kvm" : "tcg"; }

std::string to_string(ThreadSched sched) { return sched == ThreadSched::batch ? "batch" : "normal"; }

std::string VcpuTopology::shape() const {
  return fmt::format("{}x{}x{}x{}", sockets, dies, cores, threads);
}

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f)
          throw Error(fmt::format("text for libvirt contains control character 0x{:02x}: '{}'", c,
                                  std::string(text.substr(0, 80))),
                      "remove control characters from names, paths and command lines");
        out += static_cast<char>(c);
    }
  }
  return out;
}

void validate_domain_name(std::string_view name) {
  if (name.empty()) throw Error("domain name is empty");
  if (name.size() > 100)
    throw Error("domain name is longer than 100 characters: '" + std::string(name) + "'");
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f)
      throw Error(fmt::format("domain name contains control character 0x{:02x}", c),
                  "use letters, digits, '-', '_' and '.'");
    if (c == '/')
      throw Error("domain name '" + std::string(name) + "' contains '/'",
                  "libvirt uses the name in file names; use '-' instead");
  }
  if (name.front() == ' ' || name.back() == ' ')
    throw Error("domain name '" + std::string(name) + "' starts or ends with a space");
}

std::string unique_domain_name(std::string_view cell, int vm_index) {
  if (cell.empty() || cell.size() > 64 ||
      cell.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") !=
          std::string_view::npos)
    throw Error("cell id '" + std::string(cell) + "' is not usable in a domain name",
                "cell ids are letters, digits, '-', '_' or '.' (at most 64)");
  std::random_device rd;
  auto name = fmt::format("smtlab-{}-vm{}-{:06x}", cell, vm_index, rd() & 0xffffff);
  validate_domain_name(name);
  return name;
}

std::string domain_xml(const DomainSpec& s) {
  validate_domain_name(s.name);
  const auto& t = s.topology;
  if (t.sockets < 1 || t.dies < 1 || t.cores < 1 || t.threads < 1)
    throw Error("domain spec: topology " + t.shape() + " has a zero or negative count");
  if (t.count() > limits::kMaxVcpusPerVm)
    throw Error("domain spec: " + std::to_string(t.count()) + " vCPUs is too many (at most " +
                std::to_string(limits::kMaxVcpusPerVm) + ")");
  if (s.memory_mib < 64) throw Error("domain spec: memory " + std::to_string(s.memory_mib) +
                                     " MiB is too small (at least 64)");
  if (!s.uuid.empty()) {
    bool ok = s.uuid.size() == 36;
    for (size_t i = 0; ok && i < 36; ++i) {
      char c = s.uuid[i];
      bool dash = i == 8 || i == 13 || i == 18 || i == 23;
      ok = dash ? c == '-' : std::isxdigit(static_cast<unsigned char>(c)) != 0;
    }
    if (!ok) throw Error("domain spec: uuid '" + s.uuid + "' is not of the form 8-4-4-4-12 hex");
  }
  require_absolute(s.kernel, "kernel", true);
  require_absolute(s.initrd, "initrd", false);
  require_absolute(s.disk, "disk", false);
  require_absolute(s.console_log, "console_log", false);
  require_absolute(s.results_channel, "results_channel", false);
  require_absolute(s.control_socket, "control_socket", false);
  if (s.transport == Transport::streams && !s.control_socket.empty())
    throw Error("domain spec: a control socket is a file on the libvirt host; it cannot be used with "
                "stream transport (remote hosts)");
  if (!s.control_socket.empty() && s.control_socket.string().size() >= 108)
    throw Error("domain spec: control socket path is " +
                    std::to_string(s.control_socket.string().size()) +
                    " characters; UNIX sockets allow at most 107: " + s.control_socket.string(),
                "use a shorter state or results directory");
  if (!s.vcpu_pins.empty() && static_cast<int>(s.vcpu_pins.size()) != t.count())
    throw Error(fmt::format("domain spec: {} vCPU pins for {} vCPUs", s.vcpu_pins.size(), t.count()));
  for (const auto& pin : s.vcpu_pins)
    if (!pin.empty() && !is_cpuset_text(pin))
      throw Error("domain spec: vCPU pin '" + pin + "' is not a CPU list like 0-1,4");
  if (!s.emulator_pin.empty() && !is_cpuset_text(s.emulator_pin))
    throw Error("domain spec: emulator pin '" + s.emulator_pin + "' is not a CPU list like 0-1,4");
  if (s.machine.empty() ||
      s.machine.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-._") != std::string::npos)
    throw Error("domain spec: machine type '" + s.machine + "' is not valid");

  std::string x;
  auto add = [&x](std::string_view line) {
    x += line;
    x += '\n';
  };
  add(fmt::format("<domain type='{}'>", s.accel == Accel::kvm ? "kvm" : "qemu"));
  add("  <name>" + xml_escape(s.name) + "</name>");
  if (!s.uuid.empty()) add("  <uuid>" + s.uuid + "</uuid>");
  add(fmt::format("  <memory unit='MiB'>{}</memory>", s.memory_mib));
  add(fmt::format("  <vcpu placement='static'>{}</vcpu>", t.count()));
  bool any_pin = !s.emulator_pin.empty();
  for (const auto& pin : s.vcpu_pins) any_pin = any_pin || !pin.empty();
  const bool batch = s.thread_sched == ThreadSched::batch;
  if (any_pin || batch) {
    add("  <cputune>");
    for (size_t i = 0; i < s.vcpu_pins.size(); ++i)
      if (!s.vcpu_pins[i].empty())
        add(fmt::format("    <vcpupin vcpu='{}' cpuset='{}'/>", i, s.vcpu_pins[i]));
    if (!s.emulator_pin.empty()) add("    <emulatorpin cpuset='" + s.emulator_pin + "'/>");
    if (batch) {
      const std::string policy = to_string(s.thread_sched);
      add(fmt::format("    <vcpusched vcpus='0-{}' scheduler='{}'/>", t.count() - 1, policy));
      add("    <emulatorsched scheduler='" + policy + "'/>");
    }
    add("  </cputune>");
  }
  add("  <os>");
  add("    <type arch='x86_64' machine='" + s.machine + "'>hvm</type>");
  add("    <kernel>" + esc(s.kernel) + "</kernel>");
  if (!s.initrd.empty()) add("    <initrd>" + esc(s.initrd) + "</initrd>");
  if (!s.cmdline.empty()) add("    <cmdline>" + xml_escape(s.cmdline) + "</cmdline>");
  add("  </os>");
  add("  <features><acpi/><apic/></features>");
  std::string topo = fmt::format("<topology sockets='{}' dies='{}' cores='{}' threads='{}'/>",
                                 t.sockets, t.dies, t.cores, t.threads);
  if (s.accel == Accel::kvm) {
    add("  <cpu mode='host-passthrough' check='none'>" + topo + "</cpu>");
  } else {
    if (s.cpu_model.empty()) throw Error("domain spec: cpu_model is required under TCG");
    add("  <cpu mode='custom' match='exact' check='none'><model fallback='forbid'>" +
        xml_escape(s.cpu_model) + "</model>" + topo + "</cpu>");
  }
  add("  <clock offset='utc'/>");
  add("  <on_poweroff>destroy</on_poweroff>");
  add("  <on_reboot>destroy</on_reboot>");
  add("  <on_crash>destroy</on_crash>");
  add("  <devices>");
  if (!s.disk.empty()) {
    add("    <disk type='file' device='disk'>");
    add("      <driver name='qemu' type='qcow2' cache='unsafe'/>");
    add("      <source file='" + esc(s.disk) + "'/>");
    add("      <target dev='vda' bus='virtio'/>");
    add("      " + root_bus_address(2));
    add("    </disk>");
  }
  if (s.network) {
    add("    <interface type='user'><model type='virtio'/>" + root_bus_address(4) + "</interface>");
  }
  if (!s.results_channel.empty() || !s.control_socket.empty()) {
    add("    <controller type='virtio-serial' index='0'>" + root_bus_address(3) + "</controller>");
  }
  const bool streams = s.transport == Transport::streams;
  if (!s.console_log.empty() && streams) {
    // smtlab reads it through virDomainOpenConsole: no path of either host in the XML.
    add("    <serial type='pty'>");
    add("      <target port='0'/>");
    add("    </serial>");
  } else if (!s.console_log.empty()) {
    add("    <serial type='file'>");
    add("      <source path='" + esc(s.console_log) + "'/>");  // truncated at start: no stale panics
    add("      <target port='0'/>");
    add("    </serial>");
  }
  if (!s.results_channel.empty() && streams) {
    // virDomainOpenChannel takes UNIX socket channels only (libvirt 9.0: "not using a UNIX
    // socket" for pty); without a path libvirt makes one in the domain's own channel directory.
    add("    <channel type='unix'>");
    add("      <source mode='bind'/>");
    add(std::string("      <target type='virtio' name='") + kResultsPort + "'/>");
    add("    </channel>");
  } else if (!s.results_channel.empty()) {
    add("    <channel type='file'>");
    add("      <source path='" + esc(s.results_channel) + "'/>");
    add(std::string("      <target type='virtio' name='") + kResultsPort + "'/>");
    add("    </channel>");
  }
  if (!s.control_socket.empty()) {
    add("    <channel type='unix'>");
    add("      <source mode='bind' path='" + esc(s.control_socket) + "'/>");
    add(std::string("      <target type='virtio' name='") + kControlPort + "'/>");
    add("    </channel>");
  }
  add("    <controller type='usb' model='none'/>");
  add("    <memballoon model='none'/>");
  add("  </devices>");
  add("</domain>");
  return x;
}

}  // namespace smtlab::vm
