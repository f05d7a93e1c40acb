#pragma once
// Log-space helpers shared by the accountants. Privacy quantities such as the
// moments A_α of docs/rdp.md#subsampled-gaussian span thousands of orders of magnitude, so sums are
// carried as logarithms. Every helper is a template over the floating type so
// the same code runs in double, long double and Boost.Multiprecision
// (cpp_bin_float_50) when a caller needs more digits.
#include <boost/math/special_functions/erf.hpp>
#include <boost/math/special_functions/expm1.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <boost/math/special_functions/log1p.hpp>
#include <cmath>
#include <limits>
#include <type_traits>

namespace dpb::logmath {

// Elementary functions dispatched to <cmath> for built-in types (fast) and to
// Boost.Math / Boost.Multiprecision otherwise.
template <class T>
T exp(T x) {
  using std::exp;
  return exp(x);
}
template <class T>
T log(T x) {
  using std::log;
  return log(x);
}
template <class T>
T log1p(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return std::log1p(x);
  else
    return boost::math::log1p(x);
}
template <class T>
T expm1(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return std::expm1(x);
  else
    return boost::math::expm1(x);
}
template <class T>
T erfc(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return std::erfc(x);
  else
    return boost::math::erfc(x);
}
/// log|Γ(x)|.
template <class T>
T lgamma(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return std::lgamma(x);
  else
    return boost::math::lgamma(x);
}

template <class T>
T infinity() {
  return std::numeric_limits<T>::infinity();
}

/// Unit roundoff u = ε_machine / 2 of T.
template <class T>
T unit_roundoff() {
  return std::numeric_limits<T>::epsilon() / 2;
}

/// log(e^a + e^b), exact for −∞ arguments.
template <class T>
T log_add(T a, T b) {
  if (a < b) std::swap(a, b);
  if (b == -infinity<T>()) return a;
  return a + logmath::log1p(logmath::exp(b - a));
}

/// log(e^a − e^b) for a ≥ b (−∞ when a = b). Uses log1p(−e^d) for d < −ln 2 and
/// log(−expm1(d)) otherwise, both accurate on their side.
template <class T>
T log_sub(T a, T b) {
  if (b == -infinity<T>()) return a;
  if (!(a > b)) return -infinity<T>();
  const T d = b - a;
  if (d < T(-0.6931471805599453)) return a + logmath::log1p(-logmath::exp(d));
  return a + logmath::log(-logmath::expm1(d));
}

/// log(1 + e^x).
template <class T>
T log1p_exp(T x) {
  if (x > 0) return x + logmath::log1p(logmath::exp(-x));
  return logmath::log1p(logmath::exp(x));
}

/// log(e^x − 1) for x > 0.
template <class T>
T log_expm1(T x) {
  if (x > T(0.6931471805599453)) {
    // e^{−x} below u/4 cannot change the sum.
    if (x > -logmath::log(unit_roundoff<T>()) + 2) return x;
    return x + logmath::log1p(-logmath::exp(-x));
  }
  return logmath::log(logmath::expm1(x));
}

/// log(½·erfc(x)) = log P(Z > √2·x) for a standard normal Z, for every real x.
/// erfc underflows near x ≈ 26.5 in double, so beyond x = 25 the asymptotic
/// expansion (Abramowitz & Stegun 7.1.23)
///   erfc(x) = e^{−x²}/(x√π) · Σ_k (−1)^k (2k−1)!!/(2x²)^k
/// is used; its terms alternate and decrease while k < x², so the error is
/// below the first omitted term (< u after a few terms at x ≥ 25).
template <class T>
T log_half_erfc(T x) {
  if (x < T(-1)) return logmath::log1p(T(-0.5) * logmath::erfc(-x));
  if (x < T(25)) return logmath::log(T(0.5) * logmath::erfc(x));
  const T inv2x2 = 1 / (2 * x * x);
  T term = 1, sum = 1;
  const T eps = unit_roundoff<T>() / 4;
  for (int k = 1; k < 400; ++k) {
    term *= -T(2 * k - 1) * inv2x2;
    sum += term;
    if ((term < 0 ? -term : term) < eps) break;
  }
  // log √π = 0.57236494292470008707...
  const T log_sqrt_pi = T(0.572364942924700087071713675676529355824L);
  return -x * x - logmath::log(x) - log_sqrt_pi + logmath::log(sum) - logmath::log(T(2));
}

/// log |C(α, k)| of the generalised binomial coefficient
/// C(α, k) = α(α−1)…(α−k+1)/k! for real α and integer k ≥ 0, via log-gamma:
/// |C(α, k)| = Γ(α+1) / (Γ(k+1)·|Γ(α−k+1)|). −∞ when C(α, k) = 0 (integer α < k).
template <class T>
T log_abs_binomial(T alpha, long long k) {
  using std::floor;
  const T top = alpha - T(k) + 1;
  if (top <= 0 && floor(top) == top) return -infinity<T>();
  return logmath::lgamma(alpha + 1) - logmath::lgamma(T(k + 1)) - logmath::lgamma(top);
}

/// Sign of C(α, k) for α > 0: the factors (α − i), i < k, are negative once i > α.
template <class T>
int binomial_sign(T alpha, long long k) {
  using std::floor;
  const T first_negative = floor(alpha) + 1;  // smallest integer i with α − i < 0
  const T negatives = T(k) - first_negative;  // factors i = first_negative … k−1
  if (negatives <= 0) return 1;
  return static_cast<long long>(negatives) % 2 == 0 ? 1 : -1;
}

}  // namespace dpb::logmath
