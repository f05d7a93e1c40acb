#pragma once
// Privacy amplification by subsampling for (ε, δ)-DP mechanisms,
// docs/composition.md#amplification-poisson and
// docs/composition.md#amplification-without-replacement.
// Pure functions; InvalidParameter on bad input.
#include <cstdint>

#include "accounting/composition/composition.hpp"

namespace dpb {

/// Poisson sampling with rate q, add/remove neighbours (Li, Qardaji & Su
/// 2012, Theorem 1; Balle, Barthe & Gaboardi 2018, "Privacy Amplification by
/// Subsampling: Tight Analyses via Couplings and Divergences", Theorem 8):
///   an (ε, δ)-DP mechanism becomes (log(1 + q(e^ε − 1)), qδ)-DP.
/// q = 1 is the identity, q = 0 gives (0, 0).
EpsDelta amplify_poisson(double epsilon, double delta, double q);

/// Sampling m of N records without replacement, replace-one neighbours
/// (Balle, Barthe & Gaboardi 2018, Theorem 9): the same formula with q = m/N.
EpsDelta amplify_without_replacement(double epsilon, double delta, std::int64_t sample_size,
                                     std::int64_t dataset_size);

/// The inverse map on ε: the ε of the inner mechanism whose amplified ε is
/// `epsilon_amplified`, log(1 + (e^{ε'} − 1)/q), q ∈ (0, 1].
double amplification_inner_epsilon(double epsilon_amplified, double q);

}  // namespace dpb
