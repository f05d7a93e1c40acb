// dpbudget gaussian: the noise a Gaussian mechanism needs for (ε, δ)-DP
// (SPEC §2.1), by the analytic calibration (Balle & Wang 2018) and the
// classic one (Dwork & Roth 2014, valid for ε < 1 only).
#include <array>
#include <memory>

#include "accounting/gaussian_mechanism.hpp"
#include "cli/choices.hpp"
#include "cli/errors.hpp"
#include "cli/flag_values.hpp"
#include "cli/output_flags.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {
namespace {

enum class Method { analytic, classic, all };
constexpr std::array<Choice<Method>, 3> kMethods{{
    {"analytic", Method::analytic},
    {"classic", Method::classic},
    {"all", Method::all},
}};

struct GaussianFlags {
  std::vector<std::string> epsilon, delta, sensitivity;
  std::string method = "analytic";
  OutputFlags output;
};

std::string classic_limit(double epsilon) {
  return "classic calibration is valid only for 0 < epsilon < 1, got " + shown(epsilon);
}

int run_gaussian(const GaussianFlags& f, std::ostream& out, std::ostream& err) {
  if (f.epsilon.empty()) throw UsageError("--epsilon is required");
  if (f.delta.empty()) throw UsageError("--delta is required");
  const auto epsilons = parse_list("--epsilon", f.epsilon, kNonNegative);
  const auto deltas = parse_list("--delta", f.delta, kOpenUnit);
  const double sensitivity = optional_real("--sensitivity", f.sensitivity, kPositive).value_or(1.0);
  const Method method = parse_choice("--method", f.method, kMethods);
  const std::string method_name(choice_name(kMethods, method));
  resolve(f.output);  // checks --format before any work
  if (method == Method::classic)
    for (double e : epsilons)
      if (!gaussian_classic_applies(e))
        throw UsageError("--epsilon: " + classic_limit(e) + " (use --method analytic)");

  report::Report rep;
  rep.command = "gaussian";
  rep.inputs.add("sensitivity", report::number(sensitivity));
  rep.inputs.add("method", report::text(method_name));
  const std::vector<std::string> methods = method == Method::all
                                               ? std::vector<std::string>{"analytic", "classic"}
                                               : std::vector<std::string>{method_name};
  using report::Rounding;
  for (const auto& name : methods)
    for (double epsilon : epsilons)
      for (double delta : deltas) {
        const bool classic = name == "classic";
        if (classic && !gaussian_classic_applies(epsilon)) {
          warn(rep, "classic row skipped: " + classic_limit(epsilon));
          continue;
        }
        // σ/Δ and σ are each computed by the calibration itself (rounded up),
        // not one from the other, so both are safe.
        const double multiplier = classic ? gaussian_sigma_classic(epsilon, delta)
                                          : gaussian_sigma_analytic(epsilon, delta);
        const double sd = classic ? gaussian_sigma_classic(epsilon, delta, sensitivity)
                                  : gaussian_sigma_analytic(epsilon, delta, sensitivity);
        report::Record r;
        r.add("method", report::text(name));
        r.add("bound", report::text("upper"));
        r.add("epsilon", report::number(epsilon));
        r.add("delta", report::number(delta));
        r.add("noise_multiplier", report::number(multiplier, Rounding::up));
        r.add("noise_sd", report::number(sd, Rounding::up));
        rep.results.push_back(std::move(r));
      }
  note(rep,
       "noise_multiplier = noise standard deviation / L2 sensitivity; noise_sd = the "
       "standard deviation itself");
  finish(rep, f.output, out, err);
  return kOk;
}

}  // namespace

Verb setup_gaussian(CLI::App& app) {
  auto f = std::make_shared<GaussianFlags>();
  CLI::App* cmd = app.add_subcommand(
      "gaussian",
      "noise of a Gaussian mechanism for (epsilon, delta)-DP: analytic or classic calibration\n"
      "  example: dpbudget gaussian --epsilon 0.5 --delta 1e-5 --method all");
  cmd->add_option("--epsilon", f->epsilon, "target epsilon(s), finite numbers >= 0");
  cmd->add_option("--delta", f->delta, "target delta(s) in (0, 1)");
  cmd->add_option("--sensitivity", f->sensitivity,
                  "L2 sensitivity, a finite number > 0 (default 1)");
  add_choice_option(*cmd, "--method", f->method, kMethods,
                    "analytic (Balle & Wang 2018, default) | classic (Dwork & Roth, epsilon < 1) | "
                    "all (classic rows with epsilon >= 1 are skipped with a warning)");
  add_output_flags(*cmd, f->output);
  return {cmd, [f](std::ostream& out, std::ostream& err) { return run_gaussian(*f, out, err); }};
}

}  // namespace dpb::cli
