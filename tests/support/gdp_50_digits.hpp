#pragma once
// Exact values for the outward-rounding tests, computed independently of the
// library in 50-digit binary floating point
// (boost::multiprecision::cpp_bin_float_50): the normal CDF, the μ-GDP
// profile (the analytic Gaussian with σ = 1/μ) and the root of a decreasing
// profile by bisection.
#include <boost/math/special_functions/erf.hpp>
#include <boost/multiprecision/cpp_bin_float.hpp>

namespace dpb::test {

using Mp = boost::multiprecision::cpp_bin_float_50;

/// Bisection steps for a root in 50 digits: each halves the bracket, 240
/// reach below 2^-166 of its width (the precision of cpp_bin_float_50).
inline constexpr int kBisections = 240;

/// Φ(x) = erfc(−x/√2)/2 in 50 digits.
inline Mp mp_phi(const Mp& x) {
  return boost::math::erfc(-x / boost::multiprecision::sqrt(Mp(2))) / 2;
}

/// δ(ε) of μ-GDP (Dong, Roth & Su 2022, Corollary 2.13), in 50 digits.
inline Mp mp_gdp_delta(const Mp& mu, const Mp& eps) {
  return mp_phi(-eps / mu + mu / 2) - boost::multiprecision::exp(eps) * mp_phi(-eps / mu - mu / 2);
}

/// The smallest ε with δ(ε) ≤ δ for a decreasing profile, by bisection on
/// [0, hi] (hi doubled until it brackets the root).
template <typename Profile>
Mp mp_root(Profile delta_of, const Mp& delta, Mp hi) {
  Mp lo = 0;
  while (delta_of(hi) > delta) hi *= 2;
  for (int i = 0; i < kBisections; ++i) {
    const Mp mid = (lo + hi) / 2;
    (delta_of(mid) > delta ? lo : hi) = mid;
  }
  return hi;
}

}  // namespace dpb::test
