// The PostgreSQL backend of the ledger store (issue 47, design in
// docs/ledger_postgresql.md). The tables are the SQLite store's with the
// ledger's name in front; the chain is computed in the client
// (ledger_chain.hpp), so the key never reaches the server and a ledger copied
// between backends chains the same. Every append is one READ COMMITTED
// transaction that first locks the ledger's row in dpbudget.ledgers (FOR
// UPDATE, which also needs UPDATE on that table: a read-only role is refused
// there, before it reads anything), then reads, decides and appends.
#include "store/postgresql_ledger_store.hpp"

#include <poll.h>

#include <chrono>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

#include "store/ledger_chain.hpp"
#include "store/libcrypto_library.hpp"
#include "store/libpq_library.hpp"
#include "store/postgresql_errors.hpp"

namespace dpb::store {
namespace {

/// How long making a connection may take (libpq's connect_timeout, also
/// for a reconnection): a socket on the machine answers in milliseconds, a
/// server across a slow network in a few seconds.
constexpr std::chrono::seconds kPgConnectTimeout(10);
/// Reconnections tried when the connection drops while COMMIT is in flight,
/// and the wait before each: 2.1 s in all, so that a server back within it
/// (crash recovery after `pg_ctl stop -m immediate` took 0.17 s here with
/// fsync off) lets the add say whether its entry is recorded, and an add
/// whose server stays away reports "outcome unknown" within seconds.
constexpr int kPgReconnectTries = 3;
constexpr std::chrono::milliseconds kPgReconnectWait[kPgReconnectTries] = {
    std::chrono::milliseconds(100), std::chrono::milliseconds(400),
    std::chrono::milliseconds(1600)};

/// The schema, created by the first ledger-init that may (else by an
/// administrator with the same statements). Serialised by an advisory lock so
/// that two first inits do not race on CREATE TABLE.
constexpr const char* kPgSchemaSql = R"sql(
CREATE SCHEMA IF NOT EXISTS dpbudget;
CREATE TABLE IF NOT EXISTS dpbudget.meta (
  key text PRIMARY KEY,
  value text NOT NULL);
CREATE TABLE IF NOT EXISTS dpbudget.ledgers (
  name text PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$'),
  created_at timestamptz NOT NULL DEFAULT now(),
  head_seq bigint NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS dpbudget.header (
  ledger text NOT NULL REFERENCES dpbudget.ledgers (name),
  name text NOT NULL,
  value text NOT NULL,
  PRIMARY KEY (ledger, name));
CREATE TABLE IF NOT EXISTS dpbudget.entries (
  ledger text NOT NULL REFERENCES dpbudget.ledgers (name),
  seq bigint NOT NULL CHECK (seq >= 1),
  kind text NOT NULL,
  name text NOT NULL,
  recorded_at text NOT NULL,
  recorded_by text NOT NULL,
  body text NOT NULL,
  note text NOT NULL,
  prev_hash text NOT NULL,
  hash text NOT NULL,
  PRIMARY KEY (ledger, seq));
INSERT INTO dpbudget.meta (key, value) VALUES ('application', 'dpbudget-ledger')
  ON CONFLICT DO NOTHING;
)sql";

struct PgResultFree {
  void operator()(PGresult* r) const { pq().PQclear(r); }
};
using PgResult = std::unique_ptr<PGresult, PgResultFree>;

std::vector<std::string> conninfo_values(const std::string& conninfo, const char* keyword,
                                         bool* parsed) {
  char* error = nullptr;
  PQconninfoOption* options = pq().PQconninfoParse(conninfo.c_str(), &error);
  pq().PQfreemem(error);
  *parsed = options != nullptr;
  std::vector<std::string> out;
  if (!options) return out;
  for (PQconninfoOption* o = options; o->keyword; ++o)
    if (std::string(o->keyword) == keyword && o->val && *o->val) out.push_back(o->val);
  pq().PQconninfoFree(options);
  return out;
}

std::string conninfo_value(const std::string& conninfo, const char* keyword) {
  bool parsed = false;
  const auto v = conninfo_values(conninfo, keyword, &parsed);
  return v.empty() ? std::string() : v.front();
}

/// A connection and the statements on it. Every failure is a StoreError whose
/// message starts with the ledger's label and says what was being done.
class PgConnection {
 public:
  PgConnection(const std::string& conninfo, std::string label) : label_(std::move(label)) {
    // The user's string is expanded in place of dbname; what comes before it
    // is a default it may override, what comes after is ours.
    const std::string timeout = std::to_string(kPgConnectTimeout.count());
    const char* keywords[] = {"connect_timeout", "application_name", "dbname", "client_encoding",
                              nullptr};
    const char* values[] = {timeout.c_str(), "dpbudget", conninfo.c_str(), "UTF8", nullptr};
    // Started, not made at once, so that the notice processor is in place
    // before the server says anything: the server's notices and warnings (a
    // WARNING before an immediate shutdown drops the connection, even one
    // just made; a NOTICE from CREATE ... IF NOT EXISTS) would reach stderr
    // as lines of their own. The last is kept for the message of a lost
    // connection instead.
    conn_ = pq().PQconnectStartParams(keywords, values, 1);
    if (conn_)
      pq().PQsetNoticeProcessor(
          conn_,
          [](void* self, const char* message) {
            static_cast<PgConnection*>(self)->notice_ = one_line(message ? message : "");
          },
          this);
    const std::string why = conn_ ? finish_connecting() : "out of memory";
    if (!why.empty()) {
      pq().PQfinish(conn_);
      conn_ = nullptr;
      throw StoreError(StoreError::Kind::io, label_ + ": cannot connect: " + why);
    }
  }
  ~PgConnection() { pq().PQfinish(conn_); }
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  const std::string& label() const { return label_; }
  /// The role the connection logged in as.
  std::string user() const {
    const char* u = pq().PQuser(conn_);
    return u ? u : "";
  }
  bool lost() const { return pq().PQstatus(conn_) != CONNECTION_OK; }
  /// Whether the last failure was the connection's (not the statement's).
  bool dropped() const { return dropped_; }

  /// Runs `sql` with text parameters; throws on anything but success.
  PgResult exec(const char* sql, const std::vector<std::string>& params, const char* doing) {
    std::vector<const char*> values;
    values.reserve(params.size());
    for (const auto& p : params) values.push_back(p.c_str());
    return checked(PgResult(pq().PQexecParams(conn_, sql, static_cast<int>(values.size()), nullptr,
                                              values.data(), nullptr, nullptr, 0)),
                   doing);
  }
  PgResult exec(const char* sql, const char* doing) { return exec(sql, {}, doing); }
  /// Runs several statements (no parameters); throws on any failure.
  PgResult exec_script(const char* sql, const char* doing) {
    return checked(PgResult(pq().PQexec(conn_, sql)), doing);
  }

  /// `r` when it succeeded, else a StoreError saying why.
  PgResult checked(PgResult r, const char* doing) {
    const std::string notice = std::move(notice_);
    notice_.clear();
    const auto status = r ? pq().PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return r;
    const char* state_field = r ? pq().PQresultErrorField(r.get(), PG_DIAG_SQLSTATE) : nullptr;
    const std::string state = state_field ? state_field : "";
    // A drop shows as an error libpq made itself (no SQLSTATE: "server closed
    // the connection unexpectedly"), a connection exception (class 08) or the
    // server going down (57P01 to 57P03), sometimes before PQstatus says so.
    dropped_ = lost() || state.empty() || state.rfind("08", 0) == 0 || state == "57P01" ||
               state == "57P02" || state == "57P03";
    std::string message = one_line(pq().PQerrorMessage(conn_));
    if (dropped_ && !notice.empty()) message = notice + "; " + message;
    if (dropped_)
      throw PgStatementError(
          StoreError::Kind::io,
          label_ + ": " + doing + ": the connection to the server was lost (" + message + ")",
          state, message);
    const char* field = r ? pq().PQresultErrorField(r.get(), PG_DIAG_MESSAGE_PRIMARY) : nullptr;
    const std::string primary = field ? std::string(field) : message;
    throw PgStatementError(pg_kind(state),
                           label_ + ": " + doing + ": " + primary + pg_hint(state, user()), state,
                           primary);
  }

  /// Drives a started connection to its end within kPgConnectTimeout (what
  /// PQconnectdbParams does, which PQconnectPoll leaves to its caller): ""
  /// when it is made, else why not.
  std::string finish_connecting() {
    const auto deadline = std::chrono::steady_clock::now() + kPgConnectTimeout;
    auto status = PGRES_POLLING_WRITING;  // libpq's first step, as documented
    while (pq().PQstatus(conn_) != CONNECTION_BAD && status != PGRES_POLLING_FAILED) {
      if (status == PGRES_POLLING_OK) return "";
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return "timeout expired";
      pollfd fd{pq().PQsocket(conn_),
                static_cast<short>(status == PGRES_POLLING_READING ? POLLIN : POLLOUT), 0};
      if (::poll(&fd, 1, static_cast<int>(left.count())) != 1) continue;  // timeout or EINTR
      status = pq().PQconnectPoll(conn_);
    }
    return one_line(pq().PQerrorMessage(conn_));
  }

  /// ROLLBACK when the connection still stands; never throws.
  void rollback_quietly() noexcept {
    if (!lost()) pq().PQclear(pq().PQexec(conn_, "ROLLBACK"));
  }

  /// Connects again after a drop, up to kPgReconnectTries times.
  bool reconnect() {
    for (const auto wait : kPgReconnectWait) {
      std::this_thread::sleep_for(wait);
      pq().PQreset(conn_);
      if (!lost()) {
        dropped_ = false;
        return true;
      }
    }
    return false;
  }

 private:
  PGconn* conn_ = nullptr;
  std::string label_;
  bool dropped_ = false;
  std::string notice_;  ///< the server's last notice or warning, on one line
};

std::string cell(const PgResult& r, int row, int col) {
  return std::string(pq().PQgetvalue(r.get(), row, col),
                     static_cast<std::size_t>(pq().PQgetlength(r.get(), row, col)));
}

class PostgresqlLedgerStore final : public LedgerStore {
 public:
  PostgresqlLedgerStore(const std::string& conninfo, std::string name)
      : db_(conninfo, conninfo_label(conninfo) + " ledger " + name), name_(std::move(name)) {}

  /// Creates the ledger's row, its header as stored (chained_header's, or a
  /// copied ledger's) and `entries` verbatim (a copied ledger's, checked by
  /// checked_copy) in one transaction; the schema first when there is none.
  void create(const Header& stored_header, const std::optional<std::string>& key,
              const std::vector<Entry>& entries) {
    db_.exec("BEGIN", "cannot create");
    try {
      db_.exec("SELECT pg_advisory_xact_lock(hashtextextended('dpbudget-ledger-schema', 0))",
               "cannot create");
      // CREATE SCHEMA IF NOT EXISTS checks the right to create before it
      // looks: a role without it must not run it on a schema that exists.
      const auto exists =
          db_.exec("SELECT to_regclass('dpbudget.entries') IS NOT NULL", "cannot create");
      // A schema made by an administrator (docs/ledger_postgresql.sql) has
      // its version already; a role that may only add ledgers may not write
      // to meta.
      if (cell(exists, 0, 0) != "t") {
        try {
          db_.exec_script(kPgSchemaSql, "cannot create the schema");
        } catch (const StoreError& e) {
          if (e.kind() != StoreError::Kind::permission) throw;
          throw StoreError(StoreError::Kind::permission,
                           db_.label() + ": cannot create the schema dpbudget: the role " +
                               db_.user() +
                               " may not (an administrator creates it with "
                               "docs/ledger_postgresql.sql)");
        }
        db_.exec(
            "INSERT INTO dpbudget.meta (key, value) VALUES ('schema_version', $1) "
            "ON CONFLICT DO NOTHING",
            {std::to_string(kLedgerSchemaVersion)}, "cannot create");
      }
      check_schema_version();
      try {
        db_.exec("INSERT INTO dpbudget.ledgers (name, head_seq) VALUES ($1, $2)",
                 {name_, std::to_string(entries.empty() ? 0 : entries.back().seq)},
                 "cannot create");
      } catch (const StoreError& e) {
        if (e.kind() != StoreError::Kind::exists) throw;
        throw StoreError(StoreError::Kind::exists,
                         db_.label() +
                             ": cannot create: a ledger of that name exists (a ledger "
                             "is never replaced)");
      }
      header_ = stored_header;
      key_ = checked_key(header_, key, db_.label());
      for (const auto& [name, value] : header_)
        db_.exec("INSERT INTO dpbudget.header (ledger, name, value) VALUES ($1, $2, $3)",
                 {name_, name, value}, "cannot create");
      for (const Entry& e : entries) copy_entry(e);
      db_.exec("COMMIT", "cannot create");
    } catch (...) {
      db_.rollback_quietly();
      throw;
    }
  }

  void load(const std::optional<std::string>& key) {
    db_.exec("BEGIN READ ONLY", "cannot read");
    try {
      check_schema_version();
      const auto ledger =
          db_.exec("SELECT 1 FROM dpbudget.ledgers WHERE name = $1", {name_}, "cannot read");
      if (pq().PQntuples(ledger.get()) == 0)
        throw StoreError(StoreError::Kind::not_found,
                         db_.label() + ": no such ledger (create it with 'dpbudget ledger-init')");
      const auto rows = db_.exec("SELECT name, value FROM dpbudget.header WHERE ledger = $1",
                                 {name_}, "cannot read");
      for (int i = 0; i < pq().PQntuples(rows.get()); ++i)
        header_[cell(rows, i, 0)] = cell(rows, i, 1);
      db_.exec("COMMIT", "cannot read");
    } catch (...) {
      db_.rollback_quietly();
      throw;
    }
    key_ = checked_key(header_, key, db_.label());
  }

  const Header& header() const override { return header_; }
  bool keyed() const override { return header_keyed(header_); }

  std::vector<Entry> entries() override { return read_entries(); }

  /// One transaction, run again (kPgWriteAttempts in all, each retry said to
  /// note_) when the server rolled it back for other writers' sake; every
  /// failure before COMMIT says that nothing was recorded, which holds: a
  /// transaction whose COMMIT was never sent cannot take effect.
  std::optional<Entry> append_if(const Decide& decide) override {
    if (keyed() && !key_)
      throw StoreError(StoreError::Kind::key, db_.label() +
                                                  ": --key-file: this ledger is keyed; give its "
                                                  "key to write to it");
    for (int attempt = 1;; ++attempt) {
      std::optional<Entry> e;
      try {
        e = append_uncommitted(decide);
      } catch (const PgStatementError& x) {
        if (x.kind() == StoreError::Kind::permission) throw refused_append(x);
        if (!retryable(x.state())) throw extended(x, "; nothing was recorded");
        if (attempt == kPgWriteAttempts)
          throw extended(x,
                         ", " + std::to_string(kPgWriteAttempts) + " times; nothing was recorded");
        if (note_)
          note_(std::string(x.what()) + "; nothing was recorded, retrying (" +
                std::to_string(attempt + 1) + " of " + std::to_string(kPgWriteAttempts) + ")");
        std::this_thread::sleep_for(kPgRetryWait[attempt - 1]);
        continue;
      } catch (const StoreError& x) {
        throw extended(x, "; nothing was recorded");
      }
      if (e) commit(*e);
      return e;
    }
  }

  void set_note(StoreNote note) { note_ = std::move(note); }

  std::string entry_hash(std::int64_t seq, const NewEntry& c,
                         const std::string& prev) const override {
    return chained_entry_hash(key_, seq, c, prev);
  }
  std::string header_hash() const override { return chained_header_hash(key_, header_); }

 private:
  /// BEGIN, the ledger's row locked, read, decide, INSERT: the entry, its
  /// transaction still open; nullopt (rolled back) when `decide` declines.
  /// Rolls back and throws on any failure.
  std::optional<Entry> append_uncommitted(const Decide& decide) {
    db_.exec("BEGIN ISOLATION LEVEL READ COMMITTED", "cannot lock for writing");
    Entry e;
    try {
      lock_ledger("cannot lock for writing");
      const auto current = read_entries();
      auto content = decide(current);
      if (!content) {
        // Nothing was written: whether the ROLLBACK arrives changes nothing.
        db_.rollback_quietly();
        return std::nullopt;
      }
      e.seq = current.empty() ? 1 : current.back().seq + 1;
      e.content = std::move(*content);
      e.prev_hash = current.empty() ? header_hash() : current.back().hash;
      e.hash = entry_hash(e.seq, e.content, e.prev_hash);
      const auto& c = e.content;
      db_.exec(
          "INSERT INTO dpbudget.entries (ledger, seq, kind, name, recorded_at, recorded_by, body, "
          "note, prev_hash, hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
          {name_, std::to_string(e.seq), c.kind, c.name, c.recorded_at, c.recorded_by, c.body,
           c.note, e.prev_hash, e.hash},
          "cannot write");
      db_.exec("UPDATE dpbudget.ledgers SET head_seq = $2 WHERE name = $1",
               {name_, std::to_string(e.seq)}, "cannot write");
    } catch (...) {
      db_.rollback_quietly();
      throw;
    }
    return e;
  }

  /// In a transaction: waits (at most kPgLockTimeoutSeconds) for the
  /// ledger's row and locks it, so that no other writer runs until the
  /// transaction ends.
  void lock_ledger(const char* doing) {
    db_.exec(("SET LOCAL lock_timeout = '" + std::to_string(kPgLockTimeoutSeconds) + "s'").c_str(),
             doing);
    const auto lock = db_.exec("SELECT head_seq FROM dpbudget.ledgers WHERE name = $1 FOR UPDATE",
                               {name_}, doing);
    if (pq().PQntuples(lock.get()) == 0)
      throw StoreError(StoreError::Kind::not_found, db_.label() + ": no such ledger");
  }

  /// A role's append refused by the server (42501): which right it lacks.
  StoreError refused_append(const PgStatementError& x) const {
    return StoreError(StoreError::Kind::permission,
                      db_.label() + ": the role " + db_.user() + " may not add to this ledger (" +
                          x.primary() +
                          "): adding needs UPDATE (head_seq) on dpbudget.ledgers and INSERT on "
                          "dpbudget.entries, which an administrator grants with the role "
                          "dpbudget_writer (docs/ledger_postgresql.sql); nothing was recorded");
  }

  void check_schema_version() {
    const auto v =
        db_.exec("SELECT value FROM dpbudget.meta WHERE key = 'schema_version'", "cannot read");
    if (pq().PQntuples(v.get()) == 0)
      throw StoreError(StoreError::Kind::not_a_ledger,
                       db_.label() + ": not a dpbudget ledger schema (no schema version)");
    const long long schema = std::stoll(cell(v, 0, 0));
    if (schema > kLedgerSchemaVersion)
      throw StoreError(StoreError::Kind::newer_schema,
                       db_.label() + ": written by a newer dpbudget (ledger schema " +
                           std::to_string(schema) + "; this one reads up to " +
                           std::to_string(kLedgerSchemaVersion) + ")");
  }

  /// Inserts a copied ledger's entry as it is (inside create's transaction).
  void copy_entry(const Entry& e) {
    const auto& c = e.content;
    db_.exec(
        "INSERT INTO dpbudget.entries (ledger, seq, kind, name, recorded_at, recorded_by, "
        "body, note, prev_hash, hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        {name_, std::to_string(e.seq), c.kind, c.name, c.recorded_at, c.recorded_by, c.body, c.note,
         e.prev_hash, e.hash},
        "cannot import");
  }

  std::vector<Entry> read_entries() {
    // One statement: one snapshot, in or out of a transaction.
    const auto rows = db_.exec(
        "SELECT seq, kind, name, recorded_at, recorded_by, body, note, prev_hash, hash "
        "FROM dpbudget.entries WHERE ledger = $1 ORDER BY seq",
        {name_}, "cannot read");
    std::vector<Entry> out;
    out.reserve(static_cast<std::size_t>(pq().PQntuples(rows.get())));
    for (int i = 0; i < pq().PQntuples(rows.get()); ++i) {
      Entry e;
      e.seq = std::stoll(cell(rows, i, 0));
      e.content = {cell(rows, i, 1), cell(rows, i, 2), cell(rows, i, 3),
                   cell(rows, i, 4), cell(rows, i, 5), cell(rows, i, 6)};
      e.prev_hash = cell(rows, i, 7);
      e.hash = cell(rows, i, 8);
      out.push_back(std::move(e));
    }
    return out;
  }

  /// COMMIT; when the connection drops while it is in flight, the client
  /// cannot know whether it took effect: reconnect (kPgReconnectTries) and
  /// look for the entry's own hash at its place (docs/ledger_postgresql.md,
  /// dropped connections). Recorded: returns. Not recorded: throws io.
  /// Unknown (no connection again, or the look failed): throws in_doubt.
  void commit(const Entry& e) {
    try {
      db_.exec("COMMIT", "cannot commit");
      return;
    } catch (const StoreError& x) {
      // The server answered: the transaction ended without the entry.
      if (!db_.dropped()) throw extended(x, "; nothing was recorded");
    }
    const std::string lost = "the connection to the server was lost while committing entry " +
                             std::to_string(e.seq) + " ('" + e.content.name + "')";
    const std::string unknown =
        ": the entry may or may not be recorded; run ledger-history / ledger-status to see";
    if (!db_.reconnect()) {
      long long waited = 0;
      for (const auto wait : kPgReconnectWait) waited += wait.count();
      throw StoreError(StoreError::Kind::in_doubt,
                       db_.label() + ": outcome unknown: " + lost +
                           " and could not be made again (" + std::to_string(kPgReconnectTries) +
                           " tries over " + std::to_string(waited / 1000) + "." +
                           std::to_string(waited % 1000 / 100) + " s)" + unknown);
    }
    bool recorded = false;
    try {
      recorded = committed(e);
    } catch (const StoreError& x) {
      std::string why = x.what();
      if (why.rfind(db_.label() + ": ", 0) == 0) why.erase(0, db_.label().size() + 2);
      throw StoreError(StoreError::Kind::in_doubt,
                       db_.label() + ": outcome unknown: " + lost +
                           "; reconnected, but the look for it failed (" + why + ")" + unknown);
    }
    if (!recorded)
      throw StoreError(
          StoreError::Kind::io,
          db_.label() + ": " + lost +
              "; reconnected and looked: it is not in the ledger; nothing was recorded");
    if (note_) note_(db_.label() + ": " + lost + "; reconnected and looked: it is recorded");
  }

  /// After a reconnection: whether `e` is in the ledger. The ledger's row is
  /// locked first, so that a transaction of the lost connection that the
  /// server still runs (a network drop rather than a crash) has ended, and
  /// its entry, if it committed, is seen.
  bool committed(const Entry& e) {
    db_.exec("BEGIN ISOLATION LEVEL READ COMMITTED", "cannot read after reconnecting");
    try {
      lock_ledger("cannot read after reconnecting");
      const auto found =
          db_.exec("SELECT hash FROM dpbudget.entries WHERE ledger = $1 AND seq = $2",
                   {name_, std::to_string(e.seq)}, "cannot read after reconnecting");
      const bool recorded = pq().PQntuples(found.get()) == 1 && cell(found, 0, 0) == e.hash;
      // The answer is known: a ROLLBACK that does not arrive changes nothing.
      db_.rollback_quietly();
      return recorded;
    } catch (...) {
      db_.rollback_quietly();
      throw;
    }
  }

  PgConnection db_;
  std::string name_;
  Header header_;
  std::optional<std::string> key_;
  StoreNote note_;
};

}  // namespace

bool conninfo_parses(const std::string& conninfo) {
  bool parsed = false;
  (void)conninfo_values(conninfo, "host", &parsed);
  return parsed;
}

bool conninfo_has_password(const std::string& conninfo) {
  bool parsed = false;
  const auto v = conninfo_values(conninfo, "password", &parsed);
  return !v.empty();
}

std::string conninfo_label(const std::string& conninfo) {
  bool parsed = false;
  (void)conninfo_values(conninfo, "host", &parsed);
  if (!parsed) return "postgresql (a connection string that does not parse)";
  const std::string user = conninfo_value(conninfo, "user");
  const std::string host = conninfo_value(conninfo, "host");
  const std::string port = conninfo_value(conninfo, "port");
  const std::string db = conninfo_value(conninfo, "dbname");
  const std::string service = conninfo_value(conninfo, "service");
  std::string out = "postgresql://" + (user.empty() ? "" : user + "@") + host +
                    (port.empty() ? "" : ":" + port) + "/" + db;
  if (!service.empty()) out += " (service " + service + ")";
  return out;
}

std::unique_ptr<LedgerStore> create_postgresql_ledger(const std::string& conninfo,
                                                      const std::string& name, const Header& header,
                                                      const std::optional<std::string>& key) {
  (void)crypto();  // the chain's library, before anything is written
  auto store = std::make_unique<PostgresqlLedgerStore>(conninfo, name);
  store->create(chained_header(header, key), key, {});
  return store;
}

std::unique_ptr<LedgerStore> import_postgresql_ledger(const std::string& conninfo,
                                                      const std::string& name, const Header& header,
                                                      const std::vector<Entry>& entries,
                                                      const std::optional<std::string>& key) {
  const auto used =
      checked_copy(header, entries, key, conninfo_label(conninfo) + " ledger " + name);
  auto store = std::make_unique<PostgresqlLedgerStore>(conninfo, name);
  store->create(header, used, entries);
  return store;
}

std::unique_ptr<LedgerStore> open_postgresql_ledger(const std::string& conninfo,
                                                    const std::string& name,
                                                    const std::optional<std::string>& key,
                                                    const StoreNote& note) {
  auto store = std::make_unique<PostgresqlLedgerStore>(conninfo, name);
  store->load(key);
  store->set_note(note);
  return store;
}

}  // namespace dpb::store
