// The ledger's maths (docs/ledger.md): the Renyi filter's sums against the
// closed form of Gaussian releases, its budget curve against its formula,
// the GDP filter against sqrt(sum mu_i^2) and the (epsilon, delta) of mu-GDP,
// and the filter never admitting a sequence whose non-adaptive RDP bound
// exceeds the budget.
#include "accounting/dataset_budget.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <iterator>
#include <random>
#include <vector>

#include "accounting/accountant.hpp"
#include "accounting/errors.hpp"
#include "accounting/gdp/gdp.hpp"

using namespace dpb;

namespace dataset_budget_test {

DatasetBudget budget_of(double epsilon, double delta, LedgerFilter filter = LedgerFilter::renyi) {
  DatasetBudget b;
  b.epsilon = epsilon;
  b.delta = delta;
  b.filter = filter;
  b.orders.assign(std::begin(kDefaultFilterOrders), std::end(kDefaultFilterOrders));
  return b;
}

EventPtr gaussian(double sigma) { return make_event(GaussianEvent{sigma}); }
EventPtr dp_sgd(double q, double sigma, std::int64_t steps) {
  return make_event(SelfComposedEvent{steps, make_event(PoissonSampledEvent{q, gaussian(sigma)})});
}
EventPtr laplace(double scale, std::int64_t count) {
  return make_event(SelfComposedEvent{count, make_event(LaplaceEvent{scale})});
}

}  // namespace dataset_budget_test

using namespace dataset_budget_test;

TEST_CASE("Renyi filter: the sums at each order are the Gaussian closed form alpha/(2 sigma^2)") {
  // A Gaussian mechanism of sensitivity 1 and noise sigma: rho(alpha) =
  // alpha / (2 sigma^2) (Mironov 2017, Prop. 7), composed additively.
  const DatasetBudget b = budget_of(10, 1e-6);
  const std::vector<double> sigmas = {3, 5.5, 20, 0.9};
  std::vector<Contribution> cs;
  for (double s : sigmas) cs.push_back(contribution_of(*gaussian(s), b));
  const FilterState state = filter_state(b, cs);
  for (std::size_t i = 0; i < b.orders.size(); ++i) {
    double exact = 0;
    for (double s : sigmas) exact += b.orders[i] / (2 * s * s);
    CAPTURE(b.orders[i]);
    CHECK(state.spent[i] >= exact * (1 - 1e-13));
    CHECK(state.spent[i] <= exact * (1 + 1e-12));
  }
  // One contribution alone is its own curve.
  for (std::size_t i = 0; i < b.orders.size(); ++i)
    CHECK(cs[0].rdp[i] == doctest::Approx(b.orders[i] / 18).epsilon(1e-13));
}

TEST_CASE("Renyi filter: the budget curve is eps - log(|orders|/delta)/(alpha - 1), rounded down") {
  const DatasetBudget b = budget_of(8, 1e-5);
  const auto curve = renyi_budget_curve(b);
  REQUIRE(curve.size() == b.orders.size());
  const double n = static_cast<double>(b.orders.size());
  for (std::size_t i = 0; i < curve.size(); ++i) {
    const double exact = 8 - std::log(n / 1e-5) / (b.orders[i] - 1);
    CHECK(curve[i] <= exact);
    CHECK(curve[i] >= exact - 1e-12 * std::abs(exact) - 1e-14);
  }
  // The smallest orders cannot admit anything at this budget: 8 - 13.2/0.5 < 0.
  CHECK(curve.front() < 0);
}

TEST_CASE("Renyi filter: admits iff some order keeps its sum within B(alpha)") {
  const DatasetBudget b = budget_of(4, 1e-6);
  const auto curve = renyi_budget_curve(b);
  // Gaussian releases of sigma 10: rho(alpha) = alpha/200 each; the largest
  // count k with k alpha/200 <= B(alpha) at some order, by the closed form.
  std::int64_t expected = 0;
  for (std::size_t i = 0; i < curve.size(); ++i)
    if (curve[i] > 0)
      expected =
          std::max(expected, static_cast<std::int64_t>(std::floor(curve[i] * 200 / b.orders[i])));
  REQUIRE(expected > 1);
  const Contribution one = contribution_of(*gaussian(10), b);
  std::vector<Contribution> cs;
  FilterState s = filter_state(b, cs);
  std::int64_t admitted = 0;
  while (true) {
    const FilterState next = filter_add(b, s, one);
    if (!next.within) break;
    s = next;
    ++admitted;
  }
  // Rounding up the sums may cost the last one when it fits to the last ulp.
  CHECK(admitted <= expected);
  CHECK(admitted >= expected - 1);
  CHECK(s.used <= 1);
  // What is left for a count of that release, solved: the same number.
  const LedgerOf count_of = [](double k) {
    return make_event(SelfComposedEvent{static_cast<std::int64_t>(k), gaussian(10)});
  };
  const FilterState empty = filter_state(b, std::vector<Contribution>{});
  CHECK(filter_solve(b, empty, count_of, RunUnknown::steps, CalibrationSettings{}) ==
        static_cast<double>(admitted));
}

TEST_CASE("Renyi filter: never admits a sequence whose non-adaptive RDP bound exceeds the budget") {
  // Random releases (DP-SGD runs, Laplace counts, Gaussian releases) offered
  // one by one; after each admitted one, the rdp accountant's epsilon of the
  // composition so far (its own 166 orders, improved conversion) is within
  // the budget: the filter's condition is the classic conversion at one of
  // its orders with an extra log|orders|, which is larger.
  std::mt19937_64 rng(44);
  std::uniform_real_distribution<double> u(0, 1);
  int admitted_total = 0;
  for (int trial = 0; trial < 30; ++trial) {
    const double epsilon = 1 + 9 * u(rng);
    const double delta = std::pow(10.0, -5 - 4 * u(rng));
    const DatasetBudget b = budget_of(epsilon, delta);
    std::vector<Contribution> admitted;
    std::vector<EventPtr> events;
    FilterState s = filter_state(b, admitted);
    for (int offer = 0; offer < 12; ++offer) {
      EventPtr e;
      const double kind = u(rng);
      if (kind < 0.4)
        e = dp_sgd(0.001 + 0.05 * u(rng), 0.8 + 3 * u(rng),
                   static_cast<std::int64_t>(100 + 3000 * u(rng)));
      else if (kind < 0.7)
        e = laplace(2 + 30 * u(rng), static_cast<std::int64_t>(1 + 20 * u(rng)));
      else
        e = gaussian(1 + 20 * u(rng));
      const Contribution c = contribution_of(*e, b);
      const FilterState next = filter_add(b, s, c);
      if (!next.within) continue;
      s = next;
      events.push_back(e);
      ++admitted_total;
      auto rdp = make_accountant("rdp", AccountantOptions{});
      rdp->compose(*compose_releases(events));
      CAPTURE(trial);
      CHECK(rdp->epsilon(delta).epsilon <= epsilon);
    }
  }
  CHECK(admitted_total > 30);  // the property was exercised, not vacuous
}

TEST_CASE("GDP filter: mu of the budget and the sum of squares") {
  const DatasetBudget b = budget_of(2, 1e-6, LedgerFilter::gdp);
  const double mu_b = gdp_budget_mu(b);
  // mu_B is the largest mu with delta_mu(epsilon) <= delta (Dong, Roth & Su
  // 2022, Cor. 2.13): below delta there, above it a hair higher.
  CHECK(gdp_delta(mu_b, 2) <= 1e-6);
  CHECK(gdp_delta(mu_b * (1 + 1e-6), 2) > 1e-6);
  CHECK(gdp_epsilon(mu_b, 1e-6) <= 2 + 1e-9);
  // Gaussian releases: mu_i = 1/sigma_i exactly; the filter holds sum mu_i^2.
  const std::vector<double> sigmas = {4, 7, 2.5};
  std::vector<Contribution> cs;
  double sum = 0;
  for (double s : sigmas) {
    cs.push_back(contribution_of(*gaussian(s), b));
    REQUIRE(cs.back().mu);
    sum += 1 / (s * s);
  }
  const FilterState state = filter_state(b, cs);
  CHECK(state.mu_squared >= sum);
  CHECK(state.mu_squared == doctest::Approx(sum).epsilon(1e-12));
  CHECK(state.within == (std::sqrt(sum) <= mu_b));
  CHECK(filter_needed_epsilon(b, state) >= gdp_epsilon(std::sqrt(sum), 1e-6));
  // A subsampled Gaussian has only the central-limit mu: refused.
  const Contribution clt = contribution_of(*dp_sgd(0.01, 1, 100), b);
  CHECK_FALSE(clt.mu);
  CHECK_THROWS_AS(filter_add(b, state, clt), UnsupportedEvent);
}

TEST_CASE("planned gate: admitted iff some accountant's sound upper bound is within the budget") {
  DatasetBudget b = budget_of(10, 1e-6);
  b.mode = LedgerMode::planned;
  std::vector<EventPtr> events = {dp_sgd(0.01, 1.1, 10000), dp_sgd(0.02, 1.5, 2000),
                                  laplace(10, 20), make_event(SelfComposedEvent{5, gaussian(20)})};
  const std::vector<std::string> rdp_only = {"rdp"};
  auto all = compose_releases(events);
  const PlannedVerdict v = planned_gate(all, b, rdp_only, AccountantOptions{});
  REQUIRE(v.guarantees.size() == 1);
  auto rdp = make_accountant("rdp", AccountantOptions{});
  rdp->compose(*all);
  CHECK(v.guarantees[0].epsilon == rdp->epsilon(1e-6).epsilon);
  CHECK(v.admitted == (v.guarantees[0].epsilon <= 10));
  CHECK(v.admitted);
  b.epsilon = 7;  // 7.79 by rdp: over
  CHECK_FALSE(planned_gate(all, b, rdp_only, AccountantOptions{}).admitted);
}

TEST_CASE("dataset budget: bad values are refused naming the field") {
  DatasetBudget b = budget_of(1, 1e-6);
  b.orders = {2, 1.5};
  CHECK_THROWS_AS(check_dataset_budget(b), InvalidParameter);
  b = budget_of(0, 1e-6);
  CHECK_THROWS_AS(check_dataset_budget(b), InvalidParameter);
  b = budget_of(1, 1);
  CHECK_THROWS_AS(check_dataset_budget(b), InvalidParameter);
}
