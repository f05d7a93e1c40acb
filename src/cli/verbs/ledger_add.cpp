// dpbudget ledger-add: one release checked against what is left of the
// dataset's budget and recorded only if it fits
// (docs/ledger.md#why-the-gate-runs-before-the-release): in an adaptive ledger
// the filter decides, in a planned one the composition of every release. The
// check and the append are one transaction of the store.
#include <memory>

#include "accounting/errors.hpp"
#include "accounting/rdp/rdp_accountant.hpp"
#include "cli/errors.hpp"
#include "cli/flags/choices.hpp"
#include "cli/flags/flag_values.hpp"
#include "cli/flags/output_flags.hpp"
#include "cli/input/schedule.hpp"
#include "cli/input/spec_input.hpp"
#include "cli/run/dataset_ledger.hpp"
#include "cli/run/result_rows.hpp"
#include "cli/verbs.hpp"
#include "report/number_format.hpp"

namespace dpb::cli {
namespace {

/// A name longer than this is refused: it is a label in tables, not a note.
constexpr std::size_t kMaxNameBytes = 200;
/// Free text longer than this is refused: the place for a document is elsewhere.
constexpr std::size_t kMaxNoteBytes = 10000;

struct LedgerAddFlags {
  LedgerFileFlags file;
  std::string name, note, by, unit;
  bool dry_run = false;
  SpecFlags spec;  ///< only --spec and --schedule are declared
  DpSgdFlags run;
  OutputFlags output;
};

using report::Rounding;

std::string up6(double v) { return report::format_number(v, 6, Rounding::up); }

/// What the decision found, for the output.
struct Decision {
  bool admitted = false;
  std::optional<FilterState> before, after;
  std::optional<PlannedVerdict> planned;
};

/// The release as the ledger will keep it, and what it contributes.
struct Release {
  std::string event_json;  ///< compact spec JSON
  EventPtr event;          ///< read back from event_json
  PrivacyUnit unit = PrivacyUnit::record;
  std::optional<Neighbouring> relation;  ///< the relation its flags fix, if any
};

void check_text(const char* flag, const std::string& text, std::size_t limit) {
  if (text.size() > limit)
    throw UsageError(std::string(flag) + ": at most " + std::to_string(limit) + " bytes");
  for (unsigned char c : text)
    if (c < 0x20 && c != '\n' && c != '\t')
      throw UsageError(std::string(flag) + ": control characters are not allowed");
}

/// The release from the DP-SGD flags, --spec or --schedule, and its unit:
/// per user with --records-per-user above 1 (or --unit user), else per record.
Release load_release(const LedgerAddFlags& f) {
  const RunEvent loaded = load_run(f.spec, f.run);
  Release r;
  const bool per_user = loaded.run && loaded.run->records_per_user > 1;
  r.unit = per_user ? PrivacyUnit::user : PrivacyUnit::record;
  if (!f.unit.empty()) {
    const PrivacyUnit given = parse_choice("--unit", f.unit, kPrivacyUnitChoices);
    if (per_user && given == PrivacyUnit::record)
      throw UsageError("--unit: record, but --records-per-user accounts the run per user");
    r.unit = given;
  }
  r.relation = loaded.neighbouring;
  // The event as the ledger keeps it: its spec JSON, read back, so that what is
  // decided on is what `ledger-export` writes and `epsilon --spec` reads.
  r.event_json = event_to_json(*loaded.event).dump();
  r.event = event_from_json(nlohmann::ordered_json::parse(r.event_json));
  return r;
}

std::string comma_list(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

/// Refuses a release of another unit or relation than the ledger's, or one
/// its filter cannot take (docs/ledger.md#unit-and-relation).
void check_release_fits_ledger(const OpenLedger& ledger, const Release& r, const Contribution& c) {
  const DatasetBudget& b = ledger.budget;
  // A per-user guarantee covers any change of one user's records, one record
  // among them; a per-record one says nothing of a user with several.
  if (ledger.unit == PrivacyUnit::user && r.unit == PrivacyUnit::record)
    throw UsageError(
        "--unit: the release is accounted per record; this ledger's budget is per user (give "
        "--records-per-user for a DP-SGD run, or --unit user for a spec whose sensitivities are "
        "per user)");
  if (r.relation && *r.relation != b.neighbouring)
    throw UsageError("the release is analysed under " + std::string(to_string(*r.relation)) +
                     " (its --sampling); this ledger's budget is under " +
                     std::string(to_string(b.neighbouring)));
  if (b.mode != LedgerMode::adaptive) return;
  if (b.filter == LedgerFilter::renyi && (c.rdp.empty() || c.rdp_unusable)) {
    const auto bound = accountants_that_bound(*r.event, b, {});
    throw UnsupportedEvent(
        "the Renyi filter cannot take this release: " + c.rdp_unusable.value_or("no RDP curve") +
        (bound.empty() ? "; no accountant bounds it under " + std::string(to_string(b.neighbouring))
                       : std::string("; record it in a ledger created with --planned, whose ") +
                             (bound.size() == 1 ? "accountant " : "accountants ") +
                             comma_list(bound) + (bound.size() == 1 ? " bounds it" : " bound it")));
  }
  if (b.filter == LedgerFilter::gdp && !c.mu)
    throw UnsupportedEvent("the Gaussian-DP filter takes only Gaussian mechanisms: " +
                           c.mu_unusable.value_or("no exact mu") +
                           "; use a ledger with --filter renyi");
}

Decision decide(const OpenLedger& ledger, const std::vector<store::Entry>& stored,
                const EventPtr& event, const Contribution& contribution) {
  Decision d;
  const auto entries = read_entries(stored);
  const auto in_force = releases_in_force(entries);
  const DatasetBudget& b = ledger.budget;
  if (b.mode == LedgerMode::adaptive) {
    d.before = filter_state(b, contributions(in_force));
    d.after = filter_add(b, *d.before, contribution);
    d.admitted = d.after->within;
  } else {
    std::vector<EventPtr> events;
    for (const auto* r : in_force) events.push_back(r->event);
    events.push_back(event);
    d.planned = planned_gate(compose_releases(events), b, ledger.accountants, AccountantOptions{});
    d.admitted = d.planned->admitted;
  }
  return d;
}

/// The release's own ε as `dpbudget epsilon --accountant rdp` states it
/// under the ledger's relation, when rdp bounds it.
std::optional<double> own_epsilon(const DatasetBudget& b, const DpEvent& event) {
  AccountantOptions options;
  options.neighbouring = b.neighbouring;
  RdpAccountant rdp(options);
  if (rdp.unsupported_reason(event)) return std::nullopt;
  try {
    rdp.compose(event);
  } catch (const UnsupportedEvent&) {
    return std::nullopt;
  }
  const Guarantee g = rdp.epsilon(b.delta);
  return g.neighbouring == b.neighbouring ? std::optional<double>(g.epsilon) : std::nullopt;
}

report::Record add_record(const LedgerAddFlags& f, const OpenLedger& ledger, const Decision& d,
                          const std::optional<store::Entry>& recorded, std::optional<double> own) {
  const DatasetBudget& b = ledger.budget;
  report::Record r;
  r.add("ledger", report::text(ledger_label(f.file)));
  r.add("name", report::text(f.name));
  r.add("verdict", report::text(d.admitted ? (f.dry_run ? "fits" : "recorded") : "refused"));
  r.add("dry_run", report::visible(report::boolean(f.dry_run), report::Show::data));
  if (recorded) r.add("entry", report::integer(recorded->seq));
  r.add("mode", report::text(std::string(to_string(b.mode))));
  if (own) r.add("release_epsilon_rdp", report::number(*own, Rounding::up));
  if (d.after) {
    r.add("filter", report::text(std::string(to_string(b.filter))));
    r.add("filter_used_before", report::number(d.before->used, Rounding::up));
    r.add("filter_used_after", report::number(d.after->used, Rounding::up));
    r.add("filter_needs_epsilon", report::number(filter_needed_epsilon(b, *d.after), Rounding::up));
  }
  if (d.planned)  // the sound upper bounds only: an approximation decides nothing
    for (const Guarantee& g : d.planned->guarantees)
      if (g.bound == BoundKind::upper)
        r.add("planned_" + g.accountant, report::number(g.epsilon, Rounding::up));
  r.add("budget_epsilon", report::number(b.epsilon));
  r.add("budget_delta", report::number(b.delta));
  if (recorded) r.add("head", report::text(recorded->hash));
  return r;
}

/// The one stderr line of a release that does not fit, and its exit status.
int refusal(const LedgerAddFlags& f, const OpenLedger& ledger, const DpEvent& release,
            const Decision& d, std::ostream& err) {
  const DatasetBudget& b = ledger.budget;
  const std::string name = report::escape_control(f.name);
  std::string why;
  if (d.after) {
    const double needed = filter_needed_epsilon(b, *d.after);
    why = "the " + std::string(b.filter == LedgerFilter::renyi ? "Renyi" : "Gaussian-DP") +
          " filter (docs/ledger.md) would need epsilon " + up6(needed) + ", over the budget by " +
          up6(needed - b.epsilon);
  } else if (d.planned->smallest_upper) {
    why = "the planned total would be " + up6(*d.planned->smallest_upper) +
          " (smallest sound upper bound), over by " + up6(*d.planned->smallest_upper - b.epsilon);
  } else {
    std::string reasons;
    for (const auto& s : d.planned->skipped) reasons += "; " + s;
    for (const auto& g : d.planned->guarantees)
      reasons += "; " + g.accountant + " gives only an " + claim_words(g.bound);
    const auto others = accountants_that_bound(release, b, ledger.accountants);
    if (!others.empty())
      reasons += "; accountants that would bound this release: " + comma_list(others) +
                 " (a ledger created with --planned-accountants naming them)";
    err << "dpbudget: error: '" << name
        << "': no accountant of this ledger gives a sound upper bound for the planned total"
        << report::escape_control(reasons) << "; nothing recorded\n";
    return kNoUpperBound;
  }
  err << "dpbudget: '" << name << "' does not fit the budget (epsilon " << b.epsilon << ", delta "
      << b.delta << "): " << why << (f.dry_run ? "" : "; nothing recorded") << '\n';
  return kBudgetExceeded;
}

int run_ledger_add(const LedgerAddFlags& f, std::ostream& out, std::ostream& err) {
  if (f.name.empty())
    throw UsageError("--name is required (what the release is, e.g. run-2026-11)");
  check_text("--name", f.name, kMaxNameBytes);
  check_text("--note", f.note, kMaxNoteBytes);
  const Release release = load_release(f);
  check_output_flags(f.output);
  if (only_checking()) return kOk;

  const OpenLedger ledger = open_ledger(f.file, !f.dry_run, &err);
  const DatasetBudget& b = ledger.budget;
  const Contribution contribution = contribution_of(*release.event, b);
  check_release_fits_ledger(ledger, release, contribution);
  const store::NewEntry entry{"release",
                              f.name,
                              now_utc(),
                              recorder(f.by),
                              release_body(release.event_json, release.unit, contribution),
                              f.note};
  Decision d;
  std::optional<store::Entry> recorded;
  try {
    if (f.dry_run) {
      d = decide(ledger, checked_entries(ledger), release.event, contribution);
    } else {
      recorded = ledger.store->append_if([&](const std::vector<store::Entry>& stored) {
        check_chain(ledger, stored);
        d = decide(ledger, stored, release.event, contribution);
        return d.admitted ? std::optional<store::NewEntry>(entry) : std::nullopt;
      });
    }
  } catch (const store::StoreError& e) {
    throw_ledger_error(e);
  }
  report::Report rep;
  rep.command = "ledger-add";
  rep.results.push_back(add_record(f, ledger, d, recorded, own_epsilon(b, *release.event)));
  finish(rep, f.output, out, err);
  return d.admitted ? kOk : refusal(f, ledger, *release.event, d, err);
}

Verb declare_ledger_add(CLI::App& command) {
  auto f = std::make_shared<LedgerAddFlags>();
  CLI::App* cmd = &command;
  add_ledger_file_flags(*cmd, f->file);
  cmd->add_option("--name", f->name, "what the release is (a label in history and status)");
  cmd->add_option("--note", f->note, "free text kept with the entry");
  cmd->add_option("--by", f->by, "who records it (default $DPBUDGET_USER, $USER)");
  add_choice_option(*cmd, "--unit", f->unit, choice_names(kPrivacyUnitChoices),
                    "what the release protects (default: user with --records-per-user, else "
                    "record); a per-record release is refused by a per-user ledger");
  cmd->add_flag("--dry-run", f->dry_run, "say whether the release would fit, recording nothing");
  add_dp_sgd_flags(*cmd, f->run);
  record_file(cmd->add_option("--spec", f->spec.file,
                              "JSON file ('-' for stdin): the release as a composition of events "
                              "(every kind of 'dpbudget events') instead of the DP-SGD flags"));
  add_schedule_flag(*cmd, f->spec.schedule);
  add_output_flags(*cmd, f->output);
  return verb_of(cmd, f, run_ledger_add);
}

}  // namespace

extern const VerbDescriptor kLedgerAddVerb{
    "ledger-add",
    "record a release (DP-SGD flags, --spec or --schedule) if it fits what is left of the "
    "ledger's budget; exit 1 and nothing recorded if not",
    {"dpbudget ledger-add --ledger census.ledger --name run-1 -q 0.01 --sigma 1.1 --steps 10000"},
    declare_ledger_add};

}  // namespace dpb::cli
