// dpbudget delta: (q, σ, T, ε) -> δ, one row per accountant and ε; or the δ
// of a spec file's composition (--spec).
#include <memory>

#include "cli/common.hpp"
#include "cli/errors.hpp"
#include "cli/parse.hpp"
#include "cli/spec_verb.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {
namespace {

struct DeltaFlags {
  DpSgdFlags run;
  AccountantFlags accountant;
  OutputFlags output;
  SpecFlags spec;
  std::vector<std::string> epsilons;
};

int run_delta(const DeltaFlags& f, std::ostream& out, std::ostream& err) {
  if (f.spec.print) {
    print_spec(f.spec, f.run, out);
    return kOk;
  }
  RunEvent run = load_run(f.spec, f.run);
  const AccountantChoice choice = resolve(f.accountant);
  resolve(f.output);  // check --format and --precision before any work
  text_style(f.output);
  if (f.epsilons.empty()) throw UsageError("--epsilon is required");
  const auto targets = parse_list("--epsilon", f.epsilons, kNonNegative);

  const auto rep = event_table("delta", std::move(run.inputs), *run.event, choice, targets,
                               /*solve_delta=*/true, err);
  emit(rep, f.output, out);
  return kOk;
}

}  // namespace

Verb setup_delta(CLI::App& app) {
  auto f = std::make_shared<DeltaFlags>();
  CLI::App* cmd = app.add_subcommand(
      "delta",
      "delta of a DP-SGD run (q, sigma, steps) at each --epsilon\n"
      "  example: dpbudget delta -q 0.01 --sigma 1.1 --steps 10000 --epsilon 1,2,4");
  add_dp_sgd_flags(*cmd, f->run);
  cmd->add_option("--epsilon", f->epsilons, "target epsilon(s) >= 0; several give one row each");
  add_spec_flags(*cmd, f->spec);
  add_accountant_flags(*cmd, f->accountant);
  add_output_flags(*cmd, f->output);
  return {cmd, [f](std::ostream& out, std::ostream& err) { return run_delta(*f, out, err); }};
}

}  // namespace dpb::cli
