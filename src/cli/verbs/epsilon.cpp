// dpbudget epsilon: (q, σ, T, δ) -> ε, one row per accountant and δ; or the
// ε of a spec file's composition (--spec).
#include <memory>

#include "cli/run/event_verb.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {

namespace {

Verb declare_epsilon(CLI::App& command) {
  auto f = std::make_shared<EventVerbFlags>();
  CLI::App* cmd = &command;
  add_dp_sgd_flags(*cmd, f->run);
  cmd->add_option("--delta", f->targets, "target delta(s) in (0, 1); several give one row each");
  cmd->add_option("--max-epsilon", f->max_epsilon,
                  "budget gate: rows with epsilon above it are named on stderr; exit status 1");
  add_spec_flags(*cmd, f->spec);
  add_accountant_flags(*cmd, f->accountant);
  add_output_flags(*cmd, f->output);
  add_wide_flag(*cmd, f->output);
  return verb_of(cmd, f, [](const EventVerbFlags& flags, std::ostream& out, std::ostream& err) {
    return run_event_verb(flags, /*solve_delta=*/false, out, err);
  });
}

}  // namespace

extern const VerbDescriptor kEpsilonVerb{
    "epsilon",
    "epsilon spent by a DP-SGD run (q, sigma, steps) at each --delta",
    {"dpbudget epsilon -q 0.01 --sigma 1.1 --steps 10000 --delta 1e-5"},
    declare_epsilon};

}  // namespace dpb::cli
