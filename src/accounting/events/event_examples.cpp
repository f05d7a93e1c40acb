#include "accounting/events/event_examples.hpp"

#include <utility>

namespace dpb {
namespace {

/// The mechanism inside every wrapper's example.
EventPtr inner_gaussian() { return make_gaussian(1.0); }

}  // namespace

EventPtr example_event(std::type_identity<GaussianEvent>) { return make_gaussian(1.0); }
EventPtr example_event(std::type_identity<LaplaceEvent>) { return make_laplace(1.0); }
EventPtr example_event(std::type_identity<PoissonSampledEvent>) {
  return example_poisson_sampled(inner_gaussian());
}
EventPtr example_event(std::type_identity<SampledWithoutReplacementEvent>) {
  return example_sampled_without_replacement(inner_gaussian());
}
EventPtr example_event(std::type_identity<SelfComposedEvent>) {
  return make_self_composed(10, inner_gaussian());
}
EventPtr example_event(std::type_identity<ComposedEvent>) {
  return make_composed({inner_gaussian(), make_gaussian(2.0)});
}
EventPtr example_event(std::type_identity<NoOpEvent>) { return make_event(NoOpEvent{}); }
EventPtr example_event(std::type_identity<NonPrivateEvent>) {
  return make_event(NonPrivateEvent{});
}
EventPtr example_event(std::type_identity<EpsilonDeltaEvent>) {
  return make_event(EpsilonDeltaEvent{1.0, 1e-6});
}
EventPtr example_event(std::type_identity<DiscreteLaplaceEvent>) {
  return make_event(DiscreteLaplaceEvent{1.0, 1});
}
EventPtr example_event(std::type_identity<DiscreteGaussianEvent>) {
  return make_event(DiscreteGaussianEvent{2.0, 1, 1});
}
EventPtr example_event(std::type_identity<RandomizedResponseEvent>) {
  return make_event(RandomizedResponseEvent{0.5, 2});
}
EventPtr example_event(std::type_identity<ZcdpEvent>) { return make_event(ZcdpEvent{0.5, 0.0}); }
EventPtr example_event(std::type_identity<ExponentialMechanismEvent>) {
  return make_event(ExponentialMechanismEvent{1.0});
}
EventPtr example_event(std::type_identity<PermuteAndFlipEvent>) {
  return make_event(PermuteAndFlipEvent{1.0});
}
EventPtr example_event(std::type_identity<MixtureOfGaussiansEvent>) {
  return make_event(MixtureOfGaussiansEvent{1.0, {0.0, 1.0}, {0.99, 0.01}});
}
EventPtr example_event(std::type_identity<SampledWithReplacementEvent>) {
  return make_event(SampledWithReplacementEvent{1000, 10, inner_gaussian()});
}
EventPtr example_event(std::type_identity<SingleEpochTreeAggregationEvent>) {
  return make_event(SingleEpochTreeAggregationEvent{1.0, {100}});
}
EventPtr example_event(std::type_identity<RepeatAndSelectEvent>) {
  return make_event(RepeatAndSelectEvent{inner_gaussian(), 10.0, 1.0});
}
EventPtr example_event(std::type_identity<TruncatedSubsampledGaussianEvent>) {
  return make_event(TruncatedSubsampledGaussianEvent{1000, 0.01, 20, 1.0});
}

EventPtr example_event(std::type_identity<ShuffledEvent>) {
  return make_event(ShuffledEvent{100, inner_gaussian()});
}
EventPtr example_event(std::type_identity<RandomAllocationEvent>) {
  return make_event(RandomAllocationEvent{100, 1, inner_gaussian()});
}
EventPtr example_event(std::type_identity<MatrixMechanismEvent>) {
  return make_event(MatrixMechanismEvent{4.0, 2.0});
}
EventPtr example_event(std::type_identity<BandedMatrixFactorizationEvent>) {
  return make_event(BandedMatrixFactorizationEvent{0.01, 1.0, 1000, 4});
}

EventPtr example_poisson_sampled(EventPtr inner) {
  return make_poisson_sampled(0.01, std::move(inner));
}
EventPtr example_sampled_without_replacement(EventPtr inner) {
  return make_sampled_without_replacement(1000, 10, std::move(inner));
}

}  // namespace dpb
