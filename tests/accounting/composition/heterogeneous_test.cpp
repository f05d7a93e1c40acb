// The composition accountant on a ledger of different steps (issue 27, item
// 1; docs/composition.md#heterogeneous): basic composition's Σ kε, and the
// heterogeneous advanced bound of Kairouz, Oh & Viswanath 2015, Thm 3.5,
// recomputed here in long double from the split the accountant reports; its
// total δ within the target; never below pld's lower end (the true ε); a
// ledger of one step unchanged; mixed relations refused.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "accounting/accountant.hpp"
#include "accounting/errors.hpp"
#include "accounting/events/events.hpp"
#include "support/guarantee.hpp"
#include "support/limits.hpp"

using namespace dpb;

namespace {

using Real = long double;

/// Two routes to one bound: a few roundings and the round-ups of the code
/// (8 machine epsilons per profile, 2(m + 4) u per sum).
using dpb::test::detail_of;
using dpb::test::kSameBound;

std::unique_ptr<Accountant> composition(CompositionMethod method,
                                        std::optional<Neighbouring> relation = std::nullopt) {
  AccountantOptions o;
  o.composition.method = method;
  o.neighbouring = relation;
  return make_accountant("composition", o);
}

/// The ε0 at per-use δ0 ≥ δe of the (ε, δe) randomized response (Kairouz,
/// Oh & Viswanath 2015, Thm 2.1): e^ε0 = e^ε(1 − x) − x with
/// x = (δ0 − δe)/(1 − δe).
Real rr_epsilon(Real e, Real d0, Real de = 0) {
  if (d0 == de) return e;
  const Real x = (d0 - de) / (1 - de);
  const Real v = std::exp(e) * (1 - x) - x;
  return v > 1 ? std::log(v) : 0;
}

struct Use {
  double epsilon;
  std::int64_t count;
  double delta = 0;
};

/// Two pure steps, 30 uses of ε 0.1 and 50 of ε 0.3, as one composed event.
const std::vector<Use> kLedger = {{0.1, 30}, {0.3, 50}};

EventPtr ledger_event(const std::vector<Use>& uses) {
  std::vector<EventPtr> events;
  for (const auto& u : uses)
    events.push_back(
        make_self_composed(u.count, make_event(EpsilonDeltaEvent{u.epsilon, u.delta})));
  return make_composed(std::move(events));
}

}  // namespace

TEST_CASE("heterogeneous basic composition is the sum of each use's epsilon at delta / K") {
  auto acc = composition(CompositionMethod::basic);
  acc->compose(*ledger_event(kLedger));
  const double delta = 1e-5;
  const Guarantee g = acc->epsilon(delta);
  const Real d0 = detail_of(g, "delta_step");
  CHECK(d0 <= Real(delta) / 80);
  CHECK(d0 >= Real(delta) / 80 * (1 - 1e-15L));
  Real sum = 0;
  for (const auto& u : kLedger) sum += u.count * rr_epsilon(u.epsilon, d0);
  CHECK(g.epsilon >= sum);
  CHECK(g.epsilon <= sum * (1 + kSameBound));
  // δ at ε: each use ε/K, δ = Σ k·δ_RR(ε/K) with δ_RR(ε0) = (e^ε − e^ε0)/(1 + e^ε).
  const double target = 22;
  const Guarantee h = acc->delta(target);
  Real want = 0;
  for (const auto& u : kLedger) {
    const Real e = u.epsilon, e0 = Real(target) / 80;
    want += u.count * (e0 >= e ? 0 : (std::exp(e) - std::exp(e0)) / (1 + std::exp(e)));
  }
  CHECK(h.delta >= want);
  CHECK(h.delta <= want * (1 + kSameBound) + 1e-300);
}

TEST_CASE("heterogeneous advanced composition is Kairouz, Oh and Viswanath's Thm 3.5") {
  // Pure steps (the split δ0 = 0 wins), and (ε, δ) steps (δ0 ≥ 1e-9 each).
  const std::vector<Use> approximate = {{0.1, 30, 1e-9}, {0.3, 50, 1e-10}};
  for (const auto& ledger : {kLedger, approximate})
    for (auto method : {CompositionMethod::advanced, CompositionMethod::optimal}) {
      auto acc = composition(method);
      acc->compose(*ledger_event(ledger));
      const double delta = 1e-6;
      const Guarantee g = acc->epsilon(delta);
      const Real d0 = detail_of(g, "delta_step"), slack = detail_of(g, "delta_slack");
      REQUIRE(slack > 0);
      // The theorem at the split reported, in long double.
      Real sum = 0, mean = 0, squares = 0, log_keep = 0;
      for (const auto& u : ledger) {
        const Real e = rr_epsilon(u.epsilon, d0, u.delta);
        sum += u.count * e;
        mean += u.count * e * (std::exp(e) - 1) / (std::exp(e) + 1);
        squares += u.count * e * e;
        log_keep += static_cast<Real>(u.count) * std::log1p(-d0);
      }
      const Real theorem = std::min(sum, mean + std::sqrt(2 * squares * std::log(1 / slack)));
      CHECK(g.epsilon >= theorem);
      CHECK(g.epsilon <= theorem * (1 + kSameBound));
      // Its δ, 1 − (1 − δ̃)Π(1 − δ0)^k = δ̃ + (1 − δ̃)(1 − Π(1 − δ0)^k), within the target.
      CHECK(slack + (1 - slack) * -std::expm1(log_keep) <= Real(delta));
      // Tighter than basic composition here (many small steps).
      auto basic = composition(CompositionMethod::basic);
      basic->compose(*ledger_event(ledger));
      CHECK(g.epsilon < basic->epsilon(delta).epsilon);
      // And δ at that ε is at most the δ it was computed for.
      CHECK(acc->delta(g.epsilon).delta <= delta * 1.01);
      bool said = false;
      for (const auto& n : g.notes) said = said || n.find("Thm 3.5") != std::string::npos;
      CHECK(said);
    }
}

TEST_CASE("heterogeneous composition never reports less than pld's lower end") {
  // Two Poisson-sampled Gaussian phases: the schedule of a warm-up and a main phase.
  const EventPtr run =
      make_composed({make_self_composed(200, make_poisson_sampled(0.02, make_gaussian(2.0))),
                     make_self_composed(500, make_poisson_sampled(0.01, make_gaussian(1.0)))});
  AccountantOptions o;
  auto pld = make_accountant("pld", o);
  pld->compose(*run);
  for (auto method :
       {CompositionMethod::basic, CompositionMethod::advanced, CompositionMethod::optimal}) {
    auto acc = composition(method);
    acc->compose(*run);
    for (double delta : {1e-3, 1e-5, 1e-8}) {
      INFO("delta ", delta);
      const Guarantee p = pld->epsilon(delta);
      REQUIRE(p.epsilon_lower);
      CHECK(acc->epsilon(delta).epsilon >= *p.epsilon_lower);
    }
    for (double epsilon : {1.0, 4.0}) {
      const Guarantee p = pld->delta(epsilon);
      REQUIRE(p.delta_lower);
      CHECK(acc->delta(epsilon).delta >= *p.delta_lower);
    }
  }
}

TEST_CASE("a ledger of one step repeated is composed by the homogeneous theorem as before") {
  // 80 uses of one step in two self_composed parts: one ledger entry.
  const EventPtr split =
      make_composed({make_self_composed(30, make_event(EpsilonDeltaEvent{0.2, 0.0})),
                     make_self_composed(50, make_event(EpsilonDeltaEvent{0.2, 0.0}))});
  const EventPtr whole = make_self_composed(80, make_event(EpsilonDeltaEvent{0.2, 0.0}));
  for (auto method :
       {CompositionMethod::basic, CompositionMethod::advanced, CompositionMethod::optimal}) {
    auto a = composition(method), b = composition(method);
    a->compose(*split);
    b->compose(*whole);
    CHECK(a->epsilon(1e-6).epsilon == b->epsilon(1e-6).epsilon);
    CHECK(a->delta(3).delta == b->delta(3).delta);
  }
}

TEST_CASE("a ledger mixing replace-one and add-remove steps is refused without a relation") {
  const EventPtr mixed =
      make_composed({make_poisson_sampled(0.01, make_gaussian(1.0)),
                     make_sampled_without_replacement(1000, 10, make_gaussian(1.0))});
  auto acc = composition(CompositionMethod::optimal);
  const auto why = acc->unsupported_reason(*mixed);
  REQUIRE(why);
  CHECK(why->find("replace_one") != std::string::npos);
  CHECK(why->find("add_remove") != std::string::npos);
  CHECK_THROWS_AS(acc->compose(*mixed), UnsupportedEvent);
}
