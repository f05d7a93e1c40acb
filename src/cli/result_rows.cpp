#include "cli/result_rows.hpp"

#include <algorithm>
#include <variant>

#include "accounting/errors.hpp"
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
std::string details_summary(const Guarantee& g) {
  std::string s;
  auto add = [&s](const std::string& label, const std::string& value) {
    s += (s.empty() ? "" : ", ") + label + " " + value;
  };
  if (g.order) add("order", report::format_number(*g.order, 6, report::Rounding::nearest));
  for (const auto& summary : kDetailSummaries)
    for (const auto& [key, value] : g.details) {
      if (key != summary.key) continue;
      add(summary.label, g.is_count(key)
                             ? std::to_string(static_cast<std::int64_t>(value))
                             : report::format_number(value, summary.digits, summary.rounding));
    }
  return s;
}

/// An answer stated under another relation than the one asked for
/// (--neighbouring) is no answer: it is refused, never shown as if it held.
std::optional<std::string> other_relation(const DpEvent& event, const std::string& accountant,
                                          Neighbouring answered,
                                          std::optional<Neighbouring> asked) {
  if (!asked || answered == *asked) return std::nullopt;
  return accountant + ": " + event_name(event) + " has no analysis under " +
         std::string(to_string(*asked)) + " neighbouring here (only " +
         std::string(to_string(answered)) + ")";
}

/// What account() and attack_bounds_each() share: accountant `name` with
/// `event` composed is asked `answer(accountant)`, which returns the
/// relations its answers hold under. The reason it gives no answer (it cannot
/// handle the event, or answered under another relation than asked), or
/// nullopt; an accountant named alone without an answer is an error
/// (UnsupportedEvent, prefixed by `what` when not empty).
template <class Answer>
std::optional<std::string> answer_one(const DpEvent& event, const AccountantChoice& choice,
                                      const std::string& name, const std::string& what,
                                      Answer answer) {
  auto accountant = make_accountant(name, choice.options);
  std::optional<std::string> why = accountant->unsupported_reason(event);
  if (!why) {
    accountant->compose(event);
    for (Neighbouring n : answer(*accountant))
      if (!why) why = other_relation(event, name, n, choice.options.neighbouring);
  }
  if (why && choice.names.size() == 1)
    throw UnsupportedEvent(what.empty() ? *why : what + ": " + *why);
  return why;
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
  report::Cell delta = report::number(g.delta, solved_delta ? computed : Rounding::nearest);
  if (solved_delta) delta.lower = g.delta_lower;
  r.add("delta", solved_delta ? delta : report::hoisted(delta));
  if (g.delta_lower) {
    r.add("delta_lower",
          report::visible(report::number(*g.delta_lower, Rounding::down), Show::wide));
    r.add("delta_upper", report::visible(report::number(g.delta, Rounding::up), Show::wide));
  }
  report::Cell epsilon = report::number(g.epsilon, solved_delta ? Rounding::nearest : computed);
  if (!solved_delta) epsilon.lower = g.epsilon_lower;
  r.add("epsilon", solved_delta ? report::hoisted(epsilon) : epsilon);
  if (g.epsilon_lower) {
    r.add("epsilon_lower",
          report::visible(report::number(*g.epsilon_lower, Rounding::down), Show::wide));
    r.add("epsilon_upper", report::visible(report::number(g.epsilon, Rounding::up), Show::wide));
  }
  if (g.order) r.add("order", report::visible(report::number(*g.order), Show::wide));
  for (const auto& [key, value] : g.details)
    r.add(key, report::visible(g.is_count(key) ? report::integer(static_cast<std::int64_t>(value))
                                               : report::number(value),
                               Show::wide));
  if (auto summary = details_summary(g); !summary.empty())
    r.add("details", report::visible(report::text(std::move(summary)), Show::compact));
  return r;
}

void details_last(report::Record& record) {
  std::stable_partition(record.cells.begin(), record.cells.end(),
                        [](const auto& cell) { return cell.first != "details"; });
}

std::vector<bool> recommended_rows(const std::vector<Guarantee>& rows, bool solve_delta) {
  bool several = false;
  for (const auto& g : rows) several = several || g.accountant != rows.front().accountant;
  if (!several) return {};
  std::vector<bool> use(rows.size(), false);
  auto target = [&](const Guarantee& g) { return solve_delta ? g.epsilon : g.delta; };
  auto computed = [&](const Guarantee& g) { return solve_delta ? g.delta : g.epsilon; };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].bound != BoundKind::upper) continue;
    // The first sound row of its target that no other sound row beats.
    bool best = true;
    for (std::size_t j = 0; best && j < rows.size(); ++j) {
      if (j == i || rows[j].bound != BoundKind::upper || target(rows[j]) != target(rows[i]))
        continue;
      best = j < i ? computed(rows[j]) > computed(rows[i]) : computed(rows[j]) >= computed(rows[i]);
    }
    use[i] = best;
  }
  return use;
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
  if (g.order_at_edge && g.order) {
    const std::string w = "best Renyi order " +
                          report::format_number(*g.order, 6, report::Rounding::nearest) +
                          " is at the edge of the order set; widen --orders";
    if (add_once("warning: " + w)) err << "dpbudget: warning: " << w << '\n';
  }
}

std::vector<AccountantGuarantees> account(const DpEvent& event, const AccountantChoice& choice,
                                          const std::vector<double>& targets, bool solve_delta,
                                          const std::string& what) {
  std::vector<AccountantGuarantees> out;
  for (const auto& name : choice.names) {
    AccountantGuarantees a{name, std::nullopt, {}};
    a.unsupported = answer_one(event, choice, name, what, [&](const Accountant& accountant) {
      std::vector<Neighbouring> relations;
      for (double target : targets) {
        a.guarantees.push_back(solve_delta ? accountant.delta(target) : accountant.epsilon(target));
        relations.push_back(a.guarantees.back().neighbouring);
      }
      return relations;
    });
    if (a.unsupported) a.guarantees.clear();
    out.push_back(std::move(a));
  }
  return out;
}

std::vector<AccountantAttackBounds> attack_bounds_each(const DpEvent& event,
                                                       const AccountantChoice& choice,
                                                       std::span<const double> fprs) {
  std::vector<AccountantAttackBounds> out;
  for (const auto& name : choice.names) {
    AccountantAttackBounds a{name, std::nullopt, std::nullopt};
    a.unsupported = answer_one(event, choice, name, "", [&](const Accountant& accountant) {
      a.bounds = accountant.attack_bounds(fprs);
      return std::vector<Neighbouring>{a.bounds->neighbouring};
    });
    if (a.unsupported) a.bounds.reset();
    out.push_back(std::move(a));
  }
  return out;
}

report::Report event_table(const std::string& command, report::Record inputs, const DpEvent& event,
                           const AccountantChoice& choice, const std::vector<double>& targets,
                           bool solve_delta, std::ostream& err) {
  report::Report rep;
  rep.command = command;
  rep.inputs = std::move(inputs);
  add_inputs(rep.inputs, choice);
  bool any = false;
  std::vector<Guarantee> rows;
  for (const auto& a : account(event, choice, targets, solve_delta)) {
    if (a.unsupported) {
      rep.footnotes.push_back("warning: skipped " + *a.unsupported);
      err << "dpbudget: warning: skipped " << *a.unsupported << '\n';
      continue;
    }
    any = true;
    for (const auto& g : a.guarantees) {
      rep.results.push_back(guarantee_record(g, solve_delta));
      collect_remarks(g, rep, err);
      rows.push_back(g);
    }
  }
  if (!any) throw UnsupportedEvent("no accountant supports this event");
  const std::vector<bool> use = recommended_rows(rows, solve_delta);
  for (std::size_t i = 0; i < use.size(); ++i) add_recommended(rep.results[i], use[i]);
  return rep;
}

std::optional<std::string> over_budget(const report::Record& row, double budget,
                                       const std::string& budget_name) {
  auto number = [&row](const char* key) {
    const auto* cell = row.find(key);
    return cell && std::holds_alternative<double>(cell->value) ? std::get<double>(cell->value)
                                                               : 0.0;
  };
  // A lower bound or another scheme's estimate says nothing about the budget.
  if (const auto* bound = row.find("bound");
      bound && std::holds_alternative<std::string>(bound->value)) {
    const auto& kind = std::get<std::string>(bound->value);
    if (kind == to_string(BoundKind::lower) || kind == to_string(BoundKind::estimate))
      return std::nullopt;
  }
  const double epsilon = number("epsilon");
  if (epsilon <= budget) return std::nullopt;
  const auto* accountant = row.find("accountant");
  const std::string name = accountant && std::holds_alternative<std::string>(accountant->value)
                               ? std::get<std::string>(accountant->value)
                               : std::string();
  using report::Rounding;
  return "(" + name + ", delta " + report::format_number(number("delta"), 6, Rounding::nearest) +
         "): epsilon " + report::format_number(epsilon, 6, Rounding::up) + " > " + budget_name +
         " " + report::format_number(budget, 6, Rounding::nearest);
}

}  // namespace dpb::cli
