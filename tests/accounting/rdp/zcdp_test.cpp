// zCDP budgets in and out (docs/zcdp.md): ρ of Gaussian and ε-DP releases
// against their closed forms (Bun & Steinke 2016), ρ → (ε, δ) against Prop.
// 1.3 evaluated here and against Canonne, Kamath & Steinke 2020's Prop. 12
// minimised here by a brute-force search over the order in long double (its
// δ form, not the library's rewriting), the analytic Gaussian as a floor, and
// (ε, δ) → ρ round trips.
#include "accounting/rdp/zcdp.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "accounting/errors.hpp"
#include "support/analytic_gaussian.hpp"
#include "support/close.hpp"

using namespace dpb;
using dpb::test::close_rel;

namespace {

/// A closed form evaluated in doubles against the code's, rounded up a few
/// ulps: agreement to a few roundings.
constexpr double kClosedForm = 1e-14;
/// The printed conversion against the brute-force infimum: never below it by
/// more than the brute force's own round-off, and above it by at most the
/// code's round-up (16 u of the terms' magnitude) and the search's slack.
constexpr double kBelowInfimum = 1e-12;
constexpr double kAboveInfimum = 1e-9;

/// log δ of Canonne, Kamath & Steinke 2020, Prop. 12 at one order, as the
/// paper writes it: log[exp((α−1)(αρ−ε))/(α−1) · (1−1/α)^α].
long double cks_log_delta_at(long double rho, long double eps, long double alpha) {
  return (alpha - 1) * (alpha * rho - eps) - std::log(alpha - 1) + alpha * std::log1p(-1 / alpha);
}

/// The infimum of a function of log(α − 1): a grid of 40,000 points over
/// [−30, 40], then ternary search in the best cell's neighbours.
template <typename F>
long double brute_min(const F& f) {
  const int n = 40000;
  const long double lo = -30, hi = 40, h = (hi - lo) / n;
  long double best = std::numeric_limits<long double>::infinity(), best_t = lo;
  for (int i = 0; i <= n; ++i) {
    const long double t = lo + i * h, v = f(t);
    if (v < best) best = v, best_t = t;
  }
  long double a = best_t - h, b = best_t + h;
  for (int i = 0; i < 200; ++i) {
    const long double m1 = a + (b - a) / 3, m2 = b - (b - a) / 3;
    if (f(m1) < f(m2))
      b = m2;
    else
      a = m1;
  }
  return std::min(best, f((a + b) / 2));
}

/// δ of ρ-zCDP at ε by Prop. 12, brute force.
double cks_delta(double rho, double eps) {
  return static_cast<double>(std::exp(
      brute_min([&](long double t) { return cks_log_delta_at(rho, eps, 1 + std::exp(t)); })));
}

/// ε of ρ-zCDP at δ by Prop. 12, brute force: its δ form solved for ε at each
/// order, ε(α) = αρ + (α log(1 − 1/α) − log(α − 1) − log δ)/(α − 1).
double cks_epsilon(double rho, double delta) {
  return static_cast<double>(brute_min([&](long double t) {
    const long double a = 1 + std::exp(t);
    return a * rho +
           (a * std::log1p(-1 / a) - std::log(a - 1) - std::log(static_cast<long double>(delta))) /
               (a - 1);
  }));
}

}  // namespace

TEST_CASE("zcdp: rho of Gaussian releases is T*Delta^2/(2 sigma^2) (Bun & Steinke 2016, 1.6)") {
  CHECK(zcdp_gaussian_rho(2, 1, 10) == doctest::Approx(1.25).epsilon(kClosedForm));
  CHECK(zcdp_gaussian_rho(2, 1, 10) >= 1.25);
  CHECK(zcdp_gaussian_rho(0.5, 3, 1) >= 18);
  CHECK(close_rel(zcdp_gaussian_rho(0.5, 3, 1), 18, kClosedForm));
  // σ = 1.1, Δ = 1, T = 1000: 1000/2.42.
  CHECK(close_rel(zcdp_gaussian_rho(1.1, 1, 1000), 1000 / 2.42, kClosedForm));
  CHECK(zcdp_gaussian_rho(1.1, 1, 1000) >= 1000 / 2.42);
  CHECK_THROWS_AS(zcdp_gaussian_rho(0, 1, 1), InvalidParameter);
  CHECK_THROWS_AS(zcdp_gaussian_rho(1, -1, 1), InvalidParameter);
  CHECK_THROWS_AS(zcdp_gaussian_rho(1, 1, 0), InvalidParameter);
}

TEST_CASE("zcdp: an epsilon-DP mechanism is epsilon^2/2-zCDP (Bun & Steinke 2016, Prop. 1.4)") {
  CHECK(zcdp_pure_dp_rho(1, 4) == 2);
  CHECK(zcdp_pure_dp_rho(0, 3) == 0);
  CHECK(close_rel(zcdp_pure_dp_rho(0.3, 1), 0.045, kClosedForm));
  CHECK(zcdp_pure_dp_rho(0.3, 1) >= 0.045);
  CHECK_THROWS_AS(zcdp_pure_dp_rho(-1, 1), InvalidParameter);
  CHECK(zcdp_compose(0.25, 3) == 0.75);
}

TEST_CASE("zcdp: the simple conversion is rho + 2 sqrt(rho log(1/delta)) (Prop. 1.3)") {
  // The example: ρ = 0.5, δ = 1e-5 gives ≈ 5.2985.
  const long double want = 0.5L + 2 * std::sqrt(0.5L * std::log(1e5L));
  const double got = zcdp_epsilon(0.5, 1e-5, ZcdpConversion::simple).epsilon;
  CHECK(got >= static_cast<double>(want) * (1 - kBelowInfimum));
  CHECK(close_rel(got, static_cast<double>(want), kClosedForm));
  CHECK(got == doctest::Approx(5.2985).epsilon(1e-4));
  // Inverted: δ = exp(−(ε − ρ)²/(4ρ)) above ε = ρ, nothing (δ = 1) below.
  const double d = zcdp_delta(0.5, 3, ZcdpConversion::simple).delta;
  CHECK(close_rel(d, std::exp(-6.25 / 2), kClosedForm));
  CHECK(d >= std::exp(-6.25 / 2) * (1 - kBelowInfimum));
  CHECK(zcdp_delta(0.5, 0.4, ZcdpConversion::simple).delta == 1);
}

TEST_CASE("zcdp: the CKS conversion is the infimum of Prop. 12 over every order") {
  for (double rho : {1e-3, 0.01, 0.5, 2.0, 50.0})
    for (double delta : {1e-2, 1e-5, 1e-10}) {
      INFO("rho=", rho, " delta=", delta);
      const ZcdpEpsilon e = zcdp_epsilon(rho, delta, ZcdpConversion::cks);
      const double truth = std::max(0.0, cks_epsilon(rho, delta));
      CHECK_FALSE(e.kl_shortcut);
      CHECK(e.epsilon >= truth * (1 - kBelowInfimum));
      CHECK(e.epsilon <= truth * (1 + kAboveInfimum));
      CHECK(e.order > 1);
      // Tighter than Prop. 1.3, which it improves on.
      CHECK(e.epsilon < zcdp_epsilon(rho, delta, ZcdpConversion::simple).epsilon);
      // Every ρ-zCDP mechanism obeys it, the Gaussian at σ = 1/√(2ρ) too: its
      // exact ε (Balle & Wang 2018) is a floor.
      CHECK(e.epsilon >= dpb::test::analytic_gaussian_epsilon(1 / std::sqrt(2 * rho), delta));
    }
  for (double rho : {0.01, 0.5, 2.0})
    for (double eps : {0.5, 1.0, 4.0}) {
      INFO("rho=", rho, " eps=", eps);
      const double d = zcdp_delta(rho, eps, ZcdpConversion::cks).delta;
      const double truth = std::min(1.0, cks_delta(rho, eps));
      CHECK(d >= truth * (1 - kBelowInfimum));
      CHECK(d <= truth * (1 + kAboveInfimum) + std::numeric_limits<double>::min());
      CHECK(d >= dpb::test::analytic_gaussian_delta(1 / std::sqrt(2 * rho), eps));
    }
}

TEST_CASE("zcdp: a tiny rho is (0, delta)-DP by the KL shortcut (Bretagnolle-Huber)") {
  // TV ≤ √(1 − e^{−KL}) ≤ √ρ = 10⁻⁶ < δ = 10⁻⁵.
  const ZcdpEpsilon e = zcdp_epsilon(1e-12, 1e-5, ZcdpConversion::cks);
  CHECK(e.epsilon == 0);
  CHECK(e.kl_shortcut);
  CHECK(zcdp_epsilon(0, 1e-5, ZcdpConversion::cks).epsilon == 0);
  CHECK(zcdp_delta(0, 0, ZcdpConversion::cks).delta == 0);
}

TEST_CASE("zcdp: the largest rho whose conversion meets (epsilon, delta), round trips") {
  for (auto conversion : {ZcdpConversion::cks, ZcdpConversion::simple})
    for (double eps : {0.1, 1.0, 3.0, 8.0})
      for (double delta : {1e-3, 1e-5, 1e-9}) {
        INFO("eps=", eps, " delta=", delta, " cks=", conversion == ZcdpConversion::cks);
        const double rho = zcdp_rho_for(eps, delta, conversion);
        CHECK(rho > 0);
        CHECK(zcdp_epsilon(rho, delta, conversion).epsilon <= eps);
        CHECK(zcdp_epsilon(rho * (1 + 1e-9), delta, conversion).epsilon > eps);
        if (conversion == ZcdpConversion::simple) {
          // Prop. 1.3 solved for ρ: √ρ = √(L + ε) − √L, L = log(1/δ).
          const long double l = -std::log(static_cast<long double>(delta));
          const long double root = std::sqrt(l + eps) - std::sqrt(l);
          CHECK(close_rel(rho, static_cast<double>(root * root), 1e-10));
        } else {
          // The CKS ρ is the larger: the tighter conversion admits more.
          CHECK(rho > zcdp_rho_for(eps, delta, ZcdpConversion::simple));
          CHECK(cks_epsilon(rho, delta) <= eps * (1 + kBelowInfimum));
        }
      }
  // ε = 0: at least what the KL shortcut allows, ρ = −log(1 − δ²) ≈ δ²
  // (total variation ≤ √(1 − e^{−ρ}) ≤ δ), and more where Prop. 12 itself
  // reaches ε ≤ 0, which the brute force confirms.
  const double rho0 = zcdp_rho_for(0, 1e-3, ZcdpConversion::cks);
  CHECK(rho0 >= -std::log1p(-1e-6) * (1 - 1e-9));
  CHECK((cks_epsilon(rho0, 1e-3) <= 1e-15 || 1e-6 + std::expm1(-rho0) >= 0));
  CHECK(zcdp_epsilon(rho0 * (1 + 1e-9), 1e-3, ZcdpConversion::cks).epsilon > 0);
  CHECK_THROWS_AS(zcdp_rho_for(1, 0, ZcdpConversion::cks), InvalidParameter);
  CHECK_THROWS_AS(zcdp_rho_for(-1, 1e-5, ZcdpConversion::cks), InvalidParameter);
}
