// dpbudget sigma: the smallest noise multiplier with ε ≤ target (docs/calibration.md#sigma).
#include "cli/run/solve.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {

extern const VerbDescriptor kSigmaVerb{
    "sigma",
    "smallest noise multiplier with epsilon <= --epsilon at --delta (rounded up)",
    {"dpbudget sigma --epsilon 2 --delta 1e-5 --dataset-size 60000 --batch-size 256 --epochs 30"},
    [](CLI::App& cmd) { return declare_solver_verb(cmd, Unknown::noise_multiplier); }};

}  // namespace dpb::cli
