#include "accounting/dpsgd/dp_sgd_run.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "accounting/dpsgd/run_forms.hpp"
#include "accounting/events/mixture_dominance.hpp"

namespace dpb {
namespace {

std::string key_message(const std::vector<RunParameterError::Part>& parts) {
  std::string s;
  for (const auto& p : parts) {
    if (const auto* text = std::get_if<std::string>(&p))
      s += *text;
    else if (const auto* param = std::get_if<RunParam>(&p))
      s += to_string(*param);
    else
      s += to_string(std::get<Sampling>(p));
  }
  return s;
}

using F = RunParam;

}  // namespace

std::string_view to_string(RunParam param) {
  switch (param) {
    case F::sampling_rate:
      return "sampling_rate";
    case F::noise_multiplier:
      return "noise_multiplier";
    case F::steps:
      return "steps";
    case F::dataset_size:
      return "dataset_size";
    case F::batch_size:
      return "batch_size";
    case F::accumulation_steps:
      return "accumulation_steps";
    case F::epochs:
      return "epochs";
    case F::last_batch:
      return "last_batch";
    case F::sampling:
      return "sampling";
    case F::group_noise_multipliers:
      return "group_noise_multipliers";
    case F::participations:
      return "participations";
    case F::records_per_user:
      return "records_per_user";
    case F::clipping_count_noise:
      return "clipping_count_noise";
    case F::noise_std:
      return "noise_std";
    case F::clipping_norm:
      return "clipping_norm";
    case F::noise_on:
      return "noise_on";
    case F::clients:
      return "clients";
    case F::clients_per_round:
      return "clients_per_round";
    case F::rounds:
      return "rounds";
  }
  return "?";
}

std::string_view to_string(Sampling sampling) {
  switch (sampling) {
    case Sampling::poisson:
      return "poisson";
    case Sampling::without_replacement:
      return "without_replacement";
    case Sampling::shuffle:
      return "shuffle";
    case Sampling::balls_in_bins:
      return "balls_in_bins";
  }
  return "?";
}

RunParameterError::RunParameterError(RunParam param, std::vector<Part> parts)
    : InvalidParameter(std::string(to_string(param)), key_message(parts)),
      run_param_(param),
      message_(key_message(parts)),
      parts_(std::move(parts)) {}

namespace {

/// The step of a Poisson-sampled run whose unit of privacy is a user of k
/// records, each clipped to norm 1: the user's contribution to a step is the
/// number of their records in the batch, Binomial(k, q), so the step is
/// N(0, σ²) against Σ_j C(k,j) q^j (1−q)^{k−j} N(j, σ²) (docs/sampling.md#user-level; Ganesh
/// 2024, arXiv 2401.10294).
EventPtr user_level_poisson_step(double q, double sigma, std::int64_t k) {
  MixtureOfGaussiansEvent m{sigma, {}, binomial_weights(k, q)};
  for (std::int64_t j = 0; j <= k; ++j) m.sensitivities.push_back(static_cast<double>(j));
  return make_event(std::move(m));
}

EventPtr poisson_run_event(double q, double sigma, std::int64_t steps, std::int64_t k) {
  if (k == 1) return make_dp_sgd(q, sigma, steps);
  return make_self_composed(steps, user_level_poisson_step(q, sigma, k));
}

}  // namespace

Neighbouring run_relation(const DpSgdRun& run) {
  switch (run.sampling) {
    case Sampling::poisson:
    case Sampling::balls_in_bins:
      return Neighbouring::add_remove;
    case Sampling::without_replacement:
      return Neighbouring::replace_one;
    case Sampling::shuffle:
      return Neighbouring::replace_special;
  }
  return Neighbouring::add_remove;
}

std::int64_t epoch_steps(const DpSgdRun& run) {
  return steps_per_epoch(*run.dataset_size, *run.batch_size,
                         run.last_batch.value_or(LastBatch::keep));
}

std::int64_t epochs_started(const DpSgdRun& run) {
  const std::int64_t t = epoch_steps(run);
  return run.steps / t + (run.steps % t != 0 ? 1 : 0);
}

EventPtr dp_sgd_event(const DpSgdRun& run) {
  const std::int64_t k = run.records_per_user;
  const double sigma = run.noise_multiplier;
  switch (run.sampling) {
    case Sampling::poisson:
      return poisson_run_event(run.sampling_rate, sigma, run.steps, k);
    case Sampling::without_replacement:
      if (k != 1)
        throw RunParameterError(F::records_per_user,
                                {F::records_per_user,
                                 ": only 1 with sampling without replacement (no user-level "
                                 "analysis of fixed-size batches is implemented; use poisson)"});
      return make_self_composed(run.steps,
                                make_sampled_without_replacement(*run.dataset_size, *run.batch_size,
                                                                 make_gaussian(sigma)));
    case Sampling::shuffle:
      // Each record in one step per epoch; a user's k records in at most k
      // steps, whose per-step counts n_j (Σ n_j = k) make the epoch a
      // composition of Gaussians of sensitivities n_j: μ² = Σ n_j²/σ² ≤
      // k²/σ² (Dong, Roth & Su 2022, Cor. 3.3), one Gaussian at σ/k.
      return make_self_composed(
          epochs_started(run),
          make_event(ShuffledEvent{epoch_steps(run), make_gaussian(scaled_noise_multiplier(
                                                         sigma, static_cast<double>(k)))}));
    case Sampling::balls_in_bins:
      if (k == 1)
        return make_self_composed(epochs_started(run),
                                  make_event(RandomAllocationEvent{
                                      epoch_steps(run), run.participations, make_gaussian(sigma)}));
      // A user of k records, each in p distinct steps: per-step counts n_j ≤ k
      // with Σ n_j = kp, so Σ n_j² ≤ k·kp and the epoch is at most p Gaussian
      // releases at σ/k (as above; no amplification is claimed for users).
      std::int64_t releases = 0;
      if (__builtin_mul_overflow(epochs_started(run), run.participations, &releases))
        throw RunParameterError(F::participations, {F::participations, ": too many releases"});
      return make_self_composed(
          releases, make_gaussian(scaled_noise_multiplier(sigma, static_cast<double>(k))));
  }
  return nullptr;
}

bool event_is_the_run(const DpSgdRun& run) {
  // With adaptive clipping's count the event is one Gaussian at the combined multiplier, which
  // dominates the run (docs/mechanisms.md#adaptive-clipping) but is not shown to be attained.
  if (run.clipping_count_noise) return false;
  switch (run.sampling) {
    case Sampling::poisson:  // user level: the Binomial mixture, aligned gradients attain it
    case Sampling::without_replacement:
    case Sampling::shuffle:  // the shuffled event itself; its PLD pair says it dominates
      return true;
    case Sampling::balls_in_bins:
      return run.records_per_user == 1;
  }
  return false;
}

EventPtr poisson_estimate_event(const DpSgdRun& run) {
  // A record is in k of the t steps of a balls-in-bins epoch: the Poisson
  // analogue has rate k·B/N (B/N for shuffling and k = 1).
  const double rate =
      run.sampling == Sampling::balls_in_bins
          ? std::min(1.0, static_cast<double>(run.participations) * run.sampling_rate)
          : run.sampling_rate;
  return poisson_run_event(rate, run.noise_multiplier, run.steps, run.records_per_user);
}

EventPtr shuffle_lower_bound_event(const DpSgdRun& run) {
  if (run.sampling != Sampling::shuffle || !run.dataset_size || !run.batch_size) return nullptr;
  if (*run.dataset_size % *run.batch_size != 0) return nullptr;
  const std::int64_t t = epoch_steps(run), whole = run.steps / t;
  if (whole < 1) return nullptr;
  // With adaptive clipping's count, the gradient's own multiplier: leaving the count out is
  // post-processing, so the run loses at least what its gradients alone do
  // (docs/mechanisms.md#adaptive-clipping).
  const double sigma =
      run.clipping_count_noise ? run.gradient_noise_multiplier : run.noise_multiplier;
  return make_self_composed(whole, make_event(RandomAllocationEvent{t, 1, make_gaussian(sigma)}));
}

namespace {

/// A number as the notes say it: 6 significant digits.
std::string note_number(double x) {
  std::ostringstream out;
  out << std::setprecision(6) << x;
  return out.str();
}

}  // namespace

std::vector<std::string> run_notes(const DpSgdRun& run, const std::vector<double>& deltas) {
  std::vector<std::string> notes;
  const std::string units = run.federated ? "clients" : "records";
  if (run.dataset_size) {
    const double n = static_cast<double>(*run.dataset_size);
    for (double d : deltas) {
      // Ponomareva et al. 2023, §5.3: δ ≪ 1/N (docs/claims.md#delta-against-n).
      if (d * n >= 1)
        notes.push_back("delta " + note_number(d) + " is not below 1/N = " + note_number(1 / n) +
                        " (N = " + std::to_string(*run.dataset_size) + " " + units +
                        "): a mechanism that publishes one of them at random in the clear meets "
                        "it; use delta well below 1/N");
      else if (d * n > kDeltaTimesNWarning)
        notes.push_back("delta " + note_number(d) + " x N = " + note_number(d * n) +
                        " (N = " + std::to_string(*run.dataset_size) + " " + units +
                        "): the chance that some one's guarantee fails is not negligible; use "
                        "delta well below 1/N");
    }
  }
  if (run.federated && run.sampling == Sampling::without_replacement)
    notes.push_back(
        "a fixed number of clients per round is analysed under replace-one (one client's data "
        "swapped for another's moves the noisy sum twice as far as adding or removing a client), "
        "so its epsilon is larger than, and not comparable with, --sampling poisson's add/remove "
        "figure (docs/sampling.md#federated-learning)");
  return notes;
}

double sampling_rate_of(std::optional<double> q, std::optional<std::int64_t> n,
                        std::optional<std::int64_t> b, bool dataset_size_alone) {
  if (q && (b || (n && !dataset_size_alone)))
    throw RunParameterError(F::sampling_rate,
                            {F::sampling_rate, ": give either ", F::sampling_rate, " or ",
                             F::dataset_size, " with ", F::batch_size, ", not both"});
  if (q) return *q;
  if (b && !n)
    throw RunParameterError(F::batch_size,
                            {F::batch_size, ": needs ", F::dataset_size, " (q = batch / dataset)"});
  if (n && !b)
    throw RunParameterError(F::dataset_size,
                            {F::dataset_size, ": needs ", F::batch_size, " (q = batch / dataset)"});
  if (!b)
    throw RunParameterError(F::sampling_rate, {F::sampling_rate, " is required (or ",
                                               F::dataset_size, " with ", F::batch_size, ")"});
  if (*n < 1)
    throw RunParameterError(F::dataset_size, {F::dataset_size, ": must be an integer >= 1"});
  if (*b < 1) throw RunParameterError(F::batch_size, {F::batch_size, ": must be an integer >= 1"});
  if (*b > *n)
    throw RunParameterError(F::batch_size,
                            {F::batch_size, ": must be <= ", F::dataset_size,
                             " (" + std::to_string(*n) + "), got " + std::to_string(*b)});
  return static_cast<double>(*b) / static_cast<double>(*n);
}

std::int64_t steps_per_epoch(std::int64_t n, std::int64_t b, LastBatch last_batch) {
  // PyTorch BatchSampler.__len__: N // B if drop_last else (N + B - 1) // B.
  return last_batch == LastBatch::drop ? n / b : (n + b - 1) / b;
}

std::int64_t steps_for_epochs(double epochs, double sampling_rate,
                              std::optional<std::int64_t> dataset_size,
                              std::optional<std::int64_t> batch_size,
                              std::optional<LastBatch> last_batch) {
  const bool by_batch = dataset_size && batch_size;
  if (last_batch) {
    if (!by_batch)
      throw RunParameterError(F::last_batch,
                              {F::last_batch, ": needs ", F::dataset_size, " and ", F::batch_size,
                               " (steps per epoch = floor or ceil of N/B)"});
    if (epochs != std::floor(epochs)) {
      std::ostringstream shown;
      shown << std::setprecision(17) << epochs;
      throw RunParameterError(F::epochs, {F::epochs, ": must be a whole number with ",
                                          F::last_batch, " (whole passes), got " + shown.str()});
    }
    const double steps =
        epochs * static_cast<double>(steps_per_epoch(*dataset_size, *batch_size, *last_batch));
    if (!(steps <= kMaxSteps))
      throw RunParameterError(F::epochs, {F::epochs, ": gives more than 2^53 steps"});
    return std::max<std::int64_t>(1, static_cast<std::int64_t>(steps));
  }
  if (!by_batch && !(sampling_rate > 0))
    throw RunParameterError(F::epochs,
                            {F::epochs, ": needs a sampling rate > 0 (steps per epoch = 1/q)"});
  const double exact =
      by_batch ? epochs * static_cast<double>(*dataset_size) / static_cast<double>(*batch_size)
               : epochs / sampling_rate;
  const double nearest = std::round(exact);
  const double steps = std::abs(exact - nearest) <= 1e-9 * exact ? nearest : std::ceil(exact);
  if (!(steps <= kMaxSteps))
    throw RunParameterError(F::epochs, {F::epochs, ": gives more than 2^53 steps"});
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(steps));
}

namespace {

/// The batch that is sampled (docs/sampling.md#gradient-accumulation): the physical micro-batch B
/// times the accumulation steps k, B·k; B itself when k = 1. Refuses k > 1 where it can only be a
/// mistake: beside q given directly (q is then already the rate of one optimizer step), without B,
/// and a logical batch larger than N.
std::optional<std::int64_t> logical_batch(const RunValues& v, RunUnknown unknown) {
  const std::int64_t k = v.accumulation_steps.value_or(1);
  if (k == 1) return v.batch_size;
  if (v.sampling_rate && unknown != RunUnknown::sampling_rate)
    throw RunParameterError(
        F::accumulation_steps,
        {F::accumulation_steps, ": not with ", F::sampling_rate, " (", F::sampling_rate,
         " is already the sampling rate of one optimizer step, the logical batch over N; give ",
         F::dataset_size, " and ", F::batch_size, ", the physical micro-batch, or leave out ",
         F::accumulation_steps, ")"});
  if (unknown == RunUnknown::sampling_rate) {
    // The batch size is solved for: the micro-batch b, sampled as b·k.
    if (!v.dataset_size)
      throw RunParameterError(F::accumulation_steps,
                              {F::accumulation_steps, ": needs ", F::dataset_size,
                               " when the sampling rate is solved for (the micro-batch size is "
                               "then solved for)"});
    if (k > *v.dataset_size)
      throw RunParameterError(
          F::accumulation_steps,
          {F::accumulation_steps, ": " + std::to_string(k) + " micro-batches of one record exceed ",
           F::dataset_size, " " + std::to_string(*v.dataset_size)});
    return std::nullopt;
  }
  if (!v.batch_size)
    throw RunParameterError(F::accumulation_steps,
                            {F::accumulation_steps, ": needs ", F::batch_size,
                             " (the physical micro-batch) and ", F::dataset_size});
  std::int64_t logical = 0;
  const bool overflow = __builtin_mul_overflow(*v.batch_size, k, &logical);
  if (v.dataset_size && (overflow || logical > *v.dataset_size))
    throw RunParameterError(
        F::accumulation_steps,
        {F::accumulation_steps, ": the logical batch ", F::batch_size, " x ", F::accumulation_steps,
         " = " + std::to_string(*v.batch_size) + " x " + std::to_string(k) +
             (overflow ? std::string() : " = " + std::to_string(logical)) + " exceeds ",
         F::dataset_size, " " + std::to_string(*v.dataset_size)});
  // Without N, sampling_rate_of() refuses B alone.
  return overflow ? v.batch_size : std::optional<std::int64_t>(logical);
}

}  // namespace

double clipping_combined_multiplier(double gradient_multiplier, double count_noise) {
  // Andrew et al. 2021, Theorem 1 (docs/mechanisms.md#adaptive-clipping). Scaled by the smaller
  // multiplier (no overflow), 4 ulps down past the rounding of the sum, division and root, as
  // grouped_noise_multiplier() does (dpsgd/ does not use mechanisms/).
  const double z_g = gradient_multiplier, z_b = 2 * count_noise;
  const double m = std::min(z_g, z_b);
  double combined = m / std::sqrt((m / z_g) * (m / z_g) + (m / z_b) * (m / z_b));
  for (int i = 0; i < 4; ++i) combined = std::nextafter(combined, 0.0);
  return combined;
}

namespace {

/// The refusals of a sampling scheme beside the parameters it needs or does
/// not take: N and B for fixed-size batches, participations only with
/// balls-in-bins, one record per user without replacement.
void check_sampling_scheme(const RunValues& v, RunUnknown unknown, const DpSgdRun& run) {
  using U = RunUnknown;
  if (v.sampling != Sampling::poisson &&
      (!v.dataset_size || (!v.batch_size && unknown != U::sampling_rate)))
    throw RunParameterError(F::sampling, {F::sampling, ": ", v.sampling, " needs ", F::dataset_size,
                                          " and ", F::batch_size,
                                          v.sampling == Sampling::without_replacement
                                              ? std::string(" (B of N)")
                                              : std::string(" (the steps per epoch are N/B)")});
  if (v.participations && v.sampling != Sampling::balls_in_bins)
    throw RunParameterError(F::participations,
                            {F::participations, ": only with ", F::sampling, " ",
                             Sampling::balls_in_bins, " (got ", v.sampling, ")"});
  if (run.records_per_user > 1 && v.sampling == Sampling::without_replacement)
    throw RunParameterError(F::records_per_user,
                            {F::records_per_user,
                             ": only 1 with without-replacement sampling (no user-level analysis "
                             "of fixed-size batches is implemented here; use poisson, shuffle or "
                             "balls-in-bins)"});
}

/// σ, unless it is solved for, and the count noise of adaptive clipping
/// folded into it.
void derive_noise(const RunValues& v, RunUnknown unknown, std::optional<std::int64_t> batch,
                  DpSgdRun& run) {
  using U = RunUnknown;
  const std::optional<double> of_std = multiplier_of_std(v, unknown, batch, run);
  if (of_std) {
    if (!(*of_std > 0) || !std::isfinite(*of_std))
      throw RunParameterError(F::noise_std, {F::noise_std,
                                             ": gives a noise multiplier that is "
                                             "not a finite number > 0"});
    run.noise_multiplier = *of_std;
  } else if (unknown == U::noise_multiplier) {
    if (!v.group_noise_multipliers.empty())
      throw RunParameterError(F::group_noise_multipliers,
                              {F::group_noise_multipliers,
                               ": not allowed here: the noise multiplier is what is solved for"});
    if (v.noise_multiplier)
      throw RunParameterError(
          F::noise_multiplier,
          {F::noise_multiplier, ": not allowed here: it is what is solved for"});
  } else {
    if (!v.noise_multiplier)
      throw RunParameterError(F::noise_multiplier, {F::noise_multiplier, " is required (or ",
                                                    F::noise_std, " with ", F::clipping_norm, ")"});
    run.noise_multiplier = *v.noise_multiplier;
  }
  if (v.clipping_count_noise) {
    if (!(*v.clipping_count_noise > 0) || !std::isfinite(*v.clipping_count_noise))
      throw RunParameterError(F::clipping_count_noise,
                              {F::clipping_count_noise, ": must be a finite number > 0"});
    run.clipping_count_noise = v.clipping_count_noise;
    // Andrew et al. 2021, Theorem 1 (docs/mechanisms.md#adaptive-clipping): gradient and count
    // act as one Gaussian of multiplier (z_g⁻² + (2σ_b)⁻²)^(−1/2), rounded down. Solving for σ,
    // the solver finds that combined multiplier and calibrate_run() the gradient's.
    if (unknown != U::noise_multiplier) {
      run.gradient_noise_multiplier = run.noise_multiplier;
      run.noise_multiplier =
          clipping_combined_multiplier(run.noise_multiplier, *v.clipping_count_noise);
    }
  }
}

/// T from the steps or the epochs, unless it is solved for, and the
/// refusals of the last-batch rule.
void derive_length(const RunValues& v, RunUnknown unknown, std::optional<std::int64_t> batch,
                   DpSgdRun& run) {
  using U = RunUnknown;
  if (v.steps && v.epochs)
    throw RunParameterError(
        F::epochs, {F::epochs, ": give either ", F::steps, " or ", F::epochs, ", not both"});
  // A last-batch rule counts the steps of each epoch: it needs epochs (or,
  // solving for T, N and B to say how many epochs T is).
  if (v.last_batch && unknown != U::steps && !v.epochs)
    throw RunParameterError(
        F::last_batch, {F::last_batch, ": goes with ", F::epochs, " (it sets the steps per epoch; ",
                        F::steps, " are taken as given)"});
  if (v.last_batch && unknown == U::steps && !(v.dataset_size && v.batch_size))
    throw RunParameterError(F::last_batch,
                            {F::last_batch, ": needs ", F::dataset_size, " and ", F::batch_size,
                             " (steps per epoch = floor or ceil of N/B)"});
  if (unknown == U::steps) {
    if (v.steps || v.epochs) {
      const RunParam given = v.steps ? F::steps : F::epochs;
      throw RunParameterError(
          given, {given, ": not allowed here: the number of steps is what is solved for"});
    }
  } else if (v.steps) {
    run.steps = *v.steps;
  } else if (v.epochs) {
    if (unknown == U::sampling_rate) {
      if (!v.dataset_size)
        throw RunParameterError(F::epochs, {F::epochs, ": needs ", F::dataset_size,
                                            " when the batch size is solved for"});
      // The rule's refusals now, not inside the solver (any B in [1, N] will do).
      if (v.last_batch) steps_for_epochs(*v.epochs, 0, v.dataset_size, 1, v.last_batch);
    } else {
      run.steps =
          steps_for_epochs(*v.epochs, run.sampling_rate, v.dataset_size, batch, v.last_batch);
    }
  } else {
    throw RunParameterError(F::steps, {F::steps, " is required (or ", F::epochs, ")"});
  }
}

DpSgdRun derive_dp_sgd_run(const RunValues& v, RunUnknown unknown) {
  using U = RunUnknown;
  DpSgdRun run;
  run.dataset_size = v.dataset_size;
  run.epochs = v.epochs;
  run.last_batch = v.last_batch;
  run.sampling = v.sampling;
  run.group_noise_multipliers = v.group_noise_multipliers;
  run.participations = v.participations.value_or(1);
  run.records_per_user = v.records_per_user.value_or(1);
  check_sampling_scheme(v, unknown, run);
  // From here on the batch is the logical one, what is sampled.
  const std::optional<std::int64_t> batch = logical_batch(v, unknown);
  run.batch_size = batch;
  run.accumulation_steps = v.accumulation_steps.value_or(1);
  derive_noise(v, unknown, batch, run);

  // Sampling: q, or B out of N.
  if (unknown == U::sampling_rate) {
    if (v.sampling_rate || v.batch_size) {
      const RunParam given = v.sampling_rate ? F::sampling_rate : F::batch_size;
      throw RunParameterError(
          given, {given, ": not allowed here: the sampling rate is what is solved for"});
    }
  } else {
    if (v.sampling_rate && v.dataset_size && !v.batch_size && !v.epochs)
      throw RunParameterError(F::dataset_size,
                              {F::dataset_size, ": goes with ", F::batch_size, " or ", F::epochs});
    run.sampling_rate =
        sampling_rate_of(v.sampling_rate, v.dataset_size, batch, /*dataset_size_alone=*/true);
  }

  derive_length(v, unknown, batch, run);
  if (v.sampling == Sampling::balls_in_bins && run.batch_size &&
      run.participations > epoch_steps(run))
    throw RunParameterError(
        F::participations,
        {F::participations, ": must be <= the steps per epoch (" +
                                std::to_string(epoch_steps(run)) + " = N/B), got " +
                                std::to_string(run.participations)});
  return run;
}

}  // namespace

DpSgdRun derive_run(const RunValues& v, RunUnknown unknown) {
  const RunValues values = as_dp_sgd(v);
  const bool federated = is_federated(v);
  try {
    DpSgdRun run = derive_dp_sgd_run(values, unknown);
    run.federated = federated;
    return run;
  } catch (const RunParameterError& e) {
    if (!federated) throw;
    throw federated_error(e);
  }
}

}  // namespace dpb
