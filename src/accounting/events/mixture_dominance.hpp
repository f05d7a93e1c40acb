#pragma once
// A sampled Gaussian that dominates a mixture of Gaussians, for the
// accountants that have no analysis of the mixture itself (RDP, composition).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "accounting/events/events.hpp"

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
  return {std::min(q, 1.0), scaled_noise_multiplier(e.standard_deviation, c)};
}

/// Binomial(k, q) probabilities of 0..k, from log-gamma (finite for large
/// k), normalised to sum to 1: the weights of a user's k Poisson-sampled
/// records in one batch (docs/sampling.md#user-level).
inline std::vector<double> binomial_weights(std::int64_t k, double q) {
  std::vector<double> w;
  const double kd = static_cast<double>(k);
  for (std::int64_t j = 0; j <= k; ++j) {
    const double jd = static_cast<double>(j);
    if (q == 0)
      w.push_back(j == 0 ? 1 : 0);
    else if (q == 1)
      w.push_back(j == k ? 1 : 0);
    else
      w.push_back(std::exp(std::lgamma(kd + 1) - std::lgamma(jd + 1) - std::lgamma(kd - jd + 1) +
                           jd * std::log(q) + (kd - jd) * std::log1p(-q)));
  }
  double sum = 0;
  for (double x : w) sum += x;
  for (double& x : w) x /= sum;
  return w;
}

/// A mixture of Gaussians that is, up to a relative `eta` in every weight,
/// the step of a user of k records under Poisson sampling at rate q: shifts
/// 0, 1, …, k with Binomial(k, q) weights.
struct BinomialMixture {
  std::int64_t records;
  double probability;
  double eta;
};

/// Largest relative difference between a weight and its Binomial(k, q) value
/// for the mixture to be read as a user-level step: far above the few ulps of
/// binomial_weights(), far below anything that changes a printed digit (the
/// RDP bound adds α/(α−1)·log(1+η) − log(1−η) for it).
inline constexpr double kBinomialMatch = 1e-9;

/// The user-level reading of `e`, when its shifts are exactly 0..k (k ≥ 2)
/// and its weights are Binomial(k, q) within kBinomialMatch, q being the
/// weights' mean shift over k.
inline std::optional<BinomialMixture> as_binomial_mixture(const MixtureOfGaussiansEvent& e) {
  const std::size_t n = e.sensitivities.size();
  if (n < 3) return std::nullopt;
  double mean = 0;
  for (std::size_t j = 0; j < n; ++j) {
    if (e.sensitivities[j] != static_cast<double>(j)) return std::nullopt;
    mean += static_cast<double>(j) * e.sampling_probs[j];
  }
  const auto k = static_cast<std::int64_t>(n - 1);
  const double q = mean / static_cast<double>(k);
  if (!(q > 0 && q < 1)) return std::nullopt;
  const std::vector<double> b = binomial_weights(k, q);
  double eta = 0;
  for (std::size_t j = 0; j < n; ++j) {
    if (b[j] == 0) {
      if (e.sampling_probs[j] != 0) return std::nullopt;
      continue;
    }
    eta = std::max(eta, std::abs(e.sampling_probs[j] - b[j]) / b[j]);
  }
  if (!(eta <= kBinomialMatch)) return std::nullopt;
  return BinomialMixture{k, q, eta};
}

}  // namespace dpb
