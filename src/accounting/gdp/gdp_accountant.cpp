#include "accounting/gdp/gdp_accountant.hpp"

#include <cmath>
#include <optional>
#include <string>

#include "accounting/errors.hpp"
#include "accounting/events/event_walk.hpp"
#include "accounting/events/neighbouring.hpp"
#include "accounting/gdp/gdp.hpp"
#include "accounting/gdp/gdp_planner.hpp"
#include "accounting/numerics/outward.hpp"
#include "accounting/risk/attack_risk.hpp"

namespace dpb {
namespace {

using detail::gdp_plan;
using detail::GdpTerm;
using detail::kGdpMixedRelations;

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
    return std::string(kGdpMixedRelations) + " (the accountant already holds the other kind)";
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
  const double rel = ((kMuTermRoundoff + additions_) / 2 + 1) * kU;
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
