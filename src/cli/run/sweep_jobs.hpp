#pragma once
// What `sweep` computes: its configurations as jobs (the flags' Cartesian
// product, made one at a time, or the lines of --input), and each job's rows
// (the question `epsilon` asks, or the solvers' search), with the budget
// gate's verdict on the run.
#include <cstddef>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

#include "accounting/answer.hpp"
#include "accounting/dpsgd/dp_sgd_run.hpp"
#include "accounting/events/events.hpp"
#include "cli/flags/accountant_flags.hpp"
#include "cli/flags/run_parameters.hpp"
#include "cli/input/config_input.hpp"
#include "cli/run/result_rows.hpp"
#include "cli/run/solve.hpp"
#include "report/record.hpp"

namespace dpb::cli {

/// One configuration to compute: a complete run (but for the unknown), its
/// δ values and target (or budget) ε values.
struct SweepJob {
  std::optional<std::string> name;
  std::size_t line = 0;  ///< input line, 0 for flag combinations
  std::string source;    ///< the input as messages name it (InputFile::name())
  DpSgdRun run;
  Unknown unknown = Unknown::none;
  std::vector<double> deltas;
  std::vector<double> epsilons;  ///< targets when solving, else budgets
  EventPtr spec;                 ///< an --input line's "spec", instead of `run`
  std::string spec_json;
  std::optional<Neighbouring> neighbouring;  ///< the line's "neighbouring" (with a spec)
  /// Whether `spec` is the run's own mechanism (false for a line's phases
  /// with a phase composed as a stand-in: schedule_is_the_run).
  bool event_is_own = true;
};

/// The jobs of a sweep, made when asked for: job i of `count`.
struct SweepJobSource {
  std::size_t count = 0;
  std::function<SweepJob(std::size_t)> at;
  /// Every job's run columns are the same (a grid whose swept values add or
  /// remove none): CSV can take its header from the first rows.
  bool same_run_columns = false;
};

struct SweepRow {
  report::Record record;
  std::vector<std::string> notes;  ///< footnotes (text output)
  /// Notes on the question (run_notes: δ against 1/N, ...): a footnote and one stderr line each.
  std::vector<std::string> advice;
  /// Accountants of `--accountant all` that could not handle this row's run
  /// ("skipped <reason>"), and other warnings about it: a footnote and one
  /// stderr warning each, never silent.
  std::vector<std::string> warnings;
  /// The budget gate's lines for this row's run (budget_lines; their rows
  /// count from this one), and the run as messages name it: an input line as
  /// "FILE:LINE 'NAME'", a combination of flags by its values.
  std::vector<BudgetLine> gate;
  std::string subject;
  /// The gate's exit status for the run (kOk, kBudgetExceeded, kNoUpperBound).
  int status = kOk;
  bool no_solution = false;
  /// The job's answer left something out here (an accountant skipped, a
  /// companion row missing, on its first row): another job's rows may have
  /// columns this one's lack.
  bool partial = false;
};

struct SweepSettings {
  AccountantChoice choice;
  SolveSettings solve;
  std::optional<double> max_epsilon;
};

/// The rows of `job`: one per accountant and δ (with its companions and the
/// recommended row), or one per accountant, target and δ when it solves.
std::vector<SweepRow> compute(const SweepJob& job, const SweepSettings& s);

/// Jobs from the flags' Cartesian product, made one at a time (flat memory).
/// Every combination is derived once first, so that a combination the run
/// parameters refuse (e.g. a batch larger than the dataset) stops the sweep
/// before it prints anything.
SweepJobSource jobs_from_flags(const DpSgdFlags& run, Unknown unknown,
                               const std::vector<double>& deltas,
                               const std::vector<double>& epsilons);

/// How --input lines are read: the path ("-": standard input), whether a bad
/// line is skipped (--keep-going) or ends the sweep, and whether a budget
/// gate is set (a line that solves is refused beside one).
struct InputJobs {
  std::string path;
  bool keep_going = false;
  bool gate = false;
};

/// What every --input line inherits from the command line: --solve, --delta,
/// --epsilon, whether a gate is set, and the input's name for messages.
struct LineDefaults {
  Unknown unknown = Unknown::none;
  std::vector<double> deltas;
  std::vector<double> epsilons;
  bool gate = false;
  std::string source;
};

/// The job of one --input line, or why it cannot be computed (naming the
/// key at fault).
std::variant<SweepJob, InputError> job_of_line(ConfigLine c, const LineDefaults& d);

/// Refuses an input with no configuration (NoConfigurations, exit status 6):
/// a gate over nothing must not pass.
[[noreturn]] void refuse_empty_input(const std::string& path);

/// Jobs from --input lines, in line order; bad lines are reported on `err`
/// (and end the sweep unless keep_going). Returns whether any line was bad.
bool jobs_from_input(const InputJobs& how, Unknown unknown, const std::vector<double>& deltas,
                     const std::vector<double>& epsilons, std::vector<SweepJob>& jobs,
                     std::ostream& err);

}  // namespace dpb::cli
