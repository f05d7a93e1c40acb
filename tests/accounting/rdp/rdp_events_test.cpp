// The RDP accountant on the event kinds beyond the Gaussian and the Laplace
// mechanism: the rdp rows of tests/reference/events.csv (dp_accounting 0.6.0
// on its default orders), closed forms, and 50-digit mpmath values.
#include "accounting/rdp/rdp_events.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "accounting/accountant.hpp"
#include "accounting/errors.hpp"
#include "accounting/events/events.hpp"
#include "accounting/rdp/rdp.hpp"
#include "support/close.hpp"
#include "support/limits.hpp"

using namespace dpb;
using dpb::test::close_rel;

namespace {

using dpb::test::kInf;

/// events.csv's `rdp` check: ours ≤ value·(1 + 1e-6) (never above the peer
/// beyond round-off) and ≥ value·(1 − 5e-3) (ours may be tighter where the
/// peer sums absolute bounds). tests/reference/README.md.
constexpr double kAboveReference = 1e-6;
constexpr double kBelowReference = 5e-3;
/// Agreement of two evaluations of the same bound by different formulas.
using dpb::test::kSameBound;
/// Two double formulas of the same divergence, each rounded up by 16 u of
/// its terms' magnitude (up to ~400 at order 1024).
constexpr double kTwoFormulas = 1e-12;
/// Agreement with a 50-digit mpmath value: a few roundings of the double
/// formulas plus their round-up (16 u of the magnitude of their log-space
/// terms, divided by α − 1: up to ~4e-13 relative for a small divergence).
constexpr double kMpmathRel = 1e-12;

std::unique_ptr<Accountant> rdp(std::optional<Neighbouring> relation) {
  AccountantOptions o;
  o.neighbouring = relation;
  return make_accountant("rdp", o);
}

double rdp_epsilon(const EventPtr& e, std::optional<Neighbouring> relation, double delta) {
  auto acc = rdp(relation);
  acc->compose(*e);
  return acc->epsilon(delta).epsilon;
}

void check_reference(const EventPtr& e, Neighbouring relation, double delta, double value) {
  const double ours = rdp_epsilon(e, relation, delta);
  CHECK(ours <= value * (1 + kAboveReference));
  CHECK(ours >= value * (1 - kBelowReference));
}

}  // namespace

TEST_CASE("rdp rows of events.csv (dp_accounting 0.6.0, default orders)") {
  const auto ar = Neighbouring::add_remove;
  SUBCASE("epsilon_delta_rdp_single") {
    check_reference(make_event(EpsilonDeltaEvent{1.0, 1e-6}), ar, 1e-5, 1.0032981817475888);
  }
  SUBCASE("discrete_gaussian_rdp_single") {
    check_reference(make_event(DiscreteGaussianEvent{2.0, 1}), ar, 1e-5, 2.1657156590294431);
  }
  SUBCASE("randomized_response_rdp_r1_k100") {
    check_reference(make_self_composed(100, make_event(RandomizedResponseEvent{0.5, 2})),
                    Neighbouring::replace_one, 1e-5, 93.444373929765703);
  }
  SUBCASE("zcdp_rdp_single") {
    check_reference(make_event(ZcdpEvent{0.1, 0.0}), ar, 1e-5, 1.9142498748403742);
  }
  SUBCASE("exponential_mechanism_rdp_k100 (the count honoured)") {
    check_reference(make_self_composed(100, make_event(ExponentialMechanismEvent{0.5})), ar, 1e-5,
                    14.121435389274911);
  }
  SUBCASE("tree_rdp_nm1_t100") {
    check_reference(make_event(SingleEpochTreeAggregationEvent{1.0, {100}}),
                    Neighbouring::replace_special, 1e-5, 15.175419826263621);
  }
  SUBCASE("repeat_and_select_rdp_geometric") {
    check_reference(make_event(RepeatAndSelectEvent{make_gaussian(2.0), 10.0, 1.0}), ar, 1e-5,
                    4.3150722993888255);
  }
  SUBCASE("permute_and_flip_rdp_single: a generic eps-DP mechanism, above the reference") {
    // Deviation: dp_accounting gives permute-and-flip the Laplace(1/ε) curve,
    // for which no proof is published; we use binary randomized response,
    // which bounds every ε-DP mechanism. So ours is the epsilon_delta{ε, 0}
    // value exactly, and at least the reference 1.0028243238705594.
    const double ours = rdp_epsilon(make_event(PermuteAndFlipEvent{1.0}), ar, 1e-5);
    CHECK(ours == rdp_epsilon(make_event(EpsilonDeltaEvent{1.0, 0.0}), ar, 1e-5));
    CHECK(ours >= 1.0028243238705594);
  }
  SUBCASE("composed_mix_rdp: with permute_and_flip as an eps-DP mechanism") {
    // Deviation as above: permute_and_flip(0.2) is read as a generic 0.2-DP
    // mechanism, so ours equals the same ledger with epsilon_delta{0.2, 0}
    // in its place, and is at least the reference 3.2674144234586202.
    auto ledger = [](EventPtr last) {
      return make_composed({make_self_composed(10, make_gaussian(5.0)),
                            make_event(ZcdpEvent{0.01, 0.0}), make_laplace(10.0),
                            make_event(DiscreteGaussianEvent{4.0, 1}), std::move(last)});
    };
    const double ours = rdp_epsilon(ledger(make_event(PermuteAndFlipEvent{0.2})), ar, 1e-5);
    CHECK(ours == rdp_epsilon(ledger(make_event(EpsilonDeltaEvent{0.2, 0.0})), ar, 1e-5));
    CHECK(ours >= 3.2674144234586202);
    // The gap is the Laplace-vs-randomized-response difference of one 0.2-DP
    // step: small (below 2% here).
    CHECK(ours <= 3.2674144234586202 * 1.02);
  }
}

TEST_CASE("rdp: closed forms of the guarantee kinds") {
  const std::vector<double> orders = default_rdp_orders();
  SUBCASE("zcdp: epsilon is the conversion of xi + rho * alpha") {
    const double rho = 0.3, xi = 0.05;
    std::vector<double> curve;
    for (double a : orders) curve.push_back(xi + rho * a);
    const double expected = epsilon_from_rdp(orders, curve, 1e-6, RdpConversion::improved).epsilon;
    for (auto rel : {Neighbouring::add_remove, Neighbouring::replace_one}) {
      const double ours = rdp_epsilon(make_event(ZcdpEvent{rho, xi}), rel, 1e-6);
      CHECK(close_rel(ours, expected, kSameBound));
    }
  }
  SUBCASE("discrete_gaussian is zcdp with rho = (s * Delta)^2 / (2 sigma^2)") {
    const double sigma = 3.0;
    const std::int64_t sens = 2;
    const double rho = 4.0 / (2 * sigma * sigma);
    const auto dg = make_event(DiscreteGaussianEvent{sigma, sens});
    CHECK(close_rel(rdp_epsilon(dg, Neighbouring::add_remove, 1e-5),
                    rdp_epsilon(make_event(ZcdpEvent{rho, 0}), Neighbouring::add_remove, 1e-5),
                    kSameBound));
    CHECK(close_rel(rdp_epsilon(dg, Neighbouring::replace_special, 1e-5),
                    rdp_epsilon(make_event(ZcdpEvent{rho, 0}), Neighbouring::add_remove, 1e-5),
                    kSameBound));
    // Replace-one: a record moves the query by 2Δ, ρ four times larger.
    CHECK(close_rel(rdp_epsilon(dg, Neighbouring::replace_one, 1e-5),
                    rdp_epsilon(make_event(ZcdpEvent{4 * rho, 0}), Neighbouring::add_remove, 1e-5),
                    kSameBound));
  }
  SUBCASE("non_private: epsilon = inf, delta = 1, no NaN") {
    for (auto rel : {std::optional<Neighbouring>{}, std::optional{Neighbouring::replace_one}}) {
      auto acc = rdp(rel);
      acc->compose(*make_gaussian(1.0));
      acc->compose(*make_event(NonPrivateEvent{}));
      CHECK(acc->epsilon(1e-5).epsilon == kInf);
      CHECK(acc->delta(10.0).delta == 1);
    }
  }
  SUBCASE("no_op: nothing") {
    auto acc = rdp(std::nullopt);
    acc->compose(*make_event(NoOpEvent{}), 1000);
    CHECK(acc->epsilon(1e-5).epsilon == 0);
    CHECK(acc->delta(0.0).delta == 0);
  }
  SUBCASE("epsilon_delta: the extra delta") {
    // Two (0.5, 1e-6) events: δ_extra = 1 − (1 − 1e-6)², and ε(δ) is the curve
    // of two 0.5-DP randomized responses at δ' with 1 − δ = (1 − δ')(1 − δ_extra).
    const auto e = make_event(EpsilonDeltaEvent{0.5, 1e-6});
    auto acc = rdp(Neighbouring::add_remove);
    acc->compose(*e, 2);
    const double extra = 1 - (1 - 1e-6) * (1 - 1e-6);
    const double delta = 1e-5;
    const double d_eff = 1 - (1 - delta) / (1 - extra);
    auto pure = rdp(Neighbouring::add_remove);
    pure->compose(*make_event(EpsilonDeltaEvent{0.5, 0}), 2);
    CHECK(close_rel(acc->epsilon(delta).epsilon, pure->epsilon(d_eff).epsilon, 1e-9));
    // δ below δ_extra: no finite ε.
    CHECK(acc->epsilon(1e-6).epsilon == kInf);
    // δ(ε) = d + d_extra − d·d_extra.
    const double d = pure->delta(0.8).delta;
    CHECK(close_rel(acc->delta(0.8).delta, d + extra - d * extra, 1e-12));
  }
}

TEST_CASE("rdp: curves against 50-digit values (mpmath)") {
  // Printed by mpmath at 50 digits from the explicit output distributions:
  // D_α(P‖Q) = log Σ P^α Q^{1−α} / (α − 1) with, for k-ary randomized response,
  // P = (1 − p + p/k, p/k, ...), Q = P with buckets 1, 2 swapped (replace-one),
  // U uniform (replace-special: max of D_α(P‖U), D_α(U‖P)).
  struct RrCase {
    double p;
    std::int64_t k;
    double alpha, replace_one, replace_special;
  };
  const RrCase cases[] = {
      {0.5, 4, 1.5, 1.0653043858127250055, 0.45168271671225925578},
      {0.5, 4, 2, 1.2237754316221157056, 0.55961578793542268627},
      {0.5, 4, 10, 1.5572153097179110306, 0.86406814053573476079},
      {0.5, 4, 256, 1.607594760946862196, 0.91444758038691688654},
      {0.1, 10, 1.5, 4.3408244155562957167, 2.1150246578146725944},
      {0.1, 10, 256, 4.5104896607150019749, 2.3021719145012698391},
      {0.9, 3, 1.5, 0.042912002747223105559, 0.014721734116965949975},
      {0.9, 3, 10, 0.19240309191744077021, 0.092369687950954797574},
  };
  for (const auto& c : cases) {
    INFO("p = ", c.p, ", k = ", c.k, ", alpha = ", c.alpha);
    const double ro = rdp_randomized_response_replace_one(c.p, c.k, c.alpha);
    const double rs = rdp_randomized_response_replace_special(c.p, c.k, c.alpha);
    CHECK(ro >= c.replace_one);
    CHECK(close_rel(ro, c.replace_one, kMpmathRel));
    CHECK(rs >= c.replace_special);
    CHECK(close_rel(rs, c.replace_special, kMpmathRel));
  }
  // Binary randomized response with p = e^ε/(1 + e^ε), same way.
  struct PureCase {
    double epsilon, alpha, value;
  };
  const PureCase pure[] = {
      {1.0, 1.1, 0.50020779819808358411},  {1.0, 2, 0.73532566405551922471},
      {1.0, 64, 0.99502759226161551057},   {1e-4, 1.1, 5.4999999944083343115e-9},
      {1e-4, 2, 9.9999999583333345445e-9}, {1e-4, 64, 3.199978493564584828e-7},
      {30.0, 1.1, 29.999999999999066557},  {30.0, 64, 29.999999999999998515},
  };
  for (const auto& c : pure) {
    INFO("epsilon = ", c.epsilon, ", alpha = ", c.alpha);
    const double v = rdp_pure_dp(c.epsilon, c.alpha);
    CHECK(v >= c.value);
    CHECK(close_rel(v, c.value, kMpmathRel));
  }
  // ξ = t − 1 − log t − ε²/8, t = ε/(e^ε − 1).
  CHECK(close_rel(exponential_mechanism_xi(0.5), -0.00010790773884412041186, 1e-15));
  CHECK(close_rel(exponential_mechanism_xi(1e-3), -1.7361110725308652722e-15, 1e-15));
  CHECK(close_rel(exponential_mechanism_xi(5.0), -0.70728038735206777695, 1e-15));
}

TEST_CASE("rdp: randomized_response") {
  SUBCASE("binary, replace-one, is binary randomized response with eps = log((1-p/2)/(p/2))") {
    for (double a : {1.1, 2.0, 7.5, 1024.0})
      CHECK(close_rel(rdp_randomized_response_replace_one(0.5, 2, a), rdp_pure_dp(std::log(3.0), a),
                      kTwoFormulas));
  }
  SUBCASE("p = 1 or one bucket: nothing released") {
    for (auto rel : {Neighbouring::replace_one, Neighbouring::replace_special}) {
      CHECK(rdp_epsilon(make_event(RandomizedResponseEvent{1.0, 5}), rel, 1e-5) == 0);
      CHECK(rdp_epsilon(make_event(RandomizedResponseEvent{0.3, 1}), rel, 1e-5) == 0);
    }
  }
  SUBCASE("p = 0: the bucket itself, epsilon = inf") {
    CHECK(rdp_epsilon(make_event(RandomizedResponseEvent{0.0, 3}), Neighbouring::replace_one,
                      1e-5) == kInf);
  }
  SUBCASE("refused under add_remove and when no relation is chosen") {
    const auto e = make_event(RandomizedResponseEvent{0.5, 2});
    const auto why = rdp(Neighbouring::add_remove)->unsupported_reason(*e);
    REQUIRE(why);
    CHECK(why->find("add_remove") != std::string::npos);
    const auto inferred = rdp(std::nullopt)->unsupported_reason(*e);
    REQUIRE(inferred);
    CHECK(inferred->find("replace_special") != std::string::npos);
  }
}

TEST_CASE("rdp: single_epoch_tree_aggregation") {
  // depth = ⌈log2(max T + 1)⌉: T = 100 → 7, and the tree is a Gaussian of
  // sensitivity √7 (replace-special) or 2√7 (replace-one).
  CHECK(tree_aggregation_depth(std::vector<std::int64_t>{100, 3}) == 7);
  CHECK(tree_aggregation_depth(std::vector<std::int64_t>{1}) == 1);
  CHECK(tree_aggregation_depth(std::vector<std::int64_t>{4}) == 3);
  CHECK(tree_aggregation_depth(std::vector<std::int64_t>{7, 0}) == 3);
  const auto tree = make_event(SingleEpochTreeAggregationEvent{2.0, {100, 3}});
  const double special = rdp_epsilon(tree, Neighbouring::replace_special, 1e-5);
  CHECK(close_rel(special,
                  rdp_epsilon(make_gaussian(2.0 / std::sqrt(7.0)), Neighbouring::add_remove, 1e-5),
                  1e-12));
  CHECK(close_rel(rdp_epsilon(tree, Neighbouring::replace_one, 1e-5),
                  rdp_epsilon(make_gaussian(1.0 / std::sqrt(7.0)), Neighbouring::add_remove, 1e-5),
                  1e-12));
  CHECK(rdp(Neighbouring::add_remove)->unsupported_reason(*tree));
  CHECK(rdp(std::nullopt)->unsupported_reason(*tree));
}

TEST_CASE("rdp: repeat_and_select") {
  const std::vector<double> orders = default_rdp_orders();
  const double sigma = 2.0;
  SUBCASE("mean 1 (K = 1 surely, gamma = 1): the run's curve plus Thm 2's constant term") {
    // Thm 2 with γ = 1, η = 1, E[K] = 1: ε' = ε(λ) + 2·min_λ̂ (1 − 1/λ̂)ε(λ̂),
    // and for the Gaussian (1 − 1/λ̂)·λ̂/(2σ²) = (λ̂ − 1)/(2σ²), smallest at the
    // smallest order 1.1: ε'(λ) = (λ + 2·0.1)/(2σ²).
    std::vector<double> curve;
    for (double a : orders) curve.push_back((a + 2 * (orders.front() - 1)) / (2 * sigma * sigma));
    const double expected = epsilon_from_rdp(orders, curve, 1e-5, RdpConversion::improved).epsilon;
    const auto e = make_event(RepeatAndSelectEvent{make_gaussian(sigma), 1.0, 1.0});
    CHECK(close_rel(rdp_epsilon(e, Neighbouring::add_remove, 1e-5), expected, 1e-12));
  }
  SUBCASE("every shape bounds at least one run") {
    const double single = rdp_epsilon(make_gaussian(sigma), Neighbouring::add_remove, 1e-5);
    for (double shape : {0.0, 0.5, 1.0, 3.0, kInf}) {
      INFO("shape = ", shape);
      const double e =
          rdp_epsilon(make_event(RepeatAndSelectEvent{make_gaussian(sigma), 10.0, shape}),
                      Neighbouring::add_remove, 1e-5);
      CHECK(std::isfinite(e));
      CHECK(e >= single);
    }
  }
  SUBCASE("the count multiplies, and the relation reaches the inner event") {
    const auto e = make_event(RepeatAndSelectEvent{make_gaussian(sigma), 10.0, 1.0});
    auto once = rdp(Neighbouring::add_remove);
    once->compose(*e);
    auto thrice = rdp(Neighbouring::add_remove);
    thrice->compose(*make_self_composed(3, e));
    CHECK(thrice->epsilon(1e-5).epsilon > once->epsilon(1e-5).epsilon);
    // Under replace-one the inner Gaussian has sensitivity 2: as σ/2 under add/remove.
    CHECK(
        close_rel(rdp_epsilon(e, Neighbouring::replace_one, 1e-5),
                  rdp_epsilon(make_event(RepeatAndSelectEvent{make_gaussian(sigma / 2), 10.0, 1.0}),
                              Neighbouring::add_remove, 1e-5),
                  1e-12));
  }
  SUBCASE("gamma of the truncated negative binomial") {
    CHECK(truncated_negative_binomial_gamma(1.0, 4.0) == 0.25);
    CHECK(truncated_negative_binomial_gamma(2.0, 1.0) == 1.0);
    // η = 2: mean = 2(1 − γ)/(γ(1 − γ²)) = 2/(γ(1 + γ)); mean 4 ⇒ γ² + γ − ½ = 0.
    const double g = truncated_negative_binomial_gamma(2.0, 4.0);
    const double exact = (-1 + std::sqrt(3.0)) / 2;
    CHECK(g <= exact);
    CHECK(close_rel(g, exact, 1e-11));
  }
  SUBCASE("an inner epsilon_delta with delta > 0 is refused") {
    const auto e = make_event(RepeatAndSelectEvent{make_event(EpsilonDeltaEvent{1, 1e-6}), 3, 1});
    CHECK(rdp(std::nullopt)->unsupported_reason(*e));
  }
}

TEST_CASE("rdp: the chosen relation fixes every leaf") {
  const auto sampled = make_poisson_sampled(0.01, make_gaussian(1.0));
  // Poisson sampling: add/remove and replace-special are the same analysis.
  CHECK(rdp_epsilon(sampled, Neighbouring::replace_special, 1e-5) ==
        rdp_epsilon(sampled, Neighbouring::add_remove, 1e-5));
  CHECK(rdp(Neighbouring::replace_one)->unsupported_reason(*sampled));
  const auto wor = make_sampled_without_replacement(1000, 10, make_gaussian(1.0));
  CHECK(rdp(Neighbouring::add_remove)->unsupported_reason(*wor));
  CHECK(rdp(Neighbouring::replace_special)->unsupported_reason(*wor));
  CHECK(rdp_epsilon(wor, Neighbouring::replace_one, 1e-5) == rdp_epsilon(wor, std::nullopt, 1e-5));
  // Unsampled Gaussian and Laplace: sensitivity 2 under replace-one.
  CHECK(close_rel(rdp_epsilon(make_gaussian(2.0), Neighbouring::replace_one, 1e-5),
                  rdp_epsilon(make_gaussian(1.0), Neighbouring::replace_special, 1e-5), 1e-12));
  CHECK(close_rel(rdp_epsilon(make_laplace(2.0), Neighbouring::replace_one, 1e-5),
                  rdp_epsilon(make_laplace(1.0), Neighbouring::add_remove, 1e-5), 1e-12));
  // Discrete Laplace: ε = aΔ·s; Δ = 1 is exactly binary randomized response.
  CHECK(rdp_epsilon(make_event(DiscreteLaplaceEvent{0.5, 1}), Neighbouring::replace_one, 1e-5) ==
        rdp_epsilon(make_event(EpsilonDeltaEvent{1.0, 0}), Neighbouring::add_remove, 1e-5));
  // Guarantees hold as stated under every relation.
  const auto em = make_event(ExponentialMechanismEvent{0.7});
  CHECK(rdp_epsilon(em, Neighbouring::replace_one, 1e-5) ==
        rdp_epsilon(em, Neighbouring::add_remove, 1e-5));
  // Sampled zCDP / discrete Gaussian: refused (no published analysis).
  CHECK(rdp(std::nullopt)
            ->unsupported_reason(*make_poisson_sampled(0.1, make_event(ZcdpEvent{0.1, 0}))));
  CHECK(rdp(std::nullopt)
            ->unsupported_reason(
                *make_poisson_sampled(0.1, make_event(DiscreteGaussianEvent{1.0, 1}))));
  const auto why =
      rdp(std::nullopt)
          ->unsupported_reason(*make_event(TruncatedSubsampledGaussianEvent{1000, 0.01, 20, 1.0}));
  REQUIRE(why);
  CHECK(why->find("pld") != std::string::npos);
}
