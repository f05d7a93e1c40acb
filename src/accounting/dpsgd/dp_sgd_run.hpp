#pragma once
// A DP-SGD run (docs/sampling.md#dp-sgd-run): q and T directly, or TensorFlow-Privacy style from
// the dataset size N, batch size B and epochs E, with q = B/N and
// T = ⌈E·N/B⌉ (or, with a last-batch rule, E whole epochs of ⌊N/B⌋ or ⌈N/B⌉
// steps); and the privacy event it is. No I/O. The rules which
// parameters go together throw RunParameterError, whose message names the
// parameters as parts, so that the CLI can name them as flags or as keys.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "accounting/accountant.hpp"
#include "accounting/errors.hpp"
#include "accounting/events/events.hpp"

namespace dpb {

/// How each step's batch is drawn.
enum class Sampling {
  poisson,              ///< each record with probability q (add/remove)
  without_replacement,  ///< B of N records (replace-one)
  shuffle,              ///< a fresh permutation per epoch cut into batches (replace-special)
  balls_in_bins,        ///< each record in k uniformly chosen steps of each epoch (add/remove)
};

/// How an epoch's last, partial batch counts, in the words of PyTorch's
/// DataLoader (`drop_last`; its `len()` is ⌊N/B⌋ when dropping, else
/// ⌈N/B⌉): dropped, E·⌊N/B⌋ steps (TensorFlow Privacy's MNIST tutorial), or
/// kept as a smaller batch, E·⌈N/B⌉ steps (Opacus). Without a rule the run
/// has T = ⌈E·N/B⌉ steps (a fractional last epoch, docs/sampling.md#last-batch).
enum class LastBatch { drop, keep };

/// Where the noise a configuration gives as a standard deviation is added
/// (docs/sampling.md#noise-as-a-standard-deviation): to the sum of the clipped
/// gradients (σ = std / C), or to their mean over the expected batch B, as
/// Opacus and Keras report it (σ = std · B / C).
enum class NoiseOn { sum, mean };

/// A complete run: q, σ and T, plus N, B, epochs when they were given.
/// With gradient accumulation (docs/sampling.md#gradient-accumulation) B is the logical batch, the
/// physical micro-batch × accumulation_steps: it is what is sampled, and T
/// counts optimizer steps (one noisy release per logical batch).
struct DpSgdRun {
  double sampling_rate = 0;
  double noise_multiplier = 0;
  std::int64_t steps = 0;
  std::optional<std::int64_t> dataset_size, batch_size;
  std::optional<double> epochs;
  std::optional<LastBatch> last_batch;  ///< when the steps per epoch were given a rule
  Sampling sampling = Sampling::poisson;
  std::vector<double> group_noise_multipliers;  ///< when σ is z* of these
  std::int64_t participations = 1;      ///< balls-in-bins: steps each record is in per epoch
  std::int64_t records_per_user = 1;    ///< the unit of privacy: a user with this many records
  std::int64_t accumulation_steps = 1;  ///< micro-batches per optimizer step (batch_size / k each)
  /// Adaptive clipping (docs/mechanisms.md#adaptive-clipping): σ_b of the noisy count of
  /// unclipped examples released each step. With it, noise_multiplier is the combined
  /// multiplier the run is accounted at and gradient_noise_multiplier the gradient's own.
  std::optional<double> clipping_count_noise;
  double gradient_noise_multiplier = 0;  ///< the gradient's z_g, when clipping_count_noise is set
  /// The noise as given, when given as a standard deviation (σ then derived from it), and the
  /// clipping norm (also given alone when σ is solved for: the std it needs is then stated).
  std::optional<double> noise_std, clipping_norm;
  NoiseOn noise_on = NoiseOn::sum;
  /// Federated learning (docs/sampling.md#federated-learning): the unit of privacy is one client,
  /// N the clients, B the clients per round and T the rounds.
  bool federated = false;
};

/// The neighbouring relation a run is analysed under (docs/sampling.md#relations): add_remove
/// for Poisson sampling and balls-in-bins, replace_one without replacement,
/// replace_special (zero-out: the dataset size stays fixed) for shuffling.
Neighbouring run_relation(const DpSgdRun& run);

/// Steps per epoch t of a shuffled or balls-in-bins run: ⌈N/B⌉ (⌊N/B⌋ with
/// LastBatch::drop). Needs N and B.
std::int64_t epoch_steps(const DpSgdRun& run);
/// Epochs the run's T steps reach into, ⌈T/t⌉: a partial last epoch counts
/// whole (it may hold a record's step), which is the safe side for an upper
/// bound.
std::int64_t epochs_started(const DpSgdRun& run);

/// δ·N above this (and below 1) is said beside a run's figures: a guarantee
/// that fails with probability δ for each of N records fails for some record
/// with probability up to δ·N (Ponomareva et al. 2023, "How to DP-fy ML",
/// §5.3, ask for δ ≪ 1/N).
inline constexpr double kDeltaTimesNWarning = 0.1;

/// What a reader must know about the question a run's figures answer, one
/// line each (docs/claims.md#delta-against-n): δ not below 1/N (a mechanism
/// that publishes a random record meets it) or δ·N above kDeltaTimesNWarning,
/// for each of `deltas` when the run knows N; and a federated run with a
/// fixed number of clients per round, which is analysed under replace-one.
std::vector<std::string> run_notes(const DpSgdRun& run, const std::vector<double>& deltas);

/// The same run analysed as if batches were Poisson-sampled at q = B/N (k·B/N
/// for k balls-in-bins participations): the figure most papers print, an
/// estimate (not a bound) for another loader.
EventPtr poisson_estimate_event(const DpSgdRun& run);

/// A lower bound for a shuffled run, when one is computed here (N a multiple
/// of B and at least one whole epoch): the event whose ε is at most the run's
/// true ε. With every other record's gradient 0, the record (or the null
/// record) sits in a uniformly random one of the t = N/B batches of each
/// epoch, independently across epochs: exactly the random-allocation pair
/// (docs/sampling.md#shuffle-lower-bound) of ⌊T/t⌋ whole epochs, so any lower bound on that pair's
/// ε is one on the shuffled run's (a run of more epochs or a user of more records can only lose
/// more).
EventPtr shuffle_lower_bound_event(const DpSgdRun& run);

/// The run as a privacy event: T self-composed steps, each a Gaussian on a
/// Poisson sample (rate q) or on B of N records drawn without replacement.
EventPtr dp_sgd_event(const DpSgdRun& run);

/// Whether dp_sgd_event(run) is the run's own mechanism, so that a pair its
/// accountants find attained is attained by the run (LowerEnd), or a
/// stand-in that only dominates it: a user-level balls-in-bins run is
/// composed as unamplified Gaussian releases at σ/k.
bool event_is_the_run(const DpSgdRun& run);

/// The parameters of a run, defined once (docs/sampling.md#dp-sgd-run): the
/// CLI's table of flags and JSON Lines keys (cli/flags/run_parameters.hpp) lists
/// them in this order, checked at compile time.
enum class RunParam {
  sampling_rate,
  noise_multiplier,
  steps,
  dataset_size,
  batch_size,
  accumulation_steps,
  epochs,
  last_batch,
  sampling,
  group_noise_multipliers,
  participations,
  records_per_user,
  clipping_count_noise,
  noise_std,          ///< the noise's standard deviation, with clipping_norm: σ = std / C
  clipping_norm,      ///< C, the L2 clipping norm
  noise_on,           ///< whether noise_std is added to the sum or to the mean of the batch
  clients,            ///< federated: clients in the population (dataset_size)
  clients_per_round,  ///< federated: clients sampled per round (batch_size)
  rounds,             ///< federated: rounds (steps); the last: kRunParamCount counts up to it
};
inline constexpr std::size_t kRunParamCount = static_cast<std::size_t>(RunParam::rounds) + 1;
/// The parameter's name as the JSON keys and results spell it.
std::string_view to_string(RunParam param);
/// The scheme as results name it: poisson, without_replacement, shuffle, balls_in_bins.
std::string_view to_string(Sampling sampling);

/// The parameter of a run that is solved for (it must then not be given).
enum class RunUnknown { none, noise_multiplier, steps, sampling_rate };

/// One configuration's parameters as given (any may be missing).
struct RunValues {
  std::optional<double> sampling_rate, noise_multiplier, epochs;
  std::optional<std::int64_t> steps, dataset_size, batch_size;
  std::optional<std::int64_t> accumulation_steps;  ///< k (default 1): batch_size is then physical
  std::optional<LastBatch> last_batch;
  Sampling sampling = Sampling::poisson;
  std::vector<double> group_noise_multipliers;  ///< when σ is z* of these
  std::optional<std::int64_t> participations, records_per_user;
  std::optional<double> clipping_count_noise;  ///< σ_b of adaptive clipping's count
  std::optional<double> noise_std, clipping_norm;
  std::optional<NoiseOn> noise_on;
  std::optional<std::int64_t> clients, clients_per_round, rounds;  ///< federated N, B, T
};

/// Steps are counted in doubles on the way: at most 2^53.
inline constexpr double kMaxSteps = 9007199254740992.0;

/// A run whose parameters do not go together. `parts()` is the message, text
/// and parameter names in turn; what() names the parameters by to_string().
class RunParameterError : public InvalidParameter {
 public:
  /// Text, a parameter (named as flag or key by the reader), or a sampling
  /// scheme (named as the flag's choice or the results' name).
  using Part = std::variant<std::string, RunParam, Sampling>;
  RunParameterError(RunParam param, std::vector<Part> parts);
  RunParam run_param() const noexcept { return run_param_; }
  const std::vector<Part>& parts() const noexcept { return parts_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  RunParam run_param_;
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

/// Steps in one epoch of N records in batches of B (1 <= B <= N), as
/// PyTorch's DataLoader counts them (`__len__` of its BatchSampler):
/// ⌊N/B⌋ with the last partial batch dropped, ⌈N/B⌉ with it kept.
std::int64_t steps_per_epoch(std::int64_t dataset_size, std::int64_t batch_size,
                             LastBatch last_batch);

/// T = ⌈E·N/B⌉ (or ⌈E/q⌉ without N and B), at least 1; a value within 1e-9
/// relative of an integer is that integer, not bumped up. With a last-batch
/// rule, T = E·steps_per_epoch(N, B): it needs N and B, and E whole (a data
/// loader runs whole epochs; a fractional one has no rule for where it stops,
/// so it is refused rather than rounded). Refuses q = 0 (without N and B) and
/// more than 2^53 steps.
std::int64_t steps_for_epochs(double epochs, double sampling_rate,
                              std::optional<std::int64_t> dataset_size,
                              std::optional<std::int64_t> batch_size,
                              std::optional<LastBatch> last_batch = std::nullopt);

/// The run the values describe, with the unknown's fields left unset:
/// checks which parameters go together (each refusal a RunParameterError
/// naming the parameter at fault) and derives q = B/N (B the logical batch,
/// B·k with k accumulation steps, docs/sampling.md#gradient-accumulation) and
/// T = ⌈E·N/B⌉ (docs/sampling.md#dp-sgd-run; E whole epochs of ⌊N/B⌋ or
/// ⌈N/B⌉ steps with a last-batch rule, which goes with epochs only).
/// The multiplier a run with adaptive clipping is accounted at: gradient noise
/// multiplier z_g and clipped-count noise σ_b act as one Gaussian of multiplier
/// (z_g⁻² + (2σ_b)⁻²)^(−1/2), rounded down (docs/mechanisms.md#adaptive-clipping).
double clipping_combined_multiplier(double gradient_multiplier, double count_noise);

DpSgdRun derive_run(const RunValues& values, RunUnknown unknown);

}  // namespace dpb
