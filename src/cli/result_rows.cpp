#include "cli/result_rows.hpp"

#include <algorithm>
#include <variant>

#include "accounting/errors.hpp"
#include "report/number_format.hpp"

namespace dpb::cli {

report::Record guarantee_record(const Guarantee& g, bool solved_delta) {
  using report::Rounding;
  report::Record r;
  r.add("accountant", report::text(g.accountant));
  r.add("neighbouring", report::text(std::string(to_string(g.neighbouring))));
  report::Cell bound = report::text(std::string(to_string(g.bound)));
  if (g.bound == BoundKind::approximate)
    bound = report::with_footnote(std::move(bound), "an approximation, not an upper bound");
  r.add("bound", std::move(bound));
  r.add("delta", report::number(g.delta, solved_delta ? Rounding::up : Rounding::nearest));
  if (g.delta_lower) {
    r.add("delta_lower", report::number(*g.delta_lower, Rounding::down));
    r.add("delta_upper", report::number(g.delta, Rounding::up));
  }
  r.add("epsilon", report::number(g.epsilon, solved_delta ? Rounding::nearest : Rounding::up));
  if (g.epsilon_lower) {
    r.add("epsilon_lower", report::number(*g.epsilon_lower, Rounding::down));
    r.add("epsilon_upper", report::number(g.epsilon, Rounding::up));
  }
  if (g.order) r.add("order", report::number(*g.order));
  for (const auto& [key, value] : g.details) r.add(key, report::number(value));
  return r;
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
    auto accountant = make_accountant(name, choice.options);
    if (auto why = accountant->unsupported_reason(event)) {
      if (choice.names.size() == 1)
        throw UnsupportedEvent(what.empty() ? *why : what + ": " + *why);
      a.unsupported = *why;
    } else {
      accountant->compose(event);
      for (double target : targets)
        a.guarantees.push_back(solve_delta ? accountant->delta(target)
                                           : accountant->epsilon(target));
    }
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
    }
  }
  if (!any) throw UnsupportedEvent("no accountant supports this event");
  return rep;
}

std::optional<std::string> over_budget(const report::Record& row, double budget,
                                       const std::string& budget_name) {
  auto number = [&row](const char* key) {
    const auto* cell = row.find(key);
    return cell && std::holds_alternative<double>(cell->value) ? std::get<double>(cell->value)
                                                               : 0.0;
  };
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
