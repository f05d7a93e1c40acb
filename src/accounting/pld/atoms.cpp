// Stages (1) and (2) of the PLD method (internal.hpp) for privacy losses
// that take finitely or countably many values: point masses (atoms) of P-mass
// p at loss l (Q-mass p·e^{−l}), and P-mass at +∞.
//
// Connect-the-dots of an atom is exact: the atom at l = kΔ + u (0 ≤ u < Δ)
// goes to kΔ and (k+1)Δ as p(1 − w) and p·w with w = (1 − e^{−u})/(1 − e^{−Δ}),
// which keeps its P-mass and its Q-mass p·e^{−l} (Doroshenko et al. 2022,
// Alg. 1, with the bucket reduced to one point); the split variance of (3) is
// p·w(1 − w), exactly the variance of the coupling's rounding of that atom.
// Atoms far out in either tail, of total P-mass ≤ τ per end, and the tails of
// a countable support go to +∞ (the upper bound counts them in full, the lower
// bound drops them; both sound, as in (2)).
//
// The atoms of each kind (remove direction; P the law with the record):
//  - atoms: given (randomized response, the canonical (ε, δ) pair, ...).
//  - discrete_laplace: P = s + DLap(a), Q = DLap(a), DLap(a)(x) =
//    tanh(a/2)·e^{−a|x|} on the integers; the loss at y is a(|y| − |y − s|):
//    as with P-mass 1/(1 + e^{−a}), −as with e^{−as}/(1 + e^{−a}), and
//    a(2y − s) with tanh(a/2)e^{−a(s−y)} for 0 < y < s (dp_accounting's
//    supplementary note "Privacy loss distributions", §4.4). y ↦ s − y swaps
//    P and Q, so the add direction has the same PLD.
//  - discrete_gaussian: P = N_Z(s, σ²), Q = N_Z(0, σ²), N_Z(μ, σ²)(x) ∝
//    e^{−(x−μ)²/(2σ²)} on the integers (Canonne, Kamath & Steinke 2020,
//    Def. 1): with y = s + x, x ∼ N_Z(0, σ²), the loss is (s² + 2sx)/(2σ²)
//    (the normalising constants cancel: the shift is an integer); symmetric.
//    Beyond dp_accounting, which truncates the noise itself.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "accounting/errors.hpp"
#include "accounting/pld/internal.hpp"
#include "accounting/pld/pld.hpp"

namespace dpb::pld::detail {
namespace {

/// At most this many atoms per release (2^25: 512 MiB of atoms at most, the
/// grid limit's order); more is GridTooLarge, which the refinement reports.
constexpr double kMaxAtoms = 33554432.0;
/// |Σ p − 1| and |Σ p·e^{−l} − 1| allowed for given atoms (probabilities
/// computed in floating point).
constexpr double kAtomSumTolerance = 1e-9;
/// For σ at least this, log Z of the discrete Gaussian comes from the Poisson
/// summation formula, whose first correction e^{−2π²σ²} is then below 3e-9
/// and the next below 1e-34; below it, from the direct sum.
constexpr double kThetaSwitchSigma = 1.0;
/// The direct sums stop once a term is below e^{−kNegligibleExponent} of the
/// first: 2·e^{−745}/(1 − e^{−…}) cannot change a double.
constexpr double kNegligibleExponent = 745.0;

/// log Σ_{x∈Z} e^{−x²/(2σ²)}: by the Poisson summation formula (Jacobi's theta
/// transformation) Σ_x e^{−x²/(2σ²)} = σ√(2π)·Σ_k e^{−2π²σ²k²} for σ ≥ 1;
/// else the direct sum 1 + 2Σ_{x≥1} e^{−x²/(2σ²)}, from the small end.
double log_normaliser(double sigma) {
  const double v = 2 * sigma * sigma;
  if (sigma >= kThetaSwitchSigma) {
    double corr = 0;
    for (int k = 3; k >= 1; --k) corr += std::exp(-std::numbers::pi * std::numbers::pi * v * k * k);
    return std::log(sigma * std::sqrt(2 * std::numbers::pi)) + std::log1p(2 * corr);
  }
  const auto last = static_cast<int>(std::ceil(std::sqrt(kNegligibleExponent * v))) + 1;
  double s = 0;
  for (int x = last; x >= 1; --x) s += std::exp(-static_cast<double>(x) * x / v);
  return std::log1p(2 * s);
}

struct AtomList {
  std::vector<Atom> finite;
  double infinite = 0;   ///< P-mass at +∞ by definition
  double truncated = 0;  ///< bound on the P-mass of tails left out
};

AtomList discrete_laplace_atoms(double a, double s, double tau) {
  AtomList out;
  const double denom = 1 + std::exp(-a);
  out.finite.push_back({a * s, 1 / denom});
  out.finite.push_back({-a * s, std::exp(-a * s) / denom});
  // Middle atoms y = s − j, j = 1 … s − 1: P-mass tanh(a/2)e^{−aj}, loss
  // a(s − 2j). Σ_{j ≥ J} tanh(a/2)e^{−aj} = e^{−aJ}/(1 + e^{−a}) (geometric).
  const double th = std::tanh(a / 2);
  double last = s - 1;
  const double cut = std::ceil(-std::log(tau * denom) / a);  // tail from cut on ≤ τ
  if (cut < last) {
    last = cut - 1;
    out.truncated = std::exp(-a * cut) / denom;
  }
  if (last > kMaxAtoms) throw GridTooLarge("pld: discrete_laplace needs too many atoms");
  for (double j = 1; j <= last; ++j) out.finite.push_back({a * (s - 2 * j), th * std::exp(-a * j)});
  return out;
}

AtomList discrete_gaussian_atoms(double sigma, double s, double tau) {
  AtomList out;
  const double v = 2 * sigma * sigma;
  const double log_z = log_normaliser(sigma);
  // Tail beyond K (each side), ratio test: t_{x+1}/t_x = e^{−(2x+1)/(2σ²)}
  // decreases, so Σ_{x>K} t_x ≤ t_{K+1}/(1 − e^{−(2K+3)/(2σ²)}).
  auto tail = [&](double k) {
    return std::exp(-(k + 1) * (k + 1) / v - log_z) / -std::expm1(-(2 * k + 3) / v);
  };
  double k = std::ceil(sigma * std::sqrt(2 * std::log(1 / tau)));
  while (tail(k) > tau) k += std::max(1.0, std::ceil(0.1 * sigma));
  if (2 * k + 1 > kMaxAtoms) throw GridTooLarge("pld: discrete_gaussian needs too many atoms");
  out.truncated = 2 * tail(k);
  for (double x = -k; x <= k; ++x)
    out.finite.push_back({(s * s + 2 * s * x) / v, std::exp(-x * x / v - log_z)});
  return out;
}

AtomList atoms_of(const Mechanism& m, Direction d, double tau) {
  if (m.kind == Mechanism::Kind::discrete_laplace)
    return discrete_laplace_atoms(m.parameter, m.shift, tau);
  if (m.kind == Mechanism::Kind::discrete_gaussian)
    return discrete_gaussian_atoms(m.parameter, m.shift, tau);
  AtomList out;
  const auto& given = d == Direction::add && !m.add_atoms.empty() ? m.add_atoms : m.atoms;
  for (const Atom& a : given) {
    if (!(a.mass > 0)) continue;
    if (a.loss == kInf)
      out.infinite += a.mass;
    else
      out.finite.push_back(a);
  }
  return out;
}

}  // namespace

void validate_atoms(const Mechanism& m) {
  if (m.kind == Mechanism::Kind::discrete_laplace || m.kind == Mechanism::Kind::discrete_gaussian) {
    if (!(m.parameter > 0) || !std::isfinite(m.parameter))
      throw InvalidParameter(
          m.kind == Mechanism::Kind::discrete_laplace ? "noise_parameter" : "sigma",
          "must be a finite positive number");
    if (!(m.shift >= 1) || m.shift != std::floor(m.shift) || !std::isfinite(m.shift))
      throw InvalidParameter("sensitivity", "must be an integer >= 1");
    return;
  }
  for (const auto* list : {&m.atoms, &m.add_atoms}) {
    double p = 0, q = 0;
    for (const Atom& a : *list) {
      if (!(a.mass >= 0 && a.mass <= 1))
        throw InvalidParameter("atoms", "masses must be in [0, 1]");
      if (std::isnan(a.loss) || (a.loss == -kInf && a.mass > 0))
        throw InvalidParameter("atoms", "losses must be numbers > -inf");
      p += a.mass;
      if (a.loss != kInf) q += a.mass * std::exp(-a.loss);
    }
    if (!(p <= 1 + kAtomSumTolerance) || !(q <= 1 + kAtomSumTolerance))
      throw InvalidParameter("atoms", "the P- and Q-masses must each sum to at most 1");
  }
}

DiscreteLoss discretise_atoms(const Mechanism& m, Direction d, double interval, double tail_mass,
                              std::size_t max_points) {
  validate_atoms(m);
  AtomList list = atoms_of(m, d, tail_mass);
  auto& atoms = list.finite;
  std::sort(atoms.begin(), atoms.end(),
            [](const Atom& x, const Atom& y) { return x.loss < y.loss; });
  // Far atoms of total P-mass ≤ τ at each end go to +∞ (keeps the grid short).
  std::size_t lo = 0, hi = atoms.size();
  double cut = 0;
  while (lo < hi && cut + atoms[lo].mass <= tail_mass) cut += atoms[lo++].mass;
  double cut_top = 0;
  while (hi > lo && cut_top + atoms[hi - 1].mass <= tail_mass) cut_top += atoms[--hi].mass;
  const double l_lo = lo < hi ? atoms[lo].loss : 0.0;
  const double l_hi = lo < hi ? atoms[hi - 1].loss : 0.0;
  const auto [k_lo, k_hi] = grid_span(l_lo, l_hi, interval, max_points);
  DiscreteLoss out;
  out.interval = interval;
  out.first_index = k_lo;
  out.mass.assign(static_cast<std::size_t>(k_hi - k_lo + 1), 0.0);
  const double down = -std::expm1(-interval);  // 1 − e^{−Δ}
  double var = 0;
  for (std::size_t i = lo; i < hi; ++i) {
    const Atom& a = atoms[i];
    const double k = std::floor(a.loss / interval);
    const double u = std::max(0.0, a.loss - k * interval);
    // w = (1 − e^{−u})/(1 − e^{−Δ}): the share sent up, keeping the Q-mass.
    const double w = std::clamp(-std::expm1(-u) / down, 0.0, 1.0);
    const auto idx = static_cast<std::size_t>(static_cast<std::int64_t>(k) - k_lo);
    out.mass[idx] += a.mass * (1 - w);
    out.mass[idx + 1] += a.mass * w;
    var += a.mass * w * (1 - w);
  }
  out.split_variance = var;
  out.infinite_mass = list.infinite;
  out.dropped_mass = list.infinite + list.truncated + cut + cut_top;
  return out;
}

double exact_delta_atoms(const Mechanism& m, Direction d, double epsilon) {
  validate_atoms(m);
  // δ(ε) = P(X = ∞) + Σ_l p_l (1 − e^{ε − l})₊ (Meiser & Mohammadi 2018);
  // the countable supports are cut where the tails are below 1e-300.
  const AtomList list = atoms_of(m, d, kTinyProbability);
  double s = list.infinite;
  for (const Atom& a : list.finite)
    if (a.loss > epsilon) s += a.mass * -std::expm1(epsilon - a.loss);
  return std::min(1.0, s);
}

}  // namespace dpb::pld::detail
