#include "accounting/events/events.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "accounting/errors.hpp"
#include "accounting/events/neighbouring.hpp"
#include "accounting/numerics/outward.hpp"

namespace dpb {
namespace {

void require_event(const EventPtr& event) {
  if (!event) throw InvalidParameter("event", "missing");
}

void require_positive(double v, const char* field) {
  if (!(v > 0) || !std::isfinite(v)) throw InvalidParameter(field, "must be a finite number > 0");
}

void require_non_negative(double v, const char* field) {
  if (!(v >= 0) || !std::isfinite(v)) throw InvalidParameter(field, "must be a finite number >= 0");
}

void require_probability(double v, const char* field) {
  if (!(v >= 0 && v <= 1)) throw InvalidParameter(field, "must be in [0, 1]");
}

template <typename Kind>
EventPtr made(Kind&& e) {
  return std::make_shared<const DpEvent>(std::forward<Kind>(e));
}

}  // namespace

EventPtr make_event(GaussianEvent e) {
  if (!(e.noise_multiplier > 0) || !std::isfinite(e.noise_multiplier))
    throw InvalidParameter("noise_multiplier", "must be a finite number > 0");
  return std::make_shared<const DpEvent>(std::move(e));
}

EventPtr make_event(LaplaceEvent e) {
  if (!(e.scale > 0) || !std::isfinite(e.scale))
    throw InvalidParameter("scale", "must be a finite number > 0");
  return std::make_shared<const DpEvent>(std::move(e));
}

EventPtr make_event(PoissonSampledEvent e) {
  if (!(e.sampling_probability >= 0 && e.sampling_probability <= 1))
    throw InvalidParameter("sampling_probability", "must be in [0, 1]");
  require_event(e.event);
  return std::make_shared<const DpEvent>(std::move(e));
}

EventPtr make_event(SampledWithoutReplacementEvent e) {
  if (e.source_dataset_size < 1)
    throw InvalidParameter("source_dataset_size", "must be an integer >= 1");
  if (e.sample_size < 0) throw InvalidParameter("sample_size", "must be an integer >= 0");
  if (e.sample_size > e.source_dataset_size)
    throw InvalidParameter("sample_size", "must be <= source_dataset_size (" +
                                              std::to_string(e.source_dataset_size) + ")");
  require_event(e.event);
  return std::make_shared<const DpEvent>(std::move(e));
}

EventPtr make_event(SelfComposedEvent e) {
  if (e.count < 0) throw InvalidParameter("count", "must be an integer >= 0");
  require_event(e.event);
  return std::make_shared<const DpEvent>(std::move(e));
}

EventPtr make_event(ComposedEvent e) {
  for (const auto& inner : e.events) require_event(inner);
  return std::make_shared<const DpEvent>(std::move(e));
}

EventPtr make_event(NoOpEvent e) { return made(std::move(e)); }

EventPtr make_event(NonPrivateEvent e) { return made(std::move(e)); }

EventPtr make_event(EpsilonDeltaEvent e) {
  require_non_negative(e.epsilon, "epsilon");
  require_probability(e.delta, "delta");
  return made(std::move(e));
}

EventPtr make_event(DiscreteLaplaceEvent e) {
  require_positive(e.noise_parameter, "noise_parameter");
  if (e.sensitivity < 1) throw InvalidParameter("sensitivity", "must be an integer >= 1");
  return made(std::move(e));
}

EventPtr make_event(DiscreteGaussianEvent e) {
  require_positive(e.sigma, "sigma");
  if (e.sensitivity < 1) throw InvalidParameter("sensitivity", "must be an integer >= 1");
  if (e.dimension != 1)
    throw InvalidParameter("dimension",
                           "must be 1: only the univariate discrete Gaussian is analysed here");
  return made(std::move(e));
}

EventPtr make_event(RandomizedResponseEvent e) {
  require_probability(e.noise_parameter, "noise_parameter");
  if (e.num_buckets < 1) throw InvalidParameter("num_buckets", "must be an integer >= 1");
  return made(std::move(e));
}

EventPtr make_event(ZcdpEvent e) {
  require_non_negative(e.rho, "rho");
  require_non_negative(e.xi, "xi");
  return made(std::move(e));
}

EventPtr make_event(ExponentialMechanismEvent e) {
  require_non_negative(e.epsilon, "epsilon");
  return made(std::move(e));
}

EventPtr make_event(PermuteAndFlipEvent e) {
  require_non_negative(e.epsilon, "epsilon");
  return made(std::move(e));
}

EventPtr make_event(MixtureOfGaussiansEvent e) {
  require_positive(e.standard_deviation, "standard_deviation");
  if (e.sensitivities.empty())
    throw InvalidParameter("sensitivities", "must be a non-empty list of numbers >= 0");
  if (e.sampling_probs.size() != e.sensitivities.size())
    throw InvalidParameter("sampling_probs", "must have one probability per sensitivity (" +
                                                 std::to_string(e.sensitivities.size()) + ")");
  for (double c : e.sensitivities)
    if (!(c >= 0) || !std::isfinite(c))
      throw InvalidParameter("sensitivities", "every sensitivity must be a finite number >= 0");
  double sum = 0;
  for (double p : e.sampling_probs) {
    if (!(p >= 0 && p <= 1))
      throw InvalidParameter("sampling_probs", "every probability must be in [0, 1]");
    sum += p;
  }
  if (!(std::abs(sum - 1) <= kProbabilitySumTolerance))
    throw InvalidParameter("sampling_probs",
                           "must sum to 1 (they sum to " + std::to_string(sum) + ")");
  return made(std::move(e));
}

EventPtr make_event(SampledWithReplacementEvent e) {
  if (e.source_dataset_size < 1)
    throw InvalidParameter("source_dataset_size", "must be an integer >= 1");
  if (e.sample_size < 0) throw InvalidParameter("sample_size", "must be an integer >= 0");
  require_event(e.event);
  return made(std::move(e));
}

EventPtr make_event(SingleEpochTreeAggregationEvent e) {
  require_positive(e.noise_multiplier, "noise_multiplier");
  if (e.step_counts.empty())
    throw InvalidParameter("step_counts", "must be a number or a non-empty list of integers");
  bool any = false;
  for (std::int64_t t : e.step_counts) {
    if (t < 0) throw InvalidParameter("step_counts", "every step count must be an integer >= 0");
    any = any || t > 0;
  }
  if (!any) throw InvalidParameter("step_counts", "at least one tree must have a step");
  return made(std::move(e));
}

EventPtr make_event(RepeatAndSelectEvent e) {
  require_event(e.event);
  if (!(e.mean >= 1) || !std::isfinite(e.mean))
    throw InvalidParameter("mean", "must be a finite number >= 1");
  if (!(e.shape >= 0))
    throw InvalidParameter("shape", "must be a number >= 0 or \"inf\" (Poisson)");
  return made(std::move(e));
}

EventPtr make_event(TruncatedSubsampledGaussianEvent e) {
  if (e.dataset_size < 1) throw InvalidParameter("dataset_size", "must be an integer >= 1");
  require_probability(e.sampling_probability, "sampling_probability");
  if (e.truncated_batch_size < 0)
    throw InvalidParameter("truncated_batch_size", "must be an integer >= 0");
  require_positive(e.noise_multiplier, "noise_multiplier");
  return made(std::move(e));
}

EventPtr make_event(ShuffledEvent e) {
  if (e.num_steps < 1) throw InvalidParameter("num_steps", "must be an integer >= 1");
  require_event(e.event);
  return made(std::move(e));
}

EventPtr make_event(RandomAllocationEvent e) {
  if (e.num_steps < 1) throw InvalidParameter("num_steps", "must be an integer >= 1");
  if (e.num_participations < 1 || e.num_participations > e.num_steps)
    throw InvalidParameter("num_participations", "must be an integer in [1, num_steps (" +
                                                     std::to_string(e.num_steps) + ")]");
  require_event(e.event);
  return made(std::move(e));
}

EventPtr make_event(MatrixMechanismEvent e) {
  require_positive(e.noise_multiplier, "noise_multiplier");
  require_non_negative(e.sensitivity, "sensitivity");
  return made(std::move(e));
}

EventPtr make_event(BandedMatrixFactorizationEvent e) {
  require_probability(e.sampling_probability, "sampling_probability");
  require_positive(e.noise_multiplier, "noise_multiplier");
  if (e.steps < 0) throw InvalidParameter("steps", "must be an integer >= 0");
  if (e.bands < 1) throw InvalidParameter("bands", "must be an integer >= 1");
  return made(std::move(e));
}

EventPtr make_gaussian(double noise_multiplier) {
  return make_event(GaussianEvent{noise_multiplier});
}

EventPtr make_laplace(double scale) { return make_event(LaplaceEvent{scale}); }

EventPtr make_poisson_sampled(double sampling_probability, EventPtr event) {
  return make_event(PoissonSampledEvent{sampling_probability, std::move(event)});
}

EventPtr make_sampled_without_replacement(std::int64_t source_dataset_size,
                                          std::int64_t sample_size, EventPtr event) {
  return make_event(
      SampledWithoutReplacementEvent{source_dataset_size, sample_size, std::move(event)});
}

EventPtr make_self_composed(std::int64_t count, EventPtr event) {
  return make_event(SelfComposedEvent{count, std::move(event)});
}

EventPtr make_composed(std::vector<EventPtr> events) {
  return make_event(ComposedEvent{std::move(events)});
}

EventPtr make_dp_sgd(double sampling_probability, double noise_multiplier, std::int64_t steps) {
  return make_self_composed(
      steps, make_poisson_sampled(sampling_probability, make_gaussian(noise_multiplier)));
}

std::string event_name(const DpEvent& event) {
  return std::visit([](const auto& e) { return std::string(e.kName); },
                    static_cast<const DpEvent::variant&>(event));
}

std::string_view to_string(Neighbouring n) {
  switch (n) {
    case Neighbouring::add_remove:
      return "add_remove";
    case Neighbouring::replace_one:
      return "replace_one";
    case Neighbouring::replace_special:
      return "replace_special";
  }
  return "add_remove";
}

int tree_aggregation_depth(std::span<const std::int64_t> step_counts) {
  std::int64_t most = 0;
  for (std::int64_t t : step_counts) most = std::max(most, t);
  // ⌈log2(T + 1)⌉ is the number of bits of T.
  return static_cast<int>(std::bit_width(static_cast<std::uint64_t>(most)));
}

double matrix_mechanism_multiplier(double noise_multiplier, double sensitivity) {
  // docs/matrix.md#matrix-mechanism: one record moves C·x by at most Δ, the
  // noise is N(0, σ²I), so the release is the Gaussian mechanism at σ/Δ.
  const double m = outward::quotient_down(noise_multiplier, sensitivity);
  if (m == 0) return std::numeric_limits<double>::denorm_min();
  return std::min(m, std::numeric_limits<double>::max());
}

std::int64_t banded_rounds(std::int64_t steps, std::int64_t bands) {
  return steps / bands + (steps % bands != 0 ? 1 : 0);
}

EventPtr equivalent_event(const MatrixMechanismEvent& e) {
  if (e.sensitivity == 0) return make_event(NoOpEvent{});
  return make_gaussian(matrix_mechanism_multiplier(e.noise_multiplier, e.sensitivity));
}

EventPtr equivalent_event(const BandedMatrixFactorizationEvent& e) {
  // docs/matrix.md#amplified-banded (Choquette-Choo et al. 2023, Sec. 4).
  return make_dp_sgd(e.sampling_probability, e.noise_multiplier, banded_rounds(e.steps, e.bands));
}

}  // namespace dpb
