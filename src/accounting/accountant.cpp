#include "accounting/accountant.hpp"

#include <algorithm>
#include <cmath>

#include "accounting/risk/attack_risk.hpp"

// The interface's default: attack bounds read off an accountant's own privacy
// profile (docs/risk.md#trade-off-bound).
namespace dpb {
namespace {

/// The profile grid of the generic bound: ε_j = j·ε_max/kProfileSteps. Any
/// grid is sound (each point is a guarantee); this many keeps the bound
/// within a few percent of the profile's envelope at a few dozen δ(ε)
/// evaluations.
constexpr int kProfileSteps = 64;
/// ε_max: where the profile is down to this share of the smallest FPR asked
/// (beyond it the e^ε·x term dominates every line) ...
constexpr double kProfileDeltaShare = 1e-3;
/// ... but never below δ = 1e-14 (the accountants' δ floors are above it)
/// nor above ε = 60 (e^60·x > 1 for every x > 1e-26: lines past it say nothing).
constexpr double kProfileMinDelta = 1e-14;
constexpr double kProfileMaxEpsilon = 60;

}  // namespace

AttackBounds attack_bounds_from_profile(const Accountant& accountant,
                                        std::span<const double> fprs) {
  check_fprs(fprs);
  AttackBounds out;
  out.accountant = std::string(accountant.name());
  out.fpr.assign(fprs.begin(), fprs.end());
  auto note_of = [&](const Guarantee& g) {
    if (g.bound == BoundKind::approximate) out.bound = BoundKind::approximate;
    out.neighbouring = g.neighbouring;
    for (const auto& n : g.notes)
      if (std::find(out.notes.begin(), out.notes.end(), n) == out.notes.end())
        out.notes.push_back(n);
  };
  const Guarantee at_zero = accountant.delta(0);
  note_of(at_zero);
  out.advantage = std::min(1.0, at_zero.delta);

  const double smallest = *std::min_element(fprs.begin(), fprs.end());
  double eps_max = kProfileMaxEpsilon;
  {
    const Guarantee far =
        accountant.epsilon(std::max(kProfileDeltaShare * smallest, kProfileMinDelta));
    note_of(far);
    if (std::isfinite(far.epsilon) && far.epsilon > 0) eps_max = std::min(eps_max, far.epsilon);
  }
  out.tpr.assign(fprs.size(), 1.0);
  for (std::size_t i = 0; i < fprs.size(); ++i)
    out.tpr[i] = tpr_bound_epsilon_delta(0, at_zero.delta, fprs[i]);
  for (int j = 1; j <= kProfileSteps; ++j) {
    const double eps = eps_max * j / kProfileSteps;
    const Guarantee g = accountant.delta(eps);
    note_of(g);
    for (std::size_t i = 0; i < fprs.size(); ++i)
      out.tpr[i] = std::min(out.tpr[i], tpr_bound_epsilon_delta(eps, g.delta, fprs[i]));
  }
  out.details.emplace_back("profile_epsilon_max", eps_max);
  return out;
}

AttackBounds Accountant::attack_bounds(std::span<const double> fprs) const {
  return attack_bounds_from_profile(*this, fprs);
}

}  // namespace dpb
