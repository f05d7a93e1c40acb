// Spec files with every event kind: a bad spec of each kind is one stderr line
// naming the JSON path (exit 2, nothing on stdout), in the snake-case form and
// in dp_accounting's class_name form. In-process (run_cli): each spec was a
// process of the binary (51 of them, ~12 CPU-s under the sanitizers; issue
// 25); tests/e2e/spec_kinds_test.cpp runs bad specs through the binary too.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "in_process.hpp"

using dpb::cli::RunMode;
using dpb::test::run_in_process;

namespace {

const std::string kGaussianSpec = R"({"gaussian": {"noise_multiplier": 1}})";

/// A bad spec and the whole stderr line after "dpbudget: error: --spec: ".
struct BadSpec {
  std::string spec;
  std::string message;
};

}  // namespace

TEST_CASE("bad specs of every kind: one line naming the JSON path, exit 2, nothing on stdout") {
  const std::vector<BadSpec> cases = {
      // missing field
      {R"({"epsilon_delta": {"epsilon": 1}})", "/epsilon_delta/delta: missing"},
      {R"({"discrete_gaussian": {"sensitivity": 1}})", "/discrete_gaussian/sigma: missing"},
      {R"({"exponential_mechanism": {}})", "/exponential_mechanism/epsilon: missing"},
      {R"({"sampled_with_replacement": {"source_dataset_size": 10, "sample_size": 2}})",
       "/sampled_with_replacement/event: missing"},
      {R"({"repeat_and_select": {"mean": 2, "shape": 1}})", "/repeat_and_select/event: missing"},
      // wrong type
      {R"({"epsilon_delta": {"epsilon": "1", "delta": 0}})",
       "/epsilon_delta/epsilon: must be a number, got a string"},
      {R"({"randomized_response": {"noise_parameter": 0.5, "num_buckets": "two"}})",
       "/randomized_response/num_buckets: must be an integer >= 1, got a string"},
      {R"({"permute_and_flip": {"epsilon": true}})",
       "/permute_and_flip/epsilon: must be a number, got a boolean"},
      {R"({"zcdp": {"rho": 1, "xi": "x"}})", "/zcdp/xi: must be a number, got a string"},
      {R"({"mixture_of_gaussians": {"standard_deviation": 1, "sensitivities": [0, "1"],
           "sampling_probs": [0.5, 0.5]}})",
       "/mixture_of_gaussians/sensitivities/1: must be a number, got a string"},
      {R"({"discrete_laplace": {"noise_parameter": 1, "sensitivity": 0.5}})",
       "/discrete_laplace/sensitivity: must be an integer >= 1 (and at most 2^53)"},
      {R"({"non_private": 3})", "/non_private: must be an object with no fields, got a number"},
      {R"({"no_op": {"x": 1}})", "/no_op/x: unknown key (allowed: no fields)"},
      // probability outside [0, 1]
      {R"({"epsilon_delta": {"epsilon": 1, "delta": 1.5}})",
       "/epsilon_delta/delta: must be in [0, 1]"},
      {R"({"randomized_response": {"noise_parameter": 1.5, "num_buckets": 2}})",
       "/randomized_response/noise_parameter: must be in [0, 1]"},
      {R"({"truncated_subsampled_gaussian": {"dataset_size": 100, "sampling_probability": 1.5,
           "truncated_batch_size": 10, "noise_multiplier": 1}})",
       "/truncated_subsampled_gaussian/sampling_probability: must be in [0, 1]"},
      {R"({"mixture_of_gaussians": {"standard_deviation": 1, "sensitivities": [0, 1],
           "sampling_probs": [1.5, -0.5]}})",
       "/mixture_of_gaussians/sampling_probs: every probability must be in [0, 1]"},
      // probabilities not summing to 1
      {R"({"mixture_of_gaussians": {"standard_deviation": 1, "sensitivities": [0, 1],
           "sampling_probs": [0.5, 0.6]}})",
       "/mixture_of_gaussians/sampling_probs: must sum to 1 (they sum to 1.100000)"},
      {R"({"mixture_of_gaussians": {"standard_deviation": 1, "sensitivities": [0, 1],
           "sampling_probs": [0.5]}})",
       "/mixture_of_gaussians/sampling_probs: must have one probability per sensitivity (2)"},
      // negative values
      {R"({"zcdp": {"rho": -1}})", "/zcdp/rho: must be a finite number >= 0"},
      {R"({"composed": [{"no_op": {}}, {"zcdp": {"rho": -0.5}}]})",
       "/composed/1/zcdp/rho: must be a finite number >= 0"},
      {R"({"exponential_mechanism": {"epsilon": -1}})",
       "/exponential_mechanism/epsilon: must be a finite number >= 0"},
      {R"({"discrete_laplace": {"noise_parameter": -1, "sensitivity": 1}})",
       "/discrete_laplace/noise_parameter: must be a finite number > 0"},
      {R"({"sampled_with_replacement": {"source_dataset_size": 10, "sample_size": -1, "event": )" +
           kGaussianSpec + "}}",
       "/sampled_with_replacement/sample_size: must be an integer >= 0 (and at most 2^53)"},
      {R"({"truncated_subsampled_gaussian": {"dataset_size": 0, "sampling_probability": 0.5,
           "truncated_batch_size": 10, "noise_multiplier": 1}})",
       "/truncated_subsampled_gaussian/dataset_size: must be an integer >= 1 (and at most 2^53)"},
      // step_counts
      {R"({"single_epoch_tree_aggregation": {"noise_multiplier": 1, "step_counts": []}})",
       "/single_epoch_tree_aggregation/step_counts: must be an integer or a non-empty array of "
       "integers, got an empty array"},
      {R"({"single_epoch_tree_aggregation": {"noise_multiplier": 1, "step_counts": [1, -2]}})",
       "/single_epoch_tree_aggregation/step_counts/1: must be an integer >= 0 (and at most 2^53)"},
      {R"({"single_epoch_tree_aggregation": {"noise_multiplier": 1, "step_counts": [0, 0]}})",
       "/single_epoch_tree_aggregation/step_counts: at least one tree must have a step"},
      {R"({"single_epoch_tree_aggregation": {"noise_multiplier": 0, "step_counts": 3}})",
       "/single_epoch_tree_aggregation/noise_multiplier: must be a finite number > 0"},
      // repeat_and_select's shape and mean
      {R"({"repeat_and_select": {"event": )" + kGaussianSpec + R"(, "mean": 10, "shape": "abc"}})",
       "/repeat_and_select/shape: must be a number or \"inf\", got the string 'abc'"},
      {R"({"repeat_and_select": {"event": )" + kGaussianSpec + R"(, "mean": 2, "shape": -1}})",
       "/repeat_and_select/shape: must be a number >= 0 or \"inf\" (Poisson)"},
      {R"({"repeat_and_select": {"event": )" + kGaussianSpec + R"(, "mean": 0.5, "shape": 1}})",
       "/repeat_and_select/mean: must be a finite number >= 1"},
      // discrete_gaussian's dimension: only univariate; null (dp_accounting's
      // None, "unknown") is not taken for 1
      {R"({"discrete_gaussian": {"sigma": 1, "dimension": 2}})",
       "/discrete_gaussian/dimension: must be 1: only the univariate discrete Gaussian is "
       "analysed here"},
      {R"({"discrete_gaussian": {"sigma": 1, "dimension": null}})",
       "/discrete_gaussian/dimension: null (dp_accounting's None: unknown) is not analysed here; "
       "give a value (1: univariate (the default; others are refused))"},
      // the matrix-mechanism kinds (docs/matrix.md#event-kinds)
      {R"({"matrix_mechanism": {"noise_multiplier": 0, "sensitivity": 1}})",
       "/matrix_mechanism/noise_multiplier: must be a finite number > 0"},
      {R"({"matrix_mechanism": {"noise_multiplier": -1, "sensitivity": 1}})",
       "/matrix_mechanism/noise_multiplier: must be a finite number > 0"},
      {R"({"matrix_mechanism": {"noise_multiplier": 1, "sensitivity": -0.5}})",
       "/matrix_mechanism/sensitivity: must be a finite number >= 0"},
      {R"({"matrix_mechanism": {"noise_multiplier": 1}})",
       "/matrix_mechanism/sensitivity: missing"},
      {R"({"banded_matrix_factorization": {"sampling_probability": 1.5, "noise_multiplier": 1,
           "steps": 10, "bands": 2}})",
       "/banded_matrix_factorization/sampling_probability: must be in [0, 1]"},
      {R"({"banded_matrix_factorization": {"sampling_probability": -0.1, "noise_multiplier": 1,
           "steps": 10, "bands": 2}})",
       "/banded_matrix_factorization/sampling_probability: must be in [0, 1]"},
      {R"({"banded_matrix_factorization": {"sampling_probability": 0.1, "noise_multiplier": 0,
           "steps": 10, "bands": 2}})",
       "/banded_matrix_factorization/noise_multiplier: must be a finite number > 0"},
      {R"({"banded_matrix_factorization": {"sampling_probability": 0.1, "noise_multiplier": 1,
           "steps": 10, "bands": 0}})",
       "/banded_matrix_factorization/bands: must be an integer >= 1 (and at most 2^53)"},
      {R"({"banded_matrix_factorization": {"sampling_probability": 0.1, "noise_multiplier": 1,
           "steps": -1, "bands": 2}})",
       "/banded_matrix_factorization/steps: must be an integer >= 0 (and at most 2^53)"},
      {R"({"banded_matrix_factorization": {"sampling_probability": 0.1, "noise_multiplier": 1,
           "steps": 2.5, "bands": 2}})",
       "/banded_matrix_factorization/steps: must be an integer >= 0 (and at most 2^53)"},
      // dpbudget's own kinds have no dp_accounting class name.
      {R"({"class_name": "", "noise_multiplier": 1, "sensitivity": 1})",
       "/class_name: unknown dp_accounting class ''"},
      // dp_accounting's class_name form
      {R"({"class_name": "FooDpEvent"})", "/class_name: unknown dp_accounting class 'FooDpEvent'"},
      {R"({"class_name": 3})", "/class_name: must be a string, got a number"},
      {R"({"class_name": "ComposedDpEvent", "events": [
           {"class_name": "GaussianDpEvent", "noise_multiplier": 1},
           {"class_name": "ZCDpEvent", "rho": -2}]})",
       "/events/1/rho: must be a finite number >= 0"},
      {R"({"class_name": "PoissonSampledDpEvent", "module_name": "dp_accounting.dp_event",
           "sampling_probability": 0.1,
           "event": {"class_name": "GaussianDpEvent", "noise_multiplier": "x"}})",
       "/event/noise_multiplier: must be a number, got a string"},
      {R"({"class_name": "SelfComposedDpEvent", "count": 3, "event":
           {"class_name": "RepeatAndSelectDpEvent", "mean": 3, "shape": "abc",
            "event": {"class_name": "GaussianDpEvent", "noise_multiplier": 1}}})",
       "/event/shape: must be a number or \"inf\", got the string 'abc'"},
      {R"({"class_name": "GaussianDpEvent", "noise_multiplier": 1, "extra": 2})",
       "/extra: unknown key (allowed: noise_multiplier)"},
  };
  for (const auto& c : cases) {
    const auto r =
        run_in_process({"epsilon", "--spec", "-", "--delta", "1e-5"}, RunMode::run, c.spec);
    CAPTURE(c.spec);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err == "dpbudget: error: --spec: " + c.message + "\n");
  }
}
