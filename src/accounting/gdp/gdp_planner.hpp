#pragma once
// The GDP accountant's planner (events/event_walk.hpp): each leaf of an event
// becomes a GdpTerm, μ of one occurrence, exact or from the central limit
// theorem, under the neighbouring relation asked for. The planner itself, one
// overload per leaf kind and no catch-all, is in gdp_planner.cpp; this header
// holds what the accountant (gdp_accountant.cpp) reads: the term and gdp_plan().
#include <optional>

#include "accounting/events/event_walk.hpp"
#include "accounting/events/events.hpp"
#include "accounting/events/neighbouring.hpp"

namespace dpb::detail {

/// One leaf as the GDP accountant composes it: μ of one occurrence, and
/// whether it is exact or from the central limit theorem.
struct GdpTerm {
  double mu = 0;
  bool clt = false;
};

/// The refusal of an event that mixes the relations of two sampled events.
inline constexpr const char* kGdpMixedRelations =
    "gdp: cannot mix poisson_sampled (add/remove) and sampled_without_replacement "
    "(replace-one) events";

/// The plan of `event` for the GDP accountant. `relation`: the neighbouring
/// relation the user fixed, or nullopt (inferred: the sampled leaves fix it
/// and must agree, kGdpMixedRelations).
Plan<GdpTerm> gdp_plan(const DpEvent& event, std::optional<Neighbouring> relation);

}  // namespace dpb::detail
