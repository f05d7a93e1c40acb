#pragma once
// The PLD accountant's planner (events/event_walk.hpp): each leaf of an event
// becomes a PldTerm, the privacy loss pair of its release (pld::Mechanism,
// discretised only when the accountant composes) or epochs of random
// allocation, and whether the pair is attained by neighbouring datasets or
// only dominates, under the neighbouring relation asked for. The planner
// itself, one overload per leaf kind and no catch-all, is in pld_planner.cpp;
// this header holds what the accountant (pld_accountant.cpp) reads: the term
// and pld_plan().
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "accounting/events/event_walk.hpp"
#include "accounting/events/events.hpp"
#include "accounting/events/neighbouring.hpp"
#include "accounting/pld/pld.hpp"

namespace dpb::detail {

/// One leaf as the PLD accountant composes it; nullopt mechanism = no privacy
/// loss (no_op, a Poisson-sampled release with q = 0, ...).
struct PldTerm {
  std::optional<pld::Mechanism> mechanism;
  /// Instead of `mechanism`: epochs of random allocation, `count` allocations
  /// of one of `steps` steps each, discretised when composed (planning stays
  /// cheap) into a pessimistic PLD for the upper bounds and an optimistic one
  /// for the lower bounds (random_allocation.hpp).
  struct Allocation {
    std::int64_t steps;
    double noise_multiplier;
    std::int64_t count;
  };
  std::vector<Allocation> allocations = {};
  /// When set: the pair composed for the interval's lower end instead of
  /// `mechanism`, which then only dominates the leaf while this pair is attained
  /// by neighbouring datasets (fixed-size batches, docs/pld.md#without-replacement).
  /// Its upper end is never claimed; `attained` speaks of this pair.
  std::optional<pld::Mechanism> lower = std::nullopt;
  /// A note for the guarantees when the term needs one (what its interval means).
  std::string note = {};
  /// Whether the pair is attained by some pair of neighbouring datasets for
  /// the leaf's mechanism (so the exact value of the composed pair is the
  /// mechanism's), or only dominates it (LowerEnd). Every leaf says which.
  bool attained = true;
};

/// The plan of `event` for the PLD accountant. `relation`: the neighbouring
/// relation asked for, or nullopt (inferred: add/remove here).
Plan<PldTerm> pld_plan(const DpEvent& event, std::optional<Neighbouring> relation);

}  // namespace dpb::detail
