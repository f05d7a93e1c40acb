#pragma once
// Timing whole dpbudget processes for the benchmark (never a test): one run,
// the median of several beside a goal, start-up against /bin/true.
#include <chrono>
#include <vector>

namespace dpb::bench {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0);

/// Peak resident set size of the last child run_once() waited for, in KiB.
extern long g_last_max_rss_kib;

/// Runs argv (argv[0] a path, null-terminated) with stdout to /dev/null and
/// waits: its wall time in seconds. Exits the benchmark when it fails.
double run_once(const char* const* argv);

/// Start-up against /bin/true, pair by pair (each pair run back to back, so
/// both see the same machine load): the median of the ratios beside the goal.
void bench_startup(const char* title, const std::vector<const char*>& args, int pairs,
                   double goal_ratio);

/// Runs the process `runs` times and prints its median beside `goal_ms`
/// (0: no goal).
void bench_process(const char* title, const std::vector<const char*>& args, int runs,
                   double goal_ms = 0);

/// Issue 44's and issue 47's figures on a ledger of 1,000 entries: in a
/// SQLite file, then (when the PostgreSQL server is installed) on a
/// throwaway server over its Unix socket.
void bench_ledgers();

}  // namespace dpb::bench
