#include "vm/domain.hpp"

#include <libvirt/libvirt-qemu.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "util/error.hpp"
#include "vm/domain_watch.hpp"
#include "vm/embed_root.hpp"
#include "vm/interrupt.hpp"
#include "vm/reaper.hpp"
#include "vm/stream_pump.hpp"

namespace smtlab::vm {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Domain::Impl {
  Connection* connection = nullptr;
  DomainSpec spec;
  std::string xml;
  virDomainPtr dom = nullptr;
  std::shared_ptr<DomainWatch> watch;
  int pid = -1;
  Clock::time_point started;
  bool destroyed = false;  // destroy() stopped a running guest
  bool done = false;       // destroy() completed
  // Transport::streams: the console and results port copied into their local files.
  std::vector<std::unique_ptr<StreamPump>> pumps;

  // After the domain stopped: the last bytes may still be on their way. Bounded.
  void drain(std::chrono::milliseconds timeout) {
    auto deadline = Clock::now() + timeout;
    for (auto& p : pumps)
      p->wait_finished(std::max(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()),
                                std::chrono::milliseconds(0)));
  }

  ~Impl() {
    for (auto& p : pumps) p->stop();
    pumps.clear();
    if (dom) virDomainFree(dom);
    if (connection && watch) connection->unwatch(spec.name);
  }
};

namespace {

int read_pidfile(const fs::path& file) {
  std::ifstream in(file);
  int pid = -1;
  if (in >> pid && pid > 1) return pid;
  return -1;
}

fs::path pidfile_for(const Connection& c, const std::string& name) {
  if (c.info().embedded) return c.info().embed_root / "run" / "qemu" / (name + ".pid");
  if (c.info().uri == "qemu:///system") return fs::path("/run/libvirt/qemu") / (name + ".pid");
  return {};
}

// libvirt's log of one guest's QEMU (its command line, QEMU's own messages, the start and stop
// lines) under the embedded driver. Elsewhere that log is libvirt's to keep and rotate.
fs::path qemu_log_for(const Connection& c, const std::string& name) {
  if (c.info().embedded) return c.info().embed_root / "log" / "qemu" / (name + ".log");
  return {};
}

constexpr std::streamsize kQemuLogCap = 1 << 20;

// Once the guest is gone: copies its QEMU log to `to` (the first kQemuLogCap bytes; "" copies
// nothing) and removes it from the embedded root, which would otherwise keep one file per guest
// ever started. Best effort: the guest's results never depend on it.
void collect_qemu_log(const Connection& c, const std::string& name, const fs::path& to) noexcept {
  try {
    const auto from = qemu_log_for(c, name);
    std::error_code ec;
    if (from.empty() || !fs::exists(from, ec)) return;
    if (!to.empty()) {
      std::ifstream in(from, std::ios::binary);
      std::string text(static_cast<size_t>(kQemuLogCap), '\0');
      in.read(text.data(), kQemuLogCap);
      text.resize(static_cast<size_t>(in.gcount()));
      if (in.gcount() == kQemuLogCap && in.peek() != std::char_traits<char>::eof())
        text += "\n[smtlab: the rest of QEMU's log was cut at " + std::to_string(kQemuLogCap) + " bytes]\n";
      std::ofstream(to, std::ios::binary | std::ios::trunc) << text;
    }
    fs::remove(from, ec);
  } catch (...) {
  }
}

void require_file(const fs::path& p, const char* what, const std::string& domain) {
  if (p.empty()) return;
  std::error_code ec;
  if (!fs::exists(p, ec))
    throw Error("cannot start " + domain + ": " + what + " " + p.string() + " does not exist");
}

bool domain_gone_in_libvirt(virDomainPtr dom) {
  int state = 0, reason = 0;
  if (virDomainGetState(dom, &state, &reason, 0) < 0) {
    virErrorPtr err = virGetLastError();
    return err && err->code == VIR_ERR_NO_DOMAIN;
  }
  return state == VIR_DOMAIN_SHUTOFF || state == VIR_DOMAIN_CRASHED;
}


}  // namespace

// Console and results port of a domain started paused: open both streams, start copying (each
// capped: vm/guest_output.hpp), resume.
void Domain::open_streams(Connection& connection, Impl& impl) {
  const auto& spec = impl.spec;
  auto open_one = [&](const std::filesystem::path& file, const char* what, OutputCap cap, auto&& opener) {
    if (file.empty()) return;
    virStreamPtr st = virStreamNew(connection.raw(), VIR_STREAM_NONBLOCK);
    if (!st) throw Error("cannot create a stream for the " + std::string(what) + " of " + spec.name + ": " + libvirt_error());
    if (opener(st) < 0) {
      std::string why = libvirt_error();
      virStreamFree(st);
      throw Error("cannot open the " + std::string(what) + " of " + spec.name + " on " + connection.info().uri + ": " + why);
    }
    impl.pumps.push_back(std::make_unique<StreamPump>(st, file, std::move(cap)));
  };
  open_one(spec.console_log, "console", console_cap(),
           [&](virStreamPtr st) { return virDomainOpenConsole(impl.dom, nullptr, st, VIR_DOMAIN_CONSOLE_FORCE); });
  open_one(spec.results_channel, "results port", channel_cap(), [&](virStreamPtr st) {
    return virDomainOpenChannel(impl.dom, kResultsPort, st, VIR_DOMAIN_CHANNEL_FORCE);
  });
  if (virDomainResume(impl.dom) < 0)
    throw Error("cannot resume " + spec.name + " after opening its streams: " + libvirt_error());
}

std::string to_string(WaitResult r) {
  switch (r) {
    case WaitResult::stopped: return "stopped";
    case WaitResult::timeout: return "timeout";
    case WaitResult::interrupted: return "interrupted";
  }
  return "?";
}

std::string StopInfo::describe() const {
  if (!stopped) return "running";
  if (connection_lost) return "connection to the libvirt host lost";
  if (crashed) return "crashed";
  if (guest_initiated) return "stopped by the guest";
  if (destroyed) return "destroyed";
  return "stopped";
}

Domain::Domain(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Domain::Domain(Domain&&) noexcept = default;
Domain& Domain::operator=(Domain&& other) noexcept {
  if (this != &other) {
    if (impl_) {
      try {
        destroy();
      } catch (...) {
      }
    }
    impl_ = std::move(other.impl_);
  }
  return *this;
}

Domain::~Domain() {
  if (!impl_) return;
  try {
    destroy();
  } catch (...) {
  }
}

Domain Domain::start(Connection& connection, const DomainSpec& spec) {
  auto impl = std::make_unique<Impl>();
  impl->connection = &connection;
  impl->spec = spec;
  impl->xml = domain_xml(spec);  // validates
  if (connection.info().local) {
    require_file(spec.kernel, "kernel", spec.name);
    require_file(spec.initrd, "initrd", spec.name);
    require_file(spec.disk, "disk", spec.name);
    for (const auto& f : {spec.console_log, spec.results_channel, spec.control_socket, spec.qemu_log})
      if (!f.empty() && !fs::is_directory(f.parent_path()))
        throw Error("cannot start " + spec.name + ": directory " + f.parent_path().string() +
                    " does not exist");
  }
  impl->watch = connection.watch(spec.name);
  impl->started = Clock::now();
  // AUTODESTROY ties the guest to the connection: libvirtd destroys it when the client goes
  // away. libvirt 9.0 refuses it for the embedded driver; there, ~Connection destroys what is
  // left and the guardian covers a killed process.
  unsigned flags = connection.info().embedded ? 0 : VIR_DOMAIN_START_AUTODESTROY;
  // Streams: started paused, so that nothing the guest prints precedes our readers.
  const bool streams = spec.transport == Transport::streams;
  if (streams) flags |= VIR_DOMAIN_START_PAUSED;
  impl->dom = virDomainCreateXML(connection.raw(), impl->xml.c_str(), flags);
  if (!impl->dom) {
    std::string why = libvirt_error();
    connection.unwatch(spec.name);
    impl->watch.reset();
    collect_qemu_log(connection, spec.name, spec.qemu_log);
    throw Error("cannot start domain " + spec.name + ": " + why,
                "the domain XML is in the run's log; `virsh -c '" + connection.info().uri +
                    "' domcapabilities` lists what this QEMU supports");
  }
  if (connection.info().local)
    if (auto pf = pidfile_for(connection, spec.name); !pf.empty()) impl->pid = read_pidfile(pf);
  if (connection.info().embedded) reap_when_exited(impl->pid);
  if (streams) {
    try {
      open_streams(connection, *impl);
    } catch (...) {
      for (auto& p : impl->pumps) p->stop();
      virDomainDestroy(impl->dom);
      throw;
    }
  }
  return Domain(std::move(impl));
}

const std::string& Domain::name() const { return impl_->spec.name; }
const DomainSpec& Domain::spec() const { return impl_->spec; }
const std::string& Domain::xml() const { return impl_->xml; }
int Domain::qemu_pid() const { return impl_->pid; }
double Domain::uptime_s() const {
  return std::chrono::duration<double>(Clock::now() - impl_->started).count();
}

std::string Domain::vcpu_registers() const {
  if (!impl_->dom || is_stopped()) return {};
  char* text = nullptr;
  // The monitor passthrough: libvirt marks the domain tainted (custom-monitor), harmless for a
  // guest that is about to be destroyed.
  if (virDomainQemuMonitorCommand(impl_->dom, "info registers -a", &text, VIR_DOMAIN_QEMU_MONITOR_COMMAND_HMP) < 0) {
    virResetLastError();
    return {};
  }
  std::string out = text ? text : "";
  free(text);
  if (out.size() > (1u << 20)) out.resize(1u << 20);
  return out;
}

// A dead connection sends no more events: its guests count as stopped (a remote libvirtd
// destroys them: AUTODESTROY).
static bool mark_if_connection_lost(Connection& connection, DomainWatch& w) {
  if (virConnectIsAlive(connection.raw()) != 0) return false;
  std::lock_guard lock(w.mutex);
  if (!w.stopped) {
    w.stopped = true;
    w.connection_lost = true;
    w.events.push_back("stopped/connection-lost");
  }
  return true;
}

bool Domain::is_stopped() const {
  bool stopped;
  {
    std::lock_guard lock(impl_->watch->mutex);
    stopped = impl_->watch->stopped;
  }
  if (!stopped && !impl_->connection->info().embedded)
    stopped = mark_if_connection_lost(*impl_->connection, *impl_->watch);
  if (!stopped) return false;
  impl_->drain(std::chrono::seconds(3));  // streams: the guest's last output is in the files
  return true;
}

StopInfo Domain::stop_info() const {
  StopInfo s;
  std::lock_guard lock(impl_->watch->mutex);
  const auto& w = *impl_->watch;
  s.stopped = w.stopped || impl_->done;
  s.guest_initiated = w.shutdown_seen || w.stop_detail == VIR_DOMAIN_EVENT_STOPPED_SHUTDOWN;
  s.crashed = w.crashed;
  s.destroyed = impl_->destroyed;
  s.connection_lost = w.connection_lost;
  s.events = w.events;
  return s;
}

WaitResult Domain::wait_stopped(std::chrono::milliseconds timeout) {
  if (!impl_ || impl_->done) return WaitResult::stopped;
  auto deadline = Clock::now() + timeout;
  auto next_poll = Clock::now() + std::chrono::seconds(2);
  auto& w = *impl_->watch;
  while (true) {
    {
      std::unique_lock lock(w.mutex);
      auto slice = std::min<Clock::time_point>(deadline, Clock::now() + std::chrono::milliseconds(100));
      if (w.changed.wait_until(lock, slice, [&] { return w.stopped; })) {
        lock.unlock();
        impl_->drain(std::chrono::seconds(3));
        return WaitResult::stopped;
      }
    }
    if (interrupted()) return WaitResult::interrupted;
    if (Clock::now() >= deadline) return WaitResult::timeout;
    if (Clock::now() >= next_poll) {
      // Belt and braces: if an event was lost (connection trouble), ask libvirt directly.
      next_poll = Clock::now() + std::chrono::seconds(2);
      if (mark_if_connection_lost(*impl_->connection, w)) {
        impl_->drain(std::chrono::seconds(3));
        return WaitResult::stopped;
      }
      if (domain_gone_in_libvirt(impl_->dom)) {
        {
          std::lock_guard lock(w.mutex);
          w.stopped = true;
          w.events.push_back("stopped/polled");
        }
        impl_->drain(std::chrono::seconds(3));
        return WaitResult::stopped;
      }
    }
  }
}

void Domain::destroy() {
  if (!impl_ || impl_->done) return;
  auto& impl = *impl_;
  bool stopped;
  {
    std::lock_guard lock(impl.watch->mutex);
    stopped = impl.watch->stopped;
  }
  if (!stopped && impl.dom) {
    if (virDomainDestroy(impl.dom) == 0) {
      impl.destroyed = true;
    } else if (!domain_gone_in_libvirt(impl.dom)) {
      std::string why = libvirt_error();
      // Retry once: libvirt refuses while another job (e.g. the stop it is processing) runs.
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      if (virDomainDestroy(impl.dom) != 0 && !domain_gone_in_libvirt(impl.dom))
        throw Error("cannot destroy domain " + impl.spec.name + ": " + why,
                    "kill its QEMU process by hand (pgrep -af " + impl.spec.name + ")");
      impl.destroyed = true;
    }
  }
  // The stop event comes before QEMU has fully exited: wait for the process itself.
  if (impl.pid > 0) {
    auto deadline = Clock::now() + std::chrono::seconds(15);
    bool escalated = false;
    while (!process_gone(impl.pid)) {
      if (Clock::now() > deadline) {
        if (escalated || !impl.connection->info().embedded)
          throw Error("QEMU process " + std::to_string(impl.pid) + " of " + impl.spec.name +
                          " did not exit",
                      "kill it by hand: kill -9 " + std::to_string(impl.pid));
        kill(impl.pid, SIGKILL);
        escalated = true;
        deadline = Clock::now() + std::chrono::seconds(5);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  // Streams end when QEMU closes the guest's devices; whatever is still unsaid after that is lost.
  impl.drain(std::chrono::seconds(3));
  for (auto& p : impl.pumps) p->stop();
  {
    std::lock_guard lock(impl.watch->mutex);
    impl.watch->stopped = true;
  }
  collect_qemu_log(*impl.connection, impl.spec.name, impl.spec.qemu_log);
  impl.done = true;
}

DomainGroup::~DomainGroup() {
  try {
    destroy_all();
  } catch (...) {
  }
}

void DomainGroup::start(Connection& connection, const std::vector<DomainSpec>& specs) {
  std::vector<std::future<Domain>> starting;
  for (const auto& spec : specs)
    starting.push_back(std::async(std::launch::async, [&connection, &spec] { return Domain::start(connection, spec); }));
  std::exception_ptr first;
  for (auto& f : starting) {  // every start is waited for, so that none is left running unowned
    try {
      domains_.push_back(f.get());
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (!first) return;
  try {
    destroy_all();
  } catch (...) {
  }
  domains_.clear();
  std::rethrow_exception(first);
}

WaitResult DomainGroup::wait_all_stopped(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  for (auto& d : domains_) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    auto r = d.wait_stopped(std::max(left, std::chrono::milliseconds(0)));
    if (r != WaitResult::stopped) return r;
  }
  return WaitResult::stopped;
}

void DomainGroup::destroy_all() {
  std::exception_ptr first;
  for (auto& d : domains_) {
    try {
      d.destroy();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace smtlab::vm
