// dpbudget ledger-add: one release checked against what is left of the
// dataset's budget and recorded only if it fits
// (docs/ledger.md#why-the-gate-runs-before-the-release): in an adaptive ledger the filter decides,
// in a planned one the composition of every release. The check and the append are one transaction
// of the store.
#include <memory>

#include "accounting/errors.hpp"
#include "cli/errors.hpp"
#include "cli/flags/flag_values.hpp"
#include "cli/flags/output_flags.hpp"
#include "cli/input/spec_input.hpp"
#include "cli/run/dataset_ledger.hpp"
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
  SpecFlags spec;
  DpSgdFlags run;
  OutputFlags output;
};

std::string up6(double v) { return report::format_number(v, 6, report::Rounding::up); }

/// What the decision found, for the output.
struct Decision {
  bool admitted = false;
  std::optional<FilterState> before, after;
  std::optional<PlannedVerdict> planned;
  std::int64_t releases_before = 0;
};

void check_text(const char* flag, const std::string& text, std::size_t limit) {
  if (text.size() > limit)
    throw UsageError(std::string(flag) + ": at most " + std::to_string(limit) + " bytes");
  for (unsigned char c : text)
    if (c < 0x20 && c != '\n' && c != '\t')
      throw UsageError(std::string(flag) + ": control characters are not allowed");
}

Decision decide(const OpenLedger& ledger, const std::vector<store::Entry>& stored,
                const EventPtr& event, const Contribution& contribution) {
  Decision d;
  const auto entries = read_entries(stored);
  const auto in_force = releases_in_force(entries);
  d.releases_before = static_cast<std::int64_t>(in_force.size());
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

int run_ledger_add(const LedgerAddFlags& f, std::ostream& out, std::ostream& err) {
  if (f.name.empty())
    throw UsageError("--name is required (what the release is, e.g. run-2026-11)");
  check_text("--name", f.name, kMaxNameBytes);
  check_text("--note", f.note, kMaxNoteBytes);
  if (!f.spec.neighbouring.empty())
    throw UsageError(
        "--neighbouring: not with ledger-add (the ledger's relation is used for "
        "every release; it is set at ledger-init)");
  if (f.spec.print) throw UsageError("--print-spec: not with ledger-add (use 'dpbudget epsilon')");
  RunEvent release = load_run(f.spec, f.run);
  PrivacyUnit unit =
      release.run && release.run->records_per_user > 1 ? PrivacyUnit::user : PrivacyUnit::record;
  if (!f.unit.empty()) {
    const PrivacyUnit given = parse_choice("--unit", f.unit, kPrivacyUnitChoices);
    if (release.run && release.run->records_per_user > 1 && given == PrivacyUnit::record)
      throw UsageError("--unit: record, but --records-per-user accounts the run per user");
    unit = given;
  }
  check_output_flags(f.output);
  // The event as the ledger keeps it: its spec JSON, read back, so that what is
  // decided on is what `ledger-export` writes and `epsilon --spec` reads.
  const std::string event_json = event_to_json(*release.event).dump();
  const EventPtr event = event_from_json(nlohmann::ordered_json::parse(event_json));
  if (only_checking()) return kOk;

  OpenLedger ledger = open_ledger(f.file, !f.dry_run);
  const DatasetBudget& b = ledger.budget;
  if (unit != ledger.unit)
    throw UsageError("--unit: the release is accounted per " + std::string(to_string(unit)) +
                     "; this ledger's budget is per " + std::string(to_string(ledger.unit)) +
                     (ledger.unit == PrivacyUnit::user
                          ? " (give --records-per-user for a DP-SGD run, or --unit user for a "
                            "spec whose sensitivities are per user)"
                          : " (a per-user release also protects each record only when each "
                            "user has one)"));
  if (release.neighbouring && *release.neighbouring != b.neighbouring)
    throw UsageError("the release is analysed under " +
                     std::string(to_string(*release.neighbouring)) +
                     " (its --sampling); this "
                     "ledger's budget is under " +
                     std::string(to_string(b.neighbouring)));
  const Contribution contribution = contribution_of(*event, b);
  if (b.mode == LedgerMode::adaptive) {
    if (b.filter == LedgerFilter::renyi && (contribution.rdp.empty() || contribution.rdp_unusable))
      throw UnsupportedEvent("the Renyi filter cannot take this release: " +
                             contribution.rdp_unusable.value_or("no RDP curve") +
                             "; record it in a ledger created with --planned");
    if (b.filter == LedgerFilter::gdp && !contribution.mu)
      throw UnsupportedEvent("the Gaussian-DP filter takes only Gaussian mechanisms: " +
                             contribution.mu_unusable.value_or("no exact mu") +
                             "; use a ledger with --filter renyi");
  }
  store::NewEntry entry{
      "release", f.name, now_utc(), recorder(f.by), release_body(event_json, unit, contribution),
      f.note};

  Decision d;
  std::optional<store::Entry> recorded;
  try {
    if (f.dry_run) {
      d = decide(ledger, ledger.store->entries(), event, contribution);
    } else {
      recorded = ledger.store->append_if([&](const std::vector<store::Entry>& stored) {
        d = decide(ledger, stored, event, contribution);
        return d.admitted ? std::optional<store::NewEntry>(entry) : std::nullopt;
      });
    }
  } catch (const store::StoreError& e) {
    throw LedgerError(e.what());
  }

  report::Report rep;
  rep.command = "ledger-add";
  report::Record r;
  r.add("ledger", report::text(f.file.ledger));
  r.add("name", report::text(f.name));
  r.add("verdict", report::text(d.admitted ? (f.dry_run ? "fits" : "recorded") : "refused"));
  if (recorded) r.add("entry", report::integer(recorded->seq));
  r.add("mode", report::text(std::string(to_string(b.mode))));
  if (!contribution.rdp.empty() && !contribution.rdp_unusable)
    r.add("release_epsilon",
          report::number(curve_epsilon(b, contribution.rdp), report::Rounding::up));
  double needed = 0;
  if (d.after) {
    r.add("filter", report::text(std::string(to_string(b.filter))));
    r.add("filter_used_before", report::number(d.before->used, report::Rounding::up));
    r.add("filter_used_after", report::number(d.after->used, report::Rounding::up));
    needed = filter_needed_epsilon(b, *d.after);
    r.add("filter_needs_epsilon", report::number(needed, report::Rounding::up));
  }
  if (d.planned) {
    for (const Guarantee& g : d.planned->guarantees)
      r.add("planned_" + g.accountant,
            report::number(g.epsilon, g.bound == BoundKind::upper ? report::Rounding::up
                                                                  : report::Rounding::nearest));
  }
  r.add("budget_epsilon", report::number(b.epsilon));
  r.add("budget_delta", report::number(b.delta));
  if (recorded) r.add("head", report::text(recorded->hash));
  rep.results.push_back(std::move(r));
  finish(rep, f.output, out, err);
  if (d.admitted) return kOk;

  std::string why;
  if (d.after) {
    why = "the " + std::string(b.filter == LedgerFilter::renyi ? "Renyi" : "Gaussian-DP") +
          " filter (docs/ledger.md) would need epsilon " + up6(needed) + ", over the budget by " +
          up6(needed - b.epsilon);
  } else if (d.planned->smallest_upper) {
    why = "the planned total would be " + up6(*d.planned->smallest_upper) +
          " (smallest sound upper bound), over by " + up6(*d.planned->smallest_upper - b.epsilon);
  } else {
    std::string skipped;
    for (const auto& s : d.planned->skipped) skipped += "; " + s;
    err << "dpbudget: error: '" << report::escape_control(f.name)
        << "': no accountant of this ledger gives a sound upper bound for the planned total"
        << report::escape_control(skipped) << "; nothing recorded\n";
    return kNoUpperBound;
  }
  err << "dpbudget: '" << report::escape_control(f.name) << "' does not fit: epsilon " << b.epsilon
      << " at delta " << b.delta << ": " << why << (f.dry_run ? "" : "; nothing recorded") << '\n';
  return kBudgetExceeded;
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
                    "record); must be the ledger's");
  cmd->add_flag("--dry-run", f->dry_run, "say whether the release would fit, recording nothing");
  add_dp_sgd_flags(*cmd, f->run);
  add_spec_flags(*cmd, f->spec);
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
