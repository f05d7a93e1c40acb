#pragma once
// Each verb lives in its own file: setup_X() declares its subcommand and
// flags, and returns the function that runs it once parsing succeeded.
#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <ostream>
#include <utility>

namespace dpb::cli {

/// Runs a parsed verb: writes the result to `out`, warnings to `err`, and
/// returns the exit status. Throws UsageError / accounting errors.
using VerbRunner = std::function<int(std::ostream& out, std::ostream& err)>;

/// A verb's parser, what runs it once parsed, and what makes its parser
/// ready for another command line: `reset` puts the flag values back as
/// setup left them (default_val included), so a CliSession (app.hpp) parses
/// many command lines with one parser. The constructor takes all three, so a
/// setup cannot forget its reset.
struct Verb {
  Verb(CLI::App* command_, VerbRunner run_, std::function<void()> reset_)
      : command(command_), run(std::move(run_)), reset(std::move(reset_)) {}
  CLI::App* command;
  VerbRunner run;
  std::function<void()> reset;
};

/// The Verb whose flag values all live in `*flags`: it runs as
/// run(*flags, out, err), and its reset restores *flags to what they are now,
/// so setup calls it last, once every flag is declared.
template <class Flags, class Run>
Verb verb_of(CLI::App* command, const std::shared_ptr<Flags>& flags, Run run) {
  return Verb(
      command, [flags, run](std::ostream& out, std::ostream& err) { return run(*flags, out, err); },
      [flags, initial = *flags] { *flags = initial; });
}

Verb setup_epsilon(CLI::App& app);
Verb setup_delta(CLI::App& app);
Verb setup_sigma(CLI::App& app);
Verb setup_steps(CLI::App& app);
Verb setup_sampling_rate(CLI::App& app);
Verb setup_plan(CLI::App& app);
Verb setup_sweep(CLI::App& app);
Verb setup_compose(CLI::App& app);
Verb setup_amplify(CLI::App& app);
Verb setup_gaussian(CLI::App& app);
Verb setup_laplace(CLI::App& app);
Verb setup_gdp(CLI::App& app);
Verb setup_tradeoff(CLI::App& app);
Verb setup_plot(CLI::App& app);
Verb setup_events(CLI::App& app);
Verb setup_audit(CLI::App& app);
Verb setup_risk(CLI::App& app);
Verb setup_report(CLI::App& app);
Verb setup_mf_sensitivity(CLI::App& app);
Verb setup_mf_epsilon(CLI::App& app);
Verb setup_mf_sigma(CLI::App& app);
Verb setup_mf_error(CLI::App& app);

}  // namespace dpb::cli
