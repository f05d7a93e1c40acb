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

constexpr const char* kEventNames =
    "gaussian, laplace, poisson_sampled, sampled_without_replacement, self_composed, composed";

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
                std::initializer_list<const char*> allowed) {
  std::string list;
  for (const char* k : allowed) list += (list.empty() ? "" : ", ") + std::string(k);
  if (!body.is_object())
    throw SpecError(path, "must be an object with " + list + ", got " + type_name(body));
  for (const auto& [key, value] : body.items()) {
    bool known = false;
    for (const char* k : allowed) known = known || key == k;
    if (!known)
      throw SpecError(path + "/" + pointer_token(key), "unknown key (allowed: " + list + ")");
  }
  for (const char* k : allowed)
    if (!body.contains(k)) throw SpecError(path + "/" + k, "missing");
}

double real_at(const Json& body, const std::string& path, const char* key) {
  const Json& v = body.at(key);
  if (!v.is_number()) throw SpecError(path + "/" + key, "must be a number, got " + type_name(v));
  return v.get<double>();
}

std::int64_t integer_at(const Json& body, const std::string& path, const char* key,
                        std::int64_t min) {
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

EventPtr parse_event(const Json& value, const std::string& path, int depth) {
  if (depth > kMaxSpecDepth)
    throw SpecError(
        path, "events nested deeper than " + std::to_string(kMaxSpecDepth) + " levels (the limit)");
  if (!value.is_object())
    throw SpecError(path, "expected an event object {\"<name>\": ...} (" +
                              std::string(kEventNames) + "), got " + type_name(value));
  if (value.empty())
    throw SpecError(path,
                    "empty object: expected one event name (" + std::string(kEventNames) + ")");
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
  auto inner = [&] { return parse_event(body.at("event"), at + "/event", depth + 1); };

  if (name == "gaussian") {
    check_keys(body, at, {"noise_multiplier"});
    const double sigma = real_at(body, at, "noise_multiplier");
    return made(at, [&] { return make_gaussian(sigma); });
  }
  if (name == "laplace") {
    check_keys(body, at, {"scale"});
    const double scale = real_at(body, at, "scale");
    return made(at, [&] { return make_laplace(scale); });
  }
  if (name == "poisson_sampled") {
    check_keys(body, at, {"sampling_probability", "event"});
    const double q = real_at(body, at, "sampling_probability");
    if (!(q >= 0 && q <= 1)) throw SpecError(at + "/sampling_probability", "must be in [0, 1]");
    auto event = inner();
    return made(at, [&] { return make_poisson_sampled(q, std::move(event)); });
  }
  if (name == "sampled_without_replacement") {
    check_keys(body, at, {"source_dataset_size", "sample_size", "event"});
    const auto n = integer_at(body, at, "source_dataset_size", 1);
    const auto m = integer_at(body, at, "sample_size", 0);
    if (m > n)
      throw SpecError(at + "/sample_size",
                      "must be <= source_dataset_size (" + std::to_string(n) + ")");
    auto event = inner();
    return made(at, [&] { return make_sampled_without_replacement(n, m, std::move(event)); });
  }
  if (name == "self_composed") {
    check_keys(body, at, {"count", "event"});
    const auto count = integer_at(body, at, "count", 0);
    auto event = inner();
    return made(at, [&] { return make_self_composed(count, std::move(event)); });
  }
  if (name == "composed") {
    if (!body.is_array() || body.empty())
      throw SpecError(at, "must be a non-empty array of events, got " +
                              (body.is_array() ? std::string("an empty array") : type_name(body)));
    std::vector<EventPtr> events;
    events.reserve(body.size());
    for (std::size_t i = 0; i < body.size(); ++i)
      events.push_back(parse_event(body[i], at + "/" + std::to_string(i), depth + 1));
    return made(at, [&] { return make_composed(std::move(events)); });
  }
  throw SpecError(at, "unknown event '" + printable(name) + "' (allowed: " + kEventNames + ")");
}

Json wrap(const char* name, Json body) {
  Json out = Json::object();
  out[name] = std::move(body);
  return out;
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

Json event_to_json(const DpEvent& event) {
  return std::visit(
      [](const auto& e) -> Json {
        using T = std::decay_t<decltype(e)>;
        Json body = Json::object();
        if constexpr (std::is_same_v<T, GaussianEvent>) {
          body["noise_multiplier"] = e.noise_multiplier;
          return wrap("gaussian", std::move(body));
        } else if constexpr (std::is_same_v<T, LaplaceEvent>) {
          body["scale"] = e.scale;
          return wrap("laplace", std::move(body));
        } else if constexpr (std::is_same_v<T, PoissonSampledEvent>) {
          body["sampling_probability"] = e.sampling_probability;
          body["event"] = event_to_json(*e.event);
          return wrap("poisson_sampled", std::move(body));
        } else if constexpr (std::is_same_v<T, SampledWithoutReplacementEvent>) {
          body["source_dataset_size"] = e.source_dataset_size;
          body["sample_size"] = e.sample_size;
          body["event"] = event_to_json(*e.event);
          return wrap("sampled_without_replacement", std::move(body));
        } else if constexpr (std::is_same_v<T, SelfComposedEvent>) {
          body["count"] = e.count;
          body["event"] = event_to_json(*e.event);
          return wrap("self_composed", std::move(body));
        } else {
          Json list = Json::array();
          for (const auto& inner : e.events) list.push_back(event_to_json(*inner));
          return wrap("composed", std::move(list));
        }
      },
      static_cast<const DpEvent::variant&>(event));
}

}  // namespace dpb::cli
