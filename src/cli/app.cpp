#include "cli/app.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "accounting/errors.hpp"
#include "cli/errors.hpp"
#include "cli/flags/output_flags.hpp"
#include "cli/flags/suggest.hpp"
#include "cli/verbs.hpp"
#include "cli/verbs/completions.hpp"
#include "dpbudget/version.hpp"
#include "report/render.hpp"
#include "store/ledger_store.hpp"

namespace dpb::cli {
namespace {

/// The mode of the run_cli() call on this thread (a verb's sweep workers
/// never call only_checking()).
thread_local RunMode current_mode = RunMode::run;

constexpr const char* kExitStatusHelp =
    "Exit status: 0 ok; 1 a budget was exceeded (--max-epsilon; a release ledger-add refuses);\n"
    "2 bad usage or input; 3 no solution (e.g. the target cannot be met);\n"
    "4 no sound upper bound to gate on; 5 output could not be written;\n"
    "6 sweep --input holds no configuration; 7 a ledger cannot be used (missing, not a\n"
    "ledger, newer, wrong key, unwritable); 8 a ledger was altered (its hash chain breaks).";

std::string version_string() {
  std::string v = std::string("dpbudget ") + kVersion;
  if (*kGitCommit) v += std::string(" (") + kGitCommit + ")";
  return v;
}

/// Whether `token` is a number (a value such as `-1` or `-inf`, not a flag).
bool is_number(const std::string& token) {
  char* end = nullptr;
  std::strtod(token.c_str(), &end);
  return end != token.c_str() && *end == '\0';
}

/// Whether `word` is a flag whose value is the next word: `--delta`, `-q`
/// (not `--delta=1e-5`, `-q0.01` or a negative number).
bool is_bare_flag(const std::string& word) {
  if (word.size() < 2 || word[0] != '-' || is_number(word)) return false;
  return word[1] == '-' ? word.find('=') == std::string::npos : word.size() == 2;
}

/// "unexpected argument 'WORD' after --FLAG (...)" for the word at `at` of
/// `words`, naming the last flag before it as typed.
std::string unexpected_argument(const std::vector<std::string>& words,
                                std::vector<std::string>::const_iterator at) {
  std::string what = "unexpected argument '" + *at + "'";
  for (auto flag = at; flag != words.begin();) {
    --flag;
    if (flag->size() < 2 || (*flag)[0] != '-' || *flag == "--" || is_number(*flag)) continue;
    what += " after " + ((*flag)[1] == '-' ? flag->substr(0, flag->find('=')) : flag->substr(0, 2));
    break;
  }
  return what + " (dpbudget takes no positional words; give a flag several values as a comma list)";
}

/// Every name of every option of `app`: "--sigma", "-q", ...
std::vector<std::string> flag_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options()) {
    for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
    for (const auto& s : opt->get_snames()) names.push_back("-" + s);
  }
  return names;
}

/// The first command-line word that looks like a flag but is none of the
/// flags of the verb it follows (or of dpbudget itself, before the verb), as
/// "unknown flag --sigam for 'epsilon'; did you mean --sigma?"; none when
/// every flag is known.
std::optional<std::string> unknown_flag(CLI::App& app, CLI::App* verb, int argc,
                                        const char* const* argv) {
  CLI::App* owner = &app;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") break;
    if (verb && owner == &app && word == verb->get_name()) {
      owner = verb;
      continue;
    }
    if (word.size() < 2 || word[0] != '-' || is_number(word)) continue;
    // "--name=value" names "--name"; "-qVALUE" names "-q".
    const std::string name = word[1] == '-' ? word.substr(0, word.find('=')) : word.substr(0, 2);
    if (owner->get_option_no_throw(name)) continue;
    const std::string typed = word[1] == '-' ? name : word.substr(0, word.find('='));
    const std::string where = owner == &app ? "dpbudget" : owner->get_name();
    std::string what = "unknown flag " + typed + " for '" + where + "'";
    if (const auto near = closest_name(typed, flag_names(*owner)))
      return what + "; did you mean " + *near + "?";
    if (owner == &app) return what + " (a verb's flags go after the verb; see 'dpbudget --help')";
    return what + "; see 'dpbudget " + where + " --help'";
  }
  return std::nullopt;
}

/// A verb's message as the user would recognise it: a message that starts
/// with a flag's long name ("--sampling-rate: ...") names the flag as typed
/// first when another name of the same flag was used ("-q (--sampling-rate):
/// ..."); a value that is a
/// word typed after a flag's first value (`--delta 1e-5 extra`, read as a
/// second value) is pointed out as such.
std::string as_typed(std::string what, const CLI::App* verb, int argc, const char* const* argv) {
  if (!verb) return what;
  std::vector<std::string> words(argv + 1, argv + argc);
  const auto typed = [&](const std::string& name) {
    return std::find(words.begin(), words.end(), name) != words.end() ||
           std::any_of(words.begin(), words.end(),
                       [&](const std::string& w) { return w.rfind(name + "=", 0) == 0; });
  };
  for (const CLI::Option* opt : verb->get_options()) {
    std::vector<std::string> names;
    for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
    for (const auto& n : opt->get_snames()) names.push_back("-" + n);
    for (const auto& canonical : names) {
      if (what.rfind(canonical + ":", 0) != 0 || typed(canonical)) continue;
      for (const auto& other : names)
        if (other != canonical && typed(other)) {
          what.replace(0, canonical.size(), other + " (" + canonical + ")");
          break;
        }
    }
    // A word after the first value the flag took, when the message names it:
    // a stray word, said so with the flag it follows as typed.
    const auto& results = opt->results();
    for (std::size_t i = 1; i < results.size(); ++i)
      if (what.find("got '" + results[i] + "'") != std::string::npos) {
        const auto at = std::find(words.begin(), words.end(), results[i]);
        if (at == words.begin() || at == words.end() || is_bare_flag(*(at - 1))) continue;
        return unexpected_argument(words, at);
      }
  }
  return what;
}

/// "unknown verb 'WORD'" with the nearest of `names`, or all of them.
std::string unknown_verb(const std::string& word, const std::vector<std::string>& names) {
  if (const auto near = closest_name(word, names))
    return "unknown verb '" + word + "'; did you mean " + *near + "?";
  std::string known;
  for (const auto& name : names) known += (known.empty() ? "" : ", ") + name;
  return "unknown verb '" + word + "'; verbs: " + known;
}

constexpr std::size_t kVerbCount = kVerbs.size();

/// The place of `verb` in kVerbs.
std::size_t verb_index(const VerbDescriptor* verb) {
  return static_cast<std::size_t>(std::find(kVerbs.begin(), kVerbs.end(), verb) - kVerbs.begin());
}

}  // namespace

struct CliSession::Parsers {
  /// The top-level parser with the verbs built for it: one verb's, every
  /// verb's, or none (`dpbudget --version`).
  struct Parser {
    CLI::App app{"dpbudget: privacy budget calculator for DP-SGD and noisy releases", "dpbudget"};
    std::vector<Verb> verbs;
    std::vector<Verb> hidden;
  };

  /// Slot i < kVerbCount: the parser of verb i alone; kEveryVerb: every verb's;
  /// kNoVerb: `dpbudget --version`'s.
  static constexpr std::size_t kEveryVerb = kVerbCount, kNoVerb = kVerbCount + 1;
  std::array<std::unique_ptr<Parser>, kVerbCount + 2> slots;

  /// The parser with the verb `only` (every verb when null; none when
  /// `version_only`). When the first word names a verb, only that verb's
  /// parser is built (start-up: every verb's options cost about as much as
  /// the rest of a quick run); otherwise every verb's (--help, an unknown
  /// verb's suggestion, the completions walk).
  static std::unique_ptr<Parser> build(const VerbDescriptor* only, bool version_only) {
    auto parser = std::make_unique<Parser>();
    CLI::App& app = parser->app;
    app.footer(kExitStatusHelp);
    app.set_version_flag("--version", version_string());
    app.require_subcommand(1);
    auto& verbs = parser->verbs;
    for (const VerbDescriptor* v : kVerbs) {
      if ((only && only != v) || version_only) continue;
      CLI::App* command = app.add_subcommand(std::string(v->name), v->description());
      verbs.push_back(v->declare(*command));
      command->footer(kExitStatusHelp);
    }
    // Hidden verbs (group ""): listed nowhere, generated from the parser above.
    if (!only && !version_only) parser->hidden.push_back(setup_completions(app));
    return parser;
  }
};

CliSession::CliSession() : parsers_(std::make_unique<Parsers>()) {}
CliSession::~CliSession() = default;

bool only_checking() { return current_mode == RunMode::check; }

std::string VerbDescriptor::description() const {
  std::string text(summary);
  for (std::string_view example : examples)
    if (!example.empty()) text += "\n  example: " + std::string(example);
  return text;
}

int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err, RunMode mode) {
  CliSession session;
  return session.run(argc, argv, out, err, mode);
}

namespace {

/// --help and --version: CLI11 prints the text, which is the output; a
/// failed write of it is a failed write like any other (one line, status
/// kWriteFailed).
int print_help(CLI::App& app, const CLI::ParseError& e, std::ostream& out, std::ostream& err) {
  errno = 0;
  const int status = app.exit(e, out, err);
  out.flush();
  try {
    if (!out) throw_write_error("standard output", errno);
  } catch (const WriteError& failed) {
    err << "dpbudget: error: " << report::escape_control(failed.what()) << '\n';
    return kWriteFailed;
  }
  return status;
}

/// The one line and the exit status of the exception being handled (called
/// from a catch block): each kind of failure its status (README, "Exit
/// status").
int failure_status(const CLI::App& app, int argc, const char* const* argv, std::ostream& err) {
  try {
    throw;
  } catch (const WriteError& e) {
    err << "dpbudget: error: " << report::escape_control(e.what()) << '\n';
    return kWriteFailed;
  } catch (const LedgerAltered& e) {
    err << "dpbudget: error: " << report::escape_control(e.what()) << '\n';
    return kLedgerAltered;
  } catch (const LedgerError& e) {
    err << "dpbudget: error: " << report::escape_control(e.what()) << '\n';
    return kLedgerUnavailable;
  } catch (const store::StoreError& e) {
    // A store's failure that no verb turned into a LedgerError (e.g. the
    // hash chain's libcrypto missing at the first hash): the ledger cannot
    // be used, and the store left it as it was.
    err << "dpbudget: error: " << report::escape_control(e.what()) << '\n';
    return kLedgerUnavailable;
  } catch (const NoConfigurations& e) {
    err << "dpbudget: error: " << report::escape_control(e.what()) << '\n';
    return kNoConfigurations;
  } catch (const UsageError& e) {
    const CLI::App* verb = app.get_subcommands().empty() ? nullptr : app.get_subcommands().front();
    err << "dpbudget: error: " << report::escape_control(as_typed(e.what(), verb, argc, argv))
        << '\n';
    return kUsage;
  } catch (const InvalidParameter& e) {
    err << "dpbudget: error: " << report::escape_control(e.what()) << '\n';
    return kUsage;
  } catch (const UnsupportedEvent& e) {
    err << "dpbudget: error: " << report::escape_control(e.what()) << '\n';
    return kUsage;
  } catch (const NoSolution& e) {
    err << "dpbudget: error: no solution: " << report::escape_control(e.what()) << '\n';
    return kNoSolution;
  } catch (const std::exception& e) {
    err << "dpbudget: error: internal error: " << report::escape_control(e.what()) << '\n';
    return kUsage;
  }
}

}  // namespace

int CliSession::run(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
                    RunMode mode) {
  struct ModeScope {
    RunMode saved;
    explicit ModeScope(RunMode m) : saved(current_mode) { current_mode = m; }
    ~ModeScope() { current_mode = saved; }
    ModeScope(const ModeScope&) = delete;
    ModeScope& operator=(const ModeScope&) = delete;
  } mode_scope(mode);
  const VerbDescriptor* only = nullptr;
  for (const VerbDescriptor* v : kVerbs)
    if (argc > 1 && std::string_view(argv[1]) == v->name) only = v;
  // `dpbudget --version` alone needs no verb at all.
  const bool version_only = argc == 2 && std::string_view(argv[1]) == "--version";
  // A first word that names no verb, with no word after it that could ask for
  // help or the version (-h..., --help..., --version...: CLI11 answers those
  // first), is an unknown verb: said from the table alone, as the parser
  // would say it below, without building every verb's parser first.
  if (!only && argc > 1 && argv[1][0] != '-' && std::string_view(argv[1]) != kCompletionsVerb &&
      std::none_of(argv + 2, argv + argc, [](std::string_view word) {
        return word.starts_with("-h") || word.starts_with("--help") ||
               word.starts_with("--version");
      })) {
    std::vector<std::string> names;
    for (const VerbDescriptor* v : kVerbs) names.emplace_back(v->name);
    err << "dpbudget: error: " << report::escape_control(unknown_verb(argv[1], names)) << '\n';
    return kUsage;
  }
  // This session's parser for the command line: built on first use; later
  // cleared of the last parse, each flag value put back as setup left it.
  auto& slot = parsers_->slots[version_only ? Parsers::kNoVerb
                               : only       ? verb_index(only)
                                            : Parsers::kEveryVerb];
  if (!slot) {
    slot = Parsers::build(only, version_only);
  } else {
    slot->app.clear();
    for (auto* list : {&slot->verbs, &slot->hidden})
      for (const auto& verb : *list) verb.reset();
  }
  CLI::App& app = slot->app;
  const std::vector<Verb>& verbs = slot->verbs;
  const std::vector<Verb>& hidden = slot->hidden;

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return print_help(app, e, out, err);  // --help, --version
    std::string what = e.what();
    CLI::App* verb = app.get_subcommands().empty() ? nullptr : app.get_subcommands().front();
    const bool extras = dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr;
    std::string known;
    std::vector<std::string> names;
    for (const auto& v : verbs) {
      known += (known.empty() ? "" : ", ") + v.command->get_name();
      names.push_back(v.command->get_name());
    }
    if (!verb && argc > 1 && argv[1][0] != '-') {
      what = unknown_verb(argv[1], names);
    } else if (const auto flag =
                   extras || !verb ? unknown_flag(app, verb, argc, argv) : std::nullopt) {
      what = *flag;
    } else if (!verb) {
      what = "no verb given; verbs: " + known + " (see 'dpbudget --help')";
    } else if (extras) {
      // A word that is no flag and no flag's value: the first one CLI11 left.
      const std::vector<std::string> words(argv + 1, argv + argc);
      for (const auto& word : verb->remaining()) {
        const auto at = std::find(words.begin(), words.end(), word);
        if (word == "--" || at == words.end()) continue;
        what = unexpected_argument(words, at);
        break;
      }
    }
    err << "dpbudget: error: " << report::escape_control(what) << '\n';
    return kUsage;
  }
  try {
    for (const auto* list : {&verbs, &hidden})
      for (const auto& verb : *list)
        if (verb.command->parsed()) {
          const int status = verb.run(out, err);
          // A write that failed unnoticed on the way: output is incomplete,
          // whatever the verb concluded.
          check_written(out);
          return status;
        }
    return kUsage;
  } catch (...) {
    return failure_status(app, argc, argv, err);
  }
}

}  // namespace dpb::cli
