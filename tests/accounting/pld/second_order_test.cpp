// The PLD interval's ends against truths computed here, independently of the
// library: the T-fold Gaussian (a Gaussian of σ/√T, closed form), a
// Poisson-subsampled Gaussian at T = 1 (Gauss–Kronrod quadrature of its
// hockey-stick divergence) and at small T (Monte Carlo with its standard
// error). Each on fixed grids, coarse ones included, where the second-order
// lower bound (docs/pld.md#second-order-lower-bound) is far from the upper
// end, and at the default refinement; and on long runs, where the centred
// direct sums keep the round-off small (docs/pld.md#round-off).
#include <doctest/doctest.h>

#include <algorithm>
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "accounting/pld/pld.hpp"
#include "support/analytic_gaussian.hpp"

namespace second_order {

using dpb::pld::Component;
using dpb::pld::Mechanism;
using Kind = dpb::pld::Mechanism::Kind;
using dpb::test::analytic_gaussian_delta;
using dpb::test::std_normal_cdf;

/// Grids tried without refinement (the lower bound must hold on any grid).
constexpr double kFixedGrids[] = {3e-2, 1e-2, 3e-3, 1e-3, 1e-4};
/// Monte Carlo: samples, and the number of standard errors allowed.
constexpr int kSamples = 400'000;
constexpr double kStandardErrors = 5;
/// Quadrature: Gauss–Kronrod's own error target (relative), far below the
/// intervals' widths, and how far past the crossing point it integrates.
constexpr double kQuadratureTolerance = 1e-13;
constexpr double kQuadratureSpan = 40;
/// The closed form's difference of terms up to 1 is good to this, absolutely.
constexpr double kClosedFormFloor = 1e-15;

dpb::pld::Interval delta_on(const std::vector<Component>& c, double eps, double grid) {
  dpb::pld::Options o;
  o.interval = grid;
  o.tolerance = grid > 0 ? 0 : 1e-3;  // a fixed grid, or the default refinement
  return dpb::pld::delta_interval(c, eps, o);
}

dpb::pld::Interval epsilon_on(const std::vector<Component>& c, double delta, double grid) {
  dpb::pld::Options o;
  o.interval = grid;
  o.tolerance = grid > 0 ? 0 : 1e-3;
  return dpb::pld::epsilon_interval(c, delta, o);
}

/// δ(ε) of one Poisson-subsampled Gaussian, the larger of its two directions,
/// by quadrature: remove, ∫(p − e^ε p0)₊ with p = (1 − q)p0 + q·p1; add,
/// ∫(p0 − e^ε p)₊. The likelihood ratio is monotone in z, so each integrand is
/// positive on one side of the point where it crosses 0, found by bisection.
double subsampled_delta(double q, double sigma, double eps) {
  auto phi = [sigma](double z, double mean) {
    const double u = (z - mean) / sigma;
    return std::exp(-u * u / 2) / (sigma * std::sqrt(2 * std::numbers::pi));
  };
  auto p = [&](double z) { return (1 - q) * phi(z, 0) + q * phi(z, 1); };
  auto crossing = [&](auto&& sign) {  // sign(z) goes from < 0 to > 0 as z grows
    double lo = -60 * sigma, hi = 60 * sigma;
    for (int i = 0; i < 200; ++i) {
      const double mid = (lo + hi) / 2;
      (sign(mid) > 0 ? hi : lo) = mid;
    }
    return (lo + hi) / 2;
  };
  using Quadrature = boost::math::quadrature::gauss_kronrod<double, 61>;
  auto remove = [&](double z) { return p(z) - std::exp(eps) * phi(z, 0); };
  const double z_remove = crossing(remove);
  const double d_remove =
      Quadrature::integrate([&](double z) { return std::max(0.0, remove(z)); }, z_remove,
                            z_remove + kQuadratureSpan * sigma, 15, kQuadratureTolerance);
  auto add = [&](double z) { return phi(z, 0) - std::exp(eps) * p(z); };
  double d_add = 0;
  if (std::exp(-eps) > 1 - q) {  // else p0 ≤ e^ε p everywhere
    const double z_add = crossing([&](double z) { return -add(z); });
    d_add = Quadrature::integrate([&](double z) { return std::max(0.0, add(z)); },
                                  z_add - kQuadratureSpan * sigma, z_add, 15, kQuadratureTolerance);
  }
  return std::max(d_remove, d_add);
}

/// The same δ(ε) from the closed form of the crossing point, to check the
/// quadrature itself.
double subsampled_delta_closed(double q, double sigma, double eps) {
  const double s2 = sigma * sigma;
  const double z = s2 * std::log((std::exp(eps) - 1 + q) / q) + 0.5;
  auto upper = [sigma](double x, double mean) { return 1 - std_normal_cdf((x - mean) / sigma); };
  return (1 - q) * upper(z, 0) + q * upper(z, 1) - std::exp(eps) * upper(z, 0);
}

struct MonteCarlo {
  double mean = 0, standard_error = 0;
};

/// δ(ε) of T Poisson-subsampled Gaussians in one direction by Monte Carlo:
/// E[(1 − e^{ε − S})₊], S the sum of T losses drawn from P.
MonteCarlo monte_carlo_delta(double q, double sigma, int steps, double eps, bool remove) {
  std::mt19937_64 rng(20261129);
  std::normal_distribution<double> noise(0, sigma);
  std::bernoulli_distribution sampled(q);
  auto loss = [&](double z) {
    return std::log(1 - q + q * std::exp((2 * z - 1) / (2 * sigma * sigma)));
  };
  double sum = 0, sum2 = 0;
  for (int i = 0; i < kSamples; ++i) {
    double s = 0;
    for (int t = 0; t < steps; ++t) {
      const double z = noise(rng) + (remove && sampled(rng) ? 1.0 : 0.0);
      s += remove ? loss(z) : -loss(z);
    }
    const double v = std::max(0.0, 1 - std::exp(eps - s));
    sum += v;
    sum2 += v * v;
  }
  const double n = kSamples, mean = sum / n;
  return {mean, std::sqrt(std::max(0.0, sum2 / n - mean * mean) / n)};
}

}  // namespace second_order

TEST_CASE("pld second order: the T-fold Gaussian inside every interval, coarse grids included") {
  using namespace second_order;
  // q = 1: T releases at σ are one at σ/√T (μ = √T/σ ∈ {0.5, 1, 2}).
  for (const std::int64_t steps : {1, 10, 1000, 100000})
    for (const double mu : {0.5, 1.0, 2.0}) {
      const double sigma = std::sqrt(static_cast<double>(steps)) / mu;
      const std::vector<Component> run{{Mechanism(Kind::gaussian, sigma), steps}};
      for (const double delta : {1e-3, 1e-6}) {
        const double truth = dpb::test::analytic_gaussian_epsilon(1 / mu, delta);
        for (const double grid : {3e-2, 1e-3, 0.0}) {
          const auto r = epsilon_on(run, delta, grid);
          INFO("T ", steps, ", mu ", mu, ", delta ", delta, ", grid ", grid, ": [", r.lower, ", ",
               r.upper, "] vs ", truth);
          CHECK(r.lower <= truth);
          CHECK(truth <= r.upper);
          if (grid == 0) CHECK(r.upper - r.lower <= 1e-3 * r.upper);
        }
      }
    }
}

TEST_CASE("pld second order: one subsampled Gaussian against quadrature") {
  using namespace second_order;
  for (const double q : {0.01, 0.1, 0.5})
    for (const double sigma : {0.7, 1.0, 2.0})
      for (const double eps : {0.0, 0.5, 2.0}) {
        const double truth = subsampled_delta(q, sigma, eps);
        // The quadrature is at least the remove direction's closed form (it
        // takes the larger direction), which loses ~1e-16 to cancellation.
        CHECK(truth >= subsampled_delta_closed(q, sigma, eps) * (1 - 1e-9) - kClosedFormFloor);
        const std::vector<Component> run{{Mechanism(Kind::gaussian, sigma, q), 1}};
        for (const double grid : kFixedGrids) {
          const auto r = delta_on(run, eps, grid);
          INFO("q ", q, ", sigma ", sigma, ", eps ", eps, ", grid ", grid, ": [", r.lower, ", ",
               r.upper, "] vs ", truth);
          CHECK(r.lower <= truth);
          CHECK(truth <= r.upper);
        }
      }
}

TEST_CASE("pld second order: a few subsampled Gaussians against Monte Carlo") {
  using namespace second_order;
  struct Case {
    double q, sigma;
    int steps;
    double eps;
  };
  for (const Case c : {Case{0.2, 1.0, 3, 1.0}, Case{0.5, 0.8, 4, 2.0}, Case{0.05, 0.7, 5, 0.5}}) {
    const auto remove = monte_carlo_delta(c.q, c.sigma, c.steps, c.eps, true);
    const auto add = monte_carlo_delta(c.q, c.sigma, c.steps, c.eps, false);
    const double hi = std::max(remove.mean + kStandardErrors * remove.standard_error,
                               add.mean + kStandardErrors * add.standard_error);
    const double lo = std::max(remove.mean - kStandardErrors * remove.standard_error,
                               add.mean - kStandardErrors * add.standard_error);
    const std::vector<Component> run{{Mechanism(Kind::gaussian, c.sigma, c.q), c.steps}};
    for (const double grid : {3e-2, 1e-2, 1e-3, 0.0}) {
      const auto r = delta_on(run, c.eps, grid);
      INFO("q ", c.q, ", sigma ", c.sigma, ", T ", c.steps, ", grid ", grid, ": [", r.lower, ", ",
           r.upper, "] vs Monte Carlo [", lo, ", ", hi, "]");
      CHECK(r.lower <= hi);
      CHECK(lo <= r.upper);
    }
  }
}

TEST_CASE("pld second order: long runs at small q meet the tolerance, round-off far below it") {
  using namespace second_order;
  // Issue 45's worst points: q = 1e-4 and 1e-3 at T = 1e6. Before the direct
  // sums were centred their round-off alone took 1% of delta at T = 1e6.
  for (const double q : {1e-4, 1e-3}) {
    const std::vector<Component> run{{Mechanism(Kind::gaussian, 1.0, q), 1'000'000}};
    const auto r = epsilon_on(run, 1e-6, 0);
    INFO("q ", q, ": [", r.lower, ", ", r.upper, "], grid ", r.interval);
    CHECK(r.converged);
    CHECK(r.upper - r.lower <= 1e-3 * r.upper);
    for (const auto d : {dpb::pld::Direction::remove, dpb::pld::Direction::add}) {
      const auto composed = dpb::pld::compose(run, d, r.interval, 1e-20, 1e-16);
      CHECK(composed.roundoff < 1e-3 * 1e-6);
    }
  }
}
