#include "accounting/events.hpp"

#include <cmath>
#include <string>
#include <utility>

#include "accounting/errors.hpp"

namespace dpb {
namespace {

void require_event(const EventPtr& event) {
  if (!event) throw InvalidParameter("event", "missing");
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

}  // namespace dpb
