#include "cli/run/result_rows.hpp"

#include <algorithm>
#include <variant>

#include "accounting/errors.hpp"
#include "cli/errors.hpp"
#include "cli/flags/run_parameters.hpp"
#include "report/number_format.hpp"

namespace dpb::cli {

namespace {

/// The details a compact text row shows, in this order, under a short label;
/// every detail is in JSON, CSV and `--wide` under its own name. Real numbers
/// show `digits` significant digits rounded as `rounding` says; counts in full.
struct DetailSummary {
  const char* key;
  const char* label;
  int digits;
  report::Rounding rounding;
};
constexpr DetailSummary kDetailSummaries[] = {
    {"mu", "mu", 3, report::Rounding::up},
    {"epsilon_step", "eps_step", 3, report::Rounding::up},
    {"delta_step", "delta_step", 3, report::Rounding::up},
    {"pld_grid_size", "grid_size", 0, report::Rounding::nearest},
    {"pld_refinements", "grids_tried", 0, report::Rounding::nearest},
};

/// The short `details` cell of compact text: "order 17", "mu 0.254",
/// "eps_step 0.023, delta_step 6.81e-10", "grid_size 1417176, grids_tried 2".
std::string details_summary(const Guarantee& g, bool solved_delta) {
  std::string s;
  auto add = [&s](const std::string& label, const std::string& value) {
    s += (s.empty() ? "" : ", ") + label + " " + value;
  };
  if (g.order) add("order", report::format_number(*g.order, 6, report::Rounding::nearest));
  if (const auto& low = solved_delta ? g.delta_lower : g.epsilon_lower;
      low && g.lower_end == LowerEnd::accuracy)
    add("accuracy",
        report::format_number(std::max(0.0, (solved_delta ? g.delta : g.epsilon) - *low), 2,
                              report::Rounding::up));
  for (const auto& summary : kDetailSummaries)
    for (const auto& [key, value] : g.details) {
      if (key != summary.key) continue;
      add(summary.label, g.is_count(key)
                             ? std::to_string(static_cast<std::int64_t>(value))
                             : report::format_number(value, summary.digits, summary.rounding));
    }
  return s;
}

}  // namespace

report::Record guarantee_record(const Guarantee& g, bool solved_delta) {
  using report::Rounding;
  using report::Show;
  report::Record r;
  r.add("accountant", report::hoisted(report::text(g.accountant)));
  r.add("neighbouring", report::hoisted(report::text(std::string(to_string(g.neighbouring)))));
  report::Cell bound = report::hoisted(report::text(std::string(to_string(g.bound))));
  switch (g.bound) {
    case BoundKind::upper:
      // An interval [a, b] holds the run's true value (docs/errors.md#claims); one
      // whose lower end only bounds a dominating pair is shown as the upper
      // bound with its accuracy, and says so.
      if ((g.epsilon_lower || g.delta_lower) && g.lower_end == LowerEnd::accuracy)
        bound = report::with_footnote(
            std::move(bound),
            "accuracy: a sound upper bound, within this of the exact value of a pair that "
            "dominates the run (no lower bound on the run)");
      break;
    case BoundKind::approximate:
      bound = report::with_footnote(std::move(bound), "an approximation, not an upper bound");
      break;
    case BoundKind::lower:
      bound = report::with_footnote(std::move(bound),
                                    "a lower bound: the true loss of this run is at least this");
      break;
    case BoundKind::estimate:
      bound = report::with_footnote(
          std::move(bound),
          "the usual estimate, as if batches were Poisson-sampled at q = B/N: "
          "not a bound for this loader");
      break;
  }
  r.add("bound", std::move(bound));
  // The target is echoed (and may move above the table); the computed value
  // is rounded up (down for a lower bound), shown in compact text as
  // "[lower, upper]" for an interval.
  const Rounding computed = g.bound == BoundKind::lower ? Rounding::down : Rounding::up;
  // An interval's lower end is shown as one only when it bounds the run.
  const bool bounds_run = g.lower_end == LowerEnd::lower_bound;
  report::Cell delta = report::number(g.delta, solved_delta ? computed : Rounding::nearest);
  if (solved_delta && bounds_run) delta.lower = g.delta_lower;
  r.add("delta", solved_delta ? delta : report::hoisted(delta));
  if (g.delta_lower) {
    if (bounds_run)
      r.add("delta_lower",
            report::visible(report::number(*g.delta_lower, Rounding::down), Show::wide));
    r.add("delta_upper", report::visible(report::number(g.delta, Rounding::up), Show::wide));
  }
  report::Cell epsilon = report::number(g.epsilon, solved_delta ? Rounding::nearest : computed);
  if (!solved_delta && bounds_run) epsilon.lower = g.epsilon_lower;
  r.add("epsilon", solved_delta ? report::hoisted(epsilon) : epsilon);
  if (g.epsilon_lower) {
    if (bounds_run)
      r.add("epsilon_lower",
            report::visible(report::number(*g.epsilon_lower, Rounding::down), Show::wide));
    r.add("epsilon_upper", report::visible(report::number(g.epsilon, Rounding::up), Show::wide));
  }
  // The lower end of an interval whose pair only dominates the run is not a
  // bound on the run: only the accuracy of the upper end (docs/claims.md#accuracy), shown as
  // the interval's width and named so.
  if (const auto& low = solved_delta ? g.delta_lower : g.epsilon_lower; low) {
    r.add("lower_end",
          report::visible(report::text(std::string(to_string(g.lower_end))), Show::data));
    if (!bounds_run) {
      const double width = (solved_delta ? g.delta : g.epsilon) - *low;
      r.add(solved_delta ? "delta_accuracy" : "epsilon_accuracy",
            report::visible(report::number(std::max(0.0, width), Rounding::up), Show::wide));
    }
  }
  if (g.order) r.add("order", report::visible(report::number(*g.order), Show::wide));
  for (const auto& [key, value] : g.details)
    r.add(key, report::visible(g.is_count(key) ? report::integer(static_cast<std::int64_t>(value))
                                               : report::number(value),
                               Show::wide));
  if (auto summary = details_summary(g, solved_delta); !summary.empty())
    r.add("details", report::visible(report::text(std::move(summary)), Show::compact));
  return r;
}

std::string claim_words(BoundKind bound) {
  switch (bound) {
    case BoundKind::upper:
      return "upper bound";
    case BoundKind::approximate:
      return "approximation";
    case BoundKind::lower:
      return "lower bound";
    case BoundKind::estimate:
      return "estimate";
  }
  return "?";
}

void details_last(report::Record& record) {
  std::stable_partition(record.cells.begin(), record.cells.end(),
                        [](const auto& cell) { return cell.first != "details"; });
}

void add_recommended(report::Record& row, bool recommended) {
  row.add("recommended", report::visible(report::boolean(recommended), report::Show::data));
  if (!recommended) return;
  for (auto& [key, cell] : row.cells)
    if (key == "accountant") cell.footnote = "smallest sound upper bound: use this row";
}

void collect_remarks(const Guarantee& g, report::Report& rep, std::ostream& err) {
  auto add_once = [&](const std::string& note) {
    if (std::find(rep.footnotes.begin(), rep.footnotes.end(), note) == rep.footnotes.end()) {
      rep.footnotes.push_back(note);
      return true;
    }
    return false;
  };
  for (const auto& note : g.notes) add_once("note: " + note);
  if (const auto w = order_edge_warning(g))
    if (add_once("warning: " + *w)) err << "dpbudget: warning: " << *w << '\n';
}

namespace {

/// An ε past which a figure guarantees nothing anyone could use: e^100 ≈
/// 2.7e43 bounds the ratio of an attacker's likelihoods. The warning about
/// the order set then says so instead of suggesting wider orders.
constexpr double kMeaninglessEpsilon = 100;
/// The best order at the edge of the order set, at most this: a smaller order
/// can lower the figure only to about T times one step's KL divergence (order
/// 1), by a factor of about the order itself (docs/rdp.md#orders), so an
/// ε past kMeaninglessEpsilon stays past meaning.
constexpr double kNearOrderOne = 1.5;

}  // namespace

std::optional<std::string> order_edge_warning(const Guarantee& g) {
  if (!g.order_at_edge || !g.order) return std::nullopt;
  if (g.epsilon > kMeaninglessEpsilon && *g.order <= kNearOrderOne)
    // Another order moves such a figure by a modest factor, never into
    // meaning: say what it means instead.
    return "epsilon " + report::format_number(g.epsilon, 3, report::Rounding::up) +
           " is no meaningful guarantee (it lets an attacker's likelihood ratio reach e^epsilon; "
           "past " +
           report::format_number(kMeaninglessEpsilon, 3, report::Rounding::nearest) +
           " that exceeds 1e43): the run is far too long for its noise (check --steps, "
           "--epochs and the noise), and another Renyi order than " +
           report::format_number(*g.order, 6, report::Rounding::nearest) +
           " (--orders) would not change that";
  return "best Renyi order " + report::format_number(*g.order, 6, report::Rounding::nearest) +
         " is at the edge of the order set; widen --orders";
}

void add_answer_rows(report::Report& rep, const Question& question, const Answer& answer,
                     std::ostream& err) {
  for (const auto& why : answer.skipped) {
    rep.footnotes.push_back("warning: skipped " + why);
    err << "dpbudget: warning: skipped " << why << '\n';
  }
  for (const auto& w : answer.warnings) {
    rep.footnotes.push_back("warning: " + w);
    err << "dpbudget: warning: " << w << '\n';
  }
  for (const auto& note : answer.notes) {
    rep.footnotes.push_back("note: " + note);
    err << "dpbudget: note: " << note << '\n';
  }
  for (std::size_t i = 0; i < answer.rows.size(); ++i) {
    rep.results.push_back(answer_record(question, answer, i));
    collect_remarks(answer.rows[i].guarantee, rep, err);
  }
}

report::Record answer_record(const Question& question, const Answer& answer, std::size_t i) {
  const AnswerRow& row = answer.rows[i];
  const bool schemes = question.run && (question.run->sampling == Sampling::shuffle ||
                                        question.run->sampling == Sampling::balls_in_bins);
  report::Record r = guarantee_record(row.guarantee, question.solve_delta);
  if (schemes && row.sampling)
    r.add("sampling", report::hoisted(report::text(sampling_name(*row.sampling))));
  if (answer.several_accountants) add_recommended(r, row.recommended);
  details_last(r);
  return r;
}

report::Report answer_report(const std::string& command, report::Record inputs,
                             const Question& question, const Answer& answer, std::ostream& err) {
  report::Report rep;
  rep.command = command;
  rep.inputs = std::move(inputs);
  add_inputs(rep.inputs, question.accountants);
  add_answer_rows(rep, question, answer, err);
  return rep;
}

std::vector<BudgetLine> budget_lines(const Answer& answer, const BudgetCheck& check, double budget,
                                     const std::string& budget_name,
                                     const std::vector<std::string>& chosen) {
  using report::Rounding;
  std::vector<BudgetLine> out;
  if (check.status == BudgetStatus::no_upper_bound) {
    std::string names, would;
    for (const auto& n : chosen) names += (names.empty() ? "" : ", ") + n;
    for (const auto& n : check.would_bound) would += (would.empty() ? "" : ",") + n;
    out.push_back({std::nullopt,
                   names +
                       " gives no sound upper bound on epsilon for this run (an approximation or "
                       "an estimate neither passes nor fails " +
                       budget_name + "); " +
                       (would.empty() ? std::string("no other accountant here gives one")
                                      : "--accountant " + would + " would give one")});
  }
  for (std::size_t i : check.over_rows) {
    const Guarantee& g = answer.rows[i].guarantee;
    out.push_back({i, "(" + g.accountant + ", delta " +
                          report::format_number(g.delta, 6, Rounding::nearest) + "): epsilon " +
                          report::format_number(g.epsilon, 6, Rounding::up) + " > " + budget_name +
                          " " + report::format_number(budget, 6, Rounding::nearest)});
  }
  return out;
}

int budget_status(const BudgetCheck& check) {
  switch (check.status) {
    case BudgetStatus::within:
      return kOk;
    case BudgetStatus::over:
      return kBudgetExceeded;
    case BudgetStatus::no_upper_bound:
      return kNoUpperBound;
  }
  return kNoUpperBound;
}

int report_budget(const Answer& answer, const std::optional<BudgetCheck>& check, double budget,
                  const std::vector<std::string>& chosen, std::ostream& err) {
  if (!check) return kOk;
  for (const auto& line : budget_lines(answer, *check, budget, "--max-epsilon", chosen))
    if (line.row)
      err << "dpbudget: budget exceeded: row " << *line.row + 1 << " " << line.text << '\n';
    else
      err << "dpbudget: no sound upper bound to gate on: " << line.text << '\n';
  return budget_status(*check);
}

}  // namespace dpb::cli
