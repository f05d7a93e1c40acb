#pragma once
// One question about one run, and its answer (docs/claims.md#recommended,
// docs/claims.md#budget-gate): which rows (every chosen accountant's guarantee at each target, and
// beside a shuffled or balls-in-bins run its companions: a lower-bound row and the Poisson
// estimate), what each row claims, which row is recommended, which
// accountants gave no answer and why; and the budget gate, a function of the
// answer. Every verb that reports on a run (epsilon, delta, sweep, risk,
// report, plot, audit) asks here, so the same question gets the same rows
// with the same claims from every verb.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "accounting/accountant.hpp"
#include "accounting/dpsgd/dp_sgd_run.hpp"

namespace dpb {

/// The accountants a question asks, in order (each once), with their
/// settings; `options.neighbouring` is the relation asked for (nullopt: the
/// run's own).
struct AccountantChoice {
  std::vector<std::string> names;
  AccountantOptions options;
};

/// What is asked of one run.
struct Question {
  /// The run as an event (a spec file's, or dp_sgd_event(*run)).
  EventPtr event;
  /// The DP-SGD run behind `event`, when there is one: its sampling scheme
  /// decides the companions, and whether `event` is the run's own pair.
  std::optional<DpSgdRun> run;
  /// Without `run`: whether `event` is the run's own mechanism (false for a
  /// schedule with a phase composed as a stand-in, schedule_is_the_run).
  bool event_is_own = true;
  AccountantChoice accountants;
  /// δ values when ε is asked (`solve_delta` false), else ε values.
  std::vector<double> targets;
  bool solve_delta = false;
  /// Beside a shuffled or balls-in-bins run: the lower-bound row (shuffle)
  /// and the Poisson estimate rows.
  bool companions = true;
  /// Prefixes the refusal of an accountant named alone (e.g. "line 3").
  std::string what;
  /// For a run whose `event` only dominates it: an event the run attains (some pair of
  /// its neighbouring datasets has exactly this event's pair), or nullptr. Each row's
  /// lower end is then this event's (claim_attained_lower_end).
  EventPtr attained;
};

/// Why a row is there.
enum class RowRole {
  run,               ///< an accountant's guarantee for the run
  lower,             ///< a lower bound on a shuffled run (its companion)
  poisson_estimate,  ///< the run as if Poisson-sampled at q = B/N (its companion)
};

struct AnswerRow {
  /// The number and its claim: `bound` (upper, approximate, lower, estimate)
  /// and, for an interval, `lower_end` (lower bound or accuracy).
  Guarantee guarantee;
  RowRole role = RowRole::run;
  /// The sampling scheme the row is computed under, when the question is
  /// about a DP-SGD run (the Poisson estimate's is poisson).
  std::optional<Sampling> sampling;
  /// The smallest sound upper bound at its target (docs/claims.md#recommended).
  bool recommended = false;
};

struct Answer {
  std::vector<AnswerRow> rows;
  /// Accountants that gave no answer: "<accountant>: <reason>".
  std::vector<std::string> skipped;
  /// Remarks about the answer as a whole (e.g. a companion not computed).
  std::vector<std::string> warnings;
  /// Remarks about the question (run_notes: δ against 1/N, a fixed-size federated round).
  std::vector<std::string> notes;
  /// The run's rows come from two accountants or more (a choice was made).
  bool several_accountants = false;
};

/// Asks every chosen accountant, then the companions. An accountant named
/// alone that cannot handle the event (or answers under another relation
/// than asked) is an error (UnsupportedEvent, prefixed by `what`); with
/// several it is skipped with its reason; none at all is an error.
Answer answer(const Question& question);

/// The recommended row at each target: the smallest computed ε (or δ) among
/// the run's sound upper bounds at that target (first on ties); never an
/// approximation, a lower bound or an estimate.
void mark_recommended(std::vector<AnswerRow>& rows, bool solve_delta);

/// The budget gate (docs/claims.md#budget-gate) on an answer to an ε question: a run is over
/// budget iff at some δ its recommended row (its smallest sound upper bound)
/// exceeds `budget`. Approximations, lower bounds and estimates neither pass
/// nor fail it; a run without a sound upper bound at some δ cannot pass.
enum class BudgetStatus { within, over, no_upper_bound };
struct BudgetCheck {
  BudgetStatus status = BudgetStatus::within;
  /// The recommended rows over budget, one per δ (indices into the rows).
  std::vector<std::size_t> over_rows;
  /// With no_upper_bound: the accountants not chosen that would give a
  /// sound upper bound for the event (the message names them).
  std::vector<std::string> would_bound;
  /// Per row of the answer: the run fails the gate at the row's δ (over
  /// budget, or no sound upper bound there).
  std::vector<bool> row_over;
};
BudgetCheck check_budget(const Question& question, const Answer& answer, double budget);

/// Every chosen accountant's attack bounds (docs/risk.md#trade-off-bound) at `fprs`, under the
/// rules of answer(): in order, with the reason of an accountant that gives
/// none; one named alone that gives none is an error. Lower ends are
/// claimed as answer() claims them (`lower_end`).
struct AccountantAttackBounds {
  std::string accountant;
  std::optional<std::string> unsupported;
  std::optional<AttackBounds> bounds;
};
std::vector<AccountantAttackBounds> attack_bounds_each(const Question& question,
                                                       std::span<const double> fprs);

/// Whether the question's event is the run's own mechanism, so that a pair the
/// accountant says is attained is attained by the run (docs/claims.md#attained-pairs):
/// `event_is_own`, and with a DP-SGD run also event_is_the_run(run) (false with adaptive
/// clipping's count, user-level balls-in-bins, ...).
bool event_is_the_run(const Question& question);

/// The one rule for what a lower end claims (docs/claims.md#attained-pairs): the
/// accountant's own claim when the event composed is the run's own mechanism
/// (`event_is_own`), else accuracy. answer(), attack_bounds_each() and every solver
/// (calibrate_run, calibrate_schedule, calibrate_release) pass their guarantees through it,
/// so that no verb decides it alone.
void claim_lower_end(Guarantee& guarantee, bool event_is_own);
void claim_lower_end(AttackBounds& bounds, bool event_is_own);

/// The lower end of a guarantee that has one (PLD's) replaced by the lower end of
/// `attained`, an event the run attains, composed by PLD with `options` under the
/// guarantee's relation: a lower bound on the run when that event's own pairs are
/// attained (docs/claims.md#attained-pairs), which it then claims. The upper end stays.
void claim_attained_lower_end(Guarantee& guarantee, const DpEvent& attained,
                              const AccountantOptions& options);

/// The relation accountants are asked for on a run's event: replace_special
/// for shuffled batches (a shuffled epoch is analysed only under a relation
/// that keeps the dataset size), else nullopt (the one the event fixes).
std::optional<Neighbouring> run_neighbouring(const DpSgdRun& run);

}  // namespace dpb
