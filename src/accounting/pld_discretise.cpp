// Stages (1) and (2) of the PLD method (pld_internal.hpp): one release of a
// mechanism, its privacy loss through exact CDF differences, and its
// connect-the-dots discretisation (Doroshenko et al. 2022, Alg. 1 / Thm 4.3),
// with the split variance that the coupling lower bound (3) needs.
#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <numbers>

#include "accounting/errors.hpp"
#include "accounting/pld.hpp"
#include "accounting/pld_internal.hpp"

namespace dpb::pld {
namespace detail {
namespace {

/// Cap on the exponent of e^{l} in (2): e^{700} < DBL_MAX ≈ e^{709.8}, so the
/// product stays finite (b is clamped to [0, p] anyway).
constexpr double kMaxExpArgument = 700.0;

/// A probability of the form P(z' ≤ z) kept on its accurate side: `v` is the
/// CDF when !upper, the survival function when upper.
struct Prob {
  double v = 0;
  bool upper = false;
  double cdf() const { return upper ? 1 - v : v; }
  double sf() const { return upper ? v : 1 - v; }
  Prob flipped() const { return {v, !upper}; }
};

/// P(a < X ≤ b) from the CDF values at a ≤ b, without cancelling in the tails.
double difference(const Prob& a, const Prob& b) {
  double d;
  if (a.upper && b.upper)
    d = a.v - b.v;
  else if (!a.upper && !b.upper)
    d = b.v - a.v;
  else
    d = b.cdf() - a.cdf();
  return std::max(d, 0.0);
}

/// The pair of §(1) for one mechanism: μ0 = base noise, μ1 = base noise + 1.
class Model {
 public:
  explicit Model(const Mechanism& m) : m_(m) {
    if (!(m.parameter > 0) || !std::isfinite(m.parameter))
      throw InvalidParameter(m.kind == Mechanism::Kind::gaussian ? "noise_multiplier" : "scale",
                             "must be a finite positive number");
    if (!(m.sampling > 0 && m.sampling <= 1))
      throw InvalidParameter("sampling_probability", "must be in (0, 1]");
    const bool lap = m.kind == Mechanism::Kind::laplace;
    c_min_ = lap ? -1 / m.parameter : -kInf;
    c_max_ = lap ? 1 / m.parameter : kInf;
    log_q_ = std::log(m.sampling);
    l_min_ = loss_of_c(c_min_);
    l_max_ = loss_of_c(c_max_);
  }

  bool laplace() const { return m_.kind == Mechanism::Kind::laplace; }
  double l_min() const { return l_min_; }
  double l_max() const { return l_max_; }

  /// log r(z) = log dμ1/dμ0 at z.
  double c_of_z(double z) const {
    if (laplace()) return (std::abs(z) - std::abs(z - 1)) / m_.parameter;
    const double s = m_.parameter;
    return (2 * z - 1) / (2 * s * s);
  }
  /// L = log((1−q) + q e^c), stable for large |c|.
  double loss_of_c(double c) const {
    const double q = m_.sampling;
    if (q == 1) return c;
    if (c == kInf) return kInf;
    if (c > 0) return c + std::log(q + (1 - q) * std::exp(-c));
    return std::log1p(q * std::expm1(c));
  }
  double loss_of_z(double z) const { return loss_of_c(c_of_z(z)); }
  /// Inverse of loss_of_c on (l_min, l_max).
  double c_of_loss(double l) const {
    const double q = m_.sampling;
    if (q == 1) return l;
    if (l > 1) return l + std::log1p(-(1 - q) * std::exp(-l)) - log_q_;
    return std::log(std::expm1(l) + q) - log_q_;
  }
  double z_of_c(double c) const {
    if (laplace()) return std::clamp((m_.parameter * c + 1) / 2, 0.0, 1.0);
    const double s = m_.parameter;
    return s * s * c + 0.5;
  }
  /// sup{z : L(z) ≤ l}.
  double z_le(double l) const {
    if (l < l_min_) return -kInf;
    if (l >= l_max_) return kInf;
    return z_of_c(c_of_loss(l));
  }
  /// sup{z : L(z) < l}.
  double z_lt(double l) const {
    if (l <= l_min_) return -kInf;
    if (l > l_max_) return kInf;
    return z_of_c(c_of_loss(l));
  }

  double base_cdf(double z) const {
    const double s = m_.parameter;
    if (laplace()) return z < 0 ? 0.5 * std::exp(z / s) : 1 - 0.5 * std::exp(-z / s);
    return 0.5 * std::erfc(-z / (s * std::numbers::sqrt2));
  }
  double base_sf(double z) const {
    const double s = m_.parameter;
    if (laplace()) return z > 0 ? 0.5 * std::exp(-z / s) : 1 - 0.5 * std::exp(z / s);
    return 0.5 * std::erfc(z / (s * std::numbers::sqrt2));
  }
  /// z with base_sf(z) = τ (the upper τ-quantile of the base noise).
  double base_upper_quantile(double tau) const {
    const double s = m_.parameter;
    if (laplace()) return s * std::log(0.5 / tau);
    return boost::math::quantile(boost::math::complement(boost::math::normal(0.0, s), tau));
  }

  /// μ((−∞, z]) and μ0((−∞, z]), each on its accurate side (sharing the
  /// base-noise value at z).
  std::pair<Prob, Prob> mu_mu0(double z) const {
    const double q = m_.sampling;
    const bool upper = z > 0.5;  // past the midpoint of the means 0 and 1: upper tails
    const double b0 = upper ? base_sf(z) : base_cdf(z);
    const double b1 = upper ? base_sf(z - 1) : base_cdf(z - 1);
    return {{q == 1 ? b1 : (1 - q) * b0 + q * b1, upper}, {b0, upper}};
  }

  /// P(X ≤ l) and Q(X ≤ l) of the privacy loss X in direction d.
  std::pair<Prob, Prob> at(double l, Direction d) const {
    if (d == Direction::remove) return mu_mu0(z_le(l));
    // add: X = −L(z), P = μ0, Q = μ; {X ≤ l} = {L(z) ≥ −l} = {z ≥ z_lt(−l)}.
    const auto [mu, mu0] = mu_mu0(z_lt(-l));
    return {mu0.flipped(), mu.flipped()};
  }

  /// [l_lo, l_hi] holding all but ≤ τ of the P-mass at each end.
  std::pair<double, double> range(Direction d, double tau) const {
    const double zq = base_upper_quantile(tau);
    if (d == Direction::remove) {
      // μ(z > 1 + zq) ≤ τ and μ(z < −zq) ≤ τ.
      return {std::max(l_min_, loss_of_z(-zq)), std::min(l_max_, loss_of_z(1 + zq))};
    }
    // z ∼ μ0: μ0(z > zq) ≤ τ, μ0(z < −zq) ≤ τ; X = −L(z) is decreasing in z.
    return {std::max(-l_max_, -loss_of_z(zq)), std::min(-l_min_, -loss_of_z(-zq))};
  }

 private:
  Mechanism m_;
  double c_min_, c_max_, l_min_, l_max_, log_q_;
};

std::pair<std::int64_t, std::int64_t> grid_range(const Model& model, Direction d, double interval,
                                                 double tail_mass, std::size_t max_points) {
  const auto [lo, hi] = model.range(d, tail_mass);
  const double span = (hi - lo) / interval;
  if (!(span < static_cast<double>(max_points)))
    throw GridTooLarge("pld: one release needs more than the grid limit");
  // One extra point each side, so that an atom of the loss (Laplace) on a
  // boundary point lands inside a bucket, never in the dropped tail.
  const auto k_lo = static_cast<std::int64_t>(std::floor(lo / interval)) - 1;
  const auto k_hi = static_cast<std::int64_t>(std::ceil(hi / interval)) + 1;
  return {k_lo, k_hi};
}

}  // namespace

void validate(const Mechanism& m) {
  const Model check(m);
  (void)check;
}

DiscreteLoss discretise_impl(const Mechanism& m, Direction d, double interval, double tail_mass,
                             std::size_t max_points) {
  const Model model(m);
  const auto [k_lo, k_hi] = grid_range(model, d, interval, tail_mass, max_points);
  DiscreteLoss out;
  out.interval = interval;
  out.first_index = k_lo;
  const auto n = static_cast<std::size_t>(k_hi - k_lo + 1);
  out.mass.assign(n, 0.0);
  const double down = -std::expm1(-interval);  // 1 − e^{−Δ}
  auto [p_prev, q_prev] = model.at(static_cast<double>(k_lo) * interval, d);
  const Prob p_first = p_prev;
  double var = 0;
  for (std::size_t i = 0; i + 1 < n; ++i) {
    const double l = static_cast<double>(k_lo + static_cast<std::int64_t>(i)) * interval;
    const auto [p_next, q_next] = model.at(l + interval, d);
    const double p = difference(p_prev, p_next);
    if (p > 0) {
      const double qb = difference(q_prev, q_next);
      // (2): b = (p − qB·e^{l}) / (1 − e^{−Δ}), clamped to [0, p] against round-off.
      const double b = std::clamp((p - qb * std::exp(std::min(l, kMaxExpArgument))) / down, 0.0, p);
      const double a = p - b;
      out.mass[i] += a;
      out.mass[i + 1] += b;
      var += a * b / p;
    }
    p_prev = p_next;
    q_prev = q_next;
  }
  out.dropped_mass = p_first.cdf() + p_prev.sf();
  out.split_variance = var;
  return out;
}

}  // namespace detail

using detail::discretise_impl;
using detail::Model;

DiscreteLoss discretise(const Mechanism& m, Direction d, double interval, double tail_mass) {
  if (!(interval > 0)) throw InvalidParameter("pld_interval", "must be positive");
  return discretise_impl(m, d, interval, tail_mass, kDirectMaxGrid);
}

double exact_delta(const Mechanism& m, Direction d, double epsilon) {
  // δ(ε) = P(X > ε) − e^ε Q(X > ε)   (Meiser & Mohammadi 2018, Lemma 5 form)
  const Model model(m);
  const auto [p, q] = model.at(epsilon, d);
  return std::max(0.0, p.sf() - std::exp(epsilon) * q.sf());
}

}  // namespace dpb::pld
