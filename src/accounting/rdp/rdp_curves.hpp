#pragma once
// The RDP curves of planned terms (rdp_planner.hpp) at the accountant's
// orders, and what makes them cheap: the Poisson-sampled and
// without-replacement Gaussian curves are remembered per thread (sweeps and
// solvers ask for the same ones again and again), and the ε of a DP-SGD run
// composed alone computes ρ only at the orders that can win (pruned_epsilon).
#include <cstddef>
#include <optional>
#include <vector>

#include "accounting/events/neighbouring.hpp"
#include "accounting/rdp/rdp.hpp"
#include "accounting/rdp/rdp_conversion.hpp"
#include "accounting/rdp/rdp_planner.hpp"

namespace dpb::detail {

/// into += count·curve at every order.
inline void add_scaled(std::vector<double>& into, const std::vector<double>& curve, double count) {
  for (std::size_t i = 0; i < into.size(); ++i)
    if (curve[i] != 0) into[i] += count * curve[i];  // 0·inf stays 0 when count = 0
}

/// ρ of the Poisson-sampled Gaussian (q, σ) at every order, from the
/// per-thread cache (rdp_curves.cpp): valid until this thread's next look-up.
const std::vector<double>& poisson_gaussian_curve(double q, double sigma,
                                                  const std::vector<double>& orders);

/// epsilon_from_rdp(orders, n·ρ, δ, conversion) for n steps of the
/// Poisson-sampled Gaussian (q, σ), with ρ computed only at the orders that
/// can win: Rényi divergence is nondecreasing in the order (van Erven &
/// Harremoës 2014, Thm 3), so at an order above a computed one, ε is at least
/// the conversion of the lower order's n·ρ; an order whose bound is above the
/// best ε found is skipped. Integer orders (cheap) go first, then the rest,
/// each ascending. The same ε and order as the full curve, to the bit (a
/// skipped order's ε is strictly above the minimum). nullopt when the KL
/// shortcut might apply (the caller then takes the full curve).
std::optional<RdpEpsilon> pruned_epsilon(double q, double sigma, double term_count,
                                         double compose_count, const std::vector<double>& orders,
                                         double delta, RdpConversion conversion);

/// RDP of one occurrence of a planned event at every order (RDP composes
/// additively, Mironov 2017 Prop. 1) under `relation`: the leaves without
/// sampling with that relation's sensitivity (docs/sampling.md#relations). A
/// leaf with no analysis under `relation` throws UnsupportedEvent (a sampled
/// one kRdpMixedRelations).
std::vector<double> plan_curve(const RdpPlan& plan, const std::vector<double>& orders,
                               Neighbouring relation);

}  // namespace dpb::detail
