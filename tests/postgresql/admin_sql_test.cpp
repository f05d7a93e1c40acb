// docs/ledger_postgresql.sql, the administrator's SQL (issue 47;
// docs/ledger_postgresql.md#roles-and-grants), applied by the superuser to a
// fresh throwaway cluster (tests/support/pg_cluster.hpp; exit 77, CTest:
// skipped, without the server; before it, a role that may not create the
// schema is told to ask for that file); then the ledger verbs through the built
// binary as roles given its group roles: dpb_owner (dpbudget_init) creates a
// ledger, dpb_writer (dpbudget_writer) adds and voids but may not create one,
// dpb_reader (dpbudget_reader) reads and verifies but its add is refused with
// nothing recorded; nobody but the schema's owner changes an entry. Also: the
// file's schema and the one ledger-init creates (written twice) are the same.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "e2e/run.hpp"
#include "support/pg_cluster.hpp"
#include "support/temp_file.hpp"

using namespace dpb::test;

namespace {

const std::string kSqlFile = DPBUDGET_SOURCE_DIR "/docs/ledger_postgresql.sql";

std::vector<std::string> as(const std::string& role) {
  return {"--ledger", cluster().uri(role), "--ledger-name", "shared"};
}

/// psql -c SQL as `role`: its exit status (0: done; 1 or 3: refused).
int psql_as(const std::string& role, const std::string& sql) {
  return std::system(("psql -X -q -v ON_ERROR_STOP=1 '" + cluster().uri(role) + "' -c \"" + sql +
                      "\" 2>/dev/null >/dev/null")
                         .c_str());
}

std::size_t entries_in(const std::string& role) {
  const Run h = run_dpbudget(with({"ledger-history", "--format", "json"}, as(role)));
  REQUIRE(h.status == 0);
  std::size_t n = 0;
  for (std::size_t at = 0; (at = h.out.find("\"entry\":", at)) != std::string::npos; ++at) ++n;
  return n;
}

}  // namespace

TEST_CASE("postgresql admin SQL: applied once, then each role does what its grants allow") {
  const auto& c = cluster();
  // Before it, a role that may not create the schema is told which file to ask for.
  const Run no_schema =
      run_dpbudget(with({"ledger-init", "--epsilon", "1", "--delta", "1e-6"}, as("WRITER")));
  CAPTURE(no_schema.err);
  CHECK(no_schema.status == 7);
  CHECK(no_schema.err.find("docs/ledger_postgresql.sql") != std::string::npos);
  REQUIRE(c.psql_file("ADMIN", kSqlFile));
  // Applying it again is refused as a whole (the schema exists): no change.
  CHECK_FALSE(c.psql_file("ADMIN", kSqlFile));
  REQUIRE(psql_as("ADMIN",
                  "GRANT dpbudget_init TO dpb_owner; GRANT dpbudget_writer TO dpb_writer; "
                  "GRANT dpbudget_reader TO dpb_reader;") == 0);
  const TempFile spec("pg_admin_spec.json", R"({"laplace": {"scale": 4}})");

  // The writer may not create a ledger; dpb_owner, given dpbudget_init, may.
  const Run refused_init =
      run_dpbudget(with({"ledger-init", "--epsilon", "1", "--delta", "1e-6"}, as("WRITER")));
  CAPTURE(refused_init.err);
  CHECK(refused_init.status == 7);
  CHECK(refused_init.err.find("permission denied") != std::string::npos);
  const Run init =
      run_dpbudget(with({"ledger-init", "--epsilon", "1", "--delta", "1e-6"}, as("OWNER")));
  CAPTURE(init.err);
  REQUIRE(init.status == 0);

  // The writer adds and voids.
  const Run add =
      run_dpbudget(with({"ledger-add", "--name", "a", "--spec", spec.path}, as("WRITER")));
  CAPTURE(add.err);
  CHECK(add.status == 0);
  const Run add2 =
      run_dpbudget(with({"ledger-add", "--name", "b", "--spec", spec.path}, as("WRITER")));
  CHECK(add2.status == 0);
  const Run voided =
      run_dpbudget(with({"ledger-void", "--entry", "2", "--reason", "never ran"}, as("WRITER")));
  CAPTURE(voided.err);
  CHECK(voided.status == 0);
  CHECK(entries_in("WRITER") == 3);

  // The reader reads, verifies; its add is refused and records nothing.
  for (const char* verb : {"ledger-status", "ledger-history", "ledger-verify", "ledger-export"}) {
    const Run r = run_dpbudget(with({verb}, as("READER")));
    CAPTURE(verb);
    CAPTURE(r.err);
    CHECK(r.status == 0);
  }
  const Run reader_add =
      run_dpbudget(with({"ledger-add", "--name", "c", "--spec", spec.path}, as("READER")));
  CAPTURE(reader_add.err);
  CHECK(reader_add.status == 7);
  CHECK(reader_add.err.find("permission denied") != std::string::npos);
  // One line naming the role and the rights adding needs.
  CHECK(reader_add.err.find("ledger shared: the role dpb_reader may not add to this ledger "
                            "(permission denied for table ledgers): adding needs UPDATE "
                            "(head_seq) on dpbudget.ledgers and INSERT on dpbudget.entries, "
                            "which an administrator grants with the role dpbudget_writer") !=
        std::string::npos);
  CHECK(reader_add.err.find('\n') == reader_add.err.size() - 1);
  CHECK(reader_add.err.find("; nothing was recorded\n") != std::string::npos);
  CHECK(entries_in("READER") == 3);

  // Nobody but the schema's owner (here the superuser) changes what is recorded.
  for (const char* role : {"OWNER", "WRITER", "READER"}) {
    CAPTURE(role);
    CHECK(psql_as(role, "UPDATE dpbudget.entries SET note = 'x'") != 0);
    CHECK(psql_as(role, "DELETE FROM dpbudget.entries") != 0);
    CHECK(psql_as(role, "DELETE FROM dpbudget.header") != 0);
    CHECK(psql_as(role, "UPDATE dpbudget.meta SET value = 'x'") != 0);
  }
  CHECK(psql_as("READER", "INSERT INTO dpbudget.ledgers (name) VALUES ('r')") != 0);
  CHECK(entries_in("OWNER") == 3);
  CHECK(run_dpbudget(with({"ledger-verify"}, as("READER"))).status == 0);
}

namespace {

/// The URI of `role` on another database of the cluster.
std::string uri_of(const std::string& role, const std::string& database) {
  const std::string uri = cluster().uri(role);
  return uri.substr(0, uri.rfind('/') + 1) + database;
}

/// What psql -At prints for `sql` on `uri` (the command must succeed).
std::string psql_rows(const std::string& uri, const std::string& sql) {
  FILE* p =
      ::popen(("psql -X -q -At -v ON_ERROR_STOP=1 '" + uri + "' -c \"" + sql + "\"").c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, p)) > 0;) out.append(buffer, n);
  REQUIRE(::pclose(p) == 0);
  return out;
}

}  // namespace

TEST_CASE(
    "postgresql admin SQL: the file's schema is the one ledger-init creates, column for column") {
  // The schema is written twice: in docs/ledger_postgresql.sql for
  // administrators and in the store for a ledger-init that may create it
  // (src/store/postgresql_ledger_store.cpp). Two fresh databases, one made
  // each way, must hold the same tables, columns and constraints.
  const auto& c = cluster();
  for (const char* database : {"by_file", "by_init"})
    REQUIRE(std::system(("psql -X -q -v ON_ERROR_STOP=1 '" + c.uri("ADMIN") +
                         "' -c 'CREATE DATABASE " + database + " OWNER dpb_owner' >/dev/null")
                            .c_str()) == 0);
  REQUIRE(std::system(("psql -X -q -v ON_ERROR_STOP=1 '" + uri_of("ADMIN", "by_file") + "' -f '" +
                       kSqlFile + "' >/dev/null")
                          .c_str()) == 0);
  REQUIRE(run_dpbudget({"ledger-init", "--ledger", uri_of("OWNER", "by_init"), "--ledger-name",
                        "probe", "--epsilon", "1", "--delta", "1e-6"})
              .status == 0);
  const std::string columns =
      "SELECT table_name, column_name, data_type, is_nullable, coalesce(column_default, '') "
      "FROM information_schema.columns WHERE table_schema = 'dpbudget' ORDER BY 1, 2";
  const std::string constraints =
      "SELECT conrelid::regclass, contype, pg_get_constraintdef(oid) FROM pg_constraint "
      "WHERE connamespace = 'dpbudget'::regnamespace ORDER BY 1, 2, 3";
  const std::string meta = "SELECT key, value FROM dpbudget.meta ORDER BY 1";
  for (const std::string& sql : {columns, constraints, meta}) {
    CAPTURE(sql);
    const std::string by_file = psql_rows(uri_of("ADMIN", "by_file"), sql);
    CHECK(!by_file.empty());
    CHECK(by_file == psql_rows(uri_of("ADMIN", "by_init"), sql));
  }
}
