#include "accounting/numerics/normal.hpp"

#include <boost/math/special_functions/erf.hpp>

namespace dpb::detail {
namespace {
constexpr double kSqrt2 = 1.4142135623730950488;
constexpr double kHalfLog2Pi = 0.91893853320467274178;
}  // namespace

double norm_cdf(double x) {
  if (std::isnan(x)) return x;
  if (x == std::numeric_limits<double>::infinity()) return 1;
  if (x == -std::numeric_limits<double>::infinity()) return 0;
  return 0.5 * boost::math::erfc(-x / kSqrt2);
}

double log_norm_cdf(double x) {
  if (std::isnan(x)) return x;
  if (x == std::numeric_limits<double>::infinity()) return 0;
  if (x == -std::numeric_limits<double>::infinity())
    return -std::numeric_limits<double>::infinity();
  if (x > 0) return std::log1p(-0.5 * boost::math::erfc(x / kSqrt2));  // log(1 − Φ(−x))
  if (x > -37) return std::log(0.5 * boost::math::erfc(-x / kSqrt2));  // erfc ≥ 1e-300 here
  // Asymptotic series of the Mills ratio: Φ(x) = φ(x)/(−x) · Σ (−1)ⁿ (2n−1)!!/x²ⁿ.
  // For x < −37 the terms shrink by ≥ 1/1369 per step at first; stop once
  // negligible (well before the series starts to diverge at n ≈ x²/2).
  const double inv_x2 = 1 / (x * x);
  double term = 1;
  double sum = 1;
  for (int n = 1; n < 30; ++n) {
    term *= -(2.0 * n - 1) * inv_x2;
    sum += term;
    if (std::abs(term) < 1e-17 * std::abs(sum)) break;
  }
  if (!std::isfinite(inv_x2) || inv_x2 == 0) sum = 1;
  return -0.5 * x * x - std::log(-x) - kHalfLog2Pi + std::log(sum);
}

double norm_quantile(double p) {
  if (p <= 0) return -std::numeric_limits<double>::infinity();
  if (p >= 1) return std::numeric_limits<double>::infinity();
  return -kSqrt2 * boost::math::erfc_inv(2 * p);
}

}  // namespace dpb::detail
