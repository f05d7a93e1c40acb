#pragma once
// Flags shared by several verbs, and the step from flags to events,
// accountants and reports. No maths here: that lives in src/accounting/.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "accounting/accountant.hpp"
#include "report/record.hpp"
#include "report/render.hpp"

namespace dpb::cli {

/// The DP-SGD run: q and T directly, or TF-Privacy style from N, B, epochs.
/// Every flag may hold a list (for sweeps); single-run verbs take one value.
struct DpSgdFlags {
  std::vector<std::string> sampling_rate, noise_multiplier, steps, dataset_size, batch_size, epochs,
      group_noise_multipliers;
  std::string sampling = "poisson";
};

/// How each step's batch is drawn.
enum class Sampling {
  poisson,              ///< each record with probability q (add/remove)
  without_replacement,  ///< B of N records (replace-one)
};

/// One configuration's parameters as given (any may be missing).
struct DpSgdValues {
  std::optional<double> sampling_rate, noise_multiplier, epochs;
  std::optional<std::int64_t> steps, dataset_size, batch_size;
  Sampling sampling = Sampling::poisson;
  std::vector<double> group_noise_multipliers;  ///< when σ is z* of these
};

/// A complete run: q, σ and T, plus N, B, epochs when they were given.
struct DpSgdRun {
  double sampling_rate = 0;
  double noise_multiplier = 0;
  std::int64_t steps = 0;
  std::optional<std::int64_t> dataset_size, batch_size;
  std::optional<double> epochs;
  Sampling sampling = Sampling::poisson;
  std::vector<double> group_noise_multipliers;
};

/// The run as a privacy event: T self-composed subsampled Gaussian steps.
EventPtr dp_sgd_event(const DpSgdRun& run);

/// The parameter a verb solves for (it must then not be given).
enum class Unknown { none, noise_multiplier, steps, sampling_rate };

/// How messages name the parameters: flags, or JSON keys of --input lines.
struct ParamNames {
  const char *sampling_rate, *noise_multiplier, *steps, *dataset_size, *batch_size, *epochs;
};
inline constexpr ParamNames kFlagNames{"--sampling-rate", "--noise-multiplier", "--steps",
                                       "--dataset-size",  "--batch-size",       "--epochs"};
inline constexpr ParamNames kJsonNames{"sampling_rate", "noise_multiplier", "steps",
                                       "dataset_size",  "batch_size",       "epochs"};

void add_dp_sgd_flags(CLI::App& app, DpSgdFlags& flags);
/// The flags of a single-run verb: at most one value each.
DpSgdValues single_values(const DpSgdFlags& flags);
/// Every combination of the flags' lists, q (or batch size) outermost, then
/// σ, then steps (or epochs).
std::vector<DpSgdValues> sweep_values(const DpSgdFlags& flags);
/// Checks which parameters go together and derives q = B/N and
/// T = ⌈E·N/B⌉ (SPEC §1). The unknown's fields are left unset.
DpSgdRun derive(const DpSgdValues& values, Unknown unknown, const ParamNames& names = kFlagNames);
/// T = ⌈E·N/B⌉ (or ⌈E/q⌉ without N, B); an exact integer up to 1e-9 relative
/// is not bumped up.
std::int64_t steps_for_epochs(double epochs, double sampling_rate,
                              std::optional<std::int64_t> dataset_size,
                              std::optional<std::int64_t> batch_size);
/// The parameters of a run, in report order (q, σ and T unless unknown).
void add_inputs(report::Record& inputs, const DpSgdRun& run, Unknown unknown = Unknown::none);

/// Which accountants, and their settings.
struct AccountantFlags {
  std::string accountant = "rdp";
  std::vector<std::string> orders;
  std::string conversion = "improved";
  std::string composition = "optimal";
  std::string pld_interval;   ///< empty = automatic
  std::string pld_tolerance;  ///< empty = AccountantOptions default
};

void add_accountant_flags(CLI::App& app, AccountantFlags& flags);
struct AccountantChoice {
  std::vector<std::string> names;  ///< one, or all registered for "all"
  AccountantOptions options;
};
AccountantChoice resolve(const AccountantFlags& flags);
void add_inputs(report::Record& inputs, const AccountantChoice& choice);

/// --format and --precision.
struct OutputFlags {
  std::string format = "text";
  std::string precision;     ///< significant digits in text output; empty = 6
  bool allow_jsonl = false;  ///< JSON Lines for verbs that stream rows
};
void add_output_flags(CLI::App& app, OutputFlags& flags, bool allow_jsonl = false);
report::Format resolve(const OutputFlags& flags);
/// --precision as a text style (colour is decided by emit()).
report::TextStyle text_style(const OutputFlags& flags);

/// One result row from an accountant's guarantee. `solved_delta` says whether
/// δ is the computed quantity (rounded up) or the target echoed back.
report::Record guarantee_record(const Guarantee& g, bool solved_delta);

/// Footnotes and stderr warnings a guarantee calls for (best order at the
/// edge of the order set; notes), added once each.
void collect_remarks(const Guarantee& g, report::Report& report, std::ostream& err);

/// The ε/δ table of any event: `inputs` as given, then one row per accountant
/// and target. An accountant named alone that cannot handle the event is an
/// error (UnsupportedEvent); with several (`--accountant all`) it is skipped
/// with a warning on stderr and a footnote.
report::Report event_table(const std::string& command, report::Record inputs, const DpEvent& event,
                           const AccountantChoice& choice, const std::vector<double>& targets,
                           bool solve_delta, std::ostream& err);

/// Renders to a buffer first, so nothing half-written reaches stdout. Text
/// output is coloured only on a terminal (std::cout to a tty) and never with
/// NO_COLOR set non-empty or TERM=dumb.
void emit(const report::Report& report, report::Format format, std::ostream& out);
/// The same with --format and --precision applied: what every verb should call.
void emit(const report::Report& report, const OutputFlags& flags, std::ostream& out);
void emit(const report::Report& report, report::Format format, std::ostream& out,
          report::TextStyle style);

}  // namespace dpb::cli
