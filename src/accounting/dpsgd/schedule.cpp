#include "accounting/dpsgd/schedule.hpp"

#include <vector>

namespace dpb {

EventPtr schedule_event(std::span<const DpSgdRun> phases) {
  if (phases.size() == 1) return dp_sgd_event(phases.front());
  std::vector<EventPtr> events;
  events.reserve(phases.size());
  for (const auto& phase : phases) events.push_back(dp_sgd_event(phase));
  return make_composed(std::move(events));
}

std::optional<std::size_t> phase_of_other_relation(std::span<const DpSgdRun> phases) {
  for (std::size_t i = 1; i < phases.size(); ++i)
    if (run_relation(phases[i]) != run_relation(phases.front())) return i;
  return std::nullopt;
}

bool schedule_is_the_run(std::span<const DpSgdRun> phases) {
  for (const auto& phase : phases)
    if (!event_is_the_run(phase)) return false;
  return true;
}

std::int64_t schedule_steps(std::span<const DpSgdRun> phases) {
  std::int64_t total = 0;
  for (const auto& phase : phases)
    if (__builtin_add_overflow(total, phase.steps, &total) ||
        total > static_cast<std::int64_t>(kMaxSteps))
      return static_cast<std::int64_t>(kMaxSteps);
  return total;
}

}  // namespace dpb
