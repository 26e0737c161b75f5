#pragma once
// A log-linear latency histogram (about 1.6 % resolution, constant memory, mergeable), for
// per-message delivery latencies that can number in the tens of millions.
#include <cstdint>
#include <vector>

namespace smtlab::bench {

class LatencyHistogram {
 public:
  LatencyHistogram();
  void add(uint64_t ns);
  void merge(const LatencyHistogram& other);
  uint64_t count() const { return count_; }
  uint64_t max_ns() const { return max_; }
  // The p-th percentile (0 < p <= 100) in ns; 0 when empty. Within one bucket (~1.6 %) of exact.
  double percentile_ns(double p) const;

 private:
  std::vector<uint64_t> buckets_;
  uint64_t count_ = 0;
  uint64_t max_ = 0;
};

}  // namespace smtlab::bench
