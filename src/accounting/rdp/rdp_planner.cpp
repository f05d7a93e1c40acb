#include "accounting/rdp/rdp_planner.hpp"

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "accounting/events/mixture_dominance.hpp"

namespace dpb::detail {
namespace {

RdpTerm make_term(RdpTerm::Kind kind, double parameter = 0, double ratio = 1) {
  RdpTerm t{};
  t.kind = kind;
  t.parameter = parameter;
  t.ratio = ratio;
  return t;
}

std::string rdp_refusal(std::string_view what) { return "rdp: " + std::string(what); }

/// Every leaf kind, explicitly (no catch-all: a new kind must be added here).
/// `relation`: the neighbouring relation the user fixed, or nullopt (inferred).
struct RdpPlanner {
  std::optional<Neighbouring> relation;

  using P = Planned<RdpTerm>;

  /// The refusal of a kind this accountant analyses only unsampled.
  static P unsampled_only(const LeafSampling& s, std::string_view name) {
    return P::refuse(refuse_sampled("rdp", s, "a gaussian", name) +
                     " (no RDP analysis of a sampled " + std::string(name) + ")");
  }
  /// Kinds analysed under replace-one and replace-special only.
  std::optional<std::string> needs_replace(std::string_view name, std::string_view why) const {
    if (!relation)
      return rdp_refusal(std::string(name) + " has no analysis under add_remove neighbouring (" +
                         std::string(why) +
                         "), and none was chosen: choose neighbouring replace_one or "
                         "replace_special");
    if (*relation == Neighbouring::add_remove)
      return rdp_refusal(std::string(name) + " has no analysis under add_remove neighbouring (" +
                         std::string(why) + "): use replace_one or replace_special");
    return std::nullopt;
  }

  P operator()(const GaussianEvent& e, const LeafSampling& s) const {
    if (auto why = epoch_refusal("rdp", s, true, relation)) return P::refuse(*why);
    if (is_epoch_sampling(s))
      // k unamplified releases per epoch (uses_per_epoch): a Gaussian whose
      // RDP is k·α/(2σ²), i.e. σ/√k (Mironov 2017, Prop. 7 and composition).
      return make_term(RdpTerm::Kind::gaussian,
                       scaled_noise_multiplier(e.noise_multiplier,
                                               std::sqrt(static_cast<double>(uses_per_epoch(s)))));
    if (const auto* p = std::get_if<PoissonSampling>(&s)) {
      if (relation == Neighbouring::replace_one)
        return P::refuse(
            "rdp: poisson_sampled gaussian under replace_one neighbouring is not analysed here "
            "(the RDP bound of Mironov, Talwar & Zhang 2019 is for add/remove and "
            "replace-special): use pld, or neighbouring add_remove or replace_special");
      return make_term(RdpTerm::Kind::poisson_gaussian, e.noise_multiplier, p->probability);
    }
    if (const auto* w = std::get_if<WithoutReplacementSampling>(&s)) {
      if (relation && *relation != Neighbouring::replace_one)
        return P::refuse(
            "rdp: sampled_without_replacement is analysed under replace_one "
            "neighbouring only (Wang, Balle & Kasiviswanathan 2019), not " +
            std::string(to_string(*relation)));
      return make_term(RdpTerm::Kind::wor_gaussian, e.noise_multiplier, w->ratio());
    }
    return make_term(RdpTerm::Kind::gaussian, e.noise_multiplier);
  }
  P operator()(const LaplaceEvent& e, const LeafSampling& s) const {
    if (!std::holds_alternative<NotSampled>(s))
      return P::refuse(refuse_sampled("rdp", s, "a gaussian", e.kName));
    return make_term(RdpTerm::Kind::laplace, e.scale);
  }
  P operator()(const NoOpEvent& e, const LeafSampling& s) const {
    if (!std::holds_alternative<NotSampled>(s)) return unsampled_only(s, e.kName);
    return make_term(RdpTerm::Kind::zero);
  }
  P operator()(const NonPrivateEvent& e, const LeafSampling& s) const {
    if (!std::holds_alternative<NotSampled>(s)) return unsampled_only(s, e.kName);
    return make_term(RdpTerm::Kind::infinite);
  }
  P operator()(const EpsilonDeltaEvent& e, const LeafSampling& s) const {
    if (!std::holds_alternative<NotSampled>(s)) return unsampled_only(s, e.kName);
    // An (ε, δ)-DP mechanism is a post-processing of the (ε, δ) randomized
    // response (Kairouz, Oh & Viswanath 2015, Thm 2.1; Murtagh & Vadhan 2016,
    // Lemma 3.2): with probability δ it reveals which neighbour it saw,
    // otherwise it is binary randomized response with ε. The RDP curve is that
    // of the ε part; the δ's compose as 1 − Π(1 − δ_i), added outside it.
    RdpTerm t = make_term(RdpTerm::Kind::pure_dp, e.epsilon);
    t.log1m_delta = std::log1p(-e.delta);
    return t;
  }
  P operator()(const DiscreteLaplaceEvent& e, const LeafSampling& s) const {
    if (!std::holds_alternative<NotSampled>(s)) return unsampled_only(s, e.kName);
    // Pure (aΔ)-DP: the privacy loss a(|x − Δ| − |x|) lies in [−aΔ, aΔ] (for
    // Δ = 1 it takes only ±a, so binary randomized response is then exact).
    RdpTerm t =
        make_term(RdpTerm::Kind::pure_dp, e.noise_parameter * static_cast<double>(e.sensitivity));
    t.scales = true;
    return t;
  }
  P operator()(const DiscreteGaussianEvent& e, const LeafSampling& s) const {
    if (!std::holds_alternative<NotSampled>(s))
      return P::refuse(refuse_sampled("rdp", s, "a gaussian", e.kName) +
                       ": no published analysis shows that a sampled discrete Gaussian "
                       "behaves as a sampled continuous one");
    // Canonne, Kamath & Steinke 2020, Thm 4 (from their Prop. 5): ρ-zCDP with
    // ρ = Δ²/(2σ²).
    const double d = static_cast<double>(e.sensitivity);
    RdpTerm t = make_term(RdpTerm::Kind::zcdp, d * d / (2 * e.sigma * e.sigma));
    t.scales = true;
    return t;
  }
  P operator()(const RandomizedResponseEvent& e, const LeafSampling& s) const {
    if (!std::holds_alternative<NotSampled>(s)) return unsampled_only(s, e.kName);
    if (auto why = needs_replace(e.kName, "a record's bucket is replaced, not removed"))
      return P::refuse(*why);
    RdpTerm t = make_term(RdpTerm::Kind::randomized_response, e.noise_parameter);
    t.buckets = e.num_buckets;
    return t;
  }
  P operator()(const ZcdpEvent& e, const LeafSampling& s) const {
    if (!std::holds_alternative<NotSampled>(s))
      return P::refuse(refuse_sampled("rdp", s, "a gaussian", e.kName) +
                       ": no published analysis of a sampled zCDP mechanism (it need not "
                       "behave as a sampled Gaussian)");
    RdpTerm t = make_term(RdpTerm::Kind::zcdp, e.rho);
    t.xi = e.xi;
    return t;
  }
  P operator()(const ExponentialMechanismEvent& e, const LeafSampling& s) const {
    if (!std::holds_alternative<NotSampled>(s)) return unsampled_only(s, e.kName);
    return make_term(RdpTerm::Kind::exponential, e.epsilon);
  }
  P operator()(const PermuteAndFlipEvent& e, const LeafSampling& s) const {
    if (!std::holds_alternative<NotSampled>(s)) return unsampled_only(s, e.kName);
    // Analysed as a generic ε-DP mechanism (McKenna & Sheldon 2020 prove ε-DP).
    // dp_accounting gives it the Laplace curves, for which no proof is
    // published; binary randomized response bounds every ε-DP mechanism.
    return make_term(RdpTerm::Kind::pure_dp, e.epsilon);
  }
  P operator()(const MixtureOfGaussiansEvent& e, const LeafSampling& s) const {
    if (!std::holds_alternative<NotSampled>(s)) return unsampled_only(s, e.kName);
    if (relation == Neighbouring::replace_one)
      return P::refuse(rdp_refusal(std::string(e.kName) +
                                   " has no analysis under replace_one (its pair compares one "
                                   "side against N(0, s^2)): use add_remove or replace_special"));
    const MixtureDominance d = dominating_sampled_gaussian(e);
    if (d.probability == 0) return make_term(RdpTerm::Kind::zero);
    if (d.probability == 1) return make_term(RdpTerm::Kind::gaussian, d.noise_multiplier);
    if (const auto user = as_binomial_mixture(e)) {
      RdpTerm t =
          make_term(RdpTerm::Kind::user_poisson_gaussian, e.standard_deviation, user->probability);
      t.buckets = user->records;
      t.xi = user->eta;
      return t;
    }
    return make_term(RdpTerm::Kind::poisson_gaussian, d.noise_multiplier, d.probability);
  }
  P operator()(const SingleEpochTreeAggregationEvent& e, const LeafSampling& s) const {
    if (!std::holds_alternative<NotSampled>(s)) return unsampled_only(s, e.kName);
    if (auto why = needs_replace(e.kName,
                                 "the analysis of Kairouz et al. 2021, App. D, replaces a record "
                                 "by a null one in every tree it reaches"))
      return P::refuse(*why);
    RdpTerm t = make_term(RdpTerm::Kind::tree, e.noise_multiplier);
    t.buckets = tree_aggregation_depth(e.step_counts);
    return t;
  }
  P operator()(const RepeatAndSelectEvent& e, const LeafSampling& s) const {
    if (!std::holds_alternative<NotSampled>(s)) return unsampled_only(s, e.kName);
    auto inner = std::make_shared<RdpPlan>(plan_event<RdpTerm>(*e.event, *this, "rdp"));
    if (inner->refusal) return P::refuse(*inner->refusal);
    for (const auto& [term, count] : inner->terms)
      if (count > 0 && term.log1m_delta < 0)
        return P::refuse(
            "rdp: repeat_and_select of an event with delta > 0 (epsilon_delta) has no RDP "
            "analysis: Papernot & Steinke 2022 need the repeated event's RDP curve");
    RdpTerm t = make_term(RdpTerm::Kind::repeat_and_select, e.mean);
    t.xi = e.shape;
    t.inner = std::move(inner);
    return t;
  }
  P operator()(const TruncatedSubsampledGaussianEvent& e, const LeafSampling&) const {
    return P::refuse(
        rdp_refusal(std::string(e.kName) + " has no RDP analysis implemented here: use pld"));
  }
};

/// The relations fixed by the sampled events anywhere in `plan`, including
/// inside repeat_and_select.
void merge_relations(const RdpPlan& plan, Relations& into) {
  into.add_remove = into.add_remove || plan.relations.add_remove;
  into.replace_one = into.replace_one || plan.relations.replace_one;
  for (const auto& [term, count] : plan.terms)
    if (term.inner) merge_relations(*term.inner, into);
}

}  // namespace

RdpPlan rdp_plan(const DpEvent& event, std::optional<Neighbouring> relation) {
  RdpPlan plan = plan_event<RdpTerm>(event, RdpPlanner{relation}, "rdp");
  if (plan.refusal) return plan;
  merge_relations(plan, plan.relations);
  // With the relation fixed every leaf is analysed under it (the planner has
  // refused those that have no analysis there); inferred, the sampled leaves
  // fix it and must agree.
  if (!relation && plan.relations.mixed()) plan.refusal = kRdpMixedRelations;
  return plan;
}

}  // namespace dpb::detail
