#include "accounting/mechanisms/laplace_mechanism.hpp"

#include <algorithm>
#include <cmath>

#include "accounting/errors.hpp"
#include "accounting/numerics/outward.hpp"

namespace dpb {
namespace {

/// −expm1 is within 1 ulp (glibc); stepped up 2 ulps.
constexpr int kExpm1Ulps = 2;
/// log1p is within 1 ulp (glibc) and doubling is exact; stepped 2 ulps.
constexpr int kLog1pUlps = 2;

void check_scale(double b) {
  if (!(b > 0)) throw InvalidParameter("scale", "must be a number > 0");
}
void check_laplace_sensitivity(double s) {
  if (!(s > 0) || !std::isfinite(s))
    throw InvalidParameter("sensitivity", "must be a finite number > 0");
}

}  // namespace

double laplace_scale(double epsilon, double sensitivity) {
  if (!(epsilon > 0)) throw InvalidParameter("epsilon", "must be a number > 0");
  check_laplace_sensitivity(sensitivity);
  double b = sensitivity / epsilon;  // within half an ulp of the quotient
  if (std::fma(b, epsilon, -sensitivity) < 0) b = std::nextafter(b, INFINITY);
  return b;
}

double laplace_pure_epsilon(double scale, double sensitivity) {
  check_scale(scale);
  check_laplace_sensitivity(sensitivity);
  double eps = sensitivity / scale;  // within half an ulp of the quotient
  if (std::fma(eps, scale, -sensitivity) < 0) eps = std::nextafter(eps, INFINITY);
  return eps;
}

double laplace_delta(double scale, double epsilon, double sensitivity) {
  check_scale(scale);
  check_laplace_sensitivity(sensitivity);
  if (!(epsilon >= 0)) throw InvalidParameter("epsilon", "must be a number >= 0");
  // ε₀ rounded up (δ grows with ε₀); the exact ε₀ may still exceed a rounded
  // one that ε reaches, so compare with the rounded-up value.
  const double eps0 = laplace_pure_epsilon(scale, sensitivity);
  if (epsilon >= eps0) return 0;
  // ε₀ − ε rounds by ≤ ½ ulp: stepped up one; then the halving (exact) and
  // −expm1 (≤ 1 ulp), stepped up kExpm1Ulps.
  const double gap = outward::up(eps0 - epsilon, 1);
  return std::min(1.0, outward::up(-std::expm1(-gap / 2), kExpm1Ulps));
}

double laplace_epsilon(double scale, double delta, double sensitivity) {
  check_scale(scale);
  check_laplace_sensitivity(sensitivity);
  if (!(delta >= 0 && delta <= 1)) throw InvalidParameter("delta", "must be in [0, 1]");
  const double eps0 = laplace_pure_epsilon(scale, sensitivity);  // rounded up
  if (delta >= 1) return 0;
  // 2·log1p(−δ) ≤ 0, within 1 ulp: its magnitude stepped down kLog1pUlps (toward
  // 0, i.e. up); the sum rounds by ≤ ½ ulp: stepped up one; at most ε₀.
  const double log_term = outward::up(2 * std::log1p(-delta), kLog1pUlps);
  const double eps = outward::up(eps0 + log_term, 1);
  if (eps <= 0) return 0;
  return std::min(eps, eps0);
}

}  // namespace dpb
