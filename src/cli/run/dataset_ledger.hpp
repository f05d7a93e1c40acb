#pragma once
// What the ledger verbs share (docs/ledger.md): the ledger file's flags, its
// header read as a DatasetBudget, entries read as releases and voids, a
// release from the flags that describe one run (the DP-SGD flags, --spec,
// --schedule), and the store's errors as the CLI reports them.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "accounting/dataset_budget.hpp"
#include "cli/run/spec_verb.hpp"
#include "store/ledger_store.hpp"

namespace dpb::cli {

/// The unit of privacy a budget and a release are stated for
/// (docs/ledger.md#unit-and-relation).
enum class PrivacyUnit { record, user };
inline constexpr std::array<Choice<PrivacyUnit>, 2> kPrivacyUnitChoices{{
    {"record", PrivacyUnit::record},
    {"user", PrivacyUnit::user},
}};
std::string_view to_string(PrivacyUnit unit);

/// --ledger FILE and --key-file FILE, which every ledger verb takes, and
/// --ledger-name NAME, the ledger's name when --ledger names a PostgreSQL
/// server (docs/ledger_postgresql.md#naming-a-ledger-on-the-command-line).
struct LedgerFileFlags {
  std::string ledger;
  std::string key_file;
  std::string ledger_name;
};
void add_ledger_file_flags(CLI::App& app, LedgerFileFlags& flags);

/// Whether --ledger names a PostgreSQL server; checks --ledger and
/// --ledger-name (--ledger given): a server's address without a password,
/// in a build that has the PostgreSQL store, with a valid --ledger-name; a
/// file without --ledger-name. Throws UsageError naming the flag.
bool check_ledger_address(const LedgerFileFlags& flags);

/// The ledger as outputs and messages name it: the file's path as given, or
/// postgresql://USER@HOST/DB ledger NAME (never a password).
std::string ledger_label(const LedgerFileFlags& flags);

/// Creates the ledger --ledger names (a file or a server's ledger). Throws
/// LedgerError for a store's failure.
std::unique_ptr<store::LedgerStore> create_ledger(const LedgerFileFlags& flags,
                                                  const store::Header& header,
                                                  const std::optional<std::string>& key);

/// Creates the ledger --ledger names holding a ledger copied from another
/// store (ledger-import): `header` as stored and `entries` verbatim, in one
/// transaction, their chain checked first (store::import_sqlite_ledger).
/// Throws LedgerError for a store's failure.
std::unique_ptr<store::LedgerStore> import_ledger(const LedgerFileFlags& flags,
                                                  const store::Header& header,
                                                  const std::vector<store::Entry>& entries,
                                                  const std::optional<std::string>& key);

/// The key's bytes from --key-file (nullopt without it): at least 16 bytes,
/// at most 4 KiB. Throws UsageError.
std::optional<std::string> read_key(const LedgerFileFlags& flags);

/// A ledger as the verbs see it: its store and its budget.
struct OpenLedger {
  std::unique_ptr<store::LedgerStore> store;
  DatasetBudget budget;
  PrivacyUnit unit = PrivacyUnit::record;
  std::vector<std::string> accountants;  ///< the planned gate's accountants, in order
  std::string path;
  bool has_key = false;  ///< opened with --key-file
};
/// Reads a store's header into `ledger`'s budget, unit and accountants (what
/// open_ledger checks of every ledger). Throws LedgerError naming `path` for
/// a header that is not a dpbudget ledger's or does not read.
void read_ledger_header(const store::Header& header, const std::string& path, OpenLedger& ledger);
/// Opens --ledger (required) for reading or writing. Throws LedgerError
/// (cli/errors.hpp) for a store's failure or a header that does not read.
/// `notes`: where a server's store says each retry of a write it makes
/// (`dpbudget: note: ...` lines; the writing verbs give their stderr).
OpenLedger open_ledger(const LedgerFileFlags& flags, bool writable, std::ostream* notes = nullptr);

/// Throws the command line's exception for a store's failure, which sets the
/// exit status (cli/errors.hpp): LedgerOutcomeUnknown (9) when an append's
/// outcome is unknown (StoreError::Kind::in_doubt), LedgerError (7) for
/// every other kind, the ledger unchanged.
[[noreturn]] void throw_ledger_error(const store::StoreError& e);

/// One entry read: a release (its event, unit and what it contributes) or a
/// void of an earlier entry.
struct LedgerEntry {
  store::Entry stored;
  bool is_void = false;
  // A release:
  EventPtr event;
  std::string event_json;  ///< the spec JSON, compact, as recorded
  PrivacyUnit unit = PrivacyUnit::record;
  Contribution contribution;
  std::optional<std::int64_t> voided_by;  ///< the void entry that voids it
  // A void:
  std::int64_t voids = 0;
  std::string reason;
};
/// Every entry, read in one transaction, after the hash chain is checked
/// (docs/ledger.md#verify): throws LedgerAltered when it breaks, so that no
/// verb decides or reports on an altered ledger (ledger-verify names the
/// entries). A keyed ledger is read only with its key (its hashes need it):
/// LedgerError without. Throws LedgerError for a store's failure.
std::vector<store::Entry> checked_entries(const OpenLedger& ledger);
/// Refuses a keyed ledger opened without its key (LedgerError).
void require_key(const OpenLedger& ledger);
/// The chain check of checked_entries() on entries already read (inside a
/// write transaction).
void check_chain(const OpenLedger& ledger, const std::vector<store::Entry>& stored);

/// A ledger opened for reading with its entries, the chain checked
/// (checked_entries) and every body read (read_entries).
struct ReadLedger {
  OpenLedger ledger;
  std::vector<store::Entry> stored;
  std::vector<LedgerEntry> entries;
};
ReadLedger read_ledger(const LedgerFileFlags& flags);

/// When `choice` asks pld: its tolerance set to ledger_pld_tolerance() with
/// rdp's sound upper bound on `all` as the reference
/// (docs/ledger.md#planned-precision); unchanged when rdp cannot bound it.
void use_ledger_pld_tolerance(AccountantChoice& choice, const DatasetBudget& budget,
                              const DpEvent& all);

/// Reads every entry's body. Throws LedgerError naming an entry that does not read.
std::vector<LedgerEntry> read_entries(const std::vector<store::Entry>& stored);

/// The releases in force (recorded and not voided), in order.
std::vector<const LedgerEntry*> releases_in_force(const std::vector<LedgerEntry>& entries);
/// Their events composed (compose_releases): the planned total's event.
EventPtr planned_event(const std::vector<const LedgerEntry*>& releases);
/// Their contributions.
std::vector<Contribution> contributions(const std::vector<const LedgerEntry*>& releases);

/// The body of a release entry (what the store keeps).
std::string release_body(const std::string& event_json, PrivacyUnit unit,
                         const Contribution& contribution);
/// The body of a void entry.
std::string void_body(std::int64_t voids, const std::string& reason);

/// Who records an entry: --by, else $DPBUDGET_USER, $USER, $LOGNAME, else "unknown".
std::string recorder(const std::string& by);
/// Now, UTC, as 2026-11-28T22:10:00Z.
std::string now_utc();

/// The store's header of a new ledger.
store::Header ledger_header(const DatasetBudget& budget, PrivacyUnit unit,
                            const std::vector<std::string>& accountants, const std::string& dataset,
                            const std::string& created_by);

}  // namespace dpb::cli
