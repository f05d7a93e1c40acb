#include "accounting/run_plan.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <thread>
#include <tuple>
#include <variant>

#include "accounting/errors.hpp"
#include "accounting/numerics/outward.hpp"

namespace dpb {

std::vector<std::int64_t> plan_batch_sizes(std::int64_t largest) {
  if (largest < 1) throw InvalidParameter("batch_size", "the largest candidate must be >= 1");
  // docs/calibration.md#plan: 2^k and the midpoint 3·2^(k−1) of 2^k and
  // 2^(k+1), so that neighbours differ by a factor 1.5 or 4/3.
  std::vector<std::int64_t> out;
  for (std::int64_t p = 1; p <= largest; p *= 2) {
    out.push_back(p);
    if (p >= 2 && p / 2 * 3 <= largest) out.push_back(p / 2 * 3);
    if (p > largest / 2) break;  // p * 2 would pass `largest` (or overflow)
  }
  return out;
}

namespace {

/// One candidate: a batch size, and the epochs value it is asked for
/// (without a compute budget).
struct Job {
  std::int64_t batch_size;
  std::optional<double> epochs;
};

using Outcome = std::variant<PlanRow, PlanSkipped>;

/// The run of a candidate before σ is solved: q = B/N and T through
/// derive_run(), the one place that turns N, B and epochs (or steps) into a
/// run (docs/sampling.md#dp-sgd-run), so `dpbudget sigma` with the same
/// flags asks the same question.
DpSgdRun candidate_run(const PlanQuestion& question, const Job& job) {
  RunValues v;
  v.dataset_size = question.dataset_size;
  v.batch_size = job.batch_size;
  v.sampling = Sampling::poisson;
  if (question.compute)
    v.steps = *question.compute / job.batch_size;  // T = ⌊C/B⌋
  else
    v.epochs = job.epochs;
  return derive_run(v, RunUnknown::noise_multiplier);
}

Outcome solve(const PlanQuestion& question, const Job& job) {
  const DpSgdRun run = candidate_run(question, job);
  try {
    // calibrate_run() is what `dpbudget sigma` asks (cli/run/solve.cpp): the
    // smallest σ, rounded up, with the guarantee it achieves
    // (docs/calibration.md#sigma).
    CalibratedRun solved = calibrate_run(
        run, RunUnknown::noise_multiplier, question.accountant, question.options,
        question.target_epsilon, RunTarget{Measure::epsilon, question.delta, 0}, question.settings);
    PlanRow row{std::move(solved.run), std::move(solved.guarantee), 0, false};
    // Epochs of a compute budget: the share of N the T steps of B process.
    if (!row.run.epochs)
      row.run.epochs = static_cast<double>(row.run.steps) * static_cast<double>(job.batch_size) /
                       static_cast<double>(question.dataset_size);
    row.noise_per_example =
        outward::quotient_up(row.run.noise_multiplier, static_cast<double>(job.batch_size));
    return row;
  } catch (const NoSolution& e) {
    return PlanSkipped{job.batch_size, run.steps, job.epochs, e.what()};
  }
}

void check(const PlanQuestion& q) {
  if (!(q.target_epsilon > 0) || !std::isfinite(q.target_epsilon))
    throw InvalidParameter("target_epsilon", "must be a finite number > 0");
  if (!(q.delta > 0 && q.delta < 1)) throw InvalidParameter("delta", "must be in (0, 1)");
  if (q.dataset_size < 1) throw InvalidParameter("dataset_size", "must be >= 1");
  if (q.batch_sizes.empty()) throw InvalidParameter("batch_size", "no candidate batch size");
  for (std::int64_t b : q.batch_sizes) {
    if (b < 1 || b > q.dataset_size)
      throw InvalidParameter("batch_size", "each candidate must be in [1, dataset_size]");
    if (q.compute && b > *q.compute)
      throw InvalidParameter("compute", "must be at least every candidate batch size");
  }
  if (!q.compute && q.epochs.empty())
    throw InvalidParameter("epochs", "give a compute budget or at least one epochs value");
  if (q.compute && !q.epochs.empty())
    throw InvalidParameter("epochs", "give a compute budget or epochs, not both");
}

/// Ranked by σ/B (docs/calibration.md#plan); ties: more steps, then the
/// smaller batch.
bool ranks_before(const PlanRow& a, const PlanRow& b) {
  return std::make_tuple(a.noise_per_example, -a.run.steps, a.run.batch_size.value_or(0)) <
         std::make_tuple(b.noise_per_example, -b.run.steps, b.run.batch_size.value_or(0));
}

}  // namespace

PlanAnswer plan_runs(const PlanQuestion& question) {
  check(question);
  std::vector<Job> jobs;
  for (std::int64_t b : question.batch_sizes) {
    if (question.compute)
      jobs.push_back({b, std::nullopt});
    else
      for (double e : question.epochs) jobs.push_back({b, e});
  }
  // Every job on one of the cores, contiguous slices (as epsilon_series
  // does); the first error of a slice is rethrown in job order.
  std::vector<std::optional<Outcome>> outcomes(jobs.size());
  const std::size_t threads =
      std::min<std::size_t>(std::max(1u, std::thread::hardware_concurrency()), jobs.size());
  std::vector<std::exception_ptr> errors(threads);
  auto run_slice = [&](std::size_t t) {
    try {
      for (std::size_t i = jobs.size() * t / threads; i < jobs.size() * (t + 1) / threads; ++i)
        outcomes[i] = solve(question, jobs[i]);
    } catch (...) {
      errors[t] = std::current_exception();
    }
  };
  if (threads <= 1) {
    run_slice(0);
  } else {
    std::vector<std::jthread> pool;
    for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(run_slice, t);
  }
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);

  PlanAnswer plan;
  for (auto& o : outcomes) {
    if (auto* row = std::get_if<PlanRow>(&*o))
      plan.rows.push_back(std::move(*row));
    else
      plan.skipped.push_back(std::move(std::get<PlanSkipped>(*o)));
  }
  if (plan.rows.empty())
    throw NoSolution("no candidate batch size meets epsilon " +
                     shown_number(question.target_epsilon) + " at delta " +
                     shown_number(question.delta) + " with a noise multiplier up to " +
                     shown_number(question.settings.max_sigma) +
                     " (first: " + plan.skipped.front().reason + ")");
  std::stable_sort(plan.rows.begin(), plan.rows.end(), ranks_before);
  for (PlanRow& r : plan.rows)
    r.on_frontier = std::none_of(plan.rows.begin(), plan.rows.end(), [&r](const PlanRow& s) {
      return (s.run.steps >= r.run.steps && s.noise_per_example < r.noise_per_example) ||
             (s.run.steps > r.run.steps && s.noise_per_example <= r.noise_per_example);
    });
  return plan;
}

}  // namespace dpb
