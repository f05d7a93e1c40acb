#pragma once
// The exact privacy profile of one Gaussian release, the "analytic Gaussian"
// (Balle & Wang 2018, Theorem 8; docs/mechanisms.md#gaussian-profile), and its
// trade-off curve (docs/risk.md#gdp-tpr), written here directly from the
// theorems, independently of the library's implementation, for the tests to
// compare with.
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <numbers>

namespace dpb::test {

/// Φ(x) = erfc(−x/√2)/2, the standard normal CDF: a few ulps for the moderate
/// arguments the tests use.
inline double std_normal_cdf(double x) { return 0.5 * std::erfc(-x / std::numbers::sqrt2); }

/// δ(ε) of the Gaussian mechanism with noise σ in units of the L2 sensitivity
/// (Balle & Wang 2018, Theorem 8): Φ(1/(2σ) − εσ) − e^ε Φ(−1/(2σ) − εσ).
/// Evaluated as written, its two terms cancel for small δ: compare with it only
/// while δ keeps the digits the comparison needs.
inline double analytic_gaussian_delta(double sigma, double epsilon) {
  return std_normal_cdf(1 / (2 * sigma) - epsilon * sigma) -
         std::exp(epsilon) * std_normal_cdf(-1 / (2 * sigma) - epsilon * sigma);
}

/// ε(δ) of the Gaussian mechanism of noise σ, by bisection of the analytic
/// profile (δ(ε) is decreasing).
inline double analytic_gaussian_epsilon(double sigma, double delta) {
  double lo = 0, hi = 1;
  while (analytic_gaussian_delta(sigma, hi) > delta) hi *= 2;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (analytic_gaussian_delta(sigma, mid) > delta ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

/// The largest true-positive rate at false-positive rate x of any attack on
/// μ-GDP (one Gaussian release at σ = 1/μ): Φ(Φ⁻¹(x) + μ), the trade-off
/// curve G_μ (Dong, Roth & Su 2022), from Boost's normal distribution.
inline double gaussian_tpr(double mu, double x) {
  const boost::math::normal n;
  return boost::math::cdf(n, boost::math::quantile(n, x) + mu);
}

}  // namespace dpb::test
