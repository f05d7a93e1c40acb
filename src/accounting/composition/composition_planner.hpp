#pragma once
// The composition accountant's planner (events/event_walk.hpp): each leaf of
// an event becomes a CompositionAccountant::Step, its per-use (ε0, δ0)
// profile, amplified when sampled, under the neighbouring relation asked for.
// The theorems compose repetitions of one mechanism, so collect_steps() checks
// that the leaves repeat one Step and counts them. The planner itself, one
// overload per leaf kind and no catch-all, is in composition_planner.cpp.
#include <cstdint>
#include <optional>
#include <string>

#include "accounting/composition/composition_accountant.hpp"
#include "accounting/errors.hpp"
#include "accounting/events/events.hpp"
#include "accounting/events/neighbouring.hpp"

namespace dpb::detail {

/// a + b for counts of steps; throws InvalidParameter past int64.
inline std::int64_t checked_count_sum(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) throw InvalidParameter("count", "too many steps");
  return r;
}

/// The one Step that `event` repeats (after `held`, what the accountant
/// already holds) and how often, or why the theorems do not apply.
struct CollectedSteps {
  std::optional<CompositionAccountant::Step> step;
  std::int64_t count = 0;
  std::optional<std::string> error;
};

/// `mult` occurrences of `event` for the accountant holding `held` (a Step
/// or nothing yet), under `relation` (nullopt: inferred, see the planner).
CollectedSteps collect_steps(const DpEvent& event, std::int64_t mult,
                             const std::optional<CompositionAccountant::Step>& held,
                             std::optional<Neighbouring> relation);

}  // namespace dpb::detail
