// dpbudget sampling-rate: the largest q (or batch size) with ε ≤ target
// (docs/calibration.md#sampling-rate).
#include "cli/solve.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {

Verb setup_sampling_rate(CLI::App& app) {
  return setup_solver_verb(
      app, "sampling-rate",
      "largest sampling rate (or, with --dataset-size, batch size) with epsilon <= --epsilon\n"
      "  example: dpbudget sampling-rate --epsilon 4 --delta 1e-5 --sigma 1 --steps 10000",
      Unknown::sampling_rate);
}

}  // namespace dpb::cli
