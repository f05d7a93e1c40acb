#include "accounting/dp_sgd_run.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace dpb {
namespace {

std::string key_message(const std::vector<RunParameterError::Part>& parts) {
  std::string s;
  for (const auto& p : parts)
    s += std::holds_alternative<std::string>(p) ? std::get<std::string>(p)
                                                : std::string(to_string(std::get<RunField>(p)));
  return s;
}

using F = RunField;

}  // namespace

std::string_view to_string(RunField field) {
  switch (field) {
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
    case F::epochs:
      return "epochs";
    case F::last_batch:
      return "last_batch";
  }
  return "?";
}

RunParameterError::RunParameterError(RunField field, std::vector<Part> parts)
    : InvalidParameter(std::string(to_string(field)), key_message(parts)),
      run_field_(field),
      message_(key_message(parts)),
      parts_(std::move(parts)) {}

EventPtr dp_sgd_event(const DpSgdRun& run) {
  if (run.sampling == Sampling::without_replacement)
    return make_self_composed(
        run.steps, make_sampled_without_replacement(*run.dataset_size, *run.batch_size,
                                                    make_gaussian(run.noise_multiplier)));
  return make_dp_sgd(run.sampling_rate, run.noise_multiplier, run.steps);
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

}  // namespace dpb
