#include "accounting/composition/amplification.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "accounting/errors.hpp"
#include "accounting/numerics/outward.hpp"

namespace dpb {
namespace {

/// Ulps by which the amplified ε is stepped up. log1p(q·expm1(ε)): expm1 and
/// the product ≤ 1 ulp relative each, and log1p's condition number
/// x/((1 + x)·log1p(x)) ≤ 1 keeps that relative, plus log1p's own ulp: ≤ 3
/// ulps. For ε > 30, ε + log(q + (1 − q)e^{−ε}): the log's argument is within
/// 3u, its value ≥ log q, and the sum rounds once: a few ulps of ε. 8 leave
/// room.
constexpr int kAmplifyUlps = 8;
/// Largest ε whose expm1 is finite with room (e^709.78 overflows a double).
constexpr double kExpm1Limit = 700;

void check(double epsilon, double delta, double q) {
  if (!(epsilon >= 0)) throw InvalidParameter("epsilon", "must be a number >= 0");
  if (!(delta >= 0 && delta <= 1)) throw InvalidParameter("delta", "must be in [0, 1]");
  if (!(q >= 0 && q <= 1)) throw InvalidParameter("sampling_probability", "must be in [0, 1]");
}

}  // namespace

EpsDelta amplify_poisson(double epsilon, double delta, double q) {
  check(epsilon, delta, q);
  if (q == 1) return {epsilon, delta};
  if (q == 0) return {0, 0};
  // log(1 + q(e^ε − 1)) = log1p(q·expm1(ε)); where expm1 would overflow use
  // ε + log(q + (1−q)e^{−ε}) (it cancels when q·e^ε is small, so not sooner).
  const double eps = epsilon > kExpm1Limit ? epsilon + std::log(q + (1 - q) * std::exp(-epsilon))
                                           : std::log1p(q * std::expm1(epsilon));
  // ε rounded up (docs/composition.md#amplification-poisson) by kAmplifyUlps. qδ, a product of the
  // inputs, to nearest: see compose_basic (composition.cpp) for why.
  return {outward::up(eps, kAmplifyUlps), q * delta};
}

EpsDelta amplify_without_replacement(double epsilon, double delta, std::int64_t sample_size,
                                     std::int64_t dataset_size) {
  if (dataset_size < 1) throw InvalidParameter("source_dataset_size", "must be an integer >= 1");
  if (sample_size < 0 || sample_size > dataset_size)
    throw InvalidParameter("sample_size", "must be an integer in [0, source_dataset_size]");
  // The amplified ε grows with q = m/N: computed from the quotient rounded up
  // (ε is transcendental, never a short decimal); δ = qδ to nearest as in
  // amplify_poisson.
  if (sample_size == 0) return amplify_poisson(epsilon, delta, 0.0);
  const double m = static_cast<double>(sample_size), n = static_cast<double>(dataset_size);
  return {amplify_poisson(epsilon, delta, std::min(1.0, outward::quotient_up(m, n))).epsilon,
          m / n * delta};
}

double amplification_inner_epsilon(double epsilon_amplified, double q) {
  if (!(epsilon_amplified >= 0)) throw InvalidParameter("epsilon", "must be a number >= 0");
  if (!(q > 0 && q <= 1)) throw InvalidParameter("sampling_probability", "must be in (0, 1]");
  if (q == 1) return epsilon_amplified;
  if (epsilon_amplified > 30)  // log((e^{ε'} − 1 + q)/q) = ε' + log((1 − (1−q)e^{−ε'})/q)
    return epsilon_amplified + std::log1p(-(1 - q) * std::exp(-epsilon_amplified)) - std::log(q);
  return std::log1p(std::expm1(epsilon_amplified) / q);
}

}  // namespace dpb
