#include "run/job_builder.hpp"

#include <type_traits>

namespace smtlab::run {

recipe::VmRole vm_role(const recipe::Topology& topology, int vm) {
  if (vm < static_cast<int>(topology.roles.size())) return topology.roles[vm];
  return vm == 0 ? recipe::VmRole::benchmark : recipe::VmRole::noise;
}

static void apply_variant(const plan::Cell& cell, protocol::Job& job) {
  job.sysctls = cell.variant.sysctls;
  job.sched_tunables = cell.variant.sched_tunables;
  job.coresched = cell.variant.coresched == recipe::CoreSchedMode::per_benchmark;
}

static nlohmann::json benchmark_params(const recipe::Benchmark& b) {
  return std::visit(
      [](const auto& p) -> nlohmann::json {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, recipe::KernbenchParams>) {
          protocol::KernbenchParams k;
          k.jobs = p.jobs;
          k.warmup = p.warmup;
          k.tree = p.tree;
          k.files = p.files;
          k.config = p.config;
          k.target = p.target;
          return protocol::to_json(k);
        } else if constexpr (std::is_same_v<T, recipe::ChatParams>) {
          protocol::ChatParams c;
          c.rooms = p.rooms;
          c.users = p.users;
          c.count = p.count;
          c.yield = recipe::to_string(p.yield);
          c.port = p.port;
          c.discard = p.discard;
          c.stall_s = p.stall_s;
          return protocol::to_json(c);
        } else if constexpr (std::is_same_v<T, recipe::CommandParams>) {
          return nlohmann::json::object();  // the command itself is Job::argv
        } else {
          protocol::HackbenchParams h;
          h.groups = p.groups;
          h.loops = p.loops;
          h.fds = p.fds;
          h.threads = p.threads;
          h.pipes = p.pipes;
          return protocol::to_json(h);
        }
      },
      b.params);
}

protocol::Job make_job(const plan::Cell& cell, const recipe::Monitors& monitors, int vm) {
  protocol::Job job;
  job.cell = cell.id;
  job.vm = vm;
  job.vms = cell.topology.vms;
  job.iterations = cell.iterations;
  apply_variant(cell, job);
  job.monitors.vmstat_interval_s = monitors.vmstat ? monitors.vmstat_interval_s : 0;
  job.monitors.schedstat = monitors.schedstat;
  job.monitors.cpu_busy = monitors.cpu_busy;
  if (vm_role(cell.topology, vm) == recipe::VmRole::noise) {
    job.role = "noise";
    job.kind = "noise";
    job.noise.workers = cell.topology.noise.workers > 0 ? cell.topology.noise.workers : cell.topology.vcpus();
    job.noise.load = cell.topology.noise.load;
    job.coresched = false;
    job.monitors.vmstat_interval_s = 0;
    return job;
  }
  job.role = "benchmark";
  job.kind = cell.benchmark.kind;
  job.params = benchmark_params(cell.benchmark);
  if (const auto* c = std::get_if<recipe::CommandParams>(&cell.benchmark.params)) {
    // A command benchmark is an exec job run `iterations` times, its samples named by the benchmark.
    job.kind = "exec";
    job.argv = c->argv;
    protocol::ExecParams e;
    e.benchmark = cell.benchmark.name;
    job.params = protocol::to_json(e);
  }
  return job;
}

protocol::Job make_exec_job(const plan::Cell& cell, int vm, const std::vector<std::string>& argv) {
  protocol::Job job;
  job.cell = cell.id;
  job.vm = vm;
  job.vms = cell.topology.vms;
  job.kind = "exec";
  job.iterations = 1;
  job.argv = argv;
  apply_variant(cell, job);
  job.coresched = false;
  job.monitors.vmstat_interval_s = 0;
  job.monitors.schedstat = false;
  job.monitors.cpu_busy = false;
  return job;
}

std::vector<std::string> kernel_cmdline(const plan::Cell& cell) {
  std::vector<std::string> words = {"console=ttyS0", "panic=-1", "smtlab.root=/dev/vda", "cryptomgr.notests"};
  for (const auto* extra : {&cell.kernel.cmdline, &cell.variant.cmdline, &cell.topology.cmdline})
    words.insert(words.end(), extra->begin(), extra->end());
  return words;
}

std::string kernel_cmdline_text(const plan::Cell& cell) {
  std::string line;
  for (const auto& w : kernel_cmdline(cell)) line += (line.empty() ? "" : " ") + w;
  return line;
}

}  // namespace smtlab::run
