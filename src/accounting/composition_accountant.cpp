#include "accounting/composition_accountant.hpp"

#include <algorithm>
#include <boost/math/tools/minima.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "accounting/amplification.hpp"
#include "accounting/composition.hpp"
#include "accounting/errors.hpp"
#include "accounting/event_walk.hpp"
#include "accounting/gaussian_mechanism.hpp"
#include "accounting/laplace_mechanism.hpp"
#include "accounting/mixture_dominance.hpp"
#include "accounting/outward.hpp"
#include "accounting/rdp_events.hpp"
#include "accounting/rdp_without_replacement.hpp"

namespace dpb {
namespace {

/// Ulps by which randomized response's pure ε is rounded up (its planner below).
constexpr int kRandomizedResponseUlps = 8;

using Step = CompositionAccountant::Step;
constexpr double kInf = std::numeric_limits<double>::infinity();

// The search for the split of the total δ between the steps (δ0) and the
// theorem. Every split gives a valid bound; these settings only trade how
// tight the reported split is against time.

/// Solver precision (bits) of optimal_epsilon while the split is searched
/// (~1.5e-11 relative: enough to rank splits; the winner is re-solved at kReportBits).
constexpr int kSearchBits = 36;
/// Solver precision (bits) of the reported ε: full double precision.
constexpr int kReportBits = 52;
/// Brent's precision on the split, in bits: about half of double's 52, the most
/// a minimiser can resolve (near a minimum f changes quadratically).
constexpr int kBrentBits = 24;
/// Brent iteration cap (each iteration evaluates the composed ε or δ once).
constexpr std::uintmax_t kBrentMaxIterations = 60;
/// ε(δ): log δ0 searched over [log δ0_max − 60, log δ0_max]; a δ0 below e^−60
/// (1e-26) of the largest only raises ε0 without buying any slack.
constexpr double kEpsilonSplitLogRange = 60;
/// ε(δ): grid points over that range before Brent (2 nats, ×7.4 in δ0, apart).
constexpr int kEpsilonSplitGrid = 30;
/// δ(ε): the lowest log δ0 searched, e^−700 ≈ 1e-304, next to the smallest
/// normal double (e^−708): the best δ0 can be tiny when the target ε is large.
constexpr double kDeltaSplitLogFloor = -700;
/// δ(ε): grid points over [−700, log δ0_max] before Brent (~10 nats apart).
constexpr int kDeltaSplitGrid = 70;
/// log of a zero total δ for the minimiser: below the log of every positive double.
constexpr double kLogOfZero = -1e300;

std::int64_t checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) throw InvalidParameter("count", "too many steps");
  return r;
}

/// Every leaf kind, explicitly (no catch-all: a new kind must be added here).
/// A leaf becomes one Step: its per-use (ε0, δ0) profile, amplified when
/// sampled (docs/composition.md#amplification-poisson). `relation`: the neighbouring relation the
/// user fixed, or nullopt (inferred: sampled_without_replacement fixes replace-one, every other
/// leaf is read under add/remove, as before).
struct StepPlanner {
  std::optional<Neighbouring> relation;

  using P = Planned<Step>;

  /// The relation a leaf is analysed under.
  Neighbouring leaf_relation(const Sampling& s) const {
    if (relation) return *relation;
    return std::holds_alternative<WithoutReplacementSampling>(s) ? Neighbouring::replace_one
                                                                 : Neighbouring::add_remove;
  }
  /// How far one record moves a query, in units of its add/remove sensitivity.
  double sensitivity(const Sampling& s) const {
    return leaf_relation(s) == Neighbouring::replace_one ? kReplaceOneSensitivity : 1.0;
  }
  static Step make(Step::Kind kind, double parameter, double delta = 0) {
    Step st{kind, parameter};
    st.delta = delta;
    return st;
  }
  /// A per-use (ε, δ) step under `s`: amplified by sampling
  /// (docs/composition.md#amplification-poisson; Balle, Barthe & Gaboardi 2018, Thm 8 for Poisson
  /// under add/remove or replace-special, Thm 9 without replacement under replace-one).
  P sampled(Step st, const Sampling& s, std::string_view name) const {
    if (auto why = epoch_refusal("composition", s, false, relation)) return P::refuse(*why);
    st.replace_one = leaf_relation(s) == Neighbouring::replace_one;
    if (const auto* p = std::get_if<PoissonSampling>(&s)) {
      if (relation == Neighbouring::replace_one)
        return P::refuse("composition: poisson_sampled " + std::string(name) +
                         " under replace_one neighbouring has no amplification bound here "
                         "(Poisson amplification is for add/remove and replace-special)");
      st.q = p->probability;
    } else if (const auto* w = std::get_if<WithoutReplacementSampling>(&s)) {
      if (relation && *relation != Neighbouring::replace_one)
        return P::refuse(
            "composition: sampled_without_replacement is analysed under replace_one "
            "neighbouring only (Balle, Barthe & Gaboardi 2018, Thm 9), not " +
            std::string(to_string(*relation)));
      st.q = w->ratio();
    }
    return st;
  }
  static P unsampled_only(const Sampling& s, std::string_view name) {
    return P::refuse(std::string("composition: ") + sampled_event_name(s) + " of a " +
                     std::string(name) + " event is not analysed");
  }
  /// Kinds analysed under replace-one and replace-special only.
  std::optional<std::string> needs_replace(std::string_view name) const {
    if (!relation)
      return "composition: " + std::string(name) +
             " has no analysis under add_remove neighbouring (a record is replaced, not "
             "removed), and none was chosen: choose neighbouring replace_one or replace_special";
    if (*relation == Neighbouring::add_remove)
      return "composition: " + std::string(name) +
             " has no analysis under add_remove neighbouring (a record is replaced, not "
             "removed): use replace_one or replace_special";
    return std::nullopt;
  }

  P operator()(const GaussianEvent& e, const Sampling& s) const {
    if (auto why = epoch_refusal("composition", s, true, relation)) return P::refuse(*why);
    if (is_epoch_sampling(s)) {
      // k unamplified releases per epoch (uses_per_epoch): k Gaussians
      // compose exactly to one at σ/√k (Dong, Roth & Su 2022, Cor. 3.3).
      Step st{Step::Kind::gaussian,
              scaled_noise_multiplier(
                  e.noise_multiplier,
                  sensitivity(s) * std::sqrt(static_cast<double>(uses_per_epoch(s))))};
      st.replace_one = leaf_relation(s) == Neighbouring::replace_one;
      return st;
    }
    if (const auto* p = std::get_if<PoissonSampling>(&s)) {
      if (relation == Neighbouring::replace_one)
        return P::refuse(
            "composition: poisson_sampled gaussian under replace_one neighbouring is not "
            "analysed here (Poisson amplification is for add/remove and replace-special): use "
            "pld");
      if (p->probability == 1) return Step{Step::Kind::gaussian, e.noise_multiplier};
      return Step{Step::Kind::sampled_gaussian, e.noise_multiplier, p->probability, false};
    }
    if (const auto* w = std::get_if<WithoutReplacementSampling>(&s)) {
      if (relation && *relation != Neighbouring::replace_one)
        return P::refuse(
            "composition: sampled_without_replacement is analysed under replace_one "
            "neighbouring only (Balle, Barthe & Gaboardi 2018, Thm 9), not " +
            std::string(to_string(*relation)));
      // Replace-one moves the clipped sum by up to 2 clipping norms: the
      // Gaussian's noise relative to its sensitivity is σ/2.
      return Step{Step::Kind::sampled_gaussian,
                  scaled_noise_multiplier(e.noise_multiplier, kReplaceOneSensitivity), w->ratio(),
                  true};
    }
    Step st{Step::Kind::gaussian, scaled_noise_multiplier(e.noise_multiplier, sensitivity(s))};
    st.replace_one = leaf_relation(s) == Neighbouring::replace_one;
    return st;
  }
  P operator()(const LaplaceEvent& e, const Sampling& s) const {
    if (!std::holds_alternative<NotSampled>(s))
      return P::refuse(refuse_sampled("composition", s, "a gaussian", e.kName));
    Step st{Step::Kind::laplace, e.scale / sensitivity(s)};
    st.replace_one = leaf_relation(s) == Neighbouring::replace_one;
    return st;
  }
  P operator()(const NoOpEvent& e, const Sampling& s) const {
    if (!std::holds_alternative<NotSampled>(s)) return unsampled_only(s, e.kName);
    return make(Step::Kind::none, 0);
  }
  P operator()(const NonPrivateEvent& e, const Sampling& s) const {
    if (!std::holds_alternative<NotSampled>(s)) return unsampled_only(s, e.kName);
    return make(Step::Kind::non_private, kInf);
  }
  P operator()(const EpsilonDeltaEvent& e, const Sampling& s) const {
    return sampled(make(Step::Kind::fixed, e.epsilon, e.delta), s, e.kName);
  }
  P operator()(const DiscreteLaplaceEvent& e, const Sampling& s) const {
    // Pure (aΔ·s)-DP: the privacy loss a(|x − sΔ| − |x|) is within ±aΔs.
    return sampled(make(Step::Kind::fixed,
                        e.noise_parameter * static_cast<double>(e.sensitivity) * sensitivity(s)),
                   s, e.kName);
  }
  P operator()(const DiscreteGaussianEvent& e, const Sampling& s) const {
    // ρ-zCDP with ρ = (sΔ)²/(2σ²) (Canonne, Kamath & Steinke 2020, Thm 4).
    const double d = static_cast<double>(e.sensitivity) * sensitivity(s);
    return sampled(make(Step::Kind::zcdp, d * d / (2 * e.sigma * e.sigma)), s, e.kName);
  }
  P operator()(const RandomizedResponseEvent& e, const Sampling& s) const {
    if (!std::holds_alternative<NotSampled>(s)) return unsampled_only(s, e.kName);
    if (auto why = needs_replace(e.kName)) return P::refuse(*why);
    // Pure ε-DP with ε the largest log-ratio of output probabilities:
    // replace-one P = (1 − p + p/k, p/k, ...) against its swap, ε = log(1 +
    // k(1 − p)/p); replace-special against the uniform output of the null
    // record, ε = max(log(k(1 − p) + p), −log p).
    const double p = e.noise_parameter, k = static_cast<double>(e.num_buckets);
    double eps = 0;
    if (e.num_buckets > 1 && p < 1) {
      if (p == 0)
        eps = kInf;
      else if (*relation == Neighbouring::replace_one)
        eps = std::log1p(k * (1 - p) / p);
      else
        eps = std::max(std::log1p((k - 1) * (1 - p)), -std::log(p));
      // Rounded up: 1 − p, a product, a quotient and log1p (whose condition
      // number is ≤ 1), ≤ 4 ulps; twice that for room.
      eps = outward::up(eps, kRandomizedResponseUlps);
    }
    return make(Step::Kind::fixed, eps);
  }
  P operator()(const ZcdpEvent& e, const Sampling& s) const {
    return sampled(make(Step::Kind::zcdp, e.rho, e.xi), s, e.kName);
  }
  P operator()(const ExponentialMechanismEvent& e, const Sampling& s) const {
    return sampled(make(Step::Kind::fixed, e.epsilon), s, e.kName);
  }
  P operator()(const PermuteAndFlipEvent& e, const Sampling& s) const {
    return sampled(make(Step::Kind::fixed, e.epsilon), s, e.kName);
  }
  P operator()(const MixtureOfGaussiansEvent& e, const Sampling& s) const {
    if (!std::holds_alternative<NotSampled>(s)) return unsampled_only(s, e.kName);
    if (relation == Neighbouring::replace_one)
      return P::refuse("composition: " + std::string(e.kName) +
                       " has no analysis under replace_one (its pair compares one side against "
                       "N(0, s^2)): use add_remove or replace_special");
    const MixtureDominance d = dominating_sampled_gaussian(e);
    if (d.probability == 0) return make(Step::Kind::none, 0);
    if (d.probability == 1) return Step{Step::Kind::gaussian, d.noise_multiplier};
    return Step{Step::Kind::sampled_gaussian, d.noise_multiplier, d.probability, false};
  }
  P operator()(const SingleEpochTreeAggregationEvent& e, const Sampling& s) const {
    if (!std::holds_alternative<NotSampled>(s)) return unsampled_only(s, e.kName);
    if (auto why = needs_replace(e.kName)) return P::refuse(*why);
    // One record reaches at most `depth` node sums (Kairouz et al. 2021,
    // App. D): a Gaussian mechanism of L2 sensitivity s·√depth.
    const double depth = tree_aggregation_depth(e.step_counts);
    Step st{Step::Kind::gaussian,
            scaled_noise_multiplier(e.noise_multiplier, sensitivity(s) * std::sqrt(depth))};
    st.replace_one = *relation == Neighbouring::replace_one;
    return st;
  }
  P operator()(const RepeatAndSelectEvent& e, const Sampling&) const {
    return P::refuse("composition: " + std::string(e.kName) +
                     " has no per-use (epsilon, delta) profile implemented here: use rdp "
                     "(Papernot & Steinke 2022)");
  }
  P operator()(const TruncatedSubsampledGaussianEvent& e, const Sampling&) const {
    return P::refuse("composition: " + std::string(e.kName) +
                     " has no per-use (epsilon, delta) profile implemented here: use pld");
  }
};

/// docs/composition.md#homogeneous.
constexpr const char* kHeterogeneous =
    "composition: only repetitions of one mechanism are supported (homogeneous composition); "
    "this run mixes different mechanisms or parameters";

/// The one Step that `event` repeats (after `held`, what the accountant
/// already holds) and how often, or why the theorems do not apply.
struct Collected {
  std::optional<Step> step;
  std::int64_t count = 0;
  std::optional<std::string> error;
};

Collected collect(const DpEvent& event, std::int64_t mult, const std::optional<Step>& held,
                  std::optional<Neighbouring> relation) {
  Collected c;
  c.step = held;
  const Plan<Step> plan = plan_event<Step>(event, StepPlanner{relation}, "composition");
  if (plan.refusal) {
    c.error = plan.refusal;
    return c;
  }
  for (const auto& [step, n] : plan.terms) {
    if (n == 0 || step.kind == Step::Kind::none) continue;
    if (c.step && !(*c.step == step)) {
      c.error = kHeterogeneous;
      return c;
    }
    c.step = step;
    c.count = checked_add(c.count, checked_count_product(mult, n));
  }
  return c;
}

// Per-step (ε0, δ0) profile of the mechanism, after amplification
// (docs/composition.md#per-step-profiles).
// δ0 ≤ max_step_delta(step).

/// Relative round-up of the closed-form profiles below (a few roundings).
constexpr double kProfileRoundUp = 8 * std::numeric_limits<double>::epsilon();

/// Whether the step is a sampled one (amplified: docs/composition.md#amplification-poisson).
bool amplified(const Step& s) {
  return s.kind == Step::Kind::sampled_gaussian ||
         ((s.kind == Step::Kind::fixed || s.kind == Step::Kind::zcdp) && s.q < 1);
}

/// Whether the step has a finite ε at δ0 = 0.
bool is_pure(const Step& s) {
  return s.kind == Step::Kind::laplace || (s.kind == Step::Kind::fixed && s.delta == 0) ||
         (s.kind == Step::Kind::zcdp && s.parameter == 0);
}

double max_step_delta(const Step& s) { return amplified(s) ? s.q : 1.0; }

// The (ε, δ) randomized response (Kairouz, Oh & Viswanath 2015, Thm 2.1:
// every (ε, δ)-DP mechanism is a post-processing of it): outputs with
// probabilities (δ, 0, (1−δ)p, (1−δ)(1−p)) against their mirror image,
// p = e^ε/(1 + e^ε), so its hockey-stick divergence at ε0 < ε is
//   δ(ε0) = δ + (1 − δ)(e^ε − e^{ε0})/(1 + e^ε) = δ + (1 − δ)(1 − e^{ε0−ε})/(1 + e^{−ε}).
double fixed_delta(double eps, double delta, double e0) {
  if (e0 >= eps) return delta;
  const double v = delta + (1 - delta) * (-std::expm1(e0 - eps)) / (1 + std::exp(-eps));
  return std::min(1.0, v * (1 + kProfileRoundUp));
}
/// Its inverse: the smallest ε0 with fixed_delta(ε0) ≤ δ0 (inf when δ0 < δ).
double fixed_epsilon(double eps, double delta, double d0) {
  if (d0 < delta) return kInf;
  if (d0 >= 1) return 0;
  const double x = (d0 - delta) / (1 - delta);
  // e^{ε0} = e^ε(1 − x) − x, i.e. ε0 = ε + log((1 − x) − x e^{−ε}).
  const double v = (1 - x) - x * std::exp(-eps);
  if (!(v > std::exp(-eps))) return 0;
  return std::min(eps, (eps + std::log(v)) * (1 + kProfileRoundUp));
}

// (ξ, ρ)-zCDP is (ξ + ρ + 2√(ρ log(1/δ0)), δ0)-DP for every δ0 > 0 (Bun &
// Steinke 2016, Prop. 1.3); inverted, δ(ε0) = exp(−(ε0 − ξ − ρ)²/(4ρ)) above
// ξ + ρ. ρ = 0 is pure ξ-DP (every Rényi divergence, the ∞ one too, ≤ ξ).
double zcdp_epsilon(double rho, double xi, double d0) {
  if (rho == 0) return xi;
  if (d0 >= 1) return xi + rho;
  if (!(d0 > 0)) return kInf;
  return (xi + rho + 2 * std::sqrt(rho * -std::log(d0))) * (1 + kProfileRoundUp);
}
double zcdp_delta(double rho, double xi, double e0) {
  if (rho == 0) return e0 >= xi ? 0 : 1;
  const double t = e0 - xi - rho;
  if (!(t > 0)) return 1;
  return std::min(1.0, std::exp(-t * t / (4 * rho)) * (1 + kProfileRoundUp));
}

/// The profile of the mechanism itself (before sampling).
double base_epsilon(const Step& s, double d0) {
  switch (s.kind) {
    case Step::Kind::gaussian:
    case Step::Kind::sampled_gaussian:
      return gaussian_epsilon(s.parameter, d0);
    case Step::Kind::laplace:
      return laplace_epsilon(s.parameter, d0);
    case Step::Kind::fixed:
      return fixed_epsilon(s.parameter, s.delta, d0);
    case Step::Kind::zcdp:
      return zcdp_epsilon(s.parameter, s.delta, d0);
    case Step::Kind::non_private:
      return kInf;
    case Step::Kind::none:
      return 0;
  }
  return kInf;
}

double base_delta(const Step& s, double e0) {
  switch (s.kind) {
    case Step::Kind::gaussian:
    case Step::Kind::sampled_gaussian:
      return gaussian_delta(s.parameter, e0);
    case Step::Kind::laplace:
      return laplace_delta(s.parameter, e0);
    case Step::Kind::fixed:
      return fixed_delta(s.parameter, s.delta, e0);
    case Step::Kind::zcdp:
      return zcdp_delta(s.parameter, s.delta, e0);
    case Step::Kind::non_private:
      return 1;
    case Step::Kind::none:
      return 0;
  }
  return 1;
}

double step_epsilon(const Step& s, double d0) {
  if (!amplified(s)) return base_epsilon(s, d0);
  if (s.q == 0) return 0;
  const double inner = base_epsilon(s, std::min(1.0, d0 / s.q));
  if (!std::isfinite(inner)) return kInf;
  return amplify_poisson(inner, 0, s.q).epsilon;
}

double step_delta(const Step& s, double e0) {
  if (!amplified(s)) return base_delta(s, e0);
  if (s.q == 0) return 0;
  return s.q * base_delta(s, amplification_inner_epsilon(e0, s.q));
}

// Minimises f over u ∈ [lo, hi]: a coarse grid, then Brent around the best
// grid point. Returns the argmin (any u is a valid split; this only tightens).
double minimise(const std::function<double(double)>& f, double lo, double hi, int grid) {
  if (!(hi > lo)) return hi;
  double best_u = hi;
  double best = f(hi);
  const double h = (hi - lo) / grid;
  int best_i = grid;
  for (int i = 0; i < grid; ++i) {
    const double u = lo + h * i;
    const double v = f(u);
    if (v < best) {
      best = v;
      best_u = u;
      best_i = i;
    }
  }
  if (!std::isfinite(best)) return best_u;
  const double a = std::max(lo, lo + h * (best_i - 1));
  const double b = std::min(hi, lo + h * (best_i + 1));
  std::uintmax_t iters = kBrentMaxIterations;
  const auto r = boost::math::tools::brent_find_minima(f, a, b, kBrentBits, iters);
  return r.second < best ? r.first : best_u;
}

}  // namespace

std::string_view to_string(CompositionMethod m) {
  switch (m) {
    case CompositionMethod::basic:
      return "basic";
    case CompositionMethod::advanced:
      return "advanced";
    case CompositionMethod::optimal:
      return "optimal";
  }
  return "optimal";
}

CompositionAccountant::CompositionAccountant(const AccountantOptions& options)
    : method_(options.composition), relation_(options.neighbouring) {}

std::optional<std::string> CompositionAccountant::unsupported_reason(const DpEvent& event) const {
  const Collected c = collect(event, 1, step_, relation_);
  if (c.error) return c.error;
  return count_reason(c.count);
}

std::optional<std::string> CompositionAccountant::count_reason(std::int64_t more) const {
  const auto limit = max_count();
  if (!limit || more <= *limit - count_) return std::nullopt;
  return "composition: optimal composition evaluates at most " + std::to_string(*limit) +
         " steps, this event has " + std::to_string(count_ + more) +
         " (advanced and basic composition, rdp and pld have no such limit)";
}

void CompositionAccountant::compose(const DpEvent& event, std::int64_t count) {
  if (count <= 0) {
    if (auto why = unsupported_reason(event)) throw UnsupportedEvent(*why);
    return;
  }
  const Collected c = collect(event, count, step_, relation_);
  if (c.error) throw UnsupportedEvent(*c.error);
  if (auto why = count_reason(c.count)) throw UnsupportedEvent(*why);
  const std::int64_t total = checked_add(count_, c.count);
  step_ = c.step;
  count_ = total;
}

std::optional<std::int64_t> CompositionAccountant::max_count() const {
  if (method_ == CompositionMethod::optimal) return kMaxOptimalCount;
  return std::nullopt;
}

Guarantee CompositionAccountant::base() const {
  Guarantee g;
  g.accountant = "composition";
  g.bound = BoundKind::upper;
  g.neighbouring = relation_                     ? *relation_
                   : step_ && step_->replace_one ? Neighbouring::replace_one
                                                 : Neighbouring::add_remove;
  g.notes.push_back(std::string(to_string(method_)) + " composition of " + std::to_string(count_) +
                    " steps, each (epsilon_step, delta_step)-DP");
  return g;
}

Guarantee CompositionAccountant::epsilon(double delta) const {
  if (!(delta > 0 && delta < 1)) throw InvalidParameter("delta", "must be in (0, 1)");
  Guarantee g = base();
  g.delta = delta;
  if (!step_ || count_ == 0) {
    g.epsilon = 0;
    return g;
  }
  const Step s = *step_;
  const std::int64_t k = count_;
  const double kd = static_cast<double>(k);
  const bool pure = is_pure(s);
  double d0 = 0;
  double eps = kInf;
  double slack = 0;
  // ε of the composition for a per-step δ0; `bits` is the solver precision.
  auto total_eps = [&](double step_d, int bits) -> double {
    try {
      const double e0 = step_epsilon(s, step_d);
      if (!std::isfinite(e0)) return kInf;
      switch (method_) {
        case CompositionMethod::basic:
          return basic_epsilon(e0, step_d, k, delta);
        case CompositionMethod::advanced:
          return advanced_epsilon(e0, step_d, k, delta);
        case CompositionMethod::optimal:
          return optimal_epsilon(e0, step_d, k, delta, bits);
      }
    } catch (const NoSolution&) {
    }
    return kInf;
  };
  if (method_ == CompositionMethod::basic) {
    d0 = std::min(delta / kd, max_step_delta(s));
    while (kd * d0 > delta) d0 = std::nextafter(d0, 0.0);
    eps = total_eps(d0, kReportBits);
  } else {
    // Largest per-step δ0 that leaves room for the theorem's own δ.
    double d0_max =
        method_ == CompositionMethod::advanced ? delta / kd : -std::expm1(std::log1p(-delta) / kd);
    d0_max = std::min(d0_max, max_step_delta(s));
    const double u_hi = std::log(d0_max);
    const double u = minimise([&](double v) { return total_eps(std::exp(v), kSearchBits); },
                              u_hi - kEpsilonSplitLogRange, u_hi, kEpsilonSplitGrid);
    d0 = std::exp(u);
    eps = total_eps(d0, kReportBits);
    if (pure) {
      const double e_pure = total_eps(0, kReportBits);
      if (e_pure <= eps) {
        eps = e_pure;
        d0 = 0;
      }
    }
  }
  if (method_ == CompositionMethod::optimal)
    slack = delta + std::expm1(kd * std::log1p(-d0));  // δ − (1 − (1−δ0)^k)
  else
    slack = delta - kd * d0;
  g.epsilon = eps;
  g.add_count("composed_count", k);
  g.details.insert(
      g.details.end(),
      {{"epsilon_step", step_epsilon(s, d0)}, {"delta_step", d0}, {"delta_slack", slack}});
  return g;
}

Guarantee CompositionAccountant::delta(double epsilon) const {
  if (!(epsilon >= 0)) throw InvalidParameter("epsilon", "must be a number >= 0");
  Guarantee g = base();
  g.epsilon = epsilon;
  if (!step_ || count_ == 0) {
    g.delta = 0;
    return g;
  }
  const Step s = *step_;
  const std::int64_t k = count_;
  const double kd = static_cast<double>(k);
  const bool pure = is_pure(s);
  // δ of the composition at ε for a per-step δ0 (ε0 from the step's profile).
  auto total_delta = [&](double step_d) -> double {
    const double e0 = step_epsilon(s, step_d);
    if (!std::isfinite(e0)) return 1;
    if (method_ == CompositionMethod::advanced) {
      try {
        return advanced_delta(e0, step_d, k, epsilon);
      } catch (const NoSolution&) {
        return 1;  // ε at or below the theorem's kε0(e^ε0 − 1): only the trivial δ = 1
      }
    }
    return optimal_delta(e0, step_d, k, epsilon);
  };
  double d0 = 0;
  double total = 1;
  double e0 = 0;
  if (method_ == CompositionMethod::basic) {
    e0 = epsilon / kd;
    d0 = step_delta(s, e0);
    total = std::min(1.0, kd * d0);
  } else {
    const double u_hi = std::log(max_step_delta(s));
    const double u = minimise(
        [&](double v) {
          const double t = total_delta(std::exp(v));
          return t > 0 ? std::log(t) : kLogOfZero;
        },
        kDeltaSplitLogFloor, u_hi, kDeltaSplitGrid);
    d0 = std::exp(u);
    total = total_delta(d0);
    if (pure) {
      const double t0 = total_delta(0);
      if (t0 <= total) {
        total = t0;
        d0 = 0;
      }
    }
    e0 = step_epsilon(s, d0);
  }
  const double slack = method_ == CompositionMethod::optimal
                           ? total + std::expm1(kd * std::log1p(-d0))
                           : total - kd * d0;
  g.delta = total;
  g.add_count("composed_count", k);
  g.details.insert(g.details.end(),
                   {{"epsilon_step", e0}, {"delta_step", d0}, {"delta_slack", slack}});
  return g;
}

}  // namespace dpb
