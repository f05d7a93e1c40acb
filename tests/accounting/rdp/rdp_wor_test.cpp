// Tests of the RDP bound for sampling without replacement (replace-one),
// src/accounting/rdp/rdp_without_replacement.cpp, docs/rdp.md#without-replacement: closed forms of
// the [WBK19] bound at α = 2 and 3, values of an independent 400-digit evaluation of the same
// formula, the bound against the exact Rényi divergence of small subsampled mechanisms (numerical
// integration), monotonicity, the relation to the Poisson add/remove RDP, extreme inputs, and the
// accountant wiring.
#include <doctest/doctest.h>

#include <algorithm>
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "accounting/errors.hpp"
#include "accounting/events/events.hpp"
#include "accounting/rdp/rdp.hpp"
#include "accounting/rdp/rdp_accountant.hpp"
#include "accounting/rdp/rdp_without_replacement.hpp"
#include "support/close.hpp"
#include "support/limits.hpp"

namespace {

using dpb::rdp_sampled_without_replacement_gaussian;
using dpb::test::close_rel;

using dpb::test::kInf;

/// Sensitivity convention (header): σ is relative to the clipping norm, the
/// replace-one sensitivity is 2, so the unsampled Gaussian has ρ(α) = 2α/σ².
double replace_one_gaussian(double sigma, double alpha) { return 2 * alpha / (sigma * sigma); }

// ---------------------------------------------------------------------------
// Exact Rényi divergence of a small subsampled mechanism. Records are reals in
// [−1, 1] (clipping norm 1); a batch of m of the N records is drawn uniformly
// without replacement and the mechanism releases (sum of the batch) + N(0, σ²).
// Neighbours differ in the last record. The output density is the mixture over
// all C(N, m) batches, so D_α(P‖Q) = log ∫ p^α q^{1−α} / (α − 1) is a 1-D
// integral, done by adaptive Gauss–Kronrod in long double on the log-scaled
// integrand.
// ---------------------------------------------------------------------------
struct Mixture {
  std::vector<long double> means;  // one per batch, equal weights
};

Mixture batch_sums(const std::vector<double>& records, int m) {
  Mixture mix;
  const int n = static_cast<int>(records.size());
  std::vector<int> pick(static_cast<std::size_t>(n), 0);
  std::fill(pick.end() - m, pick.end(), 1);
  do {
    long double s = 0;
    for (int i = 0; i < n; ++i)
      if (pick[static_cast<std::size_t>(i)]) s += records[static_cast<std::size_t>(i)];
    mix.means.push_back(s);
  } while (std::next_permutation(pick.begin(), pick.end()));
  return mix;
}

/// log of the mixture density, up to the common factor 1/(σ√(2π)).
long double log_density(const Mixture& mix, long double sigma, long double z) {
  long double best = -INFINITY;
  for (long double mu : mix.means)
    best = std::max(best, -(z - mu) * (z - mu) / (2 * sigma * sigma));
  long double s = 0;
  for (long double mu : mix.means) s += std::exp(-(z - mu) * (z - mu) / (2 * sigma * sigma) - best);
  return best + std::log(s / static_cast<long double>(mix.means.size()));
}

double exact_renyi(const Mixture& p, const Mixture& q, double sigma, int alpha) {
  const long double s = sigma, a = alpha;
  const long double c = 1 / (s * std::sqrt(2 * 3.14159265358979323846264338327950288L));
  auto log_f = [&](long double z) {
    return a * log_density(p, s, z) + (1 - a) * log_density(q, s, z) + std::log(c);
  };
  // p^α q^{1−α} of two Gaussians is a Gaussian of width σ centred within
  // α·(spread of the means) of them; 40σ beyond that it is below e^{−800}.
  long double lo = 0, hi = 0;
  for (const auto* mix : {&p, &q})
    for (long double mu : mix->means) lo = std::min(lo, mu), hi = std::max(hi, mu);
  const long double spread = (hi - lo) * a + 2;
  lo -= spread + 40 * s;
  hi += spread + 40 * s;
  long double peak = -INFINITY;
  for (int i = 0; i <= 400; ++i) peak = std::max(peak, log_f(lo + (hi - lo) * i / 400));
  auto f = [&](long double z) { return std::exp(log_f(z) - peak); };
  const long double integral =
      boost::math::quadrature::gauss_kronrod<long double, 61>::integrate(f, lo, hi, 25, 1e-15L);
  return static_cast<double>((peak + std::log(integral)) / (a - 1));
}

}  // namespace

TEST_CASE("wor: ratio 1 is the replace-one Gaussian 2*alpha/sigma^2, ratio 0 is 0") {
  for (double sigma : {0.3, 1.0, 2.5, 40.0})
    for (double alpha : {1.01, 1.5, 2.0, 10.0, 64.5, 1024.0, 1e7}) {
      INFO("sigma=" << sigma << " alpha=" << alpha);
      CHECK(close_rel(rdp_sampled_without_replacement_gaussian(1.0, sigma, alpha),
                      replace_one_gaussian(sigma, alpha), 1e-14));
      CHECK(rdp_sampled_without_replacement_gaussian(0.0, sigma, alpha) == 0.0);
    }
  // The convention itself: the exact divergence of the unsampled mechanism
  // (m = N) between the records +1 and −1 is 2α/σ².
  for (double sigma : {0.8, 2.0})
    for (int alpha : {2, 5}) {
      const Mixture p = batch_sums({0.3, -0.7, 1.0}, 3), q = batch_sums({0.3, -0.7, -1.0}, 3);
      CHECK(close_rel(exact_renyi(p, q, sigma, alpha), replace_one_gaussian(sigma, alpha), 1e-9));
    }
  CHECK(rdp_sampled_without_replacement_gaussian(0.5, 1.0, kInf) == kInf);
  CHECK_THROWS_AS(rdp_sampled_without_replacement_gaussian(1.5, 1.0, 2.0), dpb::InvalidParameter);
  CHECK_THROWS_AS(rdp_sampled_without_replacement_gaussian(0.5, 0.0, 2.0), dpb::InvalidParameter);
  CHECK_THROWS_AS(rdp_sampled_without_replacement_gaussian(0.5, 1.0, 1.0), dpb::InvalidParameter);
}

TEST_CASE("wor: closed forms of the WBK19 bound at alpha = 2 and 3") {
  // With a = 2/σ² (ε(α) = aα), only j = 2 (and j = 3) enter:
  //   A_2 ≤ 1 + γ²·min{4(e^{2a} − 1), 2e^{2a}},
  //   A_3 ≤ 1 + 3γ²·min{4(e^{2a} − 1), 2e^{2a}} + γ³·min{4√(ζ_2 ζ_4), 2e^{6a}},
  //   ζ_2 = e^{2a} − 1,  ζ_4 = e^{12a} − 4e^{6a} + 6e^{2a} − 3.
  for (double sigma : {0.9, 1.3, 2.0, 4.0})
    for (double g : {1e-4, 0.01, 0.3, 0.9}) {
      const long double a = 2.0L / (sigma * sigma);
      const long double z2 = std::expm1(2 * a);
      const long double z4 = std::exp(12 * a) - 4 * std::exp(6 * a) + 6 * std::exp(2 * a) - 3;
      const long double t2 = std::min(4 * z2, 2 * std::exp(2 * a));
      const long double t3 = std::min(4 * std::sqrt(z2 * z4), 2 * std::exp(6 * a));
      const double rho2 = static_cast<double>(std::log1p((long double)g * g * t2));
      const double rho3 = static_cast<double>(
          std::log1p(3 * (long double)g * g * t2 + (long double)g * g * g * t3) / 2);
      INFO("sigma=" << sigma << " gamma=" << g);
      CHECK(close_rel(rdp_sampled_without_replacement_gaussian(g, sigma, 2.0),
                      std::min(rho2, replace_one_gaussian(sigma, 2)), 1e-12));
      CHECK(close_rel(rdp_sampled_without_replacement_gaussian(g, sigma, 3.0),
                      std::min(rho3, replace_one_gaussian(sigma, 3)), 1e-12));
      // Fractional orders between 2 and 3 interpolate log A (WBK19 Cor. 10).
      const double t = 0.25;
      const double interp = ((1 - t) * rho2 + t * 2 * rho3) / (1 + t);
      CHECK(close_rel(rdp_sampled_without_replacement_gaussian(g, sigma, 2.25),
                      std::min(interp, replace_one_gaussian(sigma, 2.25)), 1e-12));
    }
}

TEST_CASE("wor: values of an independent 400-digit evaluation of the bound") {
  // The WBK19 bound with ζ_j summed exactly in 400-digit mpmath arithmetic
  // (a throwaway script, not this code), capped by 2α/σ².
  struct Case {
    double gamma, sigma, alpha, rho;
  };
  const Case cases[] = {
      {0.01, 1, 17, 29.15032837617265},        {0.01, 2, 32, 11.26863552351778},
      {0.1, 0.7, 10, 38.334915002903299},      {0.001, 5, 64, 2.267933521371982e-5},
      {0.01, 10, 128, 0.0011504888519205853},  {0.05, 30, 64, 0.0015376401144742424},
      {0.01, 100, 256, 2.1042525473337825e-5}, {0.2, 3, 100, 20.603528847849999},
      {0.5, 1.5, 20, 17.084630597217837},      {1e-6, 1e4, 40, 3.2000000780411612e-18},
  };
  for (const Case& c : cases) {
    const double got = rdp_sampled_without_replacement_gaussian(c.gamma, c.sigma, c.alpha);
    INFO("gamma=" << c.gamma << " sigma=" << c.sigma << " alpha=" << c.alpha << " got " << got);
    CHECK(close_rel(got, c.rho, 1e-11));
    CHECK(got >= c.rho * (1 - 1e-15));  // rounded up, never below
  }
}

TEST_CASE("wor: the bound is above the exact RDP of small subsampled mechanisms") {
  // Datasets of N = 3..6 records, batches of m = 1..N−1, the last record +1
  // versus −1 (or 0.4 versus −0.9), the others from a few patterns; both
  // directions of the divergence.
  const std::vector<std::vector<double>> others_patterns = {
      {0, 0, 0, 0, 0}, {1, 1, 1, 1, 1}, {1, -1, 0.5, -0.25, 1}, {-1, -1, 0.3, 0.9, -0.6}};
  const std::pair<double, double> differing[] = {{1.0, -1.0}, {0.4, -0.9}};
  int checked = 0;
  for (int n = 3; n <= 6; ++n)
    for (int m = 1; m < n; ++m)
      for (const auto& others : others_patterns)
        for (auto [x, x2] : differing)
          for (double sigma : {0.7, 1.5, 4.0})
            for (int alpha : {2, 3, 5, 8}) {
              if ((n + m + alpha + static_cast<int>(x2 * 10)) % 4 != 0) continue;  // thin the grid
              std::vector<double> d(others.begin(), others.begin() + (n - 1)), d2 = d;
              d.push_back(x);
              d2.push_back(x2);
              const Mixture p = batch_sums(d, m), q = batch_sums(d2, m);
              const double exact =
                  std::max(exact_renyi(p, q, sigma, alpha), exact_renyi(q, p, sigma, alpha));
              const double ratio = static_cast<double>(m) / n;
              const double bound =
                  rdp_sampled_without_replacement_gaussian(ratio, sigma, double(alpha));
              INFO("N=" << n << " m=" << m << " sigma=" << sigma << " alpha=" << alpha
                        << " exact=" << exact << " bound=" << bound);
              CHECK(std::isfinite(exact));
              CHECK(bound >= exact - 1e-12);
              ++checked;
            }
  CHECK(checked > 100);
}

TEST_CASE("wor: monotone in sigma, ratio and order") {
  const std::vector<double> orders = dpb::default_rdp_orders();
  const double sigmas[] = {0.2, 0.5, 0.8, 1, 1.5, 2, 3, 5, 8, 13, 30, 100, 1e3};
  const double ratios[] = {1e-6, 1e-4, 1e-3, 0.01, 0.03, 0.1, 0.3, 0.6, 0.9, 0.999, 1};
  for (double g : ratios) {
    std::vector<double> prev;
    for (double sigma : sigmas) {
      const auto cur = rdp_sampled_without_replacement_gaussian(g, sigma, orders);
      for (std::size_t i = 0; i < orders.size(); ++i) {
        INFO("gamma=" << g << " sigma=" << sigma << " alpha=" << orders[i]);
        if (i > 0) CHECK(cur[i] >= cur[i - 1]);       // non-decreasing in α
        if (!prev.empty()) CHECK(cur[i] <= prev[i]);  // non-increasing in σ
      }
      prev = cur;
    }
  }
  for (double sigma : sigmas) {
    std::vector<double> prev;
    for (double g : ratios) {
      const auto cur = rdp_sampled_without_replacement_gaussian(g, sigma, orders);
      for (std::size_t i = 0; i < orders.size(); ++i) {
        INFO("gamma=" << g << " sigma=" << sigma << " alpha=" << orders[i]);
        if (!prev.empty()) CHECK(cur[i] >= prev[i]);  // non-decreasing in the ratio
      }
      prev = cur;
    }
  }
}

TEST_CASE("wor: relation to the Poisson add/remove RDP at q = ratio") {
  // Lower side (a theorem for this bound): expanding A = E[(1 + q(r − 1))^α]
  // of the Poisson mechanism (sensitivity 1) gives the terms
  // C(α,j) q^j E[(r − 1)^j], and each is below the bound's term:
  // E|r − 1|^j ≤ ζ̄_j(1/(2σ²)) ≤ ζ̄_j(2/σ²) (ζ_j is a series in a with
  // non-negative coefficients) and E|r − 1|^j ≤ E[r^j] + 1 ≤ 2e^{(j−1)ε(j)}.
  // So ρ_wor ≥ ρ_poisson at integer orders, and by log-convexity of the
  // Poisson A_α also at fractional ones.
  //
  // Upper side (asymptotic, not a bound): as γ → 0 only j = 2 survives, so
  // ρ_wor/ρ_poisson → min{4(e^{4/σ²} − 1), 2e^{4/σ²}} / (e^{1/σ²} − 1),
  // e.g. → 16 for large σ (4 from the replace-one sensitivity 2, 4 from WBK19).
  const std::vector<double> orders = dpb::default_rdp_orders();
  for (double sigma : {0.6, 1.0, 2.0, 5.0, 20.0})
    for (double g : {1e-6, 1e-3, 0.01, 0.1, 0.5, 0.9}) {
      const auto wor = rdp_sampled_without_replacement_gaussian(g, sigma, orders);
      const auto poisson = dpb::rdp_poisson_gaussian(g, sigma, orders);
      for (std::size_t i = 0; i < orders.size(); ++i) {
        INFO("sigma=" << sigma << " gamma=" << g << " alpha=" << orders[i]);
        CHECK(wor[i] >= poisson[i] * (1 - 1e-9));
      }
    }
  for (double sigma : {2.0, 5.0, 50.0}) {  // small σ: the j > 2 terms need far smaller γ
    const double s2 = sigma * sigma;
    const double limit =
        std::min(4 * std::expm1(4 / s2), 2 * std::exp(4 / s2)) / std::expm1(1 / s2);
    for (double alpha : {2.0, 3.0, 8.0, 20.0}) {
      const double g = 1e-7;
      const double ratio = rdp_sampled_without_replacement_gaussian(g, sigma, alpha) /
                           dpb::rdp_poisson_gaussian(g, sigma, alpha);
      INFO("sigma=" << sigma << " alpha=" << alpha << " ratio=" << ratio << " limit=" << limit);
      CHECK(close_rel(ratio, limit, 1e-4));
    }
  }
}

TEST_CASE("wor: no NaN and bounded time over extreme inputs") {
  std::vector<double> orders = dpb::default_rdp_orders();
  for (double a : {1.0001, 2048.0, 4096.5, 1e4, 1e6 + 0.5, 1e9}) orders.push_back(a);
  const auto start = std::chrono::steady_clock::now();
  for (double g : {1e-9, 1e-6, 1e-3, 0.1, 0.5, 0.999999, 1.0})
    for (double sigma : {1e-3, 0.05, 0.3, 1.0, 7.0, 1e2, 1e3, 1e4}) {
      const auto rho = rdp_sampled_without_replacement_gaussian(g, sigma, orders);
      for (std::size_t i = 0; i < orders.size(); ++i) {
        INFO("gamma=" << g << " sigma=" << sigma << " alpha=" << orders[i]);
        CHECK(!std::isnan(rho[i]));
        CHECK(rho[i] >= 0);
        CHECK(rho[i] <= replace_one_gaussian(sigma, orders[i]) * (1 + 1e-15));
      }
    }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 20);
}

TEST_CASE("wor: RdpAccountant composes sampled_without_replacement under replace-one") {
  dpb::AccountantOptions opts;
  const double sigma = 1.2;
  const auto step = dpb::make_sampled_without_replacement(60000, 600, dpb::make_gaussian(sigma));
  {
    dpb::RdpAccountant acc(opts);
    REQUIRE(acc.supports(*step));
    acc.compose(*step, 1000);
    const auto expected = rdp_sampled_without_replacement_gaussian(0.01, sigma, acc.orders());
    for (std::size_t i = 0; i < expected.size(); ++i)
      CHECK(close_rel(acc.curve()[i], 1000 * expected[i], 1e-14));
    const dpb::Guarantee g = acc.epsilon(1e-5);
    CHECK(g.neighbouring == dpb::Neighbouring::replace_one);
    CHECK(std::isfinite(g.epsilon));
    CHECK(g.epsilon > 0);
    // A plain Gaussian release composed with it is read under replace-one too:
    // sensitivity 2, ρ = 2α/σ².
    dpb::RdpAccountant both(opts);
    both.compose(*dpb::make_gaussian(3.0));
    both.compose(*step, 1000);
    for (std::size_t i = 0; i < expected.size(); ++i)
      CHECK(close_rel(both.curve()[i],
                      1000 * expected[i] + replace_one_gaussian(3.0, acc.orders()[i]), 1e-12));
    CHECK(both.epsilon(1e-5).neighbouring == dpb::Neighbouring::replace_one);
  }
  {
    // Mixing the relations is refused, in one event or across compose calls.
    const auto poisson = dpb::make_poisson_sampled(0.01, dpb::make_gaussian(sigma));
    dpb::RdpAccountant acc(opts);
    const auto mixed = dpb::make_composed({poisson, step});
    const auto why = acc.unsupported_reason(*mixed);
    REQUIRE(why.has_value());
    CHECK(why->find("replace-one") != std::string::npos);
    CHECK(why->find("add/remove") != std::string::npos);
    CHECK_THROWS_AS(acc.compose(*mixed), dpb::UnsupportedEvent);
    acc.compose(*poisson, 10);
    CHECK_FALSE(acc.supports(*step));
    CHECK_THROWS_AS(acc.compose(*step), dpb::UnsupportedEvent);
    CHECK(acc.epsilon(1e-5).neighbouring == dpb::Neighbouring::add_remove);
    dpb::RdpAccountant other(opts);
    other.compose(*step);
    CHECK_FALSE(other.supports(*poisson));
    CHECK(other.supports(*dpb::make_gaussian(2.0)));
  }
  {
    // Without a sampled event the plain Gaussian stays add/remove, α/(2σ²).
    dpb::RdpAccountant acc(opts);
    acc.compose(*dpb::make_gaussian(2.0));
    CHECK(close_rel(acc.curve()[0], acc.orders()[0] / 8, 1e-15));
    CHECK(acc.epsilon(1e-5).neighbouring == dpb::Neighbouring::add_remove);
    // A Laplace event inside a WOR event is not supported.
    CHECK_FALSE(
        acc.supports(*dpb::make_sampled_without_replacement(10, 2, dpb::make_laplace(1.0))));
  }
}
