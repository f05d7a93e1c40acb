// dpbudget risk: what a run's guarantee says about membership inference
// (docs/risk.md#trade-off-bound): for each accountant, a bound on any attacker's true-positive
// rate at each --fpr, the precision of its guesses at each --prior, and the
// largest advantage TPR − FPR; or the trade-off curves drawn (-o FILE).
#include <algorithm>
#include <cmath>
#include <memory>

#include "accounting/errors.hpp"
#include "accounting/risk/attack_risk.hpp"
#include "cli/errors.hpp"
#include "cli/flags/accountant_flags.hpp"
#include "cli/flags/flag_values.hpp"
#include "cli/flags/output_flags.hpp"
#include "cli/flags/parse.hpp"
#include "cli/flags/run_parameters.hpp"
#include "cli/run/result_rows.hpp"
#include "cli/run/risk_curves.hpp"
#include "cli/run/spec_verb.hpp"
#include "cli/run/svg_output.hpp"
#include "cli/verbs.hpp"
#include "report/number_format.hpp"
#include "report/svg.hpp"

namespace dpb::cli {
namespace {

struct RiskFlags {
  DpSgdFlags run;
  AccountantFlags accountant;
  OutputFlags output;
  SpecFlags spec;
  std::vector<std::string> fpr, prior;
  std::string svg;  ///< -o: draw the trade-off curves to this SVG file
};

std::string prior_key(double prior) {
  return "precision_prior_" + report::format_number(prior, 6, report::Rounding::nearest);
}

int run_risk(const RiskFlags& f, std::ostream& out, std::ostream& err) {
  auto loaded =
      load_run_for_accountants(f.spec, f.run, f.accountant, out, err, /*states_epsilon=*/false);
  if (!loaded) return kOk;  // --print-spec
  RunEvent& run = loaded->run;
  const AccountantChoice& choice = loaded->choice;
  check_format(f.output);
  const std::vector<double> fprs =
      f.fpr.empty() ? kDefaultFprs : parse_list("--fpr", f.fpr, kOpenUnit);
  const std::vector<double> priors =
      f.prior.empty() ? kDefaultPriors : parse_list("--prior", f.prior, kOpenUnit);

  report::Report rep;
  rep.command = "risk";
  rep.inputs = std::move(run.inputs);
  add_inputs(rep.inputs, choice);
  rep.inputs.add("fpr", report::numbers(fprs));
  rep.inputs.add("prior", report::numbers(priors));

  const bool drawing = !f.svg.empty();
  const std::vector<double> asked =
      drawing ? curve_fprs(*std::min_element(fprs.begin(), fprs.end())) : fprs;
  std::vector<AttackBounds> answers;
  if (only_checking()) return kOk;
  const Question question = make_question(run, choice, {}, /*solve_delta=*/false);
  for (auto& a : attack_bounds_each(question, asked)) {
    if (a.unsupported) {
      rep.footnotes.push_back("warning: skipped " + *a.unsupported);
      err << "dpbudget: warning: skipped " << *a.unsupported << '\n';
      continue;
    }
    answers.push_back(std::move(*a.bounds));
  }
  if (answers.empty()) throw UnsupportedEvent("no accountant supports this event");
  if (drawing) {
    write_svg(tradeoff_chart(answers, fprs), f.svg, out);
    return kOk;
  }

  using report::Rounding;
  bool accuracy = false;
  for (const AttackBounds& a : answers) {
    // The lower ends bound the run only when its pairs are attained
    // (docs/claims.md#attained-pairs); otherwise they are the accuracy of the upper ends.
    const bool bounds_run = a.lower_end == LowerEnd::lower_bound;
    accuracy = accuracy || (!bounds_run && !a.tpr_lower.empty());
    for (std::size_t i = 0; i < a.fpr.size(); ++i) {
      report::Record r;
      r.add("accountant", report::text(a.accountant));
      r.add("neighbouring", report::hoisted(report::text(std::string(to_string(a.neighbouring)))));
      r.add("bound", report::text(std::string(to_string(a.bound))));
      r.add("fpr", report::number(a.fpr[i]));
      report::Cell tpr = report::number(a.tpr[i], Rounding::up);
      if (!a.tpr_lower.empty() && bounds_run) tpr.lower = a.tpr_lower[i];
      r.add("tpr", tpr);
      if (!a.tpr_lower.empty() && bounds_run)
        r.add("tpr_lower",
              report::visible(report::number(a.tpr_lower[i], Rounding::down), report::Show::wide));
      if (!a.tpr_lower.empty() && !bounds_run)
        r.add(
            "tpr_accuracy",
            report::visible(report::number(std::max(0.0, a.tpr[i] - a.tpr_lower[i]), Rounding::up),
                            report::Show::wide));
      for (double prior : priors)
        r.add(prior_key(prior),
              report::number(precision_bound(prior, a.tpr[i], a.fpr[i]), Rounding::up));
      report::Cell adv = report::number(a.advantage, Rounding::up);
      if (a.advantage_lower && bounds_run) adv.lower = *a.advantage_lower;
      r.add("advantage", adv);
      if (a.advantage_lower && bounds_run)
        r.add("advantage_lower", report::visible(report::number(*a.advantage_lower, Rounding::down),
                                                 report::Show::wide));
      if (a.advantage_lower && !bounds_run)
        r.add("advantage_accuracy",
              report::visible(
                  report::number(std::max(0.0, a.advantage - *a.advantage_lower), Rounding::up),
                  report::Show::wide));
      if (!a.tpr_lower.empty())
        r.add("lower_end", report::visible(report::text(std::string(to_string(a.lower_end))),
                                           report::Show::data));
      rep.results.push_back(std::move(r));
    }
    for (const auto& n : a.notes) note(rep, n);
  }
  if (accuracy)
    note(rep,
         "pld: a pair that only dominates this run was composed, so its lower ends are not lower "
         "bounds on the run; tpr and advantage are sound upper bounds, and tpr_accuracy / "
         "advantage_accuracy (JSON, CSV, --wide) say how close they are to that pair's exact "
         "values");
  note(rep,
       "tpr: the largest true-positive rate of any membership-inference attack at that "
       "false-positive rate (pld: [lower, upper] where both ends bound the run); "
       "precision_prior_P: the largest share of "
       "members among the records it flags when a share P of candidates are members; "
       "advantage: the largest TPR - FPR at any rate");
  finish(rep, f.output, out, err);
  return kOk;
}

Verb declare_risk(CLI::App& command) {
  auto f = std::make_shared<RiskFlags>();
  CLI::App* cmd = &command;
  add_dp_sgd_flags(*cmd, f->run);
  cmd->add_option("--fpr", f->fpr,
                  "false-positive rate(s) in (0, 1) at which to bound the true-positive rate "
                  "(default 0.001,0.01,0.1)");
  cmd->add_option("--prior", f->prior,
                  "share(s) of members among the attacked records, in (0, 1), for the precision "
                  "bound (default 0.5,0.01)");
  record_file(cmd->add_option("-o,--output", f->svg,
                              "draw the trade-off curves to this SVG file (- for stdout) instead "
                              "of a table"));
  add_spec_flags(*cmd, f->spec);
  add_accountant_flags(*cmd, f->accountant);
  add_output_flags(*cmd, f->output);
  add_wide_flag(*cmd, f->output);
  return verb_of(cmd, f, run_risk);
}

}  // namespace

extern const VerbDescriptor kRiskVerb{
    "risk",
    "membership-inference risk of a DP-SGD run (or --spec): bounds on any attack's true-positive\n "
    " rate at each --fpr, its precision at each --prior, and its largest advantage",
    {"dpbudget risk -q 0.01 --sigma 1 --steps 1000 --accountant all"},
    declare_risk};

}  // namespace dpb::cli
