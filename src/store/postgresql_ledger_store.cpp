// The PostgreSQL backend of the ledger store (issue 47, design in
// docs/ledger_postgresql.md). The tables are the SQLite store's with the
// ledger's name in front; the chain is computed in the client
// (ledger_chain.hpp), so the key never reaches the server and a ledger copied
// between backends chains the same. Every append is one READ COMMITTED
// transaction that first locks the ledger's row in dpbudget.ledgers (FOR
// UPDATE, which also needs UPDATE on that table: a read-only role is refused
// there, before it reads anything), then reads, decides and appends.
#include "store/postgresql_ledger_store.hpp"

#include <chrono>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

#include "store/ledger_chain.hpp"
#include "store/libcrypto_library.hpp"
#include "store/libpq_library.hpp"

namespace dpb::store {
namespace {

/// How long an append waits for another writer's lock on the same ledger
/// (the SQLite store's busy timeout).
constexpr const char* kPgLockTimeout = "60s";
/// Reconnections tried when the connection drops while COMMIT is in flight,
/// and the wait before each.
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

/// libpq's message on one line (it writes some over two or three).
std::string one_line(std::string text) {
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

/// What a failed statement means for the caller, by its SQLSTATE.
StoreError::Kind pg_kind(const std::string& state) {
  if (state == "42P01" || state == "3F000") return StoreError::Kind::not_a_ledger;
  if (state == "23505") return StoreError::Kind::exists;
  return StoreError::Kind::io;
}

std::string pg_hint(const std::string& state) {
  if (state == "42501") return " (this role may not do that: ask for the writer's grants)";
  if (state == "42P01" || state == "3F000")
    return " (no dpbudget ledger schema in this database: ledger-init creates it where the "
           "role may, or an administrator runs docs/ledger_postgresql.sql)";
  if (state == "55P03") return " (another writer held the ledger for 60 s)";
  return "";
}

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
    const char* keywords[] = {"connect_timeout", "application_name", "dbname", "client_encoding",
                              nullptr};
    const char* values[] = {"10", "dpbudget", conninfo.c_str(), "UTF8", nullptr};
    conn_ = pq().PQconnectdbParams(keywords, values, 1);
    if (!conn_ || pq().PQstatus(conn_) != CONNECTION_OK) {
      const std::string why = conn_ ? one_line(pq().PQerrorMessage(conn_)) : "out of memory";
      pq().PQfinish(conn_);
      conn_ = nullptr;
      throw StoreError(StoreError::Kind::io, label_ + ": cannot connect: " + why);
    }
  }
  ~PgConnection() { pq().PQfinish(conn_); }
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  const std::string& label() const { return label_; }
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
    const auto status = r ? pq().PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return r;
    const char* state_field = r ? pq().PQresultErrorField(r.get(), PG_DIAG_SQLSTATE) : nullptr;
    const std::string state = state_field ? state_field : "";
    // A drop shows as an error libpq made itself (no SQLSTATE: "server closed
    // the connection unexpectedly"), a connection exception (class 08) or the
    // server going down (57P01 to 57P03), sometimes before PQstatus says so.
    dropped_ = lost() || state.empty() || state.rfind("08", 0) == 0 || state == "57P01" ||
               state == "57P02" || state == "57P03";
    if (dropped_)
      throw StoreError(StoreError::Kind::io, label_ + ": " + doing +
                                                 ": the connection to the server was lost (" +
                                                 one_line(pq().PQerrorMessage(conn_)) + ")");
    const char* primary = r ? pq().PQresultErrorField(r.get(), PG_DIAG_MESSAGE_PRIMARY) : nullptr;
    throw StoreError(pg_kind(state),
                     label_ + ": " + doing + ": " +
                         (primary ? std::string(primary) : one_line(pq().PQerrorMessage(conn_))) +
                         pg_hint(state));
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
          if (std::string(e.what()).find("permission denied") == std::string::npos) throw;
          throw StoreError(StoreError::Kind::io,
                           db_.label() +
                               ": cannot create the schema dpbudget: this role may not (an "
                               "administrator creates it with docs/ledger_postgresql.sql)");
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

  std::optional<Entry> append_if(const Decide& decide) override {
    if (keyed() && !key_)
      throw StoreError(StoreError::Kind::key, db_.label() +
                                                  ": --key-file: this ledger is keyed; give its "
                                                  "key to write to it");
    db_.exec("BEGIN ISOLATION LEVEL READ COMMITTED", "cannot lock for writing");
    Entry e;
    try {
      db_.exec((std::string("SET LOCAL lock_timeout = '") + kPgLockTimeout + "'").c_str(),
               "cannot lock for writing");
      const auto lock = db_.exec("SELECT head_seq FROM dpbudget.ledgers WHERE name = $1 FOR UPDATE",
                                 {name_}, "cannot lock for writing");
      if (pq().PQntuples(lock.get()) == 0)
        throw StoreError(StoreError::Kind::not_found, db_.label() + ": no such ledger");
      const auto current = read_entries();
      auto content = decide(current);
      if (!content) {
        db_.exec("ROLLBACK", "cannot end the transaction");
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
    commit(e);
    return e;
  }

  std::string entry_hash(std::int64_t seq, const NewEntry& c,
                         const std::string& prev) const override {
    return chained_entry_hash(key_, seq, c, prev);
  }
  std::string header_hash() const override { return chained_header_hash(key_, header_); }

 private:
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
  /// cannot know whether it took effect: reconnect and look for the entry's
  /// own hash at its place (docs/ledger_postgresql.md, dropped connections).
  void commit(const Entry& e) {
    try {
      db_.exec("COMMIT", "cannot write");
      return;
    } catch (const StoreError&) {
      if (!db_.dropped()) throw;
    }
    if (!db_.reconnect())
      throw StoreError(StoreError::Kind::io,
                       db_.label() + ": the connection was lost while committing entry " +
                           std::to_string(e.seq) +
                           " and the server cannot be reached again: whether it was recorded is "
                           "unknown (ledger-history shows it)");
    const auto found = db_.exec("SELECT hash FROM dpbudget.entries WHERE ledger = $1 AND seq = $2",
                                {name_, std::to_string(e.seq)}, "cannot read after reconnecting");
    if (pq().PQntuples(found.get()) == 1 && cell(found, 0, 0) == e.hash) return;
    throw StoreError(StoreError::Kind::io,
                     db_.label() +
                         ": the connection was lost while committing; nothing was "
                         "recorded");
  }

  PgConnection db_;
  std::string name_;
  Header header_;
  std::optional<std::string> key_;
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
                                                    const std::optional<std::string>& key) {
  auto store = std::make_unique<PostgresqlLedgerStore>(conninfo, name);
  store->load(key);
  return store;
}

}  // namespace dpb::store
