// The pair amplified banded MF attains (docs/matrix.md#amplified-banded-mf): one
// group's steps as Poisson-sampled Gaussians at σ/‖c_s‖, its norms rounded down. Checked
// against the same group composed here from the strategy's entries, and, where the
// releases are floored to a grid, against the exact composition's upper bound.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "accounting/events/events.hpp"
#include "accounting/matrix/strategy.hpp"
#include "accounting/matrix_run.hpp"
#include "accounting/pld/pld_accountant.hpp"

namespace {

/// The PLD interval of `event` at δ (default options: tolerance 1e-3).
dpb::Guarantee attained_test_pld(const dpb::DpEvent& event, double delta) {
  dpb::PldAccountant pld(dpb::AccountantOptions{});
  pld.compose(event);
  return pld.epsilon(delta);
}

/// The composition of Poisson-sampled Gaussians at σ/‖c‖ for each norm given.
dpb::EventPtr attained_test_group(const std::vector<double>& norms, double q, double sigma) {
  std::vector<dpb::EventPtr> steps;
  for (double norm : norms)
    steps.push_back(dpb::make_poisson_sampled(q, dpb::make_gaussian(sigma / norm)));
  return dpb::make_composed(std::move(steps));
}

}  // namespace

TEST_CASE("amplified MF: column norms rounded down are at most those rounded up, both tight") {
  const auto strategy = dpb::matrix::Strategy{dpb::matrix::banded_square_root_strategy(50, 7)};
  const auto up = dpb::matrix::column_norms_squared(strategy);
  const auto down = dpb::matrix::column_norms_squared_down(strategy);
  REQUIRE(up.size() == down.size());
  for (std::size_t j = 0; j < up.size(); ++j) {
    CHECK(down[j] <= up[j]);
    CHECK(down[j] >= up[j] * (1 - 1e-14));  // a sum of 7 squares: a few ulps apart
  }
  const auto identity = dpb::matrix::Strategy{dpb::matrix::toeplitz_strategy({1.0}, 5)};
  for (double v : dpb::matrix::column_norms_squared_down(identity)) CHECK(v == 1.0);
}

TEST_CASE("amplified MF: the attained pair is the heaviest group's steps, below its exact value") {
  // Banded square root, n = 10, b = 4: group 0 has steps 0, 4, 8 (column 8 cut to rows 8
  // and 9); groups 1 to 3 weigh less (column 9 is c_0 alone; groups 2, 3 have 2 steps).
  const auto strategy = dpb::matrix::Strategy{dpb::matrix::banded_square_root_strategy(10, 4)};
  const auto& c = std::get<dpb::matrix::Toeplitz>(strategy).coefficients;
  const double full = std::sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2] + c[3] * c[3]);
  const double cut = std::sqrt(c[0] * c[0] + c[1] * c[1]);
  const dpb::EventPtr mine = attained_test_group({full, full, cut}, 0.05, 1.1);
  const dpb::EventPtr attained = dpb::amplified_attained_event(strategy, 4, 0.05, 1.1);
  REQUIRE(attained);
  const dpb::Guarantee a = attained_test_pld(*attained, 1e-6);
  const dpb::Guarantee m = attained_test_pld(*mine, 1e-6);
  CHECK(a.lower_end == dpb::LowerEnd::lower_bound);
  REQUIRE(a.epsilon_lower);
  CHECK(*a.epsilon_lower <= m.epsilon);  // below group 0's exact value
  CHECK(*a.epsilon_lower == doctest::Approx(*m.epsilon_lower).epsilon(1e-6));
  CHECK(*a.epsilon_lower == doctest::Approx(1.2918848).epsilon(2e-3));  // dp_accounting's
}

TEST_CASE("amplified MF: past 32 distinct norms the releases are floored, still below the truth") {
  // One group (b = 1) of 40 steps whose columns are the diagonal alone, of 40 distinct
  // norms 0.5 + i/100: floored to multiples of 1/32 in norm², at most 32 distinct.
  const std::int64_t n = 40;
  std::vector<double> entries(static_cast<std::size_t>(n * n), 0.0), norms;
  for (std::int64_t i = 0; i < n; ++i) {
    entries[static_cast<std::size_t>(i * n + i)] = 0.5 + static_cast<double>(i) / 100;
    norms.push_back(0.5 + static_cast<double>(i) / 100);
  }
  const auto strategy = dpb::matrix::Strategy{dpb::matrix::dense_strategy(n, entries)};
  const dpb::EventPtr attained = dpb::amplified_attained_event(strategy, 1, 0.1, 1.0);
  REQUIRE(attained);
  const auto& releases = std::get<dpb::ComposedEvent>(*attained).events;
  CHECK(releases.size() <= 32);
  std::int64_t count = 0;
  for (const auto& r : releases) count += std::get<dpb::SelfComposedEvent>(*r).count;
  CHECK(count == n);  // every step kept (none floored to 0 here)
  const dpb::Guarantee a = attained_test_pld(*attained, 1e-5);
  const dpb::Guarantee truth = attained_test_pld(*attained_test_group(norms, 0.1, 1.0), 1e-5);
  REQUIRE(a.epsilon_lower);
  CHECK(*a.epsilon_lower <= truth.epsilon);
  CHECK(*a.epsilon_lower >= 0.9 * *truth.epsilon_lower);  // the floor costs little
}

TEST_CASE("amplified MF: the attained pair keeps each norm as often as the group has it") {
  // One group (b = 1) whose columns have norms 0.5, 0.5 and 0.9 (the diagonal alone):
  // the pair is two releases at σ/0.5 and one at σ/0.9, not any other multiset.
  const std::vector<double> entries{0.5, 0, 0, 0, 0.5, 0, 0, 0, 0.9};
  const auto strategy = dpb::matrix::Strategy{dpb::matrix::dense_strategy(3, entries)};
  const dpb::EventPtr attained = dpb::amplified_attained_event(strategy, 1, 0.2, 0.8);
  REQUIRE(attained);
  const auto& releases = std::get<dpb::ComposedEvent>(*attained).events;
  REQUIRE(releases.size() == 2);
  CHECK(std::get<dpb::SelfComposedEvent>(*releases[0]).count == 2);  // norm 0.5
  CHECK(std::get<dpb::SelfComposedEvent>(*releases[1]).count == 1);  // norm 0.9
  const dpb::Guarantee a = attained_test_pld(*attained, 1e-5);
  const dpb::Guarantee m = attained_test_pld(*attained_test_group({0.5, 0.5, 0.9}, 0.2, 0.8), 1e-5);
  REQUIRE(a.epsilon_lower);
  CHECK(*a.epsilon_lower <= m.epsilon);
  CHECK(*a.epsilon_lower == doctest::Approx(*m.epsilon_lower).epsilon(1e-6));
}
