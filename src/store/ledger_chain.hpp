#pragma once
// The hash chain as every backend keeps it (docs/ledger.md#verify): the
// header's "hash" and "key_check" names, the hash of the header and of an
// entry. Computed in the client, so a key never reaches a store's server and
// a ledger copied from one backend to another chains the same.
#include <cstdint>
#include <optional>
#include <string>

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

/// Whether the header's hash is keyed (HMAC-SHA-256).
bool header_keyed(const Header& header);

/// The hash an entry with `content` at place `seq` after `prev` has.
std::string chained_entry_hash(const std::optional<std::string>& key, std::int64_t seq,
                               const NewEntry& content, const std::string& prev);
/// The hash of the header, which the first entry chains to.
std::string chained_header_hash(const std::optional<std::string>& key, const Header& header);

}  // namespace dpb::store
