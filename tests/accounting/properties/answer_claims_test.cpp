// Claims (docs/claims.md#attained-pairs): what each number of an answer says about the run, the
// recommended row and the budget gate. Lower ends are checked against
// independent truths: a Monte Carlo estimate of the exact δ (with its
// error), the exact profile of a Gaussian, and sound upper bounds of other
// accountants.
#include "answer_claims.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "accounting/accountant.hpp"
#include "accounting/answer.hpp"
#include "accounting/dpsgd/dp_sgd_run.hpp"
#include "accounting/errors.hpp"
#include "accounting/events/event_examples.hpp"
#include "accounting/events/events.hpp"
#include "accounting/mechanisms/gaussian_mechanism.hpp"

using namespace dpb;
using namespace dpb::test;

namespace {

Question run_question(const DpSgdRun& run, std::vector<std::string> names,
                      std::vector<double> deltas) {
  Question q = question_of(dp_sgd_event(run), std::move(names), std::move(deltas));
  q.run = run;
  q.accountants.options.neighbouring = run_neighbouring(run);
  return q;
}

const AnswerRow* row_of(const Answer& a, const std::string& accountant, RowRole role) {
  for (const auto& r : a.rows)
    if (r.guarantee.accountant == accountant && r.role == role) return &r;
  return nullptr;
}

DpSgdRun loader_run(Sampling sampling, std::int64_t n, std::int64_t b, double sigma,
                    std::int64_t epochs, std::int64_t participations = 1,
                    std::int64_t records_per_user = 1) {
  DpSgdRun run;
  run.sampling = sampling;
  run.dataset_size = n;
  run.batch_size = b;
  run.sampling_rate = static_cast<double>(b) / static_cast<double>(n);
  run.noise_multiplier = sigma;
  run.participations = participations;
  run.records_per_user = records_per_user;
  run.epochs = static_cast<double>(epochs);
  run.steps = epochs * ((n + b - 1) / b);
  return run;
}

/// Monte Carlo estimate of the exact δ(ε) of one balls-in-bins epoch of t
/// steps with k participations at noise σ (every other gradient 0): P is the
/// mixture over the C(t, k) step sets S of N(1_S, σ²I), Q = N(0, σ²I), and
/// δ(ε) = max over the two directions of E[(1 − e^{ε − L})₊] (docs/pld.md#directions). The
/// density ratio of P to Q at x is the mean over S of exp((Σ_{i∈S} x_i −
/// k/2)/σ²). Returns the estimate and its standard error.
struct McDelta {
  double delta, error;
};
McDelta balls_in_bins_delta_mc(int t, int k, double sigma, double eps, int samples, unsigned seed) {
  std::vector<std::vector<int>> sets;
  std::vector<int> pick(static_cast<std::size_t>(t), 0);
  std::fill(pick.end() - k, pick.end(), 1);
  do {
    std::vector<int> s;
    for (int i = 0; i < t; ++i)
      if (pick[static_cast<std::size_t>(i)]) s.push_back(i);
    sets.push_back(s);
  } while (std::next_permutation(pick.begin(), pick.end()));
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0, sigma);
  std::uniform_int_distribution<std::size_t> which(0, sets.size() - 1);
  auto ratio = [&](const std::vector<double>& x) {
    double sum = 0;
    for (const auto& s : sets) {
      double dot = 0;
      for (int i : s) dot += x[static_cast<std::size_t>(i)];
      sum += std::exp((dot - 0.5 * k) / (sigma * sigma));
    }
    return sum / static_cast<double>(sets.size());
  };
  McDelta best{0, 0};
  for (int direction = 0; direction < 2; ++direction) {
    double s1 = 0, s2 = 0;
    std::vector<double> x(static_cast<std::size_t>(t));
    for (int n = 0; n < samples; ++n) {
      for (auto& xi : x) xi = normal(rng);
      double loss;
      if (direction == 0) {  // remove: x ~ P, loss log(P/Q)
        for (int i : sets[which(rng)]) x[static_cast<std::size_t>(i)] += 1;
        loss = std::log(ratio(x));
      } else {  // add: x ~ Q, loss log(Q/P)
        loss = -std::log(ratio(x));
      }
      const double v = std::max(0.0, 1 - std::exp(eps - loss));
      s1 += v;
      s2 += v * v;
    }
    const double mean = s1 / samples;
    const double err = std::sqrt(std::max(0.0, s2 / samples - mean * mean) / samples);
    if (mean > best.delta) best = {mean, err};
  }
  return best;
}

/// Standard errors a Monte Carlo comparison must clear (a false failure at
/// 5 standard errors has probability below 3e-7; the seeds are fixed).
constexpr double kMcSigmas = 5;

}  // namespace

TEST_CASE("pld: an exponential mechanism's lower end is the accuracy, below rdp's upper bound") {
  // The case: pld printed [10.1273, 10.1437] as the true epsilon's
  // interval beside rdp's sound upper bound 5.05936.
  const auto event = make_self_composed(50, make_event(ExponentialMechanismEvent{0.3}));
  const Answer a = answer(question_of(event, {"rdp", "pld"}, {1e-5}));
  const AnswerRow* pld = row_of(a, "pld", RowRole::run);
  const AnswerRow* rdp = row_of(a, "rdp", RowRole::run);
  REQUIRE(pld);
  REQUIRE(rdp);
  REQUIRE(pld->guarantee.epsilon_lower);
  CHECK(pld->guarantee.lower_end == LowerEnd::accuracy);
  CHECK(pld->guarantee.bound == BoundKind::upper);
  // Both are sound upper bounds; rdp's is the smaller, so it is recommended.
  CHECK(rdp->guarantee.epsilon < *pld->guarantee.epsilon_lower);
  CHECK(rdp->recommended);
  CHECK_FALSE(pld->recommended);
  CHECK(claimed_lower_bounds(a, 1e-5).empty());
}

TEST_CASE(
    "pld: balls-in-bins with k = 2 claims no lower bound, and its upper end is above "
    "the Monte Carlo truth") {
  // The case: N 5, B 1 (t = 5 steps), k = 2, sigma 1, one epoch,
  // delta 0.0235: pld printed [2.06282, 2.06534]; Monte Carlo puts the true
  // epsilon near 1.93.
  const DpSgdRun run = loader_run(Sampling::balls_in_bins, 5, 1, 1.0, 1, 2);
  Question q = run_question(run, {"pld"}, {0.0235});
  q.companions = false;
  const Answer a = answer(q);
  const AnswerRow* pld = row_of(a, "pld", RowRole::run);
  REQUIRE(pld);
  REQUIRE(pld->guarantee.epsilon_lower);
  CHECK(pld->guarantee.lower_end == LowerEnd::accuracy);
  const double lower_end = *pld->guarantee.epsilon_lower, upper = pld->guarantee.epsilon;
  constexpr int kSamples = 400'000;
  // The old "lower bound" is not one: at that epsilon the true delta is
  // already below the target, so the true epsilon is smaller.
  const McDelta at_lower = balls_in_bins_delta_mc(5, 2, 1.0, lower_end, kSamples, 7);
  INFO("MC delta(" << lower_end << ") = " << at_lower.delta << " +- " << at_lower.error);
  CHECK(at_lower.delta + kMcSigmas * at_lower.error < 0.0235);
  // The upper end is sound: the true delta at it is at most the target.
  const McDelta at_upper = balls_in_bins_delta_mc(5, 2, 1.0, upper, kSamples, 11);
  INFO("MC delta(" << upper << ") = " << at_upper.delta << " +- " << at_upper.error);
  CHECK(at_upper.delta - kMcSigmas * at_upper.error <= 0.0235);
}

TEST_CASE("pld: balls-in-bins with k = 1 claims its lower end, and Monte Carlo agrees") {
  // k = 1: the pair is attained (every other gradient 0), so the interval
  // holds the run's true epsilon: the true delta at the lower end is at
  // least the target and at the upper end at most the target.
  const DpSgdRun run = loader_run(Sampling::balls_in_bins, 4, 1, 1.0, 1, 1);
  Question q = run_question(run, {"pld"}, {0.05});
  q.companions = false;
  const Answer a = answer(q);
  const AnswerRow* pld = row_of(a, "pld", RowRole::run);
  REQUIRE(pld);
  REQUIRE(pld->guarantee.epsilon_lower);
  CHECK(pld->guarantee.lower_end == LowerEnd::lower_bound);
  constexpr int kSamples = 400'000;
  const McDelta lo = balls_in_bins_delta_mc(4, 1, 1.0, *pld->guarantee.epsilon_lower, kSamples, 3);
  const McDelta hi = balls_in_bins_delta_mc(4, 1, 1.0, pld->guarantee.epsilon, kSamples, 5);
  INFO("MC delta at the ends: " << lo.delta << " +- " << lo.error << ", " << hi.delta << " +- "
                                << hi.error);
  CHECK(lo.delta + kMcSigmas * lo.error >= 0.05);
  CHECK(hi.delta - kMcSigmas * hi.error <= 0.05);
}

TEST_CASE(
    "shuffle: the upper row is no interval of the run, the lower row is below every upper "
    "bound, the Poisson figure is an estimate") {
  const DpSgdRun run = loader_run(Sampling::shuffle, 60000, 600, 1.1, 10);
  const Answer a = answer(run_question(run, {"rdp", "pld", "gdp"}, {1e-5}));
  const AnswerRow* pld = row_of(a, "pld", RowRole::run);
  REQUIRE(pld);
  CHECK(pld->guarantee.lower_end == LowerEnd::accuracy);
  // E = 10 unamplified releases at sigma 1.1 under replace_special: gdp's
  // exact mu = sqrt(10)/1.1, and pld's upper end is at least that exact value.
  const double exact = gaussian_epsilon(1.1 / std::sqrt(10.0), 1e-5);
  CHECK(pld->guarantee.epsilon >= exact * (1 - kRoundOff));
  const AnswerRow* lower = row_of(a, "pld", RowRole::lower);
  REQUIRE(lower);
  CHECK(lower->guarantee.bound == BoundKind::lower);
  for (double u : upper_bounds(a, 1e-5)) CHECK(lower->guarantee.epsilon <= u);
  int estimates = 0;
  for (const auto& r : a.rows)
    if (r.role == RowRole::poisson_estimate) {
      CHECK(r.guarantee.bound == BoundKind::estimate);
      CHECK(r.sampling == Sampling::poisson);
      CHECK_FALSE(r.recommended);
      ++estimates;
    }
  CHECK(estimates == 3);
}

TEST_CASE("user-level balls-in-bins: Gaussian releases at sigma/k are a stand-in, no lower bound") {
  const DpSgdRun run = loader_run(Sampling::balls_in_bins, 1000, 100, 2.0, 2, 1, 3);
  Question q = run_question(run, {"pld", "gdp"}, {1e-5});
  q.companions = false;
  const Answer a = answer(q);
  const AnswerRow* pld = row_of(a, "pld", RowRole::run);
  REQUIRE(pld);
  REQUIRE(pld->guarantee.epsilon_lower);
  CHECK(pld->guarantee.lower_end == LowerEnd::accuracy);
}

TEST_CASE("Poisson DP-SGD: the pld interval holds the exact epsilon at q = 1 and bounds the run") {
  DpSgdRun run;
  run.sampling_rate = 1;
  run.noise_multiplier = 2;
  run.steps = 4;
  const Answer a = answer(run_question(run, {"pld"}, {1e-5}));
  const AnswerRow* pld = row_of(a, "pld", RowRole::run);
  REQUIRE(pld);
  REQUIRE(pld->guarantee.epsilon_lower);
  CHECK(pld->guarantee.lower_end == LowerEnd::lower_bound);
  const double exact = gaussian_epsilon(2.0 / 2.0, 1e-5);  // sigma/sqrt(T)
  CHECK(*pld->guarantee.epsilon_lower <= exact * (1 + kRoundOff));
  CHECK(pld->guarantee.epsilon >= exact * (1 - kRoundOff));
}

TEST_CASE("the budget gate decides on the recommended row only") {
  DpSgdRun run;
  run.sampling_rate = 0.01;
  run.noise_multiplier = 1.1;
  run.steps = 10000;
  const Question q = run_question(run, {"rdp", "gdp", "composition", "pld"}, {1e-5});
  const Answer a = answer(q);
  const AnswerRow* pld = row_of(a, "pld", RowRole::run);
  const AnswerRow* rdp = row_of(a, "rdp", RowRole::run);
  const AnswerRow* gdp = row_of(a, "gdp", RowRole::run);
  REQUIRE(pld);
  REQUIRE(rdp);
  REQUIRE(gdp);
  CHECK(pld->recommended);
  CHECK(gdp->guarantee.bound == BoundKind::approximate);
  CHECK_FALSE(gdp->recommended);
  // Between pld's bound and rdp's: within (rdp's and composition's larger
  // bounds do not fail the run).
  const double between = 0.5 * (pld->guarantee.epsilon + rdp->guarantee.epsilon);
  CHECK(check_budget(q, a, between).status == BudgetStatus::within);
  // Between gdp's approximation and pld's bound: over (the approximation
  // below the budget does not pass the run).
  const double below = 0.5 * (gdp->guarantee.epsilon + pld->guarantee.epsilon);
  REQUIRE(gdp->guarantee.epsilon < below);
  const BudgetCheck over = check_budget(q, a, below);
  CHECK(over.status == BudgetStatus::over);
  REQUIRE(over.over_rows.size() == 1);
  CHECK(&a.rows[over.over_rows.front()] == pld);
  // gdp alone gives only an approximation: the run cannot pass.
  const Question gdp_only = run_question(run, {"gdp"}, {1e-5});
  const BudgetCheck none = check_budget(gdp_only, answer(gdp_only), 100);
  CHECK(none.status == BudgetStatus::no_upper_bound);
  CHECK(std::find(none.would_bound.begin(), none.would_bound.end(), "pld") !=
        none.would_bound.end());
  CHECK(std::find(none.would_bound.begin(), none.would_bound.end(), "gdp") ==
        none.would_bound.end());
}
