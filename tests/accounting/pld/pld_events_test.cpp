// PLD accountant on the event kinds beyond the Gaussian and Laplace
// mechanisms, and under each neighbouring relation. Every check compares with
// an independent value: rows of tests/reference/events.csv (dp_accounting
// 0.6.0; read from the file by their id, so the file is the one source),
// closed forms, or mpmath computations (40 digits) pasted with how they were
// made.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accounting/accountant.hpp"
#include "accounting/errors.hpp"
#include "accounting/events/events.hpp"
#include "accounting/pld/pld.hpp"
#include "accounting/pld/pld_accountant.hpp"
#include "support/analytic_gaussian.hpp"
#include "support/limits.hpp"
#include "support/reference.hpp"

namespace {

using namespace dpb;

using dpb::test::kInf;
/// events.csv: an `interval` row holds when lower ≤ v(1 + 1e-3) and
/// upper ≥ v(1 − 1e-3); an `at_most` row when upper ≤ v(1 + 1e-3).
constexpr double kRowTolerance = 1e-3;

AccountantOptions options(std::optional<Neighbouring> relation = std::nullopt) {
  AccountantOptions o;
  o.neighbouring = relation;
  return o;
}

Guarantee epsilon_of(const EventPtr& e, double delta,
                     std::optional<Neighbouring> relation = std::nullopt) {
  PldAccountant acc(options(relation));
  acc.compose(*e);
  return acc.epsilon(delta);
}

Guarantee delta_of(const EventPtr& e, double eps,
                   std::optional<Neighbouring> relation = std::nullopt) {
  PldAccountant acc(options(relation));
  acc.compose(*e);
  return acc.delta(eps);
}

void check_interval_row(const Guarantee& g, double v) {
  INFO("interval [", g.epsilon_lower.value_or(-1), ", ", g.epsilon, "] vs reference ", v);
  REQUIRE(g.epsilon_lower);
  CHECK(*g.epsilon_lower <= v * (1 + kRowTolerance));
  CHECK(g.epsilon >= v * (1 - kRowTolerance));
}

void check_contains_delta(const Guarantee& g, double truth, double rel = 1e-9) {
  INFO("delta interval [", g.delta_lower.value_or(-1), ", ", g.delta, "] vs ", truth);
  REQUIRE(g.delta_lower);
  CHECK(*g.delta_lower <= truth * (1 + rel));
  CHECK(g.delta >= truth * (1 - rel));
  // and narrow: a δ query refines to the δ width that an ε interval of
  // relative width 1e-3 gives, a few times 1e-3 relative here.
  CHECK(g.delta - *g.delta_lower <= 1e-2 * g.delta + 1e-12);
}

void check_contains_epsilon(const Guarantee& g, double truth, double rel = 1e-9) {
  INFO("epsilon interval [", g.epsilon_lower.value_or(-1), ", ", g.epsilon, "] vs ", truth);
  REQUIRE(g.epsilon_lower);
  CHECK(*g.epsilon_lower <= truth * (1 + rel));
  CHECK(g.epsilon >= truth * (1 - rel));
  CHECK(g.epsilon - *g.epsilon_lower <= 2e-3 * g.epsilon);
}

/// One row of events.csv: what to ask (δ, relation) and the reference ε with
/// how to compare (its `check` column; tests/reference/README.md).
struct EventsRow {
  double delta;
  Neighbouring relation;
  double epsilon;
  std::string check;
};

Neighbouring relation_named(std::string_view name) {
  for (auto n :
       {Neighbouring::add_remove, Neighbouring::replace_one, Neighbouring::replace_special})
    if (to_string(n) == name) return n;
  FAIL("events.csv: unknown neighbouring relation " << std::string(name));
  return Neighbouring::add_remove;
}

/// The pld row of events.csv whose `id` is `id`.
EventsRow events_row(const std::string& id) {
  static const auto rows = test::read_reference_csv("events.csv");
  for (const auto& r : rows) {
    if (r.at("id") != id) continue;
    REQUIRE(r.at("accountant") == "pld");
    return {std::stod(r.at("delta")), relation_named(r.at("neighbouring")),
            std::stod(r.at("epsilon")), r.at("check")};
  }
  FAIL("events.csv has no row " << id);
  return {};
}

/// ε of `event` at the row's δ under its relation, compared with its value by
/// its check; returns the guarantee for further checks.
Guarantee check_events_row(const std::string& id, const EventPtr& event) {
  const EventsRow row = events_row(id);
  INFO("events.csv row ", id, ": ", row.check, " ", row.epsilon);
  const Guarantee g = epsilon_of(event, row.delta, row.relation);
  if (row.check == "interval")
    check_interval_row(g, row.epsilon);
  else if (row.check == "at_most")
    CHECK(g.epsilon <= row.epsilon * (1 + kRowTolerance));
  else
    FAIL("events.csv: unknown check " << row.check);
  return g;
}

EventPtr poisson_gaussian(double q, double sigma) {
  return make_poisson_sampled(q, make_gaussian(sigma));
}

}  // namespace

// --- events.csv, every pld row ----------------------------------------------

// Each event is its row's spec_json, built with the library's factories.
namespace {

EventPtr composed_mix(const EventPtr& fifth) {
  return make_composed({make_self_composed(10, make_gaussian(5.0)), make_laplace(10.0),
                        make_event(DiscreteLaplaceEvent{0.1, 1}),
                        make_event(ExponentialMechanismEvent{0.2}), fifth,
                        make_event(EpsilonDeltaEvent{0.1, 1e-7})});
}

/// The event of each pld row of events.csv, by id (nullptr: none here).
EventPtr pld_row_event(const std::string& id) {
  if (id == "epsilon_delta_pld_k20")
    return make_self_composed(20, make_event(EpsilonDeltaEvent{0.5, 1e-7}));
  if (id == "discrete_laplace_pld_single") return make_event(DiscreteLaplaceEvent{1.0, 1});
  if (id == "randomized_response_pld_r1_k100")
    return make_self_composed(100, make_event(RandomizedResponseEvent{0.5, 2}));
  if (id == "exponential_mechanism_pld_single") return make_event(ExponentialMechanismEvent{0.5});
  if (id == "mixture_of_gaussians_pld_q001_k100")
    return make_self_composed(100,
                              make_event(MixtureOfGaussiansEvent{1.0, {0.0, 1.0}, {0.99, 0.01}}));
  if (id == "poisson_laplace_pld_k100")
    return make_self_composed(100, make_poisson_sampled(0.01, make_laplace(1.0)));
  if (id == "tsg_pld_B120_k100")
    return make_self_composed(100,
                              make_event(TruncatedSubsampledGaussianEvent{10000, 0.01, 120, 1.0}));
  if (id == "composed_mix_pld") return composed_mix(make_event(PermuteAndFlipEvent{0.2}));
  return nullptr;
}

Guarantee check_pld_row(const std::string& id) {
  const EventPtr e = pld_row_event(id);
  REQUIRE_MESSAGE(e, "no event for events.csv row ", id);
  return check_events_row(id, e);
}

}  // namespace

TEST_CASE("pld events.csv: every pld row has its event here") {
  int pld_rows = 0;
  for (const auto& r : test::read_reference_csv("events.csv")) {
    if (r.at("accountant") != "pld") continue;
    ++pld_rows;
    CHECK_MESSAGE(pld_row_event(r.at("id")), "no event for events.csv row ", r.at("id"));
  }
  CHECK(pld_rows > 0);
}

TEST_CASE("pld events.csv: epsilon_delta_pld_k20") { check_pld_row("epsilon_delta_pld_k20"); }

TEST_CASE("pld events.csv: discrete_laplace_pld_single") {
  check_pld_row("discrete_laplace_pld_single");
}

TEST_CASE("pld events.csv: randomized_response_pld_r1_k100 (the count is honoured)") {
  check_pld_row("randomized_response_pld_r1_k100");
}

TEST_CASE("pld events.csv: exponential_mechanism_pld_single (at most)") {
  const auto g = check_pld_row("exponential_mechanism_pld_single");
  CHECK(g.epsilon > 0.49);
}

TEST_CASE("pld events.csv: mixture_of_gaussians_pld_q001_k100") {
  check_pld_row("mixture_of_gaussians_pld_q001_k100");
}

TEST_CASE("pld events.csv: poisson_laplace_pld_k100") { check_pld_row("poisson_laplace_pld_k100"); }

TEST_CASE("pld events.csv: tsg_pld_B120_k100") { check_pld_row("tsg_pld_B120_k100"); }

TEST_CASE("pld events.csv: composed_mix_pld, permute_and_flip as a generic eps-DP mechanism") {
  // dp_accounting gives permute_and_flip(0.2) the Laplace PLD of scale 5 (no
  // published proof); we give it the canonical (0.2, 0) pair, which
  // dominates every 0.2-DP mechanism, so our interval may sit above the
  // row's value (2.9197001518045544). It must (a) equal the same ledger with
  // permute_and_flip written as epsilon_delta(0.2, 0) and (b) not be below
  // the reference.
  const EventsRow row = events_row("composed_mix_pld");
  REQUIRE(row.check == "interval");
  const auto ours = epsilon_of(pld_row_event("composed_mix_pld"), row.delta, row.relation);
  const auto same =
      epsilon_of(composed_mix(make_event(EpsilonDeltaEvent{0.2, 0})), row.delta, row.relation);
  CHECK(ours.epsilon == same.epsilon);
  CHECK(*ours.epsilon_lower == *same.epsilon_lower);
  CHECK(ours.epsilon >= row.epsilon * (1 - kRowTolerance));
  // With the Laplace PLD that dp_accounting uses the row holds as an interval.
  check_events_row("composed_mix_pld", composed_mix(make_laplace(5.0)));
}

// --- closed forms --------------------------------------------------------------

TEST_CASE("pld randomized_response replace_one, one use: delta(eps) from its three atoms") {
  // k = 4, p = 0.3: the true bucket has P-mass 1 − p + p/k = 0.775 and Q-mass
  // p/k = 0.075; δ(ε) = 0.775·(1 − e^{ε − l}), l = log(0.775/0.075), for ε < l.
  const auto e = make_event(RandomizedResponseEvent{0.3, 4});
  const double l = std::log(0.775 / 0.075);
  for (double eps : {0.0, 0.5, 1.0, 2.0}) {
    INFO("eps = ", eps);
    const auto g = delta_of(e, eps, Neighbouring::replace_one);
    check_contains_delta(g, 0.775 * -std::expm1(eps - l), 1e-6);
    CHECK(g.neighbouring == Neighbouring::replace_one);
  }
  // ε(δ) inverts it: ε = l + log(1 − δ/0.775).
  const auto g = epsilon_of(e, 1e-5, Neighbouring::replace_one);
  check_contains_epsilon(g, l + std::log1p(-1e-5 / 0.775), 1e-6);
}

TEST_CASE("pld randomized_response replace_special: the asymmetric pair, max of both directions") {
  // k = 4, p = 0.3, the null record answers uniformly. Remove: loss
  // log(k(1 − p) + p) = log 3.1 w.p. 0.775, log 0.3 w.p. 0.225. Add: −log 3.1
  // w.p. 1/4, −log 0.3 w.p. 3/4. At ε = 0.5 (below both top losses):
  // remove δ = 0.775(1 − e^{0.5}/3.1), add δ = 0.75(1 − 0.3e^{0.5}).
  const double remove = 0.775 * (1 - std::exp(0.5) / 3.1);
  const double add = 0.75 * (1 - 0.3 * std::exp(0.5));
  const auto g =
      delta_of(make_event(RandomizedResponseEvent{0.3, 4}), 0.5, Neighbouring::replace_special);
  check_contains_delta(g, std::max(remove, add), 1e-6);
  CHECK(g.neighbouring == Neighbouring::replace_special);
}

TEST_CASE("pld randomized_response is refused under add_remove and when inferred") {
  const auto e = make_event(RandomizedResponseEvent{0.5, 2});
  for (auto rel : {std::optional<Neighbouring>{}, std::optional{Neighbouring::add_remove}}) {
    PldAccountant acc(options(rel));
    const auto why = acc.unsupported_reason(*e);
    REQUIRE(why);
    CHECK(why->rfind("pld: randomized_response", 0) == 0);
    CHECK(why->find("replace_one or replace_special") != std::string::npos);
  }
}

TEST_CASE("pld epsilon_delta, one use: epsilon(delta) of the canonical pair") {
  // δ(ε) = δ0 + (1 − δ0)(1 − e^{ε − ε0})/(1 + e^{−ε0}) for 0 ≤ ε ≤ ε0, so
  // ε(δ0) = ε0, ε(δ) = ε0 + log(1 − (δ − δ0)(1 + e^{−ε0})/(1 − δ0)) above δ0,
  // and ε = ∞ below δ0.
  const double e0 = 1.0, d0 = 1e-6;
  const auto e = make_event(EpsilonDeltaEvent{e0, d0});
  check_contains_epsilon(epsilon_of(e, d0), e0, 1e-9);
  for (double delta : {2e-6, 1e-5, 1e-3}) {
    INFO("delta = ", delta);
    const double truth = e0 + std::log1p(-(delta - d0) * (1 + std::exp(-e0)) / (1 - d0));
    check_contains_epsilon(epsilon_of(e, delta), truth, 1e-9);
  }
  const auto below = epsilon_of(e, 5e-7);
  CHECK(below.epsilon == kInf);
  CHECK(*below.epsilon_lower == kInf);
  // δ(ε) at ε ≥ ε0 is exactly δ0 (the mass at +∞), both ends.
  const auto d = delta_of(e, 1.5);
  check_contains_delta(d, d0, 1e-9);
}

TEST_CASE("pld discrete_laplace, one use: epsilon <= a * sensitivity, and the exact profile") {
  for (auto rel :
       {Neighbouring::add_remove, Neighbouring::replace_special, Neighbouring::replace_one}) {
    for (std::int64_t sens : {1, 3}) {
      const double a = 0.7;
      const double shift = static_cast<double>(sens) * (rel == Neighbouring::replace_one ? 2 : 1);
      INFO("relation ", to_string(rel), ", sensitivity ", sens);
      const auto g = epsilon_of(make_event(DiscreteLaplaceEvent{a, sens}), 1e-8, rel);
      CHECK(g.epsilon <= a * shift * (1 + 1e-3));
      CHECK(g.epsilon > a * shift * 0.99);  // the top loss a·shift has P-mass 1/(1 + e^{−a})
      CHECK(g.neighbouring == rel);
    }
  }
  // Sensitivity 1: δ(ε) = (1 − e^{ε − a})/(1 + e^{−a}) for 0 ≤ ε < a.
  const double a = 1.0;
  const auto g = delta_of(make_event(DiscreteLaplaceEvent{a, 1}), 0.4, Neighbouring::add_remove);
  check_contains_delta(g, -std::expm1(0.4 - a) / (1 + std::exp(-a)), 1e-6);
}

TEST_CASE("pld discrete_gaussian: its exact privacy-loss PMF") {
  // mpmath, 40 digits: Σ_{|x| ≤ 400} (P(x) − e^{0.5}Q(x))₊ with P = N_Z(shift,
  // σ²), Q = N_Z(0, σ²), each normalised by its own sum.
  struct Case {
    double sigma;
    std::int64_t sens;
    Neighbouring rel;
    double delta;
  };
  for (const Case& c : {Case{2.0, 1, Neighbouring::add_remove, 0.054007223694154420918},
                        Case{2.0, 1, Neighbouring::replace_one, 0.23003988707630415981},
                        Case{2.0, 2, Neighbouring::replace_special, 0.23003988707630415981},
                        Case{0.7, 1, Neighbouring::add_remove, 0.43032061917656716660}}) {
    INFO("sigma ", c.sigma, ", sensitivity ", c.sens, ", ", to_string(c.rel));
    check_contains_delta(delta_of(make_event(DiscreteGaussianEvent{c.sigma, c.sens}), 0.5, c.rel),
                         c.delta, 1e-6);
  }
}

// --- relations ---------------------------------------------------------------

TEST_CASE("pld replace_special equals add_remove for gaussian, laplace and their sampled forms") {
  for (const auto& e : {make_gaussian(1.5), make_laplace(2.0), poisson_gaussian(0.05, 1.0),
                        make_poisson_sampled(0.05, make_laplace(1.0))}) {
    INFO(event_name(*e));
    const auto a = epsilon_of(e, 1e-6, Neighbouring::add_remove);
    const auto s = epsilon_of(e, 1e-6, Neighbouring::replace_special);
    CHECK(a.epsilon == s.epsilon);
    CHECK(*a.epsilon_lower == *s.epsilon_lower);
    CHECK(s.neighbouring == Neighbouring::replace_special);
    CHECK(a.neighbouring == Neighbouring::add_remove);
  }
}

TEST_CASE("pld replace_one: unsampled gaussian at sigma/2 (the analytic Gaussian)") {
  const double sigma = 2.0;
  for (double eps : {0.2, 1.0}) {
    const auto g = delta_of(make_gaussian(sigma), eps, Neighbouring::replace_one);
    check_contains_delta(g, dpb::test::analytic_gaussian_delta(sigma / 2, eps), 1e-9);
    CHECK(g.neighbouring == Neighbouring::replace_one);
  }
  // Laplace b/2: ε ≤ 2/b, attained.
  const auto l = epsilon_of(make_laplace(4.0), 1e-9, Neighbouring::replace_one);
  CHECK(l.epsilon <= 0.5 * (1 + 1e-3));
  CHECK(l.epsilon > 0.49);
}

TEST_CASE("pld replace_one: the REPLACE pair of the Poisson-subsampled Gaussian") {
  // mpmath, 40 digits: P = 0.9N(0,1) + 0.1N(1,1), Q = 0.9N(0,1) + 0.1N(−1,1),
  // z* solving log(P/Q)(z*) = 0.5 by findroot, δ = P(z > z*) − e^{0.5}Q(z > z*).
  const auto g = delta_of(poisson_gaussian(0.1, 1.0), 0.5, Neighbouring::replace_one);
  check_contains_delta(g, 0.0033419717910138055612, 1e-6);
  CHECK(g.neighbouring == Neighbouring::replace_one);
  // It lies above add/remove (a replacement is an add and a remove at once)
  // and below the unsampled Gaussian at σ/2.
  const auto ar = epsilon_of(make_self_composed(50, poisson_gaussian(0.1, 1.0)), 1e-5);
  const auto ro = epsilon_of(make_self_composed(50, poisson_gaussian(0.1, 1.0)), 1e-5,
                             Neighbouring::replace_one);
  CHECK(*ro.epsilon_lower > ar.epsilon);
  // Laplace under Poisson sampling has no REPLACE analysis here.
  PldAccountant acc(options(Neighbouring::replace_one));
  const auto why = acc.unsupported_reason(*make_poisson_sampled(0.1, make_laplace(1.0)));
  REQUIRE(why);
  CHECK(why->find("replace_one") != std::string::npos);
}

TEST_CASE("pld inferred relation reports add_remove as before") {
  const auto g = epsilon_of(poisson_gaussian(0.01, 1.0), 1e-5);
  CHECK(g.neighbouring == Neighbouring::add_remove);
}

// --- no_op, non_private ----------------------------------------------------------

TEST_CASE("pld no_op adds nothing, non_private is epsilon = inf, delta = 1 at both ends") {
  const auto base = make_self_composed(10, make_gaussian(3.0));
  const auto with_noop = make_composed({base, make_event(NoOpEvent{})});
  CHECK(epsilon_of(with_noop, 1e-5).epsilon == epsilon_of(base, 1e-5).epsilon);
  CHECK(epsilon_of(make_event(NoOpEvent{}), 1e-5).epsilon == 0);

  const auto np = make_composed({base, make_event(NonPrivateEvent{})});
  for (auto rel : {std::optional<Neighbouring>{}, std::optional{Neighbouring::replace_one}}) {
    const auto e = epsilon_of(np, 1e-5, rel);
    CHECK(e.epsilon == kInf);
    CHECK(*e.epsilon_lower == kInf);
    const auto d = delta_of(np, 3.0, rel);
    CHECK(d.delta == 1);
    CHECK(*d.delta_lower == 1);
  }
}

// --- mixture of Gaussians -------------------------------------------------------

TEST_CASE("pld mixture_of_gaussians {0, 1} with {1 - q, q} equals the Poisson-sampled Gaussian") {
  for (double q : {0.01, 0.2}) {
    for (auto rel : {Neighbouring::add_remove, Neighbouring::replace_special}) {
      INFO("q = ", q, ", ", to_string(rel));
      const auto mog =
          make_self_composed(100, make_event(MixtureOfGaussiansEvent{1.0, {0.0, 1.0}, {1 - q, q}}));
      const auto pg = make_self_composed(100, poisson_gaussian(q, 1.0));
      const auto a = epsilon_of(mog, 1e-5, rel);
      const auto b = epsilon_of(pg, 1e-5, rel);
      // Two different code paths (numerical inversion vs closed form): the
      // intervals overlap and agree to the interval tolerance.
      CHECK(*a.epsilon_lower <= b.epsilon);
      CHECK(*b.epsilon_lower <= a.epsilon);
      CHECK(std::abs(a.epsilon - b.epsilon) <= 1e-3 * b.epsilon);
    }
  }
}

TEST_CASE("pld mixture_of_gaussians: one release against mpmath, both directions") {
  // mpmath, 40 digits: P = 0.5N(0,1) + 0.3N(0.5,1) + 0.2N(2,1), Q = N(0,1);
  // loss roots by findroot; remove δ(0.5) = P(z > z*) − e^{0.5}Q(z > z*) =
  // 0.10923721945379754001, add δ(0.5) = 9.8656387794257355316e-4. The result
  // is the max, the remove direction.
  const auto e = make_event(MixtureOfGaussiansEvent{1.0, {0.0, 0.5, 2.0}, {0.5, 0.3, 0.2}});
  check_contains_delta(delta_of(e, 0.5), 0.10923721945379754001, 1e-6);
  PldAccountant acc(options(Neighbouring::replace_one));
  const auto why = acc.unsupported_reason(*e);
  REQUIRE(why);
  CHECK(why->find("replace_one") != std::string::npos);
}

TEST_CASE("pld mixture_of_gaussians: the add direction on its own, against mpmath") {
  // Same pair as above, add direction (P = N(0,1), loss −L): mpmath gives
  // δ(0.5) = 9.8656387794257355316e-4.
  constexpr double kTruth = 9.8656387794257355316e-4;
  dpb::pld::Mechanism m;
  m.kind = dpb::pld::Mechanism::Kind::gaussian_mixture;
  m.parameter = 1.0;
  m.shifts = {0.0, 0.5, 2.0};
  m.weights = {0.5, 0.3, 0.2};
  CHECK(std::abs(dpb::pld::exact_delta(m, dpb::pld::Direction::add, 0.5) - kTruth) <=
        1e-9 * kTruth);
  const std::vector<dpb::pld::Component> one{{m, 1}};
  const auto c = dpb::pld::compose(one, dpb::pld::Direction::add, 1e-4, 1e-14, 1e-12);
  CHECK(c.delta_lower(0.5) <= kTruth);
  CHECK(c.delta_upper(0.5) >= kTruth);
  CHECK(c.delta_upper(0.5) - c.delta_lower(0.5) <= 5e-2 * kTruth);  // one release, Δ = 1e-4
}

TEST_CASE("pld truncated_subsampled_gaussian without truncation is the Poisson-sampled Gaussian") {
  // B ≥ N: the batch is never cut (t = P(Binom(N − 1, q) ≥ B) = 0).
  const auto tsg =
      make_self_composed(20, make_event(TruncatedSubsampledGaussianEvent{1000, 0.05, 1000, 1.0}));
  const auto pg = make_self_composed(20, poisson_gaussian(0.05, 1.0));
  for (auto rel : {Neighbouring::add_remove, Neighbouring::replace_one}) {
    INFO(to_string(rel));
    const auto a = epsilon_of(tsg, 1e-6, rel);
    const auto b = epsilon_of(pg, 1e-6, rel);
    CHECK(a.epsilon == b.epsilon);
    CHECK(a.neighbouring == rel);
  }
  // A cut batch costs privacy: a small B lies above the uncut run.
  const auto cut = epsilon_of(
      make_self_composed(20, make_event(TruncatedSubsampledGaussianEvent{1000, 0.05, 45, 1.0})),
      1e-6);
  CHECK(*cut.epsilon_lower > epsilon_of(pg, 1e-6).epsilon);
}
