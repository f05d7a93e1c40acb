#pragma once
// `--spec FILE` and `--print-spec` for the verbs that report ε or δ of one
// composition (epsilon, delta): the event comes from a spec file instead of
// the DP-SGD flags, or the flags' event is printed as a spec to start from.
#include <CLI/CLI.hpp>
#include <array>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "accounting/accountant.hpp"
#include "cli/flags/accountant_flags.hpp"
#include "cli/flags/choices.hpp"
#include "cli/flags/neighbouring_choices.hpp"
#include "cli/flags/run_parameters.hpp"
#include "cli/input/schedule.hpp"
#include "report/record.hpp"

namespace dpb::cli {

struct SpecFlags {
  std::string file;  ///< --spec; empty = the DP-SGD flags describe the run
  std::string
      schedule;  ///< --schedule: the run in phases over the DP-SGD flags (cli/input/schedule.hpp)
  bool print = false;
  std::string neighbouring;  ///< --neighbouring; empty = the relation the events fix
};

void add_spec_flags(CLI::App& app, SpecFlags& flags);

/// The relation --neighbouring asks for (nullopt when not given). Given
/// without --spec it is a UsageError naming both: the DP-SGD flags' --sampling
/// fixes the relation.
std::optional<Neighbouring> neighbouring_of(const SpecFlags& flags);

/// --print-spec: writes the spec JSON of --spec (normalised), of --schedule
/// (its phases composed) or of the DP-SGD flags to `out`, computing nothing.
void print_spec(const SpecFlags& spec, const DpSgdFlags& run, std::ostream& out);

/// The run to account: its inputs for the report and its event, from --spec
/// when given (every run flag given beside it is refused), else from the flags.
struct RunEvent {
  report::Record inputs;
  EventPtr event;
  std::optional<DpSgdRun> run;               ///< the DP-SGD run, when not a spec file
  std::optional<Neighbouring> neighbouring;  ///< the relation the run is analysed under
  /// A schedule's phases (--schedule; run unset), and whether `event` is the
  /// run's own mechanism.
  std::optional<Schedule> schedule;
  bool event_is_own = true;
};
RunEvent load_run(const SpecFlags& spec, const DpSgdFlags& run);

/// What the verbs about one run do first (epsilon, delta, risk, report):
/// --print-spec prints the spec and gives nullopt; otherwise the run (from
/// --spec or the DP-SGD flags, with the Poisson note on stderr) and the
/// chosen accountants under the relation --neighbouring asks for, or the
/// run's own. `states_epsilon`: the verb states epsilon or delta through
/// answer() (which adds a shuffled run's lower bound, computed with pld),
/// not only attack bounds; it decides the accountant settings read.
struct LoadedRun {
  RunEvent run;
  AccountantChoice choice;
};
std::optional<LoadedRun> load_run_for_accountants(const SpecFlags& spec, const DpSgdFlags& run,
                                                  const AccountantFlags& accountants,
                                                  std::ostream& out, std::ostream& err,
                                                  bool states_epsilon = true);

/// The question a verb asks about a loaded run: its event, its DP-SGD run
/// (when not a spec file), the chosen accountants, ε at each δ of `targets`
/// (or δ at each ε when `solve_delta`).
Question make_question(const RunEvent& run, const AccountantChoice& choice,
                       std::vector<double> targets, bool solve_delta);

}  // namespace dpb::cli
