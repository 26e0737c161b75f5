#pragma once
// One cell's guests from start to teardown: overlays and job initrds made (on a remote libvirt
// host: staged there through its storage pool, console and results port read over streams),
// domains started in the cell's topology and pinning, their record streams parsed as they grow,
// consoles watched for panics, timeouts enforced, the guest topology verified, and every domain
// destroyed on every path. Records go to an observer (the runner writes results; `smtlab boot`
// prints output).
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plan/plan.hpp"
#include "protocol/job.hpp"
#include "protocol/record_stream.hpp"
#include "run/artifacts.hpp"
#include "vm/connection.hpp"

namespace smtlab::run {

class GuestObserver {
 public:
  virtual ~GuestObserver() = default;
  virtual void on_record(int vm, const protocol::Record& record) = 0;
  virtual void on_problem(int vm, const protocol::Problem& problem) = 0;
};

struct SessionConfig {
  const plan::Cell* cell = nullptr;
  const BootKernel* kernel = nullptr;
  const image::ImageArtifact* image = nullptr;
  std::vector<protocol::Job> jobs;       // one per VM
  std::filesystem::path work_dir;        // overlays and job initrds; removed afterwards
  std::function<std::filesystem::path(int vm)> console_log;  // kept
  std::function<std::filesystem::path(int vm)> stream_log;   // the raw results channel; kept
  int boot_timeout_s = 300;
  int cell_timeout_s = 3600;
  // A cell whose guests fail before their agents are ready (a boot panic, oops or timeout) is
  // booted again this many times; nothing was measured yet. The failed attempts' console and
  // stream logs are kept with an ".attempt-N" suffix and named in the outcome's notes.
  int boot_retries = 1;
  // Remote libvirt hosts only: the directory of the staging pool there ("": vm::kDefaultRemoteDir).
  std::filesystem::path remote_dir;
};

struct SessionOutcome {
  bool ok = false;
  bool interrupted = false;
  std::string error;          // why the cell failed, in words
  std::string console_tail;   // of the VM that failed (or VM 0)
  nlohmann::json guest_topology = nlohmann::json::array();  // per VM, as reported
  std::vector<double> ready_s;  // per VM: domain start to the agent's hello (-1: never)
  std::vector<int> exit_codes;  // per VM, from "end" (-1: none)
  double wall_s = 0;   // first domain start to the last teardown
  double bench_s = 0;  // first measured (or warm-up) iteration to the benchmark's "end"
  std::vector<std::string> notes;  // pinning decisions and the like
  // Kernel warnings and stalls on the consoles ("VM 0: kernel stall: <line>"): the cell still
  // counts, but its measurements were disturbed (e.g. the host starved the guest's vCPUs).
  std::vector<std::string> disturbances;
};

SessionOutcome run_guests(vm::Connection& connection, const SessionConfig& config, GuestObserver& observer);
// One attempt, without the boot retries.
SessionOutcome run_guests_once(vm::Connection& connection, const SessionConfig& config, GuestObserver& observer);

}  // namespace smtlab::run
