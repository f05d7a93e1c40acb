#include "accounting/pld_accountant.hpp"

#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "accounting/attack_risk.hpp"
#include "accounting/errors.hpp"
#include "accounting/event_walk.hpp"
#include "accounting/random_allocation.hpp"
#include "accounting/rdp_without_replacement.hpp"

namespace dpb {
namespace {

constexpr const char* kWithoutReplacement =
    "pld: sampled_without_replacement (replace-one) is not supported: its privacy loss is not a "
    "monotone function of one real variable, so the CDF-based discretisation does not apply";

using Kind = pld::Mechanism::Kind;

/// One leaf as the PLD accountant composes it; nullopt mechanism = no privacy
/// loss (no_op, a Poisson-sampled release with q = 0, ...).
struct PldTerm {
  std::optional<pld::Mechanism> mechanism;
  /// Instead of `mechanism`: epochs of random allocation, `count` allocations
  /// of one of `steps` steps each, discretised when composed (planning stays
  /// cheap) into a pessimistic PLD for the upper bounds and an optimistic one
  /// for the lower bounds (random_allocation.hpp).
  struct Allocation {
    std::int64_t steps;
    double noise_multiplier;
    std::int64_t count;
  };
  std::vector<Allocation> allocations = {};
  /// Whether the pair is attained by some pair of neighbouring datasets for
  /// the leaf's mechanism (so the exact value of the composed pair is the
  /// mechanism's), or only dominates it (LowerEnd). Every leaf says which.
  bool attained = true;
};

/// A term whose pair only dominates its mechanism (LowerEnd::accuracy).
Planned<PldTerm> dominating(Planned<PldTerm> planned) {
  if (planned.term) planned.term->attained = false;
  return planned;
}

/// The loss resolution asked of a random-allocation epoch (its upper and
/// lower losses differ by about twice this, and the errors of E epochs add
/// up) is the accountant's tolerance over the number of epochs, within these
/// limits: finer than 1e-5 the grid limit decides anyway, coarser than 1e-2
/// the interval says little (random_allocation.hpp).
constexpr double kFinestAllocationResolution = 1e-5;
constexpr double kCoarsestAllocationResolution = 1e-2;

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
  static std::optional<Planned<PldTerm>> sampled(const Sampling& s, std::string_view kind) {
    if (std::holds_alternative<NotSampled>(s)) return std::nullopt;
    if (std::holds_alternative<WithoutReplacementSampling>(s))
      return Planned<PldTerm>::refuse(kWithoutReplacement);
    return Planned<PldTerm>::refuse(refuse_sampled("pld", s, "a gaussian or laplace", kind));
  }

  Planned<PldTerm> base(Kind kind, double parameter, const Sampling& s) const {
    if (auto why = epoch_refusal("pld", s, kind == Kind::gaussian, relation))
      return Planned<PldTerm>::refuse(*why);
    if (std::holds_alternative<ShuffleSampling>(s))
      // One unamplified release per epoch (uses_per_epoch), a sound upper
      // bound for shuffled batches; the lower bound of a shuffled run is a
      // separate question (dp_sgd_run.hpp, shuffle_lower_bound_event).
      return dominating(
          PldTerm{base_mechanism(kind, scaled_noise_multiplier(parameter, scale()), 1.0)});
    if (const auto* a = std::get_if<AllocationSampling>(&s)) return allocation(parameter, *a);
    if (std::holds_alternative<WithoutReplacementSampling>(s))
      return Planned<PldTerm>::refuse(kWithoutReplacement);
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
  Planned<PldTerm> operator()(const GaussianEvent& e, const Sampling& s) const {
    return base(Kind::gaussian, e.noise_multiplier, s);
  }
  Planned<PldTerm> operator()(const LaplaceEvent& e, const Sampling& s) const {
    return base(Kind::laplace, e.scale, s);
  }
  Planned<PldTerm> operator()(const NoOpEvent& e, const Sampling& s) const {
    if (auto r = sampled(s, e.kName)) return *r;
    return no_loss();
  }
  Planned<PldTerm> operator()(const NonPrivateEvent& e, const Sampling& s) const {
    if (auto r = sampled(s, e.kName)) return *r;
    return PldTerm{atoms_mechanism({{std::numeric_limits<double>::infinity(), 1.0}})};
  }
  // Events stated as a guarantee hold as stated under every relation.
  Planned<PldTerm> operator()(const EpsilonDeltaEvent& e, const Sampling& s) const {
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
  Planned<PldTerm> epsilon_dp(double eps, std::string_view kind, const Sampling& s) const {
    if (auto r = sampled(s, kind)) return *r;
    if (eps == 0) return no_loss();
    return dominating(PldTerm{epsilon_delta_pair(eps, 0)});
  }
  Planned<PldTerm> operator()(const ExponentialMechanismEvent& e, const Sampling& s) const {
    return epsilon_dp(e.epsilon, e.kName, s);
  }
  Planned<PldTerm> operator()(const PermuteAndFlipEvent& e, const Sampling& s) const {
    return epsilon_dp(e.epsilon, e.kName, s);
  }
  /// Discrete noise on an integer query: the shift is the sensitivity, times
  /// 2 under replace_one (our convention).
  Planned<PldTerm> discrete(Kind kind, double parameter, std::int64_t sensitivity,
                            std::string_view name, const Sampling& s) const {
    if (auto r = sampled(s, name)) return *r;
    pld::Mechanism m;
    m.kind = kind;
    m.parameter = parameter;
    m.shift = static_cast<double>(sensitivity) * scale();
    return PldTerm{std::move(m)};
  }
  Planned<PldTerm> operator()(const DiscreteLaplaceEvent& e, const Sampling& s) const {
    return discrete(Kind::discrete_laplace, e.noise_parameter, e.sensitivity, e.kName, s);
  }
  Planned<PldTerm> operator()(const DiscreteGaussianEvent& e, const Sampling& s) const {
    return discrete(Kind::discrete_gaussian, e.sigma, e.sensitivity, e.kName, s);
  }
  /// k-ary randomized response (the true bucket w.p. 1 − p + p/k, each other
  /// w.p. p/k; dp_accounting's supplementary "Privacy loss distributions", §4.6).
  Planned<PldTerm> operator()(const RandomizedResponseEvent& e, const Sampling& s) const {
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
  Planned<PldTerm> operator()(const ZcdpEvent& e, const Sampling&) const {
    return Planned<PldTerm>::refuse(
        "pld: " + name_of(e.kName) +
        " has no privacy loss distribution here (a zCDP bound does not determine one): use rdp");
  }
  /// Q = N(0, s²) vs P = Σ p_i N(c_i, s²) (Choquette-Choo et al. 2023, arXiv
  /// 2310.15526): the remove direction compares P with Q, add Q with P.
  Planned<PldTerm> operator()(const MixtureOfGaussiansEvent& e, const Sampling& s) const {
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
  Planned<PldTerm> operator()(const SingleEpochTreeAggregationEvent& e, const Sampling&) const {
    return Planned<PldTerm>::refuse("pld: " + name_of(e.kName) +
                                    " is not analysed with privacy loss distributions: use rdp");
  }
  Planned<PldTerm> operator()(const RepeatAndSelectEvent& e, const Sampling&) const {
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
  Planned<PldTerm> operator()(const TruncatedSubsampledGaussianEvent& e, const Sampling& s) const {
    if (auto r = sampled(s, e.kName)) return *r;
    const double q = e.sampling_probability, sigma = e.noise_multiplier;
    const std::int64_t n = e.dataset_size, b = e.truncated_batch_size;
    if (q == 0 || b == 0) return no_loss();  // nothing is ever released about a record
    Planned<PldTerm> plain = base(Kind::gaussian, sigma, Sampling{PoissonSampling{q}});
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

Plan<PldTerm> pld_plan(const DpEvent& event, std::optional<Neighbouring> relation) {
  return plan_event<PldTerm>(event, PldPlanner{relation}, "pld");
}

}  // namespace

PldAccountant::PldAccountant(const AccountantOptions& options) : relation_(options.neighbouring) {
  options_.interval = options.pld_interval;
  options_.tolerance = options.pld_tolerance;
  options_.share_releases = options.pld_share_releases;
  if (!(options_.interval >= 0) || !std::isfinite(options_.interval))
    throw InvalidParameter("pld_interval", "must be >= 0 (0 = automatic)");
  if (!std::isfinite(options_.tolerance))
    throw InvalidParameter("pld_tolerance", "must be a finite number");
}

std::optional<std::string> PldAccountant::unsupported_reason(const DpEvent& event) const {
  return pld_plan(event, relation_).refusal;
}

void PldAccountant::compose(const DpEvent& event, std::int64_t count) {
  const Plan<PldTerm> plan = pld_plan(event, relation_);
  if (plan.refusal) throw UnsupportedEvent(*plan.refusal);
  if (count <= 0) return;
  for (const auto& [term, n] : plan.terms) {
    if (n <= 0) continue;
    const std::int64_t times = checked_count_product(count, n);
    attained_ = attained_ && term.attained;
    if (term.mechanism) components_.push_back({*term.mechanism, times});
    for (const auto& a : term.allocations) {
      std::int64_t& total = allocations_[{a.steps, a.noise_multiplier}];
      if (__builtin_add_overflow(total, checked_count_product(times, a.count), &total))
        throw InvalidParameter("count", "composed count overflows");
    }
  }
}

namespace {

/// Random-allocation PLDs are costly (an FFT of millions of points) and pure:
/// the last few are remembered for the process, shared by every accountant
/// (plot points and solvers make one accountant per run).
std::shared_ptr<const RandomAllocationPlds> allocation_plds(std::int64_t steps, double sigma,
                                                            double resolution) {
  using Key = std::tuple<std::int64_t, double, double>;
  constexpr std::size_t kRemembered = 8;  // ~50 MiB of atoms at most
  static std::mutex mutex;
  static std::deque<std::pair<Key, std::shared_ptr<const RandomAllocationPlds>>> cache;
  const Key key{steps, sigma, resolution};
  {
    std::lock_guard lock(mutex);
    for (const auto& [k, v] : cache)
      if (k == key) return v;
  }
  auto made = std::make_shared<const RandomAllocationPlds>(
      random_allocation_plds(steps, sigma, resolution));
  std::lock_guard lock(mutex);
  if (cache.size() == kRemembered) cache.pop_back();
  cache.emplace_front(key, made);
  return made;
}

}  // namespace

std::pair<std::vector<pld::Component>, std::vector<pld::Component>> PldAccountant::bounds_lists()
    const {
  std::vector<pld::Component> upper = components_, lower = components_;
  for (const auto& [key, epochs] : allocations_) {
    // Discretised now that the total count of each (t, σ) is known, so that a
    // count written as self_composed or as a list of copies is the same.
    const double wanted =
        options_.tolerance > 0
            ? std::clamp(options_.tolerance / static_cast<double>(epochs),
                         kFinestAllocationResolution, kCoarsestAllocationResolution)
            : kCoarsestAllocationResolution;
    // Rounded down to a power of two (finer, never coarser), so that runs of
    // nearby lengths (plot points, the steps solver) share one discretisation.
    const double resolution = std::exp2(std::floor(std::log2(wanted)));
    const auto plds = allocation_plds(key.first, key.second, resolution);
    upper.push_back({plds->upper, epochs});
    lower.push_back({plds->lower, epochs});
  }
  return {std::move(upper), std::move(lower)};
}

Guarantee PldAccountant::make_guarantee(const pld::Interval& interval) const {
  Guarantee g;
  g.accountant = "pld";
  g.bound = BoundKind::upper;
  g.neighbouring = relation_.value_or(Neighbouring::add_remove);
  g.details.emplace_back("pld_interval", interval.interval);
  g.add_count("pld_grid_size", static_cast<std::int64_t>(interval.grid));
  g.add_count("pld_refinements", interval.refinements);
  g.lower_end = attained_ ? LowerEnd::lower_bound : LowerEnd::accuracy;
  g.notes = interval.notes;
  return g;
}

Guarantee PldAccountant::epsilon(double delta) const {
  if (allocations_.empty()) {
    const pld::Interval r = pld::epsilon_interval(components_, delta, options_);
    Guarantee g = make_guarantee(r);
    g.epsilon = r.upper;
    g.epsilon_lower = r.lower;
    g.delta = delta;
    return g;
  }
  const auto [upper, lower] = bounds_lists();
  const pld::Interval r = pld::epsilon_interval(upper, delta, options_);
  Guarantee g = make_guarantee(r);
  g.epsilon = r.upper;
  g.epsilon_lower = pld::epsilon_interval(lower, delta, options_).lower;
  g.delta = delta;
  return g;
}

AttackBounds PldAccountant::attack_bounds(std::span<const double> fprs) const {
  check_fprs(fprs);
  const auto [upper, lower] = bounds_lists();
  const pld::TradeoffInterval t = pld::tradeoff_interval(upper, lower, fprs, options_);
  AttackBounds out;
  out.accountant = "pld";
  out.neighbouring = relation_.value_or(Neighbouring::add_remove);
  out.fpr.assign(fprs.begin(), fprs.end());
  out.tpr = t.tpr_upper;
  out.tpr_lower = t.tpr_lower;
  out.advantage = t.advantage_upper;
  out.advantage_lower = t.advantage_lower;
  out.lower_end = attained_ ? LowerEnd::lower_bound : LowerEnd::accuracy;
  out.details.emplace_back("pld_interval", t.interval);
  out.notes = t.notes;
  return out;
}

Guarantee PldAccountant::delta(double epsilon) const {
  if (allocations_.empty()) {
    const pld::Interval r = pld::delta_interval(components_, epsilon, options_);
    Guarantee g = make_guarantee(r);
    g.epsilon = epsilon;
    g.delta = r.upper;
    g.delta_lower = r.lower;
    return g;
  }
  const auto [upper, lower] = bounds_lists();
  const pld::Interval r = pld::delta_interval(upper, epsilon, options_);
  Guarantee g = make_guarantee(r);
  g.epsilon = epsilon;
  g.delta = r.upper;
  g.delta_lower = pld::delta_interval(lower, epsilon, options_).lower;
  return g;
}

}  // namespace dpb
