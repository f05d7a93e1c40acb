// dpbudget audit: a lower bound on ε from a membership-inference attack's
// outcome (docs/risk.md#audit-bound): counts on known members and non-members, scores with
// a threshold (given, or the best one at a Bonferroni cost), or the one-run
// audit of Steinke, Nasr & Jagielski 2023. With the run flags (or --spec)
// each accountant's claimed ε at --delta is printed beside it, and a sound
// upper bound below the lower bound is an inconsistency (exit status 1): if
// the attack's outcomes are independent trials (what the Clopper–Pearson
// bounds assume), the implementation or its accounting is wrong. The maths is
// accounting/audit.
#include "accounting/risk/audit.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "accounting/errors.hpp"
#include "cli/errors.hpp"
#include "cli/flags/accountant_flags.hpp"
#include "cli/flags/flag_values.hpp"
#include "cli/flags/output_flags.hpp"
#include "cli/flags/parse.hpp"
#include "cli/flags/run_parameters.hpp"
#include "cli/input/input_file.hpp"
#include "cli/input/scores_input.hpp"
#include "cli/run/result_rows.hpp"
#include "cli/run/spec_verb.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {
namespace {

/// What the counts and scores modes assume (their Clopper–Pearson bounds treat
/// each member and non-member as an independent Bernoulli trial), and what to
/// run instead for a single trained model: said in the output of both modes.
constexpr const char* kIndependentTrialsNote =
    "the counts must come from independent trials: each trial trains a model with the "
    "target's membership randomised (in or out with probability 1/2) and attacks that model "
    "once; members and non-members of one trained model are not independent trials. For a "
    "single trained model use the one-run audit: train with m canaries each included with "
    "probability 1/2, guess r of them, and run 'dpbudget audit --canaries m --guesses r "
    "--correct v'";

struct AuditFlags {
  std::vector<std::string> tp, fn, fp, tn, threshold, confidence, delta, canaries, guesses, correct;
  std::string scores;
  DpSgdFlags run;
  SpecFlags spec;
  AccountantFlags accountant;
  OutputFlags output;
};

/// The `score,label` lines of --scores FILE ('-' standard input).
std::vector<Scored> read_scores_file(const std::string& file) {
  InputFile input("--scores", file, "a file of score,label lines");
  return read_scores(input.stream(), input.name());
}

std::int64_t count_flag(const char* flag, const std::vector<std::string>& texts) {
  const auto v = optional_integer(flag, texts, 0);
  if (!v) throw UsageError(std::string(flag) + " is required with the other counts");
  return *v;
}

report::Record rate_row(const std::string& method, const AuditBound& b) {
  using report::Rounding;
  report::Record r;
  r.add("audit", report::text(method));
  r.add("fpr", report::number(b.fpr));
  r.add("fnr", report::number(b.fnr));
  r.add("fpr_upper", report::number(b.fpr_upper, Rounding::up));
  r.add("fnr_upper", report::number(b.fnr_upper, Rounding::up));
  r.add("epsilon_lower", report::number(b.epsilon_lower, Rounding::down));
  return r;
}

/// The counts' audit: its inputs and row in `rep`; returns ε's lower bound.
double audit_counts(const AuditFlags& f, double confidence, double delta, report::Report& rep) {
  const AttackCounts c{count_flag("--tp", f.tp), count_flag("--fn", f.fn), count_flag("--fp", f.fp),
                       count_flag("--tn", f.tn)};
  if (c.tp + c.fn < 1) throw UsageError("--tp: need at least one member (tp + fn >= 1)");
  if (c.fp + c.tn < 1) throw UsageError("--fp: need at least one non-member (fp + tn >= 1)");
  rep.inputs.add("tp", report::integer(c.tp)).add("fn", report::integer(c.fn));
  rep.inputs.add("fp", report::integer(c.fp)).add("tn", report::integer(c.tn));
  const AuditBound b = audit_epsilon_lower(c, confidence, delta);
  rep.results.push_back(rate_row("counts", b));
  note(rep, kIndependentTrialsNote);
  return b.epsilon_lower;
}

/// The scores' audit (the best threshold, or --threshold's).
double audit_score_lines(const AuditFlags& f, double confidence, double delta,
                         report::Report& rep) {
  const auto s = read_scores_file(f.scores);
  std::int64_t members = 0;
  for (const auto& x : s) members += x.member ? 1 : 0;
  if (members == 0 || members == static_cast<std::int64_t>(s.size()))
    throw UsageError("--scores: need both members (label 1) and non-members (label 0)");
  const auto threshold =
      optional_real("--threshold", f.threshold, Domain{-kInf, kInf, true, true, "a finite number"});
  const ThresholdAudit a = threshold ? audit_scores_at(s, *threshold, confidence, delta)
                                     : audit_scores(s, confidence, delta);
  rep.inputs.add("scores", report::text(f.scores));
  rep.inputs.add("examples", report::integer(static_cast<std::int64_t>(s.size())));
  rep.inputs.add("threshold", report::number(a.threshold));
  rep.inputs.add("thresholds_tried", report::integer(a.tests));
  report::Record r = rate_row(threshold ? "threshold" : "best threshold", a.bound);
  rep.results.push_back(std::move(r));
  note(rep, kIndependentTrialsNote);
  if (!threshold)
    note(rep, "best of " + std::to_string(a.tests) +
                  " thresholds: each rate bound at level (1 - confidence)/(2 x " +
                  std::to_string(a.tests) + ") (Bonferroni)");
  return a.bound.epsilon_lower;
}

/// The one-run audit (--canaries --guesses --correct).
double audit_one_run(const AuditFlags& f, double confidence, double delta, report::Report& rep) {
  const auto m = optional_integer("--canaries", f.canaries, 1);
  const auto r = optional_integer("--guesses", f.guesses, 0);
  const auto v = optional_integer("--correct", f.correct, 0);
  if (!m || !r || !v)
    throw UsageError("--canaries: the one-run audit needs --canaries, --guesses and --correct");
  if (*r > *m) throw UsageError("--guesses: must be <= --canaries (" + std::to_string(*m) + ")");
  if (*v > *r) throw UsageError("--correct: must be <= --guesses (" + std::to_string(*r) + ")");
  rep.inputs.add("canaries", report::integer(*m)).add("guesses", report::integer(*r));
  rep.inputs.add("correct", report::integer(*v));
  const double epsilon_lower = one_run_epsilon_lower(*m, *r, *v, confidence, delta);
  report::Record row;
  row.add("audit", report::text("one run"));
  row.add("accuracy",
          report::number(*r > 0 ? static_cast<double>(*v) / static_cast<double>(*r) : 0.0));
  row.add("epsilon_lower", report::number(epsilon_lower, report::Rounding::down));
  rep.results.push_back(std::move(row));
  note(rep,
       "one-run audit (Steinke, Nasr & Jagielski 2023): canaries included independently "
       "with probability 1/2");
  return epsilon_lower;
}

/// The claimed run's question (the run flags, --spec or --schedule) at δ;
/// its inputs join `rep`'s.
Question claimed_question(const AuditFlags& f, std::optional<Neighbouring> neighbouring,
                          double delta, report::Report& rep) {
  RunEvent run = load_run(f.spec, f.run);
  for (auto& cell : run.inputs.cells) rep.inputs.cells.push_back(std::move(cell));
  AccountantChoice choice =
      resolve(f.accountant, {true, run.run && run.run->sampling == Sampling::shuffle});
  choice.options.neighbouring = neighbouring ? neighbouring : run.neighbouring;
  return make_question(run, choice, {delta}, /*solve_delta=*/false);
}

/// A row per claimed guarantee, each consistent or not with the measured
/// lower bound; returns whether a sound upper bound is below it.
bool add_claimed_rows(report::Report& rep, const Answer& claimed, double epsilon_lower,
                      bool one_run) {
  bool inconsistent = false;
  for (const auto& why : claimed.skipped) warn(rep, "skipped " + why);
  for (const auto& w : claimed.warnings) warn(rep, w);
  for (const AnswerRow& row : claimed.rows) {
    const Guarantee& g = row.guarantee;
    report::Record r;
    r.add("audit", report::text("claimed"));
    r.add("accountant", report::text(g.accountant));
    r.add("bound", report::text(std::string(to_string(g.bound))));
    r.add("epsilon", report::number(g.epsilon, report::Rounding::up));
    // Only a sound upper bound can contradict the measured lower bound.
    const bool bad = g.bound == BoundKind::upper && g.epsilon < epsilon_lower;
    r.add("consistent", report::boolean(!bad));
    inconsistent = inconsistent || bad;
    rep.results.push_back(std::move(r));
  }
  if (inconsistent)
    warn(rep, one_run ? "the measured lower bound exceeds a claimed upper bound: the "
                        "implementation or its accounting is wrong (if the canaries were "
                        "included independently with probability 1/2)"
                      : "the measured lower bound exceeds a claimed upper bound: if the "
                        "counts come from independent trials (each training a model with "
                        "the target's membership randomised), the implementation or its "
                        "accounting is wrong; counts from one trained model show nothing "
                        "(use the one-run audit: --canaries --guesses --correct)");
  return inconsistent;
}

int run_audit(const AuditFlags& f, std::ostream& out, std::ostream& err) {
  const auto neighbouring = neighbouring_of(f.spec);
  if (f.spec.print) {  // the claimed run's spec, as epsilon prints it
    print_spec(f.spec, f.run, out);
    return kOk;
  }
  const bool counts = !f.tp.empty() || !f.fn.empty() || !f.fp.empty() || !f.tn.empty();
  const bool scores = !f.scores.empty();
  const bool one_run = !f.canaries.empty() || !f.guesses.empty() || !f.correct.empty();
  if (counts + scores + one_run == 0)
    throw UsageError(
        "audit: give the attack's outcome: --tp --fn --fp --tn, --scores FILE, or --canaries "
        "--guesses --correct");
  if (counts && scores) throw UsageError("--scores: give either it or --tp/--fn/--fp/--tn");
  if (one_run && (counts || scores))
    throw UsageError("--canaries: give either the one-run audit or " +
                     std::string(counts ? "--tp/--fn/--fp/--tn" : "--scores"));
  if (!f.threshold.empty() && !scores) throw UsageError("--threshold: only with --scores");
  const double confidence = optional_real("--confidence", f.confidence, kOpenUnit).value_or(0.95);
  const double delta = optional_real("--delta", f.delta, kDelta).value_or(0);
  const bool compare = !f.spec.file.empty() || !f.spec.schedule.empty() || [&] {
    for (const auto& p : kRunParameters)
      if (given(f.run, p.id)) return true;
    return false;
  }();
  if (compare && !(delta > 0))
    throw UsageError("--delta: must be > 0 to compare with a claimed (epsilon, delta) bound");
  if (const auto flag = first_accountant_flag(f.accountant); flag && !compare)
    throw UsageError(
        *flag +
        ": only with the claimed run it compares with (the run flags, --spec or --schedule)");
  check_format(f.output);

  report::Report rep;
  rep.command = "audit";
  const double epsilon_lower = counts   ? audit_counts(f, confidence, delta, rep)
                               : scores ? audit_score_lines(f, confidence, delta, rep)
                                        : audit_one_run(f, confidence, delta, rep);
  rep.inputs.add("confidence", report::number(confidence));
  rep.inputs.add("delta", report::number(delta));

  bool inconsistent = false;
  if (compare) {
    const Question question = claimed_question(f, neighbouring, delta, rep);
    if (only_checking()) return kOk;
    inconsistent = add_claimed_rows(rep, answer(question), epsilon_lower, one_run);
  }
  finish(rep, f.output, out, err);
  return inconsistent ? kBudgetExceeded : kOk;
}

Verb declare_audit(CLI::App& command) {
  auto f = std::make_shared<AuditFlags>();
  CLI::App* cmd = &command;
  cmd->add_option("--tp", f->tp,
                  "members the attack flagged (an integer >= 0), over independent trials");
  cmd->add_option("--fn", f->fn, "members the attack missed");
  cmd->add_option("--fp", f->fp, "non-members the attack flagged");
  cmd->add_option("--tn", f->tn, "non-members the attack did not flag");
  record_file(cmd->add_option("--scores", f->scores,
                              "file of 'score,label' lines (label 1 member, 0 not; '-' stdin) "
                              "instead of the counts, one line per independent trial"));
  cmd->add_option("--threshold", f->threshold,
                  "with --scores: flag a member when score >= this (default: the best threshold, "
                  "at a Bonferroni cost)");
  cmd->add_option("--canaries", f->canaries,
                  "one-run audit (one trained model): canaries, each included independently "
                  "with probability 1/2");
  cmd->add_option("--guesses", f->guesses, "one-run audit: canaries guessed in or out");
  cmd->add_option("--correct", f->correct, "one-run audit: guesses that were right");
  cmd->add_option("--confidence", f->confidence,
                  "confidence of the lower bound, in (0, 1) (default 0.95)");
  cmd->add_option("--delta", f->delta,
                  "delta of the guarantee audited, in [0, 1) (default 0; > 0 to compare with the "
                  "run flags or --spec)");
  add_dp_sgd_flags(*cmd, f->run);
  add_spec_flags(*cmd, f->spec);
  add_accountant_flags(*cmd, f->accountant);
  add_output_flags(*cmd, f->output);
  return verb_of(cmd, f, run_audit);
}

}  // namespace

extern const VerbDescriptor kAuditVerb{
    "audit",
    "a lower bound on epsilon from a membership-inference attack's outcome, and whether a claimed "
    "bound is consistent with it. The counts (--tp/--fn/--fp/--tn) and --scores must come from "
    "independent trials, each training a model with the target's membership randomised; for a "
    "single trained model use the one-run audit (--canaries --guesses --correct)",
    {"dpbudget audit --tp 600 --fn 400 --fp 100 --tn 900 --delta 1e-5"},
    declare_audit};

}  // namespace dpb::cli
