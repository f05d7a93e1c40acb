// The PostgreSQL store's reading of failures (postgresql_errors.hpp).
#include "store/postgresql_errors.hpp"

namespace dpb::store {

std::string one_line(const std::string& text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == '\n' || c == '\t' || c == '\r' || c == ' ') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

StoreError::Kind pg_kind(const std::string& state) {
  if (state == "42P01" || state == "3F000") return StoreError::Kind::not_a_ledger;
  if (state == "23505") return StoreError::Kind::exists;
  if (state == "42501") return StoreError::Kind::permission;
  return StoreError::Kind::io;
}

std::string pg_hint(const std::string& state, const std::string& role) {
  if (state == "42501")
    return " (the role " + role +
           " lacks this right: an administrator grants it, docs/ledger_postgresql.sql)";
  if (state == "42P01" || state == "3F000")
    return " (no dpbudget ledger schema in this database: ledger-init creates it where the "
           "role may, or an administrator runs docs/ledger_postgresql.sql)";
  if (state == "55P03")
    return " (another writer held the ledger's lock for " + std::to_string(kPgLockTimeoutSeconds) +
           " s)";
  return "";
}

bool retryable(const std::string& state) {
  return state == "40001" || state == "40P01" || state == "55P03";
}

StoreError extended(const StoreError& error, const std::string& more) {
  return StoreError(error.kind(), error.what() + more);
}

}  // namespace dpb::store
