#pragma once
// Result rows: from accountants' guarantees to report records, their notes
// and warnings, the ε/δ table of an event, and the budget gate. Shared by
// epsilon, delta, the solvers, sweep and plot.
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "accounting/accountant.hpp"
#include "cli/accountant_flags.hpp"
#include "report/record.hpp"

namespace dpb::cli {

/// One result row from an accountant's guarantee. `solved_delta` says whether
/// δ is the computed quantity (rounded up) or the target echoed back.
report::Record guarantee_record(const Guarantee& g, bool solved_delta);

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

/// The ε/δ table of any event: `inputs` as given, then one row per accountant
/// and target. An accountant named alone that cannot handle the event is an
/// error (UnsupportedEvent); with several (`--accountant all`) it is skipped
/// with a warning on stderr and a footnote.
report::Report event_table(const std::string& command, report::Record inputs, const DpEvent& event,
                           const AccountantChoice& choice, const std::vector<double>& targets,
                           bool solve_delta, std::ostream& err);

/// The budget gate on one result row (with accountant, delta, epsilon):
/// "(<accountant>, delta <δ>): epsilon <ε> > <budget_name> <budget>" when its
/// ε is over `budget` (or not a number), else nothing.
std::optional<std::string> over_budget(const report::Record& row, double budget,
                                       const std::string& budget_name);

}  // namespace dpb::cli
