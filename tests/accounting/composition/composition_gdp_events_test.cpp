// The composition and GDP accountants on the event kinds beyond the Gaussian
// and the Laplace mechanism: closed forms of the per-use profiles, cross-checks
// between kinds, and the neighbouring relation.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "accounting/accountant.hpp"
#include "accounting/events/events.hpp"
#include "support/close.hpp"
#include "support/guarantee.hpp"
#include "support/limits.hpp"

using namespace dpb;
using dpb::test::close_rel;
using dpb::test::detail_of;

namespace {

using dpb::test::kInf;
/// Two routes to the same bound (the same per-use profile reached from
/// different kinds, or a closed form evaluated here): a few roundings plus
/// the profiles' round-up (8 machine epsilons).
using dpb::test::kSameBound;
std::unique_ptr<Accountant> make(const char* name, std::optional<Neighbouring> relation,
                                 CompositionMethod method = CompositionMethod::optimal) {
  AccountantOptions o;
  o.neighbouring = relation;
  o.composition.method = method;
  return make_accountant(name, o);
}

double eps(const char* name, const EventPtr& e, std::optional<Neighbouring> relation, double delta,
           CompositionMethod method = CompositionMethod::optimal) {
  auto acc = make(name, relation, method);
  acc->compose(*e);
  return acc->epsilon(delta).epsilon;
}

const auto kAr = Neighbouring::add_remove;
const auto kRo = Neighbouring::replace_one;
const auto kRs = Neighbouring::replace_special;

}  // namespace

TEST_CASE("composition: epsilon_delta and pure epsilon-DP events") {
  SUBCASE("one (eps, delta) step: the dominating randomized response's profile") {
    // (ε, δ_e)-RR has δ(ε0) = δ_e + (1 − δ_e)(e^ε − e^ε0)/(1 + e^ε), so at
    // δ: e^ε0 = e^ε − x(1 + e^ε), x = (δ − δ_e)/(1 − δ_e).
    const double e = 1.0, de = 1e-6, delta = 1e-5;
    const double x = (delta - de) / (1 - de);
    const double expected = std::log(std::exp(e) - x * (1 + std::exp(e)));
    const double ours = eps("composition", make_event(EpsilonDeltaEvent{e, de}), kAr, delta,
                            CompositionMethod::basic);
    CHECK(ours >= expected);
    CHECK(close_rel(ours, expected, kSameBound));
  }
  SUBCASE("delta below the event's own delta: epsilon = inf") {
    CHECK(eps("composition", make_event(EpsilonDeltaEvent{1.0, 1e-4}), kAr, 1e-5) == kInf);
  }
  SUBCASE("every eps-DP kind is the same step") {
    const double ed = eps("composition",
                          make_self_composed(20, make_event(EpsilonDeltaEvent{0.3, 0})), kAr, 1e-6);
    CHECK(std::isfinite(ed));
    CHECK(ed < 20 * 0.3);  // the optimal theorem beats basic composition here
    for (const auto& e :
         {make_event(ExponentialMechanismEvent{0.3}), make_event(PermuteAndFlipEvent{0.3}),
          make_event(DiscreteLaplaceEvent{0.1, 3})}) {
      INFO(event_name(*e));
      CHECK(close_rel(eps("composition", make_self_composed(20, e), kAr, 1e-6), ed, kSameBound));
    }
    // Discrete Laplace under replace-one: ε = 2aΔ.
    CHECK(
        close_rel(eps("composition",
                      make_self_composed(20, make_event(DiscreteLaplaceEvent{0.05, 3})), kRo, 1e-6),
                  ed, kSameBound));
  }
  SUBCASE("the Laplace mechanism's own profile is tighter than the generic eps-DP one") {
    CHECK(eps("composition", make_self_composed(20, make_laplace(2.0)), kAr, 1e-6) <=
          eps("composition", make_self_composed(20, make_event(EpsilonDeltaEvent{0.5, 0})), kAr,
              1e-6));
  }
  SUBCASE("poisson_sampled eps-DP: amplified to log(1 + q(e^eps - 1))") {
    const double q = 0.1, e = 1.0;
    const double amplified = std::log1p(q * std::expm1(e));
    auto acc = make("composition", kAr, CompositionMethod::basic);
    acc->compose(*make_poisson_sampled(q, make_event(ExponentialMechanismEvent{e})));
    CHECK(acc->epsilon(1e-5).epsilon <= amplified * (1 + kSameBound));
    CHECK(acc->delta(amplified * (1 + 1e-9)).delta == 0);
    CHECK(acc->delta(amplified * 0.9).delta > 0);
    // Under replace-one, Poisson sampling is refused; without replacement it is not.
    CHECK(make("composition", kRo)
              ->unsupported_reason(
                  *make_poisson_sampled(q, make_event(ExponentialMechanismEvent{e}))));
    CHECK_FALSE(make("composition", kRo)
                    ->unsupported_reason(*make_sampled_without_replacement(
                        100, 10, make_event(ExponentialMechanismEvent{e}))));
  }
}

TEST_CASE("composition: zcdp, discrete_gaussian, tree aggregation") {
  SUBCASE("zcdp: eps = xi + rho + 2 sqrt(rho log(1/delta)) (Bun & Steinke 2016, Prop. 1.3)") {
    const double rho = 0.05, xi = 0.01, delta = 1e-6;
    const double expected = xi + rho + 2 * std::sqrt(rho * std::log(1 / delta));
    const double ours =
        eps("composition", make_event(ZcdpEvent{rho, xi}), kAr, delta, CompositionMethod::basic);
    CHECK(ours >= expected);
    CHECK(close_rel(ours, expected, kSameBound));
  }
  SUBCASE("discrete_gaussian is zcdp with rho = (s Delta)^2 / (2 sigma^2)") {
    const double sigma = 3.0, rho = 4.0 / (2 * sigma * sigma);
    const auto dg = make_self_composed(5, make_event(DiscreteGaussianEvent{sigma, 2}));
    const double z =
        eps("composition", make_self_composed(5, make_event(ZcdpEvent{rho, 0})), kAr, 1e-6);
    CHECK(close_rel(eps("composition", dg, kAr, 1e-6), z, kSameBound));
    CHECK(close_rel(eps("composition", dg, kRs, 1e-6), z, kSameBound));
    CHECK(close_rel(
        eps("composition", dg, kRo, 1e-6),
        eps("composition", make_self_composed(5, make_event(ZcdpEvent{4 * rho, 0})), kAr, 1e-6),
        kSameBound));
  }
  SUBCASE("tree aggregation: a Gaussian of sensitivity sqrt(depth), x2 under replace-one") {
    // step counts {5, 2}: depth ⌈log2 6⌉ = 3.
    const auto tree = make_event(SingleEpochTreeAggregationEvent{4.0, {5, 2}});
    CHECK(close_rel(eps("composition", tree, kRs, 1e-6),
                    eps("composition", make_gaussian(4.0 / std::sqrt(3.0)), kAr, 1e-6),
                    kSameBound));
    CHECK(close_rel(eps("composition", tree, kRo, 1e-6),
                    eps("composition", make_gaussian(2.0 / std::sqrt(3.0)), kAr, 1e-6),
                    kSameBound));
    CHECK(make("composition", std::nullopt)->unsupported_reason(*tree));
    CHECK(make("composition", kAr)->unsupported_reason(*tree));
  }
}

TEST_CASE("composition: randomized_response, no_op, non_private, refusals") {
  SUBCASE("binary randomized response, replace-one: pure log 3 (p = 1/2)") {
    const auto rr = make_self_composed(10, make_event(RandomizedResponseEvent{0.5, 2}));
    CHECK(close_rel(
        eps("composition", rr, kRo, 1e-6),
        eps("composition", make_self_composed(10, make_event(EpsilonDeltaEvent{std::log(3.0), 0})),
            kRo, 1e-6),
        kSameBound));
    // Replace-special, k = 2, p = 1/2: max(log 1.5, log 2) = log 2.
    CHECK(close_rel(
        eps("composition", rr, kRs, 1e-6),
        eps("composition", make_self_composed(10, make_event(EpsilonDeltaEvent{std::log(2.0), 0})),
            kRs, 1e-6),
        kSameBound));
    const auto why = make("composition", std::nullopt)->unsupported_reason(*rr);
    REQUIRE(why);
    CHECK(why->find("replace_special") != std::string::npos);
  }
  SUBCASE("no_op adds nothing and composes with any step") {
    const double g = eps("composition", make_self_composed(4, make_gaussian(2.0)), kAr, 1e-5);
    CHECK(eps("composition",
              make_composed({make_self_composed(4, make_gaussian(2.0)), make_event(NoOpEvent{})}),
              kAr, 1e-5) == g);
    CHECK(eps("composition", make_event(NoOpEvent{}), kAr, 1e-5) == 0);
  }
  SUBCASE("non_private: epsilon = inf, delta = 1") {
    auto acc = make("composition", std::nullopt);
    acc->compose(*make_event(NonPrivateEvent{}), 3);
    CHECK(acc->epsilon(1e-5).epsilon == kInf);
    CHECK(acc->delta(5.0).delta == 1);
  }
  SUBCASE("kinds without a per-use profile are refused with a reason") {
    for (const auto& e : {make_event(TruncatedSubsampledGaussianEvent{1000, 0.01, 20, 1.0}),
                          make_event(RepeatAndSelectEvent{make_gaussian(1.0), 3.0, 1.0})}) {
      const auto why = make("composition", kAr)->unsupported_reason(*e);
      REQUIRE(why);
      CHECK(why->rfind("composition: ", 0) == 0);
    }
  }
}

TEST_CASE("gdp: the new kinds and the neighbouring relation") {
  SUBCASE("gaussian: mu = s / sigma") {
    auto acc = make("gdp", kRo);
    acc->compose(*make_gaussian(4.0));
    CHECK(detail_of(acc->epsilon(1e-5), "mu") == 0.5);
    CHECK(acc->epsilon(1e-5).neighbouring == kRo);
    auto ar = make("gdp", kRs);
    ar->compose(*make_gaussian(4.0));
    CHECK(detail_of(ar->epsilon(1e-5), "mu") == 0.25);
  }
  SUBCASE("tree aggregation: mu = s sqrt(depth) / sigma exactly") {
    const auto tree = make_event(SingleEpochTreeAggregationEvent{2.0, {100}});  // depth 7
    auto rs = make("gdp", kRs);
    rs->compose(*tree);
    const Guarantee g = rs->epsilon(1e-5);
    CHECK(close_rel(detail_of(g, "mu"), std::sqrt(7.0) / 2, kSameBound));
    CHECK(g.bound == BoundKind::upper);
    auto ro = make("gdp", kRo);
    ro->compose(*tree);
    CHECK(close_rel(detail_of(ro->epsilon(1e-5), "mu"), std::sqrt(7.0), kSameBound));
    CHECK(make("gdp", std::nullopt)->unsupported_reason(*tree));
    CHECK(make("gdp", kAr)->unsupported_reason(*tree));
  }
  SUBCASE("poisson_sampled gaussian: replace-special is the add/remove CLT") {
    const auto e = make_self_composed(1000, make_poisson_sampled(0.01, make_gaussian(1.0)));
    CHECK(eps("gdp", e, kRs, 1e-5) == eps("gdp", e, kAr, 1e-5));
    CHECK(eps("gdp", e, kRs, 1e-5) == eps("gdp", e, std::nullopt, 1e-5));
    CHECK(make("gdp", kRo)->unsupported_reason(*e));
    CHECK(make("gdp", kAr)
              ->unsupported_reason(*make_sampled_without_replacement(100, 10, make_gaussian(1.0))));
  }
  SUBCASE("no_op: mu 0; non_private: mu inf, epsilon inf, delta 1") {
    auto noop = make("gdp", std::nullopt);
    noop->compose(*make_event(NoOpEvent{}), 10);
    CHECK(noop->epsilon(1e-5).epsilon == 0);
    auto np = make("gdp", std::nullopt);
    np->compose(*make_gaussian(1.0));
    np->compose(*make_event(NonPrivateEvent{}));
    CHECK(np->epsilon(1e-5).epsilon == kInf);
    CHECK(np->delta(3.0).delta == 1);
  }
  SUBCASE("everything else: no exact mu") {
    for (const auto& e :
         {make_event(ZcdpEvent{0.1, 0}), make_event(EpsilonDeltaEvent{1, 0}),
          make_event(DiscreteGaussianEvent{1, 1}), make_event(ExponentialMechanismEvent{1})}) {
      const auto why = make("gdp", kRo)->unsupported_reason(*e);
      REQUIRE(why);
      CHECK(why->find("no exact mu-GDP characterisation") != std::string::npos);
    }
  }
}
