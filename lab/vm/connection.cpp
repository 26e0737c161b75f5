#include "vm/connection.hpp"

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <pwd.h>
#include <grp.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>

#include "util/error.hpp"
#include "vm/domain_watch.hpp"
#include "vm/embed_root.hpp"
#include "vm/event_loop.hpp"
#include "vm/guardian.hpp"
#include "vm/reaper.hpp"

namespace smtlab::vm {
namespace {

void quiet_errors(void*, virErrorPtr) {}  // we report libvirt errors ourselves

std::string version_string(unsigned long v) {
  return fmt::format("{}.{}.{}", v / 1000000, (v / 1000) % 1000, v % 1000);
}

std::string cpuinfo_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return {};
}

// The embedded driver run as root looks up the distribution's QEMU user and group before it
// reads qemu.conf (libvirt 9.0): they must exist even though QEMU will run as root.
void check_embedded_prerequisites() {
  if (geteuid() != 0) return;
  if (!getpwnam("libvirt-qemu") || !getgrnam("libvirt-qemu"))
    throw Error(
        "libvirt's embedded QEMU driver, run as root, needs the user and group 'libvirt-qemu' "
        "to exist (it looks them up before reading qemu.conf), and this host has none",
        "install libvirt-daemon-system, or create them: groupadd --system libvirt-qemu && "
        "useradd --system --gid libvirt-qemu --no-create-home --shell /usr/sbin/nologin "
        "libvirt-qemu");
}

std::string embed_root_of(const std::string& uri) {
  const std::string prefix = "qemu:///embed?root=";
  if (uri.rfind(prefix, 0) != 0) return {};
  return uri.substr(prefix.size());
}

}  // namespace

AccelChoice choose_accel(const std::string& requested, bool kvm_offered, bool pvm) {
  if (requested == "tcg") {
    AccelChoice c{Accel::tcg, kvm_offered ? "SMTLAB_ACCEL=tcg asks for TCG" : ""};
    return c;
  }
  if (requested == "kvm") {
    if (!kvm_offered)
      throw Error("SMTLAB_ACCEL=kvm, but libvirt offers no usable KVM here",
                  "check /dev/kvm (smtlab doctor), or unset SMTLAB_ACCEL to run under TCG");
    return {Accel::kvm, ""};
  }
  if (!requested.empty() && requested != "auto")
    throw Error("SMTLAB_ACCEL='" + requested + "' is not one of auto, kvm, tcg",
                "unset it (auto: KVM when usable), or set it to kvm or tcg");
  if (!kvm_offered) return {Accel::tcg, ""};
  if (pvm)
    return {Accel::tcg,
            "this host's KVM is PVM (module kvm_pvm), which boots only kernels built as PVM guests "
            "(SMTLAB_ACCEL=kvm to try it anyway)"};
  return {Accel::kvm, ""};
}

bool host_kvm_is_pvm() { return std::filesystem::exists("/sys/module/kvm_pvm"); }

AccelChoice choose_accel_from_env(bool kvm_offered, bool this_machine) {
  const char* requested = getenv("SMTLAB_ACCEL");
  return choose_accel(requested ? requested : "", kvm_offered, this_machine && host_kvm_is_pvm());
}

std::string uri_for_records(const std::string& uri) {
  if (uri.rfind("qemu:///embed", 0) == 0) return uri;  // ?root=DIR names the embedded driver's root
  auto q = uri.find('?');
  return q == std::string::npos ? uri : uri.substr(0, q);
}

std::string libvirt_error() {
  const char* msg = virGetLastErrorMessage();
  return msg ? msg : "";
}

std::string describe_lifecycle_event(int event, int detail) {
  static const char* events[] = {"defined",  "undefined", "started", "suspended", "resumed",
                                 "stopped",  "shutdown",  "pmsuspended", "crashed"};
  std::string e = event >= 0 && event < 9 ? events[event] : "event-" + std::to_string(event);
  if (event == VIR_DOMAIN_EVENT_STOPPED) {
    static const char* details[] = {"shutdown", "destroyed", "crashed", "migrated",
                                    "saved",    "failed",    "from-snapshot"};
    return e + "/" + (detail >= 0 && detail < 7 ? details[detail] : std::to_string(detail));
  }
  return e + "/" + std::to_string(detail);
}

std::unique_ptr<Connection> Connection::open(const std::string& requested) {
  std::unique_ptr<Connection> c(new Connection());
  std::string uri = requested;
  std::filesystem::path root;
  if (uri.empty() || uri == "embed") {
    root = process_embed_root();
    uri = "qemu:///embed?root=" + root.string();
  } else if (auto r = embed_root_of(uri); !r.empty()) {
    root = r;
    if (!root.is_absolute())
      throw Error("embedded root '" + r + "' must be an absolute path");
    write_embed_qemu_conf(root);
  }
  c->info_.uri = uri;
  c->info_.embedded = !root.empty();
  c->info_.embed_root = root;
  c->info_.local = c->info_.embedded || uri.find("://") == std::string::npos ||
                   uri.find(":///") != std::string::npos;
  if (c->info_.embedded) {
    if (root.string().size() > 60)
      throw Error("embedded root " + root.string() + " is too long (" +
                      std::to_string(root.string().size()) + " characters)",
                  "QEMU's UNIX sockets live under it and must stay below 108 characters; "
                  "use a path of at most 60");
    check_embedded_prerequisites();
    // Keep libvirt's own log lines off the user's terminal (unless they asked for them).
    if (!getenv("LIBVIRT_LOG_OUTPUTS"))
      setenv("LIBVIRT_LOG_OUTPUTS", ("3:file:" + (root / "libvirt.log").string()).c_str(), 0);
    // Before libvirt starts threads: a guardian that kills our QEMUs if we are SIGKILLed.
    start_guardian(root);
    // And the parent of the QEMUs it starts, which reaps them the moment they exit.
    become_qemu_reaper();
  }
  virSetErrorFunc(nullptr, quiet_errors);
  event_loop_acquire();
  c->loop_acquired_ = true;

  if (c->info_.embedded) {
    // libvirt's QEMU driver keeps its probe of the QEMU binary (2-4 s under TCG) only while
    // the newest change time of the libvirt modules loaded so far stays the same. The first
    // guest loads the storage-file module; where the packages were unpacked at different times it
    // is newer than the QEMU driver's, so the probe was thrown away and redone at the next guest
    // start and again at every smtlab start. The embedded secret driver (libvirt documents
    // opening it next to qemu:///embed; Debian ships it in libvirt-daemon, with the storage-file
    // module) is loaded first, so that the newest change time is already known when the QEMU
    // driver validates its cache. Not fatal when it cannot be opened.
    const std::string secret_uri = "secret:///embed?root=" + root.string();
    c->secret_conn_ = virConnectOpen(secret_uri.c_str());
  }
  c->conn_ = virConnectOpenAuth(uri.c_str(), virConnectAuthPtrDefault, 0);
  if (!c->conn_)
    throw Error("cannot open libvirt connection " + uri + ": " + libvirt_error(),
                c->info_.embedded
                    ? "check that qemu-system-x86 and libvirt-daemon-driver-qemu are installed "
                      "(./smtlab installs them); details in " + (root / "libvirt.log").string()
                    : "check that libvirtd runs there and that you may connect (virsh -c " + uri +
                          " list)");
  c->callback_id_ = virConnectDomainEventRegisterAny(
      c->conn_, nullptr, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
      VIR_DOMAIN_EVENT_CALLBACK(&Connection::on_lifecycle), c.get(), nullptr);
  if (c->callback_id_ < 0)
    throw Error("libvirt: cannot register for domain lifecycle events on " + uri + ": " +
                libvirt_error());

  auto& info = c->info_;
  if (const char* type = virConnectGetType(c->conn_)) info.hypervisor = type;
  unsigned long v = 0;
  if (virConnectGetVersion(c->conn_, &v) == 0) info.qemu_version = version_string(v);
  if (virConnectGetLibVersion(c->conn_, &v) == 0) info.libvirt_version = version_string(v);
  if (char* host = virConnectGetHostname(c->conn_)) {
    info.hostname = host;
    free(host);
  }
  bool kvm_offered = false;
  if (char* kvm = virConnectGetDomainCapabilities(c->conn_, nullptr, "x86_64", nullptr, "kvm", 0)) {
    free(kvm);
    kvm_offered = true;
  }
  auto choice = choose_accel_from_env(kvm_offered, info.local);
  info.accel = choice.accel;
  info.accel_reason = choice.reason;
  info.guest_cpu_model = info.accel == Accel::kvm ? "host-passthrough" : kDefaultTcgCpuModel;
  char* caps = virConnectGetCapabilities(c->conn_);
  if (!caps) throw Error("libvirt: cannot read host capabilities from " + uri + ": " + libvirt_error());
  std::string caps_xml = caps;
  free(caps);
  info.host = parse_host_capabilities(caps_xml);
  if (info.local) info.host_cpu_name = cpuinfo_model_name();
  return c;
}

Connection::~Connection() {
  if (conn_) {
    if (info_.embedded) {
      // No AUTODESTROY in the embedded driver: destroy whatever still runs on our root.
      virDomainPtr* domains = nullptr;
      int n = virConnectListAllDomains(conn_, &domains, VIR_CONNECT_LIST_DOMAINS_ACTIVE);
      for (int i = 0; i < n; ++i) {
        virDomainDestroy(domains[i]);
        virDomainFree(domains[i]);
      }
      free(domains);
    }
    if (callback_id_ >= 0) virConnectDomainEventDeregisterAny(conn_, callback_id_);
    virConnectClose(conn_);
    if (secret_conn_) virConnectClose(secret_conn_);
    if (info_.embedded) {
      try {
        reap_stale(info_.embed_root);  // and wait until their QEMUs are really gone
      } catch (...) {
      }
    }
  }
  if (loop_acquired_) event_loop_release();
}

std::string Connection::describe() const {
  std::string accel = info_.accel == Accel::kvm ? "kvm (host-passthrough)"
                                                : "tcg (" + info_.guest_cpu_model + ")";
  if (!info_.accel_reason.empty()) accel += " because " + info_.accel_reason;
  return fmt::format("{}: {} {}, libvirt {}, {}, host {}", info_.uri, info_.hypervisor,
                     info_.qemu_version, info_.libvirt_version, accel, info_.host.describe());
}

std::shared_ptr<DomainWatch> Connection::watch(const std::string& name) {
  auto w = std::make_shared<DomainWatch>();
  std::lock_guard lock(watches_mutex_);
  watches_[name] = w;
  return w;
}

void Connection::unwatch(const std::string& name) {
  std::lock_guard lock(watches_mutex_);
  watches_.erase(name);
}

int Connection::on_lifecycle(virConnectPtr, virDomainPtr dom, int event, int detail, void* self) {
  auto* c = static_cast<Connection*>(self);
  const char* name = virDomainGetName(dom);
  if (!name) return 0;
  std::shared_ptr<DomainWatch> w;
  {
    std::lock_guard lock(c->watches_mutex_);
    auto it = c->watches_.find(name);
    if (it == c->watches_.end()) return 0;
    w = it->second;
  }
  std::lock_guard lock(w->mutex);
  w->events.push_back(describe_lifecycle_event(event, detail));
  if (event == VIR_DOMAIN_EVENT_SHUTDOWN) w->shutdown_seen = true;
  if (event == VIR_DOMAIN_EVENT_CRASHED) w->crashed = true;
  if (event == VIR_DOMAIN_EVENT_STOPPED) {
    w->stopped = true;
    w->stop_detail = detail;
    if (detail == VIR_DOMAIN_EVENT_STOPPED_CRASHED || detail == VIR_DOMAIN_EVENT_STOPPED_FAILED)
      w->crashed = true;
  }
  w->changed.notify_all();
  return 0;
}

}  // namespace smtlab::vm
