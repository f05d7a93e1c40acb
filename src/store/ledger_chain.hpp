#pragma once
// The hash chain as every backend keeps it (docs/ledger.md#verify): the
// header's "hash" and "key_check" names, the hash of the header and of an
// entry. Computed in the client, so a key never reaches a store's server and
// a ledger copied from one backend to another chains the same.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "store/ledger_store.hpp"

namespace dpb::store {

/// The header a new ledger stores: `header` with "hash" ("sha256", or
/// "hmac-sha256" with a key) and, with a key, "key_check".
Header chained_header(const Header& header, const std::optional<std::string>& key);

/// Checks a stored header: it names its hash, and `key` fits it (a wrong key,
/// or a key for an unkeyed ledger, is refused). Returns the key to hash with:
/// `key` for a keyed ledger, nullopt otherwise. Throws StoreError (not_a_ledger,
/// key) with messages that start with `where`.
std::optional<std::string> checked_key(const Header& header, const std::optional<std::string>& key,
                                       const std::string& where);

/// For a ledger copied verbatim from another store (import_*_ledger): the key
/// to hash with (checked_key), once `entries` are found to chain from
/// `header` under it. Throws StoreError: key (a keyed header without its key,
/// or with another), not_a_ledger (a break in the chain, named), with
/// messages that start with `where`.
std::optional<std::string> checked_copy(const Header& header, const std::vector<Entry>& entries,
                                        const std::optional<std::string>& key,
                                        const std::string& where);

/// Whether the header's hash is keyed (HMAC-SHA-256).
bool header_keyed(const Header& header);

/// The hash an entry with `content` at place `seq` after `prev` has.
std::string chained_entry_hash(const std::optional<std::string>& key, std::int64_t seq,
                               const NewEntry& content, const std::string& prev);
/// The hash of the header, which the first entry chains to.
std::string chained_header_hash(const std::optional<std::string>& key, const Header& header);

/// The hash an entry at place `seq` with `content` after `prev` must have.
using EntryHasher =
    std::function<std::string(std::int64_t seq, const NewEntry& content, const std::string& prev)>;
/// Every break in the chain of `entries` from `header_hash`, each entry's
/// hash recomputed by `hash` (verify_chain in ledger_store.hpp on a store;
/// chain_problems below on a ledger held outside any store).
std::vector<ChainProblem> chain_problems(const std::string& header_hash, const EntryHasher& hash,
                                         const std::vector<Entry>& entries);
/// The same for a ledger held outside any store (an export read back): its
/// header as stored and the key it is hashed with (nullopt: SHA-256).
std::vector<ChainProblem> chain_problems(const std::optional<std::string>& key,
                                         const Header& header, const std::vector<Entry>& entries);

}  // namespace dpb::store
