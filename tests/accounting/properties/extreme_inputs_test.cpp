// Extreme inputs (hardening): every accountant, on every corner of
// q × σ × T × δ (and orders up to 1e6), answers with a finite or infinite
// ε/δ — never NaN, never negative — or refuses cleanly with one of the
// library's errors. A hang is a failure: ctest runs these cases under a
// TIMEOUT (tests/CMakeLists.txt), and each case prints the slowest single call
// so the bound can be read from the log (docs/errors.md#claims).
//
// A refusal is no check at all, so each corner counts its answers: it states
// how many of its points it expects answered (derived below from the grid and
// the documented refusals, each with its reason) and fails, naming the
// points, when one of those is refused or fewer are answered.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "accounting/accountant.hpp"
#include "accounting/dpsgd/calibration.hpp"
#include "accounting/errors.hpp"
#include "accounting/events/events.hpp"

using namespace dpb;

namespace {

constexpr double kQ[] = {0, 1e-12, 1e-6, 0.5, 1 - 1e-12, 1};
constexpr double kSigma[] = {1e-3, 0.1, 0.5, 1e3, 1e4};
constexpr std::int64_t kSteps[] = {1, 1'000'000, 1'000'000'000'000};
constexpr double kDelta[] = {1e-300, 1e-12, 0.5, 0.999};
constexpr std::size_t kGridSize = 6 * 5 * 3 * 4;

struct Point {
  double q, sigma;
  std::int64_t steps;
  double delta;
};

/// Point i of the whole grid: q varies slowest, then σ, T and δ fastest.
constexpr Point grid_point(std::size_t i) {
  return {kQ[i / 60], kSigma[i / 12 % 5], kSteps[i / 4 % 3], kDelta[i % 4]};
}

/// Point i of a sample in which every value of every axis occurs: the i-th
/// value of each axis modulo its length (lengths 6, 5, 3, 4 make 60 distinct
/// points, then repeat).
constexpr Point sample_point(std::size_t i) {
  return {kQ[i % 6], kSigma[i % 5], kSteps[i % 3], kDelta[i % 4]};
}

std::string describe(const std::string& accountant, const Point& p) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s q=%.17g sigma=%g steps=%lld delta=%g", accountant.c_str(), p.q,
                p.sigma, static_cast<long long>(p.steps), p.delta);
  return buf;
}

// --- What each corner expects answered --------------------------------------

enum class Acc { rdp, gdp, composition, pld };

constexpr const char* name_of(Acc a) {
  switch (a) {
    case Acc::rdp:
      return "rdp";
    case Acc::gdp:
      return "gdp";
    case Acc::composition:
      return "composition";
    case Acc::pld:
      return "pld";
  }
  return "";
}

/// Optimal composition refuses more than 10⁹ steps
/// (docs/errors.md#error-model-and-guarantees: an input past an accountant's
/// documented limit is refused).
constexpr std::int64_t kCompositionStepLimit = 1'000'000'000;
/// The solvers' target: ε ≤ 1, and the noise searched up to σ = 1000.
constexpr double kTargetEpsilon = 1.0;
constexpr double kMaxSigma = 1000;
/// PLD's upper δ carries its round-off and truncation bounds
/// (docs/pld.md#round-off), which grow as δ shrinks relative to them and as the
/// count grows: below this δ, or past this many steps, it may certify only
/// ε = inf (docs/errors.md#error-model-and-guarantees), so a solver on it may
/// find nothing.
constexpr double kPldSmallestSureDelta = 0.5;
constexpr std::int64_t kPldLargestSureSteps = 1'000'000;

/// Whether a point must be answered; a point that need not be is one whose
/// refusal is explained by the rule that marks it.
enum class Expect { answer, may_refuse };

/// epsilon and delta: every accountant answers every point (inf where it
/// cannot certify a finite bound), but composition refuses T > 10⁹.
constexpr Expect expect_epsilon_delta(Acc a, const Point& p) {
  if (a == Acc::composition && p.steps > kCompositionStepLimit) return Expect::may_refuse;
  return Expect::answer;
}

/// sigma (smallest σ ≤ 1000 with ε ≤ 1, at the point's q, T, δ): answered
/// wherever σ = 1000 surely meets the target —
///  - q = 0: nothing is released;
///  - T = 1: one Gaussian release at σ = 1000 has ε ≤ √(2 ln(1.25/δ))/σ
///    ≈ 0.04 even at δ = 1e-300 (Dwork & Roth 2014, Theorem A.1);
///  - q ≤ 1e-6 (so q²T ≤ 1 on this grid): a per-step loss of order q/σ, ε far
///    below 1 even at δ = 1e-300.
/// Refusals expected: q ≥ 0.5 with T ≥ 10⁶ (near a Gaussian of μ = q√T/σ ≥ 0.5
/// at σ = 1000: ε ≤ 1 only at a large δ, and not under every bound);
/// composition past 10⁹ steps; pld below δ = 0.5 or past 10⁶ steps (above).
constexpr Expect expect_sigma(Acc a, const Point& p) {
  if (a == Acc::composition && p.steps > kCompositionStepLimit) return Expect::may_refuse;
  if (p.q == 0) return Expect::answer;
  if (a == Acc::pld && (p.delta < kPldSmallestSureDelta || p.steps > kPldLargestSureSteps))
    return Expect::may_refuse;
  if (p.steps == 1 || p.q <= 1e-6) return Expect::answer;
  return Expect::may_refuse;
}

/// steps (largest T ≤ 2⁵³ with ε ≤ 1, at the point's q, σ, δ): answered
/// wherever one step surely meets the target and the count is in range —
///  - q = 0: every count fits (the answer is 2⁵³);
///  - σ ≥ 1000: one step costs at most one Gaussian release at σ = 1000
///    (ε ≈ 0.04 even at δ = 1e-300).
/// Refusals expected: σ ≤ 0.5 with q > 0 (one step is, with probability q, a
/// Gaussian with μ ≥ 2: ε ≤ 1 only where q is small against δ, which RDP and
/// the central limit cannot use); pld below δ = 0.5 (above); composition,
/// which exits with no solution when every count up to 10⁹ fits
/// (docs/errors.md#error-model-and-guarantees): at q = 0, and wherever more
/// than 10⁹ steps may fit — it answers at σ ≥ 1000 only for q ≥ 0.5 at
/// σ = 1000, or at σ = 10⁴ with δ ≤ 1e-12, where even the tight count (a
/// Gaussian of μ ≈ q√T/σ reaching ε = 1 at that δ) stays below 10⁹.
constexpr Expect expect_steps(Acc a, const Point& p) {
  if (a == Acc::composition) {
    const bool under_limit = p.sigma == 1e3 || p.delta <= 1e-12;
    return p.q >= 0.5 && p.sigma >= 1e3 && under_limit ? Expect::answer : Expect::may_refuse;
  }
  if (p.q == 0) return Expect::answer;
  if (a == Acc::pld && p.delta < kPldSmallestSureDelta) return Expect::may_refuse;
  return p.sigma >= 1e3 ? Expect::answer : Expect::may_refuse;
}

/// sampling-rate (largest q ∈ [0, 1] with ε ≤ 1, at the point's σ, T, δ):
/// answered everywhere, since q = 0 releases nothing and so always meets the
/// target; composition refuses past 10⁹ steps.
constexpr Expect expect_rate(Acc a, const Point& p) { return expect_epsilon_delta(a, p); }

enum class Solver { sigma, steps, rate };

constexpr Expect expect(Solver s, Acc a, const Point& p) {
  switch (s) {
    case Solver::sigma:
      return expect_sigma(a, p);
    case Solver::steps:
      return expect_steps(a, p);
    case Solver::rate:
      return expect_rate(a, p);
  }
  return Expect::answer;
}

/// How many of the whole grid's points epsilon and delta must answer.
constexpr int grid_answers(Acc a) {
  int n = 0;
  for (std::size_t i = 0; i < kGridSize; ++i)
    n += expect_epsilon_delta(a, grid_point(i)) == Expect::answer;
  return n;
}

/// How many of sample points [first, last) epsilon and delta must answer.
constexpr int sample_answers(Acc a, std::size_t first, std::size_t last) {
  int n = 0;
  for (std::size_t i = first; i < last; ++i)
    n += expect_epsilon_delta(a, sample_point(i)) == Expect::answer;
  return n;
}

/// How many of sample points [first, last) a solver must answer.
constexpr int solver_answers(Solver s, Acc a, std::size_t first, std::size_t last) {
  int n = 0;
  for (std::size_t i = first; i < last; ++i) n += expect(s, a, sample_point(i)) == Expect::answer;
  return n;
}

/// One corner's count: how many points it answered against how many it must,
/// and the points it must answer that were refused, with the refusal.
class Tally {
 public:
  Tally(std::string corner, int expected) : corner_(std::move(corner)), expected_(expected) {}

  void answered() {
    ++points_;
    ++answered_;
  }
  void refused(Expect e, const std::string& what, const std::string& why) {
    ++points_;
    if (e == Expect::answer) missed_.push_back(what + ": " + why);
  }
  void check() const {
    std::string missed;
    for (const auto& m : missed_) missed += "\n  " + m;
    MESSAGE(corner_ << ": " << answered_ << " of " << points_ << " points answered (at least "
                    << expected_ << " expected)");
    CHECK_MESSAGE(answered_ >= expected_, corner_ << ": only " << answered_ << " of " << points_
                                                  << " points answered, expected at least "
                                                  << expected_ << missed);
    CHECK_MESSAGE(missed_.empty(), corner_ << ": refused where an answer is expected:" << missed);
  }

 private:
  std::string corner_;
  int expected_;
  int points_ = 0;
  int answered_ = 0;
  std::vector<std::string> missed_;
};

/// Slowest call of a test case, in seconds (printed, never asserted).
struct Stopwatch {
  double slowest = 0;
  std::string where;
  template <class F>
  void time(const std::string& what, F&& f) {
    const auto start = std::chrono::steady_clock::now();
    f();
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (s > 1) MESSAGE("slow call " << s << " s: " << what);
    if (s > slowest) {
      slowest = s;
      where = what;
    }
  }
  ~Stopwatch() { MESSAGE("slowest call " << slowest << " s: " << where); }
};

/// ε must be +inf or a finite number ≥ 0; an error must be one of the
/// library's documented exceptions (anything else escapes and fails the case).
void check_epsilon(const Guarantee& g, const std::string& what) {
  INFO(what);
  CHECK_FALSE(std::isnan(g.epsilon));
  CHECK(g.epsilon >= 0);
  if (g.epsilon_lower) {
    CHECK_FALSE(std::isnan(*g.epsilon_lower));
    CHECK(*g.epsilon_lower >= 0);
    CHECK(*g.epsilon_lower <= g.epsilon);
  }
}

void check_delta(const Guarantee& g, const std::string& what) {
  INFO(what);
  CHECK_FALSE(std::isnan(g.delta));
  CHECK(g.delta >= 0);
  CHECK(g.delta <= 1);
}

/// Runs the epsilon and delta "verbs" of one accountant at one point.
void epsilon_and_delta(Acc acc, const AccountantOptions& options, const Point& p, Stopwatch& watch,
                       Tally& tally) {
  const std::string what = describe(name_of(acc), p);
  watch.time(what, [&] {
    try {
      auto a = make_accountant(name_of(acc), options);
      a->compose(*make_dp_sgd(p.q, p.sigma, p.steps));
      check_epsilon(a->epsilon(p.delta), what + " epsilon");
      check_delta(a->delta(1.0), what + " delta(1)");
      tally.answered();
    } catch (const InvalidParameter& e) {
      tally.refused(expect_epsilon_delta(acc, p), what, e.what());
    } catch (const UnsupportedEvent& e) {
      tally.refused(expect_epsilon_delta(acc, p), what, e.what());
    }
  });
}

/// epsilon and delta of one accountant on the whole grid, counted.
void whole_grid(Acc acc, const AccountantOptions& options, Tally& tally) {
  Stopwatch watch;
  for (std::size_t i = 0; i < kGridSize; ++i)
    epsilon_and_delta(acc, options, grid_point(i), watch, tally);
}

// Every point of the whole grid is answered, but composition's 120 points
// with 10¹² steps (past its 10⁹ limit).
static_assert(kGridSize == 360);
constexpr int kRdpGridAnswers = 360, kGdpGridAnswers = 360, kCompositionGridAnswers = 240;
static_assert(grid_answers(Acc::rdp) == kRdpGridAnswers);
static_assert(grid_answers(Acc::gdp) == kGdpGridAnswers);
static_assert(grid_answers(Acc::composition) == kCompositionGridAnswers);
/// pld on the first 60 sample points (every value of every axis): all answered.
constexpr std::size_t kPldSample = 60;
constexpr int kPldSampleAnswers = 60;
static_assert(sample_answers(Acc::pld, 0, kPldSample) == kPldSampleAnswers);

}  // namespace

TEST_CASE("extreme inputs: rdp, gdp and composition epsilon/delta on the whole grid") {
  for (const auto& [acc, expected] :
       {std::pair{Acc::rdp, kRdpGridAnswers}, std::pair{Acc::gdp, kGdpGridAnswers},
        std::pair{Acc::composition, kCompositionGridAnswers}}) {
    Tally tally(std::string(name_of(acc)) + " epsilon/delta", expected);
    whole_grid(acc, {}, tally);
    tally.check();
  }
}

TEST_CASE("extreme inputs: rdp with orders up to 1e6, both conversions") {
  for (auto conversion : {RdpConversion::improved, RdpConversion::classic}) {
    AccountantOptions o;
    o.rdp.orders = {1.0001, 1.5, 2, 32, 1e3, 1e5, 1e6};
    o.rdp.conversion = conversion;
    Tally tally(conversion == RdpConversion::improved ? "rdp epsilon/delta, orders to 1e6, improved"
                                                      : "rdp epsilon/delta, orders to 1e6, classic",
                kRdpGridAnswers);
    whole_grid(Acc::rdp, o, tally);
    tally.check();
  }
}

TEST_CASE("extreme inputs: pld epsilon/delta on a sample covering every value") {
  Tally tally("pld epsilon/delta", kPldSampleAnswers);
  {
    Stopwatch watch;
    for (std::size_t i = 0; i < kPldSample; ++i)
      epsilon_and_delta(Acc::pld, {}, sample_point(i), watch, tally);
  }
  tally.check();
}

TEST_CASE("extreme inputs: gdp outside the central limit regime says so") {
  auto a = make_accountant("gdp", {});
  a->compose(*make_dp_sgd(0.5, 0.1, 1));
  const auto g = a->epsilon(1e-5);
  CHECK(g.bound == BoundKind::approximate);
  const bool noted = std::any_of(g.notes.begin(), g.notes.end(), [](const std::string& n) {
    return n.find("outside the central limit regime") != std::string::npos;
  });
  CHECK(noted);
  // Inside the regime (many steps, each nearly private) there is no such note.
  auto b = make_accountant("gdp", {});
  b->compose(*make_dp_sgd(0.01, 1.1, 10000));
  for (const auto& n : b->epsilon(1e-5).notes)
    CHECK(n.find("outside the central limit regime") == std::string::npos);
}

// Every accountant's sigma, steps and sampling-rate solvers at the corners: rdp and gdp on
// 72 sample points (every value of every axis at least 12 times), composition and
// pld, whose evaluations cost seconds at 10⁶ steps or near the PLD grid limit, on 12 points
// (every value at least twice). What each must answer: expect_sigma, expect_steps and
// expect_rate above.
namespace {

/// Relative tolerances of the σ and q searches.
constexpr double kSigmaTolerance = 1e-3;
constexpr double kRateTolerance = 1e-3;

/// How many points of a part each solver must answer.
struct Answers {
  int sigma, steps, rate;
};

constexpr bool derived(Acc a, std::size_t first, std::size_t last, Answers n) {
  return solver_answers(Solver::sigma, a, first, last) == n.sigma &&
         solver_answers(Solver::steps, a, first, last) == n.steps &&
         solver_answers(Solver::rate, a, first, last) == n.rate;
}

/// Runs one solver at one point; `solve` returns normally with an answer it
/// has checked, or throws one of the library's refusals.
template <class F>
void solve_at(Solver solver, Acc acc, const Point& p, const std::string& what, Stopwatch& watch,
              Tally& tally, F&& solve) {
  watch.time(what, [&] {
    try {
      solve();
      tally.answered();
    } catch (const NoSolution& e) {
      tally.refused(expect(solver, acc, p), what, e.what());
    } catch (const InvalidParameter& e) {
      tally.refused(expect(solver, acc, p), what, e.what());
    } catch (const UnsupportedEvent& e) {
      tally.refused(expect(solver, acc, p), what, e.what());
    }
  });
}

/// Points [first, last) of the corner sample of one accountant, each solver
/// counted against `expected`.
void solver_corners(Acc acc, std::size_t first, std::size_t last, Answers expected) {
  const std::string name = name_of(acc);
  const std::string part =
      name + " points " + std::to_string(first) + " to " + std::to_string(last - 1);
  Tally sigmas(part + ", sigma", expected.sigma);
  Tally counts(part + ", steps", expected.steps);
  Tally rates(part + ", sampling-rate", expected.rate);
  {
    Stopwatch watch;
    for (std::size_t i = first; i < last; ++i) {
      const Point p = sample_point(i);
      const EpsilonOracle oracle{name, {}, p.delta};
      const std::string what = describe(name, p);
      solve_at(Solver::sigma, acc, p, what + " sigma", watch, sigmas, [&] {
        const auto s =
            smallest_noise_multiplier([&](double x) { return make_dp_sgd(p.q, x, p.steps); },
                                      oracle, kTargetEpsilon, kSigmaTolerance, kMaxSigma);
        INFO(what);
        CHECK(s.noise_multiplier > 0);
        CHECK(std::isfinite(s.noise_multiplier));
        CHECK(s.guarantee.epsilon <= kTargetEpsilon);
      });
      solve_at(Solver::steps, acc, p, what + " steps", watch, counts, [&] {
        const auto c = largest_count([&](std::int64_t n) { return make_dp_sgd(p.q, p.sigma, n); },
                                     oracle, kTargetEpsilon);
        INFO(what);
        CHECK(c.count >= 1);
        CHECK_FALSE(std::isnan(c.guarantee.epsilon));
        CHECK(c.guarantee.epsilon <= kTargetEpsilon);
      });
      solve_at(Solver::rate, acc, p, what + " sampling-rate", watch, rates, [&] {
        const auto r = largest_value([&](double x) { return make_dp_sgd(x, p.sigma, p.steps); },
                                     oracle, kTargetEpsilon, 0.0, 1.0, kRateTolerance);
        INFO(what);
        CHECK(r.value >= 0);
        CHECK(r.value <= 1);
        CHECK_FALSE(std::isnan(r.guarantee.epsilon));
        CHECK(r.guarantee.epsilon <= kTargetEpsilon);
      });
    }
  }
  sigmas.check();
  counts.check();
  rates.check();
}

// The points each part must answer (sigma, steps, sampling-rate), checked at
// compile time against the rules above.
constexpr Answers kRdpFirstHalf{24, 18, 36}, kRdpSecondHalf{24, 18, 36};
static_assert(derived(Acc::rdp, 0, 36, kRdpFirstHalf));
static_assert(derived(Acc::rdp, 36, 72, kRdpSecondHalf));
constexpr Answers kGdp{48, 36, 72};
static_assert(derived(Acc::gdp, 0, 72, kGdp));
// Composition: 4 of its 12 points have 10¹² steps.
constexpr Answers kComposition{6, 3, 8};
static_assert(derived(Acc::composition, 0, 12, kComposition));
// pld: most of its points lie below δ = 0.5 or past 10⁶ steps; the
// sampling-rate solver still answers each.
constexpr Answers kPld1{1, 1, 3}, kPld2{1, 1, 3}, kPld3{2, 1, 3}, kPld4{0, 0, 3};
static_assert(derived(Acc::pld, 0, 3, kPld1));
static_assert(derived(Acc::pld, 3, 6, kPld2));
static_assert(derived(Acc::pld, 6, 9, kPld3));
static_assert(derived(Acc::pld, 9, 12, kPld4));

}  // namespace

// Split into parts that each stay far inside the ctest limit under ASan.
TEST_CASE("extreme inputs: sigma, steps and sampling-rate solvers at the corners, rdp 1/2") {
  solver_corners(Acc::rdp, 0, 36, kRdpFirstHalf);
}
TEST_CASE("extreme inputs: sigma, steps and sampling-rate solvers at the corners, rdp 2/2") {
  solver_corners(Acc::rdp, 36, 72, kRdpSecondHalf);
}
TEST_CASE("extreme inputs: sigma, steps and sampling-rate solvers at the corners, gdp") {
  solver_corners(Acc::gdp, 0, 72, kGdp);
}
TEST_CASE("extreme inputs: sigma, steps and sampling-rate solvers at the corners, composition") {
  solver_corners(Acc::composition, 0, 12, kComposition);
}
// pld: the most costly (evaluations near its grid limit take seconds each).
TEST_CASE("extreme inputs: sigma, steps and sampling-rate solvers at the corners, pld 1/4") {
  solver_corners(Acc::pld, 0, 3, kPld1);
}
TEST_CASE("extreme inputs: sigma, steps and sampling-rate solvers at the corners, pld 2/4") {
  solver_corners(Acc::pld, 3, 6, kPld2);
}
TEST_CASE("extreme inputs: sigma, steps and sampling-rate solvers at the corners, pld 3/4") {
  solver_corners(Acc::pld, 6, 9, kPld3);
}
TEST_CASE("extreme inputs: sigma, steps and sampling-rate solvers at the corners, pld 4/4") {
  solver_corners(Acc::pld, 9, 12, kPld4);
}
