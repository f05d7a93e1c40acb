// Issue 24, item 6: every closed form computed in doubles and printed as an
// upper bound is at least the exact value, and every lower value at most it,
// and each is within a small relative distance of it. The exact values are
// computed here independently in 50-digit binary floating point
// (boost::multiprecision::cpp_bin_float_50) from the formulas of the papers,
// at the same double inputs the library was given.
#include <doctest/doctest.h>

#include <boost/math/special_functions/beta.hpp>
#include <boost/math/special_functions/binomial.hpp>
#include <boost/multiprecision/cpp_bin_float.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "accounting/composition/amplification.hpp"
#include "accounting/composition/composition.hpp"
#include "accounting/gdp/gdp.hpp"
#include "accounting/gdp/gdp_accountant.hpp"
#include "accounting/mechanisms/gaussian_mechanism.hpp"
#include "accounting/mechanisms/laplace_mechanism.hpp"
#include "accounting/rdp/rdp.hpp"
#include "accounting/risk/audit.hpp"
#include "support/gdp_50_digits.hpp"

namespace {

using dpb::test::Mp;
using dpb::test::mp_gdp_delta;
using dpb::test::mp_root;

/// How far above (an upper value) or below (a lower value) the exact value a
/// result may lie, relative. Closed forms of a few roundings (amplification,
/// basic, advanced and optimal composition, the audit's rates): 1e-13.
constexpr double kClose = 1e-13;
/// The audit's Clopper–Pearson quantiles carry a margin of 1e-12 for the
/// errors of Boost's inverse incomplete beta function.
constexpr double kCloseQuantile = 2e-12;
/// A root ε of a profile (gdp, the analytic Gaussian, optimal composition):
/// the profile's rounding bound moved through its slope, 1e-12.
constexpr double kCloseRoot = 1e-12;
/// The GDP profile δ(ε) = Φ(a)(1 − eᵗ): its log has an absolute rounding
/// error of a few u·|log δ| (the logs of Φ), and δ's relative error is that
/// error amplified by up to 1/|t| (≈ 100 on this grid): 1e-11 per unit of |ln δ|.
double gdp_delta_closeness(double delta) { return 1e-11 * (1 + std::abs(std::log(delta))); }
/// The Laplace profile δ(ε) = 1 − e^{(ε − ε₀)/2} ≈ (ε₀ − ε)/2 near ε₀: the
/// double ε₀ = Δ/b is off by half an ulp of ε₀, relative to ε₀ − ε.
double laplace_closeness(double eps, double eps0) {
  return kClose + 8 * 0x1p-53 * eps0 / (eps0 - eps);
}

/// `computed` is at least `exact` and within `rel` of it (relative).
void check_upper(double computed, const Mp& exact, double rel = kClose) {
  CAPTURE(computed);
  CAPTURE(exact.str(25));
  CHECK(Mp(computed) >= exact);
  if (exact > 0) {
    const Mp gap = (Mp(computed) - exact) / exact;
    CAPTURE(gap.str(5));
    CHECK(gap <= Mp(rel));
  } else {
    CHECK(computed <= rel);
  }
}

/// `computed` is at most `exact` and within `rel` of it.
void check_lower(double computed, const Mp& exact, double rel = kClose) {
  CAPTURE(computed);
  CAPTURE(exact.str(25));
  CHECK(Mp(computed) <= exact);
  const Mp gap = (exact - Mp(computed)) / exact;
  CHECK(gap <= Mp(rel));
}

const std::vector<double> kMus = {0.05, 0.3, 0.7, 1, 1.7, 3, 6, 12};
const std::vector<double> kDeltas = {1e-2, 1e-5, 1e-9, 1e-14};
const std::vector<double> kEpsilons = {0.01, 0.3, 1, 4.377178095681223, 9, 30};

}  // namespace

TEST_CASE("outward rounding: gdp epsilon and delta from mu are upper bounds on the exact values") {
  for (double mu : kMus) {
    for (double delta : kDeltas) {
      CAPTURE(mu);
      CAPTURE(delta);
      const Mp exact = mp_root([&](const Mp& e) { return mp_gdp_delta(Mp(mu), e); }, Mp(delta),
                               Mp(mu) * mu / 2 + 10 * mu);
      check_upper(dpb::gdp_epsilon(mu, delta), exact, kCloseRoot);
    }
    for (double eps : kEpsilons) {
      CAPTURE(mu);
      CAPTURE(eps);
      const Mp exact = mp_gdp_delta(Mp(mu), Mp(eps));
      if (exact < Mp(1e-300)) continue;  // below the smallest normal double
      check_upper(dpb::gdp_delta(mu, eps), exact, gdp_delta_closeness(static_cast<double>(exact)));
    }
  }
}

TEST_CASE("outward rounding: the issue's case, mu 1 at delta 1e-5") {
  // 50-digit root of δ(ε) = 1e-5 for μ = 1: 4.37717809568122460..., so the
  // shortest double text of an upper bound is at least 4.3771780956812246.
  const Mp exact = mp_root([](const Mp& e) { return mp_gdp_delta(Mp(1), e); }, Mp(1e-5), Mp(8));
  CHECK(exact > Mp("4.37717809568122459"));
  CHECK(exact < Mp("4.37717809568122461"));
  const double eps = dpb::gdp_epsilon(1, 1e-5);
  check_upper(eps, exact, kCloseRoot);
  CHECK(eps >= 4.3771780956812246);
}

TEST_CASE("outward rounding: the analytic Gaussian's epsilon and delta with a sensitivity") {
  // μ = Δ/σ: the quotient is rounded up (δ increases with μ), then the GDP profile.
  for (double sigma : {0.3, 0.7, 1.1, 3.0, 10.0}) {
    for (double sensitivity : {1.0, 0.3, 3.0}) {
      const Mp mu = Mp(sensitivity) / Mp(sigma);
      for (double delta : kDeltas) {
        CAPTURE(sigma);
        CAPTURE(sensitivity);
        CAPTURE(delta);
        const Mp exact = mp_root([&](const Mp& e) { return mp_gdp_delta(mu, e); }, Mp(delta),
                                 mu * mu / 2 + 10 * mu);
        check_upper(dpb::gaussian_epsilon(sigma, delta, sensitivity), exact, kCloseRoot);
        check_upper(dpb::gaussian_epsilon_checked(sigma, delta, sensitivity), exact, kCloseRoot);
      }
      for (double eps : kEpsilons) {
        const Mp exact = mp_gdp_delta(mu, Mp(eps));
        if (exact < Mp(1e-300)) continue;
        CAPTURE(sigma);
        CAPTURE(eps);
        check_upper(dpb::gaussian_delta(sigma, eps, sensitivity), exact,
                    gdp_delta_closeness(static_cast<double>(exact)));
      }
    }
  }
}

TEST_CASE("outward rounding: the gdp accountant's exact epsilon for Gaussian releases") {
  // k Gaussian releases of noise σ compose to √k/σ-GDP exactly (Dong, Roth &
  // Su 2022, Corollary 3.3).
  for (double sigma : {0.7, 1.0, 3.0}) {
    for (std::int64_t k : {1, 3, 1000}) {
      dpb::GdpAccountant accountant{dpb::AccountantOptions{}};
      accountant.compose(dpb::DpEvent{dpb::GaussianEvent{sigma}}, k);
      const Mp mu = boost::multiprecision::sqrt(Mp(k)) / Mp(sigma);
      CAPTURE(sigma);
      CAPTURE(k);
      check_upper(accountant.mu_upper(), mu);
      const Mp exact = mp_root([&](const Mp& e) { return mp_gdp_delta(mu, e); }, Mp(1e-5),
                               mu * mu / 2 + 10 * mu);
      check_upper(accountant.epsilon(1e-5).epsilon, exact, kCloseRoot);
    }
  }
}

TEST_CASE("outward rounding: amplification by Poisson subsampling") {
  // Li, Qardaji & Su 2012, Theorem 1: (log(1 + q(e^ε − 1)), qδ).
  for (double eps : {1e-6, 0.01, 0.5, 1.0, 3.0, 20.0, 40.0}) {
    for (double q : {1e-4, 0.01, 0.3, 0.99}) {
      const double delta = 1e-6;
      CAPTURE(eps);
      CAPTURE(q);
      const auto r = dpb::amplify_poisson(eps, delta, q);
      check_upper(r.epsilon,
                  boost::multiprecision::log1p(Mp(q) * boost::multiprecision::expm1(Mp(eps))));
      // qδ, a product of the inputs: to nearest, as in basic composition.
      CHECK(abs(Mp(r.delta) - Mp(q) * Mp(delta)) <= Mp(0x1p-53) * Mp(q) * Mp(delta));
    }
  }
  // Without replacement: q = m/N is a quotient that is rounded.
  for (auto [m, n] : {std::pair<std::int64_t, std::int64_t>{1, 3}, {7, 10}, {256, 60000}}) {
    const Mp q = Mp(m) / Mp(n);
    const auto r = dpb::amplify_without_replacement(1.0, 1e-6, m, n);
    check_upper(r.epsilon, boost::multiprecision::log1p(q * boost::multiprecision::expm1(Mp(1))));
    CHECK(abs(Mp(r.delta) - q * Mp(1e-6)) <= Mp(0x1p-52) * q * Mp(1e-6));  // two roundings
  }
}

TEST_CASE("outward rounding: basic and advanced composition") {
  for (double eps : {0.01, 0.1, 0.3, 1.0}) {
    for (std::int64_t k : {1, 3, 10, 1000, 123457}) {
      for (double dp : {1e-9, 1e-5, 0.3, 0.9}) {
        CAPTURE(eps);
        CAPTURE(k);
        CAPTURE(dp);
        const double delta = 1e-9;
        // Basic composition: products of the inputs, to nearest (within half
        // an ulp of the exact product; see compose_basic), the printed decimal
        // at or above the double (report::directed, tests/cli/report_render_test.cpp).
        const auto basic = dpb::compose_basic(eps, delta, k);
        CHECK(abs(Mp(basic.epsilon) - Mp(k) * Mp(eps)) <= Mp(0x1p-53) * Mp(k) * Mp(eps));
        CHECK(abs(Mp(basic.delta) - Mp(k) * Mp(delta)) <= Mp(0x1p-53) * Mp(k) * Mp(delta));
        // Dwork, Rothblum & Vadhan 2010, Theorem III.3.
        const auto adv = dpb::compose_advanced(eps, delta, k, dp);
        const Mp exact = Mp(eps) * boost::multiprecision::sqrt(2 * Mp(k) * -log(Mp(dp))) +
                         Mp(k) * Mp(eps) * boost::multiprecision::expm1(Mp(eps));
        check_upper(adv.epsilon, exact);
        check_upper(adv.delta, Mp(k) * Mp(delta) + Mp(dp));
      }
    }
  }
}

namespace {

/// δ_total(ε') of the k-fold composition of (ε, δ)-DP (Kairouz, Oh &
/// Viswanath 2015, Theorem 3.3), every term of the sum in 50 digits.
Mp mp_optimal_delta(const Mp& eps, const Mp& delta, std::int64_t k, const Mp& eps_total) {
  Mp sum = 0;
  for (std::int64_t l = 0; l <= k; ++l) {
    const Mp term = boost::multiprecision::exp(Mp(k - l) * eps) -
                    boost::multiprecision::exp(eps_total + Mp(l) * eps);
    if (term > 0)
      sum += boost::math::binomial_coefficient<Mp>(static_cast<unsigned>(k),
                                                   static_cast<unsigned>(l)) *
             term;
  }
  const Mp d_opt = sum / boost::multiprecision::pow(1 + boost::multiprecision::exp(eps), k);
  return 1 - boost::multiprecision::pow(1 - delta, k) * (1 - d_opt);
}

}  // namespace

TEST_CASE("outward rounding: optimal composition, delta and epsilon") {
  for (double eps : {0.05, 0.3, 1.0}) {
    for (std::int64_t k : {1, 5, 40, 200}) {
      const double delta = 1e-8;
      CAPTURE(eps);
      CAPTURE(k);
      for (double e_total : {0.0, 0.5, 2.0}) {
        if (e_total >= static_cast<double>(k) * eps) continue;
        CAPTURE(e_total);
        check_upper(dpb::optimal_delta(eps, delta, k, e_total),
                    mp_optimal_delta(Mp(eps), Mp(delta), k, Mp(e_total)));
      }
      for (double target : {1e-3, 1e-5}) {
        CAPTURE(target);
        const Mp exact =
            mp_root([&](const Mp& e) { return mp_optimal_delta(Mp(eps), Mp(delta), k, e); },
                    Mp(target), Mp(static_cast<double>(k) * eps));
        check_upper(dpb::optimal_epsilon(eps, delta, k, target), exact, kCloseRoot);
      }
    }
  }
}

TEST_CASE("outward rounding: the Laplace mechanism's profile, its inverse and pure epsilon") {
  // δ(ε) = max(0, 1 − e^{(ε − ε₀)/2}), ε₀ = Δ/b; ε(δ) = max(0, ε₀ + 2 log(1 − δ)).
  for (double b : {0.3, 1.0, 3.0, 7.0}) {
    for (double sensitivity : {1.0, 0.1, 3.0}) {
      const Mp eps0 = Mp(sensitivity) / Mp(b);
      CAPTURE(b);
      CAPTURE(sensitivity);
      check_upper(dpb::laplace_pure_epsilon(b, sensitivity), eps0);
      for (double delta : {1e-12, 1e-5, 0.01, 0.2}) {
        const Mp exact = eps0 + 2 * boost::multiprecision::log1p(-Mp(delta));
        if (exact <= 0) continue;
        CAPTURE(delta);
        check_upper(dpb::laplace_epsilon(b, delta, sensitivity), exact);
      }
      for (double frac : {0.0, 0.5, 0.9, 0.999999}) {
        const double eps = frac * sensitivity / b;
        CAPTURE(eps);
        const Mp exact = -boost::multiprecision::expm1((Mp(eps) - eps0) / 2);
        if (exact <= 0) continue;
        check_upper(dpb::laplace_delta(b, eps, sensitivity), exact,
                    laplace_closeness(eps, sensitivity / b));
      }
    }
  }
}

TEST_CASE("outward rounding: RDP to (epsilon, delta), both conversions, of a Gaussian curve") {
  // ρ(α) = Tα/(2σ²) at each order; the conversions of docs/rdp.md#conversion in 50 digits,
  // minimised over the same orders.
  const std::vector<double> orders = {1.5, 2, 3, 5, 8, 16, 32, 64, 256};
  for (double sigma : {0.8, 2.0, 10.0}) {
    for (double steps : {1.0, 100.0}) {
      std::vector<double> rdp;
      for (double a : orders) rdp.push_back(dpb::rdp_gaussian(sigma, a) * steps);
      for (double delta : {1e-5, 1e-10}) {
        for (auto conversion : {dpb::RdpConversion::classic, dpb::RdpConversion::improved}) {
          Mp best = -1;
          for (double a : orders) {
            const Mp A(a);
            const Mp rho = Mp(steps) * A / (2 * Mp(sigma) * Mp(sigma));
            const Mp e = conversion == dpb::RdpConversion::classic
                             ? rho - log(Mp(delta)) / (A - 1)
                             : rho + log((A - 1) / A) - (log(Mp(delta)) + log(A)) / (A - 1);
            if (best < 0 || e < best) best = e;
          }
          if (best < 0) best = 0;
          CAPTURE(sigma);
          CAPTURE(steps);
          CAPTURE(delta);
          const auto r = dpb::epsilon_from_rdp(orders, rdp, delta, conversion);
          if (r.kl_shortcut) continue;
          check_upper(r.epsilon, best, kCloseRoot);
        }
      }
    }
  }
}

TEST_CASE("outward rounding: the audit's rate bounds are upper bounds, its epsilon a lower bound") {
  // One-sided Clopper–Pearson (Clopper & Pearson 1934): the (1 − α) quantile
  // of Beta(k + 1, n − k), here in 50 digits; ε_lower = max(log((1 − δ −
  // FPR_u)/FNR_u), log((1 − δ − FNR_u)/FPR_u), 0) (Kairouz, Oh & Viswanath
  // 2015, Theorem 2.1) from the printed rate bounds.
  const dpb::AttackCounts cases[] = {
      {600, 400, 100, 900}, {150, 50, 20, 180}, {999, 1, 0, 1000}, {5, 5, 5, 5}, {1000, 0, 1, 999}};
  for (const auto& c : cases) {
    for (double delta : {0.0, 1e-5}) {
      const auto b = dpb::audit_epsilon_lower(c, 0.95, delta);
      const Mp alpha = (1 - Mp(0.95)) / 2;
      const std::int64_t members = c.tp + c.fn, others = c.fp + c.tn;
      CAPTURE(c.tp);
      CAPTURE(c.fp);
      CAPTURE(delta);
      auto quantile = [&](std::int64_t k, std::int64_t n) {
        return k == n ? Mp(1) : boost::math::ibeta_inv(Mp(k + 1), Mp(n - k), 1 - alpha);
      };
      const Mp fpr_u = quantile(c.fp, others), fnr_u = quantile(c.fn, members);
      check_upper(b.fpr_upper, fpr_u, kCloseQuantile);
      check_upper(b.fnr_upper, fnr_u, kCloseQuantile);
      Mp e = 0;
      const Mp d(delta), f(b.fpr_upper), g(b.fnr_upper);
      if (1 - d - f > 0) e = std::max(e, Mp(log((1 - d - f) / g)));
      if (1 - d - g > 0) e = std::max(e, Mp(log((1 - d - g) / f)));
      if (e > 0)
        check_lower(b.epsilon_lower, e);
      else
        CHECK(b.epsilon_lower == 0);
    }
  }
}
