// dpbudget ledger-init: a new ledger for one dataset's budget
// (docs/ledger.md): the budget (ε, δ), its unit and relation, whether
// releases are chosen adaptively (a filter decides) or planned in advance,
// and the store (an SQLite file, owner-only, never replaced).
#include <memory>

#include "accounting/errors.hpp"
#include "cli/errors.hpp"
#include "cli/flags/accountant_flags.hpp"
#include "cli/flags/flag_values.hpp"
#include "cli/flags/neighbouring_choices.hpp"
#include "cli/flags/output_flags.hpp"
#include "cli/flags/parse.hpp"
#include "cli/run/dataset_ledger.hpp"
#include "cli/verbs.hpp"
#include "report/number_format.hpp"

namespace dpb::cli {
namespace {

inline constexpr std::array<Choice<LedgerFilter>, 2> kFilterChoices{{
    {"renyi", LedgerFilter::renyi},
    {"gdp", LedgerFilter::gdp},
}};

/// --planned-accountants: names as --accountant takes them, the message
/// naming this flag.
std::vector<std::string> parse_accountants_flag(const std::vector<std::string>& texts) {
  try {
    return parse_accountants(texts);
  } catch (const UsageError& e) {
    std::string what = e.what();
    if (what.rfind("--accountant", 0) == 0) what.replace(0, 12, "--planned-accountants");
    throw UsageError(what);
  }
}

struct LedgerInitFlags {
  LedgerFileFlags file;
  std::vector<std::string> epsilon, delta, orders;
  std::string neighbouring = "add-remove";
  std::string unit = "record";
  bool planned = false;
  std::string filter;  ///< empty: renyi
  std::vector<std::string> accountant;
  std::string dataset, by;
  OutputFlags output;
};

int run_ledger_init(const LedgerInitFlags& f, std::ostream& out, std::ostream& err) {
  DatasetBudget budget;
  budget.epsilon = required_real("--epsilon", f.epsilon, kPositive);
  budget.delta = required_real("--delta", f.delta, kOpenUnit);
  budget.neighbouring = parse_choice("--neighbouring", f.neighbouring, kNeighbouringChoices);
  if (budget.neighbouring == Neighbouring::replace_special)
    throw UsageError(
        "--neighbouring: add-remove or replace-one (replace-special is a shuffled run's, "
        "not a dataset's budget)");
  const PrivacyUnit unit = parse_choice("--unit", f.unit, kPrivacyUnitChoices);
  budget.mode = f.planned ? LedgerMode::planned : LedgerMode::adaptive;
  if (f.planned && (!f.filter.empty() || !f.orders.empty()))
    throw UsageError(std::string(f.filter.empty() ? "--filter-orders" : "--filter") +
                     ": not with --planned (a planned ledger's releases are composed by its "
                     "--planned-accountants; a filter decides only an adaptive ledger)");
  budget.filter =
      f.filter.empty() ? LedgerFilter::renyi : parse_choice("--filter", f.filter, kFilterChoices);
  budget.orders.assign(std::begin(kDefaultFilterOrders), std::end(kDefaultFilterOrders));
  if (!f.orders.empty()) {
    if (budget.filter != LedgerFilter::renyi)
      throw UsageError(
          "--filter-orders: only with --filter renyi (the orders of the Renyi filter)");
    budget.orders = parse_list("--filter-orders", f.orders, kPositive);
  }
  try {
    check_dataset_budget(budget);
  } catch (const InvalidParameter& e) {
    if (e.field() == "orders") throw UsageError("--filter-orders: " + std::string(e.what() + 8));
    throw;
  }
  if (!f.planned && !f.accountant.empty())
    throw UsageError(
        "--planned-accountants: only with --planned (an adaptive ledger's filter decides; its "
        "planned total is asked with ledger-status --accountant)");
  const std::vector<std::string> accountants = f.accountant.empty()
                                                   ? std::vector<std::string>{"rdp", "pld"}
                                                   : parse_accountants_flag(f.accountant);
  check_output_flags(f.output);
  if (f.file.ledger.empty()) throw UsageError("--ledger is required (the file to create)");
  (void)check_ledger_address(f.file);
  const auto key = read_key(f.file);
  if (only_checking()) return kOk;

  const std::unique_ptr<store::LedgerStore> created = create_ledger(
      f.file, ledger_header(budget, unit, accountants, f.dataset, recorder(f.by)), key);
  report::Report rep;
  rep.command = "ledger-init";
  report::Record r;
  r.add("ledger", report::text(ledger_label(f.file)));
  r.add("epsilon", report::number(budget.epsilon));
  r.add("delta", report::number(budget.delta));
  r.add("unit", report::text(std::string(to_string(unit))));
  r.add("neighbouring", report::text(std::string(to_string(budget.neighbouring))));
  r.add("mode", report::text(std::string(to_string(budget.mode))));
  if (budget.mode == LedgerMode::adaptive) {
    r.add("filter", report::text(std::string(to_string(budget.filter))));
    if (budget.filter == LedgerFilter::renyi)
      r.add("filter_orders", report::numbers(budget.orders));
    else
      r.add("filter_mu", report::number(gdp_budget_mu(budget), report::Rounding::down));
  }
  std::string list;
  for (const auto& a : accountants) list += (list.empty() ? "" : ",") + a;
  if (budget.mode == LedgerMode::planned) r.add("planned_accountants", report::text(list));
  r.add("keyed", report::boolean(created->keyed()));
  r.add("head", report::text(created->header_hash()));
  rep.results.push_back(std::move(r));
  finish(rep, f.output, out, err);
  return kOk;
}

Verb declare_ledger_init(CLI::App& command) {
  auto f = std::make_shared<LedgerInitFlags>();
  CLI::App* cmd = &command;
  add_ledger_file_flags(*cmd, f->file);
  cmd->add_option("--epsilon", f->epsilon, "the dataset's budget: epsilon > 0");
  cmd->add_option("--delta", f->delta, "the dataset's budget: delta in (0, 1)");
  add_choice_option(*cmd, "--neighbouring", f->neighbouring, {"add-remove", "replace-one"},
                    "which datasets are neighbours under the budget (default add-remove); every "
                    "release is accounted under it");
  add_choice_option(*cmd, "--unit", f->unit, choice_names(kPrivacyUnitChoices),
                    "what the budget protects: one record (default) or one user with all their "
                    "records");
  cmd->add_flag("--planned", f->planned,
                "every release is fixed in advance (not chosen from what earlier ones showed): "
                "the gate composes them with the accountants; default: adaptive, a filter decides");
  add_choice_option(*cmd, "--filter", f->filter, choice_names(kFilterChoices),
                    "the filter of an adaptive ledger: renyi (any release with a Renyi curve; "
                    "default) | gdp (Gaussian releases only, tighter for them)");
  cmd->add_option("--filter-orders", f->orders,
                  "the Renyi filter's orders, each > 1, ascending (default "
                  "1.5,2,2.5,3,4,5,6,8,10,12,16,20,32,64)");
  cmd->add_option("--planned-accountants", f->accountant,
                  "the accountants of a planned ledger's gate, asked in this order until one "
                  "bounds the composition within the budget (default rdp,pld)");
  cmd->add_option("--dataset", f->dataset, "what the ledger is for, in words (kept in its header)");
  cmd->add_option("--by", f->by, "who creates it (default $DPBUDGET_USER, $USER)");
  add_output_flags(*cmd, f->output);
  return verb_of(cmd, f, run_ledger_init);
}

}  // namespace

extern const VerbDescriptor kLedgerInitVerb{
    "ledger-init",
    "a new ledger of one dataset's releases against one budget (epsilon, delta): SQLite, "
    "owner-only",
    {"dpbudget ledger-init --ledger census.ledger --epsilon 10 --delta 1e-6"},
    declare_ledger_init};

}  // namespace dpb::cli
