#include "stats/summary.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace smtlab::stats {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

double mean(std::span<const double> v) {
  if (v.empty()) return kNaN;
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

double harmonic_mean(std::span<const double> v) {
  if (v.empty()) return kNaN;
  double sum = 0;
  bool zero = false;
  for (double x : v) {
    if (!(x >= 0) || std::isinf(x)) return kNaN;
    if (x == 0) zero = true;
    else sum += 1.0 / x;
  }
  // A rate of 0 (a run that delivered nothing) pulls the harmonic mean to its limit, 0.
  return zero ? 0 : static_cast<double>(v.size()) / sum;
}

double stddev(std::span<const double> v) {
  if (v.size() < 2) return kNaN;  // one sample has no spread to estimate
  double m = mean(v), ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

double coeffvar(std::span<const double> v) {
  double m = mean(v);
  if (m == 0) return kNaN;
  return 100.0 * stddev(v) / m;
}

double min(std::span<const double> v) { return v.empty() ? kNaN : *std::min_element(v.begin(), v.end()); }
double max(std::span<const double> v) { return v.empty() ? kNaN : *std::max_element(v.begin(), v.end()); }

double best_mean(std::span<const double> v, double percent, bool higher_is_better) {
  if (v.empty()) return kNaN;
  std::vector<double> sorted(v.begin(), v.end());
  if (higher_is_better) std::sort(sorted.begin(), sorted.end(), std::greater<>());
  else std::sort(sorted.begin(), sorted.end());
  size_t keep = static_cast<size_t>(std::floor(static_cast<double>(sorted.size()) * percent / 100.0));
  keep = std::clamp<size_t>(keep, 1, sorted.size());
  return mean(std::span<const double>(sorted.data(), keep));
}

Summary summarize(std::span<const double> v) { return {v.size(), mean(v), stddev(v)}; }

}  // namespace smtlab::stats
