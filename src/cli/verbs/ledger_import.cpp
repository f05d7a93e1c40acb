// dpbudget ledger-import: a new ledger holding exactly what another store's
// ledger holds (docs/ledger.md#moving-a-ledger-between-stores), read from
// `ledger-export --format ledger`: the same header and entries, each with its
// place and hashes, so that history, status and the head are the same on
// both. The export is read whole and its chain recomputed (with the key when
// it is keyed) before anything is written: a line altered is refused with
// exit 8 and nothing is created; the new ledger is then written in one
// transaction, never over an existing one.
#include <memory>

#include "cli/errors.hpp"
#include "cli/flags/flag_values.hpp"
#include "cli/flags/output_flags.hpp"
#include "cli/input/input_file.hpp"
#include "cli/run/dataset_ledger.hpp"
#include "cli/run/ledger_transfer.hpp"
#include "cli/verbs.hpp"
#include "store/ledger_chain.hpp"

namespace dpb::cli {
namespace {

struct LedgerImportFlags {
  LedgerFileFlags file;
  std::string from;
  OutputFlags output;
};

/// "--from NAME:LINE".
std::string line_named(const LedgerExport& x, std::size_t line) {
  return "--from: " + InputLocation{x.source, line, ""}.str();
}

/// The line of the entry at which the chain of `x` first breaks (it does
/// break): the shortest run of entries from the first whose chain does not
/// hold ends there. Found by bisection, each step checking a run's chain.
std::size_t first_broken_line(const LedgerExport& x, const std::optional<std::string>& key) {
  std::size_t holds = 0, breaks = x.entries.size();  // runs of that many entries
  while (breaks - holds > 1) {
    const std::size_t mid = holds + (breaks - holds) / 2;
    const std::vector<store::Entry> run(x.entries.begin(),
                                        x.entries.begin() + static_cast<std::ptrdiff_t>(mid));
    (store::chain_problems(key, x.header, run).empty() ? holds : breaks) = mid;
  }
  return LedgerExport::line_of(breaks - 1);
}

/// The key the export's chain is hashed with: --key-file's for a keyed
/// ledger (checked against its header), none otherwise. Throws LedgerError
/// (exit 7, as every verb for a keyed ledger without its key or with another).
std::optional<std::string> export_key(const LedgerExport& x,
                                      const std::optional<std::string>& key) {
  if (store::header_keyed(x.header) && !key)
    throw LedgerError("--from: " + x.source +
                      ": the ledger is keyed (HMAC-SHA-256); give its key with --key-file to check "
                      "and import it");
  try {
    return store::checked_key(x.header, key, "--from: " + x.source);
  } catch (const store::StoreError& e) {
    throw LedgerError(e.what());
  }
}

/// Refuses an export whose chain does not hold (LedgerAltered, exit 8), or
/// whose header or an entry's body does not read as a ledger's (UsageError).
void check_export(const LedgerExport& x, const std::optional<std::string>& key) {
  OpenLedger header_read;
  try {
    read_ledger_header(x.header, line_named(x, 1), header_read);
  } catch (const LedgerError& e) {
    throw UsageError(e.what());
  }
  if (store::chained_header_hash(key, x.header) != x.header_hash)
    throw LedgerAltered(line_named(x, 1) +
                        ": altered (\"header_hash\" is not the header's hash (the header was "
                        "changed?)); nothing imported");
  const auto problems = store::chain_problems(key, x.header, x.entries);
  if (!problems.empty())
    throw LedgerAltered(line_named(x, first_broken_line(x, key)) + ": altered (entry " +
                        std::to_string(problems.front().seq) + ": " + problems.front().what +
                        "); nothing imported");
  for (std::size_t i = 0; i < x.entries.size(); ++i) {
    try {
      (void)read_entries({x.entries[i]});
    } catch (const LedgerError& e) {
      throw UsageError(line_named(x, LedgerExport::line_of(i)) + ": " + e.what());
    }
  }
}

int run_ledger_import(const LedgerImportFlags& f, std::ostream& out, std::ostream& err) {
  check_output_flags(f.output);
  if (f.file.ledger.empty())
    throw UsageError("--ledger is required (the new ledger to create: a file, or a server's)");
  if (f.from.empty())
    throw UsageError(
        "--from is required (a file written by 'dpbudget ledger-export --format ledger', or - "
        "for standard input)");
  (void)check_ledger_address(f.file);
  if (only_checking()) return kOk;
  const auto given_key = read_key(f.file);

  InputFile input("--from", f.from, "a file written by 'ledger-export --format ledger'");
  const LedgerExport x = read_ledger_export(input);
  const auto key = export_key(x, given_key);
  check_export(x, key);
  const std::unique_ptr<store::LedgerStore> created =
      import_ledger(f.file, x.header, x.entries, given_key);

  report::Report rep;
  rep.command = "ledger-import";
  report::Record r;
  r.add("ledger", report::text(ledger_label(f.file)));
  r.add("from", report::text(x.source));
  r.add("entries", report::integer(static_cast<std::int64_t>(x.entries.size())));
  r.add("keyed", report::boolean(created->keyed()));
  r.add("head", report::text(x.entries.empty() ? created->header_hash() : x.entries.back().hash));
  rep.results.push_back(std::move(r));
  finish(rep, f.output, out, err);
  return kOk;
}

Verb declare_ledger_import(CLI::App& command) {
  auto f = std::make_shared<LedgerImportFlags>();
  add_ledger_file_flags(command, f->file);
  record_file(command.add_option(
      "--from", f->from,
      "the ledger to copy, as 'ledger-export --format ledger' wrote it (- for standard input)"));
  add_output_flags(command, f->output);
  return verb_of(&command, f, run_ledger_import);
}

}  // namespace

extern const VerbDescriptor kLedgerImportVerb{
    "ledger-import",
    "a new ledger holding exactly another's history and chain, from 'ledger-export --format\n"
    "  ledger' (to move a ledger between SQLite and PostgreSQL); refuses an altered export",
    {"dpbudget ledger-import --ledger census.ledger --from census.jsonl"},
    declare_ledger_import};

}  // namespace dpb::cli
