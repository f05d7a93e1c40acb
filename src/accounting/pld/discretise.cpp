// Stages (1) and (2) of the PLD method (internal.hpp): one release of a
// mechanism, its privacy loss through exact CDF differences, and its
// connect-the-dots discretisation (Doroshenko et al. 2022, Alg. 1 / Thm 4.3),
// with the split variance that the coupling lower bound (3) needs.
#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <numbers>

#include "accounting/errors.hpp"
#include "accounting/pld/internal.hpp"
#include "accounting/pld/pld.hpp"

namespace dpb::pld {
namespace detail {
namespace {

/// |Σ weights − 1| allowed for a blend (weights computed in floating point).
constexpr double kBlendWeightTolerance = 1e-9;

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

}  // namespace

std::pair<std::int64_t, std::int64_t> grid_span(double lo, double hi, double interval,
                                                std::size_t max_points) {
  const double span = (hi - lo) / interval;
  if (!(span < static_cast<double>(max_points)))
    throw GridTooLarge("pld: one release needs more than the grid limit");
  const auto k_lo = static_cast<std::int64_t>(std::floor(lo / interval)) - 1;
  const auto k_hi = static_cast<std::int64_t>(std::ceil(hi / interval)) + 1;
  return {k_lo, k_hi};
}

void validate(const Mechanism& m) {
  switch (m.kind) {
    case Mechanism::Kind::gaussian:
    case Mechanism::Kind::laplace: {
      const Model check(m);
      (void)check;
      return;
    }
    case Mechanism::Kind::gaussian_replace:
    case Mechanism::Kind::gaussian_mixture:
      return validate_mixture(m);
    case Mechanism::Kind::atoms:
    case Mechanism::Kind::discrete_laplace:
    case Mechanism::Kind::discrete_gaussian:
      return validate_atoms(m);
    case Mechanism::Kind::blend: {
      if (m.parts.empty() || m.parts.size() != m.weights.size())
        throw InvalidParameter("parts", "a blend needs one weight per part");
      double sum = 0;
      for (std::size_t i = 0; i < m.parts.size(); ++i) {
        if (m.parts[i].kind == Mechanism::Kind::blend)
          throw InvalidParameter("parts", "a blend of blends is not supported");
        if (!(m.weights[i] >= 0 && m.weights[i] <= 1))
          throw InvalidParameter("weights", "must be in [0, 1]");
        sum += m.weights[i];
        validate(m.parts[i]);
      }
      if (!(std::abs(sum - 1) <= kBlendWeightTolerance))
        throw InvalidParameter("weights", "must sum to 1");
      return;
    }
    case Mechanism::Kind::symmetrised:
      if (m.parts.size() != 1 || m.parts[0].kind == Mechanism::Kind::symmetrised)
        throw InvalidParameter("parts",
                               "a symmetrised pair needs one pair, itself not symmetrised");
      return validate(m.parts[0]);
  }
}

namespace {

/// The symmetrised pair of docs/pld.md#symmetrised-pair on the grid: parts[0]'s remove-direction
/// discretisation keeps its losses kΔ > 0 and its mass at +∞; each positive point's Q-mass
/// e^{−kΔ}·m_k is mirrored to −kΔ (the pair is symmetric: its loss at −l has P-mass
/// e^{−l} times that at l), and what is left of the unit mass sits at 0. The profile at ε ≥ 0
/// is the discrete part's, which dominates the true part's (stage (2)); at ε < 0 it is
/// 1 − e^ε + e^ε·δ(−ε), nondecreasing in δ(−ε); so the result dominates the true symmetrised
/// pair, whose connect-the-dots discretisation it is (the mirror of a bucket's split keeps
/// both of the mirrored bucket's masses).
DiscreteLoss discretise_symmetrised(const Mechanism& m, double interval, double tail_mass,
                                    std::size_t max_points) {
  const DiscreteLoss base =
      discretise_impl(m.parts[0], Direction::remove, interval, tail_mass, max_points);
  const std::int64_t last = base.first_index + static_cast<std::int64_t>(base.mass.size()) - 1;
  const std::int64_t top = std::max<std::int64_t>(last, 0);
  DiscreteLoss out;
  out.interval = interval;
  out.first_index = -top;
  out.mass.assign(static_cast<std::size_t>(2 * top + 1), 0.0);
  // mass at 0 = P(L ≤ 0) − Q(L > 0) of the discrete part: two sums of non-negative terms,
  // so the difference is accurate (its true value is ≥ 0 when the part's profile,
  // symmetrised, is convex at ε = 0: docs/pld.md#symmetrised-pair).
  double at_most_zero = 0, mirrored = 0;
  for (std::size_t i = 0; i < base.mass.size(); ++i) {
    const std::int64_t k = base.first_index + static_cast<std::int64_t>(i);
    const double p = base.mass[i];
    if (k <= 0) {
      at_most_zero += p;
      continue;
    }
    const double l = static_cast<double>(k) * interval;
    const double q = p * std::exp(-l);
    out.mass[static_cast<std::size_t>(top + k)] += p;
    out.mass[static_cast<std::size_t>(top - k)] += q;
    mirrored += q;
  }
  const double zero = at_most_zero - mirrored;
  if (zero < 0)
    throw InvalidParameter("noise_multiplier",
                           "pld: the symmetrised pair of this release is not a pair of laws on "
                           "the grid (its mass at loss 0 would be negative): use rdp");
  out.mass[static_cast<std::size_t>(top)] += zero;
  out.dropped_mass = base.dropped_mass;
  out.infinite_mass = base.infinite_mass;
  // Stage (3): the positive buckets split as in the part (their share of its split variance
  // is at most all of it); each mirrored bucket has w̄(1 − w̄) ≤ 1/4 and their P-masses add up
  // to the part's Q(L > 0) ≤ the mirrored mass plus the part's mass at 0.
  const double base_zero = base.first_index <= 0 && last >= 0
                               ? base.mass[static_cast<std::size_t>(-base.first_index)]
                               : 0.0;
  out.split_variance = base.split_variance + (mirrored + base_zero) / 4;
  return out;
}

}  // namespace

std::optional<std::pair<double, double>> coarse_range(const Mechanism& m, Direction d, double tau) {
  switch (m.kind) {
    case Mechanism::Kind::gaussian:
    case Mechanism::Kind::laplace:
      return Model(m).range(d, tau);
    case Mechanism::Kind::gaussian_replace:
    case Mechanism::Kind::gaussian_mixture:
      return range_mixture(m, d, tau);
    case Mechanism::Kind::atoms:
    case Mechanism::Kind::discrete_laplace:
    case Mechanism::Kind::discrete_gaussian:
    case Mechanism::Kind::symmetrised:
    case Mechanism::Kind::blend:
      return std::nullopt;
  }
  return std::nullopt;
}

DiscreteLoss discretise_impl(const Mechanism& m, Direction d, double interval, double tail_mass,
                             std::size_t max_points, Coarsening coarsening) {
  // Coarse tails where the loss has a quantile function (the CDF models);
  // the other kinds keep one fine grid (their parts and atoms are summed or
  // mirrored point by point).
  switch (m.kind) {
    case Mechanism::Kind::gaussian:
    case Mechanism::Kind::laplace:
      return discretise_cdf(Model(m), d, interval, tail_mass, max_points, coarsening);
    case Mechanism::Kind::gaussian_replace:
    case Mechanism::Kind::gaussian_mixture:
      return discretise_mixture(m, d, interval, tail_mass, max_points, coarsening);
    case Mechanism::Kind::atoms:
    case Mechanism::Kind::discrete_laplace:
    case Mechanism::Kind::discrete_gaussian:
      return discretise_atoms(m, d, interval, tail_mass, max_points);
    case Mechanism::Kind::symmetrised:
      // Both directions: the pair is symmetric.
      return discretise_symmetrised(m, interval, tail_mass, max_points);
    case Mechanism::Kind::blend:
      break;
  }
  // A mixture of PLDs (the output reveals the part): connect-the-dots keeps
  // the P- and Q-mass of every bucket of every part, so the weighted sum of
  // the parts' discretisations is that of the blend, and it dominates the
  // blend because each part's does (hockey-stick divergences mix linearly).
  // The split variance of (3) adds up the same way (it is a sum over points).
  std::vector<DiscreteLoss> parts;
  std::int64_t first = 0, last = 0;
  for (std::size_t i = 0; i < m.parts.size(); ++i) {
    parts.push_back(discretise_impl(m.parts[i], d, interval, tail_mass, max_points));
    const auto& x = parts.back();
    const std::int64_t top = x.first_index + static_cast<std::int64_t>(x.mass.size()) - 1;
    first = i == 0 ? x.first_index : std::min(first, x.first_index);
    last = i == 0 ? top : std::max(last, top);
  }
  if (static_cast<double>(last - first) >= static_cast<double>(max_points))
    throw GridTooLarge("pld: one release needs more than the grid limit");
  DiscreteLoss out;
  out.interval = interval;
  out.first_index = first;
  out.mass.assign(static_cast<std::size_t>(last - first + 1), 0.0);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const double w = m.weights[i];
    const auto& x = parts[i];
    const auto offset = static_cast<std::size_t>(x.first_index - first);
    for (std::size_t j = 0; j < x.mass.size(); ++j) out.mass[offset + j] += w * x.mass[j];
    out.dropped_mass += w * x.dropped_mass;
    out.infinite_mass += w * x.infinite_mass;
    out.split_variance += w * x.split_variance;
  }
  return out;
}

}  // namespace detail

using detail::discretise_impl;
using detail::Model;

bool symmetric(const Mechanism& m) {
  switch (m.kind) {
    case Mechanism::Kind::gaussian:
    case Mechanism::Kind::laplace:
      return m.sampling == 1;  // q = 1: both directions have the same PLD
    case Mechanism::Kind::gaussian_replace:
      return true;  // z ↦ −z swaps the two laws
    case Mechanism::Kind::gaussian_mixture:
      return false;
    case Mechanism::Kind::atoms:
      return m.add_atoms.empty();
    case Mechanism::Kind::discrete_laplace:
    case Mechanism::Kind::discrete_gaussian:
      return true;  // y ↦ shift − y swaps the two laws (the noise is symmetric)
    case Mechanism::Kind::blend:
      return std::all_of(m.parts.begin(), m.parts.end(),
                         [](const Mechanism& p) { return symmetric(p); });
    case Mechanism::Kind::symmetrised:
      return true;
  }
  return false;
}

double infinite_mass(const Mechanism& m, Direction d) {
  double s = 0;
  if (m.kind == Mechanism::Kind::atoms) {
    const auto& atoms = d == Direction::add && !m.add_atoms.empty() ? m.add_atoms : m.atoms;
    for (const Atom& a : atoms)
      if (a.loss == detail::kInf) s += a.mass;
  } else if (m.kind == Mechanism::Kind::blend) {
    for (std::size_t i = 0; i < m.parts.size(); ++i)
      s += m.weights[i] * infinite_mass(m.parts[i], d);
  } else if (m.kind == Mechanism::Kind::symmetrised) {
    s = infinite_mass(m.parts.at(0), Direction::remove);  // in both directions
  }
  return s;
}

DiscreteLoss discretise(const Mechanism& m, Direction d, double interval, double tail_mass,
                        Coarsening coarsening) {
  if (!(interval > 0)) throw InvalidParameter("pld_interval", "must be positive");
  return discretise_impl(m, d, interval, tail_mass, kDirectMaxGrid, coarsening);
}

double exact_delta(const Mechanism& m, Direction d, double epsilon) {
  switch (m.kind) {
    case Mechanism::Kind::gaussian:
    case Mechanism::Kind::laplace:
      break;
    case Mechanism::Kind::gaussian_replace:
    case Mechanism::Kind::gaussian_mixture:
      return detail::exact_delta_mixture(m, d, epsilon);
    case Mechanism::Kind::atoms:
    case Mechanism::Kind::discrete_laplace:
    case Mechanism::Kind::discrete_gaussian:
      return detail::exact_delta_atoms(m, d, epsilon);
    case Mechanism::Kind::blend: {
      double s = 0;
      for (std::size_t i = 0; i < m.parts.size(); ++i)
        s += m.weights[i] * exact_delta(m.parts[i], d, epsilon);
      return s;
    }
    case Mechanism::Kind::symmetrised: {
      // docs/pld.md#symmetrised-pair: the part's remove profile at ε ≥ 0, and at ε < 0
      // H_{e^ε} = 1 − e^ε + e^ε·H_{e^{−ε}} (the pair is symmetric).
      const Mechanism& part = m.parts.at(0);
      if (epsilon >= 0) return exact_delta(part, Direction::remove, epsilon);
      return -std::expm1(epsilon) +
             std::exp(epsilon) * exact_delta(part, Direction::remove, -epsilon);
    }
  }
  // δ(ε) = P(X > ε) − e^ε Q(X > ε)   (Meiser & Mohammadi 2018, Lemma 5 form)
  const Model model(m);
  const auto [p, q] = model.at(epsilon, d);
  return std::max(0.0, p.sf() - std::exp(epsilon) * q.sf());
}

}  // namespace dpb::pld
