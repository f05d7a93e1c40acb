#pragma once
// The throwaway PostgreSQL cluster of tests/support/pg_cluster.sh for a test
// process (docs/ledger_postgresql.md#tests): started on first use (with
// --fsync off), removed at the process's exit; PGPASSFILE set to its
// password file, so that libpq and psql (and dpbudget run by the test) log
// in without a password on any command line. When the server is not
// installed the process exits 77 (CTest: skipped), pg_cluster.sh having said
// why on stderr.
#include <doctest/doctest.h>

#include <cstdlib>
#include <map>
#include <string>

#include "support/pg_cluster_start.hpp"

namespace dpb::test {

inline const std::string kClusterScript = DPBUDGET_SOURCE_DIR "/tests/support/pg_cluster.sh";

/// The cluster for this process: started on first use, removed at exit.
struct Cluster {
  std::map<std::string, std::string> vars;
  Cluster() {
    // --fsync off: a crash of the server (what these tests make) loses nothing
    // committed either way, and its recovery takes 0.2 s rather than 5 s.
    int status = -1;
    vars = start_pg_cluster(kClusterScript, "--fsync off", &status);
    if (status == 77) std::_Exit(77);  // skipped, said why
    REQUIRE(status == 0);
    ::setenv("PGPASSFILE", vars.at("PGPASSFILE").c_str(), 1);
  }
  ~Cluster() {
    if (vars.count("PG_CLUSTER_DIR"))
      (void)std::system(
          ("bash " + kClusterScript + " remove " + vars.at("PG_CLUSTER_DIR")).c_str());
  }
  std::string uri(const std::string& role) const { return vars.at("PG_URI_" + role); }
  /// psql as the owner: the grants an administrator gives.
  void as_owner(const std::string& sql) const {
    const std::string cmd =
        "psql -X -q -v ON_ERROR_STOP=1 '" + uri("OWNER") + "' -c \"" + sql + "\"";
    REQUIRE(std::system(cmd.c_str()) == 0);
  }
  /// psql -f FILE as `role` (OWNER, WRITER, READER, ADMIN): stops at the
  /// first error (psql's messages go to stderr); whether it succeeded.
  bool psql_file(const std::string& role, const std::string& file) const {
    const std::string cmd =
        "psql -X -q -v ON_ERROR_STOP=1 '" + uri(role) + "' -f '" + file + "' >/dev/null";
    return std::system(cmd.c_str()) == 0;
  }
  void stop_immediate() const {
    REQUIRE(
        std::system(("bash " + kClusterScript + " stop " + vars.at("PG_CLUSTER_DIR") + " immediate")
                        .c_str()) == 0);
  }
  void restart() const {
    REQUIRE(std::system(
                ("bash " + kClusterScript + " restart " + vars.at("PG_CLUSTER_DIR")).c_str()) == 0);
  }
};

inline const Cluster& cluster() {
  static const Cluster c;
  return c;
}

}  // namespace dpb::test
