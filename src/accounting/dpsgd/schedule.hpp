#pragma once
// A DP-SGD run in phases (docs/sampling.md#schedules): each phase a run of its
// own (sampling scheme, q or batch size, σ, steps or epochs), the same
// records throughout. The run's event is the composition of the phases'
// events: each step's noise is fresh, so the phases are an adaptive
// composition whatever their order (Dwork & Roth 2014, Thm 3.16 and the
// accountants' own composition theorems), and every accountant composes a
// `composed` event the way it composes the phases of a spec file.
#include <cstddef>
#include <optional>
#include <span>

#include "accounting/dpsgd/dp_sgd_run.hpp"
#include "accounting/events/events.hpp"

namespace dpb {

/// The composition of the phases' events, in order; one phase's own event
/// when there is one phase (a schedule of one phase is that run).
EventPtr schedule_event(std::span<const DpSgdRun> phases);

/// The first phase whose neighbouring relation (run_relation) differs from
/// the first phase's, or nullopt when they all agree. A guarantee holds
/// under one relation; phases analysed under different ones (Poisson
/// add/remove beside fixed-size replace-one) compose to no stated relation.
std::optional<std::size_t> phase_of_other_relation(std::span<const DpSgdRun> phases);

/// Whether schedule_event(phases) is the run's own mechanism (every phase's
/// event_is_the_run), so that an attained pair of it is attained by the run.
bool schedule_is_the_run(std::span<const DpSgdRun> phases);

/// The steps of all phases, Σ T_i (saturating at kMaxSteps past 2^53).
std::int64_t schedule_steps(std::span<const DpSgdRun> phases);

}  // namespace dpb
