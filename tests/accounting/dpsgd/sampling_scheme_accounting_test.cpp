// Sampling schemes and the unit of privacy (issue 15, docs/sampling.md#schemes): shuffled
// batches, balls-in-bins (random allocation), users of several records.
// Each accountant's answer on a run is checked against a closed form or
// against another accountant, never against what the code printed before.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "accounting/accountant.hpp"
#include "accounting/accountant_descriptor.hpp"
#include "accounting/dpsgd/dp_sgd_run.hpp"
#include "accounting/events/events.hpp"
#include "accounting/gdp/gdp.hpp"
#include "accounting/gdp/gdp_accountant.hpp"
#include "accounting/mechanisms/gaussian_mechanism.hpp"
#include "accounting/rdp/rdp.hpp"
#include "support/close.hpp"

using namespace dpb;
using dpb::test::close_rel;

namespace {

/// Closed forms evaluated by different code (the analytic Gaussian, an RDP
/// minimum over orders written out here) agree to this, relative.
constexpr double kClosedForm = 1e-9;
/// The PLD interval is sound: the exact value lies inside it, up to the
/// relative round-off of the closed form it is compared with.
constexpr double kInsideSlack = 1e-9;
constexpr double kDelta = 1e-5;

AccountantOptions with_relation(std::optional<Neighbouring> relation) {
  AccountantOptions o;
  o.neighbouring = relation;
  return o;
}

std::unique_ptr<Accountant> accountant(const char* name, std::optional<Neighbouring> relation) {
  AccountantOptions o;
  o.neighbouring = relation;
  return make_accountant(name, o);
}

Guarantee epsilon_of(const char* name, const EventPtr& e, std::optional<Neighbouring> relation,
                     double delta = kDelta) {
  auto acc = accountant(name, relation);
  acc->compose(*e);
  return acc->epsilon(delta);
}

DpSgdRun shuffled_run(double sigma, std::int64_t n, std::int64_t b, std::int64_t steps) {
  DpSgdRun r;
  r.sampling = Sampling::shuffle;
  r.noise_multiplier = sigma;
  r.dataset_size = n;
  r.batch_size = b;
  r.sampling_rate = static_cast<double>(b) / static_cast<double>(n);
  r.steps = steps;
  return r;
}

/// The improved RDP conversion (docs/rdp.md#conversion) of ρ(α) = uses·α/(2σ²), written out
/// here over dpbudget's default orders: the moments accountant's answer for
/// `uses` unsampled Gaussian releases, computed without the accountant.
double rdp_gaussian_epsilon(double sigma, double uses, double delta) {
  double best = std::numeric_limits<double>::infinity();
  for (double a : default_rdp_orders()) {
    const double rho = uses * a / (2 * sigma * sigma);
    best = std::min(best, rho + std::log((a - 1) / a) - (std::log(delta) + std::log(a)) / (a - 1));
  }
  return std::max(0.0, best);
}

}  // namespace

TEST_CASE(
    "shuffle: the upper bound is E Gaussian releases (E epochs begun), under replace_special") {
  for (double sigma : {0.8, 1.3, 4.0})
    for (std::int64_t steps : {100, 250, 1000}) {
      const DpSgdRun run = shuffled_run(sigma, 10000, 100, steps);  // t = 100 steps per epoch
      const double epochs = std::ceil(static_cast<double>(steps) / 100);
      REQUIRE(epochs_started(run) == static_cast<std::int64_t>(epochs));
      INFO("sigma ", sigma, ", T ", steps);
      const EventPtr e = dp_sgd_event(run);
      // GDP: μ = √E/σ exactly (Dong, Roth & Su 2022, Cor. 3.3).
      GdpAccountant gdp(with_relation(Neighbouring::replace_special));
      gdp.compose(*e);
      CHECK(close_rel(gdp.mu(), std::sqrt(epochs) / sigma, kClosedForm));
      // Its ε is the analytic Gaussian's at σ/√E (Balle & Wang 2018).
      const double exact = gaussian_epsilon(sigma / std::sqrt(epochs), kDelta);
      CHECK(close_rel(gdp.epsilon(kDelta).epsilon, exact, kClosedForm));
      // PLD: an interval around the same exact value.
      const Guarantee pld = epsilon_of("pld", e, Neighbouring::replace_special);
      CHECK(*pld.epsilon_lower <= exact * (1 + kInsideSlack));
      CHECK(pld.epsilon >= exact * (1 - kInsideSlack));
      // RDP: E·α/(2σ²) converted.
      CHECK(close_rel(epsilon_of("rdp", e, Neighbouring::replace_special).epsilon,
                      rdp_gaussian_epsilon(sigma, epochs, kDelta), kClosedForm));
      // Replace-one: sensitivity 2, μ = 2√E/σ.
      GdpAccountant gdp_ro(with_relation(Neighbouring::replace_one));
      gdp_ro.compose(*e);
      CHECK(close_rel(gdp_ro.mu(), 2 * std::sqrt(epochs) / sigma, kClosedForm));
      // Add/remove is refused by every accountant, with a reason.
      for (const auto& info : accountants()) {
        const auto why = accountant(info.name.c_str(), std::nullopt)->unsupported_reason(*e);
        REQUIRE(why);
        CHECK(why->find("replace_special") != std::string::npos);
      }
    }
}

TEST_CASE("balls-in-bins: rdp, gdp and composition give k unamplified releases per epoch") {
  for (std::int64_t k : {1, 3}) {
    DpSgdRun run = shuffled_run(2.0, 6000, 100, 180);  // t = 60, 3 epochs
    run.sampling = Sampling::balls_in_bins;
    run.participations = k;
    const double uses = 3.0 * static_cast<double>(k);
    const EventPtr e = dp_sgd_event(run);
    INFO("k ", k);
    GdpAccountant gdp(AccountantOptions{});
    gdp.compose(*e);
    CHECK(close_rel(gdp.mu(), std::sqrt(uses) / 2.0, kClosedForm));
    CHECK(gdp.epsilon(kDelta).neighbouring == Neighbouring::add_remove);
    CHECK(close_rel(epsilon_of("rdp", e, std::nullopt).epsilon,
                    rdp_gaussian_epsilon(2.0, uses, kDelta), kClosedForm));
    // One epoch to the composition accountant: one Gaussian at σ/√k, whose
    // ε is the analytic Gaussian's (its per-step profile is exact).
    DpSgdRun one = run;
    one.steps = 60;
    CHECK(close_rel(epsilon_of("composition", dp_sgd_event(one), std::nullopt).epsilon,
                    gaussian_epsilon(2.0 / std::sqrt(static_cast<double>(k)), kDelta), 1e-6));
    // Replace-one is not the pair's relation: refused.
    CHECK(accountant("rdp", Neighbouring::replace_one)->unsupported_reason(*e));
  }
}

TEST_CASE("user level: k = 1 is the record-level run, q = 1 is the Gaussian at sigma/k") {
  DpSgdRun run;
  run.sampling_rate = 0.01;
  run.noise_multiplier = 1.1;
  run.steps = 1000;
  run.records_per_user = 1;
  for (const char* name : {"rdp", "pld", "composition", "gdp"})
    CHECK(epsilon_of(name, dp_sgd_event(run), std::nullopt).epsilon ==
          epsilon_of(name, make_dp_sgd(0.01, 1.1, 1000), std::nullopt).epsilon);

  for (std::int64_t k : {2, 4, 10}) {
    DpSgdRun all = run;
    all.sampling_rate = 1;
    all.noise_multiplier = 3.0;
    all.steps = 5;
    all.records_per_user = k;
    const EventPtr e = dp_sgd_event(all);
    const double sigma_k = 3.0 / static_cast<double>(k);
    INFO("k ", k);
    // RDP: 5 Gaussians at σ/k.
    CHECK(close_rel(epsilon_of("rdp", e, std::nullopt).epsilon,
                    rdp_gaussian_epsilon(sigma_k, 5, kDelta), kClosedForm));
    // PLD: an interval around the analytic Gaussian at σ/(k√5).
    const double exact = gaussian_epsilon(sigma_k / std::sqrt(5.0), kDelta);
    const Guarantee pld = epsilon_of("pld", e, std::nullopt);
    CHECK(*pld.epsilon_lower <= exact * (1 + kInsideSlack));
    CHECK(pld.epsilon >= exact * (1 - kInsideSlack));
  }
}

TEST_CASE("user level: pld lower <= pld upper <= rdp on a grid") {
  for (double q : {0.01, 0.1})
    for (std::int64_t k : {2, 5})
      for (double sigma : {1.0, 2.0})
        for (std::int64_t steps : {10, 100}) {
          DpSgdRun run;
          run.sampling_rate = q;
          run.noise_multiplier = sigma;
          run.steps = steps;
          run.records_per_user = k;
          const EventPtr e = dp_sgd_event(run);
          INFO("q ", q, ", k ", k, ", sigma ", sigma, ", T ", steps);
          const Guarantee pld = epsilon_of("pld", e, std::nullopt);
          const Guarantee rdp = epsilon_of("rdp", e, std::nullopt);
          CHECK(*pld.epsilon_lower <= pld.epsilon);
          CHECK(pld.epsilon <= rdp.epsilon);
          // RDP takes, order by order, the smaller of two dominating runs:
          // T steps of the sampled Gaussian at rate 1 − (1 − q)^k and σ/k, and
          // kT steps at rate q and σ/√k (the noise split among the records).
          const double kd = static_cast<double>(k);
          const double dominated =
              epsilon_of("rdp", make_dp_sgd(-std::expm1(kd * std::log1p(-q)), sigma / kd, steps),
                         std::nullopt)
                  .epsilon;
          const double split =
              epsilon_of("rdp", make_dp_sgd(q, sigma / std::sqrt(kd), k * steps), std::nullopt)
                  .epsilon;
          CHECK(rdp.epsilon <= std::min(dominated, split) * (1 + kClosedForm));
          // More records per user never lose less: the record-level run's
          // PLD lower end is below the user-level upper end.
          const Guarantee one = epsilon_of("pld", make_dp_sgd(q, sigma, steps), std::nullopt);
          CHECK(*one.epsilon_lower <= pld.epsilon);
        }
}

TEST_CASE("mixture of Gaussians: rdp and composition use the dominating sampled Gaussian") {
  // {0, 1} with {1 − q, q} is exactly the Poisson-sampled Gaussian.
  for (double q : {0.01, 0.3}) {
    const EventPtr mix = make_event(MixtureOfGaussiansEvent{1.5, {0.0, 1.0}, {1 - q, q}});
    const EventPtr sampled = make_poisson_sampled(q, make_gaussian(1.5));
    for (const char* name : {"rdp", "composition"})
      CHECK(close_rel(epsilon_of(name, make_self_composed(50, mix), std::nullopt).epsilon,
                      epsilon_of(name, make_self_composed(50, sampled), std::nullopt).epsilon,
                      kClosedForm));
  }
  // {0, 1, 2}: rate q' = p1 + p2, noise s/2.
  const EventPtr mix = make_event(MixtureOfGaussiansEvent{2.0, {0.0, 1.0, 2.0}, {0.9, 0.07, 0.03}});
  CHECK(close_rel(
      epsilon_of("rdp", mix, std::nullopt).epsilon,
      epsilon_of("rdp", make_poisson_sampled(0.1, make_gaussian(1.0)), std::nullopt).epsilon,
      kClosedForm));
  // Not under replace_one (its pair compares one side against N(0, s²)).
  CHECK(accountant("rdp", Neighbouring::replace_one)->unsupported_reason(*mix));
  CHECK(accountant("composition", Neighbouring::replace_one)->unsupported_reason(*mix));
}
