// smtlab doctor: can this machine run smtlab, and how (KVM or TCG)?
#include <fmt/core.h>
#include <sys/statvfs.h>

#include "cli/commands.hpp"
#include "util/paths.hpp"
#include "util/process.hpp"
#include "vm/connection.hpp"
#include "vm/doctor.hpp"

namespace smtlab::cli {
namespace {

struct Line {
  std::string state;  // OK | WARN | FAIL
  std::string name, detail, hint;
};

void print(const Line& l) {
  fmt::print("{:<4}  {:<22} {}\n", l.state, l.name, l.detail);
  if (!l.hint.empty() && l.state != "OK") fmt::print("      {:<22} fix: {}\n", "", l.hint);
}

}  // namespace

void add_doctor_command(CLI::App& app) {
  auto connect = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("doctor", "Check this machine: KVM, QEMU, libvirt, image tools, cache disk, host CPUs");
  cmd->add_option("--connect", *connect, "libvirt URI to check (default: the embedded QEMU driver)");
  cmd->callback([connect] {
    std::vector<Line> lines;
    std::vector<Line> connection_lines;
    bool remote = false;
    try {
      auto conn = vm::Connection::open(*connect);
      const auto& i = conn->info();
      remote = !i.local;
      auto& lines = connection_lines;
      lines.push_back({"OK", "libvirt connection",
                       i.uri + " opens" + (remote ? " (remote host " + i.hostname + ": what follows is that host's)" : ""),
                       ""});
      lines.push_back({"OK", "versions", "QEMU " + i.qemu_version + ", libvirt " + i.libvirt_version, ""});
      lines.push_back({i.accel == vm::Accel::kvm ? "OK" : "WARN", "accelerator",
                       i.accel == vm::Accel::kvm ? "KVM (guest CPU host-passthrough)"
                                                 : "TCG, software emulation (guest CPU " + i.guest_cpu_model + ")",
                       "for speed, give the machine (or container: --device /dev/kvm) a usable /dev/kvm"});
      lines.push_back({"OK", "host CPUs", i.host.describe() + (i.host_cpu_name.empty() ? "" : ", " + i.host_cpu_name), ""});
    } catch (const std::exception& e) {
      connection_lines.push_back({"FAIL", "libvirt connection", e.what(),
                                  "install libvirt-daemon-driver-qemu and qemu-system-x86 (./smtlab does), or check --connect"});
    }
    // QEMU, the driver and /dev/kvm of this machine matter only when guests run here.
    if (!remote)
      for (const auto& c : vm::host_checks())
        lines.push_back({c.ok ? (c.warning ? "WARN" : "OK") : "FAIL", c.name, c.detail, c.hint});
    lines.insert(lines.end(), connection_lines.begin(), connection_lines.end());
    for (const char* tool : {"qemu-img", "mmdebstrap", "mke2fs", "apt-get", "dpkg-deb"}) {
      auto path = find_program(tool);
      lines.push_back({path ? "OK" : "FAIL", tool, path ? path->string() : "not found",
                       "apt-get install qemu-utils mmdebstrap e2fsprogs (./smtlab installs them)"});
    }
    auto cache = cache_dir();
    struct statvfs fs {};
    if (statvfs(cache.c_str(), &fs) == 0) {
      double free_gib = static_cast<double>(fs.f_bavail) * fs.f_frsize / (1ull << 30);
      lines.push_back({free_gib >= 5 ? "OK" : free_gib >= 2 ? "WARN" : "FAIL", "cache disk",
                       fmt::format("{:.1f} GiB free in {}", free_gib, cache.string()),
                       "free space there, run `smtlab cache gc`, or point SMTLAB_CACHE elsewhere"});
    }
    bool failed = false;
    for (const auto& l : lines) {
      print(l);
      failed |= l.state == "FAIL";
    }
    exit_status() = failed ? kError : kOk;
  });
}

}  // namespace smtlab::cli
