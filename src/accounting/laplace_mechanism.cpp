#include "accounting/laplace_mechanism.hpp"

#include <algorithm>
#include <cmath>

#include "accounting/errors.hpp"

namespace dpb {
namespace {

void check_scale(double b) {
  if (!(b > 0)) throw InvalidParameter("scale", "must be a number > 0");
}
void check_sensitivity(double s) {
  if (!(s > 0) || !std::isfinite(s))
    throw InvalidParameter("sensitivity", "must be a finite number > 0");
}

}  // namespace

double laplace_scale(double epsilon, double sensitivity) {
  if (!(epsilon > 0)) throw InvalidParameter("epsilon", "must be a number > 0");
  check_sensitivity(sensitivity);
  double b = sensitivity / epsilon;  // within half an ulp of the quotient
  if (std::fma(b, epsilon, -sensitivity) < 0) b = std::nextafter(b, INFINITY);
  return b;
}

double laplace_pure_epsilon(double scale, double sensitivity) {
  check_scale(scale);
  check_sensitivity(sensitivity);
  double eps = sensitivity / scale;  // within half an ulp of the quotient
  if (std::fma(eps, scale, -sensitivity) < 0) eps = std::nextafter(eps, INFINITY);
  return eps;
}

double laplace_delta(double scale, double epsilon, double sensitivity) {
  check_scale(scale);
  check_sensitivity(sensitivity);
  if (!(epsilon >= 0)) throw InvalidParameter("epsilon", "must be a number >= 0");
  const double eps0 = sensitivity / scale;
  if (epsilon >= eps0) return 0;
  return -std::expm1((epsilon - eps0) / 2);
}

double laplace_epsilon(double scale, double delta, double sensitivity) {
  check_scale(scale);
  check_sensitivity(sensitivity);
  if (!(delta >= 0 && delta <= 1)) throw InvalidParameter("delta", "must be in [0, 1]");
  const double eps0 = sensitivity / scale;
  if (delta >= 1) return 0;
  const double eps = eps0 + 2 * std::log1p(-delta);
  if (eps <= 0) return 0;
  // Round up by one ulp so the reported ε is never below the exact root.
  return std::nextafter(eps, eps0 + 1) <= eps0 ? std::nextafter(eps, eps0 + 1) : eps;
}

}  // namespace dpb
