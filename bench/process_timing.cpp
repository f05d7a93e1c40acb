// Timing whole processes for the benchmark (process_timing.hpp).
#include "process_timing.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace dpb::bench {

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

long g_last_max_rss_kib = 0;

double run_once(const char* const* argv) {
  std::fflush(stdout);  // the child must not inherit buffered output
  const auto t0 = Clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    if (!std::freopen("/dev/null", "w", stdout)) _exit(127);
    execv(argv[0], const_cast<char* const*>(argv));
    _exit(127);
  }
  int status = 0;
  struct rusage usage {};
  wait4(pid, &status, 0, &usage);
  const double seconds = seconds_since(t0);
  g_last_max_rss_kib = usage.ru_maxrss;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "dpbudget_bench: %s failed\n", argv[0]);
    std::exit(1);
  }
  return seconds;
}

void bench_startup(const char* title, const std::vector<const char*>& args, int pairs,
                   double goal_ratio) {
  const std::vector<const char*> truth{"/bin/true", nullptr};
  std::vector<double> ratios, ours, theirs;
  for (int i = 0; i < pairs; ++i) {
    const double t = run_once(truth.data());
    const double o = run_once(args.data());
    ratios.push_back(o / t);
    ours.push_back(o);
    theirs.push_back(t);
  }
  for (auto* v : {&ratios, &ours, &theirs}) std::sort(v->begin(), v->end());
  const std::size_t m = ratios.size() / 2;
  std::printf(
      "start-up: %s: median %.2f ms, /bin/true %.2f ms, median ratio %.2f over %d pairs (goal "
      "<= %.1fx: %s)\n",
      title, 1e3 * ours[m], 1e3 * theirs[m], ratios[m], pairs, goal_ratio,
      ratios[m] <= goal_ratio ? "met" : "NOT met");
}

void bench_process(const char* title, const std::vector<const char*>& args, int runs,
                   double goal_ms) {
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) t.push_back(run_once(args.data()));
  std::sort(t.begin(), t.end());
  std::printf("%s: median %.2f ms, min %.2f ms, max %.2f ms over %d runs", title,
              1e3 * t[t.size() / 2], 1e3 * t.front(), 1e3 * t.back(), runs);
  if (goal_ms > 0)
    std::printf(" (goal <= %.0f ms: %s)", goal_ms,
                1e3 * t[t.size() / 2] <= goal_ms ? "met" : "NOT met");
  std::printf("\n");
}

}  // namespace dpb::bench
