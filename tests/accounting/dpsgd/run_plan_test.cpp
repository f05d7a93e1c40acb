// The planner (docs/calibration.md#plan): its candidate grid, and every row it
// lists checked against an event built here (make_dp_sgd, not the run the
// planner built): it meets the budget, σ·(1 − 2·tolerance) does not, T and q
// follow from B, N and the compute budget or epochs, the rows ranked by σ/B.
#include "accounting/run_plan.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "accounting/dpsgd/calibration.hpp"
#include "accounting/errors.hpp"

using namespace dpb;

namespace {

double rdp_epsilon(double q, double sigma, std::int64_t steps, double delta) {
  const EpsilonOracle oracle{"rdp", AccountantOptions{}, delta};
  return oracle(*make_dp_sgd(q, sigma, steps)).epsilon;
}

PlanQuestion compute_question() {
  PlanQuestion q;
  q.target_epsilon = 2;
  q.delta = 1e-5;
  q.dataset_size = 1000;
  q.compute = 10000;
  q.batch_sizes = plan_batch_sizes(768);
  return q;
}

}  // namespace

TEST_CASE("plan: the candidate batch sizes are the powers of two and their midpoints") {
  CHECK(plan_batch_sizes(1) == std::vector<std::int64_t>{1});
  CHECK(plan_batch_sizes(2) == std::vector<std::int64_t>{1, 2});
  CHECK(plan_batch_sizes(5) == std::vector<std::int64_t>{1, 2, 3, 4});
  CHECK(plan_batch_sizes(768) == std::vector<std::int64_t>{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64,
                                                           96, 128, 192, 256, 384, 512, 768});
  CHECK(plan_batch_sizes(1023).back() == 768);
  CHECK(plan_batch_sizes(1024).back() == 1024);
  // Up to 2^53 without overflow: 2^0..2^53 and 3·2^0..3·2^51 (3·2^52 > 2^53).
  const auto all = plan_batch_sizes(std::int64_t{1} << 53);
  CHECK(all.size() == 54 + 52);
  CHECK(all.back() == std::int64_t{1} << 53);
  CHECK(std::is_sorted(all.begin(), all.end()));
  CHECK_THROWS_AS(plan_batch_sizes(0), InvalidParameter);
}

TEST_CASE("plan: every row meets the budget and is minimal, with T = floor(C/B), q = B/N") {
  const PlanQuestion question = compute_question();
  const PlanAnswer plan = plan_runs(question);
  REQUIRE(plan.rows.size() == question.batch_sizes.size());
  CHECK(plan.skipped.empty());
  const double tol = question.settings.tolerance;
  std::vector<std::int64_t> seen;
  for (const PlanRow& r : plan.rows) {
    const std::int64_t b = *r.run.batch_size;
    CAPTURE(b);
    seen.push_back(b);
    CHECK(r.run.steps == 10000 / b);
    CHECK(r.run.sampling_rate == static_cast<double>(b) / 1000.0);
    CHECK(*r.run.epochs == doctest::Approx(static_cast<double>(r.run.steps * b) / 1000.0));
    const double sigma = r.run.noise_multiplier;
    CHECK(rdp_epsilon(r.run.sampling_rate, sigma, r.run.steps, 1e-5) <= 2);
    CHECK(rdp_epsilon(r.run.sampling_rate, sigma * (1 - 2 * tol), r.run.steps, 1e-5) > 2);
    CHECK(r.guarantee.epsilon <= 2);
    // σ/B rounded up: at least the quotient, within one ulp of it.
    CHECK(r.noise_per_example >= sigma / static_cast<double>(b));
    CHECK(r.noise_per_example <= std::nextafter(sigma / static_cast<double>(b), 1.0));
  }
  std::sort(seen.begin(), seen.end());
  CHECK(seen == question.batch_sizes);
  for (std::size_t i = 1; i < plan.rows.size(); ++i)
    CHECK(plan.rows[i - 1].noise_per_example <= plan.rows[i].noise_per_example);
}

TEST_CASE("plan: epochs give T = ceil(E N / B) per epochs value, frontier rows undominated") {
  PlanQuestion question = compute_question();
  question.compute.reset();
  question.epochs = {1, 10};
  question.batch_sizes = plan_batch_sizes(64);
  const PlanAnswer plan = plan_runs(question);
  REQUIRE(plan.rows.size() == 2 * question.batch_sizes.size());
  for (const PlanRow& r : plan.rows) {
    const std::int64_t b = *r.run.batch_size;
    const double e = *r.run.epochs;
    CAPTURE(b);
    CAPTURE(e);
    CHECK((e == 1 || e == 10));
    // ⌈E·N/B⌉ by integers: (E·N + B − 1) / B.
    const auto en = static_cast<std::int64_t>(e) * 1000;
    CHECK(r.run.steps == (en + b - 1) / b);
    CHECK(rdp_epsilon(r.run.sampling_rate, r.run.noise_multiplier, r.run.steps, 1e-5) <= 2);
    bool dominated = false;
    for (const PlanRow& s : plan.rows)
      dominated = dominated ||
                  (s.run.steps >= r.run.steps && s.noise_per_example < r.noise_per_example) ||
                  (s.run.steps > r.run.steps && s.noise_per_example <= r.noise_per_example);
    CHECK(r.on_frontier == !dominated);
  }
  // More epochs at the same batch size: more steps, so more noise per example.
  for (const PlanRow& a : plan.rows)
    for (const PlanRow& b : plan.rows)
      if (a.run.batch_size == b.run.batch_size && *a.run.epochs < *b.run.epochs)
        CHECK(a.noise_per_example < b.noise_per_example);
}

TEST_CASE("plan: a candidate no sigma up to max_sigma serves is left out and named") {
  PlanQuestion question = compute_question();
  question.settings.max_sigma = 1;
  const PlanAnswer plan = plan_runs(question);
  REQUIRE(!plan.skipped.empty());
  REQUIRE(!plan.rows.empty());
  CHECK(plan.rows.size() + plan.skipped.size() == question.batch_sizes.size());
  for (const PlanSkipped& s : plan.skipped) {
    CAPTURE(s.batch_size);
    CHECK(s.steps == 10000 / s.batch_size);
    // Even σ = max_sigma exceeds the budget.
    CHECK(rdp_epsilon(static_cast<double>(s.batch_size) / 1000.0, 1.0, s.steps, 1e-5) > 2);
  }
  for (const PlanRow& r : plan.rows) CHECK(r.run.noise_multiplier <= 1);
  question.settings.max_sigma = 1e-3;
  CHECK_THROWS_AS(plan_runs(question), NoSolution);
}

TEST_CASE("plan: a question out of its domain is refused naming the field") {
  auto refused = [](PlanQuestion q, const char* field) {
    CAPTURE(field);
    try {
      plan_runs(q);
      FAIL("not refused");
    } catch (const InvalidParameter& e) {
      CHECK(e.field() == field);
    }
  };
  PlanQuestion q = compute_question();
  q.batch_sizes = {1, 2000};
  refused(q, "batch_size");
  q = compute_question();
  q.compute = 100;
  refused(q, "compute");
  q = compute_question();
  q.epochs = {1};
  refused(q, "epochs");
  q = compute_question();
  q.target_epsilon = 0;
  refused(q, "target_epsilon");
  q = compute_question();
  q.delta = 1;
  refused(q, "delta");
  q = compute_question();
  q.batch_sizes.clear();
  refused(q, "batch_size");
}
