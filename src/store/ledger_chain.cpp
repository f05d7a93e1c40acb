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

std::optional<std::string> checked_copy(const Header& header, const std::vector<Entry>& entries,
                                        const std::optional<std::string>& key,
                                        const std::string& where) {
  auto used = checked_key(header, key, where);
  if (header_keyed(header) && !used)
    throw StoreError(StoreError::Kind::key,
                     where + ": --key-file: the ledger is keyed; give its key to import it");
  const auto problems = chain_problems(used, header, entries);
  if (!problems.empty())
    throw StoreError(
        StoreError::Kind::not_a_ledger,
        where + ": cannot import: " +
            (problems.front().seq > 0 ? "entry " + std::to_string(problems.front().seq) + " "
                                      : std::string()) +
            problems.front().what);
  return used;
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

std::vector<ChainProblem> chain_problems(const std::string& header_hash, const EntryHasher& hash,
                                         const std::vector<Entry>& entries) {
  std::vector<ChainProblem> problems;
  std::string prev = header_hash;
  std::int64_t expected = 1;
  for (const Entry& e : entries) {
    if (e.seq != expected) {
      const std::string missing = e.seq == expected + 1
                                      ? "entry " + std::to_string(expected) + " is missing"
                                      : "entries " + std::to_string(expected) + " to " +
                                            std::to_string(e.seq - 1) + " are missing";
      problems.push_back({e.seq, e.seq > expected
                                     ? "follows entry " + std::to_string(expected - 1) + ": " +
                                           missing + " (deleted?)"
                                     : "out of place"});
    }
    if (e.prev_hash != prev)
      problems.push_back({e.seq, expected == 1 && e.seq == 1
                                     ? "does not chain to the header (the budget or the "
                                       "header was changed?)"
                                     : "does not chain to the entry before it (an entry "
                                       "removed, inserted or swapped?)"});
    if (hash(e.seq, e.content, e.prev_hash) != e.hash)
      problems.push_back({e.seq, "its hash does not match its content (edited?)"});
    prev = e.hash;
    expected = e.seq + 1;
  }
  return problems;
}

std::vector<ChainProblem> chain_problems(const std::optional<std::string>& key,
                                         const Header& header, const std::vector<Entry>& entries) {
  return chain_problems(
      chained_header_hash(key, header),
      [&key](std::int64_t seq, const NewEntry& content, const std::string& prev) {
        return chained_entry_hash(key, seq, content, prev);
      },
      entries);
}

}  // namespace dpb::store
