#pragma once
// The hash of the ledger's chain (docs/ledger.md#verify): SHA-256 of the
// fields, each prefixed with its length so that no two lists of fields hash
// the same text; HMAC-SHA-256 under a key when the ledger has one. OpenSSL's
// libcrypto computes both (opened at run time: libcrypto_library.hpp).
#include <optional>
#include <string>
#include <vector>

namespace dpb::store {

/// Lower-case hex of SHA-256 (no key) or HMAC-SHA-256 (key) of the fields,
/// each written as its length in decimal, ':' and its bytes.
std::string chain_hash(const std::optional<std::string>& key,
                       const std::vector<std::string>& fields);

/// What the header keeps of a key so that a wrong key is told from an edit:
/// HMAC-SHA-256 of a fixed text under it.
std::string key_check(const std::string& key);

}  // namespace dpb::store
