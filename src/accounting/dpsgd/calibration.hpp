#pragma once
// Calibration (docs/calibration.md#monotonicity): ε is monotone — decreasing in σ, increasing in
// the number of steps and in q — so each question "which largest/smallest value meets ε ≤ target?"
// is a bracketing search followed by bisection. Every solver works with any registered accountant
// and returns the value on the safe side (σ rounded up, T and q rounded down) together with the
// guarantee it actually achieves.
#include <cstdint>
#include <functional>
#include <string>

#include "accounting/accountant.hpp"
#include "accounting/events/events.hpp"

namespace dpb {

/// What a solver keeps at or below its target: ε at δ (docs/calibration.md#safe-side), or a
/// membership-inference risk (docs/calibration.md#risk-targets) — the TPR bound at one FPR, or the
/// advantage (δ at ε = 0). Each is monotone like ε: smaller with more noise,
/// larger with more steps or a larger sampling rate.
enum class Measure { epsilon, tpr, advantage };

/// The measured quantity of an event under one accountant, built fresh for
/// each question. For a risk measure the returned guarantee carries the
/// measured value in `epsilon` (so every solver below reads one field) and
/// names it in `details` ("tpr" at "fpr", or "advantage").
struct EpsilonOracle {
  std::string accountant;
  AccountantOptions options;
  double delta = 0;  ///< Measure::epsilon only
  Measure measure = Measure::epsilon;
  double fpr = 0;  ///< Measure::tpr only
  Guarantee operator()(const DpEvent& event) const;
  /// The measured quantity in words, for messages ("epsilon", "the TPR bound
  /// at FPR 0.01", "the advantage").
  std::string quantity() const;
};

struct SigmaSolution {
  double noise_multiplier;
  Guarantee guarantee;  ///< ε(noise_multiplier) ≤ target
};

/// Smallest σ ≤ max_sigma with ε(event_of(σ)) ≤ target_epsilon, returned
/// within relative `tolerance` above the true threshold. Throws NoSolution
/// when even max_sigma exceeds the target.
SigmaSolution smallest_noise_multiplier(const std::function<EventPtr(double)>& event_of,
                                        const EpsilonOracle& oracle, double target_epsilon,
                                        double tolerance, double max_sigma);

struct CountSolution {
  std::int64_t count;   ///< kUnboundedCount when every count fits
  Guarantee guarantee;  ///< at `count`
};

inline constexpr std::int64_t kUnboundedCount = std::int64_t{1} << 53;

/// Largest count n in [1, 2^53] with ε(event_of(n)) ≤ target_epsilon; uses the
/// accountant's closed form (Accountant::largest_count_hint) when it has one.
/// Throws NoSolution when n = 1 already exceeds the target.
CountSolution largest_count(const std::function<EventPtr(std::int64_t)>& event_of,
                            const EpsilonOracle& oracle, double target_epsilon);

struct RateSolution {
  double value;
  Guarantee guarantee;
};

/// Largest x in [lo, hi] with ε(event_of(x)) ≤ target, within relative
/// `tolerance` below the true threshold. Throws NoSolution when even lo fails.
RateSolution largest_value(const std::function<EventPtr(double)>& event_of,
                           const EpsilonOracle& oracle, double target_epsilon, double lo, double hi,
                           double tolerance);

/// Largest integer n in [lo, hi] with ε(event_of(n)) ≤ target. Throws
/// NoSolution when even lo fails.
CountSolution largest_integer(const std::function<EventPtr(std::int64_t)>& event_of,
                              const EpsilonOracle& oracle, double target_epsilon, std::int64_t lo,
                              std::int64_t hi);

}  // namespace dpb
