// One name for one thing (ARCHITECTURE.md, "How an accountant sees an event"): the run's
// `Sampling` (how a DP-SGD run's loader draws its batches, dpsgd/dp_sgd_run.hpp) and the
// walk's `LeafSampling` (how a sampled wrapper event reaches one leaf mechanism,
// events/event_walk.hpp) are different types with different names. This file includes both
// headers, so a future clash of names fails the build here; its case checks the bridge between
// them: each run's event, walked, gives the leaf sampling its scheme stands for.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "accounting/dpsgd/dp_sgd_run.hpp"
#include "accounting/events/event_walk.hpp"

using namespace dpb;

static_assert(!std::is_same_v<Sampling, LeafSampling>);
static_assert(std::is_enum_v<Sampling>);

namespace {

/// One leaf as this test sees it: its kind, its noise and how it is sampled.
struct Leaf {
  std::string kind;
  double noise_multiplier = 0;
  LeafSampling sampling;
};

/// A planner that records every leaf (a catch-all: the rule that every accountant names every
/// kind is for accountants, not for this test).
struct RecordingPlanner {
  template <typename Kind>
  Planned<Leaf> operator()(const Kind& e, const LeafSampling& s) const {
    Leaf leaf{std::string(Kind::kName), 0, s};
    if constexpr (std::is_same_v<Kind, GaussianEvent>) leaf.noise_multiplier = e.noise_multiplier;
    return leaf;
  }
};

/// The run of the case below (N = 1000 records in batches of B = 100 for 2 epochs: q = B/N = 0.1,
/// T = 20 steps, t = N/B = 10 steps per epoch, docs/sampling.md#dp-sgd-run; 3 participations
/// per epoch under balls-in-bins) as its leaf should see it under `scheme`: the sampling the
/// scheme stands for (docs/sampling.md#schemes) and how often the leaf runs, T times or once per
/// epoch for the schemes analysed an epoch at a time. No default: a scheme added without its
/// leaf sampling here is a -Wswitch warning, an error under DPBUDGET_WERROR.
std::pair<LeafSampling, std::int64_t> expected_leaf(Sampling scheme) {
  switch (scheme) {
    case Sampling::poisson:
      return {PoissonSampling{0.1}, 20};
    case Sampling::without_replacement:
      return {WithoutReplacementSampling{1000, 100}, 20};
    case Sampling::shuffle:
      return {ShuffleSampling{10}, 2};
    case Sampling::balls_in_bins:
      return {AllocationSampling{10, 3}, 2};
  }
  return {NotSampled{}, 0};
}

}  // namespace

TEST_CASE("sampling names: each run's sampling scheme reaches its leaf as the walk's sampling") {
  DpSgdRun run;
  run.sampling_rate = 0.1;
  run.noise_multiplier = 1.1;
  run.steps = 20;
  run.dataset_size = 1000;
  run.batch_size = 100;
  run.epochs = 2;
  run.participations = 3;
  for (const Sampling scheme : {Sampling::poisson, Sampling::without_replacement, Sampling::shuffle,
                                Sampling::balls_in_bins}) {
    run.sampling = scheme;
    const auto [expected, count] = expected_leaf(scheme);
    CAPTURE(static_cast<int>(scheme));
    const Plan<Leaf> plan = plan_event<Leaf>(*dp_sgd_event(run), RecordingPlanner{}, "test");
    REQUIRE_FALSE(plan.refusal);
    REQUIRE(plan.terms.size() == 1);
    const auto& [leaf, n] = plan.terms.front();
    CHECK(leaf.kind == "gaussian");
    CHECK(leaf.noise_multiplier == 1.1);
    CHECK(leaf.sampling == expected);
    CHECK(n == count);
  }
}
