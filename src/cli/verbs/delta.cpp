// dpbudget delta: (q, σ, T, ε) -> δ, one row per accountant and ε; or the δ
// of a spec file's composition (--spec).
#include <memory>

#include "cli/run/event_verb.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {

namespace {

Verb declare_delta(CLI::App& command) {
  auto f = std::make_shared<EventVerbFlags>();
  CLI::App* cmd = &command;
  add_dp_sgd_flags(*cmd, f->run);
  cmd->add_option("--epsilon", f->targets, "target epsilon(s) >= 0; several give one row each");
  add_spec_flags(*cmd, f->spec);
  add_accountant_flags(*cmd, f->accountant);
  add_output_flags(*cmd, f->output);
  add_wide_flag(*cmd, f->output);
  return verb_of(cmd, f, [](const EventVerbFlags& flags, std::ostream& out, std::ostream& err) {
    return run_event_verb(flags, /*solve_delta=*/true, out, err);
  });
}

}  // namespace

extern const VerbDescriptor kDeltaVerb{
    "delta",
    "delta of a DP-SGD run (q, sigma, steps) at each --epsilon",
    {"dpbudget delta -q 0.01 --sigma 1.1 --steps 10000 --epsilon 1,2,4"},
    declare_delta};

}  // namespace dpb::cli
