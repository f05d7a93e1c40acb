// dpbudget epsilon: (q, σ, T, δ) -> ε, one row per accountant and δ; or the
// ε of a spec file's composition (--spec).
#include <memory>

#include "cli/common.hpp"
#include "cli/errors.hpp"
#include "cli/parse.hpp"
#include "cli/spec_verb.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {
namespace {

struct EpsilonFlags {
  DpSgdFlags run;
  AccountantFlags accountant;
  OutputFlags output;
  SpecFlags spec;
  std::vector<std::string> deltas;
};

int run_epsilon(const EpsilonFlags& f, std::ostream& out, std::ostream& err) {
  if (f.spec.print) {
    print_spec(f.spec, f.run, out);
    return kOk;
  }
  RunEvent run = load_run(f.spec, f.run);
  const AccountantChoice choice = resolve(f.accountant);
  const report::Format format = resolve(f.output);
  if (f.deltas.empty()) throw UsageError("--delta is required");
  const auto targets = parse_list("--delta", f.deltas, kOpenUnit);

  const auto rep = event_table("epsilon", std::move(run.inputs), *run.event, choice, targets,
                               /*solve_delta=*/false, err);
  emit(rep, format, out);
  return kOk;
}

}  // namespace

Verb setup_epsilon(CLI::App& app) {
  auto f = std::make_shared<EpsilonFlags>();
  CLI::App* cmd = app.add_subcommand(
      "epsilon",
      "epsilon spent by a DP-SGD run (q, sigma, steps) at each --delta\n"
      "  example: dpbudget epsilon -q 0.01 --sigma 1.1 --steps 10000 --delta 1e-5");
  add_dp_sgd_flags(*cmd, f->run);
  cmd->add_option("--delta", f->deltas, "target delta(s) in (0, 1); several give one row each");
  add_spec_flags(*cmd, f->spec);
  add_accountant_flags(*cmd, f->accountant);
  add_output_flags(*cmd, f->output);
  return {cmd, [f](std::ostream& out, std::ostream& err) { return run_epsilon(*f, out, err); }};
}

}  // namespace dpb::cli
