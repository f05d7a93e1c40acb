#pragma once
// Which store a ledger's address names
// (docs/ledger_postgresql.md#naming-a-ledger-on-the-command-line): a PostgreSQL server (a libpq URI
// or keyword/value connection string) or else a file. Decided without libpq, so that a build
// without the PostgreSQL store still recognises such an address and refuses it clearly.
#include <string>

namespace dpb::store {

/// Whether `ledger` names a PostgreSQL server rather than a file: a libpq URI
/// (postgresql:// or postgres://), or a keyword/value connection string whose
/// first word is a libpq connection keyword followed by '=' ("service=team",
/// "host=/tmp/x dbname=d"). Any other text is a file's path ("./service=x").
bool is_postgresql_address(const std::string& ledger);

/// Whether this build has the PostgreSQL store (-DDPBUDGET_POSTGRESQL=ON).
bool postgresql_supported();

}  // namespace dpb::store
