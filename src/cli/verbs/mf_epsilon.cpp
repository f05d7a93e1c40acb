// dpbudget mf-epsilon: ε of a matrix-mechanism run (DP-FTRL, banded MF) at
// noise σ (docs/matrix.md): one Gaussian release at σ/Δ, or amplified banded
// MF as a DP-SGD run with the pair one group's steps attain; through answer().
#include <optional>

#include "accounting/answer.hpp"
#include "accounting/matrix/sensitivity.hpp"
#include "accounting/matrix/strategy.hpp"
#include "accounting/matrix_run.hpp"
#include "cli/flags/flag_values.hpp"
#include "cli/flags/parse.hpp"
#include "cli/run/matrix_strategy.hpp"
#include "cli/run/result_rows.hpp"
#include "cli/run/solve.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {
namespace {

int run_mf_epsilon(const MatrixFlags& f, std::ostream& out, std::ostream& err) {
  const Pattern pattern = pattern_of(f);
  const Built b = one_built(f, pattern);
  const double sigma = required_real("--sigma", f.sigma, kPositive);
  if (f.delta.empty()) throw UsageError("--delta is required");
  const auto deltas = parse_list("--delta", f.delta, kOpenUnit);
  std::optional<double> budget;
  if (!f.max_epsilon.empty()) budget = parse_real("--max-epsilon", f.max_epsilon, kNonNegative);
  const AccountantChoice choice = resolve(f.accountant);
  check_output_flags(f.output);

  report::Record inputs;
  add_strategy_inputs(inputs, b, matrix::steps(b.strategy));
  Question question;
  question.accountants = choice;
  question.targets = deltas;
  if (pattern == Pattern::cyclic_poisson) {
    const Cyclic c = cyclic_of(f, b);
    const DpSgdRun run = amplified(b, c, sigma);
    if (only_checking()) return kOk;
    inputs.add("participation", report::text("cyclic-poisson"));
    inputs.add("groups", report::integer(c.groups));
    inputs.add("sampling_rate", report::number(c.q));
    inputs.add("noise_sd", report::number(sigma));
    inputs.add("dp_sgd_steps", report::integer(run.steps));
    question.event = amplified_event(run.sampling_rate, run.noise_multiplier,
                                     matrix::steps(b.strategy), c.groups);
    question.attained = amplified_attained_event(b.strategy, c.groups, c.q, sigma);
    question.run = run;
  } else {
    const auto p = participation_of(f, pattern);
    check_sensitivity(b.strategy, p);
    if (only_checking()) return kOk;
    const auto s = sensitivity_of(b.strategy, p);
    add_pattern_inputs(inputs, pattern, p);
    inputs.add("noise_sd", report::number(sigma));
    add_sensitivity(inputs, s);
    const double z = matrix_noise_multiplier(sigma, s.squared);
    inputs.add("noise_multiplier", report::number(z, report::Rounding::down));
    question.event = matrix_release_event(z);
    // A sensitivity that is only an upper bound gives a Gaussian that dominates
    // the release without being attained by it (docs/matrix.md#privacy-of-one-release).
    question.event_is_own = s.exact;
  }
  const Answer answer = dpb::answer(question);
  auto rep = answer_report("mf-epsilon", std::move(inputs), question, answer, err);
  if (pattern == Pattern::cyclic_poisson)
    note(rep,
         "amplified banded MF: the DP-SGD run of ceil(steps / bands) Poisson-sampled rounds "
         "at sampling_rate and noise_sd (Choquette-Choo et al. 2023, arXiv 2306.08153); pld's "
         "lower end: one group's steps, each at noise_sd / its column's norm, a pair the run "
         "attains");
  else
    note(rep,
         "one Gaussian release at noise_multiplier = noise_sd / sensitivity (the noise on "
         "each entry of C x, per unit of clipping norm)");
  std::optional<BudgetCheck> check;
  if (budget) check = check_budget(question, answer, *budget);
  emit(rep, f.output, out);
  return report_budget(answer, check, budget.value_or(0), choice.names, err);
}

void add_mf_epsilon_flags(CLI::App& cmd, MatrixFlags& f) {
  cmd.add_option("--sigma", f.sigma,
                 "noise standard deviation on each entry of C x per unit of clipping norm, "
                 "> 0");
  cmd.add_option("--delta", f.delta, "delta(s) in (0, 1)");
  cmd.add_option("--max-epsilon", f.max_epsilon,
                 "budget gate: the recommended row above it is named on stderr; exit status 1");
}

}  // namespace

extern const VerbDescriptor kMfEpsilonVerb{
    "mf-epsilon",
    "epsilon of a matrix-mechanism run (DP-FTRL, banded MF) at noise --sigma",
    {"dpbudget mf-epsilon --strategy sqrt --steps 1000 --sigma 5 --delta 1e-6"},
    [](CLI::App& cmd) {
      return matrix_verb(cmd, {.accountants = true, .wide = true}, add_mf_epsilon_flags,
                         run_mf_epsilon);
    }};

}  // namespace dpb::cli
