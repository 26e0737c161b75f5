#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "stats/significance.hpp"
#include "stats/summary.hpp"
#include "util/error.hpp"

using namespace smtlab::stats;
using Catch::Detail::Approx;

TEST_CASE("descriptive statistics") {
  std::vector<double> v = {2, 4, 4, 4, 5, 5, 7, 9};
  CHECK(mean(v) == 5);
  CHECK(stddev(v) == Approx(std::sqrt(32.0 / 7)));  // n-1, not n (that would be 2.0)
  CHECK(coeffvar(v) == Approx(100 * std::sqrt(32.0 / 7) / 5));
  CHECK(min(v) == 2);
  CHECK(max(v) == 9);
  std::vector<double> rates = {1, 2, 4};
  CHECK(harmonic_mean(rates) == Approx(3 / 1.75));
  CHECK(harmonic_mean(std::vector<double>{1000, 0, 500}) == 0);  // a run that delivered nothing: the limit
  CHECK(std::isnan(harmonic_mean(std::vector<double>{1, -1})));
  CHECK(std::isnan(mean(std::vector<double>{})));
  // One sample has no spread: n/a, not 0 (which would make any difference "significant").
  CHECK(std::isnan(stddev(std::vector<double>{3})));
  CHECK(std::isnan(coeffvar(std::vector<double>{3})));
  // Best 95 % of 20 samples drops the worst one; of 5 samples, floor(4.75) = 4 are kept.
  std::vector<double> twenty;
  for (int i = 1; i <= 20; ++i) twenty.push_back(i);
  CHECK(best_mean(twenty, 95, false) == Approx(10.0));  // 1..19
  CHECK(best_mean(twenty, 95, true) == Approx(11.0));   // 2..20
  CHECK(best_mean(std::vector<double>{1, 2, 3, 4, 100}, 95, false) == Approx(2.5));
}

TEST_CASE("Student t quantiles and p-values match published tables") {
  // Two-sided critical values from standard t tables.
  CHECK(t_quantile(0.975, 1) == Approx(12.706).epsilon(1e-4));
  CHECK(t_quantile(0.975, 10) == Approx(2.228).epsilon(1e-3));
  CHECK(t_quantile(0.95, 8) == Approx(1.860).epsilon(1e-3));
  CHECK(t_quantile(0.995, 30) == Approx(2.750).epsilon(1e-3));
  CHECK(two_sided_p(2.306, 8) == Approx(0.05).epsilon(1e-3));
  CHECK(two_sided_p(1.860, 8) == Approx(0.10).epsilon(1e-3));
  // 95 % CI half width of a mean: n = 5, s = 1 -> 2.776 / sqrt(5).
  CHECK(mean_ci_half_width({5, 0, 1}) == Approx(2.776 / std::sqrt(5.0)).epsilon(1e-3));
}

TEST_CASE("the compare-format hackbench example: significant under mmtests-2019, not mmtests-2024") {
  Summary base{5, 2.8688, 0.1236}, cand{5, 2.5880, 0.1607};
  TestResult a = test(base, cand, {Rule::mmtests_2019});
  CHECK(a.testable);
  CHECK(a.t == Approx(3.1).margin(0.01));
  CHECK(a.df == 8);
  CHECK(a.p < 0.10);
  CHECK(a.significant);
  TestResult b = test(base, cand, {Rule::mmtests_2024});
  CHECK_FALSE(b.significant);
  TestResult w = test(base, cand, {Rule::welch, 0.05, 1.0});
  CHECK(w.significant);  // p ~ 0.016, effect ~ 9.8 %
  CHECK(w.df < 8);       // Welch-Satterthwaite df is below n1+n2-2 with unequal variances
  CHECK(w.ci_high < 0);  // the whole CI of new - base is below zero
}

TEST_CASE("Welch's t-test matches a published example") {
  // Welch's t-test article, example 1: t = -2.46, df = 25.0, p = 0.021.
  std::vector<double> a1 = {27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4};
  std::vector<double> a2 = {27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4};
  TestResult w = test(summarize(a2), summarize(a1), {Rule::welch, 0.05, 0.0});
  CHECK(w.t == Approx(2.46).margin(0.01));
  CHECK(w.df == Approx(25.0).margin(0.1));
  CHECK(w.p == Approx(0.021).margin(0.001));
  CHECK(w.significant);
  CHECK(w.ci_low < w.difference);
  CHECK(w.ci_high < 0);
  // The same data with a 10 % minimum effect is not significant (the difference is ~7.6 %).
  CHECK_FALSE(test(summarize(a2), summarize(a1), {Rule::welch, 0.05, 10.0}).significant);
}

TEST_CASE("edge cases of the rules") {
  // mmtests-2019: both stddevs 0 -> significant iff the means differ.
  CHECK(test({5, 10, 0}, {5, 10.5, 0}, {Rule::mmtests_2019}).significant);
  CHECK_FALSE(test({5, 10, 0}, {5, 10, 0}, {Rule::mmtests_2019}).significant);
  // One sample per side cannot be tested with a t rule.
  CHECK_FALSE(test({1, 10, 0}, {1, 20, 0}, {Rule::mmtests_2019}).testable);
  CHECK_FALSE(test({1, 10, 0}, {1, 20, 0}, {Rule::welch}).significant);
  // mmtests-2024 is independent of n.
  CHECK(test({3, 10, 0.1}, {3, 10.5, 0.1}, {Rule::mmtests_2024}).significant);
  CHECK_FALSE(test({30, 10, 0.2}, {30, 10.5, 0.2}, {Rule::mmtests_2024}).significant);
  CHECK(parse_rule("A") == Rule::mmtests_2019);
  CHECK(parse_rule("mmtests-2024") == Rule::mmtests_2024);
  CHECK(parse_rule("welch") == Rule::welch);
  CHECK_THROWS_AS(parse_rule("bonferroni"), smtlab::Error);
  CHECK(describe({Rule::mmtests_2019}).rfind("significance: mmtests-2019", 0) == 0);
}
