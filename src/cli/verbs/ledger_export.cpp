// dpbudget ledger-export: the releases in force as one spec file, which
// `dpbudget epsilon --spec FILE --neighbouring <the ledger's>` totals to the
// planned figures of ledger-status (the same event, the same question).
#include <memory>

#include "cli/errors.hpp"
#include "cli/flags/output_flags.hpp"
#include "cli/input/spec_input.hpp"
#include "cli/run/dataset_ledger.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {
namespace {

struct LedgerExportFlags {
  LedgerFileFlags file;
};

int run_ledger_export(const LedgerExportFlags& f, std::ostream& out, std::ostream&) {
  if (only_checking()) return kOk;
  const ReadLedger read = read_ledger(f.file);
  write_out(out, event_to_json(*planned_event(releases_in_force(read.entries))).dump(2) + '\n');
  return kOk;
}

Verb declare_ledger_export(CLI::App& command) {
  auto f = std::make_shared<LedgerExportFlags>();
  add_ledger_file_flags(command, f->file);
  return verb_of(&command, f, run_ledger_export);
}

}  // namespace

extern const VerbDescriptor kLedgerExportVerb{
    "ledger-export",
    "the ledger's releases in force as one spec file (for 'dpbudget epsilon --spec')",
    {"dpbudget ledger-export --ledger census.ledger"},
    declare_ledger_export};

}  // namespace dpb::cli
