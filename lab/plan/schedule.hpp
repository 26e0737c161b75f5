#pragma once
// Which boots of a plan run when (recipe parallel): a boot (one cell, or a share_boot group)
// may start while others run only when its topology names host CPUs none of theirs do and it
// shares no benchmark with them, since every comparison table holds the cells of one benchmark
// and cells measured against each other must not disturb each other. A boot whose topology has
// no host_cpus uses the whole host and runs alone. Without parallel, boots run one at a time in
// plan order. Pure bookkeeping: the runner starts and waits for the boots.
#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "plan/plan.hpp"

namespace smtlab::plan {

struct Boot {
  std::vector<size_t> cells;          // indices into the cells the boots were made of, in run order
  std::vector<int> host_cpus;         // sorted; empty: the whole host
  std::set<std::string> benchmarks;   // the benchmark names of its cells
};

// The boots of `cells` (boot_groups with `share`), with their host CPUs and benchmarks.
std::vector<Boot> make_boots(const std::vector<Cell>& cells, bool share);

// True when the two boots may overlap: both name host CPUs, the sets are disjoint, and no
// benchmark is in both.
bool may_run_together(const Boot& a, const Boot& b);

class BootSchedule {
 public:
  BootSchedule(std::vector<Boot> boots, bool parallel);

  // The next boot to start now, marked running: with nothing running the first pending one;
  // else (parallel only) the first pending one that may run together with every running one.
  // nullopt: wait for a running boot to finish (or nothing is left: done()).
  std::optional<size_t> next();
  void finished(size_t boot);
  // No more boots will be started (an interrupt): next() returns nullopt from now on.
  void stop() { stopped_ = true; }
  bool done() const;  // nothing pending (or stopped) and nothing running
  const std::vector<size_t>& running() const { return running_; }
  const Boot& boot(size_t i) const { return boots_.at(i); }
  size_t size() const { return boots_.size(); }

 private:
  std::vector<Boot> boots_;
  bool parallel_;
  bool stopped_ = false;
  std::vector<bool> started_;
  std::vector<size_t> running_;
};

// For smtlab plan: how the boots would overlap if each took the same time, as "waves" of boot
// indices that start together (a boot's wave starts when the previous wave has ended). Without
// parallel, one boot per wave.
std::vector<std::vector<size_t>> schedule_waves(const std::vector<Boot>& boots, bool parallel);

// smtlab plan's account of a parallel plan: which boots would start together ("<first cell id>
// <topology> (host CPUs 0-1) + ..."), or that none can, and why.
std::string format_schedule(const Plan& plan);

}  // namespace smtlab::plan
