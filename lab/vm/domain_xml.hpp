#pragma once
// One guest as a value (DomainSpec) and the libvirt domain XML made from it. Pure: no libvirt
// calls, no file access; everything that reaches the XML is validated and escaped.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace smtlab::vm {

enum class Accel { kvm, tcg };
std::string to_string(Accel accel);  // "kvm" | "tcg"

// How the serial console and the results port leave the guest. files: libvirt writes them to
// console_log / results_channel on the libvirt host (the same machine when the connection is
// local). streams: a pty console and a UNIX socket channel whose path libvirt chooses on its
// host, read by smtlab through virDomainOpenConsole/OpenChannel streams and written to
// console_log / results_channel on this machine (remote hosts).
enum class Transport { files, streams };

// The host scheduling policy of a guest's QEMU threads (vCPUs and emulator). normal: SCHED_OTHER,
// what a plain libvirt guest gets. batch: SCHED_BATCH, whose wake-ups do not preempt the thread
// running on that host CPU, so vCPU threads sharing host CPUs switch less often.
enum class ThreadSched { normal, batch };
std::string to_string(ThreadSched sched);  // "normal" | "batch"

struct VcpuTopology {
  int sockets = 1, dies = 1, cores = 1, threads = 1;
  int count() const { return sockets * dies * cores * threads; }
  std::string shape() const;  // "1x1x2x2"
};

struct DomainSpec {
  std::string name;  // see validate_domain_name; unique_domain_name() makes one
  std::string uuid;  // optional, "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
  VcpuTopology topology;
  int memory_mib = 1024;
  Accel accel = Accel::tcg;
  std::string cpu_model = "Nehalem";  // used under TCG; KVM uses host-passthrough
  std::string machine = "q35";
  Transport transport = Transport::files;
  std::filesystem::path kernel;  // required, absolute (paths are the libvirt host's paths)
  std::filesystem::path initrd;  // optional
  std::string cmdline;
  std::filesystem::path disk;             // optional qcow2 overlay, attached as virtio vda
  std::filesystem::path console_log;      // optional: serial console written to this file (truncated at start)
  std::filesystem::path results_channel;  // optional: virtio port org.smtlab.results.0 -> file
  std::filesystem::path control_socket;   // optional: virtio port org.smtlab.control.0 <- unix socket (bind); files only
  // Optional, a path on this machine, not in the XML: QEMU's own log (command line, QEMU's
  // messages) is copied here once the domain is gone (embedded driver; first 1 MiB).
  std::filesystem::path qemu_log;
  std::vector<std::string> vcpu_pins;     // empty, or one host cpuset per vCPU ("" = unpinned)
  std::string emulator_pin;               // "" = unpinned
  ThreadSched thread_sched = ThreadSched::normal;
  bool network = false;                   // user-mode virtio NIC when true
};

inline constexpr const char* kResultsPort = "org.smtlab.results.0";
inline constexpr const char* kControlPort = "org.smtlab.control.0";

// &, <, >, ", ' escaped; throws smtlab::Error on characters XML 1.0 cannot carry (controls).
std::string xml_escape(std::string_view text);

// 1..100 characters, none of them a control character, '/', or whitespace other than ' '
// (leading/trailing spaces refused). Throws smtlab::Error saying which character is wrong.
void validate_domain_name(std::string_view name);

// "smtlab-<cell>-vm<index>-<6 random hex>"; `cell` is validated (letters, digits, '-', '_', '.').
std::string unique_domain_name(std::string_view cell, int vm_index);

// The <domain> XML. Throws smtlab::Error (naming the field) when the spec is invalid.
std::string domain_xml(const DomainSpec& spec);

}  // namespace smtlab::vm
