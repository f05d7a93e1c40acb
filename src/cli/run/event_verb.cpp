#include "cli/run/event_verb.hpp"

#include <optional>

#include "accounting/answer.hpp"
#include "cli/errors.hpp"
#include "cli/flags/parse.hpp"
#include "cli/run/result_rows.hpp"

namespace dpb::cli {
int run_event_verb(const EventVerbFlags& f, bool solve_delta, std::ostream& out,
                   std::ostream& err) {
  auto loaded = load_run_for_accountants(f.spec, f.run, f.accountant, out, err);
  if (!loaded) return kOk;  // --print-spec
  RunEvent& run = loaded->run;
  const AccountantChoice& choice = loaded->choice;
  check_output_flags(f.output);
  const char* targets_flag = solve_delta ? "--epsilon" : "--delta";
  if (f.targets.empty()) throw UsageError(std::string(targets_flag) + " is required");
  const auto targets = parse_list(targets_flag, f.targets, solve_delta ? kNonNegative : kOpenUnit);
  std::optional<double> budget;
  if (!f.max_epsilon.empty()) budget = parse_real("--max-epsilon", f.max_epsilon, kNonNegative);

  if (only_checking()) return kOk;
  Question question = make_question(run, choice, targets, solve_delta);
  const Answer answer = dpb::answer(question);
  auto rep = answer_report(solve_delta ? "delta" : "epsilon", std::move(run.inputs), question,
                           answer, err);
  // The budget gate, on the run's smallest sound upper bound (docs/claims.md#budget-gate):
  // stdout keeps the full table; stderr says why the run fails.
  std::optional<BudgetCheck> check;
  if (budget) check = check_budget(question, answer, *budget);
  if (question.run) note_default_accountant(f.accountant, question.run->sampling, err);
  emit(rep, f.output, out);
  return report_budget(answer, check, budget.value_or(0), choice.names, err);
}

}  // namespace dpb::cli
