// Fixed-size batches (sampled_without_replacement) with the PLD accountant
// (docs/pld.md#without-replacement, docs/pld.md#symmetrised-pair). Every value
// is compared with one computed another way: the attained pair's hockey-stick
// divergence by Gauss–Kronrod quadrature of its two densities (one step), the
// existing Poisson path at q = B/N and σ/2 (the attained pair, T steps), the
// RDP accountant's bound for the same run, the analytic Gaussian (B = N).
#include <doctest/doctest.h>

#include <algorithm>
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <cmath>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include "accounting/accountant.hpp"
#include "accounting/errors.hpp"
#include "accounting/events/events.hpp"
#include "accounting/pld/pld.hpp"
#include "support/analytic_gaussian.hpp"

using namespace dpb;

namespace {

/// Gauss–Kronrod (61 points, adaptive) to 1e-13 relative: far finer than the
/// PLD tolerances (≥ 1e-3) it is compared with.
constexpr double kWorQuadratureTolerance = 1e-13;
/// The integrals run over ±kSpan standard deviations around the means: the
/// Gaussian mass beyond 40 standard deviations is below 1e-340.
constexpr double kSpan = 40;
/// The PLD accountant's tolerance in the grid test (the order of the bounds
/// matters there, not their last digits; keeps it fast).
constexpr double kWorGridTolerance = 1e-2;
/// Relative slack for comparing two sound intervals' ends computed on
/// different grids: each end is rounded outward, so no slack is needed for
/// soundness; this only absorbs the last ulps of the comparison itself.
constexpr double kUlpSlack = 1e-12;

double normal_pdf(double z, double mean, double s) {
  const double u = (z - mean) / s;
  return std::exp(-u * u / 2) / (s * std::sqrt(2 * std::numbers::pi));
}

/// The attained pair of one step at γ and base noise s = σ/2 (the record's
/// gradient −e against e with every other gradient e, scaled by 1/2):
/// X = γN(1, s²) + (1 − γ)N(0, s²) against Y = N(0, s²).
struct AttainedPair {
  double gamma, s;
  double x(double z) const {
    return gamma * normal_pdf(z, 1, s) + (1 - gamma) * normal_pdf(z, 0, s);
  }
  double y(double z) const { return normal_pdf(z, 0, s); }
};

/// ∫ (f − e^ε g)₊ by quadrature over [−kSpan·s, 1 + kSpan·s], split where
/// f = e^ε g (the likelihood ratio x/y is increasing in z, so there is at
/// most one crossing; `crossing` finds it by bisection on the densities).
template <class F, class G>
double hockey_stick(F f, G g, double eps, double s) {
  const double lo = -kSpan * s, hi = 1 + kSpan * s;
  const double a = std::exp(eps);
  auto integrand = [&](double z) { return std::max(0.0, f(z) - a * g(z)); };
  auto sign = [&](double z) { return f(z) - a * g(z) > 0; };
  std::vector<double> cuts{lo};
  if (sign(lo) != sign(hi)) {
    double l = lo, h = hi;
    for (int i = 0; i < 200; ++i) {
      const double mid = (l + h) / 2;
      (sign(mid) == sign(lo) ? l : h) = mid;
    }
    cuts.push_back((l + h) / 2);
  }
  cuts.push_back(hi);
  double total = 0;
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i)
    total += boost::math::quadrature::gauss_kronrod<double, 61>::integrate(
        integrand, cuts[i], cuts[i + 1], 20, kWorQuadratureTolerance);
  return total;
}

double delta_xy(const AttainedPair& p, double eps) {
  return hockey_stick([&](double z) { return p.x(z); }, [&](double z) { return p.y(z); }, eps, p.s);
}
double delta_yx(const AttainedPair& p, double eps) {
  return hockey_stick([&](double z) { return p.y(z); }, [&](double z) { return p.x(z); }, eps, p.s);
}

EventPtr fixed_size_run(std::int64_t n, std::int64_t b, double sigma, std::int64_t steps) {
  return make_self_composed(steps, make_sampled_without_replacement(n, b, make_gaussian(sigma)));
}

std::unique_ptr<Accountant> composed(const std::string& name, const EventPtr& e,
                                     std::optional<Neighbouring> relation,
                                     double tolerance = 1e-3) {
  AccountantOptions o;
  o.neighbouring = relation;
  o.pld.tolerance = tolerance;
  auto acc = make_accountant(name, o);
  acc->compose(*e);
  return acc;
}

}  // namespace

TEST_CASE(
    "fixed-size batches, one step: the PLD interval against quadrature of the attained pair") {
  // N = 1000, B = 10 and 100; σ = 1 and 2. At one step the symmetrised pair's
  // profile at ε ≥ 0 is the attained (X, Y)'s, so the interval must hold
  // max(δ_XY, δ_YX) (both orders are attained) and be as tight as the grid.
  for (std::int64_t b : {10, 100})
    for (double sigma : {1.0, 2.0})
      for (double eps : {0.0, 0.3, 1.0}) {
        const AttainedPair pair{static_cast<double>(b) / 1000, sigma / 2};
        const double xy = delta_xy(pair, eps), yx = delta_yx(pair, eps);
        const double truth = std::max(xy, yx);
        // The remove order dominates the add order at ε ≥ 0 (advanced joint
        // convexity): the fact the symmetrised pair rests on.
        CHECK(yx <= xy * (1 + kUlpSlack));
        for (auto relation :
             {std::optional<Neighbouring>{}, std::optional{Neighbouring::replace_one},
              std::optional{Neighbouring::add_remove}}) {
          const auto acc =
              composed("pld", fixed_size_run(1000, b, sigma, 1), relation, kWorGridTolerance);
          const Guarantee g = acc->delta(eps);
          INFO("B ", b, ", sigma ", sigma, ", eps ", eps, ", relation ",
               relation ? std::string(to_string(*relation)) : "inferred", ": [",
               g.delta_lower.value_or(-1), ", ", g.delta, "] vs ", truth);
          REQUIRE(g.delta_lower);
          CHECK(g.lower_end == LowerEnd::lower_bound);
          CHECK(*g.delta_lower <= truth);
          CHECK(truth <= g.delta);
          CHECK(g.delta <= truth * (1 + 2 * kWorGridTolerance));  // one step: tight up to the grid
          CHECK(g.neighbouring == (relation == Neighbouring::add_remove
                                       ? Neighbouring::add_remove
                                       : Neighbouring::replace_one));
        }
      }
}

TEST_CASE(
    "symmetrised pair: its profile below 0 by quadrature, its grid dominates and is symmetric") {
  const pld::Mechanism part(pld::Mechanism::Kind::gaussian, 0.6, 0.05);
  pld::Mechanism sym;
  sym.kind = pld::Mechanism::Kind::symmetrised;
  sym.parts = {part};
  CHECK(pld::symmetric(sym));
  const AttainedPair pair{0.05, 0.6};
  // ε < 0: H_{e^ε}(X̃‖Ỹ) = H_{e^ε}(Y‖X), the add order's (the larger there).
  for (double eps : {-0.02, -0.2, -1.0}) {
    const double truth = delta_yx(pair, eps);
    INFO("eps ", eps);
    CHECK(pld::exact_delta(sym, pld::Direction::remove, eps) ==
          doctest::Approx(truth).epsilon(1e-9));
    CHECK(delta_xy(pair, eps) <= truth * (1 + kUlpSlack));
  }
  for (double eps : {0.0, 0.5})
    CHECK(pld::exact_delta(sym, pld::Direction::add, eps) ==
          doctest::Approx(delta_xy(pair, eps)).epsilon(1e-9));
  const double interval = 1e-3;
  const pld::DiscreteLoss d = pld::discretise(sym, pld::Direction::remove, interval, 1e-15);
  double total = d.dropped_mass;
  for (double m : d.mass) {
    CHECK(m >= 0);
    total += m;
  }
  CHECK(total == doctest::Approx(1).epsilon(1e-12));
  // Symmetric: the P-mass at −l is e^{−l} times that at l.
  REQUIRE(d.first_index <= 0);
  const auto zero = static_cast<std::size_t>(-d.first_index);
  for (std::size_t k = 1; k <= zero && zero + k < d.mass.size(); k += 97)
    CHECK(d.mass[zero - k] ==
          doctest::Approx(d.mass[zero + k] * std::exp(-static_cast<double>(k) * interval))
              .epsilon(1e-12));
  // Dominance at grid points (connect-the-dots is exact there, up to round-off).
  for (int k : {-500, -100, 0, 100, 300, 1000}) {
    const double eps = k * interval;
    double grid = d.dropped_mass;
    for (std::size_t i = 0; i < d.mass.size(); ++i) {
      const double l = static_cast<double>(d.first_index + static_cast<std::int64_t>(i)) * interval;
      if (l > eps) grid += d.mass[i] * -std::expm1(eps - l);
    }
    INFO("eps ", eps);
    CHECK(grid >= pld::exact_delta(sym, pld::Direction::remove, eps) * (1 - 1e-9));
  }
}

TEST_CASE("fixed-size batches: the interval lies between the attained pair and RDP on a grid") {
  // q = B/N, σ, T and both relations. The attained pair's ε: the Poisson path
  // at q = B/N and σ/2 (its interval holds the exact value). The RDP bound:
  // the rdp accountant on the same run (replace_one, docs/rdp.md#without-replacement),
  // and under add_remove the RDP of the pair PLD composes there (rdp has no
  // add_remove analysis of fixed-size batches).
  constexpr double kDelta = 1e-5;
  constexpr std::int64_t kN = 10000;
  for (std::int64_t b : {10, 100, 1000})
    for (double sigma : {0.8, 1.5, 3.0})
      for (std::int64_t steps : {1, 30, 1000})
        for (Neighbouring relation : {Neighbouring::replace_one, Neighbouring::add_remove}) {
          const double q = static_cast<double>(b) / static_cast<double>(kN);
          const EventPtr run = fixed_size_run(kN, b, sigma, steps);
          const Guarantee g = composed("pld", run, relation, kWorGridTolerance)->epsilon(kDelta);
          const Guarantee attained = composed("pld", make_dp_sgd(q, sigma / 2, steps),
                                              Neighbouring::add_remove, kWorGridTolerance)
                                         ->epsilon(kDelta);
          const Guarantee rdp =
              relation == Neighbouring::replace_one
                  ? composed("rdp", run, relation)->epsilon(kDelta)
                  : composed("rdp", make_dp_sgd(q, sigma / 2, steps), relation)->epsilon(kDelta);
          INFO("B ", b, ", sigma ", sigma, ", T ", steps, ", ", to_string(relation), ": [",
               g.epsilon_lower.value_or(-1), ", ", g.epsilon, "], attained [",
               attained.epsilon_lower.value_or(-1), ", ", attained.epsilon, "], rdp ", rdp.epsilon);
          REQUIRE(g.epsilon_lower);
          REQUIRE(attained.epsilon_lower);
          CHECK(g.lower_end == LowerEnd::lower_bound);
          CHECK(g.neighbouring == relation);
          CHECK(*g.epsilon_lower <= g.epsilon);
          // The lower end is sound: below the attained pair's exact ε.
          CHECK(*g.epsilon_lower <= attained.epsilon * (1 + kUlpSlack));
          // The upper end is at least what the run attains.
          CHECK(*attained.epsilon_lower <= g.epsilon * (1 + kUlpSlack));
          // And no worse than RDP.
          CHECK(g.epsilon <= rdp.epsilon * (1 + kUlpSlack));
        }
}

TEST_CASE("fixed-size batches: B = N is the Gaussian at sigma/2, B = 0 releases nothing") {
  constexpr double kDelta = 1e-5;
  const double sigma = 3.0;
  const Guarantee all =
      composed("pld", fixed_size_run(50, 50, sigma, 4), std::nullopt)->epsilon(kDelta);
  // Four releases of sensitivity 2 at σ: one at σ/(2·√4) = σ/4.
  double lo = 0, hi = 10;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (test::analytic_gaussian_delta(sigma / 4, mid) > kDelta ? lo : hi) = mid;
  }
  REQUIRE(all.epsilon_lower);
  CHECK(*all.epsilon_lower <= hi);
  CHECK(lo <= all.epsilon);
  const Guarantee none =
      composed("pld", fixed_size_run(50, 0, sigma, 4), std::nullopt)->epsilon(kDelta);
  CHECK(none.epsilon == 0);
}

TEST_CASE("fixed-size batches: the refusals say what to use") {
  auto reason = [](const EventPtr& e, std::optional<Neighbouring> relation) {
    AccountantOptions o;
    o.neighbouring = relation;
    return make_accountant("pld", o)->unsupported_reason(*e).value_or("");
  };
  const auto laplace = make_sampled_without_replacement(100, 10, make_laplace(1.0));
  CHECK(reason(laplace, std::nullopt).find("only a gaussian") != std::string::npos);
  const auto gauss = make_sampled_without_replacement(100, 10, make_gaussian(1.0));
  CHECK(reason(gauss, Neighbouring::replace_special).find("use neighbouring replace_one") !=
        std::string::npos);
  const auto full = make_sampled_without_replacement(100, 100, make_gaussian(1.0));
  CHECK(reason(full, Neighbouring::add_remove).find("use neighbouring replace_one") !=
        std::string::npos);
  CHECK(reason(full, Neighbouring::replace_one).empty());
  // Poisson sampling fixes add_remove, fixed-size batches replace_one: together
  // only with a relation chosen.
  const auto both = make_composed({gauss, make_poisson_sampled(0.1, make_gaussian(1.0))});
  CHECK(reason(both, std::nullopt).find("choose neighbouring") != std::string::npos);
  // Across compose() calls too, in either order.
  AccountantOptions o;
  auto acc = make_accountant("pld", o);
  acc->compose(*gauss);
  CHECK_THROWS_AS(acc->compose(*make_poisson_sampled(0.1, make_gaussian(1.0))), UnsupportedEvent);
  auto plain_first = make_accountant("pld", o);
  plain_first->compose(*make_gaussian(1.0));
  CHECK_THROWS_AS(plain_first->compose(*gauss), UnsupportedEvent);
}

TEST_CASE("fixed-size batches: an unsampled Gaussian beside them is at sensitivity 2") {
  // Inferred replace_one: gaussian(σ) beside the run is planned as under an
  // explicit replace_one, so both answers are the same.
  const auto event = make_composed(
      {make_gaussian(4.0), make_sampled_without_replacement(1000, 10, make_gaussian(1.0))});
  const Guarantee inferred = composed("pld", event, std::nullopt)->epsilon(1e-5);
  const Guarantee fixed = composed("pld", event, Neighbouring::replace_one)->epsilon(1e-5);
  CHECK(inferred.neighbouring == Neighbouring::replace_one);
  CHECK(inferred.epsilon == fixed.epsilon);
  CHECK(inferred.epsilon_lower == fixed.epsilon_lower);
}
