// dpbudget mf-sigma: the noise of a matrix-mechanism run (DP-FTRL, banded MF)
// for a target ε (docs/matrix.md), by the σ search every solver uses.
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

/// σ per entry for a target ε at δ under one accountant, and the guarantee
/// the solved run or release achieves.
struct SolvedNoise {
  double noise_multiplier;  ///< the release's σ/Δ, or the DP-SGD σ
  double noise_sd;          ///< σ on each entry of C x
  Guarantee guarantee;
};

SolvedNoise solve_noise(const Built& b, Pattern pattern, const std::optional<Cyclic>& cyclic,
                        const matrix::Sensitivity& s, const std::string& accountant,
                        const AccountantChoice& choice, double target, double delta,
                        const SolveSettings& settings) {
  const RunTarget what{Measure::epsilon, delta, 0};
  if (pattern == Pattern::cyclic_poisson) {
    const SigmaSolution z = calibrate_amplified(b.strategy, cyclic->q, cyclic->groups, accountant,
                                                choice.options, target, what, settings);
    return {z.noise_multiplier, z.noise_multiplier, z.guarantee};
  }
  const SigmaSolution z =
      calibrate_release(accountant, choice.options, target, what, settings, s.exact);
  return {z.noise_multiplier, matrix_noise(z.noise_multiplier, s.squared), z.guarantee};
}

int run_mf_sigma(const MatrixFlags& f, std::ostream& out, std::ostream& err) {
  const Pattern pattern = pattern_of(f);
  const Built b = one_built(f, pattern);
  if (f.epsilon.empty()) throw UsageError("--epsilon is required (the target)");
  if (f.delta.empty()) throw UsageError("--delta is required");
  const auto targets = parse_list("--epsilon", f.epsilon, kNonNegative);
  const auto deltas = parse_list("--delta", f.delta, kOpenUnit);
  const AccountantChoice choice = resolve(f.accountant);
  check_output_flags(f.output);
  const SolveSettings settings = resolve_solve_flags(f.tolerance, f.max_sigma);
  report::Report rep;
  rep.command = "mf-sigma";
  add_strategy_inputs(rep.inputs, b, matrix::steps(b.strategy));
  std::optional<Cyclic> cyclic;
  matrix::Sensitivity s;
  if (pattern == Pattern::cyclic_poisson) {
    cyclic = cyclic_of(f, b);
    check_amplified(b, *cyclic);
    if (only_checking()) return kOk;
    rep.inputs.add("participation", report::text("cyclic-poisson"));
    rep.inputs.add("groups", report::integer(cyclic->groups));
    rep.inputs.add("sampling_rate", report::number(cyclic->q));
  } else {
    const auto p = participation_of(f, pattern);
    check_sensitivity(b.strategy, p);
    if (only_checking()) return kOk;
    s = sensitivity_of(b.strategy, p);
    add_pattern_inputs(rep.inputs, pattern, p);
    add_sensitivity(rep.inputs, s);
  }
  add_inputs(rep.inputs, choice);
  for (const auto& accountant : choice.names)
    for (double target : targets)
      for (double delta : deltas) {
        const SolvedNoise solved =
            solve_noise(b, pattern, cyclic, s, accountant, choice, target, delta, settings);
        report::Record r = guarantee_record(solved.guarantee, false);
        r.add("target_epsilon", report::hoisted(report::number(target)));
        r.add("noise_multiplier", report::number(solved.noise_multiplier, report::Rounding::up));
        r.add("noise_sd", report::number(solved.noise_sd, report::Rounding::up));
        details_last(r);
        rep.results.push_back(std::move(r));
        collect_remarks(solved.guarantee, rep, err);
      }
  note(rep, pattern == Pattern::cyclic_poisson
                ? "noise_sd: the noise on each entry of C x per unit of clipping norm, the "
                  "DP-SGD noise multiplier of ceil(steps / bands) rounds (rounded up)"
                : "noise_sd = noise_multiplier x sensitivity: the noise on each entry of C x "
                  "per unit of clipping norm (rounded up)");
  emit(rep, f.output, out);
  return kOk;
}

void add_mf_sigma_flags(CLI::App& cmd, MatrixFlags& f) {
  cmd.add_option("--epsilon", f.epsilon, "target epsilon(s) >= 0");
  cmd.add_option("--delta", f.delta, "delta(s) in (0, 1)");
}

}  // namespace

extern const VerbDescriptor kMfSigmaVerb{
    "mf-sigma",
    "noise of a matrix-mechanism run (DP-FTRL, banded MF) for a target epsilon",
    {"dpbudget mf-sigma --strategy tree --steps 1000 --epsilon 8 --delta 1e-6"},
    [](CLI::App& cmd) {
      return matrix_verb(cmd, {.accountants = true, .solve = true, .wide = true},
                         add_mf_sigma_flags, run_mf_sigma);
    }};

}  // namespace dpb::cli
