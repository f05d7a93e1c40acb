// dpbudget amplify: privacy amplification by subsampling of an (ε, δ)-DP
// mechanism (docs/composition.md#amplification-poisson): Poisson sampling (add/remove) or sampling
// without replacement (replace-one).
#include <array>
#include <memory>

#include "accounting/composition/amplification.hpp"
#include "accounting/dpsgd/dp_sgd_run.hpp"
#include "cli/errors.hpp"
#include "cli/flags/choices.hpp"
#include "cli/flags/flag_values.hpp"
#include "cli/flags/output_flags.hpp"
#include "cli/flags/run_parameters.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {
namespace {

/// The schemes with an amplification theorem for an (ε, δ)-DP mechanism
/// (docs/composition.md#amplification-without-replacement); shuffling and balls-in-bins have none
/// here.
constexpr std::array<Choice<Sampling>, 2> kAmplifySamplingChoices{{
    {"poisson", Sampling::poisson},
    {"without-replacement", Sampling::without_replacement},
}};

struct AmplifyFlags {
  std::vector<std::string> epsilon, delta, sampling_rate, dataset_size, batch_size;
  std::string sampling = "poisson";
  OutputFlags output;
};

int run_amplify(const AmplifyFlags& f, std::ostream& out, std::ostream& err) {
  const double epsilon = required_real("--epsilon", f.epsilon, kNonNegative);
  const double delta = required_real("--delta", f.delta, kClosedUnit);
  const auto q = optional_real("--sampling-rate", f.sampling_rate, kClosedUnit);
  const auto n = optional_integer("--dataset-size", f.dataset_size, 1);
  const auto m = optional_integer("--batch-size", f.batch_size, 1);
  const Sampling sampling = parse_choice("--sampling", f.sampling, kAmplifySamplingChoices);
  check_format(f.output);

  // q, or m of N: the same rules as a DP-SGD run's (accounting/dpsgd/dp_sgd_run.hpp).
  double rate = 0;
  try {
    rate = sampling_rate_of(q, n, m);
  } catch (const RunParameterError& e) {
    throw UsageError(message_of(e, Naming::flags));
  }
  const bool poisson = sampling == Sampling::poisson;
  // Both theorems give the same map with q = m/N (Balle, Barthe & Gaboardi 2018,
  // Theorems 8 and 9); they differ in the neighbouring relation they assume.
  const EpsDelta amplified = !q && !poisson ? amplify_without_replacement(epsilon, delta, *m, *n)
                                            : amplify_poisson(epsilon, delta, rate);
  const std::string sampling_name(choice_name(kAmplifySamplingChoices, sampling));

  using report::Rounding;
  report::Report rep;
  rep.command = "amplify";
  rep.inputs.add("epsilon", report::number(epsilon));
  rep.inputs.add("delta", report::number(delta));
  rep.inputs.add("sampling_rate", report::number(rate));
  if (n) rep.inputs.add("dataset_size", report::integer(*n));
  if (m) rep.inputs.add("batch_size", report::integer(*m));
  rep.inputs.add("sampling", report::text(sampling_name));
  report::Record r;
  r.add("sampling", report::text(sampling_name));
  r.add("neighbouring", report::text(poisson ? "add_remove" : "replace_one"));
  r.add("bound", report::text("upper"));
  r.add("epsilon", report::number(amplified.epsilon, Rounding::up));
  r.add("delta", report::number(amplified.delta, Rounding::up));
  rep.results.push_back(std::move(r));
  note(rep, poisson ? "Poisson sampling: neighbouring datasets differ by adding or removing one "
                      "record"
                    : "sampling without replacement: neighbouring datasets differ by replacing "
                      "one record");
  finish(rep, f.output, out, err);
  return kOk;
}

Verb declare_amplify(CLI::App& command) {
  auto f = std::make_shared<AmplifyFlags>();
  CLI::App* cmd = &command;
  cmd->add_option("--epsilon", f->epsilon, "epsilon of the mechanism, a finite number >= 0");
  cmd->add_option("--delta", f->delta, "delta of the mechanism, in [0, 1]");
  cmd->add_option("-q,--sampling-rate", f->sampling_rate,
                  "probability that a record is sampled, in [0, 1]");
  cmd->add_option("--dataset-size", f->dataset_size, "N: records in the dataset (q = m/N)");
  cmd->add_option("--batch-size", f->batch_size, "m: records sampled, an integer in [1, N]");
  add_choice_option(*cmd, "--sampling", f->sampling, kAmplifySamplingChoices,
                    "poisson (default; add/remove neighbours) | without-replacement (replace-one)");
  add_output_flags(*cmd, f->output);
  return verb_of(cmd, f, run_amplify);
}

}  // namespace

extern const VerbDescriptor kAmplifyVerb{
    "amplify",
    "(epsilon, delta) of an (epsilon, delta)-DP mechanism run on a random subsample",
    {"dpbudget amplify --epsilon 1 --delta 1e-6 -q 0.01"},
    declare_amplify};

}  // namespace dpb::cli
