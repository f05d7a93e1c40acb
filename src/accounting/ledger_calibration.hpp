#pragma once
// Calibration of a ledger (docs/calibration.md#ledgers): any composition of
// events with one value left to solve — a noise multiplier or a Laplace scale
// (the smallest meeting the target), or a count (the largest) — and a budget
// split among the parts of a ledger (docs/composition.md#budget-split): each
// part calibrated alone to its share, the whole covered by basic composition.
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "accounting/accountant.hpp"
#include "accounting/events/events.hpp"
#include "accounting/run_calibration.hpp"

namespace dpb {

/// A field of an event kind that may be left to solve, and which way
/// (docs/calibration.md#ledgers): RunUnknown::noise_multiplier for a noise
/// parameter (ε nonincreasing in it: the smallest value meeting the target),
/// RunUnknown::steps for a count (ε nondecreasing in it: the largest).
struct SolvableField {
  std::string_view kind;   ///< the event kind's name (Kind::kName)
  std::string_view field;  ///< the field's name in fields()
  RunUnknown unknown;
};

/// Each noise parameter here is the scale of Gaussian or Laplace noise added
/// to an output of fixed sensitivity, and noise of a larger scale is the same
/// noise with independent noise added (docs/calibration.md#ledgers): the
/// mechanism at a larger value is a post-processing of it at a smaller one,
/// so its true privacy loss can only fall. A count composes more copies of
/// its event, so its loss can only grow. Every other field is refused.
inline constexpr SolvableField kSolvableFields[] = {
    {GaussianEvent::kName, "noise_multiplier", RunUnknown::noise_multiplier},
    {LaplaceEvent::kName, "scale", RunUnknown::noise_multiplier},
    {TruncatedSubsampledGaussianEvent::kName, "noise_multiplier", RunUnknown::noise_multiplier},
    {SingleEpochTreeAggregationEvent::kName, "noise_multiplier", RunUnknown::noise_multiplier},
    {MixtureOfGaussiansEvent::kName, "standard_deviation", RunUnknown::noise_multiplier},
    {SelfComposedEvent::kName, "count", RunUnknown::steps},
};

/// A ledger's event as a function of its one unknown value (a count is
/// passed as an integral double, at most 2^53).
using LedgerOf = std::function<EventPtr(double)>;

struct CalibratedLedger {
  /// The value found: the smallest noise parameter (rounded up: the one
  /// evaluated, within relative tolerance above the threshold) or the largest
  /// count (kUnboundedCount when every count fits).
  double value = 0;
  Guarantee guarantee;  ///< at `value`: its measure ≤ the target
};

/// Solves the ledger's unknown so that the measure of `what` ≤ target under
/// `accountant` (`options.neighbouring` as asked; nullopt: the relation the
/// events fix). Throws NoSolution, InvalidParameter, UnsupportedEvent.
CalibratedLedger calibrate_ledger(const LedgerOf& ledger_of, RunUnknown unknown,
                                  const std::string& accountant, const AccountantOptions& options,
                                  double target, const RunTarget& what,
                                  const CalibrationSettings& settings);

/// |Σ shares − 1| allowed for a budget split: shares written with ~12
/// significant digits (1/3 as 0.333333333333) still pass; a list off by more
/// is a mistake, not round-off. The targets are computed from the shares
/// divided by their sum, so the parts' budgets never add up to more than the
/// whole whichever way the shares were rounded.
inline constexpr double kShareSumTolerance = 1e-9;

/// The parts' budgets (docs/composition.md#budget-split): ε_i = ε·s_i/Σs and
/// δ_i = δ·s_i/Σs, each stepped down until their sums, added rounded up, are
/// at most ε and δ. Throws InvalidParameter("split", ...) for a share outside
/// (0, 1] or shares whose sum is not 1 within kShareSumTolerance.
struct SplitBudget {
  std::vector<double> epsilons;
  std::vector<double> deltas;
};
SplitBudget split_budget(std::span<const double> shares, double epsilon, double delta);

/// One part of a split: its event as a function of its unknown.
struct LedgerPart {
  LedgerOf ledger_of;
  RunUnknown unknown;
};

/// A budget split (docs/composition.md#budget-split): each part calibrated
/// alone to (ε_i, δ_i), and what their composition is by basic composition.
struct CalibratedSplit {
  SplitBudget budget;
  std::vector<CalibratedLedger> parts;
  /// Σ ε_i and Σ δ_i of the parts' guarantees, added rounded up: at most ε
  /// and δ. The parts composed are (epsilon_sum, delta_sum)-DP under
  /// `neighbouring` when every part's guarantee is an upper bound (`bound`:
  /// upper), else the weakest claim among them.
  double epsilon_sum = 0;
  double delta_sum = 0;
  BoundKind bound = BoundKind::upper;
  Neighbouring neighbouring = Neighbouring::add_remove;
};

/// Calibrates each part to its share of (ε, δ) under `accountant`. Throws
/// InvalidParameter("split", ...) for bad shares, a count of shares unlike the
/// count of parts, or parts accounted under different neighbouring relations
/// (their sum would be no guarantee under one relation); NoSolution naming
/// the part that has none.
CalibratedSplit calibrate_split(std::span<const LedgerPart> parts, std::span<const double> shares,
                                const std::string& accountant, const AccountantOptions& options,
                                double epsilon, double delta, const CalibrationSettings& settings);

}  // namespace dpb
