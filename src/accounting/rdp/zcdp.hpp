#pragma once
// Zero-concentrated DP budgets in and out (docs/zcdp.md): ρ of Gaussian
// releases and of ε-DP mechanisms, composed; ρ → (ε, δ) by the conversion of
// Canonne, Kamath & Steinke 2020 (the RDP conversion of rdp.hpp applied to the
// curve ρα, over every order α > 1) or by Bun & Steinke 2016's simple bound;
// and (ε, δ) → the largest ρ whose conversion meets them. Pure numerics, no
// I/O; every upper value rounded up, every ρ solved for rounded down.
#include <cstdint>

namespace dpb {

/// Which theorem turns ρ-zCDP into (ε, δ)-DP (docs/zcdp.md#conversion).
enum class ZcdpConversion {
  cks,     ///< Canonne, Kamath & Steinke 2020, Prop. 12 (the tighter)
  simple,  ///< Bun & Steinke 2016, Prop. 1.3: ε = ρ + 2√(ρ log(1/δ))
};

/// ρ of `releases` Gaussian releases, each of noise standard deviation
/// `noise_sd` and L2 sensitivity `sensitivity`: T·Δ²/(2σ²) (Bun & Steinke
/// 2016, Prop. 1.6; composed by Lemma 1.7), docs/zcdp.md#gaussian. Rounded up.
/// σ, Δ > 0 finite, T ≥ 1.
double zcdp_gaussian_rho(double noise_sd, double sensitivity, std::int64_t releases);

/// ρ of `releases` ε-DP mechanisms: T·ε²/2 (Bun & Steinke 2016, Prop. 1.4;
/// Lemma 1.7), docs/zcdp.md#pure-dp. Rounded up. ε ≥ 0 finite, T ≥ 1.
double zcdp_pure_dp_rho(double epsilon, std::int64_t releases);

/// ρ of `releases` mechanisms of ρ each: T·ρ (Bun & Steinke 2016, Lemma 1.7),
/// rounded up. ρ ≥ 0 finite, T ≥ 1.
double zcdp_compose(double rho, std::int64_t releases);

/// ε of ρ-zCDP at δ, with the order α that gave it (0 for the simple bound).
struct ZcdpEpsilon {
  double epsilon;
  double order;
  bool kl_shortcut;  ///< ε = 0 from the Bretagnolle–Huber shortcut (docs/rdp.md#kl-shortcut)
};
/// The smallest ε the conversion gives for ρ-zCDP at δ ∈ (0, 1), rounded up
/// (docs/zcdp.md#conversion). ρ ≥ 0 finite.
ZcdpEpsilon zcdp_epsilon(double rho, double delta, ZcdpConversion conversion);

/// δ of ρ-zCDP at ε, with its order (0 for the simple bound).
struct ZcdpDelta {
  double delta;  ///< at most 1
  double order;
};
/// The smallest δ the conversion gives for ρ-zCDP at ε ≥ 0, rounded up.
ZcdpDelta zcdp_delta(double rho, double epsilon, ZcdpConversion conversion);

/// The largest ρ whose conversion to (ε, δ) meets ε at δ (docs/zcdp.md#from-epsilon-delta):
/// zcdp_epsilon(result, δ, conversion).epsilon ≤ ε holds for the returned
/// value, and a ρ larger by kZcdpRhoTolerance (relative) fails it. It does not
/// say that an (ε, δ)-DP mechanism is ρ-zCDP. ε ≥ 0 finite, δ ∈ (0, 1).
double zcdp_rho_for(double epsilon, double delta, ZcdpConversion conversion);

/// How close to the largest ρ zcdp_rho_for stops: 10⁻¹² relative, far below
/// the digits any output prints, so the answer is the largest ρ to every
/// printed digit.
inline constexpr double kZcdpRhoTolerance = 1e-12;

}  // namespace dpb
