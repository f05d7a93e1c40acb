#pragma once
// Gaussian differential privacy (Dong, Roth & Su 2022, "Gaussian Differential
// Privacy", JRSS-B; Bu, Dong, Long & Su 2020, "Deep Learning with Gaussian
// Differential Privacy"): docs/gdp.md#gdp-profile, docs/gdp.md#composition,
// docs/gdp.md#clt-poisson. Pure functions; arguments are validated
// with InvalidParameter.
#include <cstdint>
#include <span>

namespace dpb {

/// δ(ε) of μ-GDP (Dong, Roth & Su 2022, Corollary 2.13):
///   δ(ε) = Φ(−ε/μ + μ/2) − e^ε · Φ(−ε/μ − μ/2),   μ ≥ 0 (may be +inf), ε ≥ 0.
/// Evaluated in log space, never negative, accurate for large ε and tiny δ.
double gdp_delta(double mu, double epsilon);

/// log δ(ε) of μ-GDP (−inf when δ underflows or is 0).
double gdp_log_delta(double mu, double epsilon);

/// Smallest ε with δ(ε) ≤ δ for μ-GDP, δ ∈ [0, 1]: a root of the decreasing
/// δ(ε), bracketed by [0, μ²/2 − μ·Φ⁻¹(δ)] (there Φ(−ε/μ + μ/2) ≤ δ already),
/// solved in log δ, and rounded up (the returned ε satisfies δ(ε) ≤ δ as
/// computed). δ = 0 gives +inf (for μ > 0). No upper limit on ε (μ = 26 gives ε ≈ 444).
double gdp_epsilon(double mu, double delta);

/// Composition of μᵢ-GDP mechanisms: √(Σ μᵢ²)-GDP (Dong, Roth & Su 2022, Corollary 3.3).
double gdp_compose(std::span<const double> mus);

/// k-fold self-composition of μ-GDP: √k·μ.
double gdp_self_compose(double mu, std::int64_t k);

/// Group privacy for groups of k records: kμ-GDP (Dong, Roth & Su 2022, Theorem 2.14).
double gdp_group(double mu, std::int64_t k);

/// μ-GDP of one Gaussian mechanism with noise standard deviation σ and
/// sensitivity Δ: μ = Δ/σ (Dong, Roth & Su 2022, Theorem 2.7).
double gdp_gaussian_mu(double sigma, double sensitivity = 1);

/// Central-limit μ of T Poisson-subsampled Gaussian steps (Bu, Dong, Long & Su
/// 2020, §3, the Poisson-sampling central limit theorem): μ = q·√(T·(e^{1/σ²} − 1)). An asymptotic
/// approximation, not an upper bound.
double gdp_clt_mu_poisson(double q, double sigma, double steps);

/// Central-limit μ for uniform (fixed-size, shuffled) sampling (Bu, Dong,
/// Long & Su 2020, §3, the uniform-sampling central limit theorem):
///   μ = √2 · q · √(T·(e^{1/σ²}·Φ(1.5/σ) + 3Φ(−0.5/σ) − 2)).
/// An asymptotic approximation, not an upper bound.
double gdp_clt_mu_uniform(double q, double sigma, double steps);

/// Trade-off function of μ-GDP (Dong, Roth & Su 2022, Definition 2.4):
/// G_μ(x) = Φ(Φ⁻¹(1 − x) − μ), x ∈ [0, 1].
double gdp_tradeoff(double mu, double x);

/// Trade-off function of (ε, δ)-DP (Dong, Roth & Su 2022, eq. (2.5); Kairouz et al. 2015):
/// f_{ε,δ}(x) = max(0, 1 − δ − e^ε x, e^{−ε}(1 − δ − x)), x ∈ [0, 1].
double eps_delta_tradeoff(double epsilon, double delta, double x);

}  // namespace dpb
