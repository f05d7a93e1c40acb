#pragma once
// Result rows: from accountants' guarantees to report records, their notes
// and warnings, the ε/δ table of an event, and the budget gate. Shared by
// epsilon, delta, the solvers, sweep and plot.
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "accounting/accountant.hpp"
#include "cli/accountant_flags.hpp"
#include "report/record.hpp"

namespace dpb::cli {

/// One result row from an accountant's guarantee. `solved_delta` says whether
/// δ is the computed quantity (rounded up) or the target echoed back. Every
/// number the guarantee carries is a column of JSON, CSV and `--wide` text
/// (counts as integers); compact text shows accountant, neighbouring, bound,
/// δ, ε (a PLD interval as "[lower, upper]") and a short `details` cell.
report::Record guarantee_record(const Guarantee& g, bool solved_delta);

/// Moves the compact `details` cell of a row to its end (after columns a verb
/// adds to a guarantee's row).
void details_last(report::Record& record);

/// Which of `rows` (answers of several accountants, one per accountant and
/// target) to use: per target (δ when ε was computed, ε when δ was), the one
/// with the smallest computed ε (or δ) among sound upper bounds (`bound:
/// upper`, first on ties), never an approximation. Empty when the rows come
/// from fewer than two accountants (nothing to choose).
std::vector<bool> recommended_rows(const std::vector<Guarantee>& rows, bool solve_delta);

/// Adds "recommended" (true or false; JSON and CSV) to a row, and in text a
/// footnote marker on its accountant when true.
void add_recommended(report::Record& row, bool recommended);

/// Footnotes and stderr warnings a guarantee calls for (best order at the
/// edge of the order set; notes), added once each.
void collect_remarks(const Guarantee& g, report::Report& report, std::ostream& err);

/// One accountant's answers for an event: a guarantee per target (ε at each
/// δ, or δ at each ε when `solve_delta`), or why it cannot handle the event.
struct AccountantGuarantees {
  std::string accountant;
  std::optional<std::string> unsupported;
  std::vector<Guarantee> guarantees;
};
/// Every chosen accountant's answers, in order. An accountant named alone
/// that cannot handle the event is an error (UnsupportedEvent, its reason
/// prefixed by `what` when not empty).
std::vector<AccountantGuarantees> account(const DpEvent& event, const AccountantChoice& choice,
                                          const std::vector<double>& targets, bool solve_delta,
                                          const std::string& what = "");

/// One accountant's bounds on membership-inference attacks (SPEC §11), or
/// why it gives none.
struct AccountantAttackBounds {
  std::string accountant;
  std::optional<std::string> unsupported;
  std::optional<AttackBounds> bounds;
};
/// Every chosen accountant's attack bounds for `event` at `fprs`, under the
/// same rules as account(): in order, an accountant that cannot handle the
/// event (or answers under another relation than asked) carries its reason,
/// and one named alone is an error.
std::vector<AccountantAttackBounds> attack_bounds_each(const DpEvent& event,
                                                       const AccountantChoice& choice,
                                                       std::span<const double> fprs);

/// The ε/δ table of any event: `inputs` as given, then one row per accountant
/// and target. An accountant named alone that cannot handle the event is an
/// error (UnsupportedEvent); with several (`--accountant all`) it is skipped
/// with a warning on stderr and a footnote.
report::Report event_table(const std::string& command, report::Record inputs, const DpEvent& event,
                           const AccountantChoice& choice, const std::vector<double>& targets,
                           bool solve_delta, std::ostream& err);

/// The budget gate on one result row (with accountant, delta, epsilon; rows
/// whose bound is `lower` or `estimate` never trip it):
/// "(<accountant>, delta <δ>): epsilon <ε> > <budget_name> <budget>" when its
/// ε is over `budget` (or not a number), else nothing.
std::optional<std::string> over_budget(const report::Record& row, double budget,
                                       const std::string& budget_name);

}  // namespace dpb::cli
