#include "cli/event_verb.hpp"

#include <algorithm>
#include <exception>
#include <future>
#include <optional>

#include "accounting/errors.hpp"
#include "accounting/pld_accountant.hpp"
#include "cli/errors.hpp"
#include "cli/parse.hpp"
#include "cli/result_rows.hpp"

namespace dpb::cli {
namespace {

/// PLD tolerance of a shuffled run's lower-bound row: 1% of ε.
constexpr double kLowerBoundTolerance = 1e-2;

/// The rows of a lower bound on a shuffled run's ε (or δ), one per target:
/// the lower end of the PLD interval of shuffle_lower_bound_event(run), a
/// pair of datasets that the shuffled run distinguishes at least this well.
/// None when no such pair is computed here (or its PLD cannot be formed).
std::vector<Guarantee> shuffle_lower_rows(const DpSgdRun& run, const AccountantOptions& given,
                                          const std::vector<double>& targets, bool solve_delta,
                                          std::ostream& err) {
  const EventPtr pair = shuffle_lower_bound_event(run);
  if (!pair) return {};
  AccountantOptions options = given;
  options.neighbouring = std::nullopt;  // the pair's own relation: a record or none
  // A lower bound need not be tight to the last digit: a coarser grid keeps
  // this extra row fast (its interval is still sound).
  options.pld_tolerance = std::max(options.pld_tolerance, kLowerBoundTolerance);
  PldAccountant pld(options);
  try {
    pld.compose(*pair);
  } catch (const std::exception& e) {
    err << "dpbudget: warning: no lower bound for the shuffled run: " << e.what() << '\n';
    return {};
  }
  std::vector<Guarantee> rows;
  for (double target : targets) {
    const Guarantee g = solve_delta ? pld.delta(target) : pld.epsilon(target);
    Guarantee lower;
    lower.accountant = "pld";
    lower.bound = BoundKind::lower;
    lower.neighbouring = run_relation(run);
    lower.epsilon = solve_delta ? target : g.epsilon_lower.value_or(0);
    lower.delta = solve_delta ? g.delta_lower.value_or(0) : target;
    lower.notes.push_back(
        "lower: every other record's gradient 0, the record in a uniformly random batch of each "
        "epoch (the balls-in-bins pair of the whole epochs): this run loses at least this much");
    rows.push_back(std::move(lower));
  }
  return rows;
}

/// The Poisson estimate's answers (account() for the run as if Poisson-sampled
/// at q = B/N), started on its own thread so that it runs beside the run's own
/// rows; get() rethrows what account() threw.
std::future<std::vector<AccountantGuarantees>> start_poisson_estimate(
    const DpSgdRun& run, AccountantChoice choice, const std::vector<double>& targets,
    bool solve_delta) {
  choice.options.neighbouring = std::nullopt;
  return std::async(std::launch::async,
                    [event = poisson_estimate_event(run), choice, targets, solve_delta] {
                      return account(*event, choice, targets, solve_delta);
                    });
}

/// Beside a shuffled or balls-in-bins run: the figure each chosen accountant
/// gives for Poisson sampling at q = B/N (the usual estimate, not a bound for
/// this loader; `estimate`, from start_poisson_estimate) and, for shuffling,
/// a lower bound. Every row says its scheme.
void add_loader_rows(report::Report& rep, const DpSgdRun& run, AccountantChoice choice,
                     const std::vector<double>& targets, bool solve_delta,
                     std::future<std::vector<AccountantGuarantees>> estimate, std::ostream& err) {
  const bool recommended = !rep.results.empty() && rep.results.front().find("recommended");
  for (auto& row : rep.results)
    row.add("sampling", report::hoisted(report::text(sampling_name(run.sampling))));
  auto add_row = [&](Guarantee g, const char* scheme) {
    report::Record r = guarantee_record(g, solve_delta);
    r.add("sampling", report::hoisted(report::text(scheme)));
    if (recommended) add_recommended(r, false);
    details_last(r);
    collect_remarks(g, rep, err);
    rep.results.push_back(std::move(r));
  };
  if (run.sampling == Sampling::shuffle)
    for (Guarantee& g : shuffle_lower_rows(run, choice.options, targets, solve_delta, err))
      add_row(std::move(g), "shuffle");
  std::vector<AccountantGuarantees> estimates;
  try {
    estimates = estimate.get();
  } catch (const UnsupportedEvent& e) {  // one accountant, which has no Poisson analysis here
    err << "dpbudget: warning: no Poisson estimate: " << e.what() << '\n';
  }
  for (const auto& a : estimates) {
    if (a.unsupported) continue;  // not comparable: the run's own rows say why
    for (Guarantee g : a.guarantees) {
      g.bound = BoundKind::estimate;
      add_row(std::move(g), "poisson");
    }
  }
  for (auto& row : rep.results) details_last(row);
}

}  // namespace

int run_event_verb(const EventVerbFlags& f, bool solve_delta, std::ostream& out,
                   std::ostream& err) {
  auto loaded = load_run_for_accountants(f.spec, f.run, f.accountant, out, err);
  if (!loaded) return kOk;  // --print-spec
  RunEvent& run = loaded->run;
  const AccountantChoice& choice = loaded->choice;
  resolve(f.output);  // check --format and --precision before any work
  text_style(f.output);
  const char* targets_flag = solve_delta ? "--epsilon" : "--delta";
  if (f.targets.empty()) throw UsageError(std::string(targets_flag) + " is required");
  const auto targets = parse_list(targets_flag, f.targets, solve_delta ? kNonNegative : kOpenUnit);
  std::optional<double> budget;
  if (!f.max_epsilon.empty()) budget = parse_real("--max-epsilon", f.max_epsilon, kNonNegative);

  const bool loader = run.run && (run.run->sampling == Sampling::shuffle ||
                                  run.run->sampling == Sampling::balls_in_bins);
  std::future<std::vector<AccountantGuarantees>> estimate;
  if (loader) estimate = start_poisson_estimate(*run.run, choice, targets, solve_delta);
  auto rep = event_table(solve_delta ? "delta" : "epsilon", std::move(run.inputs), *run.event,
                         choice, targets, solve_delta, err);
  if (loader)
    add_loader_rows(rep, *run.run, choice, targets, solve_delta, std::move(estimate), err);
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
