#pragma once
// Spec files: a composition of privacy events as JSON, in the vocabulary of
// Google's dp_accounting DpEvent classes (docs/spec_files.md#spec-files):
//
//   {"gaussian": {"noise_multiplier": 1.0}}
//   {"laplace": {"scale": 2.0}}
//   {"poisson_sampled": {"sampling_probability": 0.01, "event": EVENT}}
//   {"sampled_without_replacement":
//        {"source_dataset_size": 60000, "sample_size": 256, "event": EVENT}}
//   {"self_composed": {"count": 1000, "event": EVENT}}
//   {"composed": [EVENT, ...]}
//
// This file turns JSON into dpb::EventPtr and back; the numerics layer never
// sees JSON. Every fault is reported with the JSON pointer of the value at
// fault, e.g. "/composed/1/poisson_sampled/sampling_probability: must be in
// [0, 1]".
#include <cstddef>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

#include "accounting/events/events.hpp"

namespace dpb::cli {

/// Documented limits (docs/spec_files.md#spec-errors-and-limits).
inline constexpr std::size_t kMaxSpecBytes = std::size_t{16} << 20;  // 16 MiB
inline constexpr int kMaxSpecDepth = 64;  ///< events nested inside each other

/// A malformed spec: `path` is the JSON pointer of the value at fault ("" for
/// the whole document); what() is "<path>: <message>".
class SpecError : public std::runtime_error {
 public:
  SpecError(const std::string& path, const std::string& message);
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
};

/// An event and its JSON form (compact, keys in canonical order).
struct Spec {
  EventPtr event;
  std::string json;
};

/// The event described by `value`; `path` is the JSON pointer of `value` in
/// its document (prefixed to every message). Throws SpecError.
EventPtr event_from_json(const nlohmann::ordered_json& value, const std::string& path = "");

/// RFC 6901 escaping of one reference token of a JSON pointer ("~" as "~0",
/// "/" as "~1"), the whole key.
std::string json_pointer_token(std::string_view key);

/// The message for a value marked {"solve": true} where none is solved.
inline constexpr std::string_view kMarkNotHere =
    "a value marked {\"solve\": true} is solved only by 'dpbudget sigma --spec' (a noise "
    "multiplier or a scale) and 'dpbudget steps --spec' (a count); give a number here";

/// Spec text as a JSON document: at most kMaxSpecBytes, nested at most
/// kMaxSpecDepth events deep. Throws SpecError.
nlohmann::ordered_json parse_spec_json(const std::string& text);

/// Parses spec text (parse_spec_json, then the events). Throws SpecError.
Spec parse_spec(const std::string& text);

/// The text of a spec file ('-' for stdin), at most one byte past
/// kMaxSpecBytes. Throws UsageError "--spec: cannot ...".
std::string read_spec_text(const std::string& file);

/// Reads and parses a spec file ('-' for stdin). Throws UsageError
/// "--spec: <path>: <what>".
Spec read_spec_file(const std::string& file);

/// The JSON form of an event (the inverse of event_from_json).
nlohmann::ordered_json event_to_json(const DpEvent& event);

}  // namespace dpb::cli
