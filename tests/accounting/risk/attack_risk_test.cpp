// Attack-risk bounds (docs/risk.md#trade-off-bound): true-positive rates at given false-positive
// rates and the advantage, from every accountant. Checked against closed
// forms (one Gaussian release is exactly μ-GDP with μ = 1/σ; an (ε, δ) pair's
// two-line curve; the randomized-response advantage (e^ε − 1)/(e^ε + 1)),
// independent values computed here from Boost's normal distribution, and
// orderings between accountants (pld's upper bound is the tightest sound one).
#include "accounting/risk/attack_risk.hpp"

#include <doctest/doctest.h>

#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "accounting/accountant.hpp"
#include "accounting/errors.hpp"
#include "accounting/events/events.hpp"
#include "accounting/rdp/rdp.hpp"
#include "support/analytic_gaussian.hpp"

namespace {

using namespace dpb;

const std::vector<double> kFprs{1e-4, 1e-3, 1e-2, 0.05, 0.1, 0.3, 0.5, 0.9};

using dpb::test::gaussian_tpr;  // Φ(Φ⁻¹(x) + μ) from Boost, independent of src/

AttackBounds bounds_of(const std::string& accountant, const EventPtr& e,
                       const std::vector<double>& fprs = kFprs) {
  auto acc = make_accountant(accountant, AccountantOptions{});
  acc->compose(*e);
  return acc->attack_bounds(fprs);
}

/// Every bound is a probability at least the FPR (the test that guesses).
void check_shape(const AttackBounds& b) {
  REQUIRE(b.tpr.size() == b.fpr.size());
  for (std::size_t i = 0; i < b.fpr.size(); ++i) {
    INFO(b.accountant, " fpr ", b.fpr[i]);
    CHECK(b.tpr[i] >= b.fpr[i]);
    CHECK(b.tpr[i] <= 1);
    CHECK(std::isfinite(b.tpr[i]));
    if (!b.tpr_lower.empty()) {
      CHECK(b.tpr_lower[i] <= b.tpr[i]);
      CHECK(b.tpr_lower[i] >= b.fpr[i]);
    }
  }
  CHECK(b.advantage >= 0);
  CHECK(b.advantage <= 1);
  if (b.advantage_lower) CHECK(*b.advantage_lower <= b.advantage);
}

}  // namespace

TEST_CASE("risk: one Gaussian release is exactly mu-GDP by gdp and inside the pld interval") {
  for (double sigma : {0.5, 1.0, 2.0, 4.0}) {
    const double mu = 1 / sigma;
    const auto e = make_gaussian(sigma);
    const AttackBounds gdp = bounds_of("gdp", e);
    const AttackBounds pld = bounds_of("pld", e);
    const AttackBounds rdp = bounds_of("rdp", e);
    CHECK(gdp.bound == BoundKind::upper);
    for (const auto& b : {gdp, pld, rdp}) check_shape(b);
    for (std::size_t i = 0; i < kFprs.size(); ++i) {
      const double exact = gaussian_tpr(mu, kFprs[i]);
      INFO("sigma ", sigma, " fpr ", kFprs[i], " exact ", exact);
      CHECK(gdp.tpr[i] == doctest::Approx(exact).epsilon(1e-12));
      // Sound: never below the truth; tight: within the PLD tolerance.
      CHECK(pld.tpr[i] >= exact * (1 - 1e-12));
      CHECK(pld.tpr_lower[i] <= exact * (1 + 1e-12));
      CHECK(pld.tpr[i] <= exact * (1 + 2e-3) + 1e-12);
      CHECK(rdp.tpr[i] >= pld.tpr[i] * (1 - 1e-12));
    }
    // Advantage 2Φ(μ/2) − 1.
    const boost::math::normal n;
    const double adv = 2 * boost::math::cdf(n, mu / 2) - 1;
    CHECK(gdp.advantage == doctest::Approx(adv).epsilon(1e-12));
    CHECK(pld.advantage >= adv * (1 - 1e-12));
    CHECK(*pld.advantage_lower <= adv * (1 + 1e-12));
    CHECK(rdp.advantage >= adv);
  }
}

TEST_CASE("risk: an (epsilon, delta) pair gives the two-line curve") {
  for (const auto& point : {std::pair{0.5, 0.0}, std::pair{1.0, 1e-3}, std::pair{3.0, 1e-5}}) {
    // (Named copies: doctest's INFO captures, and clang 14 cannot capture a binding.)
    const double eps = point.first, delta = point.second;
    const auto e = make_event(EpsilonDeltaEvent{eps, delta});
    const AttackBounds pld = bounds_of("pld", e);
    const AttackBounds comp = bounds_of("composition", e);
    check_shape(pld);
    check_shape(comp);
    for (std::size_t i = 0; i < kFprs.size(); ++i) {
      const double x = kFprs[i];
      const double two_lines =
          std::min({1.0, std::exp(eps) * x + delta, 1 - std::exp(-eps) * (1 - delta - x)});
      INFO("eps ", eps, " delta ", delta, " fpr ", x, " two lines ", two_lines);
      CHECK(tpr_bound_epsilon_delta(eps, delta, x) == doctest::Approx(two_lines).epsilon(1e-15));
      // The canonical pair's curve is exactly the two lines.
      CHECK(pld.tpr[i] >= two_lines * (1 - 1e-12));
      CHECK(pld.tpr_lower[i] <= two_lines * (1 + 1e-12));
      CHECK(pld.tpr[i] <= two_lines * (1 + 2e-3) + 1e-12);
      // The composition accountant reads the same profile on a grid: sound.
      CHECK(comp.tpr[i] >= two_lines * (1 - 1e-12));
    }
    // Advantage: δ + (1 − δ)(e^ε − 1)/(e^ε + 1), exactly the pair's δ(0).
    const double adv = delta + (1 - delta) * (std::exp(eps) - 1) / (std::exp(eps) + 1);
    CHECK(comp.advantage == doctest::Approx(adv).epsilon(1e-12));
    CHECK(pld.advantage >= adv * (1 - 1e-12));
    CHECK(*pld.advantage_lower <= adv * (1 + 1e-12));
  }
}

TEST_CASE("risk: the advantage of an (epsilon, 0) point is (e^eps - 1)/(e^eps + 1)") {
  for (double eps : {0.1, 1.0, 4.0}) {
    const double want = (std::exp(eps) - 1) / (std::exp(eps) + 1);
    const AttackBounds b = bounds_of("composition", make_event(EpsilonDeltaEvent{eps, 0}));
    CHECK(b.advantage == doctest::Approx(want).epsilon(1e-12));
    // The largest TPR − FPR of the two-line curve, at its corner x = 1/(e^ε + 1).
    const double corner = 1 / (std::exp(eps) + 1);
    CHECK(tpr_bound_epsilon_delta(eps, 0, corner) - corner == doctest::Approx(want).epsilon(1e-12));
  }
}

TEST_CASE("risk: rdp's bound is never below pld's, and every bound is a probability >= FPR") {
  for (double q : {0.01, 0.1, 1.0})
    for (double sigma : {0.8, 1.0, 2.0})
      for (std::int64_t steps : {1, 100, 1000}) {
        const auto e = make_self_composed(steps, make_poisson_sampled(q, make_gaussian(sigma)));
        const AttackBounds rdp = bounds_of("rdp", e);
        const AttackBounds pld = bounds_of("pld", e);
        const AttackBounds comp = bounds_of("composition", e);
        const AttackBounds gdp = bounds_of("gdp", e);
        for (const auto& b : {rdp, pld, comp, gdp}) check_shape(b);
        CHECK(gdp.bound == (q < 1 ? BoundKind::approximate : BoundKind::upper));
        for (std::size_t i = 0; i < kFprs.size(); ++i) {
          INFO("q ", q, " sigma ", sigma, " T ", steps, " fpr ", kFprs[i]);
          CHECK(rdp.tpr[i] >= pld.tpr[i] * (1 - 1e-9));
          CHECK(comp.tpr[i] >= pld.tpr_lower[i]);
        }
        CHECK(rdp.advantage >= pld.advantage * (1 - 1e-9));
        CHECK(comp.advantage >= *pld.advantage_lower);
      }
}

TEST_CASE("risk: rdp's order-by-order bound is what each order's Bernoulli constraint allows") {
  // One Gaussian release, σ = 1: ρ(α) = α/2. At α = 2 alone, Bern(p) against
  // Bern(x) must keep p²/x + (1−p)²/(1−x) ≤ e^{ρ(2)} = e (and the swapped
  // sum); solving the first as a quadratic gives the largest p directly.
  const double x = 0.01;
  const double orders[] = {2.0};
  const double rho[] = {1.0};
  const double p = tpr_bound_rdp(orders, rho, x);
  // p²/x + (1−p)²/(1−x) = e  ⇔  p²(1/x + 1/(1−x)) − 2p/(1−x) + 1/(1−x) − e = 0.
  const double a = 1 / x + 1 / (1 - x), b = -2 / (1 - x), c = 1 / (1 - x) - std::exp(1.0);
  const double first = (-b + std::sqrt(b * b - 4 * a * c)) / (2 * a);
  // The swapped constraint x²/p + (1−x)²/(1−p) ≤ e is checked numerically.
  const double swapped = x * x / p + (1 - x) * (1 - x) / (1 - p);
  CHECK(p >= std::min(first, 1.0) * (1 - 1e-12));
  if (swapped < std::exp(1.0) * (1 - 1e-9)) CHECK(p == doctest::Approx(first).epsilon(1e-12));
  // More orders only tighten it; the full curve is at least the exact GDP.
  const auto orders_all = default_rdp_orders();
  std::vector<double> curve;
  for (double alpha : orders_all) curve.push_back(alpha / 2);
  const double p_all = tpr_bound_rdp(orders_all, curve, x);
  CHECK(p_all <= p);
  CHECK(p_all >= gaussian_tpr(1, x));
  // The extra δ of epsilon_delta events: at least δₑ more, at most 1.
  CHECK(tpr_bound_rdp(orders_all, curve, x, 1e-3) >= p_all);
  CHECK(tpr_bound_rdp(orders_all, curve, x, 1.0) == 1);
}

TEST_CASE("risk: precision follows from the TPR bound and the prior") {
  CHECK(precision_bound(0.5, 0.3, 0.1) == doctest::Approx(0.75).epsilon(1e-15));
  // π·TPR / (π·TPR + (1 − π)·FPR) at π = 0.01, TPR = 0.5, FPR = 0.001.
  CHECK(precision_bound(0.01, 0.5, 0.001) ==
        doctest::Approx(0.005 / (0.005 + 0.99 * 0.001)).epsilon(1e-15));
  // A random guess (TPR = FPR) learns nothing: the precision is the prior.
  CHECK(precision_bound(0.2, 0.05, 0.05) == doctest::Approx(0.2).epsilon(1e-15));
  CHECK(precision_bound(0.2, 0.0, 0.05) == 0);
}

TEST_CASE("risk: infinite loss and nothing composed are the trivial ends") {
  for (const char* name : {"rdp", "pld", "composition", "gdp"}) {
    INFO(name);
    const AttackBounds none = bounds_of(name, make_event(NoOpEvent{}), {0.01, 0.3});
    CHECK(none.tpr[0] == doctest::Approx(0.01).epsilon(1e-9));
    CHECK(none.tpr[1] == doctest::Approx(0.3).epsilon(1e-9));
    CHECK(none.advantage == doctest::Approx(0).epsilon(1e-12));
    const AttackBounds all = bounds_of(name, make_event(NonPrivateEvent{}), {0.01});
    CHECK(all.tpr[0] == 1);
    CHECK(all.advantage == 1);
  }
  auto acc = make_accountant("rdp", AccountantOptions{});
  acc->compose(*make_gaussian(1));
  const std::vector<double> bad{0.0};
  CHECK_THROWS_AS(acc->attack_bounds(bad), InvalidParameter);
  const std::vector<double> one{1.0};
  CHECK_THROWS_AS(acc->attack_bounds(one), InvalidParameter);
}

TEST_CASE("risk: pld against dp_accounting's get_true_positive_rates") {
  // dp_accounting 0.6.0 (google/differential-privacy b5b0286), PLDAccountant()
  // defaults (add/remove, interval 1e-4, pessimistic), get_true_positive_rates
  // at FPR 0.001, 0.01, 0.1 and get_delta(0): an upper bound read from 3001
  // (ε(δ), δ) points of the worst direction, so the truth is at most it.
  struct Row {
    double q, sigma;
    std::int64_t steps;
    double tpr[3], advantage;
  };
  const Row rows[] = {
      {0.01, 1, 1000, {0.00406846977, 0.02913921464, 0.194201681}, 0.1610184208},
      {1, 1, 1, {0.01829853933, 0.09236270466, 0.3891439292}, 0.3829249225},
      {0.01, 1, 10000, {0.03801412523, 0.1539472415, 0.5050801265}, 0.4800807865},
  };
  const std::vector<double> fprs{1e-3, 1e-2, 0.1};
  for (const Row& r : rows) {
    const auto e = make_self_composed(r.steps, make_poisson_sampled(r.q, make_gaussian(r.sigma)));
    const AttackBounds pld = bounds_of("pld", e, fprs);
    for (std::size_t i = 0; i < fprs.size(); ++i) {
      INFO("q ", r.q, " T ", r.steps, " fpr ", fprs[i]);
      // Their figure is at least the truth, which is at least our lower end;
      // our upper end is as tight (within the interval tolerance, 1e-3).
      CHECK(pld.tpr_lower[i] <= r.tpr[i]);
      CHECK(pld.tpr[i] <= r.tpr[i] * (1 + 1e-3));
      CHECK(pld.tpr[i] >= r.tpr[i] * (1 - 3e-3));
    }
    CHECK(*pld.advantage_lower <= r.advantage);
    CHECK(pld.advantage == doctest::Approx(r.advantage).epsilon(1e-3));
  }
}
