#pragma once
// The L2 sensitivity of a strategy C under a participation pattern
// (docs/matrix.md#sensitivity): the largest ||C·G||_F over the gradient
// matrices G a record can change — a row of norm at most 1 at each step it
// takes part in. Exact where a theorem gives it, else a sound upper bound,
// and the result says which. No I/O.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "accounting/matrix/strategy.hpp"

namespace dpb::matrix {

/// At most `participations` steps per record, any two at least
/// `min_separation` steps apart (single participation: participations = 1).
struct Participation {
  std::int64_t min_separation = 1;
  std::int64_t participations = 1;
};

/// How the value was found (docs/matrix.md#sensitivity).
enum class SensitivityMethod {
  single,             ///< one participation: the largest column norm (exact)
  toeplitz_monotone,  ///< non-negative non-increasing Toeplitz: participations b apart (exact)
  banded,             ///< X_ij = 0 for |i − j| ≥ b: a sum of diagonal entries (exact)
  general_bound,      ///< the row-sum bound over |CᵀC| (an upper bound)
};
std::string_view to_string(SensitivityMethod method);

struct Sensitivity {
  double squared = 0;  ///< sensitivity², rounded up (docs/matrix.md#rounding)
  bool exact = false;  ///< the true sensitivity (up to rounding), else an upper bound
  SensitivityMethod method = SensitivityMethod::single;
  std::int64_t participations = 1;  ///< the most that fit: min(k, ⌊(n − 1)/b⌋ + 1)
};

/// The largest amount of work (n²·k steps of a dynamic programme) the general
/// bound takes before it is refused: about 10 s on one core.
inline constexpr double kMaxBoundWork = 1e10;

/// Sensitivity of `strategy` under `pattern`, by the sharpest method that
/// applies. Throws InvalidParameter for a pattern out of range (field
/// "min_separation" or "participations") or a general bound too large to compute.
Sensitivity sensitivity(const Strategy& strategy, const Participation& pattern);

/// The method sensitivity() takes, without computing it (cheap); throws as
/// sensitivity() does for a pattern out of range or a bound too large.
SensitivityMethod sensitivity_method(const Strategy& strategy, const Participation& pattern);

/// The general upper bound alone (docs/matrix.md#general-bound), whatever
/// else applies; n at most kMaxDenseSteps.
Sensitivity general_sensitivity_bound(const Strategy& strategy, const Participation& pattern);

/// For each m ≤ k: the largest sum of at most m of `weights` (non-negative) at
/// positions pairwise at least `separation` apart.
std::vector<double> best_separated_sums(std::span<const double> weights, std::int64_t separation,
                                        std::int64_t k);

}  // namespace dpb::matrix
