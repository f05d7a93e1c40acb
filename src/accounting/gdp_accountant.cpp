#include "accounting/gdp_accountant.hpp"

#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "accounting/attack_risk.hpp"
#include "accounting/errors.hpp"
#include "accounting/event_walk.hpp"
#include "accounting/gdp.hpp"
#include "accounting/outward.hpp"
#include "accounting/rdp_events.hpp"
#include "accounting/rdp_without_replacement.hpp"

namespace dpb {
namespace {

/// One leaf as the GDP accountant composes it: μ of one occurrence, and
/// whether it is exact or from the central limit theorem.
struct GdpTerm {
  double mu = 0;
  bool clt = false;
};

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

  P operator()(const GaussianEvent& e, const Sampling& s) const {
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
  P operator()(const LaplaceEvent& e, const Sampling&) const { return no_mu(e.kName); }
  P operator()(const NoOpEvent& e, const Sampling& s) const {
    if (!std::holds_alternative<NotSampled>(s))
      return P::refuse(std::string("gdp: ") + sampled_event_name(s) + " of " +
                       std::string(e.kName) + " is not analysed");
    return GdpTerm{0};  // identical outputs: 0-GDP
  }
  P operator()(const NonPrivateEvent& e, const Sampling& s) const {
    if (!std::holds_alternative<NotSampled>(s))
      return P::refuse(std::string("gdp: ") + sampled_event_name(s) + " of " +
                       std::string(e.kName) + " is not analysed");
    // No trade-off guarantee: μ = inf (ε = inf, δ = 1).
    return GdpTerm{std::numeric_limits<double>::infinity()};
  }
  P operator()(const EpsilonDeltaEvent& e, const Sampling&) const { return no_mu(e.kName); }
  P operator()(const DiscreteLaplaceEvent& e, const Sampling&) const { return no_mu(e.kName); }
  P operator()(const DiscreteGaussianEvent& e, const Sampling&) const { return no_mu(e.kName); }
  P operator()(const RandomizedResponseEvent& e, const Sampling&) const { return no_mu(e.kName); }
  P operator()(const ZcdpEvent& e, const Sampling&) const { return no_mu(e.kName); }
  P operator()(const ExponentialMechanismEvent& e, const Sampling&) const { return no_mu(e.kName); }
  P operator()(const PermuteAndFlipEvent& e, const Sampling&) const { return no_mu(e.kName); }
  P operator()(const MixtureOfGaussiansEvent& e, const Sampling&) const { return no_mu(e.kName); }
  P operator()(const SingleEpochTreeAggregationEvent& e, const Sampling& s) const {
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
  P operator()(const RepeatAndSelectEvent& e, const Sampling&) const { return no_mu(e.kName); }
  P operator()(const TruncatedSubsampledGaussianEvent& e, const Sampling&) const {
    return no_mu(e.kName);
  }
};

constexpr const char* kMixedRelations =
    "gdp: cannot mix poisson_sampled (add/remove) and sampled_without_replacement "
    "(replace-one) events";

Plan<GdpTerm> gdp_plan(const DpEvent& event, std::optional<Neighbouring> relation) {
  Plan<GdpTerm> plan = plan_event<GdpTerm>(event, GdpPlanner{relation}, "gdp");
  if (!relation && !plan.refusal && plan.relations.mixed()) plan.refusal = kMixedRelations;
  return plan;
}

struct Parts {
  double exact_sq = 0;
  double clt_sq = 0;
  double additions = 0;  ///< terms added into the two sums
  bool clt = false;
  bool clt_outside = false;  ///< a CLT part is far outside the theorem's regime
  bool poisson = false;
  bool without_replacement = false;
};

/// The central limit theorem (Bu et al. 2020, Thm 5) is a limit of many steps
/// each close to perfectly private (per-step μ → 0). Far from that — one step
/// already distinguishable (μ_step > 0.5) or fewer than 100 steps — the
/// approximation can be far off in either direction, and the result says so.
bool outside_clt_regime(double mu_step, double count) { return !(mu_step <= 0.5) || count < 100; }

// Adds `mult` occurrences of every term of `plan` to `parts` (μ² is additive
// under composition, Dong, Roth & Su 2022, Cor. 3.3).
void collect(const Plan<GdpTerm>& plan, double mult, Parts& parts) {
  for (const auto& [term, count] : plan.terms) {
    if (count <= 0) continue;
    const double n = mult * static_cast<double>(count);
    if (term.mu == 0) continue;
    parts.additions += 1;
    if (term.clt) {
      parts.clt_sq += n * term.mu * term.mu;
      parts.clt = true;
      parts.clt_outside = parts.clt_outside || outside_clt_regime(term.mu, n);
    } else {
      parts.exact_sq += n * term.mu * term.mu;
    }
  }
}

}  // namespace

GdpAccountant::GdpAccountant(const AccountantOptions& options) : relation_(options.neighbouring) {}

std::optional<std::string> GdpAccountant::unsupported_reason(const DpEvent& event) const {
  const Plan<GdpTerm> plan = gdp_plan(event, relation_);
  if (plan.refusal) return plan.refusal;
  if (relation_) return std::nullopt;
  if ((plan.relations.add_remove && without_replacement_) ||
      (plan.relations.replace_one && poisson_))
    return std::string(kMixedRelations) + " (the accountant already holds the other kind)";
  return std::nullopt;
}

void GdpAccountant::compose(const DpEvent& event, std::int64_t count) {
  if (auto why = unsupported_reason(event)) throw UnsupportedEvent(*why);
  if (count <= 0) return;
  Parts p;
  const Plan<GdpTerm> plan = gdp_plan(event, relation_);
  collect(plan, static_cast<double>(count), p);
  p.poisson = plan.relations.add_remove;
  p.without_replacement = plan.relations.replace_one;
  exact_sq_ += p.exact_sq;
  clt_sq_ += p.clt_sq;
  additions_ += p.additions + 2;  // and the two additions just made
  clt_ = clt_ || p.clt;
  clt_outside_ = clt_outside_ || p.clt_outside;
  poisson_ = poisson_ || p.poisson;
  without_replacement_ = without_replacement_ || p.without_replacement;
}

/// Relative rounding of one term n·μᵢ² of mu()'s sum, in units of u = 2⁻⁵³:
/// μᵢ = Δ·√k/σ (a square root, a product, a quotient: ≤ 3u), squared (≤ 2·3u
/// + u) and multiplied by n (≤ u): ≤ 8u.
constexpr double kMuTermRoundoff = 8;

// μ = √(Σ nᵢμᵢ²) (Dong, Roth & Su 2022, Cor. 3.3). The sum of m positive terms,
// each with relative error ≤ 8u, is within (8 + m)u of the exact sum
// (recursive summation, Higham 2002, §4.2); the square root halves a relative
// error and rounds once more. mu_upper() returns √ stepped up by (8 + m)u/2 + u
// and one ulp for the multiplication.
double GdpAccountant::mu() const { return std::sqrt(exact_sq_ + clt_sq_); }

double GdpAccountant::mu_upper() const {
  const double s = mu();
  const double rel = ((kMuTermRoundoff + additions_) / 2 + 1) * outward::kUnitRoundoff;
  return outward::up(s * (1 + rel), 1);
}

AttackBounds GdpAccountant::attack_bounds(std::span<const double> fprs) const {
  check_fprs(fprs);
  const Guarantee g = base();
  AttackBounds out;
  out.accountant = "gdp";
  out.bound = g.bound;
  out.neighbouring = g.neighbouring;
  out.details = g.details;
  out.notes = g.notes;
  out.fpr.assign(fprs.begin(), fprs.end());
  const double m = mu();
  for (double x : fprs) out.tpr.push_back(tpr_bound_gdp(m, x));
  out.advantage = advantage_gdp(m);
  return out;
}

Guarantee GdpAccountant::base() const {
  Guarantee g;
  g.accountant = "gdp";
  g.bound = clt_ ? BoundKind::approximate : BoundKind::upper;
  g.neighbouring = relation_              ? *relation_
                   : without_replacement_ ? Neighbouring::replace_one
                                          : Neighbouring::add_remove;
  g.details.emplace_back("mu", mu());
  if (clt_)
    g.notes.push_back(
        "mu from the GDP central limit theorem (Bu, Dong, Long & Su 2020): an approximation, "
        "not an upper bound");
  if (clt_outside_)
    g.notes.push_back(
        "outside the central limit regime (needs many steps, each with mu_step <= 0.5): the "
        "approximation may be far off in either direction; use rdp or pld for a bound");
  return g;
}

Guarantee GdpAccountant::epsilon(double delta) const {
  if (!(delta > 0 && delta < 1)) throw InvalidParameter("delta", "must be in (0, 1)");
  Guarantee g = base();
  g.delta = delta;
  g.epsilon = gdp_epsilon(mu_upper(), delta);
  return g;
}

Guarantee GdpAccountant::delta(double epsilon) const {
  if (!(epsilon >= 0)) throw InvalidParameter("epsilon", "must be a number >= 0");
  Guarantee g = base();
  g.epsilon = epsilon;
  g.delta = gdp_delta(mu_upper(), epsilon);
  return g;
}

}  // namespace dpb
