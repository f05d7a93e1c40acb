#pragma once
// What an (ε, δ), Rényi or Gaussian-DP guarantee says about membership
// inference (docs/risk.md#trade-off-bound). A membership-inference attack is a test between the
// output laws of two neighbouring datasets; its false-positive rate x is its
// type I error and its true-positive rate is 1 − (type II error). Any
// mechanism with trade-off function f (Dong, Roth & Su 2022, Def. 2.1) lets
// no test at FPR x reach a TPR above 1 − f(x).
#include <span>
#include <vector>

namespace dpb {

/// TPR ≤ min(1, e^ε·x + δ, 1 − e^{−ε}(1 − δ − x)) under (ε, δ)-DP: one minus
/// its trade-off function (Kairouz, Oh & Viswanath 2015; Dong, Roth & Su
/// 2022, eq. (2.5)). x ∈ [0, 1].
double tpr_bound_epsilon_delta(double epsilon, double delta, double fpr);

/// TPR ≤ Φ(Φ⁻¹(x) + μ) under μ-GDP (Dong, Roth & Su 2022, Def. 2.5:
/// 1 − G_μ(x)). Exact for the Gaussian mechanism with sensitivity/σ = μ.
double tpr_bound_gdp(double mu, double fpr);

/// Advantage of μ-GDP: max_x (Φ(Φ⁻¹(x) + μ) − x) = 2Φ(μ/2) − 1, the total
/// variation distance of N(0, 1) and N(μ, 1) (attained at x = Φ(−μ/2)).
double advantage_gdp(double mu);

/// TPR bound implied by a Rényi-DP curve at all orders at once (Balle,
/// Barthe, Gaboardi, Hsu & Sato 2020, "Hypothesis testing interpretations
/// and Rényi differential privacy", Thm 21; Zhu, Dong & Wang 2022, §5): a
/// test is a post-processing to one bit, so for every order α the Bernoulli
/// laws of "reject" under the two datasets, Bern(p) and Bern(x), keep
/// D_α(Bern(p) ‖ Bern(x)) ≤ ρ(α) and D_α(Bern(x) ‖ Bern(p)) ≤ ρ(α) (Rényi
/// divergence's data-processing inequality; the curve bounds both orders of
/// the pair, as the RDP to (ε, δ) conversion assumes). The largest such p ≥ x,
/// minimised over the orders, is returned, rounded up (bisection's upper end).
/// `extra_delta` (epsilon_delta events outside the curve, δₑ): with
/// probability 1 − δₑ the output follows the curve, so p ≤ (1 − δₑ)·p*(x/(1 −
/// δₑ)) + δₑ.
double tpr_bound_rdp(std::span<const double> orders, std::span<const double> rdp, double fpr,
                     double extra_delta = 0);

/// Precision of a flagged record's membership at prior π (the posterior
/// probability that a record the attack flags was used): π·TPR / (π·TPR +
/// (1 − π)·FPR), increasing in TPR, so a TPR upper bound gives an upper bound
/// (docs/risk.md#precision). 1 when FPR = 0 and TPR > 0.
double precision_bound(double prior, double tpr, double fpr);

/// Throws InvalidParameter unless every false-positive rate is in (0, 1).
void check_fprs(std::span<const double> fprs);

}  // namespace dpb
