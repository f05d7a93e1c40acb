#include "cli/event_verb.hpp"

#include <optional>

#include "cli/errors.hpp"
#include "cli/parse.hpp"
#include "cli/result_rows.hpp"

namespace dpb::cli {

int run_event_verb(const EventVerbFlags& f, bool solve_delta, std::ostream& out,
                   std::ostream& err) {
  const auto neighbouring = neighbouring_of(f.spec);
  if (f.spec.print) {
    print_spec(f.spec, f.run, out);
    return kOk;
  }
  RunEvent run = load_run(f.spec, f.run);
  AccountantChoice choice = resolve(f.accountant);
  choice.options.neighbouring = neighbouring ? neighbouring : run.neighbouring;
  resolve(f.output);  // check --format and --precision before any work
  text_style(f.output);
  const char* targets_flag = solve_delta ? "--epsilon" : "--delta";
  if (f.targets.empty()) throw UsageError(std::string(targets_flag) + " is required");
  const auto targets = parse_list(targets_flag, f.targets, solve_delta ? kNonNegative : kOpenUnit);
  std::optional<double> budget;
  if (!f.max_epsilon.empty()) budget = parse_real("--max-epsilon", f.max_epsilon, kNonNegative);

  const auto rep = event_table(solve_delta ? "delta" : "epsilon", std::move(run.inputs), *run.event,
                               choice, targets, solve_delta, err);
  emit(rep, f.output, out);
  // The budget gate: stdout keeps the full table; every row over is named.
  bool over = false;
  for (std::size_t i = 0; budget && i < rep.results.size(); ++i)
    if (auto why = over_budget(rep.results[i], *budget, "--max-epsilon")) {
      over = true;
      err << "dpbudget: budget exceeded: row " << i + 1 << " " << *why << '\n';
    }
  return over ? kBudgetExceeded : kOk;
}

}  // namespace dpb::cli
