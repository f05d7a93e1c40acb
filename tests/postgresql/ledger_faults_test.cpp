// ledger-add on a PostgreSQL ledger when things go wrong, through the built
// binary against a throwaway cluster (tests/support/pg_cluster.hpp; exit 77,
// CTest: skipped, without the server), each outcome made on purpose
// (docs/ledger_postgresql.md, "A dropped connection or a server restart
// during add"; README "Exit status"):
//   - the server down: exit 7, one line, "cannot connect ...; nothing was
//     recorded" (a reader's verb: 7 without that clause);
//   - a serialization failure (40001) twice, injected by a trigger: two
//     `dpbudget: note: ... retrying (2 of 3)`, `(3 of 3)` lines, then exit 0,
//     recorded once; a deadlock (40P01) every time: the notes, then exit 7,
//     ", 3 times; nothing was recorded", nothing recorded;
//   - the server crashed (pg_ctl stop -m immediate) while COMMIT is in
//     flight (a deferred trigger holds COMMIT open for 2 s, the test waits
//     until pg_stat_activity shows it): restarted at once, the add
//     reconnects, looks, and exits 7 "it is not in the ledger; nothing was
//     recorded"; kept down past the reconnection budget (2.1 s), the add
//     exits 9 "outcome unknown: ...: the entry may or may not be recorded;
//     run ledger-history / ledger-status to see". Either way the history then
//     holds no such entry (the crash aborted it) and verify passes.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "e2e/run.hpp"
#include "support/pg_cluster.hpp"
#include "support/temp_file.hpp"

using namespace dpb::test;

namespace {

constexpr int kUnavailable = 7, kOutcomeUnknown = 9;

/// psql -c SQL as `role` (the ledgers' owner creates the test's triggers),
/// its output (tuples only, unaligned).
std::string psql_as(const std::string& role, const std::string& sql) {
  const Run r = run_shell("psql -X -q -tA -v ON_ERROR_STOP=1 '" + cluster().uri(role) + "' -c \"" +
                          sql + "\"");
  REQUIRE(r.status == 0);
  return r.out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    out.push_back(text.substr(start, end - start));
  if (start < text.size()) out.push_back(text.substr(start));
  return out;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

const TempFile& spec() {
  static const TempFile s("pg_faults_spec.json", R"({"laplace": {"scale": 100}})");
  return s;
}

/// A ledger of its own for each test, created with one entry, "first".
struct Ledger {
  explicit Ledger(const std::string& name)
      : args{"--ledger", cluster().uri("OWNER"), "--ledger-name", name},
        error("dpbudget: error: postgresql://dpb_owner@" + cluster().vars.at("PGHOST") +
              "/dpbudget ledger " + name + ": ") {
    const Run init =
        run_dpbudget(with({"ledger-init", "--epsilon", "1000", "--delta", "1e-6"}, args));
    REQUIRE(init.status == 0);
    REQUIRE(add("first").status == 0);
  }
  Run add(const std::string& entry) const {
    return run_dpbudget(with({"ledger-add", "--name", entry, "--spec", spec().path}, args));
  }
  /// The names in its history, in order (ledger-history --format csv; the
  /// names here hold no comma).
  std::vector<std::string> history() const {
    const Run h = run_dpbudget(with({"ledger-history", "--format", "csv"}, args));
    REQUIRE(h.status == 0);
    const auto rows = lines_of(h.out);
    REQUIRE(!rows.empty());
    const auto fields = [](const std::string& row) {
      std::vector<std::string> out;
      std::size_t at = 0;
      for (std::size_t end; (end = row.find(',', at)) != std::string::npos; at = end + 1)
        out.push_back(row.substr(at, end - at));
      out.push_back(row.substr(at));
      return out;
    };
    const auto header = fields(rows[0]);
    std::size_t column = header.size();
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == "name") column = i;
    REQUIRE(column < header.size());
    std::vector<std::string> names;
    for (std::size_t r = 1; r < rows.size(); ++r) names.push_back(fields(rows[r]).at(column));
    return names;
  }
  bool verifies() const { return run_dpbudget(with({"ledger-verify"}, args)).status == 0; }

  std::vector<std::string> args;
  std::string error;  ///< how its error lines start
};

/// Runs `add(name)` while the server crashes with its COMMIT in flight,
/// and stays down `down` before it restarts.
Run add_crashed_in_commit(const Ledger& ledger, const std::string& name,
                          std::chrono::milliseconds down) {
  psql_as("OWNER",
          "CREATE OR REPLACE FUNCTION dpbudget.test_slow_commit() RETURNS trigger LANGUAGE plpgsql "
          "AS 'BEGIN PERFORM pg_sleep(2); RETURN NULL; END';"
          "SET client_min_messages = warning; DROP TRIGGER IF EXISTS test_slow_commit ON "
          "dpbudget.entries;"
          "CREATE CONSTRAINT TRIGGER test_slow_commit AFTER INSERT ON dpbudget.entries DEFERRABLE "
          "INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION dpbudget.test_slow_commit()");
  Run r;
  std::thread adder([&] { r = ledger.add(name); });
  bool in_commit = false;
  for (int i = 0; i < 200 && !in_commit; ++i) {
    in_commit = psql_as("ADMIN",
                        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'dpbudget' "
                        "AND state = 'active' AND query = 'COMMIT'") == "1\n";
    if (!in_commit) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(in_commit);
  cluster().stop_immediate();
  std::this_thread::sleep_for(down);
  cluster().restart();
  adder.join();
  psql_as("OWNER", "DROP TRIGGER test_slow_commit ON dpbudget.entries");
  return r;
}

}  // namespace

TEST_CASE("postgresql ledger-add faults: the server down: 7, one line, nothing recorded") {
  const Ledger ledger("down");
  cluster().stop_immediate();
  const Run r = ledger.add("down");
  const Run status = run_dpbudget(with({"ledger-status"}, ledger.args));
  cluster().restart();
  CAPTURE(r.err);
  CHECK(r.status == kUnavailable);
  CHECK(r.out.empty());
  REQUIRE(lines_of(r.err).size() == 1);
  CHECK(starts_with(r.err, ledger.error + "cannot connect: "));
  CHECK(ends_with(r.err, "; nothing was recorded\n"));
  CAPTURE(status.err);
  CHECK(status.status == kUnavailable);
  CHECK(starts_with(status.err, ledger.error + "cannot connect: "));
  CHECK(status.err.find("recorded") == std::string::npos);
  CHECK(ledger.history() == std::vector<std::string>{"first"});
}

TEST_CASE("postgresql ledger-add faults: serialization failures and deadlocks retried, each said") {
  const Ledger ledger("retry");
  psql_as("OWNER",
          "CREATE SEQUENCE dpbudget.test_calls; CREATE TABLE dpbudget.test_fail (times int, state "
          "text); INSERT INTO dpbudget.test_fail VALUES (2, '40001');"
          "CREATE FUNCTION dpbudget.test_fail() RETURNS trigger LANGUAGE plpgsql AS 'DECLARE f "
          "record; BEGIN SELECT * INTO f FROM dpbudget.test_fail; IF "
          "nextval(''dpbudget.test_calls'') <= f.times THEN RAISE EXCEPTION ''injected failure'' "
          "USING ERRCODE = f.state; END IF; RETURN NEW; END';"
          "CREATE TRIGGER test_fail BEFORE INSERT ON dpbudget.entries FOR EACH ROW EXECUTE "
          "FUNCTION dpbudget.test_fail()");
  const Run twice = ledger.add("retried");
  CAPTURE(twice.err);
  CHECK(twice.status == 0);
  const auto notes = lines_of(twice.err);
  REQUIRE(notes.size() == 2);
  const std::string note = "dpbudget: note: " + ledger.error.substr(17);
  for (int i = 0; i < 2; ++i)
    CHECK(notes[i] == note + "cannot write: injected failure; nothing was recorded, retrying (" +
                          std::to_string(i + 2) + " of 3)");
  CHECK(ledger.history() == std::vector<std::string>{"first", "retried"});

  psql_as("OWNER",
          "ALTER SEQUENCE dpbudget.test_calls RESTART; UPDATE dpbudget.test_fail SET times = 100, "
          "state = '40P01'");
  const Run always = ledger.add("deadlocked");
  CAPTURE(always.err);
  CHECK(always.status == kUnavailable);
  CHECK(always.out.empty());
  const auto lines = lines_of(always.err);
  REQUIRE(lines.size() == 3);
  CHECK(ends_with(lines[1], "retrying (3 of 3)"));
  CHECK(lines[2] == ledger.error + "cannot write: injected failure, 3 times; nothing was recorded");
  CHECK(ledger.history() == std::vector<std::string>{"first", "retried"});
  psql_as("OWNER", "DROP TRIGGER test_fail ON dpbudget.entries");
  CHECK(ledger.verifies());
}

TEST_CASE("postgresql ledger-add faults: COMMIT lost: back at once, it looks (7), away, 9") {
  struct Case {
    const char* ledger;
    std::chrono::milliseconds down;
    int status;
    std::string err;  ///< after the ledger's label
  };
  const Case cases[] = {
      {"lost-commit", std::chrono::milliseconds(0), kUnavailable,
       "the connection to the server was lost while committing entry 2 ('x'); reconnected and "
       "looked: it is not in the ledger; nothing was recorded\n"},
      // Past the reconnections' 2.1 s.
      {"in-doubt", std::chrono::milliseconds(3000), kOutcomeUnknown,
       "outcome unknown: the connection to the server was lost while committing entry 2 ('x') "
       "and could not be made again (3 tries over 2.1 s): the entry may or may not be recorded; "
       "run ledger-history / ledger-status to see\n"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.ledger);
    const Ledger ledger(c.ledger);
    const Run r = add_crashed_in_commit(ledger, "x", c.down);
    CAPTURE(r.err);
    CHECK(r.status == c.status);
    CHECK(r.out.empty());
    CHECK(r.err == ledger.error + c.err);
    // The crash aborted it.
    CHECK(ledger.history() == std::vector<std::string>{"first"});
    CHECK(ledger.verifies());
  }
}
