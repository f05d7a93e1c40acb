// Coarse tails (docs/pld.md#coarse-tails): outside a fine part, a release's
// points are `stride` grid steps apart. Checked here against truths computed
// independently of the library: one release's discrete profile against the
// closed form of the Poisson-subsampled Gaussian (it must dominate it, and
// dominate the fine grid's), the T-fold Gaussian (closed form) inside the
// composed bounds, the bound K on the releases in coarse buckets recomputed
// from its definition, and a long subsampled run whose coarse and fine
// intervals must meet.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "accounting/pld/pld.hpp"
#include "support/analytic_gaussian.hpp"

namespace coarse_tails {

using dpb::pld::Coarsening;
using dpb::pld::Component;
using dpb::pld::Direction;
using dpb::pld::DiscreteLoss;
using dpb::pld::Mechanism;
using Kind = dpb::pld::Mechanism::Kind;

/// Tail mass cut off at each end of a release, and the window's tail: far
/// below every δ compared here.
constexpr double kTailMass = 1e-20;
constexpr double kWindowTail = 1e-16;
/// Profiles of one release are sums of up to ~10^5 terms of size ≤ 1: they
/// are compared within this, absolutely.
constexpr double kSumSlack = 1e-13;

/// δ(ε) of one Poisson-subsampled Gaussian (noise σ, sampling q) in one
/// direction, in closed form: the loss L(z) = log(1 − q + q·e^{(2z−1)/(2σ²)})
/// is increasing in z, so each event {L > ε} is a half-line.
double closed_form_delta(double q, double sigma, double eps, Direction d) {
  auto sf = [](double x) { return 0.5 * std::erfc(x / std::sqrt(2.0)); };
  auto cdf = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
  if (d == Direction::remove) {
    // P = (1 − q)N(0, σ²) + qN(1, σ²), Q = N(0, σ²), δ = P(L > ε) − e^ε Q(L > ε).
    const double c = std::log((std::exp(eps) - (1 - q)) / q);
    const double z = sigma * sigma * c + 0.5;
    return std::max(
        0.0, (1 - q) * sf(z / sigma) + q * sf((z - 1) / sigma) - std::exp(eps) * sf(z / sigma));
  }
  // add: X = −L(z), P = N(0, σ²), Q = the mixture; δ = P(L < −ε) − e^ε Q(L < −ε).
  const double inner = std::exp(-eps) - (1 - q);
  if (!(inner > 0)) return 0.0;
  const double z = sigma * sigma * std::log(inner / q) + 0.5;
  return std::max(
      0.0, cdf(z / sigma) - std::exp(eps) * ((1 - q) * cdf(z / sigma) + q * cdf((z - 1) / sigma)));
}

/// The discrete release's own profile: Σ_i m_i (1 − e^{ε − l_i})₊ plus its
/// mass at +∞.
double discrete_delta(const DiscreteLoss& x, double eps) {
  double sum = x.dropped_mass;
  for (std::size_t i = 0; i < x.mass.size(); ++i) {
    const double l = static_cast<double>(x.first_index + static_cast<std::int64_t>(i)) * x.interval;
    if (l > eps) sum += x.mass[i] * -std::expm1(eps - l);
  }
  return sum;
}

}  // namespace coarse_tails

TEST_CASE("coarse tails: one release dominates the true pair and the fine grid's release") {
  using namespace coarse_tails;
  const Coarsening coarse{64, 1.0 / 16 / 4096};
  for (const double q : {1e-3, 1e-2, 0.1})
    for (const double sigma : {0.7, 1.0, 2.0})
      for (const Direction d : {Direction::remove, Direction::add}) {
        const Mechanism m(Kind::gaussian, sigma, q);
        const double grid = 1e-4;
        const DiscreteLoss wide = dpb::pld::discretise(m, d, grid, kTailMass, coarse);
        const DiscreteLoss fine = dpb::pld::discretise(m, d, grid, kTailMass);
        INFO("q ", q, ", sigma ", sigma, ", direction ",
             std::string(d == Direction::remove ? "remove" : "add"));
        REQUIRE(wide.stride == 64);
        CHECK(fine.stride == 1);
        // Mass only on the coarse points outside the fine part.
        const std::size_t n = wide.mass.size();
        for (std::size_t i = 0; i < n; ++i) {
          if (i >= wide.fine_begin && i < wide.fine_end) continue;
          const bool point =
              i < wide.fine_begin ? i % 64 == 0 : (i - (wide.fine_end - 1)) % 64 == 0;
          if (!point) CHECK(wide.mass[i] == 0.0);
        }
        CHECK(wide.fine_begin % 64 == 0);
        CHECK((n - wide.fine_end) % 64 == 0);
        // Fewer points (far fewer where the loss's tail is long: q small); the P-mass kept; the
        // coarse buckets' chance bounded by the tail at each end.
        std::size_t points = 0;
        double total = wide.dropped_mass;
        for (const double v : wide.mass) {
          points += v > 0;
          total += v;
        }
        CHECK(points < fine.mass.size());
        CHECK(std::abs(total - 1) < 1e-12);
        CHECK(wide.coarse_probability > 0);
        CHECK(wide.coarse_probability <= 2 * coarse.tail * (1 + 1e-6));
        // Dominance: the true profile ≤ the fine grid's ≤ the coarse grid's.
        for (const double eps : {0.0, 0.01, 0.1, 0.5, 1.0, 2.0, 4.0}) {
          const double truth = closed_form_delta(q, sigma, eps, d);
          const double f = discrete_delta(fine, eps), w = discrete_delta(wide, eps);
          INFO("eps ", eps, ": truth ", truth, ", fine ", f, ", coarse ", w);
          CHECK(truth <= f + kSumSlack);
          CHECK(f <= w + kSumSlack);
        }
      }
}

TEST_CASE("coarse tails: the T-fold Gaussian inside the composed bounds, K as defined") {
  using namespace coarse_tails;
  // q = 1: T releases at σ are one at σ/√T (μ = √T/σ).
  for (const std::int64_t steps : {10'000, 1'000'000})
    for (const double mu : {0.5, 1.0, 2.0}) {
      const double sigma = std::sqrt(static_cast<double>(steps)) / mu;
      const std::vector<Component> run{{Mechanism(Kind::gaussian, sigma), steps}};
      const Coarsening coarse{16, 1.0 / 16 / 256};
      for (const double grid : {1e-3, 1e-4}) {
        const auto c =
            dpb::pld::compose(run, Direction::remove, grid, kTailMass, kWindowTail, coarse);
        INFO("T ", steps, ", mu ", mu, ", grid ", grid);
        REQUIRE(c.stride == 16);
        // K: the least with λ^{K+1}/(K+1)! ≤ the window's tail, λ = T·(a release's chance).
        const DiscreteLoss one =
            dpb::pld::discretise(run[0].mechanism, Direction::remove, grid, kTailMass, coarse);
        const double lambda = static_cast<double>(steps) * one.coarse_probability;
        auto log_bound = [&](double j) { return j * std::log(lambda) - std::lgamma(j + 1); };
        CHECK(c.coarse_releases >= 1);
        CHECK(log_bound(c.coarse_releases + 1) <= std::log(kWindowTail));
        CHECK(log_bound(c.coarse_releases) > std::log(kWindowTail));
        CHECK(c.coarse_excess == doctest::Approx(std::exp(log_bound(c.coarse_releases + 1))));
        for (const double eps : {0.0, 0.5, 1.0, 2.0, 4.0}) {
          const double truth = dpb::test::analytic_gaussian_delta(1 / mu, eps);
          INFO("eps ", eps, ": [", c.delta_lower(eps), ", ", c.delta_upper(eps), "] vs ", truth);
          CHECK(c.delta_lower(eps) <= truth);
          CHECK(truth <= c.delta_upper(eps));
        }
      }
    }
}

TEST_CASE("coarse tails: a long subsampled run, coarse and fine intervals meet") {
  using namespace coarse_tails;
  // Both are sound bounds on the same δ(ε): they must overlap; the coarse
  // interval is the wider of the two by little.
  const std::vector<Component> run{{Mechanism(Kind::gaussian, 1.0, 1e-3), 100'000}};
  const Coarsening coarse{32, 1.0 / 16 / 1024};
  for (const Direction d : {Direction::remove, Direction::add}) {
    const double grid = 2e-5;
    const auto wide = dpb::pld::compose(run, d, grid, kTailMass, kWindowTail, coarse);
    const auto fine = dpb::pld::compose(run, d, grid, kTailMass, kWindowTail);
    REQUIRE(wide.stride == 32);
    for (const double eps : {0.5, 1.0, 1.5, 2.0, 3.0}) {
      INFO("eps ", eps, ": coarse [", wide.delta_lower(eps), ", ", wide.delta_upper(eps),
           "], fine [", fine.delta_lower(eps), ", ", fine.delta_upper(eps), "]");
      CHECK(wide.delta_lower(eps) <= fine.delta_upper(eps));
      CHECK(fine.delta_lower(eps) <= wide.delta_upper(eps));
      const double fine_width = fine.delta_upper(eps) - fine.delta_lower(eps);
      CHECK(wide.delta_upper(eps) - wide.delta_lower(eps) <= 2 * fine_width + 1e-15);
    }
  }
}
