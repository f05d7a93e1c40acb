#include "store/ledger_chain.hpp"

#include <vector>

#include "store/chain_hash.hpp"

namespace dpb::store {
namespace {

/// The header names the store itself sets.
constexpr const char* kHashName = "hash";
constexpr const char* kKeyCheckName = "key_check";

}  // namespace

Header chained_header(const Header& header, const std::optional<std::string>& key) {
  Header out = header;
  out[kHashName] = key ? "hmac-sha256" : "sha256";
  if (key) out[kKeyCheckName] = key_check(*key);
  return out;
}

std::optional<std::string> checked_key(const Header& header, const std::optional<std::string>& key,
                                       const std::string& where) {
  const auto hash = header.find(kHashName);
  if (hash == header.end() || (hash->second != "sha256" && hash->second != "hmac-sha256"))
    throw StoreError(StoreError::Kind::not_a_ledger,
                     where + ": not a dpbudget ledger (its header names no hash)");
  if (hash->second == "hmac-sha256" && key) {
    const auto check = header.find(kKeyCheckName);
    if (check == header.end() || check->second != key_check(*key))
      throw StoreError(StoreError::Kind::key,
                       where + ": --key-file: not the key this ledger was created with");
  }
  if (hash->second == "sha256" && key)
    throw StoreError(StoreError::Kind::key,
                     where + ": --key-file: this ledger was created without a key");
  return hash->second == "hmac-sha256" ? key : std::nullopt;
}

bool header_keyed(const Header& header) {
  const auto hash = header.find(kHashName);
  return hash != header.end() && hash->second == "hmac-sha256";
}

std::string chained_entry_hash(const std::optional<std::string>& key, std::int64_t seq,
                               const NewEntry& c, const std::string& prev) {
  return chain_hash(key, {"dpbudget-ledger-entry", std::to_string(seq), c.kind, c.name,
                          c.recorded_at, c.recorded_by, c.body, c.note, prev});
}

std::string chained_header_hash(const std::optional<std::string>& key, const Header& header) {
  std::vector<std::string> fields{"dpbudget-ledger-header"};
  for (const auto& [name, value] : header) {
    fields.push_back(name);
    fields.push_back(value);
  }
  return chain_hash(key, fields);
}

}  // namespace dpb::store
