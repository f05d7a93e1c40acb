// The SQLite backend of the ledger store (docs/ledger.md#store): one file per
// ledger, written in rollback-journal mode with synchronous=FULL so that a
// transaction is whole on disk or not there at all; every append is one
// BEGIN IMMEDIATE transaction (the write lock taken before anything is read).
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "store/ledger_chain.hpp"
#include "store/ledger_store.hpp"
#include "store/libcrypto_library.hpp"

namespace dpb::store {
namespace {

/// SQLite's application_id of a dpbudget ledger ("dpbL"): a database that
/// lacks it is some other program's, refused as "not a ledger".
constexpr int kApplicationId = 0x6470624c;
/// How long a writer waits for another's transaction to end before giving
/// up: an append holds the lock for milliseconds, so 60 s is only reached
/// when a process holds it without working (stopped, or an sqlite3 shell).
constexpr int kBusyTimeoutMs = 60000;

/// SQLite's message, with what it means when the file cannot be written.
std::string sqlite_message(sqlite3* db) {
  if (!db) return "out of memory";
  std::string message = sqlite3_errmsg(db);
  // The system's reason behind an I/O error: "No space left on device",
  // "File too large", "Permission denied".
  if (const int e = sqlite3_system_errno(db);
      e != 0 && (sqlite3_errcode(db) & 0xff) == SQLITE_IOERR)
    message += std::string(" (") + std::strerror(e) + ")";
  if ((sqlite3_extended_errcode(db) & 0xff) == SQLITE_READONLY)
    message +=
        " (the file, or its directory, where SQLite writes its journal beside it, is not "
        "writable)";
  return message;
}

StoreError::Kind kind_of(int code) {
  switch (code & 0xff) {
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return StoreError::Kind::not_a_ledger;
    default:
      return StoreError::Kind::io;
  }
}

class Statement {
 public:
  Statement(sqlite3* db, const char* sql, const std::string& path) : db_(db), path_(path) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) fail("cannot read");
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  void bind(int i, const std::string& text) {
    sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
  void bind(int i, std::int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  /// true: a row; false: done.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail("cannot read or write");
  }
  std::string text(int col) const {
    const auto* p = sqlite3_column_text(stmt_, col);
    return p ? std::string(reinterpret_cast<const char*>(p),
                           static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col)))
             : std::string();
  }
  std::int64_t integer(int col) const { return sqlite3_column_int64(stmt_, col); }
  [[noreturn]] void fail(const char* doing) const {
    const int code = sqlite3_extended_errcode(db_);
    throw StoreError(kind_of(code), path_ + ": " + doing + ": " + sqlite_message(db_));
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  const std::string& path_;
};

class SqliteLedgerStore final : public LedgerStore {
 public:
  SqliteLedgerStore(const std::string& path, bool writable) : path_(path) {
    // A reader opens the file read-write too when it may: after a crash the
    // file has a hot journal, which only a connection that may write can roll
    // back (SQLite refuses a read-only one). Nothing is written otherwise. A
    // file the process may not write is opened read-only for reading.
    const bool may_write = writable || ::access(path.c_str(), W_OK) == 0;
    const int flags = may_write ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY;
    if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
      const int code = db_ ? sqlite3_extended_errcode(db_) : SQLITE_NOMEM;
      const std::string why = sqlite_message(db_);
      sqlite3_close(db_);
      db_ = nullptr;
      throw StoreError(kind_of(code), path + ": cannot open: " + why);
    }
    sqlite3_busy_timeout(db_, kBusyTimeoutMs);
    // Rollback journal (one file per ledger; no -wal beside it once closed),
    // and every commit synced before it returns: a transaction survives a
    // crash or a power cut whole, or is rolled back at the next open. A file
    // that is no database fails here; the constructor then closes what it
    // opened (no destructor runs for an object not made).
    try {
      exec("PRAGMA journal_mode=DELETE", "cannot open");
      exec("PRAGMA synchronous=FULL", "cannot open");
    } catch (...) {
      sqlite3_close(db_);
      db_ = nullptr;
      throw;
    }
  }
  ~SqliteLedgerStore() override { sqlite3_close(db_); }
  SqliteLedgerStore(const SqliteLedgerStore&) = delete;
  SqliteLedgerStore& operator=(const SqliteLedgerStore&) = delete;

  void exec(const char* sql, const char* doing) {
    char* message = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) != SQLITE_OK) {
      const int code = sqlite3_extended_errcode(db_);
      std::string why = sqlite_message(db_);
      sqlite3_free(message);
      throw StoreError(kind_of(code), path_ + ": " + doing + ": " + why);
    }
  }

  /// Creates the schema, the header as stored (chained_header's, or a copied
  /// ledger's) and `entries` verbatim (a copied ledger's, checked by
  /// checked_copy) in one transaction.
  void create(const Header& stored_header, const std::optional<std::string>& key,
              const std::vector<Entry>& entries) {
    exec("BEGIN IMMEDIATE", "cannot create");
    try {
      exec(
          "CREATE TABLE header (name TEXT PRIMARY KEY, value TEXT NOT NULL);"
          "CREATE TABLE entries (seq INTEGER PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT "
          "NULL, recorded_at TEXT NOT NULL, recorded_by TEXT NOT NULL, body TEXT NOT NULL, "
          "note TEXT NOT NULL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL);",
          "cannot create");
      exec(("PRAGMA application_id=" + std::to_string(kApplicationId)).c_str(), "cannot create");
      exec(("PRAGMA user_version=" + std::to_string(kLedgerSchemaVersion)).c_str(),
           "cannot create");
      header_ = stored_header;
      key_ = checked_key(header_, key, path_);
      for (const auto& [name, value] : header_) {
        Statement insert(db_, "INSERT INTO header (name, value) VALUES (?, ?)", path_);
        insert.bind(1, name);
        insert.bind(2, value);
        insert.step();
      }
      for (const Entry& e : entries) insert_entry(e);
      exec("COMMIT", "cannot create");
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }

  /// Checks an opened file is a ledger of this schema, and reads its header.
  void load(const std::optional<std::string>& key) {
    exec("BEGIN", "cannot read");
    try {
      Statement app(db_, "PRAGMA application_id", path_);
      app.step();
      const auto id = app.integer(0);
      Statement version(db_, "PRAGMA user_version", path_);
      version.step();
      const auto schema = version.integer(0);
      if (id != kApplicationId)
        throw StoreError(
            StoreError::Kind::not_a_ledger,
            path_ + ": not a dpbudget ledger (create one with 'dpbudget ledger-init')");
      if (schema > kLedgerSchemaVersion)
        throw StoreError(StoreError::Kind::newer_schema,
                         path_ + ": written by a newer dpbudget (ledger schema " +
                             std::to_string(schema) + "; this one reads up to " +
                             std::to_string(kLedgerSchemaVersion) + ")");
      if (schema < 1)
        throw StoreError(StoreError::Kind::not_a_ledger,
                         path_ + ": not a dpbudget ledger (no schema version)");
      Statement rows(db_, "SELECT name, value FROM header", path_);
      while (rows.step()) header_[rows.text(0)] = rows.text(1);
      exec("COMMIT", "cannot read");
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
    key_ = checked_key(header_, key, path_);
  }

  const Header& header() const override { return header_; }
  bool keyed() const override { return header_keyed(header_); }

  std::vector<Entry> read_entries() {
    std::vector<Entry> out;
    Statement rows(db_,
                   "SELECT seq, kind, name, recorded_at, recorded_by, body, note, prev_hash, hash "
                   "FROM entries ORDER BY seq",
                   path_);
    while (rows.step()) {
      Entry e;
      e.seq = rows.integer(0);
      e.content = {rows.text(1), rows.text(2), rows.text(3),
                   rows.text(4), rows.text(5), rows.text(6)};
      e.prev_hash = rows.text(7);
      e.hash = rows.text(8);
      out.push_back(std::move(e));
    }
    return out;
  }

  std::vector<Entry> entries() override {
    exec("BEGIN", "cannot read");
    try {
      auto out = read_entries();
      exec("COMMIT", "cannot read");
      return out;
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }

  std::optional<Entry> append_if(const Decide& decide) override {
    if (keyed() && !key_)
      throw StoreError(StoreError::Kind::key,
                       path_ + ": --key-file: this ledger is keyed; give its key to write to it");
    exec("BEGIN IMMEDIATE", "cannot lock for writing");
    try {
      const auto current = read_entries();
      auto content = decide(current);
      if (!content) {
        exec("ROLLBACK", "cannot end the transaction");
        return std::nullopt;
      }
      Entry e;
      e.seq = current.empty() ? 1 : current.back().seq + 1;
      e.content = std::move(*content);
      e.prev_hash = current.empty() ? header_hash() : current.back().hash;
      e.hash = entry_hash(e.seq, e.content, e.prev_hash);
      insert_entry(e);
      exec("COMMIT", "cannot write");
      return e;
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }

  std::string entry_hash(std::int64_t seq, const NewEntry& c,
                         const std::string& prev) const override {
    return chained_entry_hash(key_, seq, c, prev);
  }

  std::string header_hash() const override { return chained_header_hash(key_, header_); }

 private:
  /// Inserts `e` as it is (inside the caller's transaction).
  void insert_entry(const Entry& e) {
    Statement insert(db_,
                     "INSERT INTO entries (seq, kind, name, recorded_at, recorded_by, body, "
                     "note, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     path_);
    insert.bind(1, e.seq);
    insert.bind(2, e.content.kind);
    insert.bind(3, e.content.name);
    insert.bind(4, e.content.recorded_at);
    insert.bind(5, e.content.recorded_by);
    insert.bind(6, e.content.body);
    insert.bind(7, e.content.note);
    insert.bind(8, e.prev_hash);
    insert.bind(9, e.hash);
    insert.step();
  }

  std::string path_;
  sqlite3* db_ = nullptr;
  Header header_;
  std::optional<std::string> key_;
};

}  // namespace

namespace {

/// Makes the file `path` (owner-only, only if absent) and creates in it a
/// ledger with `stored_header` and `entries` in one transaction; on any
/// failure the file is removed.
std::unique_ptr<LedgerStore> create_ledger_file(const std::string& path,
                                                const Header& stored_header,
                                                const std::optional<std::string>& key,
                                                const std::vector<Entry>& entries) {
  // The chain's libcrypto is opened before the file exists: a machine
  // without it gets one line and no file.
  (void)crypto();
  // The file is made here, owner-only and only if absent, before SQLite
  // opens it: SQLite would create it with the process's umask.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int e = errno;
    throw StoreError(e == EEXIST ? StoreError::Kind::exists : StoreError::Kind::io,
                     path + ": cannot create: " +
                         (e == EEXIST ? std::string("the file exists (a ledger is never replaced)")
                                      : std::string(std::strerror(e))));
  }
  ::close(fd);
  try {
    auto store = std::make_unique<SqliteLedgerStore>(path, true);
    store->create(stored_header, key, entries);
    return store;
  } catch (...) {
    ::unlink(path.c_str());  // nothing half-made is left behind
    throw;
  }
}

}  // namespace

std::unique_ptr<LedgerStore> create_sqlite_ledger(const std::string& path, const Header& header,
                                                  const std::optional<std::string>& key) {
  return create_ledger_file(path, chained_header(header, key), key, {});
}

std::unique_ptr<LedgerStore> import_sqlite_ledger(const std::string& path, const Header& header,
                                                  const std::vector<Entry>& entries,
                                                  const std::optional<std::string>& key) {
  const auto used = checked_copy(header, entries, key, path);
  return create_ledger_file(path, header, used, entries);
}

std::unique_ptr<LedgerStore> open_sqlite_ledger(const std::string& path, bool writable,
                                                const std::optional<std::string>& key) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int e = errno;
    throw StoreError(e == ENOENT ? StoreError::Kind::not_found : StoreError::Kind::io,
                     path + ": cannot open: " + std::strerror(e) +
                         (e == ENOENT ? " (create a ledger with 'dpbudget ledger-init')" : ""));
  }
  if (!S_ISREG(st.st_mode))
    throw StoreError(StoreError::Kind::not_a_ledger, path + ": not a dpbudget ledger (not a file)");
  auto store = std::make_unique<SqliteLedgerStore>(path, writable);
  store->load(key);
  return store;
}

std::vector<ChainProblem> verify_chain(const LedgerStore& store,
                                       const std::vector<Entry>& entries) {
  return chain_problems(
      store.header_hash(),
      [&store](std::int64_t seq, const NewEntry& content, const std::string& prev) {
        return store.entry_hash(seq, content, prev);
      },
      entries);
}

}  // namespace dpb::store
