#pragma once
// Privacy events: what happened to the data, independent of how it is
// accounted. The vocabulary follows Google's dp_accounting DpEvent classes.
// Factories validate their parameters (throwing InvalidParameter), so an
// event that exists is well formed.
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace dpb {

struct DpEvent;
using EventPtr = std::shared_ptr<const DpEvent>;

/// Gaussian mechanism with L2 sensitivity 1 and noise standard deviation σ.
struct GaussianEvent {
  double noise_multiplier;
};

/// Laplace mechanism with L1 sensitivity 1 and scale b.
struct LaplaceEvent {
  double scale;
};

/// Each record takes part independently with probability q (add/remove).
struct PoissonSampledEvent {
  double sampling_probability;
  EventPtr event;
};

/// A batch of m records drawn without replacement from N (replace-one).
struct SampledWithoutReplacementEvent {
  std::int64_t source_dataset_size;
  std::int64_t sample_size;
  EventPtr event;
};

/// The same event repeated `count` times.
struct SelfComposedEvent {
  std::int64_t count;
  EventPtr event;
};

/// Different events, one after the other.
struct ComposedEvent {
  std::vector<EventPtr> events;
};

struct DpEvent : std::variant<GaussianEvent, LaplaceEvent, PoissonSampledEvent,
                              SampledWithoutReplacementEvent, SelfComposedEvent, ComposedEvent> {
  using variant::variant;
};

EventPtr make_gaussian(double noise_multiplier);
EventPtr make_laplace(double scale);
EventPtr make_poisson_sampled(double sampling_probability, EventPtr event);
EventPtr make_sampled_without_replacement(std::int64_t source_dataset_size,
                                          std::int64_t sample_size, EventPtr event);
EventPtr make_self_composed(std::int64_t count, EventPtr event);
EventPtr make_composed(std::vector<EventPtr> events);

/// The DP-SGD run: `steps` Poisson-sampled Gaussian steps.
EventPtr make_dp_sgd(double sampling_probability, double noise_multiplier, std::int64_t steps);

/// Event name in the dp_accounting vocabulary ("gaussian", "poisson_sampled", ...).
std::string event_name(const DpEvent& event);

}  // namespace dpb
