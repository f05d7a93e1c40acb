// The ledger's figures (issues 44 and 47): ledger-add and ledger-status on a
// ledger of 1,000 entries, in a SQLite file and on a PostgreSQL server over
// its Unix socket, side by side in one run.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "process_timing.hpp"
#include "support/pg_cluster_start.hpp"

namespace dpb::bench {
namespace {

/// Issue 44's goals on a ledger of 1,000 entries: ledger-add and
/// ledger-status with the default accountants each within 100 ms, the
/// planned total by pld within 2 s.
constexpr double kLedgerAddGoalMs = 100, kLedgerStatusGoalMs = 100, kLedgerPldGoalMs = 2000;
/// Issue 47's goals for the same two verbs on a PostgreSQL server reached
/// over its Unix socket (a connection, libpq loaded, the entries read over
/// the wire): 150 ms each.
constexpr double kServerAddGoalMs = 150, kServerStatusGoalMs = 150;
constexpr int kLedgerEntries = 1000;
const std::string kClusterScript = DPBUDGET_SOURCE_DIR "/tests/support/pg_cluster.sh";
/// Runs per median: an odd number, so the median is one run.
constexpr int kLedgerRuns = 11;

/// A release of kind i % 4 with parameters that vary with i (so that no two
/// entries share a curve): a DP-SGD run, a Laplace count, a Gaussian release,
/// a batch of Laplace counts; small enough that 1,000 fit a budget of 10.
std::string ledger_release(int i) {
  char text[256];
  switch (i % 4) {
    case 0:
      std::snprintf(
          text, sizeof text,
          R"({"self_composed":{"count":%d,"event":{"poisson_sampled":)"
          R"({"sampling_probability":%g,"event":{"gaussian":{"noise_multiplier":%g}}}}}})",
          100 + i, 1e-4 * (1 + i % 7), 2 + 0.5 * (i % 5));
      break;
    case 1:
      std::snprintf(text, sizeof text, R"({"laplace":{"scale":%g}})", 500.0 + 3 * i);
      break;
    case 2:
      std::snprintf(text, sizeof text, R"({"gaussian":{"noise_multiplier":%g}})", 200.0 + i);
      break;
    default:
      std::snprintf(text, sizeof text,
                    R"({"self_composed":{"count":%d,"event":{"laplace":{"scale":%g}}}})",
                    2 + i % 19, 2000.0 + 7 * i);
  }
  return text;
}

/// The same figures for one store: `where` is the --ledger flags naming it.
void bench_ledger(const char* store, const std::vector<std::string>& where, double add_goal_ms,
                  double status_goal_ms, const std::string& spec) {
  const auto argv = [&](std::vector<const char*> head, std::vector<const char*> tail) {
    std::vector<const char*> out{DPBUDGET_BINARY};
    out.insert(out.end(), head.begin(), head.end());
    for (const auto& w : where) out.push_back(w.c_str());
    out.insert(out.end(), tail.begin(), tail.end());
    out.push_back(nullptr);
    return out;
  };
  const auto write_spec = [&](const std::string& text) {
    FILE* f = std::fopen(spec.c_str(), "w");
    if (!f || std::fputs(text.c_str(), f) < 0 || std::fclose(f) != 0) std::exit(1);
  };
  run_once(argv({"ledger-init"}, {"--epsilon", "10", "--delta", "1e-6"}).data());
  const auto t0 = Clock::now();
  for (int i = 0; i < kLedgerEntries; ++i) {
    write_spec(ledger_release(i));
    const std::string name = "release-" + std::to_string(i);
    run_once(argv({"ledger-add"}, {"--name", name.c_str(), "--spec", spec.c_str()}).data());
  }
  std::printf("ledger (%s): %d entries recorded one process each in %.1f s\n", store,
              kLedgerEntries, seconds_since(t0));
  write_spec(ledger_release(2));
  const std::string add_title = std::string("ledger-add on a ledger of 1000 entries (") + store +
                                "; adaptive: the Renyi filter decides)";
  bench_process(add_title.c_str(),
                argv({"ledger-add"}, {"--name", "one-more", "--spec", spec.c_str()}), kLedgerRuns,
                add_goal_ms);
  const std::string status_title = std::string("ledger-status on 1000 entries (") + store +
                                   "; the filter and the rdp planned total)";
  bench_process(status_title.c_str(), argv({"ledger-status"}, {}), kLedgerRuns, status_goal_ms);
  const std::string pld_title =
      std::string("ledger-status --accountant pld on 1000 entries (") + store + ")";
  bench_process(pld_title.c_str(), argv({"ledger-status"}, {"--accountant", "pld"}), 3,
                kLedgerPldGoalMs);
  // The same total at pld's own tolerance (an interval within 1e-3 of its
  // upper end, about 3e-4 wide here): what the ledger's tolerance saves.
  bench_process("  beside it: the same with --pld-tolerance 1e-3 (pld's default)",
                argv({"ledger-status"}, {"--accountant", "pld", "--pld-tolerance", "1e-3"}), 1);
}

}  // namespace

void bench_ledgers() {
  char dir[] = "/tmp/dpbudget_bench_ledger_XXXXXX";
  if (!mkdtemp(dir)) {
    std::perror("dpbudget_bench: mkdtemp");
    std::exit(1);
  }
  const std::string ledger = std::string(dir) + "/bench.ledger";
  const std::string spec = std::string(dir) + "/release.json";
  bench_ledger("SQLite", {"--ledger", ledger}, kLedgerAddGoalMs, kLedgerStatusGoalMs, spec);
  std::remove(ledger.c_str());
  // A throwaway cluster with fsync on, as a real server runs.
  int status = -1;
  const auto cluster = dpb::test::start_pg_cluster(kClusterScript, "", &status);
  if (status == 0) {
    // The password file: libpq finds it, no password on any command line.
    ::setenv("PGPASSFILE", cluster.at("PGPASSFILE").c_str(), 1);
    bench_ledger("PostgreSQL, Unix socket",
                 {"--ledger", cluster.at("PG_URI_OWNER"), "--ledger-name", "bench"},
                 kServerAddGoalMs, kServerStatusGoalMs, spec);
    const std::string remove = "bash " + kClusterScript + " remove " + cluster.at("PG_CLUSTER_DIR");
    if (std::system(remove.c_str()) != 0) std::fprintf(stderr, "dpbudget_bench: cluster left\n");
  } else {
    std::printf("ledger (PostgreSQL): not measured, no server (apt-get install postgresql-15)\n");
  }
  std::remove(spec.c_str());
  rmdir(dir);
}

}  // namespace dpb::bench
