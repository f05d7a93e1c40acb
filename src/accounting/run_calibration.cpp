#include "accounting/run_calibration.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "accounting/answer.hpp"
#include "accounting/dpsgd/schedule.hpp"
#include "accounting/errors.hpp"
#include "accounting/mechanisms/gaussian_mechanism.hpp"

namespace dpb {
namespace {

/// The epochs T steps make (docs/sampling.md#dp-sgd-run): T / steps_per_epoch() with a last-batch
/// rule, T·B/N without one, none without N and B.
std::optional<double> epochs_of_steps(const DpSgdRun& run, std::int64_t steps) {
  if (run.dataset_size && run.batch_size && run.last_batch)
    return static_cast<double>(steps) / static_cast<double>(steps_per_epoch(
                                            *run.dataset_size, *run.batch_size, *run.last_batch));
  if (run.dataset_size && run.batch_size)
    return static_cast<double>(steps) * static_cast<double>(*run.batch_size) /
           static_cast<double>(*run.dataset_size);
  return std::nullopt;
}

/// calibrate_run's search, its guarantee as the accountant states it.
CalibratedRun solve_run_unknown(const DpSgdRun& run, RunUnknown unknown,
                                const std::string& accountant, const AccountantOptions& options,
                                double target_epsilon, const RunTarget& what,
                                const CalibrationSettings& settings) {
  AccountantOptions run_options = options;
  if (auto relation = run_neighbouring(run)) run_options.neighbouring = relation;
  const EpsilonOracle oracle{accountant, run_options, what.delta, what.measure, what.fpr};
  CalibratedRun out{run, {}};
  switch (unknown) {
    case RunUnknown::noise_multiplier: {
      auto s = smallest_noise_multiplier(
          [&](double sigma) {
            DpSgdRun candidate = run;
            candidate.noise_multiplier = sigma;
            return dp_sgd_event(candidate);
          },
          oracle, target_epsilon, settings.tolerance, settings.max_sigma);
      out.run.noise_multiplier = s.noise_multiplier;
      out.guarantee = std::move(s.guarantee);
      if (run.clipping_count_noise) {
        // The σ found is the combined multiplier; the gradient's is z_eff = (z⁻² − (2σ_b)⁻²)^(−1/2)
        // (Andrew et al. 2021, Theorem 1; docs/mechanisms.md#adaptive-clipping), rounded up.
        try {
          double gradient =
              gradient_noise_multiplier_for(s.noise_multiplier, *run.clipping_count_noise);
          // The printed z_eff must meet the target when given back: the run it
          // describes is accounted at clipping_combined_multiplier(z_eff, σ_b), rounded
          // down, which near 2σ_b ≈ z can fall ulps below the σ found; step z_eff up
          // until it does not.
          while (clipping_combined_multiplier(gradient, *run.clipping_count_noise) <
                 s.noise_multiplier)
            gradient = std::nextafter(gradient, std::numeric_limits<double>::infinity());
          out.run.gradient_noise_multiplier = gradient;
        } catch (const NoSolution& e) {
          throw RunParameterError(RunParam::clipping_count_noise,
                                  {RunParam::clipping_count_noise, std::string(": ") + e.what()});
        }
      }
      return out;
    }
    case RunUnknown::steps: {
      auto s = largest_count(
          [&](std::int64_t n) {
            DpSgdRun candidate = run;
            candidate.steps = n;
            return dp_sgd_event(candidate);
          },
          oracle, target_epsilon);
      out.run.steps = s.count;
      out.guarantee = std::move(s.guarantee);
      out.run.epochs = epochs_of_steps(run, s.count);
      return out;
    }
    case RunUnknown::sampling_rate: {
      if (run.dataset_size) {
        // Largest batch size B in [1, N]; with epochs fixed, T = ⌈E·N/B⌉ (or
        // E·⌊N/B⌋, E·⌈N/B⌉ with --last-batch) falls as B grows. With k
        // accumulation steps the micro-batch b in [1, N/k] is solved for and
        // the logical batch B = b·k is what is sampled (docs/sampling.md#gradient-accumulation).
        const std::int64_t n = *run.dataset_size;
        const std::int64_t k = run.accumulation_steps;
        auto steps_for = [&](std::int64_t b) {
          return run.epochs ? steps_for_epochs(*run.epochs, 0, n, b, run.last_batch, run.sampling)
                            : run.steps;
        };
        auto s = largest_integer(
            [&](std::int64_t b) {
              DpSgdRun candidate = run;
              candidate.batch_size = b * k;
              candidate.sampling_rate = static_cast<double>(b * k) / static_cast<double>(n);
              candidate.steps = steps_for(b * k);
              return dp_sgd_event(candidate);
            },
            oracle, target_epsilon, 1, n / k);
        out.run.batch_size = s.count * k;
        out.run.sampling_rate = static_cast<double>(s.count * k) / static_cast<double>(n);
        out.run.steps = steps_for(s.count * k);
        out.guarantee = std::move(s.guarantee);
        return out;
      }
      auto s = largest_value(
          [&](double q) {
            DpSgdRun candidate = run;
            candidate.sampling_rate = q;
            return dp_sgd_event(candidate);
          },
          oracle, target_epsilon, 0.0, 1.0, settings.tolerance);
      out.run.sampling_rate = s.value;
      out.guarantee = std::move(s.guarantee);
      return out;
    }
    case RunUnknown::none:
      break;
  }
  throw InvalidParameter("unknown", "nothing to solve for");
}

/// calibrate_schedule's search, its guarantee as the accountant states it.
CalibratedSchedule solve_schedule_unknown(const std::vector<DpSgdRun>& phases, RunUnknown unknown,
                                          std::optional<std::size_t> phase,
                                          const std::string& accountant,
                                          const AccountantOptions& options, double target,
                                          const RunTarget& what,
                                          const CalibrationSettings& settings) {
  if (phases.empty()) throw InvalidParameter("schedule", "has no phase");
  AccountantOptions run_options = options;
  if (auto relation = run_neighbouring(phases.front())) run_options.neighbouring = relation;
  const EpsilonOracle oracle{accountant, run_options, what.delta, what.measure, what.fpr};
  CalibratedSchedule out{phases, std::nullopt, {}};
  switch (unknown) {
    case RunUnknown::noise_multiplier: {
      // A phase's σ with adaptive clipping's count is the combined multiplier, which neither a
      // factor on every σ nor one phase's search turns back into the gradient's here.
      for (const auto& p : phases)
        if (p.clipping_count_noise)
          throw RunParameterError(RunParam::clipping_count_noise,
                                  {RunParam::clipping_count_noise,
                                   ": not when solving sigma on a schedule (give it to sigma "
                                   "without --schedule, or solve steps)"});
      if (phase) {
        if (*phase >= phases.size()) throw InvalidParameter("phase", "no such phase");
        auto s = smallest_noise_multiplier(
            [&](double sigma) {
              std::vector<DpSgdRun> candidate = phases;
              candidate[*phase].noise_multiplier = sigma;
              return schedule_event(candidate);
            },
            oracle, target, settings.tolerance, settings.max_sigma);
        out.phases[*phase].noise_multiplier = s.noise_multiplier;
        out.guarantee = std::move(s.guarantee);
        return out;
      }
      // One factor c on every σ_i (docs/calibration.md#schedules): ε falls as
      // each σ_i grows, so it falls in c, and the σ search applies to c. Its
      // ceiling keeps the largest σ_i·c within max_sigma.
      double largest = 0;
      for (const auto& p : phases) largest = std::max(largest, p.noise_multiplier);
      auto scaled = [&](double c) {
        std::vector<DpSgdRun> candidate = phases;
        for (auto& p : candidate) {
          p.noise_multiplier *= c;
          for (double& z : p.group_noise_multipliers) z *= c;
        }
        return candidate;
      };
      const double max_scale = settings.max_sigma / largest;
      try {
        auto s = smallest_noise_multiplier([&](double c) { return schedule_event(scaled(c)); },
                                           oracle, target, settings.tolerance, max_scale);
        out.phases = scaled(s.noise_multiplier);
        out.scale = s.noise_multiplier;
        out.guarantee = std::move(s.guarantee);
        return out;
      } catch (const NoSolution&) {
        char buf[160];
        std::snprintf(buf, sizeof buf,
                      " needs every phase's sigma scaled by more than %.6g (the largest phase "
                      "sigma then above %.6g, --max-sigma)",
                      max_scale, settings.max_sigma);
        char goal[48];
        std::snprintf(goal, sizeof goal, " %.6g", target);
        throw NoSolution(oracle.quantity() + goal + buf);
      }
    }
    case RunUnknown::steps: {
      const std::size_t last = phases.size() - 1;
      auto s = largest_count(
          [&](std::int64_t n) {
            std::vector<DpSgdRun> candidate = phases;
            candidate[last].steps = n;
            return schedule_event(candidate);
          },
          oracle, target);
      out.phases[last].steps = s.count;
      out.phases[last].epochs = epochs_of_steps(phases[last], s.count);
      out.guarantee = std::move(s.guarantee);
      return out;
    }
    case RunUnknown::sampling_rate:
    case RunUnknown::none:
      break;
  }
  throw InvalidParameter("unknown", "a schedule solves for sigma or steps");
}

}  // namespace

CalibratedRun calibrate_run(const DpSgdRun& run, RunUnknown unknown, const std::string& accountant,
                            const AccountantOptions& options, double target, const RunTarget& what,
                            const CalibrationSettings& settings) {
  CalibratedRun out = solve_run_unknown(run, unknown, accountant, options, target, what, settings);
  claim_lower_end(out.guarantee, event_is_the_run(out.run));
  return out;
}

CalibratedSchedule calibrate_schedule(const std::vector<DpSgdRun>& phases, RunUnknown unknown,
                                      std::optional<std::size_t> phase,
                                      const std::string& accountant,
                                      const AccountantOptions& options, double target,
                                      const RunTarget& what, const CalibrationSettings& settings) {
  CalibratedSchedule out =
      solve_schedule_unknown(phases, unknown, phase, accountant, options, target, what, settings);
  claim_lower_end(out.guarantee, schedule_is_the_run(out.phases));
  return out;
}

}  // namespace dpb
