#include "accounting/dpsgd/run_forms.hpp"

#include <string>
#include <utility>
#include <vector>

#include "accounting/numerics/outward.hpp"

namespace dpb {
namespace {

using F = RunParam;

}  // namespace

/// σ of noise given as a standard deviation with the clipping norm C
/// (docs/sampling.md#noise-as-a-standard-deviation): std / C when the noise is
/// added to the sum of the clipped gradients, std · B / C when it is added to
/// their mean over the expected batch B (the mean's std is σ·C/B). Rounded
/// down: a smaller σ is more privacy loss. Also checks that the clipping norm
/// and where the noise is added are given only where they are read.
std::optional<double> multiplier_of_std(const RunValues& v, RunUnknown unknown,
                                        std::optional<std::int64_t> batch, DpSgdRun& run) {
  using U = RunUnknown;
  run.noise_std = v.noise_std;
  run.clipping_norm = v.clipping_norm;
  run.noise_on = v.noise_on.value_or(NoiseOn::sum);
  const bool solving = unknown == U::noise_multiplier;
  if (v.noise_on && !v.clipping_norm)
    throw RunParameterError(F::noise_on, {F::noise_on, ": only with ", F::noise_std, " and ",
                                          F::clipping_norm, " (it says where that std is added)"});
  const bool mean = run.noise_on == NoiseOn::mean;
  if (mean && (!batch || unknown == U::sampling_rate))
    throw RunParameterError(
        F::noise_on,
        {F::noise_on, ": mean needs ", F::dataset_size, " and ", F::batch_size,
         unknown == U::sampling_rate ? std::string(" given, not solved for") : std::string(),
         " (noise of std s on the mean of a batch of B is noise s*B on the sum)"});
  if (!v.noise_std) return std::nullopt;
  if (solving)
    throw RunParameterError(
        F::noise_std,
        {F::noise_std, ": not allowed here: the noise multiplier is solved for (give ",
         F::clipping_norm, " alone to have the std it needs stated)"});
  if (v.noise_multiplier || !v.group_noise_multipliers.empty()) {
    const RunParam other =
        v.group_noise_multipliers.empty() ? F::noise_multiplier : F::group_noise_multipliers;
    throw RunParameterError(F::noise_std,
                            {F::noise_std, ": give either it or ", other, ", not both"});
  }
  if (!v.clipping_norm)
    throw RunParameterError(F::noise_std, {F::noise_std, ": needs ", F::clipping_norm, " (",
                                           F::noise_multiplier, " = noise std / clipping norm)"});
  const double sum_std =
      mean ? outward::product_down(*v.noise_std, static_cast<double>(*batch)) : *v.noise_std;
  return outward::quotient_down(sum_std, *v.clipping_norm);
}

double noise_std_of(const DpSgdRun& run) {
  const double sigma =
      run.clipping_count_noise ? run.gradient_noise_multiplier : run.noise_multiplier;
  const double on_sum = outward::product_up(sigma, *run.clipping_norm);
  if (run.noise_on == NoiseOn::mean && run.batch_size)
    return outward::quotient_up(on_sum, static_cast<double>(*run.batch_size));
  return on_sum;
}

bool is_federated(const RunValues& v) { return v.clients || v.clients_per_round || v.rounds; }

/// A federated run's values as a DP-SGD run's (docs/sampling.md#federated-learning): the clients
/// are the dataset, the clients of a round its batch and the rounds its steps. Refuses the DP-SGD
/// parameters beside them: they would count the same thing twice, or something a round is not.
RunValues as_dp_sgd(const RunValues& v) {
  if (!is_federated(v)) return v;
  const RunParam federated = v.clients             ? F::clients
                             : v.clients_per_round ? F::clients_per_round
                                                   : F::rounds;
  auto refuse = [&](bool given, RunParam p, const std::string& why) {
    if (given) throw RunParameterError(p, {p, ": not with ", federated, " (" + why + ")"});
  };
  refuse(v.dataset_size.has_value(), F::dataset_size,
         "a federated run's population is its clients");
  if (v.batch_size)
    throw RunParameterError(
        F::batch_size, {F::batch_size, ": not with ", federated, " (a round samples clients: give ",
                        F::clients_per_round, ")"});
  refuse(v.steps.has_value(), F::steps, "a federated run counts rounds");
  refuse(v.epochs.has_value(), F::epochs, "a federated run counts rounds, not passes");
  refuse(v.last_batch.has_value(), F::last_batch, "a federated run counts rounds");
  refuse(v.accumulation_steps.value_or(1) > 1, F::accumulation_steps,
         "a client's local steps are not rounds: one noisy aggregate per round is one release");
  refuse(v.records_per_user.has_value(), F::records_per_user,
         "the unit of privacy is one client, all of its data");
  RunValues w = v;
  w.dataset_size = v.clients;
  w.batch_size = v.clients_per_round;
  w.steps = v.rounds;
  w.clients = w.clients_per_round = w.rounds = std::nullopt;
  return w;
}

/// `e` with the DP-SGD parameters a federated run was given as named as their federated
/// counterparts (dataset_size as clients, batch_size as clients_per_round, steps as rounds).
RunParameterError federated_error(const RunParameterError& e) {
  auto rename = [](RunParam p) {
    switch (p) {
      case F::dataset_size:
        return F::clients;
      case F::batch_size:
        return F::clients_per_round;
      case F::steps:
        return F::rounds;
      default:
        return p;
    }
  };
  std::vector<RunParameterError::Part> parts = e.parts();
  for (auto& part : parts)
    if (const auto* p = std::get_if<RunParam>(&part)) part = rename(*p);
  return RunParameterError(rename(e.run_param()), std::move(parts));
}

}  // namespace dpb
