#pragma once
// ε at one δ after each of many run lengths (a plot's points, a report's
// curve), for one accountant: the points are independent, so they are
// computed on every core; and a PLD point starts from the grid interval its
// neighbour ended on (neighbouring run lengths need nearly the same grid), so
// most points need one composition instead of a refinement sequence, and
// points share the discretised releases (pld::Options::share_releases: their
// last digits may differ from a query made alone, still sound). Each
// point is still refined until its own interval meets the tolerance: the
// answers are the accountant's, only found faster.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "accounting/accountant.hpp"

namespace dpb {

/// Guarantee i is accountant `name`'s ε at `delta` for event_of(counts[i]).
/// event_of must be safe to call from several threads at once.
std::vector<Guarantee> epsilon_series(const std::string& name, const AccountantOptions& options,
                                      const std::function<EventPtr(std::int64_t)>& event_of,
                                      std::span<const std::int64_t> counts, double delta);

}  // namespace dpb
