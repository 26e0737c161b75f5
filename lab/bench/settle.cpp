#include "bench/settle.hpp"

#include <algorithm>
#include <thread>

namespace smtlab::bench {

std::optional<double> QuietDetector::feed(const ProcStat& now) {
  std::optional<double> busiest;
  if (last_) {
    double worst = 0;
    bool any = false;
    for (const auto& [cpu, t] : now.cpus) {
      auto it = last_->cpus.find(cpu);
      if (it == last_->cpus.end()) continue;  // came online in the window
      const CpuTimes& a = it->second;
      if (t.total() <= a.total()) continue;  // no tick in the window: nothing to say about it
      double pct = 100.0 * static_cast<double>(t.busy() >= a.busy() ? t.busy() - a.busy() : 0) /
                   static_cast<double>(t.total() - a.total());
      worst = std::max(worst, pct);
      any = true;
    }
    if (any) {
      busiest = worst;
      quiet_in_a_row_ = worst < options_.busy_below_pct ? quiet_in_a_row_ + 1 : 0;
    }
  }
  last_ = now;
  return busiest;
}

SettleResult wait_until_quiet(const SettleOptions& o) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  QuietDetector detector(o);
  SettleResult r;
  for (;;) {
    auto text = read_proc(o.proc + "/stat", 1 << 20);
    if (!text) break;  // no /proc/stat: nothing to wait for
    if (auto pct = detector.feed(parse_proc_stat(*text))) r.busiest_cpu_pct.push_back(*pct);
    if (detector.quiet()) {
      r.settled = true;
      break;
    }
    if (clock::now() - start >= o.limit) break;
    std::this_thread::sleep_for(o.window);
  }
  r.waited_s = std::chrono::duration<double>(clock::now() - start).count();
  return r;
}

}  // namespace smtlab::bench
