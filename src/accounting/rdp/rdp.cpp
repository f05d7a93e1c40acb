// Rényi DP of the mechanisms of rdp.hpp and the conversion of RDP curves to
// (ε, δ): the Poisson-subsampled Gaussian's ρ(α) from log A_α
// (docs/rdp.md#subsampled-gaussian; log A_α itself in rdp_log_a_integer.cpp
// and rdp_log_a_fractional.cpp), the Gaussian, Laplace (docs/rdp.md#laplace),
// the default orders and docs/rdp.md#conversion.
//
// References
//  [M17]   I. Mironov, "Rényi Differential Privacy", CSF 2017.
//  [BBGHS20] B. Balle, G. Barthe, M. Gaboardi, J. Hsu, T. Sato, "Hypothesis
//          Testing Interpretations and Renyi Differential Privacy", AISTATS 2020.
#include "accounting/rdp/rdp.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "accounting/errors.hpp"
#include "accounting/numerics/double_limits.hpp"
#include "accounting/rdp/rdp_log_a.hpp"

namespace dpb {
namespace {

/// log A_α at or beyond this is reported as +∞: arithmetic on it would overflow.
constexpr double kMaxLogA = 1e300;

// Laplace (rdp_laplace).
/// Below (2α−1)/b = 1 the inner sum is a power series (expm1 would cancel).
constexpr double kLaplaceSeriesMax = 1;
/// Cap on its terms: with x + y < 1 they fall faster than 1/k!.
constexpr int kMaxLaplaceTerms = 60;
/// It stops when a term is below this share of the sum (below u/100).
constexpr double kLaplaceSeriesStop = 1e-18;
/// The result is rounded up by this relative amount (~3.6u), covering the
/// roundings of the final log and division.
constexpr double kLaplaceRoundUp = 4e-16;

// RDP → (ε, δ): kConversionRoundUp (rdp.hpp).

bool is_integer(double x) { return std::floor(x) == x; }

void check_gaussian_parameters(double q, double sigma) {
  if (!(q >= 0 && q <= 1)) throw InvalidParameter("sampling_probability", "must be in [0, 1]");
  if (!(sigma > 0)) throw InvalidParameter("noise_multiplier", "must be > 0");
}

void check_order(double alpha) {
  if (!(alpha > 1)) throw InvalidParameter("orders", "every order must be > 1");
}

/// ρ = log A/(α − 1), rounded up.
double rdp_from_log_a(double log_a, double alpha) {
  if (!(log_a > 0)) return 0.0;
  if (std::isinf(log_a)) return kInf;
  return std::nextafter(log_a / (alpha - 1), kInf);
}

}  // namespace

std::vector<double> default_rdp_orders() {
  std::vector<double> orders;
  for (int x = 1; x <= 99; ++x) orders.push_back(1 + x / 10.0);
  for (int a = 2; a <= 64; ++a) orders.push_back(a);
  for (double a : {128.0, 256.0, 512.0, 1024.0}) orders.push_back(a);
  std::sort(orders.begin(), orders.end());
  orders.erase(std::unique(orders.begin(), orders.end()), orders.end());
  return orders;
}

double log_a_poisson_gaussian(double q, double sigma, double alpha) {
  check_gaussian_parameters(q, sigma);
  check_order(alpha);
  if (q == 0 || std::isinf(sigma)) return 0.0;
  if (std::isinf(alpha)) return kInf;
  const double h = 1 / (2 * sigma * sigma);
  if (q == 1)
    return log_a_detail::round_up(alpha * (alpha - 1) * h);  // plain Gaussian, [M17] Prop. 7
  // A_α ≥ E[(q·r)^α] = q^α·e^{α(α−1)/(2σ²)}: when that overflows, so does A_α.
  const double lower = alpha * (std::log(q) + (alpha - 1) * h);
  if (!(lower < kMaxLogA)) return kInf;
  if (is_integer(alpha))
    return log_a_detail::log_a_integer_order(q, sigma, static_cast<long long>(alpha));
  return log_a_detail::log_a_fractional_order(q, sigma, alpha);
}

double rdp_poisson_gaussian(double q, double sigma, double alpha) {
  return rdp_from_log_a(log_a_poisson_gaussian(q, sigma, alpha), alpha);
}

std::vector<double> rdp_poisson_gaussian(double q, double sigma, std::span<const double> orders) {
  std::vector<double> out;
  out.reserve(orders.size());
  for (double a : orders) out.push_back(rdp_poisson_gaussian(q, sigma, a));
  return out;
}

double rdp_gaussian(double sigma, double alpha) {
  check_gaussian_parameters(1, sigma);
  check_order(alpha);
  return alpha / (2 * sigma * sigma);  // [M17] Prop. 7
}

double rdp_laplace(double scale, double alpha) {
  if (!(scale > 0)) throw InvalidParameter("scale", "must be > 0");
  check_order(alpha);
  if (std::isinf(alpha)) return 1 / scale;  // D_∞ = pure ε
  // [M17] Prop. 6, for α > 1:
  //   ρ(α) = 1/(α−1)·log( α/(2α−1)·e^{(α−1)/b} + (α−1)/(2α−1)·e^{−α/b} ).
  const double b = scale, am1 = alpha - 1;
  const double x = am1 / b, y = alpha / b;
  double log_inner;
  if (x + y < kLaplaceSeriesMax) {
    // Inner = 1 + N/(2α−1) with N = α·expm1(x) + (α−1)·expm1(−y); the first-order
    // terms cancel exactly (α·x = (α−1)·y), so N = Σ_{k≥2} (α·x^k + (α−1)(−y)^k)/k!.
    double n = 0, px = x, py = -y, fact = 1;
    for (int k = 2; k < kMaxLaplaceTerms; ++k) {
      px *= x;
      py *= -y;
      fact *= k;
      const double t = (alpha * px + am1 * py) / fact;
      n += t;
      if (std::abs(t) <= kLaplaceSeriesStop * std::abs(n)) break;
    }
    log_inner = std::log1p(n / (2 * alpha - 1));
  } else {
    // Factor out e^{(α−1)/b}: inner = e^x·(α + (α−1)e^{−(2α−1)/b})/(2α−1).
    log_inner = x + std::log(alpha + am1 * std::exp(-(x + y))) - std::log(2 * alpha - 1);
  }
  return std::max(0.0, log_inner / am1) * (1 + kLaplaceRoundUp);
}

// ---------------------------------------------------------------------------
// RDP → (ε, δ): docs/rdp.md#conversion, docs/rdp.md#kl-shortcut.
//  classic  [M17] Prop. 3:     ε = ρ(α) + log(1/δ)/(α−1),  δ = e^{(α−1)(ρ(α)−ε)}.
//  improved [BBGHS20] Thm. 21: ε = ρ(α) + log((α−1)/α) − (log δ + log α)/(α−1),
//                              log δ = (α−1)(ρ(α) − ε + log(1 − 1/α)) − log α.
//  KL shortcut (improved only): D_KL ≤ D_α = ρ(α) (Rényi divergences increase
//  with α) and Bretagnolle–Huber gives TV ≤ √(1 − e^{−KL}); δ(0) = TV, so
//  δ² ≥ 1 − e^{−ρ(α)} certifies ε = 0, and δ(ε) ≤ √(1 − e^{−ρ(α)}) for all ε.
// Each candidate is rounded up by a few ulps of its terms.
// ---------------------------------------------------------------------------
ConversionTerm rdp_conversion_term(double alpha, double log_delta, RdpConversion conversion) {
  if (conversion == RdpConversion::classic) {
    const double c = -log_delta / (alpha - 1);
    return {c, std::abs(c)};
  }
  const double c1 = std::log1p(-1 / alpha), c2 = -(log_delta + std::log(alpha)) / (alpha - 1);
  return {c1 + c2, std::abs(c1) + std::abs(c2)};
}

RdpEpsilon epsilon_from_rdp(std::span<const double> orders, std::span<const double> rdp,
                            double delta, RdpConversion conversion) {
  if (orders.size() != rdp.size() || orders.empty())
    throw InvalidParameter("orders", "orders and RDP values must have the same, non-zero length");
  if (!(delta > 0 && delta < 1)) throw InvalidParameter("delta", "must be in (0, 1)");
  const double log_delta = std::log(delta);
  if (conversion == RdpConversion::improved) {
    for (std::size_t i = 0; i < orders.size(); ++i)
      if (rdp[i] < kInf && delta * delta + std::expm1(-rdp[i]) >= 0) return {0.0, orders[i], true};
  }
  RdpEpsilon best{kInf, orders.front(), false};
  for (std::size_t i = 0; i < orders.size(); ++i) {
    const double a = orders[i], r = rdp[i];
    check_order(a);
    if (!(r >= 0)) throw InvalidParameter("rdp", "RDP values must be >= 0");
    if (std::isinf(r)) continue;
    const ConversionTerm c = rdp_conversion_term(a, log_delta, conversion);
    const double eps = r + c.value + kConversionRoundUp * (r + c.magnitude);
    if (eps < best.epsilon) best = {eps, a, false};
  }
  if (best.epsilon < 0) best.epsilon = 0;
  return best;
}

RdpDelta delta_from_rdp(std::span<const double> orders, std::span<const double> rdp, double epsilon,
                        RdpConversion conversion) {
  if (orders.size() != rdp.size() || orders.empty())
    throw InvalidParameter("orders", "orders and RDP values must have the same, non-zero length");
  if (!(epsilon >= 0)) throw InvalidParameter("epsilon", "must be >= 0");
  double best_log = kInf, best_order = orders.front();
  for (std::size_t i = 0; i < orders.size(); ++i) {
    const double a = orders[i], r = rdp[i];
    check_order(a);
    if (!(r >= 0)) throw InvalidParameter("rdp", "RDP values must be >= 0");
    if (std::isinf(r)) continue;
    double log_d, mag;
    if (conversion == RdpConversion::classic) {
      log_d = (a - 1) * (r - epsilon);
      mag = (a - 1) * (r + epsilon);
    } else {
      const double c = std::log1p(-1 / a);
      log_d = (a - 1) * (r - epsilon + c) - std::log(a);
      mag = (a - 1) * (r + epsilon - c) + std::log(a);
      // Bretagnolle–Huber: δ ≤ TV ≤ √(1 − e^{−ρ}).
      const double kl = r == 0 ? -kInf : 0.5 * std::log(-std::expm1(-r));
      if (kl < log_d) {
        log_d = kl;
        mag = std::abs(kl);
      }
    }
    log_d += kConversionRoundUp * (mag + 1);
    if (log_d < best_log) {
      best_log = log_d;
      best_order = a;
    }
  }
  return {std::min(1.0, std::exp(best_log)), best_order};
}

}  // namespace dpb
