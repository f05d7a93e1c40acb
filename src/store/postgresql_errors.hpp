#pragma once
// How the PostgreSQL ledger store (postgresql_ledger_store.cpp) reads a
// failed statement: its kind by SQLSTATE, the hint it adds, and which
// failures of an append it runs again, how often and after what wait
// (docs/ledger_postgresql.md, "A dropped connection or a server restart
// during add").
#include <chrono>
#include <string>
#include <utility>

#include "store/ledger_store.hpp"

namespace dpb::store {

/// Attempts of an append that failed where nothing was written and running
/// it again is safe: a serialization failure (40001) or a deadlock (40P01),
/// neither expected under the row lock but cheap to survive, or a lock wait
/// past kPgLockTimeoutSeconds (55P03). Three: a writer that loses three times
/// in a row meets contention that waiting will not cure, and says so.
inline constexpr int kPgWriteAttempts = 3;
/// How long one attempt waits for another writer's lock on the same ledger:
/// over kPgWriteAttempts attempts an add waits at most 60 s in all, the
/// SQLite store's busy timeout.
inline constexpr int kPgLockTimeoutSeconds = 20;
/// The wait before each retry, growing fourfold so that two writers that
/// collided do not collide again in step.
inline constexpr std::chrono::milliseconds kPgRetryWait[kPgWriteAttempts - 1] = {
    std::chrono::milliseconds(100), std::chrono::milliseconds(400)};

/// libpq's message on one line (it writes some over two or three).
std::string one_line(const std::string& text);

/// What a failed statement means for the caller, by its SQLSTATE.
StoreError::Kind pg_kind(const std::string& state);

/// What the message of a failure with `state` adds in parentheses (a
/// missing right of `role`, no schema, a lock held too long), or "".
std::string pg_hint(const std::string& state, const std::string& role);

/// Whether an append that failed so may run again: the server rolled it back
/// because of other writers, not because of anything in this one.
bool retryable(const std::string& state);

/// A statement's failure: a StoreError that keeps the SQLSTATE ("" when
/// libpq made the error itself) and the server's message, so that an append
/// can tell the failures it retries and name a missing right.
class PgStatementError : public StoreError {
 public:
  PgStatementError(Kind kind, const std::string& what, std::string state, std::string primary)
      : StoreError(kind, what), state_(std::move(state)), primary_(std::move(primary)) {}
  const std::string& state() const { return state_; }
  const std::string& primary() const { return primary_; }

 private:
  std::string state_;
  std::string primary_;
};

/// `error` with `more` after its message, of the same kind.
StoreError extended(const StoreError& error, const std::string& more);

}  // namespace dpb::store
