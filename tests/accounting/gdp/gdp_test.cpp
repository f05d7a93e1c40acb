// Gaussian DP (docs/gdp.md#gdp-profile) and the "gdp" accountant.
#include "accounting/gdp/gdp.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "accounting/errors.hpp"
#include "accounting/gdp/gdp_accountant.hpp"
#include "accounting/mechanisms/gaussian_mechanism.hpp"
#include "support/analytic_gaussian.hpp"
#include "support/close.hpp"
#include "support/reference.hpp"

using namespace dpb;
using dpb::test::close_rel;

TEST_CASE("gdp.csv: CLT mu and epsilon, Poisson and uniform") {
  const auto rows = test::read_reference_csv("gdp.csv");
  REQUIRE(rows.size() >= 10);
  for (const auto& r : rows) {
    const double q = std::stod(r.at("q"));
    const double sigma = std::stod(r.at("sigma"));
    const double steps = std::stod(r.at("steps"));
    const double delta = std::stod(r.at("delta"));
    const double tol = std::stod(r.at("rel_tol"));
    CAPTURE(q);
    CAPTURE(sigma);
    const double mu_p = std::stod(r.at("mu_poisson"));
    CHECK(close_rel(gdp_clt_mu_poisson(q, sigma, steps), mu_p, tol));
    const double e_p = gdp_epsilon(mu_p, delta);
    CHECK(close_rel(e_p, std::stod(r.at("epsilon_poisson")), tol));
    CHECK(gdp_delta(mu_p, e_p) <= delta);
    if (!r.at("mu_uniform").empty()) {
      const double mu_u = std::stod(r.at("mu_uniform"));
      CHECK(close_rel(gdp_clt_mu_uniform(q, sigma, steps), mu_u, tol));
      CHECK(close_rel(gdp_epsilon(mu_u, delta), std::stod(r.at("epsilon_uniform")), tol));
    }
  }
}

TEST_CASE("Reference value: GDP CLT of the Abadi configuration, via the accountant") {
  GdpAccountant acc({});
  acc.compose(*make_dp_sgd(0.01, 4, 10000));
  const Guarantee g = acc.epsilon(1e-5);
  CHECK(g.bound == BoundKind::approximate);
  CHECK_FALSE(g.notes.empty());
  REQUIRE(g.details.size() == 1);
  CHECK(g.details[0].first == "mu");
  CHECK(g.details[0].second == doctest::Approx(0.25396).epsilon(1e-4));
  CHECK(g.epsilon == doctest::Approx(0.9424).epsilon(1e-4));
  // Same via compose(event, count).
  GdpAccountant acc2({});
  acc2.compose(*make_poisson_sampled(0.01, make_gaussian(4)), 10000);
  CHECK(acc2.epsilon(1e-5).epsilon == doctest::Approx(g.epsilon).epsilon(1e-12));
}

TEST_CASE("GDP delta with mu = 1/sigma is the exact Gaussian profile") {
  for (double s : {0.3, 1.0, 4.0})
    for (double e : {0.0, 0.5, 2.0, 10.0})
      CHECK(gdp_delta(1 / s, e) == doctest::Approx(gaussian_delta(s, e)).epsilon(1e-14));
  // And the direct formula where it does not cancel.
  const double mu = 1.3;
  const double e = 0.7;
  const auto Phi = dpb::test::std_normal_cdf;
  CHECK(
      gdp_delta(mu, e) ==
      doctest::Approx(Phi(-e / mu + mu / 2) - std::exp(e) * Phi(-e / mu - mu / 2)).epsilon(1e-12));
}

TEST_CASE("GDP: large mu does not overflow (Opacus' bracket stops at 500)") {
  const double e = gdp_epsilon(26, 1e-5);
  CHECK(e > 400);
  CHECK(gdp_delta(26, e) <= 1e-5);
  CHECK(gdp_delta(26, e) > 0.999e-5);
  const double e2 = gdp_epsilon(100, 1e-5);
  CHECK(e2 > 5000);
  CHECK(gdp_delta(100, e2) == doctest::Approx(1e-5).epsilon(1e-8));
  CHECK(std::isinf(gdp_epsilon(1, 0)));
  CHECK(gdp_epsilon(0, 1e-5) == 0);
  for (double mu : {0.0, 1e-12, 1e-3, 1.0, 30.0, 1e3, 1e8})
    for (double eps : {0.0, 1e-9, 1.0, 1e3, 1e9}) CHECK_FALSE(std::isnan(gdp_delta(mu, eps)));
}

TEST_CASE("GDP composition and group privacy") {
  const std::vector<double> mus{0.3, 0.4, 1.2};
  CHECK(gdp_compose(mus) == doctest::Approx(1.3));
  CHECK(gdp_self_compose(0.5, 16) == doctest::Approx(2.0));
  CHECK(gdp_group(0.5, 3) == doctest::Approx(1.5));
  // Group privacy scales μ by k, and so the accountant's μ.
  GdpAccountant acc({});
  acc.compose(*make_gaussian(2), 4);
  acc.compose(*make_composed({make_gaussian(1), make_self_composed(3, make_gaussian(3))}));
  const double want = std::sqrt(4 * 0.25 + 1 + 3.0 / 9);
  CHECK(acc.mu() == doctest::Approx(want));
  const Guarantee g = acc.delta(1.0);
  CHECK(g.bound == BoundKind::upper);
  CHECK(g.delta == doctest::Approx(gdp_delta(want, 1.0)));
  CHECK(g.notes.empty());
  // Mixing in a CLT part makes the whole approximate.
  acc.compose(*make_dp_sgd(0.01, 1, 100));
  CHECK(acc.epsilon(1e-5).bound == BoundKind::approximate);
}

TEST_CASE("GDP accountant rejects what it cannot account for") {
  GdpAccountant acc({});
  const auto why = acc.unsupported_reason(*make_laplace(1));
  REQUIRE(why);
  CHECK(why->find("laplace") != std::string::npos);
  CHECK_THROWS_AS(acc.compose(*make_composed({make_gaussian(1), make_laplace(1)})),
                  UnsupportedEvent);
  CHECK(acc.supports(*make_dp_sgd(0.1, 1, 5)));
  GdpAccountant mixed({});
  mixed.compose(*make_dp_sgd(0.1, 1, 5));
  CHECK_THROWS_AS(mixed.compose(*make_sampled_without_replacement(100, 10, make_gaussian(1))),
                  UnsupportedEvent);
}

TEST_CASE("trade-off functions") {
  // G_0(x) = 1 − x; G_μ(0) = 1, G_μ(1) = 0.
  for (double x : {0.0, 0.1, 0.5, 0.9, 1.0}) CHECK(gdp_tradeoff(0, x) == doctest::Approx(1 - x));
  CHECK(gdp_tradeoff(1, 0) == 1);
  CHECK(gdp_tradeoff(1, 1) == 0);
  // G_1(0.5) = Φ(−1) = 0.15865525393145707.
  CHECK(gdp_tradeoff(1, 0.5) == doctest::Approx(0.15865525393145707).epsilon(1e-13));
  // μ-GDP ⇒ (ε, δ(ε))-DP: G_μ ≥ f_{ε,δ(ε)} everywhere (Dong et al., Cor. 2.13).
  for (double e : {0.0, 0.5, 2.0}) {
    const double d = gdp_delta(1, e);
    for (double x = 0; x <= 1; x += 0.01)
      CHECK(gdp_tradeoff(1, x) >= eps_delta_tradeoff(e, d, x) - 1e-12);
  }
  CHECK(eps_delta_tradeoff(0, 0, 0.3) == doctest::Approx(0.7));
  CHECK(eps_delta_tradeoff(1, 0.1, 0) == doctest::Approx(0.9));
  CHECK(eps_delta_tradeoff(1, 0.1, 1) == 0);
  CHECK(eps_delta_tradeoff(std::log(2.0), 0, 0.2) == doctest::Approx(0.6));
}
