// Adaptive clipping's count (Andrew, Thakkar, McMahan & Ramaswamy 2021, Theorem 1;
// docs/mechanisms.md#adaptive-clipping): the gradient multiplier z_eff = (z⁻² − (2σ_b)⁻²)^(−1/2)
// and the combined multiplier (z_g⁻² + (2σ_b)⁻²)^(−1/2), against the closed forms in long double
// and hand-computed values, rounded to the safe side; σ_b too small refused.
#include <doctest/doctest.h>

#include <cmath>

#include "accounting/dpsgd/dp_sgd_run.hpp"
#include "accounting/errors.hpp"
#include "accounting/mechanisms/gaussian_mechanism.hpp"

using namespace dpb;

namespace {

/// The functions round outward by at most 8 ulps (kClippingUlps) plus the few roundings of their
/// arithmetic; 1e-14 relative is ~45 ulps, so a wrong formula (off by far more) still fails.
constexpr double kRelTolerance = 1e-14;

long double z_eff_closed_form(long double z, long double sigma_b) {
  return 1.0L / std::sqrt(1.0L / (z * z) - 1.0L / (4.0L * sigma_b * sigma_b));
}

long double combined_closed_form(long double z_g, long double sigma_b) {
  return 1.0L / std::sqrt(1.0L / (z_g * z_g) + 1.0L / (4.0L * sigma_b * sigma_b));
}

}  // namespace

TEST_CASE("adaptive clipping: z_eff from a target z and sigma_b, the theorem's closed form") {
  // z = 1, σ_b = 1: z_eff = (1 − 1/4)^(−1/2) = 2/√3.
  const double two_over_root3 = 1.1547005383792515290;
  CHECK(gradient_noise_multiplier_for(1.0, 1.0) >= two_over_root3);
  CHECK(gradient_noise_multiplier_for(1.0, 1.0) ==
        doctest::Approx(two_over_root3).epsilon(kRelTolerance));
  // 3-4-5: z = 1, 2σ_b = 5/4 (σ_b = 0.625): z_eff = (1 − 16/25)^(−1/2) = 5/3.
  CHECK(gradient_noise_multiplier_for(1.0, 0.625) >= 5.0 / 3.0);
  CHECK(gradient_noise_multiplier_for(1.0, 0.625) ==
        doctest::Approx(5.0 / 3.0).epsilon(kRelTolerance));
  for (double z : {0.3, 0.8, 1.1, 2.0, 7.5})
    for (double ratio : {0.51, 0.6, 1.0, 3.0, 50.0, 1e6}) {  // σ_b = ratio·z (> z/2)
      const double sigma_b = ratio * z;
      CAPTURE(z);
      CAPTURE(sigma_b);
      const long double exact = z_eff_closed_form(z, sigma_b);
      const double got = gradient_noise_multiplier_for(z, sigma_b);
      CHECK(static_cast<long double>(got) >= exact);  // more gradient noise: the safe side
      CHECK(got == doctest::Approx(static_cast<double>(exact)).epsilon(kRelTolerance));
      CHECK(got > z);  // the count spends some privacy: the gradient needs more than z
    }
}

TEST_CASE("adaptive clipping: the combined multiplier, rounded down, inverts z_eff") {
  // 3-4-5: z_g = 5/3 and 2σ_b = 5/4 combine to exactly 1 (9/25 + 16/25 = 1).
  CHECK(combined_noise_multiplier(5.0 / 3.0, 0.625) == doctest::Approx(1.0).epsilon(kRelTolerance));
  for (double z_g : {0.3, 1.0, 1.1, 4.0})
    for (double sigma_b : {0.1, 0.625, 2.0, 1e3}) {
      CAPTURE(z_g);
      CAPTURE(sigma_b);
      const long double exact = combined_closed_form(z_g, sigma_b);
      const double got = combined_noise_multiplier(z_g, sigma_b);
      CHECK(static_cast<long double>(got) <= exact);  // less noise: more loss, the safe side
      CHECK(got == doctest::Approx(static_cast<double>(exact)).epsilon(kRelTolerance));
      CHECK(got < z_g);
    }
  // Round trip: the gradient noise solved for z, with the count, is at least z (to rounding).
  for (double z : {0.5, 1.0, 3.0}) {
    const double sigma_b = 2 * z;
    CHECK(combined_noise_multiplier(gradient_noise_multiplier_for(z, sigma_b), sigma_b) ==
          doctest::Approx(z).epsilon(kRelTolerance));
  }
}

TEST_CASE("adaptive clipping: no gradient noise meets z when 2 sigma_b <= z") {
  CHECK_THROWS_AS(gradient_noise_multiplier_for(2.0, 1.0), NoSolution);  // 2σ_b = z
  CHECK_THROWS_AS(gradient_noise_multiplier_for(3.0, 1.0), NoSolution);
  CHECK_THROWS_AS(gradient_noise_multiplier_for(1.0, 0.0), InvalidParameter);
  CHECK_THROWS_AS(combined_noise_multiplier(1.0, -1.0), InvalidParameter);
  CHECK_THROWS_AS(combined_noise_multiplier(0.0, 1.0), InvalidParameter);
}

TEST_CASE("adaptive clipping: a run with the count is accounted at the combined multiplier") {
  RunValues v;
  v.sampling_rate = 0.01;
  v.noise_multiplier = 5.0 / 3.0;
  v.steps = 1000;
  v.clipping_count_noise = 0.625;
  const DpSgdRun run = derive_run(v, RunUnknown::none);
  CHECK(run.gradient_noise_multiplier == 5.0 / 3.0);
  CHECK(run.noise_multiplier == doctest::Approx(1.0).epsilon(kRelTolerance));
  CHECK_FALSE(event_is_the_run(run));  // the combined Gaussian dominates; no attained pair
  v.clipping_count_noise = 0.0;
  CHECK_THROWS_AS(derive_run(v, RunUnknown::none), RunParameterError);
}
