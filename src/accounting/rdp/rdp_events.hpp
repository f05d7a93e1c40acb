#pragma once
// Rényi DP curves of the event kinds beyond the Gaussian and the Laplace
// mechanism (rdp.hpp): ε-DP mechanisms, zCDP, the exponential mechanism,
// k-ary randomized response, tree aggregation and repeat-and-select. Each
// value is an upper bound on the Rényi divergence at order α > 1 (rounded up),
// +inf where the divergence is infinite, never NaN.
#include <cstdint>
#include <span>
#include <vector>

namespace dpb {

/// RDP of binary randomized response with parameter ε (Mironov 2017,
/// Prop. 5), which bounds every ε-DP mechanism (Kairouz, Oh & Viswanath 2015,
/// Thm 2.1: binary randomized response dominates every ε-DP mechanism, so no
/// ε-DP pair has a larger Rényi divergence, a function of the pair's
/// trade-off curve). ε = 0 gives 0.
double rdp_pure_dp(double epsilon, double alpha);

/// (ξ, ρ)-zCDP: ξ + ρα (Bun & Steinke 2016, Def. 1.1).
double rdp_zcdp(double xi, double rho, double alpha);

/// The ξ of the ε-bounded-range bound of the exponential mechanism
/// (Cesar & Rogers 2021, Sec. 3): with t = ε/(e^ε − 1),
/// ξ = t − 1 − log t − ε²/8 (≤ 0), so that the mechanism is (ξ, ε²/8)-zCDP.
/// Rounded up.
double exponential_mechanism_xi(double epsilon);

/// RDP of the ε-DP exponential mechanism: min(ξ + ε²α/8, ε).
double rdp_exponential_mechanism(double epsilon, double alpha);

/// k-ary randomized response (true bucket w.p. 1 − p, else uniform over k),
/// replace-one: D_α(P‖Q) of P = (1 − p + p/k, p/k, ..., p/k) and Q the same
/// with the first two buckets swapped (symmetric, so one direction suffices).
double rdp_randomized_response_replace_one(double p, std::int64_t k, double alpha);

/// The same under replace-special: the special record's output is uniform
/// over the k buckets; max of D_α(P‖U) and D_α(U‖P).
double rdp_randomized_response_replace_special(double p, std::int64_t k, double alpha);

/// γ of the truncated negative binomial distribution with shape η ≥ 0 and the
/// given mean ≥ 1 (Papernot & Steinke 2022, Def. 1), rounded down (a smaller γ
/// only loosens Thm 2's bound). Shape 1 (geometric): 1/mean.
double truncated_negative_binomial_gamma(double shape, double mean);

/// RDP of repeat-and-select (Papernot & Steinke 2022) from the RDP curve of
/// one run (`inner[i]` at `orders[i]`): Thm 2 for the truncated negative
/// binomial count (shape η finite, including geometric η = 1 and logarithmic
/// η = 0), Thm 6 for the Poisson count (shape = +inf); then the bound at each
/// order is lowered to the smallest bound at any larger order (Rényi
/// divergences do not decrease with the order).
std::vector<double> rdp_repeat_and_select(std::span<const double> orders,
                                          std::span<const double> inner, double mean, double shape);

}  // namespace dpb
