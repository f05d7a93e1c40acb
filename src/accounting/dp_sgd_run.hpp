#pragma once
// A DP-SGD run (SPEC §1): q and T directly, or TensorFlow-Privacy style from
// the dataset size N, batch size B and epochs E, with q = B/N and
// T = ⌈E·N/B⌉; and the privacy event it is. No I/O. The rules which
// parameters go together throw RunParameterError, whose message names the
// parameters as parts, so that the CLI can name them as flags or as keys.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "accounting/errors.hpp"
#include "accounting/events.hpp"

namespace dpb {

/// How each step's batch is drawn.
enum class Sampling {
  poisson,              ///< each record with probability q (add/remove)
  without_replacement,  ///< B of N records (replace-one)
};

/// A complete run: q, σ and T, plus N, B, epochs when they were given.
struct DpSgdRun {
  double sampling_rate = 0;
  double noise_multiplier = 0;
  std::int64_t steps = 0;
  std::optional<std::int64_t> dataset_size, batch_size;
  std::optional<double> epochs;
  Sampling sampling = Sampling::poisson;
  std::vector<double> group_noise_multipliers;  ///< when σ is z* of these
};

/// The run as a privacy event: T self-composed steps, each a Gaussian on a
/// Poisson sample (rate q) or on B of N records drawn without replacement.
EventPtr dp_sgd_event(const DpSgdRun& run);

/// The parameters of a run, as SPEC §1 and the JSON keys name them.
enum class RunField { sampling_rate, noise_multiplier, steps, dataset_size, batch_size, epochs };
std::string_view to_string(RunField field);

/// Steps are counted in doubles on the way: at most 2^53.
inline constexpr double kMaxSteps = 9007199254740992.0;

/// A run whose parameters do not go together. `parts()` is the message, text
/// and parameter names in turn; what() names the parameters by to_string().
class RunParameterError : public InvalidParameter {
 public:
  using Part = std::variant<std::string, RunField>;
  RunParameterError(RunField field, std::vector<Part> parts);
  RunField run_field() const noexcept { return run_field_; }
  const std::vector<Part>& parts() const noexcept { return parts_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  RunField run_field_;
  std::string message_;
  std::vector<Part> parts_;
};

/// q of a run given as q, or as a batch of B out of N records: q = B/N.
/// Refuses (RunParameterError) neither given, q beside N or B, B without N,
/// B > N, and N without B unless `dataset_size_alone` (q with N kept for
/// another use, e.g. epochs). Also used by `amplify`.
double sampling_rate_of(std::optional<double> sampling_rate,
                        std::optional<std::int64_t> dataset_size,
                        std::optional<std::int64_t> batch_size, bool dataset_size_alone = false);

/// T = ⌈E·N/B⌉ (or ⌈E/q⌉ without N and B), at least 1; a value within 1e-9
/// relative of an integer is that integer, not bumped up. Refuses q = 0
/// (without N and B) and more than 2^53 steps.
std::int64_t steps_for_epochs(double epochs, double sampling_rate,
                              std::optional<std::int64_t> dataset_size,
                              std::optional<std::int64_t> batch_size);

}  // namespace dpb
