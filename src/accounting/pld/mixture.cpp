// Stages (1) and (2) of the PLD method (internal.hpp) for pairs of
// Gaussian mixtures with one common standard deviation s:
//   P = Σ_i p_i N(a_i, s²),  Q = Σ_j r_j N(b_j, s²),
// whose privacy loss (remove direction, z ∼ P)
//   L(z) = log Σ_i p_i e^{(2 a_i z − a_i²)/(2s²)} − log Σ_j r_j e^{(2 b_j z − b_j²)/(2s²)}
// is nondecreasing in z for the two pairs built here, so the CDF-based
// connect-the-dots of internal.hpp applies with L inverted numerically:
//  - gaussian_replace: P = (1−q)N(0,σ²) + qN(1,σ²), Q = (1−q)N(0,σ²) + qN(−1,σ²),
//    the REPLACE adjacency of a Poisson-subsampled Gaussian (Zhu, Dong &
//    Wang 2022, "Optimal accounting of differential privacy via
//    characteristic function", §5 and Prop. 30; dp_accounting's
//    supplementary note "Privacy loss distributions", §2.2). Its L' =
//    (E[a | z] − E[b | z])/s² > 0, and z ↦ −z swaps P and Q (symmetric).
//  - gaussian_mixture: P = Σ_i p_i N(c_i, s²), c_i ≥ 0, Q = N(0, s²)
//    (Choquette-Choo, Ganesh, Steinke & Thakurta 2023, arXiv 2310.15526,
//    §3): L' = E[c | z]/s² ≥ 0.
// The add direction has loss −L(z), z ∼ Q (docs/pld.md#directions).
#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include "accounting/errors.hpp"
#include "accounting/pld/internal.hpp"
#include "accounting/pld/pld.hpp"

namespace dpb::pld::detail {
namespace {

/// |Σ p_i − 1| allowed for the mixture weights (as events.hpp allows).
constexpr double kWeightSumTolerance = 1e-9;
/// The safeguarded solver: at most this many Newton/bisection steps (each at
/// least halves the bracket or is a Newton step inside it, so 200 reach
/// double resolution from the brackets that the steps find). Its outward
/// doublings while the bracket is open need no count: from the noise scale
/// they pass the largest double within ~1030 steps, and a step that is not
/// finite ends the search.
constexpr int kMaxSolverSteps = 200;
/// "No Newton step": the slope is not positive.
constexpr double kNoStep = std::numeric_limits<double>::quiet_NaN();
/// Newton has converged when its step is below this many units of z's
/// precision: L is then within a few ulps of l, far below any Δ.
constexpr double kNewtonStopUlps = 4;

/// One Gaussian of a mixture: its mean and the log of its weight.
struct Part {
  double mean, log_weight, weight;  ///< weight = e^{log_weight}
};

Part part(double mean, double log_weight) { return {mean, log_weight, std::exp(log_weight)}; }

class MixtureModel {
 public:
  explicit MixtureModel(const Mechanism& m) : s_(m.parameter) {
    if (m.kind == Mechanism::Kind::gaussian_replace) {
      const double q = m.sampling;
      if (q < 1) {
        p_.push_back(part(0.0, std::log1p(-q)));
        q_.push_back(part(0.0, std::log1p(-q)));
      }
      p_.push_back(part(1.0, std::log(q)));
      q_.push_back(part(-1.0, std::log(q)));
    } else {
      for (std::size_t i = 0; i < m.shifts.size(); ++i)
        if (m.weights[i] > 0) p_.push_back(part(m.shifts[i], std::log(m.weights[i])));
      q_.push_back(part(0.0, 0.0));
    }
    l_min_ = end_loss(false);
    l_max_ = end_loss(true);
    zq_scale_ = s_;
  }

  /// L(z), by log-sum-exp on each side.
  double loss(double z) const { return side(p_, z).lse - side(q_, z).lse; }

  /// P(X ≤ l), Q(X ≤ l) in direction d.
  std::pair<Prob, Prob> at(double l, Direction d) const {
    if (d == Direction::remove) {
      const double z = z_le(l);
      return {cdf(p_, z), cdf(q_, z)};
    }
    // add: X = −L(z), z ∼ Q; {X ≤ l} = {L(z) ≥ −l} = {z ≥ z*(−l)} (L is
    // continuous and strictly increasing, so ≥ and > differ by a null set).
    const double z = z_le(-l);
    return {cdf(q_, z).flipped(), cdf(p_, z).flipped()};
  }

  /// [l_lo, l_hi] holding all but ≤ τ of the P-mass at each end: every
  /// component puts ≤ τ beyond its mean ± the τ-quantile of N(0, s²).
  std::pair<double, double> range(Direction d, double tau) const {
    const double zq =
        boost::math::quantile(boost::math::complement(boost::math::normal(0.0, s_), tau));
    const auto& parts = d == Direction::remove ? p_ : q_;
    double lo = kInf, hi = -kInf;
    for (const Part& c : parts) {
      lo = std::min(lo, c.mean - zq);
      hi = std::max(hi, c.mean + zq);
    }
    if (d == Direction::remove) return {loss(lo), loss(hi)};
    return {-loss(hi), -loss(lo)};
  }

 private:
  double exponent(const Part& c, double z) const {
    return c.log_weight + (2 * c.mean * z - c.mean * c.mean) / (2 * s_ * s_);
  }
  /// One side of the loss at z: log Σ e^{exponent} (log-sum-exp) and the
  /// posterior mean E[mean | z], which share their exponentials.
  struct Side {
    double lse, mean;
  };
  Side side(const std::vector<Part>& parts, double z) const {
    double top = -kInf;
    for (const Part& c : parts) top = std::max(top, exponent(c, z));
    double sum = 0, weighted = 0;
    for (const Part& c : parts) {
      const double e = std::exp(exponent(c, z) - top);
      sum += e;
      weighted += c.mean * e;
    }
    return {top + std::log(sum), weighted / sum};
  }
  /// L(z) − l and L'(z) = (E[a | z] − E[b | z]) / s² (the posterior means of
  /// the two sides), from one pass over the parts.
  std::pair<double, double> residual_and_slope(double z, double l) const {
    const Side p = side(p_, z), q = side(q_, z);
    return {p.lse - q.lse - l, (p.mean - q.mean) / (s_ * s_)};
  }
  /// lim L(z) as z → +∞ (top) or −∞: finite when the extreme means agree.
  double end_loss(bool top) const {
    auto extreme = [&](const std::vector<Part>& parts) {
      double e = top ? -kInf : kInf;
      for (const Part& c : parts) e = top ? std::max(e, c.mean) : std::min(e, c.mean);
      return e;
    };
    const double ep = extreme(p_), eq = extreme(q_);
    if (ep != eq) return top ? kInf : -kInf;  // monotone: P's extreme lies outside Q's
    auto at_extreme = [&](const std::vector<Part>& parts, double e) {
      std::vector<Part> kept;
      for (const Part& c : parts)
        if (c.mean == e) kept.push_back(c);
      return side(kept, 0.0).lse;
    };
    return at_extreme(p_, ep) - at_extreme(q_, eq);
  }
  /// sup{z : L(z) ≤ l}: ±∞ outside (l_min, l_max), else the root of L(z) = l
  /// by a safeguarded Newton iteration: a bracket [lo, hi] is kept, a step
  /// that leaves it bisects instead, and while one end is still open a step
  /// that is not a finite Newton step towards the root doubles instead. The
  /// grid is walked in order, so the start is the previous root moved along
  /// its tangent: one or two Newton steps then reach the root.
  double z_le(double l) const {
    if (!(l > l_min_)) return -kInf;
    if (l >= l_max_) return kInf;
    double z = std::isfinite(hint_z_) ? hint_z_ : 0.0;
    std::pair<double, double> start{kNoStep, kNoStep};
    if (std::isfinite(hint_z_) && hint_slope_ > 0) {
      const double along = hint_z_ + (l - hint_l_) / hint_slope_;
      if (std::isfinite(along)) start = residual_and_slope(along, l);
      if (std::isfinite(start.first)) z = along;
    }
    if (!std::isfinite(start.first)) start = residual_and_slope(z, l);
    auto [f, g] = start;
    double lo = -kInf, hi = kInf;
    (f <= 0 ? lo : hi) = z;
    double open_step = zq_scale_;  // the doubling step while the bracket is open
    for (int steps = 0; steps < kMaxSolverSteps;) {
      if (f == 0) break;  // z is the root
      double next = g > 0 ? z - f / g : kNoStep;
      // Converged: the Newton step is within a few units of z's precision.
      if (std::abs(next - z) <= kNewtonStopUlps * std::numeric_limits<double>::epsilon() *
                                    std::max(std::abs(z), zq_scale_)) {
        z = next;
        break;
      }
      if (std::isfinite(lo) && std::isfinite(hi)) {
        if (!(next > lo && next < hi)) next = lo + (hi - lo) / 2;
        if (next == lo || next == hi) break;  // the bracket is at double resolution
        ++steps;
      } else if (next > lo && next < hi) {
        ++steps;
      } else {
        // Open on one side and no usable Newton step: step outwards, doubling.
        next = std::isfinite(lo) ? lo + open_step : hi - open_step;
        open_step *= 2;
        if (!std::isfinite(next))
          throw InvalidParameter("pld", "the mixture's privacy loss could not be inverted");
      }
      z = next;
      std::tie(f, g) = residual_and_slope(z, l);
      (f <= 0 ? lo : hi) = z;
    }
    hint_z_ = z;
    hint_l_ = l;
    hint_slope_ = g;
    return z;
  }
  /// Σ w N(mean, s²)((−∞, z]) on its accurate side (the smaller of CDF and
  /// SF): each part's erfc(|t|) is its small tail, 2 − erfc(|t|) the other.
  Prob cdf(const std::vector<Part>& parts, double z) const {
    if (z == -kInf) return {0.0, false};
    if (z == kInf) return {0.0, true};
    double lower = 0, upper = 0;
    for (const Part& c : parts) {
      const double t = (z - c.mean) / (s_ * std::numbers::sqrt2);
      const double near = std::erfc(std::abs(t)), far = 2 - near;
      lower += c.weight * 0.5 * (t >= 0 ? far : near);
      upper += c.weight * 0.5 * (t >= 0 ? near : far);
    }
    return upper < lower ? Prob{upper, true} : Prob{lower, false};
  }

  double s_;
  std::vector<Part> p_, q_;
  double l_min_ = -kInf, l_max_ = kInf, zq_scale_ = 1;
  /// The previous root z*(l) and L'(z*) there: the next start (z_le).
  mutable double hint_z_ = kNoStep, hint_l_ = 0, hint_slope_ = 0;
};

}  // namespace

void validate_mixture(const Mechanism& m) {
  if (!(m.parameter > 0) || !std::isfinite(m.parameter))
    throw InvalidParameter("standard_deviation", "must be a finite positive number");
  if (m.kind == Mechanism::Kind::gaussian_replace) {
    if (!(m.sampling > 0 && m.sampling <= 1))
      throw InvalidParameter("sampling_probability", "must be in (0, 1]");
    return;
  }
  if (m.shifts.empty() || m.shifts.size() != m.weights.size())
    throw InvalidParameter("sensitivities", "need one probability per sensitivity");
  double sum = 0;
  bool leaks = false;
  for (std::size_t i = 0; i < m.shifts.size(); ++i) {
    if (!(m.shifts[i] >= 0) || !std::isfinite(m.shifts[i]))
      throw InvalidParameter("sensitivities", "every sensitivity must be a finite number >= 0");
    if (!(m.weights[i] >= 0 && m.weights[i] <= 1))
      throw InvalidParameter("sampling_probs", "must be in [0, 1]");
    sum += m.weights[i];
    leaks = leaks || (m.shifts[i] > 0 && m.weights[i] > 0);
  }
  if (!(std::abs(sum - 1) <= kWeightSumTolerance))
    throw InvalidParameter("sampling_probs", "must sum to 1");
  if (!leaks)
    throw InvalidParameter("sensitivities",
                           "no positive sensitivity with positive probability: no privacy loss");
}

DiscreteLoss discretise_mixture(const Mechanism& m, Direction d, double interval, double tail_mass,
                                std::size_t max_points, Coarsening coarsening) {
  validate_mixture(m);
  return discretise_cdf(MixtureModel(m), d, interval, tail_mass, max_points, coarsening);
}

std::pair<double, double> range_mixture(const Mechanism& m, Direction d, double tau) {
  validate_mixture(m);
  return MixtureModel(m).range(d, tau);
}

double exact_delta_mixture(const Mechanism& m, Direction d, double epsilon) {
  validate_mixture(m);
  // δ(ε) = P(X > ε) − e^ε Q(X > ε)   (Meiser & Mohammadi 2018)
  const auto [p, q] = MixtureModel(m).at(epsilon, d);
  return std::max(0.0, p.sf() - std::exp(epsilon) * q.sf());
}

}  // namespace dpb::pld::detail
