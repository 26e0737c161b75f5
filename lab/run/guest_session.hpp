#pragma once
// One cell's guests from start to teardown: overlays and job initrds made (on a remote libvirt
// host: staged there through its storage pool, console and results port read over streams),
// domains started in the cell's topology and pinning, their record streams parsed as they grow,
// consoles watched for panics, timeouts enforced, the guest topology verified, and every domain
// destroyed on every path. Records go to an observer (the runner writes results; `smtlab boot`
// prints output).
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plan/plan.hpp"
#include "protocol/job.hpp"
#include "protocol/record_stream.hpp"
#include "run/artifacts.hpp"
#include "run/host_cpu.hpp"
#include "vm/connection.hpp"

namespace smtlab::run {

class GuestObserver {
 public:
  virtual ~GuestObserver() = default;
  // `job`: the record's job in a shared boot (index into SessionConfig::group; 0 for one cell).
  // A noise VM's records go with the job its group's benchmark VM is running.
  virtual void on_record(int vm, int job, const protocol::Record& record) = 0;
  virtual void on_problem(int vm, const protocol::Problem& problem) = 0;
  // After each read of a guest's channel (every poll while the guests run, and the last read):
  // what on_record and on_problem got until now must be on disk when this returns. An observer
  // may gather them until then (one fdatasync per file and poll, not one per record).
  virtual void flush() {}
};

struct SessionConfig {
  const plan::Cell* cell = nullptr;
  const BootKernel* kernel = nullptr;
  const image::ImageArtifact* image = nullptr;
  std::vector<protocol::Job> jobs;       // one per VM
  // A shared boot (recipe share_boot): the cells that run in this boot, in order (`cell` is the
  // first), and per VM one job per cell (benchmark VMs get them as a job list; a noise VM runs
  // its one job, jobs[vm], for the whole boot). Empty: the boot is `cell`'s alone.
  std::vector<const plan::Cell*> group;
  std::vector<std::vector<protocol::Job>> group_jobs;
  std::filesystem::path work_dir;        // overlays and job initrds; removed afterwards
  std::function<std::filesystem::path(int vm)> console_log;  // kept
  std::function<std::filesystem::path(int vm)> stream_log;   // the raw results channel; kept
  // QEMU's own log (its command line and messages; embedded driver): kept when set.
  std::function<std::filesystem::path(int vm)> qemu_log;
  int boot_timeout_s = 300;
  int cell_timeout_s = 3600;
  // A cell whose guests fail before all their agents are ready (a boot panic, oops or timeout) is
  // booted again this many times. A guest of several that did say hello may have measured and
  // written records already: each failed attempt's files are kept (keep_failed_boot) and named
  // in the outcome's notes.
  int boot_retries = 1;
  // Called before a boot retry, once the failed attempt has ended and written everything: keeps
  // what it wrote, so that the next attempt starts from clean files, and says where ("kept in
  // attempts/<id>/1"; the runner moves its cells' directories there). Unset (`smtlab boot`): the
  // attempt's console, stream, QEMU and register files get an ".attempt-N" suffix.
  std::function<std::string(int attempt, const std::string& error)> keep_failed_boot;
  // Remote libvirt hosts only: the directory of the staging pool there ("": vm::kDefaultRemoteDir).
  std::filesystem::path remote_dir;
  // Recipe parallel, a topology with host_cpus: other boots may run on the other host CPUs, so
  // the guests' emulator threads stay inside host_cpus too, and the host CPU account covers those
  // CPUs only.
  bool confine_to_host_cpus = false;
};

// One cell of a shared boot.
struct CellOutcome {
  bool ended = false;  // every benchmark VM reported the end of this cell's job
  bool ok = false;
  std::string error;   // why the cell failed, in words
  bool stalled = false; // its job reported that it stopped making progress (SessionOutcome::stalled)
  double start_s = -1; // the job's first record, seconds after the first domain start
  double job_s = -1;   // the job's first record to its last "end"
  double bench_s = 0;  // first measured (or warm-up) iteration to the job's "end"
  std::optional<HostCpuShare> host_cpu;  // who used the host CPUs meanwhile (local hosts)
};

struct SessionOutcome {
  bool ok = false;
  bool interrupted = false;
  std::string error;          // why the cell failed, in words
  // The guest's workload reported that it stopped making progress (the chat benchmark's stall
  // limit). Under TCG the runner runs such a cell once more: QEMU 7.2's TCG now and then leaves
  // a guest stuck (see vm::locked_up); a second stall is the cell's result.
  bool stalled = false;
  std::string console_tail;   // of the VM that failed (or VM 0)
  nlohmann::json guest_topology = nlohmann::json::array();  // per VM, as reported
  std::vector<double> ready_s;  // per VM: domain start to the agent's hello (-1: never)
  std::vector<int> exit_codes;  // per VM, from "end" (-1: none)
  double wall_s = 0;   // first domain start to the last teardown
  double bench_s = 0;  // first measured (or warm-up) iteration to the benchmark's "end"
  std::vector<std::string> notes;  // pinning decisions and the like
  size_t notes_said = 0;  // how many notes, from the first, were printed as they happened
  // Kernel warnings and stalls on the consoles ("VM 0: kernel stall: <line>"): the cell still
  // counts, but its measurements were disturbed (e.g. the host starved the guest's vCPUs).
  std::vector<std::string> disturbances;
  // One cell (not a shared boot), local hosts: who used the host CPUs while the benchmark ran.
  std::optional<HostCpuShare> host_cpu;
  // A shared boot: per cell of SessionConfig::group. A job that fails fails its cell only; when
  // the boot itself fails (crash, panic, timeout: `error`), the cells whose jobs had not ended
  // fail with an error saying so.
  std::vector<CellOutcome> cells;
};

SessionOutcome run_guests(vm::Connection& connection, const SessionConfig& config, GuestObserver& observer);
// One attempt, without the boot retries.
SessionOutcome run_guests_once(vm::Connection& connection, const SessionConfig& config, GuestObserver& observer);
// run_guests' boot retries around `once` (one attempt): while an attempt failed before all its
// agents were ready (and was not interrupted), up to config.boot_retries times, keeps what it
// wrote (config.keep_failed_boot) and runs `once` again; the notes say so.
SessionOutcome with_boot_retries(const SessionConfig& config, const std::function<SessionOutcome()>& once);

}  // namespace smtlab::run
