// Every accountant on every event kind: each either answers (a number, never
// NaN, never a silent zero for an event that leaks) or refuses with a reason,
// and what unsupported_reason says is what compose does. The kinds come from
// the event table (for_each_event_kind), so a new kind without a sample here
// is a compile error (no overload of sample()).
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "accounting/accountant.hpp"
#include "accounting/accountant_descriptor.hpp"
#include "accounting/errors.hpp"
#include "accounting/events/events.hpp"

using namespace dpb;

namespace {

// One well-formed event of each kind, each with a positive privacy loss.
EventPtr sample(std::type_identity<GaussianEvent>) { return make_gaussian(1.0); }
EventPtr sample(std::type_identity<LaplaceEvent>) { return make_laplace(1.0); }
EventPtr sample(std::type_identity<PoissonSampledEvent>) {
  return make_poisson_sampled(0.1, make_gaussian(1.0));
}
EventPtr sample(std::type_identity<SampledWithoutReplacementEvent>) {
  return make_sampled_without_replacement(100, 10, make_gaussian(1.0));
}
EventPtr sample(std::type_identity<SelfComposedEvent>) {
  return make_self_composed(3, make_gaussian(2.0));
}
EventPtr sample(std::type_identity<ComposedEvent>) {
  return make_composed({make_gaussian(2.0), make_laplace(2.0)});
}
// no_op is the one kind that leaks nothing (checked apart below).
EventPtr sample(std::type_identity<NoOpEvent>) { return make_event(NoOpEvent{}); }
EventPtr sample(std::type_identity<NonPrivateEvent>) { return make_event(NonPrivateEvent{}); }
EventPtr sample(std::type_identity<EpsilonDeltaEvent>) {
  return make_event(EpsilonDeltaEvent{1.0, 1e-7});
}
EventPtr sample(std::type_identity<DiscreteLaplaceEvent>) {
  return make_event(DiscreteLaplaceEvent{1.0, 1});
}
EventPtr sample(std::type_identity<DiscreteGaussianEvent>) {
  return make_event(DiscreteGaussianEvent{2.0, 1});
}
EventPtr sample(std::type_identity<RandomizedResponseEvent>) {
  return make_event(RandomizedResponseEvent{0.5, 4});
}
EventPtr sample(std::type_identity<ZcdpEvent>) { return make_event(ZcdpEvent{0.1, 0.01}); }
EventPtr sample(std::type_identity<ExponentialMechanismEvent>) {
  return make_event(ExponentialMechanismEvent{1.0});
}
EventPtr sample(std::type_identity<PermuteAndFlipEvent>) {
  return make_event(PermuteAndFlipEvent{1.0});
}
EventPtr sample(std::type_identity<MixtureOfGaussiansEvent>) {
  return make_event(MixtureOfGaussiansEvent{1.0, {0.0, 1.0, 2.0}, {0.5, 0.3, 0.2}});
}
EventPtr sample(std::type_identity<SampledWithReplacementEvent>) {
  return make_event(SampledWithReplacementEvent{100, 10, make_gaussian(1.0)});
}
EventPtr sample(std::type_identity<SingleEpochTreeAggregationEvent>) {
  return make_event(SingleEpochTreeAggregationEvent{2.0, {7, 3}});
}
EventPtr sample(std::type_identity<RepeatAndSelectEvent>) {
  return make_event(RepeatAndSelectEvent{make_gaussian(2.0), 5.0, 1.0});
}
EventPtr sample(std::type_identity<TruncatedSubsampledGaussianEvent>) {
  return make_event(TruncatedSubsampledGaussianEvent{1000, 0.05, 60, 1.0});
}

EventPtr sample(std::type_identity<ShuffledEvent>) {
  return make_event(ShuffledEvent{10, make_gaussian(1.0)});
}
EventPtr sample(std::type_identity<RandomAllocationEvent>) {
  return make_event(RandomAllocationEvent{10, 2, make_gaussian(1.0)});
}

EventPtr sample(std::type_identity<MatrixMechanismEvent>) {
  return make_event(MatrixMechanismEvent{3.0, 1.7});
}
EventPtr sample(std::type_identity<BandedMatrixFactorizationEvent>) {
  return make_event(BandedMatrixFactorizationEvent{0.05, 1.0, 100, 4});
}

/// A sample of every kind, plus each kind inside each sampled wrapper.
std::vector<EventPtr> every_kind() {
  std::vector<EventPtr> out;
  for_each_event_kind([&]<typename Kind>() {
    const EventPtr e = sample(std::type_identity<Kind>{});
    out.push_back(e);
    out.push_back(make_poisson_sampled(0.2, e));
    out.push_back(make_sampled_without_replacement(50, 10, e));
    out.push_back(make_event(ShuffledEvent{10, e}));
    out.push_back(make_event(RandomAllocationEvent{10, 1, e}));
  });
  return out;
}

/// Equal to a relative 1e-12, or both the same infinity (doctest's Approx
/// cannot compare infinities: non_private gives epsilon = inf).
bool same(double a, double b) { return a == b || a == doctest::Approx(b).epsilon(1e-12); }

constexpr double kKindsDelta = 1e-5;
constexpr double kEpsilon = 0.5;  // below the unsampled samples' pure epsilon 1, so delta > 0

}  // namespace

TEST_CASE("every accountant answers or refuses every event kind, with a reason") {
  int answered = 0, refused = 0;
  for (const auto& info : accountants()) {
    for (const auto& event : every_kind()) {
      auto acc = info.make(AccountantOptions{});
      INFO("accountant ", info.name, ", event ", event_name(*event));
      const auto why = acc->unsupported_reason(*event);
      if (why) {
        ++refused;
        CHECK(why->rfind(info.name + ": ", 0) == 0);  // names the accountant
        CHECK(why->size() > info.name.size() + 10);   // and says why
        CHECK_THROWS_AS(acc->compose(*event), UnsupportedEvent);
        continue;
      }
      ++answered;
      REQUIRE_NOTHROW(acc->compose(*event));
      const Guarantee e = acc->epsilon(kKindsDelta);
      CHECK_FALSE(std::isnan(e.epsilon));
      const Guarantee d = acc->delta(kEpsilon);
      CHECK(d.delta >= 0);
      CHECK(d.delta <= 1);
      if (std::holds_alternative<NoOpEvent>(*event)) {
        CHECK(e.epsilon == 0);  // nothing released, nothing lost
        CHECK(d.delta == 0);
        continue;
      }
      CHECK(e.epsilon > 0);  // every sample leaks: zero would be a silently dropped event
      // δ(kEpsilon) = 0 is right only for a pure guarantee at or below
      // kEpsilon (e.g. an amplified ε-DP sample), and then ε(δ) ≤ kEpsilon.
      CHECK((d.delta > 0 || e.epsilon <= kEpsilon));
    }
  }
  // Each leaf kind is supported unsampled by at least one accountant, and the
  // structural checks refuse at least the nested samplings.
  CHECK(answered > 0);
  CHECK(refused > 0);
}

TEST_CASE("self_composed of k equals the composed list of k copies, in every accountant") {
  for (const auto& info : accountants()) {
    for_each_event_kind([&]<typename Kind>() {
      const EventPtr e = sample(std::type_identity<Kind>{});
      for (std::int64_t k : {1, 2, 10}) {
        INFO("accountant ", info.name, ", event ", event_name(*e), ", k = ", k);
        auto self = info.make(AccountantOptions{});
        auto list = info.make(AccountantOptions{});
        const EventPtr repeated = make_self_composed(k, e);
        const EventPtr copies =
            make_composed(std::vector<EventPtr>(static_cast<std::size_t>(k), e));
        REQUIRE(self->supports(*repeated) == list->supports(*copies));
        if (!self->supports(*repeated)) continue;
        self->compose(*repeated);
        list->compose(*copies);
        const double a = self->epsilon(kKindsDelta).epsilon;
        const double b = list->epsilon(kKindsDelta).epsilon;
        CHECK(same(a, b));
        // And compose(e, k) is the same again.
        auto counted = info.make(AccountantOptions{});
        counted->compose(*e, k);
        CHECK(same(counted->epsilon(kKindsDelta).epsilon, a));
      }
    });
  }
}

TEST_CASE("a count of zero checks the event but adds nothing") {
  for (const auto& info : accountants()) {
    INFO("accountant ", info.name);
    auto acc = info.make(AccountantOptions{});
    acc->compose(*make_self_composed(0, make_gaussian(0.5)));
    CHECK(acc->epsilon(kKindsDelta).epsilon == 0);
    // A zero count of an unsupported event is still refused.
    const EventPtr nested = make_self_composed(
        0, make_poisson_sampled(0.1, make_poisson_sampled(0.5, make_gaussian(1))));
    CHECK(acc->unsupported_reason(*nested));
  }
}
