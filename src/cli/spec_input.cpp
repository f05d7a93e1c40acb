#include "cli/spec_input.hpp"

#include <cmath>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string_view>
#include <utility>
#include <vector>

#include "accounting/errors.hpp"
#include "cli/errors.hpp"

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

/// RFC 6901 escaping of one reference token.
std::string pointer_token(std::string_view key) {
  std::string s;
  for (char c : key) {
    if (c == '~')
      s += "~0";
    else if (c == '/')
      s += "~1";
    else
      s += c;
  }
  return printable(s);
}

std::string type_name(const Json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

/// The members of an event's body: every key must be one of `allowed`, and
/// every allowed key must be there.
void check_keys(const Json& body, const std::string& path,
                const std::vector<std::string_view>& allowed) {
  std::string list;
  for (auto k : allowed) list += (list.empty() ? "" : ", ") + std::string(k);
  if (!body.is_object())
    throw SpecError(path, "must be an object with " + list + ", got " + type_name(body));
  for (const auto& [key, value] : body.items()) {
    bool known = false;
    for (auto k : allowed) known = known || key == k;
    if (!known)
      throw SpecError(path + "/" + pointer_token(key), "unknown key (allowed: " + list + ")");
  }
  for (auto k : allowed)
    if (!body.contains(std::string(k))) throw SpecError(path + "/" + std::string(k), "missing");
}

double real_at(const Json& body, const std::string& path, std::string_view name) {
  const std::string key(name);
  const Json& v = body.at(key);
  if (!v.is_number()) throw SpecError(path + "/" + key, "must be a number, got " + type_name(v));
  return v.get<double>();
}

std::int64_t integer_at(const Json& body, const std::string& path, std::string_view name,
                        std::int64_t min) {
  const std::string key(name);
  const Json& v = body.at(key);
  const std::string what = "must be an integer >= " + std::to_string(min);
  if (!v.is_number()) throw SpecError(path + "/" + key, what + ", got " + type_name(v));
  const double d = v.get<double>();
  if (!(d >= static_cast<double>(min) && d <= 9007199254740992.0) || d != std::floor(d))
    throw SpecError(path + "/" + key, what + " (and at most 2^53)");
  return v.is_number_integer() ? v.get<std::int64_t>() : static_cast<std::int64_t>(d);
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

EventPtr parse_event(const Json& value, const std::string& path, int depth) {
  if (depth > kMaxSpecDepth)
    throw SpecError(
        path, "events nested deeper than " + std::to_string(kMaxSpecDepth) + " levels (the limit)");
  if (!value.is_object())
    throw SpecError(path, "expected an event object {\"<name>\": ...} (" + event_names() +
                              "), got " + type_name(value));
  if (value.empty())
    throw SpecError(path, "empty object: expected one event name (" + event_names() + ")");
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

/// Reads one field of `Kind` from its body (fields() of events.hpp).
template <typename Kind>
void read_field(const Json& body, const std::string& at, int /*depth*/, Kind& kind,
                const EventField<Kind, double>& f) {
  kind.*f.member = real_at(body, at, f.name);
}
template <typename Kind>
void read_field(const Json& body, const std::string& at, int /*depth*/, Kind& kind,
                const EventField<Kind, std::int64_t>& f) {
  kind.*f.member = integer_at(body, at, f.name, f.min);
}
template <typename Kind>
void read_field(const Json& body, const std::string& at, int depth, Kind& kind,
                const EventField<Kind, EventPtr>& f) {
  const std::string key(f.name);
  kind.*f.member = parse_event(body.at(key), at + "/" + key, depth + 1);
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
    std::apply(
        [&](const auto&... field) {
          check_keys(body, at, {field.name...});
          (read_field(body, at, depth, kind, field), ...);
        },
        Kind::fields());
  }
  return made(at, [&] { return make_event(std::move(kind)); });
}

}  // namespace

SpecError::SpecError(const std::string& path, const std::string& message)
    : std::runtime_error((path.empty() ? std::string("(top level)") : path) + ": " + message),
      path_(path) {}

EventPtr event_from_json(const Json& value, const std::string& path) {
  return parse_event(value, path, 1);
}

Spec parse_spec(const std::string& text) {
  if (text.size() > kMaxSpecBytes) throw SpecError("", "larger than 16 MiB (the limit)");
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
  Spec spec;
  spec.event = event_from_json(doc);
  spec.json = event_to_json(*spec.event).dump();
  return spec;
}

Spec read_spec_file(const std::string& file) {
  std::ifstream stream;
  std::istream* in = &std::cin;
  if (file != "-") {
    stream.open(file, std::ios::binary);
    if (!stream) throw UsageError("--spec: cannot open '" + printable(file) + "'");
    in = &stream;
  }
  // Read at most one byte past the limit, so a huge file is not slurped.
  std::string text(kMaxSpecBytes + 1, '\0');
  in->read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in->bad()) throw UsageError("--spec: cannot read '" + printable(file) + "'");
  text.resize(static_cast<std::size_t>(in->gcount()));
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
