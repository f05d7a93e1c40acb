#pragma once
// What the claims tests share: a question about an event, and the numbers an
// answer claims as sound lower and upper bounds on the run's ε (docs/claims.md#lower-bound).
#include <string>
#include <utility>
#include <vector>

#include "accounting/answer.hpp"

namespace dpb::test {

inline Question question_of(EventPtr event, std::vector<std::string> names,
                            std::vector<double> deltas) {
  Question q;
  q.event = std::move(event);
  q.accountants.names = std::move(names);
  q.targets = std::move(deltas);
  return q;
}

/// Every number that claims to be a sound lower bound on the run's ε at
/// δ: lower-bound rows, and interval lower ends that claim lower_bound.
inline std::vector<double> claimed_lower_bounds(const Answer& a, double delta) {
  std::vector<double> out;
  for (const auto& r : a.rows) {
    const Guarantee& g = r.guarantee;
    if (g.delta != delta || r.role == RowRole::poisson_estimate) continue;
    if (g.bound == BoundKind::lower) out.push_back(g.epsilon);
    if (g.epsilon_lower && g.lower_end == LowerEnd::lower_bound) out.push_back(*g.epsilon_lower);
  }
  return out;
}

/// Every sound upper bound on the run's ε at δ in the answer.
inline std::vector<double> upper_bounds(const Answer& a, double delta) {
  std::vector<double> out;
  for (const auto& r : a.rows)
    if (r.guarantee.delta == delta && r.role == RowRole::run &&
        r.guarantee.bound == BoundKind::upper)
      out.push_back(r.guarantee.epsilon);
  return out;
}

/// Relative slack for comparing two sound bounds computed in doubles.
inline constexpr double kRoundOff = 1e-9;

}  // namespace dpb::test
