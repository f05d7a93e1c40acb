#pragma once
// Calibration of a DP-SGD run (docs/calibration.md#safe-side): the completed run whose unknown —
// σ, the steps, or the sampling rate (the batch size when N is known) — is
// solved so that the measure stays at or below its target, built on the
// generic solvers of calibration.hpp (one event per candidate value).
#include <string>

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

}  // namespace dpb
