#include "accounting/pld/pld_planner.hpp"

#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "accounting/numerics/outward.hpp"

namespace dpb::detail {
namespace {

using Kind = pld::Mechanism::Kind;

/// A term whose pair only dominates its mechanism (LowerEnd::accuracy).
Planned<PldTerm> dominating(Planned<PldTerm> planned) {
  if (planned.term) planned.term->attained = false;
  return planned;
}

std::string name_of(std::string_view kind) { return std::string(kind); }

/// Below this a tail probability from Boost may have lost digits to underflow;
/// then it is summed in log space instead.
constexpr double kTailUnderflow = 1e-290;
/// The log-space tail sum stops when a term is below this share of the sum
/// (the rest, a geometric tail past the mode, cannot change a double).
constexpr double kTailTermShare = 1e-18;

/// log P(Binom(n, p) ≥ k), 0 < p ≤ 1: Boost.Math's regularised incomplete
/// beta (binomial complement) where it is representable, else in log space
/// log pmf(k) + log Σ_{j ≥ k} pmf(j)/pmf(k) (past the mode the ratios
/// (n − j)p/((j + 1)(1 − p)) are < 1 and decrease).
double log_binomial_tail(std::int64_t n, double p, std::int64_t k) {
  if (k <= 0) return 0;
  if (k > n) return -std::numeric_limits<double>::infinity();
  if (p == 1) return 0;
  const auto nd = static_cast<double>(n), kd = static_cast<double>(k);
  const boost::math::binomial_distribution<double> dist(nd, p);
  const double tail = boost::math::cdf(boost::math::complement(dist, kd - 1));
  if (tail > kTailUnderflow) return std::log(tail);
  const double log_pmf = boost::math::lgamma(nd + 1) - boost::math::lgamma(kd + 1) -
                         boost::math::lgamma(nd - kd + 1) + kd * std::log(p) +
                         (nd - kd) * std::log1p(-p);
  double sum = 1, term = 1;
  for (double j = kd; j < nd; ++j) {
    term *= (nd - j) * p / ((j + 1) * (1 - p));
    sum += term;
    if (term < kTailTermShare * sum) break;
  }
  return log_pmf + std::log(sum);
}

/// A release of base kind `kind` (noise parameter for sensitivity 1).
pld::Mechanism base_mechanism(Kind kind, double parameter, double q) {
  pld::Mechanism m;
  m.kind = kind;
  m.parameter = parameter;
  m.sampling = q;
  return m;
}

pld::Mechanism atoms_mechanism(std::vector<pld::Atom> remove, std::vector<pld::Atom> add = {}) {
  pld::Mechanism m;
  m.kind = Kind::atoms;
  m.atoms = std::move(remove);
  m.add_atoms = std::move(add);
  return m;
}

/// The canonical pair of an (ε, δ)-DP mechanism (Kairouz, Oh & Viswanath 2015,
/// Thm 2.1: every (ε, δ)-DP pair is a post-processing of it): loss +∞ with
/// P-mass δ, ε with (1 − δ)e^ε/(1 + e^ε), −ε with (1 − δ)/(1 + e^ε); the same in
/// both directions. ε = 0 leaves one atom at 0.
pld::Mechanism epsilon_delta_pair(double eps, double delta) {
  std::vector<pld::Atom> atoms;
  if (delta > 0) atoms.push_back({std::numeric_limits<double>::infinity(), delta});
  if (eps == 0) {
    atoms.push_back({0.0, 1 - delta});
  } else {
    // e^ε/(1 + e^ε) = 1/(1 + e^{−ε}), stable for every ε.
    atoms.push_back({eps, (1 - delta) / (1 + std::exp(-eps))});
    atoms.push_back({-eps, (1 - delta) / (1 + std::exp(eps))});
  }
  return atoms_mechanism(std::move(atoms));
}

/// Every leaf kind, explicitly (no catch-all: a new kind must be added here),
/// under the relation asked for (`relation`; nullopt = inferred, AccountantOptions).
/// Our convention (common to every accountant): noise parameters are relative
/// to the add/remove sensitivity 1; under replace_one a record moves the query
/// by kReplaceOneSensitivity = 2 of them, under replace_special (a null record
/// contributing nothing) by 1.
struct PldPlanner {
  std::optional<Neighbouring> relation;

  bool replace_one() const { return relation == Neighbouring::replace_one; }
  /// The factor on the sensitivity under the chosen relation.
  double scale() const { return replace_one() ? kReplaceOneSensitivity : 1.0; }
  std::string relation_name() const {
    return relation ? std::string(to_string(*relation)) : std::string("add_remove");
  }

  static Planned<PldTerm> no_loss() { return PldTerm{}; }

  /// One epoch of random allocation, k of t steps. For k = 1 the pair of
  /// docs/pld.md#random-allocation (random_allocation.hpp). For k > 1: a uniform k-subset of the
  /// t steps is what one gets by cutting the steps, by a uniformly random
  /// permutation, into k groups of sizes ⌈t/k⌉ (t mod k of them) and ⌊t/k⌋,
  /// then picking one step per group uniformly (the chosen set always has k
  /// elements and its law is invariant under permutations of the steps, so
  /// it is uniform). Given the groups, which do not depend on the data, the
  /// epoch is k independent 1-of-size allocations on disjoint steps; the
  /// mixture over groupings is no worse than its members (joint convexity of
  /// the hockey-stick divergence), which all have the same sizes. Hence the
  /// composition of those k allocations is a sound bound (cf. Feldman &
  /// Shenfeld 2025, arXiv 2502.08202, on k-of-t allocation).
  Planned<PldTerm> allocation(double sigma, const AllocationSampling& a) const {
    const std::int64_t k = a.participations, t = a.steps;
    PldTerm term;
    for (const auto& [size, groups] : {std::pair{t / k + 1, t % k}, std::pair{t / k, k - t % k}})
      if (groups > 0) term.allocations.push_back({size, sigma, groups});
    // k = 1: the pair is the epoch's own with every other gradient 0 (a record
    // in one uniformly chosen step). k > 1: the groups composed separately
    // only dominate the k-subset allocation.
    term.attained = k == 1;
    return term;
  }
  /// New kinds are analysed unsampled only.
  static std::optional<Planned<PldTerm>> sampled(const LeafSampling& s, std::string_view kind) {
    if (std::holds_alternative<NotSampled>(s)) return std::nullopt;
    if (std::holds_alternative<WithoutReplacementSampling>(s))
      return Planned<PldTerm>::refuse(refuse_sampled("pld", s, "a gaussian", kind));
    return Planned<PldTerm>::refuse(refuse_sampled("pld", s, "a gaussian or laplace", kind));
  }

  /// A batch of exactly m of the N records, drawn without replacement, then the
  /// Gaussian with noise multiplier σ (docs/pld.md#without-replacement). With
  /// γ = m/N and the pair X = γN(1, (σ/2)²) + (1 − γ)N(0, (σ/2)²), Y = N(0, (σ/2)²)
  /// (the base pair of sensitivity kReplaceOneSensitivity = 2 at σ, scaled to 1):
  ///   - add_remove (a neighbour has one record more or fewer; N is the larger
  ///     dataset's size): (X, Y) dominates every removal and (Y, X) every
  ///     addition at every order, and both are attained, so the usual two
  ///     directions give a tight interval;
  ///   - replace_one (the relation the scheme fixes): every ordered pair is
  ///     dominated by (X, Y) at ε ≥ 0 only (Zhu, Dong & Wang 2022; advanced joint
  ///     convexity, Balle, Barthe & Gaboardi 2018, Thm 2), so the upper bound
  ///     composes the symmetrised pair (docs/pld.md#symmetrised-pair), which
  ///     dominates at every order, also when the record's gradient switches
  ///     between the two roles from step to step (Lebeda, Regehr, Kamath &
  ///     Steinke 2024, arXiv 2405.20769); the lower end composes (X, Y) and
  ///     (Y, X), attained with every other gradient e and the record's −e vs e.
  /// γ is rounded up for the upper pair and down for the lower one (both pairs
  /// grow with γ).
  Planned<PldTerm> without_replacement(Kind kind, double sigma,
                                       const WithoutReplacementSampling& w) const {
    if (kind != Kind::gaussian)
      return Planned<PldTerm>::refuse(
          "pld: sampled_without_replacement supports only a gaussian event inside, not laplace "
          "(use poisson_sampled)");
    if (relation == Neighbouring::replace_special)
      return Planned<PldTerm>::refuse(
          "pld: sampled_without_replacement is analysed under replace_one and add_remove, not "
          "replace_special: use neighbouring replace_one (a null record is a record whose "
          "gradient is 0, so its bound holds for replace_special too)");
    const bool add_remove = relation == Neighbouring::add_remove;
    if (w.sample_size == 0) return no_loss();  // no record is ever in a batch
    if (add_remove && w.sample_size == w.dataset_size)
      return Planned<PldTerm>::refuse(
          "pld: sampled_without_replacement with sample_size = source_dataset_size has no "
          "add_remove analysis (a neighbour with one record fewer cannot fill the batch): use "
          "neighbouring replace_one");
    const auto n = static_cast<double>(w.dataset_size), m = static_cast<double>(w.sample_size);
    // The base pair at sensitivity 2: shift 1 at σ/2 (exact: a division by 2).
    const double s = scaled_noise_multiplier(sigma, kReplaceOneSensitivity);
    if (w.sample_size == w.dataset_size)  // every record in every batch: the Gaussian
      return PldTerm{base_mechanism(Kind::gaussian, s, 1.0)};
    double gamma_down = m / n;
    if (std::fma(gamma_down, n, -m) > 0) gamma_down = std::nextafter(gamma_down, 0.0);
    const double gamma_up = outward::quotient_up(m, n);
    if (add_remove) {
      // One pair, both directions, dominating and attained; γ rounded up (the
      // lower end of a pair that dominates the run's is still the run's lower
      // bound only when attained: at γ_up the pair is the run's own up to one
      // rounding of m/N, so the lower end uses γ_down).
      PldTerm term{base_mechanism(Kind::gaussian, s, gamma_up)};
      if (gamma_down != gamma_up) term.lower = base_mechanism(Kind::gaussian, s, gamma_down);
      return term;
    }
    pld::Mechanism upper;
    upper.kind = Kind::symmetrised;
    upper.parts = {base_mechanism(Kind::gaussian, s, gamma_up)};
    PldTerm term{std::move(upper)};
    term.lower = base_mechanism(Kind::gaussian, s, gamma_down);
    term.note =
        "fixed-size batches under replace_one: the lower end is attained (every other gradient e, "
        "the record's -e against e), the upper end is the symmetrised dominating pair; their gap "
        "is the analysis', not the grid's (docs/pld.md#without-replacement)";
    return term;
  }

  Planned<PldTerm> base(Kind kind, double parameter, const LeafSampling& s) const {
    if (auto why = epoch_refusal("pld", s, kind == Kind::gaussian, relation))
      return Planned<PldTerm>::refuse(*why);
    if (std::holds_alternative<ShuffleSampling>(s))
      // One unamplified release per epoch (uses_per_epoch), a sound upper
      // bound for shuffled batches; the lower bound of a shuffled run is a
      // separate question (dp_sgd_run.hpp, shuffle_lower_bound_event).
      return dominating(
          PldTerm{base_mechanism(kind, scaled_noise_multiplier(parameter, scale()), 1.0)});
    if (const auto* a = std::get_if<AllocationSampling>(&s)) return allocation(parameter, *a);
    if (const auto* w = std::get_if<WithoutReplacementSampling>(&s))
      return without_replacement(kind, parameter, *w);
    if (const auto* p = std::get_if<PoissonSampling>(&s)) {
      if (p->probability == 0) return no_loss();  // q = 0: no privacy loss
      if (replace_one()) {
        // σ and b are relative to sensitivity 1; q = 1 is the unsampled release
        // at sensitivity 2.
        if (p->probability == 1)
          return PldTerm{base_mechanism(kind, scaled_noise_multiplier(parameter, scale()), 1.0)};
        if (kind == Kind::laplace)
          return Planned<PldTerm>::refuse(
              "pld: poisson_sampled laplace has no analysis under replace_one here (its REPLACE "
              "pair's loss is not handled): use add_remove or replace_special");
        // The REPLACE adjacency of the Poisson-subsampled Gaussian (Lebeda,
        // Regehr, Kamath & Steinke 2025, Prop. 13): a record x replaced by x',
        // centred at (x + x')/2, the two means are ±1 at σ (|x − x'| ≤ 2).
        return PldTerm{base_mechanism(Kind::gaussian_replace, parameter, p->probability)};
      }
      // add_remove, replace_special (a null record contributes nothing, as if
      // absent: Kairouz et al. 2021, Def. II.3), inferred.
      return PldTerm{base_mechanism(kind, parameter, p->probability)};
    }
    return PldTerm{base_mechanism(kind, scaled_noise_multiplier(parameter, scale()), 1.0)};
  }
  Planned<PldTerm> operator()(const GaussianEvent& e, const LeafSampling& s) const {
    return base(Kind::gaussian, e.noise_multiplier, s);
  }
  Planned<PldTerm> operator()(const LaplaceEvent& e, const LeafSampling& s) const {
    return base(Kind::laplace, e.scale, s);
  }
  Planned<PldTerm> operator()(const NoOpEvent& e, const LeafSampling& s) const {
    if (auto r = sampled(s, e.kName)) return *r;
    return no_loss();
  }
  Planned<PldTerm> operator()(const NonPrivateEvent& e, const LeafSampling& s) const {
    if (auto r = sampled(s, e.kName)) return *r;
    return PldTerm{atoms_mechanism({{std::numeric_limits<double>::infinity(), 1.0}})};
  }
  // Events stated as a guarantee hold as stated under every relation.
  Planned<PldTerm> operator()(const EpsilonDeltaEvent& e, const LeafSampling& s) const {
    if (auto r = sampled(s, e.kName)) return *r;
    if (e.epsilon == 0 && e.delta == 0) return no_loss();
    // The canonical pair dominates every (ε, δ)-DP mechanism; this one may
    // be far better.
    return dominating(PldTerm{epsilon_delta_pair(e.epsilon, e.delta)});
  }
  /// The exponential mechanism and permute-and-flip as generic ε-DP mechanisms:
  /// the canonical (ε, 0) pair dominates them (Kairouz, Oh & Viswanath 2015).
  /// Looser than their own PLDs; dp_accounting gives permute-and-flip the
  /// Laplace PLD, for which we know no published proof, so we do not.
  Planned<PldTerm> epsilon_dp(double eps, std::string_view kind, const LeafSampling& s) const {
    if (auto r = sampled(s, kind)) return *r;
    if (eps == 0) return no_loss();
    return dominating(PldTerm{epsilon_delta_pair(eps, 0)});
  }
  Planned<PldTerm> operator()(const ExponentialMechanismEvent& e, const LeafSampling& s) const {
    return epsilon_dp(e.epsilon, e.kName, s);
  }
  Planned<PldTerm> operator()(const PermuteAndFlipEvent& e, const LeafSampling& s) const {
    return epsilon_dp(e.epsilon, e.kName, s);
  }
  /// Discrete noise on an integer query: the shift is the sensitivity, times
  /// 2 under replace_one (our convention).
  Planned<PldTerm> discrete(Kind kind, double parameter, std::int64_t sensitivity,
                            std::string_view name, const LeafSampling& s) const {
    if (auto r = sampled(s, name)) return *r;
    pld::Mechanism m;
    m.kind = kind;
    m.parameter = parameter;
    m.shift = static_cast<double>(sensitivity) * scale();
    return PldTerm{std::move(m)};
  }
  Planned<PldTerm> operator()(const DiscreteLaplaceEvent& e, const LeafSampling& s) const {
    return discrete(Kind::discrete_laplace, e.noise_parameter, e.sensitivity, e.kName, s);
  }
  Planned<PldTerm> operator()(const DiscreteGaussianEvent& e, const LeafSampling& s) const {
    return discrete(Kind::discrete_gaussian, e.sigma, e.sensitivity, e.kName, s);
  }
  /// k-ary randomized response (the true bucket w.p. 1 − p + p/k, each other
  /// w.p. p/k; dp_accounting's supplementary "Privacy loss distributions", §4.6).
  Planned<PldTerm> operator()(const RandomizedResponseEvent& e, const LeafSampling& s) const {
    if (auto r = sampled(s, e.kName)) return *r;
    if (!relation || *relation == Neighbouring::add_remove)
      return Planned<PldTerm>::refuse(
          "pld: randomized_response has no analysis under add_remove neighbouring (a record's "
          "bucket is replaced, not removed): choose neighbouring replace_one or replace_special");
    const double p = e.noise_parameter;
    const auto k = static_cast<double>(e.num_buckets);
    if (e.num_buckets == 1 || p == 1) return no_loss();  // the output ignores the input
    const double inf = std::numeric_limits<double>::infinity();
    const double top = 1 - p + p / k;  // P-mass of the true bucket
    if (*relation == Neighbouring::replace_one) {
      // x vs x' ≠ x, symmetric: bucket x has loss log(top/(p/k)), bucket x'
      // the opposite, the other k − 2 buckets loss 0.
      if (p == 0) return PldTerm{atoms_mechanism({{inf, 1.0}})};
      const double l = std::log1p(k * (1 - p) / p);  // log(top·k/p)
      std::vector<pld::Atom> atoms{{l, top}, {-l, p / k}};
      if (e.num_buckets > 2) atoms.push_back({0.0, (k - 2) * p / k});
      return PldTerm{atoms_mechanism(std::move(atoms))};
    }
    // replace_special: x vs the null record, whose output is uniform on the k
    // buckets. Remove (P = RR(x)): loss log(k(1 − p) + p) w.p. top, log p w.p.
    // (k − 1)p/k. Add (P = uniform): −log(k(1 − p) + p) w.p. 1/k, −log p w.p.
    // (k − 1)/k (+∞ when p = 0).
    const double l_top = std::log(k * (1 - p) + p);
    std::vector<pld::Atom> remove{{l_top, top}}, add{{-l_top, 1 / k}};
    if (p > 0) remove.push_back({std::log(p), (k - 1) * p / k});
    add.push_back({p > 0 ? -std::log(p) : inf, (k - 1) / k});
    return PldTerm{atoms_mechanism(std::move(remove), std::move(add))};
  }
  Planned<PldTerm> operator()(const ZcdpEvent& e, const LeafSampling&) const {
    return Planned<PldTerm>::refuse(
        "pld: " + name_of(e.kName) +
        " has no privacy loss distribution here (a zCDP bound does not determine one): use rdp");
  }
  /// Q = N(0, s²) vs P = Σ p_i N(c_i, s²) (Choquette-Choo et al. 2023, arXiv
  /// 2310.15526): the remove direction compares P with Q, add Q with P.
  Planned<PldTerm> operator()(const MixtureOfGaussiansEvent& e, const LeafSampling& s) const {
    if (auto r = sampled(s, e.kName)) return *r;
    if (replace_one())
      return Planned<PldTerm>::refuse(
          "pld: mixture_of_gaussians has no analysis under replace_one (its pair compares one "
          "record with its absence): use add_remove or replace_special");
    pld::Mechanism m;
    m.kind = Kind::gaussian_mixture;
    m.parameter = e.standard_deviation;
    // Merge equal sensitivities, drop zero probabilities.
    for (std::size_t i = 0; i < e.sensitivities.size(); ++i) {
      if (e.sampling_probs[i] == 0) continue;
      const auto it = std::find(m.shifts.begin(), m.shifts.end(), e.sensitivities[i]);
      if (it != m.shifts.end()) {
        m.weights[static_cast<std::size_t>(it - m.shifts.begin())] += e.sampling_probs[i];
      } else {
        m.shifts.push_back(e.sensitivities[i]);
        m.weights.push_back(e.sampling_probs[i]);
      }
    }
    if (std::all_of(m.shifts.begin(), m.shifts.end(), [](double c) { return c == 0; }))
      return no_loss();  // every component at 0: P = Q
    return PldTerm{std::move(m)};
  }
  Planned<PldTerm> operator()(const SingleEpochTreeAggregationEvent& e, const LeafSampling&) const {
    return Planned<PldTerm>::refuse("pld: " + name_of(e.kName) +
                                    " is not analysed with privacy loss distributions: use rdp");
  }
  Planned<PldTerm> operator()(const RepeatAndSelectEvent& e, const LeafSampling&) const {
    return Planned<PldTerm>::refuse(
        "pld: " + name_of(e.kName) +
        " is not analysed with privacy loss distributions (its guarantee is an RDP bound): use "
        "rdp");
  }
  /// Truncated Poisson sampling (Ganesh 2025, "Tighter privacy analysis for
  /// truncated Poisson sampling", arXiv 2508.15089; as dp_accounting's
  /// supplementary "Privacy loss distributions", §5.3, states it): the PLD is
  /// the mixture of (i) with weight 1 − t the Poisson-subsampled Gaussian (σ,
  /// q) under the relation and (ii) with weight t = P(Binom(N − 1, q) ≥ B) (the
  /// other sampled records fill the batch) the REPLACE pair at σ/2 (a record
  /// takes another's place: the sum moves by up to 2) with the sampling
  /// probability q' = P(Binom(N, q) > B)·B/(t·N), which dominates every relation.
  Planned<PldTerm> operator()(const TruncatedSubsampledGaussianEvent& e,
                              const LeafSampling& s) const {
    if (auto r = sampled(s, e.kName)) return *r;
    const double q = e.sampling_probability, sigma = e.noise_multiplier;
    const std::int64_t n = e.dataset_size, b = e.truncated_batch_size;
    if (q == 0 || b == 0) return no_loss();  // nothing is ever released about a record
    Planned<PldTerm> plain = base(Kind::gaussian, sigma, LeafSampling{PoissonSampling{q}});
    if (!plain.term) return plain;
    const double log_t = log_binomial_tail(n - 1, q, b);
    if (log_t == -std::numeric_limits<double>::infinity()) return plain;  // N − 1 < B
    const double t = std::exp(log_t);
    // q' = P(Binom(N, q) ≥ B + 1)·B/(t·N): the identity q·C(N−1, m)/(m + 1) =
    // C(N, m + 1)/N turns E[q·B/(m + 1); m ≥ B], m ∼ Binom(N − 1, q) (the chance
    // that the record is sampled and kept), into it.
    const double q2 = std::min(1.0, std::exp(log_binomial_tail(n, q, b + 1) - log_t) *
                                        static_cast<double>(b) / static_cast<double>(n));
    pld::Mechanism truncated =
        q2 > 0 ? base_mechanism(Kind::gaussian_replace, scaled_noise_multiplier(sigma, 2), q2)
               : atoms_mechanism({{0.0, 1.0}});
    pld::Mechanism m;
    m.kind = Kind::blend;
    m.weights = {1 - t, t};
    m.parts = {plain.term->mechanism.value_or(atoms_mechanism({{0.0, 1.0}})), std::move(truncated)};
    // The REPLACE part is a conservative pair for every relation, not one a
    // pair of datasets is known to attain.
    return dominating(PldTerm{std::move(m)});
  }
};

}  // namespace

Plan<PldTerm> pld_plan(const DpEvent& event, std::optional<Neighbouring> relation) {
  return plan_event<PldTerm>(event, PldPlanner{relation}, "pld");
}

}  // namespace dpb::detail
