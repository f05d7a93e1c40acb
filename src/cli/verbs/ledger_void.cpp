// dpbudget ledger-void: an entry recorded in error made void by a later
// entry with its reason (docs/ledger.md#void); both stay in the history. A
// void says the release never ran: a release that ran has spent its privacy.
#include <memory>

#include "cli/errors.hpp"
#include "cli/flags/flag_values.hpp"
#include "cli/flags/output_flags.hpp"
#include "cli/flags/parse.hpp"
#include "cli/run/dataset_ledger.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {
namespace {

struct LedgerVoidFlags {
  LedgerFileFlags file;
  std::vector<std::string> entry;
  std::string reason, by;
  OutputFlags output;
};

int run_ledger_void(const LedgerVoidFlags& f, std::ostream& out, std::ostream& err) {
  if (f.entry.empty()) throw UsageError("--entry is required (the number of the entry to void)");
  if (f.entry.size() > 1) throw UsageError("--entry: one entry at a time");
  const std::int64_t target = parse_integer("--entry", f.entry.front(), 1);
  if (f.reason.empty()) throw UsageError("--reason is required (why the entry is void)");
  check_output_flags(f.output);
  if (only_checking()) return kOk;
  OpenLedger ledger = open_ledger(f.file, true, &err);
  std::optional<store::Entry> recorded;
  std::string name;
  try {
    recorded = ledger.store->append_if([&](const std::vector<store::Entry>& stored) {
      check_chain(ledger, stored);
      const auto entries = read_entries(stored);
      for (const auto& e : entries) {
        if (e.stored.seq != target) continue;
        if (e.is_void)
          throw UsageError("--entry: entry " + std::to_string(target) + " is itself a void");
        if (e.voided_by)
          throw UsageError("--entry: entry " + std::to_string(target) + " is already void (entry " +
                           std::to_string(*e.voided_by) + ")");
        name = e.stored.content.name;
        return std::optional<store::NewEntry>(store::NewEntry{
            "void", "void " + name, now_utc(), recorder(f.by), void_body(target, f.reason), ""});
      }
      throw UsageError("--entry: the ledger has no entry " + std::to_string(target) + " (it has " +
                       std::to_string(entries.size()) + ")");
    });
  } catch (const store::StoreError& e) {
    throw_ledger_error(e);
  }
  report::Report rep;
  rep.command = "ledger-void";
  report::Record r;
  r.add("ledger", report::text(ledger_label(f.file)));
  r.add("entry", report::integer(recorded->seq));
  r.add("voids", report::integer(target));
  r.add("name", report::text(name));
  r.add("reason", report::text(f.reason));
  r.add("head", report::text(recorded->hash));
  rep.results.push_back(std::move(r));
  finish(rep, f.output, out, err);
  return kOk;
}

Verb declare_ledger_void(CLI::App& command) {
  auto f = std::make_shared<LedgerVoidFlags>();
  add_ledger_file_flags(command, f->file);
  command.add_option("--entry", f->entry, "the number of the entry to void (see ledger-history)");
  command.add_option("--reason", f->reason, "why: kept in the history beside the entry");
  command.add_option("--by", f->by, "who voids it (default $DPBUDGET_USER, $USER)");
  add_output_flags(command, f->output);
  return verb_of(&command, f, run_ledger_void);
}

}  // namespace

extern const VerbDescriptor kLedgerVoidVerb{
    "ledger-void",
    "void an entry recorded in error (a release that never ran), with a reason; both stay in the "
    "history",
    {"dpbudget ledger-void --ledger census.ledger --entry 3 --reason aborted-before-training"},
    declare_ledger_void};

}  // namespace dpb::cli
