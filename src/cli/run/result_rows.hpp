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
#include "accounting/answer.hpp"
#include "cli/flags/accountant_flags.hpp"
#include "report/record.hpp"

namespace dpb::cli {

/// One result row from an accountant's guarantee. `solved_delta` says whether
/// δ is the computed quantity (rounded up) or the target echoed back. Every
/// number the guarantee carries is a column of JSON, CSV and `--wide` text
/// (counts as integers); compact text shows accountant, neighbouring, bound,
/// δ, ε (a PLD interval as "[lower, upper]") and a short `details` cell.
report::Record guarantee_record(const Guarantee& g, bool solved_delta);

/// A claim in words for prose and legends: "upper bound", "approximation",
/// "lower bound", "estimate".
std::string claim_words(BoundKind bound);

/// Moves the compact `details` cell of a row to its end (after columns a verb
/// adds to a guarantee's row).
void details_last(report::Record& record);

/// Adds "recommended" (true or false; JSON and CSV) to a row, and in text a
/// footnote marker on its accountant when true.
void add_recommended(report::Record& row, bool recommended);

/// The warning of an RDP answer whose best order is the smallest or largest
/// tried ("... widen --orders"), or nullopt.
std::optional<std::string> order_edge_warning(const Guarantee& g);

/// Footnotes and stderr warnings a guarantee calls for (best order at the
/// edge of the order set; notes), added once each.
void collect_remarks(const Guarantee& g, report::Report& report, std::ostream& err);

/// The rows of an answer (answer() in accounting/answer.hpp) as report
/// records, appended to `rep`: each guarantee with its claims, the column
/// `sampling` when the question is about a shuffled or balls-in-bins run
/// (whose companions are computed under another scheme), `recommended` when
/// the rows come from several accountants; skipped accountants and the
/// answer's warnings as footnotes and one stderr warning each.
void add_answer_rows(report::Report& rep, const Question& question, const Answer& answer,
                     std::ostream& err);

/// Row `i` of an answer as a report record (as add_answer_rows() makes it).
report::Record answer_record(const Question& question, const Answer& answer, std::size_t i);

/// The ε/δ report of one question: `inputs` as given (with the accountants'
/// settings), then the answer's rows.
report::Report answer_report(const std::string& command, report::Record inputs,
                             const Question& question, const Answer& answer, std::ostream& err);

/// One line of the budget gate for stderr: a run over budget (`row`: the
/// index of its recommended row in the answer; `text` "(<accountant>, delta
/// <δ>): epsilon <ε> > <budget_name> <budget>"), or a run with no sound upper
/// bound (`row` empty; `text` says which accountants would give one).
struct BudgetLine {
  std::optional<std::size_t> row;
  std::string text;
};
std::vector<BudgetLine> budget_lines(const Answer& answer, const BudgetCheck& check, double budget,
                                     const std::string& budget_name,
                                     const std::vector<std::string>& chosen);

/// The exit status of a budget check (0, kBudgetExceeded, kNoUpperBound).
int budget_status(const BudgetCheck& check);

/// The budget gate of an ε answer on stderr (`--max-epsilon`: one line per
/// recommended row over budget, or why there is no sound upper bound to gate
/// on) and its exit status; 0 without a check.
int report_budget(const Answer& answer, const std::optional<BudgetCheck>& check, double budget,
                  const std::vector<std::string>& chosen, std::ostream& err);

}  // namespace dpb::cli
