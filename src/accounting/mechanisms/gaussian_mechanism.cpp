#include "accounting/mechanisms/gaussian_mechanism.hpp"

#include <algorithm>
#include <boost/math/tools/roots.hpp>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "accounting/errors.hpp"
#include "accounting/gdp/gdp.hpp"
#include "accounting/numerics/outward.hpp"

namespace dpb {
namespace {

void check_sigma(double sigma) {
  if (!(sigma > 0)) throw InvalidParameter("noise_multiplier", "must be a number > 0");
}
void check_sensitivity(double s) {
  if (!(s > 0) || !std::isfinite(s))
    throw InvalidParameter("sensitivity", "must be a finite number > 0");
}
void check_open_delta(double delta) {
  if (!(delta > 0 && delta < 1)) throw InvalidParameter("delta", "must be in (0, 1)");
}

/// Nudges of a root toward the safe side, in steps growing ×√2 from one ulp:
/// 200 reach a factor far beyond any rounding error of the profile.
constexpr int kMaxNudges = 200;

}  // namespace

double gaussian_delta(double sigma, double epsilon, double sensitivity) {
  check_sigma(sigma);
  check_sensitivity(sensitivity);
  // μ = Δ/σ rounded up: the profile grows with μ.
  return gdp_delta(outward::quotient_up(sensitivity, sigma), epsilon);
}

double gaussian_epsilon(double sigma, double delta, double sensitivity) {
  check_sigma(sigma);
  check_sensitivity(sensitivity);
  return gdp_epsilon(outward::quotient_up(sensitivity, sigma), delta);
}

double gaussian_epsilon_checked(double sigma, double delta, double sensitivity) {
  check_sigma(sigma);
  check_open_delta(delta);
  check_sensitivity(sensitivity);
  // ε ≥ μ²/2 − μ·Φ⁻¹(1 − δ) with μ = Δ/σ (the profile's Φ(−ε/μ + μ/2) term): once
  // μ² overflows, so does ε (|Φ⁻¹| < 40 for any double δ). gdp_epsilon's
  // bracket overflows there too, so answer first.
  const double mu = sensitivity / sigma;
  if (!std::isfinite(mu * mu)) return std::numeric_limits<double>::infinity();
  double eps = gaussian_epsilon(sigma, delta, sensitivity);
  for (int i = 0; i < kMaxNudges && std::isfinite(eps) && eps > 0 &&
                  gaussian_delta(sigma, eps, sensitivity) > delta;
       ++i)
    eps *= 1 + 0x1p-52 * std::ldexp(1.0, i / 2);  // growing steps of a few ulps
  return eps;
}

double gaussian_sigma_analytic(double epsilon, double delta, double sensitivity) {
  if (!(epsilon >= 0) || !std::isfinite(epsilon))
    throw InvalidParameter("epsilon", "must be a finite number >= 0");
  check_open_delta(delta);
  check_sensitivity(sensitivity);
  // log δ(ε; μ) is increasing in μ: find μ* with δ(ε; μ*) = δ, keep the lower
  // (safe) end of the bracket, then σ = Δ/μ and nudge σ up until the profile,
  // evaluated at the returned σ itself, meets the target.
  const double log_target = std::log(delta);
  auto f = [&](double mu) { return std::max(gdp_log_delta(mu, epsilon), -3000.0) - log_target; };
  double lo = 1;
  double hi = 1;
  while (f(lo) > 0 && lo > 1e-300) lo /= 2;
  while (f(hi) <= 0 && hi < 1e300) hi *= 2;
  if (f(hi) <= 0) return 0;  // unreachable for δ < 1
  std::uintmax_t iters = 300;
  const auto [mu_lo, mu_hi] = boost::math::tools::toms748_solve(
      f, lo, hi, boost::math::tools::eps_tolerance<double>(52), iters);
  (void)mu_hi;
  double sigma = sensitivity / mu_lo;
  for (int i = 0; i < kMaxNudges && gaussian_delta(sigma, epsilon, sensitivity) > delta; ++i)
    sigma *= 1 + 0x1p-52 * std::ldexp(1.0, i / 2);  // growing steps of a few ulps
  return sigma;
}

bool gaussian_classic_applies(double epsilon) { return epsilon > 0 && epsilon < 1; }

double gaussian_sigma_classic(double epsilon, double delta, double sensitivity) {
  if (!gaussian_classic_applies(epsilon))
    throw InvalidParameter("epsilon",
                           "classic Gaussian calibration is valid only for 0 < epsilon < 1 "
                           "(use the analytic calibration)");
  check_open_delta(delta);
  check_sensitivity(sensitivity);
  return sensitivity * std::sqrt(2 * std::log(1.25 / delta)) / epsilon;
}

namespace {

/// Ulps by which the classic closed forms are pushed toward more privacy loss:
/// a few correctly rounded operations (each ≤ ½ ulp) plus log and exp, whose
/// relative error grows by up to |1/ln(1.25/δ)| ≤ 4.5 for δ < 1 (ln 1.25 ≈ 0.22).
constexpr int kClassicUlps = 16;

double ulps_up(double x, int n) {
  for (int i = 0; i < n; ++i) x = std::nextafter(x, std::numeric_limits<double>::infinity());
  return x;
}

}  // namespace

double gaussian_epsilon_classic(double sigma, double delta, double sensitivity) {
  check_sigma(sigma);
  check_open_delta(delta);
  check_sensitivity(sensitivity);
  const double eps =
      ulps_up(sensitivity * std::sqrt(2 * std::log(1.25 / delta)) / sigma, kClassicUlps);
  if (!gaussian_classic_applies(eps)) {
    char shown[32];
    std::snprintf(shown, sizeof shown, "%.6g", eps);
    throw InvalidParameter("noise_multiplier",
                           std::string("the classic bound covers only epsilon < 1; this noise "
                                       "would give epsilon = ") +
                               shown + " (use the analytic method)");
  }
  return eps;
}

double gaussian_delta_classic(double sigma, double epsilon, double sensitivity) {
  check_sigma(sigma);
  check_sensitivity(sensitivity);
  if (!gaussian_classic_applies(epsilon))
    throw InvalidParameter("epsilon",
                           "classic Gaussian bound is valid only for 0 < epsilon < 1 "
                           "(use the analytic method)");
  const double c = epsilon * sigma / sensitivity;
  // A smaller exponent is a larger δ: shrink c²/2 past its rounding error.
  const double exponent = c * c / 2 * (1 - kClassicUlps * std::numeric_limits<double>::epsilon());
  return std::min(1.0, ulps_up(1.25 * std::exp(-exponent), kClassicUlps));
}

double grouped_noise_multiplier(const std::vector<double>& z) {
  if (z.empty()) throw InvalidParameter("group_noise_multipliers", "needs at least one value");
  double smallest = z.front();
  for (double x : z) {
    if (!(x > 0) || !std::isfinite(x))
      throw InvalidParameter("group_noise_multipliers", "every value must be a finite number > 0");
    smallest = std::min(smallest, x);
  }
  double sum = 0;  // Σ (z_min/z_m)² ∈ [1, M]
  for (double x : z) sum += (smallest / x) * (smallest / x);
  // A smaller σ means more privacy loss: step down past the rounding error
  // (a few ulps from the sum, the division and the square root).
  double result = smallest / std::sqrt(sum);
  for (int i = 0; i < 4 && z.size() > 1; ++i) result = std::nextafter(result, 0.0);
  return result;
}

namespace {

/// Ulps the z_eff of gradient_noise_multiplier_for() is stepped up by: r = z/(2σ_b) and 1 − r²
/// as (1 − r)(1 + r) carry a few roundings each (at most 6 operations of error u, and the
/// square root halves what it is given), so 8 covers them with room.
constexpr int kClippingUlps = 8;

void check_clipping_inputs(double gradient_multiplier, double count_noise) {
  if (!(gradient_multiplier > 0) || !std::isfinite(gradient_multiplier))
    throw InvalidParameter("noise_multiplier", "must be a finite number > 0");
  if (!(count_noise > 0) || !std::isfinite(count_noise))
    throw InvalidParameter("clipping_count_noise", "must be a finite number > 0");
}

}  // namespace

double combined_noise_multiplier(double gradient_multiplier, double count_noise) {
  check_clipping_inputs(gradient_multiplier, count_noise);
  // Andrew et al. 2021, Theorem 1 (docs/mechanisms.md#adaptive-clipping): the count's sensitivity
  // is 1/2 against the gradient's 1, so its multiplier is 2σ_b; the two Gaussians on the same
  // batch compose as the grouped multipliers do (docs/mechanisms.md#grouped-clipping), rounded
  // down there. 2σ_b is exact; a σ_b of 2^1023 or more overflows to inf, whose term 1/inf² = 0
  // is the limit.
  const double count_multiplier = 2 * count_noise;
  if (!std::isfinite(count_multiplier)) return gradient_multiplier;
  return grouped_noise_multiplier({gradient_multiplier, count_multiplier});
}

double gradient_noise_multiplier_for(double total_multiplier, double count_noise) {
  check_clipping_inputs(total_multiplier, count_noise);
  // Andrew et al. 2021, Theorem 1 (docs/mechanisms.md#adaptive-clipping):
  // z_eff = (z⁻² − (2σ_b)⁻²)^(−1/2) = z / √(1 − r²), r = z/(2σ_b); real only for r < 1.
  const double r = total_multiplier / 2 / count_noise;
  if (!(r < 1)) {
    char shown[96];
    std::snprintf(shown, sizeof shown, "2*sigma_b = %.6g is at most the multiplier %.6g",
                  2 * count_noise, total_multiplier);
    throw NoSolution(std::string(shown) +
                     " the target needs: the count alone loses more than the target allows, so "
                     "no gradient noise meets it (sigma_b must exceed half that multiplier)");
  }
  const double root = std::sqrt((1 - r) * (1 + r));
  return outward::up(total_multiplier / root, kClippingUlps);
}

}  // namespace dpb
