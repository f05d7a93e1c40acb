#include "cli/run/ledger.hpp"

#include <cstdint>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>

#include "accounting/answer.hpp"
#include "accounting/dpsgd/calibration.hpp"
#include "accounting/errors.hpp"
#include "cli/errors.hpp"
#include "cli/flags/choices.hpp"
#include "cli/flags/parse.hpp"
#include "cli/input/spec_input.hpp"
#include "cli/run/result_rows.hpp"
#include "cli/run/solve.hpp"
#include "cli/run/spec_verb.hpp"

namespace dpb::cli {
namespace {

using Json = nlohmann::ordered_json;

/// "gaussian/noise_multiplier, laplace/scale, ...": what may be marked.
std::string solvable_list() {
  std::string s;
  for (const auto& f : kSolvableFields)
    s += (s.empty() ? "" : ", ") + std::string(f.kind) + "/" + std::string(f.field);
  return s;
}

/// The kind whose dp_accounting class is `class_name`, or "" (kinds without
/// a dp_accounting class never match, not even an empty name).
std::string_view kind_of_class(const std::string& class_name) {
  std::string_view kind;
  for_each_event_kind([&]<typename Kind>() {
    if (!Kind::kClassName.empty() && class_name == Kind::kClassName) kind = Kind::kName;
  });
  return kind;
}

/// The name of the field of `kind` written `key` (its name or its alias), or
/// nullopt when `kind` is no kind or has no such field.
std::optional<std::string_view> field_of(std::string_view kind, std::string_view key) {
  std::optional<std::string_view> out;
  for_each_event_kind([&]<typename Kind>() {
    if (Kind::kName != kind) return;
    std::apply(
        [&](const auto&... f) {
          ((key == f.name || (!f.alias.empty() && key == f.alias) ? void(out = f.name) : void()),
           ...);
        },
        Kind::fields());
  });
  return out;
}

/// The mark at `pointer` (member `key` of an event body of `kind`) classified,
/// or a SpecError saying what may be marked.
LedgerMark classify(const Json& mark, const std::string& pointer, std::string_view kind,
                    std::string_view key) {
  if (!(mark.size() == 1 && mark.at("solve").is_boolean() && mark.at("solve").get<bool>()))
    throw SpecError(pointer, "a value to solve is written {\"solve\": true}, got " + mark.dump());
  if (const auto field = field_of(kind, key))
    for (const auto& f : kSolvableFields)
      if (f.kind == kind && f.field == *field) return {pointer, f.kind, f.field, f.unknown};
  throw SpecError(pointer,
                  "cannot be solved for; {\"solve\": true} may mark only " + solvable_list());
}

/// Every mark under `v` (at `pointer`), in document order. `key` is the key
/// under which `v` sits in its parent object ("" in an array or at the top):
/// an event {"<kind>": body} puts its body under the kind's name, and
/// dp_accounting's form {"class_name": ..., <fields>} is a body itself.
void find_marks(const Json& v, const std::string& pointer, std::string_view key,
                std::vector<LedgerMark>& out) {
  if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string at = pointer + "/" + std::to_string(i);
      if (v[i].is_object() && v[i].contains("solve"))
        throw SpecError(at,
                        "an entry of a list cannot be solved for; {\"solve\": true} may "
                        "mark only " +
                            solvable_list());
      find_marks(v[i], at, "", out);
    }
    return;
  }
  if (!v.is_object()) return;
  std::string_view kind = key;
  if (v.contains("class_name") && v.at("class_name").is_string())
    kind = kind_of_class(v.at("class_name").get<std::string>());
  for (const auto& [k, child] : v.items()) {
    const std::string at = pointer + "/" + json_pointer_token(k);
    if (child.is_object() && child.contains("solve"))
      out.push_back(classify(child, at, kind, k));
    else
      find_marks(child, at, k, out);
  }
}

Json value_json(const LedgerMark& mark, double value) {
  if (mark.unknown == RunUnknown::steps) return Json(static_cast<std::int64_t>(value));
  return Json(value);
}

/// The document with every mark set to 1: the rest of it checked as a spec.
void check_rest(const MarkedLedger& ledger) {
  const std::vector<double> ones(ledger.marks.size(), 1.0);
  (void)event_from_json(filled_ledger(ledger, ones));
}

}  // namespace

MarkedLedger parse_marked_ledger(const std::string& text) {
  MarkedLedger ledger;
  ledger.document = parse_spec_json(text);
  find_marks(ledger.document, "", "", ledger.marks);
  const Json& top = ledger.document;
  if (top.is_object() && top.size() == 1 && top.contains(std::string(ComposedEvent::kName)) &&
      top.at(std::string(ComposedEvent::kName)).is_array()) {
    for (std::size_t i = 0; i < top.at(std::string(ComposedEvent::kName)).size(); ++i)
      ledger.parts.push_back("/" + std::string(ComposedEvent::kName) + "/" + std::to_string(i));
  } else if (top.is_object() && top.contains("class_name") &&
             top.at("class_name") == ComposedEvent::kClassName && top.contains("events") &&
             top.at("events").is_array()) {
    for (std::size_t i = 0; i < top.at("events").size(); ++i)
      ledger.parts.push_back("/events/" + std::to_string(i));
  }
  check_rest(ledger);
  return ledger;
}

LedgerOf marked_event(const MarkedLedger& ledger, std::size_t mark, const std::string& at) {
  const LedgerMark& m = ledger.marks.at(mark);
  Json base = at.empty() ? ledger.document : ledger.document.at(Json::json_pointer(at));
  const Json::json_pointer where(m.pointer.substr(at.size()));
  return [base = std::move(base), where, m, at](double value) {
    Json doc = base;
    doc.at(where) = value_json(m, value);
    try {
      return event_from_json(doc, at);
    } catch (const SpecError& e) {
      throw UsageError(std::string("--spec: ") + e.what());
    }
  };
}

Json filled_ledger(const MarkedLedger& ledger, std::span<const double> values) {
  Json doc = ledger.document;
  for (std::size_t i = 0; i < ledger.marks.size(); ++i)
    doc.at(Json::json_pointer(ledger.marks[i].pointer)) = value_json(ledger.marks[i], values[i]);
  return doc;
}

void add_ledger_flags(CLI::App& app, LedgerFlags& f) {
  record_file(app.add_option(
      "--spec", f.spec,
      "JSON file ('-' for stdin): a composition of events (as epsilon --spec reads) with the "
      "value to solve written {\"solve\": true} (docs: dpbudget(1), LEDGERS)"));
  app.add_flag("--print-spec", f.print,
               "with --spec: print the ledger with the solved value(s) filled in (noise rounded "
               "up, counts down) instead of the table");
  add_choice_option(app, "--neighbouring", f.neighbouring, kNeighbouringChoices,
                    "with --spec: which datasets are neighbours: add-remove | replace-one | "
                    "replace-special; default: the relation the spec's sampling fixes");
  app.add_option("--split", f.split,
                 "with --spec composing parts, each with one value marked: the shares of "
                 "--epsilon and --delta each part is calibrated to, in part order, summing to 1 "
                 "(e.g. 0.9,0.05,0.05)");
}

bool ledger_flags_given(const LedgerFlags& f) {
  return !f.spec.empty() || f.print || !f.neighbouring.empty() || !f.split.empty();
}

void refuse_ledger_flags_without_spec(const LedgerFlags& f) {
  if (!f.spec.empty()) return;
  if (f.print)
    throw UsageError("--print-spec: only with --spec (the ledger printed with its value solved)");
  if (!f.neighbouring.empty())
    throw UsageError(
        "--neighbouring: only with --spec (without it the DP-SGD flags' --sampling fixes the "
        "relation)");
  if (!f.split.empty())
    throw UsageError(
        "--split: only with --spec (a ledger composing the parts that share the "
        "budget)");
}

namespace {

std::string marked_word(RunUnknown unknown) {
  return unknown == RunUnknown::steps ? "a count" : "a noise multiplier or a scale";
}

/// Each mark must be of the verb's kind: sigma solves noise, steps counts.
void check_marks_fit_verb(const MarkedLedger& ledger, RunUnknown unknown) {
  for (const auto& m : ledger.marks)
    if (m.unknown != unknown)
      throw UsageError("--spec: " + m.pointer + ": " + marked_word(m.unknown) +
                       " is solved by 'dpbudget " +
                       (m.unknown == RunUnknown::steps ? "steps" : "sigma") + " --spec' (" +
                       (unknown == RunUnknown::steps ? "steps" : "sigma") + " solves " +
                       marked_word(unknown) + ")");
}

std::string mark_list(const std::vector<LedgerMark>& marks, std::size_t from, std::size_t to) {
  std::string s;
  for (std::size_t i = from; i < to; ++i) s += (s.empty() ? "" : ", ") + marks[i].pointer;
  return s;
}

/// Without --split: exactly one mark.
void check_one_mark(const MarkedLedger& ledger) {
  if (ledger.marks.empty())
    throw UsageError(
        "--spec: no value is marked {\"solve\": true} (write the one to solve so, e.g. "
        "{\"gaussian\": {\"noise_multiplier\": {\"solve\": true}}})");
  if (ledger.marks.size() > 1)
    throw UsageError("--spec: " + std::to_string(ledger.marks.size()) +
                     " values are marked {\"solve\": true} (" +
                     mark_list(ledger.marks, 0, ledger.marks.size()) +
                     "): mark one, or give --split with a share for each part of a top-level "
                     "composed");
}

/// With --split: the mark of each part, in part order (exactly one each).
std::vector<std::size_t> part_marks(const MarkedLedger& ledger, std::size_t shares) {
  if (ledger.parts.empty())
    throw UsageError(
        "--split: the spec's top level must compose the parts that share the budget "
        "({\"composed\": [PART, ...]}), each with one value marked {\"solve\": true}");
  if (shares != ledger.parts.size())
    throw UsageError("--split: " + std::to_string(shares) + " share" + (shares == 1 ? "" : "s") +
                     " for " + std::to_string(ledger.parts.size()) + " part" +
                     (ledger.parts.size() == 1 ? "" : "s") +
                     " of the spec's composition (one share per part, in order)");
  std::vector<std::size_t> out;
  for (std::size_t p = 0; p < ledger.parts.size(); ++p) {
    const std::string prefix = ledger.parts[p] + "/";
    std::vector<std::size_t> in;
    for (std::size_t i = 0; i < ledger.marks.size(); ++i)
      if (ledger.marks[i].pointer.rfind(prefix, 0) == 0) in.push_back(i);
    const std::string part = "part " + std::to_string(p + 1) + " (" + ledger.parts[p] + ")";
    if (in.empty())
      throw UsageError("--split: " + part +
                       " has no value marked {\"solve\": true} (each part needs one)");
    if (in.size() > 1)
      throw UsageError("--split: " + part + " has " + std::to_string(in.size()) +
                       " values marked {\"solve\": true} (" +
                       mark_list(ledger.marks, in.front(), in.back() + 1) +
                       "); each part has exactly one");
    out.push_back(in.front());
  }
  return out;
}

/// One value from a list flag that a ledger print or a split needs alone.
void require_one(const char* why, const AccountantChoice& choice, std::size_t epsilons,
                 std::size_t deltas) {
  if (choice.names.size() != 1 || epsilons != 1 || deltas != 1)
    throw UsageError(std::string(why) +
                     ": give one --accountant, one --epsilon and one --delta (the ledger holds "
                     "one solved value per mark)");
}

/// The solved value's cell: a noise parameter rounded up, a count as an
/// integer (inf when every count up to 2^53 fits, as steps prints it).
report::Cell value_cell(const LedgerMark& mark, double value) {
  if (mark.unknown == RunUnknown::noise_multiplier)
    return report::number(value, report::Rounding::up);
  if (value >= static_cast<double>(kUnboundedCount))
    return report::number(std::numeric_limits<double>::infinity());
  return report::integer(static_cast<std::int64_t>(value));
}

/// A row led by `lead` (its cells first), then the guarantee's.
report::Record led_row(report::Record lead, const Guarantee& g) {
  report::Record r = guarantee_record(g, /*solved_delta=*/false);
  lead.cells.insert(lead.cells.end(), r.cells.begin(), r.cells.end());
  return lead;
}

int run_split(const LedgerSolve& s, const MarkedLedger& ledger, const std::vector<double>& shares,
              RunUnknown unknown, const AccountantChoice& choice, double epsilon, double delta,
              const SolveSettings& settings, report::Report& rep, std::ostream& out,
              std::ostream& err) {
  const std::vector<std::size_t> marks = part_marks(ledger, shares.size());
  try {
    (void)split_budget(shares, epsilon, delta);  // the shares checked before any work
  } catch (const InvalidParameter& e) {
    throw UsageError("--split: " + std::string(e.what()).substr(e.field().size() + 2));
  }
  if (only_checking()) return kOk;
  std::vector<LedgerPart> parts;
  for (std::size_t p = 0; p < marks.size(); ++p)
    parts.push_back({marked_event(ledger, marks[p], ledger.parts[p]), unknown});
  CalibratedSplit split;
  try {
    split = calibrate_split(parts, shares, choice.names.front(), choice.options, epsilon, delta,
                            settings);
  } catch (const InvalidParameter& e) {
    if (e.field() != "split") throw;
    throw UsageError("--split: " + std::string(e.what()).substr(e.field().size() + 2) +
                     " (give --neighbouring)");
  }
  std::vector<double> values;
  for (const auto& part : split.parts) values.push_back(part.value);
  const Json filled = filled_ledger(ledger, values);
  if (s.ledger.print) {
    write_out(out, filled.dump(2) + '\n');
    return kOk;
  }
  for (std::size_t p = 0; p < marks.size(); ++p) {
    const LedgerMark& m = ledger.marks[marks[p]];
    report::Record lead;
    lead.add("part", report::text(std::to_string(p + 1)));
    lead.add("field", report::text(m.pointer));
    lead.add("share", report::number(shares[p]));
    // "value": the parts' fields may differ (a σ, a scale, a count); `field` says which.
    lead.add("value", value_cell(m, split.parts[p].value));
    report::Record r = led_row(std::move(lead), split.parts[p].guarantee);
    r.add("target_epsilon", report::number(split.budget.epsilons[p]));
    details_last(r);
    rep.results.push_back(std::move(r));
    collect_remarks(split.parts[p].guarantee, rep, err);
  }
  // The parts' sum (docs/composition.md#budget-split): basic composition.
  Guarantee summed;
  summed.accountant = choice.names.front();
  summed.epsilon = split.epsilon_sum;
  // The parts' δ add up to at most the budget's (split_budget): the sum row
  // claims the budget's δ, as the target it is (the same double, read back).
  summed.delta = delta;
  summed.bound = split.bound;
  summed.neighbouring = split.neighbouring;
  report::Record lead;
  lead.add("part", report::text("sum"));
  lead.add("share", report::number(1));
  report::Record sum = led_row(std::move(lead), summed);
  sum.add("target_epsilon", report::number(epsilon));
  rep.results.push_back(std::move(sum));
  // The whole ledger, filled in, under every accountant: its tight figure.
  Question whole;
  whole.event = event_from_json(filled);
  whole.accountants = AccountantChoice{parse_accountants({"all"}), choice.options};
  whole.targets = {delta};
  const std::size_t first = rep.results.size();
  add_answer_rows(rep, whole, answer(whole), err);
  for (std::size_t i = first; i < rep.results.size(); ++i) {
    auto& cells = rep.results[i].cells;
    cells.insert(cells.begin(),
                 std::pair<std::string, report::Cell>{"part", report::text("whole")});
  }
  if (split.bound == BoundKind::upper)
    rep.footnotes.push_back(
        "note: part i is calibrated alone to (share_i epsilon, share_i delta); sum: the parts' "
        "epsilons added (rounded up) at delta, which their deltas add up to at most: a "
        "guarantee for the whole ledger by basic composition (Dwork & Roth 2014, Theorem 3.16) "
        "whatever accountant bounded each part");
  else
    rep.footnotes.push_back(
        "note: part i is calibrated alone to (share_i epsilon, share_i delta); sum: the parts' "
        "epsilons added (rounded up) at delta, but a part's epsilon is " +
        claim_words(split.bound) + ", not an upper bound, so the sum is " +
        claim_words(split.bound) +
        " too, not a guarantee (basic composition, Dwork & Roth "
        "2014, Theorem 3.16, needs each part's upper bound)");
  rep.footnotes.push_back(
      "note: whole: the ledger with the solved values accounted as one composition at delta by "
      "each accountant (the bound column says what each claims), usually well below the sum");
  emit(rep, s.output, out);
  return kOk;
}

}  // namespace

int run_ledger_solver(const LedgerSolve& s, const std::string& name, RunUnknown unknown,
                      std::ostream& out, std::ostream& err) {
  std::optional<Neighbouring> neighbouring;
  if (!s.ledger.neighbouring.empty())
    neighbouring = parse_choice("--neighbouring", s.ledger.neighbouring, kNeighbouringChoices);
  AccountantChoice choice = resolve(s.accountant, {true, false});
  choice.options.neighbouring = neighbouring;
  resolve(s.output);  // check --format and --precision before any work
  text_style(s.output);
  const SolveSettings settings = resolve_solve_flags(s.tolerance, s.max_sigma);
  const auto targets = parse_list("--epsilon", s.epsilons, kNonNegative);
  const auto deltas = parse_list("--delta", s.deltas, kOpenUnit);
  std::vector<double> shares;
  if (!s.ledger.split.empty())
    shares = parse_list("--split", s.ledger.split, Domain{0, 1, true, false, "a number in (0, 1]"});
  MarkedLedger ledger;
  const std::string text = read_spec_text(s.ledger.spec);
  try {
    ledger = parse_marked_ledger(text);
  } catch (const SpecError& e) {
    throw UsageError(std::string("--spec: ") + e.what());
  }
  check_marks_fit_verb(ledger, unknown);

  report::Report rep;
  rep.command = name;
  rep.inputs.add("spec", report::json(ledger.document.dump()));
  if (!shares.empty()) rep.inputs.add("split", report::numbers(shares));
  add_inputs(rep.inputs, choice);
  if (!shares.empty()) {
    require_one("--split", choice, targets.size(), deltas.size());
    return run_split(s, ledger, shares, unknown, choice, targets.front(), deltas.front(), settings,
                     rep, out, err);
  }
  check_one_mark(ledger);
  if (s.ledger.print) require_one("--print-spec", choice, targets.size(), deltas.size());
  if (only_checking()) return kOk;
  const LedgerMark& mark = ledger.marks.front();
  const LedgerOf ledger_of = marked_event(ledger, 0);
  for (const auto& accountant : choice.names)
    for (double target : targets)
      for (double delta : deltas) {
        const CalibratedLedger solved =
            calibrate_ledger(ledger_of, unknown, accountant, choice.options, target,
                             RunTarget{Measure::epsilon, delta, 0}, settings);
        if (s.ledger.print) {
          const double values[] = {solved.value};
          write_out(out, filled_ledger(ledger, values).dump(2) + '\n');
          return kOk;
        }
        report::Record r = guarantee_record(solved.guarantee, /*solved_delta=*/false);
        r.add("target_epsilon", report::hoisted(report::number(target)));
        r.add("field", report::hoisted(report::text(mark.pointer)));
        r.add(std::string(mark.field), value_cell(mark, solved.value));
        details_last(r);
        rep.results.push_back(std::move(r));
        collect_remarks(solved.guarantee, rep, err);
      }
  emit(rep, s.output, out);
  return kOk;
}

}  // namespace dpb::cli
