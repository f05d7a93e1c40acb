// dpbudget zcdp: zero-concentrated DP budgets in and out (docs/zcdp.md). ρ of
// a mechanism (given, Gaussian releases, or an ε-DP mechanism), composed over
// --steps; then ε at each --delta or δ at each --epsilon by Canonne, Kamath &
// Steinke 2020 (default) or Bun & Steinke 2016's simple bound; or, without a
// mechanism, the largest ρ whose conversion meets (--epsilon, --delta). The
// maths is accounting/rdp/zcdp.hpp.
#include "accounting/rdp/zcdp.hpp"

#include <array>
#include <memory>
#include <optional>

#include "accounting/errors.hpp"
#include "accounting/numerics/outward.hpp"
#include "cli/errors.hpp"
#include "cli/flags/choices.hpp"
#include "cli/flags/flag_values.hpp"
#include "cli/flags/output_flags.hpp"
#include "cli/flags/parse.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {
namespace {

enum class ZcdpMethod { cks, simple, all };
constexpr std::array<Choice<ZcdpMethod>, 3> kZcdpMethods{{
    {"cks", ZcdpMethod::cks},
    {"simple", ZcdpMethod::simple},
    {"all", ZcdpMethod::all},
}};

struct ZcdpFlags {
  std::vector<std::string> rho, sigma, noise_sd, pure_epsilon, sensitivity, steps, sampling_rate,
      epsilon, delta;
  std::string method;  ///< "" when not given (cks)
  OutputFlags output;
};

/// Where ρ comes from: the flag, its values, and ρ of one value composed over T.
struct ZcdpSource {
  const char* flag;
  const char* key;  ///< the result field holding the value
  std::vector<double> values;
};

const char* const kCksNote =
    "cks: Canonne, Kamath & Steinke 2020, Prop. 12 (the tightest conversion of rho alone; "
    "docs/zcdp.md#conversion)";
const char* const kSimpleNote =
    "simple: Bun & Steinke 2016, Prop. 1.3: epsilon = rho + 2 sqrt(rho log(1/delta))";

std::vector<ZcdpConversion> zcdp_conversions_of(const std::string& method) {
  switch (parse_choice("--method", method.empty() ? "cks" : method, kZcdpMethods)) {
    case ZcdpMethod::cks:
      return {ZcdpConversion::cks};
    case ZcdpMethod::simple:
      return {ZcdpConversion::simple};
    case ZcdpMethod::all:
      return {ZcdpConversion::cks, ZcdpConversion::simple};
  }
  return {};
}

const char* zcdp_method_name(ZcdpConversion c) {
  return c == ZcdpConversion::cks ? "cks" : "simple";
}

void note_zcdp_methods(report::Report& rep, const std::vector<ZcdpConversion>& conversions) {
  for (auto c : conversions) note(rep, c == ZcdpConversion::cks ? kCksNote : kSimpleNote);
}

/// The mechanism flag given (at most one), or nullopt.
std::optional<ZcdpSource> zcdp_source_of(const ZcdpFlags& f) {
  std::optional<ZcdpSource> s;
  const std::array<std::pair<const char*, const std::vector<std::string>*>, 4> flags{{
      {"--rho", &f.rho},
      {"--sigma", &f.sigma},
      {"--noise-sd", &f.noise_sd},
      {"--pure-epsilon", &f.pure_epsilon},
  }};
  const char* first = nullptr;
  for (const auto& [flag, texts] : flags) {
    if (texts->empty()) continue;
    if (first)
      throw UsageError(std::string(flag) + ": give one of --rho, --sigma, --noise-sd and " +
                       "--pure-epsilon, not both " + first + " and " + flag);
    first = flag;
  }
  if (!first) return s;
  const std::string flag = first;
  if (flag == "--rho")
    return ZcdpSource{"--rho", "rho_each", parse_list(flag, f.rho, kNonNegative)};
  if (flag == "--sigma")
    return ZcdpSource{"--sigma", "noise_multiplier", parse_list(flag, f.sigma, kPositive)};
  if (flag == "--noise-sd")
    return ZcdpSource{"--noise-sd", "noise_sd", parse_list(flag, f.noise_sd, kPositive)};
  return ZcdpSource{"--pure-epsilon", "pure_epsilon",
                    parse_list(flag, f.pure_epsilon, kNonNegative)};
}

/// The flags that only a Gaussian source reads, refused beside another.
void check_zcdp_gaussian_only(const ZcdpFlags& f, const std::optional<ZcdpSource>& s) {
  const std::string flag = s ? s->flag : "";
  if (!f.sensitivity.empty() && flag != "--noise-sd")
    throw UsageError(
        "--sensitivity: only with --noise-sd (--sigma is already noise / sensitivity)");
  if (!f.sampling_rate.empty() && flag != "--sigma" && flag != "--noise-sd")
    throw UsageError("--sampling-rate: only with --sigma or --noise-sd (Gaussian releases)");
}

/// ρ of all `steps` releases of one value of the source, rounded up.
double zcdp_total_rho(const ZcdpSource& s, double value, double sensitivity, std::int64_t steps,
                      double q) {
  const std::string flag = s.flag;
  if (flag == "--rho") return zcdp_compose(value, steps);
  if (flag == "--pure-epsilon") return zcdp_pure_dp_rho(value, steps);
  // A release no record reaches (q = 0) is independent of the data.
  if (q == 0) return 0;
  // Poisson sampling at q > 0 leaves ρ where it is (docs/zcdp.md#subsampling).
  return flag == "--sigma" ? zcdp_gaussian_rho(value, 1.0, steps)
                           : zcdp_gaussian_rho(value, sensitivity, steps);
}

/// What the rows' ρ is, by its source, and what subsampling does to it.
void note_zcdp_source(report::Report& rep, const ZcdpSource& s, std::optional<double> q) {
  const std::string flag = s.flag;
  if (flag == "--rho")
    note(rep, "rho: rho_each composed over the steps (Bun & Steinke 2016, Lemma 1.7)");
  else if (flag == "--pure-epsilon")
    note(rep,
         "rho: steps * epsilon^2 / 2, epsilon-DP is epsilon^2/2-zCDP (Bun & Steinke 2016, "
         "Prop. 1.4; Lemma 1.7)");
  else
    note(rep,
         "rho: steps * sensitivity^2 / (2 sd^2), Gaussian releases (Bun & Steinke 2016, "
         "Prop. 1.6; Lemma 1.7)");
  if (q && *q == 0) note(rep, "sampling_rate 0: no record reaches a release, rho = 0");
  if (q && *q > 0 && *q < 1)
    note(rep,
         "sampling_rate < 1: subsampling does not lower a zCDP rho, so rho is that of the "
         "releases without sampling (docs/zcdp.md#subsampling); for the run's (epsilon, "
         "delta) use dpbudget epsilon, whose RDP curve keeps the amplification");
}

/// Without a mechanism: the largest ρ whose conversion meets each (ε, δ).
int run_zcdp_rho_for(const ZcdpFlags& f, std::int64_t steps, std::ostream& out, std::ostream& err) {
  if (f.epsilon.empty() || f.delta.empty())
    throw UsageError(std::string(f.epsilon.empty() ? "--epsilon" : "--delta") +
                     " is required: give a mechanism (--rho, --sigma, --noise-sd, "
                     "--pure-epsilon), or both --epsilon and --delta for the largest rho they "
                     "allow");
  const auto epsilons = parse_list("--epsilon", f.epsilon, kNonNegative);
  const auto deltas = parse_list("--delta", f.delta, kOpenUnit);
  const auto conversions = zcdp_conversions_of(f.method);
  check_table_rows("--delta", conversions.size() * epsilons.size() * deltas.size());
  check_format(f.output);
  if (only_checking()) return kOk;

  report::Report rep;
  rep.command = "zcdp";
  rep.inputs.add("steps", report::integer(steps));
  using report::Rounding;
  for (auto c : conversions)
    for (double epsilon : epsilons)
      for (double delta : deltas) {
        const double rho = zcdp_rho_for(epsilon, delta, c);
        report::Record r;
        r.add("method", report::text(zcdp_method_name(c)));
        r.add("epsilon", report::number(epsilon));
        r.add("delta", report::number(delta));
        r.add("rho", report::number(rho, Rounding::down));
        r.add("rho_per_step",
              report::number(outward::quotient_down(rho, static_cast<double>(steps)),
                             Rounding::down));
        rep.results.push_back(std::move(r));
      }
  note(rep,
       "rho: the largest rho whose conversion meets (epsilon, delta), rounded down; it does not "
       "say that an (epsilon, delta)-DP mechanism is rho-zCDP");
  note_zcdp_methods(rep, conversions);
  finish(rep, f.output, out, err);
  return kOk;
}

int run_zcdp(const ZcdpFlags& f, std::ostream& out, std::ostream& err) {
  const std::optional<ZcdpSource> source = zcdp_source_of(f);
  check_zcdp_gaussian_only(f, source);
  const std::int64_t steps = optional_integer("--steps", f.steps, 1).value_or(1);
  if (!source) return run_zcdp_rho_for(f, steps, out, err);
  const double sensitivity = optional_real("--sensitivity", f.sensitivity, kPositive).value_or(1.0);
  const std::optional<double> q = optional_real("--sampling-rate", f.sampling_rate, kProbability);
  if (!f.delta.empty() && !f.epsilon.empty())
    throw UsageError(std::string("--epsilon: with ") + source->flag +
                     " give either --delta (epsilon at each delta) or --epsilon (delta at each "
                     "epsilon), not both");
  const bool convert = !f.delta.empty() || !f.epsilon.empty();
  if (!convert && !f.method.empty())
    throw UsageError(
        "--method: only with --delta or --epsilon (the conversion to (epsilon, "
        "delta))");
  const bool want_epsilon = !f.delta.empty();
  const auto targets = !convert       ? std::vector<double>{}
                       : want_epsilon ? parse_list("--delta", f.delta, kOpenUnit)
                                      : parse_list("--epsilon", f.epsilon, kNonNegative);
  const auto conversions = convert ? zcdp_conversions_of(f.method) : std::vector<ZcdpConversion>{};
  check_table_rows(source->flag, source->values.size() *
                                     std::max<std::size_t>(1, conversions.size() * targets.size()));
  check_format(f.output);
  if (only_checking()) return kOk;

  report::Report rep;
  rep.command = "zcdp";
  rep.inputs.add("steps", report::integer(steps));
  if (std::string(source->flag) == "--noise-sd")
    rep.inputs.add("sensitivity", report::number(sensitivity));
  if (q) rep.inputs.add("sampling_rate", report::number(*q));
  using report::Rounding;
  for (double value : source->values) {
    double rho = 0;
    try {
      rho = zcdp_total_rho(*source, value, sensitivity, steps, q.value_or(1.0));
    } catch (const InvalidParameter&) {  // the inputs are checked: only an overflow is left
      throw UsageError(std::string(source->flag) + ": rho of " + shown(value) + " over " +
                       std::to_string(steps) + " steps is beyond the double range");
    }
    auto base = [&] {
      report::Record r;
      r.add(source->key, report::number(value));
      r.add("rho", report::number(rho, Rounding::up));
      r.add("bound", report::text("upper"));
      return r;
    };
    if (!convert) rep.results.push_back(base());
    for (auto c : conversions)
      for (double x : targets) {
        report::Record r = base();
        r.add("method", report::text(zcdp_method_name(c)));
        if (want_epsilon) {
          const ZcdpEpsilon e = zcdp_epsilon(rho, x, c);
          if (e.kl_shortcut)
            note(rep,
                 "epsilon 0: the total variation is at most delta (Bretagnolle-Huber on "
                 "KL <= rho; docs/rdp.md#kl-shortcut)");
          r.add("epsilon", report::number(e.epsilon, Rounding::up));
          r.add("delta", report::number(x));
        } else {
          r.add("epsilon", report::number(x));
          r.add("delta", report::number(zcdp_delta(rho, x, c).delta, Rounding::up));
        }
        rep.results.push_back(std::move(r));
      }
  }
  note_zcdp_source(rep, *source, q);
  note_zcdp_methods(rep, conversions);
  finish(rep, f.output, out, err);
  return kOk;
}

Verb declare_zcdp(CLI::App& command) {
  auto f = std::make_shared<ZcdpFlags>();
  CLI::App* cmd = &command;
  cmd->add_option("--rho", f->rho, "rho(s) of one release, finite numbers >= 0");
  cmd->add_option("--sigma,--noise-multiplier", f->sigma,
                  "Gaussian releases: noise sd / L2 sensitivity (finite numbers > 0), "
                  "rho = 1/(2 sigma^2) each");
  cmd->add_option("--noise-sd,--noise-std", f->noise_sd,
                  "Gaussian releases: the noise standard deviation (finite numbers > 0; with "
                  "--sensitivity), rho = sensitivity^2/(2 sd^2) each");
  cmd->add_option("--sensitivity", f->sensitivity,
                  "L2 sensitivity with --noise-sd, a finite number > 0 (default 1)");
  cmd->add_option("--pure-epsilon", f->pure_epsilon,
                  "an epsilon-DP mechanism (finite numbers >= 0), rho = epsilon^2/2");
  cmd->add_option("-T,--steps", f->steps,
                  "releases composed, an integer >= 1 (default 1): rho adds up; without a "
                  "mechanism, rho_per_step = rho / steps");
  cmd->add_option("-q,--sampling-rate", f->sampling_rate,
                  "with --sigma or --noise-sd: Poisson sampling rate in [0, 1]; any q > 0 "
                  "leaves rho unchanged (zCDP is not amplified by subsampling)");
  cmd->add_option("--delta", f->delta,
                  "delta(s) in (0, 1): report epsilon at each; without a mechanism, with "
                  "--epsilon: the largest rho");
  cmd->add_option("--epsilon", f->epsilon,
                  "epsilon(s) >= 0: report delta at each; without a mechanism, with --delta: "
                  "the largest rho");
  add_choice_option(*cmd, "--method", f->method, kZcdpMethods,
                    "the conversion to (epsilon, delta): cks (Canonne, Kamath & Steinke 2020, "
                    "default) | simple (Bun & Steinke 2016, Prop. 1.3) | all");
  add_output_flags(*cmd, f->output);
  return verb_of(cmd, f, run_zcdp);
}

}  // namespace

extern const VerbDescriptor kZcdpVerb{
    "zcdp",
    "zCDP budgets: rho of Gaussian or epsilon-DP releases, rho -> (epsilon, delta), and the "
    "largest rho an (epsilon, delta) target allows",
    {"dpbudget zcdp --sigma 1.1 --steps 100 --delta 1e-5",
     "dpbudget zcdp --rho 0.5 --delta 1e-5 --method all", "dpbudget zcdp --epsilon 1 --delta 1e-6"},
    declare_zcdp};

}  // namespace dpb::cli
