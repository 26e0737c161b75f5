#pragma once
// The job the host hands to a guest (/job.json): what to run, with which settings and monitors.
// JSON schema in /tmp/briefs/protocol.md ("Job"); unknown keys are ignored when reading.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace smtlab::protocol {

inline constexpr int kJobSchema = 1;

struct KernbenchParams {
  std::vector<int> jobs{2};        // make -jN for each N
  bool warmup = true;              // one untimed build before the measured ones
  std::string tree = "synthetic";  // "synthetic" | "linux-source"
  int files = 24;                  // synthetic: number of translation units
  std::string config = "defconfig";  // linux-source: the make target that configures
  std::string target;              // empty: "all" (synthetic) / "vmlinux" (linux-source)
};

struct ChatParams {
  int rooms = 2;
  int users = 20;
  int count = 100;
  std::string yield = "both";  // both | rx | tx | none
  int port = 8000;             // 0: any free port
  int discard = 1;             // warm-up runs before the job's `iterations` measured ones (VolanoMark: 1, then 3)
  int stall_s = 60;            // a run in which nothing arrives for this long fails (bench::ChatOptions)
};

struct HackbenchParams {
  std::vector<int> groups{1};
  int loops = 100;
  int fds = 20;
  bool threads = false;
  bool pipes = false;
};

// kind == exec: Job::argv runs once per iteration, timed. `benchmark` names the samples (the
// recipe's command benchmark); `smtlab boot -- CMD` leaves it "exec".
struct ExecParams {
  std::string benchmark = "exec";
};

struct Monitors {
  double vmstat_interval_s = 1.0;  // 0: no vmstat sampler
  bool schedstat = true;
  bool cpu_busy = true;
};

struct Noise {
  int workers = 1;
  int load = 100;  // percent
};

struct Job {
  int schema = kJobSchema;
  std::string cell;
  int vm = 0;
  int vms = 1;
  std::string role = "benchmark";  // benchmark | noise
  std::string kind;                // kernbench | chat | hackbench | exec | noise
  int iterations = 1;
  nlohmann::json params = nlohmann::json::object();  // kind-specific, see the *Params structs
  std::map<std::string, std::string> sysctls;
  std::map<std::string, std::string> sched_tunables;
  bool coresched = false;
  Monitors monitors;
  bool lockstep = false;
  std::vector<std::string> argv;  // kind == exec
  Noise noise;
};

// Job <-> JSON. Reading throws smtlab::Error naming the offending key ("job.params.jobs: ...")
// on wrong types or values; unknown keys are ignored.
nlohmann::json to_json(const Job& job);
Job job_from_json(const nlohmann::json& j);
Job parse_job(const std::string& text);  // also rejects text that is not JSON

// A shared boot's job list (recipe share_boot): {"schema":1,"jobs":[Job, ...]}: the agent runs the
// jobs one after another in the same boot (the previous job's processes gone, a sync and a wait
// for quiet vCPUs in between; caches are kept), and every record of job i carries "cell" (jobs[i].cell) and "job" (i). All
// jobs are benchmark jobs of the same VM, with distinct cells; at most kMaxJobsPerList.
inline constexpr size_t kMaxJobsPerList = 256;
struct JobList {
  std::vector<Job> jobs;
  bool is_list = false;  // false: the single-job format (one Job object), records carry no "cell"
};
nlohmann::json to_json(const JobList& list);  // the single-job format when !is_list
// Reads either format; throws smtlab::Error naming the offending key ("job.jobs[1].kind: ...").
JobList job_list_from_json(const nlohmann::json& j);
JobList parse_job_list(const std::string& text);  // also rejects text that is not JSON

nlohmann::json to_json(const KernbenchParams& p);
nlohmann::json to_json(const ChatParams& p);
nlohmann::json to_json(const HackbenchParams& p);
nlohmann::json to_json(const ExecParams& p);
// Read job.params for the given kind (defaults for absent keys); throw smtlab::Error on bad values.
KernbenchParams kernbench_params(const Job& job);
ChatParams chat_params(const Job& job);
HackbenchParams hackbench_params(const Job& job);
ExecParams exec_params(const Job& job);

}  // namespace smtlab::protocol
