#include "bench/latency.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace smtlab::bench {

namespace {
constexpr int kSub = 64;          // buckets per power of two above kSub
constexpr int kMaxBit = 44;       // values above 2^44 ns (~4.9 h) are clamped
constexpr size_t kBuckets = kSub + (kMaxBit - 6 + 1) * kSub;

size_t index_of(uint64_t v) {
  if (v < kSub) return v;
  v = std::min<uint64_t>(v, (uint64_t{1} << (kMaxBit + 1)) - 1);
  int msb = 63 - std::countl_zero(v);
  int shift = msb - 6;
  uint64_t sub = v >> shift;  // 64..127
  return kSub + static_cast<size_t>(shift) * kSub + (sub - kSub);
}

double midpoint_of(size_t idx) {
  if (idx < kSub) return static_cast<double>(idx);
  size_t shift = (idx - kSub) / kSub;
  uint64_t sub = (idx - kSub) % kSub + kSub;
  double lo = static_cast<double>(sub << shift);
  return lo + std::ldexp(1.0, static_cast<int>(shift)) / 2.0;
}
}  // namespace

LatencyHistogram::LatencyHistogram() : buckets_(kBuckets, 0) {}

void LatencyHistogram::add(uint64_t ns) {
  buckets_[index_of(ns)]++;
  count_++;
  max_ = std::max(max_, ns);
}

void LatencyHistogram::merge(const LatencyHistogram& o) {
  for (size_t i = 0; i < kBuckets; ++i) buckets_[i] += o.buckets_[i];
  count_ += o.count_;
  max_ = std::max(max_, o.max_);
}

double LatencyHistogram::percentile_ns(double p) const {
  if (count_ == 0) return 0;
  uint64_t rank = static_cast<uint64_t>(std::ceil(std::clamp(p, 0.0, 100.0) / 100.0 * count_));
  rank = std::max<uint64_t>(rank, 1);
  uint64_t seen = 0;
  for (size_t i = 0; i < kBuckets; ++i) {
    seen += buckets_[i];
    if (seen >= rank) return std::min(midpoint_of(i), static_cast<double>(max_));
  }
  return static_cast<double>(max_);
}

}  // namespace smtlab::bench
