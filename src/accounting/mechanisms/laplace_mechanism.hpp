#pragma once
// The Laplace mechanism as an (ε, δ) mechanism, docs/mechanisms.md#laplace. Pure functions;
// InvalidParameter on bad input.
namespace dpb {

/// Calibration (Dwork, McSherry, Nissim & Smith 2006; Dwork & Roth 2014,
/// Theorem 3.6): scale b = Δ/ε gives ε-DP for L1 sensitivity Δ. Rounded up:
/// more noise is the safe side, so b·ε ≥ Δ exactly (checked by an fma residual).
double laplace_scale(double epsilon, double sensitivity = 1);

/// Pure ε of Laplace noise of scale b for L1 sensitivity Δ (the calibration
/// read the other way; Dwork & Roth 2014, Theorem 3.6): ε = Δ/b, rounded up
/// (b·ε ≥ Δ exactly, checked by an fma residual).
double laplace_pure_epsilon(double scale, double sensitivity = 1);

/// Exact privacy profile of Laplace noise of scale b and L1 sensitivity Δ,
/// with ε₀ = Δ/b: the privacy loss is supported on [−ε₀, ε₀] and
///   δ(ε) = max(0, 1 − e^{(ε − ε₀)/2})
/// (integrate (p(x) − e^ε p(x − Δ))₊ over the three pieces where the loss
/// is ε₀, linear, −ε₀; cf. Koskela, Jälkö & Honkela 2020). δ(0) is the total
/// variation distance 1 − e^{−ε₀/2}; δ(ε) = 0 for ε ≥ ε₀.
double laplace_delta(double scale, double epsilon, double sensitivity = 1);

/// Its inverse: ε(δ) = max(0, ε₀ + 2·log(1 − δ)); δ = 0 gives ε₀.
double laplace_epsilon(double scale, double delta, double sensitivity = 1);

}  // namespace dpb
