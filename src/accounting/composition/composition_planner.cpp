#include "accounting/composition/composition_planner.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "accounting/events/event_walk.hpp"
#include "accounting/events/mixture_dominance.hpp"
#include "accounting/numerics/double_limits.hpp"
#include "accounting/numerics/outward.hpp"

namespace dpb::detail {
namespace {

/// Ulps by which randomized response's pure ε is rounded up (its planner below).
constexpr int kRandomizedResponseUlps = 8;

using Step = CompositionAccountant::Step;
using Ledger = CompositionAccountant::Ledger;

/// Every leaf kind, explicitly (no catch-all: a new kind must be added here).
/// A leaf becomes one Step: its per-use (ε0, δ0) profile, amplified when
/// sampled (docs/composition.md#amplification-poisson). `relation`: the neighbouring relation the
/// user fixed, or nullopt (inferred: sampled_without_replacement fixes replace-one, every other
/// leaf is read under add/remove, as before).
struct StepPlanner {
  std::optional<Neighbouring> relation;

  using P = Planned<Step>;

  /// The relation a leaf is analysed under.
  Neighbouring leaf_relation(const LeafSampling& s) const {
    if (relation) return *relation;
    return std::holds_alternative<WithoutReplacementSampling>(s) ? Neighbouring::replace_one
                                                                 : Neighbouring::add_remove;
  }
  /// How far one record moves a query, in units of its add/remove sensitivity.
  double sensitivity(const LeafSampling& s) const {
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
  P sampled(Step st, const LeafSampling& s, std::string_view name) const {
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
  static P unsampled_only(const LeafSampling& s, std::string_view name) {
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

  P operator()(const GaussianEvent& e, const LeafSampling& s) const {
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
  P operator()(const LaplaceEvent& e, const LeafSampling& s) const {
    if (!std::holds_alternative<NotSampled>(s))
      return P::refuse(refuse_sampled("composition", s, "a gaussian", e.kName));
    Step st{Step::Kind::laplace, e.scale / sensitivity(s)};
    st.replace_one = leaf_relation(s) == Neighbouring::replace_one;
    return st;
  }
  P operator()(const NoOpEvent& e, const LeafSampling& s) const {
    if (!std::holds_alternative<NotSampled>(s)) return unsampled_only(s, e.kName);
    return make(Step::Kind::none, 0);
  }
  P operator()(const NonPrivateEvent& e, const LeafSampling& s) const {
    if (!std::holds_alternative<NotSampled>(s)) return unsampled_only(s, e.kName);
    return make(Step::Kind::non_private, kInf);
  }
  P operator()(const EpsilonDeltaEvent& e, const LeafSampling& s) const {
    return sampled(make(Step::Kind::fixed, e.epsilon, e.delta), s, e.kName);
  }
  P operator()(const DiscreteLaplaceEvent& e, const LeafSampling& s) const {
    // Pure (aΔ·s)-DP: the privacy loss a(|x − sΔ| − |x|) is within ±aΔs.
    return sampled(make(Step::Kind::fixed,
                        e.noise_parameter * static_cast<double>(e.sensitivity) * sensitivity(s)),
                   s, e.kName);
  }
  P operator()(const DiscreteGaussianEvent& e, const LeafSampling& s) const {
    // ρ-zCDP with ρ = (sΔ)²/(2σ²) (Canonne, Kamath & Steinke 2020, Thm 4).
    const double d = static_cast<double>(e.sensitivity) * sensitivity(s);
    return sampled(make(Step::Kind::zcdp, d * d / (2 * e.sigma * e.sigma)), s, e.kName);
  }
  P operator()(const RandomizedResponseEvent& e, const LeafSampling& s) const {
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
  P operator()(const ZcdpEvent& e, const LeafSampling& s) const {
    return sampled(make(Step::Kind::zcdp, e.rho, e.xi), s, e.kName);
  }
  P operator()(const ExponentialMechanismEvent& e, const LeafSampling& s) const {
    return sampled(make(Step::Kind::fixed, e.epsilon), s, e.kName);
  }
  P operator()(const PermuteAndFlipEvent& e, const LeafSampling& s) const {
    return sampled(make(Step::Kind::fixed, e.epsilon), s, e.kName);
  }
  P operator()(const MixtureOfGaussiansEvent& e, const LeafSampling& s) const {
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
  P operator()(const SingleEpochTreeAggregationEvent& e, const LeafSampling& s) const {
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
  P operator()(const RepeatAndSelectEvent& e, const LeafSampling&) const {
    return P::refuse("composition: " + std::string(e.kName) +
                     " has no per-use (epsilon, delta) profile implemented here: use rdp "
                     "(Papernot & Steinke 2022)");
  }
  P operator()(const TruncatedSubsampledGaussianEvent& e, const LeafSampling&) const {
    return P::refuse("composition: " + std::string(e.kName) +
                     " has no per-use (epsilon, delta) profile implemented here: use pld");
  }
};

/// docs/composition.md#heterogeneous.
constexpr const char* kMixedRelations =
    "composition: this run mixes steps analysed under replace_one neighbouring (sampled without "
    "replacement) with steps analysed under add_remove; no relation holds for both (choose "
    "neighbouring replace_one, or use rdp or pld)";

}  // namespace

CollectedSteps collect_steps(const DpEvent& event, std::int64_t mult, const Ledger& held,
                             std::optional<Neighbouring> relation) {
  CollectedSteps c;
  c.ledger = held;
  const Plan<Step> plan = plan_event<Step>(event, StepPlanner{relation}, "composition");
  if (plan.refusal) {
    c.error = plan.refusal;
    return c;
  }
  for (const auto& term : plan.terms) {
    const Step& step = term.first;  // a name, not a binding: clang 14 cannot capture those
    const std::int64_t n = term.second;
    if (n == 0 || step.kind == Step::Kind::none) continue;
    const std::int64_t uses = checked_count_product(mult, n);
    auto same = std::find_if(c.ledger.begin(), c.ledger.end(),
                             [&step](const auto& entry) { return entry.first == step; });
    if (same != c.ledger.end())
      same->second = checked_count_sum(same->second, uses);
    else
      c.ledger.emplace_back(step, uses);
    if (!relation && c.ledger.front().first.replace_one != step.replace_one) {
      c.error = kMixedRelations;
      return c;
    }
    c.count = checked_count_sum(c.count, uses);
  }
  return c;
}

}  // namespace dpb::detail
