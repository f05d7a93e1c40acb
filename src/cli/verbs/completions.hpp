#pragma once
// Shell completions generated from the parser itself, so they cannot drift
// from it: `dpbudget completions bash|zsh|fish` walks CLI11's subcommands and
// options, and the choices recorded with cli/flags/choices.hpp. `list` prints the
// same model plainly (one line per flag) for tests and the man page check;
// `run-parameters` the run-parameter table; `man TEMPLATE` the man page, its
// flag lists generated (cli/verbs/man_page.hpp).
#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "cli/verbs.hpp"

namespace dpb::cli {

struct FlagInfo {
  std::vector<std::string> names;  ///< e.g. {"-q", "--sampling-rate"}: short ones first
  std::string help;                ///< first line of the option's description
  bool takes_value = false;
  std::vector<std::string> choices;  ///< enumerated values, when recorded
  bool file = false;                 ///< the value names a file
};

struct VerbInfo {
  std::string name;
  std::string help;  ///< first line of the verb's description
  std::vector<FlagInfo> flags;
};

/// Every visible verb of `root` and its flags, in declaration order; the
/// root's own flags under the empty name, first.
std::vector<VerbInfo> describe(CLI::App& root);

void write_bash(const std::vector<VerbInfo>& verbs, std::ostream& out);
void write_zsh(const std::vector<VerbInfo>& verbs, std::ostream& out);
void write_fish(const std::vector<VerbInfo>& verbs, std::ostream& out);
/// `verb<TAB>flag<TAB>value|flag<TAB>choice,choice`, one line per flag name.
void write_list(const std::vector<VerbInfo>& verbs, std::ostream& out);

/// The run-parameter table (cli/flags/run_parameters.hpp), one line each:
/// `names<TAB>json key<TAB>default`, e.g. `-q,--sampling-rate<TAB>sampling_rate<TAB>`
/// (the man page's RUN PARAMETERS is tested against it).
void write_run_parameters(std::ostream& out);

/// The hidden verb `completions bash|zsh|fish|list|run-parameters|man`; needs the root app to
/// walk when it runs (after every verb has been declared).
/// The hidden verb's name (run_cli() checks a first word against it).
inline constexpr const char* kCompletionsVerb = "completions";
Verb setup_completions(CLI::App& app);

}  // namespace dpb::cli
