// Single mechanisms (docs/mechanisms.md#gaussian-profile,
// docs/mechanisms.md#laplace) and amplification
// (docs/composition.md#amplification-poisson).
#include <doctest/doctest.h>

#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <cmath>
#include <limits>

#include "accounting/composition/amplification.hpp"
#include "accounting/errors.hpp"
#include "accounting/gdp/gdp.hpp"
#include "accounting/mechanisms/gaussian_mechanism.hpp"
#include "accounting/mechanisms/laplace_mechanism.hpp"
#include "support/close.hpp"
#include "support/reference.hpp"

using namespace dpb;
using dpb::test::close_rel;

TEST_CASE("gaussian exact profile matches every row of gaussian.csv") {
  const auto rows = test::read_reference_csv("gaussian.csv");
  REQUIRE(rows.size() >= 6);
  for (const auto& r : rows) {
    const double sd = std::stod(r.at("sd"));
    const double sens = std::stod(r.at("sensitivity"));
    const double eps = std::stod(r.at("epsilon"));
    const double want = std::stod(r.at("delta_exact"));
    const double tol = std::stod(r.at("rel_tol"));
    CAPTURE(sd);
    CAPTURE(eps);
    CHECK(close_rel(gaussian_delta(sd, eps, sens), want, tol));
    // The inverse recovers ε and is rounded up: δ(ε̂) ≤ δ.
    const double e = gaussian_epsilon(sd, want, sens);
    CHECK(close_rel(e, eps, tol));
    CHECK(gaussian_delta(sd, e, sens) <= want);
  }
}

TEST_CASE("Google cc/accounting value: sigma = 1, epsilon = 1 gives delta = 0.12693674") {
  CHECK(gaussian_delta(1, 1) == doctest::Approx(0.12693674).epsilon(1e-8));
}

TEST_CASE("gaussian profile is accurate for large epsilon and tiny delta") {
  // Far tail, reference by 50-digit mpmath: σ = 0.1, ε = 200 (μ = 10) gives
  // Φ(−15) − e^200·Φ(−25) = 1.4622051775690748e-51; in log space, μ = 20 and
  // ε = 1000 give log δ = log(1.2177866656980788e-350) (below the double range).
  CHECK(gaussian_delta(0.1, 200) == doctest::Approx(1.4622051775690748e-51).epsilon(1e-10));
  CHECK(gdp_log_delta(20, 1000) ==
        doctest::Approx(std::log(1.2177866656980788) - 350 * std::log(10.0)).epsilon(1e-12));
  // Monotone, never negative, never NaN.
  double prev = 1;
  for (double e = 0; e < 2000; e += 13.7) {
    const double v = gaussian_delta(0.05, e);
    CHECK(v >= 0);
    CHECK(v <= prev);
    prev = v;
  }
  for (double s : {1e-6, 1e-3, 0.1, 1.0, 10.0, 1e3, 1e6})
    for (double e : {0.0, 1e-12, 1e-3, 1.0, 50.0, 1e4, 1e8}) {
      CHECK_FALSE(std::isnan(gaussian_delta(s, e)));
      for (double d2 : {1e-300, 1e-10, 0.5, 0.999999})
        CHECK_FALSE(std::isnan(gaussian_epsilon(s, d2)));
    }
}

TEST_CASE("analytic calibration (gaussian.csv comments)") {
  CHECK(gaussian_sigma_analytic(16, 1e-5) == doctest::Approx(0.34418).epsilon(1e-5));
  CHECK(gaussian_sigma_analytic(1, 0.12693673750664395) == doctest::Approx(1).epsilon(1e-9));
  // Fed back, σ reproduces δ from below (σ is rounded up).
  for (double e : {0.0, 0.01, 0.5, 1.0, 3.0, 16.0, 100.0})
    for (double d : {1e-12, 1e-5, 0.01, 0.3}) {
      CAPTURE(e);
      CAPTURE(d);
      const double s = gaussian_sigma_analytic(e, d);
      CHECK(gaussian_delta(s, e) <= d);
      CHECK(gaussian_delta(s, e) >= d * (1 - 1e-9));
    }
  CHECK(gaussian_sigma_analytic(1, 1e-5, 3) ==
        doctest::Approx(3 * gaussian_sigma_analytic(1, 1e-5)));
}

TEST_CASE("classic calibration") {
  CHECK(gaussian_sigma_classic(0.5, 1e-5) == doctest::Approx(9.6896105252107788).epsilon(1e-15));
  CHECK_THROWS_AS(gaussian_sigma_classic(1.0, 1e-5), InvalidParameter);
  CHECK_THROWS_AS(gaussian_sigma_classic(2.0, 1e-5), InvalidParameter);
  CHECK_THROWS_AS(gaussian_sigma_analytic(1.0, 0), InvalidParameter);
  CHECK_THROWS_AS(gaussian_delta(0, 1), InvalidParameter);
  CHECK_THROWS_AS(gaussian_delta(1, -1), InvalidParameter);
  // The classic σ is never smaller than the analytic one (ε < 1).
  for (double e : {0.1, 0.5, 0.9})
    CHECK(gaussian_sigma_classic(e, 1e-5) >= gaussian_sigma_analytic(e, 1e-5));
}

TEST_CASE("laplace: scale, exact profile, laplace.csv exact row") {
  CHECK(laplace_scale(0.5) == 2);
  CHECK(laplace_scale(0.5, 3) == 6);
  // Rounded up (more noise is safe): b·ε ≥ Δ exactly, and b at most one ulp
  // above the correctly rounded quotient. The double 0.3 is below 0.3, so 3/0.3
  // is just above 10 and rounds to nearest to 10: b must be the next double up.
  for (double e : {0.3, 0.1, 0.7, 1e-3, 3.0})
    for (double d : {1.0, 3.0, 0.2}) {
      const double b = laplace_scale(e, d);
      CHECK(std::fma(b, e, -d) >= 0);
      CHECK(b <= std::nextafter(d / e, INFINITY));
    }
  CHECK(laplace_scale(0.3, 3) == std::nextafter(10.0, INFINITY));
  bool found = false;
  for (const auto& r : test::read_reference_csv("laplace.csv")) {
    if (r.at("method") != "exact") continue;
    found = true;
    const double b = std::stod(r.at("b"));
    const double d = std::stod(r.at("delta"));
    const double want = std::stod(r.at("epsilon"));
    CHECK(close_rel(laplace_epsilon(b, d), want, 1e-14));
    CHECK(laplace_epsilon(b, d) >= want);
    CHECK(close_rel(laplace_delta(b, want), d, 1e-9));
  }
  CHECK(found);
  CHECK(laplace_epsilon(1, 0) == 1);
  CHECK(laplace_delta(1, 1) == 0);
  CHECK(laplace_delta(1, 0) == doctest::Approx(1 - std::exp(-0.5)));  // total variation
  // Independent check by quadrature: δ(ε) = ∫ (p(x) − e^ε p(x−1))₊ dx,
  // p = Laplace(0, b) density. The ratio p(x)/p(x−1) is e^{1/b} for x ≤ 0, so
  // (−∞, 0] contributes ½(1 − e^{ε−1/b}); integrate the rest numerically.
  for (double b : {0.7, 1.0, 3.0})
    for (double e : {0.0, 0.1, 0.3}) {
      auto p = [b](double x) { return std::exp(-std::abs(x) / b) / (2 * b); };
      auto f = [&](double x) { return std::max(0.0, p(x) - std::exp(e) * p(x - 1)); };
      const double left = 0.5 * (1 - std::exp(e - 1 / b));
      const double mid =
          boost::math::quadrature::gauss_kronrod<double, 61>::integrate(f, 0, 1, 15, 1e-13);
      CHECK(laplace_delta(b, e) == doctest::Approx(std::max(0.0, left) + mid).epsilon(1e-9));
    }
}

TEST_CASE("amplification by subsampling") {
  for (double e : {0.0, 0.1, 1.0, 10.0, 100.0}) {
    const EpsDelta id = amplify_poisson(e, 1e-5, 1);
    CHECK(id.epsilon == e);
    CHECK(id.delta == 1e-5);
    const EpsDelta a = amplify_poisson(e, 1e-5, 0.01);
    CHECK(a.epsilon == doctest::Approx(std::log(1 + 0.01 * (std::exp(e) - 1))).epsilon(1e-12));
    CHECK(a.delta == doctest::Approx(1e-7));
    CHECK(a.epsilon <= e);
    CHECK(amplification_inner_epsilon(a.epsilon, 0.01) == doctest::Approx(e).epsilon(1e-9));
  }
  const EpsDelta big = amplify_poisson(1000, 0, 0.5);
  CHECK(big.epsilon == doctest::Approx(1000 + std::log(0.5)));
  const EpsDelta w = amplify_without_replacement(1.0, 1e-6, 100, 10000);
  CHECK(w.epsilon == doctest::Approx(std::log1p(0.01 * std::expm1(1.0))));
  CHECK(w.delta == doctest::Approx(1e-8));
  CHECK(amplify_without_replacement(1.0, 1e-6, 7, 7).epsilon == 1.0);
  CHECK(amplify_poisson(1.0, 1e-6, 0).epsilon == 0);
  CHECK_THROWS_AS(amplify_poisson(1.0, 1e-6, 1.5), InvalidParameter);
  CHECK_THROWS_AS(amplify_without_replacement(1.0, 1e-6, 8, 7), InvalidParameter);
}
