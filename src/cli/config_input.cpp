#include "cli/config_input.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <istream>
#include <nlohmann/json.hpp>
#include <streambuf>
#include <string>

#include "cli/errors.hpp"
#include "cli/parse.hpp"
#include "cli/spec_input.hpp"
#include "cli/spec_verb.hpp"
#include "cli/suggest.hpp"

namespace dpb::cli {
namespace {

using Json = nlohmann::json;

struct LineError {
  std::string message;
};

double real_value(const Json& obj, const char* key, const Domain& domain) {
  const Json& v = obj.at(key);
  if (!v.is_number() || !domain.contains(v.get<double>()))
    throw LineError{std::string(key) + ": must be " + domain.description};
  return v.get<double>();
}

/// The run parameter with JSON key `key`, if any.
const RunParameter* run_parameter_keyed(const std::string& key) {
  for (const auto& p : kRunParameters)
    if (p.key == key) return &p;
  return nullptr;
}

std::string allowed_keys() {
  std::string keys;
  for (const auto& k : config_keys()) keys += (keys.empty() ? "" : ", ") + k;
  return keys;
}

ConfigLine parse_line(const std::string& text, std::size_t line) {
  // Nesting is bounded before anything recursive (copies, dumps) sees it. A
  // key given twice in one object is refused (JSON parsers disagree on which
  // one wins): the keys seen so far of each open object.
  std::vector<std::vector<std::string>> open_keys;
  const Json obj = Json::parse(
      text,
      [&open_keys](int depth, Json::parse_event_t event, Json& parsed) {
        if (depth > kMaxLineDepth)
          throw LineError{"nested deeper than " + std::to_string(kMaxLineDepth) + " levels"};
        if (event == Json::parse_event_t::object_start) open_keys.emplace_back();
        if (event == Json::parse_event_t::object_end && !open_keys.empty()) open_keys.pop_back();
        if (event == Json::parse_event_t::key && !open_keys.empty()) {
          const std::string key = parsed.get<std::string>();
          auto& seen = open_keys.back();
          if (std::find(seen.begin(), seen.end(), key) != seen.end())
            throw LineError{key + ": given twice on the line (give each key once)"};
          seen.push_back(key);
        }
        return true;
      },
      /*allow_exceptions=*/false);
  if (obj.is_discarded()) throw LineError{"not valid JSON"};
  if (!obj.is_object()) throw LineError{"expected a JSON object"};
  ConfigLine c;
  c.line = line;
  std::array<std::optional<ParamValue>, kRunParamCount> run;
  bool any_run_key = false;
  for (const auto& [key, value] : obj.items()) {
    if (value.is_null())
      throw LineError{key + ": null is not a value (give one, or leave the key out)"};
    if (const RunParameter* p = run_parameter_keyed(key)) {
      try {
        run[static_cast<std::size_t>(p->id)] = parse_json_value(*p, value);
      } catch (const UsageError& e) {
        throw LineError{e.what()};
      }
      any_run_key = true;
    } else if (key == "name") {
      c.name = value.is_string() ? value.get<std::string>() : value.dump();
    } else if (key == "spec") {
      try {
        c.spec = event_from_json(nlohmann::ordered_json(value), "");
      } catch (const SpecError& e) {
        throw LineError{std::string("spec: ") + e.what()};
      }
      c.spec_json = event_to_json(*c.spec).dump();
    } else if (key == "neighbouring") {
      try {
        c.neighbouring = parse_choice("neighbouring",
                                      value.is_string() ? value.get<std::string>() : value.dump(),
                                      kNeighbouringChoices);
      } catch (const UsageError& e) {
        throw LineError{e.what()};
      }
    } else if (key == "solve") {
      try {
        c.solve = parse_choice("solve", value.is_string() ? value.get<std::string>() : value.dump(),
                               kSolveKeyChoices);
      } catch (const UsageError& e) {
        throw LineError{e.what()};
      }
    } else if (key == "delta") {
      c.delta = real_value(obj, "delta", kOpenUnit);
    } else if (key == "epsilon") {
      c.epsilon = real_value(obj, "epsilon", kNonNegative);
    } else {
      const auto near = closest_name(key, config_keys());
      throw LineError{key + ": unknown key" + (near ? "; did you mean " + *near + "?" : "") +
                      " (allowed: " + allowed_keys() + ")"};
    }
  }
  if (c.spec && any_run_key) throw LineError{"spec: give either spec or the DP-SGD keys, not both"};
  if (c.spec && c.solve)
    throw LineError{"solve: not with spec (give the DP-SGD keys to solve for one of them)"};
  if (c.neighbouring && !c.spec)
    throw LineError{
        "neighbouring: only with spec (the DP-SGD keys' sampling fixes the relation: poisson "
        "add-remove, without-replacement replace-one)"};
  try {
    c.values = values_of(run, Naming::keys);
  } catch (const UsageError& e) {
    throw LineError{e.what()};
  }
  return c;
}

enum class LineRead { line, end, too_long };

/// One line (without its '\n') of at most max_bytes; unlike std::getline it
/// never holds more than that in memory, however long the line (stdin may be
/// endless).
LineRead read_line(std::istream& in, std::string& text, std::size_t max_bytes) {
  text.clear();
  std::streambuf* buf = in.rdbuf();
  if (buf == nullptr) return LineRead::end;
  using traits = std::char_traits<char>;
  for (bool any = false;; any = true) {
    const traits::int_type c = buf->sbumpc();
    if (traits::eq_int_type(c, traits::eof())) {
      in.setstate(std::ios::eofbit);
      return any ? LineRead::line : LineRead::end;
    }
    if (c == '\n') return LineRead::line;
    if (text.size() == max_bytes) return LineRead::too_long;
    text.push_back(traits::to_char_type(c));
  }
}

/// "64 MiB", "1 KiB", "100 bytes": a limit as the README states it.
std::string size_text(std::size_t bytes) {
  if (bytes != 0 && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes != 0 && bytes % (1u << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

}  // namespace

std::vector<std::string> config_keys() {
  std::vector<std::string> keys{"name"};
  for (const auto& p : kRunParameters) keys.emplace_back(p.key);
  for (const char* k : {"delta", "epsilon", "solve", "spec", "neighbouring"}) keys.emplace_back(k);
  return keys;
}

ConfigInput read_configs(std::istream& in, const std::string& source_name,
                         const InputLimits& limits) {
  ConfigInput out;
  std::size_t bytes = 0, number = 0;
  std::string text;
  for (LineRead r; (r = read_line(in, text, limits.max_line_bytes)) != LineRead::end;) {
    ++number;
    bytes += text.size() + 1;
    if (bytes > limits.max_bytes)
      throw UsageError("--input: " + source_name + " is larger than " +
                       size_text(limits.max_bytes));
    if (r == LineRead::too_long)
      throw UsageError("--input: " + source_name + ":" + std::to_string(number) +
                       ": line longer than " + size_text(limits.max_line_bytes));
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (out.configs.size() + out.errors.size() >= limits.max_rows)
      throw UsageError("--input: " + source_name + " has more than " +
                       std::to_string(limits.max_rows) + " configurations");
    try {
      out.configs.push_back(parse_line(text, number));
    } catch (const LineError& e) {
      out.errors.push_back({number, e.message});
    }
  }
  if (in.bad()) throw UsageError("--input: cannot read " + source_name);
  return out;
}

}  // namespace dpb::cli
