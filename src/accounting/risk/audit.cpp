#include "accounting/risk/audit.hpp"

#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <boost/math/special_functions/beta.hpp>
#include <cmath>
#include <limits>
#include <string>

#include "accounting/errors.hpp"
#include "accounting/numerics/outward.hpp"

namespace dpb {
namespace {

/// Bisection steps of the one-run ε search: 2^-80 of the bracket, far below
/// any printed digit.
constexpr int kAuditBisectionSteps = 80;
/// Largest ε searched by the one-run audit: e^60 guesses right out of 1 is
/// beyond any count a double holds exactly.
constexpr double kMaxAuditEpsilon = 60;

void check_level(double alpha) {
  if (!(alpha > 0 && alpha < 1)) throw InvalidParameter("confidence", "must be in (0, 1)");
}

/// Relative margin of the Clopper–Pearson quantiles: Boost's tables give the
/// incomplete beta function and its inverse errors of at most a few hundred ε
/// in double precision; 1e-12 (≈ 4500 ε) is outside them with room and below
/// any printed digit.
constexpr double kQuantileMargin = 1e-12;

/// log((1 − δ − a)/b) for a, b in (0, 1], rounded down (a lower value), −∞
/// when 1 − δ − a is not positive. Errors: 1 − δ − a rounds twice (≤ 2u of
/// 1 + δ + a, relative to the numerator after cancelling), each log ≤ 1 ulp,
/// the difference ≤ ½ ulp; the bound is doubled for second-order terms.
double log_ratio_lower(double delta, double a, double b) {
  const double numerator = 1 - delta - a;
  if (!(numerator > 0)) return -std::numeric_limits<double>::infinity();
  const double ln = std::log(numerator), lb = std::log(b);
  const double u = kU;
  const double e = ln - lb;
  const double err = 2 * (2 * u * (1 + delta + a) / numerator + u * (std::abs(ln) + std::abs(lb)) +
                          u * std::abs(e));
  return e - err;
}

}  // namespace

double clopper_pearson_upper(std::int64_t k, std::int64_t n, double alpha) {
  check_level(alpha);
  if (n < 1 || k < 0 || k > n) throw InvalidParameter("count", "must be in [0, n], n >= 1");
  if (k == n) return 1;
  // P(Binomial(n, p) ≤ k) = I_{1−p}(n − k, k + 1) = α  ⇔  p = I⁻¹(k + 1, n − k; 1 − α).
  // An upper bound: stepped up past the quantile's error (kQuantileMargin).
  const double p =
      boost::math::ibeta_inv(static_cast<double>(k + 1), static_cast<double>(n - k), 1 - alpha);
  return std::min(1.0, outward::up(p * (1 + kQuantileMargin), 1));
}

double clopper_pearson_lower(std::int64_t k, std::int64_t n, double alpha) {
  check_level(alpha);
  if (n < 1 || k < 0 || k > n) throw InvalidParameter("count", "must be in [0, n], n >= 1");
  if (k == 0) return 0;
  // P(Binomial(n, p) ≥ k) = I_p(k, n − k + 1) = α. A lower bound: stepped down.
  const double p =
      boost::math::ibeta_inv(static_cast<double>(k), static_cast<double>(n - k + 1), alpha);
  return outward::down_to_zero(p * (1 - kQuantileMargin), 1);
}

AuditBound audit_epsilon_lower(const AttackCounts& c, double confidence, double delta,
                               std::int64_t tests) {
  if (c.tp < 0 || c.fn < 0 || c.fp < 0 || c.tn < 0)
    throw InvalidParameter("counts", "must be integers >= 0");
  if (c.tp + c.fn < 1) throw InvalidParameter("counts", "need at least one member (tp + fn >= 1)");
  if (c.fp + c.tn < 1)
    throw InvalidParameter("counts", "need at least one non-member (fp + tn >= 1)");
  if (!(delta >= 0 && delta < 1)) throw InvalidParameter("delta", "must be in [0, 1)");
  if (tests < 1) throw InvalidParameter("tests", "must be >= 1");
  AuditBound b;
  b.alpha = (1 - confidence) / (2 * static_cast<double>(tests));
  check_level(b.alpha);
  const std::int64_t members = c.tp + c.fn, others = c.fp + c.tn;
  b.fpr = static_cast<double>(c.fp) / static_cast<double>(others);
  b.fnr = static_cast<double>(c.fn) / static_cast<double>(members);
  b.fpr_upper = clopper_pearson_upper(c.fp, others, b.alpha);
  b.fnr_upper = clopper_pearson_upper(c.fn, members, b.alpha);
  // docs/risk.md#audit-bound. Both rate bounds are > 0 (α < 1), so the ratios are finite.
  // Each candidate rounded toward less privacy loss: a lower bound must not be overstated.
  const double e = std::max({log_ratio_lower(delta, b.fpr_upper, b.fnr_upper),
                             log_ratio_lower(delta, b.fnr_upper, b.fpr_upper), 0.0});
  b.epsilon_lower = outward::down_to_zero(e, 1);
  return b;
}

namespace {

/// Counts at threshold τ (flag a member when score ≥ τ).
AttackCounts counts_at(const std::vector<Scored>& scores, double threshold) {
  AttackCounts c;
  for (const auto& s : scores) {
    const bool flagged = s.score >= threshold;
    if (s.member)
      (flagged ? c.tp : c.fn) += 1;
    else
      (flagged ? c.fp : c.tn) += 1;
  }
  return c;
}

}  // namespace

ThresholdAudit audit_scores_at(const std::vector<Scored>& scores, double threshold,
                               double confidence, double delta) {
  ThresholdAudit a;
  a.threshold = threshold;
  a.tests = 1;
  a.counts = counts_at(scores, threshold);
  a.bound = audit_epsilon_lower(a.counts, confidence, delta, 1);
  return a;
}

ThresholdAudit audit_scores(const std::vector<Scored>& scores, double confidence, double delta) {
  std::vector<double> thresholds;
  for (const auto& s : scores) thresholds.push_back(s.score);
  std::sort(thresholds.begin(), thresholds.end());
  thresholds.erase(std::unique(thresholds.begin(), thresholds.end()), thresholds.end());
  if (thresholds.empty()) throw InvalidParameter("scores", "no scores");
  // Sweep the thresholds in ascending order: counts change as examples
  // cross; every distinct score is one test (Bonferroni over all of them).
  std::vector<Scored> sorted = scores;
  std::sort(sorted.begin(), sorted.end(),
            [](const Scored& x, const Scored& y) { return x.score < y.score; });
  const auto tests = static_cast<std::int64_t>(thresholds.size());
  AttackCounts c = counts_at(scores, thresholds.front());  // everything flagged
  ThresholdAudit best;
  std::size_t next = 0;
  for (double t : thresholds) {
    // Examples below t are no longer flagged.
    for (; next < sorted.size() && sorted[next].score < t; ++next) {
      if (sorted[next].member) {
        --c.tp;
        ++c.fn;
      } else {
        --c.fp;
        ++c.tn;
      }
    }
    const AuditBound b = audit_epsilon_lower(c, confidence, delta, tests);
    if (t == thresholds.front() || b.epsilon_lower > best.bound.epsilon_lower) {
      best.threshold = t;
      best.counts = c;
      best.bound = b;
    }
  }
  best.tests = tests;
  return best;
}

double one_run_p_value(std::int64_t m, std::int64_t r, std::int64_t v, double epsilon,
                       double delta) {
  if (!(0 <= v && v <= r && r <= m))
    throw InvalidParameter("correct", "need 0 <= correct <= guesses <= canaries");
  if (!(epsilon >= 0)) throw InvalidParameter("epsilon", "must be >= 0");
  if (!(delta >= 0 && delta <= 1)) throw InvalidParameter("delta", "must be in [0, 1]");
  if (v == 0) return 1;
  const double q = 1 / (1 + std::exp(-epsilon));
  const boost::math::binomial_distribution<double> bin(static_cast<double>(r), q);
  // P(Binomial(r, q) ≥ v).
  const double beta = boost::math::cdf(boost::math::complement(bin, static_cast<double>(v - 1)));
  double alpha = 0, sum = 0;
  if (delta > 0)
    for (std::int64_t i = 1; i <= v; ++i) {
      sum += boost::math::pdf(bin, static_cast<double>(v - i));  // P(v − i ≤ B < v)
      alpha = std::max(alpha, sum / static_cast<double>(i));
    }
  return std::min(1.0, beta + 2 * static_cast<double>(m) * delta * alpha);
}

double one_run_epsilon_lower(std::int64_t m, std::int64_t r, std::int64_t v, double confidence,
                             double delta) {
  if (!(confidence > 0 && confidence < 1))
    throw InvalidParameter("confidence", "must be in (0, 1)");
  // 1 − confidence rounds to 1 for a confidence below 2^-54: the double below
  // 1 stands for a higher confidence, whose bound is lower and so holds at
  // the confidence asked.
  const double target = std::min(1 - confidence, std::nextafter(1.0, 0.0));
  check_level(target);
  if (one_run_p_value(m, r, v, 0, delta) >= target) return 0;  // not even ε = 0 rejected
  double lo = 0, hi = 1;                                       // p(lo) < target ≤ p(hi)
  while (one_run_p_value(m, r, v, hi, delta) < target) {
    lo = hi;
    hi *= 2;
    if (hi > kMaxAuditEpsilon) return lo;
  }
  for (int k = 0; k < kAuditBisectionSteps; ++k) {
    const double mid = (lo + hi) / 2;
    (one_run_p_value(m, r, v, mid, delta) < target ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace dpb
