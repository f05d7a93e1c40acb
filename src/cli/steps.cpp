// dpbudget steps: the largest number of steps with ε ≤ target (docs/calibration.md#steps).
#include "cli/solve.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {

Verb setup_steps(CLI::App& app) {
  return setup_solver_verb(
      app, "steps",
      "largest number of steps (and the epochs it means, given N and B) with epsilon <= "
      "--epsilon\n"
      "  example: dpbudget steps --epsilon 8 --delta 1e-5 -q 0.01 --sigma 1.1",
      Unknown::steps);
}

}  // namespace dpb::cli
