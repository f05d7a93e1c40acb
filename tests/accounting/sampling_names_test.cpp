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

}  // namespace

TEST_CASE("sampling names: each run's sampling scheme reaches its leaf as the walk's sampling") {
  // N = 1000 records in batches of B = 100 for 2 epochs: q = B/N = 0.1, T = 20 steps, t = N/B = 10
  // steps per epoch (docs/sampling.md#dp-sgd-run).
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
    // What the scheme stands for (docs/sampling.md#schemes), and how often it runs:
    // T steps, or one leaf per epoch for the schemes analysed an epoch at a time.
    LeafSampling expected;
    std::int64_t count = 0;
    switch (scheme) {  // no default: a new scheme without its leaf sampling warns (-Wswitch)
      case Sampling::poisson:
        expected = PoissonSampling{0.1};
        count = 20;
        break;
      case Sampling::without_replacement:
        expected = WithoutReplacementSampling{1000, 100};
        count = 20;
        break;
      case Sampling::shuffle:
        expected = ShuffleSampling{10};
        count = 2;
        break;
      case Sampling::balls_in_bins:
        expected = AllocationSampling{10, 3};
        count = 2;
        break;
    }
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
