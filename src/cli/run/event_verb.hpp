#pragma once
// The runner `epsilon` and `delta` share: one event (the DP-SGD flags' or a
// --spec file's), every chosen accountant, one row per target; for epsilon
// also the --max-epsilon budget gate.
#include <ostream>
#include <string>
#include <vector>

#include "cli/flags/accountant_flags.hpp"
#include "cli/flags/output_flags.hpp"
#include "cli/flags/run_parameters.hpp"
#include "cli/run/spec_verb.hpp"

namespace dpb::cli {

struct EventVerbFlags {
  DpSgdFlags run;
  AccountantFlags accountant;
  OutputFlags output;
  SpecFlags spec;
  std::vector<std::string> targets;  ///< --delta (epsilon verb) or --epsilon (delta verb)
  std::string max_epsilon;           ///< epsilon verb only
};

/// `solve_delta` false: the epsilon verb (ε at each --delta); true: the
/// delta verb (δ at each --epsilon).
int run_event_verb(const EventVerbFlags& flags, bool solve_delta, std::ostream& out,
                   std::ostream& err);

}  // namespace dpb::cli
