// zCDP budgets in and out, docs/zcdp.md. The papers:
//  - Bun & Steinke 2016, "Concentrated Differential Privacy: Simplifications,
//    Extensions, and Lower Bounds" (TCC 2016): Def. 1.1 (ρ-zCDP: D_α ≤ ρα for
//    every α > 1), Prop. 1.3 (ρ-zCDP ⇒ (ρ + 2√(ρ log(1/δ)), δ)-DP), Prop. 1.4
//    (ε-DP ⇒ ε²/2-zCDP), Prop. 1.6 (the Gaussian mechanism is Δ²/(2σ²)-zCDP),
//    Lemma 1.7 (composition adds ρ).
//  - Canonne, Kamath & Steinke 2020, "The Discrete Gaussian for Differential
//    Privacy" (NeurIPS 2020), Prop. 12: ρ-zCDP ⇒ (ε, δ)-DP with
//    δ = inf_{α>1} exp((α−1)(αρ − ε))/(α − 1) · (1 − 1/α)^α, the conversion of
//    Balle et al. 2020, Thm 21 (docs/rdp.md#conversion) on the curve ρα.
#include "accounting/rdp/zcdp.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <utility>

#include "accounting/errors.hpp"
#include "accounting/numerics/double_limits.hpp"
#include "accounting/numerics/outward.hpp"
#include "accounting/rdp/rdp.hpp"

namespace dpb {
namespace {

// The orders searched, as t = log(α − 1): from α − 1 = e^-30 (≈ 10⁻¹³: ρα is
// ρ to 13 digits there, where the KL shortcut and huge ρ want the orders) to
// e^40 (≈ 2·10¹⁷: the best order is near 1 + √(log(1/δ)/ρ), which reaches
// 10¹⁷ only for ρ below 10⁻³² at δ = 10⁻³⁰⁰). A coarse grid finds the basin, a
// golden-section search refines it; any order gives a valid bound, so the
// search only decides how tight the printed value is, never whether it holds
// (docs/zcdp.md#conversion).
constexpr double kZcdpLogOrderLow = -30;
constexpr double kZcdpLogOrderHigh = 40;
/// Grid step in t: the conversion changes by far less than 1% across it near
/// the optimum, which the golden search then resolves.
constexpr double kZcdpGridStep = 0.25;
/// Golden-section steps inside one grid cell on each side: 0.618^80 · 0.5 ≈
/// 10⁻¹⁷, below the round-off of t itself.
constexpr int kZcdpGoldenSteps = 80;
/// Doublings of the upper bracket of zcdp_rho_for before giving up: from
/// the smallest normal double, 2100 doublings cross a double's whole range.
constexpr int kZcdpMaxDoublings = 2200;
/// Bisection steps of zcdp_rho_for: enough to reach kZcdpRhoTolerance from any
/// bracket (or 0 from the smallest double).
constexpr int kZcdpMaxBisections = 2200;

/// The order at t = log(α − 1).
double zcdp_order_at(double t) { return 1 + std::exp(t); }

struct ZcdpBest {
  double value = kInf;
  double t = 0;
};

/// The smallest value of f(t) found: the grid, then a golden-section search
/// in the cells either side of the grid's best. f is evaluated soundly at
/// each point, so the minimum found is sound whatever the shape of f.
template <typename F>
ZcdpBest zcdp_minimise_over_orders(const F& f) {
  ZcdpBest best;
  auto consider = [&](double t) {
    const double v = f(t);
    if (v < best.value) best = {v, t};
    return v;
  };
  for (double t = kZcdpLogOrderLow; t <= kZcdpLogOrderHigh; t += kZcdpGridStep) consider(t);
  if (!(best.value < kInf)) return best;
  const double invphi = (std::sqrt(5.0) - 1) / 2;
  double a = best.t - kZcdpGridStep, b = best.t + kZcdpGridStep;
  double c = b - invphi * (b - a), d = a + invphi * (b - a);
  double fc = consider(c), fd = consider(d);
  for (int i = 0; i < kZcdpGoldenSteps; ++i) {
    if (fc < fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - invphi * (b - a);
      fc = consider(c);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + invphi * (b - a);
      fd = consider(d);
    }
  }
  return best;
}

void check_zcdp_rho(double rho) {
  if (!(rho >= 0) || std::isinf(rho)) throw InvalidParameter("rho", "must be a finite number >= 0");
}

void check_zcdp_releases(std::int64_t releases) {
  if (releases < 1) throw InvalidParameter("releases", "must be an integer >= 1");
}

/// Bun & Steinke 2016, Prop. 1.3: ε = ρ + 2√(ρ log(1/δ)), each step rounded up.
double zcdp_simple_epsilon(double rho, double delta) {
  const double log_inv_delta = outward::up(-std::log(delta), 2);  // log within 1 ulp
  const double root = outward::up(std::sqrt(outward::product_up(rho, log_inv_delta)), 1);
  return outward::sum_up(rho, 2 * root);
}

/// Prop. 1.3 inverted: δ = exp(−(ε − ρ)²/(4ρ)) for ε > ρ, else 1 (the
/// theorem says nothing below ε = ρ). Rounded up.
double zcdp_simple_delta(double rho, double epsilon) {
  if (!(epsilon > rho)) return 1.0;
  const double gap = outward::difference_down(epsilon, rho);
  const double exponent = outward::quotient_down(outward::product_down(gap, gap), 4 * rho);
  return std::min(1.0, outward::up(std::exp(-exponent), 2));  // exp within 1 ulp
}

}  // namespace

double zcdp_compose(double rho, std::int64_t releases) {
  check_zcdp_rho(rho);
  check_zcdp_releases(releases);
  return outward::product_up(static_cast<double>(releases), rho);
}

double zcdp_gaussian_rho(double noise_sd, double sensitivity, std::int64_t releases) {
  if (!(noise_sd > 0) || std::isinf(noise_sd))
    throw InvalidParameter("noise_sd", "must be a finite number > 0");
  if (!(sensitivity > 0) || std::isinf(sensitivity))
    throw InvalidParameter("sensitivity", "must be a finite number > 0");
  // Prop. 1.6: Δ²/(2σ²), from the ratio Δ/σ rounded up, squared up, halved.
  const double ratio = outward::quotient_up(sensitivity, noise_sd);
  return zcdp_compose(outward::product_up(0.5, outward::product_up(ratio, ratio)), releases);
}

double zcdp_pure_dp_rho(double epsilon, std::int64_t releases) {
  if (!(epsilon >= 0) || std::isinf(epsilon))
    throw InvalidParameter("epsilon", "must be a finite number >= 0");
  // Prop. 1.4: ε²/2.
  return zcdp_compose(outward::product_up(0.5, outward::product_up(epsilon, epsilon)), releases);
}

ZcdpEpsilon zcdp_epsilon(double rho, double delta, ZcdpConversion conversion) {
  check_zcdp_rho(rho);
  if (!(delta > 0 && delta < 1)) throw InvalidParameter("delta", "must be in (0, 1)");
  if (rho == 0) return {0.0, 0.0, false};  // the two laws are equal
  if (conversion == ZcdpConversion::simple) return {zcdp_simple_epsilon(rho, delta), 0.0, false};
  bool shortcut = false;
  const ZcdpBest best = zcdp_minimise_over_orders([&](double t) {
    const double alpha = zcdp_order_at(t);
    const std::array<double, 1> orders{alpha}, curve{outward::product_up(rho, alpha)};
    const RdpEpsilon e = epsilon_from_rdp(orders, curve, delta, RdpConversion::improved);
    if (e.kl_shortcut) shortcut = true;
    return e.kl_shortcut ? -1.0 : e.epsilon;  // the shortcut's 0 wins every other order
  });
  if (shortcut) return {0.0, zcdp_order_at(best.t), true};
  return {best.value, zcdp_order_at(best.t), false};
}

ZcdpDelta zcdp_delta(double rho, double epsilon, ZcdpConversion conversion) {
  check_zcdp_rho(rho);
  if (!(epsilon >= 0) || std::isinf(epsilon))
    throw InvalidParameter("epsilon", "must be a finite number >= 0");
  if (rho == 0) return {0.0, 0.0};
  if (conversion == ZcdpConversion::simple) return {zcdp_simple_delta(rho, epsilon), 0.0};
  const ZcdpBest best = zcdp_minimise_over_orders([&](double t) {
    const double alpha = zcdp_order_at(t);
    const std::array<double, 1> orders{alpha}, curve{outward::product_up(rho, alpha)};
    return delta_from_rdp(orders, curve, epsilon, RdpConversion::improved).delta;
  });
  // δ below the smallest double underflows to 0 in delta_from_rdp; ρ > 0, so
  // the true δ is positive: the smallest double is an upper bound on it.
  const double delta = best.value > 0 ? best.value : std::numeric_limits<double>::denorm_min();
  return {delta, zcdp_order_at(best.t)};
}

double zcdp_rho_for(double epsilon, double delta, ZcdpConversion conversion) {
  if (!(epsilon >= 0) || std::isinf(epsilon))
    throw InvalidParameter("epsilon", "must be a finite number >= 0");
  if (!(delta > 0 && delta < 1)) throw InvalidParameter("delta", "must be in (0, 1)");
  const auto meets = [&](double rho) {
    return zcdp_epsilon(rho, delta, conversion).epsilon <= epsilon;
  };
  // lo always meets the target (ρ = 0 gives ε = 0), hi never does.
  double lo = 0, hi = std::max({epsilon, delta * delta, std::numeric_limits<double>::min()});
  for (int i = 0; meets(hi); ++i) {
    if (i == kZcdpMaxDoublings || std::isinf(2 * hi))
      throw NoSolution("no rho is too large for epsilon " + std::to_string(epsilon));
    lo = hi;
    hi *= 2;
  }
  for (int i = 0; i < kZcdpMaxBisections && hi - lo > kZcdpRhoTolerance * hi; ++i) {
    const double mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi) break;
    (meets(mid) ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace dpb
