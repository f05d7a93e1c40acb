#pragma once
// Moving a ledger between stores through the binary
// (docs/ledger.md#moving-a-ledger-between-stores), for the tests that do it
// on SQLite alone (tests/e2e/ledger_import_test.cpp) and between SQLite and
// PostgreSQL (tests/postgresql/ledger_import_test.cpp): a ledger with every
// kind of entry, its export, and what the reading verbs print of it.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "e2e/run.hpp"

namespace dpb::test {

/// A path under /tmp for this process (a ledger file, an export), removed
/// before and after.
struct ScratchPath {
  std::string path;
  explicit ScratchPath(const std::string& name)
      : path("/tmp/dpbudget_test_" + std::to_string(::getpid()) + "_transfer_" + name) {
    std::remove(path.c_str());
  }
  ~ScratchPath() { std::remove(path.c_str()); }
  ScratchPath(const ScratchPath&) = delete;
  ScratchPath& operator=(const ScratchPath&) = delete;
};

/// The words naming a ledger: --ledger X [--ledger-name N] [--key-file K].
using LedgerArgs = std::vector<std::string>;

/// A key file's 32 bytes (at least 16 are needed).
inline const char* const kTransferKey = "0123456789abcdef0123456789ABCDEF";
/// Another key, of the same length.
inline const char* const kOtherKey = "fedcba9876543210FEDCBA9876543210";

/// Creates the ledger `at` names and records in it: two releases from a
/// spec, one of DP-SGD flags, by two people, one with a note and a name
/// beyond ASCII, and a void of the second with its reason (4 entries: every
/// field of an entry takes a value other than the default somewhere).
inline void fill_ledger(const LedgerArgs& at, const std::string& spec_path) {
  const std::vector<std::vector<std::string>> steps = {
      {"ledger-init", "--epsilon", "3", "--delta", "1e-6", "--dataset", "census 2026", "--by",
       "officer"},
      {"ledger-add", "--name", "count-1", "--spec", spec_path, "--by", "alice"},
      {"ledger-add", "--name",
       "gr\xc3\xb6\xc3\x9f"
       "e-2",
       "--spec", spec_path, "--by", "bob", "--note", "rerun \"same\" seed\ttabbed"},
      {"ledger-add", "--name", "run-3", "-q", "0.01", "--sigma", "1.1", "--steps", "100", "--by",
       "alice"},
      {"ledger-void", "--entry", "2", "--reason", "aborted before any output", "--by", "officer"},
  };
  for (const auto& s : steps) {
    const Run r = run_dpbudget(with(s, at));
    CAPTURE(s.front());
    CAPTURE(r.err);
    REQUIRE(r.status == 0);
  }
}

/// `ledger-export --format ledger` of the ledger `at` names (exit 0 required).
inline std::string export_of(const LedgerArgs& at) {
  const Run r = run_dpbudget(with({"ledger-export", "--format", "ledger"}, at));
  CAPTURE(r.err);
  REQUIRE(r.status == 0);
  return r.out;
}

/// The head ledger-verify prints of the ledger `at` names (verified).
inline std::string head_of(const LedgerArgs& at) {
  const Run r = run_dpbudget(with({"ledger-verify", "--format", "json"}, at));
  CAPTURE(r.err);
  REQUIRE(r.status == 0);
  const auto doc = nlohmann::json::parse(r.out);
  CHECK(doc.at("results").at(0).at("verified") == true);
  return doc.at("results").at(0).at("head").get<std::string>();
}

/// What the reading verbs print of the ledger `at` names, `label` (how they
/// name it) replaced by LEDGER and runs of spaces by one (a text table is as
/// wide as the name): history (text and JSON), status (every accountant),
/// verify with --head, the spec export. Each must exit 0.
inline std::vector<std::string> views_of(const LedgerArgs& at, const std::string& label,
                                         const std::string& head) {
  std::vector<std::string> out;
  for (const std::vector<std::string>& verb :
       {std::vector<std::string>{"ledger-history"},
        {"ledger-history", "--format", "json"},
        {"ledger-status", "--accountant", "all", "--format", "json"},
        {"ledger-verify", "--head", head},
        {"ledger-export"}}) {
    const Run r = run_dpbudget(with(verb, at));
    CAPTURE(verb.front());
    CAPTURE(r.err);
    CHECK(r.status == 0);
    std::string text = r.out + r.err;
    for (std::size_t p; (p = text.find(label)) != std::string::npos;)
      text.replace(p, label.size(), "LEDGER");
    out.push_back(verb.front() + ":\n" + std::regex_replace(text, std::regex(" +"), " "));
  }
  return out;
}

/// `text` with its `line`-th line (from 1) passed through `edit`.
template <class Edit>
std::string with_line_edited(const std::string& text, std::size_t line, Edit edit) {
  std::size_t start = 0;
  for (std::size_t i = 1; i < line; ++i) start = text.find('\n', start) + 1;
  const std::size_t end = text.find('\n', start);
  return text.substr(0, start) + edit(text.substr(start, end - start)) + text.substr(end);
}

/// `text` without its `line`-th line (from 1).
inline std::string without_line(const std::string& text, std::size_t line) {
  std::size_t start = 0;
  for (std::size_t i = 1; i < line; ++i) start = text.find('\n', start) + 1;
  return text.substr(0, start) + text.substr(text.find('\n', start) + 1);
}

}  // namespace dpb::test
