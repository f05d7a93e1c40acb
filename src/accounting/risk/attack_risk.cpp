#include "accounting/risk/attack_risk.hpp"

#include <algorithm>
#include <cmath>

#include "accounting/errors.hpp"
#include "accounting/numerics/log_math.hpp"
#include "accounting/numerics/normal.hpp"

namespace dpb {
namespace {

/// Bisection of the Rényi constraint on p ∈ [x, 1]: 200 halvings reach the
/// spacing of doubles near any p, so the upper end is the bound to the last
/// bit (and the loop always ends).
constexpr int kBisectionSteps = 200;

/// log of the Rényi sum Σ P^α Q^{1−α} of two Bernoulli laws, P = Bern(a),
/// Q = Bern(b), with a, b ∈ (0, 1): log(a^α b^{1−α} + (1−a)^α (1−b)^{1−α}).
double log_bernoulli_renyi_sum(double alpha, double a, double b) {
  const double t1 = alpha * std::log(a) + (1 - alpha) * std::log(b);
  const double t2 = alpha * std::log1p(-a) + (1 - alpha) * std::log1p(-b);
  return logmath::log_add(t1, t2);
}

/// Largest p ∈ [x, 1] with both Rényi divergences of order α between Bern(p)
/// and Bern(x) at most rho (upper end of the bisection bracket).
double largest_power_at_order(double alpha, double rho, double x) {
  if (!std::isfinite(rho)) return 1;
  const double limit = (alpha - 1) * rho;
  auto feasible = [&](double p) {
    if (p >= 1) return false;  // D_α(Bern(x) ‖ Bern(1)) = ∞ for x < 1
    return log_bernoulli_renyi_sum(alpha, p, x) <= limit &&
           log_bernoulli_renyi_sum(alpha, x, p) <= limit;
  };
  double lo = x, hi = 1;  // feasible(lo), !feasible(hi)
  for (int i = 0; i < kBisectionSteps && hi - lo > 0; ++i) {
    const double mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi) break;
    (feasible(mid) ? lo : hi) = mid;
  }
  return hi;
}

}  // namespace

void check_fprs(std::span<const double> fprs) {
  for (double x : fprs)
    if (!(x > 0 && x < 1)) throw InvalidParameter("fpr", "must be in (0, 1)");
}

double tpr_bound_epsilon_delta(double epsilon, double delta, double fpr) {
  if (!std::isfinite(epsilon) || delta >= 1) return 1;
  // Both lines (the second is the first with the datasets swapped).
  const double line1 = std::exp(epsilon) * fpr + delta;
  const double line2 = 1 - std::exp(-epsilon) * (1 - delta - fpr);
  return std::clamp(std::min(line1, line2), fpr, 1.0);
}

double tpr_bound_gdp(double mu, double fpr) {
  if (!std::isfinite(mu)) return 1;
  return std::max(fpr, detail::norm_cdf(detail::norm_quantile(fpr) + mu));
}

double advantage_gdp(double mu) {
  if (!std::isfinite(mu)) return 1;
  // 2Φ(μ/2) − 1 = Φ(μ/2) − Φ(−μ/2), written with erf for accuracy at small μ.
  return std::erf(mu / (2 * std::sqrt(2.0)));
}

double tpr_bound_rdp(std::span<const double> orders, std::span<const double> rdp, double fpr,
                     double extra_delta) {
  if (extra_delta >= 1) return 1;
  // The part of the output that follows the curve has mass 1 − δₑ under both
  // datasets; a test with FPR x has FPR at most x/(1 − δₑ) on it.
  const double x = std::min(1.0, fpr / (1 - extra_delta));
  double p = 1;
  if (x < 1)
    for (std::size_t i = 0; i < orders.size() && i < rdp.size(); ++i)
      p = std::min(p, largest_power_at_order(orders[i], rdp[i], x));
  return std::min(1.0, (1 - extra_delta) * p + extra_delta);
}

double precision_bound(double prior, double tpr, double fpr) {
  const double flagged_members = prior * tpr;
  const double flagged_others = (1 - prior) * fpr;
  if (flagged_members <= 0) return 0;
  return flagged_members / (flagged_members + flagged_others);
}

}  // namespace dpb
