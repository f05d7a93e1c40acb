#include "accounting/run_calibration.hpp"

#include "accounting/answer.hpp"
#include "accounting/errors.hpp"

namespace dpb {

CalibratedRun calibrate_run(const DpSgdRun& run, RunUnknown unknown, const std::string& accountant,
                            const AccountantOptions& options, double target_epsilon,
                            const RunTarget& what, const CalibrationSettings& settings) {
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
      if (run.dataset_size && run.batch_size && run.last_batch)
        // Epochs of steps_per_epoch() steps each (the rule of --last-batch).
        out.run.epochs = static_cast<double>(s.count) /
                         static_cast<double>(
                             steps_per_epoch(*run.dataset_size, *run.batch_size, *run.last_batch));
      else if (run.dataset_size && run.batch_size)
        out.run.epochs = static_cast<double>(s.count) * static_cast<double>(*run.batch_size) /
                         static_cast<double>(*run.dataset_size);
      else
        out.run.epochs.reset();
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
          return run.epochs ? steps_for_epochs(*run.epochs, 0, n, b, run.last_batch) : run.steps;
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

}  // namespace dpb
