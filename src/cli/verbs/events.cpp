// dpbudget events: every event kind a spec file may name (its class name,
// meaning and fields), and which accountant takes it under which
// neighbouring relation. Support is read from the accountants themselves
// (unsupported_reason() of an example event, accounting/events/event_examples.hpp),
// so this table, its copy in docs/spec_files.md and the accountants cannot drift.
#include "accounting/events/events.hpp"

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "accounting/accountant.hpp"
#include "accounting/accountant_descriptor.hpp"
#include "accounting/events/event_examples.hpp"
#include "cli/errors.hpp"
#include "cli/flags/output_flags.hpp"
#include "cli/input/spec_input.hpp"
#include "cli/verbs.hpp"

namespace dpb::cli {
namespace {

using Json = nlohmann::ordered_json;

/// A relation an accountant is asked about: none given (the one the events
/// fix, as without --neighbouring), then each of --neighbouring's.
struct Relation {
  const char* key;     ///< JSON key
  const char* abbrev;  ///< text cell
  std::optional<Neighbouring> neighbouring;
};
constexpr Relation kRelations[] = {
    {"default", "def", std::nullopt},
    {"add_remove", "ar", Neighbouring::add_remove},
    {"replace_one", "ro", Neighbouring::replace_one},
    {"replace_special", "rs", Neighbouring::replace_special},
};

/// The text table's footnotes: what its cells mean.
constexpr const char* kLegend[] = {
    "def: without --neighbouring; ar, ro, rs: --neighbouring add-remove, replace-one, "
    "replace-special",
    "-: refused under every relation ('dpbudget events --format json' gives each reason)",
};

/// Each accountant's answer for `event` under each relation: the JSON
/// {"<accountant>": {"<relation>": {"supported": ..., "reason": ...}}} and
/// the text cells ("def ar rs", or "-").
struct Support {
  Json json = Json::object();
  std::vector<std::string> cells;
};

Support support_of(const DpEvent& event) {
  Support s;
  for (const auto& info : accountants()) {
    Json per_relation = Json::object();
    std::string cell;
    for (const auto& r : kRelations) {
      AccountantOptions options;
      options.neighbouring = r.neighbouring;
      const auto why = make_accountant(info.name, options)->unsupported_reason(event);
      Json answer = {{"supported", !why}};
      if (why) answer["reason"] = *why;
      per_relation[r.key] = std::move(answer);
      if (!why) cell += (cell.empty() ? "" : " ") + std::string(r.abbrev);
    }
    s.json[info.name] = std::move(per_relation);
    s.cells.push_back(cell.empty() ? "-" : cell);
  }
  return s;
}

/// How a field's value is written in a spec.
template <typename Member>
constexpr const char* value_type() {
  if constexpr (std::is_same_v<Member, double>) return "number";
  if constexpr (std::is_same_v<Member, std::int64_t>) return "integer";
  if constexpr (std::is_same_v<Member, std::vector<double>>) return "numbers";
  if constexpr (std::is_same_v<Member, std::vector<std::int64_t>>) return "integer or integers";
  if constexpr (std::is_same_v<Member, EventPtr>) return "event";
  if constexpr (std::is_same_v<Member, std::vector<EventPtr>>) return "events";
}

template <typename Kind, typename Member>
Json field_json(const EventField<Kind, Member>& f) {
  Json j = {{"name", f.name},
            {"type", value_type<Member>()},
            {"meaning", f.meaning},
            {"optional", f.optional}};
  if (!f.alias.empty()) j["alias"] = f.alias;
  if (f.infinity_word) j["infinity_word"] = "inf";
  return j;
}

template <typename Kind>
Json fields_json() {
  Json list = Json::array();
  std::apply([&list](const auto&... f) { (list.push_back(field_json(f)), ...); }, Kind::fields());
  return list;
}

/// "noise_multiplier, sampling_probs": the field names (wide text).
template <typename Kind>
std::string field_names() {
  std::string s;
  std::apply(
      [&s](const auto&... f) { ((s += (s.empty() ? "" : ", ") + std::string(f.name)), ...); },
      Kind::fields());
  return s;
}

/// The sampled wrappers a leaf is asked about inside.
struct Inside {
  const char* name;
  EventPtr (*wrap)(EventPtr);
};
constexpr Inside kInside[] = {
    {"poisson_sampled", example_poisson_sampled},
    {"sampled_without_replacement", example_sampled_without_replacement},
};

void add_support_cells(report::Record& r, const Support& s) {
  for (std::size_t i = 0; i < s.cells.size(); ++i)
    r.add(accountants()[i].name, report::text(s.cells[i]));
}

/// What the rows say about one kind. Only this is gathered per kind (a
/// template); the rows are built from it by plain functions, once in the object
/// code rather than once per kind (as templates, the two row builders were
/// half of this file's code: 2 × 26 instantiations of ~13 KB under ASan).
struct KindFacts {
  std::string name, class_name, meaning, field_names;
  Json fields;
  bool wrapper;
  EventPtr example;
};

template <typename Kind>
KindFacts kind_facts() {
  return {std::string(Kind::kName), std::string(Kind::kClassName), std::string(Kind::kMeaning),
          field_names<Kind>(),      fields_json<Kind>(),           is_wrapper_kind<Kind>(),
          example_event<Kind>()};
}

/// Text: a row per kind (with its class, fields and meaning in --wide), and
/// under each mechanism a row per sampled wrapper it may sit in.
void add_text_rows(const KindFacts& kind, report::Report& rep) {
  report::Record row;
  row.add("kind", report::text(kind.name));
  add_support_cells(row, support_of(*kind.example));
  // A kind of dpbudget's own has no dp_accounting class: "none" here, "" in JSON.
  row.add("class_name", report::visible(report::text(kind.class_name.empty() ? std::string("none")
                                                                             : kind.class_name),
                                        report::Show::wide));
  row.add("fields", report::visible(report::text(kind.field_names), report::Show::wide));
  row.add("meaning", report::visible(report::text(kind.meaning), report::Show::wide));
  rep.results.push_back(std::move(row));
  if (!kind.wrapper)
    for (const auto& in : kInside) {
      report::Record sub;
      sub.add("kind", report::text(std::string("  in ") + in.name));
      add_support_cells(sub, support_of(*in.wrap(kind.example)));
      for (const char* key : {"class_name", "fields", "meaning"})
        sub.add(key, report::visible(report::text(""), report::Show::wide));
      rep.results.push_back(std::move(sub));
    }
}

/// JSON and CSV: a record per kind with everything (fields, the example
/// event asked about, each answer with its reason).
report::Record data_row(const KindFacts& kind) {
  report::Record r;
  r.add("kind", report::text(kind.name));
  r.add("class_name", report::text(kind.class_name));
  r.add("meaning", report::text(kind.meaning));
  r.add("wrapper", report::boolean(kind.wrapper));
  r.add("fields", report::json(kind.fields.dump()));
  r.add("example", report::json(event_to_json(*kind.example).dump()));
  r.add("support", report::json(support_of(*kind.example).json.dump()));
  Json inside = Json::object();
  if (!kind.wrapper)
    for (const auto& in : kInside) inside[in.name] = support_of(*in.wrap(kind.example)).json;
  r.add("inside", report::json(inside.dump()));
  return r;
}

Verb declare_events(CLI::App& command) {
  auto f = std::make_shared<OutputFlags>();
  CLI::App* cmd = &command;
  add_output_flags(*cmd, *f);
  add_wide_flag(*cmd, *f);
  return verb_of(cmd, f, [](const OutputFlags& flags, std::ostream& out, std::ostream&) {
    const report::Format format = resolve(flags);
    text_style(flags);  // check --precision before any work
    report::Report rep;
    rep.command = "events";
    if (format == report::Format::text) {
      for_each_event_kind([&rep]<typename Kind>() { add_text_rows(kind_facts<Kind>(), rep); });
      for (const char* line : kLegend) rep.footnotes.emplace_back(line);
    } else {
      for_each_event_kind(
          [&rep]<typename Kind>() { rep.results.push_back(data_row(kind_facts<Kind>())); });
    }
    emit(rep, flags, out);
    return kOk;
  });
}

}  // namespace

extern const VerbDescriptor kEventsVerb{"events",
                                        "every event kind of spec files (--spec), and which "
                                        "accountant takes it under which neighbouring relation",
                                        {"dpbudget events --format json"},
                                        declare_events};

}  // namespace dpb::cli
