// The DP-SGD run's arithmetic (docs/sampling.md#dp-sgd-run): q = B/N, T = ⌈E·N/B⌉ with exact
// integers kept, the 2^53 steps limit, and which of q, N, B go together.
#include "accounting/dpsgd/dp_sgd_run.hpp"

#include <doctest/doctest.h>

#include <string>
#include <variant>

#include "accounting/accountant.hpp"

using namespace dpb;

namespace {

/// The message of the RunParameterError `f` throws, and its field.
template <typename F>
std::string error_of(F f, RunParam* field = nullptr) {
  try {
    f();
  } catch (const RunParameterError& e) {
    if (field) *field = e.run_param();
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("dp_sgd_run: T = ceil(E*N/B), an exact integer up to 1e-9 relative is kept") {
  CHECK(steps_for_epochs(30, 0, 60000, 256) == 7032);  // 7031.25 rounded up
  CHECK(steps_for_epochs(2, 0, 1000, 10) == 200);
  // 0.1 * 3000 / 10 is 30.000000000000004 in doubles: still 30 steps.
  CHECK(steps_for_epochs(0.1, 0, 3000, 10) == 30);
  CHECK(steps_for_epochs(3, 0.01, std::nullopt, std::nullopt) == 300);  // E/q without N, B
  CHECK(steps_for_epochs(1e-9, 0.5, std::nullopt, std::nullopt) == 1);  // at least one step
  CHECK(error_of([] { steps_for_epochs(1e300, 0.5, std::nullopt, std::nullopt); }) ==
        "epochs: gives more than 2^53 steps");
  CHECK(error_of([] { steps_for_epochs(1, 0, std::nullopt, std::nullopt); }) ==
        "epochs: needs a sampling rate > 0 (steps per epoch = 1/q)");
}

TEST_CASE("dp_sgd_run: --last-batch counts whole epochs of floor(N/B) or ceil(N/B) steps") {
  // PyTorch DataLoader len(): 60000 // 256 = 234 (drop_last), ceil = 235.
  CHECK(steps_per_epoch(60000, 256, LastBatch::drop) == 234);
  CHECK(steps_per_epoch(60000, 256, LastBatch::keep) == 235);
  CHECK(steps_per_epoch(1000, 10, LastBatch::drop) == 100);  // no partial batch: both agree
  CHECK(steps_per_epoch(1000, 10, LastBatch::keep) == 100);
  CHECK(steps_per_epoch(10, 10, LastBatch::drop) == 1);
  // TF Privacy's MNIST tutorial: 60 epochs of 234 steps; Opacus: of 235; without a rule 14063.
  CHECK(steps_for_epochs(60, 0, 60000, 256, LastBatch::drop) == 14040);
  CHECK(steps_for_epochs(60, 0, 60000, 256, LastBatch::keep) == 14100);
  CHECK(steps_for_epochs(60, 0, 60000, 256) == 14063);
  RunParam field{};
  CHECK(error_of([] { steps_for_epochs(2.5, 0, 60000, 256, LastBatch::drop); }, &field) ==
        "epochs: must be a whole number with last_batch (whole passes), got 2.5");
  CHECK(field == RunParam::epochs);
  CHECK(error_of([] { steps_for_epochs(3, 0.01, std::nullopt, std::nullopt, LastBatch::keep); },
                 &field) ==
        "last_batch: needs dataset_size and batch_size (steps per epoch = floor or ceil of N/B)");
  CHECK(field == RunParam::last_batch);
  CHECK(error_of([] { steps_for_epochs(1e300, 0, 60000, 256, LastBatch::keep); }) ==
        "epochs: gives more than 2^53 steps");
}

TEST_CASE("dp_sgd_run: q as given, or B/N, the combinations that do not go together") {
  CHECK(sampling_rate_of(0.25, std::nullopt, std::nullopt) == 0.25);
  CHECK(sampling_rate_of(std::nullopt, 1000, 10) == 0.01);
  CHECK(sampling_rate_of(0.25, 1000, std::nullopt, /*dataset_size_alone=*/true) == 0.25);
  RunParam field{};
  CHECK(error_of([] { sampling_rate_of(0.1, 100, 10); }, &field) ==
        "sampling_rate: give either sampling_rate or dataset_size with batch_size, not both");
  CHECK(field == RunParam::sampling_rate);
  CHECK(error_of([] { sampling_rate_of(0.1, 100, std::nullopt); }).rfind("sampling_rate:", 0) == 0);
  CHECK(error_of([] { sampling_rate_of(std::nullopt, std::nullopt, 10); }, &field) ==
        "batch_size: needs dataset_size (q = batch / dataset)");
  CHECK(field == RunParam::batch_size);
  CHECK(error_of([] { sampling_rate_of(std::nullopt, 100, std::nullopt); }) ==
        "dataset_size: needs batch_size (q = batch / dataset)");
  CHECK(error_of([] { sampling_rate_of(std::nullopt, 100, 200); }) ==
        "batch_size: must be <= dataset_size (100), got 200");
  CHECK(error_of([] { sampling_rate_of(std::nullopt, std::nullopt, std::nullopt); }) ==
        "sampling_rate is required (or dataset_size with batch_size)");
}

TEST_CASE("dp_sgd_run: the error's parts name the parameters for another vocabulary") {
  try {
    sampling_rate_of(std::nullopt, 100, 200);
    FAIL("no error");
  } catch (const RunParameterError& e) {
    std::string flags;
    for (const auto& part : e.parts())
      flags += std::holds_alternative<std::string>(part)
                   ? std::get<std::string>(part)
                   : "<" + std::string(to_string(std::get<RunParam>(part))) + ">";
    CHECK(flags == "<batch_size>: must be <= <dataset_size> (100), got 200");
    CHECK(e.field() == "batch_size");  // InvalidParameter's field
  }
}

TEST_CASE("dp_sgd_run: the event is T Poisson-sampled Gaussians, or B of N without replacement") {
  auto epsilon = [](const EventPtr& event) {
    auto accountant = make_accountant("rdp", AccountantOptions{});
    accountant->compose(*event);
    return accountant->epsilon(1e-5).epsilon;
  };
  DpSgdRun run;
  run.sampling_rate = 0.01;
  run.noise_multiplier = 2;
  run.steps = 700;
  CHECK(epsilon(dp_sgd_event(run)) == epsilon(make_dp_sgd(0.01, 2, 700)));
  run.sampling = Sampling::without_replacement;
  run.dataset_size = 1000;
  run.batch_size = 10;
  const double wor = epsilon(
      make_self_composed(700, make_sampled_without_replacement(1000, 10, make_gaussian(2))));
  CHECK(epsilon(dp_sgd_event(run)) == wor);
  CHECK(wor > epsilon(make_dp_sgd(0.01, 2, 700)));  // replace-one: sensitivity 2
}
