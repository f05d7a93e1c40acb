#include "cli/app.hpp"

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "accounting/errors.hpp"
#include "cli/completions.hpp"
#include "cli/errors.hpp"
#include "cli/verbs.hpp"
#include "dpbudget/version.hpp"

namespace dpb::cli {
namespace {

constexpr const char* kExitStatusHelp =
    "Exit status: 0 ok; 1 a --max-epsilon budget was exceeded; 2 bad usage or input;\n"
    "3 no solution (e.g. the target cannot be met).";

std::string version_string() {
  std::string v = std::string("dpbudget ") + kVersion;
  if (*kGitCommit) v += std::string(" (") + kGitCommit + ")";
  return v;
}

}  // namespace

int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"dpbudget: privacy budget calculator for DP-SGD and noisy releases", "dpbudget"};
  app.footer(kExitStatusHelp);
  app.set_version_flag("--version", version_string());
  app.require_subcommand(1);

  std::vector<Verb> verbs;
  // One line per verb, in the order --help lists them.
  for (auto setup : {
           setup_epsilon,
           setup_delta,
           setup_sigma,
           setup_steps,
           setup_sampling_rate,
           setup_sweep,
           setup_compose,
           setup_amplify,
           setup_gaussian,
           setup_laplace,
           setup_gdp,
           setup_tradeoff,
           setup_plot,
       }) {
    verbs.push_back(setup(app));
    verbs.back().command->footer(kExitStatusHelp);
  }
  // Hidden verbs (group ""): listed nowhere, generated from the parser above.
  std::vector<Verb> hidden{setup_completions(app)};

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e, out, err);  // --help, --version
    std::string what = e.what();
    if (app.get_subcommands().empty()) {
      std::string known;
      for (const auto& verb : verbs)
        known += (known.empty() ? "" : ", ") + verb.command->get_name();
      what = argc > 1 && argv[1][0] != '-'
                 ? std::string("unknown verb '") + argv[1] + "'; verbs: " + known
                 : "no verb given; verbs: " + known + " (see 'dpbudget --help')";
    }
    err << "dpbudget: error: " << what << '\n';
    return kUsage;
  }
  try {
    for (const auto* list : {&verbs, &hidden})
      for (const auto& verb : *list)
        if (verb.command->parsed()) return verb.run(out, err);
    return kUsage;
  } catch (const UsageError& e) {
    err << "dpbudget: error: " << e.what() << '\n';
    return kUsage;
  } catch (const InvalidParameter& e) {
    err << "dpbudget: error: " << e.what() << '\n';
    return kUsage;
  } catch (const UnsupportedEvent& e) {
    err << "dpbudget: error: " << e.what() << '\n';
    return kUsage;
  } catch (const NoSolution& e) {
    err << "dpbudget: error: no solution: " << e.what() << '\n';
    return kNoSolution;
  } catch (const std::exception& e) {
    err << "dpbudget: error: internal error: " << e.what() << '\n';
    return kUsage;
  }
}

}  // namespace dpb::cli
