#pragma once
// What `report` (verbs/report.cpp) shows of the run itself: its parameters,
// a schedule's phases or a spec's events as tables, and epsilon against the
// number of steps as a figure; and the statement's numbers, rounded as its
// claims need.
#include <optional>
#include <string>

#include "accounting/answer.hpp"
#include "accounting/dpsgd/dp_sgd_run.hpp"
#include "cli/input/schedule.hpp"
#include "report/document.hpp"
#include "report/number_format.hpp"

namespace dpb::cli::statement {

/// A number of the statement, six significant digits: rounded up (an
/// epsilon, an upper end), down (a lower end) or to the nearest (a parameter).
inline std::string up(double v) { return report::format_number(v, 6, report::Rounding::up); }
inline std::string down(double v) { return report::format_number(v, 6, report::Rounding::down); }
inline std::string plain(double v) {
  return report::format_number(v, 6, report::Rounding::nearest);
}

/// The run's parameters, one row each, ending with the accountants (`accountants`, as listed).
/// The unit of privacy in words: one record, one user with k records, one client.
std::string unit_words(const DpSgdRun& run);

report::Table parameter_table(const DpSgdRun& run, const std::string& accountants);
/// A schedule's phases, one row each: its scheme, q (with N and B), σ, steps and epochs.
report::Table phase_table(const Schedule& schedule);
/// The events of a spec file, one row each (the items of a top-level
/// `composed`, else the one event): what the ledger is, for the reader.
report::Table ledger_table(const DpEvent& event);
/// ε of the run at delta after each of a few step counts up to its own
/// (ε-versus-steps), one series per accountant of `choice` that handles it.
/// ε at `delta` after each of a few run lengths up to the run's own, per
/// accountant; at the run's own length each accountant's point is its row of
/// `answer` (the headline's and the table's value, by construction: one
/// printed value per quantity).
report::Figure steps_figure(const DpSgdRun& base, const AccountantChoice& choice, double delta,
                            const Answer& answer);

}  // namespace dpb::cli::statement
