#pragma once
// The composition accountant's planner (events/event_walk.hpp): each leaf of
// an event becomes a CompositionAccountant::Step, its per-use (ε0, δ0)
// profile, amplified when sampled, under the neighbouring relation asked for.
// collect_steps() counts each distinct Step: the homogeneous theorems compose
// one Step repeated, the heterogeneous bounds a ledger of several. The planner itself, one
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

/// The ledger after `event` is added to `held` (what the accountant already
/// holds): each distinct Step once with its count; how many uses the event
/// added; or why the steps cannot be composed.
struct CollectedSteps {
  CompositionAccountant::Ledger ledger;
  std::int64_t count = 0;
  std::optional<std::string> error;
};

/// `mult` occurrences of `event` for the accountant holding `held`, under
/// `relation` (nullopt: inferred, see the planner). A ledger that mixes steps
/// inferred as replace-one (sampled without replacement) with add/remove ones
/// is refused (docs/composition.md#heterogeneous): no relation holds for both.
CollectedSteps collect_steps(const DpEvent& event, std::int64_t mult,
                             const CompositionAccountant::Ledger& held,
                             std::optional<Neighbouring> relation);

}  // namespace dpb::detail
