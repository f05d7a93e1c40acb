// dpbudget report: a privacy statement for a model card, as Markdown or one
// self-contained HTML page: the parameters a reader needs to judge the claim
// (Ponomareva et al. 2023, "How to DP-fy ML", §5.3: unit of privacy,
// neighbouring relation, sampling, accountant, ε at δ, δ against 1/N, noise,
// steps, clipping), each accountant's ε with its bound label, the attack
// risk of `risk`, the ε-versus-steps and trade-off curves, and references.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include "accounting/accountant_descriptor.hpp"
#include "accounting/errors.hpp"
#include "accounting/risk/attack_risk.hpp"
#include "cli/errors.hpp"
#include "cli/flags/accountant_flags.hpp"
#include "cli/flags/choices.hpp"
#include "cli/flags/output_flags.hpp"
#include "cli/flags/parse.hpp"
#include "cli/flags/run_parameters.hpp"
#include "cli/run/result_rows.hpp"
#include "cli/run/risk_curves.hpp"
#include "cli/run/spec_verb.hpp"
#include "cli/verbs.hpp"
#include "cli/verbs/report_ledger.hpp"
#include "cli/verbs/report_tables.hpp"
#include "dpbudget/version.hpp"
#include "report/document.hpp"
#include "report/number_format.hpp"

namespace dpb::cli {
namespace {

enum class DocFormat { markdown, html };
inline constexpr std::array<Choice<DocFormat>, 2> kDocFormatChoices{{
    {"markdown", DocFormat::markdown},
    {"html", DocFormat::html},
}};

struct ReportFlags {
  DpSgdFlags run;
  AccountantFlags accountant;
  SpecFlags spec;
  std::vector<std::string> deltas, fpr, prior;
  std::string format = "markdown";
  std::string output;      ///< -o; empty or "-": stdout
  LedgerFileFlags ledger;  ///< --ledger: the dataset's spending in all
};

using report::Rounding;
// The statement's numbers (up, down, plain) and its tables of the run.
using namespace statement;

/// An ε with its interval: "[lower, upper]" where both ends bound the run,
/// "upper (accuracy a)" where the lower end only bounds a dominating pair.
std::string epsilon_text(const Guarantee& g) {
  if (!g.epsilon_lower) return up(g.epsilon);
  if (g.lower_end == LowerEnd::lower_bound)
    return "[" + down(*g.epsilon_lower) + ", " + up(g.epsilon) + "]";
  return up(g.epsilon) + " (accuracy " +
         report::format_number(std::max(0.0, g.epsilon - *g.epsilon_lower), 2, Rounding::up) + ")";
}

/// Why a row's ε is infinite, from the accountant's own notes (nullopt when
/// it is finite).
std::optional<std::string> infinite_reason(const Guarantee& g) {
  if (!std::isinf(g.epsilon)) return std::nullopt;
  std::string why = g.accountant + " gives epsilon = inf at delta = " + plain(g.delta);
  std::string notes;
  const std::string prefix = g.accountant + ": ";
  for (std::string n : g.notes) {
    if (n.rfind(prefix, 0) == 0) n.erase(0, prefix.size());
    notes += (notes.empty() ? "" : "; ") + n;
  }
  return why +
         (notes.empty() ? ": no finite bound from this accountant for these events"
                        : ": " + notes) +
         ".";
}

/// The sampling the guarantee assumes, for the headline's sentence.
std::string sampling_assumption(const DpSgdRun& run) {
  switch (run.sampling) {
    case Sampling::poisson:
      return "assuming Poisson sampling (each record in each step independently with "
             "probability q = " +
             plain(run.sampling_rate) +
             "; a loader that shuffles or draws fixed-size batches "
             "is another scheme)";
    case Sampling::without_replacement:
      return "for batches of exactly B records drawn without replacement";
    case Sampling::shuffle:
      return "for a loader that shuffles each epoch (no amplification by sampling is claimed: "
             "each epoch counts as one unamplified release)";
    case Sampling::balls_in_bins:
      return "for balls-in-bins batches (each epoch each record in " +
             std::to_string(run.participations) + " uniformly chosen step(s))";
  }
  return "";
}

/// Beside a shuffled or balls-in-bins run: its upper, lower and
/// Poisson-estimate figures at δ side by side, with what each means.
void loader_paragraphs(report::Document& doc, const Answer& answer, const DpSgdRun& run,
                       double delta) {
  std::optional<double> upper, lower, estimate;
  for (const auto& r : answer.rows) {
    if (r.guarantee.delta != delta) continue;
    const double e = r.guarantee.epsilon;
    if (r.recommended) upper = e;
    if (r.role == RowRole::lower) lower = std::max(lower.value_or(0.0), e);
    if (r.role == RowRole::poisson_estimate) estimate = std::min(estimate.value_or(e), e);
  }
  report::Table t{{"figure", "epsilon", "what it means"}, {}, {false, true, false}};
  if (upper)
    t.rows.push_back(
        {"upper bound", up(*upper), "proven for this loader: the run's epsilon is at most this"});
  if (lower)
    t.rows.push_back({"lower bound", down(*lower),
                      "proven for this loader: the run's epsilon is at least this"});
  if (estimate)
    t.rows.push_back({"Poisson estimate", up(*estimate),
                      "what the run would have if batches were Poisson-sampled at q = B/N; the "
                      "figure usually quoted, not a bound for this loader"});
  if (t.rows.empty()) return;
  doc.blocks.push_back(report::Paragraph{
      std::string("For the ") + (run.sampling == Sampling::shuffle ? "shuffled" : "balls-in-bins") +
      " loader, the figures at delta = " + plain(delta) + " side by side:"});
  doc.blocks.push_back(std::move(t));
}

/// "In plain words: ..." from the recommended accountant's attack bound at
/// the smallest asked false-positive rate (docs/risk.md#trade-off-bound); empty without one.
std::string risk_in_words(const std::vector<AttackBounds>& risks, const AnswerRow* best,
                          const std::vector<double>& fprs) {
  if (!best || fprs.empty()) return "";
  const auto it = std::find_if(risks.begin(), risks.end(), [&](const AttackBounds& a) {
    return a.accountant == best->guarantee.accountant && a.bound == BoundKind::upper;
  });
  if (it == risks.end()) return "";
  const std::size_t i =
      static_cast<std::size_t>(std::min_element(it->fpr.begin(), it->fpr.end()) - it->fpr.begin());
  const double fpr = it->fpr[i], tpr = it->tpr[i];
  const double inverse = 1 / fpr;
  const std::string rate =
      std::fabs(inverse - std::round(inverse)) < 1e-9 * inverse
          ? "1 in " + report::format_number(std::round(inverse), 12, Rounding::nearest)
          : "a share " + plain(fpr);
  return "In plain words: an attacker who wrongly accuses " + rate +
         " non-members of being in the training data catches at most " +
         report::format_number(100 * tpr, 3, Rounding::up) + "% of members (" + it->accountant +
         " accountant's bound on any membership-inference attack; the table below gives more "
         "rates).";
}

/// The rates [from, to) of `b` (its other fields as they are).
AttackBounds rates_between(const AttackBounds& b, std::size_t from, std::size_t to) {
  AttackBounds out = b;
  auto slice = [&](std::vector<double>& v) {
    if (!v.empty())
      v = std::vector<double>(v.begin() + static_cast<std::ptrdiff_t>(from),
                              v.begin() + static_cast<std::ptrdiff_t>(to));
  };
  slice(out.fpr);
  slice(out.tpr);
  slice(out.tpr_lower);
  return out;
}

/// The accountants' answer that `report` states, and what it says of them.
struct Statement {
  Question question;
  Answer answer;
  /// The accountants with a row of the run, in order.
  std::vector<std::string> used;
  /// Accountants asked by default and left out: their figure here is an approximation.
  std::vector<std::string> left_out;
  /// Each accountant's attack bounds at the asked rates, and along the drawn curve.
  std::vector<AttackBounds> risks, curves;
  std::vector<double> curve_x;
};

/// The accountants to ask: those --accountant names, else `report`'s
/// default ones (AccountantDescriptor::report_default), in report order.
AccountantFlags report_accountant_flags(const AccountantFlags& given) {
  AccountantFlags flags = given;
  if (!flags.accountant.empty()) return flags;
  std::string names;
  for (std::string_view n : report_default_accountants())
    names += (names.empty() ? "" : ",") + std::string(n);
  flags.accountant = {names};
  return flags;
}

/// The answer `report` states (the policy): `question` asks --accountant's
/// accountants, or by default those whose descriptor says report_default
/// (today rdp, pld and gdp), then every accountant when none of those handles
/// the events; an accountant asked by default whose rows are approximations
/// (gdp's central-limit figure for DP-SGD) is left out (`left_out`).
/// Skipped accountants and warnings go to `err`.
Statement ask_accountants(Question question, bool defaulted, std::ostream& err) {
  Statement st{std::move(question), {}, {}, {}, {}, {}, {}};
  Answer& answer = st.answer;
  try {
    answer = dpb::answer(st.question);
  } catch (const UnsupportedEvent&) {
    if (!defaulted) throw;
    // None of the default accountants handles these events: every one.
    st.question.accountants.names = parse_accountants({"all"});
    answer = dpb::answer(st.question);
  }
  auto has = [](const std::vector<std::string>& names, const std::string& n) {
    return std::find(names.begin(), names.end(), n) != names.end();
  };
  if (defaulted) {
    for (const auto& r : answer.rows)
      if (r.role == RowRole::run && r.guarantee.bound == BoundKind::approximate &&
          !has(st.left_out, r.guarantee.accountant))
        st.left_out.push_back(r.guarantee.accountant);
    std::erase_if(answer.rows,
                  [&](const AnswerRow& r) { return has(st.left_out, r.guarantee.accountant); });
    std::erase_if(st.question.accountants.names,
                  [&](const std::string& n) { return has(st.left_out, n); });
    if (answer.rows.empty()) throw UnsupportedEvent("no accountant gives a sound bound here");
    mark_recommended(answer.rows, false);
    std::vector<std::string> left;
    for (const auto& r : answer.rows)
      if (!has(left, r.guarantee.accountant)) left.push_back(r.guarantee.accountant);
    answer.several_accountants = left.size() > 1;
  }
  for (const auto& r : answer.rows)
    if (r.role == RowRole::run && !has(st.used, r.guarantee.accountant))
      st.used.push_back(r.guarantee.accountant);
  for (const auto& why : answer.skipped) err << "dpbudget: warning: skipped " << why << '\n';
  for (const auto& w : answer.warnings) err << "dpbudget: warning: " << w << '\n';
  return st;
}

/// Risk: each accountant's bounds along the drawn curve and at the asked
/// rates `fprs`, in one question each (the rates after the curve's points).
void ask_attack_bounds(Statement& st, const std::vector<double>& fprs, std::ostream& err) {
  st.curve_x = curve_fprs(*std::min_element(fprs.begin(), fprs.end()));
  std::vector<double> asked = st.curve_x;
  asked.insert(asked.end(), fprs.begin(), fprs.end());
  for (auto& a : attack_bounds_each(st.question, asked)) {
    if (!a.bounds) {
      // Skipped above with its warning, unless only its attack bounds fail.
      if (std::find(st.used.begin(), st.used.end(), a.accountant) != st.used.end())
        err << "dpbudget: warning: no attack bounds: " << *a.unsupported << '\n';
      continue;
    }
    st.curves.push_back(rates_between(*a.bounds, 0, st.curve_x.size()));
    st.risks.push_back(rates_between(*a.bounds, st.curve_x.size(), asked.size()));
  }
}

/// What the statement is about, as read from the flags.
struct StatementRun {
  const RunEvent& run;
  std::vector<double> deltas, fprs, priors;
  /// The relation the figures hold under.
  Neighbouring relation;
};

void paragraph(report::Document& doc, std::string text) {
  doc.blocks.push_back(report::Paragraph{std::move(text)});
}
void heading(report::Document& doc, std::string text) {
  doc.blocks.push_back(report::Heading{2, std::move(text)});
}

/// δ against 1/N, next to the headline.
void delta_warnings(report::Document& doc, const StatementRun& in) {
  const std::optional<std::int64_t> n = in.run.run ? in.run.run->dataset_size : std::nullopt;
  if (!n) {
    paragraph(doc, "delta should be well below 1/N for a dataset of N records.");
    return;
  }
  for (double d : in.deltas) {
    const double dn = d * static_cast<double>(*n);
    if (dn >= 1)
      doc.blocks.push_back(report::Warning{
          "delta = " + plain(d) + " is not below 1/N = " + plain(1.0 / static_cast<double>(*n)) +
          ": a mechanism that publishes a few records in the clear can meet it. Use delta much "
          "smaller than 1/N."});
    else if (dn > kDeltaTimesNWarning)
      doc.blocks.push_back(report::Warning{
          "delta x N = " + plain(dn) + " at delta = " + plain(d) +
          ": the chance that some record's guarantee fails is not negligible. Use delta well "
          "below 1/N (delta x N at most " +
          plain(kDeltaTimesNWarning) + ")."});
  }
}

/// The prose above the tables: the headline (the recommended row, the
/// smallest sound upper bound, at the first δ, with its claim, unit of
/// privacy, relation and sampling), δ against 1/N, a shuffled or
/// balls-in-bins run's figures side by side, and the risk in plain words.
void headline(report::Document& doc, const Statement& st, const StatementRun& in) {
  const DpSgdRun* run = in.run.run ? &*in.run.run : nullptr;
  const AnswerRow* best = nullptr;
  for (const auto& r : st.answer.rows)
    if (r.recommended && r.guarantee.delta == in.deltas.front()) best = &r;
  const std::string what =
      run ? "This model was trained with DP-SGD and satisfies" : "This release satisfies";
  const std::string unit = !run             ? "one record"
                           : run->federated ? "one client"
                           : run->records_per_user > 1
                               ? "a user with " + std::to_string(run->records_per_user) + " records"
                               : "one record";
  if (best)
    paragraph(doc, what + " (epsilon, delta)-differential privacy with epsilon = " +
                       up(best->guarantee.epsilon) + " at delta = " + plain(best->guarantee.delta) +
                       ", a sound upper bound (" + best->guarantee.accountant +
                       " accountant), for " + unit + " under the " +
                       std::string(to_string(in.relation)) + " neighbouring relation" +
                       (run ? ", " + sampling_assumption(*run) : std::string()) + ".");
  else
    paragraph(doc,
              "No accountant gives a sound upper bound for this run: no privacy guarantee is "
              "stated. The figures below are approximations or estimates.");
  delta_warnings(doc, in);
  if (run && (run->sampling == Sampling::shuffle || run->sampling == Sampling::balls_in_bins))
    loader_paragraphs(doc, st.answer, *run, in.deltas.front());
  if (const auto words = risk_in_words(st.risks, best, in.fprs); !words.empty())
    paragraph(doc, words);
}

/// "Parameters": the run's (or its phases', or the spec's events), the
/// accountants that were not asked or were left out.
void parameters_section(report::Document& doc, const Statement& st, const StatementRun& in) {
  heading(doc, "Parameters");
  std::string names;
  for (const auto& nm : st.used) names += (names.empty() ? "" : ", ") + nm;
  const std::string relation(to_string(in.relation));
  if (in.run.run) {
    doc.blocks.push_back(parameter_table(*in.run.run, names));
  } else if (in.run.schedule) {
    paragraph(doc, "The run is a schedule of " + std::to_string(in.run.schedule->phases.size()) +
                       " phases (--schedule), their steps composed, analysed under the " +
                       relation + " relation by: " + names + ".");
    doc.blocks.push_back(phase_table(*in.run.schedule));
  } else {
    paragraph(doc,
              "The mechanism is the composition in the spec file (dpbudget --spec), analysed "
              "under the " +
                  relation + " relation by: " + names + ". Its events, each with its parameters:");
    doc.blocks.push_back(ledger_table(*in.run.event));
  }
  for (const auto& s : st.answer.skipped) paragraph(doc, "Not analysed: " + s + ".");
  if (!st.left_out.empty()) {
    std::string lo;
    for (const auto& nm : st.left_out) lo += (lo.empty() ? "" : ", ") + nm;
    paragraph(doc, "Left out: " + lo +
                       ", whose figure for this run is an approximation, not a bound (ask for it "
                       "with the accountant option).");
  }
}

/// "Privacy loss": every row's ε with its claim, what the claims mean, and
/// for a Poisson or fixed-size run ε against the number of steps.
void privacy_loss_section(report::Document& doc, const Statement& st, const StatementRun& in) {
  heading(doc, "Privacy loss");
  const DpSgdRun* run = in.run.run ? &*in.run.run : nullptr;
  const bool schemes =
      run && (run->sampling == Sampling::shuffle || run->sampling == Sampling::balls_in_bins);
  report::Table eps{{"accountant", "claim"}, {}, {false, false}};
  if (schemes) {
    eps.header.push_back("batches");
    eps.numeric.push_back(false);
  }
  eps.header.insert(eps.header.end(), {"delta", "epsilon"});
  eps.numeric.insert(eps.numeric.end(), {true, true});
  for (const auto& r : st.answer.rows) {
    const Guarantee& g = r.guarantee;
    std::vector<std::string> row{
        g.accountant + (r.recommended && st.answer.several_accountants ? " (recommended)" : ""),
        claim_words(g.bound)};
    if (schemes) row.push_back(r.sampling ? sampling_name(*r.sampling) : "");
    row.push_back(plain(g.delta));
    row.push_back(epsilon_text(g));
    eps.rows.push_back(std::move(row));
  }
  doc.blocks.push_back(std::move(eps));
  for (const auto& r : st.answer.rows)
    if (const auto why = infinite_reason(r.guarantee)) paragraph(doc, *why);
  paragraph(
      doc,
      "upper bound: the run's true epsilon is at most this. [lower, upper]: the true epsilon "
      "lies in the interval (both ends are bounds on this run). upper (accuracy a): a sound "
      "upper bound computed for a pair of distributions that dominates this run; it is within "
      "a of that pair's exact value, which may be above the run's. approximation: no bound "
      "either way. lower bound: the run's true epsilon is at least this. estimate: the figure "
      "if batches were Poisson-sampled, not a bound for this loader.");
  if (run && (run->sampling == Sampling::poisson || run->sampling == Sampling::without_replacement))
    doc.blocks.push_back(steps_figure(*run, st.question.accountants, in.deltas.front(), st.answer));
}

/// "Membership-inference risk": each accountant's TPR bound at each asked
/// rate with the precision at each prior, and the trade-off curves.
void risk_section(report::Document& doc, const Statement& st, const StatementRun& in) {
  heading(doc, "Membership-inference risk");
  paragraph(doc,
            "No membership-inference attack at a false-positive rate FPR has a true-positive rate "
            "above TPR below. Precision at prior p: the largest share of true members among the "
            "records it flags when a share p of those attacked are members, p TPR / (p TPR + "
            "(1 - p) FPR). Advantage: the largest TPR - FPR at any rate.");
  report::Table risk{{"accountant", "bound", "FPR", "TPR at most"}, {}, {false, false, true, true}};
  for (double p : in.priors) {
    risk.header.push_back("precision at prior " + plain(p));
    risk.numeric.push_back(true);
  }
  risk.header.push_back("advantage");
  risk.numeric.push_back(true);
  for (const auto& a : st.risks)
    for (std::size_t i = 0; i < a.fpr.size(); ++i) {
      std::vector<std::string> row{a.accountant, std::string(to_string(a.bound)), plain(a.fpr[i]),
                                   up(a.tpr[i])};
      for (double p : in.priors) row.push_back(up(precision_bound(p, a.tpr[i], a.fpr[i])));
      row.push_back(up(a.advantage));
      risk.rows.push_back(std::move(row));
    }
  doc.blocks.push_back(std::move(risk));
  report::Figure tradeoff;
  tradeoff.chart = tradeoff_chart(st.curves, in.fprs);
  tradeoff.caption = "Largest true-positive rate of any attack against its false-positive rate";
  tradeoff.fallback.header = {"FPR"};
  tradeoff.fallback.numeric = {true};
  for (const auto& c : st.curves) {
    tradeoff.fallback.header.push_back(c.accountant);
    tradeoff.fallback.numeric.push_back(true);
  }
  for (std::size_t k = 0; k <= 6; ++k) {
    const std::size_t i = (st.curve_x.size() - 1) * k / 6;
    std::vector<std::string> row{plain(st.curve_x[i])};
    for (const auto& c : st.curves) row.push_back(up(c.tpr[i]));
    tradeoff.fallback.rows.push_back(std::move(row));
  }
  doc.blocks.push_back(std::move(tradeoff));
}

/// "How this was computed": the version, the rounding, and every
/// accountant's method (AccountantDescriptor::report_method) in report order.
void methods_section(report::Document& doc) {
  heading(doc, "How this was computed");
  paragraph(doc, std::string("dpbudget ") + kVersion +
                     ". Every epsilon is rounded up and every lower end down; the accountants and "
                     "their methods:");
  report::BulletList methods;
  for (const AccountantDescriptor* d : accountants_in_report_order())
    methods.items.push_back(d->name + ": " + std::string(d->report_method));
  methods.items.push_back(
      "attack risk: the trade-off function bound of Dong, Roth & Su 2022; reporting after "
      "Ponomareva et al. 2023, How to DP-fy ML, section 5.3");
  doc.blocks.push_back(std::move(methods));
}

int run_report(const ReportFlags& f, std::ostream& out, std::ostream& err) {
  auto loaded =
      load_run_for_accountants(f.spec, f.run, report_accountant_flags(f.accountant), out, err);
  if (!loaded) return kOk;  // --print-spec
  const DocFormat format = parse_choice("--format", f.format, kDocFormatChoices);
  const RunEvent& run = loaded->run;
  if (f.deltas.empty()) throw UsageError("--delta is required");
  StatementRun in{run, parse_list("--delta", f.deltas, kOpenUnit),
                  f.fpr.empty() ? kDefaultFprs : parse_list("--fpr", f.fpr, kOpenUnit),
                  f.prior.empty() ? kDefaultPriors : parse_list("--prior", f.prior, kOpenUnit),
                  Neighbouring::add_remove};
  if (!f.ledger.key_file.empty() && f.ledger.ledger.empty())
    throw UsageError("--key-file: only with --ledger (the key of the dataset's ledger)");
  if (!f.ledger.ledger_name.empty() && f.ledger.ledger.empty())
    throw UsageError("--ledger-name: only with --ledger (the ledger's name on its server)");
  if (!f.ledger.ledger.empty()) (void)check_ledger_address(f.ledger);
  if (only_checking()) return kOk;

  Statement st = ask_accountants(make_question(run, loaded->choice, in.deltas, false),
                                 f.accountant.accountant.empty(), err);
  ask_attack_bounds(st, in.fprs, err);
  in.relation = run.run ? run_relation(*run.run) : st.answer.rows.front().guarantee.neighbouring;

  report::Document doc;
  doc.title = "Privacy statement";
  headline(doc, st, in);
  if (!f.ledger.ledger.empty())
    dataset_budget_section(doc, f.ledger, *run.event, st.question.accountants);
  parameters_section(doc, st, in);
  privacy_loss_section(doc, st, in);
  risk_section(doc, st, in);
  methods_section(doc);

  std::ostringstream text;
  if (format == DocFormat::markdown)
    report::render_markdown(doc, text);
  else
    report::render_html(doc, text);
  if (f.output.empty() || f.output == "-") {
    write_out(out, text.view());
  } else {
    std::ofstream file = open_output(f.output);
    write_out(file, text.view(), "-o '" + f.output + "'");
  }
  return kOk;
}

Verb declare_report(CLI::App& command) {
  auto f = std::make_shared<ReportFlags>();
  CLI::App* cmd = &command;
  add_dp_sgd_flags(*cmd, f->run);
  cmd->add_option("--delta", f->deltas, "delta(s) in (0, 1) at which to state epsilon");
  cmd->add_option("--fpr", f->fpr,
                  "false-positive rate(s) in (0, 1) of the risk table (default 0.001,0.01,0.1)");
  cmd->add_option("--prior", f->prior,
                  "share(s) of members among the attacked records, in (0, 1) (default "
                  "0.5,0.01)");
  add_choice_option(*cmd, "--format", f->format, kDocFormatChoices,
                    "markdown (default) or html (one self-contained page)");
  record_file(cmd->add_option("-o,--output", f->output, "write to this file (default stdout)"));
  add_spec_flags(*cmd, f->spec);
  add_accountant_flags(*cmd, f->accountant);
  add_ledger_file_flags(*cmd, f->ledger);
  return verb_of(cmd, f, run_report);
}

}  // namespace

extern const VerbDescriptor kReportVerb{
    "report",
    "a privacy statement for a model card (Markdown, or one HTML page): parameters, epsilon\n  at "
    "each --delta (by default from rdp, pld and gdp where it gives a sound bound),\n  attack risk, "
    "curves, references",
    {"dpbudget report -q 0.01 --sigma 1.1 --steps 10000 --delta 1e-5"},
    declare_report};

}  // namespace dpb::cli
