#pragma once
// A sampled Gaussian that dominates a mixture of Gaussians, for the
// accountants that have no analysis of the mixture itself (RDP, composition).
#include <algorithm>
#include <cstddef>

#include "accounting/events.hpp"

namespace dpb {

/// Poisson sampling with `probability` q' of a Gaussian of noise multiplier
/// σ' (sensitivity 1).
struct MixtureDominance {
  double probability;
  double noise_multiplier;
};

/// For N(0, s²) against P = Σ_i p_i N(c_i, s²) (c_i ≥ 0): with q' = Σ_{c_i > 0}
/// p_i and c = max c_i, the pair is dominated by the Poisson-subsampled
/// Gaussian of rate q' and σ' = s/c. Proof: P = (1 − q')N(0) + q'M with M the
/// mixture of the components with c_i > 0. For γ ≥ 1,
/// H_γ((1−q')Q + q'M ‖ Q) = q'·H_γ'(M ‖ Q), γ' = 1 + (γ − 1)/q' (Balle,
/// Barthe & Gaboardi 2018, Thm 2, an identity for this form), and in the
/// other direction H_γ(Q ‖ (1−q')Q + q'M) is likewise a nondecreasing
/// function of the hockey-stick divergences between Q and M. Each of these is
/// at most the mixture of those of the pairs (N(0), N(c_i)) (joint convexity)
/// and each of those at most that of (N(0), N(c)) (Gaussian trade-off
/// functions G_{c_i/s} ≥ G_{c/s}, Dong, Roth & Su 2022, Thm 2.7). Divergences
/// of every order γ in both directions bound the whole trade-off function,
/// hence every Rényi divergence (Zhu, Dong & Wang 2022, dominating pairs).
/// q' = 0 (or c = 0) means no loss: probability 0.
inline MixtureDominance dominating_sampled_gaussian(const MixtureOfGaussiansEvent& e) {
  double q = 0, c = 0;
  for (std::size_t i = 0; i < e.sensitivities.size(); ++i)
    if (e.sensitivities[i] > 0) {
      q += e.sampling_probs[i];
      c = std::max(c, e.sensitivities[i]);
    }
  if (c == 0) return {0, 1};
  // Probabilities that sum to 1 within make_event's tolerance may give q' a
  // hair above 1 in floating point: q' is a probability.
  return {std::min(q, 1.0), e.standard_deviation / c};
}

}  // namespace dpb
