#pragma once
// Each verb lives in its own file: setup_X() declares its subcommand and
// flags, and returns the function that runs it once parsing succeeded.
#include <CLI/CLI.hpp>
#include <functional>
#include <ostream>

namespace dpb::cli {

/// Runs a parsed verb: writes the result to `out`, warnings to `err`, and
/// returns the exit status. Throws UsageError / accounting errors.
using VerbRunner = std::function<int(std::ostream& out, std::ostream& err)>;

struct Verb {
  CLI::App* command;
  VerbRunner run;
};

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
