#pragma once
// When is a difference between two columns significant? Three rules, always named in the output
// (see /work/shared/reference/compare-format.md for the mmtests history):
//  - mmtests-2019: Student t on |m1-m2| / sqrt(s1²/n1 + s2²/n2) with df = n1+n2-2, two-sided
//    p < 0.10 (the rule behind the seed tables, mmtests 2018-2024); both stddevs 0: iff means differ.
//  - mmtests-2024: |m_new - m_base| > 1.96 x (s_base + s_new) (mmtests since Nov 2024).
//  - welch (default): Welch's t-test (Welch-Satterthwaite df), two-sided p < alpha (0.05), AND a
//    difference of at least min_effect_pct % of the baseline mean; reports the 95 % (1-alpha)
//    confidence interval of new - base.
// Student t quantiles and CDF come from Boost.Math.
#include <string>

#include "stats/summary.hpp"

namespace smtlab::stats {

enum class Rule { mmtests_2019, mmtests_2024, welch };

struct RuleOptions {
  Rule rule = Rule::welch;
  double alpha = 0.05;          // welch; mmtests-2019 always uses 0.10
  double min_effect_pct = 1.0;  // welch: smaller differences are never significant
};

struct TestResult {
  bool testable = false;     // false: too few samples (n < 2 on a side) or NaN input
  bool significant = false;
  double difference = 0;     // new - base
  double t = 0;              // t statistic (mmtests-2019, welch); |diff|/(s_base+s_new) for mmtests-2024
  double df = 0;             // degrees of freedom (t rules)
  double p = 1;              // two-sided p-value (t rules); NaN for mmtests-2024
  double ci_low = 0, ci_high = 0;  // confidence interval of new - base (welch; t-based, 1 - alpha)
};

TestResult test(const Summary& base, const Summary& candidate, const RuleOptions& options);

// "mmtests-2019" | "ttest-2019" | "A" -> mmtests_2019; "mmtests-2024" | "ci-2024" | "B" -> mmtests_2024;
// "welch" -> welch. Throws smtlab::Error listing the names otherwise.
Rule parse_rule(const std::string& name);
std::string rule_name(Rule rule);
// One line for the tables: "significance: Welch t-test, alpha 0.05, min effect 1.00% (95% CI shown)".
std::string describe(const RuleOptions& options);

// Two-sided p-value of |t| with df degrees of freedom (Student t, Boost.Math).
double two_sided_p(double t, double df);
// Quantile of Student t: t such that P(T <= t) = q.
double t_quantile(double q, double df);
// Half width of the (1-alpha) confidence interval of a mean: t_{1-alpha/2, n-1} x s / sqrt(n).
// 0 for n < 2.
double mean_ci_half_width(const Summary& s, double alpha = 0.05);

}  // namespace smtlab::stats
