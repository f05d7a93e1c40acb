// dpbudget benchmark: prints throughput and latency figures (never a test).
//   ./build/bench/dpbudget_bench [seconds-per-measurement]
// 1. ε evaluations per second in-process for fresh (q, σ) pairs with the
//    default Rényi orders (the RDP curve is recomputed every time), one core.
// 2. Wall time of one `dpbudget epsilon` process (fork + exec + compute).
// 3. Peak memory of sweeps in every format, and how soon their first rows come.
// 4. The matrix mechanism (issue 28); `dpbudget_bench S matrix` runs only these.
// 5. A dataset's ledger of 1,000 entries in a SQLite file and on a PostgreSQL
//    server (issues 44, 47; ledger_bench.cpp); `dpbudget_bench S ledger` runs
//    only these.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "accounting/accountant.hpp"
#include "accounting/composition/composition.hpp"
#include "accounting/events/events.hpp"
#include "accounting/matrix/sensitivity.hpp"
#include "accounting/matrix/strategy.hpp"
#include "accounting/run_plan.hpp"
#include "process_timing.hpp"

namespace {

using dpb::bench::bench_process;
using dpb::bench::bench_startup;
using dpb::bench::Clock;
using dpb::bench::g_last_max_rss_kib;
using dpb::bench::run_once;
using dpb::bench::seconds_since;

/// Issue 17's goal for fresh RDP evaluations on one core.
constexpr double kRdpGoalPerSecond = 20000;

void bench_in_process(double budget_s) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> log_q(std::log(1e-3), std::log(0.1));
  std::uniform_real_distribution<double> sigma(0.5, 4.0);
  std::uniform_int_distribution<long> steps(100, 100000);
  const dpb::AccountantOptions options;  // default orders, improved conversion
  long count = 0;
  double checksum = 0;
  const auto t0 = Clock::now();
  while (seconds_since(t0) < budget_s) {
    auto acc = dpb::make_accountant("rdp", options);
    acc->compose(*dpb::make_dp_sgd(std::exp(log_q(rng)), sigma(rng), steps(rng)));
    checksum += acc->epsilon(1e-5).epsilon;
    ++count;
  }
  const double s = seconds_since(t0);
  std::printf(
      "rdp epsilon, fresh (q, sigma), default orders: %.0f evaluations/s (%ld in %.2f s;"
      " q in [1e-3, 0.1] log-uniform, sigma in [0.5, 4]; checksum %.6g) (goal >= %.0f/s: "
      "%s)\n",
      static_cast<double>(count) / s, count, s, checksum, kRdpGoalPerSecond,
      static_cast<double>(count) / s >= kRdpGoalPerSecond ? "met" : "NOT met");
}

/// Issue 26's goals for a sweep's peak memory in every format: flat (the
/// 10^6-row sweep within this factor of the 10^5-row one; what grows with
/// the rows is what a format holds) and small (tens of MiB at most).
constexpr double kFlatMemoryFactor = 1.5;
constexpr double kSweepMemoryGoalMiB = 32;
/// The 10^6-row CSV sweep on this project's 2-core machine (issue 18).
constexpr double kMillionRowsCsvGoalMs = 10000;
/// `sweep --format csv | head -2` (issue 26: "well under a second").
constexpr double kFirstRowsGoalMs = 250;

/// The sweep of the issue, 1000 steps per sigma: 10^6 rows with 1000
/// sigmas, and its first 10^5 rows with 100.
std::vector<const char*> issue_sweep(const char* sigmas, const char* format) {
  return {DPBUDGET_BINARY, "sweep",   "--sigma", sigmas,     "--steps", "1:1000", "-q",
          "0.01",          "--delta", "1e-5",    "--format", format,    nullptr};
}

/// Peak resident set of the 10^5- and 10^6-row sweep in each format (the
/// child's ru_maxrss from wait4), beside the goals.
void bench_sweep_memory() {
  for (const char* format : {"text", "json", "jsonl", "csv"}) {
    run_once(issue_sweep("0.5:1.49:0.01", format).data());
    const double small = static_cast<double>(g_last_max_rss_kib) / 1024;
    const double seconds = run_once(issue_sweep("0.5:10.49:0.01", format).data());
    const double large = static_cast<double>(g_last_max_rss_kib) / 1024;
    const bool met = large <= kFlatMemoryFactor * small && large <= kSweepMemoryGoalMiB;
    std::printf(
        "sweep --sigma 0.5:10.49:0.01 --steps 1:1000 -q 0.01 --delta 1e-5 --format %s: peak RSS "
        "%.1f MiB at 10^5 rows, %.1f MiB at 10^6 rows (%.2fx; 10^6 rows in %.1f s) (goal <= "
        "%.1fx and <= %.0f MiB: %s)",
        format, small, large, large / small, seconds, kFlatMemoryFactor, kSweepMemoryGoalMiB,
        met ? "met" : "NOT met");
    if (std::string_view(format) == "csv")
      std::printf(" (10^6 rows: goal <= %.0f s: %s)", kMillionRowsCsvGoalMs / 1000,
                  1e3 * seconds <= kMillionRowsCsvGoalMs ? "met" : "NOT met");
    std::printf("\n");
  }
}

/// Runs the process with stdout on a pipe, reads `lines` lines and closes
/// the pipe, as `| head -N` does; the time until the process has ended (by
/// SIGPIPE, or done).
double first_lines_once(const char* const* argv, int lines) {
  std::fflush(stdout);
  int fd[2];
  if (pipe(fd) != 0) std::exit(1);
  const auto t0 = Clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fd[1], STDOUT_FILENO);
    close(fd[0]);
    close(fd[1]);
    execv(argv[0], const_cast<char* const*>(argv));
    _exit(127);
  }
  close(fd[1]);
  char c;
  for (int seen = 0; seen < lines && read(fd[0], &c, 1) == 1;) seen += c == '\n';
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  const double seconds = seconds_since(t0);
  const bool ended = (WIFEXITED(status) && WEXITSTATUS(status) == 0) ||
                     (WIFSIGNALED(status) && WTERMSIG(status) == SIGPIPE);
  if (!ended) {
    std::fprintf(stderr, "dpbudget_bench: %s failed\n", argv[0]);
    std::exit(1);
  }
  return seconds;
}

/// `sweep ... --format csv | head -2` on the 10^6-row sweep: the header and
/// the first row must not wait for the sweep's end.
void bench_first_rows() {
  constexpr int kRuns = 5;
  for (const char* format : {"csv", "text", "json", "jsonl"}) {
    std::vector<double> t;
    for (int i = 0; i < kRuns; ++i)
      t.push_back(first_lines_once(issue_sweep("0.5:10.49:0.01", format).data(), 2));
    std::sort(t.begin(), t.end());
    const double median_ms = 1e3 * t[t.size() / 2];
    std::printf(
        "sweep --sigma 0.5:10.49:0.01 --steps 1:1000 -q 0.01 --delta 1e-5 --format %s | head -2: "
        "median %.0f ms, max %.0f ms over %d runs (goal <= %.0f ms: %s)\n",
        format, median_ms, 1e3 * t.back(), kRuns, kFirstRowsGoalMs,
        median_ms <= kFirstRowsGoalMs ? "met" : "NOT met");
  }
}

void bench_optimal_composition() {
  // docs/composition.md#optimal: exact optimal composition of k = 10⁶ (ε, δ)-DP mechanisms.
  const auto t0 = Clock::now();
  const double eps = dpb::optimal_epsilon(0.001, 1e-12, 1'000'000, 1e-5);
  std::printf(
      "optimal composition, k = 1e6 (epsilon 0.001, delta 1e-12, target delta 1e-5): "
      "%.1f ms (epsilon %.6g)\n",
      1e3 * seconds_since(t0), eps);
}

/// Issue 27's goal for a schedule: three phases at pld within this factor of
/// one phase of the same total steps.
constexpr double kScheduleRatioGoal = 3.0;

/// `epsilon --accountant pld` on a schedule of three phases (written to a
/// scratch file) against one phase of the same 1,000 steps, pair by pair
/// (each pair back to back, under the same load): the median ratio.
void bench_schedule(int pairs) {
  char path[] = "/tmp/dpbudget-bench-schedule-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) {
    std::fprintf(stderr, "dpbudget_bench: cannot create a scratch schedule file\n");
    std::exit(1);
  }
  const std::string_view phases =
      "{\"sampling_rate\": 0.01, \"noise_multiplier\": 1.2, \"steps\": 300}\n"
      "{\"sampling_rate\": 0.02, \"noise_multiplier\": 1.0, \"steps\": 300}\n"
      "{\"sampling_rate\": 0.01, \"noise_multiplier\": 0.9, \"steps\": 400}\n";
  const bool written =
      write(fd, phases.data(), phases.size()) == static_cast<ssize_t>(phases.size());
  close(fd);
  if (!written) {
    std::fprintf(stderr, "dpbudget_bench: cannot write the scratch schedule file\n");
    std::exit(1);
  }
  const std::vector<const char*> one{
      DPBUDGET_BINARY, "epsilon", "--accountant", "pld",  "-q",   "0.01", "--sigma", "1",
      "--steps",       "1000",    "--delta",      "1e-5", nullptr};
  const std::vector<const char*> three{DPBUDGET_BINARY, "epsilon",    "--accountant",
                                       "pld",           "--schedule", path,
                                       "--delta",       "1e-5",       nullptr};
  std::vector<double> ratios, ones, threes;
  for (int i = 0; i < pairs; ++i) {
    const double o = run_once(one.data());
    const double t = run_once(three.data());
    ratios.push_back(t / o);
    ones.push_back(o);
    threes.push_back(t);
  }
  unlink(path);
  for (auto* v : {&ratios, &ones, &threes}) std::sort(v->begin(), v->end());
  const std::size_t m = ratios.size() / 2;
  std::printf(
      "schedule: dpbudget epsilon --accountant pld, 3 phases (300 + 300 + 400 steps): median "
      "%.0f ms, one phase of 1000 steps %.0f ms, median ratio %.2f over %d pairs (goal <= "
      "%.0fx: %s)\n",
      1e3 * threes[m], 1e3 * ones[m], ratios[m], pairs, kScheduleRatioGoal,
      ratios[m] <= kScheduleRatioGoal ? "met" : "NOT met");
}

/// Issue 27's goal for the planner over 100 candidate batch sizes.
constexpr double kPlanGoalSeconds = 2;

/// `plan_runs` (what `dpbudget plan` computes) over 100 candidate batch sizes
/// B = 64, 128, ..., 6400 of N = 60,000 records, a compute budget of 10 epochs
/// (T = floor(600000/B)), epsilon 8 at delta 1e-5, rdp, on every core: the
/// median of `runs` wall times beside the goal.
void bench_plan(int runs) {
  dpb::PlanQuestion q;
  q.target_epsilon = 8;
  q.delta = 1e-5;
  q.dataset_size = 60000;
  q.compute = 600000;
  for (std::int64_t b = 64; b <= 6400; b += 64) q.batch_sizes.push_back(b);
  std::vector<double> t;
  std::size_t rows = 0;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = Clock::now();
    rows = dpb::plan_runs(q).rows.size();
    t.push_back(seconds_since(t0));
  }
  std::sort(t.begin(), t.end());
  const double median = t[t.size() / 2];
  std::printf(
      "plan: 100 candidate batch sizes (64 to 6400 of N 60000, compute 600000, epsilon 8, rdp), "
      "%zu rows: median %.0f ms over %d runs (goal <= %.0f s: %s)\n",
      rows, 1e3 * median, runs, kPlanGoalSeconds, median <= kPlanGoalSeconds ? "met" : "NOT met");
}

/// Issue 28's goal for the min-sep sensitivity of a 10^4-step Toeplitz strategy.
constexpr double kMatrixSensitivityGoalMs = 50;

/// The sensitivity of the square root over 10^4 steps under min-sep 100 with
/// 50 participations (the exact monotone sum), and of the banded square root
/// of 64 bands (the exact banded sum): the median of `runs` in-process times.
void bench_matrix_sensitivity(int runs) {
  const dpb::matrix::Strategy sqrt_strategy = dpb::matrix::square_root_strategy(10000);
  const dpb::matrix::Strategy banded = dpb::matrix::banded_square_root_strategy(10000, 64);
  for (const auto& [name, strategy] :
       {std::pair<const char*, const dpb::matrix::Strategy*>{"sqrt", &sqrt_strategy},
        {"banded 64", &banded}}) {
    std::vector<double> t;
    double value = 0;
    for (int i = 0; i < runs; ++i) {
      const auto t0 = Clock::now();
      value = dpb::matrix::sensitivity(*strategy, {100, 50}).squared;
      t.push_back(seconds_since(t0));
    }
    std::sort(t.begin(), t.end());
    const double ms = 1e3 * t[t.size() / 2];
    std::printf(
        "mf-sensitivity: %s, 10^4 steps, min-sep 100, 50 participations (sensitivity^2 %.6g): "
        "median %.3f ms over %d runs (goal <= %.0f ms: %s)\n",
        name, value, ms, runs, kMatrixSensitivityGoalMs,
        ms <= kMatrixSensitivityGoalMs ? "met" : "NOT met");
  }
}

}  // namespace

int main(int argc, char** argv) {
  const double budget = argc > 1 ? std::atof(argv[1]) : 2.0;
  // `dpbudget_bench S matrix`: issue 28's figures only.
  const bool matrix_only = argc > 2 && std::string_view(argv[2]) == "matrix";
  // `dpbudget_bench S ledger`: issue 44's figures only.
  if (argc > 2 && std::string_view(argv[2]) == "ledger") {
    dpb::bench::bench_ledgers();
    return 0;
  }
  if (!matrix_only) {
    bench_in_process(budget);
    // Speed at the floor (issue 17): each figure beside its goal.
    bench_startup("dpbudget --version", {DPBUDGET_BINARY, "--version", nullptr}, 101, 1.5);
    bench_startup("dpbudget epsilon -q 0.01 --sigma 1.1 --steps 10000 --delta 1e-5",
                  {DPBUDGET_BINARY, "epsilon", "-q", "0.01", "--sigma", "1.1", "--steps", "10000",
                   "--delta", "1e-5", nullptr},
                  101, 1.5);
    bench_process("dpbudget epsilon -q 0.01 --sigma 1.1 --steps 10000 --delta 1e-5 (one process)",
                  {DPBUDGET_BINARY, "epsilon", "-q", "0.01", "--sigma", "1.1", "--steps", "10000",
                   "--delta", "1e-5", nullptr},
                  50);
    bench_process("dpbudget sigma --epsilon 1 --delta 1e-5 -q 0.01 --steps 10000",
                  {DPBUDGET_BINARY, "sigma", "--epsilon", "1", "--delta", "1e-5", "-q", "0.01",
                   "--steps", "10000", nullptr},
                  20);
    bench_process("dpbudget sweep: 100 (q, sigma) pairs x 100 step counts = 10000 rows, csv",
                  {DPBUDGET_BINARY, "sweep", "-q", "0.001:0.01:0.001", "--sigma", "0.6:1.5:0.1",
                   "--steps", "100:10000:100", "--delta", "1e-5", "--format", "csv", nullptr},
                  5);
    bench_optimal_composition();
    bench_process("dpbudget epsilon --accountant pld -q 0.01 --sigma 1 --steps 10000 --delta 1e-5",
                  {DPBUDGET_BINARY, "epsilon", "--accountant", "pld", "-q", "0.01", "--sigma", "1",
                   "--steps", "10000", "--delta", "1e-5", nullptr},
                  5, 40);
    bench_process("dpbudget sigma --accountant pld -q 0.01 --steps 10000 --epsilon 2 --delta 1e-5",
                  {DPBUDGET_BINARY, "sigma", "--accountant", "pld", "-q", "0.01", "--steps",
                   "10000", "--epsilon", "2", "--delta", "1e-5", nullptr},
                  3, 80);
    bench_process(
        "dpbudget plot --accountant all -q 0.01 --sigma 1 --steps 1:10000 --points 200 --delta "
        "1e-5",
        {DPBUDGET_BINARY, "plot", "--accountant", "all", "-q", "0.01", "--sigma", "1", "--steps",
         "1:10000", "--points", "200", "--delta", "1e-5", "-o", "/dev/null", nullptr},
        3, 1500);
    bench_sweep_memory();
    bench_first_rows();
    // Sampling schemes and users (issue 15; goals in docs/guide.md#benchmark).
    bench_process(
        "shuffle: dpbudget epsilon --sampling shuffle --accountant all, N 60000, B 600, 10 epochs "
        "(upper, lower, Poisson estimate)",
        {DPBUDGET_BINARY, "epsilon", "--sampling", "shuffle", "--accountant", "all", "--sigma", "1",
         "--dataset-size", "60000", "--batch-size", "600", "--epochs", "10", "--delta", "1e-5",
         nullptr},
        3, 2000);
    bench_process(
        "balls-in-bins: dpbudget epsilon --accountant pld, t = 1000 steps per epoch, 10 epochs, "
        "sigma 1",
        {DPBUDGET_BINARY, "epsilon", "--sampling", "balls-in-bins", "--accountant", "pld",
         "--sigma", "1", "--dataset-size", "100000", "--batch-size", "100", "--epochs", "10",
         "--delta", "1e-5", nullptr},
        3, 1000);
    bench_process(
        "user level: dpbudget epsilon --accountant pld --records-per-user 4 -q 0.01 --sigma 1 "
        "--steps 1000",
        {DPBUDGET_BINARY, "epsilon", "--accountant", "pld", "--records-per-user", "4", "-q", "0.01",
         "--sigma", "1", "--steps", "1000", "--delta", "1e-5", nullptr},
        3, 1000);
    // Attack risk (issue 16): dp_accounting 0.6.0's get_true_positive_rates
    // took 35.5 s for the same run and rates on this machine (PLDAccountant
    // defaults, one process, measured 2026-11-24).
    bench_process(
        "risk: dpbudget risk --accountant all -q 0.01 --sigma 1 --steps 1000, three FPRs "
        "(dp_accounting: 35.5 s)",
        {DPBUDGET_BINARY, "risk", "--accountant", "all", "-q", "0.01", "--sigma", "1", "--steps",
         "1000", nullptr},
        5, 1000);
    // Schedules and the planner (issue 27).
    bench_schedule(5);
    bench_plan(5);
    dpb::bench::bench_ledgers();
  }
  // Correlated noise (issue 28): the error table at one epsilon, and beside it
  // DP-SGD's own figure (its sigma for the same epsilon, one process).
  bench_matrix_sensitivity(21);
  bench_process(
      "mf-error: identity, tree, sqrt and 10 band counts, n = 2000, each calibrated to epsilon 8 "
      "at delta 1e-6",
      {DPBUDGET_BINARY, "mf-error", "--strategy", "identity,tree,sqrt,banded", "--steps", "2000",
       "--bands", "1,2,4,8,16,32,64,128,256,512", "--epsilon", "8", "--delta", "1e-6", nullptr},
      5, 2000);
  bench_process("mf-error, amplified: identity and 10 band counts, n = 2000, B/N 0.001, epsilon 8",
                {DPBUDGET_BINARY, "mf-error", "--strategy", "identity,banded", "--steps", "2000",
                 "--bands", "1,2,4,8,16,32,64,128,256,512", "--participation", "cyclic-poisson",
                 "--batch-fraction", "0.001", "--epsilon", "8", "--delta", "1e-6", nullptr},
                5, 2000);
  bench_process("DP-SGD beside it: dpbudget sigma -q 0.001 --steps 2000 --epsilon 8 --delta 1e-6",
                {DPBUDGET_BINARY, "sigma", "-q", "0.001", "--steps", "2000", "--epsilon", "8",
                 "--delta", "1e-6", nullptr},
                5);
  return 0;
}
