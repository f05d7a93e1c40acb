// dpbudget ledger-status: what a dataset has spent and what is left
// (docs/ledger.md#status). The adaptive guarantee (the filter's: the ledger's
// budget holds whatever is released through ledger-add, chosen adaptively or
// not) and beside it the planned total by each accountant (valid only if no
// release was chosen from what earlier ones showed; a planned ledger's
// guarantee); with --next-spec, what is left for a next release with one
// value marked {"solve": true}: the largest count or the smallest noise.
#include <algorithm>
#include <memory>

#include "accounting/errors.hpp"
#include "cli/errors.hpp"
#include "cli/flags/accountant_flags.hpp"
#include "cli/flags/flag_values.hpp"
#include "cli/flags/output_flags.hpp"
#include "cli/flags/run_parameters.hpp"
#include "cli/input/spec_input.hpp"
#include "cli/run/dataset_ledger.hpp"
#include "cli/run/ledger.hpp"
#include "cli/run/result_rows.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {
namespace {

struct LedgerStatusFlags {
  LedgerFileFlags file;
  AccountantFlags accountant;
  std::string next_spec;
  DpSgdFlags run;  ///< a next DP-SGD run with --steps or --sigma left out
  OutputFlags output;
};

/// A next release with one value to solve (docs/ledger.md#whats-left).
struct NextRelease {
  LedgerOf event_of;
  RunUnknown unknown = RunUnknown::steps;
  std::string field;  ///< the column of the value: count, noise_multiplier, scale, steps
  std::string where;  ///< what is solved, in words: a JSON pointer or a flag
  /// A next DP-SGD run's unit and the relation its sampling fixes (as
  /// ledger-add reads them), checked against the ledger's; unset for a spec.
  std::optional<PrivacyUnit> unit;
  std::optional<Neighbouring> relation;
};

bool any_run_flag(const DpSgdFlags& run) {
  for (const auto& p : kRunParameters)
    if (given(run, p.id)) return true;
  return false;
}

/// --next-spec with one value marked, or the DP-SGD flags with --steps (the
/// largest count) or --sigma (the smallest noise) left out; nullopt: neither.
std::optional<NextRelease> next_release(const LedgerStatusFlags& f) {
  if (!f.next_spec.empty()) {
    refuse_run_flags(f.run, "--next-spec", "the spec file describes the next release");
    MarkedLedger marked;
    try {
      marked = parse_marked_ledger(read_spec_text(f.next_spec));
    } catch (const SpecError& e) {
      throw UsageError(std::string("--next-spec: ") + e.what());
    }
    if (marked.marks.size() != 1)
      throw UsageError("--next-spec: mark exactly one value {\"solve\": true} (found " +
                       std::to_string(marked.marks.size()) + ")");
    const LedgerMark mark = marked.marks.front();
    return NextRelease{marked_event(marked, 0),
                       mark.unknown,
                       std::string(mark.field),
                       mark.pointer,
                       std::nullopt,
                       std::nullopt};
  }
  if (!any_run_flag(f.run)) return std::nullopt;
  const bool steps = given(f.run, RunParam::steps) || given(f.run, RunParam::epochs);
  const bool sigma =
      given(f.run, RunParam::noise_multiplier) || given(f.run, RunParam::group_noise_multipliers);
  if (steps == sigma)
    throw UsageError(
        std::string(steps ? "--steps and --sigma: leave one out" : "--steps or --sigma is needed") +
        " (a next run's largest number of steps, or its smallest noise multiplier, "
        "is what is left)");
  if (given(f.run, RunParam::clipping_count_noise))
    throw UsageError(
        "--clipping-count-noise: not with a next run to solve (its combined noise "
        "multiplier is not solved here)");
  const Unknown unknown = steps ? Unknown::noise_multiplier : Unknown::steps;
  const DpSgdRun base = derive(single_values(f.run), unknown);
  LedgerOf event_of = [base, unknown](double v) {
    DpSgdRun r = base;
    if (unknown == Unknown::steps)
      r.steps = static_cast<std::int64_t>(v);
    else
      r.noise_multiplier = v;
    return dp_sgd_event(r);
  };
  return NextRelease{std::move(event_of),
                     unknown,
                     unknown == Unknown::steps ? "steps" : "sigma",
                     unknown == Unknown::steps ? "--steps" : "--sigma",
                     base.records_per_user > 1 ? PrivacyUnit::user : PrivacyUnit::record,
                     run_neighbouring(base)};
}

using report::Rounding;

report::Record filter_row(const DatasetBudget& b, const FilterState& s, std::size_t releases) {
  report::Record r;
  r.add("basis", report::text("adaptive"));
  r.add("accountant", report::text(std::string(to_string(b.filter)) + "_filter"));
  r.add("bound", report::text("upper"));
  r.add("epsilon", report::number(b.epsilon));
  r.add("releases", report::integer(static_cast<std::int64_t>(releases)));
  r.add("filter_used", report::number(s.used, Rounding::up));
  if (s.order) r.add("order", report::number(*s.order));
  r.add("filter_needs_epsilon", report::number(filter_needed_epsilon(b, s), Rounding::up));
  return r;
}

/// The next release with its mark, solved under the filter (adaptive) and
/// under each planned accountant.
void add_left_rows(report::Report& rep, const OpenLedger& ledger, const FilterState* state,
                   const std::vector<const LedgerEntry*>& in_force, const AccountantChoice& choice,
                   const NextRelease& mark) {
  const LedgerOf& next = mark.event_of;
  const DatasetBudget& b = ledger.budget;
  const CalibrationSettings settings;
  const auto value_cell = [&](double v) {
    return mark.unknown == RunUnknown::steps ? report::integer(static_cast<std::int64_t>(v))
                                             : report::number(v, Rounding::up);
  };
  const auto row = [&](const std::string& basis, const std::string& method) {
    report::Record r;
    r.add("basis", report::text(basis));
    r.add("accountant", report::text(method));
    r.add("solved", report::text(mark.where));
    return r;
  };
  if (state) {
    report::Record r = row("left_adaptive", std::string(to_string(b.filter)) + "_filter");
    try {
      r.add(std::string(mark.field),
            value_cell(filter_solve(b, *state, next, mark.unknown, settings)));
    } catch (const NoSolution& e) {
      r.add("note", report::text(std::string("no solution: ") + e.what()));
    }
    rep.results.push_back(std::move(r));
  }
  std::vector<EventPtr> recorded;
  for (const auto* e : in_force) recorded.push_back(e->event);
  const LedgerOf all = [&](double v) {
    std::vector<EventPtr> events = recorded;
    events.push_back(next(v));
    return compose_releases(events);
  };
  for (const auto& name : choice.names) {
    report::Record r = row("left_planned", name);
    try {
      const CalibratedLedger solved =
          calibrate_ledger(all, mark.unknown, name, choice.options, b.epsilon,
                           RunTarget{Measure::epsilon, b.delta, 0}, settings);
      r.add(std::string(mark.field), value_cell(solved.value));
      r.add("epsilon", report::number(solved.guarantee.epsilon, Rounding::up));
      r.add("bound", report::text(std::string(to_string(solved.guarantee.bound))));
    } catch (const NoSolution& e) {
      r.add("note", report::text(std::string("no solution: ") + e.what()));
    } catch (const UnsupportedEvent& e) {
      r.add("note", report::text(std::string("not supported: ") + e.what()));
    }
    rep.results.push_back(std::move(r));
  }
}

int run_ledger_status(const LedgerStatusFlags& f, std::ostream& out, std::ostream& err) {
  AccountantChoice choice = resolve(f.accountant);
  const std::optional<NextRelease> next = next_release(f);
  check_output_flags(f.output);
  if (only_checking()) return kOk;
  const ReadLedger read = read_ledger(f.file);
  const OpenLedger& ledger = read.ledger;
  const DatasetBudget& b = ledger.budget;
  const std::vector<store::Entry>& stored = read.stored;
  const std::vector<LedgerEntry>& entries = read.entries;
  const auto in_force = releases_in_force(entries);
  choice.options.neighbouring = b.neighbouring;
  // A next run ledger-add would refuse has nothing left to solve: the same
  // refusals (docs/ledger.md#unit-and-relation).
  if (next && next->unit == PrivacyUnit::record && ledger.unit == PrivacyUnit::user)
    throw UsageError(
        "--records-per-user: the next run is accounted per record; this ledger's budget is per "
        "user");
  if (next && next->relation && *next->relation != b.neighbouring)
    throw UsageError("the next run is analysed under " + std::string(to_string(*next->relation)) +
                     " (its --sampling); this ledger's budget is under " +
                     std::string(to_string(b.neighbouring)));

  report::Report rep;
  rep.command = "ledger-status";
  rep.inputs.add("ledger", report::text(ledger_label(f.file)));
  rep.inputs.add("budget_epsilon", report::number(b.epsilon));
  rep.inputs.add("budget_delta", report::number(b.delta));
  rep.inputs.add("unit", report::text(std::string(to_string(ledger.unit))));
  rep.inputs.add("mode", report::text(std::string(to_string(b.mode))));
  rep.inputs.add("entries", report::integer(static_cast<std::int64_t>(entries.size())));
  rep.inputs.add("releases", report::integer(static_cast<std::int64_t>(in_force.size())));
  rep.inputs.add("head",
                 report::text(stored.empty() ? ledger.store->header_hash() : stored.back().hash));

  std::optional<FilterState> state;
  if (b.mode == LedgerMode::adaptive) {
    state = filter_state(b, contributions(in_force));
    rep.results.push_back(filter_row(b, *state, in_force.size()));
    note(rep, "adaptive: the " + std::string(to_string(b.filter)) +
                  " filter keeps every release recorded through ledger-add, chosen adaptively "
                  "or not, within (epsilon, delta) = (" +
                  shown(b.epsilon) + ", " + shown(b.delta) +
                  ") (docs/ledger.md#filters); filter_used is the share of it spent" +
                  (b.filter == LedgerFilter::renyi ? " at the order with most room"
                                                   : ": the sum of mu^2 over the budget's"));
  }
  // The planned total: the question `epsilon --spec` asks of ledger-export's
  // spec, pld's interval as fine as the budget needs unless --pld-tolerance
  // says otherwise (docs/ledger.md#planned-precision).
  const EventPtr all = planned_event(in_force);
  const bool pld = std::find(choice.names.begin(), choice.names.end(), "pld") != choice.names.end();
  if (!f.accountant.settings.count("--pld-tolerance")) use_ledger_pld_tolerance(choice, b, *all);
  if (pld) rep.inputs.add("pld_tolerance", report::number(choice.options.pld.tolerance));
  Question q;
  q.event = all;
  q.accountants = choice;
  q.targets = {b.delta};
  const Answer answer = dpb::answer(q);
  for (std::size_t i = 0; i < answer.rows.size(); ++i) {
    report::Record r = answer_record(q, answer, i);
    r.cells.insert(r.cells.begin(), {"basis", report::text("planned")});
    rep.results.push_back(std::move(r));
    collect_remarks(answer.rows[i].guarantee, rep, err);
  }
  for (const auto& s : answer.skipped) note(rep, "skipped " + s);
  note(rep, b.mode == LedgerMode::planned
                ? "planned: this ledger's releases are fixed in advance; the planned total is "
                  "its guarantee"
                : "planned: the total if every release was fixed in advance (not valid for "
                  "releases chosen from what earlier ones showed; then the filter's holds)");
  if (next) add_left_rows(rep, ledger, state ? &*state : nullptr, in_force, choice, *next);
  finish(rep, f.output, out, err);
  return kOk;
}

Verb declare_ledger_status(CLI::App& command) {
  auto f = std::make_shared<LedgerStatusFlags>();
  CLI::App* cmd = &command;
  add_ledger_file_flags(*cmd, f->file);
  add_accountant_flags(*cmd, f->accountant);
  record_file(cmd->add_option(
      "--next-spec", f->next_spec,
      "a next release as a spec with one value {\"solve\": true} (a count, a noise multiplier or "
      "a scale): what is left, as its largest count or smallest noise"));
  add_dp_sgd_flags(*cmd, f->run);
  add_output_flags(*cmd, f->output);
  return verb_of(cmd, f, run_ledger_status);
}

}  // namespace

extern const VerbDescriptor kLedgerStatusVerb{
    "ledger-status",
    "what a ledger's dataset has spent: the filter's adaptive guarantee, the planned total by "
    "each accountant, and what is left for a next release (--next-spec)",
    {"dpbudget ledger-status --ledger census.ledger --accountant rdp,pld",
     "dpbudget ledger-status --ledger census.ledger -q 0.01 --sigma 1.1"},
    declare_ledger_status};

}  // namespace dpb::cli
