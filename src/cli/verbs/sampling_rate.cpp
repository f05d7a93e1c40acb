// dpbudget sampling-rate: the largest q (or batch size) with ε ≤ target
// (docs/calibration.md#sampling-rate).
#include "cli/run/solve.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {

extern const VerbDescriptor kSamplingRateVerb{
    "sampling-rate",
    "largest sampling rate (or, with --dataset-size, batch size) with epsilon <= --epsilon",
    {"dpbudget sampling-rate --epsilon 4 --delta 1e-5 --sigma 1 --steps 10000"},
    [](CLI::App& cmd) { return declare_solver_verb(cmd, Unknown::sampling_rate); }};

}  // namespace dpb::cli
