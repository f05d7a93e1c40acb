#include "accounting/amplification.hpp"

#include <cmath>
#include <limits>

#include "accounting/errors.hpp"

namespace dpb {
namespace {

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
  // log(1 + q(e^ε − 1)) = log1p(q·expm1(ε)); for large ε use ε + log(q + (1−q)e^{−ε}).
  const double eps = epsilon > 30 ? epsilon + std::log(q + (1 - q) * std::exp(-epsilon))
                                  : std::log1p(q * std::expm1(epsilon));
  return {eps, q * delta};
}

EpsDelta amplify_without_replacement(double epsilon, double delta, std::int64_t sample_size,
                                     std::int64_t dataset_size) {
  if (dataset_size < 1) throw InvalidParameter("source_dataset_size", "must be an integer >= 1");
  if (sample_size < 0 || sample_size > dataset_size)
    throw InvalidParameter("sample_size", "must be an integer in [0, source_dataset_size]");
  return amplify_poisson(epsilon, delta,
                         static_cast<double>(sample_size) / static_cast<double>(dataset_size));
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
