// dpbudget ledger-export: the releases in force as one spec file, which
// `dpbudget epsilon --spec FILE --neighbouring <the ledger's>` totals to the
// planned figures of ledger-status (the same event, the same question); with
// --format ledger, the whole ledger as JSON Lines (its header, every entry
// byte for byte with its hashes), which ledger-import reads into another
// store (docs/ledger.md#moving-a-ledger-between-stores).
#include <memory>

#include "cli/errors.hpp"
#include "cli/flags/choices.hpp"
#include "cli/flags/output_flags.hpp"
#include "cli/input/spec_input.hpp"
#include "cli/run/dataset_ledger.hpp"
#include "cli/run/ledger_transfer.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {
namespace {

/// What ledger-export writes.
enum class ExportFormat { spec, ledger };
inline constexpr std::array<Choice<ExportFormat>, 2> kExportFormatChoices{{
    {"spec", ExportFormat::spec},
    {"ledger", ExportFormat::ledger},
}};

struct LedgerExportFlags {
  LedgerFileFlags file;
  std::string format = "spec";
};

int run_ledger_export(const LedgerExportFlags& f, std::ostream& out, std::ostream&) {
  const ExportFormat format = parse_choice("--format", f.format, kExportFormatChoices);
  if (only_checking()) return kOk;
  const ReadLedger read = read_ledger(f.file);
  if (format == ExportFormat::ledger) {
    const store::LedgerStore& s = *read.ledger.store;
    write_out(out, ledger_export_lines(s.header(), s.header_hash(), read.stored, read.ledger.path));
    return kOk;
  }
  write_out(out, event_to_json(*planned_event(releases_in_force(read.entries))).dump(2) + '\n');
  return kOk;
}

Verb declare_ledger_export(CLI::App& command) {
  auto f = std::make_shared<LedgerExportFlags>();
  add_ledger_file_flags(command, f->file);
  add_choice_option(command, "--format", f->format, kExportFormatChoices,
                    "what to write: spec (default; the releases in force as one spec file) | "
                    "ledger (the whole ledger as JSON Lines, every entry with its hashes, for "
                    "ledger-import)");
  return verb_of(&command, f, run_ledger_export);
}

}  // namespace

extern const VerbDescriptor kLedgerExportVerb{
    "ledger-export",
    "the ledger's releases in force as one spec file (for 'dpbudget epsilon --spec'); or, with\n"
    "  --format ledger, its whole history and chain, for ledger-import",
    {"dpbudget ledger-export --ledger census.ledger",
     "dpbudget ledger-export --ledger census.ledger --format ledger"},
    declare_ledger_export};

}  // namespace dpb::cli
