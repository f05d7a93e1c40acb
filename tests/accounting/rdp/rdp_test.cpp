// Tests of the Rényi-DP numerics (src/accounting/rdp/rdp.cpp, rdp_log_a_integer.cpp,
// rdp_log_a_fractional.cpp): reference values from tests/reference/, closed
// forms, an independent 50-digit quadrature oracle and monotonicity properties.
#include "accounting/rdp/rdp.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <boost/multiprecision/cpp_bin_float.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "accounting/errors.hpp"
#include "accounting/events/events.hpp"
#include "accounting/numerics/log_math.hpp"
#include "accounting/rdp/rdp_accountant.hpp"
#include "support/close.hpp"
#include "support/limits.hpp"
#include "support/reference.hpp"

namespace {

using dpb::RdpConversion;
using dpb::test::close_rel;
using dpb::test::read_reference_csv;

using dpb::test::kInf;

std::vector<double> range(double from, double to, double step) {
  std::vector<double> out;
  for (int i = 0;; ++i) {
    const double x = from + i * step;
    if (x > to + 1e-9) break;
    out.push_back(x);
  }
  return out;
}

/// Expands the `orders` column of rdp_epsilon.csv (see its header and orders.md).
std::vector<double> expand_orders(const std::string& spec) {
  if (spec == "dpa") {
    std::vector<double> o;
    for (int x = 1; x <= 99; ++x) o.push_back(1 + x / 10.0);
    for (int a = 11; a <= 63; ++a) o.push_back(a);
    for (double a : {128.0, 256.0, 512.0, 1024.0}) o.push_back(a);
    return o;
  }
  if (spec == "opacus") {
    std::vector<double> o;
    for (int x = 1; x <= 99; ++x) o.push_back(1 + x / 10.0);
    for (int a = 12; a <= 63; ++a) o.push_back(a);
    return o;
  }
  if (spec == "tfp72") {
    std::vector<double> o = {1.25, 1.5, 1.75, 2, 2.25, 2.5, 3, 3.5, 4, 4.5};
    for (int a = 5; a <= 63; ++a) o.push_back(a);
    for (double a : {128.0, 256.0, 512.0}) o.push_back(a);
    return o;
  }
  std::vector<double> o;
  std::size_t start = 0;
  while (start <= spec.size()) {
    std::size_t end = spec.find(',', start);
    if (end == std::string::npos) end = spec.size();
    const std::string item = spec.substr(start, end - start);
    const std::size_t colon = item.find(':');
    if (colon == std::string::npos) {
      o.push_back(std::stod(item));
    } else {
      const int lo = std::stoi(item.substr(0, colon)), hi = std::stoi(item.substr(colon + 1));
      for (int a = lo; a <= hi; ++a) o.push_back(a);
    }
    start = end + 1;
  }
  return o;
}

std::vector<double> composed_curve(double q, double sigma, double steps,
                                   const std::vector<double>& orders) {
  std::vector<double> curve = dpb::rdp_poisson_gaussian(q, sigma, orders);
  for (double& r : curve) r *= steps;
  return curve;
}

// ---------------------------------------------------------------------------
// Independent oracle: A_α = ∫ φ_σ(z)·((1−q) + q·e^{(2z−1)/(2σ²)})^α dz by
// adaptive Gauss–Kronrod quadrature in 50-digit arithmetic (docs/rdp.md#subsampled-gaussian, the
// definition of A_α), on intervals covering every non-negligible part of the integrand.
// ---------------------------------------------------------------------------
using mp = boost::multiprecision::cpp_bin_float_50;

mp oracle_log_a(double q_in, double sigma_in, double alpha_in) {
  const mp q = q_in, sigma = sigma_in, alpha = alpha_in;
  const mp pi = boost::math::constants::pi<mp>();
  auto f = [&](const mp& z) {
    const mp density = exp(-z * z / (2 * sigma * sigma)) / (sigma * sqrt(2 * pi));
    const mp ratio = exp((2 * z - 1) / (2 * sigma * sigma));
    return density * pow((1 - q) + q * ratio, alpha);
  };
  // The integrand is ≈ N(0, σ²) where (1−q) dominates and ∝ N(α, σ²) where q·r
  // dominates; 40σ beyond either end it is below e^{−800}.
  const double lo = -40 * sigma_in, hi = std::max(alpha_in, 1.0) + 40 * sigma_in;
  const double z0 = sigma_in * sigma_in * std::log(1 / q_in - 1) + 0.5;
  std::vector<double> cuts = {lo};
  for (double c : {-8 * sigma_in, 0.0, 0.5, z0, alpha_in, alpha_in + 8 * sigma_in})
    if (c > lo && c < hi) cuts.push_back(c);
  cuts.push_back(hi);
  std::sort(cuts.begin(), cuts.end());
  mp total = 0;
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i)
    if (cuts[i + 1] > cuts[i])
      total += boost::math::quadrature::gauss_kronrod<mp, 61>::integrate(
          f, mp(cuts[i]), mp(cuts[i + 1]), 20, mp(1e-32));
  return log(total);
}

}  // namespace

TEST_CASE("default orders: dp_accounting's list plus every integer 2..64") {
  const std::vector<double> orders = dpb::default_rdp_orders();
  CHECK(std::is_sorted(orders.begin(), orders.end()));
  CHECK(std::adjacent_find(orders.begin(), orders.end()) == orders.end());
  for (double a : expand_orders("dpa"))
    CHECK_MESSAGE(std::find(orders.begin(), orders.end(), a) != orders.end(), a);
  for (int a = 2; a <= 64; ++a)
    CHECK(std::find(orders.begin(), orders.end(), double(a)) != orders.end());
  CHECK(orders.size() == 157);  // 99 + 53 + 4 (dpa) + 64 (the one integer not in it)
  CHECK(orders.front() == 1.1);
  CHECK(orders.back() == 1024);
}

TEST_CASE("RDP values of reference/rdp_values.csv") {
  const auto rows = read_reference_csv("rdp_values.csv");
  REQUIRE(rows.size() >= 10);
  for (const auto& row : rows) {
    const double q = std::stod(row.at("q")), sigma = std::stod(row.at("sigma"));
    const double steps = std::stod(row.at("steps")), order = std::stod(row.at("order"));
    const double expected = std::stod(row.at("rdp")), tol = std::stod(row.at("rel_tol"));
    const double got = steps * dpb::rdp_poisson_gaussian(q, sigma, order);
    INFO("q=" << q << " sigma=" << sigma << " order=" << order << " got " << got);
    CHECK(close_rel(got, expected, tol));
  }
}

TEST_CASE("epsilon of reference/rdp_epsilon.csv") {
  const auto rows = read_reference_csv("rdp_epsilon.csv");
  REQUIRE(rows.size() >= 30);
  for (const auto& row : rows) {
    const double q = std::stod(row.at("q")), sigma = std::stod(row.at("sigma"));
    const double steps = std::stod(row.at("steps")), delta = std::stod(row.at("delta"));
    const auto conversion =
        row.at("conversion") == "classic" ? RdpConversion::classic : RdpConversion::improved;
    const double expected = std::stod(row.at("epsilon")), order = std::stod(row.at("order"));
    const double tol = std::stod(row.at("rel_tol"));
    const std::vector<double> orders = expand_orders(row.at("orders"));
    const auto curve = composed_curve(q, sigma, steps, orders);
    const dpb::RdpEpsilon e = dpb::epsilon_from_rdp(orders, curve, delta, conversion);
    INFO("q=" << q << " sigma=" << sigma << " T=" << steps << " orders=" << row.at("orders")
              << " got " << e.epsilon << " at " << e.order);
    CHECK(close_rel(e.epsilon, expected, tol));
    CHECK(e.order == doctest::Approx(order));
    CHECK(e.kl_shortcut == (expected == 0));
  }
}

TEST_CASE("Reference values: TensorFlow Privacy rdp_accountant_test values") {
  // q = 0.01, σ = 2.5, 50 steps; the published values are rounded as printed, so
  // the tolerance is one unit in their last digit (some are truncated).
  const struct {
    double order, rdp, tol;
  } cases[] = {{1.5, 0.00065, 0.00001 / 0.00065},
               {2.5, 0.001085, 0.000001 / 0.001085},
               {5, 0.00218075, 0.00000001 / 0.00218075},
               {50, 0.023846, 0.000001 / 0.023846},
               {100, 167.416307, 0.000001 / 167.416307}};
  for (const auto& c : cases) {
    INFO("order " << c.order);
    CHECK(close_rel(50 * dpb::rdp_poisson_gaussian(0.01, 2.5, c.order), c.rdp, c.tol));
  }
}

TEST_CASE("Conversion check: classic and improved conversion, Abadi et al. 2016") {
  // q = 0.01, σ = 4, T = 10⁴, δ = 1e-5.
  const auto classic_orders = range(2, 32, 1);
  const auto classic = dpb::epsilon_from_rdp(
      classic_orders, composed_curve(0.01, 4, 1e4, classic_orders), 1e-5, RdpConversion::classic);
  CHECK(close_rel(classic.epsilon, 1.2585747412527875, 1e-9));
  CHECK(classic.order == 20);
  CHECK_FALSE(classic.kl_shortcut);

  const auto orders = dpb::default_rdp_orders();
  const auto curve = composed_curve(0.01, 4, 1e4, orders);
  const auto improved = dpb::epsilon_from_rdp(orders, curve, 1e-5, RdpConversion::improved);
  CHECK(close_rel(improved.epsilon, 1.0354900660362967, 1e-9));
  CHECK(improved.order == 17);
  CHECK(improved.epsilon < classic.epsilon);
}

TEST_CASE("closed forms: q = 0, q = 1, plain Gaussian, infinities") {
  for (double a : {1.1, 2.0, 7.5, 64.0, 1024.0}) {
    CHECK(dpb::rdp_poisson_gaussian(0, 1.3, a) == 0);
    CHECK(dpb::log_a_poisson_gaussian(0, 1.3, a) == 0);
    CHECK(close_rel(dpb::rdp_poisson_gaussian(1, 1.3, a), a / (2 * 1.3 * 1.3), 1e-14));
    CHECK(close_rel(dpb::log_a_poisson_gaussian(1, 1.3, a), a * (a - 1) / (2 * 1.3 * 1.3), 1e-14));
    CHECK(dpb::rdp_gaussian(2, a) == doctest::Approx(a / 8).epsilon(1e-15));
  }
  // TensorFlow Privacy legacy test: q = 1, σ = 10, α = 20 → 0.1.
  CHECK(close_rel(dpb::rdp_poisson_gaussian(1, 10, 20), 0.1, 1e-12));
  // Overflowing moments are +∞, never NaN.
  CHECK(dpb::rdp_poisson_gaussian(0.5, 1e-160, 3) == kInf);
  CHECK(dpb::rdp_poisson_gaussian(0.5, 1e-160, 2.5) == kInf);
  CHECK(dpb::rdp_poisson_gaussian(1, 1e-160, 2.5) == kInf);
  CHECK_THROWS_AS(dpb::rdp_poisson_gaussian(1.5, 1, 2), dpb::InvalidParameter);
  CHECK_THROWS_AS(dpb::rdp_poisson_gaussian(0.1, 0, 2), dpb::InvalidParameter);
  CHECK_THROWS_AS(dpb::rdp_poisson_gaussian(0.1, 1, 1), dpb::InvalidParameter);
  CHECK_THROWS_AS(dpb::rdp_poisson_gaussian(0.1, 1, std::nan("")), dpb::InvalidParameter);
}

TEST_CASE("no NaN and no hang over a grid of extreme inputs") {
  const double qs[] = {1e-12, 1e-6, 1e-3, 0.1, 0.5, 0.9, 0.999999};
  const double sigmas[] = {1e-3, 0.1, 0.5, 1, 4, 50, 1e4};
  const double alphas[] = {1.01, 1.1, 1.5, 2, 2.5, 10.9, 64, 100.5, 1024, 1e4 + 0.5, 1e6};
  for (double q : qs)
    for (double sigma : sigmas)
      for (double a : alphas) {
        const double r = dpb::rdp_poisson_gaussian(q, sigma, a);
        INFO("q=" << q << " sigma=" << sigma << " alpha=" << a << " rho=" << r);
        CHECK_FALSE(std::isnan(r));
        CHECK(r >= 0);
        // Never above the plain Gaussian (q = 1), up to rounding.
        CHECK(r <= a / (2 * sigma * sigma) * (1 + 1e-9));
      }
}

TEST_CASE("fractional orders against a 50-digit quadrature oracle") {
  const struct {
    double q, sigma, alpha;
  } cases[] = {{0.01, 2.5, 1.5}, {0.01, 1, 3.7},   {0.1, 0.5, 1.1}, {0.1, 4, 2.5},
               {0.001, 4, 10.9}, {0.5, 1, 5.5},    {1e-4, 8, 1.3},  {0.05, 0.8, 7.7},
               {0.2, 10, 1.9},   {0.3, 0.6, 9.99}, {0.02, 40, 4.5}, {0.9, 2, 2.2},
               {0.01, 1, 45.5},  {0.1, 2, 5.0},    {0.001, 0.5, 20}};
  for (const auto& c : cases) {
    const double oracle = static_cast<double>(oracle_log_a(c.q, c.sigma, c.alpha));
    const double got = dpb::log_a_poisson_gaussian(c.q, c.sigma, c.alpha);
    INFO("q=" << c.q << " sigma=" << c.sigma << " alpha=" << c.alpha << " got " << got << " oracle "
              << oracle << " rel " << (got - oracle) / oracle);
    CHECK(close_rel(got, oracle, 1e-10));
    CHECK(got >= oracle * (1 - 1e-12));
  }
}

TEST_CASE("monotonicity of rho and epsilon on a grid") {
  const std::vector<double> qs = {1e-4, 1e-3, 0.01, 0.05, 0.1, 0.3};
  const std::vector<double> sigmas = {0.5, 0.8, 1, 1.5, 2, 4};
  const std::vector<double> alphas = {1.1, 1.5, 2, 2.7, 4, 6.5, 10.9, 20, 64};
  for (double q : qs)
    for (double sigma : sigmas)
      for (std::size_t k = 0; k < alphas.size(); ++k) {
        const double a = alphas[k];
        const double r = dpb::rdp_poisson_gaussian(q, sigma, a);
        INFO("q=" << q << " sigma=" << sigma << " alpha=" << a);
        if (k + 1 < alphas.size())  // Rényi divergence is non-decreasing in α
          CHECK(dpb::rdp_poisson_gaussian(q, sigma, alphas[k + 1]) >= r * (1 - 1e-12));
        if (sigma < 4)  // and non-increasing in σ, non-decreasing in q
          CHECK(dpb::rdp_poisson_gaussian(q, sigma * 1.25, a) <= r * (1 + 1e-12));
        if (q < 0.3) CHECK(dpb::rdp_poisson_gaussian(q * 1.5, sigma, a) >= r * (1 - 1e-12));
      }
  const auto orders = dpb::default_rdp_orders();
  auto eps = [&](double q, double sigma, double steps) {
    return dpb::epsilon_from_rdp(orders, composed_curve(q, sigma, steps, orders), 1e-5,
                                 RdpConversion::improved)
        .epsilon;
  };
  for (double q : {1e-3, 0.01, 0.1})
    for (double sigma : {0.7, 1.0, 2.0})
      for (double steps : {10.0, 1000.0}) {
        const double e = eps(q, sigma, steps);
        INFO("q=" << q << " sigma=" << sigma << " T=" << steps << " eps=" << e);
        CHECK(eps(q, sigma * 1.1, steps) <= e);
        CHECK(eps(q * 1.1, sigma, steps) >= e);
        CHECK(eps(q, sigma, steps * 2) >= e);
      }
}

TEST_CASE("delta_from_rdp round-trips epsilon_from_rdp") {
  const auto orders = dpb::default_rdp_orders();
  for (auto conversion : {RdpConversion::improved, RdpConversion::classic})
    for (double q : {1e-4, 0.01, 0.1})
      for (double sigma : {0.6, 1.0, 4.0})
        for (double delta : {1e-3, 1e-5, 1e-9}) {
          const auto curve = composed_curve(q, sigma, 1000, orders);
          const auto e = dpb::epsilon_from_rdp(orders, curve, delta, conversion);
          const auto d = dpb::delta_from_rdp(orders, curve, e.epsilon, conversion);
          INFO("q=" << q << " sigma=" << sigma << " delta=" << delta << " eps=" << e.epsilon
                    << " back " << d.delta);
          CHECK(d.delta <= delta * (1 + 1e-9));
          if (e.epsilon > 0 && !e.kl_shortcut) {
            CHECK(d.delta >= delta * (1 - 1e-6));
            CHECK(d.order == e.order);
          }
        }
}

TEST_CASE("conversion edge cases") {
  const std::vector<double> orders = {2, 4, 8};
  const std::vector<double> all_inf = {kInf, kInf, kInf};
  const auto e = dpb::epsilon_from_rdp(orders, all_inf, 1e-5, RdpConversion::improved);
  CHECK(e.epsilon == kInf);
  CHECK(dpb::delta_from_rdp(orders, all_inf, 3, RdpConversion::classic).delta == 1);
  // δ is capped at 1.
  const std::vector<double> big = {50, 60, 70};
  CHECK(dpb::delta_from_rdp(orders, big, 0, RdpConversion::classic).delta == 1);
  // KL shortcut (docs/rdp.md#kl-shortcut): q = 1e-4, σ = 8, T = 1, δ = 1e-5 → ε = 0.
  const auto dpa = expand_orders("dpa");
  const auto kl =
      dpb::epsilon_from_rdp(dpa, composed_curve(1e-4, 8, 1, dpa), 1e-5, RdpConversion::improved);
  CHECK(kl.epsilon == 0);
  CHECK(kl.kl_shortcut);
  CHECK(kl.order == 1.1);
  // Classic conversion has no shortcut and gives ε > 0.
  CHECK(dpb::epsilon_from_rdp(dpa, composed_curve(1e-4, 8, 1, dpa), 1e-5, RdpConversion::classic)
            .epsilon > 0);
  // ε is floored at 0; by hand: ρ = 0 everywhere.
  const std::vector<double> zero = {0, 0, 0};
  CHECK(dpb::epsilon_from_rdp(orders, zero, 0.5, RdpConversion::classic).epsilon > 0);
  CHECK(dpb::epsilon_from_rdp(orders, zero, 0.5, RdpConversion::improved).epsilon == 0);
  CHECK_THROWS_AS(dpb::epsilon_from_rdp(orders, zero, 0, RdpConversion::classic),
                  dpb::InvalidParameter);
}

TEST_CASE("Laplace mechanism, Mironov 2017 Prop. 6") {
  // Closed form at α = 2 (Mironov 2017, Prop. 6): log(2/3·e^{1/b} + 1/3·e^{−2/b}).
  for (double b : {0.1, 0.5, 1.0, 3.0, 1e3}) {
    const double expected = std::log(2.0 / 3 * std::exp(1 / b) + 1.0 / 3 * std::exp(-2 / b));
    INFO("b=" << b);
    CHECK(close_rel(dpb::rdp_laplace(b, 2), expected, b > 100 ? 1e-9 : 1e-13));
  }
  // Small-ε regime: ρ(α) ≈ α/(2b²) for large b (Laplace is locally Gaussian).
  CHECK(close_rel(dpb::rdp_laplace(1e5, 3), 3 / (2 * 1e10), 1e-4));
  // Large α tends to the pure ε = 1/b; small b stays finite.
  CHECK(close_rel(dpb::rdp_laplace(1, 1e6), 1.0, 1e-5));
  CHECK(std::isfinite(dpb::rdp_laplace(1e-3, 1e4)));
  CHECK(dpb::rdp_laplace(1, 1e6) <= 1.0);

  // reference/laplace.csv, rows computed by RDP on dp_accounting's default orders.
  const auto dpa = expand_orders("dpa");
  for (const auto& row : read_reference_csv("laplace.csv")) {
    if (row.at("method") != "rdp default orders") continue;
    const double b = std::stod(row.at("b")), count = std::stod(row.at("count"));
    std::vector<double> curve;
    for (double a : dpa) curve.push_back(count * dpb::rdp_laplace(b, a));
    const auto e =
        dpb::epsilon_from_rdp(dpa, curve, std::stod(row.at("delta")), RdpConversion::improved);
    INFO("b=" << b << " count=" << count << " got " << e.epsilon);
    CHECK(close_rel(e.epsilon, std::stod(row.at("epsilon")), 1e-9));
  }
}

TEST_CASE("log-space helpers") {
  namespace lm = dpb::logmath;
  CHECK(lm::log_add(std::log(2.0), std::log(3.0)) == doctest::Approx(std::log(5.0)));
  CHECK(lm::log_sub(std::log(5.0), std::log(3.0)) == doctest::Approx(std::log(2.0)));
  CHECK(lm::log_sub(1.0, 1.0) == -kInf);
  CHECK(lm::log_expm1(1e-20) == doctest::Approx(std::log(1e-20)));
  CHECK(lm::log_expm1(800.0) == 800.0);
  // log ½erfc across the switch to the asymptotic expansion is continuous.
  CHECK(close_rel(lm::log_half_erfc(24.999999), lm::log_half_erfc(25.000001), 1e-6));
  CHECK(close_rel(lm::log_half_erfc(3.0), std::log(std::erfc(3.0) / 2), 1e-15));
  // Beyond the double range, against long double erfc (range to 1e-4951).
  for (double x : {26.0, 30.0, 60.0}) {
    const long double ref = std::log(std::erfc(static_cast<long double>(x)) / 2);
    CHECK(close_rel(lm::log_half_erfc(x), static_cast<double>(ref), 1e-14));
  }
  CHECK(lm::log_half_erfc(-40.0) == 0);
  CHECK(close_rel(lm::log_abs_binomial(5.0, 2), std::log(10.0), 1e-14));
  CHECK(close_rel(lm::log_abs_binomial(1.5, 3), std::log(0.0625), 1e-14));
  CHECK(lm::binomial_sign(1.5, 3) == -1);
  CHECK(lm::binomial_sign(1.5, 4) == 1);
  CHECK(lm::binomial_sign(1.5, 2) == 1);
}

TEST_CASE("rdp: a DP-SGD run's pruned epsilon is the full curve's, to the bit, with its order") {
  // The accountant evaluates only the orders that can win (pruned_epsilon in
  // rdp_curves.cpp); epsilon_from_rdp over the whole curve is the reference.
  for (const dpb::RdpConversion conversion :
       {dpb::RdpConversion::improved, dpb::RdpConversion::classic})
    for (double q : {1e-4, 1e-3, 0.01, 0.1, 0.5, 1.0})
      for (double sigma : {0.4, 0.8, 1.1, 2.0, 6.0})
        for (std::int64_t steps : {1, 100, 10000}) {
          dpb::AccountantOptions options;
          options.rdp.conversion = conversion;
          const auto event = dpb::make_dp_sgd(q, sigma, steps);
          for (double delta : {1e-12, 1e-5, 0.1}) {
            dpb::RdpAccountant pruned(options);
            pruned.compose(*event);
            const dpb::Guarantee g = pruned.epsilon(delta);
            dpb::RdpAccountant full(options);
            full.compose(*event);
            const dpb::RdpEpsilon want =
                dpb::epsilon_from_rdp(full.orders(), full.curve(), delta, conversion);
            INFO("q ", q, " sigma ", sigma, " T ", steps, " delta ", delta);
            CHECK(g.epsilon == want.epsilon);
            REQUIRE(g.order);
            CHECK(*g.order == want.order);
          }
        }
}
