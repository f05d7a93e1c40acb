// The matrix-mechanism kinds (docs/matrix.md#event-kinds): matrix_mechanism
// against the gaussian at σ/Δ and the analytic Gaussian's closed form,
// banded_matrix_factorization against DP-SGD over ⌈T/b⌉ rounds (the count
// worked out here, and its neighbours shown to differ), the tree against
// single_epoch_tree_aggregation, a ledger mixing them with DP-SGD phases, and
// the refusals. Every accountant, every relation.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "accounting/accountant.hpp"
#include "accounting/accountant_descriptor.hpp"
#include "accounting/errors.hpp"
#include "accounting/events/events.hpp"
#include "accounting/numerics/multiprecision.hpp"
#include "accounting/numerics/outward.hpp"
#include "support/analytic_gaussian.hpp"
#include "support/close.hpp"
#include "support/guarantee.hpp"
#include "support/limits.hpp"

using namespace dpb;
using dpb::test::close_rel;
using dpb::test::detail_of;

namespace {

/// Two routes to the same Gaussian (σ/Δ rounded down against the quotient
/// rounded to nearest, one ulp apart; the tree's √depth against Δ = √depth):
/// a few roundings through each accountant's formulas.
using dpb::test::kSameBound;
constexpr double kMatrixDelta = 1e-5;

const std::vector<std::optional<Neighbouring>> kRelations = {std::nullopt, Neighbouring::add_remove,
                                                             Neighbouring::replace_one,
                                                             Neighbouring::replace_special};

std::string relation_name(const std::optional<Neighbouring>& r) {
  return r ? std::string(to_string(*r)) : std::string("inferred");
}

std::unique_ptr<Accountant> make(const std::string& name, std::optional<Neighbouring> relation) {
  AccountantOptions o;
  o.neighbouring = relation;
  return make_accountant(name, o);
}

/// ε at kMatrixDelta and δ at ε = 0.5 of `e`, or nullopt when refused.
struct Answer {
  double epsilon;
  double delta;
};
std::optional<Answer> answer(const std::string& name, std::optional<Neighbouring> relation,
                             const EventPtr& e) {
  auto acc = make(name, relation);
  if (acc->unsupported_reason(*e)) return std::nullopt;
  acc->compose(*e);
  return Answer{acc->epsilon(kMatrixDelta).epsilon, acc->delta(0.5).delta};
}

bool agree(double a, double b) { return a == b || close_rel(a, b, kSameBound); }

/// Checks that `a` and `b` get the same answer (or the same refusal) from
/// every accountant under every relation; returns how many answered.
int check_same_everywhere(const EventPtr& a, const EventPtr& b) {
  int answered = 0;
  for (const auto& info : accountants())
    for (const auto& relation : kRelations) {
      INFO("accountant ", info.name, ", relation ", relation_name(relation));
      const auto x = answer(info.name, relation, a);
      const auto y = answer(info.name, relation, b);
      REQUIRE(x.has_value() == y.has_value());
      if (!x) continue;
      ++answered;
      CHECK(agree(x->epsilon, y->epsilon));
      CHECK(agree(x->delta, y->delta));
    }
  return answered;
}

EventPtr matrix(double sigma, double sensitivity) {
  return make_event(MatrixMechanismEvent{sigma, sensitivity});
}

EventPtr banded(double q, double sigma, std::int64_t steps, std::int64_t bands) {
  return make_event(BandedMatrixFactorizationEvent{q, sigma, steps, bands});
}

}  // namespace

/// σ/Δ rounded down, worked out in 50 digits: the double nearest the
/// quotient, stepped down when it lies above.
double quotient_down_50(double sigma, double sens) {
  const mp50 exact = mp50(sigma) / mp50(sens);
  double m = static_cast<double>(exact);
  if (mp50(m) > exact) m = std::nextafter(m, 0.0);
  return m;
}

TEST_CASE("matrix_mechanism is the gaussian at sigma / sensitivity, in every accountant") {
  // σ/Δ a double (4/2) or not (the kind rounds it down; pld's grid follows σ,
  // so the gaussian compared with is at the same rounded-down quotient).
  // (No structured binding: clang 14 cannot capture one in INFO's lambda.)
  for (const auto& pair : std::vector<std::pair<double, double>>{
           {3.0, 1.7}, {4.0, 2.0}, {1.0, 1.0}, {10.0, std::sqrt(7.0)}}) {
    const double sigma = pair.first, delta_s = pair.second;
    INFO("sigma ", sigma, ", sensitivity ", delta_s);
    // Every accountant answers a plain Gaussian under every relation.
    CHECK(check_same_everywhere(matrix(sigma, delta_s),
                                make_gaussian(quotient_down_50(sigma, delta_s))) ==
          static_cast<int>(accountants().size() * kRelations.size()));
  }
}

TEST_CASE("matrix_mechanism against the analytic Gaussian's closed form") {
  // δ(ε) of the Gaussian at σ/Δ (Balle & Wang 2018, Thm 8), written in the
  // test; under replace_one one record moves C·x by 2Δ.
  const double sigma = 3.0, sens = 1.7, eps = 0.5;
  for (const auto& relation : kRelations) {
    INFO("relation ", relation_name(relation));
    const double factor = relation == Neighbouring::replace_one ? 2.0 : 1.0;
    const double exact = test::analytic_gaussian_delta(sigma / (factor * sens), eps);
    REQUIRE(exact > 1e-3);  // digits enough for the comparison
    // gdp: μ = factor·Δ/σ exactly, and its δ(ε) is the closed form.
    auto gdp = make("gdp", relation);
    gdp->compose(*matrix(sigma, sens));
    CHECK(close_rel(detail_of(gdp->epsilon(kMatrixDelta), "mu"), factor * sens / sigma, 1e-15));
    CHECK(close_rel(gdp->delta(eps).delta, exact, 1e-9));
    // composition of one Gaussian step: an upper bound on the exact profile
    // (its own margin is ~2e-7 relative here).
    auto comp = make("composition", relation);
    comp->compose(*matrix(sigma, sens));
    const double d = comp->delta(eps).delta;
    CHECK(d >= exact);
    CHECK(close_rel(d, exact, 1e-6));
    // pld: an interval holding the exact value.
    auto pld = make("pld", relation);
    pld->compose(*matrix(sigma, sens));
    const Guarantee g = pld->delta(eps);
    CHECK(g.delta >= exact * (1 - 1e-12));
    REQUIRE(g.delta_lower.has_value());
    CHECK(*g.delta_lower <= exact * (1 + 1e-12));
    // rdp: an upper bound on the exact profile.
    auto rdp = make("rdp", relation);
    rdp->compose(*matrix(sigma, sens));
    CHECK(rdp->delta(eps).delta >= exact);
  }
}

TEST_CASE("matrix_mechanism: sensitivity 0 is no privacy loss, exactly") {
  for (const auto& info : accountants())
    for (const auto& relation : kRelations) {
      INFO("accountant ", info.name, ", relation ", relation_name(relation));
      const auto a = answer(info.name, relation, matrix(2.0, 0.0));
      REQUIRE(a.has_value());
      CHECK(a->epsilon == 0);
      CHECK(a->delta == 0);
      // And it adds nothing to a ledger.
      const EventPtr g = make_gaussian(2.0);
      const auto with = answer(info.name, relation, make_composed({g, matrix(0.5, 0.0)}));
      const auto without = answer(info.name, relation, g);
      REQUIRE(with.has_value());
      CHECK(with->epsilon == without->epsilon);
    }
}

TEST_CASE("matrix_mechanism: sigma / sensitivity is rounded down") {
  // Against 50 digits: m·Δ ≤ σ < next(m)·Δ.
  for (const auto& pair : std::vector<std::pair<double, double>>{
           {3.0, 1.7}, {1.0, 3.0}, {10.0, std::sqrt(7.0)}, {0.1, 0.3}, {7.0, 0.7}, {1e-3, 9.1}}) {
    const double sigma = pair.first, sens = pair.second;
    INFO("sigma ", sigma, ", sensitivity ", sens);
    const double m = matrix_mechanism_multiplier(sigma, sens);
    CHECK(m == quotient_down_50(sigma, sens));
    CHECK(mp50(m) * mp50(sens) <= mp50(sigma));
    CHECK(mp50(std::nextafter(m, 2 * m)) * mp50(sens) > mp50(sigma));
    CHECK(outward::quotient_down(sigma, sens) == m);
  }
  // Past the double range: held at the largest double (still rounded down)
  // and, underflowing, at the smallest; every accountant answers, no NaN.
  CHECK(matrix_mechanism_multiplier(1e300, 1e-300) == std::numeric_limits<double>::max());
  CHECK(matrix_mechanism_multiplier(1e-300, 1e300) == std::numeric_limits<double>::denorm_min());
  for (const auto& e : {matrix(1e300, 1e-300), matrix(1e-300, 1e300)})
    for (const auto& info : accountants()) {
      INFO("accountant ", info.name);
      const auto a = answer(info.name, std::nullopt, e);
      REQUIRE(a.has_value());
      CHECK_FALSE(std::isnan(a->epsilon));
      CHECK(a->epsilon >= 0);
    }
}

TEST_CASE("banded_matrix_factorization is DP-SGD over ceil(T/b) rounds, in every accountant") {
  struct Case {
    double q, sigma;
    std::int64_t steps, bands, rounds;  // rounds = ⌈T/b⌉, worked out by hand
  };
  for (const Case& c :
       {Case{0.01, 1.0, 1000, 4, 250}, Case{0.02, 0.8, 1000, 3, 334}, Case{0.05, 1.5, 10, 16, 1},
        Case{0.1, 2.0, 7, 7, 1}, Case{0.3, 1.1, 100, 1, 100}}) {
    INFO("q ", c.q, ", sigma ", c.sigma, ", T ", c.steps, ", b ", c.bands);
    CHECK(banded_rounds(c.steps, c.bands) == c.rounds);
    const EventPtr b = banded(c.q, c.sigma, c.steps, c.bands);
    const EventPtr dpsgd =
        make_self_composed(c.rounds, make_poisson_sampled(c.q, make_gaussian(c.sigma)));
    CHECK(check_same_everywhere(b, dpsgd) > 0);
    // One round more is a different (larger) ε: the count is what is checked.
    if (c.rounds > 1) {
      auto more = make("rdp", std::nullopt);
      more->compose(*make_dp_sgd(c.q, c.sigma, c.rounds + 1));
      auto run = make("rdp", std::nullopt);
      run->compose(*b);
      CHECK(more->epsilon(kMatrixDelta).epsilon > run->epsilon(kMatrixDelta).epsilon);
    }
  }
  // q = 1: ⌈T/b⌉ unsampled Gaussians, μ = √rounds/σ exactly (Dong, Roth & Su
  // 2022, Cor. 3.3); q = 0 and T = 0: no loss.
  auto gdp = make("gdp", std::nullopt);
  gdp->compose(*banded(1.0, 2.0, 100, 8));  // 13 rounds
  CHECK(close_rel(detail_of(gdp->epsilon(kMatrixDelta), "mu"), std::sqrt(13.0) / 2.0, 1e-15));
  for (const auto& info : accountants()) {
    INFO("accountant ", info.name);
    for (const EventPtr& none : {banded(0.0, 1.0, 100, 4), banded(0.1, 1.0, 0, 4)}) {
      const auto a = answer(info.name, std::nullopt, none);
      REQUIRE(a.has_value());
      CHECK(a->epsilon == 0);
    }
  }
}

TEST_CASE(
    "tree aggregation: single_epoch_tree_aggregation equals matrix_mechanism at sqrt(depth)") {
  for (std::int64_t steps : {1, 7, 8, 100, 1023, 1024}) {
    // depth = ⌈log2(T + 1)⌉: the smallest d with 2^d ≥ T + 1.
    int depth = 0;
    while ((std::int64_t{1} << depth) < steps + 1) ++depth;
    const double sigma = 5.0;
    INFO("T ", steps, ", depth ", depth);
    const EventPtr tree = make_event(SingleEpochTreeAggregationEvent{sigma, {steps}});
    const EventPtr mm = matrix(sigma, std::sqrt(static_cast<double>(depth)));
    int both = 0;
    for (const auto& info : accountants())
      for (const auto& relation : kRelations) {
        INFO("accountant ", info.name, ", relation ", relation_name(relation));
        const auto t = answer(info.name, relation, tree);
        if (!t) continue;  // the tree has no add_remove analysis, pld none
        const auto m = answer(info.name, relation, mm);
        REQUIRE(m.has_value());
        CHECK(agree(t->epsilon, m->epsilon));
        CHECK(agree(t->delta, m->delta));
        ++both;
      }
    CHECK(both == 6);  // rdp, gdp, composition under replace_one and replace_special
  }
}

TEST_CASE("a ledger mixing the matrix kinds with DP-SGD phases is the composition of equivalents") {
  const EventPtr phase = make_dp_sgd(0.01, 1.2, 500);
  const EventPtr ledger = make_composed(
      {matrix(6.0, 1.3), phase, banded(0.02, 1.0, 400, 4), make_self_composed(2, matrix(8, 2))});
  const EventPtr equivalent =
      make_composed({make_gaussian(6.0 / 1.3), phase, make_dp_sgd(0.02, 1.0, 100),
                     make_self_composed(2, make_gaussian(4.0))});
  CHECK(check_same_everywhere(ledger, equivalent) > 0);
  // Unsampled Gaussians only: μ² adds (Dong, Roth & Su 2022, Cor. 3.3).
  auto gdp = make("gdp", std::nullopt);
  gdp->compose(*make_composed({matrix(2.0, 1.5), make_self_composed(4, make_gaussian(3.0))}));
  CHECK(close_rel(detail_of(gdp->epsilon(kMatrixDelta), "mu"), std::sqrt(0.75 * 0.75 + 4.0 / 9.0),
                  1e-15));
  // The banded run fixes add/remove as DP-SGD does: beside a phase of fixed
  // batches (replace-one) rdp refuses the mix, as it does for DP-SGD.
  const EventPtr fixed =
      make_self_composed(10, make_sampled_without_replacement(1000, 10, make_gaussian(1.0)));
  auto rdp = make("rdp", std::nullopt);
  const auto why = rdp->unsupported_reason(*make_composed({banded(0.01, 1.0, 100, 4), fixed}));
  REQUIRE(why);
  CHECK(why->find("neighbouring") != std::string::npos);
}

TEST_CASE("the matrix kinds are whole runs: refused inside a sampled event, naming the kind") {
  for (const EventPtr& e : {matrix(2.0, 1.0), banded(0.01, 1.0, 100, 4)})
    for (const EventPtr& wrapped :
         {make_poisson_sampled(0.5, e), make_sampled_without_replacement(100, 10, e),
          make_event(ShuffledEvent{10, e}), make_event(RandomAllocationEvent{10, 1, e})})
      for (const auto& info : accountants()) {
        INFO("accountant ", info.name, ", event ", event_name(*e));
        const auto why =
            make(info.name, Neighbouring::replace_special)->unsupported_reason(*wrapped);
        REQUIRE(why);
        CHECK(why->find(event_name(*e) + " is a whole run") != std::string::npos);
      }
  // A refusal of the equivalent names the kind it came from.
  const auto why =
      make("rdp", Neighbouring::replace_one)->unsupported_reason(*banded(0.01, 1.0, 100, 4));
  REQUIRE(why);
  CHECK(why->find("banded_matrix_factorization is accounted as") != std::string::npos);
}

TEST_CASE("matrix kinds: bad fields are refused naming the field") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Bad {
    MatrixMechanismEvent e;
    const char* field;
  };
  for (const Bad& b : {Bad{{0.0, 1.0}, "noise_multiplier"}, Bad{{-1.0, 1.0}, "noise_multiplier"},
                       Bad{{nan, 1.0}, "noise_multiplier"}, Bad{{inf, 1.0}, "noise_multiplier"},
                       Bad{{1.0, -0.5}, "sensitivity"}, Bad{{1.0, nan}, "sensitivity"},
                       Bad{{1.0, inf}, "sensitivity"}}) {
    try {
      make_event(b.e);
      FAIL("accepted");
    } catch (const InvalidParameter& e) {
      CHECK(e.field() == b.field);
    }
  }
  struct BadBanded {
    BandedMatrixFactorizationEvent e;
    const char* field;
  };
  for (const BadBanded& b :
       {BadBanded{{-0.1, 1.0, 10, 2}, "sampling_probability"},
        BadBanded{{1.5, 1.0, 10, 2}, "sampling_probability"},
        BadBanded{{nan, 1.0, 10, 2}, "sampling_probability"},
        BadBanded{{0.1, 0.0, 10, 2}, "noise_multiplier"},
        BadBanded{{0.1, -2.0, 10, 2}, "noise_multiplier"}, BadBanded{{0.1, 1.0, -1, 2}, "steps"},
        BadBanded{{0.1, 1.0, 10, 0}, "bands"}, BadBanded{{0.1, 1.0, 10, -3}, "bands"}}) {
    try {
      make_event(b.e);
      FAIL("accepted");
    } catch (const InvalidParameter& e) {
      CHECK(e.field() == b.field);
    }
  }
}
