#include "accounting/rdp_accountant.hpp"

#include <algorithm>
#include <cmath>
#include <deque>

#include "accounting/errors.hpp"
#include "accounting/event_walk.hpp"
#include "accounting/rdp.hpp"
#include "accounting/rdp_without_replacement.hpp"

namespace dpb {
namespace {

constexpr const char* kMixedRelations =
    "rdp: cannot compose poisson_sampled (add/remove neighbouring) and "
    "sampled_without_replacement (replace-one neighbouring) events: their RDP bounds hold "
    "for different neighbouring relations";

/// One leaf as the RDP accountant evaluates it (event_walk.hpp).
struct RdpTerm {
  enum class Kind {
    gaussian,          ///< ρ(α) = α/(2σ²) (Mironov 2017, Prop. 7), sensitivity by relation
    laplace,           ///< Mironov 2017, Prop. 6, sensitivity by relation
    poisson_gaussian,  ///< SPEC §2.2 (Mironov, Talwar & Zhang 2019), add/remove only
    wor_gaussian,      ///< SPEC §2.3 (Wang, Balle & Kasiviswanathan 2019), replace-one only
  };
  Kind kind;
  double parameter;  ///< σ, or the Laplace scale b
  double ratio = 1;  ///< q, or m/N without replacement
};

/// Every leaf kind, explicitly (no catch-all: a new kind must be added here).
struct RdpPlanner {
  Planned<RdpTerm> operator()(const GaussianEvent& e, const Sampling& s) const {
    if (const auto* p = std::get_if<PoissonSampling>(&s))
      return RdpTerm{RdpTerm::Kind::poisson_gaussian, e.noise_multiplier, p->probability};
    if (const auto* w = std::get_if<WithoutReplacementSampling>(&s))
      return RdpTerm{RdpTerm::Kind::wor_gaussian, e.noise_multiplier, w->ratio()};
    return RdpTerm{RdpTerm::Kind::gaussian, e.noise_multiplier};
  }
  Planned<RdpTerm> operator()(const LaplaceEvent& e, const Sampling& s) const {
    if (!std::holds_alternative<NotSampled>(s))
      return Planned<RdpTerm>::refuse(refuse_sampled("rdp", s, "a gaussian", e.kName));
    return RdpTerm{RdpTerm::Kind::laplace, e.scale};
  }
  Planned<RdpTerm> operator()(const NoOpEvent& e, const Sampling&) const {
    return Planned<RdpTerm>::refuse(std::string("rdp: ") + std::string(e.kName) +
                                    " is not supported yet");
  }
  Planned<RdpTerm> operator()(const NonPrivateEvent& e, const Sampling&) const {
    return Planned<RdpTerm>::refuse(std::string("rdp: ") + std::string(e.kName) +
                                    " is not supported yet");
  }
  Planned<RdpTerm> operator()(const EpsilonDeltaEvent& e, const Sampling&) const {
    return Planned<RdpTerm>::refuse(std::string("rdp: ") + std::string(e.kName) +
                                    " is not supported yet");
  }
  Planned<RdpTerm> operator()(const DiscreteLaplaceEvent& e, const Sampling&) const {
    return Planned<RdpTerm>::refuse(std::string("rdp: ") + std::string(e.kName) +
                                    " is not supported yet");
  }
  Planned<RdpTerm> operator()(const DiscreteGaussianEvent& e, const Sampling&) const {
    return Planned<RdpTerm>::refuse(std::string("rdp: ") + std::string(e.kName) +
                                    " is not supported yet");
  }
  Planned<RdpTerm> operator()(const RandomizedResponseEvent& e, const Sampling&) const {
    return Planned<RdpTerm>::refuse(std::string("rdp: ") + std::string(e.kName) +
                                    " is not supported yet");
  }
  Planned<RdpTerm> operator()(const ZcdpEvent& e, const Sampling&) const {
    return Planned<RdpTerm>::refuse(std::string("rdp: ") + std::string(e.kName) +
                                    " is not supported yet");
  }
  Planned<RdpTerm> operator()(const ExponentialMechanismEvent& e, const Sampling&) const {
    return Planned<RdpTerm>::refuse(std::string("rdp: ") + std::string(e.kName) +
                                    " is not supported yet");
  }
  Planned<RdpTerm> operator()(const PermuteAndFlipEvent& e, const Sampling&) const {
    return Planned<RdpTerm>::refuse(std::string("rdp: ") + std::string(e.kName) +
                                    " is not supported yet");
  }
  Planned<RdpTerm> operator()(const MixtureOfGaussiansEvent& e, const Sampling&) const {
    return Planned<RdpTerm>::refuse(std::string("rdp: ") + std::string(e.kName) +
                                    " is not supported yet");
  }
  Planned<RdpTerm> operator()(const SingleEpochTreeAggregationEvent& e, const Sampling&) const {
    return Planned<RdpTerm>::refuse(std::string("rdp: ") + std::string(e.kName) +
                                    " is not supported yet");
  }
  Planned<RdpTerm> operator()(const RepeatAndSelectEvent& e, const Sampling&) const {
    return Planned<RdpTerm>::refuse(std::string("rdp: ") + std::string(e.kName) +
                                    " is not supported yet");
  }
  Planned<RdpTerm> operator()(const TruncatedSubsampledGaussianEvent& e, const Sampling&) const {
    return Planned<RdpTerm>::refuse(std::string("rdp: ") + std::string(e.kName) +
                                    " is not supported yet");
  }
};

Plan<RdpTerm> rdp_plan(const DpEvent& event) {
  Plan<RdpTerm> plan = plan_event<RdpTerm>(event, RdpPlanner{}, "rdp");
  if (!plan.refusal && plan.relations.mixed()) plan.refusal = kMixedRelations;
  return plan;
}

/// rdp_poisson_gaussian(q, σ, orders) is a pure function and the costly part
/// of every evaluation; sweeps and solvers ask for the same (q, σ) many times
/// (with different step counts), so the last few curves are remembered, per
/// thread.
const std::vector<double>& poisson_gaussian_curve(double q, double sigma,
                                                  const std::vector<double>& orders) {
  struct Entry {
    double q, sigma;
    std::vector<double> orders, curve;
  };
  constexpr std::size_t kEntries = 16;
  thread_local std::deque<Entry> cache;
  for (const auto& e : cache)
    if (e.q == q && e.sigma == sigma && e.orders == orders) return e.curve;
  if (cache.size() == kEntries) cache.pop_back();
  cache.push_front({q, sigma, orders, rdp_poisson_gaussian(q, sigma, orders)});
  return cache.front().curve;
}

/// The same cache for rdp_sampled_without_replacement_gaussian.
const std::vector<double>& wor_gaussian_curve(double ratio, double sigma,
                                              const std::vector<double>& orders) {
  struct Entry {
    double ratio, sigma;
    std::vector<double> orders, curve;
  };
  constexpr std::size_t kEntries = 16;
  thread_local std::deque<Entry> cache;
  for (const auto& e : cache)
    if (e.ratio == ratio && e.sigma == sigma && e.orders == orders) return e.curve;
  if (cache.size() == kEntries) cache.pop_back();
  cache.push_front(
      {ratio, sigma, orders, rdp_sampled_without_replacement_gaussian(ratio, sigma, orders)});
  return cache.front().curve;
}

void add_scaled(std::vector<double>& into, const std::vector<double>& curve, double count) {
  for (std::size_t i = 0; i < into.size(); ++i)
    if (curve[i] != 0) into[i] += count * curve[i];  // 0·inf stays 0 when count = 0
}

// Leaves without sampling (Gaussian, Laplace) hold under either relation, with
// the sensitivity of that relation: the SPEC's σ and b are relative to the
// add/remove sensitivity 1 (the clipping norm), and replacing a record moves
// the query by up to kReplaceOneSensitivity = 2 of them, so under replace-one
// the Gaussian has ρ(α) = 2²·α/(2σ²) and the Laplace mechanism is the one with
// scale b/2 at sensitivity 1.
std::vector<double> term_curve(const RdpTerm& t, const std::vector<double>& orders,
                               Neighbouring relation) {
  const bool ro = relation == Neighbouring::replace_one;
  const double s = ro ? kReplaceOneSensitivity : 1.0;
  std::vector<double> out(orders.size(), 0.0);
  switch (t.kind) {
    case RdpTerm::Kind::gaussian:
      for (std::size_t i = 0; i < orders.size(); ++i)
        out[i] = rdp_gaussian(t.parameter / s, orders[i]);
      break;
    case RdpTerm::Kind::laplace:
      for (std::size_t i = 0; i < orders.size(); ++i)
        out[i] = rdp_laplace(t.parameter / s, orders[i]);
      break;
    case RdpTerm::Kind::poisson_gaussian:
      if (ro) throw UnsupportedEvent(kMixedRelations);
      out = poisson_gaussian_curve(t.ratio, t.parameter, orders);
      break;
    case RdpTerm::Kind::wor_gaussian:
      if (!ro) throw UnsupportedEvent(kMixedRelations);
      out = wor_gaussian_curve(t.ratio, t.parameter, orders);
      break;
  }
  return out;
}

/// RDP of one occurrence of a planned event at every order (RDP composes
/// additively, Mironov 2017 Prop. 1).
std::vector<double> plan_curve(const Plan<RdpTerm>& plan, const std::vector<double>& orders,
                               Neighbouring relation) {
  std::vector<double> out(orders.size(), 0.0);
  for (const auto& [term, count] : plan.terms)
    if (count > 0) add_scaled(out, term_curve(term, orders, relation), static_cast<double>(count));
  return out;
}

}  // namespace

RdpAccountant::RdpAccountant(const AccountantOptions& options)
    : orders_(options.orders.empty() ? default_rdp_orders() : options.orders),
      rdp_(orders_.size(), 0.0),
      rdp_add_remove_(orders_.size(), 0.0),
      rdp_replace_one_(orders_.size(), 0.0),
      conversion_(options.conversion) {
  for (double a : orders_)
    if (!(a > 1) || !std::isfinite(a)) throw InvalidParameter("orders", "every order must be > 1");
}

std::optional<std::string> RdpAccountant::unsupported_reason(const DpEvent& event) const {
  const Plan<RdpTerm> plan = rdp_plan(event);
  if (plan.refusal) return plan.refusal;
  const Relations& r = plan.relations;
  if ((r.add_remove && has_replace_one_) || (r.replace_one && has_add_remove_))
    return std::string(kMixedRelations) + " (the accountant already holds the other kind)";
  return std::nullopt;
}

void RdpAccountant::compose(const DpEvent& event, std::int64_t count) {
  if (auto why = unsupported_reason(event)) throw UnsupportedEvent(*why);
  if (count <= 0) return;
  const Plan<RdpTerm> plan = rdp_plan(event);
  const Relations& r = plan.relations;
  const double n = static_cast<double>(count);
  // Both totals are kept until a sampled event fixes the relation.
  if (!r.replace_one && !has_replace_one_)
    add_scaled(rdp_add_remove_, plan_curve(plan, orders_, Neighbouring::add_remove), n);
  if (!r.add_remove && !has_add_remove_)
    add_scaled(rdp_replace_one_, plan_curve(plan, orders_, Neighbouring::replace_one), n);
  has_add_remove_ = has_add_remove_ || r.add_remove;
  has_replace_one_ = has_replace_one_ || r.replace_one;
  neighbouring_ = has_replace_one_ ? Neighbouring::replace_one : Neighbouring::add_remove;
  rdp_ = has_replace_one_ ? rdp_replace_one_ : rdp_add_remove_;
}

namespace {

bool at_edge(const std::vector<double>& orders, double order) {
  const auto [lo, hi] = std::minmax_element(orders.begin(), orders.end());
  return orders.size() > 1 && (order == *lo || order == *hi);
}

}  // namespace

Guarantee RdpAccountant::epsilon(double delta) const {
  const RdpEpsilon r = epsilon_from_rdp(orders_, rdp_, delta, conversion_);
  Guarantee g;
  g.accountant = "rdp";
  g.epsilon = r.epsilon;
  g.delta = delta;
  g.neighbouring = neighbouring_;
  g.order = r.order;
  g.order_at_edge = std::isfinite(r.epsilon) && !r.kl_shortcut && at_edge(orders_, r.order);
  if (r.kl_shortcut)
    g.notes.push_back(
        "epsilon = 0 from the KL shortcut: total variation <= delta (Bretagnolle-Huber)");
  return g;
}

Guarantee RdpAccountant::delta(double epsilon) const {
  const RdpDelta r = delta_from_rdp(orders_, rdp_, epsilon, conversion_);
  Guarantee g;
  g.accountant = "rdp";
  g.epsilon = epsilon;
  g.delta = r.delta;
  g.neighbouring = neighbouring_;
  g.order = r.order;
  g.order_at_edge = r.delta < 1 && at_edge(orders_, r.order);
  return g;
}

std::optional<std::int64_t> RdpAccountant::largest_count_hint(const DpEvent& step, double epsilon,
                                                              double delta) const {
  if (unsupported_reason(step)) return std::nullopt;
  const Plan<RdpTerm> plan = rdp_plan(step);
  const std::vector<double> rho =
      plan_curve(plan, orders_,
                 (plan.relations.replace_one || has_replace_one_) ? Neighbouring::replace_one
                                                                  : Neighbouring::add_remove);
  double best = -1;
  for (std::size_t i = 0; i < orders_.size(); ++i) {
    const double a = orders_[i];
    // ε(T) at order α is T·ρ(α) + c(α) (SPEC §3).
    const double c = rdp_conversion_term(a, std::log(delta), conversion_).value;
    if (!(rho[i] < INFINITY)) continue;
    const double t =
        rho[i] > 0 ? std::floor((epsilon - c) / rho[i]) : (c <= epsilon ? INFINITY : -1);
    best = std::max(best, t);
  }
  if (best < 1) return std::nullopt;
  return static_cast<std::int64_t>(std::min(best, 9007199254740992.0));
}

}  // namespace dpb
