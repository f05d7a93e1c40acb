#include "accounting/pld_accountant.hpp"

#include <cmath>
#include <limits>

#include "accounting/errors.hpp"
#include "accounting/event_walk.hpp"

namespace dpb {
namespace {

constexpr const char* kWithoutReplacement =
    "pld: sampled_without_replacement (replace-one) is not supported: its privacy loss is not a "
    "monotone function of one real variable, so the CDF-based discretisation does not apply";

/// One leaf as the PLD accountant composes it; nullopt mechanism = no privacy
/// loss (a Poisson-sampled release with q = 0).
struct PldTerm {
  std::optional<pld::Mechanism> mechanism;
};

/// Every leaf kind, explicitly (no catch-all: a new kind must be added here).
/// The PLDs are those of SPEC §7 (pld.hpp): a base mechanism of sensitivity 1,
/// optionally Poisson-subsampled, under add/remove.
struct PldPlanner {
  static Planned<PldTerm> base(pld::Mechanism::Kind kind, double parameter, const Sampling& s) {
    if (std::holds_alternative<WithoutReplacementSampling>(s))
      return Planned<PldTerm>::refuse(kWithoutReplacement);
    if (const auto* p = std::get_if<PoissonSampling>(&s)) {
      if (p->probability == 0) return PldTerm{};  // q = 0: no privacy loss
      return PldTerm{pld::Mechanism{kind, parameter, p->probability}};
    }
    return PldTerm{pld::Mechanism{kind, parameter, 1.0}};
  }
  Planned<PldTerm> operator()(const GaussianEvent& e, const Sampling& s) const {
    return base(pld::Mechanism::Kind::gaussian, e.noise_multiplier, s);
  }
  Planned<PldTerm> operator()(const LaplaceEvent& e, const Sampling& s) const {
    return base(pld::Mechanism::Kind::laplace, e.scale, s);
  }
  Planned<PldTerm> operator()(const NoOpEvent& e, const Sampling&) const {
    return Planned<PldTerm>::refuse(std::string("pld: ") + std::string(e.kName) +
                                    " is not supported yet");
  }
  Planned<PldTerm> operator()(const NonPrivateEvent& e, const Sampling&) const {
    return Planned<PldTerm>::refuse(std::string("pld: ") + std::string(e.kName) +
                                    " is not supported yet");
  }
  Planned<PldTerm> operator()(const EpsilonDeltaEvent& e, const Sampling&) const {
    return Planned<PldTerm>::refuse(std::string("pld: ") + std::string(e.kName) +
                                    " is not supported yet");
  }
  Planned<PldTerm> operator()(const DiscreteLaplaceEvent& e, const Sampling&) const {
    return Planned<PldTerm>::refuse(std::string("pld: ") + std::string(e.kName) +
                                    " is not supported yet");
  }
  Planned<PldTerm> operator()(const DiscreteGaussianEvent& e, const Sampling&) const {
    return Planned<PldTerm>::refuse(std::string("pld: ") + std::string(e.kName) +
                                    " is not supported yet");
  }
  Planned<PldTerm> operator()(const RandomizedResponseEvent& e, const Sampling&) const {
    return Planned<PldTerm>::refuse(std::string("pld: ") + std::string(e.kName) +
                                    " is not supported yet");
  }
  Planned<PldTerm> operator()(const ZcdpEvent& e, const Sampling&) const {
    return Planned<PldTerm>::refuse(std::string("pld: ") + std::string(e.kName) +
                                    " is not supported yet");
  }
  Planned<PldTerm> operator()(const ExponentialMechanismEvent& e, const Sampling&) const {
    return Planned<PldTerm>::refuse(std::string("pld: ") + std::string(e.kName) +
                                    " is not supported yet");
  }
  Planned<PldTerm> operator()(const PermuteAndFlipEvent& e, const Sampling&) const {
    return Planned<PldTerm>::refuse(std::string("pld: ") + std::string(e.kName) +
                                    " is not supported yet");
  }
  Planned<PldTerm> operator()(const MixtureOfGaussiansEvent& e, const Sampling&) const {
    return Planned<PldTerm>::refuse(std::string("pld: ") + std::string(e.kName) +
                                    " is not supported yet");
  }
  Planned<PldTerm> operator()(const SingleEpochTreeAggregationEvent& e, const Sampling&) const {
    return Planned<PldTerm>::refuse(std::string("pld: ") + std::string(e.kName) +
                                    " is not supported yet");
  }
  Planned<PldTerm> operator()(const RepeatAndSelectEvent& e, const Sampling&) const {
    return Planned<PldTerm>::refuse(std::string("pld: ") + std::string(e.kName) +
                                    " is not supported yet");
  }
  Planned<PldTerm> operator()(const TruncatedSubsampledGaussianEvent& e, const Sampling&) const {
    return Planned<PldTerm>::refuse(std::string("pld: ") + std::string(e.kName) +
                                    " is not supported yet");
  }
};

Plan<PldTerm> pld_plan(const DpEvent& event) {
  return plan_event<PldTerm>(event, PldPlanner{}, "pld");
}

}  // namespace

PldAccountant::PldAccountant(const AccountantOptions& options) {
  options_.interval = options.pld_interval;
  options_.tolerance = options.pld_tolerance;
  if (!(options_.interval >= 0) || !std::isfinite(options_.interval))
    throw InvalidParameter("pld_interval", "must be >= 0 (0 = automatic)");
  if (!std::isfinite(options_.tolerance))
    throw InvalidParameter("pld_tolerance", "must be a finite number");
}

std::optional<std::string> PldAccountant::unsupported_reason(const DpEvent& event) const {
  return pld_plan(event).refusal;
}

void PldAccountant::compose(const DpEvent& event, std::int64_t count) {
  const Plan<PldTerm> plan = pld_plan(event);
  if (plan.refusal) throw UnsupportedEvent(*plan.refusal);
  if (count <= 0) return;
  for (const auto& [term, n] : plan.terms)
    if (term.mechanism && n > 0)
      components_.push_back({*term.mechanism, checked_count_product(count, n)});
}

Guarantee PldAccountant::make_guarantee(const pld::Interval& interval) const {
  Guarantee g;
  g.accountant = "pld";
  g.bound = BoundKind::upper;
  g.neighbouring = Neighbouring::add_remove;
  g.details.emplace_back("pld_interval", interval.interval);
  g.add_count("pld_grid_size", static_cast<std::int64_t>(interval.grid));
  g.add_count("pld_refinements", interval.refinements);
  g.notes = interval.notes;
  return g;
}

Guarantee PldAccountant::epsilon(double delta) const {
  const pld::Interval r = pld::epsilon_interval(components_, delta, options_);
  Guarantee g = make_guarantee(r);
  g.epsilon = r.upper;
  g.epsilon_lower = r.lower;
  g.delta = delta;
  return g;
}

Guarantee PldAccountant::delta(double epsilon) const {
  const pld::Interval r = pld::delta_interval(components_, epsilon, options_);
  Guarantee g = make_guarantee(r);
  g.epsilon = epsilon;
  g.delta = r.upper;
  g.delta_lower = r.lower;
  return g;
}

}  // namespace dpb
