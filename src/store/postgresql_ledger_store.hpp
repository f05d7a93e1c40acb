#pragma once
// The PostgreSQL backend of the ledger store (issue 47; the design is
// docs/ledger_postgresql.md): one schema, "dpbudget", holds many ledgers,
// each keyed by its name; an append is one READ COMMITTED transaction that
// locks the ledger's row first (SELECT ... FOR UPDATE), reads, asks the
// caller, appends. Built with -DDPBUDGET_POSTGRESQL=ON (the default; libpq
// opened at run time, libpq_library.hpp); without it, ledger_address.cpp defines these functions as
// refusals.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/ledger_address.hpp"
#include "store/ledger_store.hpp"

namespace dpb::store {

/// Whether libpq reads `conninfo` (a URI or keyword/value string).
bool conninfo_parses(const std::string& conninfo);

/// Whether a connection string holds a password (the caller refuses it: the
/// process list shows a program's arguments).
bool conninfo_has_password(const std::string& conninfo);

/// The connection string as messages show it: postgresql://USER@HOST:PORT/DB,
/// each part only when given, never a password.
std::string conninfo_label(const std::string& conninfo);

/// Creates ledger `name` on the server: the schema first when the database
/// has none and the role may create it. Refuses a name already taken
/// (StoreError::Kind::exists). `key`: the HMAC key, or nullopt for SHA-256.
std::unique_ptr<LedgerStore> create_postgresql_ledger(const std::string& conninfo,
                                                      const std::string& name, const Header& header,
                                                      const std::optional<std::string>& key);

/// What the store says while it works (one line, no prefix): each retry of
/// an append after a serialization failure, a deadlock or a lock timeout.
using StoreNote = std::function<void(const std::string&)>;

/// Creates ledger `name` holding a ledger copied from another store, as
/// import_sqlite_ledger does (the same checks, one transaction: the ledger's
/// row, its header and every entry, or nothing). The role needs the grants
/// of ledger-init and of ledger-add (docs/ledger_postgresql.sql).
std::unique_ptr<LedgerStore> import_postgresql_ledger(const std::string& conninfo,
                                                      const std::string& name, const Header& header,
                                                      const std::vector<Entry>& entries,
                                                      const std::optional<std::string>& key);

/// Opens ledger `name`: checks the schema's version and the key as
/// open_sqlite_ledger does. A role that may only read can open it; its
/// append is refused by the server (StoreError::Kind::permission). `note`
/// hears each retry of an append (nothing when empty).
std::unique_ptr<LedgerStore> open_postgresql_ledger(const std::string& conninfo,
                                                    const std::string& name,
                                                    const std::optional<std::string>& key,
                                                    const StoreNote& note = {});

}  // namespace dpb::store
