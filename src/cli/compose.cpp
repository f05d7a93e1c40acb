// dpbudget compose: k-fold composition of one (ε, δ)-DP mechanism (SPEC §4),
// ε at each --target-delta or δ at each --target-epsilon, one row per method.
#include <cmath>
#include <memory>
#include <optional>

#include "accounting/composition.hpp"
#include "accounting/errors.hpp"
#include "cli/choices.hpp"
#include "cli/errors.hpp"
#include "cli/flag_values.hpp"
#include "cli/output_flags.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {
namespace {

struct ComposeFlags {
  std::vector<std::string> epsilon, delta, count, target_delta, target_epsilon;
  std::string method = "all";
  OutputFlags output;
};

constexpr std::int64_t kMaxCount = 1'000'000'000;

struct Mechanism {
  double epsilon, delta;
  std::int64_t k;
};

/// δ' of the advanced bound at a total target: target − kδ (NoSolution if ≤ 0).
double delta_prime_for(const Mechanism& m, double target_delta) {
  // The inputs are decimals: a difference at the rounding level (1e-5 − 100·1e-7)
  // is zero, not a δ' of 1e-21.
  const double slack = target_delta - static_cast<double>(m.k) * m.delta;
  if (!(slack > 1e-12 * target_delta))
    throw NoSolution("advanced composition needs --target-delta > k*delta = " +
                     shown(static_cast<double>(m.k) * m.delta) +
                     " (delta' = target delta - k*delta must be > 0)");
  return slack;
}

/// The smallest δ' with ε·√(2k·ln(1/δ')) + kε(e^ε − 1) ≤ E (Dwork, Rothblum &
/// Vadhan 2010, solved for δ'), nudged up until compose_advanced() confirms it.
double advanced_delta_prime_at(const Mechanism& m, double target_epsilon) {
  const double kd = static_cast<double>(m.k);
  const double drift = kd * m.epsilon * std::expm1(m.epsilon);
  if (m.epsilon == 0) return 0;  // (0, kδ + δ') for every δ' > 0, hence (0, kδ)
  if (!(target_epsilon > drift))
    throw NoSolution("advanced composition needs --target-epsilon > k*eps*(e^eps - 1) = " +
                     shown(drift));
  const double x = (target_epsilon - drift) / m.epsilon;
  double dp = std::exp(-x * x / (2 * kd));
  if (dp >= 1) return 1;
  if (dp == 0) return 0;  // underflow: below every double, δ' → 0 is the limit
  for (int i = 0; i < 64 && compose_advanced(m.epsilon, m.delta, m.k, dp).epsilon > target_epsilon;
       ++i)
    dp = std::min(1.0, dp * (1 + 0x1p-52 * std::ldexp(1.0, i)));
  return dp;
}

report::Record row(const char* method) {
  report::Record r;
  r.add("method", report::text(method));
  r.add("bound", report::text("upper"));
  return r;
}

/// ε at a total δ (solve_delta false) or δ at a total ε, for one method.
report::Record compose_row(const std::string& method, const Mechanism& m, double target,
                           bool solve_delta) {
  using report::Rounding;
  const double kd = static_cast<double>(m.k);
  report::Record r = row(method.c_str());
  if (!solve_delta) {
    double eps = 0;
    std::optional<double> delta_prime;
    if (method == "basic") {
      if (kd * m.delta > target)
        throw NoSolution("basic composition needs --target-delta >= k*delta = " +
                         shown(kd * m.delta));
      eps = kd * m.epsilon;
    } else if (method == "advanced") {
      delta_prime = delta_prime_for(m, target);
      eps = compose_advanced(m.epsilon, m.delta, m.k, std::min(1.0, *delta_prime)).epsilon;
    } else {
      eps = optimal_epsilon(m.epsilon, m.delta, m.k, target);
    }
    r.add("epsilon", report::number(eps, Rounding::up));
    r.add("delta", report::number(target));
    if (delta_prime) r.add("delta_prime", report::number(*delta_prime));
    return r;
  }
  double delta = 0;
  std::optional<double> delta_prime;
  if (method == "basic") {
    if (target < kd * m.epsilon)
      throw NoSolution("basic composition needs --target-epsilon >= k*eps = " +
                       shown(kd * m.epsilon));
    delta = std::min(1.0, kd * m.delta);
  } else if (method == "advanced") {
    delta_prime = advanced_delta_prime_at(m, target);
    delta = std::min(1.0, kd * m.delta + *delta_prime);
  } else {
    delta = optimal_delta(m.epsilon, m.delta, m.k, target);
  }
  r.add("epsilon", report::number(target));
  r.add("delta", report::number(delta, Rounding::up));
  if (delta_prime) r.add("delta_prime", report::number(*delta_prime, Rounding::up));
  return r;
}

int run_compose(const ComposeFlags& f, std::ostream& out, std::ostream& err) {
  Mechanism m{};
  m.epsilon = required_real("--epsilon", f.epsilon, kNonNegative);
  m.delta = required_real("--delta", f.delta, kDelta);
  // The optimal sum costs ~√k terms: 1e9 takes a third of a second, 2^53 hours.
  const auto k = optional_integer("--count", f.count, 1, kMaxCount);
  if (!k) throw UsageError("--count is required");
  m.k = *k;
  const bool solve_delta = !either("--target-delta", !f.target_delta.empty(), "--target-epsilon",
                                   !f.target_epsilon.empty());
  const auto targets = solve_delta ? parse_list("--target-epsilon", f.target_epsilon, kNonNegative)
                                   : parse_list("--target-delta", f.target_delta, kDelta);
  const auto method = parse_choice("--method", f.method, {"basic", "advanced", "optimal", "all"});
  resolve(f.output);  // checks --format before any work

  report::Report rep;
  rep.command = "compose";
  rep.inputs.add("epsilon", report::number(m.epsilon));
  rep.inputs.add("delta", report::number(m.delta));
  rep.inputs.add("count", report::integer(m.k));
  rep.inputs.add("method", report::text(method));

  const std::vector<std::string> methods =
      method == "all" ? std::vector<std::string>{"basic", "advanced", "optimal"}
                      : std::vector<std::string>{method};
  std::optional<NoSolution> last_failure;
  for (const auto& name : methods)
    for (double target : targets) {
      try {
        rep.results.push_back(compose_row(name, m, target, solve_delta));
      } catch (const NoSolution& e) {
        // One method alone: no answer (exit 3). Side by side: skip its row.
        if (methods.size() == 1) throw;
        last_failure = e;
        warn(rep, name + " row skipped: " + e.what());
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

}  // namespace

Verb setup_compose(CLI::App& app) {
  auto f = std::make_shared<ComposeFlags>();
  CLI::App* cmd = app.add_subcommand(
      "compose",
      "k-fold composition of an (epsilon, delta)-DP mechanism: basic, advanced, optimal\n"
      "  example: dpbudget compose --epsilon 0.1 --delta 1e-8 --count 100 --target-delta 1e-5");
  cmd->add_option("--epsilon", f->epsilon, "epsilon of one mechanism, a finite number >= 0");
  cmd->add_option("--delta", f->delta, "delta of one mechanism, in [0, 1)");
  cmd->add_option("-k,--count", f->count, "number of compositions, an integer in [1, 1e9]");
  cmd->add_option("--target-delta", f->target_delta,
                  "total delta(s) in [0, 1): report the composed epsilon at each");
  cmd->add_option("--target-epsilon", f->target_epsilon,
                  "total epsilon(s) >= 0: report the composed delta at each");
  add_choice_option(*cmd, "--method", f->method, {"basic", "advanced", "optimal", "all"},
                    "basic | advanced (Dwork-Rothblum-Vadhan) | optimal (Kairouz-Oh-Viswanath) | "
                    "all (default)");
  add_output_flags(*cmd, f->output);
  return {cmd, [f](std::ostream& out, std::ostream& err) { return run_compose(*f, out, err); }};
}

}  // namespace dpb::cli
