// Audits (docs/risk.md#audit-bound): Clopper–Pearson bounds against exact binomial tails
// computed here, the ε lower bound's formula, its behaviour (0 for random
// guessing, growing with the counts at fixed rates), the best-threshold
// search, and the one-run audit's p-value against a direct sum.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "accounting/errors.hpp"
#include "accounting/risk/audit.hpp"

using namespace dpb;

namespace {

/// Agreement of Boost's inverse incomplete beta with the bisection below.
constexpr double kQuantileRel = 1e-9;

/// P(Binomial(n, p) ≤ k) by summing the exact probability mass function (log-gamma).
double binomial_cdf(std::int64_t k, std::int64_t n, double p) {
  double s = 0;
  for (std::int64_t j = 0; j <= k; ++j) {
    const double jd = static_cast<double>(j), nd = static_cast<double>(n);
    s += std::exp(std::lgamma(nd + 1) - std::lgamma(jd + 1) - std::lgamma(nd - jd + 1) +
                  jd * std::log(p) + (nd - jd) * std::log1p(-p));
  }
  return s;
}

/// The p with P(Binomial(n, p) ≤ k) = α, by bisection on the exact CDF
/// (decreasing in p).
double upper_by_bisection(std::int64_t k, std::int64_t n, double alpha) {
  double lo = 0, hi = 1;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (binomial_cdf(k, n, mid) > alpha ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

/// P(Binomial(r, q) = j).
double pmf(std::int64_t j, std::int64_t r, double q) {
  const double jd = static_cast<double>(j), rd = static_cast<double>(r);
  return std::exp(std::lgamma(rd + 1) - std::lgamma(jd + 1) - std::lgamma(rd - jd + 1) +
                  jd * std::log(q) + (rd - jd) * std::log1p(-q));
}

/// The one-run p-value written out from the theorem.
double p_value_here(std::int64_t m, std::int64_t r, std::int64_t v, double eps, double delta) {
  const double q = std::exp(eps) / (1 + std::exp(eps));
  double tail = 0;
  for (std::int64_t j = v; j <= r; ++j) tail += pmf(j, r, q);
  double best = 0, sum = 0;
  for (std::int64_t i = 1; i <= v; ++i) {
    sum += pmf(v - i, r, q);
    best = std::max(best, sum / static_cast<double>(i));
  }
  return std::min(1.0, tail + 2 * static_cast<double>(m) * delta * best);
}

}  // namespace

TEST_CASE("audit: Clopper-Pearson bounds against exact binomial tails") {
  for (std::int64_t n : {1, 10, 100, 1000})
    for (std::int64_t k : {std::int64_t{0}, n / 3, n - 1})
      for (double alpha : {0.025, 0.001}) {
        INFO("k ", k, " of ", n, ", alpha ", alpha);
        const double u = clopper_pearson_upper(k, n, alpha);
        CHECK(u == doctest::Approx(upper_by_bisection(k, n, alpha)).epsilon(kQuantileRel));
        CHECK(u > static_cast<double>(k) / static_cast<double>(n));
        // The lower bound is the mirror image: successes become failures.
        CHECK(clopper_pearson_lower(n - k, n, alpha) == doctest::Approx(1 - u).epsilon(1e-9));
      }
  CHECK(clopper_pearson_upper(5, 5, 0.05) == 1);
  CHECK(clopper_pearson_lower(0, 5, 0.05) == 0);
  // k = 0: 1 − α^{1/n} exactly.
  CHECK(clopper_pearson_upper(0, 20, 0.05) ==
        doctest::Approx(1 - std::pow(0.05, 1.0 / 20)).epsilon(1e-12));
}

TEST_CASE("audit: the epsilon lower bound's formula, random guessing, growth with the counts") {
  const AuditBound b = audit_epsilon_lower({600, 400, 100, 900}, 0.95, 1e-5);
  CHECK(b.alpha == doctest::Approx(0.025));
  CHECK(b.fpr == 0.1);
  CHECK(b.fnr == 0.4);
  const double fu = upper_by_bisection(100, 1000, 0.025), nu = upper_by_bisection(400, 1000, 0.025);
  const double expected = std::max(std::log((1 - 1e-5 - fu) / nu), std::log((1 - 1e-5 - nu) / fu));
  CHECK(b.epsilon_lower == doctest::Approx(expected).epsilon(1e-8));
  CHECK(b.epsilon_lower <= expected * (1 + 1e-8));
  // A random-guess attack (TPR = FPR) shows nothing.
  CHECK(audit_epsilon_lower({500, 500, 500, 500}, 0.95, 0).epsilon_lower == 0);
  CHECK(audit_epsilon_lower({0, 50, 0, 50}, 0.95, 0).epsilon_lower == 0);
  // Fixed rates TPR 0.6, FPR 0.1: more examples, a larger lower bound,
  // approaching max(log(0.9/0.4), log(0.6/0.1)) = log 6 from below.
  double last = 0;
  for (std::int64_t n : {100, 1000, 10000, 100000}) {
    const double e =
        audit_epsilon_lower({6 * n / 10, 4 * n / 10, n / 10, 9 * n / 10}, 0.95, 0).epsilon_lower;
    CHECK(e > last);
    CHECK(e < std::log(0.6 / 0.1));
    last = e;
  }
  // More confidence, a smaller bound; a larger δ, a smaller bound.
  CHECK(audit_epsilon_lower({600, 400, 100, 900}, 0.99, 0).epsilon_lower <
        audit_epsilon_lower({600, 400, 100, 900}, 0.95, 0).epsilon_lower);
  CHECK(audit_epsilon_lower({600, 400, 100, 900}, 0.95, 0.05).epsilon_lower <
        audit_epsilon_lower({600, 400, 100, 900}, 0.95, 0).epsilon_lower);
  CHECK_THROWS_AS(audit_epsilon_lower({0, 0, 1, 1}, 0.95, 0), InvalidParameter);
  CHECK_THROWS_AS(audit_epsilon_lower({1, 1, 0, 0}, 0.95, 0), InvalidParameter);
}

TEST_CASE("audit: scores, at a threshold and the best one at a Bonferroni cost") {
  std::vector<Scored> s;
  for (int i = 0; i < 200; ++i) s.push_back({i < 150 ? 1.0 : 0.0, true});  // 150 of 200 flagged
  for (int i = 0; i < 200; ++i) s.push_back({i < 20 ? 1.0 : 0.0, false});  // 20 of 200 flagged
  const ThresholdAudit at = audit_scores_at(s, 0.5, 0.95, 0);
  CHECK(at.counts.tp == 150);
  CHECK(at.counts.fp == 20);
  CHECK(at.tests == 1);
  CHECK(at.bound.epsilon_lower == audit_epsilon_lower({150, 50, 20, 180}, 0.95, 0).epsilon_lower);
  // Two distinct scores: two thresholds tried, each bound at level 0.05/4;
  // the best is score >= 1 (at 0 everything is flagged: random guessing).
  const ThresholdAudit best = audit_scores(s, 0.95, 0);
  CHECK(best.tests == 2);
  CHECK(best.threshold == 1.0);
  CHECK(best.bound.alpha == doctest::Approx(0.0125));
  CHECK(best.bound.epsilon_lower ==
        audit_epsilon_lower({150, 50, 20, 180}, 0.95, 0, 2).epsilon_lower);
  CHECK(best.bound.epsilon_lower < at.bound.epsilon_lower);
}

TEST_CASE("audit: one-run audit, the p-value against the theorem written out") {
  struct Case {
    std::int64_t m, r, v;
  };
  for (double delta : {0.0, 1e-5})
    for (const Case c : {Case{1000, 100, 100}, Case{1000, 600, 600}, Case{1000, 200, 150}}) {
      INFO("m ", c.m, " r ", c.r, " v ", c.v, " delta ", delta);
      for (double eps : {0.5, 2.0, 4.0})
        CHECK(one_run_p_value(c.m, c.r, c.v, eps, delta) ==
              doctest::Approx(p_value_here(c.m, c.r, c.v, eps, delta)).epsilon(1e-9));
      const double e = one_run_epsilon_lower(c.m, c.r, c.v, 0.95, delta);
      CHECK(e > 0);
      // Rejected at e (up to the two sums' rounding), not beyond.
      CHECK(p_value_here(c.m, c.r, c.v, e, delta) <= 0.05 * (1 + 1e-9));
      CHECK(p_value_here(c.m, c.r, c.v, e * (1 + 1e-6), delta) >= 0.05);  // the largest such
    }
  // Half right is random guessing: nothing shown.
  CHECK(one_run_epsilon_lower(1000, 200, 100, 0.95, 0) == 0);
}
