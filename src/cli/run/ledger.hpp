#pragma once
// Ledgers with a value to solve (docs/calibration.md#ledgers): `sigma --spec`
// and `steps --spec` read a spec file in which exactly one number is written
// {"solve": true} — a noise multiplier or a Laplace scale for sigma, a count
// for steps — and solve it for the target; `--split` gives each part of a
// top-level composition its share of one budget (docs/composition.md#budget-split);
// `--print-spec` prints the ledger with the value(s) filled in.
#include <CLI/CLI.hpp>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "accounting/dpsgd/dp_sgd_run.hpp"
#include "accounting/ledger_calibration.hpp"
#include "cli/flags/accountant_flags.hpp"
#include "cli/flags/output_flags.hpp"

namespace dpb::cli {

/// A value of a spec written {"solve": true}.
struct LedgerMark {
  std::string pointer;     ///< its JSON pointer, e.g. "/composed/0/gaussian/noise_multiplier"
  std::string_view kind;   ///< its event kind, e.g. "gaussian"
  std::string_view field;  ///< the field's name (a Laplace noise_multiplier is its scale)
  RunUnknown unknown;      ///< noise_multiplier (smallest value) or steps (largest count)
};

/// A spec file with its marks, in document order; every other value checked
/// (the document reads as events with each mark set to 1).
struct MarkedLedger {
  nlohmann::ordered_json document;
  std::vector<LedgerMark> marks;
  /// The JSON pointers of the parts when the top level composes events
  /// ({"composed": [...]} or dp_accounting's ComposedDpEvent), else empty.
  std::vector<std::string> parts;
};

/// Parses spec text with marks. Throws SpecError at the value at fault: a mark
/// not written {"solve": true}, or on a field kSolvableFields does not list.
MarkedLedger parse_marked_ledger(const std::string& text);

/// The event of the document's subtree at `at` ("" for all of it) with the
/// value of mark `mark` set to `value` (a count as an integer): the function
/// a solver searches over.
LedgerOf marked_event(const MarkedLedger& ledger, std::size_t mark, const std::string& at = "");

/// The document with mark i set to values[i] (noise values as the doubles
/// found, so they read back exactly; counts as integers).
nlohmann::ordered_json filled_ledger(const MarkedLedger& ledger, std::span<const double> values);

/// sigma --spec / steps --spec: the flags a ledger adds to a solving verb.
struct LedgerFlags {
  std::string spec;                ///< --spec FILE
  bool print = false;              ///< --print-spec
  std::string neighbouring;        ///< --neighbouring
  std::vector<std::string> split;  ///< --split s1,s2,...
};
void add_ledger_flags(CLI::App& app, LedgerFlags& flags);

/// Whether any ledger flag was given (each but --spec is refused without it).
bool ledger_flags_given(const LedgerFlags& flags);
/// Refuses --print-spec, --neighbouring and --split without --spec.
void refuse_ledger_flags_without_spec(const LedgerFlags& flags);

/// What a ledger solve reads besides its own flags.
struct LedgerSolve {
  const LedgerFlags& ledger;
  const AccountantFlags& accountant;
  const OutputFlags& output;
  const std::vector<std::string>& epsilons;
  const std::vector<std::string>& deltas;
  const std::string& tolerance;
  const std::string& max_sigma;
};

/// Runs `name` (sigma: Unknown::noise_multiplier; steps: Unknown::steps) on a
/// ledger: one row per accountant, target ε and δ; with --split the parts'
/// rows, their sum and the whole ledger under every accountant; with
/// --print-spec the ledger filled in.
int run_ledger_solver(const LedgerSolve& solve, const std::string& name, RunUnknown unknown,
                      std::ostream& out, std::ostream& err);

}  // namespace dpb::cli
