// dpbudget compose: k-fold composition of one (ε, δ)-DP mechanism (docs/composition.md#basic,
// docs/composition.md#advanced, docs/composition.md#optimal), ε at each --target-delta or δ at each
// --target-epsilon, one row per method.
#include <array>
#include <memory>
#include <optional>

#include "accounting/accountant.hpp"
#include "accounting/composition/composition.hpp"
#include "accounting/errors.hpp"
#include "cli/errors.hpp"
#include "cli/flags/choices.hpp"
#include "cli/flags/flag_values.hpp"
#include "cli/flags/output_flags.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {
namespace {

struct ComposeFlags {
  std::vector<std::string> epsilon, delta, count, target_delta, target_epsilon;
  std::string method = "all";
  OutputFlags output;
};

/// --method: one theorem, or all three side by side (nullopt).
constexpr std::array<Choice<std::optional<CompositionMethod>>, 4> kComposeMethods{{
    {"basic", CompositionMethod::basic},
    {"advanced", CompositionMethod::advanced},
    {"optimal", CompositionMethod::optimal},
    {"all", std::nullopt},
}};

struct Mechanism {
  double epsilon, delta;
  std::int64_t k;
};

report::Record row(CompositionMethod method) {
  report::Record r;
  r.add("method", report::text(std::string(to_string(method))));
  r.add("bound", report::text("upper"));
  return r;
}

/// ε at a total δ (solve_delta false) or δ at a total ε, for one method: the
/// theorems of accounting/composition/composition.hpp (NoSolution when the target is out of reach).
report::Record compose_row(CompositionMethod method, const Mechanism& m, double target,
                           bool solve_delta) {
  using report::Rounding;
  report::Record r = row(method);
  if (!solve_delta) {
    double eps = 0;
    std::optional<double> delta_prime;
    switch (method) {
      case CompositionMethod::basic:
        eps = basic_epsilon(m.epsilon, m.delta, m.k, target);
        break;
      case CompositionMethod::advanced:
        delta_prime = advanced_slack(m.delta, m.k, target);
        eps = advanced_epsilon(m.epsilon, m.delta, m.k, target);
        break;
      case CompositionMethod::optimal:
        eps = optimal_epsilon(m.epsilon, m.delta, m.k, target);
        break;
    }
    r.add("epsilon", report::number(eps, Rounding::up));
    r.add("delta", report::number(target));
    if (delta_prime) r.add("delta_prime", report::number(*delta_prime));
    return r;
  }
  double delta = 0;
  std::optional<double> delta_prime;
  switch (method) {
    case CompositionMethod::basic:
      delta = basic_delta(m.epsilon, m.delta, m.k, target);
      break;
    case CompositionMethod::advanced:
      delta_prime = advanced_delta_prime(m.epsilon, m.k, target);
      delta = advanced_delta(m.epsilon, m.delta, m.k, target);
      break;
    case CompositionMethod::optimal:
      delta = optimal_delta(m.epsilon, m.delta, m.k, target);
      break;
  }
  r.add("epsilon", report::number(target));
  r.add("delta", report::number(delta, Rounding::up));
  if (delta_prime) r.add("delta_prime", report::number(*delta_prime, Rounding::up));
  return r;
}

/// compose_row() with the target's flag named in a NoSolution message.
report::Record compose_row_at(CompositionMethod method, const Mechanism& m, double target,
                              bool solve_delta) {
  try {
    return compose_row(method, m, target, solve_delta);
  } catch (const NoSolution& e) {
    throw NoSolution(std::string(solve_delta ? "--target-epsilon: " : "--target-delta: ") +
                     e.what());
  }
}

int run_compose(const ComposeFlags& f, std::ostream& out, std::ostream& err) {
  Mechanism m{};
  m.epsilon = required_real("--epsilon", f.epsilon, kNonNegative);
  m.delta = required_real("--delta", f.delta, kDelta);
  // The optimal theorem's limit, for every method (one --count range).
  const auto k = optional_integer("--count", f.count, 1, kMaxOptimalCount);
  if (!k) throw UsageError("--count is required");
  m.k = *k;
  const bool solve_delta = !either("--target-delta", !f.target_delta.empty(), "--target-epsilon",
                                   !f.target_epsilon.empty());
  const auto targets = solve_delta ? parse_list("--target-epsilon", f.target_epsilon, kNonNegative)
                                   : parse_list("--target-delta", f.target_delta, kDelta);
  const auto method = parse_choice("--method", f.method, kComposeMethods);
  check_format(f.output);
  if (only_checking()) return kOk;

  report::Report rep;
  rep.command = "compose";
  rep.inputs.add("epsilon", report::number(m.epsilon));
  rep.inputs.add("delta", report::number(m.delta));
  rep.inputs.add("count", report::integer(m.k));
  rep.inputs.add("method", report::text(std::string(choice_name(kComposeMethods, method))));

  std::vector<CompositionMethod> methods;
  for (const auto& c : kComposeMethods)
    if (c.value && (!method || c.value == method)) methods.push_back(*c.value);
  std::optional<NoSolution> last_failure;
  for (const auto& name : methods)
    for (double target : targets) {
      try {
        rep.results.push_back(compose_row_at(name, m, target, solve_delta));
      } catch (const NoSolution& e) {
        // One method alone: no answer (exit 3). Side by side: skip its row.
        if (methods.size() == 1) throw;
        last_failure = e;
        warn(rep, std::string(to_string(name)) + " row skipped: " + e.what());
      }
    }
  if (rep.results.empty())
    throw NoSolution(std::string("no method meets the target: ") + last_failure->what());
  for (const auto& r : rep.results)
    if (r.find("delta_prime"))
      note(rep, solve_delta ? "advanced: delta = k*delta + delta', delta' the smallest giving "
                              "the target epsilon"
                            : "advanced: delta' = target delta - k*delta");
  finish(rep, f.output, out, err);
  return kOk;
}

Verb declare_compose(CLI::App& command) {
  auto f = std::make_shared<ComposeFlags>();
  CLI::App* cmd = &command;
  cmd->add_option("--epsilon", f->epsilon, "epsilon of one mechanism, a finite number >= 0");
  cmd->add_option("--delta", f->delta, "delta of one mechanism, in [0, 1)");
  cmd->add_option("-k,--count", f->count, "number of compositions, an integer in [1, 1e9]");
  cmd->add_option("--target-delta", f->target_delta,
                  "total delta(s) in [0, 1): report the composed epsilon at each");
  cmd->add_option("--target-epsilon", f->target_epsilon,
                  "total epsilon(s) >= 0: report the composed delta at each");
  add_choice_option(*cmd, "--method", f->method, kComposeMethods,
                    "basic | advanced (Dwork-Rothblum-Vadhan) | optimal (Kairouz-Oh-Viswanath) | "
                    "all (default)");
  add_output_flags(*cmd, f->output);
  return verb_of(cmd, f, run_compose);
}

}  // namespace

extern const VerbDescriptor kComposeVerb{
    "compose",
    "k-fold composition of an (epsilon, delta)-DP mechanism: basic, advanced, optimal",
    {"dpbudget compose --epsilon 0.1 --delta 1e-8 --count 100 --target-delta 1e-5"},
    declare_compose};

}  // namespace dpb::cli
