#pragma once
// Descriptive statistics of one set of samples, as mmtests prints them.
#include <cstddef>
#include <span>
#include <string>

namespace smtlab::stats {

double mean(std::span<const double> v);           // NaN when empty
double harmonic_mean(std::span<const double> v);  // 0 when any value is 0; NaN when empty or any < 0
double stddev(std::span<const double> v);         // sample (n-1); NaN for fewer than 2 samples
double coeffvar(std::span<const double> v);       // 100 x stddev / mean; NaN when either is
double min(std::span<const double> v);
double max(std::span<const double> v);
// Mean of the best `percent` % of the samples (BAmean-95: percent = 95): sorted best first
// (ascending when lower is better), the first max(1, floor(n x percent / 100)) are averaged.
double best_mean(std::span<const double> v, double percent, bool higher_is_better);

// What a significance rule needs from each side.
struct Summary {
  size_t n = 0;
  double mean = 0;
  double stddev = 0;
};
Summary summarize(std::span<const double> v);

}  // namespace smtlab::stats
