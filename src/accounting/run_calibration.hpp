#pragma once
// Calibration of a DP-SGD run (docs/calibration.md#safe-side): the completed run whose unknown —
// σ, the steps, or the sampling rate (the batch size when N is known) — is
// solved so that the measure stays at or below its target, built on the
// generic solvers of calibration.hpp (one event per candidate value).
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "accounting/accountant.hpp"
#include "accounting/dpsgd/calibration.hpp"
#include "accounting/dpsgd/dp_sgd_run.hpp"

namespace dpb {

struct CalibrationSettings {
  double tolerance = 1e-4;  ///< relative, on σ or q
  double max_sigma = 1000;  ///< the largest σ tried before NoSolution
};

/// What a solver keeps under the target: ε at `delta`, the TPR bound at
/// `fpr`, or the advantage (Measure).
struct RunTarget {
  Measure measure = Measure::epsilon;
  double delta = 0;
  double fpr = 0;
};

struct CalibratedRun {
  DpSgdRun run;  ///< with the unknown filled in
  Guarantee guarantee;
};

/// Solves `unknown` of `run` so that the measure of `what` <= target under
/// `accountant`: the smallest σ, the largest T (with the epochs it makes), or
/// the largest q (the largest batch size when N is known; with accumulation
/// steps k, the micro-batch, the logical batch b·k being what is sampled,
/// docs/sampling.md#gradient-accumulation). The accountants are asked under the run's relation
/// (run_neighbouring). Throws NoSolution, InvalidParameter, RunParameterError.
CalibratedRun calibrate_run(const DpSgdRun& run, RunUnknown unknown, const std::string& accountant,
                            const AccountantOptions& options, double target, const RunTarget& what,
                            const CalibrationSettings& settings);

/// A schedule's phases (docs/sampling.md#schedules) with its unknown solved.
struct CalibratedSchedule {
  std::vector<DpSgdRun> phases;  ///< every σ, or the last phase's steps, filled in
  /// σ solved as one factor on every phase's σ: the factor (rounded with the
  /// phases' σ: every printed σ is at least σ_i times it).
  std::optional<double> scale;
  Guarantee guarantee;
};

/// Solves a schedule (docs/calibration.md#schedules) so that the measure of
/// `what` <= target under `accountant`, the phases composed (schedule_event):
/// - RunUnknown::noise_multiplier with `phase` nullopt: the smallest factor c
///   with every phase at σ_i·c (each phase gives its σ_i; the largest σ_i·c
///   at most settings.max_sigma);
/// - RunUnknown::noise_multiplier with `phase`: that phase's smallest σ (its
///   σ left unset, the others given);
/// - RunUnknown::steps: the last phase's largest T (its steps unset), with
///   the epochs it makes given N and B.
/// The accountants are asked under the first phase's relation (the phases
/// share one: phase_of_other_relation). Throws NoSolution, InvalidParameter.
CalibratedSchedule calibrate_schedule(const std::vector<DpSgdRun>& phases, RunUnknown unknown,
                                      std::optional<std::size_t> phase,
                                      const std::string& accountant,
                                      const AccountantOptions& options, double target,
                                      const RunTarget& what, const CalibrationSettings& settings);

}  // namespace dpb
