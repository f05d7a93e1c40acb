// Rényi DP curves of the event kinds of rdp_events.hpp.
//
// References
//  [M17]    I. Mironov, "Rényi Differential Privacy", CSF 2017.
//  [KOV15]  P. Kairouz, S. Oh, P. Viswanath, "The Composition Theorem for
//           Differential Privacy", ICML 2015.
//  [BS16]   M. Bun, T. Steinke, "Concentrated Differential Privacy:
//           Simplifications, Extensions, and Lower Bounds", TCC 2016.
//  [CR21]   M. Cesar, R. Rogers, "Bounding, Concentrating, and Truncating:
//           Unifying Privacy Loss Composition for Data Analytics", ALT 2021
//           (arXiv:2004.07223).
//  [K+21]   P. Kairouz, B. McMahan, S. Song, O. Thakkar, A. Thakurta, Z. Xu,
//           "Practical and Private (Deep) Learning without Sampling or
//           Shuffling", ICML 2021 (arXiv:2103.00039).
//  [PS22]   N. Papernot, T. Steinke, "Hyperparameter Tuning with Renyi
//           Differential Privacy", ICLR 2022 (arXiv:2110.03620).
#include "accounting/rdp/rdp_events.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "accounting/errors.hpp"
#include "accounting/numerics/double_limits.hpp"
#include "accounting/numerics/log_math.hpp"
#include "accounting/numerics/multiprecision.hpp"
#include "accounting/rdp/rdp.hpp"

namespace dpb {
namespace {

namespace lm = logmath;

/// Double-precision results are rounded up by this many units of round-off
/// of the magnitude of their terms: more than the handful of roundings in
/// each formula (each log, exp, sinh, product is within a few u).
constexpr double kRoundUlps = 16;
/// Below ε(α − ½) = this, binary randomized response uses the product form
/// (no cancellation, and its sinh factors stay below e^20, far from overflow);
/// above it the log-cosh form, which then has no cancellation either.
constexpr double kSinhFormMax = 20;
/// Values computed in 50-digit arithmetic may lose up to ~15 digits to
/// cancellation in "sum − 1" near α = 1 or p = 1; what is left (≥ 35 digits)
/// is far below a double's, so rounding up to the next double plus this
/// absolute guard covers it.
constexpr double kMpAbsoluteGuard = 1e-40;
/// Above this ε the exponential mechanism's bounded-range term is not
/// evaluated: the ε-DP bound min(·, ε) = ε is used (valid at every order).
constexpr double kMaxBoundedRangeEpsilon = 1e6;
/// γ of the truncated negative binomial is found by bisection to this
/// relative width, then lowered by it (the mean is evaluated to ~1e-15, so
/// this keeps γ below the true one; a smaller γ only loosens [PS22] Thm 2).
constexpr double kGammaRelTol = 1e-12;
/// Cap on bisection steps (each halves the bracket; 2000 cover every double).
constexpr int kMaxBisection = 2000;

void check_event_order(double alpha) {
  if (!(alpha > 1) || std::isnan(alpha))
    throw InvalidParameter("orders", "every order must be > 1");
}

/// The smallest double ≥ x (an mp50 value), plus the absolute guard.
double mp_round_up(const mp50& x) {
  double d = static_cast<double>(x);
  if (std::isnan(d)) return kInf;
  if (mp50(d) < x) d = std::nextafter(d, kInf);
  return d == kInf ? kInf : d + kMpAbsoluteGuard;
}

/// d rounded up by kRoundUlps·u of `magnitude` (≥ |d|).
double round_up(double d, double magnitude) { return d + kRoundUlps * kU * magnitude; }

}  // namespace

double rdp_pure_dp(double epsilon, double alpha) {
  check_event_order(alpha);
  if (!(epsilon >= 0)) throw InvalidParameter("epsilon", "must be >= 0");
  if (epsilon == 0) return 0;
  if (std::isinf(epsilon) || std::isinf(alpha)) return epsilon;
  // [M17] Prop. 5: binary randomized response with P = (p, 1 − p), Q = (1 − p, p),
  // p = e^ε/(1 + e^ε):
  //   D_α = log(p^α (1−p)^{1−α} + (1−p)^α p^{1−α})/(α − 1)
  //       = log(cosh(ε(α − ½)) / cosh(ε/2))/(α − 1),
  // since both sums share the factor 2e^{ε/2}/(1 + e^ε). With
  // cosh x − cosh y = 2 sinh((x+y)/2) sinh((x−y)/2):
  //   D_α = log1p(2 sinh(εα/2) sinh(ε(α−1)/2) / cosh(ε/2))/(α − 1).
  const double am1 = alpha - 1;
  double d, magnitude;
  if (epsilon * (alpha - 0.5) < kSinhFormMax) {
    const double x =
        2 * std::sinh(epsilon * alpha / 2) * std::sinh(epsilon * am1 / 2) / std::cosh(epsilon / 2);
    d = std::log1p(x) / am1;
    magnitude = d;
  } else {
    // log cosh u = u + log1p(e^{−2u}) − log 2 for u ≥ 0; the linear parts give
    // (ε(α−½) − ε/2)/(α−1) = ε exactly.
    const double tail =
        (std::log1p(std::exp(-2 * epsilon * (alpha - 0.5))) - std::log1p(std::exp(-epsilon))) / am1;
    d = epsilon + tail;
    magnitude = epsilon + std::abs(tail);
  }
  return std::min(epsilon, std::max(0.0, round_up(d, magnitude)));
}

double rdp_zcdp(double xi, double rho, double alpha) {
  check_event_order(alpha);
  const double v = xi + rho * alpha;  // [BS16] Def. 1.1
  return round_up(v, v);
}

double exponential_mechanism_xi(double epsilon) {
  if (!(epsilon >= 0) || !(epsilon <= kMaxBoundedRangeEpsilon))
    throw InvalidParameter("epsilon", "must be in [0, 1e6] for the bounded-range bound");
  if (epsilon == 0) return 0;
  // [CR21] Sec. 3: an ε-bounded-range mechanism has KL divergence at most
  // t − 1 − log t, t = ε/(e^ε − 1), and is (ξ, ε²/8)-zCDP with
  // ξ = t − 1 − log t − ε²/8. In 50 digits: t − 1 and log t cancel for small ε.
  const mp50 e(epsilon);
  // log t = log ε − log(e^ε − 1) = log ε − ε − log(1 − e^{−ε}).
  const mp50 log_t = lm::log(e) - e - lm::log(-lm::expm1(-e));
  const mp50 t = lm::exp(log_t);
  const mp50 xi = (t - 1) - log_t - e * e / 8;
  return mp_round_up(xi);
}

double rdp_exponential_mechanism(double epsilon, double alpha) {
  check_event_order(alpha);
  if (!(epsilon >= 0)) throw InvalidParameter("epsilon", "must be >= 0");
  if (epsilon == 0) return 0;
  if (epsilon > kMaxBoundedRangeEpsilon) return epsilon;  // ε-DP: D_α ≤ D_∞ = ε
  const double xi = exponential_mechanism_xi(epsilon);
  const double quad = epsilon * epsilon / 8 * alpha;
  const double v = round_up(xi + quad, std::abs(xi) + quad);
  // An ε-DP mechanism also has D_α ≤ ε at every order.
  return std::min(epsilon, std::max(0.0, v));
}

double rdp_randomized_response_replace_one(double p, std::int64_t k, double alpha) {
  check_event_order(alpha);
  if (k == 1 || p == 1) return 0;  // the output does not depend on the record
  if (p == 0) return kInf;         // the bucket is released: disjoint supports
  const double kd = static_cast<double>(k);
  // P = (1 − p + p/k, p/k, ..., p/k), Q the same with buckets 1 and 2 swapped;
  // r = P_1/P_2 = 1 + k(1 − p)/p, L = log r. The mass on the other k − 2
  // buckets is equal, and P_1 + P_2 + (k − 2)p/k = 1, so
  //   Σ P^α Q^{1−α} − 1 = (p/k)(r^α + r^{1−α} − r − 1)
  //                     = (p/k)(r^{α−1} − 1)(r^α − 1) r^{1−α},
  // summed in log space (every factor positive):
  const double L = std::log1p(kd * (1 - p) / p);
  const double am1 = alpha - 1;
  const double log_x =
      std::log(p / kd) + lm::log_expm1(am1 * L) + lm::log_expm1(alpha * L) - am1 * L;
  const double d = lm::log1p_exp(log_x) / am1;
  // An absolute error of a few u in each log-space part of log_x passes to
  // log1p_exp with slope ≤ 1, then is divided by α − 1.
  const double magnitude =
      d + (std::abs(std::log(p / kd)) + 2 * am1 * L + alpha * L + std::abs(log_x)) / am1;
  return std::max(0.0, round_up(d, magnitude));
}

double rdp_randomized_response_replace_special(double p, std::int64_t k, double alpha) {
  check_event_order(alpha);
  if (k == 1 || p == 1) return 0;
  if (p == 0) return kInf;  // D_α(U‖P) is infinite: P puts no mass off the true bucket
  // P = (1 − p + p/k, p/k, ...), U uniform; kP takes a = 1 + (k−1)(1−p) (one
  // bucket) and b = p (k − 1 buckets), with E_U[kP] = 1, so
  //   Σ P^α U^{1−α} − 1 = E_U[(kP)^α] − 1 = (a(a^{α−1} − 1) + (k−1) b(b^{α−1} − 1))/k,
  //   Σ U^α P^{1−α} − 1 = E_U[(kP)^{1−α}] − 1 = (a(a^{−α} − 1) + (k−1) b(b^{−α} − 1))/k.
  // The two terms of each have opposite signs; 50 digits absorb the cancellation.
  const mp50 kk(static_cast<double>(k)), pp(p), aa(alpha);
  const mp50 a = 1 + (kk - 1) * (1 - pp);
  const mp50 la = lm::log(a), lb = lm::log(pp);
  const mp50 s1 = (a * lm::expm1((aa - 1) * la) + (kk - 1) * pp * lm::expm1((aa - 1) * lb)) / kk;
  const mp50 s2 = (a * lm::expm1(-aa * la) + (kk - 1) * pp * lm::expm1(-aa * lb)) / kk;
  const mp50 d = std::max(lm::log1p(s1), lm::log1p(s2)) / (aa - 1);
  return std::max(0.0, mp_round_up(d));
}

namespace {

/// Mean of the truncated negative binomial with parameters (γ, η), [PS22]
/// Def. 1: η(1 − γ)/(γ(1 − γ^η)); η = 1 (geometric): 1/γ; η = 0
/// (logarithmic): (1 − γ)/(γ log(1/γ)). Written as 1/(γ·A·B) with
/// A = (γ^η − 1)/(η log γ) and B = log γ/(γ − 1), each accurate near γ = 1.
double tnb_mean(double gamma, double shape) {
  if (gamma == 1) return 1;
  const double lg = std::log(gamma);
  const double b = lg / (gamma - 1);
  if (shape == 0) return 1 / (gamma * b);
  const double x = shape * lg;
  const double a = x == 0 ? 1 : std::expm1(x) / x;
  return 1 / (gamma * a * b);
}

}  // namespace

double truncated_negative_binomial_gamma(double shape, double mean) {
  if (!(shape >= 0) || !(mean >= 1) || !std::isfinite(mean) || !std::isfinite(shape))
    throw InvalidParameter("mean", "repeat_and_select needs mean >= 1 and a finite shape >= 0");
  if (mean == 1) return 1;  // K = 1 surely
  if (shape == 1) {
    double g = 1 / mean;
    if (std::fma(g, mean, -1) > 0) g = std::nextafter(g, 0.0);  // g·mean ≤ 1: g ≤ 1/mean
    return g;
  }
  // The mean falls from +inf (γ → 0) to 1 (γ = 1); mean ≤ 2(η + 1)/γ bounds γ.
  double lo = 0, hi = std::min(1.0, 2 * (shape + 1) / mean);
  for (int i = 0; i < kMaxBisection && hi > lo * (1 + kGammaRelTol); ++i) {
    const double mid = (lo + hi) / 2;
    if (tnb_mean(mid, shape) < mean)
      hi = mid;
    else
      lo = mid;
  }
  return lo * (1 - kGammaRelTol);
}

std::vector<double> rdp_repeat_and_select(std::span<const double> orders,
                                          std::span<const double> inner, double mean,
                                          double shape) {
  if (orders.size() != inner.size() || orders.empty())
    throw InvalidParameter("orders", "orders and RDP values must have the same, non-zero length");
  for (double a : orders) check_event_order(a);
  const std::size_t n = orders.size();
  std::vector<double> out(n, kInf);
  const double log_mean = std::log(mean);
  if (std::isinf(shape)) {
    // [PS22] Thm 6 (K ~ Poisson(μ)): if one run is (λ, ε)-RDP and
    // (ε̂, δ̂)-DP with ε̂ = log(1 + 1/(λ − 1)), the selection is
    // (λ, ε + μδ̂ + log μ/(λ − 1))-RDP. δ̂ from the run's own RDP curve.
    for (std::size_t i = 0; i < n; ++i) {
      const double lambda = orders[i];
      if (std::isinf(inner[i])) continue;
      const double eps_hat = std::log1p(1 / (lambda - 1));
      const double delta_hat =
          delta_from_rdp(orders, inner, eps_hat, RdpConversion::improved).delta;
      const double v = inner[i] + mean * delta_hat + log_mean / (lambda - 1);
      out[i] = round_up(v, v);
    }
  } else {
    // [PS22] Thm 2 (K truncated negative binomial, shape η, parameter γ): if
    // one run is (λ, ε)-RDP and (λ̂, ε̂)-RDP, the selection is (λ, ε')-RDP with
    //   ε' = ε + (1 + η)(1 − 1/λ̂)ε̂ + (1 + η) log(1/γ)/λ̂ + log(E[K])/(λ − 1),
    // for every λ̂ ≥ 1: the smallest over the orders is taken.
    const double gamma = truncated_negative_binomial_gamma(shape, mean);
    const double log_inv_gamma = -std::log(gamma);
    double c = kInf;
    for (std::size_t j = 0; j < n; ++j) {
      if (std::isinf(inner[j])) continue;
      const double lh = orders[j];
      c = std::min(c, (1 - 1 / lh) * inner[j] + log_inv_gamma / lh);
    }
    c *= 1 + shape;
    for (std::size_t i = 0; i < n; ++i) {
      if (std::isinf(inner[i]) || std::isinf(c)) continue;
      const double v = inner[i] + c + log_mean / (orders[i] - 1);
      out[i] = round_up(v, v);
    }
  }
  // Rényi divergences do not decrease with the order (van Erven & Harremoës
  // 2014, Thm 3), so a bound at a larger order bounds every smaller one.
  std::vector<double> lowered(out);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (orders[j] >= orders[i]) lowered[i] = std::min(lowered[i], out[j]);
  return lowered;
}

}  // namespace dpb
