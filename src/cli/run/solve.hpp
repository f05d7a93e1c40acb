#pragma once
// The solving verbs (sigma, steps, sampling-rate) and sweep --solve: flags
// to a run and an unknown, calibrate_run() (accounting/run_calibration.hpp)
// to solve it, and the solved rows.
#include <string>

#include "accounting/accountant.hpp"
#include "accounting/dpsgd/calibration.hpp"
#include "accounting/run_calibration.hpp"
#include "cli/flags/accountant_flags.hpp"
#include "cli/flags/run_parameters.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {

using SolveSettings = CalibrationSettings;

void add_solve_flags(CLI::App& app, std::string& tolerance, std::string& max_sigma);
SolveSettings resolve_solve_flags(const std::string& tolerance, const std::string& max_sigma);

using Solved = CalibratedRun;
using SolveTarget = RunTarget;

/// Solves `unknown` of `run` so that the measure of `what` ≤ target
/// (calibrate_run; a run parameter refused names its flag).
Solved solve_run(const DpSgdRun& run, Unknown unknown, const std::string& accountant,
                 const AccountantOptions& options, double target, const SolveTarget& what,
                 const SolveSettings& settings);

/// The result row of a run solved for a risk target: accountant, relation,
/// bound, the target, the solved quantity, and the risk achieved.
report::Record solved_risk_record(const Solved& solved, Unknown unknown, Measure measure,
                                  double target, double fpr);

/// Solves `unknown` of `run` so that ε ≤ target_epsilon at δ: the smallest σ,
/// the largest T, or the largest q (the largest batch size when N is known).
/// Throws NoSolution.
Solved solve_run(const DpSgdRun& run, Unknown unknown, const std::string& accountant,
                 const AccountantOptions& options, double target_epsilon, double delta,
                 const SolveSettings& settings);

/// The result row of a solved run: the solved quantity under its JSON key
/// (noise_multiplier, steps and epochs, sampling_rate and batch_size), the
/// target and the ε achieved.
report::Record solved_record(const Solved& solved, Unknown unknown, double target_epsilon);

/// Declares a solving verb (sigma, steps, sampling-rate): the DP-SGD flags
/// without the unknown, --epsilon targets, --delta, accountant, output and
/// solver flags. One row per accountant, target ε and δ.
/// Declares them on `command`, whose name the report carries.
Verb declare_solver_verb(CLI::App& command, Unknown unknown);

}  // namespace dpb::cli
