#include "stats/significance.hpp"

#include <cmath>
#include <limits>

#include <boost/math/distributions/students_t.hpp>
#include <fmt/format.h>

#include "util/error.hpp"

namespace smtlab::stats {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

double two_sided_p(double t, double df) {
  if (!std::isfinite(t)) return 0;
  boost::math::students_t dist(df);
  return 2 * boost::math::cdf(boost::math::complement(dist, std::fabs(t)));
}

double t_quantile(double q, double df) {
  boost::math::students_t dist(df);
  return boost::math::quantile(dist, q);
}

double mean_ci_half_width(const Summary& s, double alpha) {
  if (s.n < 2 || !std::isfinite(s.stddev)) return 0;
  double df = static_cast<double>(s.n - 1);
  return t_quantile(1 - alpha / 2, df) * s.stddev / std::sqrt(static_cast<double>(s.n));
}

TestResult test(const Summary& base, const Summary& cand, const RuleOptions& options) {
  TestResult r;
  r.difference = cand.mean - base.mean;
  r.ci_low = r.ci_high = r.difference;
  if (!std::isfinite(base.mean) || !std::isfinite(cand.mean) || !std::isfinite(base.stddev) ||
      !std::isfinite(cand.stddev))
    return r;
  double diff = std::fabs(r.difference);
  switch (options.rule) {
    case Rule::mmtests_2024: {
      if (base.n < 1 || cand.n < 1) return r;
      r.testable = true;
      double s = base.stddev + cand.stddev;
      r.t = s > 0 ? diff / s : (diff > 0 ? INFINITY : 0);
      r.p = kNaN;
      r.significant = diff > 1.96 * s;
      return r;
    }
    case Rule::mmtests_2019: {
      if (base.n < 2 || cand.n < 2) return r;
      r.testable = true;
      r.df = static_cast<double>(base.n + cand.n - 2);
      double se = std::sqrt(base.stddev * base.stddev / base.n + cand.stddev * cand.stddev / cand.n);
      if (se == 0) {
        r.significant = diff > 0;
        r.t = diff > 0 ? INFINITY : 0;
        r.p = diff > 0 ? 0 : 1;
        return r;
      }
      r.t = diff / se;
      r.p = two_sided_p(r.t, r.df);
      r.significant = r.p < 0.10;
      double h = t_quantile(1 - 0.10 / 2, r.df) * se;
      r.ci_low = r.difference - h;
      r.ci_high = r.difference + h;
      return r;
    }
    case Rule::welch: {
      if (base.n < 2 || cand.n < 2) return r;
      r.testable = true;
      double vb = base.stddev * base.stddev / base.n, vc = cand.stddev * cand.stddev / cand.n;
      double se = std::sqrt(vb + vc);
      bool big_enough = base.mean != 0 ? 100.0 * diff / std::fabs(base.mean) >= options.min_effect_pct : diff > 0;
      if (se == 0) {
        r.t = diff > 0 ? INFINITY : 0;
        r.p = diff > 0 ? 0 : 1;
        r.df = static_cast<double>(base.n + cand.n - 2);
        r.significant = diff > 0 && big_enough;
        return r;
      }
      r.df = (vb + vc) * (vb + vc) / (vb * vb / (base.n - 1) + vc * vc / (cand.n - 1));
      r.t = diff / se;
      r.p = two_sided_p(r.t, r.df);
      double h = t_quantile(1 - options.alpha / 2, r.df) * se;
      r.ci_low = r.difference - h;
      r.ci_high = r.difference + h;
      r.significant = r.p < options.alpha && big_enough;
      return r;
    }
  }
  return r;
}

Rule parse_rule(const std::string& name) {
  if (name == "mmtests-2019" || name == "ttest-2019" || name == "A" || name == "a") return Rule::mmtests_2019;
  if (name == "mmtests-2024" || name == "ci-2024" || name == "B" || name == "b") return Rule::mmtests_2024;
  if (name == "welch") return Rule::welch;
  throw Error("unknown significance rule '" + name + "'",
              "use welch (default), mmtests-2019 (the seed tables' t-test) or mmtests-2024 (mmtests' current rule)");
}

std::string rule_name(Rule rule) {
  switch (rule) {
    case Rule::mmtests_2019: return "mmtests-2019";
    case Rule::mmtests_2024: return "mmtests-2024";
    case Rule::welch: return "welch";
  }
  return "?";
}

std::string describe(const RuleOptions& o) {
  switch (o.rule) {
    case Rule::mmtests_2019:
      return "significance: mmtests-2019 (Student t, df = n1+n2-2, two-sided p < 0.10)";
    case Rule::mmtests_2024:
      return "significance: mmtests-2024 (|difference| > 1.96 x (stddev base + stddev new))";
    case Rule::welch:
      return fmt::format("significance: welch (Welch t-test, two-sided p < {:g}, and |difference| >= {:.2f}% of the baseline)",
                         o.alpha, o.min_effect_pct);
  }
  return "significance: ?";
}

}  // namespace smtlab::stats
