#pragma once
// Standard normal distribution and log-space helpers shared by the Gaussian,
// GDP and composition numerics. All functions are accurate in relative terms
// far into the tails (down to Φ(x) ≈ 1e-300 and beyond in log space).
#include <cmath>
#include <limits>

namespace dpb::detail {

/// Φ(x), the standard normal CDF, as ½·erfc(−x/√2) (relative accuracy in the
/// lower tail).
double norm_cdf(double x);

/// log Φ(x). Uses log(½·erfc(−x/√2)) while erfc does not underflow and the
/// asymptotic (Mills ratio) series
///   log Φ(x) = −x²/2 − log(−x) − ½ log(2π) + log(1 − 1/x² + 3/x⁴ − 15/x⁶ + …)
/// for x < −37 (Abramowitz & Stegun 26.2.12). −inf only for x = −inf.
double log_norm_cdf(double x);

/// Φ⁻¹(p) for p ∈ [0, 1] as −√2·erfc⁻¹(2p) (accurate for small p).
double norm_quantile(double p);

/// log(1 − eˣ) for x ≤ 0 (Mächler 2012, "Accurately computing log(1 − exp(−|a|))"):
/// log(−expm1(x)) for x > −ln 2, log1p(−exp(x)) otherwise. −inf at x = 0.
inline double log1mexp(double x) {
  if (x >= 0) return -std::numeric_limits<double>::infinity();
  return x > -0.6931471805599453 ? std::log(-std::expm1(x)) : std::log1p(-std::exp(x));
}

/// log(1 + eˣ) without overflow.
inline double softplus(double x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

}  // namespace dpb::detail
