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
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>

#include "accounting/dpsgd/epsilon_series.hpp"
#include "accounting/errors.hpp"
#include "accounting/risk/attack_risk.hpp"
#include "cli/errors.hpp"
#include "cli/flags/accountant_flags.hpp"
#include "cli/flags/choices.hpp"
#include "cli/flags/output_flags.hpp"
#include "cli/flags/parse.hpp"
#include "cli/flags/run_parameters.hpp"
#include "cli/input/spec_input.hpp"
#include "cli/run/result_rows.hpp"
#include "cli/run/risk_curves.hpp"
#include "cli/run/spec_verb.hpp"
#include "cli/verbs.hpp"
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

/// Points of the ε-versus-steps curve (log-spaced step counts from 1 to T).
constexpr int kStepCurvePoints = 16;
/// Rows of its Markdown table (a subset of the points).
constexpr int kStepTableRows = 6;

struct ReportFlags {
  DpSgdFlags run;
  AccountantFlags accountant;
  SpecFlags spec;
  std::vector<std::string> deltas, fpr, prior;
  std::string clipping_norm;
  std::string format = "markdown";
  std::string output;  ///< -o; empty or "-": stdout
};

using report::Rounding;

std::string up(double v) { return report::format_number(v, 6, Rounding::up); }
std::string down(double v) { return report::format_number(v, 6, Rounding::down); }
std::string plain(double v) { return report::format_number(v, 6, Rounding::nearest); }

/// δ·N above this (and below 1) gets a warning beside the headline: a
/// guarantee that fails with probability δ for each of N records fails for
/// some record with probability up to δ·N (Ponomareva et al. 2023, §5.3, ask
/// for δ ≪ 1/N).
constexpr double kDeltaTimesNWarning = 0.1;

/// An ε with its interval: "[lower, upper]" where both ends bound the run,
/// "upper (accuracy a)" where the lower end only bounds a dominating pair.
std::string epsilon_text(const Guarantee& g) {
  if (!g.epsilon_lower) return up(g.epsilon);
  if (g.lower_end == LowerEnd::lower_bound)
    return "[" + down(*g.epsilon_lower) + ", " + up(g.epsilon) + "]";
  return up(g.epsilon) + " (accuracy " +
         report::format_number(std::max(0.0, g.epsilon - *g.epsilon_lower), 2, Rounding::up) + ")";
}

/// One event of a spec, in one line: "kind(field value, ..., inner)", the
/// fields in the kinds' order (spec_input's event_to_json), an inner event
/// nested, a list of events as their lines in brackets.
std::string event_line(const nlohmann::ordered_json& event) {
  // The first key and its value through the object's own iterator (a binding
  // to `*event.items().begin()` would outlive the proxy it refers to).
  const auto first = event.begin();
  const std::string kind = first.key();
  const auto& body = first.value();
  // Numbers as the spec holds them (the shortest text that reads back as the
  // same double): parameters are shown exactly, never rounded.
  auto value_text = [](const nlohmann::ordered_json& v) {
    return v.is_string() ? v.get<std::string>() : v.dump();
  };
  auto list_text = [&](const nlohmann::ordered_json& list) {
    std::string s;
    for (const auto& e : list) s += (s.empty() ? "" : ", ") + event_line(e);
    return "[" + s + "]";
  };
  if (body.is_array()) return kind + list_text(body);  // composed
  std::string fields;
  for (const auto& [name, v] : body.items()) {
    std::string text;
    if (v.is_object())
      text = event_line(v);
    else if (v.is_array() && !v.empty() && v.front().is_object())
      text = list_text(v);
    else if (v.is_array()) {
      for (const auto& x : v) text += (text.empty() ? "" : " ") + value_text(x);
      text = name + " [" + text + "]";
    } else {
      text = name + " " + value_text(v);
    }
    fields += (fields.empty() ? "" : ", ") + text;
  }
  return kind + "(" + fields + ")";
}

/// The events of a spec file, one row each (the items of a top-level
/// `composed`, else the one event): what the ledger is, for the reader.
report::Table ledger_table(const DpEvent& event) {
  const auto json = event_to_json(event);
  report::Table t{{"#", "event"}, {}, {true, false}};
  // As in event_line: the first key and its value through the iterator.
  const auto first = json.begin();
  const std::string kind = first.key();
  const auto& body = first.value();
  if (kind == "composed") {
    for (std::size_t i = 0; i < body.size(); ++i)
      t.rows.push_back({std::to_string(i + 1), event_line(body[i])});
  } else {
    t.rows.push_back({"1", event_line(json)});
  }
  return t;
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

std::string relation_words(Neighbouring n) {
  switch (n) {
    case Neighbouring::add_remove:
      return "add/remove: the two datasets differ by one unit of privacy added or removed";
    case Neighbouring::replace_one:
      return "replace-one: the two datasets differ by one unit of privacy replaced by another";
    case Neighbouring::replace_special:
      return "replace-special (zero-out): one unit of privacy replaced by a null record";
  }
  return "";
}

std::string sampling_words(const DpSgdRun& run) {
  switch (run.sampling) {
    case Sampling::poisson:
      return "Poisson: each record in each step independently with probability q";
    case Sampling::without_replacement:
      return "without replacement: each step a uniformly random batch of exactly B records";
    case Sampling::shuffle:
      return "shuffle: a fresh random permutation each epoch, cut into consecutive batches";
    case Sampling::balls_in_bins:
      return "balls-in-bins: each epoch each record goes to " + std::to_string(run.participations) +
             " uniformly chosen step(s)";
  }
  return "";
}

report::Table parameter_table(const DpSgdRun& run, const std::optional<double>& clipping,
                              const std::string& accountants) {
  report::Table t{{"parameter", "value"}, {}, {false, false}};
  auto row = [&](std::string name, std::string value) {
    t.rows.push_back({std::move(name), std::move(value)});
  };
  row("sampling", sampling_words(run));
  row("sampling rate q", plain(run.sampling_rate));
  if (run.dataset_size) row("dataset size N", std::to_string(*run.dataset_size));
  if (run.batch_size && run.accumulation_steps > 1) {
    // The logical batch is what is sampled (docs/sampling.md#gradient-accumulation).
    row("batch size B (logical: micro-batch x accumulation steps)",
        std::to_string(*run.batch_size));
    row("micro-batch", std::to_string(*run.batch_size / run.accumulation_steps));
    row("gradient accumulation steps", std::to_string(run.accumulation_steps));
  } else if (run.batch_size) {
    row("batch size B", std::to_string(*run.batch_size));
  }
  row("noise multiplier sigma (noise std / clipping norm)", plain(run.noise_multiplier));
  if (clipping) {
    row("clipping norm C", plain(*clipping));
    row("noise standard deviation sigma C", plain(run.noise_multiplier * *clipping));
  }
  row("steps T", std::to_string(run.steps));
  if (run.epochs) row("epochs", plain(*run.epochs));
  row("unit of privacy",
      run.records_per_user == 1
          ? "one record"
          : "one user with " + std::to_string(run.records_per_user) + " records (user-level)");
  row("neighbouring relation", relation_words(run_relation(run)));
  row("accountants", accountants);
  return t;
}

/// A schedule's phases, one row each: its scheme, q (with N and B), σ, steps and epochs.
report::Table phase_table(const Schedule& schedule) {
  report::Table t{{"phase", "sampling", "sampling rate q", "dataset size N", "batch size B",
                   "noise multiplier sigma", "steps T", "epochs"},
                  {},
                  {false, false, true, true, true, true, true, true}};
  for (std::size_t i = 0; i < schedule.phases.size(); ++i) {
    const DpSgdRun& p = schedule.phases[i];
    t.rows.push_back({schedule.names[i], sampling_words(p), plain(p.sampling_rate),
                      p.dataset_size ? std::to_string(*p.dataset_size) : "",
                      p.batch_size ? std::to_string(*p.batch_size) : "", plain(p.noise_multiplier),
                      std::to_string(p.steps), p.epochs ? plain(*p.epochs) : ""});
  }
  return t;
}

/// ε of the run at each of `steps` (ε-versus-steps), one series per accountant.
report::Figure steps_figure(const DpSgdRun& base, const AccountantChoice& choice, double delta) {
  std::vector<std::int64_t> steps;
  for (int i = 0; i < kStepCurvePoints; ++i) {
    const double x =
        std::pow(static_cast<double>(base.steps), static_cast<double>(i) / (kStepCurvePoints - 1));
    const auto t = std::max<std::int64_t>(1, std::llround(x));
    if (steps.empty() || t > steps.back()) steps.push_back(t);
  }
  steps.back() = base.steps;
  report::Figure fig;
  fig.chart.title = "privacy loss against training steps";
  fig.chart.x_label = "steps";
  fig.chart.y_label = "epsilon at delta = " + plain(delta);
  fig.chart.log_x = true;
  fig.caption = "Epsilon at delta = " + plain(delta) + " after each number of steps";
  fig.fallback.header = {"steps"};
  fig.fallback.numeric = {true};
  std::vector<std::vector<std::string>> columns;
  for (const auto& name : choice.names) {
    AccountantOptions options = choice.options;
    options.neighbouring = run_neighbouring(base);
    auto event_of = [&base](std::int64_t t) {
      DpSgdRun run = base;
      run.steps = t;
      return dp_sgd_event(run);
    };
    if (make_accountant(name, options)->unsupported_reason(*event_of(steps.front()))) continue;
    report::Series s;
    std::vector<std::string> cells;
    bool approximate = false;
    for (const Guarantee& g : epsilon_series(name, options, event_of, steps, delta)) {
      s.y.push_back(g.epsilon);
      cells.push_back(up(g.epsilon));
      approximate = approximate || g.bound == BoundKind::approximate;
    }
    for (std::int64_t t : steps) s.x.push_back(static_cast<double>(t));
    s.label = name + (approximate ? " (approximation)" : " (upper bound)");
    s.dashed = approximate;
    fig.chart.series.push_back(std::move(s));
    fig.fallback.header.push_back(name + (approximate ? " (approximate)" : ""));
    fig.fallback.numeric.push_back(true);
    columns.push_back(std::move(cells));
  }
  fig.chart.log_y = report::wants_log_y(fig.chart.series);  // as `plot` chooses
  // The Markdown table: a few of the points, always the last.
  const std::size_t n = steps.size();
  for (int r = 0; r < kStepTableRows; ++r) {
    const std::size_t i = std::min(n - 1, (n - 1) * static_cast<std::size_t>(r) /
                                              static_cast<std::size_t>(kStepTableRows - 1));
    std::vector<std::string> row{std::to_string(steps[i])};
    for (const auto& c : columns) row.push_back(c[i]);
    if (fig.fallback.rows.empty() || fig.fallback.rows.back().front() != row.front())
      fig.fallback.rows.push_back(std::move(row));
  }
  return fig;
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

int run_report(const ReportFlags& f, std::ostream& out, std::ostream& err) {
  // rdp, pld and gdp unless --accountant says which (gdp left out below
  // where it only approximates).
  AccountantFlags accountant_flags = f.accountant;
  if (accountant_flags.accountant.empty()) accountant_flags.accountant = {"rdp,pld,gdp"};
  auto loaded = load_run_for_accountants(f.spec, f.run, accountant_flags, out, err);
  if (!loaded) return kOk;  // --print-spec
  const DocFormat format = parse_choice("--format", f.format, kDocFormatChoices);
  RunEvent& run = loaded->run;
  const AccountantChoice& choice = loaded->choice;
  if (f.deltas.empty()) throw UsageError("--delta is required");
  const auto deltas = parse_list("--delta", f.deltas, kOpenUnit);
  const auto fprs = f.fpr.empty() ? kDefaultFprs : parse_list("--fpr", f.fpr, kOpenUnit);
  const auto priors = f.prior.empty() ? kDefaultPriors : parse_list("--prior", f.prior, kOpenUnit);
  std::optional<double> clipping;
  if (!f.clipping_norm.empty()) {
    if (!run.run) throw UsageError("--clipping-norm: goes with the run parameters, not --spec");
    clipping = parse_real("--clipping-norm", f.clipping_norm, kPositive);
  }

  // The question `epsilon` asks, with its companions. By default the
  // accountants that give sound upper bounds for DP-SGD (rdp, pld, and gdp
  // where it is exact); composition, and gdp's central-limit approximation,
  // only when asked for (--accountant).
  if (only_checking()) return kOk;
  const bool defaulted = f.accountant.accountant.empty();
  Question question = make_question(run, choice, deltas, /*solve_delta=*/false);
  Answer answer;
  try {
    answer = dpb::answer(question);
  } catch (const UnsupportedEvent&) {
    if (!defaulted) throw;
    // None of the default accountants handles these events: every one.
    question.accountants.names = parse_accountants({"all"});
    answer = dpb::answer(question);
  }
  std::vector<std::string> left_out;
  if (defaulted) {
    for (const auto& r : answer.rows)
      if (r.role == RowRole::run && r.guarantee.bound == BoundKind::approximate &&
          std::find(left_out.begin(), left_out.end(), r.guarantee.accountant) == left_out.end())
        left_out.push_back(r.guarantee.accountant);
    std::erase_if(answer.rows, [&](const AnswerRow& r) {
      return std::find(left_out.begin(), left_out.end(), r.guarantee.accountant) != left_out.end();
    });
    std::erase_if(question.accountants.names, [&](const std::string& n) {
      return std::find(left_out.begin(), left_out.end(), n) != left_out.end();
    });
    if (answer.rows.empty()) throw UnsupportedEvent("no accountant gives a sound bound here");
    mark_recommended(answer.rows, false);
    std::vector<std::string> left;
    for (const auto& r : answer.rows)
      if (std::find(left.begin(), left.end(), r.guarantee.accountant) == left.end())
        left.push_back(r.guarantee.accountant);
    answer.several_accountants = left.size() > 1;
  }
  std::vector<std::string> used;
  for (const auto& r : answer.rows)
    if (r.role == RowRole::run &&
        std::find(used.begin(), used.end(), r.guarantee.accountant) == used.end())
      used.push_back(r.guarantee.accountant);
  for (const auto& why : answer.skipped) err << "dpbudget: warning: skipped " << why << '\n';
  for (const auto& w : answer.warnings) err << "dpbudget: warning: " << w << '\n';
  // Risk: each accountant's bounds along the drawn curve and at the asked
  // rates, in one question each (the rates after the curve's points).
  std::vector<AttackBounds> risks, curves;
  const std::vector<double> curve_x = curve_fprs(*std::min_element(fprs.begin(), fprs.end()));
  std::vector<double> asked = curve_x;
  asked.insert(asked.end(), fprs.begin(), fprs.end());
  for (auto& a : attack_bounds_each(question, asked)) {
    if (!a.bounds) {
      // Skipped above with its warning, unless only its attack bounds fail.
      if (std::find(used.begin(), used.end(), a.accountant) != used.end())
        err << "dpbudget: warning: no attack bounds: " << *a.unsupported << '\n';
      continue;
    }
    curves.push_back(rates_between(*a.bounds, 0, curve_x.size()));
    risks.push_back(rates_between(*a.bounds, curve_x.size(), asked.size()));
  }

  report::Document doc;
  doc.title = "Privacy statement";
  auto para = [&](std::string s) { doc.blocks.push_back(report::Paragraph{std::move(s)}); };
  auto heading = [&](std::string s) { doc.blocks.push_back(report::Heading{2, std::move(s)}); };

  // The headline: the recommended row (the smallest sound upper bound) at
  // the first δ, with its claim, unit of privacy, relation and sampling.
  const AnswerRow* best = nullptr;
  for (const auto& r : answer.rows)
    if (r.recommended && r.guarantee.delta == deltas.front()) best = &r;
  const std::string what =
      run.run ? "This model was trained with DP-SGD and satisfies" : "This release satisfies";
  const std::string unit =
      run.run && run.run->records_per_user > 1
          ? "a user with " + std::to_string(run.run->records_per_user) + " records"
          : "one record";
  const Neighbouring relation =
      run.run ? run_relation(*run.run) : answer.rows.front().guarantee.neighbouring;
  if (best)
    para(what + " (epsilon, delta)-differential privacy with epsilon = " +
         up(best->guarantee.epsilon) + " at delta = " + plain(best->guarantee.delta) +
         ", a sound upper bound (" + best->guarantee.accountant + " accountant), for " + unit +
         " under the " + std::string(to_string(relation)) + " neighbouring relation" +
         (run.run ? ", " + sampling_assumption(*run.run) : std::string()) + ".");
  else
    para(
        "No accountant gives a sound upper bound for this run: no privacy guarantee is stated. "
        "The figures below are approximations or estimates.");
  // δ against 1/N, next to the headline.
  const std::optional<std::int64_t> n = run.run ? run.run->dataset_size : std::nullopt;
  for (double d : deltas) {
    if (!n) break;
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
  if (!n) para("delta should be well below 1/N for a dataset of N records.");
  if (run.run &&
      (run.run->sampling == Sampling::shuffle || run.run->sampling == Sampling::balls_in_bins))
    loader_paragraphs(doc, answer, *run.run, deltas.front());
  if (const auto words = risk_in_words(risks, best, fprs); !words.empty()) para(words);

  heading("Parameters");
  std::string names;
  for (const auto& nm : used) names += (names.empty() ? "" : ", ") + nm;
  if (run.run) {
    doc.blocks.push_back(parameter_table(*run.run, clipping, names));
  } else if (run.schedule) {
    para("The run is a schedule of " + std::to_string(run.schedule->phases.size()) +
         " phases (--schedule), their steps composed, analysed under the " +
         std::string(to_string(relation)) + " relation by: " + names + ".");
    doc.blocks.push_back(phase_table(*run.schedule));
  } else {
    para(
        "The mechanism is the composition in the spec file (dpbudget --spec), analysed under "
        "the " +
        std::string(to_string(relation)) + " relation by: " + names +
        ". Its events, each with its parameters:");
    doc.blocks.push_back(ledger_table(*run.event));
  }
  for (const auto& s : answer.skipped) para("Not analysed: " + s + ".");
  if (!left_out.empty()) {
    std::string lo;
    for (const auto& nm : left_out) lo += (lo.empty() ? "" : ", ") + nm;
    para("Left out: " + lo +
         ", whose figure for this run is an approximation, not a bound (ask for it with the "
         "accountant option).");
  }

  heading("Privacy loss");
  const bool schemes = run.run && (run.run->sampling == Sampling::shuffle ||
                                   run.run->sampling == Sampling::balls_in_bins);
  report::Table eps{{"accountant", "claim"}, {}, {false, false}};
  if (schemes) {
    eps.header.push_back("batches");
    eps.numeric.push_back(false);
  }
  eps.header.insert(eps.header.end(), {"delta", "epsilon"});
  eps.numeric.insert(eps.numeric.end(), {true, true});
  for (const auto& r : answer.rows) {
    const Guarantee& g = r.guarantee;
    std::vector<std::string> row{
        g.accountant + (r.recommended && answer.several_accountants ? " (recommended)" : ""),
        claim_words(g.bound)};
    if (schemes) row.push_back(r.sampling ? sampling_name(*r.sampling) : "");
    row.push_back(plain(g.delta));
    row.push_back(epsilon_text(g));
    eps.rows.push_back(std::move(row));
  }
  doc.blocks.push_back(std::move(eps));
  for (const auto& r : answer.rows)
    if (const auto why = infinite_reason(r.guarantee)) para(*why);
  para(
      "upper bound: the run's true epsilon is at most this. [lower, upper]: the true epsilon "
      "lies in the interval (both ends are bounds on this run). upper (accuracy a): a sound "
      "upper bound computed for a pair of distributions that dominates this run; it is within "
      "a of that pair's exact value, which may be above the run's. approximation: no bound "
      "either way. lower bound: the run's true epsilon is at least this. estimate: the figure "
      "if batches were Poisson-sampled, not a bound for this loader.");

  if (run.run && (run.run->sampling == Sampling::poisson ||
                  run.run->sampling == Sampling::without_replacement))
    doc.blocks.push_back(steps_figure(*run.run, question.accountants, deltas.front()));

  heading("Membership-inference risk");
  para(
      "No membership-inference attack at a false-positive rate FPR has a true-positive rate "
      "above TPR below. Precision at prior p: the largest share of true members among the "
      "records it flags when a share p of those attacked are members, p TPR / (p TPR + "
      "(1 - p) FPR). Advantage: the largest TPR - FPR at any rate.");
  report::Table risk{{"accountant", "bound", "FPR", "TPR at most"}, {}, {false, false, true, true}};
  for (double p : priors) {
    risk.header.push_back("precision at prior " + plain(p));
    risk.numeric.push_back(true);
  }
  risk.header.push_back("advantage");
  risk.numeric.push_back(true);
  for (const auto& a : risks)
    for (std::size_t i = 0; i < a.fpr.size(); ++i) {
      std::vector<std::string> row{a.accountant, std::string(to_string(a.bound)), plain(a.fpr[i]),
                                   up(a.tpr[i])};
      for (double p : priors) row.push_back(up(precision_bound(p, a.tpr[i], a.fpr[i])));
      row.push_back(up(a.advantage));
      risk.rows.push_back(std::move(row));
    }
  doc.blocks.push_back(std::move(risk));
  report::Figure tradeoff;
  tradeoff.chart = tradeoff_chart(curves, fprs);
  tradeoff.caption = "Largest true-positive rate of any attack against its false-positive rate";
  tradeoff.fallback.header = {"FPR"};
  tradeoff.fallback.numeric = {true};
  for (const auto& c : curves) {
    tradeoff.fallback.header.push_back(c.accountant);
    tradeoff.fallback.numeric.push_back(true);
  }
  for (std::size_t k = 0; k <= 6; ++k) {
    const std::size_t i = (curve_x.size() - 1) * k / 6;
    std::vector<std::string> row{plain(curve_x[i])};
    for (const auto& c : curves) row.push_back(up(c.tpr[i]));
    tradeoff.fallback.rows.push_back(std::move(row));
  }
  doc.blocks.push_back(std::move(tradeoff));

  heading("How this was computed");
  para(std::string("dpbudget ") + kVersion +
       ". Every epsilon is rounded up and every lower end down; the accountants and their "
       "methods:");
  doc.blocks.push_back(report::BulletList{{
      "rdp: Renyi differential privacy of the sampled Gaussian (Mironov, Talwar & Zhang 2019), "
      "converted to (epsilon, delta) as in Balle et al. 2020",
      "pld: privacy loss distributions composed by FFT with sound error bounds (Koskela, Jalko "
      "& Honkela 2020; Gopi, Lee & Wutschitz 2021; Doroshenko et al. 2022)",
      "gdp: Gaussian differential privacy (Dong, Roth & Su 2022): exact for unsampled Gaussian "
      "releases (a sound bound); for sampled steps the central limit theorem of Bu et al. 2020, "
      "an approximation (then left out unless asked for)",
      "composition: optimal composition of (epsilon, delta) steps (Kairouz, Oh & Viswanath 2015)",
      "attack risk: the trade-off function bound of Dong, Roth & Su 2022; reporting after "
      "Ponomareva et al. 2023, How to DP-fy ML, section 5.3",
  }});

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
  cmd->add_option("--clipping-norm", f->clipping_norm,
                  "the L2 clipping norm C used in training, > 0: stated with the noise's "
                  "standard deviation sigma*C");
  add_choice_option(*cmd, "--format", f->format, kDocFormatChoices,
                    "markdown (default) or html (one self-contained page)");
  record_file(cmd->add_option("-o,--output", f->output, "write to this file (default stdout)"));
  add_spec_flags(*cmd, f->spec);
  add_accountant_flags(*cmd, f->accountant);
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
