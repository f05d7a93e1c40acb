// dpbudget steps: the largest number of steps with ε ≤ target (docs/calibration.md#steps).
#include "cli/run/solve.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {

extern const VerbDescriptor kStepsVerb{
    "steps",
    "largest number of steps (and the epochs it means, given N and B) with epsilon <= --epsilon",
    {"dpbudget steps --epsilon 8 --delta 1e-5 -q 0.01 --sigma 1.1"},
    [](CLI::App& cmd) { return declare_solver_verb(cmd, Unknown::steps); }};

}  // namespace dpb::cli
