#pragma once
// One example event of every kind, for what asks an accountant "do you take
// this kind?" without a user's event (the `dpbudget events` support matrix,
// round-trip tests). One overload per kind: a kind added to DpEvent without
// its example does not compile where for_each_event_kind asks for it.
// Wrappers hold a Gaussian (σ = 1) inside.
#include <type_traits>

#include "accounting/events/events.hpp"

namespace dpb {

EventPtr example_event(std::type_identity<GaussianEvent>);
EventPtr example_event(std::type_identity<LaplaceEvent>);
EventPtr example_event(std::type_identity<PoissonSampledEvent>);
EventPtr example_event(std::type_identity<SampledWithoutReplacementEvent>);
EventPtr example_event(std::type_identity<SelfComposedEvent>);
EventPtr example_event(std::type_identity<ComposedEvent>);
EventPtr example_event(std::type_identity<NoOpEvent>);
EventPtr example_event(std::type_identity<NonPrivateEvent>);
EventPtr example_event(std::type_identity<EpsilonDeltaEvent>);
EventPtr example_event(std::type_identity<DiscreteLaplaceEvent>);
EventPtr example_event(std::type_identity<DiscreteGaussianEvent>);
EventPtr example_event(std::type_identity<RandomizedResponseEvent>);
EventPtr example_event(std::type_identity<ZcdpEvent>);
EventPtr example_event(std::type_identity<ExponentialMechanismEvent>);
EventPtr example_event(std::type_identity<PermuteAndFlipEvent>);
EventPtr example_event(std::type_identity<MixtureOfGaussiansEvent>);
EventPtr example_event(std::type_identity<SampledWithReplacementEvent>);
EventPtr example_event(std::type_identity<SingleEpochTreeAggregationEvent>);
EventPtr example_event(std::type_identity<RepeatAndSelectEvent>);
EventPtr example_event(std::type_identity<TruncatedSubsampledGaussianEvent>);
EventPtr example_event(std::type_identity<ShuffledEvent>);
EventPtr example_event(std::type_identity<RandomAllocationEvent>);
EventPtr example_event(std::type_identity<MatrixMechanismEvent>);
EventPtr example_event(std::type_identity<BandedMatrixFactorizationEvent>);

/// The example of `Kind`.
template <typename Kind>
EventPtr example_event() {
  return example_event(std::type_identity<Kind>{});
}

/// Whether `Kind` holds other events (a wrapper: sampled, composed,
/// repeated) rather than being a mechanism (a leaf).
template <typename Kind>
constexpr bool is_wrapper_kind() {
  return std::apply(
      [](const auto&... field) {
        return (false || ... ||
                (std::is_same_v<std::remove_cvref_t<decltype(field.member)>, EventPtr Kind::*> ||
                 std::is_same_v<std::remove_cvref_t<decltype(field.member)>,
                                std::vector<EventPtr> Kind::*>));
      },
      Kind::fields());
}

/// `inner` inside each sampled wrapper, as the support matrix asks: Poisson
/// sampling (q = 0.01) and sampling without replacement (10 of 1000).
EventPtr example_poisson_sampled(EventPtr inner);
EventPtr example_sampled_without_replacement(EventPtr inner);

}  // namespace dpb
