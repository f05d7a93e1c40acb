// epsilon_series (plot, report): its points are computed faster than one
// query at a time (both cores, a neighbour's grid, shared releases and their
// transforms on a power-of-two period), but each must still be the
// accountant's answer. Checked against the same queries made alone, and
// against closed forms where there are some.
#include "accounting/dpsgd/epsilon_series.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "accounting/accountant.hpp"
#include "accounting/events/events.hpp"
#include "accounting/mechanisms/gaussian_mechanism.hpp"

namespace {

dpb::Guarantee alone(const std::string& name, const dpb::EventPtr& event, double delta) {
  auto acc = dpb::make_accountant(name, {});
  acc->compose(*event);
  return acc->epsilon(delta);
}

}  // namespace

TEST_CASE(
    "epsilon_series: pld points of a DP-SGD run are sound and as tight as queries made alone") {
  // Both are intervals around the true ε: they must overlap, and each upper
  // end is within the tolerance (1e-3 of the upper end) of the truth, so the
  // two upper ends are within twice that of each other.
  const double q = 0.01, sigma = 1, delta = 1e-5;
  std::vector<std::int64_t> counts;
  for (std::int64_t t = 1; t <= 10000; t = t < 10 ? t + 3 : t * 5 / 2) counts.push_back(t);
  auto event_of = [&](std::int64_t t) { return dpb::make_dp_sgd(q, sigma, t); };
  const auto series = dpb::epsilon_series("pld", {}, event_of, counts, delta);
  REQUIRE(series.size() == counts.size());
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const auto single = alone("pld", event_of(counts[i]), delta);
    const auto& point = series[i];
    INFO("steps " << counts[i] << ": series [" << point.epsilon_lower.value_or(-1) << ", "
                  << point.epsilon << "], alone [" << single.epsilon_lower.value_or(-1) << ", "
                  << single.epsilon << "]");
    REQUIRE(point.epsilon_lower);
    REQUIRE(single.epsilon_lower);
    CHECK(*point.epsilon_lower <= single.epsilon);
    CHECK(*single.epsilon_lower <= point.epsilon);
    CHECK(std::abs(point.epsilon - single.epsilon) <= 2e-3 * single.epsilon);
    CHECK(point.bound == dpb::BoundKind::upper);
  }
}

TEST_CASE("epsilon_series: T Gaussian releases in a series contain the closed form at every T") {
  // T releases of N(0, σ²) are one release of N(0, σ²/T): ε is known exactly.
  const double sigma = 4, delta = 1e-6;
  std::vector<std::int64_t> counts;
  for (std::int64_t t = 1; t <= 4096; t *= 4) counts.push_back(t);
  auto event_of = [&](std::int64_t t) {
    return dpb::make_self_composed(t, dpb::make_gaussian(sigma));
  };
  for (const char* name : {"pld", "rdp", "gdp"}) {
    const auto series = dpb::epsilon_series(name, {}, event_of, counts, delta);
    for (std::size_t i = 0; i < counts.size(); ++i) {
      // The analytic Gaussian (Balle & Wang 2018, docs/mechanisms.md#gaussian-profile), tested
      // against the published δ(1) = 0.12693674 in mechanisms/mechanism_profiles_test.cpp.
      const double truth =
          dpb::gaussian_epsilon(sigma / std::sqrt(static_cast<double>(counts[i])), delta);
      INFO(name << ", steps " << counts[i] << ": " << series[i].epsilon << " vs " << truth);
      CHECK(series[i].epsilon >= truth * (1 - 1e-12));
      if (series[i].epsilon_lower) CHECK(*series[i].epsilon_lower <= truth);
      // pld and gdp are tight for the Gaussian; rdp's conversion is not.
      if (std::string(name) != "rdp") CHECK(series[i].epsilon <= truth * (1 + 2e-3));
    }
  }
}
