#include "run/guest_session.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <optional>
#include <thread>

#include "image/image.hpp"
#include "image/initramfs.hpp"
#include "protocol/job_route.hpp"
#include "run/job_builder.hpp"
#include "run/noise_vm.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "util/log.hpp"
#include "util/sha256.hpp"
#include "util/utf8.hpp"
#include "vm/console.hpp"
#include "vm/domain.hpp"
#include "vm/guest_output.hpp"
#include "vm/interrupt.hpp"
#include "vm/pinning.hpp"
#include "vm/staging.hpp"
#include "vm/topology_check.hpp"
#include "vm/vcpu_state.hpp"

namespace smtlab::run {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The faults a guest's hello says its agent injects (guest/cmdline.hpp), as one line; "" for
// none. Guest input: at most 8 names, each cut to 64 characters of [A-Za-z0-9._-].
std::string injected_faults(const nlohmann::json& hello) {
  const auto it = hello.find("faults");
  if (it == hello.end() || !it->is_array()) return {};
  std::string line;
  int n = 0;
  for (const auto& f : *it) {
    if (!f.is_string()) continue;
    if (++n > 8) {
      line += ", ...";
      break;
    }
    std::string name;
    for (char c : f.get_ref<const std::string&>())
      if (name.size() < 64 && (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'))
        name += c;
    line += (line.empty() ? "" : ", ") + name;
  }
  return line;
}

// What a pump reads of a results channel at most at a time (a chatty guest is read on at the
// next poll; the last pump reads everything up to the channel's cap, in pieces of this size).
constexpr size_t kPumpChunk = 8 << 20;

vm::PinPolicy pin_policy(recipe::Pinning p) {
  switch (p) {
    case recipe::Pinning::vcpu: return vm::PinPolicy::vcpu;
    case recipe::Pinning::core: return vm::PinPolicy::core;
    case recipe::Pinning::shared: return vm::PinPolicy::shared;
    case recipe::Pinning::none: break;
  }
  return vm::PinPolicy::none;
}

vm::GuestTopology guest_topology_from(const nlohmann::json& rec) {
  vm::GuestTopology t;
  if (rec.contains("online") && rec["online"].is_string()) t.online = rec["online"].get<std::string>();
  if (rec.contains("smt_active") && rec["smt_active"].is_number_integer()) t.smt_active = rec["smt_active"].get<int>();
  if (rec.contains("cpus") && rec["cpus"].is_array()) {
    for (const auto& c : rec["cpus"]) {
      if (!c.is_object()) continue;
      vm::GuestCpu cpu;
      auto num = [&](const char* k) { return c.contains(k) && c[k].is_number_integer() ? c[k].get<int>() : -1; };
      cpu.cpu = num("cpu");
      cpu.core_id = num("core_id");
      cpu.package_id = num("package_id");
      cpu.die_id = num("die_id");
      if (c.contains("siblings") && c["siblings"].is_string()) cpu.siblings = c["siblings"].get<std::string>();
      t.cpus.push_back(cpu);
    }
  }
  return t;
}

// One job of a VM's job list (a shared boot), or the VM's only job.
struct JobState {
  bool ended = false;
  bool end_ok = false;
  std::string last_error;
  bool last_error_stalled = false;
  std::optional<Clock::time_point> first, bench_start, end;
  std::optional<HostCpuSample> host_at_bench, host_at_end;  // local hosts: who used the host CPUs
};

struct VmState {
  std::unique_ptr<vm::CappedTail> tail;  // the results channel, read up to its cap
  std::unique_ptr<protocol::JobRouter> router;  // a shared boot's benchmark VM
  std::vector<JobState> jobs;
  protocol::RecordStream stream;
  bool benchmark = true;
  bool hello = false;
  bool ended = false;
  bool end_ok = false;
  int exit_code = -1;
  double ready_s = -1;
  std::string last_error;  // the last error record's message
  bool last_error_stalled = false;  // ... and it said the workload stopped making progress
  int online_cpus = 0;           // from its topology record (0: not seen yet)
  uint64_t console_mark = 0;     // the console's size when its agent last wrote a record
  uint64_t stream_bytes = 0;     // bytes its agent has written
  std::optional<Clock::time_point> all_cpus_stuck;  // since when every CPU reported a soft lockup
  protocol::ProblemBudget problems;  // a garbage-spewing guest gets a bounded number of reports
};

}  // namespace

SessionOutcome run_guests_once(vm::Connection& connection, const SessionConfig& config, GuestObserver& observer) {
  const auto& cell = *config.cell;
  const auto& topo = cell.topology;
  SessionOutcome outcome;
  const int vms = static_cast<int>(config.jobs.size());
  const bool shared = !config.group.empty();
  const int n_jobs = shared ? static_cast<int>(config.group.size()) : 1;
  std::filesystem::create_directories(config.work_dir);

  auto cmdline_words = kernel_cmdline(cell);
  const std::string cmdline = kernel_cmdline_text(cell);
  bool nosmt = std::any_of(cmdline_words.begin(), cmdline_words.end(),
                           [](const std::string& w) { return w == "nosmt" || w.rfind("nosmt=", 0) == 0; });

  vm::VcpuTopology vtopo{topo.sockets, topo.dies, topo.cores, topo.threads};
  vm::PinRequest pin_request;
  pin_request.vms = vms;
  pin_request.topology = vtopo;
  pin_request.host_cpus = topo.host_cpus;
  pin_request.policy = pin_policy(topo.pinning);
  const bool confined = config.confine_to_host_cpus && !topo.host_cpus.empty();
  pin_request.confine_emulators = confined;
  vm::PinPlan pins;
  try {
    pins = vm::plan_pinning(pin_request, connection.info().host);
  } catch (const Error& e) {
    outcome.error = std::string("pinning: ") + e.what();
    return outcome;
  }
  outcome.notes = pins.notes;

  std::vector<vm::DomainSpec> specs;
  std::vector<VmState> state(static_cast<size_t>(vms));
  // A remote libvirt host gets the kernel, the base image (each uploaded once, named by content),
  // and per VM the job initrd and a qcow2 overlay (deleted when the cell ends: `staged` outlives
  // `group` below) in its staging pool; console and results port come back over streams.
  const bool remote = !connection.info().local;
  std::unique_ptr<vm::Staging> staging;
  std::vector<vm::StagedVolume> staged;
  std::filesystem::path remote_kernel, remote_base;
  try {
    if (remote) {
      staging = vm::Staging::open(connection, config.remote_dir.empty() ? std::filesystem::path(vm::kDefaultRemoteDir)
                                                                        : config.remote_dir);
      const auto& boot_image = config.kernel->kernel.boot_image;
      remote_kernel = staging->ensure_uploaded(vm::kernel_volume_name(sha256_file(boot_image)), boot_image);
      remote_base = staging->ensure_uploaded(vm::image_volume_name(config.image->digest), config.image->qcow2);
    }
    for (int k = 0; k < vms; ++k) {
      auto initrd = config.work_dir / ("vm" + std::to_string(k) + ".initrd");
      auto overlay = config.work_dir / ("vm" + std::to_string(k) + ".qcow2");
      const bool benchmark_vm = config.jobs[k].role != "noise";
      std::string job_text = protocol::to_json(config.jobs[k]).dump();
      if (shared && benchmark_vm) {
        protocol::JobList list;
        list.is_list = true;
        list.jobs = config.group_jobs.at(k);
        job_text = protocol::to_json(list).dump();
      }
      image::write_initrd_with_job(config.kernel->initramfs.path, job_text, initrd);
      vm::DomainSpec spec;
      spec.name = vm::unique_domain_name(cell.id, k);
      spec.topology = vtopo;
      spec.memory_mib = topo.memory_mib;
      spec.accel = connection.info().accel;
      spec.cpu_model = connection.info().guest_cpu_model;
      spec.cmdline = cmdline;
      spec.thread_sched =
          topo.host_sched == recipe::HostSched::batch ? vm::ThreadSched::batch : vm::ThreadSched::normal;
      if (remote) {
        staged.push_back(staging->upload_temporary(vm::vm_volume_name(spec.name, "initrd"), initrd));
        spec.initrd = staged.back().path();
        std::filesystem::remove(initrd);
        staged.push_back(staging->create_overlay(vm::vm_volume_name(spec.name, "qcow2"), remote_base));
        spec.disk = staged.back().path();
        spec.kernel = remote_kernel;
        spec.transport = vm::Transport::streams;
      } else {
        image::create_overlay(config.image->qcow2, overlay);
        spec.kernel = config.kernel->kernel.boot_image;
        spec.initrd = initrd;
        spec.disk = overlay;
      }
      spec.console_log = config.console_log(k);
      spec.results_channel = config.stream_log(k);
      if (config.qemu_log) spec.qemu_log = config.qemu_log(k);
      std::filesystem::remove(spec.results_channel);
      if (k < static_cast<int>(pins.vms.size())) {
        spec.vcpu_pins = pins.vms[k].vcpus;
        spec.emulator_pin = pins.vms[k].emulator;
      }
      specs.push_back(spec);
      state[k].tail = std::make_unique<vm::CappedTail>(spec.results_channel, vm::channel_cap().cap);
      state[k].benchmark = benchmark_vm;
      state[k].jobs.resize(static_cast<size_t>(n_jobs));
      if (shared && benchmark_vm) {
        std::vector<std::string> ids;
        for (const auto* c : config.group) ids.push_back(c->id);
        state[k].router = std::make_unique<protocol::JobRouter>(ids);
        state[k].stream.set_expected_ends(ids.size());
      }
    }
  } catch (const Error& e) {
    outcome.error = std::string("preparing the guests: ") + e.what();
    outcome.interrupted = vm::interrupted();
    std::filesystem::remove_all(config.work_dir);
    return outcome;
  }

  auto started = Clock::now();
  std::optional<Clock::time_point> bench_start, bench_end;
  std::vector<int> qemu_pids;  // local hosts, once the guests run: for the host CPU account
  auto sample_host = [&]() -> std::optional<HostCpuSample> {
    if (remote || qemu_pids.empty()) return std::nullopt;
    return sample_host_cpu(qemu_pids, confined ? topo.host_cpus : std::vector<int>{});
  };
  vm::DomainGroup group;
  int failed_vm = 0;
  auto fail = [&](int vm, std::string why) {
    if (outcome.error.empty()) {
      outcome.error = std::move(why);
      failed_vm = vm;
    }
  };
  // QEMU's registers of VM k kept next to its console: " (registers in vcpus-vm<k>.txt)".
  auto keep_registers = [&](int k, const std::string& text) -> std::string {
    const auto file = specs[k].console_log.parent_path() / ("vcpus-vm" + std::to_string(k) + ".txt");
    try {
      write_file_atomic(file, text);
    } catch (const Error&) {
      return {};
    }
    return " (registers in " + file.filename().string() + ")";
  };
  // A guest that stopped making progress: where its vCPUs are (QEMU's registers, kept next to its
  // console as vcpus-vm<k>.txt), said after the timeout's error. Only for the first error.
  auto where_vcpus_are = [&](int k, const char* when = "at the timeout") -> std::string {
    if (!outcome.error.empty() || k >= static_cast<int>(group.size())) return {};
    const std::string text = group[k].vcpu_registers();
    const auto vcpus = vm::parse_vcpu_registers(text);
    if (vcpus.empty()) return {};
    return "; VM " + std::to_string(k) + " " + when + ": " + vm::describe(vcpus) + keep_registers(k, text);
  };
  // Panics, init errors, stalls and warnings on a VM's console so far.
  auto console_findings = [&](int k) { return vm::scan_console(vm::read_console(specs[k].console_log)); };

  // The job a shared boot's benchmark VM is running (a noise VM's records go with it).
  auto current_job = [&] {
    for (const auto& s2 : state)
      if (s2.router) return s2.router->current();
    return 0;
  };
  // The job that was running when a guest froze or met a stray int3 (under TCG its cell runs again).
  std::optional<int> stalled_job;
  // What one read of VM k's channel held (`final`: the last read, after the guest is gone).
  auto take = [&](int k, protocol::Parsed parsed, bool final) {
    auto& st = state[k];
    for (const auto& p : parsed.problems)
      if (st.problems.admit(p)) observer.on_problem(k, p);
    if (final)
      if (auto held = st.problems.summary()) observer.on_problem(k, *held);
    if (!parsed.records.empty()) {
      std::error_code ec;
      const auto size = std::filesystem::file_size(specs[k].console_log, ec);
      if (!ec) st.console_mark = size;
      st.all_cpus_stuck.reset();
    }
    for (const auto& r : parsed.records) {
      const auto& b = r.body;
      int job = 0;
      if (st.router) {
        std::string why;
        job = st.router->route(r, &why);
        if (job < 0) {
          protocol::Problem p{protocol::Problem::Kind::bad_field, r.line,
                              r.type + " record seq " + std::to_string(r.seq) + " " + why + "; dropped"};
          if (st.problems.admit(p)) observer.on_problem(k, p);
          continue;
        }
      } else if (shared) {
        job = current_job();
      }
      auto& js = st.jobs[static_cast<size_t>(job)];
      if (!js.first) js.first = Clock::now();
      if (r.type == "hello" && !st.hello) {
        st.hello = true;
        st.ready_s = seconds_since(started);
        if (auto faults = injected_faults(b); !faults.empty())
          outcome.notes.push_back("VM " + std::to_string(k) + ": the guest agent injected the fault(s) " + faults +
                                  " (smtlab.fault= on the kernel command line, for testing smtlab): not a measurement");
      } else if (r.type == "topology") {
        while (outcome.guest_topology.size() <= static_cast<size_t>(k)) outcome.guest_topology.push_back(nullptr);
        outcome.guest_topology[k] = b;
        const auto seen = guest_topology_from(b);
        st.online_cpus = static_cast<int>(seen.cpus.size());
        auto diffs = vm::check_guest_topology(vtopo, nosmt, seen);
        if (!diffs.empty()) {
          std::string why = "VM " + std::to_string(k) + " does not see the recipe's topology " + topo.shape() + ":";
          for (const auto& d : diffs) why += " " + d + ";";
          fail(k, why);
        }
      } else if (r.type == "event" && st.benchmark) {
        auto name = b.value("name", std::string());
        if (name == "iteration-start" || name == "warmup") {
          if (!bench_start) bench_start = Clock::now();
          if (!js.bench_start) {
            js.bench_start = Clock::now();
            js.host_at_bench = sample_host();
          }
        }
      } else if (r.type == "error") {
        st.last_error = printable_text(b.value("message", std::string()));  // said on the terminal
        st.last_error_stalled = b.value("stalled", false);
        js.last_error = st.last_error;
        js.last_error_stalled = st.last_error_stalled;
      } else if (r.type == "end" && !st.ended && !js.ended) {
        js.ended = true;
        js.end_ok = b.value("status", std::string()) == "ok";
        js.end = Clock::now();
        js.host_at_end = sample_host();
        st.ended = std::all_of(st.jobs.begin(), st.jobs.end(), [](const JobState& j) { return j.ended; });
        st.end_ok = shared ? std::all_of(st.jobs.begin(), st.jobs.end(), [](const JobState& j) { return j.end_ok; })
                           : js.end_ok;
        st.exit_code = b.contains("exit_code") && b["exit_code"].is_number_integer() ? b["exit_code"].get<int>() : -1;
        if (st.benchmark) bench_end = Clock::now();
      }
      observer.on_record(k, job, r);
    }
    observer.flush();
  };
  // Reads VM k's channel: what arrived since the last pump (at most kPumpChunk), or, the last
  // time, everything up to the channel's cap; what the guest wrote beyond the cap is said once.
  auto pump = [&](int k, bool final) {
    auto& st = state[k];
    auto feed = [&](std::string bytes) {
      st.stream_bytes += bytes.size();
      take(k, st.stream.feed(bytes), false);
    };
    if (!final) return feed(st.tail->read(kPumpChunk));
    st.tail->read_all(kPumpChunk, feed);
    take(k, st.stream.finish(), true);
    // Said once, past the problem budget: a flood would have used it up.
    if (const auto beyond = st.tail->bytes_beyond())
      observer.on_problem(k, {protocol::Problem::Kind::cut, 0,
                              "the guest wrote more than the " + vm::describe_size(vm::channel_cap().cap) +
                                  " a results channel may hold: the " + std::to_string(beyond) +
                                  " bytes its file holds after them were not read"});
    observer.flush();
  };

  try {
    group.start(connection, specs);
    if (!remote)
      for (size_t k = 0; k < group.size(); ++k) qemu_pids.push_back(group[k].qemu_pid());
  } catch (const Error& e) {
    fail(0, std::string("starting the guests: ") + e.what());
  }

  auto last_console_check = Clock::now();
  // A booting guest whose console went silent is checked for a lock-up (every vCPU stuck with
  // interrupts off): that fails its boot in seconds, not at the boot timeout (and a boot retry
  // follows). After hello the same watch (`frozen`) waits for 30 s without a byte from the guest,
  // console or agent (the vmstat monitor writes every 10 s by default), so the registers of a
  // healthy benchmark are not read while it is measured.
  std::vector<vm::LockupWatch> lockup, frozen;
  for (int k = 0; k < vms; ++k) {
    lockup.emplace_back(std::chrono::seconds(10), std::chrono::seconds(5), std::chrono::seconds(10));
    frozen.emplace_back(std::chrono::seconds(30), std::chrono::seconds(5), std::chrono::seconds(10));
  }
  const std::string lockup_cause =
      connection.info().accel == vm::Accel::tcg
          ? " (under TCG this is QEMU now and then leaving vCPUs on kernel code another vCPU has just patched; a "
            "new boot does not meet it)"
          : " (a hard lock-up of the guest kernel)";
  const std::string freeze_cause =
      connection.info().accel == vm::Accel::tcg
          ? " (under TCG this can be QEMU leaving vCPUs on kernel code another vCPU has just patched, such as a "
            "static branch flipped at run time, or it is the kernel under test)"
          : " (the kernel under test)";
  // A fatal line on VM k's console fails the boot with it. Under TCG an int3 oops is, as far as
  // seen, QEMU executing an int3 the kernel had already patched away (Debian 6.12 dies of it where
  // 6.1 mostly loops; 50-100 flips of kernel.sched_schedstats under load here): its cell runs once
  // more, like a stalled one, and both attempts say what happened.
  auto fail_from_console = [&](int k, const std::vector<vm::ConsoleFinding>& findings) {
    if (!outcome.error.empty()) return;
    std::string why = "VM " + std::to_string(k) + ": " + vm::first_problem(findings);
    const auto int3 = vm::int3_oops(findings);
    if (int3 && why.find(*int3) == std::string::npos) why += " (after " + *int3 + ")";
    if (int3 && connection.info().accel == vm::Accel::tcg) {
      why += " (under TCG this can be QEMU executing an int3 that the kernel had already patched away, such as a "
             "static branch flipped while other vCPUs ran through it, or it is the kernel under test)";
      outcome.stalled = true;
      stalled_job = current_job();
    }
    fail(k, why);
  };
  // A guest that wrote more than its console or results channel may hold (util/limits.hpp) fails
  // its cell and is stopped with the others, before it fills the host's disk.
  auto check_output_caps = [&](int k) {
    if (vm::bytes_over(specs[k].console_log, vm::console_cap()))
      fail(k, vm::over_cap_error(k, vm::console_cap(), specs[k].console_log));
    else if (vm::bytes_over(specs[k].results_channel, vm::channel_cap()))
      fail(k, vm::over_cap_error(k, vm::channel_cap(), specs[k].results_channel));
  };
  while (outcome.error.empty() && group.size() == specs.size()) {
    if (vm::interrupted()) {
      outcome.interrupted = true;
      fail(0, "interrupted (signal " + std::to_string(vm::interrupt_signal()) + ")");
      break;
    }
    for (int k = 0; k < vms; ++k) pump(k, false);
    if (!outcome.error.empty()) break;
    bool all_done = true;
    for (int k = 0; k < vms; ++k) {
      auto& st = state[k];
      if (!st.benchmark) continue;
      if (st.ended) continue;
      if (group[k].is_stopped()) {
        pump(k, false);
        if (st.ended) continue;
        // A guest that wrote past a cap and stopped before the next check: its end lies beyond
        // what is read, and the flood is why.
        check_output_caps(k);
        if (!outcome.error.empty()) break;
        // Why it stopped is on its console when it panicked or its init gave up (panic=-1 and
        // the init's power-off stop the guest at once): that line is the cell's error.
        auto findings = console_findings(k);
        if (vm::is_fatal(findings))
          fail_from_console(k, findings);
        else
          fail(k, "VM " + std::to_string(k) + " stopped (" + group[k].stop_info().describe() +
                      ") before its agent reported the end" +
                      (st.last_error.empty() ? "" : ": " + st.last_error));
        break;
      }
      all_done = false;
    }
    // A noise VM makes the topology's overcommit until the benchmark has ended (also on the pass
    // that saw the benchmark's end): one that stopped, or whose agent ended its noise job, leaves
    // a cell not measured under it. A panic or an init's last words on its console say why.
    for (int k = 0; k < vms && outcome.error.empty(); ++k) {
      auto& st = state[k];
      if (st.benchmark) continue;
      const bool stopped = group[k].is_stopped();
      if (stopped) pump(k, false);
      const auto lost = noise_vm_lost(
          {k, stopped, stopped ? group[k].stop_info().describe() : "", st.ended, st.end_ok, st.last_error},
          seconds_since(started));
      if (lost.empty()) continue;
      check_output_caps(k);  // a flood first: it is why such a guest's records end early
      if (!outcome.error.empty()) break;
      auto findings = console_findings(k);
      if (vm::is_fatal(findings))
        fail_from_console(k, findings);
      else
        fail(k, lost);
    }
    if (!outcome.error.empty() || all_done) break;
    double elapsed = seconds_since(started);
    for (int k = 0; k < vms; ++k) {
      if (!state[k].hello && elapsed > config.boot_timeout_s)
        fail(k, "VM " + std::to_string(k) + " did not start its agent within " + std::to_string(config.boot_timeout_s) +
                    " s (boot timeout)" + where_vcpus_are(k));
    }
    // A shared boot has each of its cells' time: n x the cell timeout for the whole boot.
    if (outcome.error.empty() && elapsed > static_cast<double>(config.cell_timeout_s) * n_jobs) {
      std::string where;
      for (int k = 0; k < vms; ++k) where += where_vcpus_are(k);
      fail(0, (shared ? "the shared boot's " + std::to_string(n_jobs) + " cells did not finish within " +
                            std::to_string(config.cell_timeout_s * n_jobs) + " s (" + std::to_string(n_jobs) +
                            " x the cell timeout)"
                      : "the cell did not finish within " + std::to_string(config.cell_timeout_s) + " s (cell timeout)") +
                  where);
    }
    if (seconds_since(last_console_check) >= 1.0 || !outcome.error.empty()) {
      last_console_check = Clock::now();
      for (int k = 0; k < vms; ++k) check_output_caps(k);
      for (int k = 0; k < vms; ++k) {
        auto findings = console_findings(k);
        if (vm::is_fatal(findings)) fail_from_console(k, findings);
      }
      // A guest whose every CPU reported a soft lockup (20 s or more without scheduling) since its
      // agent last wrote, and whose agent then says nothing for 30 s more, is frozen: fail now
      // (under TCG the cell runs again, as after a stall), not at the cell timeout. Seen under
      // TCG: every vCPU of a Debian 6.1 guest looping on an int3 that QEMU kept translated after
      // the kernel had patched it away (a static branch flipped while the vCPUs ran through it;
      // the kernel's int3 handler sees no int3 there and returns to it). With interrupts off
      // they print nothing: the register watch below catches that case.
      for (int k = 0; k < vms && outcome.error.empty(); ++k) {
        auto& st = state[k];
        if (!st.hello || st.ended) continue;
        std::error_code ec;
        const auto size = std::filesystem::file_size(specs[k].console_log, ec);
        if (ec || size <= st.console_mark) continue;
        const int cpus = st.online_cpus > 0 ? st.online_cpus : vtopo.count();
        auto stuck = vm::every_cpu_stuck(vm::read_console_since(specs[k].console_log, st.console_mark), cpus, 20);
        if (!stuck) continue;
        if (!st.all_cpus_stuck) st.all_cpus_stuck = Clock::now();
        if (Clock::now() - *st.all_cpus_stuck < std::chrono::seconds(30)) continue;
        const std::string where = where_vcpus_are(k, "now");
        fail(k, "VM " + std::to_string(k) + " froze: each of its " + std::to_string(cpus) +
                    " online CPUs reported a soft lockup since its agent last wrote, and the agent has said nothing "
                    "for 30 s after (" + *stuck + ")" + where + freeze_cause);
        stalled_job = current_job();
        outcome.stalled = true;
      }
      // ... and one whose vCPUs all spin with interrupts off (no soft lockup can be printed then).
      for (int k = 0; k < vms && outcome.error.empty(); ++k) {
        auto& st = state[k];
        if (!st.hello || st.ended) continue;
        std::error_code ec;
        const auto bytes = std::filesystem::file_size(specs[k].console_log, ec);
        auto stuck = frozen[k].check(Clock::now(), (ec ? 0 : bytes) + st.stream_bytes,
                                     [&] { return group[k].vcpu_registers(); });
        if (!stuck) continue;
        fail(k, "VM " + std::to_string(k) + " froze: neither its console nor its agent has written for over 30 s and " +
                    *stuck + keep_registers(k, frozen[k].last_registers()) + freeze_cause);
        stalled_job = current_job();
        outcome.stalled = true;
      }
      for (int k = 0; k < vms && outcome.error.empty(); ++k) {
        if (state[k].hello) continue;
        std::error_code ec;
        const auto bytes = std::filesystem::file_size(specs[k].console_log, ec);
        auto stuck = lockup[k].check(Clock::now(), ec ? 0 : bytes, [&] { return group[k].vcpu_registers(); });
        if (!stuck) continue;
        fail(k, "VM " + std::to_string(k) + " locked up while booting: its console has been silent for over 10 s and " +
                    *stuck + keep_registers(k, lockup[k].last_registers()) + lockup_cause);
      }
    }
    if (!outcome.error.empty()) break;
    // Until every guest said hello, look often: `ready_s` is the boot-to-ready figure, and a KVM
    // boot of about a second needs it to 20 ms, not to one 150 ms poll.
    bool all_ready = std::all_of(state.begin(), state.end(), [](const VmState& st) { return st.hello; });
    std::this_thread::sleep_for(std::chrono::milliseconds(all_ready ? 150 : 20));
  }

  // Benchmark guests that reported their end power themselves off: give them a moment, so the
  // last records and the console are complete; then tear everything down.
  if (outcome.error.empty() && group.size() == specs.size()) {
    for (int k = 0; k < vms; ++k) {
      if (state[k].benchmark) group[k].wait_stopped(std::chrono::seconds(20));
    }
  }
  try {
    group.destroy_all();
  } catch (const Error& e) {
    outcome.notes.push_back(std::string("teardown: ") + e.what());
  }
  for (int k = 0; k < vms; ++k) pump(k, true);
  // A flood since the last check; then each file keeps its first cap bytes (QEMU may have written
  // on until the guest was stopped).
  for (int k = 0; k < vms; ++k) {
    check_output_caps(k);
    vm::cut_to_cap(specs[k].console_log, vm::console_cap());
    vm::cut_to_cap(specs[k].results_channel, vm::channel_cap());
  }
  // A panic may have been printed after the last check; warnings and stalls (a guest starved by
  // a loaded host) do not fail the cell but are noted with it: its measurements were disturbed.
  for (int k = 0; k < vms; ++k) {
    auto findings = console_findings(k);
    if (outcome.error.empty() && vm::is_fatal(findings))
      fail_from_console(k, findings);
    for (const auto& d : vm::disturbances(findings)) outcome.disturbances.push_back("VM " + std::to_string(k) + ": " + d);
  }
  // One cell: a benchmark VM that reported failure fails it. A shared boot: that fails the job's
  // cell only (below).
  for (int k = 0; k < vms && outcome.error.empty() && !shared; ++k) {
    const auto& st = state[k];
    if (st.benchmark && !st.end_ok) {
      fail(k, "VM " + std::to_string(k) + " reported failure" + (st.last_error.empty() ? "" : ": " + st.last_error));
      outcome.stalled = st.last_error_stalled;
    }
  }
  // The first benchmark VM's job j, from its first measured (or warm-up) iteration to its end.
  auto job_host_share = [&](int j) -> std::optional<HostCpuShare> {
    auto st = std::find_if(state.begin(), state.end(), [](const VmState& s) { return s.benchmark; });
    if (st == state.end()) return std::nullopt;
    const auto& js = st->jobs[static_cast<size_t>(j)];
    if (!js.host_at_bench || !js.host_at_end) return std::nullopt;
    return host_cpu_share(*js.host_at_bench, *js.host_at_end);
  };
  if (shared) {
    auto since_start = [&](Clock::time_point t) { return std::chrono::duration<double>(t - started).count(); };
    for (int j = 0; j < n_jobs; ++j) {
      CellOutcome c;
      c.ended = true;
      std::string job_error;
      std::optional<Clock::time_point> first, bench, end;
      for (int k = 0; k < vms; ++k) {
        const auto& st = state[k];
        if (!st.benchmark) continue;
        const auto& js = st.jobs[static_cast<size_t>(j)];
        if (js.first && (!first || *js.first < *first)) first = js.first;
        if (js.bench_start && (!bench || *js.bench_start < *bench)) bench = js.bench_start;
        if (js.end && (!end || *js.end > *end)) end = js.end;
        if (!js.ended) c.ended = false;
        else if (!js.end_ok && job_error.empty()) {
          job_error = "VM " + std::to_string(k) + " reported failure" + (js.last_error.empty() ? "" : ": " + js.last_error);
          c.stalled = js.last_error_stalled;
        }
      }
      if (stalled_job == j) c.stalled = true;
      if (first) c.start_s = since_start(*first);
      c.host_cpu = job_host_share(j);
      if (first && end && c.ended) c.job_s = std::chrono::duration<double>(*end - *first).count();
      if (bench && end && c.ended) c.bench_s = std::chrono::duration<double>(*end - *bench).count();
      if (!c.ended)
        c.error = "the shared boot " + (outcome.error.empty() ? std::string("ended") : "failed") +
                  " before this cell's job ended" + (outcome.error.empty() ? std::string() : ": " + outcome.error);
      else
        c.error = job_error;
      c.ok = c.ended && c.error.empty();
      outcome.cells.push_back(std::move(c));
    }
    // The boot failed unless every job ended; a job that failed is its cell's failure alone.
    if (outcome.error.empty())
      for (const auto& c : outcome.cells)
        if (!c.ended) fail(0, c.error);
  }

  if (!shared) outcome.host_cpu = job_host_share(0);
  outcome.wall_s = seconds_since(started);
  if (bench_start && bench_end) outcome.bench_s = std::chrono::duration<double>(*bench_end - *bench_start).count();
  for (const auto& st : state) {
    outcome.ready_s.push_back(st.ready_s);
    outcome.exit_codes.push_back(st.exit_code);
  }
  outcome.ok = outcome.error.empty();
  bool any_cell_failed = std::any_of(outcome.cells.begin(), outcome.cells.end(), [](const CellOutcome& c) { return !c.ok; });
  if ((!outcome.ok || any_cell_failed) && !specs.empty())
    outcome.console_tail = vm::console_tail(vm::read_console(specs[failed_vm].console_log), 25);
  std::error_code ec;
  std::filesystem::remove_all(config.work_dir, ec);
  return outcome;
}

namespace {

// A guest that failed before its agent said hello measured nothing; of several guests, one that
// did say hello may have (with_boot_retries keeps what it wrote). (Under TCG a Debian 6.12 guest
// now and then oopses on an int3 while the kernel patches its own code at boot, a QEMU cross-vCPU
// code-modification race, not the kernel under test.)
bool failed_while_booting(const SessionOutcome& o) {
  if (o.ok || o.interrupted || o.ready_s.empty()) return false;  // no ready_s: failed before any start
  return std::any_of(o.ready_s.begin(), o.ready_s.end(), [](double r) { return r < 0; });
}

}  // namespace

SessionOutcome with_boot_retries(const SessionConfig& config, const std::function<SessionOutcome()>& once) {
  auto outcome = once();
  std::vector<std::string> earlier;
  for (int attempt = 1; attempt <= config.boot_retries && failed_while_booting(outcome) && !vm::interrupted(); ++attempt) {
    // A VM that did say hello may have run its benchmark meanwhile: what the attempt wrote is
    // kept aside whole, and the next attempt does not append to it.
    std::string kept;
    if (config.keep_failed_boot) {
      kept = config.keep_failed_boot(attempt, outcome.error);
    } else {
      for (int k = 0; k < static_cast<int>(config.jobs.size()); ++k) {
        std::vector<std::filesystem::path> logs = {config.console_log(k), config.stream_log(k),
                                                   config.console_log(k).parent_path() /
                                                       ("vcpus-vm" + std::to_string(k) + ".txt")};
        if (config.qemu_log) logs.push_back(config.qemu_log(k));
        for (const auto& log : logs) {
          std::error_code ec;
          auto to = log.string() + ".attempt-" + std::to_string(attempt);
          std::filesystem::rename(log, to, ec);
          if (!ec && log == config.console_log(k))
            kept += (kept.empty() ? "console kept as " : ", ") + std::filesystem::path(to).filename().string();
        }
      }
    }
    earlier.push_back("boot attempt " + std::to_string(attempt) + " failed before the agent was ready: " + outcome.error +
                      (kept.empty() ? "" : " (" + kept + ")") + "; booted again");
    note(earlier.back());
    outcome = once();
  }
  outcome.notes.insert(outcome.notes.begin(), earlier.begin(), earlier.end());
  outcome.notes_said = earlier.size();
  return outcome;
}

SessionOutcome run_guests(vm::Connection& connection, const SessionConfig& config, GuestObserver& observer) {
  return with_boot_retries(config, [&] { return run_guests_once(connection, config, observer); });
}

}  // namespace smtlab::run
