// dpbudget epsilon: (q, σ, T, δ) -> ε, one row per accountant and δ; or the
// ε of a spec file's composition (--spec).
#include <memory>
#include <optional>

#include "cli/common.hpp"
#include "cli/errors.hpp"
#include "cli/parse.hpp"
#include "cli/spec_verb.hpp"
#include "cli/verbs.hpp"
#include "report/number_format.hpp"

namespace dpb::cli {
namespace {

struct EpsilonFlags {
  DpSgdFlags run;
  AccountantFlags accountant;
  OutputFlags output;
  SpecFlags spec;
  std::vector<std::string> deltas;
  std::string max_epsilon;
};

int run_epsilon(const EpsilonFlags& f, std::ostream& out, std::ostream& err) {
  if (f.spec.print) {
    print_spec(f.spec, f.run, out);
    return kOk;
  }
  RunEvent run = load_run(f.spec, f.run);
  const AccountantChoice choice = resolve(f.accountant);
  resolve(f.output);  // check --format and --precision before any work
  text_style(f.output);
  if (f.deltas.empty()) throw UsageError("--delta is required");
  const auto targets = parse_list("--delta", f.deltas, kOpenUnit);

  std::optional<double> budget;
  if (!f.max_epsilon.empty()) budget = parse_real("--max-epsilon", f.max_epsilon, kNonNegative);

  const auto rep = event_table("epsilon", std::move(run.inputs), *run.event, choice, targets,
                               /*solve_delta=*/false, err);
  emit(rep, f.output, out);
  // The budget gate: stdout keeps the full table; every row over is named.
  bool over = false;
  for (std::size_t i = 0; budget && i < rep.results.size(); ++i) {
    const auto* eps = rep.results[i].find("epsilon");
    const double e = eps ? std::get<double>(eps->value) : 0;
    if (!(e <= *budget)) {
      over = true;
      const auto* acc = rep.results[i].find("accountant");
      const auto* delta = rep.results[i].find("delta");
      err << "dpbudget: budget exceeded: row " << i + 1 << " (" << std::get<std::string>(acc->value)
          << ", delta "
          << report::format_number(std::get<double>(delta->value), 6, report::Rounding::nearest)
          << "): epsilon " << report::format_number(e, 6, report::Rounding::up)
          << " > --max-epsilon " << report::format_number(*budget, 6, report::Rounding::nearest)
          << '\n';
    }
  }
  return over ? kBudgetExceeded : kOk;
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
  cmd->add_option("--max-epsilon", f->max_epsilon,
                  "budget gate: rows with epsilon above it are named on stderr; exit status 1");
  add_spec_flags(*cmd, f->spec);
  add_accountant_flags(*cmd, f->accountant);
  add_output_flags(*cmd, f->output);
  return {cmd, [f](std::ostream& out, std::ostream& err) { return run_epsilon(*f, out, err); }};
}

}  // namespace dpb::cli
