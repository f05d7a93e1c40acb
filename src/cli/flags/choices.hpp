#pragma once
// Option metadata that shell completions and the man page read back from the
// parser: the values an option accepts (e.g. --format text|json|csv) and
// options that name files. Stored on the CLI11 option itself (as a validator
// that accepts everything and adds nothing to --help), so whatever walks the
// parser finds it; the verbs still check values themselves (parse_choice).
#include <CLI/CLI.hpp>
#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "cli/flags/parse.hpp"

namespace dpb::cli {

/// Records the values `option` accepts; returns `option` for chaining.
/// Usable on any option: `record_choices(cmd->add_option(...), {"a", "b"})`.
CLI::Option* record_choices(CLI::Option* option, const std::vector<std::string>& choices);

/// Declares a string option that takes one of `choices` and records them.
CLI::Option* add_choice_option(CLI::App& app, const std::string& name, std::string& target,
                               const std::vector<std::string>& choices,
                               const std::string& description);

/// One value of an enumerated flag: its name on the command line and what it
/// means. Each flag's choices are one constexpr array of these, read both by
/// add_choice_option() (declare, record for completions) and parse_choice().
template <typename E>
struct Choice {
  std::string_view name;
  E value;
};

template <typename E, std::size_t N>
std::vector<std::string> choice_names(const std::array<Choice<E>, N>& choices) {
  std::vector<std::string> names;
  for (const auto& c : choices) names.emplace_back(c.name);
  return names;
}

template <typename E, std::size_t N>
CLI::Option* add_choice_option(CLI::App& app, const std::string& name, std::string& target,
                               const std::array<Choice<E>, N>& choices,
                               const std::string& description) {
  return add_choice_option(app, name, target, choice_names(choices), description);
}

/// The value named `text`, else a UsageError listing the names.
template <typename E, std::size_t N>
E parse_choice(std::string_view flag, const std::string& text,
               const std::array<Choice<E>, N>& choices) {
  const std::string name = parse_choice(flag, text, choice_names(choices));
  for (const auto& c : choices)
    if (c.name == name) return c.value;
  return choices.front().value;  // not reached: parse_choice threw
}

/// The name of `value` in `choices`.
template <typename E, std::size_t N>
std::string_view choice_name(const std::array<Choice<E>, N>& choices, E value) {
  for (const auto& c : choices)
    if (c.value == value) return c.name;
  return {};
}

/// Records that `option` names a file (completions offer file names).
CLI::Option* record_file(CLI::Option* option);

/// The values recorded for `option` (empty when none).
std::vector<std::string> choices_of(CLI::Option& option);
/// Whether `option` was recorded as naming a file.
bool names_file(CLI::Option& option);

}  // namespace dpb::cli
