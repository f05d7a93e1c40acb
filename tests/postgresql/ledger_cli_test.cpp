// The ledger verbs through the built binary on a PostgreSQL ledger (issue 47;
// docs/ledger_postgresql.md#naming-a-ledger-on-the-command-line), against a
// throwaway cluster (tests/support/pg_cluster.hpp; exit 77, CTest: skipped,
// without the server): ledger-init, ledger-add until the budget is spent
// (the refused add exits 1 and records nothing), ledger-status,
// ledger-history and ledger-verify print what the same commands print on an
// SQLite file, once the ledger's name, the hashes and the times are masked
// (they name the store, and the header's creation time is in every hash).
// Also: the refusals of --ledger and --ledger-name (exit 2, naming the flag,
// never echoing a password).
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "e2e/run.hpp"
#include "support/pg_cluster.hpp"
#include "support/temp_file.hpp"

using namespace dpb::test;

namespace {

constexpr int kOver = 1, kUsage = 2;

/// `text` with `label` replaced by LEDGER, 64-digit hashes by HASH, UTC times
/// by TIME and runs of spaces by one (a text table's columns are as wide as
/// the ledger's name).
std::string masked(std::string text, const std::string& label) {
  for (std::size_t at; (at = text.find(label)) != std::string::npos;)
    text.replace(at, label.size(), "LEDGER");
  text = std::regex_replace(text, std::regex("[0-9a-f]{64}"), "HASH");
  text = std::regex_replace(text, std::regex("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ"), "TIME");
  return std::regex_replace(text, std::regex(" +"), " ");
}

/// What the verbs print on one ledger, masked, command by command.
struct Transcript {
  std::vector<std::string> lines;
  int recorded = 0;  ///< adds that exited 0
};

Transcript run_verbs(const std::vector<std::string>& target, const std::string& label,
                     const TempFile& spec) {
  Transcript t;
  const auto step = [&](const std::vector<std::string>& args, int want) {
    const Run r = run_dpbudget(with(args, target));
    CAPTURE(args.front());
    CAPTURE(r.err);
    CHECK(r.status == want);
    t.lines.push_back(args.front() + " -> " + std::to_string(r.status) + "\n" +
                      masked(r.out, label) + masked(r.err, label));
    return r;
  };
  step({"ledger-init", "--epsilon", "1", "--delta", "1e-6", "--dataset", "census"}, 0);
  for (int i = 1; i <= 30; ++i) {
    const std::string name = "count-" + std::to_string(i);
    const Run add = run_dpbudget(
        with({"ledger-add", "--name", name, "--spec", spec.path, "--by", "ci"}, target));
    t.lines.push_back("ledger-add " + name + " -> " + std::to_string(add.status) + "\n" +
                      masked(add.out, label) + masked(add.err, label));
    if (add.status != 0) {
      CAPTURE(add.err);
      CHECK(add.status == kOver);
      break;
    }
    ++t.recorded;
  }
  const Run history = step({"ledger-history", "--format", "json"}, 0);
  CHECK(history.out.find("count-" + std::to_string(t.recorded + 1)) == std::string::npos);
  step({"ledger-history"}, 0);
  step({"ledger-status"}, 0);
  step({"ledger-status", "--accountant", "all", "--format", "json"}, 0);
  step({"ledger-verify"}, 0);
  step({"ledger-export"}, 0);
  return t;
}

}  // namespace

TEST_CASE("postgresql ledger: the verbs print on the server what they print on a file") {
  const auto& c = cluster();
  const TempFile spec("pg_cli_spec.json", R"({"laplace": {"scale": 4}})");
  const std::string file = "/tmp/dpbudget_test_" + std::to_string(::getpid()) + "_cli.ledger";
  std::remove(file.c_str());
  const Transcript lite = run_verbs({"--ledger", file}, file, spec);
  std::remove(file.c_str());

  const std::string uri = c.uri("OWNER");
  const Run init_check =
      run_dpbudget({"ledger-status", "--ledger", uri, "--ledger-name", "census"});
  CHECK(init_check.status == 7);  // no such ledger yet (and no schema)
  // The label the binary prints for it: postgresql://USER@HOST/DB ledger NAME.
  const std::string label =
      "postgresql://dpb_owner@" + c.vars.at("PGHOST") + "/dpbudget ledger census";
  const Transcript pg = run_verbs({"--ledger", uri, "--ledger-name", "census"}, label, spec);

  CHECK(lite.recorded >= 2);
  CHECK(pg.recorded == lite.recorded);
  REQUIRE(pg.lines.size() == lite.lines.size());
  for (std::size_t i = 0; i < pg.lines.size(); ++i) CHECK(pg.lines[i] == lite.lines[i]);

  // The keyword/value form names the same ledger.
  const std::string keywords = "host=" + c.vars.at("PGHOST") + " dbname=dpbudget user=dpb_owner";
  const Run kv = run_dpbudget({"ledger-verify", "--ledger", keywords, "--ledger-name", "census"});
  CAPTURE(kv.err);
  CHECK(kv.status == 0);
  // A second init of the same name is refused; the ledger stays.
  const Run again = run_dpbudget({"ledger-init", "--ledger", uri, "--ledger-name", "census",
                                  "--epsilon", "5", "--delta", "1e-6"});
  CHECK(again.status == 7);
  CHECK(again.err.find("a ledger of that name exists") != std::string::npos);
}

TEST_CASE("postgresql ledger: --ledger and --ledger-name refused in one line naming the flag") {
  const auto& c = cluster();
  const std::string secret = "pw-" + std::to_string(::getpid()) + "-not-shown";
  const std::string host = c.vars.at("PGHOST");
  for (const std::string& with_password :
       {"postgresql://dpb_owner:" + secret + "@%2Ftmp/dpbudget",
        "postgres://dpb_owner@/dpbudget?host=" + host + "&password=" + secret,
        "host=" + host + " password=" + secret + " dbname=dpbudget"}) {
    const Run r =
        run_dpbudget({"ledger-status", "--ledger", with_password, "--ledger-name", "census"});
    CAPTURE(r.err);
    CHECK(r.status == kUsage);
    CHECK(r.err.rfind("dpbudget: error: --ledger: holds a password", 0) == 0);
    CHECK(r.err.find(secret) == std::string::npos);
    CHECK(r.out.find(secret) == std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  const std::string uri = c.uri("OWNER");
  const Run missing = run_dpbudget({"ledger-status", "--ledger", uri});
  CHECK(missing.status == kUsage);
  CHECK(missing.err.find("--ledger-name is required") != std::string::npos);
  const Run bad = run_dpbudget({"ledger-status", "--ledger", uri, "--ledger-name", "a b"});
  CHECK(bad.status == kUsage);
  CHECK(bad.err.find("--ledger-name: 'a b' is no ledger name") != std::string::npos);
  const Run on_file = run_dpbudget(
      {"ledger-status", "--ledger", "/tmp/dpbudget_no.ledger", "--ledger-name", "census"});
  CHECK(on_file.status == kUsage);
  CHECK(on_file.err.find("--ledger-name: only with a PostgreSQL --ledger") != std::string::npos);
  const Run unreadable =
      run_dpbudget({"ledger-status", "--ledger", uri + "?nosuchparameter=1", "--ledger-name", "x"});
  CHECK(unreadable.status == kUsage);
  CHECK(unreadable.err.find("--ledger: not a PostgreSQL connection string") != std::string::npos);
}

TEST_CASE("postgresql ledger: without libpq a server's --ledger exits 7 in one line naming it") {
  // DPBUDGET_LIBPQ names the library to open (src/store/libpq_library.cpp):
  // here one that is not there, and one that is not libpq. No server is
  // needed: the library is loaded before any connection.
  for (const auto& [library, says] :
       {std::pair<std::string, std::string>{
            "/nonexistent/libpq.so.5",
            "cannot load PostgreSQL's client library /nonexistent/libpq.so.5 (DPBUDGET_LIBPQ)"},
        {"libz.so.1", "libz.so.1 has no PQ"}}) {
    ::setenv("DPBUDGET_LIBPQ", library.c_str(), 1);
    const Run r = run_dpbudget(
        {"ledger-status", "--ledger", "postgresql:///dpbudget", "--ledger-name", "census"});
    ::unsetenv("DPBUDGET_LIBPQ");
    CAPTURE(r.err);
    CHECK(r.status == 7);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("dpbudget: error: " + says, 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}

TEST_CASE("ledger: without libcrypto a ledger verb exits 7 in one line and creates nothing") {
  // DPBUDGET_LIBCRYPTO names the hash chain's library (src/store/
  // libcrypto_library.cpp): one that is not there. ledger-init must leave no
  // file behind, and the other verbs say the same line.
  const std::string path = "/tmp/dpbudget_test_" + std::to_string(::getpid()) + "_nocrypto.ledger";
  std::remove(path.c_str());
  ::setenv("DPBUDGET_LIBCRYPTO", "/nonexistent/libcrypto.so.3", 1);
  const Run init =
      run_dpbudget({"ledger-init", "--ledger", path, "--epsilon", "1", "--delta", "1e-6"});
  ::unsetenv("DPBUDGET_LIBCRYPTO");
  CAPTURE(init.err);
  CHECK(init.status == 7);
  CHECK(init.out.empty());
  CHECK(init.err.rfind("dpbudget: error: cannot load OpenSSL's libcrypto "
                       "/nonexistent/libcrypto.so.3 (DPBUDGET_LIBCRYPTO)",
                       0) == 0);
  CHECK(std::count(init.err.begin(), init.err.end(), '\n') == 1);
  struct stat st {};
  CHECK(::stat(path.c_str(), &st) != 0);  // no file
  REQUIRE(
      run_dpbudget({"ledger-init", "--ledger", path, "--epsilon", "1", "--delta", "1e-6"}).status ==
      0);
  ::setenv("DPBUDGET_LIBCRYPTO", "/nonexistent/libcrypto.so.3", 1);
  for (const char* verb : {"ledger-status", "ledger-verify", "ledger-history"}) {
    const Run r = run_dpbudget({verb, "--ledger", path});
    CAPTURE(verb);
    CAPTURE(r.err);
    CHECK(r.status == 7);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  ::unsetenv("DPBUDGET_LIBCRYPTO");
  std::remove(path.c_str());
}

namespace {

/// `role`'s password from the cluster's password file (host:port:db:user:password).
std::string password_of(const std::string& role) {
  std::istringstream lines(slurp(cluster().vars.at("PGPASSFILE")));
  for (std::string line; std::getline(lines, line);) {
    const auto at = line.rfind(':');
    const auto user = line.rfind(':', at - 1);
    if (line.substr(user + 1, at - user - 1) == role) return line.substr(at + 1);
  }
  FAIL("no password for " << role);
  return "";
}

}  // namespace

TEST_CASE("postgresql ledger: a password from a service file is used and never printed") {
  // The password is given in a connection string that libpq reads (a
  // service file's entry), not through PGPASSFILE, which is unset for the
  // children here: every verb must log in with it and no output may hold it,
  // nor may the messages of a failed login or of a missing ledger.
  const auto& c = cluster();
  const std::string secret = password_of("dpb_owner");
  REQUIRE(secret.size() >= 16);
  const TempFile services(
      "pg_service.conf",
      "[team]\nhost=" + c.vars.at("PGHOST") + "\nport=" + c.vars.at("PGPORT") +
          "\ndbname=" + c.vars.at("PGDATABASE") + "\nuser=dpb_owner\npassword=" + secret +
          "\n[wrong]\nhost=" + c.vars.at("PGHOST") + "\nport=" + c.vars.at("PGPORT") +
          "\ndbname=" + c.vars.at("PGDATABASE") + "\nuser=dpb_owner\npassword=" + secret + "x\n");
  REQUIRE(::chmod(services.path.c_str(), 0600) == 0);  // it holds a password
  const std::string passfile = c.vars.at("PGPASSFILE");
  ::unsetenv("PGPASSFILE");
  ::setenv("PGSERVICEFILE", services.path.c_str(), 1);
  const TempFile spec("pg_service_spec.json", R"({"laplace": {"scale": 10}})");
  const std::vector<std::string> target = {"--ledger", "service=team", "--ledger-name",
                                           "from-service"};
  std::vector<Run> runs;
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"ledger-init", "--epsilon", "1", "--delta", "1e-6"},
           {"ledger-add", "--name", "a", "--spec", spec.path},
           {"ledger-add", "--name", "b", "--spec", spec.path, "--format", "json"},
           {"ledger-status", "--format", "json"},
           {"ledger-history"},
           {"ledger-history", "--format", "csv"},
           {"ledger-verify", "--format", "json"},
           {"ledger-export"},
           {"ledger-void", "--entry", "2", "--reason", "test"}}) {
    runs.push_back(run_dpbudget(with(args, target)));
    CAPTURE(args.front());
    CAPTURE(runs.back().err);
    CHECK(runs.back().status == 0);
  }
  runs.push_back(
      run_dpbudget({"ledger-status", "--ledger", "service=team", "--ledger-name", "none"}));
  CHECK(runs.back().status == 7);
  runs.push_back(
      run_dpbudget({"ledger-status", "--ledger", "service=wrong", "--ledger-name", "x"}));
  CHECK(runs.back().status == 7);
  CHECK(runs.back().err.find("password authentication failed") != std::string::npos);
  ::unsetenv("PGSERVICEFILE");
  ::setenv("PGPASSFILE", passfile.c_str(), 1);
  for (const Run& r : runs) {
    CHECK(r.out.find(secret) == std::string::npos);
    CHECK(r.err.find(secret) == std::string::npos);
  }
  CHECK(runs[4].out.find("from-service") != std::string::npos);  // history names the ledger
}
