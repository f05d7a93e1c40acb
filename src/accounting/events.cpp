#include "accounting/events.hpp"

#include <cmath>

#include "accounting/errors.hpp"

namespace dpb {
namespace {

void require_event(const EventPtr& event) {
  if (!event) throw InvalidParameter("event", "missing");
}

}  // namespace

EventPtr make_gaussian(double noise_multiplier) {
  if (!(noise_multiplier > 0) || !std::isfinite(noise_multiplier))
    throw InvalidParameter("noise_multiplier", "must be a finite number > 0");
  return std::make_shared<const DpEvent>(GaussianEvent{noise_multiplier});
}

EventPtr make_laplace(double scale) {
  if (!(scale > 0) || !std::isfinite(scale))
    throw InvalidParameter("scale", "must be a finite number > 0");
  return std::make_shared<const DpEvent>(LaplaceEvent{scale});
}

EventPtr make_poisson_sampled(double sampling_probability, EventPtr event) {
  if (!(sampling_probability >= 0 && sampling_probability <= 1))
    throw InvalidParameter("sampling_probability", "must be in [0, 1]");
  require_event(event);
  return std::make_shared<const DpEvent>(
      PoissonSampledEvent{sampling_probability, std::move(event)});
}

EventPtr make_sampled_without_replacement(std::int64_t source_dataset_size,
                                          std::int64_t sample_size, EventPtr event) {
  if (source_dataset_size < 1)
    throw InvalidParameter("source_dataset_size", "must be an integer >= 1");
  if (sample_size < 0 || sample_size > source_dataset_size)
    throw InvalidParameter("sample_size", "must be an integer in [0, source_dataset_size]");
  require_event(event);
  return std::make_shared<const DpEvent>(
      SampledWithoutReplacementEvent{source_dataset_size, sample_size, std::move(event)});
}

EventPtr make_self_composed(std::int64_t count, EventPtr event) {
  if (count < 0) throw InvalidParameter("count", "must be an integer >= 0");
  require_event(event);
  return std::make_shared<const DpEvent>(SelfComposedEvent{count, std::move(event)});
}

EventPtr make_composed(std::vector<EventPtr> events) {
  for (const auto& e : events) require_event(e);
  return std::make_shared<const DpEvent>(ComposedEvent{std::move(events)});
}

EventPtr make_dp_sgd(double sampling_probability, double noise_multiplier, std::int64_t steps) {
  return make_self_composed(
      steps, make_poisson_sampled(sampling_probability, make_gaussian(noise_multiplier)));
}

std::string event_name(const DpEvent& event) {
  struct Namer {
    std::string operator()(const GaussianEvent&) const { return "gaussian"; }
    std::string operator()(const LaplaceEvent&) const { return "laplace"; }
    std::string operator()(const PoissonSampledEvent&) const { return "poisson_sampled"; }
    std::string operator()(const SampledWithoutReplacementEvent&) const {
      return "sampled_without_replacement";
    }
    std::string operator()(const SelfComposedEvent&) const { return "self_composed"; }
    std::string operator()(const ComposedEvent&) const { return "composed"; }
  };
  return std::visit(Namer{}, static_cast<const DpEvent::variant&>(event));
}

}  // namespace dpb
