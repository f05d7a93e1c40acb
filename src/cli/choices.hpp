#pragma once
// Option metadata that shell completions and the man page read back from the
// parser: the values an option accepts (e.g. --format text|json|csv) and
// options that name files. Stored on the CLI11 option itself (as a validator
// that accepts everything and adds nothing to --help), so whatever walks the
// parser finds it; the verbs still check values themselves (parse_choice).
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace dpb::cli {

/// Records the values `option` accepts; returns `option` for chaining.
/// Usable on any option: `record_choices(cmd->add_option(...), {"a", "b"})`.
CLI::Option* record_choices(CLI::Option* option, const std::vector<std::string>& choices);

/// Declares a string option that takes one of `choices` and records them.
CLI::Option* add_choice_option(CLI::App& app, const std::string& name, std::string& target,
                               const std::vector<std::string>& choices,
                               const std::string& description);

/// Records that `option` names a file (completions offer file names).
CLI::Option* record_file(CLI::Option* option);

/// The values recorded for `option` (empty when none).
std::vector<std::string> choices_of(CLI::Option& option);
/// Whether `option` was recorded as naming a file.
bool names_file(CLI::Option& option);

}  // namespace dpb::cli
