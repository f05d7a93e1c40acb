#pragma once
// `--schedule FILE` (docs/sampling.md#schedules): a DP-SGD run in phases, each
// a JSON object with the run parameters' keys (as `sweep --input` lines);
// every phase inherits the command line's run flags for the keys it does not
// set (kInheritShadows says which keys a phase's own key keeps from the
// flags). The phases become DpSgdRuns (derive, keys named), their event the
// composition (schedule_event) and their inputs a list for the report.
#include <CLI/CLI.hpp>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "accounting/dpsgd/dp_sgd_run.hpp"
#include "cli/flags/run_parameters.hpp"
#include "cli/input/config_input.hpp"
#include "report/record.hpp"

namespace dpb::cli {

/// Declares --schedule FILE on a verb that takes a run.
CLI::Option* add_schedule_flag(CLI::App& app, std::string& file);

struct Schedule {
  std::vector<DpSgdRun> phases;
  std::vector<std::string> names;  ///< each phase's `name`, or its number from 1
  /// The phase whose value is solved for (a named --phase, or the last for
  /// steps); nullopt when nothing is, or every σ is scaled.
  std::optional<std::size_t> solved;
};

/// Reads `file` ('-' for stdin) and derives each phase over the flags' values.
/// `unknown`: none (every phase complete), noise_multiplier (every phase's σ
/// given and scaled, or with `phase` (a name or a number from 1) that phase's
/// σ solved for), steps (the last phase's). Throws UsageError naming the
/// file, the phase and the key or flag at fault.
Schedule load_schedule(const std::string& file, const DpSgdFlags& flags, Unknown unknown,
                       const std::string& phase = "");

/// One phase's run: its values over `base` for the keys it does not set
/// (kInheritShadows: a key that says the same thing another way is not
/// inherited beside it), derived with `unknown`. Throws UsageError naming
/// the key.
DpSgdRun derive_phase(const PhaseInput& phase, const GivenValues& base, Unknown unknown);

/// Why the phases cannot be one run: "phase i: sampling: ..." when phase i
/// is analysed under another neighbouring relation than phase 1; nullopt
/// when they share one.
std::optional<std::string> mixed_relation(const std::vector<DpSgdRun>& phases);

/// The schedule's inputs: `schedule` (the file), `phases` (JSON: each
/// phase's parameters, as add_inputs names them, with its name), one text
/// line per phase, and `total_steps` (unless the last phase's are solved).
void add_schedule_inputs(report::Record& inputs, const std::string& file, const Schedule& schedule,
                         Unknown unknown);

}  // namespace dpb::cli
