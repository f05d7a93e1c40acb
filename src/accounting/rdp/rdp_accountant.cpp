#include "accounting/rdp/rdp_accountant.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "accounting/errors.hpp"
#include "accounting/numerics/double_limits.hpp"
#include "accounting/rdp/rdp.hpp"
#include "accounting/rdp/rdp_curves.hpp"
#include "accounting/rdp/rdp_planner.hpp"
#include "accounting/risk/attack_risk.hpp"

namespace dpb {
namespace {

using detail::add_scaled;
using detail::kRdpMixedRelations;
using detail::plan_curve;
using detail::poisson_gaussian_curve;
using detail::pruned_epsilon;
using detail::rdp_plan;
using detail::RdpPlan;
using detail::RdpTerm;

/// log(1 − δ_extra) of one occurrence of `plan` (its epsilon_delta events).
double plan_log1m_delta(const RdpPlan& plan) {
  double sum = 0;
  for (const auto& [term, count] : plan.terms)
    if (count > 0 && term.log1m_delta < 0) sum += static_cast<double>(count) * term.log1m_delta;
  return sum;
}

/// Relative rounding of the δ_extra conversions (a log1p, an expm1 and a
/// difference: a few u; 8 machine epsilons cover them).
constexpr double kExtraDeltaRounding = 8 * std::numeric_limits<double>::epsilon();

/// δ' with 1 − δ = (1 − δ')(1 − δ_extra), rounded down; ≤ 0 when δ ≤ δ_extra.
double effective_delta(double delta, double log1m_extra) {
  if (log1m_extra == 0) return delta;
  const double d = -std::expm1(std::log1p(-delta) - log1m_extra);
  return d * (1 - kExtraDeltaRounding);
}

/// 1 − (1 − δ)(1 − δ_extra) = δ + δ_extra − δ·δ_extra, rounded up, capped at 1.
double with_extra_delta(double delta, double log1m_extra) {
  if (log1m_extra == 0) return delta;
  const double d = -std::expm1(std::log1p(-delta) + log1m_extra);
  return std::min(1.0, d * (1 + kExtraDeltaRounding));
}

}  // namespace

RdpAccountant::RdpAccountant(const AccountantOptions& options)
    : orders_(options.rdp.orders.empty() ? default_rdp_orders() : options.rdp.orders),
      rdp_(orders_.size(), 0.0),
      rdp_add_remove_(orders_.size(), 0.0),
      rdp_replace_one_(orders_.size(), 0.0),
      conversion_(options.rdp.conversion),
      neighbouring_(options.neighbouring.value_or(Neighbouring::add_remove)),
      explicit_relation_(options.neighbouring) {
  for (double a : orders_)
    if (!(a > 1) || !std::isfinite(a)) throw InvalidParameter("orders", "every order must be > 1");
}

std::optional<std::string> RdpAccountant::unsupported_reason(const DpEvent& event) const {
  const RdpPlan plan = rdp_plan(event, explicit_relation_);
  if (plan.refusal) return plan.refusal;
  if (explicit_relation_) return std::nullopt;
  const Relations& r = plan.relations;
  if ((r.add_remove && has_replace_one_) || (r.replace_one && has_add_remove_))
    return std::string(kRdpMixedRelations) + " (the accountant already holds the other kind)";
  return std::nullopt;
}

void RdpAccountant::settle() const {
  if (!pending_) return;
  const PendingSteps p = *pending_;
  pending_.reset();
  // What compose() would have added: n·(count·ρ), through the same additions.
  std::vector<double> term(orders_.size(), 0.0);
  add_scaled(term, poisson_gaussian_curve(p.q, p.sigma, orders_), p.term_count);
  if (explicit_relation_) {
    add_scaled(rdp_, term, p.compose_count);
    return;
  }
  add_scaled(rdp_add_remove_, term, p.compose_count);
  rdp_ = rdp_add_remove_;
}

const std::vector<double>& RdpAccountant::curve() const {
  settle();
  return rdp_;
}

void RdpAccountant::compose(const DpEvent& event, std::int64_t count) {
  if (auto why = unsupported_reason(event)) throw UnsupportedEvent(*why);
  if (count <= 0) return;
  settle();
  const RdpPlan plan = rdp_plan(event, explicit_relation_);
  const double n = static_cast<double>(count);
  // The first event, when it is T steps of the Poisson-sampled Gaussian under
  // add/remove (a DP-SGD run): kept as such, so that epsilon() computes only
  // the orders that can win (pruned_epsilon); anything else settles it.
  if (!composed_ && plan.terms.size() == 1 && plan.terms.front().second > 0 &&
      plan.terms.front().first.kind == RdpTerm::Kind::poisson_gaussian &&
      plan_log1m_delta(plan) == 0 && plan.relations.add_remove && !plan.relations.replace_one &&
      explicit_relation_.value_or(Neighbouring::add_remove) == Neighbouring::add_remove) {
    const RdpTerm& t = plan.terms.front().first;
    composed_ = true;
    pending_ =
        PendingSteps{t.ratio, t.parameter, static_cast<double>(plan.terms.front().second), n};
    if (!explicit_relation_) {
      has_add_remove_ = true;
      neighbouring_ = Neighbouring::add_remove;
    }
    return;
  }
  composed_ = true;
  log1m_extra_delta_ += n * plan_log1m_delta(plan);
  if (explicit_relation_) {
    add_scaled(rdp_, plan_curve(plan, orders_, *explicit_relation_), n);
    return;
  }
  const Relations& r = plan.relations;
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
  if (!(delta > 0 && delta < 1)) throw InvalidParameter("delta", "must be in (0, 1)");
  Guarantee g;
  g.accountant = "rdp";
  g.delta = delta;
  g.neighbouring = neighbouring_;
  add_extra_delta(g);
  // The δ left for the RDP curve once the epsilon_delta events' δ_extra is
  // taken out: 1 − δ = (1 − δ')(1 − δ_extra).
  const double d = effective_delta(delta, log1m_extra_delta_);
  if (!(d > 0)) {
    g.epsilon = kInf;
    g.order = orders_.front();
    g.notes.push_back("delta is at most the epsilon_delta events' own delta: epsilon = inf");
    return g;
  }
  std::optional<RdpEpsilon> pruned;
  if (pending_)
    pruned = pruned_epsilon(pending_->q, pending_->sigma, pending_->term_count,
                            pending_->compose_count, orders_, d, conversion_);
  if (!pruned) settle();
  const RdpEpsilon r = pruned ? *pruned : epsilon_from_rdp(orders_, rdp_, d, conversion_);
  g.epsilon = r.epsilon;
  g.order = r.order;
  g.order_at_edge = std::isfinite(r.epsilon) && !r.kl_shortcut && at_edge(orders_, r.order);
  if (r.kl_shortcut)
    g.notes.push_back(
        "epsilon = 0 from the KL shortcut: total variation <= delta (Bretagnolle-Huber)");
  return g;
}

Guarantee RdpAccountant::delta(double epsilon) const {
  settle();
  RdpDelta r = delta_from_rdp(orders_, rdp_, epsilon, conversion_);
  // A curve that is 0 at every order means identical output distributions
  // (D_α(P‖Q) = 0 iff P = Q): δ = 0 at every ε. (delta_from_rdp's rounding
  // term is not finite there.)
  if (std::all_of(rdp_.begin(), rdp_.end(), [](double v) { return v == 0; })) r.delta = 0;
  Guarantee g;
  g.accountant = "rdp";
  g.epsilon = epsilon;
  g.delta = with_extra_delta(r.delta, log1m_extra_delta_);
  g.neighbouring = neighbouring_;
  g.order = r.order;
  g.order_at_edge = r.delta < 1 && at_edge(orders_, r.order);
  add_extra_delta(g);
  return g;
}

AttackBounds RdpAccountant::attack_bounds(std::span<const double> fprs) const {
  check_fprs(fprs);
  settle();
  AttackBounds out;
  out.accountant = "rdp";
  out.neighbouring = neighbouring_;
  out.fpr.assign(fprs.begin(), fprs.end());
  const double extra = -std::expm1(log1m_extra_delta_);
  for (double x : fprs) out.tpr.push_back(tpr_bound_rdp(orders_, rdp_, x, extra));
  // The advantage is the total variation distance: δ at ε = 0 (rounded up by
  // the conversion), and never above what the curve's bound at x gives.
  const Guarantee at_zero = delta(0);
  out.advantage = std::min(1.0, at_zero.delta);
  out.notes = at_zero.notes;
  return out;
}

void RdpAccountant::add_extra_delta(Guarantee& g) const {
  if (log1m_extra_delta_ == 0) return;
  g.details.emplace_back("extra_delta", -std::expm1(log1m_extra_delta_));
  g.notes.push_back(
      "includes extra_delta = 1 - prod(1 - delta_i) of the epsilon_delta events: total delta = "
      "1 - (1 - delta_rdp)(1 - extra_delta)");
}

std::optional<std::int64_t> RdpAccountant::largest_count_hint(const DpEvent& step, double epsilon,
                                                              double delta) const {
  if (unsupported_reason(step)) return std::nullopt;
  const RdpPlan plan = rdp_plan(step, explicit_relation_);
  // The closed form knows only the curve: no hint with an extra δ.
  if (plan_log1m_delta(plan) < 0 || log1m_extra_delta_ < 0) return std::nullopt;
  const Neighbouring relation =
      explicit_relation_
          ? *explicit_relation_
          : ((plan.relations.replace_one || has_replace_one_) ? Neighbouring::replace_one
                                                              : Neighbouring::add_remove);
  const std::vector<double> rho = plan_curve(plan, orders_, relation);
  double best = -1;
  for (std::size_t i = 0; i < orders_.size(); ++i) {
    const double a = orders_[i];
    // ε(T) at order α is T·ρ(α) + c(α) (docs/rdp.md#steps-closed-form).
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
