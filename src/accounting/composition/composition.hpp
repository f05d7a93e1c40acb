#pragma once
// k-fold homogeneous composition of (ε, δ)-DP mechanisms: docs/composition.md#basic,
// docs/composition.md#advanced, docs/composition.md#optimal. Pure
// functions; InvalidParameter on bad input, NoSolution when a target δ is
// below what the theorem can ever give.
#include <cstdint>

namespace dpb {

struct EpsDelta {
  double epsilon;
  double delta;
};

/// Basic composition (Dwork, Kenthapadi, McSherry, Mironov & Naor 2006;
/// Dwork & Roth 2014, Theorem 3.16): (kε, kδ), δ capped at 1.
EpsDelta compose_basic(double epsilon, double delta, std::int64_t k);

/// Advanced composition (Dwork, Rothblum & Vadhan 2010, Theorem III.3; Dwork &
/// Roth 2014, Theorem 3.20), for δ' ∈ (0, 1]:
///   (ε·√(2k·ln(1/δ')) + k·ε·(e^ε − 1),  k·δ + δ').
EpsDelta compose_advanced(double epsilon, double delta, std::int64_t k, double delta_prime);

/// Smallest δ' the advanced bound takes from a total δ_total, relative to it.
/// δ_total and δ are decimals rounded to doubles and kδ rounds once more, so
/// δ_total − kδ is known only to ~3e-16·δ_total: a difference below 1e-12 of
/// it is rounding (1e-5 − 100·1e-7 is 1.7e-21 in doubles), not slack.
inline constexpr double kAdvancedMinSlack = 1e-12;

/// δ' of the advanced bound at a total target: δ' = δ_total − kδ, capped at 1.
/// NoSolution unless δ' > kAdvancedMinSlack·δ_total.
double advanced_slack(double delta, std::int64_t k, double target_delta);

/// The advanced bound at a total target δ_total, with δ' = advanced_slack().
double advanced_epsilon(double epsilon, double delta, std::int64_t k, double target_delta);

/// The advanced bound solved for δ' at a total ε_total (Dwork, Rothblum &
/// Vadhan 2010, Theorem III.3, inverted): the smallest δ' with
/// ε·√(2k·ln(1/δ')) + kε(e^ε − 1) ≤ ε_total, that is
///   δ' = exp(−x²/(2k)),  x = (ε_total − kε(e^ε − 1))/ε,
/// nudged up until compose_advanced() confirms it, capped at 1. 0 when ε = 0
/// or k = 0 (then any δ' > 0 works) or when δ' underflows (0 is the limit).
/// NoSolution if ε_total ≤ kε(e^ε − 1).
double advanced_delta_prime(double epsilon, std::int64_t k, double epsilon_total);

/// The advanced bound at a total ε_total: kδ + advanced_delta_prime(), capped at 1.
double advanced_delta(double epsilon, double delta, std::int64_t k, double epsilon_total);

/// Basic composition at a total target: kε if kδ ≤ δ_total, else NoSolution.
double basic_epsilon(double epsilon, double delta, std::int64_t k, double target_delta);

/// Basic composition at a total ε_total: kδ (capped at 1) if kε ≤ ε_total, else NoSolution.
double basic_delta(double epsilon, double delta, std::int64_t k, double epsilon_total);

/// Optimal composition, the exact privacy profile of the k-fold composition
/// of (ε, δ)-DP (Kairouz, Oh & Viswanath 2015, Theorem 3.3; Murtagh & Vadhan
/// 2016, Theorem 1.5):
///   δ_total(ε') = 1 − (1−δ)^k · (1 − δ_opt(ε')),
///   δ_opt(ε') = (1+e^ε)^{−k} Σ_{l=0..k} C(k,l) max(0, e^{(k−l)ε} − e^{ε'} e^{lε})
///             = Σ_{l : (k−2l)ε > ε'} Bin(l; k, p) · (1 − e^{ε' − (k−2l)ε}),  p = 1/(1+e^ε).
/// Evaluated in log space around the largest term (the summand is log-concave
/// in l) with a tail-bound stopping rule; the binomial weights use Loader's
/// saddle-point form (Loader 2000), accurate to ~1e-15 relative. k ≤ 10⁷ or so.
double optimal_delta(double epsilon, double delta, std::int64_t k, double epsilon_total);

/// Largest k the optimal theorem is evaluated for: its sum has O(√k) terms and
/// the solvers evaluate it hundreds of times (1e9 takes a third of a second, 2^53 hours).
inline constexpr std::int64_t kMaxOptimalCount = 1'000'000'000;

/// log δ_opt(ε') above (the KOV sum without the (1−δ)^k factor); −inf when 0.
double optimal_log_delta_sum(double epsilon, std::int64_t k, double epsilon_total);

/// Smallest ε' with optimal_delta(ε, δ, k, ε') ≤ δ_total: root of the
/// decreasing profile by a bracketing solver (TOMS 748) on [0, kε], rounded up.
/// NoSolution if δ_total < 1 − (1−δ)^k.
double optimal_epsilon(double epsilon, double delta, std::int64_t k, double target_delta);

/// The same with a chosen solver tolerance in bits (for searches that call it
/// many times and re-evaluate the winner at full precision).
double optimal_epsilon(double epsilon, double delta, std::int64_t k, double target_delta,
                       int tolerance_bits);

}  // namespace dpb
