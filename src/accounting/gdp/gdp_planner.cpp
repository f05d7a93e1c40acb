#include "accounting/gdp/gdp_planner.hpp"

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "accounting/gdp/gdp.hpp"

namespace dpb::detail {
namespace {

/// Every leaf kind, explicitly (no catch-all: a new kind must be added here).
/// `relation`: the neighbouring relation the user fixed, or nullopt
/// (inferred: the sampled leaves fix it, unsampled ones read as add/remove).
struct GdpPlanner {
  std::optional<Neighbouring> relation;

  using P = Planned<GdpTerm>;

  /// The refusal of the kinds without an exact μ.
  static P no_mu(std::string_view name) {
    return P::refuse("gdp: " + std::string(name) +
                     " is not supported (no exact mu-GDP characterisation)");
  }
  /// How far one record moves an unsampled query, in add/remove sensitivities.
  double sensitivity() const {
    return relation == Neighbouring::replace_one ? kReplaceOneSensitivity : 1.0;
  }

  P operator()(const GaussianEvent& e, const LeafSampling& s) const {
    const double sigma = e.noise_multiplier;
    if (auto why = epoch_refusal("gdp", s, true, relation)) return P::refuse(*why);
    if (is_epoch_sampling(s))
      // k exact Gaussian releases per epoch (uses_per_epoch): μ = Δ√k/σ
      // (Dong, Roth & Su 2022, Thm 2.7 and Cor. 3.3).
      return GdpTerm{sensitivity() * std::sqrt(static_cast<double>(uses_per_epoch(s))) / sigma};
    if (const auto* p = std::get_if<PoissonSampling>(&s)) {
      // Add/remove and replace-special: the same analysis (a null record
      // contributes nothing, as if absent).
      if (relation == Neighbouring::replace_one)
        return P::refuse(
            "gdp: poisson_sampled gaussian under replace_one neighbouring has no central-limit "
            "mu here (Bu et al. 2020 is for add/remove): use pld, or add_remove / "
            "replace_special");
      const double q = p->probability;
      if (q == 1) return GdpTerm{1 / sigma, false};  // exact Gaussian
      if (q == 0) return GdpTerm{0, false};
      return GdpTerm{gdp_clt_mu_poisson(q, sigma, 1), true};
    }
    if (const auto* w = std::get_if<WithoutReplacementSampling>(&s)) {
      if (relation && *relation != Neighbouring::replace_one)
        return P::refuse(
            "gdp: sampled_without_replacement is analysed under replace_one neighbouring only, "
            "not " +
            std::string(to_string(*relation)));
      const double q = w->ratio();
      if (q == 0) return GdpTerm{0, false};
      // Replace-one: sensitivity 2 clipping norms, i.e. noise σ/2 (as RDP).
      return GdpTerm{
          gdp_clt_mu_uniform(q, scaled_noise_multiplier(sigma, kReplaceOneSensitivity), 1), true};
    }
    // μ = Δ/σ exactly (Dong, Roth & Su 2022, Thm 2.7), Δ = 2 under replace-one.
    return GdpTerm{sensitivity() / sigma};
  }
  P operator()(const LaplaceEvent& e, const LeafSampling&) const { return no_mu(e.kName); }
  P operator()(const NoOpEvent& e, const LeafSampling& s) const {
    if (!std::holds_alternative<NotSampled>(s))
      return P::refuse(std::string("gdp: ") + sampled_event_name(s) + " of " +
                       std::string(e.kName) + " is not analysed");
    return GdpTerm{0};  // identical outputs: 0-GDP
  }
  P operator()(const NonPrivateEvent& e, const LeafSampling& s) const {
    if (!std::holds_alternative<NotSampled>(s))
      return P::refuse(std::string("gdp: ") + sampled_event_name(s) + " of " +
                       std::string(e.kName) + " is not analysed");
    // No trade-off guarantee: μ = inf (ε = inf, δ = 1).
    return GdpTerm{std::numeric_limits<double>::infinity()};
  }
  P operator()(const EpsilonDeltaEvent& e, const LeafSampling&) const { return no_mu(e.kName); }
  P operator()(const DiscreteLaplaceEvent& e, const LeafSampling&) const { return no_mu(e.kName); }
  P operator()(const DiscreteGaussianEvent& e, const LeafSampling&) const { return no_mu(e.kName); }
  P operator()(const RandomizedResponseEvent& e, const LeafSampling&) const {
    return no_mu(e.kName);
  }
  P operator()(const ZcdpEvent& e, const LeafSampling&) const { return no_mu(e.kName); }
  P operator()(const ExponentialMechanismEvent& e, const LeafSampling&) const {
    return no_mu(e.kName);
  }
  P operator()(const PermuteAndFlipEvent& e, const LeafSampling&) const { return no_mu(e.kName); }
  P operator()(const MixtureOfGaussiansEvent& e, const LeafSampling&) const {
    return no_mu(e.kName);
  }
  P operator()(const SingleEpochTreeAggregationEvent& e, const LeafSampling& s) const {
    if (!std::holds_alternative<NotSampled>(s))
      return P::refuse(std::string("gdp: ") + sampled_event_name(s) + " of " +
                       std::string(e.kName) + " is not analysed");
    if (!relation || *relation == Neighbouring::add_remove)
      return P::refuse(
          "gdp: single_epoch_tree_aggregation has no analysis under add_remove neighbouring (a "
          "record is replaced by a null one in the tree it reaches): choose neighbouring "
          "replace_one or replace_special");
    // The vector of node sums is a Gaussian mechanism whose L2 sensitivity is
    // s·√depth (one record reaches one node per level, Kairouz et al. 2021,
    // App. D): μ = s·√depth/σ exactly (Dong, Roth & Su 2022, Thm 2.7).
    const double depth = tree_aggregation_depth(e.step_counts);
    return GdpTerm{sensitivity() * std::sqrt(depth) / e.noise_multiplier};
  }
  P operator()(const RepeatAndSelectEvent& e, const LeafSampling&) const { return no_mu(e.kName); }
  P operator()(const TruncatedSubsampledGaussianEvent& e, const LeafSampling&) const {
    return no_mu(e.kName);
  }
};

}  // namespace

Plan<GdpTerm> gdp_plan(const DpEvent& event, std::optional<Neighbouring> relation) {
  Plan<GdpTerm> plan = plan_event<GdpTerm>(event, GdpPlanner{relation}, "gdp");
  if (!relation && !plan.refusal && plan.relations.mixed()) plan.refusal = kGdpMixedRelations;
  return plan;
}

}  // namespace dpb::detail
