#pragma once
// A matrix-mechanism run as the privacy events the accountants already know
// (docs/matrix.md#privacy-of-one-release, docs/matrix.md#amplified-banded-mf):
// one Gaussian release at σ/Δ, or — amplified banded MF under cyclic Poisson
// sampling — the DP-SGD run of ⌈n/b⌉ rounds at q and σ. ε comes from
// answer(), σ from the same calibration as every other verb's, so the claims,
// the recommended row and the budget gate are those of the other verbs.
#include <cstdint>

#include "accounting/accountant.hpp"
#include "accounting/dpsgd/calibration.hpp"
#include "accounting/dpsgd/dp_sgd_run.hpp"
#include "accounting/matrix/strategy.hpp"
#include "accounting/run_calibration.hpp"

namespace dpb {

/// The noise multiplier of the release: σ/Δ with Δ = √(Δ²) rounded up and the
/// quotient rounded down (toward more privacy loss). σ > 0, Δ² > 0.
double matrix_noise_multiplier(double sigma, double sensitivity_squared);

/// The noise σ = z·Δ that gives noise multiplier at least z (rounded up).
double matrix_noise(double noise_multiplier, double sensitivity_squared);

/// The run as one event: a Gaussian release at noise multiplier z, composed once.
EventPtr matrix_release_event(double noise_multiplier);

/// Amplified banded MF (docs/matrix.md#amplified-banded-mf): the DP-SGD run of
/// ⌈n/b⌉ Poisson-sampled rounds at q and σ (σ may be 0 when it is to be
/// solved). Refuses (InvalidParameter "bands") a strategy that is not
/// lower-triangular with at most b bands (the tree), and ("strategy") one whose
/// largest column norm², rounded up, exceeds 1.
DpSgdRun amplified_run(const matrix::Strategy& strategy, std::int64_t bands, double sampling_rate,
                       double sigma);

/// The event of amplified banded MF over `steps` steps of a strategy with at
/// most `bands` bands: the banded_matrix_factorization kind at q and σ, which
/// every accountant composes as DP-SGD over ⌈steps/bands⌉ rounds. Its pair only
/// dominates the run (each group's exact participations and column norms are not
/// composed), so no lower end is claimed attained (docs/matrix.md#amplified-banded-mf).
EventPtr amplified_event(double sampling_rate, double sigma, std::int64_t steps,
                         std::int64_t bands);

/// A pair that amplified banded MF attains (docs/matrix.md#amplified-banded-mf): for
/// one group g, every other record's gradient 0 and the record of group g the same unit
/// vector at each of its steps s = g, g + b, ... < n, whose columns have disjoint row
/// supports, so that the run is exactly the composition of Poisson-sampled Gaussians at
/// σ/‖c_s‖ over those steps. Its exact value is at most the run's: its PLD lower end is a
/// lower bound on the run. The group is the one of largest Σ‖c_s‖² (any group's pair is
/// attained; this one is the likely worst). Norms are rounded down and multipliers up;
/// past kMaxAttainedReleases distinct multipliers the norms² are floored to a grid
/// (fewer or smaller releases lose no more). nullptr when the group releases nothing.
EventPtr amplified_attained_event(const matrix::Strategy& strategy, std::int64_t bands,
                                  double sampling_rate, double sigma);

/// The smallest noise multiplier z of the release with the measure ≤ target
/// under `accountant` (the σ search of calibrate_run on matrix_release_event).
/// Its lower end is claimed attained only when the sensitivity is the exact one
/// (`sensitivity_exact`; an upper bound on it gives a pair that only dominates).
/// Throws NoSolution.
SigmaSolution calibrate_release(const std::string& accountant, const AccountantOptions& options,
                                double target, const RunTarget& what,
                                const CalibrationSettings& settings, bool sensitivity_exact);

/// The smallest σ of amplified banded MF of `strategy` (amplified_event) with the
/// measure ≤ target under `accountant`: the σ search of calibrate_run; its lower end, if
/// any, that of amplified_attained_event at the σ found (claim_attained_lower_end).
/// Throws NoSolution.
SigmaSolution calibrate_amplified(const matrix::Strategy& strategy, double sampling_rate,
                                  std::int64_t bands, const std::string& accountant,
                                  const AccountantOptions& options, double target,
                                  const RunTarget& what, const CalibrationSettings& settings);

}  // namespace dpb
