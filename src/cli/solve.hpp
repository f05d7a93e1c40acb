#pragma once
// The step from a partly given DP-SGD run to the calibration solvers of
// accounting/calibration.hpp: builds the event for each candidate value of the
// unknown and hands back the completed run with the guarantee it achieves.
#include <string>

#include "accounting/accountant.hpp"
#include "accounting/calibration.hpp"
#include "cli/accountant_flags.hpp"
#include "cli/run_parameters.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {

struct SolveSettings {
  double tolerance = 1e-4;  ///< relative, on σ or q
  double max_sigma = 1000;
};

void add_solve_flags(CLI::App& app, std::string& tolerance, std::string& max_sigma);
SolveSettings resolve_solve_flags(const std::string& tolerance, const std::string& max_sigma);

struct Solved {
  DpSgdRun run;  ///< with the unknown filled in
  Guarantee guarantee;
};

/// What a solver keeps under the target: ε at `delta`, the TPR bound at
/// `fpr`, or the advantage (accounting/calibration.hpp, Measure).
struct SolveTarget {
  Measure measure = Measure::epsilon;
  double delta = 0;
  double fpr = 0;
};

/// Solves `unknown` of `run` so that the measure of `what` ≤ target.
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
Verb setup_solver_verb(CLI::App& app, const std::string& name, const std::string& description,
                       Unknown unknown);

}  // namespace dpb::cli
