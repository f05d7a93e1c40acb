// dpbudget gaussian: the noise a Gaussian mechanism needs for (ε, δ)-DP
// (docs/mechanisms.md#gaussian-profile), by the analytic calibration (Balle & Wang 2018) and the
// classic one (Dwork & Roth 2014, valid for ε < 1 only); and the other way,
// given the noise (--sigma or --noise-sd), ε at each --delta or δ at each
// --epsilon by the same two methods. The maths is accounting/gaussian_mechanism.
#include <algorithm>
#include <array>
#include <memory>

#include "accounting/errors.hpp"
#include "accounting/mechanisms/gaussian_mechanism.hpp"
#include "cli/errors.hpp"
#include "cli/flags/choices.hpp"
#include "cli/flags/flag_values.hpp"
#include "cli/flags/output_flags.hpp"
#include "cli/flags/parse.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {
namespace {

enum class Method { analytic, classic, all };
constexpr std::array<Choice<Method>, 3> kMethods{{
    {"analytic", Method::analytic},
    {"classic", Method::classic},
    {"all", Method::all},
}};

/// --method as its name ("analytic", "classic", "all"), from the one table.
std::string method_named(const std::string& text) {
  return std::string(choice_name(kMethods, parse_choice("--method", text, kMethods)));
}

struct GaussianFlags {
  std::vector<std::string> epsilon, delta, sensitivity, sigma, noise_sd;
  std::string method = "analytic";
  OutputFlags output;
};

std::string classic_limit(double epsilon) {
  return "classic calibration is valid only for 0 < epsilon < 1, got " + shown(epsilon);
}

/// The message of an accounting error without its field name.
std::string reason(const InvalidParameter& e) {
  const std::string what = e.what();
  return what.substr(std::min(what.size(), e.field().size() + 2));
}

/// The report's head: the inputs both directions share.
report::Report start_report(double sensitivity, const std::string& method) {
  report::Report rep;
  rep.command = "gaussian";
  rep.inputs.add("sensitivity", report::number(sensitivity));
  rep.inputs.add("method", report::text(method));
  return rep;
}

/// The methods whose rows are computed, in order.
std::vector<std::string> methods_of(const std::string& method) {
  return method == "all" ? std::vector<std::string>{"analytic", "classic"}
                         : std::vector<std::string>{method};
}

const char* const kNoiseNote =
    "noise_multiplier = noise standard deviation / L2 sensitivity; noise_sd = the "
    "standard deviation itself";

/// The noise given: ε at each δ (--delta) or δ at each ε (--epsilon).
int run_noise_given(const GaussianFlags& f, const std::string& method, double sensitivity,
                    std::ostream& out, std::ostream& err) {
  const bool by_multiplier = either("--sigma", !f.sigma.empty(), "--noise-sd", !f.noise_sd.empty());
  const char* noise_flag = by_multiplier ? "--sigma" : "--noise-sd";
  const auto noises = parse_list(noise_flag, by_multiplier ? f.sigma : f.noise_sd, kPositive);
  if (f.delta.empty() && f.epsilon.empty())
    throw UsageError("--delta is required with " + std::string(noise_flag) +
                     " (for epsilon; or --epsilon, for delta)");
  if (!f.delta.empty() && !f.epsilon.empty())
    throw UsageError(std::string("--epsilon: with ") + noise_flag +
                     " give either --delta (epsilon at each delta) or --epsilon (delta at each "
                     "epsilon), not both");
  const bool want_epsilon = !f.delta.empty();
  const auto given = want_epsilon ? parse_list("--delta", f.delta, kOpenUnit)
                                  : parse_list("--epsilon", f.epsilon, kNonNegative);
  check_table_rows(want_epsilon ? "--delta" : "--epsilon",
                   methods_of(method).size() * noises.size() * given.size());
  check_format(f.output);

  // The noise as the accounting functions take it: σ with sensitivity Δ.
  auto sd_of = [&](double noise) { return by_multiplier ? noise * sensitivity : noise; };
  auto compute = [&](bool classic, double noise, double x) {
    const double d = by_multiplier ? 1.0 : sensitivity;
    if (want_epsilon)
      return classic ? gaussian_epsilon_classic(noise, x, d)
                     : gaussian_epsilon_checked(noise, x, d);
    return classic ? gaussian_delta_classic(noise, x, d) : gaussian_delta(noise, x, d);
  };
  if (method == "classic") {
    // The first pair, in the rows' order, that the classic bound does not cover,
    // found without evaluating every pair (two ranges of 10^6 values each are a
    // valid command line). ε of a noise at δ: covered while ε < 1, and ε falls as δ
    // grows, so a noise covered at the smallest δ is covered at each; δ of a noise at
    // ε: covered when 0 < ε < 1, whatever the noise. (Were log's rounding ever not
    // monotone, a pair passed over here would fail in the rows below: an error all
    // the same, without the flag's name.)
    const auto check = [&](double noise, double x) {
      try {
        (void)compute(true, noise, x);
      } catch (const InvalidParameter& e) {
        throw UsageError(std::string(want_epsilon ? noise_flag : "--epsilon") + ": " + reason(e));
      }
    };
    if (want_epsilon) {
      const double smallest_delta = *std::min_element(given.begin(), given.end());
      for (double noise : noises) {
        bool covered = true;  // at the smallest δ, so at each
        try {
          (void)compute(true, noise, smallest_delta);
        } catch (const InvalidParameter&) {
          covered = false;
        }
        if (!covered)
          for (double x : given) check(noise, x);  // throws at the first not covered
      }
    } else {
      for (double x : given) check(noises.front(), x);
    }
  }
  if (only_checking()) return kOk;

  report::Report rep = start_report(sensitivity, method);
  using report::Rounding;
  for (const auto& name : methods_of(method))
    for (double noise : noises)
      for (double x : given) {
        const bool classic = name == "classic";
        double value = 0;
        try {
          value = compute(classic, noise, x);
        } catch (const InvalidParameter& e) {
          if (!classic) throw;
          warn(rep, std::string("classic row skipped (") +
                        (by_multiplier ? "sigma " : "noise_sd ") + shown(noise) +
                        (want_epsilon ? ", delta " : ", epsilon ") + shown(x) + "): " + reason(e));
          continue;
        }
        report::Record r;
        r.add("method", report::text(name));
        r.add("bound", report::text("upper"));
        r.add("epsilon", want_epsilon ? report::number(value, Rounding::up) : report::number(x));
        r.add("delta", want_epsilon ? report::number(x) : report::number(value, Rounding::up));
        r.add("noise_multiplier", report::number(by_multiplier ? noise : noise / sensitivity));
        r.add("noise_sd", report::number(sd_of(noise)));
        rep.results.push_back(std::move(r));
      }
  note(rep, kNoiseNote);
  note(rep, want_epsilon
                ? "epsilon: the smallest with (epsilon, delta)-DP at this noise, "
                  "rounded up"
                : "delta: the smallest with (epsilon, delta)-DP at this noise, rounded up");
  finish(rep, f.output, out, err);
  return kOk;
}

int run_gaussian(const GaussianFlags& f, std::ostream& out, std::ostream& err) {
  if (!f.sigma.empty() || !f.noise_sd.empty())
    return run_noise_given(f, method_named(f.method),
                           optional_real("--sensitivity", f.sensitivity, kPositive).value_or(1.0),
                           out, err);
  if (f.epsilon.empty())
    throw UsageError("--epsilon is required (the target; or --sigma, to get epsilon of a noise)");
  if (f.delta.empty()) throw UsageError("--delta is required");
  const auto epsilons = parse_list("--epsilon", f.epsilon, kNonNegative);
  const auto deltas = parse_list("--delta", f.delta, kOpenUnit);
  const double sensitivity = optional_real("--sensitivity", f.sensitivity, kPositive).value_or(1.0);
  const auto method = method_named(f.method);
  check_table_rows("--delta", methods_of(method).size() * epsilons.size() * deltas.size());
  check_format(f.output);
  if (method == "classic")
    for (double e : epsilons)
      if (!gaussian_classic_applies(e))
        throw UsageError("--epsilon: " + classic_limit(e) + " (use --method analytic)");
  if (only_checking()) return kOk;

  report::Report rep = start_report(sensitivity, method);
  using report::Rounding;
  for (const auto& name : methods_of(method))
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
  note(rep, kNoiseNote);
  finish(rep, f.output, out, err);
  return kOk;
}

Verb declare_gaussian(CLI::App& command) {
  auto f = std::make_shared<GaussianFlags>();
  CLI::App* cmd = &command;
  cmd->add_option("--epsilon", f->epsilon,
                  "target epsilon(s), finite numbers >= 0; with --sigma: delta at each");
  cmd->add_option("--delta", f->delta, "target delta(s) in (0, 1); with --sigma: epsilon at each");
  cmd->add_option("--sigma,--noise-multiplier", f->sigma,
                  "the noise given, as sd / sensitivity (finite numbers > 0): report epsilon at "
                  "--delta or delta at --epsilon");
  cmd->add_option("--noise-sd,--noise-std", f->noise_sd,
                  "the noise given, as its standard deviation (finite numbers > 0; with "
                  "--sensitivity)");
  cmd->add_option("--sensitivity", f->sensitivity,
                  "L2 sensitivity, a finite number > 0 (default 1)");
  add_choice_option(*cmd, "--method", f->method, kMethods,
                    "analytic (Balle & Wang 2018, default) | classic (Dwork & Roth, epsilon < 1) | "
                    "all (classic rows with epsilon >= 1 are skipped with a warning)");
  add_output_flags(*cmd, f->output);
  return verb_of(cmd, f, run_gaussian);
}

}  // namespace

extern const VerbDescriptor kGaussianVerb{
    "gaussian",
    "noise of a Gaussian mechanism for (epsilon, delta)-DP, or (epsilon, delta) of a given noise: "
    "analytic or classic",
    {"dpbudget gaussian --epsilon 0.5 --delta 1e-5 --method all",
     "dpbudget gaussian --sigma 2 --delta 1e-5"},
    declare_gaussian};

}  // namespace dpb::cli
