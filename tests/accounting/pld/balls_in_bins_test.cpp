// Balls-in-bins (random allocation) with the PLD accountant, and the lower
// bound of a shuffled run (issue 15, docs/sampling.md#shuffle-lower-bound): dp_accounting's
// interval, the closed forms at t = 1 and k = t, an independent quadrature at t = 2, and the order
// of the schemes (balls-in-bins ≤ shuffle's upper bound, a shuffled run's lower bound ≤ its upper
// bound).
#include <doctest/doctest.h>

#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <cmath>
#include <numbers>
#include <optional>

#include "accounting/accountant.hpp"
#include "accounting/dpsgd/dp_sgd_run.hpp"
#include "accounting/events/events.hpp"
#include "accounting/mechanisms/gaussian_mechanism.hpp"
#include "accounting/pld/pld.hpp"
#include "accounting/pld/random_allocation.hpp"
#include "support/analytic_gaussian.hpp"

using namespace dpb;

namespace {

constexpr double kDelta = 1e-5;
/// The PLD interval is sound: an exact value lies inside it, up to the
/// relative round-off of the closed form it is compared with.
constexpr double kInsideSlack = 1e-9;
/// The quadrature of the t = 2 check: Gauss–Kronrod (61 points, adaptive),
/// far more accurate than the grid's ~1e-3 loss resolution it is compared with.
constexpr double kQuadratureTolerance = 1e-12;

/// The PLD accountant's tolerance in the grid tests, where the order of the
/// bounds matters and not their last digits (keeps them fast).
constexpr double kGridTolerance = 1e-2;

Guarantee pld_epsilon(const EventPtr& e, std::optional<Neighbouring> relation = std::nullopt,
                      double tolerance = 1e-3) {
  AccountantOptions o;
  o.neighbouring = relation;
  o.pld.tolerance = tolerance;
  auto acc = make_accountant("pld", o);
  acc->compose(*e);
  return acc->epsilon(kDelta);
}

EventPtr epochs_of(std::int64_t epochs, std::int64_t steps, std::int64_t k, double sigma) {
  return make_self_composed(epochs,
                            make_event(RandomAllocationEvent{steps, k, make_gaussian(sigma)}));
}

/// E[(X − c)₊] for log X ~ N(m, s²) (the Black–Scholes call formula).
double call(double m, double s, double c) {
  const double mean = std::exp(m + s * s / 2);
  if (c <= 0) return mean - c;
  const double d2 = (m - std::log(c)) / s;
  return mean * test::std_normal_cdf(d2 + s) - c * test::std_normal_cdf(d2);
}

}  // namespace

TEST_CASE("balls-in-bins: sigma 1, t = 100, one epoch overlaps dp_accounting's interval") {
  // dp_accounting's random_allocation PLD (pull request #414), as run in
  // issue 15: [0.620543, 0.621344] at δ = 1e-5.
  const Guarantee g = pld_epsilon(epochs_of(1, 100, 1, 1.0));
  REQUIRE(g.epsilon_lower);
  CHECK(*g.epsilon_lower <= 0.621344);
  CHECK(g.epsilon >= 0.620543);
  CHECK(g.epsilon - *g.epsilon_lower <= 3e-3);
  CHECK(g.neighbouring == Neighbouring::add_remove);
}

TEST_CASE("balls-in-bins: t = 1 and k = t are unamplified Gaussian releases") {
  for (double sigma : {0.9, 2.0}) {
    INFO("sigma ", sigma);
    const double one = gaussian_epsilon(sigma, kDelta);
    const Guarantee t1 = pld_epsilon(epochs_of(1, 1, 1, sigma));
    CHECK(*t1.epsilon_lower <= one * (1 + kInsideSlack));
    CHECK(t1.epsilon >= one * (1 - kInsideSlack));
    // k = t = 4: every step, four Gaussians: one at σ/2.
    const double four = gaussian_epsilon(sigma / 2, kDelta);
    const Guarantee t4 = pld_epsilon(epochs_of(1, 4, 4, sigma));
    CHECK(*t4.epsilon_lower <= four * (1 + kInsideSlack));
    CHECK(t4.epsilon >= four * (1 - kInsideSlack));
  }
}

TEST_CASE("balls-in-bins: t = 2 against an independent quadrature of the remove direction") {
  // δ_remove(ε) = E_Q[(S/2 − e^ε)₊], S = X1 + X2, log X_i ~ N(−1/(2σ²), 1/σ²):
  // integrate over X1 the call price of X2 at 2e^ε − X1.
  for (double sigma : {1.0, 2.0}) {
    const double m = -0.5 / (sigma * sigma), s = 1 / sigma;
    const RandomAllocationPlds plds = random_allocation_plds(2, sigma, 1e-4);
    for (double eps : {0.1, 0.5, 1.0}) {
      auto integrand = [&](double z) {
        const double x1 = std::exp(m + s * z);
        const double density = std::exp(-z * z / 2) / std::sqrt(2 * std::numbers::pi);
        return density * call(m, s, 2 * std::exp(eps) - x1) / 2;
      };
      const double truth = boost::math::quadrature::gauss_kronrod<double, 61>::integrate(
          integrand, -40.0, 40.0, 15, kQuadratureTolerance);
      const double upper = pld::exact_delta(plds.upper, pld::Direction::remove, eps);
      const double lower = pld::exact_delta(plds.lower, pld::Direction::remove, eps);
      INFO("sigma ", sigma, ", eps ", eps, ": ", lower, " <= ", truth, " <= ", upper);
      CHECK(lower <= truth);
      CHECK(truth <= upper);
      CHECK(upper - lower <= 0.02 * truth);  // and not vacuous
    }
  }
}

TEST_CASE("balls-in-bins: never above shuffle's upper bound, lower <= upper, on a grid") {
  for (std::int64_t t : {2, 100})
    for (double sigma : {0.8, 2.0})
      for (std::int64_t epochs : {1, 3}) {
        INFO("t ", t, ", sigma ", sigma, ", E ", epochs);
        const Guarantee ra =
            pld_epsilon(epochs_of(epochs, t, 1, sigma), std::nullopt, kGridTolerance);
        // Shuffle's upper bound: E Gaussian releases, exactly.
        const double shuffled =
            gaussian_epsilon(sigma / std::sqrt(static_cast<double>(epochs)), kDelta);
        CHECK(ra.epsilon <= shuffled);
        CHECK(*ra.epsilon_lower <= ra.epsilon);
      }
}

TEST_CASE("shuffle: the lower bound is below the upper bound on a grid") {
  for (std::int64_t batch : {10, 50})
    for (double sigma : {1.5})
      for (std::int64_t steps : {100, 300}) {
        DpSgdRun run;
        run.sampling = Sampling::shuffle;
        run.noise_multiplier = sigma;
        run.dataset_size = 1000;
        run.batch_size = batch;
        run.sampling_rate = static_cast<double>(batch) / 1000;
        run.steps = steps;
        INFO("B ", batch, ", sigma ", sigma, ", T ", steps);
        const EventPtr pair = shuffle_lower_bound_event(run);
        REQUIRE(pair);
        const Guarantee lower = pld_epsilon(pair, std::nullopt, kGridTolerance);
        const Guarantee upper =
            pld_epsilon(dp_sgd_event(run), Neighbouring::replace_special, kGridTolerance);
        CHECK(*lower.epsilon_lower <= *upper.epsilon_lower);
        // The pair is the balls-in-bins run of the whole epochs.
        DpSgdRun balls = run;
        balls.sampling = Sampling::balls_in_bins;
        balls.steps = steps / (1000 / batch) * (1000 / batch);
        CHECK(pld_epsilon(dp_sgd_event(balls), std::nullopt, kGridTolerance).epsilon ==
              lower.epsilon);
      }
  // No pair when B does not divide N (positions are not uniform over batches).
  DpSgdRun uneven;
  uneven.sampling = Sampling::shuffle;
  uneven.noise_multiplier = 1;
  uneven.dataset_size = 1000;
  uneven.batch_size = 300;
  uneven.steps = 8;
  CHECK_FALSE(shuffle_lower_bound_event(uneven));
}
