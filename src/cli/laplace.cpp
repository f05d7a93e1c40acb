// dpbudget laplace: the scale of a Laplace mechanism for ε-DP (SPEC §2.4).
#include <memory>

#include "accounting/laplace_mechanism.hpp"
#include "cli/errors.hpp"
#include "cli/flag_values.hpp"
#include "cli/output_flags.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {
namespace {

struct LaplaceFlags {
  std::vector<std::string> epsilon, sensitivity;
  OutputFlags output;
};

int run_laplace(const LaplaceFlags& f, std::ostream& out, std::ostream& err) {
  if (f.epsilon.empty()) throw UsageError("--epsilon is required");
  const auto epsilons = parse_list("--epsilon", f.epsilon, kPositive);
  const double sensitivity = optional_real("--sensitivity", f.sensitivity, kPositive).value_or(1.0);
  resolve(f.output);  // checks --format before any work

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

}  // namespace

Verb setup_laplace(CLI::App& app) {
  auto f = std::make_shared<LaplaceFlags>();
  CLI::App* cmd = app.add_subcommand("laplace",
                                     "scale of a Laplace mechanism for epsilon-DP\n"
                                     "  example: dpbudget laplace --epsilon 0.1,0.5,1");
  cmd->add_option("--epsilon", f->epsilon, "target epsilon(s), finite numbers > 0");
  cmd->add_option("--sensitivity", f->sensitivity,
                  "L1 sensitivity, a finite number > 0 (default 1)");
  add_output_flags(*cmd, f->output);
  return {cmd, [f](std::ostream& out, std::ostream& err) { return run_laplace(*f, out, err); }};
}

}  // namespace dpb::cli
