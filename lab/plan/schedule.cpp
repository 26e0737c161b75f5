#include "plan/schedule.hpp"

#include <algorithm>

#include "util/cpulist.hpp"

namespace smtlab::plan {

std::vector<Boot> make_boots(const std::vector<Cell>& cells, bool share) {
  std::vector<Boot> boots;
  for (auto& members : boot_groups(cells, share)) {
    Boot b;
    b.cells = members;
    // A boot group shares its topology (it is part of the group key), so the first cell's
    // host CPUs are every cell's.
    b.host_cpus = cells.at(members.front()).topology.host_cpus;
    std::sort(b.host_cpus.begin(), b.host_cpus.end());
    b.host_cpus.erase(std::unique(b.host_cpus.begin(), b.host_cpus.end()), b.host_cpus.end());
    for (size_t i : members) b.benchmarks.insert(cells[i].benchmark.name);
    boots.push_back(std::move(b));
  }
  return boots;
}

bool may_run_together(const Boot& a, const Boot& b) {
  if (a.host_cpus.empty() || b.host_cpus.empty()) return false;
  std::vector<int> common;
  std::set_intersection(a.host_cpus.begin(), a.host_cpus.end(), b.host_cpus.begin(), b.host_cpus.end(),
                        std::back_inserter(common));
  if (!common.empty()) return false;
  return std::none_of(a.benchmarks.begin(), a.benchmarks.end(),
                      [&](const std::string& name) { return b.benchmarks.count(name) > 0; });
}

BootSchedule::BootSchedule(std::vector<Boot> boots, bool parallel)
    : boots_(std::move(boots)), parallel_(parallel), started_(boots_.size(), false) {}

std::optional<size_t> BootSchedule::next() {
  if (stopped_) return std::nullopt;
  if (!running_.empty() && !parallel_) return std::nullopt;
  for (size_t i = 0; i < boots_.size(); ++i) {
    if (started_[i]) continue;
    bool fits = std::all_of(running_.begin(), running_.end(),
                            [&](size_t r) { return may_run_together(boots_[i], boots_[r]); });
    if (!fits) continue;  // a later boot may go first if it fits
    started_[i] = true;
    running_.push_back(i);
    return i;
  }
  return std::nullopt;
}

void BootSchedule::finished(size_t boot) {
  running_.erase(std::remove(running_.begin(), running_.end(), boot), running_.end());
}

bool BootSchedule::done() const {
  if (!running_.empty()) return false;
  return stopped_ || std::all_of(started_.begin(), started_.end(), [](bool s) { return s; });
}

std::vector<std::vector<size_t>> schedule_waves(const std::vector<Boot>& boots, bool parallel) {
  BootSchedule s(boots, parallel);
  std::vector<std::vector<size_t>> waves;
  while (!s.done()) {
    std::vector<size_t> wave;
    while (auto i = s.next()) wave.push_back(*i);
    for (size_t i : wave) s.finished(i);
    waves.push_back(std::move(wave));
  }
  return waves;
}

std::string format_schedule(const Plan& plan) {
  auto boots = make_boots(plan.cells, plan.share_boot);
  auto waves = schedule_waves(boots, plan.parallel);
  if (waves.size() == boots.size())
    return "parallel: no two boots may overlap (each uses the whole host, or shares host CPUs or a benchmark with "
           "every other): they run one at a time; give topologies disjoint host_cpus to overlap them\n";
  std::string out = "parallel: " + std::to_string(boots.size()) + " boots in " + std::to_string(waves.size()) +
                    " waves if each took as long (boots overlap only on disjoint host_cpus and never share a benchmark):\n";
  for (size_t w = 0; w < waves.size(); ++w) {
    out += "  " + std::to_string(w + 1) + ":";
    for (size_t k = 0; k < waves[w].size(); ++k) {
      const auto& b = boots[waves[w][k]];
      const auto& c = plan.cells[b.cells.front()];
      out += (k ? " + " : " ") + c.id + " " + c.topology.name + " (host CPUs " +
             (b.host_cpus.empty() ? std::string("all") : format_cpulist(b.host_cpus)) + ")";
    }
    out += "\n";
  }
  return out;
}

}  // namespace smtlab::plan
