#pragma once
// Each verb lives in its own file (cli/verbs/): its VerbDescriptor names it,
// says what it answers with an example, and declares its flags, returning the
// function that runs it once parsing succeeded.
#include <CLI/CLI.hpp>
#include <array>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
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

/// A verb, described once: its name, what it answers (the first line of its
/// --help and of `dpbudget --help`), the command lines its --help shows as
/// examples (the man page and a test run them), and the function that
/// declares its flags on the subcommand named `name` and returns its runner.
/// Each verb's file defines one (`kEpsilonVerb` in verbs/epsilon.cpp); the
/// list below is the order of --help. One listed without a definition fails
/// to link; one defined and not listed fails tests/shell/layering_test.sh.
struct VerbDescriptor {
  std::string_view name;
  /// One line, or several, each after the first starting with two spaces.
  std::string_view summary;
  /// Full command lines ("dpbudget NAME ..."), at most three; unused slots
  /// are empty.
  std::array<std::string_view, 3> examples;
  Verb (*declare)(CLI::App& command);

  /// The subcommand's description: the summary, then "  example: ..." lines.
  std::string description() const;
};

extern const VerbDescriptor kEpsilonVerb;
extern const VerbDescriptor kDeltaVerb;
extern const VerbDescriptor kSigmaVerb;
extern const VerbDescriptor kStepsVerb;
extern const VerbDescriptor kSamplingRateVerb;
extern const VerbDescriptor kPlanVerb;
extern const VerbDescriptor kSweepVerb;
extern const VerbDescriptor kComposeVerb;
extern const VerbDescriptor kAmplifyVerb;
extern const VerbDescriptor kGaussianVerb;
extern const VerbDescriptor kLaplaceVerb;
extern const VerbDescriptor kGdpVerb;
extern const VerbDescriptor kZcdpVerb;
extern const VerbDescriptor kTradeoffVerb;
extern const VerbDescriptor kPlotVerb;
extern const VerbDescriptor kEventsVerb;
extern const VerbDescriptor kAuditVerb;
extern const VerbDescriptor kRiskVerb;
extern const VerbDescriptor kReportVerb;
extern const VerbDescriptor kMfSensitivityVerb;
extern const VerbDescriptor kMfEpsilonVerb;
extern const VerbDescriptor kMfSigmaVerb;
extern const VerbDescriptor kMfErrorVerb;
extern const VerbDescriptor kLedgerInitVerb;
extern const VerbDescriptor kLedgerAddVerb;
extern const VerbDescriptor kLedgerStatusVerb;
extern const VerbDescriptor kLedgerHistoryVerb;
extern const VerbDescriptor kLedgerExportVerb;
extern const VerbDescriptor kLedgerImportVerb;
extern const VerbDescriptor kLedgerVerifyVerb;
extern const VerbDescriptor kLedgerVoidVerb;

/// Every verb, in the order `dpbudget --help` lists them.
inline constexpr std::array<const VerbDescriptor*, 31> kVerbs{{
    &kEpsilonVerb,      &kDeltaVerb,        &kSigmaVerb,         &kStepsVerb,
    &kSamplingRateVerb, &kPlanVerb,         &kSweepVerb,         &kComposeVerb,
    &kAmplifyVerb,      &kGaussianVerb,     &kLaplaceVerb,       &kGdpVerb,
    &kZcdpVerb,         &kTradeoffVerb,     &kPlotVerb,          &kEventsVerb,
    &kAuditVerb,        &kRiskVerb,         &kReportVerb,        &kMfSensitivityVerb,
    &kMfEpsilonVerb,    &kMfSigmaVerb,      &kMfErrorVerb,       &kLedgerInitVerb,
    &kLedgerAddVerb,    &kLedgerStatusVerb, &kLedgerHistoryVerb, &kLedgerExportVerb,
    &kLedgerImportVerb, &kLedgerVerifyVerb, &kLedgerVoidVerb,
}};

}  // namespace dpb::cli
