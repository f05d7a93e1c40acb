#pragma once
// Training configurations read from JSON Lines (`dpbudget sweep --input`):
// one object per line with the run parameters' JSON keys (kRunParameters in
// cli/flags/run_parameters.hpp), delta, epsilon and a free-form `name` echoed to the
// output, `solve` (what the line solves for; a line missing a parameter it does
// not solve for is refused); or `spec`, an event as in a spec file, instead
// of the DP-SGD keys.
#include <cstddef>
#include <functional>
#include <istream>
#include <limits>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "accounting/accountant.hpp"
#include "accounting/events/events.hpp"
#include "cli/flags/run_parameters.hpp"
#include "cli/input/input_file.hpp"

namespace dpb::cli {

/// Documented limits on --input (docs/errors.md#error-model-and-guarantees);
/// its size and line limits are every line reader's (cli/input/input_file.hpp).
inline constexpr std::size_t kMaxInputRows = 1'000'000;

/// The limits read_configs enforces: the documented ones unless a test asks for
/// smaller ones (so it can cross them cheaply).
struct InputLimits {
  std::size_t max_bytes = kMaxInputBytes;      ///< whole input, newlines included
  std::size_t max_line_bytes = kMaxLineBytes;  ///< one line, without its newline
  std::size_t max_rows = kMaxInputRows;        ///< non-blank lines, good or bad
};
/// JSON nesting of one line: room for a spec at its event depth limit.
inline constexpr int kMaxLineDepth = 256;

/// The most phases a schedule holds (docs/errors.md#error-model-and-guarantees):
/// each is composed by every accountant (pld convolves a grid per distinct
/// phase).
inline constexpr std::size_t kMaxPhases = 1000;

/// One phase of a --schedule file: the run parameters it sets (by their JSON
/// keys, kRunParameters) and its `name`.
struct PhaseInput {
  std::optional<std::string> name;
  GivenValues values;
};

struct ConfigLine {
  std::size_t line = 0;  ///< 1-based line number in the input
  std::optional<std::string> name;
  DpSgdValues values;
  std::optional<double> delta;
  std::optional<double> epsilon;
  /// `"solve": "noise_multiplier"` (or a --solve value, "sigma"): the
  /// parameter this line solves for, with `epsilon` its target.
  std::optional<Unknown> solve;
  /// `"spec": {...}`: an event (docs/spec_files.md#spec-files) instead of the DP-SGD
  /// keys, and its compact JSON.
  EventPtr spec;
  std::string spec_json;
  /// `"neighbouring": "replace-one"` (with a spec only): the relation asked
  /// for, as --neighbouring.
  std::optional<Neighbouring> neighbouring;
  /// `"phases": [{...}, ...]`: the line is a run in phases (as a --schedule
  /// file's, docs/sampling.md#schedules), each phase inheriting the line's own
  /// run keys (`given`) for the keys it does not set.
  std::vector<PhaseInput> phases;
  GivenValues given;
};

struct InputError {
  std::size_t line;
  std::string message;  ///< "key: what is wrong"
  std::string name;     ///< the line's `name`, if it was read ("" if not)
};

struct ConfigInput {
  std::vector<ConfigLine> configs;
  std::vector<InputError> errors;
};

/// Every key a line may hold, in the order messages list them: name, the
/// run parameters' keys (kRunParameters), delta, epsilon, solve, spec,
/// neighbouring, phases. (The fuzzer's dictionary, tests/fuzz/jsonl.dict, is tested
/// against it.)
std::vector<std::string> config_keys();

/// The phases of a schedule (docs/sampling.md#schedules): a JSON array of phase
/// objects, or JSON Lines (one object per line). A phase holds run
/// parameters' keys and `name`, nothing else. Throws UsageError naming the
/// source, the phase (and line) and the key at fault; the limits are those of
/// --input (the whole file, a line) and kMaxPhases.
std::vector<PhaseInput> read_schedule(std::istream& in, const std::string& source_name,
                                      const InputLimits& limits = {});

/// Parses every non-blank line; a malformed line becomes an InputError naming
/// the key at fault. Throws UsageError when a limit is exceeded (reading no
/// further than the limit).
ConfigInput read_configs(std::istream& in, const std::string& source_name,
                         const InputLimits& limits = {});

/// One non-blank line as read: its configuration, or the error naming the key
/// at fault.
using ConfigRead = std::variant<ConfigLine, InputError>;

/// Reads one line at a time and hands each non-blank line to `each` as soon
/// as it is read, reading nothing ahead (a line from a pipe is answered before
/// the next is written); what read_configs() is made of. Throws UsageError
/// when a limit is exceeded, after the lines before it were handed over.
void for_each_config(std::istream& in, const std::string& source_name, const InputLimits& limits,
                     const std::function<void(ConfigRead)>& each);

/// The limits of a streamed --input (sweep --input - --format jsonl,
/// docs/guide.md#asking-as-training-goes): one line is held at a time, so
/// neither the whole input's size nor its count of lines is bounded; a line
/// still is (kMaxLineBytes).
inline constexpr InputLimits kStreamedInputLimits{std::numeric_limits<std::size_t>::max(),
                                                  kMaxLineBytes,
                                                  std::numeric_limits<std::size_t>::max()};

}  // namespace dpb::cli
