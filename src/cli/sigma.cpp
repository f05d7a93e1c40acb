// dpbudget sigma: the smallest noise multiplier with ε ≤ target (docs/calibration.md#sigma).
#include "cli/solve.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {

Verb setup_sigma(CLI::App& app) {
  return setup_solver_verb(
      app, "sigma",
      "smallest noise multiplier with epsilon <= --epsilon at --delta (rounded up)\n"
      "  example: dpbudget sigma --epsilon 2 --delta 1e-5 --dataset-size 60000 "
      "--batch-size 256 --epochs 30",
      Unknown::noise_multiplier);
}

}  // namespace dpb::cli
