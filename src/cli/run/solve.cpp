#include "cli/run/solve.hpp"

#include <limits>

#include "accounting/dpsgd/calibration.hpp"
#include "accounting/dpsgd/run_forms.hpp"
#include "accounting/dpsgd/schedule.hpp"
#include "accounting/errors.hpp"
#include "cli/errors.hpp"
#include "cli/flags/output_flags.hpp"
#include "cli/flags/parse.hpp"
#include "cli/input/schedule.hpp"
#include "cli/run/ledger.hpp"
#include "cli/run/result_rows.hpp"

namespace dpb::cli {

void add_solve_flags(CLI::App& app, std::string& tolerance, std::string& max_sigma) {
  app.add_option("--tolerance", tolerance,
                 "relative tolerance of the solved sigma or sampling rate (default 1e-4)");
  app.add_option("--max-sigma", max_sigma,
                 "largest noise multiplier considered before giving up (default 1000)");
}

SolveSettings resolve_solve_flags(const std::string& tolerance, const std::string& max_sigma) {
  SolveSettings s;
  if (!tolerance.empty())
    s.tolerance = parse_real("--tolerance", tolerance,
                             Domain{1e-12, 0.5, false, true, "a number in [1e-12, 0.5)"});
  if (!max_sigma.empty()) s.max_sigma = parse_real("--max-sigma", max_sigma, kPositive);
  return s;
}

Solved solve_run(const DpSgdRun& run, Unknown unknown, const std::string& accountant,
                 const AccountantOptions& options, double target_epsilon, double delta,
                 const SolveSettings& settings) {
  return solve_run(run, unknown, accountant, options, target_epsilon,
                   SolveTarget{Measure::epsilon, delta, 0}, settings);
}

Solved solve_run(const DpSgdRun& run, Unknown unknown, const std::string& accountant,
                 const AccountantOptions& options, double target_epsilon, const SolveTarget& what,
                 const SolveSettings& settings) {
  if (unknown == Unknown::none) throw UsageError("nothing to solve for");
  try {
    return calibrate_run(run, unknown, accountant, options, target_epsilon, what, settings);
  } catch (const RunParameterError& e) {
    throw UsageError(message_of(e, Naming::flags));
  }
}

namespace {

/// The solved quantity's columns (noise_multiplier; steps and epochs;
/// sampling_rate, batch_size and steps).
void add_solved_quantity(report::Record& r, const DpSgdRun& run, Unknown unknown) {
  using report::Rounding;
  const char* length_key = run.federated ? "rounds" : "steps";
  switch (unknown) {
    case Unknown::noise_multiplier:
      if (run.clipping_count_noise) {
        // The gradient's z_eff (what the optimizer is given) and the combined multiplier found
        // (docs/mechanisms.md#adaptive-clipping), both rounded up as the σ found is.
        r.add("noise_multiplier", report::number(run.gradient_noise_multiplier, Rounding::up));
        r.add("combined_noise_multiplier", report::number(run.noise_multiplier, Rounding::up));
      } else {
        r.add("noise_multiplier", report::number(run.noise_multiplier, Rounding::up));
      }
      if (run.clipping_norm) r.add("noise_std", report::number(noise_std_of(run), Rounding::up));
      break;
    case Unknown::steps:
      if (run.steps >= kUnboundedCount)
        r.add(length_key, report::number(std::numeric_limits<double>::infinity()));
      else
        r.add(length_key, report::integer(run.steps));
      if (run.epochs && !run.federated)
        r.add("epochs", report::number(*run.epochs, Rounding::down));
      break;
    case Unknown::sampling_rate:
      r.add("sampling_rate", report::number(run.sampling_rate, Rounding::down));
      if (run.batch_size) {
        // The micro-batch, as --batch-size takes it, and the logical batch sampled.
        r.add(run.federated ? "clients_per_round" : "batch_size",
              report::integer(*run.batch_size / run.accumulation_steps));
        if (run.accumulation_steps > 1)
          r.add("logical_batch_size", report::integer(*run.batch_size));
        r.add(length_key, report::integer(run.steps));
      }
      break;
    case Unknown::none:
      break;
  }
}

}  // namespace

report::Record solved_record(const Solved& solved, Unknown unknown, double target_epsilon) {
  report::Record r = guarantee_record(solved.guarantee, /*solved_delta=*/false);
  r.add("target_epsilon", report::hoisted(report::number(target_epsilon)));
  add_solved_quantity(r, solved.run, unknown);
  details_last(r);
  return r;
}

report::Record solved_risk_record(const Solved& solved, Unknown unknown, Measure measure,
                                  double target, double fpr) {
  using report::Rounding;
  const Guarantee& g = solved.guarantee;
  report::Record r;
  r.add("accountant", report::text(g.accountant));
  r.add("neighbouring", report::hoisted(report::text(std::string(to_string(g.neighbouring)))));
  r.add("bound", report::text(std::string(to_string(g.bound))));
  if (measure == Measure::tpr) {
    r.add("target_tpr", report::hoisted(report::number(target)));
    r.add("at_fpr", report::hoisted(report::number(fpr)));
  } else {
    r.add("target_advantage", report::hoisted(report::number(target)));
  }
  add_solved_quantity(r, solved.run, unknown);
  // The achieved risk (an upper bound, or the accountant's approximation).
  r.add(measure == Measure::tpr ? "tpr" : "advantage", report::number(g.epsilon, Rounding::up));
  return r;
}

namespace {

struct SolverFlags {
  DpSgdFlags run;
  AccountantFlags accountant;
  OutputFlags output;
  std::vector<std::string> epsilons, deltas;
  std::vector<std::string> max_tpr, at_fpr, max_advantage;  ///< docs/calibration.md#risk-targets
  std::string tolerance, max_sigma;
  std::string schedule, phase;  ///< --schedule FILE, --phase NAME (sigma)
  LedgerFlags ledger;           ///< --spec and its flags (sigma, steps)
};

/// Which target the flags give: --epsilon at --delta, --max-tpr at --at-fpr,
/// or --max-advantage; exactly one, each with only its own companions.
Measure target_measure(const SolverFlags& f) {
  const int given = !f.epsilons.empty() + !f.max_tpr.empty() + !f.max_advantage.empty();
  if (given > 1)
    throw UsageError(
        "give one target: --epsilon (with --delta), --max-tpr (with --at-fpr) or "
        "--max-advantage");
  if (!f.at_fpr.empty() && f.max_tpr.empty()) throw UsageError("--at-fpr: goes with --max-tpr");
  if (!f.max_tpr.empty() || !f.max_advantage.empty()) {
    if (!f.deltas.empty())
      throw UsageError(std::string("--delta: goes with --epsilon, not ") +
                       (f.max_tpr.empty() ? "--max-advantage" : "--max-tpr"));
    if (!f.max_tpr.empty() && f.at_fpr.empty())
      throw UsageError("--at-fpr is required with --max-tpr (the false-positive rate)");
    return f.max_tpr.empty() ? Measure::advantage : Measure::tpr;
  }
  if (f.epsilons.empty())
    throw UsageError(
        "--epsilon is required (the target), or --max-tpr with --at-fpr, or --max-advantage");
  if (f.deltas.empty()) throw UsageError("--delta is required");
  return Measure::epsilon;
}

int run_risk_solver(const SolverFlags& f, const std::string& name, Unknown unknown, Measure measure,
                    const DpSgdRun& run, const AccountantChoice& choice,
                    const SolveSettings& settings, std::ostream& out, std::ostream& err) {
  double fpr = 0;
  std::vector<double> targets;
  if (measure == Measure::tpr) {
    fpr = parse_real("--at-fpr", f.at_fpr.size() == 1 ? f.at_fpr.front() : "", kOpenUnit);
    targets = parse_list("--max-tpr", f.max_tpr, kOpenUnit);
    for (double t : targets)
      if (!(t > fpr))
        throw UsageError(
            "--max-tpr: must be above --at-fpr (guessing at random already reaches TPR = FPR)");
  } else {
    targets = parse_list("--max-advantage", f.max_advantage, kOpenUnit);
  }
  if (only_checking()) return kOk;
  report::Report rep;
  rep.command = name;
  add_inputs(rep.inputs, run, unknown);
  add_inputs(rep.inputs, choice);
  for (const auto& accountant : choice.names)
    for (double target : targets) {
      const Solved solved = solve_run(run, unknown, accountant, choice.options, target,
                                      SolveTarget{measure, 0, fpr}, settings);
      rep.results.push_back(solved_risk_record(solved, unknown, measure, target, fpr));
      collect_remarks(solved.guarantee, rep, err);
    }
  rep.footnotes.push_back(
      measure == Measure::tpr
          ? "note: tpr: the largest true-positive rate of any membership-inference attack at "
            "false-positive rate at_fpr, at most target_tpr"
          : "note: advantage: the largest TPR - FPR of any membership-inference attack (the "
            "total variation distance, delta at epsilon 0), at most target_advantage");
  emit(rep, f.output, out);
  return kOk;
}

/// The result row of a solved schedule (docs/calibration.md#schedules): the
/// guarantee, the target, and what was found: the factor on every σ and the
/// σ it makes of each phase (rounded up), one phase's σ, or the last phase's
/// steps and epochs with the schedule's total.
report::Record solved_schedule_record(const CalibratedSchedule& solved, const Schedule& schedule,
                                      Unknown unknown, double target_epsilon) {
  using report::Rounding;
  report::Record r = guarantee_record(solved.guarantee, /*solved_delta=*/false);
  r.add("target_epsilon", report::hoisted(report::number(target_epsilon)));
  if (solved.scale) {
    r.add("sigma_scale", report::number(*solved.scale, Rounding::up));
    std::vector<double> sigmas;
    for (const auto& p : solved.phases) sigmas.push_back(p.noise_multiplier);
    r.add("noise_multipliers", report::Cell{std::move(sigmas), Rounding::up});
  } else if (schedule.solved) {
    const DpSgdRun& phase = solved.phases[*schedule.solved];
    r.add("phase", report::hoisted(report::text(schedule.names[*schedule.solved])));
    if (unknown == Unknown::noise_multiplier) {
      r.add("noise_multiplier", report::number(phase.noise_multiplier, Rounding::up));
    } else {
      const bool unbounded = phase.steps >= kUnboundedCount;
      r.add("steps", unbounded ? report::number(std::numeric_limits<double>::infinity())
                               : report::integer(phase.steps));
      if (phase.epochs) r.add("epochs", report::number(*phase.epochs, Rounding::down));
      if (!unbounded) r.add("total_steps", report::integer(schedule_steps(solved.phases)));
    }
  }
  details_last(r);
  return r;
}

/// sigma or steps on a --schedule: every accountant, target ε and δ.
int run_schedule_solver(const SolverFlags& f, const std::string& name, Unknown unknown,
                        std::ostream& out, std::ostream& err) {
  if (!f.max_tpr.empty() || !f.max_advantage.empty())
    throw UsageError(std::string(f.max_tpr.empty() ? "--max-advantage" : "--max-tpr") +
                     ": not with --schedule (give --epsilon with --delta)");
  const Schedule schedule = load_schedule(f.schedule, f.run, unknown, f.phase);
  if (target_measure(f) != Measure::epsilon) throw UsageError("--epsilon is required");
  const AccountantChoice choice = resolve(f.accountant, {true, false});
  check_output_flags(f.output);
  const SolveSettings settings = resolve_solve_flags(f.tolerance, f.max_sigma);
  const auto targets = parse_list("--epsilon", f.epsilons, kNonNegative);
  const auto deltas = parse_list("--delta", f.deltas, kOpenUnit);
  if (only_checking()) return kOk;
  report::Report rep;
  rep.command = name;
  add_schedule_inputs(rep.inputs, f.schedule, schedule, unknown);
  add_inputs(rep.inputs, choice);
  for (const auto& accountant : choice.names)
    for (double target : targets)
      for (double delta : deltas) {
        const CalibratedSchedule solved = calibrate_schedule(
            schedule.phases, unknown,
            unknown == Unknown::noise_multiplier ? schedule.solved : std::nullopt, accountant,
            choice.options, target, SolveTarget{Measure::epsilon, delta, 0}, settings);
        rep.results.push_back(solved_schedule_record(solved, schedule, unknown, target));
        collect_remarks(solved.guarantee, rep, err);
      }
  if (unknown == Unknown::noise_multiplier && !schedule.solved)
    rep.footnotes.push_back(
        "note: sigma_scale: the smallest factor on every phase's noise multiplier that meets the "
        "target; noise_multipliers: each phase's, times it, in phase order (rounded up)");
  emit(rep, f.output, out);
  return kOk;
}

/// sigma or steps on a ledger with a value marked to solve (cli/run/ledger.hpp).
int run_spec_solver(const SolverFlags& f, const std::string& name, Unknown unknown,
                    std::ostream& out, std::ostream& err) {
  if (!f.schedule.empty())
    throw UsageError(
        "--schedule: not with --spec (give the run as phases or as a ledger, not both)");
  if (!f.phase.empty()) throw UsageError("--phase: only with --schedule");
  refuse_run_flags(f.run, "--spec", "the spec file describes the whole ledger");
  if (!f.max_tpr.empty() || !f.max_advantage.empty())
    throw UsageError(std::string(f.max_tpr.empty() ? "--max-advantage" : "--max-tpr") +
                     ": not with --spec (give --epsilon with --delta)");
  (void)target_measure(f);  // --epsilon and --delta
  return run_ledger_solver(
      LedgerSolve{f.ledger, f.accountant, f.output, f.epsilons, f.deltas, f.tolerance, f.max_sigma},
      name, unknown, out, err);
}

int run_solver(const SolverFlags& f, const std::string& name, Unknown unknown, std::ostream& out,
               std::ostream& err) {
  if (!f.ledger.spec.empty()) return run_spec_solver(f, name, unknown, out, err);
  refuse_ledger_flags_without_spec(f.ledger);
  if (!f.schedule.empty()) return run_schedule_solver(f, name, unknown, out, err);
  if (!f.phase.empty()) throw UsageError("--phase: only with --schedule");
  const DpSgdRun run = derive(single_values(f.run), unknown);
  note_assumed_poisson(f.run, err);
  if (unknown != Unknown::noise_multiplier) note_clipping_count(run, err);
  const Measure measure = target_measure(f);
  // A TPR target reads rdp's Renyi curve itself, not its conversion to
  // (epsilon, delta); the advantage is delta at epsilon 0.
  const AccountantChoice choice = resolve(f.accountant, {measure != Measure::tpr, false});
  check_output_flags(f.output);
  const SolveSettings settings = resolve_solve_flags(f.tolerance, f.max_sigma);
  if (measure != Measure::epsilon)
    return run_risk_solver(f, name, unknown, measure, run, choice, settings, out, err);
  const auto targets = parse_list("--epsilon", f.epsilons, kNonNegative);
  const auto deltas = parse_list("--delta", f.deltas, kOpenUnit);

  if (only_checking()) return kOk;
  report::Report rep;
  rep.command = name;
  for (const auto& note : run_notes(run, deltas)) {
    rep.footnotes.push_back("note: " + note);
    err << "dpbudget: note: " << note << '\n';
  }
  add_inputs(rep.inputs, run, unknown);
  add_inputs(rep.inputs, choice);
  for (const auto& accountant : choice.names)
    for (double target : targets)
      for (double delta : deltas) {
        const Solved solved =
            solve_run(run, unknown, accountant, choice.options, target, delta, settings);
        rep.results.push_back(solved_record(solved, unknown, target));
        collect_remarks(solved.guarantee, rep, err);
      }
  if (unknown == Unknown::noise_multiplier && run.clipping_count_noise)
    rep.footnotes.push_back(
        "note: --clipping-count-noise: noise_multiplier is the gradient's, "
        "(z^-2 - (2 sigma_b)^-2)^(-1/2) of the combined_noise_multiplier z that meets the target "
        "(Andrew et al. 2021, Theorem 1)");
  note_default_accountant(f.accountant, run.sampling, err);
  emit(rep, f.output, out);
  return kOk;
}

}  // namespace

Verb declare_solver_verb(CLI::App& command, Unknown unknown) {
  auto f = std::make_shared<SolverFlags>();
  CLI::App* cmd = &command;
  const std::string name = command.get_name();
  add_dp_sgd_flags(*cmd, f->run);
  cmd->add_option("--epsilon", f->epsilons, "target epsilon(s) >= 0; several give one row each");
  cmd->add_option("--delta", f->deltas, "delta(s) in (0, 1)");
  cmd->add_option("--max-tpr", f->max_tpr,
                  "instead of --epsilon: largest true-positive rate(s) of any membership-inference "
                  "attack at --at-fpr, in (0, 1)");
  cmd->add_option("--at-fpr", f->at_fpr, "the false-positive rate of --max-tpr, in (0, 1)");
  cmd->add_option("--max-advantage", f->max_advantage,
                  "instead of --epsilon: largest advantage TPR - FPR of any membership-inference "
                  "attack, in (0, 1)");
  if (unknown != Unknown::sampling_rate) {
    add_schedule_flag(*cmd, f->schedule);
    add_ledger_flags(*cmd, f->ledger);
  }
  if (unknown == Unknown::noise_multiplier)
    cmd->add_option("--phase", f->phase,
                    "with --schedule: solve this phase's sigma (its name, or its number from 1; "
                    "its sigma left out, the others given) instead of scaling every phase's");
  add_accountant_flags(*cmd, f->accountant);
  add_solve_flags(*cmd, f->tolerance, f->max_sigma);
  add_output_flags(*cmd, f->output);
  add_wide_flag(*cmd, f->output);
  return verb_of(cmd, f,
                 [name, unknown](const SolverFlags& flags, std::ostream& out, std::ostream& err) {
                   return run_solver(flags, name, unknown, out, err);
                 });
}

}  // namespace dpb::cli
