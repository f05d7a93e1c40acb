// Extreme inputs (hardening): every accountant, on every corner of
// q × σ × T × δ (and orders up to 1e6), answers with a finite or infinite
// ε/δ — never NaN, never negative — or refuses cleanly with one of the
// library's errors. A hang is a failure: ctest runs these cases under a
// TIMEOUT (tests/CMakeLists.txt), and each case prints the slowest single call
// so the bound can be read from the log (README, "Error model and guarantees").
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "accounting/accountant.hpp"
#include "accounting/dpsgd/calibration.hpp"
#include "accounting/errors.hpp"
#include "accounting/events/events.hpp"

using namespace dpb;

namespace {

const double kQ[] = {0, 1e-12, 1e-6, 0.5, 1 - 1e-12, 1};
const double kSigma[] = {1e-3, 0.1, 0.5, 1e3, 1e4};
const std::int64_t kSteps[] = {1, 1'000'000, 1'000'000'000'000};
const double kDelta[] = {1e-300, 1e-12, 0.5, 0.999};

struct Point {
  double q, sigma;
  std::int64_t steps;
  double delta;
};

std::string describe(const std::string& accountant, const Point& p) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s q=%.17g sigma=%g steps=%lld delta=%g", accountant.c_str(), p.q,
                p.sigma, static_cast<long long>(p.steps), p.delta);
  return buf;
}

/// Every point of the grid, or (`sampled`) a sample in which every value of
/// every axis occurs at least twice: point i takes the i-th value of each axis
/// modulo its length, and lengths 6, 5, 3, 4 make 60 distinct points.
std::vector<Point> grid(bool sampled) {
  std::vector<Point> out;
  if (sampled) {
    for (int i = 0; i < 60; ++i)
      out.push_back({kQ[i % 6], kSigma[i % 5], kSteps[i % 3], kDelta[i % 4]});
    return out;
  }
  for (double q : kQ)
    for (double s : kSigma)
      for (std::int64_t t : kSteps)
        for (double d : kDelta) out.push_back({q, s, t, d});
  return out;
}

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
void epsilon_and_delta(const std::string& name, const AccountantOptions& options, const Point& p,
                       Stopwatch& watch) {
  const std::string what = describe(name, p);
  watch.time(what, [&] {
    try {
      auto a = make_accountant(name, options);
      a->compose(*make_dp_sgd(p.q, p.sigma, p.steps));
      check_epsilon(a->epsilon(p.delta), what + " epsilon");
      check_delta(a->delta(1.0), what + " delta(1)");
    } catch (const InvalidParameter& e) {
      MESSAGE(what << ": refused: " << std::string(e.what()));
    } catch (const UnsupportedEvent& e) {
      MESSAGE(what << ": refused: " << std::string(e.what()));
    }
  });
}

}  // namespace

TEST_CASE("extreme inputs: rdp, gdp and composition epsilon/delta on the whole grid") {
  for (const char* name : {"rdp", "gdp", "composition"}) {
    Stopwatch watch;
    for (const auto& p : grid(false)) epsilon_and_delta(name, {}, p, watch);
  }
}

TEST_CASE("extreme inputs: rdp with orders up to 1e6, both conversions") {
  Stopwatch watch;
  for (auto conversion : {RdpConversion::improved, RdpConversion::classic}) {
    AccountantOptions o;
    o.orders = {1.0001, 1.5, 2, 32, 1e3, 1e5, 1e6};
    o.conversion = conversion;
    for (const auto& p : grid(false)) epsilon_and_delta("rdp", o, p, watch);
  }
}

TEST_CASE("extreme inputs: pld epsilon/delta on a sample covering every value") {
  Stopwatch watch;
  for (const auto& p : grid(true)) epsilon_and_delta("pld", {}, p, watch);
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
// 72 points (every value of every axis at least 12 times), composition and
// pld, whose evaluations cost seconds at 10⁶ steps or near the PLD grid limit, on 12 points
// (every value at least twice). Composition refuses more than 10⁹ steps.
namespace {

/// Points [first, last) of the corner sample of one accountant.
void solver_corners(const std::string& name, std::size_t first, std::size_t last) {
  {
    Stopwatch watch;
    for (std::size_t i = first; i < last; ++i) {
      const double q = kQ[i % 6];
      const std::int64_t steps = kSteps[i % 3];
      const double delta = kDelta[i % 4];
      const double sigma = kSigma[i % 5];
      const EpsilonOracle oracle{name, {}, delta};
      const double target = 1.0;
      const std::string what = describe(name, {q, sigma, steps, delta});
      watch.time(what + " sigma", [&] {
        try {
          const auto s = smallest_noise_multiplier(
              [&](double x) { return make_dp_sgd(q, x, steps); }, oracle, target, 1e-3, 1000);
          INFO(what);
          CHECK(s.noise_multiplier > 0);
          CHECK(std::isfinite(s.noise_multiplier));
          CHECK(s.guarantee.epsilon <= target);
        } catch (const NoSolution&) {
        } catch (const InvalidParameter&) {
        } catch (const UnsupportedEvent& e) {
          MESSAGE(what << ": refused: " << std::string(e.what()));
        }
      });
      watch.time(what + " steps", [&] {
        try {
          const auto c = largest_count([&](std::int64_t n) { return make_dp_sgd(q, sigma, n); },
                                       oracle, target);
          INFO(what);
          CHECK(c.count >= 1);
          CHECK_FALSE(std::isnan(c.guarantee.epsilon));
          CHECK(c.guarantee.epsilon <= target);
        } catch (const NoSolution&) {
        } catch (const InvalidParameter&) {
        } catch (const UnsupportedEvent& e) {
          MESSAGE(what << ": refused: " << std::string(e.what()));
        }
      });
      watch.time(what + " sampling-rate", [&] {
        try {
          const auto r = largest_value([&](double x) { return make_dp_sgd(x, sigma, steps); },
                                       oracle, target, 0.0, 1.0, 1e-3);
          INFO(what);
          CHECK(r.value >= 0);
          CHECK(r.value <= 1);
          CHECK_FALSE(std::isnan(r.guarantee.epsilon));
          CHECK(r.guarantee.epsilon <= target);
        } catch (const NoSolution&) {
        } catch (const InvalidParameter&) {
        } catch (const UnsupportedEvent& e) {
          MESSAGE(what << ": refused: " << std::string(e.what()));
        }
      });
    }
  }
}

}  // namespace

// Split into parts that each stay far inside the ctest limit under ASan.
TEST_CASE("extreme inputs: sigma, steps and sampling-rate solvers at the corners, rdp 1/2") {
  solver_corners("rdp", 0, 36);
}
TEST_CASE("extreme inputs: sigma, steps and sampling-rate solvers at the corners, rdp 2/2") {
  solver_corners("rdp", 36, 72);
}
TEST_CASE("extreme inputs: sigma, steps and sampling-rate solvers at the corners, gdp") {
  solver_corners("gdp", 0, 72);
}
TEST_CASE("extreme inputs: sigma, steps and sampling-rate solvers at the corners, composition") {
  solver_corners("composition", 0, 12);
}
// pld: the most costly (evaluations near its grid limit take seconds each).
TEST_CASE("extreme inputs: sigma, steps and sampling-rate solvers at the corners, pld 1/4") {
  solver_corners("pld", 0, 3);
}
TEST_CASE("extreme inputs: sigma, steps and sampling-rate solvers at the corners, pld 2/4") {
  solver_corners("pld", 3, 6);
}
TEST_CASE("extreme inputs: sigma, steps and sampling-rate solvers at the corners, pld 3/4") {
  solver_corners("pld", 6, 9);
}
TEST_CASE("extreme inputs: sigma, steps and sampling-rate solvers at the corners, pld 4/4") {
  solver_corners("pld", 9, 12);
}
