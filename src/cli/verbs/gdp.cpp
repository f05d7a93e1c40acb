// dpbudget gdp: the (ε, δ) guarantees of a μ-GDP mechanism (docs/gdp.md#gdp-profile), for a
// given μ or for the μ the gdp accountant gives a DP-SGD run (the central-limit
// μ, an approximation, with the accountant's notes; q = 1 is exact).
#include "accounting/gdp/gdp.hpp"

#include <memory>
#include <optional>

#include "accounting/gdp/gdp_accountant.hpp"
#include "accounting/numerics/outward.hpp"
#include "cli/errors.hpp"
#include "cli/flags/flag_values.hpp"
#include "cli/flags/run_parameters.hpp"
#include "cli/run/result_rows.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {
namespace {

struct GdpFlags {
  std::vector<std::string> mu, delta, epsilon, group;
  DpSgdFlags run;
  OutputFlags output;
};

bool any_given(const DpSgdFlags& r) {
  for (const auto& p : kRunParameters)
    if (given(r, p.id)) return true;
  return false;
}

int run_gdp(const GdpFlags& f, std::ostream& out, std::ostream& err) {
  const bool given_mu = !f.mu.empty();
  if (given_mu) refuse_run_flags(f.run, "--mu", "give either --mu or a DP-SGD run, not both");
  if (!given_mu && !any_given(f.run))
    throw UsageError("--mu is required (or a DP-SGD run: -q, --sigma, --steps)");
  const bool solve_delta = !either("--delta", !f.delta.empty(), "--epsilon", !f.epsilon.empty());
  const auto targets = solve_delta ? parse_list("--epsilon", f.epsilon, kNonNegative)
                                   : parse_list("--delta", f.delta, kOpenUnit);
  const std::int64_t group = optional_integer("--group", f.group, 1).value_or(1);
  check_format(f.output);
  if (only_checking()) return kOk;

  report::Report rep;
  rep.command = "gdp";
  std::vector<double> mus;
  // A DP-SGD run: μ, bound, relation and notes from the gdp accountant, as
  // `epsilon --accountant gdp` reports them (they do not depend on the target).
  std::optional<Guarantee> run_guarantee;
  // A run's μ rounded up past its rounding error: ε and δ are computed from it.
  std::optional<double> mu_upper;
  if (given_mu) {
    mus = parse_list("--mu", f.mu, kNonNegative);
    rep.inputs.add("mu", report::numbers(mus));
  } else {
    const DpSgdRun run = derive(single_values(f.run), Unknown::none);
    add_inputs(rep.inputs, run);
    AccountantOptions options;
    options.neighbouring = run_neighbouring(run);
    GdpAccountant accountant{options};
    accountant.compose(*dp_sgd_event(run));
    mus.push_back(accountant.mu());
    mu_upper = accountant.mu_upper();
    run_guarantee =
        solve_delta ? accountant.delta(targets.front()) : accountant.epsilon(targets.front());
    collect_remarks(*run_guarantee, rep, err);
  }
  if (group > 1) {
    rep.inputs.add("group", report::integer(group));
    note(rep, "group privacy: mu of the results = group * mu (Dong, Roth & Su 2022, Thm 2.14)");
  }

  using report::Rounding;
  const bool approximate = run_guarantee && run_guarantee->bound == BoundKind::approximate;
  for (double given : mus) {
    const double mu = gdp_group(given, group);
    // ε and δ from kμ rounded up (the printed μ is kμ to nearest).
    const double mu_safe =
        outward::product_up(static_cast<double>(group), mu_upper.value_or(given));
    for (double target : targets) {
      report::Record r;
      r.add("method", report::text(approximate ? "gdp_clt" : "gdp"));
      if (run_guarantee)
        r.add("neighbouring", report::text(std::string(to_string(run_guarantee->neighbouring))));
      r.add("bound", report::text(std::string(
                         to_string(run_guarantee ? run_guarantee->bound : BoundKind::upper))));
      r.add("mu", report::number(mu, given_mu ? Rounding::nearest : Rounding::up));
      if (solve_delta) {
        r.add("epsilon", report::number(target));
        r.add("delta", report::number(gdp_delta(mu_safe, target), Rounding::up));
      } else {
        r.add("epsilon", report::number(gdp_epsilon(mu_safe, target), Rounding::up));
        r.add("delta", report::number(target));
      }
      rep.results.push_back(std::move(r));
    }
  }
  finish(rep, f.output, out, err);
  return kOk;
}

Verb declare_gdp(CLI::App& command) {
  auto f = std::make_shared<GdpFlags>();
  CLI::App* cmd = &command;
  cmd->add_option("--mu", f->mu, "mu(s) of the mechanism, finite numbers >= 0");
  cmd->add_option("--delta", f->delta, "delta(s) in (0, 1): report epsilon at each");
  cmd->add_option("--epsilon", f->epsilon, "epsilon(s) >= 0: report delta at each");
  cmd->add_option("--group", f->group, "group size k >= 1: kmu-GDP for groups of k records");
  add_dp_sgd_flags(*cmd, f->run);
  add_output_flags(*cmd, f->output);
  return verb_of(cmd, f, run_gdp);
}

}  // namespace

extern const VerbDescriptor kGdpVerb{
    "gdp",
    "(epsilon, delta) of a mu-GDP mechanism, or of a DP-SGD run by the GDP central limit theorem",
    {"dpbudget gdp --mu 0.5,1,2 --delta 1e-5"},
    declare_gdp};

}  // namespace dpb::cli
