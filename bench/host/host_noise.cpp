// host_noise: the host's own noise floor, without any guest. One thread per host CPU (pinned)
// repeats the same fixed amount of CPU work (a xorshift walk over a 4 MiB table, so caches and
// memory count, as they do for a compiler) and times each round. A TCG guest's benchmark cannot
// be steadier than the host CPUs it is emulated on, so the coefficient of variation of these
// rounds, and of sums of rounds as long as a benchmark iteration, is the floor under
// bench/noise's figures. It also prints the host's steal time over the run (time the hypervisor
// under this machine gave to someone else), which a noisy neighbour would show.
//
// usage: host_noise [--rounds N] [--round-ms MS] [--cpus LIST]
//   --rounds    rounds per CPU (default 100)
//   --round-ms  the work of one round, calibrated on the first CPU to take about MS (default 1000)
//   --cpus      host CPUs to run on (default: every CPU this process may run on)
#include <pthread.h>
#include <sched.h>

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

#include "bench/procfs.hpp"
#include "stats/summary.hpp"
#include "util/cpulist.hpp"
#include "util/error.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// The fixed work: `steps` xorshift steps, each adding into a pseudo-random slot of `table`.
uint64_t work(std::vector<uint32_t>& table, uint64_t steps, uint64_t seed) {
  uint64_t x = seed | 1;
  const size_t mask = table.size() - 1;
  for (uint64_t i = 0; i < steps; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    table[x & mask] += static_cast<uint32_t>(x);
  }
  return x;
}

double timed_work(std::vector<uint32_t>& table, uint64_t steps, uint64_t seed, uint64_t& sink) {
  auto t0 = Clock::now();
  sink += work(table, steps, seed);
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Runs in the worker threads: the CPUs were checked against the affinity mask before.
void pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
    fmt::print(stderr, "host_noise: error: cannot pin a thread to host CPU {}\n", cpu);
    std::_Exit(1);
  }
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) throw smtlab::Error("sched_getaffinity failed");
  std::vector<int> out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

// Sums of `block` consecutive rounds (the last partial block is dropped).
std::vector<double> block_sums(const std::vector<double>& rounds, size_t block) {
  std::vector<double> out;
  for (size_t i = 0; i + block <= rounds.size(); i += block) {
    double s = 0;
    for (size_t j = i; j < i + block; ++j) s += rounds[j];
    out.push_back(s);
  }
  return out;
}

smtlab::bench::CpuTimes host_times() {
  auto text = smtlab::bench::read_proc("/proc/stat");
  return text ? smtlab::bench::parse_proc_stat(*text).all : smtlab::bench::CpuTimes{};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"host_noise: the host CPUs' own run-to-run variation (no guest)"};
  int rounds = 100;
  int round_ms = 1000;
  std::string cpus_text;
  app.add_option("--rounds", rounds, "rounds per CPU")->check(CLI::Range(4, 100000));
  app.add_option("--round-ms", round_ms, "the work of one round, in milliseconds on the first CPU")
      ->check(CLI::Range(10, 600000));
  app.add_option("--cpus", cpus_text, "host CPUs (a list such as 0-3); default: all allowed");
  CLI11_PARSE(app, argc, argv);

  try {
    std::vector<int> cpus = cpus_text.empty() ? allowed_cpus() : smtlab::parse_cpulist(cpus_text);
    if (cpus.empty()) throw smtlab::Error("no host CPU to run on", "give --cpus");
    const auto allowed = allowed_cpus();
    for (int c : cpus)
      if (!std::binary_search(allowed.begin(), allowed.end(), c))
        throw smtlab::Error(fmt::format("host CPU {} is not one this process may run on ({})", c,
                                        smtlab::format_cpulist(allowed)),
                            "name CPUs from that list in --cpus");

    // Calibrate on the first CPU: the steps that take about round_ms there.
    uint64_t sink = 0;
    uint64_t steps = 0;
    {
      std::thread calibrate([&] {
        pin_to(cpus.front());
        std::vector<uint32_t> table(1u << 20);
        uint64_t probe = 1u << 22;
        double t = timed_work(table, probe, 1, sink);
        while (t < 0.25) {
          probe *= 4;
          t = timed_work(table, probe, 1, sink);
        }
        steps = static_cast<uint64_t>(static_cast<double>(probe) * (round_ms / 1000.0) / t);
      });
      calibrate.join();
    }

    fmt::print("host_noise: {} round(s) of {} steps (about {} ms) on host CPU(s) {}\n", rounds, steps,
               round_ms, smtlab::format_cpulist(cpus));
    std::vector<std::vector<double>> times(cpus.size());
    std::vector<uint64_t> sinks(cpus.size());
    auto before = host_times();
    auto t0 = Clock::now();
    {
      std::vector<std::thread> threads;
      for (size_t i = 0; i < cpus.size(); ++i)
        threads.emplace_back([&, i] {
          pin_to(cpus[i]);
          std::vector<uint32_t> table(1u << 20);
          for (int r = 0; r < rounds; ++r) times[i].push_back(timed_work(table, steps, 2 + i, sinks[i]));
        });
      for (auto& t : threads) t.join();
    }
    double wall = std::chrono::duration<double>(Clock::now() - t0).count();
    auto after = host_times();
    uint64_t total = after.total() - before.total();
    double steal = total ? 100.0 * static_cast<double>(after.steal - before.steal) / static_cast<double>(total) : 0;
    double busy = total ? 100.0 * static_cast<double>(after.busy() - before.busy()) / static_cast<double>(total) : 0;

    // Per CPU: the rounds, then the sums of rounds as long as a benchmark iteration (~10 s, ~30 s).
    const int block_seconds[] = {10, 30};
    fmt::print("{:>5} {:>5} {:>9} {:>8} {:>8} {:>8} {:>10} {:>10}\n", "cpu", "n", "mean s", "CV%", "min s",
               "max s", "CV% ~10s", "CV% ~30s");
    for (size_t i = 0; i < cpus.size(); ++i) {
      const auto& v = times[i];
      double mean = smtlab::stats::mean(v);
      std::string blocks;
      for (int secs : block_seconds) {
        size_t block = std::max<size_t>(1, static_cast<size_t>(std::lround(secs / std::max(mean, 1e-9))));
        auto sums = block_sums(v, block);
        blocks += sums.size() >= 3 ? fmt::format(" {:>10.2f}", smtlab::stats::coeffvar(sums))
                                   : fmt::format(" {:>10}", "-");
      }
      fmt::print("{:>5} {:>5} {:>9.3f} {:>8.2f} {:>8.3f} {:>8.3f}{}\n", cpus[i], v.size(), mean,
                 smtlab::stats::coeffvar(v), smtlab::stats::min(v), smtlab::stats::max(v), blocks);
    }
    fmt::print("wall {:.1f} s; host /proc/stat over the run: busy {:.1f} %, steal {:.2f} %\n", wall, busy,
               steal);
    uint64_t all = sink;
    for (auto s : sinks) all += s;
    return all == 42 ? 3 : 0;  // keeps the work from being optimised away
  } catch (const smtlab::Error& e) {
    fmt::print(stderr, "host_noise: error: {}\n", smtlab::describe(e));
    return 1;
  }
}
