// dpbudget laplace: the scale of a Laplace mechanism for ε-DP (docs/mechanisms.md#laplace);
// and the other way, given the scale (--scale): its pure ε, ε at each
// --delta, or δ at each --epsilon. The maths is accounting/laplace_mechanism.
#include <memory>

#include "accounting/mechanisms/laplace_mechanism.hpp"
#include "cli/errors.hpp"
#include "cli/flags/flag_values.hpp"
#include "cli/flags/output_flags.hpp"
#include "cli/flags/parse.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {
namespace {

struct LaplaceFlags {
  std::vector<std::string> epsilon, delta, scale, sensitivity;
  OutputFlags output;
};

/// The scale given: pure ε = Δ/b, or ε at each δ, or δ at each ε (exact profile).
int run_scale_given(const LaplaceFlags& f, std::ostream& out, std::ostream& err) {
  const auto scales = parse_list("--scale", f.scale, kPositive);
  const double sensitivity = optional_real("--sensitivity", f.sensitivity, kPositive).value_or(1.0);
  if (!f.delta.empty() && !f.epsilon.empty())
    throw UsageError(
        "--epsilon: with --scale give either --delta (epsilon at each delta) or --epsilon (delta "
        "at each epsilon), not both");
  const bool want_delta = !f.epsilon.empty();
  // δ = 0 is pure DP, so --delta takes [0, 1); without it, δ = 0.
  const auto given = want_delta        ? parse_list("--epsilon", f.epsilon, kNonNegative)
                     : f.delta.empty() ? std::vector<double>{0.0}
                                       : parse_list("--delta", f.delta, kDelta);
  check_table_rows(want_delta ? "--epsilon" : "--delta", scales.size() * given.size());
  check_format(f.output);
  if (only_checking()) return kOk;

  report::Report rep;
  rep.command = "laplace";
  rep.inputs.add("sensitivity", report::number(sensitivity));
  using report::Rounding;
  for (double scale : scales)
    for (double x : given) {
      report::Record r;
      r.add("bound", report::text("upper"));
      if (want_delta) {
        r.add("epsilon", report::number(x));
        r.add("delta", report::number(laplace_delta(scale, x, sensitivity), Rounding::up));
      } else {
        const double eps = x == 0 ? laplace_pure_epsilon(scale, sensitivity)
                                  : laplace_epsilon(scale, x, sensitivity);
        r.add("epsilon", report::number(eps, Rounding::up));
        r.add("delta", report::number(x));
      }
      r.add("scale", report::number(scale));
      rep.results.push_back(std::move(r));
    }
  note(rep,
       "epsilon = sensitivity / scale at delta = 0 (L1 sensitivity); for delta > 0 the "
       "exact profile delta(epsilon) = 1 - exp((epsilon - sensitivity/scale)/2)");
  finish(rep, f.output, out, err);
  return kOk;
}

int run_laplace(const LaplaceFlags& f, std::ostream& out, std::ostream& err) {
  if (!f.scale.empty()) return run_scale_given(f, out, err);
  if (f.epsilon.empty())
    throw UsageError("--epsilon is required (the target; or --scale, to get epsilon of a noise)");
  if (!f.delta.empty())
    throw UsageError("--delta: needs --scale (epsilon of a given noise at each delta)");
  const auto epsilons = parse_list("--epsilon", f.epsilon, kPositive);
  const double sensitivity = optional_real("--sensitivity", f.sensitivity, kPositive).value_or(1.0);
  check_format(f.output);
  if (only_checking()) return kOk;

  report::Report rep;
  rep.command = "laplace";
  rep.inputs.add("sensitivity", report::number(sensitivity));
  for (double epsilon : epsilons) {
    report::Record r;
    r.add("bound", report::text("upper"));
    r.add("epsilon", report::number(epsilon));
    r.add("delta", report::number(0.0));
    r.add("scale", report::number(laplace_scale(epsilon, sensitivity), report::Rounding::up));
    rep.results.push_back(std::move(r));
  }
  note(rep, "scale b = sensitivity / epsilon (L1 sensitivity), rounded up: more noise is safe");
  finish(rep, f.output, out, err);
  return kOk;
}

Verb declare_laplace(CLI::App& command) {
  auto f = std::make_shared<LaplaceFlags>();
  CLI::App* cmd = &command;
  cmd->add_option("--epsilon", f->epsilon,
                  "target epsilon(s), finite numbers > 0; with --scale: delta at each (>= 0)");
  cmd->add_option("--scale", f->scale,
                  "the noise given, its scale b (finite numbers > 0): report epsilon = "
                  "sensitivity/b, or epsilon at --delta, or delta at --epsilon");
  cmd->add_option("--delta", f->delta, "with --scale: delta(s) in [0, 1), epsilon at each");
  cmd->add_option("--sensitivity", f->sensitivity,
                  "L1 sensitivity, a finite number > 0 (default 1)");
  add_output_flags(*cmd, f->output);
  return verb_of(cmd, f, run_laplace);
}

}  // namespace

extern const VerbDescriptor kLaplaceVerb{
    "laplace",
    "scale of a Laplace mechanism for epsilon-DP, or epsilon (and delta) of a given scale",
    {"dpbudget laplace --epsilon 0.1,0.5,1", "dpbudget laplace --scale 2"},
    declare_laplace};

}  // namespace dpb::cli
