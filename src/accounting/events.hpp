#pragma once
// Privacy events: what happened to the data, independent of how it is
// accounted. The vocabulary follows Google's dp_accounting DpEvent classes.
// Factories validate their parameters (throwing InvalidParameter), so an
// event that exists is well formed.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

namespace dpb {

struct DpEvent;
using EventPtr = std::shared_ptr<const DpEvent>;

/// One field of an event kind, as spec files name it. `min` is the smallest
/// value an integer field may take before the kind's own checks.
template <typename Event, typename Member>
struct EventField {
  std::string_view name;
  Member Event::*member;
  std::string_view meaning;
  std::int64_t min = 0;
};

// Each event kind says its name (dp_accounting's, in snake_case), a one-line
// meaning, and its fields in canonical order. Spec files (reader and writer),
// --print-spec and the every-kind tests iterate over these; nothing else
// lists them.

/// Gaussian mechanism with L2 sensitivity 1 and noise standard deviation σ.
struct GaussianEvent {
  static constexpr std::string_view kName = "gaussian";
  static constexpr std::string_view kMeaning =
      "Gaussian mechanism, noise standard deviation relative to the L2 sensitivity";
  double noise_multiplier;
  static constexpr auto fields() {
    return std::tuple{EventField<GaussianEvent, double>{
        "noise_multiplier", &GaussianEvent::noise_multiplier, "sigma / sensitivity, > 0"}};
  }
};

/// Laplace mechanism with L1 sensitivity 1 and scale b.
struct LaplaceEvent {
  static constexpr std::string_view kName = "laplace";
  static constexpr std::string_view kMeaning = "Laplace mechanism of scale b at L1 sensitivity 1";
  double scale;
  static constexpr auto fields() {
    return std::tuple{EventField<LaplaceEvent, double>{"scale", &LaplaceEvent::scale, "b, > 0"}};
  }
};

/// Each record takes part independently with probability q (add/remove).
struct PoissonSampledEvent {
  static constexpr std::string_view kName = "poisson_sampled";
  static constexpr std::string_view kMeaning =
      "each record takes part independently with probability q (add/remove)";
  double sampling_probability;
  EventPtr event;
  static constexpr auto fields() {
    return std::tuple{
        EventField<PoissonSampledEvent, double>{
            "sampling_probability", &PoissonSampledEvent::sampling_probability, "q in [0, 1]"},
        EventField<PoissonSampledEvent, EventPtr>{"event", &PoissonSampledEvent::event,
                                                  "the mechanism sampled"}};
  }
};

/// A batch of m records drawn without replacement from N (replace-one).
struct SampledWithoutReplacementEvent {
  static constexpr std::string_view kName = "sampled_without_replacement";
  static constexpr std::string_view kMeaning =
      "a batch of m of the N records, drawn without replacement (replace-one)";
  std::int64_t source_dataset_size;
  std::int64_t sample_size;
  EventPtr event;
  static constexpr auto fields() {
    using E = SampledWithoutReplacementEvent;
    return std::tuple{
        EventField<E, std::int64_t>{"source_dataset_size", &E::source_dataset_size, "N >= 1", 1},
        EventField<E, std::int64_t>{"sample_size", &E::sample_size, "m in [0, N]", 0},
        EventField<E, EventPtr>{"event", &E::event, "the mechanism sampled"}};
  }
};

/// The same event repeated `count` times.
struct SelfComposedEvent {
  static constexpr std::string_view kName = "self_composed";
  static constexpr std::string_view kMeaning = "the same event repeated count times";
  std::int64_t count;
  EventPtr event;
  static constexpr auto fields() {
    return std::tuple{EventField<SelfComposedEvent, std::int64_t>{
                          "count", &SelfComposedEvent::count, "repetitions, >= 0", 0},
                      EventField<SelfComposedEvent, EventPtr>{"event", &SelfComposedEvent::event,
                                                              "the event repeated"}};
  }
};

/// Different events, one after the other. Its spec form is the list itself:
/// {"composed": [EVENT, ...]}.
struct ComposedEvent {
  static constexpr std::string_view kName = "composed";
  static constexpr std::string_view kMeaning = "different events, one after the other";
  std::vector<EventPtr> events;
  static constexpr auto fields() {
    return std::tuple{EventField<ComposedEvent, std::vector<EventPtr>>{
        "events", &ComposedEvent::events, "a non-empty list of events"}};
  }
};

struct DpEvent : std::variant<GaussianEvent, LaplaceEvent, PoissonSampledEvent,
                              SampledWithoutReplacementEvent, SelfComposedEvent, ComposedEvent> {
  using variant::variant;
};

/// Calls `f.template operator()<Kind>()` for every event kind, in DpEvent's order.
template <typename F>
void for_each_event_kind(F&& f) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (f.template operator()<std::variant_alternative_t<I, DpEvent::variant>>(), ...);
  }
  (std::make_index_sequence<std::variant_size_v<DpEvent::variant>>{});
}

/// Validating factories, one per kind (throw InvalidParameter naming the field).
EventPtr make_event(GaussianEvent e);
EventPtr make_event(LaplaceEvent e);
EventPtr make_event(PoissonSampledEvent e);
EventPtr make_event(SampledWithoutReplacementEvent e);
EventPtr make_event(SelfComposedEvent e);
EventPtr make_event(ComposedEvent e);

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
