#pragma once
// log A_α of the Poisson-subsampled Gaussian (rdp.hpp, docs/rdp.md#subsampled-gaussian):
// what its two methods share, the binomial sum at integer orders
// (rdp_log_a_integer.cpp, docs/rdp.md#integer-orders) and the split series
// at fractional orders (rdp_log_a_fractional.cpp, docs/rdp.md#fractional-orders),
// each redone in higher precision until certified (docs/rdp.md#accuracy-guard).
// Included only by src/accounting/rdp/rdp*.cpp; not part of the library's
// interface.
//
// References
//  [M17]   I. Mironov, "Rényi Differential Privacy", CSF 2017.
//  [MTZ19] I. Mironov, K. Talwar, L. Zhang, "Rényi Differential Privacy of the
//          Sampled Gaussian Mechanism", arXiv:1908.10530, 2019.
//
// Notation (docs/rdp.md#subsampled-gaussian): q sampling rate, σ noise multiplier, μ0 = N(0, σ²),
// r(z) = μ1(z)/μ0(z) = exp((2z − 1)/(2σ²)) the likelihood ratio and
//   A_α = E_{z∼μ0}[((1 − q) + q·r(z))^α],   ρ(α) = log(A_α)/(α − 1)
// ([MTZ19] §3, eq. (2)–(4)). Since E[r] = 1 we compute B = A_α − 1 rather than
// A_α: for small q, A_α − 1 = O(q²) and log A_α = log1p(B) keeps its relative
// accuracy where summing to A_α directly would lose it all.
#include <cmath>

#include "accounting/numerics/double_limits.hpp"
#include "accounting/numerics/log_math.hpp"

namespace dpb::log_a_detail {

namespace lm = logmath;

/// Accept an evaluation when its estimated relative error in log A is below this.
inline constexpr double kTargetRelErr = 4e-12;

// Error bookkeeping, in units of the unit round-off u of the precision used.
/// Fixed roundings of one series term (its logs, exps and products).
inline constexpr double kTermUlps = 16;
/// Sound bounds (Jensen, convexity) are rounded up by this relative amount
/// (~9u), more than the few roundings in them.
inline constexpr double kBoundRoundUp = 1e-15;

/// log A_α with the estimated relative error of that logarithm.
/// `value` has already been rounded up by the error estimate.
struct LogAEstimate {
  double value;
  double rel_err;
};

template <class T>
T abs_t(T x) {
  return x < 0 ? -x : x;
}

/// Rounds a T up to a double that is ≥ it.
template <class T>
double round_up(T x) {
  const double d = static_cast<double>(x);
  if (std::isnan(d)) return kInf;
  if (T(d) < x) return std::nextafter(d, kInf);
  return d;
}

/// log A_α at an integer order α ≥ 2 (0 < q < 1): the binomial sum in double,
/// then long double, then 50-digit arithmetic until certified; the Jensen
/// bound beyond the largest order summed (rdp_log_a_integer.cpp).
double log_a_integer_order(double q, double sigma, long long alpha);

/// log A_α at a fractional order α > 1 (0 < q < 1): the split series in
/// rising precision, else the convexity bound between the neighbouring
/// integer orders (rdp_log_a_fractional.cpp).
double log_a_fractional_order(double q, double sigma, double alpha);

}  // namespace dpb::log_a_detail
