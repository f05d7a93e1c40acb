#pragma once
// The Gaussian mechanism as an (ε, δ) mechanism, docs/mechanisms.md#gaussian-profile: its exact
// privacy profile and σ calibration. Pure functions; InvalidParameter on bad input.
#include <vector>

namespace dpb {

/// Exact privacy profile of the Gaussian mechanism with noise standard
/// deviation σ and L2 sensitivity Δ (Balle & Wang 2018, "Improving the
/// Gaussian Mechanism for Differential Privacy", Theorem 8):
///   δ(ε) = Φ(Δ/(2σ) − εσ/Δ) − e^ε · Φ(−Δ/(2σ) − εσ/Δ),   ε ≥ 0.
/// This is the μ-GDP profile with μ = Δ/σ; computed in log space (never negative).
double gaussian_delta(double sigma, double epsilon, double sensitivity = 1);

/// Smallest ε with gaussian_delta(σ, ε) ≤ δ (root of the profile, rounded up).
double gaussian_epsilon(double sigma, double delta, double sensitivity = 1);

/// gaussian_epsilon nudged up until the profile, evaluated at the returned ε
/// itself, is ≤ δ: the root is solved in log δ, where exp∘log may put the
/// computed δ(ε) an ulp or two above δ. For reporting ε of a given noise.
double gaussian_epsilon_checked(double sigma, double delta, double sensitivity = 1);

/// Analytic calibration (Balle & Wang 2018, Algorithm 1, solved here by a safe
/// root finder on μ = Δ/σ instead of their series): the smallest σ with
/// gaussian_delta(σ, ε, Δ) ≤ δ, rounded up. Any ε ≥ 0, δ ∈ (0, 1).
double gaussian_sigma_analytic(double epsilon, double delta, double sensitivity = 1);

/// Classic calibration (Dwork & Roth 2014, Theorem A.1): σ = Δ·√(2 ln(1.25/δ))/ε.
/// Valid only for ε ∈ (0, 1): throws InvalidParameter("epsilon") otherwise.
double gaussian_sigma_classic(double epsilon, double delta, double sensitivity = 1);

/// Whether the classic calibration's theorem covers ε: 0 < ε < 1 (Dwork & Roth 2014, Theorem A.1).
bool gaussian_classic_applies(double epsilon);

/// The classic calibration read the other way: Theorem A.1 (Dwork & Roth
/// 2014) with σ = Δ·√(2 ln(1.25/δ))/ε solved for ε,
///   ε = Δ·√(2 ln(1.25/δ))/σ,
/// rounded up. The theorem covers only ε < 1: a noise too small for that
/// (σ ≤ Δ·√(2 ln(1.25/δ))) throws InvalidParameter("noise_multiplier")
/// naming the ε it would give. δ ∈ (0, 1).
double gaussian_epsilon_classic(double sigma, double delta, double sensitivity = 1);

/// The classic bound's δ at ε ∈ (0, 1) (Dwork & Roth 2014, Theorem A.1:
/// c² > 2 ln(1.25/δ) with c = εσ/Δ, met by every δ above 1.25·e^{−c²/2};
/// (ε, δ)-DP for all larger δ implies it at the infimum):
///   δ = min(1, 1.25·exp(−(εσ/Δ)²/2)),
/// rounded up; 1 (no guarantee) when the theorem gives nothing below it.
/// ε outside (0, 1) throws InvalidParameter("epsilon").
double gaussian_delta_classic(double sigma, double epsilon, double sensitivity = 1);

/// Per-layer (grouped) clipping: noise multipliers z_1..z_M on M parameter
/// groups whose clipping norms split C² = Σ C_m² act as one Gaussian
/// mechanism with z* = 1/√(Σ 1/z_m²) (each group's noise σ_m = z_m C_m; the
/// worst-case sensitivity direction puts C_m on group m). Computed scaled by
/// min z so that it neither overflows nor underflows.
double grouped_noise_multiplier(const std::vector<double>& z);

/// Adaptive clipping's quantile estimate (Andrew, Thakkar, McMahan & Ramaswamy
/// 2021, Theorem 1; docs/mechanisms.md#adaptive-clipping): each step also
/// releases the count of unclipped examples, summed as b − 1/2 (±1/2 each) with
/// Gaussian noise of deviation σ_b. Gradient (multiplier z_g) and count on the
/// same batch act as one Gaussian of multiplier (z_g⁻² + (2σ_b)⁻²)^(−1/2),
/// rounded down (a smaller σ is more privacy loss).
double combined_noise_multiplier(double gradient_multiplier, double count_noise);

/// The inverse: the gradient multiplier z_eff = (z⁻² − (2σ_b)⁻²)^(−1/2) that,
/// with the count noise σ_b, makes the run a Gaussian of multiplier z (the
/// theorem's statement), rounded up (more noise, less loss). Throws
/// NoSolution when 2σ_b ≤ z: the count alone already loses at least what
/// the target allows, and no gradient noise can meet it.
double gradient_noise_multiplier_for(double total_multiplier, double count_noise);

}  // namespace dpb
