#pragma once
// The planner (docs/calibration.md#plan): for a budget (ε, δ) and a dataset
// of N records, the DP-SGD runs (B, T, σ) that meet it — for each candidate
// batch size B, q = B/N (Poisson sampling), T from a compute budget C
// (T = ⌊C/B⌋) or from epochs E (T = ⌈E·N/B⌉), and σ the smallest noise
// multiplier that meets the budget, solved by calibrate_run() exactly as
// `dpbudget sigma` solves it — ranked by the noise per example σ/B. The
// ranking is a heuristic about utility, never a privacy claim. No I/O.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "accounting/accountant.hpp"
#include "accounting/dpsgd/dp_sgd_run.hpp"
#include "accounting/run_calibration.hpp"

namespace dpb {

/// The default candidate batch sizes: the powers of two and their midpoints,
/// 1, 2, 3, 4, 6, 8, 12, 16, 24, ... (2^k and 3·2^(k−1)), up to and
/// including `largest` (≥ 1). About 2·log2(largest) values, in increasing
/// order.
std::vector<std::int64_t> plan_batch_sizes(std::int64_t largest);

/// The question: a budget, a dataset size, the candidates and how long each
/// run is.
struct PlanQuestion {
  double target_epsilon = 0;  ///< > 0
  double delta = 0;           ///< in (0, 1)
  std::int64_t dataset_size = 0;
  std::vector<std::int64_t> batch_sizes;  ///< candidates, each in [1, N] (and ≤ compute)
  /// Examples processed: T = ⌊C/B⌋ steps of B (C ≥ every candidate B).
  std::optional<std::int64_t> compute;
  /// Without `compute`: one run per epochs value E, T = ⌈E·N/B⌉.
  std::vector<double> epochs;
  std::string accountant = "rdp";
  AccountantOptions options;
  CalibrationSettings settings;
};

/// One run that meets the budget.
struct PlanRow {
  DpSgdRun run;         ///< q = B/N, T, σ solved (rounded up), N, B, epochs
  Guarantee guarantee;  ///< ε at δ of that run: at most the target
  /// σ/B, rounded up: the standard deviation of the noise in the averaged
  /// clipped gradient per unit clipping norm.
  double noise_per_example = 0;
  /// No other row of the plan has at least as many steps and less noise per
  /// example, or more steps and no more noise per example (the frontier the
  /// ranking trades along).
  bool on_frontier = false;
};

/// A candidate no σ ≤ settings.max_sigma brings within the budget.
struct PlanSkipped {
  std::int64_t batch_size = 0;
  std::int64_t steps = 0;
  std::optional<double> epochs;  ///< the epochs value it was asked for
  std::string reason;            ///< the solver's NoSolution message
};

/// The answer to a PlanQuestion (its own name: the accountants' event plans
/// are `Plan<Term>`, events/event_walk.hpp).
struct PlanAnswer {
  /// Ranked: σ/B ascending; at equal σ/B more steps first, then the smaller
  /// batch.
  std::vector<PlanRow> rows;
  std::vector<PlanSkipped> skipped;  ///< in candidate order
};

/// Every candidate (× every epochs value) solved for σ, on every core.
/// Throws InvalidParameter (the question's fields, named as here),
/// UnsupportedEvent (the accountant cannot account the run) and NoSolution
/// when no candidate meets the budget.
PlanAnswer plan_runs(const PlanQuestion& question);

}  // namespace dpb
