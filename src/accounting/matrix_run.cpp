#include "accounting/matrix_run.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "accounting/answer.hpp"
#include "accounting/errors.hpp"
#include "accounting/matrix/sensitivity.hpp"
#include "accounting/numerics/outward.hpp"

namespace dpb {

double matrix_noise_multiplier(double sigma, double sensitivity_squared) {
  if (!(sigma > 0) || !std::isfinite(sigma))
    throw InvalidParameter("noise_multiplier", "sigma must be a finite number > 0");
  // √ is correctly rounded: one ulp up covers it; the quotient one ulp down.
  const double delta = outward::up(std::sqrt(sensitivity_squared), 1);
  // A sensitivity so large that σ/Δ underflows (or is infinite) is held at the
  // smallest double, as scaled_noise_multiplier() does: the accountants give
  // the σ → 0 limit, an infinite ε.
  const double z = outward::down(sigma / delta, 1);
  return z > 0 ? z : std::numeric_limits<double>::denorm_min();
}

double matrix_noise(double noise_multiplier, double sensitivity_squared) {
  const double delta = outward::up(std::sqrt(sensitivity_squared), 1);
  return outward::product_up(noise_multiplier, delta);
}

EventPtr matrix_release_event(double noise_multiplier) {
  return make_self_composed(1, make_gaussian(noise_multiplier));
}

DpSgdRun amplified_run(const matrix::Strategy& strategy, std::int64_t bands, double sampling_rate,
                       double sigma) {
  const auto b = matrix::bands_of(strategy);
  if (!b)
    throw InvalidParameter("bands",
                           "amplified banded MF needs a lower-triangular banded strategy; the "
                           "tree is not one");
  if (*b > bands)
    throw InvalidParameter("bands", "the strategy has " + std::to_string(*b) +
                                        " bands, more than " + std::to_string(bands) +
                                        ": amplification by cyclic Poisson sampling needs a "
                                        "strategy with at most b bands");
  // Each column norm² is rounded up (docs/matrix.md#rounding): one above 1 may
  // be 1 only by rounding, and is refused all the same.
  const auto norms = matrix::column_norms_squared(strategy);
  const double largest = *std::max_element(norms.begin(), norms.end());
  if (largest > 1.0)
    throw InvalidParameter("strategy", "its largest column norm is " +
                                           shown_number(std::sqrt(largest)) +
                                           ", above 1: amplified banded MF needs every column of "
                                           "norm at most 1 (normalise the coefficients)");
  const std::int64_t n = matrix::steps(strategy);
  DpSgdRun run;
  run.sampling_rate = sampling_rate;
  run.noise_multiplier = sigma;
  run.steps = (n + bands - 1) / bands;
  run.sampling = Sampling::poisson;
  return run;
}

EventPtr amplified_event(double sampling_rate, double sigma, std::int64_t steps,
                         std::int64_t bands) {
  return make_event(BandedMatrixFactorizationEvent{sampling_rate, sigma, steps, bands});
}

SigmaSolution calibrate_release(const std::string& accountant, const AccountantOptions& options,
                                double target, const RunTarget& what,
                                const CalibrationSettings& settings, bool sensitivity_exact) {
  const EpsilonOracle oracle{accountant, options, what.delta, what.measure, what.fpr};
  SigmaSolution out =
      smallest_noise_multiplier([](double z) { return matrix_release_event(z); }, oracle, target,
                                settings.tolerance, settings.max_sigma);
  claim_lower_end(out.guarantee, sensitivity_exact);
  return out;
}

namespace {

/// The most distinct noise multipliers amplified_attained_event composes: each is a
/// discretised release for PLD, and a group of a dense strategy may have ⌈n/b⌉ distinct
/// column norms. 32 keeps the extra composition to a fraction of the run's own.
constexpr std::size_t kMaxAttainedReleases = 32;

}  // namespace

EventPtr amplified_attained_event(const matrix::Strategy& strategy, std::int64_t bands,
                                  double sampling_rate, double sigma) {
  const std::vector<double> norms = matrix::column_norms_squared_down(strategy);
  const auto n = static_cast<std::int64_t>(norms.size());
  // The group of largest Σ‖c_s‖² (first on ties).
  std::int64_t group = 0;
  double heaviest = -1;
  for (std::int64_t g = 0; g < std::min(bands, n); ++g) {
    double sum = 0;
    for (std::int64_t s = g; s < n; s += bands) sum += norms[static_cast<std::size_t>(s)];
    if (sum > heaviest) heaviest = sum, group = g;
  }
  std::vector<double> squares;
  for (std::int64_t s = group; s < n; s += bands)
    if (norms[static_cast<std::size_t>(s)] > 0)
      squares.push_back(norms[static_cast<std::size_t>(s)]);
  std::sort(squares.begin(), squares.end());
  std::size_t distinct = 0;  // counted, not std::unique'd: the multiset is the pair
  for (std::size_t i = 0; i < squares.size(); ++i)
    if (i == 0 || squares[i] != squares[i - 1]) ++distinct;
  if (distinct > kMaxAttainedReleases) {
    // Floored to multiples of 1/kMaxAttainedReleases (norms² ≤ 1 here): at most that many
    // distinct values, each no larger than the column's, a zero one left out.
    constexpr auto kGrid = static_cast<double>(kMaxAttainedReleases);
    squares.clear();
    for (std::int64_t s = group; s < n; s += bands) {
      const double floored = std::floor(norms[static_cast<std::size_t>(s)] * kGrid) / kGrid;
      if (floored > 0) squares.push_back(floored);
    }
    std::sort(squares.begin(), squares.end());
  }
  // Each distinct norm² v, composed as often as it occurs, at σ/√v rounded up.
  std::vector<EventPtr> releases;
  for (std::size_t i = 0; i < squares.size();) {
    std::size_t j = i;
    while (j < squares.size() && squares[j] == squares[i]) ++j;
    const double norm = outward::down(std::sqrt(squares[i]), 1);  // √ is correctly rounded
    const double multiplier = outward::quotient_up(sigma, norm);
    // A multiplier past the largest double is noise no record shows through: left out.
    if (norm > 0 && std::isfinite(multiplier))
      releases.push_back(
          make_self_composed(static_cast<std::int64_t>(j - i),
                             make_poisson_sampled(sampling_rate, make_gaussian(multiplier))));
    i = j;
  }
  if (releases.empty()) return nullptr;
  return make_composed(std::move(releases));
}

SigmaSolution calibrate_amplified(const matrix::Strategy& strategy, double sampling_rate,
                                  std::int64_t bands, const std::string& accountant,
                                  const AccountantOptions& options, double target,
                                  const RunTarget& what, const CalibrationSettings& settings) {
  const EpsilonOracle oracle{accountant, options, what.delta, what.measure, what.fpr};
  const std::int64_t steps = matrix::steps(strategy);
  SigmaSolution out = smallest_noise_multiplier(
      [&](double sigma) { return amplified_event(sampling_rate, sigma, steps, bands); }, oracle,
      target, settings.tolerance, settings.max_sigma);
  if (const EventPtr attained =
          amplified_attained_event(strategy, bands, sampling_rate, out.noise_multiplier))
    claim_attained_lower_end(out.guarantee, *attained, options);
  return out;
}

}  // namespace dpb
