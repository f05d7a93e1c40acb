#include "cli/input/spec_input.hpp"

#include <cmath>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

#include "accounting/errors.hpp"
#include "cli/errors.hpp"
#include "cli/input/input_file.hpp"

namespace dpb::cli {
namespace {

using Json = nlohmann::ordered_json;

/// "gaussian, laplace, ...": every kind, from the event table.
const std::string& event_names() {
  static const std::string names = [] {
    std::string s;
    for_each_event_kind(
        [&]<typename Kind>() { s += (s.empty() ? "" : ", ") + std::string(Kind::kName); });
    return s;
  }();
  return names;
}

/// Kinds whose spec body is the list of their events ({"composed": [...]}).
template <typename Kind>
constexpr bool kListBody =
    std::is_same_v<decltype(Kind::fields()), std::tuple<EventField<Kind, std::vector<EventPtr>>>>;

/// JSON depth that kMaxSpecDepth events can take: each event is an object
/// holding an object (or, for composed, an array), plus the numbers inside.
constexpr int kMaxJsonDepth = 3 * kMaxSpecDepth + 4;

/// A key as it may appear in a one-line message: control characters
/// replaced, long keys cut.
std::string printable(std::string_view key) {
  std::string s;
  for (char c : key.substr(0, 40)) s += static_cast<unsigned char>(c) < 0x20 ? '?' : c;
  if (key.size() > 40) s += "...";
  return s;
}

/// One reference token as a message shows it (escaped, then printable).
std::string pointer_token(std::string_view key) { return printable(json_pointer_token(key)); }

std::string type_name(const Json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

/// How one field may appear in a body: its key, a second accepted key, and
/// whether it may be left out.
struct KeyRule {
  std::string_view name;
  std::string_view alias;
  bool optional;
};

/// The members of an event's body: every key must be allowed, every
/// non-optional field must be there (under its name or its alias, not both).
/// `extra` are further keys allowed and ignored (dp_accounting's module_name
/// and class_name).
void check_keys(const Json& body, const std::string& path, const std::vector<KeyRule>& rules,
                const std::vector<std::string_view>& extra = {}) {
  std::string list;
  for (const auto& r : rules) list += (list.empty() ? "" : ", ") + std::string(r.name);
  if (rules.empty()) list = "no fields";
  if (!body.is_object())
    throw SpecError(path, "must be an object with " + list + ", got " + type_name(body));
  for (const auto& [key, value] : body.items()) {
    bool known = false;
    for (const auto& r : rules)
      known = known || key == r.name || (!r.alias.empty() && key == r.alias);
    for (auto k : extra) known = known || key == k;
    if (!known)
      throw SpecError(path + "/" + pointer_token(key), "unknown key (allowed: " + list + ")");
  }
  for (const auto& r : rules) {
    const bool has_name = body.contains(std::string(r.name));
    const bool has_alias = !r.alias.empty() && body.contains(std::string(r.alias));
    if (has_name && has_alias)
      throw SpecError(path + "/" + std::string(r.alias),
                      "give " + std::string(r.name) + " or " + std::string(r.alias) + ", not both");
    if (!has_name && !has_alias && !r.optional)
      throw SpecError(path + "/" + std::string(r.name), "missing");
  }
}

/// The key under which field `f` appears in `body` (its name or its alias),
/// or "" when it is absent.
template <typename Field>
std::string key_in(const Json& body, const Field& f) {
  if (body.contains(std::string(f.name))) return std::string(f.name);
  if (!f.alias.empty() && body.contains(std::string(f.alias))) return std::string(f.alias);
  return "";
}

/// An integer >= min (and at most 2^53) at JSON pointer `pointer`.
std::int64_t integer_value(const Json& v, const std::string& pointer, std::int64_t min) {
  const std::string what = "must be an integer >= " + std::to_string(min);
  if (!v.is_number()) throw SpecError(pointer, what + ", got " + type_name(v));
  const double d = v.get<double>();
  if (!(d >= static_cast<double>(min) && d <= 9007199254740992.0) || d != std::floor(d))
    throw SpecError(pointer, what + " (and at most 2^53)");
  return v.is_number_integer() ? v.get<std::int64_t>() : static_cast<std::int64_t>(d);
}

std::int64_t integer_at(const Json& body, const std::string& path, const std::string& key,
                        std::int64_t min) {
  return integer_value(body.at(key), path + "/" + key, min);
}

/// Runs an event factory; its InvalidParameter names the field at fault.
template <typename Make>
EventPtr made(const std::string& path, Make make) {
  try {
    return make();
  } catch (const InvalidParameter& e) {
    std::string message = e.what();
    const std::string prefix = e.field() + ": ";
    if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
    throw SpecError(path + "/" + e.field(), message);
  }
}

template <typename Kind>
EventPtr parse_kind(const Json& body, const std::string& at, int depth);
template <typename Kind>
EventPtr parse_class_form(const Json& value, const std::string& path, int depth);

EventPtr parse_event(const Json& value, const std::string& path, int depth) {
  if (depth > kMaxSpecDepth)
    throw SpecError(
        path, "events nested deeper than " + std::to_string(kMaxSpecDepth) + " levels (the limit)");
  if (!value.is_object())
    throw SpecError(path, "expected an event object {\"<name>\": ...} (" + event_names() +
                              "), got " + type_name(value));
  if (value.empty())
    throw SpecError(path, "empty object: expected one event name (" + event_names() + ")");
  if (value.contains("class_name")) {
    const Json& cls = value.at("class_name");
    if (!cls.is_string())
      throw SpecError(path + "/class_name", "must be a string, got " + type_name(cls));
    const auto class_name = cls.get<std::string>();
    EventPtr event;
    for_each_event_kind([&]<typename Kind>() {
      // Kinds of dpbudget's own have no dp_accounting class (an empty name).
      if (!event && !Kind::kClassName.empty() && class_name == Kind::kClassName)
        event = parse_class_form<Kind>(value, path, depth);
    });
    if (!event)
      throw SpecError(path + "/class_name",
                      "unknown dp_accounting class '" + printable(class_name) + "'");
    return event;
  }
  if (value.size() > 1) {
    auto it = value.begin();
    const std::string first = printable(it.key());
    const std::string second = printable((++it).key());
    throw SpecError(path, "one event name per object, got '" + first + "' and '" + second +
                              "' (use composed for a sequence)");
  }
  const std::string name = value.begin().key();
  const Json& body = value.begin().value();
  const std::string at = path + "/" + pointer_token(name);
  EventPtr event;
  for_each_event_kind([&]<typename Kind>() {
    if (!event && name == Kind::kName) event = parse_kind<Kind>(body, at, depth);
  });
  if (!event)
    throw SpecError(at, "unknown event '" + printable(name) + "' (allowed: " + event_names() + ")");
  return event;
}

/// An optional field written as null: dp_accounting's None for a field it
/// may leave unknown (DiscreteGaussianDpEvent's dimension). Unknown is not
/// the default here (dimension None is not univariate), so it is refused
/// with what to write instead.
template <typename Field>
void refuse_null(const Json& body, const std::string& at, const std::string& key, const Field& f) {
  if (f.optional && body.at(key).is_null())
    throw SpecError(at + "/" + key,
                    "null (dp_accounting's None: unknown) is not analysed here; give a value (" +
                        std::string(f.meaning) + ")");
}

/// Reads one field of `Kind` from its body (fields() of events.hpp); `key` is
/// where it is (name or alias).
/// A value marked {"solve": true} where a number is read: only the solvers
/// fill one in, and only at the fields they list (docs/calibration.md#ledgers).
void refuse_mark(const Json& v, const std::string& pointer) {
  if (v.is_object() && v.contains("solve")) throw SpecError(pointer, std::string(kMarkNotHere));
}

template <typename Kind>
void read_field(const Json& body, const std::string& at, const std::string& key, int /*depth*/,
                Kind& kind, const EventField<Kind, double>& f) {
  refuse_null(body, at, key, f);
  const Json& v = body.at(key);
  refuse_mark(v, at + "/" + key);
  if (f.infinity_word && v.is_string()) {
    const auto word = v.get<std::string>();
    if (word != "inf" && word != "Infinity")
      throw SpecError(at + "/" + key,
                      "must be a number or \"inf\", got the string '" + printable(word) + "'");
    kind.*f.member = std::numeric_limits<double>::infinity();
    return;
  }
  if (!v.is_number())
    throw SpecError(at + "/" + key, std::string(f.infinity_word ? "must be a number or \"inf\""
                                                                : "must be a number") +
                                        ", got " + type_name(v));
  kind.*f.member = v.get<double>();
}
template <typename Kind>
void read_field(const Json& body, const std::string& at, const std::string& key, int /*depth*/,
                Kind& kind, const EventField<Kind, std::int64_t>& f) {
  refuse_null(body, at, key, f);
  refuse_mark(body.at(key), at + "/" + key);
  kind.*f.member = integer_at(body, at, key, f.min);
}
template <typename Kind>
void read_field(const Json& body, const std::string& at, const std::string& key, int /*depth*/,
                Kind& kind, const EventField<Kind, std::vector<double>>& f) {
  const Json& v = body.at(key);
  if (!v.is_array() || v.empty())
    throw SpecError(at + "/" + key,
                    "must be a non-empty array of numbers, got " +
                        (v.is_array() ? std::string("an empty array") : type_name(v)));
  auto& out = kind.*f.member;
  for (std::size_t i = 0; i < v.size(); ++i) {
    refuse_mark(v[i], at + "/" + key + "/" + std::to_string(i));
    if (!v[i].is_number())
      throw SpecError(at + "/" + key + "/" + std::to_string(i),
                      "must be a number, got " + type_name(v[i]));
    out.push_back(v[i].get<double>());
  }
}
template <typename Kind>
void read_field(const Json& body, const std::string& at, const std::string& key, int /*depth*/,
                Kind& kind, const EventField<Kind, std::vector<std::int64_t>>& f) {
  const Json& v = body.at(key);
  auto& out = kind.*f.member;
  if (v.is_number()) {
    out.push_back(integer_at(body, at, key, f.min));
    return;
  }
  if (!v.is_array() || v.empty())
    throw SpecError(at + "/" + key,
                    "must be an integer or a non-empty array of integers, got " +
                        (v.is_array() ? std::string("an empty array") : type_name(v)));
  for (std::size_t i = 0; i < v.size(); ++i) {
    refuse_mark(v[i], at + "/" + key + "/" + std::to_string(i));
    out.push_back(integer_value(v[i], at + "/" + key + "/" + std::to_string(i), f.min));
  }
}
template <typename Kind>
void read_field(const Json& body, const std::string& at, const std::string& key, int depth,
                Kind& kind, const EventField<Kind, EventPtr>& f) {
  kind.*f.member = parse_event(body.at(key), at + "/" + key, depth + 1);
}

/// The fields of `body` into a Kind; `extra` keys are allowed and ignored.
template <typename Kind>
void read_fields(const Json& body, const std::string& at, int depth, Kind& kind,
                 const std::vector<std::string_view>& extra) {
  std::apply(
      [&](const auto&... field) {
        check_keys(body, at, {KeyRule{field.name, field.alias, field.optional}...}, extra);
        auto one = [&](const auto& f) {
          const std::string key = key_in(body, f);
          if (!key.empty()) read_field(body, at, key, depth, kind, f);
        };
        (void)one;  // kinds without fields (no_op) never call it
        (one(field), ...);
      },
      Kind::fields());
}

template <typename Kind>
EventPtr parse_kind(const Json& body, const std::string& at, int depth) {
  Kind kind{};
  if constexpr (kListBody<Kind>) {
    if (!body.is_array() || body.empty())
      throw SpecError(at, "must be a non-empty array of events, got " +
                              (body.is_array() ? std::string("an empty array") : type_name(body)));
    auto& events = kind.*(std::get<0>(Kind::fields()).member);
    events.reserve(body.size());
    for (std::size_t i = 0; i < body.size(); ++i)
      events.push_back(parse_event(body[i], at + "/" + std::to_string(i), depth + 1));
  } else {
    read_fields(body, at, depth, kind, {});
  }
  return made(at, [&] { return make_event(std::move(kind)); });
}

/// dp_accounting's own serialised form (DpEvent.to_named_tuple() turned into
/// dicts): {"module_name": ..., "class_name": "GaussianDpEvent", <fields>}.
/// The fields sit beside class_name; composed's list is its "events" field.
template <typename Kind>
EventPtr parse_class_form(const Json& value, const std::string& path, int depth) {
  Kind kind{};
  const std::vector<std::string_view> extra{"class_name", "module_name"};
  if constexpr (kListBody<Kind>) {
    const auto field = std::get<0>(Kind::fields());
    check_keys(value, path, {KeyRule{field.name, {}, false}}, extra);
    const std::string key(field.name);
    const Json& list = value.at(key);
    if (!list.is_array() || list.empty())
      throw SpecError(path + "/" + key,
                      "must be a non-empty array of events, got " +
                          (list.is_array() ? std::string("an empty array") : type_name(list)));
    auto& events = kind.*field.member;
    for (std::size_t i = 0; i < list.size(); ++i)
      events.push_back(parse_event(list[i], path + "/" + key + "/" + std::to_string(i), depth + 1));
  } else {
    read_fields(value, path, depth, kind, extra);
  }
  return made(path, [&] { return make_event(std::move(kind)); });
}

}  // namespace

std::string json_pointer_token(std::string_view key) {
  std::string s;
  for (char c : key) {
    if (c == '~')
      s += "~0";
    else if (c == '/')
      s += "~1";
    else
      s += c;
  }
  return s;
}

SpecError::SpecError(const std::string& path, const std::string& message)
    : std::runtime_error(InputLocation{"", 0, path.empty() ? "(top level)" : path}.str() + ": " +
                         message),
      path_(path) {}

EventPtr event_from_json(const Json& value, const std::string& path) {
  return parse_event(value, path, 1);
}

Json parse_spec_json(const std::string& text) {
  if (text.size() > kMaxSpecBytes)
    throw SpecError("", "larger than " + size_text(kMaxSpecBytes) + " (the limit)");
  Json doc;
  try {
    // The parser itself is iterative; the callback stops absurd nesting
    // before a deep document is built.
    doc = Json::parse(text, [](int depth, Json::parse_event_t, Json&) {
      if (depth > kMaxJsonDepth)
        throw SpecError(
            "", "nested deeper than " + std::to_string(kMaxSpecDepth) + " events (the limit)");
      return true;
    });
  } catch (const Json::exception& e) {  // syntax errors, and numbers past the double range
    std::string what = e.what();
    if (const auto p = what.find("] "); p != std::string::npos) what.erase(0, p + 2);
    throw SpecError("", "not valid JSON: " + what);
  }
  return doc;
}

Spec parse_spec(const std::string& text) {
  Spec spec;
  spec.event = event_from_json(parse_spec_json(text));
  spec.json = event_to_json(*spec.event).dump();
  return spec;
}

std::string read_spec_text(const std::string& file) {
  // At most one byte past the limit, so a huge file is not slurped.
  return InputFile("--spec", file, "a JSON spec file").read_text(kMaxSpecBytes);
}

Spec read_spec_file(const std::string& file) {
  const std::string text = read_spec_text(file);
  try {
    return parse_spec(text);
  } catch (const SpecError& e) {
    throw UsageError(std::string("--spec: ") + e.what());
  }
}

namespace {

template <typename Kind, typename Member>
void write_field(Json& body, const Kind& kind, const EventField<Kind, Member>& f) {
  const auto& value = kind.*f.member;
  if constexpr (std::is_same_v<Member, EventPtr>)
    body[std::string(f.name)] = event_to_json(*value);
  else if constexpr (std::is_same_v<Member, double>)
    body[std::string(f.name)] = (f.infinity_word && std::isinf(value)) ? Json("inf") : Json(value);
  else
    body[std::string(f.name)] = value;
}

}  // namespace

Json event_to_json(const DpEvent& event) {
  return std::visit(
      [](const auto& e) -> Json {
        using Kind = std::decay_t<decltype(e)>;
        Json out = Json::object();
        if constexpr (kListBody<Kind>) {
          Json list = Json::array();
          for (const auto& inner : e.*(std::get<0>(Kind::fields()).member))
            list.push_back(event_to_json(*inner));
          out[std::string(Kind::kName)] = std::move(list);
        } else {
          Json body = Json::object();
          std::apply([&](const auto&... field) { (write_field(body, e, field), ...); },
                     Kind::fields());
          out[std::string(Kind::kName)] = std::move(body);
        }
        return out;
      },
      static_cast<const DpEvent::variant&>(event));
}

}  // namespace dpb::cli
