// The mechanisms read the other way (issue 13, point 6): ε of a given noise at
// δ and δ at ε, for the Gaussian (exact profile, Balle & Wang 2018; classic
// bound, Dwork & Roth 2014 Theorem A.1) and the Laplace mechanism (docs/mechanisms.md#laplace),
// against their closed forms and round trips through the calibrations.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "accounting/errors.hpp"
#include "accounting/mechanisms/gaussian_mechanism.hpp"
#include "accounting/mechanisms/laplace_mechanism.hpp"
#include "support/analytic_gaussian.hpp"
#include "support/close.hpp"

using namespace dpb;
using dpb::test::analytic_gaussian_delta;
using dpb::test::close_rel;

namespace {

/// Where the closed form above is evaluated directly: its two terms cancel
/// for small δ, so compare only while δ keeps this many digits (rel 1e-9 needs
/// δ well above 1e-16 · Φ(·) / 1e-9).
constexpr double kDirectFormFloor = 1e-6;
/// The exact profile's root finder stops within a few ulps of ε; a reported ε
/// shrunk by this much must already break the target δ.
constexpr double kRootTightness = 1e-9;
/// The analytic calibration returns the upper end of a root bracket 2^-51
/// wide, nudged up by ulps: a round trip may land that far above σ.
constexpr double kCalibrationSlack = 1e-14;

}  // namespace

TEST_CASE("gaussian, noise given: delta at epsilon is the exact profile's closed form") {
  for (double sigma : {0.5, 1.0, 2.0, 5.0})
    for (double eps : {0.0, 0.1, 0.5, 1.0, 2.0}) {
      const double want = analytic_gaussian_delta(sigma, eps);
      if (want < kDirectFormFloor) continue;
      INFO("sigma=", sigma, " eps=", eps);
      CHECK(close_rel(gaussian_delta(sigma, eps), want, 1e-9));
    }
  CHECK(gaussian_delta(1, 1) ==
        doctest::Approx(0.12693674).epsilon(1e-8));  // Google cc/accounting test value
  // Sensitivity Δ with sd σ is sensitivity 1 with σ/Δ.
  CHECK(close_rel(gaussian_delta(6, 0.5, 3), gaussian_delta(2, 0.5), 1e-14));
}

TEST_CASE("gaussian, noise given: epsilon at delta is the profile's root, rounded up") {
  for (double sigma : {0.5, 1.0, 2.0, 5.0, 20.0})
    for (double delta : {1e-2, 1e-5, 1e-10}) {
      INFO("sigma=", sigma, " delta=", delta);
      const double eps = gaussian_epsilon_checked(sigma, delta);
      CHECK(gaussian_delta(sigma, eps) <= delta);
      if (eps > 0) CHECK(gaussian_delta(sigma, eps * (1 - kRootTightness)) > delta);
      // Round trip: the σ that calibrates to this ε is σ again, no more
      // (ε was rounded up, so less noise meets it) than the calibration's slack.
      const double back = gaussian_sigma_analytic(eps, delta);
      CHECK(back <= sigma * (1 + kCalibrationSlack));
      CHECK(back >= sigma * (1 - 1e-8));
    }
  // So little noise that ε = μ²/2 − ... overflows: inf, never an error or NaN.
  CHECK(gaussian_epsilon_checked(1e-300, 1e-5) == std::numeric_limits<double>::infinity());
  CHECK(gaussian_epsilon_checked(1e-160, 0.5) == std::numeric_limits<double>::infinity());
  CHECK(std::isfinite(gaussian_epsilon_checked(1e-150, 1e-5)));
  // The other direction composes: δ at the ε found is back at δ.
  const double e = gaussian_epsilon_checked(2, 1e-5);
  CHECK(close_rel(gaussian_delta(2, e), 1e-5, 1e-8));
  // And calibrating first: σ(ε, δ) gives back ε.
  const double s = gaussian_sigma_analytic(0.5, 1e-5);
  CHECK(close_rel(gaussian_epsilon(s, 1e-5), 0.5, 1e-9));
  CHECK(gaussian_epsilon(s, 1e-5) <= 0.5 * (1 + 1e-12));
}

TEST_CASE("gaussian classic, noise given: epsilon = sqrt(2 ln(1.25/delta))/sigma, only below 1") {
  for (double sigma : {5.0, 10.0, 100.0})
    for (double delta : {1e-2, 1e-5, 1e-10}) {
      const double want = std::sqrt(2 * std::log(1.25 / delta)) / sigma;
      if (want >= 1) continue;
      INFO("sigma=", sigma, " delta=", delta);
      const double eps = gaussian_epsilon_classic(sigma, delta);
      CHECK(eps >= want);
      CHECK(close_rel(eps, want, 1e-13));
      // Round trip through the classic calibration: never more noise than given.
      const double back = gaussian_sigma_classic(eps, delta);
      CHECK(back <= sigma);
      CHECK(back >= sigma * (1 - 1e-13));
      // Never below the exact profile's ε: the classic bound is looser.
      CHECK(eps >= gaussian_epsilon(sigma, delta));
    }
  CHECK(
      close_rel(gaussian_epsilon_classic(30, 1e-5, 3), gaussian_epsilon_classic(10, 1e-5), 1e-13));
  // Too little noise for ε < 1: refused, naming the ε it would give.
  CHECK_THROWS_AS(gaussian_epsilon_classic(2, 1e-5), InvalidParameter);
  CHECK_THROWS_WITH(
      gaussian_epsilon_classic(2, 1e-5),
      doctest::Contains("covers only epsilon < 1; this noise would give epsilon = 2.4"));
  CHECK_THROWS_AS(gaussian_epsilon_classic(10, 0), InvalidParameter);
  CHECK_THROWS_AS(gaussian_epsilon_classic(0, 1e-5), InvalidParameter);
}

TEST_CASE("gaussian classic, noise given: delta = 1.25 exp(-(eps sigma)^2/2), capped at 1") {
  for (double sigma : {2.0, 5.0, 10.0})
    for (double eps : {0.1, 0.5, 0.9}) {
      const double want = std::min(1.0, 1.25 * std::exp(-(eps * sigma) * (eps * sigma) / 2));
      INFO("sigma=", sigma, " eps=", eps);
      const double delta = gaussian_delta_classic(sigma, eps);
      CHECK(delta >= want);
      CHECK(close_rel(delta, want, 1e-12));
      if (delta < 1) {
        // Round trip: calibrating for (ε, δ) asks for no more noise than given.
        const double back = gaussian_sigma_classic(eps, delta);
        CHECK(back <= sigma * (1 + 1e-15));
        CHECK(back >= sigma * (1 - 1e-12));
        CHECK(delta >= gaussian_delta(sigma, eps));  // looser than the exact profile
      }
    }
  CHECK(gaussian_delta_classic(1, 0.5) == 1);  // the theorem gives nothing here
  CHECK_THROWS_AS(gaussian_delta_classic(2, 1), InvalidParameter);
  CHECK_THROWS_AS(gaussian_delta_classic(2, 0), InvalidParameter);
}

TEST_CASE("laplace, scale given: pure epsilon = sensitivity/b rounded up, profile both ways") {
  CHECK(laplace_pure_epsilon(2) == 0.5);
  CHECK(laplace_pure_epsilon(6, 3) == 0.5);
  for (double b : {0.3, 0.7, 3.0, 10.0})
    for (double d : {1.0, 3.0, 0.2}) {
      const double eps = laplace_pure_epsilon(b, d);
      CHECK(std::fma(eps, b, -d) >= 0);  // ε·b ≥ Δ exactly: never below Δ/b
      CHECK(eps <= std::nextafter(d / b, INFINITY));
      // Round trip: the scale calibrated for this ε is b (to an ulp).
      CHECK(close_rel(laplace_scale(eps, d), b, 2e-16));
    }
  for (double b : {0.5, 1.0, 4.0})
    for (double delta : {0.0, 1e-3, 0.1}) {
      const double eps = laplace_epsilon(b, delta);
      INFO("b=", b, " delta=", delta);
      CHECK(close_rel(eps, std::max(0.0, 1 / b + 2 * std::log1p(-delta)), 1e-14));
      CHECK(laplace_delta(b, eps) <= delta * (1 + 1e-12));
    }
  CHECK_THROWS_AS(laplace_pure_epsilon(0), InvalidParameter);
}
