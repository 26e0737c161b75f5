#pragma once
// Waiting for a guest to go quiet between two benchmarks of one boot, so that the next one does
// not start into work the previous one left behind (writeback, deferred frees, a kernel thread
// still busy) and measure that work instead. When nothing is left it costs two windows (0.5 s):
// after smoke's kernbench every vCPU was at 0 % in the first two (BENCHMARKS.md, session 5).
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "bench/procfs.hpp"

namespace smtlab::bench {

struct SettleOptions {
  double busy_below_pct = 10;  // every CPU below this in a window counts as quiet
  std::chrono::milliseconds window{250};
  int quiet_windows = 2;       // in a row
  std::chrono::milliseconds limit{20000};
  std::string proc = "/proc";
};

// Fed /proc/stat snapshots one window apart; says when the last quiet_windows windows had every
// CPU below busy_below_pct. Pure: no clock, no file.
class QuietDetector {
 public:
  explicit QuietDetector(const SettleOptions& o) : options_(o) {}
  // The busiest CPU's busy percent over the window that ends with this snapshot (nullopt for
  // the first snapshot).
  std::optional<double> feed(const ProcStat& now);
  bool quiet() const { return quiet_in_a_row_ >= options_.quiet_windows; }

 private:
  SettleOptions options_;
  std::optional<ProcStat> last_;
  int quiet_in_a_row_ = 0;
};

struct SettleResult {
  bool settled = false;
  double waited_s = 0;
  std::vector<double> busiest_cpu_pct;  // per window, in order
};

// Samples <proc>/stat every window until quiet or the limit passes.
SettleResult wait_until_quiet(const SettleOptions& o);

}  // namespace smtlab::bench
