#pragma once
// Rounding a result computed in doubles toward more privacy loss (docs/README.md#rounding:
// every printed upper bound is a sound upper bound; docs/README.md#rounding): an
// upper value is stepped up, a lower value down, by a bounded number of ulps
// or by a bound on its rounding error. Each caller names how many ulps and
// why, from the error analysis of its formula.
#include <cmath>
#include <limits>

#include "accounting/numerics/double_limits.hpp"

namespace dpb::outward {

/// x stepped `ulps` doubles toward +inf (an upper value made safe); ±inf and
/// NaN unchanged, and 0 too: the callers' zeros are exact (nothing released,
/// a target beyond every loss), never a rounded small value.
inline double up(double x, int ulps) {
  for (int i = 0; i < ulps && std::isfinite(x) && x != 0; ++i)
    x = std::nextafter(x, std::numeric_limits<double>::infinity());
  return x;
}

/// x stepped `ulps` doubles toward −inf (a lower value made safe); 0 stays 0
/// as in up().
inline double down(double x, int ulps) {
  for (int i = 0; i < ulps && std::isfinite(x) && x != 0; ++i)
    x = std::nextafter(x, -std::numeric_limits<double>::infinity());
  return x;
}

/// A non-negative lower value stepped down, never below 0 (a lower bound on
/// ε or a rate is ≥ 0 by definition).
inline double down_to_zero(double x, int ulps) {
  for (int i = 0; i < ulps && x > 0 && std::isfinite(x); ++i) x = std::nextafter(x, 0.0);
  return x;
}

/// num/den rounded up: the quotient is within half an ulp, and the fma
/// residual num − q·den (exact) says on which side; one step up if below.
/// num, den > 0 and finite.
inline double quotient_up(double num, double den) {
  const double q = num / den;
  if (std::isfinite(q) && q > 0 && std::fma(q, den, -num) < 0)
    return std::nextafter(q, std::numeric_limits<double>::infinity());
  return q;
}

/// num/den rounded down (the mirror of quotient_up: one step down when the
/// exact residual num − q·den says the rounded quotient lies above). num,
/// den > 0 and finite.
inline double quotient_down(double num, double den) {
  const double q = num / den;
  if (std::isfinite(q) && q > 0 && std::fma(q, den, -num) > 0) return std::nextafter(q, 0.0);
  return q;
}

/// a·b rounded up: the fma residual a·b − p (exact) says whether the rounded
/// product p lies below the exact one. Finite a, b ≥ 0.
inline double product_up(double a, double b) {
  const double p = a * b;
  if (std::isfinite(p) && std::fma(a, b, -p) > 0)
    return std::nextafter(p, std::numeric_limits<double>::infinity());
  return p;
}

/// The rounding error of s = a + b (Knuth's TwoSum, exact for any a, b
/// without overflow): a + b = s + the result, exactly.
inline double sum_error(double a, double b, double s) {
  const double bv = s - a;
  return (a - (s - bv)) + (b - bv);
}

/// a − b rounded down: the exact rounding error of the difference (TwoSum)
/// says whether the rounded difference lies above the exact one.
inline double difference_down(double a, double b) {
  const double s = a - b;
  if (std::isfinite(s) && sum_error(a, -b, s) < 0)
    return std::nextafter(s, -std::numeric_limits<double>::infinity());
  return s;
}

/// a + b rounded up: the exact rounding error of the sum (TwoSum) says
/// whether the rounded sum lies below the exact one. Monotone in a and b, so a
/// sum of smaller terms, added up the same way, is never larger.
inline double sum_up(double a, double b) {
  const double s = a + b;
  if (std::isfinite(s) && sum_error(a, b, s) > 0)
    return std::nextafter(s, std::numeric_limits<double>::infinity());
  return s;
}

/// a + b rounded down (TwoSum's exact error, as sum_up).
inline double sum_down(double a, double b) {
  const double s = a + b;
  if (std::isfinite(s) && sum_error(a, b, s) < 0)
    return std::nextafter(s, -std::numeric_limits<double>::infinity());
  return s;
}

/// a·b rounded down (the fma residual, as product_up). Finite a, b ≥ 0.
inline double product_down(double a, double b) {
  const double p = a * b;
  if (std::isfinite(p) && std::fma(a, b, -p) < 0)
    return std::nextafter(p, -std::numeric_limits<double>::infinity());
  return p;
}

}  // namespace dpb::outward
