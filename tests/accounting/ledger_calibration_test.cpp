// Ledger calibration (docs/calibration.md#ledgers) and the budget split
// (docs/composition.md#budget-split), against independent values: the
// Gaussian's exact profile in 50 digits (one release and n releases as
// μ-GDP, μ = √n/σ), the Laplace profile's closed form, exact sums of the
// split's budgets in 50 digits, and the theorem's conditions.
#include "accounting/ledger_calibration.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "accounting/errors.hpp"
#include "accounting/numerics/outward.hpp"
#include "support/gdp_50_digits.hpp"

using namespace dpb;
using dpb::test::Mp;
using dpb::test::mp_gdp_delta;

namespace {

constexpr double kTolerance = 1e-4;  // the solvers' default relative tolerance

CalibrationSettings settings() { return {kTolerance, 1000}; }

RunTarget at_delta(double delta) { return {Measure::epsilon, delta, 0}; }

/// δ(ε) of n Gaussian releases of noise σ: √n/σ-GDP, exactly (50 digits).
Mp gaussian_delta_50(double sigma, std::int64_t n, double epsilon) {
  return mp_gdp_delta(boost::multiprecision::sqrt(Mp(n)) / Mp(sigma), Mp(epsilon));
}

LedgerOf gaussian_of() {
  return [](double sigma) { return make_gaussian(sigma); };
}

/// Σ values exactly (50 digits hold the sum of a few doubles of the same order).
Mp exact_sum(const std::vector<double>& values) {
  Mp s = 0;
  for (double v : values) s += Mp(v);
  return s;
}

}  // namespace

TEST_CASE(
    "a marked Gaussian noise multiplier: the smallest sigma within tolerance (exact profile)") {
  // gdp gives one Gaussian release its exact profile (1/σ-GDP).
  for (double epsilon : {0.5, 1.0, 4.0}) {
    CAPTURE(epsilon);
    const double delta = 1e-5;
    const auto solved = calibrate_ledger(gaussian_of(), RunUnknown::noise_multiplier, "gdp", {},
                                         epsilon, at_delta(delta), settings());
    CHECK(solved.guarantee.epsilon <= epsilon);
    CHECK(gaussian_delta_50(solved.value, 1, epsilon) <= Mp(delta) * Mp(1 + 1e-9));
    CHECK(gaussian_delta_50(solved.value * (1 - 2 * kTolerance), 1, epsilon) > Mp(delta));
  }
}

TEST_CASE("a marked count: the largest n with n Gaussian releases within the target") {
  // self_composed(n, gaussian(σ)) under gdp: √n/σ-GDP, exactly.
  const double sigma = 10, epsilon = 1, delta = 1e-5;
  const LedgerOf ledger = [&](double n) {
    return make_self_composed(static_cast<std::int64_t>(n), make_gaussian(sigma));
  };
  const auto solved =
      calibrate_ledger(ledger, RunUnknown::steps, "gdp", {}, epsilon, at_delta(delta), settings());
  const auto n = static_cast<std::int64_t>(solved.value);
  CHECK(static_cast<double>(n) == solved.value);
  CHECK(gaussian_delta_50(sigma, n, epsilon) <= Mp(delta) * Mp(1 + 1e-9));
  CHECK(gaussian_delta_50(sigma, n + 1, epsilon) > Mp(delta));
}

TEST_CASE("a marked Laplace scale meets the closed form b = 1/(epsilon - 2 log(1 - delta))") {
  // One Laplace release: ε(δ) = 1/b + 2 log(1 − δ) (docs/mechanisms.md#laplace),
  // so the smallest scale is 1/(ε − 2 log(1 − δ)).
  const LedgerOf ledger = [](double b) { return make_laplace(b); };
  for (const char* accountant : {"composition", "pld"}) {
    CAPTURE(accountant);
    const double epsilon = 0.5, delta = 1e-3;
    const double exact = 1 / (epsilon - 2 * std::log1p(-delta));
    const auto solved = calibrate_ledger(ledger, RunUnknown::noise_multiplier, accountant, {},
                                         epsilon, at_delta(delta), settings());
    CHECK(solved.guarantee.epsilon <= epsilon);
    // An upper bound on ε makes the scale found at least the exact one.
    CHECK(solved.value >= exact * (1 - 1e-12));
    CHECK(solved.value <= exact * (1 + 1e-2));
  }
}

TEST_CASE("sum_up: at least the exact sum, and at most one double above the nearest") {
  std::mt19937_64 rng(27);
  std::uniform_real_distribution<double> mantissa(0.5, 1.0);
  std::uniform_int_distribution<int> exponent(-30, 30);
  for (int i = 0; i < 20000; ++i) {
    const double a = std::ldexp(mantissa(rng), exponent(rng));
    const double b = std::ldexp(mantissa(rng), exponent(rng));
    const double s = outward::sum_up(a, b);
    CHECK(Mp(s) >= Mp(a) + Mp(b));
    CHECK(s <= std::nextafter(a + b, INFINITY));
  }
}

TEST_CASE("split_budget: the parts' budgets add up to at most the whole, each close to its share") {
  const std::vector<std::vector<double>> share_lists = {
      {0.9, 0.05, 0.05},
      {0.1, 0.2, 0.7},
      {0.333333333333, 0.333333333333, 0.333333333334},
      {1.0},
      {0.3, 0.3, 0.3, 0.1},
      {0.125, 0.875}};
  for (const auto& shares : share_lists)
    for (double epsilon : {8.0, 1.0, 0.1, 3.3}) {
      CAPTURE(shares.size());
      CAPTURE(epsilon);
      const double delta = 1e-5;
      const SplitBudget b = split_budget(shares, epsilon, delta);
      REQUIRE(b.epsilons.size() == shares.size());
      CHECK(exact_sum(b.epsilons) <= Mp(epsilon));
      CHECK(exact_sum(b.deltas) <= Mp(delta));
      double sum = 0;
      for (double s : shares) sum += s;
      for (std::size_t i = 0; i < shares.size(); ++i) {
        // Within a few doubles below ε·s_i/Σs.
        CHECK(b.epsilons[i] <= epsilon * shares[i] / sum * (1 + 1e-15));
        CHECK(b.epsilons[i] >= epsilon * shares[i] / sum * (1 - 1e-14));
        CHECK(b.deltas[i] >= delta * shares[i] / sum * (1 - 1e-14));
      }
    }
}

TEST_CASE("split_budget refuses a share not above 0 or above 1, and shares not summing to 1") {
  auto refused = [](std::vector<double> shares) {
    try {
      (void)split_budget(shares, 1, 1e-5);
    } catch (const InvalidParameter& e) {
      return e.field() == "split";
    }
    return false;
  };
  CHECK(refused({0.5, 0.4}));
  CHECK(refused({0.5, 0.5, 0.1}));
  CHECK(refused({0.0, 1.0}));
  CHECK(refused({-0.1, 1.1}));
  CHECK(refused({1.5}));
  CHECK(refused({}));
  CHECK(refused({0.5, 0.5 + 2e-9}));
  CHECK_FALSE(refused({0.5, 0.5 + 5e-10}));
}

TEST_CASE("calibrate_split: each part meets its share exactly, the sums meet the whole") {
  // Three Gaussian parts of 1, 10 and 100 releases under gdp (exact), shares
  // 0.9, 0.05, 0.05 of (8, 1e-5).
  const std::vector<std::int64_t> releases = {1, 10, 100};
  std::vector<LedgerPart> parts;
  for (std::int64_t n : releases)
    parts.push_back({[n](double sigma) { return make_self_composed(n, make_gaussian(sigma)); },
                     RunUnknown::noise_multiplier});
  const std::vector<double> shares = {0.9, 0.05, 0.05};
  const double epsilon = 8, delta = 1e-5;
  const CalibratedSplit split =
      calibrate_split(parts, shares, "gdp", {}, epsilon, delta, settings());
  REQUIRE(split.parts.size() == 3);
  std::vector<double> epsilons;
  for (std::size_t i = 0; i < 3; ++i) {
    CAPTURE(i);
    const double e_i = split.budget.epsilons[i], d_i = split.budget.deltas[i];
    const double sigma = split.parts[i].value;
    CHECK(gaussian_delta_50(sigma, releases[i], e_i) <= Mp(d_i) * Mp(1 + 1e-9));
    CHECK(gaussian_delta_50(sigma * (1 - 2 * kTolerance), releases[i], e_i) > Mp(d_i));
    CHECK(split.parts[i].guarantee.delta == d_i);
    epsilons.push_back(split.parts[i].guarantee.epsilon);
  }
  CHECK(Mp(split.epsilon_sum) >= exact_sum(epsilons));
  CHECK(split.epsilon_sum <= epsilon);
  CHECK(split.delta_sum <= delta);
  CHECK(split.bound == BoundKind::upper);
  CHECK(split.neighbouring == Neighbouring::add_remove);
}

TEST_CASE(
    "calibrate_split refuses parts under different relations and a count of shares unlike the "
    "parts") {
  std::vector<LedgerPart> parts = {
      {[](double s) { return make_poisson_sampled(0.01, make_gaussian(s)); },
       RunUnknown::noise_multiplier},
      {[](double s) { return make_sampled_without_replacement(1000, 10, make_gaussian(s)); },
       RunUnknown::noise_multiplier}};
  const std::vector<double> halves = {0.5, 0.5};
  CHECK_THROWS_WITH_AS(calibrate_split(parts, halves, "rdp", {}, 2, 1e-5, settings()),
                       doctest::Contains("under no one relation"), InvalidParameter);
  const std::vector<double> thirds = {0.4, 0.3, 0.3};
  CHECK_THROWS_WITH_AS(calibrate_split(parts, thirds, "rdp", {}, 2, 1e-5, settings()),
                       doctest::Contains("3 shares for 2 parts"), InvalidParameter);
  // With one relation asked for, both parts are accounted under it.
  AccountantOptions replace_one;
  replace_one.neighbouring = Neighbouring::replace_one;
  std::vector<LedgerPart> same = {parts[1], parts[1]};
  const auto split = calibrate_split(same, halves, "rdp", replace_one, 2, 1e-5, settings());
  CHECK(split.neighbouring == Neighbouring::replace_one);
}
