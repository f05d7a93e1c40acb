#pragma once
// Rényi DP of the Gaussian mechanism under sampling without replacement
// (fixed batch of m records out of N, replace-one neighbouring), docs/rdp.md#without-replacement:
// the bound of Wang, Balle & Kasiviswanathan 2019, as used by dp_accounting
// for SampledWithoutReplacementDpEvent. See rdp_without_replacement.cpp.
//
// Sensitivity convention. σ is the noise standard deviation divided by the L2
// clipping norm (docs/sampling.md#relations). Replacing one record moves the clipped sum by up to
// twice the clipping norm, so the base Gaussian has sensitivity 2 under
// replace-one and RDP ε(α) = α·2²/(2σ²) = 2α/σ². (dp_accounting instead reads
// its noise multiplier relative to the replace-one sensitivity, i.e. ε(α) =
// α/(2σ²): our value at σ equals dp_accounting's at σ/2.)
#include <span>
#include <vector>

namespace dpb {

/// Upper bound on the RDP ρ(α) of one step: a batch of m = ratio·N records
/// drawn without replacement, then the Gaussian mechanism with noise
/// multiplier σ (replace-one, sensitivity 2, see above). ratio ∈ [0, 1],
/// σ > 0, α > 1 (may be +inf). ratio 0 gives 0, ratio 1 gives 2α/σ². Never
/// NaN; may be +inf. Rounded up.
double rdp_sampled_without_replacement_gaussian(double sampling_ratio, double sigma, double alpha);

/// The same at every order of `orders` (shares the work between orders).
std::vector<double> rdp_sampled_without_replacement_gaussian(double sampling_ratio, double sigma,
                                                             std::span<const double> orders);

}  // namespace dpb
