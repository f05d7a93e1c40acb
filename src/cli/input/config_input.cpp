#include "cli/input/config_input.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <istream>
#include <nlohmann/json.hpp>
#include <streambuf>
#include <string>

#include "cli/errors.hpp"
#include "cli/flags/neighbouring_choices.hpp"
#include "cli/flags/parse.hpp"
#include "cli/flags/suggest.hpp"
#include "cli/input/spec_input.hpp"

namespace dpb::cli {
namespace {

/// A line as nlohmann::json reads it: object keys in sorted order (the other
/// CLI files keep input order with nlohmann::ordered_json, named Json there).
using SortedJson = nlohmann::json;

struct LineError {
  std::string message;
};

double real_value(const SortedJson& obj, const char* key, const Domain& domain) {
  const SortedJson& v = obj.at(key);
  if (!v.is_number() || !domain.contains(v.get<double>()))
    throw LineError{std::string(key) + ": must be " + domain.description + ", got " +
                    json_given(v)};
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

/// The longest parser's description a message keeps: nlohmann::json quotes
/// the token it last read, which may be a whole line of 1 MiB.
constexpr std::size_t kMaxParserWords = 160;

/// Where the token that ends at `at` (from 0) in `text` begins: a string
/// literal at its opening quote, a number or a literal at its first
/// character, punctuation where it is.
std::size_t token_start(const std::string& text, std::size_t at) {
  if (at >= text.size()) return at;
  if (text[at] == '"') {
    // The quote closes a string when an odd number of unescaped quotes is
    // before it; the string opens at the last of them.
    bool in_string = false;
    std::size_t open = at;
    for (std::size_t i = 0; i < at; ++i) {
      if (in_string && text[i] == '\\') {
        ++i;
      } else if (text[i] == '"') {
        in_string = !in_string;
        if (in_string) open = i;
      }
    }
    return in_string ? open : at;
  }
  const auto word = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '+' || c == '-';
  };
  std::size_t start = at;
  if (word(text[at]))
    while (start > 0 && word(text[start - 1])) --start;
  return start;
}

/// Where a syntax error is in `text`, as "column C" on a one-line text, else
/// "line L, column C" (from 1, in bytes). nlohmann::json's parse_error counts
/// `byte` (from 1) to the last byte it read: in a token it could not read
/// (its message says what it "last read"), the byte at fault; after a token
/// it did not expect ("unexpected string literal"), that token's last byte,
/// so the column named is where the token begins.
std::string position_in(const std::string& text, std::size_t byte, bool inside_token) {
  std::size_t at = std::min(byte > 0 ? byte - 1 : 0, text.size());  // from 0
  if (!inside_token) at = token_start(text, at);
  const std::size_t line_start = at == 0 ? std::string::npos : text.rfind('\n', at - 1);
  if (line_start == std::string::npos) return "column " + std::to_string(at + 1);
  const auto line = std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
  return "line " + std::to_string(line + 1) + ", column " + std::to_string(at - line_start);
}

/// A parser's message without its "[json.exception...] parse error at line
/// L, column C: " prefix (the caller says where), cut at kMaxParserWords.
std::string parser_words(const std::string& what) {
  std::string words = what;
  if (const auto p = words.find("column "); p != std::string::npos)
    if (const auto colon = words.find(": ", p); colon != std::string::npos)
      words.erase(0, colon + 2);
  if (const auto p = words.find("] "); p != std::string::npos && words.front() == '[')
    words.erase(0, p + 2);
  if (words.size() > kMaxParserWords) words = words.substr(0, kMaxParserWords) + "...";
  return words;
}

/// `text` as JSON, its nesting bounded before anything recursive (copies,
/// dumps) sees it, and a key given twice in one object refused (JSON parsers
/// disagree on which one wins). `where` names the text in messages ("on the
/// line"). A syntax error names its column (and line, in a text of several).
SortedJson parse_checked(const std::string& text, const std::string& where) {
  // The keys seen so far of each open object.
  std::vector<std::vector<std::string>> open_keys;
  try {
    return SortedJson::parse(
        text, [&open_keys, &where](int depth, SortedJson::parse_event_t event, SortedJson& parsed) {
          if (depth > kMaxLineDepth)
            throw LineError{"nested deeper than " + std::to_string(kMaxLineDepth) + " levels"};
          if (event == SortedJson::parse_event_t::object_start) open_keys.emplace_back();
          if (event == SortedJson::parse_event_t::object_end && !open_keys.empty())
            open_keys.pop_back();
          if (event == SortedJson::parse_event_t::key && !open_keys.empty()) {
            const std::string key = parsed.get<std::string>();
            auto& seen = open_keys.back();
            if (std::find(seen.begin(), seen.end(), key) != seen.end())
              throw LineError{key + ": given twice " + where + " (give each key once)"};
            seen.push_back(key);
          }
          return true;
        });
  } catch (const SortedJson::parse_error& e) {
    const std::string what = e.what();
    const bool inside_token = what.find("; last read: ") != std::string::npos;
    throw LineError{"not valid JSON at " + position_in(text, e.byte, inside_token) + ": " +
                    parser_words(what)};
  } catch (const SortedJson::exception& e) {  // a number past the range of a double
    throw LineError{"not valid JSON: " + parser_words(e.what())};
  }
}

/// The run parameter keyed `key` of a line or phase, parsed into `run`; false
/// when `key` is not a run parameter's.
bool read_run_key(const std::string& key, const SortedJson& value,
                  std::array<std::optional<ParamValue>, kRunParamCount>& run) {
  const RunParameter* p = run_parameter_keyed(key);
  if (p == nullptr) return false;
  try {
    run[static_cast<std::size_t>(p->id)] = parse_json_value(*p, value);
  } catch (const UsageError& e) {
    throw LineError{e.what()};
  }
  return true;
}

PhaseInput parse_phase(const SortedJson& obj);

/// A line's `phases`: a non-empty array of at most kMaxPhases phase objects.
std::vector<PhaseInput> parse_phases(const SortedJson& value) {
  if (!value.is_array() || value.empty())
    throw LineError{"phases: must be a non-empty array of phase objects (as a --schedule file's)"};
  if (value.size() > kMaxPhases)
    throw LineError{"phases: more than " + std::to_string(kMaxPhases) + " phases"};
  std::vector<PhaseInput> phases;
  for (std::size_t i = 0; i < value.size(); ++i) {
    try {
      phases.push_back(parse_phase(value[i]));
    } catch (const LineError& e) {
      throw LineError{"phases: phase " + std::to_string(i + 1) + ": " + e.message};
    }
  }
  return phases;
}

/// A `name` as given: a string as it is, any other value as its JSON.
std::string name_of(const SortedJson& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

ConfigLine parse_line(const SortedJson& obj, std::size_t line) {
  if (!obj.is_object()) throw LineError{"expected a JSON object"};
  ConfigLine c;
  c.line = line;
  std::array<std::optional<ParamValue>, kRunParamCount> run;
  bool any_run_key = false;
  for (const auto& [key, value] : obj.items()) {
    if (value.is_null())
      throw LineError{key + ": null is not a value (give one, or leave the key out)"};
    if (read_run_key(key, value, run)) {
      any_run_key = true;
    } else if (key == "name") {
      c.name = name_of(value);
    } else if (key == "spec") {
      try {
        c.spec = event_from_json(nlohmann::ordered_json(value), "");
      } catch (const SpecError& e) {
        throw LineError{std::string("spec: ") + e.what()};
      }
      c.spec_json = event_to_json(*c.spec).dump();
    } else if (key == "phases") {
      c.phases = parse_phases(value);
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
  if (c.spec && !c.phases.empty()) throw LineError{"phases: give either phases or spec, not both"};
  if (c.solve && !c.phases.empty())
    throw LineError{
        "solve: not with phases (solve a run in phases with sigma or steps --schedule)"};
  c.given = run;
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

/// The keys a phase may hold: name and the run parameters' keys.
std::vector<std::string> phase_keys() {
  std::vector<std::string> keys{"name"};
  for (const auto& p : kRunParameters) keys.emplace_back(p.key);
  return keys;
}

/// One phase object (its 1-based number for messages).
PhaseInput parse_phase(const SortedJson& obj) {
  if (!obj.is_object()) throw LineError{"expected a JSON object (one phase)"};
  PhaseInput phase;
  for (const auto& [key, value] : obj.items()) {
    if (value.is_null())
      throw LineError{key + ": null is not a value (give one, or leave the key out)"};
    if (read_run_key(key, value, phase.values)) continue;
    if (key == "name") {
      phase.name = name_of(value);
      continue;
    }
    const auto keys = phase_keys();
    const auto near = closest_name(key, keys);
    std::string allowed;
    for (const auto& k : keys) allowed += (allowed.empty() ? "" : ", ") + k;
    throw LineError{key + ": unknown key" + (near ? "; did you mean " + *near + "?" : "") +
                    " (allowed in a phase: " + allowed + ")"};
  }
  return phase;
}

/// Line `number` as a configuration, or its error; an error names the
/// line's `name` when the line is an object that has one.
ConfigRead read_config(const std::string& text, std::size_t number) {
  std::string name;
  try {
    const SortedJson obj = parse_checked(text, "on the line");
    if (obj.is_object())
      if (const auto it = obj.find("name"); it != obj.end() && !it->is_null()) name = name_of(*it);
    return parse_line(obj, number);
  } catch (const LineError& e) {
    return InputError{number, e.message, name};
  }
}

}  // namespace

std::vector<std::string> config_keys() {
  std::vector<std::string> keys{"name"};
  for (const auto& p : kRunParameters) keys.emplace_back(p.key);
  for (const char* k : {"delta", "epsilon", "solve", "spec", "neighbouring", "phases"})
    keys.emplace_back(k);
  return keys;
}

void for_each_config(std::istream& in, const std::string& source_name, const InputLimits& limits,
                     const std::function<void(ConfigRead)>& each) {
  std::size_t bytes = 0, number = 0, rows = 0;
  std::string text;
  for (LineRead r; (r = read_line(in, text, limits.max_line_bytes)) != LineRead::end;) {
    ++number;
    bytes += text.size() + 1;
    if (bytes > limits.max_bytes)
      throw UsageError("--input: " + source_name + " is larger than " +
                       size_text(limits.max_bytes));
    if (r == LineRead::too_long)
      throw input_error("--input", {source_name, number, ""},
                        "line longer than " + size_text(limits.max_line_bytes));
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (rows++ >= limits.max_rows)
      throw UsageError("--input: " + source_name + " has more than " +
                       std::to_string(limits.max_rows) + " configurations");
    each(read_config(text, number));
  }
  if (in.bad()) throw UsageError("--input: cannot read " + source_name);
}

ConfigInput read_configs(std::istream& in, const std::string& source_name,
                         const InputLimits& limits) {
  ConfigInput out;
  for_each_config(in, source_name, limits, [&out](ConfigRead read) {
    if (auto* config = std::get_if<ConfigLine>(&read))
      out.configs.push_back(std::move(*config));
    else
      out.errors.push_back(std::get<InputError>(std::move(read)));
  });
  return out;
}

std::vector<PhaseInput> read_schedule(std::istream& in, const std::string& source_name,
                                      const InputLimits& limits) {
  // The whole file (at most max_bytes), then a JSON array or JSON Lines.
  std::string all, text;
  std::size_t number = 0;
  std::vector<std::size_t> line_of;  // JSON Lines: the line of each object
  std::vector<std::string> lines;
  for (LineRead r; (r = read_line(in, text, limits.max_line_bytes)) != LineRead::end;) {
    ++number;
    if (all.size() + text.size() + 1 > limits.max_bytes)
      throw UsageError("--schedule: " + source_name + " is larger than " +
                       size_text(limits.max_bytes));
    if (r == LineRead::too_long)
      throw input_error("--schedule", {source_name, number, ""},
                        "line longer than " + size_text(limits.max_line_bytes));
    all += text;
    all += '\n';
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    lines.push_back(text);
    line_of.push_back(number);
  }
  if (in.bad()) throw UsageError("--schedule: cannot read " + source_name);
  auto fail = [&](const std::string& where, const std::string& message) {
    return input_error("--schedule", {source_name, 0, ""}, where + ": " + message);
  };
  std::vector<PhaseInput> phases;
  const auto first = all.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && all[first] == '[') {
    SortedJson array;
    try {
      array = parse_checked(all, "in a phase");
    } catch (const LineError& e) {
      throw UsageError("--schedule: " + source_name + ": " + e.message);
    }
    if (!array.is_array())
      throw UsageError("--schedule: " + source_name +
                       ": expected a JSON array of phase objects (or one object per line)");
    for (std::size_t i = 0; i < array.size(); ++i) {
      if (phases.size() >= kMaxPhases)
        throw fail("phase " + std::to_string(i + 1),
                   "more than " + std::to_string(kMaxPhases) + " phases");
      try {
        phases.push_back(parse_phase(array[i]));
      } catch (const LineError& e) {
        throw fail("phase " + std::to_string(i + 1), e.message);
      }
    }
  } else {
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const std::string where =
          "line " + std::to_string(line_of[i]) + " (phase " + std::to_string(i + 1) + ")";
      if (phases.size() >= kMaxPhases)
        throw fail(where, "more than " + std::to_string(kMaxPhases) + " phases");
      try {
        phases.push_back(parse_phase(parse_checked(lines[i], "in a phase")));
      } catch (const LineError& e) {
        throw fail(where, e.message);
      }
    }
  }
  if (phases.empty())
    throw UsageError("--schedule: " + source_name +
                     ": no phase (give a JSON array of phase objects, or one object per line)");
  return phases;
}

}  // namespace dpb::cli
