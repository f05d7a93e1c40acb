#pragma once
// The store of a dataset's ledger (docs/ledger.md#store): persistence only.
// A ledger is a header (named texts: the budget and how it is read, set once
// at creation) and entries appended one by one, each chained to the one
// before by a hash. The store never reads what a header value or an entry's
// body means: deciding whether an entry may be appended is the caller's, done
// inside the store's write transaction (append_if), so that two writers never
// both decide on the same state. One interface; SQLite is the embedded
// backend (sqlite_ledger_store.cpp), a shared server may be another.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace dpb::store {

/// The header: values by name, fixed when the ledger is created.
using Header = std::map<std::string, std::string>;

/// An entry as the caller gives it.
struct NewEntry {
  std::string kind;  ///< e.g. "release" or "void": the caller's vocabulary
  std::string name;
  std::string recorded_at;  ///< a time, as the caller writes it
  std::string recorded_by;
  std::string body;  ///< the caller's JSON text; the store keeps it byte for byte
  std::string note;
};

/// An entry as stored: its place (1, 2, ...) and its link in the chain.
struct Entry {
  std::int64_t seq = 0;
  NewEntry content;
  std::string prev_hash;  ///< the hash before it (the header's for entry 1), hex
  std::string hash;       ///< hex SHA-256 (or HMAC-SHA-256 with a key) of it and prev_hash
};

/// Why a store could not do what was asked; the ledger is as it was (but
/// in_doubt: whether the last entry was appended is unknown).
class StoreError : public std::runtime_error {
 public:
  enum class Kind {
    not_found,     ///< no such file
    exists,        ///< create: the file is already there
    not_a_ledger,  ///< not a database, or a database that is no ledger, or damaged
    newer_schema,  ///< written by a newer dpbudget
    key,           ///< a keyed ledger without its key, or with another key
    io,            ///< cannot read or write (permissions, a full disk, a lock held too long)
    permission,    ///< a server refused this role the right (SQLSTATE 42501); nothing written
    /// The connection to a server was lost while COMMIT was in flight and the
    /// outcome could not be established: the entry may or may not be recorded.
    in_doubt,
  };
  StoreError(Kind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  Kind kind() const noexcept { return kind_; }

 private:
  Kind kind_;
};

/// What verify_chain finds wrong at one place.
struct ChainProblem {
  std::int64_t seq = 0;  ///< 0: the header
  std::string what;
};

class LedgerStore {
 public:
  virtual ~LedgerStore() = default;
  virtual const Header& header() const = 0;
  /// Every entry in order, read in one transaction.
  virtual std::vector<Entry> entries() = 0;
  /// In one write transaction: reads every entry, asks `decide` (which sees
  /// them as they are now; no other writer runs until the transaction ends),
  /// and appends what it returns, chained; nothing when it returns nullopt.
  /// A crash leaves the ledger before or after the whole entry.
  using Decide = std::function<std::optional<NewEntry>(const std::vector<Entry>&)>;
  virtual std::optional<Entry> append_if(const Decide& decide) = 0;
  /// Whether entries' hashes are keyed (HMAC); a keyed store was opened with its key.
  virtual bool keyed() const = 0;
  /// The hash an entry after `prev` with `content` and place `seq` must have.
  virtual std::string entry_hash(std::int64_t seq, const NewEntry& content,
                                 const std::string& prev) const = 0;
  /// The hash the first entry chains to: the header's.
  virtual std::string header_hash() const = 0;
};

/// Every break in the chain of `entries` (docs/ledger.md#verify): a place out
/// of order or missing, a prev_hash that is not the hash before, a hash that
/// is not its content's. Empty when the chain holds.
std::vector<ChainProblem> verify_chain(const LedgerStore& store, const std::vector<Entry>& entries);

/// Creates a ledger file with owner-only permissions (0600); refuses an
/// existing file. `key`: the HMAC key's bytes, or nullopt for plain SHA-256.
std::unique_ptr<LedgerStore> create_sqlite_ledger(const std::string& path, const Header& header,
                                                  const std::optional<std::string>& key);
/// Creates a ledger file holding a ledger copied from another store
/// (ledger-import, docs/ledger.md#moving-a-ledger-between-stores): `header`
/// as that store keeps it ("hash" and, keyed, "key_check" included) and
/// `entries` with their own places and hashes, written in the one transaction
/// that creates the file's schema. Before anything is written the chain is
/// recomputed under `key` (checked_copy in ledger_chain.hpp): the copy's head
/// is the source's. Refuses an existing file (exists), a keyed ledger without
/// its key or with another (key), a chain that does not hold (not_a_ledger).
std::unique_ptr<LedgerStore> import_sqlite_ledger(const std::string& path, const Header& header,
                                                  const std::vector<Entry>& entries,
                                                  const std::optional<std::string>& key);
/// Opens a ledger file: checks that it is a ledger, its schema version, and
/// the key when it is keyed (nullopt: none given; a keyed ledger may then be
/// read, and verified without its key only as far as the chain's links).
std::unique_ptr<LedgerStore> open_sqlite_ledger(const std::string& path, bool writable,
                                                const std::optional<std::string>& key);

/// The schema version this build writes and reads.
inline constexpr int kLedgerSchemaVersion = 1;

}  // namespace dpb::store
