#pragma once
// The ledger a contract test runs against (issue 47, docs/ledger_postgresql.md#tests):
// the same test code on either store, chosen by the environment variable
// DPBUDGET_TEST_LEDGER_STORE, "sqlite" (the default: a file under /tmp) or
// "postgresql" (a ledger of its own name on this process's throwaway cluster,
// tests/support/pg_cluster.hpp: started on first use, removed at exit; the
// process exits 77, CTest: skipped, where the server is not installed, unless
// DPBUDGET_REQUIRE_POSTGRESQL=1 makes that a failure). A test writes
// `with({"ledger-add", ...}, ledger.args)` where it wrote `--ledger PATH`.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/pg_cluster.hpp"

namespace dpb::test {

enum class StoreUnderTest { sqlite, postgresql };

/// The store under test, from DPBUDGET_TEST_LEDGER_STORE; anything else than
/// the two names fails rather than silently testing SQLite.
inline StoreUnderTest ledger_store_under_test() {
  const char* given = std::getenv("DPBUDGET_TEST_LEDGER_STORE");
  const std::string store = given ? given : "";
  if (store.empty() || store == "sqlite") return StoreUnderTest::sqlite;
  if (store == "postgresql") return StoreUnderTest::postgresql;
  FAIL("DPBUDGET_TEST_LEDGER_STORE='" << store << "': expected sqlite or postgresql");
  return StoreUnderTest::sqlite;
}

/// A fresh ledger (not yet initialised) on the store under test, and what a
/// test needs to name it, or to name what is not a ledger, on that store.
struct LedgerTarget {
  StoreUnderTest store;
  std::string name;               ///< unique in this process
  std::string path;               ///< SQLite: the file; PostgreSQL: empty
  std::vector<std::string> args;  ///< --ledger X, and --ledger-name N on a server

  explicit LedgerTarget(const std::string& test_name)
      : store(ledger_store_under_test()), name(test_name + "-" + std::to_string(next_serial())) {
    if (store == StoreUnderTest::sqlite) {
      path = file_path(name + ".ledger");
      std::remove(path.c_str());
      args = {"--ledger", path};
    } else {
      args = {"--ledger", cluster().uri("OWNER"), "--ledger-name", name};
    }
  }
  ~LedgerTarget() {
    if (store == StoreUnderTest::sqlite) std::remove(path.c_str());
    if (!unusable_.empty()) std::remove(unusable_.c_str());
  }
  LedgerTarget(const LedgerTarget&) = delete;
  LedgerTarget& operator=(const LedgerTarget&) = delete;

  /// The same ledger as `role` (READER, WRITER, OWNER, ADMIN) on a server;
  /// on SQLite, the file (a file has no roles).
  std::vector<std::string> as_role(const std::string& role) const {
    if (store == StoreUnderTest::sqlite) return args;
    return {"--ledger", cluster().uri(role), "--ledger-name", name};
  }

  /// A ledger that does not exist: a missing file; a name no ledger has.
  std::vector<std::string> missing() const {
    if (store == StoreUnderTest::sqlite) return {"--ledger", path + ".missing"};
    return {"--ledger", cluster().uri("OWNER"), "--ledger-name", name + "-missing"};
  }

  /// A place that holds no ledger at all: a text file; a database of the
  /// server without dpbudget's schema (the cluster's "postgres").
  std::vector<std::string> not_a_ledger() {
    if (store == StoreUnderTest::sqlite) {
      unusable_ = file_path(name + ".txt");
      std::ofstream(unusable_) << "not a database\n";
      return {"--ledger", unusable_};
    }
    std::string uri = cluster().uri("OWNER");
    const std::string db = "/dpbudget";
    REQUIRE(uri.size() > db.size());
    REQUIRE(uri.compare(uri.size() - db.size(), db.size(), db) == 0);
    uri.replace(uri.size() - db.size(), db.size(), "/postgres");
    return {"--ledger", uri, "--ledger-name", name};
  }

  /// Everything the store holds of this ledger, to compare before and after
  /// a command that must write nothing: SQLite, the file byte for byte;
  /// PostgreSQL, its rows in every table (the ledgers row with head_seq, the
  /// header, every entry's columns), read with psql as the administrator.
  std::string state() const {
    if (store == StoreUnderTest::sqlite) {
      std::ifstream in(path, std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      return ss.str();
    }
    const std::string q = "'" + name + "'";
    return psql_output(
        {"SELECT name, created_at, head_seq FROM dpbudget.ledgers WHERE name = " + q,
         "SELECT name, value FROM dpbudget.header WHERE ledger = " + q + " ORDER BY name",
         "SELECT * FROM dpbudget.entries WHERE ledger = " + q + " ORDER BY seq"});
  }

 private:
  std::string unusable_;

  static int next_serial() {
    static int serial = 0;
    return ++serial;
  }
  static std::string file_path(const std::string& leaf) {
    return "/tmp/dpbudget_test_" + std::to_string(::getpid()) + "_" + leaf;
  }
  /// psql's unaligned output of each statement (one -c each: every result
  /// printed) as the administrator; a failure fails the test (an empty
  /// answer would make two states compare equal).
  static std::string psql_output(const std::vector<std::string>& statements) {
    std::string cmd = "psql -X -q -A -v ON_ERROR_STOP=1 '" + cluster().uri("ADMIN") + "'";
    for (const auto& sql : statements) cmd += " -c \"" + sql + "\"";
    FILE* p = ::popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    std::string out;
    std::array<char, 4096> buf{};
    for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), p)) > 0;)
      out.append(buf.data(), n);
    const int status = ::pclose(p);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    return out;
  }
};

}  // namespace dpb::test
